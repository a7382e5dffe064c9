"""The StorageVersion garbage collector: which entries go, the common version after,
objects left empty, and a pass against real stores."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kapi.apimachinery import errors
from kapi.apis.coordination_v1 import micro_time
from kapi.features import FeatureGate
from kapi.server import APIServer, ServerConfig
from kapi.storageversion.gc import StorageVersionGC, live_servers, prune
from kapi.storageversion.manager import ResourceInfo, StorageVersionManager

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _lease(name: str, renewed: datetime, *, label: str | None = "kube-apiserver") -> dict[str, Any]:
    labels = {"apiserver.kubernetes.io/identity": label} if label else {}
    return {
        "metadata": {"name": name, "namespace": "kube-system", "labels": labels},
        "spec": {"renewTime": micro_time(renewed), "leaseDurationSeconds": 60},
    }


def test_live_servers_are_labelled_unexpired_identity_leases() -> None:
    leases = [
        _lease("fresh", NOW - timedelta(seconds=30)),
        _lease("expired", NOW - timedelta(seconds=61)),
        _lease("other-component", NOW, label="kube-controller-manager"),
        _lease("unlabelled", NOW, label=None),
    ]
    assert live_servers(leases, NOW) == {"fresh"}


def _sv(*entries: tuple[str, str]) -> dict[str, Any]:
    sv: dict[str, Any] = {
        "metadata": {"name": "policy.poddisruptionbudgets"},
        "status": {
            "storageVersions": [
                {"apiServerID": server, "encodingVersion": version} for server, version in entries
            ],
        },
    }
    return sv


def test_prune_keeps_an_object_whose_servers_are_all_live() -> None:
    assert prune(_sv(("a", "policy/v1")), {"a", "b"}, "T") == ("keep", None)


def test_prune_deletes_an_object_left_without_entries() -> None:
    assert prune(_sv(("gone", "policy/v1")), {"a"}, "T") == ("delete", None)


def test_prune_removes_stale_entries_and_recomputes_the_common_version() -> None:
    sv = _sv(("a", "policy/v1"), ("gone", "policy/v1beta1"))
    action, updated = prune(sv, {"a"}, "T")
    assert action == "update" and updated is not None
    assert updated["status"]["storageVersions"] == [
        {"apiServerID": "a", "encodingVersion": "policy/v1"}
    ]
    assert updated["status"]["commonEncodingVersion"] == "policy/v1"
    assert updated["status"]["conditions"][0]["reason"] == "CommonEncodingVersionSet"
    assert len(sv["status"]["storageVersions"]) == 2  # the input is left alone


def test_a_pass_over_real_stores(tmp_path: Path) -> None:
    async def scenario() -> None:
        gates = FeatureGate.parse("APIServerIdentity=false")
        server = APIServer(ServerConfig(data_dir=tmp_path, feature_gates=gates))
        await server.start()
        try:
            svs = server.store("internal.apiserver.k8s.io", "storageversions")
            leases = server.store("coordination.k8s.io", "leases")
            now = datetime.now(UTC)
            await leases.create(_lease("live", now) | {"apiVersion": "coordination.k8s.io/v1"})
            await leases.create(
                _lease("stale", now - timedelta(hours=1)) | {"apiVersion": "coordination.k8s.io/v1"}
            )
            v1 = ResourceInfo("policy", "poddisruptionbudgets", "policy/v1", ("policy/v1",), ())
            v1beta1 = ResourceInfo(
                "policy", "poddisruptionbudgets", "policy/v1beta1", ("policy/v1beta1",), ()
            )
            configmaps = ResourceInfo("", "configmaps", "v1", ("v1",), ())
            for server_id, infos in (
                ("live", [v1]),
                ("stale", [v1beta1, configmaps]),
                ("missing", [v1beta1]),
            ):
                manager = StorageVersionManager(svs, server_id)
                manager.add_resource_info(*infos)
                await manager.update_storage_versions()
                assert manager.completed()
            pdb = await svs.get(None, "policy.poddisruptionbudgets")
            assert "commonEncodingVersion" not in pdb["status"]
            done = await StorageVersionGC(svs, leases, 60).collect()
            assert sorted(done) == [
                ("core.configmaps", "delete"),
                ("policy.poddisruptionbudgets", "update"),
            ]
            pdb = await svs.get(None, "policy.poddisruptionbudgets")
            assert [e["apiServerID"] for e in pdb["status"]["storageVersions"]] == ["live"]
            assert pdb["status"]["commonEncodingVersion"] == "policy/v1"
            with pytest.raises(errors.StatusError) as gone:
                await svs.get(None, "core.configmaps")
            assert gone.value.code == 404
            assert await StorageVersionGC(svs, leases, 60).collect() == []
        finally:
            await server.stop()

    asyncio.run(scenario())
