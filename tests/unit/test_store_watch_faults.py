"""A storage watch that cannot go on mid-stream ends the API watch as upstream's etcd3 watcher.

The storage here is SQLite with one fault injected: its watch hands over the
real events, then raises what an etcd backend raises when it lost its place
(``ExpiredError``, after etcd compacted past it) or cannot reach etcd
(``StorageUnavailableError``).  The store turns that into upstream's Status
(410 Expired, or 500 InternalError) and the handler sends it as the stream's
last event, an ERROR event.  Last, a list of one name whose object and
resourceVersion come from one read, though storage calls interleave with writes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from kapi.admission.chain import AdmissionChain
from kapi.apimachinery import errors
from kapi.apimachinery.field_selector import parse_selector as parse_field_selector
from kapi.apis import builtin_resources
from kapi.endpoints import handlers
from kapi.registry.predicate import SelectionPredicate
from kapi.registry.store import Store, WatchEvent
from kapi.runtime.scheme import Scheme
from kapi.storage.interface import (
    ExpiredError,
    StorageError,
    StorageUnavailableError,
    Watch,
)
from kapi.storage.interface import (
    WatchEvent as StorageEvent,
)
from kapi.storage.sqlite import SQLiteStorage
from kapi.version import DEFAULT_VERSION

EVERYTHING = SelectionPredicate()
TOO_OLD = "The resourceVersion for the provided watch is too old."
UNREACHABLE = "etcd cluster is unavailable or misconfigured: context deadline exceeded"


class FailingWatch(Watch):
    """The real watch's first ``events`` events, then ``error``."""

    def __init__(self, inner: Watch, events: int, error: StorageError) -> None:
        self.inner, self.events, self.error = inner, events, error

    async def _iterate(self) -> AsyncIterator[StorageEvent]:
        seen = 0
        async for event in self.inner:
            yield event
            seen += 1
            if seen == self.events:
                raise self.error

    def __aiter__(self) -> AsyncIterator[StorageEvent]:
        return self._iterate()

    async def close(self) -> None:
        await self.inner.close()


class FailingStorage(SQLiteStorage):
    """SQLite whose watches fail after ``events`` events with ``error``."""

    def __init__(self, path: Path, events: int, error: StorageError) -> None:
        super().__init__(path)
        self.events, self.error = events, error
        self.closed_watches = 0

    async def watch(
        self, prefix: str, revision: int, *, progress_interval: float | None = None
    ) -> Watch:
        inner = await super().watch(prefix, revision, progress_interval=progress_interval)
        storage = self

        class Counting(FailingWatch):
            async def close(self) -> None:
                storage.closed_watches += 1
                await super().close()

        return Counting(inner, self.events, self.error)


def configmap(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"k": name},
    }


def watch_until_it_fails(
    tmp_path: Path, error: StorageError
) -> tuple[list[WatchEvent], errors.StatusError, int]:
    """Three creates, a watch from the first failing after one event: the events
    delivered, the error the iteration raised, and how many storage watches were closed."""

    async def main() -> tuple[list[WatchEvent], errors.StatusError, int]:
        scheme = Scheme(DEFAULT_VERSION)
        for resource in builtin_resources():
            scheme.add(resource)
        storage = FailingStorage(tmp_path / "kapi.db", 1, error)
        [resource] = [r for r in scheme.resources() if (r.group, r.plural) == ("", "configmaps")]
        store = Store(resource, storage, scheme, AdmissionChain([]))
        try:
            first = await store.create(configmap("a"))
            start = first["metadata"]["resourceVersion"]
            await store.create(configmap("b"))
            await store.create(configmap("c"))
            seen: list[WatchEvent] = []
            with pytest.raises(errors.StatusError) as raised:
                async for event in await store.watch("default", EVERYTHING, resource_version=start):
                    seen.append(event)
            return seen, raised.value, storage.closed_watches
        finally:
            await storage.close()

    return asyncio.run(main())


def test_a_watch_whose_place_was_compacted_ends_with_410_expired(tmp_path: Path) -> None:
    seen, error, closed = watch_until_it_fails(tmp_path, ExpiredError(3, 7))
    assert [(e.type, e.object["metadata"]["name"]) for e in seen] == [("ADDED", "b")]
    assert (error.code, error.reason, error.message) == (410, "Expired", TOO_OLD)
    assert error.status["status"] == "Failure"
    assert closed == 1


def test_a_watch_that_loses_storage_ends_with_internal_error(tmp_path: Path) -> None:
    seen, error, closed = watch_until_it_fails(tmp_path, StorageUnavailableError(UNREACHABLE))
    assert [(e.type, e.object["metadata"]["name"]) for e in seen] == [("ADDED", "b")]
    assert (error.code, error.reason) == (500, "InternalError")
    assert error.message == f"Internal error occurred: {UNREACHABLE}"
    assert error.status["details"]["causes"] == [{"message": UNREACHABLE}]
    assert closed == 1


def test_the_handler_sends_the_status_as_the_last_event_and_ends_the_stream() -> None:
    expired = errors.resource_expired(TOO_OLD)

    async def events() -> AsyncIterator[WatchEvent]:
        yield WatchEvent("BOOKMARK", {"kind": "ConfigMap", "metadata": {"resourceVersion": "5"}})
        raise expired

    async def main() -> list[bytes]:
        scope: Any = SimpleNamespace(stopping=asyncio.Event(), api_version="v1")
        stream = handlers._watch_stream(scope, events(), 30.0, handlers._json_watch_event)
        return [chunk async for chunk in stream]

    chunks = asyncio.run(main())
    decoded = [orjson.loads(chunk) for chunk in chunks]
    assert [d["type"] for d in decoded] == ["BOOKMARK", "ERROR"]
    status = decoded[1]["object"]
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": TOO_OLD,
        "reason": "Expired",
        "code": 410,
    }


class InterleavingStorage(SQLiteStorage):
    """SQLite where ``configmaps/default/x`` is deleted right after each read of it
    alone or of the current revision, as a write on another server can land between
    two etcd calls."""

    async def _interleave(self) -> None:
        current = await super().get("/registry/configmaps/default/x")
        if current is not None:
            await super().delete(current.key)

    async def get(self, key: str) -> Any:
        value = await super().get(key)
        await self._interleave()
        return value

    async def current_revision(self) -> int:
        revision = await super().current_revision()
        await self._interleave()
        return revision


def test_a_list_of_one_name_shows_the_object_only_at_a_revision_that_holds_it(
    tmp_path: Path,
) -> None:
    """``fieldSelector=metadata.name=x``: the object and the list's resourceVersion are one
    read, so a watch from that resourceVersion sees every later change (kubectl delete
    --wait watched from a list that still showed a CRD deleted before its revision)."""

    async def main() -> tuple[list[Any], bool]:
        scheme = Scheme(DEFAULT_VERSION)
        for resource in builtin_resources():
            scheme.add(resource)
        storage = InterleavingStorage(tmp_path / "kapi.db")
        [resource] = [r for r in scheme.resources() if (r.group, r.plural) == ("", "configmaps")]
        store = Store(resource, storage, scheme, AdmissionChain([]))
        try:
            await store.create(configmap("x"))
            one = parse_field_selector("metadata.name=x")
            listed = await store.list("default", SelectionPredicate(field=one))
            # Write after the list, so that its revision is not the latest.
            await store.create(configmap("y"))
            at = await storage.list(
                "/registry/configmaps/default/x", revision=listed.resource_version
            )
            return listed.items, bool(at.kvs)
        finally:
            await storage.close()

    items, held = asyncio.run(main())
    assert [o["metadata"]["name"] for o in items] == (["x"] if held else [])
