"""What is particular to the SQLite backend: its file layout, compaction's rows, restarts, locking.

The Storage contract itself runs on every backend in test_storage_contract.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from kapi.storage.interface import (
    EventType,
    ExpiredError,
    FutureRevisionError,
    KeyValue,
)
from kapi.storage.sqlite import SQLiteStorage, prefix_end
from tests.helpers.storage_events import summary, take

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


def test_an_empty_store_is_at_revision_zero(db: Path) -> None:
    async def body(s: SQLiteStorage) -> None:
        assert await s.current_revision() == 0
        assert (await s.create(CM + "ns/a", b"1")).mod_revision == 1

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
