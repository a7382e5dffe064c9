"""KEP-2339 across servers sharing one etcd: each records its own entry, the common
version follows them, and the elected server removes the entry of a server gone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.helpers.ha import cluster
from tests.helpers.wait import eventually

SV = "/apis/internal.apiserver.k8s.io/v1alpha1/storageversions"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
IDENTITY = "apiserver.kubernetes.io/identity=kube-apiserver"
PDB_SV = f"{SV}/policy.poddisruptionbudgets"


def _identities(http: httpx.Client) -> set[str]:
    response = http.get(LEASES, params={"labelSelector": IDENTITY})
    assert response.status_code == 200, response.text
    return {lease["metadata"]["name"] for lease in response.json()["items"]}


def _entries(sv: dict[str, Any]) -> dict[str, str]:
    return {e["apiServerID"]: e["encodingVersion"] for e in sv["status"]["storageVersions"]}


def test_servers_register_their_own_entries_and_gc_removes_a_gone_one(tmp_path: Path) -> None:
    with cluster(tmp_path, "a", "b", "c") as ha, ha.servers[0].client() as a:
        ids = _identities(a)
        assert len(ids) == 3
        listed = a.get(SV).json()["items"]
        assert len(listed) == 15  # every persisted built-in, storageversionmigrations included
        for sv in listed:
            assert set(_entries(sv)) == ids, sv["metadata"]["name"]
            assert sv["status"]["commonEncodingVersion"]
        d = ha.start("d", "--storage-versions=policy/v1beta1/poddisruptionbudgets")
        d_id = (_identities(a) - ids).pop()
        pdb = a.get(PDB_SV).json()
        assert _entries(pdb) == {**dict.fromkeys(ids, "policy/v1"), d_id: "policy/v1beta1"}
        assert "commonEncodingVersion" not in pdb["status"]
        condition = pdb["status"]["conditions"][0]
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "False",
            "CommonEncodingVersionUnset",
            "Common encoding version unset",
        )
        # d goes away and its identity lease with it: the elected server collects.
        assert d.stop() == 0
        assert a.delete(f"{LEASES}/{d_id}").status_code == 200

        def collected() -> dict[str, Any] | None:
            sv: dict[str, Any] = a.get(PDB_SV).json()
            return sv if d_id not in _entries(sv) else None

        collected_pdb = eventually(collected, what="d's entry to be collected")
        assert collected_pdb is not None
        pdb = collected_pdb
        assert _entries(pdb) == dict.fromkeys(ids, "policy/v1")
        assert pdb["status"]["commonEncodingVersion"] == "policy/v1"
        assert pdb["status"]["conditions"][0]["reason"] == "CommonEncodingVersionSet"
        for sv in a.get(SV).json()["items"]:
            assert set(_entries(sv)) == ids, sv["metadata"]["name"]
        gc_lease = a.get(f"{LEASES}/kapi-storage-version-gc").json()
        assert gc_lease["spec"]["holderIdentity"].split("_")[0] in ids
