"""KEP-2339 registration: names, the common version and its condition, the entry a
server writes, the manager's per-resource state, and retries on conflicts."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kapi.apimachinery import errors
from kapi.features import FeatureGate
from kapi.server import APIServer
from kapi.storageversion import manager as manager_module
from kapi.storageversion.manager import (
    NO_ERROR,
    ResourceInfo,
    StorageVersionManager,
    local_update,
    set_common_encoding_version,
    storage_version_name,
)
from tests.helpers.in_process import run_with_server

PDB_V1 = ResourceInfo(
    "policy", "poddisruptionbudgets", "policy/v1", ("policy/v1", "policy/v1beta1"), ("policy/v1",)
)
PDB_V1BETA1 = ResourceInfo(
    "policy",
    "poddisruptionbudgets",
    "policy/v1beta1",
    ("policy/v1", "policy/v1beta1"),
    ("policy/v1", "policy/v1beta1"),
)
CONFIGMAPS = ResourceInfo("", "configmaps", "v1", ("v1",), ("v1",))


def test_storage_version_name_spells_the_core_group_core() -> None:
    assert storage_version_name("", "configmaps") == "core.configmaps"
    assert storage_version_name("policy", "poddisruptionbudgets") == "policy.poddisruptionbudgets"


def _sv(*entries: tuple[str, str], **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "policy.poddisruptionbudgets"},
        "status": {
            "storageVersions": [
                {"apiServerID": server, "encodingVersion": version} for server, version in entries
            ],
            **status,
        },
    }


def _condition(sv: dict[str, Any]) -> dict[str, Any]:
    conditions = sv["status"]["conditions"]
    assert len(conditions) == 1
    return dict(conditions[0])


def test_agreeing_entries_set_the_common_version_and_a_true_condition() -> None:
    sv = _sv(("a", "policy/v1"), ("b", "policy/v1"))
    sv["metadata"]["generation"] = 3
    set_common_encoding_version(sv, "T1")
    assert sv["status"]["commonEncodingVersion"] == "policy/v1"
    assert _condition(sv) == {
        "type": "AllEncodingVersionsEqual",
        "status": "True",
        "observedGeneration": 3,
        "lastTransitionTime": "T1",
        "reason": "CommonEncodingVersionSet",
        "message": "Common encoding version set",
    }


def test_disagreeing_entries_unset_the_common_version() -> None:
    sv = _sv(("a", "policy/v1"), ("b", "policy/v1beta1"), commonEncodingVersion="policy/v1")
    set_common_encoding_version(sv, "T1")
    assert "commonEncodingVersion" not in sv["status"]
    assert _condition(sv) == {
        "type": "AllEncodingVersionsEqual",
        "status": "False",
        "lastTransitionTime": "T1",
        "reason": "CommonEncodingVersionUnset",
        "message": "Common encoding version unset",
    }


def test_no_entries_leave_the_common_version_unset() -> None:
    sv = _sv()
    set_common_encoding_version(sv, "T1")
    assert "commonEncodingVersion" not in sv["status"]
    assert _condition(sv)["status"] == "False"


def test_transition_time_moves_only_on_a_flip_or_a_new_common_version() -> None:
    sv = _sv(("a", "policy/v1"))
    set_common_encoding_version(sv, "T1")
    set_common_encoding_version(sv, "T2")  # same status, same version
    assert _condition(sv)["lastTransitionTime"] == "T1"
    sv["status"]["storageVersions"][0]["encodingVersion"] = "policy/v1beta1"
    set_common_encoding_version(sv, "T3")  # still True, but another common version
    assert _condition(sv)["lastTransitionTime"] == "T3"
    assert sv["status"]["commonEncodingVersion"] == "policy/v1beta1"
    sv["status"]["storageVersions"].append({"apiServerID": "b", "encodingVersion": "policy/v1"})
    set_common_encoding_version(sv, "T4")  # flips to False
    assert _condition(sv)["lastTransitionTime"] == "T4"
    set_common_encoding_version(sv, "T5")  # stays False
    assert _condition(sv)["lastTransitionTime"] == "T4"


def test_local_update_replaces_only_this_servers_entry_and_is_pure() -> None:
    before = _sv(("a", "policy/v1"), ("b", "policy/v1"))
    after = local_update(before, "b", PDB_V1BETA1, now="T1")
    assert before["status"]["storageVersions"][1] == {
        "apiServerID": "b",
        "encodingVersion": "policy/v1",
    }
    assert after["status"]["storageVersions"] == [
        {"apiServerID": "a", "encodingVersion": "policy/v1"},
        {
            "apiServerID": "b",
            "encodingVersion": "policy/v1beta1",
            "decodableVersions": ["policy/v1", "policy/v1beta1"],
            "servedVersions": ["policy/v1", "policy/v1beta1"],
        },
    ]
    assert "commonEncodingVersion" not in after["status"]
    added = local_update(after, "c", PDB_V1, now="T2")
    assert [e["apiServerID"] for e in added["status"]["storageVersions"]] == ["a", "b", "c"]


def test_manager_state_before_and_after_a_pass(tmp_path: Path) -> None:
    async def scenario(server: APIServer) -> None:
        store = server.store("internal.apiserver.k8s.io", "storageversions")
        events = ResourceInfo(
            "", "events", "v1", ("v1", "events.k8s.io/v1"), ("v1",), (("events.k8s.io", "events"),)
        )
        manager = StorageVersionManager(store, "apiserver-one")
        manager.add_resource_info(PDB_V1, CONFIGMAPS, events)
        assert not manager.completed()
        assert manager.pending_update("policy", "poddisruptionbudgets")
        assert manager.pending_update("events.k8s.io", "events")
        assert not manager.pending_update("", "pods")  # not recorded: never waits
        assert manager.last_update_error("", "configmaps") == NO_ERROR
        await manager.update_storage_versions()
        assert manager.completed()
        assert not manager.pending_update("policy", "poddisruptionbudgets")
        assert not manager.pending_update("events.k8s.io", "events")
        sv = await store.get(None, "policy.poddisruptionbudgets")
        assert sv["status"]["storageVersions"] == [
            {
                "apiServerID": "apiserver-one",
                "encodingVersion": "policy/v1",
                "decodableVersions": ["policy/v1", "policy/v1beta1"],
                "servedVersions": ["policy/v1"],
            }
        ]
        assert sv["status"]["commonEncodingVersion"] == "policy/v1"
        assert (await store.get(None, "core.configmaps"))["status"]["commonEncodingVersion"] == "v1"
        # A second server with another encoding: both entries, no common version.
        other = StorageVersionManager(store, "apiserver-two")
        other.add_resource_info(PDB_V1BETA1)
        await other.update_storage_versions()
        sv = await store.get(None, "policy.poddisruptionbudgets")
        assert [e["apiServerID"] for e in sv["status"]["storageVersions"]] == [
            "apiserver-one",
            "apiserver-two",
        ]
        assert "commonEncodingVersion" not in sv["status"]
        assert sv["status"]["conditions"][0]["reason"] == "CommonEncodingVersionUnset"
        await manager.remove("policy", "poddisruptionbudgets")
        with pytest.raises(errors.StatusError) as gone:
            await store.get(None, "policy.poddisruptionbudgets")
        assert gone.value.code == 404
        assert not manager.pending_update("policy", "poddisruptionbudgets")
        await manager.remove("policy", "poddisruptionbudgets")  # already gone: fine

    _run(tmp_path, scenario)


def _run(tmp_path: Path, scenario: Callable[[APIServer], Awaitable[Any]]) -> Any:
    # Without an identity the server registers nothing itself: the test's objects only.
    return run_with_server(
        tmp_path, scenario, feature_gates=FeatureGate.parse("APIServerIdentity=false")
    )


class _FlakyStore:
    """A StorageVersion store whose first writes fail with ``failures``."""

    def __init__(self, failures: list[errors.StatusError]) -> None:
        self.failures = failures
        self.objects: dict[str, dict[str, Any]] = {}
        self.writes = 0

    async def get(self, namespace: str | None, name: str) -> dict[str, Any]:
        if name not in self.objects:
            raise errors.not_found("storageversions", "internal.apiserver.k8s.io", name)
        return dict(self.objects[name])

    async def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.writes += 1
        if self.failures:
            raise self.failures.pop(0)
        self.objects[obj["metadata"]["name"]] = obj
        return dict(obj)

    async def update(
        self,
        namespace: str | None,
        name: str,
        update: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
        *,
        subresource: str = "",
    ) -> dict[str, Any]:
        self.writes += 1
        if self.failures:
            raise self.failures.pop(0)
        self.objects[name] = await update(self.objects[name])
        return self.objects[name]


def _conflict() -> errors.StatusError:
    return errors.conflict("storageversions", "internal.apiserver.k8s.io", "core.configmaps")


def _exists() -> errors.StatusError:
    return errors.already_exists("storageversions", "internal.apiserver.k8s.io", "core.configmaps")


def test_conflicts_and_already_exists_are_retried_until_success(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(manager_module, "RETRY_PAUSE", (0.0, 0.0))
    store = _FlakyStore([_exists(), _conflict(), _conflict(), _conflict(), _conflict()])
    manager = StorageVersionManager(store, "apiserver-one")  # type: ignore[arg-type]
    manager.add_resource_info(CONFIGMAPS)
    asyncio.run(manager.update_storage_versions())
    assert manager.completed()
    assert store.writes == 7  # five failures, then create and the /status update
    entries = store.objects["core.configmaps"]["status"]["storageVersions"]
    assert [e["apiServerID"] for e in entries] == ["apiserver-one"]


def test_other_errors_give_up_after_three_attempts_and_are_reported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(manager_module, "RETRY_PAUSE", (0.0, 0.0))
    unavailable = [errors.service_unavailable("etcd is down") for _ in range(3)]
    store = _FlakyStore(unavailable)
    manager = StorageVersionManager(store, "apiserver-one")  # type: ignore[arg-type]
    manager.add_resource_info(CONFIGMAPS)
    asyncio.run(manager.update_storage_versions())
    assert not manager.completed()
    assert manager.pending_update("", "configmaps")
    assert manager.last_update_error("", "configmaps") == "etcd is down"
    assert store.writes == 3
    # The next pass succeeds and clears the error.
    asyncio.run(manager.update_storage_versions())
    assert manager.completed()
    assert manager.last_update_error("", "configmaps") == NO_ERROR
