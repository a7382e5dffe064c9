"""Registering one resource on demand (a CRD), and writes waiting for it (bounded)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any, cast

import pytest

from kapi.apimachinery import errors
from kapi.registry.store import Store
from kapi.storageversion.manager import ResourceInfo, StorageVersionManager

GROUP = "unit.example.com"


class _Store:
    """The StorageVersion store's calls the manager makes, over a dict; ``gate`` (when
    set) holds every status write until it is released."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.gate: asyncio.Event | None = None
        self.fail_with: errors.StatusError | None = None

    async def get(self, namespace: None, name: str) -> dict[str, Any]:
        if self.fail_with is not None:
            raise self.fail_with
        if name not in self.objects:
            raise errors.StatusError(404, "NotFound", f"{name} not found")
        return copy.deepcopy(self.objects[name])

    async def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.objects[obj["metadata"]["name"]] = copy.deepcopy(obj)
        return obj

    async def update(self, namespace: None, name: str, update: Any, **_: Any) -> dict[str, Any]:
        if self.gate is not None:
            await self.gate.wait()
        self.objects[name] = await update(copy.deepcopy(self.objects[name]))
        return self.objects[name]

    async def delete(self, namespace: None, name: str) -> dict[str, Any]:
        if name not in self.objects:
            raise errors.StatusError(404, "NotFound", f"{name} not found")
        return self.objects.pop(name)


def _info(storage: str, wait: float) -> ResourceInfo:
    return ResourceInfo(
        GROUP, "gadgets", f"{GROUP}/{storage}", (f"{GROUP}/v1", f"{GROUP}/v2"), (), write_wait=wait
    )


def _manager(store: _Store) -> StorageVersionManager:
    return StorageVersionManager(cast(Store, store), "apiserver-a")


def test_a_write_waits_for_a_registration_in_progress_then_goes_on() -> None:
    store = _Store()
    manager = _manager(store)

    async def scenario() -> tuple[bool, bool, bool]:
        store.gate = asyncio.Event()
        registering = asyncio.create_task(manager.register(_info("v2", wait=5.0)))
        await asyncio.sleep(0.01)
        pending = manager.has_pending() and manager.pending_update(GROUP, "gadgets")
        waiting = asyncio.create_task(manager.wait_registered(GROUP, "gadgets"))
        await asyncio.sleep(0.01)
        still_waiting = not waiting.done()
        store.gate.set()
        await registering
        return pending, still_waiting, await waiting

    assert asyncio.run(scenario()) == (True, True, True)
    assert not manager.has_pending()
    entry = store.objects[f"{GROUP}.gadgets"]["status"]["storageVersions"][0]
    assert entry["encodingVersion"] == f"{GROUP}/v2"


def test_a_write_is_refused_when_the_registration_fails_or_outlasts_the_wait() -> None:
    store = _Store()
    manager = _manager(store)

    async def scenario() -> tuple[bool, str]:
        store.fail_with = errors.service_unavailable("storage is down")
        with pytest.raises(errors.StatusError):
            await manager.register(_info("v1", wait=0.05))
        return await manager.wait_registered(GROUP, "gadgets"), manager.last_update_error(
            GROUP, "gadgets"
        )

    assert asyncio.run(scenario()) == (False, "storage is down")
    assert manager.pending_update(GROUP, "gadgets")


def test_removing_a_resource_releases_its_waiting_writes_and_deletes_the_object() -> None:
    store = _Store()
    manager = _manager(store)

    async def scenario() -> bool:
        await manager.register(_info("v1", wait=5.0))
        store.gate = asyncio.Event()
        registering = asyncio.create_task(manager.register(_info("v2", wait=5.0)))
        await asyncio.sleep(0.01)
        waiting = asyncio.create_task(manager.wait_registered(GROUP, "gadgets"))
        await asyncio.sleep(0.01)
        await manager.remove(GROUP, "gadgets")
        released = await waiting
        registering.cancel()
        return released

    # Released: the handler then answers for a resource no longer served.
    assert asyncio.run(scenario()) is True
    assert f"{GROUP}.gadgets" not in store.objects
    assert not manager.has_pending()


def test_a_registration_pass_leaves_resources_registered_alone_to_their_owner() -> None:
    # A CRD's new storage version (v2) could not be recorded: its v1 stores still serve,
    # and writes to it wait.  Before, the next pass (the start-up one, its 1 s retries,
    # the 10-minute refresh) registered v2 itself: the StorageVersion said v2 and writes
    # went through to the v1 stores; and the CRD's failure failed the pass, so the
    # built-ins' readiness hook waited for a custom resource.
    store = _Store()
    manager = _manager(store)
    builtin = ResourceInfo("", "configmaps", "v1", ("v1",), ("v1",))
    manager.add_resource_info(builtin)

    async def scenario() -> None:
        await manager.register(_info("v1", wait=0.05))
        store.fail_with = errors.service_unavailable("storage is down")
        with pytest.raises(errors.StatusError):
            await manager.register(_info("v2", wait=0.05))
        store.fail_with = None
        await manager.update_storage_versions()

    asyncio.run(scenario())
    assert manager.completed()
    assert store.objects["core.configmaps"]["status"]["commonEncodingVersion"] == "v1"
    entry = store.objects[f"{GROUP}.gadgets"]["status"]["storageVersions"][0]
    assert entry["encodingVersion"] == f"{GROUP}/v1"
    assert manager.pending_update(GROUP, "gadgets")
    assert manager.last_update_error(GROUP, "gadgets") == "storage is down"


def test_a_held_manager_registers_nothing_until_released() -> None:
    store = _Store()
    manager = _manager(store)

    async def scenario() -> tuple[bool, dict[str, Any], bool]:
        manager.hold()
        registering = asyncio.create_task(manager.register(_info("v1", wait=0.0)))
        await asyncio.sleep(0.05)
        held_state = (manager.held, dict(store.objects))
        manager.release()
        await registering
        return held_state[0], held_state[1], manager.pending_update(GROUP, "gadgets")

    held, stored_while_held, pending_after = asyncio.run(scenario())
    assert held is True
    assert stored_while_held == {}
    assert pending_after is False
    assert f"{GROUP}.gadgets" in store.objects
