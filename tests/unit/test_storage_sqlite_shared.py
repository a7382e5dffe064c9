"""One SQLite file shared by several stores, as the processes of ``kapi serve --workers``
share it: what each store sees of the others' writes.

The Storage contract on a single shared store runs in test_storage_contract.py;
here two or more stores use one file.  Stores in one event loop stand for
processes where it suffices (a store's poll timer only runs when the loop does,
so a test can hold one store back on purpose); real processes write in
:func:`test_writers_in_two_processes_get_distinct_revisions_in_commit_order`.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import sqlite3
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager, closing
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import pytest

from kapi.storage.interface import (
    CompactionRound,
    EventType,
    ExpiredError,
    FutureRevisionError,
    Watch,
    WatchEvent,
)
from kapi.storage.sqlite import SQLiteStorage
from tests.helpers.storage_events import summary, take

CM = "/registry/configmaps/"
EV = "/registry/events/default/"
#: Bounds every wait for an event: generous for a loaded machine, and fails rather than hangs.
TIMEOUT = 15.0


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "kapi.db"


@asynccontextmanager
async def shared(db: Path) -> AsyncIterator[SQLiteStorage]:
    store = SQLiteStorage.open(db, shared=True)
    try:
        yield store
    finally:
        await store.close()


def run(body: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(body())


def test_reads_see_the_other_stores_writes_at_once(db: Path) -> None:
    async def body() -> None:
        async with shared(db) as a, shared(db) as b:
            await a.create(CM + "ns/x", b"1")
            await b.create(CM + "ns/y", b"2")
            updated = await a.update(CM + "ns/x", b"3", 1)
            assert updated.mod_revision == 3
            for store in (a, b):
                assert await store.current_revision() == 3
                got = await store.get(CM + "ns/x")
                assert got is not None and (got.value, got.mod_revision) == (b"3", 3)
                listed = await store.list(CM)
                assert [(kv.key, kv.value) for kv in listed.kvs] == [
                    (CM + "ns/x", b"3"),
                    (CM + "ns/y", b"2"),
                ]
                assert listed.revision == 3
                assert [kv.value for kv in (await store.list(CM, revision=1)).kvs] == [b"1"]
                with pytest.raises(FutureRevisionError):
                    await store.list(CM, revision=4)

    run(body)


def test_a_watch_gets_every_store_s_writes_once_in_revision_order(db: Path) -> None:
    async def body() -> None:
        async with shared(db) as a, shared(db) as b:
            watch = await b.watch(CM, 0)
            await a.create(CM + "ns/a1", b"1")  # only b's poll tells b of this one
            await b.create(CM + "ns/b1", b"2")  # b finds a1 before its own row
            await asyncio.sleep(0.05)
            await a.delete(CM + "ns/a1")
            await a.create(CM + "ns/a2", b"3")
            await b.update(CM + "ns/b1", b"4", 2)
            events = await take(watch, 5, timeout=TIMEOUT)
            assert summary(events) == [
                (EventType.CREATED, 1, CM + "ns/a1", b"1"),
                (EventType.CREATED, 2, CM + "ns/b1", b"2"),
                (EventType.DELETED, 3, CM + "ns/a1", b"1"),
                (EventType.CREATED, 4, CM + "ns/a2", b"3"),
                (EventType.UPDATED, 5, CM + "ns/b1", b"4"),
            ]
            deleted, updated = events[2], events[4]
            assert deleted.prev_kv is not None and deleted.prev_kv.mod_revision == 1
            assert updated.prev_kv is not None and updated.prev_kv.value == b"2"
            await watch.close()

    run(body)


def test_a_watch_from_a_revision_written_through_the_other_store(db: Path) -> None:
    """A client that writes through one worker and watches through another, from the
    revision it was given: nothing at or below it, everything after it."""

    async def body() -> None:
        async with shared(db) as a, shared(db) as b:
            await b.watch(EV, 0)  # b polls, and is behind a's writes below
            await a.create(CM + "ns/w", b"0")
            first = await a.create(CM + "ns/x", b"1")
            from_history = await b.watch(CM, first.mod_revision - 1)
            from_given = await b.watch(CM, first.mod_revision)
            await a.update(CM + "ns/x", b"2", first.mod_revision)
            assert summary(await take(from_history, 2, timeout=TIMEOUT)) == [
                (EventType.CREATED, 2, CM + "ns/x", b"1"),
                (EventType.UPDATED, 3, CM + "ns/x", b"2"),
            ]
            assert summary(await take(from_given, 1, timeout=TIMEOUT)) == [
                (EventType.UPDATED, 3, CM + "ns/x", b"2")
            ]

    run(body)


def test_a_store_left_behind_a_compaction_expires_its_watches(db: Path) -> None:
    async def body() -> None:
        async with shared(db) as a, shared(db) as b:
            watch = await b.watch(CM, 0)
            # Nothing below yields to the loop, so b cannot poll until the sleep:
            # it is held back, like a process stopped for longer than history is kept.
            await a.create(CM + "ns/x", b"1")
            await a.update(CM + "ns/x", b"2", 1)
            await a.update(CM + "ns/x", b"3", 2)
            await a.compact(3)
            with pytest.raises(ExpiredError):
                await take(watch, 1, timeout=TIMEOUT)
            with pytest.raises(ExpiredError):
                await b.watch(CM, 1)
            # A new watch from now goes on from the current revision.
            fresh = await b.watch(CM, 0)
            await a.update(CM + "ns/x", b"4", 3)
            assert summary(await take(fresh, 1, timeout=TIMEOUT)) == [
                (EventType.UPDATED, 4, CM + "ns/x", b"4")
            ]

    run(body)


def test_compaction_by_one_store_is_known_to_the_other(db: Path) -> None:
    async def body() -> None:
        async with shared(db) as a, shared(db) as b:
            for value in (b"1", b"2", b"3"):
                kv = await a.get(CM + "ns/x")
                if kv is None:
                    await a.create(CM + "ns/x", value)
                else:
                    await a.update(CM + "ns/x", value, kv.mod_revision)
            await a.compact(2)
            await b.compact(2)  # already done: nothing to do, no error
            await b.compact(3)
            with pytest.raises(ExpiredError):
                await a.list(CM, revision=2)
            with pytest.raises(FutureRevisionError):
                await b.compact(4)
            assert [kv.value for kv in (await a.list(CM, revision=3)).kvs] == [b"3"]

    run(body)


def test_workers_take_turns_at_periodic_compaction(db: Path) -> None:
    """As servers on one etcd: one claims each round, the others take up its count."""

    async def compacted(store: SQLiteStorage) -> int:
        with pytest.raises(ExpiredError) as refused:
            await store.list(CM, revision=1)
        return refused.value.compacted

    async def body() -> None:
        async with shared(db) as a, shared(db) as b:
            sa, sb = CompactionRound(), CompactionRound()
            await a.create(CM + "ns/one", b"1")
            await a.create(CM + "ns/two", b"2")
            # First round: a claims it and only notes the revision.
            await a.compact_round(sa)
            assert (sa.claimed, sa.revision, sa.compacted) == (1, 2, 0)
            await b.create(CM + "ns/three", b"3")
            # b's first round was a's: b takes up the count and compacts nothing.
            await b.compact_round(sb)
            assert (sb.claimed, sb.revision, sb.compacted) == (1, 3, 0)
            assert [kv.value for kv in (await b.list(CM, revision=1)).kvs] == [b"1"]
            # Second round: a claims it, and compacts to what it saw at the first.
            await a.compact_round(sa)
            assert (sa.claimed, sa.revision, sa.compacted) == (2, 3, 2)
            assert await compacted(b) == 2
            await b.compact_round(sb)
            assert (sb.claimed, sb.compacted) == (2, 2)
            # a stops: b claims the next round, compacting to what it saw last.
            await b.create(CM + "ns/four", b"4")
            await b.compact_round(sb)
            assert (sb.claimed, sb.compacted) == (3, 3)
            assert await compacted(a) == 3
            # a comes back behind: it takes up the count, compacting nothing.
            await a.compact_round(sa)
            assert (sa.claimed, sa.compacted) == (3, 3)

    run(body)


def test_a_lease_set_by_a_store_that_is_gone_is_expired_by_another(db: Path) -> None:
    async def body() -> None:
        async with shared(db) as b:
            watch = await b.watch(EV, 0)
            a = SQLiteStorage.open(db, shared=True)
            await a.create(EV + "e1", b"event", ttl=1)
            await a.close()
            async with asyncio.timeout(TIMEOUT):
                events = [e async for e in _until_deleted(watch)]
            assert [(e.type, e.kv.key) for e in events if e.kv] == [
                (EventType.CREATED, EV + "e1"),
                (EventType.DELETED, EV + "e1"),
            ]
            assert await b.get(EV + "e1") is None

    run(body)


async def _until_deleted(watch: Watch) -> AsyncIterator[WatchEvent]:
    async for event in watch:
        yield event
        if event.type is EventType.DELETED:
            return


def test_a_lease_renewed_by_another_store_is_not_expired_at_its_old_time(db: Path) -> None:
    async def body() -> None:
        async with shared(db) as a, shared(db) as b:
            watch = await a.watch(EV, 0)
            await a.create(EV + "e1", b"1", ttl=1)  # a's timer is armed for this lease
            current = await b.get(EV + "e1")
            assert current is not None
            await b.update(EV + "e1", b"2", current.mod_revision, ttl=3600)
            # a's timer fires at the old time and must find the lease no longer due;
            # a marker written afterwards shows a had its chance.
            await asyncio.sleep(1.5)
            await b.create(EV + "marker", b"m")
            events = await take(watch, 3, timeout=TIMEOUT)
            assert [(e.type, e.kv.key) for e in events if e.kv] == [
                (EventType.CREATED, EV + "e1"),
                (EventType.UPDATED, EV + "e1"),
                (EventType.CREATED, EV + "marker"),
            ]
            kept = await a.get(EV + "e1")
            assert kept is not None and kept.value == b"2"

    run(body)


def test_a_write_without_a_ttl_detaches_a_lease_another_store_set(db: Path) -> None:
    async def body() -> None:
        async with shared(db) as a, shared(db) as b:
            await a.create(EV + "e1", b"1", ttl=1)
            current = await b.get(EV + "e1")
            assert current is not None
            await b.update(EV + "e1", b"2", current.mod_revision)
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("SELECT COUNT(*) FROM lease").fetchone() == (0,)

    run(body)


def test_an_owned_file_and_a_shared_one_keep_each_other_out(db: Path) -> None:
    async def body() -> None:
        owned = SQLiteStorage.open(db)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            SQLiteStorage.open(db, shared=True)
        await owned.close()
        async with shared(db):
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                SQLiteStorage.open(db)

    run(body)


WRITES_PER_PROCESS = 200


def _write_keys(db: str, name: str, start: Event) -> None:
    """A writer process: create, then update, its own keys through a shared store,
    pausing after each write as a server does for a request's other work (a writer
    that never pauses keeps the write lock, and SQLite's lock waits are not fair)."""

    async def body() -> None:
        store = SQLiteStorage.open(db, shared=True)
        try:
            start.wait(TIMEOUT)
            for i in range(WRITES_PER_PROCESS // 2):
                kv = await store.create(f"{CM}{name}/{i}", b"0")
                await asyncio.sleep(0.001)
                await store.update(kv.key, b"1", kv.mod_revision)
                await asyncio.sleep(0.001)
        finally:
            await store.close()

    asyncio.run(body())


def test_writers_in_two_processes_get_distinct_revisions_in_commit_order(db: Path) -> None:
    async def body() -> None:
        async with shared(db) as watcher_store:
            watch = await watcher_store.watch(CM, 0)
            context = multiprocessing.get_context("spawn")
            start = context.Event()
            writers = [
                context.Process(target=_write_keys, args=(str(db), name, start))
                for name in ("p1", "p2")
            ]
            for writer in writers:
                writer.start()
            start.set()
            events = await take(watch, 2 * WRITES_PER_PROCESS, timeout=TIMEOUT)
            for writer in writers:
                await asyncio.to_thread(writer.join, TIMEOUT)
                assert writer.exitcode == 0
            assert [e.revision for e in events] == list(range(1, 2 * WRITES_PER_PROCESS + 1))
            # Each process's own writes keep their order, and each update follows its create.
            for name in ("p1", "p2"):
                mine = [(e, e.kv.key) for e in events if e.kv and f"/{name}/" in e.kv.key]
                assert len(mine) == WRITES_PER_PROCESS
                created = {key: e.revision for e, key in mine if e.type is EventType.CREATED}
                for e, key in mine:
                    if e.type is EventType.UPDATED:
                        assert e.prev_kv is not None
                        assert e.prev_kv.mod_revision == created[key]
            # Both processes did write while the other did: their revisions interleave.
            owners = [e.kv.key.split("/")[3] if e.kv else "" for e in events]
            switches = sum(1 for x, y in itertools.pairwise(owners) if x != y)
            assert switches > 1
            assert await watcher_store.current_revision() == 2 * WRITES_PER_PROCESS

    run(body)
