"""Leases (TTLs) of the SQLite backend: keys written with a TTL are deleted when it runs out.

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


def test_expired_key_is_deleted_with_a_watch_event_in_revision_order(db: Path) -> None:
    async def main() -> None:
        store = SQLiteStorage.open(db)
        try:
            watch = await store.watch(EV, 0)
            created = await store.create(EV + "a", b"1", ttl=1)
            updated = await store.update(EV + "a", b"2", created.mod_revision, ttl=1)
            deleted = await next_deleted(watch)
            assert deleted.revision == updated.mod_revision + 1
            assert deleted.revision == await store.current_revision()
            assert deleted.kv is not None and deleted.prev_kv is not None
            assert (deleted.kv.key, deleted.kv.value, deleted.kv.mod_revision) == (
                EV + "a",
                b"2",
                deleted.revision,
            )
            assert deleted.prev_kv.mod_revision == updated.mod_revision
            assert deleted.kv.create_revision == created.mod_revision
            assert await store.get(EV + "a") is None
            await watch.close()
        finally:
            await store.close()
        assert leases(db) == []

    asyncio.run(main())


def test_keys_expire_in_the_order_their_leases_run_out(db: Path) -> None:
    async def main() -> None:
        store = SQLiteStorage.open(db)
        try:
            watch = await store.watch(EV, 0)
            await store.create(EV + "late", b"", ttl=2)
            await store.create(EV + "early", b"", ttl=1)
            first, second = await next_deleted(watch), await next_deleted(watch)
            assert first.kv is not None and second.kv is not None
            assert (first.kv.key, second.kv.key) == (EV + "early", EV + "late")
            assert first.revision < second.revision
            await watch.close()
        finally:
            await store.close()

    asyncio.run(main())


async def expire_marker(store: SQLiteStorage, watch: Watch) -> None:
    """Lease a marker key now for one second and wait until the watch sees it expire.

    Any lease set before the marker's with the same or a shorter TTL has run
    out by then, so keys that still exist afterwards have no such lease.
    """
    await store.create(EV + "marker", b"", ttl=1)
    while True:
        event = await next_deleted(watch)
        assert event.kv is not None
        if event.kv.key == EV + "marker":
            return


def test_a_rewrite_with_a_ttl_replaces_the_lease(db: Path) -> None:
    async def main() -> None:
        store = SQLiteStorage.open(db)
        try:
            watch = await store.watch(EV, 0)
            created = await store.create(EV + "a", b"1", ttl=1)
            await store.update(EV + "a", b"2", created.mod_revision, ttl=3)
            await expire_marker(store, watch)
            current = await store.get(EV + "a")
            assert current is not None and current.value == b"2"
            deleted = await next_deleted(watch)
            assert deleted.kv is not None and deleted.kv.key == EV + "a"
            await watch.close()
        finally:
            await store.close()

    asyncio.run(main())


def test_a_write_without_ttl_detaches_the_lease(db: Path) -> None:
    async def main() -> None:
        store = SQLiteStorage.open(db)
        try:
            watch = await store.watch(EV, 0)
            created = await store.create(EV + "a", b"1", ttl=1)
            await store.update(EV + "a", b"2", created.mod_revision)
            await expire_marker(store, watch)
            assert await store.get(EV + "a") is not None
        finally:
            await store.close()
        assert leases(db) == []

    asyncio.run(main())


def test_delete_removes_the_lease(db: Path) -> None:
    async def main() -> None:
        store = SQLiteStorage.open(db)
        try:
            watch = await store.watch(EV, 0)
            created = await store.create(EV + "a", b"leased", ttl=1)
            await store.delete(EV + "a", created.mod_revision)
            await store.create(EV + "a", b"kept")
            await expire_marker(store, watch)
            current = await store.get(EV + "a")
            assert current is not None and current.value == b"kept"
        finally:
            await store.close()
        assert leases(db) == []

    asyncio.run(main())


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
