"""The informer: an in-memory copy of a resource that follows its watch."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kapi.registry.informer import Backoff, Informer, ItemBackoff, reflect
from kapi.registry.store import ListResult, WatchEvent
from kapi.server import APIServer, ServerConfig
from kapi.storage.interface import ExpiredError, StorageUnavailableError


def _configmap(name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"k": value},
    }


async def _settle() -> None:
    """Let the informer's task take the events already handed to its watch."""
    for _ in range(5):
        await asyncio.sleep(0)


def test_informer_follows_creates_updates_and_deletes(tmp_path: Path) -> None:
    async def scenario() -> list[Any]:
        server = APIServer(ServerConfig(data_dir=tmp_path))
        await server.start()
        store = server.store("", "configmaps")
        await store.create(_configmap("before", "1"))
        changes: list[list[str]] = []
        informer = Informer(lambda objs: changes.append(sorted(objs)))
        task = asyncio.create_task(informer.run(store))
        seen: list[Any] = []
        try:
            await _settle()
            seen.append(informer.get("default", "before")["data"])  # from the initial list
            await store.create(_configmap("after", "2"))
            await _settle()
            seen.append(informer.get("default", "after")["data"])

            async def bump(obj: dict[str, Any]) -> dict[str, Any]:
                obj["data"]["k"] = "3"
                return obj

            await store.update("default", "after", bump)
            await _settle()
            seen.append(informer.get("default", "after")["data"])
            await store.delete("default", "before")
            await _settle()
            seen.append(informer.get("default", "before"))
            seen.append(informer.get(None, "after"))  # cluster-scoped key: not the same object
            seen.append(changes[-1])
        finally:
            task.cancel()
            await server.stop()
        return seen

    assert asyncio.run(scenario()) == [
        {"k": "1"},
        {"k": "2"},
        {"k": "3"},
        None,
        None,
        ["default/after"],
    ]


def test_server_namespace_informer_sees_system_namespaces(tmp_path: Path) -> None:
    async def scenario() -> tuple[Any, Any]:
        server = APIServer(ServerConfig(data_dir=tmp_path))
        await server.start()
        try:
            await _settle()
            default = server.namespace_informer.get(None, "default")
            missing = server.namespace_informer.get(None, "nope")
        finally:
            await server.stop()
        return default, missing

    default, missing = asyncio.run(scenario())
    assert default["metadata"]["name"] == "default"
    assert missing is None


# -- relisting: several servers share storage, so watches break and caches must recover --


class _ScriptedStore:
    """A store whose lists and watches play a script: each step a list result or an error,
    each watch a list of events and then, optionally, an error raised by iteration."""

    resource = type("R", (), {"plural": "configmaps"})()

    def __init__(self, lists: list[Any], watches: list[tuple[list[WatchEvent], Any]]) -> None:
        self.lists = lists
        self.watches = watches
        self.watched_from: list[str] = []
        self.exhausted = asyncio.Event()

    async def list(self, namespace: Any, predicate: Any) -> ListResult:
        if not self.lists:
            self.exhausted.set()
            await asyncio.Event().wait()  # the script is over: hang until cancelled
        step = self.lists.pop(0)
        if isinstance(step, Exception):
            raise step
        return step

    async def watch(self, namespace: Any, predicate: Any, *, resource_version: str) -> Any:
        self.watched_from.append(resource_version)
        events, error = self.watches.pop(0)

        async def stream() -> Any:
            for event in events:
                yield event
            if error is not None:
                raise error

        return stream()


def test_reflect_relists_after_expiry_and_unavailability_keeping_the_cache() -> None:
    """410 from the watch: list again at once; storage down: keep the old set, retry."""
    one, two, three = (_configmap(n, n) for n in ("one", "two", "three"))
    store = _ScriptedStore(
        lists=[
            ListResult([one], 10),
            StorageUnavailableError("etcd down"),
            ListResult([two, three], 20),
        ],
        watches=[([WatchEvent("ADDED", two)], ExpiredError(11, 15)), ([], None)],
    )
    snapshots: list[list[str]] = []
    informer = Informer(lambda objs: snapshots.append(sorted(objs)))

    async def scenario() -> None:
        task = asyncio.create_task(reflect(store, informer, backoff=Backoff(initial=0.01)))
        await asyncio.wait_for(store.exhausted.wait(), 10)
        task.cancel()

    asyncio.run(scenario())
    # Never empty in between: the failed list left the previous set in place.
    assert snapshots == [
        ["default/one"],
        ["default/one", "default/two"],
        ["default/three", "default/two"],
    ]
    assert store.watched_from == ["10", "20"]


def test_backoff_starts_at_once_doubles_and_is_capped() -> None:
    backoff = Backoff(initial=0.1, cap=0.5)
    assert [backoff.next() for _ in range(6)] == [0.0, 0.1, 0.2, 0.4, 0.5, 0.5]
    backoff.reset()
    assert backoff.next() == 0.0


def test_item_backoff_doubles_per_item_is_capped_and_forgotten_on_success() -> None:
    retries: ItemBackoff[str] = ItemBackoff(initial=0.005, cap=1000.0)
    assert [retries.failed("a") for _ in range(4)] == [0.005, 0.01, 0.02, 0.04]
    assert retries.failed("b") == 0.005  # each item counts its own failures
    for _ in range(30):
        last = retries.failed("a")
    assert last == 1000.0
    for _ in range(2000):  # far past any float a plain 2**n would give
        assert retries.failed("a") == 1000.0
    retries.forget("a")
    assert retries.failed("a") == 0.005
    assert retries.failed("b") == 0.01  # forgetting one item leaves the others
