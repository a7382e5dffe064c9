"""KEP-2339 end to end on real etcd with three kapi processes: a rolling upgrade
with migration, a CRD changing its storage version, a server killed and
collected, and the write gate of a server still registering."""

from __future__ import annotations

import base64
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from kapi.controllers.identity import apiserver_id
from tests.helpers.crds import CRDS, established, widgets_crd
from tests.helpers.ha import Cluster, cluster, namespace_body
from tests.helpers.kapi_cli import make_kapi
from tests.helpers.storage_versions import HOOK, SV, entries, identities, wait_for_hold
from tests.helpers.wait import eventually

PDB_SV = f"{SV}/policy.poddisruptionbudgets"
OLD = "--storage-versions=policy/v1beta1/poddisruptionbudgets"
NS = "upgrade"
PDBS = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"


def _pdb(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": name}}},
    }


def _stored_versions(ha: Cluster, prefix: str) -> dict[str, str]:
    """The apiVersion each object under ``prefix`` is stored in, read from etcd itself."""
    out = ha.etcd.etcdctl("get", prefix, "--prefix", "-w", "json")
    kvs = orjson.loads(out).get("kvs") or []
    return {
        base64.b64decode(kv["key"]).decode(): orjson.loads(base64.b64decode(kv["value"]))[
            "apiVersion"
        ]
        for kv in kvs
    }


def _agreed(http: httpx.Client, path: str, servers: set[str], version: str) -> dict[str, Any]:
    """The StorageVersion at ``path`` once exactly ``servers`` report ``version``."""

    def probe() -> dict[str, Any] | None:
        response = http.get(path)
        if response.status_code != 200:
            return None
        sv: dict[str, Any] = response.json()
        return sv if entries(sv) == dict.fromkeys(servers, version) else None

    found = eventually(probe, what=f"{path} agreed on {version} by {len(servers)} servers")
    assert found is not None
    return found


@pytest.fixture
def ha(tmp_path: Path) -> Iterator[Cluster]:
    with cluster(tmp_path, "a", "b") as running:
        yield running


def test_rolling_upgrade_disagrees_refuses_migration_then_migrates(ha: Cluster) -> None:
    old = ha.start("c", OLD)
    kapi = make_kapi(ha.servers[0])
    with ha.servers[0].client() as a, old.client() as c:
        ids = identities(a)
        assert len(ids) == 3
        assert a.post("/api/v1/namespaces", json=namespace_body(NS)).status_code == 201
        # Writes through the old server are stored in v1beta1, the others' in v1.
        for name in ("old-0", "old-1", "old-2"):
            assert c.post(PDBS, json=_pdb(name)).status_code == 201
        for name in ("new-0", "new-1"):
            assert a.post(PDBS, json=_pdb(name)).status_code == 201
        prefix = f"/registry/poddisruptionbudgets/{NS}/"
        stored = _stored_versions(ha, prefix)
        assert sorted(stored.values()) == ["policy/v1"] * 2 + ["policy/v1beta1"] * 3

        sv = a.get(PDB_SV).json()
        assert sorted(entries(sv).values()) == ["policy/v1", "policy/v1", "policy/v1beta1"]
        assert "commonEncodingVersion" not in sv["status"]
        [condition] = sv["status"]["conditions"]
        assert (condition["type"], condition["status"], condition["reason"]) == (
            "AllEncodingVersionsEqual",
            "False",
            "CommonEncodingVersionUnset",
        )
        assert condition["message"] == "Common encoding version unset"

        refused = kapi.run("migrate", "poddisruptionbudgets.policy")
        assert refused.returncode == 1
        assert "do not agree on the version they store poddisruptionbudgets.policy" in (
            refused.stderr
        )
        assert _stored_versions(ha, prefix) == stored

    # The old server is upgraded: restarted with the same host name, so the same ID.
    assert old.stop() == 0
    ha.servers.remove(old)
    ha.start("c")
    with ha.servers[0].client() as a:
        sv = _agreed(a, PDB_SV, ids, "policy/v1")
        assert sv["status"]["commonEncodingVersion"] == "policy/v1"
        [condition] = sv["status"]["conditions"]
        assert (condition["status"], condition["reason"], condition["message"]) == (
            "True",
            "CommonEncodingVersionSet",
            "Common encoding version set",
        )
        done = kapi.run("migrate", "poddisruptionbudgets.policy")
        assert done.returncode == 0, done
        assert _stored_versions(ha, prefix) == dict.fromkeys(stored, "policy/v1")
        # Every object reads back the same through the upgraded API.
        names = [p["metadata"]["name"] for p in a.get(PDBS).json()["items"]]
        assert sorted(names) == ["new-0", "new-1", "old-0", "old-1", "old-2"]


def test_crd_storage_version_change_is_agreed_then_migrated(ha: Cluster) -> None:
    ha.start("c")
    group = "upgrade.example.com"
    name = f"widgets.{group}"
    widget_sv = f"{SV}/{group}.widgets"
    kapi = make_kapi(ha.servers[0])
    with ha.servers[0].client() as a, ha.servers[2].client() as c:
        ids = identities(a)
        assert a.post(CRDS, json=widgets_crd(group)).status_code == 201
        eventually(lambda: established(a, name), what="the CRD established")
        _agreed(a, widget_sv, ids, f"{group}/v1")
        assert a.post("/api/v1/namespaces", json=namespace_body(NS)).status_code == 201
        collection = f"/apis/{group}/v1/namespaces/{NS}/widgets"
        for i in range(4):
            body = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": f"w{i}"}}
            created = eventually(
                lambda body=body: (r := c.post(collection, json=body)).status_code == 201 and r,
                what="a widget created on c",
            )
            assert created
        prefix = f"/registry/{group}/widgets/{NS}/"
        assert set(_stored_versions(ha, prefix).values()) == {f"{group}/v1"}

        crd = a.get(f"{CRDS}/{name}").json()
        for version in crd["spec"]["versions"]:
            version["storage"] = version["name"] == "v2"
        assert a.put(f"{CRDS}/{name}", json=crd).status_code == 200
        # Every server reports v2 before it writes v2; then they agree.
        sv = _agreed(a, widget_sv, ids, f"{group}/v2")
        assert sv["status"]["commonEncodingVersion"] == f"{group}/v2"
        assert a.get(f"{CRDS}/{name}").json()["status"]["storedVersions"] == ["v1", "v2"]
        assert set(_stored_versions(ha, prefix).values()) == {f"{group}/v1"}

        done = kapi.run("migrate", name)
        assert done.returncode == 0, done
        assert set(_stored_versions(ha, prefix).values()) == {f"{group}/v2"}
        assert len(_stored_versions(ha, prefix)) == 4
        assert a.get(f"{CRDS}/{name}").json()["status"]["storedVersions"] == ["v2"]

        # Deleting the CRD deletes its StorageVersion.
        assert a.delete(f"{CRDS}/{name}").status_code == 200
        eventually(lambda: a.get(widget_sv).status_code == 404, what="the StorageVersion gone")


#: Short leases so that a killed server is noticed within seconds.
FAST_GC = (
    "--identity-lease-duration-seconds=4",
    "--identity-lease-renew-interval-seconds=1",
    "--storage-version-gc-period-seconds=1",
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=500ms",
)


def test_a_sigkilled_servers_entries_are_collected_once_its_lease_expires(
    tmp_path: Path,
) -> None:
    with cluster(tmp_path) as ha:
        for name in ("a", "b", "c"):
            ha.start(name, *FAST_GC)
        doomed = ha.servers[2]
        with ha.servers[0].client() as a:
            ids = identities(a)
            assert len(ids) == 3
            _agreed(a, PDB_SV, ids, "policy/v1")
            doomed.stop(signal.SIGKILL)
            assert doomed.process.returncode == -signal.SIGKILL
            dead = apiserver_id("kapi-c")
            assert dead in ids

            def collected() -> bool:
                return all(dead not in entries(sv) for sv in a.get(SV).json()["items"])

            eventually(collected, what="the killed server's entries collected", timeout=30)
            for sv in a.get(SV).json()["items"]:
                assert set(entries(sv)) == ids - {dead}, sv["metadata"]["name"]
            sv = a.get(PDB_SV).json()
            assert sv["status"]["commonEncodingVersion"] == "policy/v1"
            # Its expired identity lease is collected as well.
            eventually(lambda: dead not in identities(a), what="the dead lease deleted")


def test_a_server_still_registering_refuses_writes_and_is_not_ready(ha: Cluster) -> None:
    held = ha.start("c", "--hold-storage-version-registration", ready="/readyz/ping")
    wait_for_hold(held)
    with held.client() as c, ha.servers[0].client() as a:
        assert a.post("/api/v1/namespaces", json=namespace_body(NS)).status_code == 201
        configmaps = f"/api/v1/namespaces/{NS}/configmaps"
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gated"}}
        refused = c.post(configmaps, json=body)
        assert refused.status_code == 503
        assert refused.json()["reason"] == "ServiceUnavailable"
        assert refused.json()["message"] == (
            "wait for storage version registration to complete for resource: configmaps, "
            "last seen error: <nil>"
        )
        assert a.get(f"{configmaps}/gated").status_code == 404
        # Reads pass; the other servers serve writes as usual.
        assert c.get(configmaps).status_code == 200
        assert a.post(configmaps, json={**body, "metadata": {"name": "via-a"}}).status_code == 201
        readyz = c.get("/readyz", params={"verbose": "1"})
        assert readyz.status_code == 500
        assert f"[-]{HOOK} failed: reason withheld" in readyz.text
        assert a.get("/readyz").status_code == 200

        os.kill(held.process.pid, signal.SIGUSR1)
        eventually(lambda: c.get("/readyz").status_code == 200, what="c ready once released")
        assert f"[+]{HOOK} ok" in c.get("/readyz", params={"verbose": "1"}).text
        assert c.post(configmaps, json=body).status_code == 201
        # Its entries are recorded now, beside the two others'.
        held_entries = entries(a.get(f"{SV}/core.configmaps").json())
        assert set(held_entries) == identities(a)
        assert apiserver_id("kapi-c") in held_entries
