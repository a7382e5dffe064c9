"""A CRD's storage version is recorded before it is served, and again when it changes."""

from __future__ import annotations

import asyncio
import copy
from typing import Any, cast

import pytest

from kapi.apiextensions.storage_version import WRITE_WAIT, CRDStorageVersions, resource_info
from kapi.apimachinery import errors
from kapi.storageversion.manager import ResourceInfo, StorageVersionManager
from tests.helpers.crds import crd_of

GROUP = "unit.example.com"


def _crd(storage: str = "v1") -> dict[str, Any]:
    crd = crd_of(GROUP, "gadgets", "Gadget", {"type": "object"})
    v1 = crd["spec"]["versions"][0]
    v2 = {**copy.deepcopy(v1), "name": "v2"}
    v3 = {**copy.deepcopy(v1), "name": "v3", "served": False}
    crd["spec"]["versions"] = [v1, v2, v3]
    for version in crd["spec"]["versions"]:
        version["storage"] = version["name"] == storage
    crd["metadata"]["resourceVersion"] = "1"
    crd["status"] = {"acceptedNames": {"plural": "gadgets", "kind": "Gadget"}}
    return crd


class _Manager:
    """Records what the CRD side asks of the storage version manager."""

    def __init__(self, failures: int = 0) -> None:
        self.registered: list[ResourceInfo] = []
        self.removed: list[tuple[str, str]] = []
        self.failures = failures

    async def register(self, info: ResourceInfo) -> None:
        if self.failures:
            self.failures -= 1
            raise errors.service_unavailable("storage is down")
        self.registered.append(info)

    async def remove(self, group: str, resource: str) -> None:
        self.removed.append((group, resource))


def _storage_versions(manager: _Manager, resynced: list[str]) -> CRDStorageVersions:
    async def resync(name: str) -> None:
        resynced.append(name)

    return CRDStorageVersions(cast(StorageVersionManager, manager), resync)


def test_resource_info_reports_group_versions_of_the_crd() -> None:
    info = resource_info(_crd(storage="v2"))
    assert info is not None
    assert (info.group, info.resource) == (GROUP, "gadgets")
    assert info.encoding_version == f"{GROUP}/v2"
    assert info.decodable_versions == (f"{GROUP}/v1", f"{GROUP}/v2", f"{GROUP}/v3")
    assert info.served_versions == (f"{GROUP}/v1", f"{GROUP}/v2")
    # Writes to a custom resource wait a moment for a registration in progress.
    assert info.write_wait == WRITE_WAIT > 0


def test_no_resource_info_before_names_are_accepted() -> None:
    crd = _crd()
    crd["status"] = {}
    assert resource_info(crd) is None


def test_registers_once_then_again_only_when_the_storage_version_changes() -> None:
    manager, resynced = _Manager(), []

    async def scenario() -> list[bool]:
        versions = _storage_versions(manager, resynced)
        first = await versions.ensure(_crd("v1"))
        again = await versions.ensure(_crd("v1"))
        changed = await versions.ensure(_crd("v2"))
        return [first, again, changed]

    assert asyncio.run(scenario()) == [True, True, True]
    assert [i.encoding_version for i in manager.registered] == [f"{GROUP}/v1", f"{GROUP}/v2"]
    assert resynced == []


def test_a_failed_registration_holds_the_crd_back_and_retries() -> None:
    manager, resynced = _Manager(failures=1), []

    async def scenario() -> bool:
        versions = _storage_versions(manager, resynced)
        served = await versions.ensure(_crd())
        for _ in range(100):  # the first retry is immediate
            if resynced:
                break
            await asyncio.sleep(0.01)
        return served

    assert asyncio.run(scenario()) is False
    assert resynced == ["gadgets.unit.example.com"]
    assert manager.registered == []


def test_forget_deletes_the_storage_version_of_a_deleted_crd() -> None:
    manager, resynced = _Manager(), []

    async def scenario() -> None:
        versions = _storage_versions(manager, resynced)
        await versions.ensure(_crd())
        await versions.forget(_crd())

    asyncio.run(scenario())
    assert manager.removed == [(GROUP, "gadgets")]


@pytest.mark.parametrize("registered", [True, False])
def test_forget_works_whether_or_not_this_server_registered_it(registered: bool) -> None:
    manager, resynced = _Manager(), []

    async def scenario() -> None:
        versions = _storage_versions(manager, resynced)
        if registered:
            await versions.ensure(_crd())
        await versions.forget(_crd())

    asyncio.run(scenario())
    assert manager.removed == [(GROUP, "gadgets")]


def test_forget_stops_a_retry_still_registering() -> None:
    # A retry in progress when the CRD is deleted: before, it went on after ``forget``
    # deleted the StorageVersion, wrote it again, and reported the deleted CRD servable.
    manager = _Manager(failures=1)
    started, release = asyncio.Event(), asyncio.Event()
    register = manager.register

    async def held_register(info: ResourceInfo) -> None:
        if not manager.failures:
            started.set()
            await release.wait()
        await register(info)

    manager.register = held_register  # type: ignore[method-assign]
    servable: list[bool] = []

    async def scenario() -> None:
        async def resync(name: str) -> None:
            servable.append(await versions.ensure(_crd()))

        versions = CRDStorageVersions(cast(StorageVersionManager, manager), resync)
        assert await versions.ensure(_crd()) is False
        await asyncio.wait_for(started.wait(), 5)  # the retry is registering
        await versions.forget(_crd())
        release.set()
        for _ in range(10):
            await asyncio.sleep(0)

    asyncio.run(scenario())
    assert manager.removed == [(GROUP, "gadgets")]
    assert manager.registered == []
    assert servable == []
