"""KEP-2339 on a real server: every built-in registers this server's storage versions
before /readyz passes; until then writes get upstream's 503; the storage version a
server writes in, and re-encoding objects by rewriting them unchanged."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import (
    KapiServer,
    start_server,
)
from tests.helpers.crds import CRDS, established, widgets_crd
from tests.helpers.storage_versions import (
    BUILTINS,
    HOOK,
    IDENTITY,
    LEASES,
    SV,
    stored_object,
    wait_for_hold,
)
from tests.helpers.wait import eventually

PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"


def _server_id(http: httpx.Client) -> str:
    response = http.get(LEASES, params={"labelSelector": IDENTITY})
    assert response.status_code == 200, response.text
    names = [lease["metadata"]["name"] for lease in response.json()["items"]]
    assert len(names) == 1, names
    return names[0]


def _storage_versions(http: httpx.Client) -> dict[str, Any]:
    response = http.get(SV)
    assert response.status_code == 200, response.text
    return {sv["metadata"]["name"]: sv for sv in response.json()["items"]}


def test_every_builtin_is_registered_with_this_servers_id_once_ready(
    fresh_server: KapiServer,
) -> None:
    with fresh_server.client() as http:
        ready = http.get("/readyz", params={"verbose": "1"})
        assert ready.status_code == 200
        assert f"[+]{HOOK} ok" in ready.text
        server_id = _server_id(http)
        svs = _storage_versions(http)
    assert set(svs) == BUILTINS
    for name, sv in svs.items():
        entries = sv["status"]["storageVersions"]
        assert [e["apiServerID"] for e in entries] == [server_id], name
        assert sv["status"]["commonEncodingVersion"] == entries[0]["encodingVersion"]
        assert sv["status"]["conditions"][0]["reason"] == "CommonEncodingVersionSet"
    assert svs["policy.poddisruptionbudgets"]["status"]["storageVersions"][0] == {
        "apiServerID": server_id,
        "encodingVersion": "policy/v1",
        "decodableVersions": ["policy/v1", "policy/v1beta1"],
        "servedVersions": ["policy/v1"],
    }
    assert svs["core.events"]["status"]["storageVersions"][0]["decodableVersions"] == [
        "v1",
        "events.k8s.io/v1",
        "events.k8s.io/v1beta1",
    ]


# --- the write gate while registration is held --------------------------------------------


@pytest.fixture
def held_server(tmp_path: Path) -> Iterator[KapiServer]:
    """A server whose registration waits for SIGUSR1: it serves, but is not ready."""
    server = start_server(
        tmp_path / "data", "--hold-storage-version-registration", ready="/readyz/ping"
    )
    wait_for_hold(server)
    yield server
    server.stop()


def _pending(gr: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"wait for storage version registration to complete for resource: {gr}, "
        "last seen error: <nil>",
        "reason": "ServiceUnavailable",
        "code": 503,
    }


CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gated"}}
PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "gated"},
    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}},
}


def _lease(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name},
        "spec": {"holderIdentity": "test"},
    }


def test_a_crd_is_not_served_until_its_held_registration_is_released(tmp_path: Path) -> None:
    group = "held.example.com"
    widgets = f"/apis/{group}/v1/namespaces/default/widgets"
    data = tmp_path / "data"
    # Made by an earlier run: on a held server, CRD writes wait like every built-in's.
    first = start_server(data)
    with first.client() as http:
        assert http.post(CRDS, json=widgets_crd(group)).status_code == 201
        eventually(lambda: http.get(widgets).status_code == 200, what="the widgets served")
    assert first.stop() == 0
    held = start_server(data, "--hold-storage-version-registration", ready="/readyz/ping")
    try:
        wait_for_hold(held)
        with held.client() as http:
            assert established(http, f"widgets.{group}")
            # Its storage version is not recorded by this server yet: not served.
            assert http.get(widgets).status_code == 404
            os.kill(held.process.pid, signal.SIGUSR1)
            eventually(lambda: http.get(widgets).status_code == 200, what="the widgets served")
            recorded = http.get(f"{SV}/{group}.widgets").json()
            assert recorded["status"]["commonEncodingVersion"] == f"{group}/v1"
    finally:
        held.stop()


def test_writes_wait_for_registration_until_sigusr1(held_server: KapiServer) -> None:
    with held_server.client() as http:
        refused = http.post("/api/v1/namespaces/default/configmaps", json=CONFIGMAP)
        assert refused.status_code == 503
        assert refused.json() == _pending("configmaps")
        assert "retry-after" not in refused.headers
        refused = http.post(PDBS, json=PDB)
        assert refused.status_code == 503
        assert refused.json() == _pending("poddisruptionbudgets.policy")
        # Deletes and patches are writes too; leases outside kube-system are gated.
        deleted = http.delete("/api/v1/namespaces/default/configmaps/gated")
        assert deleted.json() == _pending("configmaps")
        lease = http.post(
            "/apis/coordination.k8s.io/v1/namespaces/default/leases", json=_lease("x")
        )
        assert lease.json() == _pending("leases.coordination.k8s.io")
        # Reads, non-resource requests, kube-system leases and StorageVersions pass.
        assert http.get("/api/v1/namespaces/default/configmaps").json()["items"] == []
        assert http.get("/api/v1/namespaces/default/configmaps/gated").status_code == 404
        assert http.get("/version").status_code == 200
        assert http.post(LEASES, json=_lease("test-gate")).status_code == 201
        created = http.post(
            SV,
            json={
                "apiVersion": "internal.apiserver.k8s.io/v1alpha1",
                "kind": "StorageVersion",
                "metadata": {"name": "example.com.widgets"},
            },
        )
        assert created.status_code == 201, created.text
        ready = http.get("/readyz", params={"verbose": "1"})
        assert ready.status_code == 500
        assert f"[-]{HOOK} failed: reason withheld" in ready.text
        # Nothing this server registers exists yet: the only StorageVersion is the test's.
        assert set(_storage_versions(http)) == {"example.com.widgets"}

        os.kill(held_server.process.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 20
        while http.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline, "registration did not complete"
            time.sleep(0.05)
        created = http.post("/api/v1/namespaces/default/configmaps", json=CONFIGMAP)
        assert created.status_code == 201, created.text
        assert http.post(PDBS, json=PDB).status_code == 201
        assert set(_storage_versions(http)) >= BUILTINS


def test_without_an_identity_nothing_registers_and_nothing_is_gated(tmp_path: Path) -> None:
    # Held, but the gate needs APIServerIdentity: the server is ready and takes writes.
    server = start_server(
        tmp_path / "data",
        "--feature-gates=APIServerIdentity=false",
        "--hold-storage-version-registration",
    )
    try:
        with server.client() as http:
            ready = http.get("/readyz", params={"verbose": "1"})
            assert ready.status_code == 200
            assert HOOK not in ready.text
            created = http.post("/api/v1/namespaces/default/configmaps", json=CONFIGMAP)
            assert created.status_code == 201, created.text
            assert _storage_versions(http) == {}
    finally:
        server.stop()


# --- which version a server writes in -----------------------------------------------------

PDB_KEY = "/registry/poddisruptionbudgets/default/gated"


def test_storage_versions_flag_and_rewriting_unchanged_re_encodes(tmp_path: Path) -> None:
    # Storage is read while no server runs (SQLite's file is the server's alone).
    data = tmp_path / "data"
    old = start_server(data, "--storage-versions=policy/v1beta1/poddisruptionbudgets")
    try:
        with old.client() as http:
            assert http.post(PDBS, json=PDB).status_code == 201
            sv = _storage_versions(http)["policy.poddisruptionbudgets"]
            assert sv["status"]["storageVersions"][0]["encodingVersion"] == "policy/v1beta1"
            assert sv["status"]["commonEncodingVersion"] == "policy/v1beta1"
            read = http.get(f"{PDBS}/gated").json()
            assert read["apiVersion"] == "policy/v1"
            assert read["spec"]["minAvailable"] == 1
    finally:
        assert old.stop() == 0
    stored = stored_object(old, PDB_KEY)
    assert stored["apiVersion"] == "policy/v1beta1"
    assert stored["spec"]["minAvailable"] == 1

    new = start_server(data)
    try:
        with new.client() as http:
            sv = _storage_versions(http)["policy.poddisruptionbudgets"]
            # The same host: the same ID, so the entry is replaced, not added.
            assert [e["encodingVersion"] for e in sv["status"]["storageVersions"]] == ["policy/v1"]
            current = http.get(f"{PDBS}/gated").json()
            assert current == read
            rewritten = http.put(f"{PDBS}/gated", json=current)
            assert rewritten.status_code == 200, rewritten.text
            rv = rewritten.json()["metadata"]["resourceVersion"]
            assert rv != current["metadata"]["resourceVersion"]
            # Now stored as this server encodes it: a no-op update writes nothing.
            again = http.put(f"{PDBS}/gated", json=rewritten.json())
            assert again.status_code == 200, again.text
            assert again.json()["metadata"]["resourceVersion"] == rv
            assert http.get(f"{PDBS}/gated").json()["metadata"]["resourceVersion"] == rv
    finally:
        assert new.stop() == 0
    stored = stored_object(new, PDB_KEY)
    assert stored["apiVersion"] == "policy/v1"
    assert stored["spec"]["minAvailable"] == 1


def test_an_emulated_release_stores_what_the_previous_one_can_read(tmp_path: Path) -> None:
    # 1.21 had APIServerIdentity as an alpha, off by default: registration needs it.
    server = start_server(
        tmp_path / "data", "--emulated-version=1.21", "--feature-gates=APIServerIdentity=true"
    )
    try:
        with server.client() as http:
            assert http.post(PDBS, json=PDB).status_code == 201
            sv = _storage_versions(http)["policy.poddisruptionbudgets"]
            entry = sv["status"]["storageVersions"][0]
            assert entry["encodingVersion"] == "policy/v1beta1"
            assert entry["servedVersions"] == ["policy/v1", "policy/v1beta1"]
            assert http.get(f"{PDBS}/gated").json()["apiVersion"] == "policy/v1"
    finally:
        assert server.stop() == 0
    assert stored_object(server, PDB_KEY)["apiVersion"] == "policy/v1beta1"


def test_an_unknown_storage_version_is_a_usage_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kapi",
            "serve",
            "--data-dir",
            str(tmp_path / "data"),
            "--storage-versions=policy/v2/poddisruptionbudgets",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert (
        "--storage-versions: invalid storage version 'policy/v2/poddisruptionbudgets': "
        "poddisruptionbudgets cannot be stored in version 'v2' (known: v1, v1beta1)"
    ) in result.stderr
    assert not (tmp_path / "data").exists()
