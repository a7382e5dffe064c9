"""Leases (TTLs) as the SQLite backend keeps them: its lease table, reopening, the expiry timer.

How TTL writes behave is the Storage contract, run on every backend in
test_storage_contract.py.
Every test waits for expiry through a watch with a bounded timeout; none
asserts how long anything took.  TTLs are one second, the smallest there is.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path

import pytest

from kapi.storage.interface import EventType, Watch, WatchEvent
from kapi.storage.sqlite import SQLiteStorage

EV = "/registry/events/default/"
#: Long enough for a one-second lease on a loaded machine, short enough to fail fast.
EXPIRY_TIMEOUT = 15.0


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "kapi.db"


async def next_deleted(watch: Watch) -> WatchEvent:
    """The next DELETED event of ``watch``, failing instead of hanging."""
    async with asyncio.timeout(EXPIRY_TIMEOUT):
        async for event in watch:
            if event.type is EventType.DELETED:
                return event
    raise AssertionError("watch ended")


def leases(db: Path) -> list[str]:
    """The keys with a lease row, read from the file of a closed store."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return [name for (name,) in conn.execute("SELECT name FROM lease ORDER BY name")]


def test_lease_rows_go_with_expiry_detaching_writes_and_deletes(db: Path) -> None:
    async def main() -> None:
        store = SQLiteStorage.open(db)
        try:
            watch = await store.watch(EV, 0)
            detached = await store.create(EV + "detached", b"", ttl=1)
            await store.update(EV + "detached", b"", detached.mod_revision)
            deleted = await store.create(EV + "deleted", b"", ttl=1)
            await store.delete(EV + "deleted", deleted.mod_revision)
            await store.create(EV + "expired", b"", ttl=1)
            await store.create(EV + "kept", b"", ttl=3600)
            assert leases_of(store) == [EV + "expired", EV + "kept"]
            event = await next_deleted(watch)
            while event.kv is not None and event.kv.key != EV + "expired":
                event = await next_deleted(watch)
            await watch.close()
        finally:
            await store.close()
        assert leases(db) == [EV + "kept"]

    asyncio.run(main())


def leases_of(store: SQLiteStorage) -> list[str]:
    """The keys with a lease row, read through the open store's connection."""
    return [name for (name,) in store._execute("SELECT name FROM lease ORDER BY name")]


def test_leases_persist_and_expire_after_reopening(db: Path) -> None:
    async def first_run() -> int:
        store = SQLiteStorage.open(db)
        try:
            await store.create(EV + "kept", b"")
            return (await store.create(EV + "a", b"", ttl=1)).mod_revision
        finally:
            await store.close()

    async def second_run(created: int) -> None:
        store = SQLiteStorage.open(db)  # a loop is running: the timer is armed at open
        try:
            watch = await store.watch(EV, created)
            deleted = await next_deleted(watch)
            assert deleted.kv is not None and deleted.kv.key == EV + "a"
            assert deleted.revision == created + 1
            assert await store.get(EV + "kept") is not None
            await watch.close()
        finally:
            await store.close()

    created = asyncio.run(first_run())
    assert leases(db) == [EV + "a"]
    asyncio.run(second_run(created))
    assert leases(db) == []


def test_leases_loaded_without_a_running_loop_expire_on_first_use(db: Path) -> None:
    async def first_run() -> None:
        store = SQLiteStorage.open(db)
        try:
            await store.create(EV + "a", b"", ttl=1)
        finally:
            await store.close()

    asyncio.run(first_run())
    store = SQLiteStorage.open(db)  # no event loop runs here

    async def second_run() -> None:
        try:
            watch = await store.watch(EV, 0)
            deleted = await next_deleted(watch)
            assert deleted.kv is not None and deleted.kv.key == EV + "a"
            await watch.close()
        finally:
            await store.close()

    asyncio.run(second_run())
    assert leases(db) == []


def test_close_stops_the_expiry_timer(db: Path) -> None:
    async def main() -> None:
        store = SQLiteStorage.open(db)
        await store.create(EV + "a", b"", ttl=1)
        await store.close()
        # A timer left armed would run against the closed connection and raise in
        # the loop's exception handler; give it the time to fire.
        await asyncio.sleep(1.5)

    errors: list[dict[str, object]] = []

    async def watched() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: errors.append(ctx))
        await main()

    asyncio.run(watched())
    assert errors == []
    assert leases(db) == [EV + "a"]
