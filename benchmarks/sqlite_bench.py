"""The storage floor under kapi's writes: raw SQLite inserts with kapi's durability settings.

A kapi CREATE can never be faster than the commit it ends with.  This
measures that commit alone, in-process, with nothing else around it: the
kine-style ``kv`` table with the same index as ``kapi.storage.sqlite``,
the same pragmas (EXCLUSIVE locking, WAL, ``synchronous=NORMAL``), one
``BEGIN IMMEDIATE ... COMMIT`` transaction per INSERT, a value of the size
kapi stores for the benchmark's ConfigMap.  ``kapi CREATE rate / raw insert
rate`` then says how much of a CREATE's cost is storage and how much is the
rest of the server.

Two variants are timed:

* ``insert``: BEGIN IMMEDIATE; INSERT; COMMIT (the brief's floor).
* ``kine_write``: BEGIN IMMEDIATE; SELECT the key's latest row; INSERT;
  COMMIT, which is exactly the statement sequence of
  ``SQLiteStorage.create``, so the gap to kapi is all above storage.

The database is created by a real ``SQLiteStorage`` (then closed), so the
benchmark writes into exactly kapi's tables and indexes.
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

_INSERT = (
    "INSERT INTO kv (id, name, created, deleted, create_revision, prev_revision, value,"
    " old_value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_LATEST = (
    "SELECT id, deleted, create_revision, value FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1"
)


def open_db(path: Path, synchronous: str = "NORMAL") -> sqlite3.Connection:
    """kapi's database, created by ``SQLiteStorage``, reopened with its pragmas."""
    from kapi.storage.sqlite import SQLiteStorage

    asyncio.run(SQLiteStorage(path, synchronous=synchronous).close())
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA locking_mode=EXCLUSIVE")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    return conn


def _percentile(sorted_values: list[float], p: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))]


def bench_writes(
    directory: Path, value: bytes, duration: float, *, kine_write: bool = False
) -> dict[str, Any]:
    """Commit one row per transaction for ``duration`` seconds; rows/s and per-write latency.

    A fresh database per call, so each round starts from the same state; the
    WAL auto-checkpoints (every 1000 pages, SQLite's default, as in kapi) land
    inside the timed writes and show up in p99, as they do for kapi.
    """
    path = directory / f"raw-{time.monotonic_ns()}.db"
    conn = open_db(path)
    execute = conn.execute
    clock = time.perf_counter
    latencies: list[float] = []
    revision = 0
    started = clock()
    deadline = started + duration
    try:
        while True:
            t0 = clock()
            if t0 >= deadline:
                break
            revision += 1
            key = f"/registry/configmaps/bench/raw-{revision}"
            execute("BEGIN IMMEDIATE")
            if kine_write:
                execute(_LATEST, (key,)).fetchone()
            execute(_INSERT, (revision, key, 1, 0, revision, 0, value, None))
            execute("COMMIT")
            latencies.append(clock() - t0)
        elapsed = clock() - started
    finally:
        conn.close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    latencies.sort()
    return {
        "rows": len(latencies),
        "rate": len(latencies) / elapsed,
        "p50_ms": _percentile(latencies, 50) * 1e3,
        "p99_ms": _percentile(latencies, 99) * 1e3,
        # The slowest write is usually a WAL checkpoint (with its fsync).
        "max_ms": latencies[-1] * 1e3,
        "mean_ms": statistics.fmean(latencies) * 1e3,
    }


if __name__ == "__main__":
    import json

    with tempfile.TemporaryDirectory() as tmp:
        for kine in (False, True):
            result = bench_writes(Path(tmp), b"x" * 400, 2.0, kine_write=kine)
            print("kine_write" if kine else "insert", json.dumps(result))
