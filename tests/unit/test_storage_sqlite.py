"""Unit tests of the SQLite storage backend against the Storage contract."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from kapi.storage.interface import (
    ConflictError,
    EventType,
    ExpiredError,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    Watch,
    WatchEvent,
)
from kapi.storage.sqlite import SQLiteStorage, prefix_end

CM = "/registry/configmaps/"
StoreTest = Callable[[SQLiteStorage], Awaitable[None]]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "kapi.db"


def run(db: Path, body: StoreTest) -> None:
    """Run ``body`` against a fresh store on ``db`` and close it afterwards."""

    async def main() -> None:
        store = SQLiteStorage.open(db)
        try:
            await body(store)
        finally:
            await store.close()

    asyncio.run(main())


async def take(watch: Watch, count: int, timeout: float = 2.0) -> list[WatchEvent]:
    """The next ``count`` events of ``watch``, failing instead of hanging."""
    events: list[WatchEvent] = []
    async with asyncio.timeout(timeout):
        async for event in watch:
            events.append(event)
            if len(events) == count:
                break
    return events


def summary(events: list[WatchEvent]) -> list[tuple[EventType, int, str, bytes]]:
    return [(e.type, e.revision, e.kv.key, e.kv.value) for e in events if e.kv is not None]


def test_crud_and_preconditions(db: Path) -> None:
    async def body(s: SQLiteStorage) -> None:
        key = CM + "default/a"
        assert await s.current_revision() == 0
        assert await s.get(key) is None

        created = await s.create(key, b"v1")
        assert created == KeyValue(key, b"v1", 1, 1)
        assert await s.get(key) == created
        with pytest.raises(KeyExistsError):
            await s.create(key, b"again")

        updated = await s.update(key, b"v2", expected_revision=1)
        assert updated == KeyValue(key, b"v2", 1, 2)
        with pytest.raises(ConflictError) as conflict:
            await s.update(key, b"stale", expected_revision=1)
        assert conflict.value.current == updated
        with pytest.raises(ConflictError) as conflict:
            await s.delete(key, expected_revision=1)
        assert conflict.value.current == updated
        assert await s.get(key) == updated  # failed writes changed nothing
        assert await s.current_revision() == 2

        assert await s.delete(key, expected_revision=2) == (updated, 3)
        assert await s.get(key) is None
        with pytest.raises(KeyNotFoundError):
            await s.update(key, b"v3", expected_revision=3)
        with pytest.raises(KeyNotFoundError):
            await s.delete(key)
        with pytest.raises(KeyNotFoundError):
            await s.update(CM + "default/never", b"x", expected_revision=1)

        recreated = await s.create(key, b"v4")
        assert recreated == KeyValue(key, b"v4", 4, 4)
        assert await s.delete(key) == (recreated, 5)
        assert await s.current_revision() == 5

    run(db, body)


def test_list_at_old_revisions(db: Path) -> None:
    async def body(s: SQLiteStorage) -> None:
        a, b, c = CM + "ns/a", CM + "ns/b", CM + "ns/c"
        await s.create(a, b"a1")  # 1
        await s.create(b, b"b1")  # 2
        await s.update(a, b"a2", 1)  # 3
        await s.delete(b)  # 4
        await s.create(c, b"c1")  # 5

        def state(kvs: list[KeyValue]) -> list[tuple[str, bytes, int, int]]:
            return [(kv.key, kv.value, kv.create_revision, kv.mod_revision) for kv in kvs]

        expected = {
            1: [(a, b"a1", 1, 1)],
            2: [(a, b"a1", 1, 1), (b, b"b1", 2, 2)],
            3: [(a, b"a2", 1, 3), (b, b"b1", 2, 2)],
            4: [(a, b"a2", 1, 3)],
            5: [(a, b"a2", 1, 3), (c, b"c1", 5, 5)],
        }
        for revision, kvs in expected.items():
            result = await s.list(CM, revision=revision)
            assert state(result.kvs) == kvs, revision
            assert (result.revision, result.more, result.remaining) == (revision, False, 0)
        latest = await s.list(CM)
        assert state(latest.kvs) == expected[5]
        assert latest.revision == 5
        with pytest.raises(FutureRevisionError) as future:
            await s.list(CM, revision=6)
        assert (future.value.requested, future.value.current) == (6, 5)

    run(db, body)


def test_pagination_with_limit_start_key_and_remaining(db: Path) -> None:
    async def body(s: SQLiteStorage) -> None:
        for i in range(10):
            await s.create(f"{CM}ns/k{i}", str(i).encode())
        await s.delete(f"{CM}ns/k4")  # a gap that must not be counted
        await s.create("/registry/configmapsx/ns/k99", b"other")  # outside the prefix
        snapshot = await s.current_revision()

        first = await s.list(CM, limit=3)
        assert [kv.key[-2:] for kv in first.kvs] == ["k0", "k1", "k2"]
        assert (first.more, first.remaining, first.revision) == (True, 6, snapshot)

        # Writes between pages do not show in pages read at the first revision.
        await s.create(f"{CM}ns/k35", b"new")
        await s.delete(f"{CM}ns/k5")

        keys, start, page = [kv.key for kv in first.kvs], first.kvs[-1].key + "\x00", first
        remainders = []
        while page.more:
            page = await s.list(CM, revision=first.revision, start_key=start, limit=3)
            keys += [kv.key for kv in page.kvs]
            remainders.append(page.remaining)
            start = page.kvs[-1].key + "\x00"
        assert [k.removeprefix(CM + "ns/") for k in keys] == [
            f"k{i}" for i in (0, 1, 2, 3, 5, 6, 7, 8, 9)
        ]
        assert remainders == [3, 0]
        assert page.more is False

        # start_key is inclusive; a limit that fits everything reports no more.
        tail = await s.list(CM, start_key=f"{CM}ns/k8", limit=5)
        assert [kv.key[-2:] for kv in tail.kvs] == ["k8", "k9"]
        assert (tail.more, tail.remaining) == (False, 0)
        exact = await s.list(CM, limit=10)
        assert (len(exact.kvs), exact.more, exact.remaining) == (9, False, 0)

    run(db, body)


def test_prefix_isolation(db: Path) -> None:
    async def body(s: SQLiteStorage) -> None:
        await s.create("/registry/configmaps/ns/a", b"1")
        await s.create("/registry/configmapsx/ns/a", b"2")
        await s.create("/registry/configmaps0", b"3")
        await s.create("/registry/configmaps/ns/\U0010ffff", b"4")
        inside = await s.list("/registry/configmaps/")
        assert [kv.value for kv in inside.kvs] == [b"1", b"4"]
        assert [kv.value for kv in (await s.list("")).kvs] == [b"1", b"4", b"3", b"2"]

        watch = await s.watch("/registry/configmaps/", 0)
        await s.update("/registry/configmapsx/ns/a", b"2b", 2)
        await s.update("/registry/configmaps/ns/a", b"1b", 1)
        (event,) = await take(watch, 1)
        assert (event.type, event.revision, event.kv and event.kv.value) == (
            EventType.UPDATED,
            6,
            b"1b",
        )

    run(db, body)


def test_prefix_end() -> None:
    assert prefix_end("/a/") == "/a0"
    assert prefix_end("a\U0010ffff") == "b"
    assert prefix_end("\U0010ffff") is None
    assert prefix_end("") is None
    assert prefix_end("x\ud7ff") == "x\ue000"


def row_ids(db: Path) -> list[int]:
    """The revisions of the rows in the table (with the store closed)."""
    raw = sqlite3.connect(db)
    try:
        return [row[0] for row in raw.execute("SELECT id FROM kv ORDER BY id")]
    finally:
        raw.close()


async def compacted_revision(s: SQLiteStorage) -> int:
    """The revision history is compacted up to, as a read at revision 1 reports it."""
    with pytest.raises(ExpiredError) as expired:
        await s.list(CM, revision=1)
    return expired.value.compacted


def test_compaction_expires_old_revisions_and_keeps_latest(db: Path) -> None:
    a, b, c = CM + "ns/a", CM + "ns/b", CM + "ns/c"

    async def first(s: SQLiteStorage) -> None:
        await s.create(a, b"a1")  # 1
        await s.update(a, b"a2", 1)  # 2
        await s.create(b, b"b1")  # 3
        await s.delete(b)  # 4
        await s.create(c, b"c1")  # 5
        await s.delete(c)  # 6
        await s.create(c, b"c2")  # 7
        await s.update(a, b"a3", 2)  # 8

        await s.compact(6)
        for revision in (1, 5):
            with pytest.raises(ExpiredError) as expired:
                await s.list(CM, revision=revision)
            assert (expired.value.requested, expired.value.compacted) == (revision, 6)
            with pytest.raises(ExpiredError):
                await s.watch(CM, revision)
        with pytest.raises(FutureRevisionError):
            await s.compact(9)

        at_compaction = await s.list(CM, revision=6)
        assert [(kv.key, kv.value) for kv in at_compaction.kvs] == [(a, b"a2")]
        assert [kv.value for kv in (await s.list(CM)).kvs] == [b"a3", b"c2"]
        # History after the compaction revision survives, for watches from it.
        events = await take(await s.watch(CM, 6), 2)
        assert summary(events) == [
            (EventType.CREATED, 7, c, b"c2"),
            (EventType.UPDATED, 8, a, b"a3"),
        ]
        assert events[1].prev_kv == KeyValue(a, b"a2", 1, 2)

    async def second(s: SQLiteStorage) -> None:
        assert await compacted_revision(s) == 6
        await s.compact(8)
        assert [kv.value for kv in (await s.list(CM, revision=8)).kvs] == [b"a3", b"c2"]
        await s.compact(3)  # older than the compacted revision: nothing to do
        assert await compacted_revision(s) == 8

    run(db, first)
    # Left: a@2 (its state at 6), c@7 and a@8; b and c's first life are gone.
    assert row_ids(db) == [2, 7, 8]
    run(db, second)
    assert row_ids(db) == [7, 8]


def test_watch_replays_history_then_live_without_duplicates(db: Path) -> None:
    async def body(s: SQLiteStorage) -> None:
        a, b = CM + "ns/a", CM + "ns/b"
        await s.create(a, b"a1")  # 1
        await s.create(b, b"b1")  # 2
        await s.update(a, b"a2", 1)  # 3
        await s.delete(b)  # 4
        watch = await s.watch(CM, 1)
        await s.update(a, b"a3", 3)  # 5, written while history is pending
        events = await take(watch, 4)
        await s.create(b, b"b2")  # 6
        events += await take(watch, 1)
        await watch.close()

        assert summary(events) == [
            (EventType.CREATED, 2, b, b"b1"),
            (EventType.UPDATED, 3, a, b"a2"),
            (EventType.DELETED, 4, b, b"b1"),
            (EventType.UPDATED, 5, a, b"a3"),
            (EventType.CREATED, 6, b, b"b2"),
        ]
        assert events[1].prev_kv == KeyValue(a, b"a1", 1, 1)
        assert events[2].kv == KeyValue(b, b"b1", 2, 4)
        assert events[2].prev_kv == KeyValue(b, b"b1", 2, 2)
        assert events[3].prev_kv == KeyValue(a, b"a2", 1, 3)
        assert events[4].prev_kv is None

        # A watch from 0 starts now; a watch from the future skips up to there.
        now, future = await s.watch(CM, 0), await s.watch(CM, 8)
        kv = await s.get(a)
        for i in range(4):
            assert kv is not None
            kv = await s.update(a, f"x{i}".encode(), kv.mod_revision)  # 7, 8, 9, 10
        assert [e.revision for e in await take(now, 4)] == [7, 8, 9, 10]
        assert [e.revision for e in await take(future, 2)] == [9, 10]

    run(db, body)


def test_watch_history_across_restart(db: Path) -> None:
    async def before(s: SQLiteStorage) -> None:
        await s.create(CM + "ns/a", b"1")  # 1
        await s.create(CM + "ns/b", b"1")  # 2
        await s.update(CM + "ns/a", b"2", 1)  # 3

    async def after(s: SQLiteStorage) -> None:
        assert await s.current_revision() == 3
        await s.delete(CM + "ns/b")  # 4
        watch = await s.watch(CM, 1)
        await s.create(CM + "ns/c", b"1")  # 5
        events = await take(watch, 4)
        assert [(e.type, e.revision) for e in events] == [
            (EventType.CREATED, 2),
            (EventType.UPDATED, 3),
            (EventType.DELETED, 4),
            (EventType.CREATED, 5),
        ]

    run(db, before)
    run(db, after)


def test_progress_events(db: Path) -> None:
    async def body(s: SQLiteStorage) -> None:
        await s.create(CM + "ns/a", b"1")
        await s.create("/registry/secrets/ns/a", b"1")
        watch = await s.watch(CM, 0, progress_interval=0.02)
        (progress,) = await take(watch, 1)
        assert (progress.type, progress.revision, progress.kv) == (EventType.PROGRESS, 2, None)

        await s.update(CM + "ns/a", b"2", 1)  # 3
        await s.create("/registry/secrets/ns/b", b"1")  # 4, not under the prefix
        event, progress = await take(watch, 2)
        assert (event.type, event.revision) == (EventType.UPDATED, 3)
        assert (progress.type, progress.revision) == (EventType.PROGRESS, 4)

    run(db, body)


def test_close_ends_watches(db: Path) -> None:
    async def main() -> None:
        store = SQLiteStorage.open(db)
        await store.create(CM + "ns/a", b"1")
        closed_by_watch, closed_by_store = await store.watch(CM, 0), await store.watch(CM, 1)

        async def drain(watch: Watch) -> list[WatchEvent]:
            return [event async for event in watch]

        tasks = [asyncio.create_task(drain(w)) for w in (closed_by_watch, closed_by_store)]
        await asyncio.sleep(0.01)
        await closed_by_watch.close()
        await store.create(CM + "ns/b", b"1")
        await asyncio.sleep(0.01)
        await store.close()
        async with asyncio.timeout(2):
            unregistered, ended = await asyncio.gather(*tasks)
        assert unregistered == []
        assert [e.revision for e in ended] == [2]

    asyncio.run(main())


def test_concurrent_cas_increments(db: Path) -> None:
    async def body(s: SQLiteStorage) -> None:
        key = CM + "ns/counter"
        await s.create(key, b"0")
        watch = await s.watch(CM, 0)
        conflicts = 0

        async def increment() -> int:
            nonlocal conflicts
            current = await s.get(key)
            while True:
                assert current is not None
                await asyncio.sleep(0)  # let the other tasks race us
                value = str(int(current.value) + 1).encode()
                try:
                    return (await s.update(key, value, current.mod_revision)).mod_revision
                except ConflictError as err:
                    conflicts += 1
                    current = err.current

        revisions = await asyncio.gather(*(increment() for _ in range(50)))
        final = await s.get(key)
        assert final is not None and final.value == b"50"
        assert sorted(revisions) == list(range(2, 52))
        assert conflicts > 0  # the test did exercise the retry path
        events = await take(watch, 50)
        assert [e.revision for e in events] == list(range(2, 52))
        assert [e.kv.value for e in events if e.kv] == [str(i).encode() for i in range(1, 51)]

    run(db, body)


def test_watcher_sees_every_concurrent_write_once_in_order(db: Path) -> None:
    async def body(s: SQLiteStorage) -> None:
        watch = await s.watch(CM, 0)

        async def writer(n: int) -> None:
            key = f"{CM}ns/w{n}"
            kv = await s.create(key, b"0")
            for i in range(1, 49):
                await asyncio.sleep(0)
                kv = await s.update(key, str(i).encode(), kv.mod_revision)
            await s.delete(key)

        consumer = asyncio.create_task(take(watch, 200))
        await asyncio.gather(*(writer(n) for n in range(4)))
        events = await consumer
        assert [e.revision for e in events] == list(range(1, 201))
        for n in range(4):
            mine = [e for e in events if e.kv and e.kv.key == f"{CM}ns/w{n}"]
            assert [e.type for e in mine] == [
                EventType.CREATED,
                *[EventType.UPDATED] * 48,
                EventType.DELETED,
            ]
            assert [e.kv.value for e in mine if e.kv][:-1] == [str(i).encode() for i in range(49)]

    run(db, body)


def test_revisions_not_reused_after_compaction_and_restart(db: Path) -> None:
    async def write_and_compact(s: SQLiteStorage) -> None:
        for i in range(5):
            await s.create(f"{CM}ns/k{i}", b"x")
            await s.delete(f"{CM}ns/k{i}")
        await s.compact(10)

    async def reopened(s: SQLiteStorage) -> None:
        assert await s.current_revision() == 10
        assert await compacted_revision(s) == 10
        assert (await s.list(CM)).kvs == []
        assert (await s.create(CM + "ns/k0", b"y")).mod_revision == 11

    run(db, write_and_compact)
    # Every key is forgotten, but the row holding the current revision is kept:
    # it is what carries the high-water mark across the restart.
    raw = sqlite3.connect(db)
    assert raw.execute("SELECT id, deleted FROM kv").fetchall() == [(10, 1)]
    raw.close()
    run(db, reopened)


def test_databases_with_an_autoincrement_table_keep_their_high_water_mark(db: Path) -> None:
    """Files written when ``kv`` had AUTOINCREMENT: ``sqlite_sequence`` still counts."""
    raw = sqlite3.connect(db)
    with raw:
        raw.execute(
            "CREATE TABLE kv (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL,"
            " created INTEGER NOT NULL, deleted INTEGER NOT NULL, create_revision INTEGER NOT"
            " NULL, prev_revision INTEGER NOT NULL, value BLOB NOT NULL, old_value BLOB)"
        )
        for revision in (1, 2, 3):
            raw.execute(
                "INSERT INTO kv VALUES (?, ?, 1, 0, ?, 0, x'00', NULL)",
                (revision, f"{CM}ns/k{revision}", revision),
            )
        raw.execute("DELETE FROM kv WHERE id > 1")  # removed by hand, not by compaction
    raw.close()

    async def reopened(s: SQLiteStorage) -> None:
        assert await s.current_revision() == 3
        assert (await s.create(CM + "ns/new", b"y")).mod_revision == 4

    run(db, reopened)


def test_store_owns_its_file(db: Path) -> None:
    async def body(s: SQLiteStorage) -> None:
        other = sqlite3.connect(db, timeout=0)
        try:
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("SELECT COUNT(*) FROM kv").fetchone()
        finally:
            other.close()

    run(db, body)


def test_rejects_unknown_synchronous_mode(db: Path) -> None:
    with pytest.raises(ValueError):
        SQLiteStorage(db, synchronous="SOMETIMES; DROP TABLE kv")
