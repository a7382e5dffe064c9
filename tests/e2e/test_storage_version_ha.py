"""KEP-2339 across servers sharing one etcd: each records its own entry, the common
version follows them, and the elected server removes the entry of a server gone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers.ha import cluster
from tests.helpers.storage_versions import BUILTINS, LEASES, SV, entries, identities
from tests.helpers.wait import eventually

PDB_SV = f"{SV}/policy.poddisruptionbudgets"


def test_servers_register_their_own_entries_and_gc_removes_a_gone_one(tmp_path: Path) -> None:
    with cluster(tmp_path, "a", "b", "c") as ha, ha.servers[0].client() as a:
        ids = identities(a)
        assert len(ids) == 3
        listed = a.get(SV).json()["items"]
        assert {sv["metadata"]["name"] for sv in listed} == BUILTINS
        for sv in listed:
            assert set(entries(sv)) == ids, sv["metadata"]["name"]
            assert sv["status"]["commonEncodingVersion"]
        d = ha.start("d", "--storage-versions=policy/v1beta1/poddisruptionbudgets")
        d_id = (identities(a) - ids).pop()
        pdb = a.get(PDB_SV).json()
        assert entries(pdb) == {**dict.fromkeys(ids, "policy/v1"), d_id: "policy/v1beta1"}
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
            # One GC pass walks every StorageVersion: wait for all of them, not just PDB's.
            if any(d_id in entries(sv) for sv in a.get(SV).json()["items"]):
                return None
            sv: dict[str, Any] = a.get(PDB_SV).json()
            return sv

        collected_pdb = eventually(collected, what="d's entry to be collected")
        assert collected_pdb is not None
        pdb = collected_pdb
        assert entries(pdb) == dict.fromkeys(ids, "policy/v1")
        assert pdb["status"]["commonEncodingVersion"] == "policy/v1"
        assert pdb["status"]["conditions"][0]["reason"] == "CommonEncodingVersionSet"
        for sv in a.get(SV).json()["items"]:
            assert set(entries(sv)) == ids, sv["metadata"]["name"]
        gc_lease = a.get(f"{LEASES}/kapi-storage-version-gc").json()
        assert gc_lease["spec"]["holderIdentity"].split("_")[0] in ids
