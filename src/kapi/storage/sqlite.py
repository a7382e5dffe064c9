"""The embedded storage backend: one SQLite file, kine-style.

The data table is an append-only log in which every row is one write event
(create, update or delete) and the row id *is* the global revision, exactly as
k3s's kine lays it out::

    CREATE TABLE kv (
        id              INTEGER PRIMARY KEY,  -- the revision
        name            TEXT    NOT NULL,                   -- the key
        created         INTEGER NOT NULL,  -- 1: this row creates the key
        deleted         INTEGER NOT NULL,  -- 1: this row deletes the key
        create_revision INTEGER NOT NULL,  -- revision of the key's create row
        prev_revision   INTEGER NOT NULL,  -- the key's previous row (0: none)
        value           BLOB    NOT NULL,  -- new value; last value on delete
        old_value       BLOB               -- value before an update, else NULL
    );
    CREATE INDEX kv_name_id ON kv (name, id);
    CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE lease (
        name    TEXT PRIMARY KEY,  -- a live key written with a TTL
        expires REAL NOT NULL      -- when it is deleted (Unix time, seconds)
    ) WITHOUT ROWID;
    CREATE INDEX lease_expires ON lease (expires);

A key's state is its highest-id row, absent if that row is a delete row; the
state at an older revision is the highest row at or below it, so reads at old
revisions and watch history both come straight from the table, across
restarts too.  The store picks each new row's id (the current revision + 1)
and compaction never deletes the row holding the current revision, so the
highest id is always the current revision and revisions are never reused.
That is why the table has no ``AUTOINCREMENT``, which kine uses: its
``sqlite_sequence`` row would be one more page written by every commit
(about 15% of a write).  ``meta`` holds the compacted revision.

``lease`` plays etcd's leases: one row per live key whose last write carried
a TTL, written in that write's transaction (and removed in the transaction of
a write without one, or of the key's delete).  A timer on the event loop,
armed at the earliest ``expires``, deletes expired keys through the ordinary
delete, so they get a revision and a DELETED watch event like any other
delete.  Expiry times are wall-clock so that leases keep running across a
restart.  The set of leased keys is also kept in memory, loaded at open, so
that writes of keys without a lease (nearly all of them) cost no statement
more than before.

Concurrency model: every SQLite call runs synchronously on the event-loop
thread, on one connection.  That is deliberate: no thread hop per request
(``get`` is the server's hottest path), writes are serialized for free, and
the watch fan-out runs right after ``COMMIT`` on the same thread, so watchers
receive events in revision order with no gaps.  The price is that a slow
query stalls the loop, which is why every query is an indexed range scan.

By default one process owns the file: the connection uses SQLite's EXCLUSIVE
locking mode and takes the write lock when it opens, so a second server on
the same file fails to open it ("database is locked") instead of corrupting
the revision sequence, and the current revision is tracked in memory.
Exclusive mode also keeps the WAL index in process memory instead of shared
memory, which makes every statement cheaper (about 20% off ``get``).

``shared=True`` is for the processes of ``kapi serve --workers N``, which
share one file as several API servers share one etcd.  The file is then
opened in SQLite's normal locking mode (an exclusive owner and shared users
keep each other out), and the store keeps nothing in memory that another
process could make stale:

* a write reads the highest id inside its ``BEGIN IMMEDIATE`` transaction, so
  the processes take turns on the write lock and the ids they pick still
  rise in commit order.  A write that finds the lock taken waits for it on
  the event loop, trying again after short pauses, rather than in SQLite's
  busy handler, which would put the whole thread (every other request of the
  process) to sleep for a millisecond or more;
* reads at the current revision, and revision checks, ask the file;
* every write detaches a lease (one statement more), since another process
  may have leased the key, and an expiry deletes a key only if its lease is
  still due when the delete runs;
* periodic compaction takes turns, as on etcd, through a count of claimed
  rounds in ``meta``;
* watchers hear of other processes' writes by polling: while a watch is
  open, the store checks SQLite's ``data_version`` (a read of the shared WAL
  index, a few microseconds) and, when another connection has committed,
  reads the new rows in id order and fans them out.  It checks every
  :data:`SHARED_POLL_INTERVAL` seconds while commits keep coming, and backs
  off to :data:`SHARED_POLL_IDLE_INTERVAL` while the file is quiet: waking
  up costs an idle process far more than the check itself (about 1.7% of a
  core at 100 wake-ups a second here).  A local write that finds foreign rows
  before its own delivers them all the same way, so every watcher still sees
  each event once, in revision order.  ``_revision`` is then the revision up
  to which events have been fanned out, no longer the file's current one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import sqlite3
import time
from collections.abc import AsyncIterator

from kapi.storage.interface import (
    CompactionRound,
    ConflictError,
    EventType,
    ExpiredError,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    ListResult,
    Storage,
    Watch,
    WatchEvent,
)

log = logging.getLogger(__name__)

#: How often a shared store looks for other processes' writes while a watch is open
#: and they keep writing (seconds): how long such a write's watch event may wait then.
SHARED_POLL_INTERVAL = 0.01
#: The longest pause between two looks, reached by doubling while nothing changes
#: (seconds): how long the first write after a quiet spell may wait for its event.
SHARED_POLL_IDLE_INTERVAL = 0.1
#: How often, at most, a shared store re-reads the earliest lease, which another
#: process may have set (seconds).
_SHARED_LEASE_CHECK_INTERVAL = 1.0
#: How long a statement waits for a lock another connection holds (milliseconds):
#: sqlite3.connect's default, set again after each of :meth:`SQLiteStorage._begin_write`'s tries.
_BUSY_TIMEOUT_MS = 5000
#: The longest pause between a shared store's tries for the write lock (seconds).
_WRITE_LOCK_MAX_PAUSE = 0.005

# Run in a write transaction so that opening takes (and, in EXCLUSIVE locking
# mode, keeps) the write lock even when the tables already exist.
_SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS kv (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    deleted INTEGER NOT NULL,
    create_revision INTEGER NOT NULL,
    prev_revision INTEGER NOT NULL,
    value BLOB NOT NULL,
    old_value BLOB
);
CREATE INDEX IF NOT EXISTS kv_name_id ON kv (name, id);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lease (name TEXT PRIMARY KEY, expires REAL NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS lease_expires ON lease (expires);
COMMIT;
"""

_SYNCHRONOUS_MODES = frozenset({"OFF", "NORMAL", "FULL", "EXTRA"})

# The latest row of one key: a covering-index probe plus one row fetch.
_GET = "SELECT id, deleted, create_revision, value FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1"
# The highest id: one seek to the end of the table's b-tree.
_CURRENT = "SELECT MAX(id) FROM kv"
_COMPACTED = "SELECT value FROM meta WHERE key = 'compacted_revision'"
# Shared stores take turns at compaction: the rounds claimed so far (etcd's
# ``compact_rev_key`` version) and the revision the last claimer compacted to.
_ROUNDS = "SELECT value FROM meta WHERE key = 'compaction_rounds'"
_CLAIM_ROUND = "INSERT OR REPLACE INTO meta (key, value) VALUES ('compaction_rounds', ?)"
_INSERT = (
    "INSERT INTO kv (id, name, created, deleted, create_revision, prev_revision, value,"
    " old_value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)

_PUT_LEASE = "INSERT OR REPLACE INTO lease (name, expires) VALUES (?, ?)"
_DROP_LEASE = "DELETE FROM lease WHERE name = ?"
_EXPIRED = "SELECT name FROM lease WHERE expires <= ? ORDER BY expires, name"
_DUE = "SELECT 1 FROM lease WHERE name = ? AND expires <= ?"
_NEXT_EXPIRY = "SELECT MIN(expires) FROM lease"

# Range queries come in two spellings, bounded above ("name < ?") or not (an
# empty prefix), so that both stay plain index range scans.  The correlated
# max() walks the (name, id) index in name order, so LIMIT stops the scan early
# instead of materializing and sorting every key of the range.
_LIST = (
    "SELECT id, name, create_revision, value FROM kv AS o WHERE name >= ?{end}"
    " AND id = (SELECT MAX(id) FROM kv WHERE name = o.name AND id <= ?)"
    " AND deleted = 0 ORDER BY name LIMIT ?"
)
_COUNT = (
    "SELECT COUNT(*) FROM kv AS o WHERE name > ?{end}"
    " AND id = (SELECT MAX(id) FROM kv WHERE name = o.name AND id <= ?) AND deleted = 0"
)
# Watch history: NOT INDEXED makes SQLite walk the rowid range (the events
# since the watch revision, usually few) rather than every row of the prefix.
_EVENT_COLUMNS = "id, name, created, deleted, create_revision, prev_revision, value, old_value"
_HISTORY = (
    f"SELECT {_EVENT_COLUMNS} FROM kv NOT INDEXED"
    " WHERE id > ? AND id <= ? AND name >= ?{end} ORDER BY id"
)
# A shared store's catch-up: every row since the last one it delivered.
_SINCE = f"SELECT {_EVENT_COLUMNS} FROM kv WHERE id > ? ORDER BY id"

# Compaction runs over the window of rows written since the last compaction
# (rows below it were compacted then), so its cost follows the write rate, not
# the table size.  Step 1 drops the rows superseded by a newer row of the same
# key at or below the compaction revision: only keys written in the window can
# have any.
_COMPACT_SUPERSEDED = (
    "DELETE FROM kv WHERE id IN (SELECT o.id FROM"
    " (SELECT name, MAX(id) AS latest FROM kv WHERE id > ? AND id <= ? GROUP BY name) AS m"
    " JOIN kv AS o ON o.name = m.name AND o.id < m.latest)"
)
# Step 2: a delete row that is now its key's only row at or below the
# revision goes too, which forgets the key.  The row holding the current
# revision is kept, as kine does: it carries the revision high-water mark
# across restarts.  The window starts at the previous compaction revision
# inclusive to catch such a row kept last time.
_COMPACT_DELETED = "DELETE FROM kv WHERE id >= ? AND id <= ? AND deleted = 1 AND id != ?"


def _ranged(sql: str) -> tuple[str, str]:
    """``sql`` without and with the ``name < ?`` upper bound of a prefix range."""
    return sql.format(end=""), sql.format(end=" AND name < ?")


_LIST_SQL = _ranged(_LIST)
_COUNT_SQL = _ranged(_COUNT)
#: The largest page asked of SQLite: one more row (to see whether more follow) must
#: still fit its 64-bit LIMIT, and no store holds anywhere near this many rows.
_MAX_LIMIT = (1 << 62) - 1
_HISTORY_SQL = _ranged(_HISTORY)


def _high_water_mark(conn: sqlite3.Connection) -> int:
    """The current revision: the highest row id (see the module docstring).

    Databases written before the table lost ``AUTOINCREMENT`` keep their
    ``sqlite_sequence``, which may be higher if rows were removed by hand.
    """
    (highest,) = conn.execute("SELECT MAX(id) FROM kv").fetchone()
    try:
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'kv'").fetchone()
    except sqlite3.OperationalError:  # no AUTOINCREMENT table ever existed in this file
        row = None
    return max(highest or 0, row[0] if row else 0)


def prefix_end(prefix: str) -> str | None:
    """The smallest string above every string that starts with ``prefix``.

    SQLite compares TEXT as UTF-8 bytes, which orders like code points, so
    bumping the last character bounds the range; a last character that cannot
    be bumped is dropped (etcd's rule).  ``None`` means the range is unbounded
    (the empty prefix).  Surrogates cannot be stored, so they are skipped.
    """
    while prefix:
        last = ord(prefix[-1])
        if last < 0x10FFFF:
            following = last + 1
            if 0xD800 <= following <= 0xDFFF:
                following = 0xE000
            return prefix[:-1] + chr(following)
        prefix = prefix[:-1]
    return None


def _row_event(row: tuple) -> WatchEvent:
    """The watch event a history row stands for (see :meth:`SQLiteStorage.delete`)."""
    revision, name, created, deleted, create_revision, prev_revision, value, old_value = row
    kv = KeyValue(name, value, create_revision, revision)
    if created:
        return WatchEvent(EventType.CREATED, revision, kv)
    if deleted:
        return WatchEvent(
            EventType.DELETED, revision, kv, KeyValue(name, value, create_revision, prev_revision)
        )
    return WatchEvent(
        EventType.UPDATED, revision, kv, KeyValue(name, old_value, create_revision, prev_revision)
    )


class SQLiteWatch(Watch):
    """One watcher: its history snapshot, then live events from its queue.

    The queue is unbounded so a slow watcher never blocks or fails a writer;
    the memory of a consumer that falls behind is the server's to police (it
    owns the connection and can drop it), not the store's.  A watch must be
    iterated at most once, and closed (or the store closed) to be released.
    """

    __slots__ = (
        "_closed",
        "_error",
        "_interval",
        "_start",
        "_storage",
        "history",
        "prefix",
        "queue",
    )

    def __init__(
        self, storage: SQLiteStorage, prefix: str, revision: int, interval: float | None
    ) -> None:
        self._storage = storage
        self.prefix = prefix
        #: Live events from the store's fan-out; ``None`` ends the watch.
        self.queue: asyncio.Queue[WatchEvent | None] = asyncio.Queue()
        #: Events read from the table, delivered before the live ones.
        self.history: list[WatchEvent] = []
        #: The watch's start: live events at or below it are not delivered.
        self._start = revision
        self._interval = interval
        self._closed = False
        #: Raised by the iteration once the queue is drained: see :meth:`expire`.
        self._error: ExpiredError | None = None

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[WatchEvent]:
        history, self.history = self.history, []
        for past in history:
            if self._closed:
                break  # to the queue's end marker (and error)
            yield past
        queue = self.queue
        interval = self._interval
        while True:
            if interval is not None and queue.empty():
                try:
                    async with asyncio.timeout(interval):
                        event = await queue.get()
                except TimeoutError:
                    # Fan-out happens at commit, so an empty queue means every
                    # event up to the current revision has been yielded.  An
                    # event that raced the timeout is still queued: skip the
                    # progress event then, or it would overtake that event.
                    if queue.empty():
                        yield WatchEvent(EventType.PROGRESS, self._storage._revision)
                    continue
            else:
                event = await queue.get()
            if event is None or self._closed:
                if self._error is not None:
                    raise self._error
                return
            # Only a watch from a future revision sees events at or below its
            # start (written after it registered); history cannot overlap the
            # live events, see SQLiteStorage.watch.
            if event.revision > self._start:
                yield event

    def end(self) -> None:
        """Stop the iteration; events still queued are dropped."""
        if not self._closed:
            self._closed = True
            self.queue.put_nowait(None)

    def expire(self, error: ExpiredError) -> None:
        """End the iteration with ``error``: events it should have had were compacted."""
        self._error = error
        self.end()

    async def close(self) -> None:
        self._storage._watchers.discard(self)
        self.end()


class SQLiteStorage(Storage):
    """A :class:`Storage` in one SQLite file (see the module docstring).

    ``synchronous`` is SQLite's pragma: ``"NORMAL"`` (the default) survives a
    process crash and fsyncs once per WAL checkpoint; ``"FULL"`` also survives
    power loss at the cost of an fsync per commit.  ``shared``: the file is
    used by several processes at once (``kapi serve --workers``), each with a
    store of its own, instead of owned by this one.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, synchronous: str = "NORMAL", shared: bool = False
    ) -> None:
        mode = synchronous.upper()
        if mode not in _SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous must be one of {sorted(_SYNCHRONOUS_MODES)}")
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            if not shared:
                # Before journal_mode, so the WAL index is never put in shared memory.
                conn.execute("PRAGMA locking_mode=EXCLUSIVE")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={mode}")
            conn.executescript(_SCHEMA)
            revision = _high_water_mark(conn)
            compacted = conn.execute(_COMPACTED).fetchone()
            leased = {name for (name,) in conn.execute("SELECT name FROM lease")}
            (data_version,) = conn.execute("PRAGMA data_version").fetchone()
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        # Bound once: saves an attribute lookup on every query.
        self._execute = conn.execute
        self._shared = shared
        #: Owned: the current revision.  Shared: the revision up to which events have
        #: been fanned out to this store's watchers (see the module docstring).
        self._revision = revision
        #: Revisions never go below the high-water mark found at open (shared stores
        #: read the current one from the table, which an old file may lag behind).
        self._floor = revision
        self._compacted: int = compacted[0] if compacted else 0
        #: Shared: SQLite's count of other connections' commits, when last polled.
        self._data_version: int = data_version
        self._poller: asyncio.TimerHandle | None = None
        self._poll_interval = SHARED_POLL_INTERVAL
        self._leases_checked_at = 0.0
        self._watchers: set[SQLiteWatch] = set()
        self._closed = False
        #: The keys with a lease row (see the module docstring).
        self._leased = leased
        #: The expiry timer, and the time it is armed for (wall clock).
        self._expiry: asyncio.TimerHandle | None = None
        self._expiry_at = math.inf
        #: Leases from an earlier run wait for an event loop to time them:
        #: armed here if one runs, else on the first write or watch.
        self._expiry_unarmed = bool(leased)
        if leased:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                pass
            else:
                self._arm_next_expiry()

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, synchronous: str = "NORMAL", shared: bool = False
    ) -> SQLiteStorage:
        """A ready store on ``path`` (the constructor does all the work)."""
        return cls(path, synchronous=synchronous, shared=shared)

    def _current(self) -> int:
        """The current revision: tracked when owned, read from the file when shared."""
        if self._shared:
            (highest,) = self._execute(_CURRENT).fetchone()
            return max(highest or 0, self._floor)
        return self._revision

    def _compacted_revision(self) -> int:
        """The compaction revision, re-read from the file when shared."""
        if self._shared:
            row = self._execute(_COMPACTED).fetchone()
            self._compacted = row[0] if row else 0
        return self._compacted

    # -- reads ---------------------------------------------------------------

    async def get(self, key: str) -> KeyValue | None:
        row = self._execute(_GET, (key,)).fetchone()
        if row is None or row[1]:
            return None
        return KeyValue(key, row[3], row[2], row[0])

    async def list(
        self,
        prefix: str,
        *,
        revision: int = 0,
        start_key: str | None = None,
        limit: int = 0,
    ) -> ListResult:
        at = self._check_revision(revision) if revision else self._current()
        end = prefix_end(prefix)
        lower = start_key if start_key is not None and start_key > prefix else prefix
        bounds = (lower,) if end is None else (lower, end)
        bounded = end is not None
        rows = self._execute(
            _LIST_SQL[bounded], (*bounds, at, min(limit, _MAX_LIMIT) + 1 if limit > 0 else -1)
        ).fetchall()
        more = 0 < limit < len(rows)
        remaining = 0
        if more:
            del rows[limit:]
            after = rows[-1][1]
            (remaining,) = self._execute(
                _COUNT_SQL[bounded], (after, at) if end is None else (after, end, at)
            ).fetchone()
        return ListResult(
            [KeyValue(name, value, create, mod) for mod, name, create, value in rows],
            at,
            more,
            remaining,
        )

    def _check_revision(self, revision: int) -> int:
        compacted = self._compacted_revision()
        if revision < compacted:
            raise ExpiredError(revision, compacted)
        current = self._current()
        if revision > current:
            raise FutureRevisionError(revision, current)
        return revision

    async def current_revision(self) -> int:
        return self._current()

    # -- writes --------------------------------------------------------------
    #
    # Each write is one BEGIN IMMEDIATE ... COMMIT transaction; ``with conn``
    # commits it, or rolls it back when a precondition raises.  The new row's
    # id is chosen here (the current revision + 1, read under the write lock)
    # so that the returned KeyValue and the watch event need no read-back.

    async def _begin_write(self) -> None:
        """Open the write transaction, once a shared file's write lock is free.

        Each try asks for the lock without SQLite's busy wait; between tries the
        loop serves other requests.  After the busy timeout the last error is raised.
        """
        if not self._shared:
            self._execute("BEGIN IMMEDIATE")
            return
        pause = 0.0
        deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
        while True:
            self._execute("PRAGMA busy_timeout=0")
            try:
                self._execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() >= deadline:
                    raise
            finally:
                self._execute(f"PRAGMA busy_timeout={_BUSY_TIMEOUT_MS}")
            await asyncio.sleep(pause)
            pause = min(max(pause * 2, 0.0001), _WRITE_LOCK_MAX_PAUSE)

    def _begin(self, key: str) -> tuple[tuple | None, int]:
        """In the open write transaction: the key's latest row, and the new row's id."""
        return self._execute(_GET, (key,)).fetchone(), self._current() + 1

    def _leases(self, key: str, ttl: int) -> bool:
        """Whether a write of ``key`` sets or detaches a lease: a shared store cannot
        know that another process has not leased the key, so it always detaches."""
        return ttl > 0 or self._shared or key in self._leased

    def _delivered(self, revision: int) -> bool:
        """After a commit at ``revision``: whether the caller fans out its event.

        It does when ``revision`` follows the last one delivered.  Otherwise
        (shared only) other processes wrote in between, and their rows and this
        one are delivered now, in id order, from the table.
        """
        if revision == self._revision + 1 or not self._watchers:
            self._revision = revision
            return True
        self._catch_up()
        return False

    def _notify(self, key: str, event: WatchEvent) -> None:
        """Hand a committed event to every watcher of ``key``."""
        for watcher in self._watchers:
            if key.startswith(watcher.prefix):
                watcher.queue.put_nowait(event)

    def _written(self, key: str, leased: bool, expires: float | None) -> None:
        """After a create or update commits: the expiry timer told.

        ``leased``: the write set or detached a lease (``expires`` from :meth:`_put_lease`).
        """
        if leased:
            self._lease_written(key, expires)
        elif self._expiry_unarmed:
            self._arm_next_expiry()

    async def create(self, key: str, value: bytes, *, ttl: int = 0) -> KeyValue:
        leased = self._leases(key, ttl)
        await self._begin_write()
        with self._conn:
            latest, revision = self._begin(key)
            if latest is not None and not latest[1]:
                raise KeyExistsError(key)
            # A re-create links to the delete row before it, as kine does.
            prev = latest[0] if latest is not None else 0
            self._execute(_INSERT, (revision, key, 1, 0, revision, prev, value, None))
            expires = self._put_lease(key, ttl) if leased else None
        self._written(key, leased, expires)
        kv = KeyValue(key, value, revision, revision)
        if self._delivered(revision) and self._watchers:
            self._notify(key, WatchEvent(EventType.CREATED, revision, kv))
        return kv

    async def update(
        self, key: str, value: bytes, expected_revision: int, *, ttl: int = 0
    ) -> KeyValue:
        leased = self._leases(key, ttl)
        await self._begin_write()
        with self._conn:
            latest, revision = self._begin(key)
            if latest is None or latest[1]:
                raise KeyNotFoundError(key)
            prev, _, create_revision, old_value = latest
            if prev != expected_revision:
                raise ConflictError(key, KeyValue(key, old_value, create_revision, prev))
            self._execute(_INSERT, (revision, key, 0, 0, create_revision, prev, value, old_value))
            expires = self._put_lease(key, ttl) if leased else None
        self._written(key, leased, expires)
        kv = KeyValue(key, value, create_revision, revision)
        if self._delivered(revision) and self._watchers:
            prev_kv = KeyValue(key, old_value, create_revision, prev)
            self._notify(key, WatchEvent(EventType.UPDATED, revision, kv, prev_kv))
        return kv

    async def delete(self, key: str, expected_revision: int | None = None) -> tuple[KeyValue, int]:
        """Delete ``key``; the delete row keeps the last value (kine's layout).

        The DELETED watch event therefore carries the last value twice: as
        ``kv`` with ``mod_revision`` set to the delete's revision (what a
        Kubernetes watch reports as the object's resourceVersion) and as
        ``prev_kv`` with the revision of the write that produced it.
        """
        if self._expiry_unarmed:
            self._arm_next_expiry()
        await self._begin_write()
        return self._delete(key, expected_revision)

    def _delete(
        self, key: str, expected_revision: int | None, *, due: float | None = None
    ) -> tuple[KeyValue, int]:
        """:meth:`delete` in the write transaction the caller opened; the expiry timer's
        too, which runs synchronously.

        ``due``: delete only if the key's lease has run out by then (else
        :class:`_NotDue`), checked in the delete's transaction: another process
        sharing the file may have renewed, detached or expired it meanwhile.
        """
        leased = self._leases(key, 0)
        with self._conn:
            latest, revision = self._begin(key)
            if due is not None and self._execute(_DUE, (key, due)).fetchone() is None:
                raise _NotDue(key)
            if latest is None or latest[1]:
                raise KeyNotFoundError(key)
            prev, _, create_revision, value = latest
            prev_kv = KeyValue(key, value, create_revision, prev)
            if expected_revision is not None and prev != expected_revision:
                raise ConflictError(key, prev_kv)
            self._execute(_INSERT, (revision, key, 0, 1, create_revision, prev, value, None))
            if leased:
                self._execute(_DROP_LEASE, (key,))
        if leased:
            self._leased.discard(key)
        if self._delivered(revision) and self._watchers:
            kv = KeyValue(key, value, create_revision, revision)
            self._notify(key, WatchEvent(EventType.DELETED, revision, kv, prev_kv))
        return prev_kv, revision

    # -- leases --------------------------------------------------------------
    #
    # A write sets or detaches its key's lease inside the write's transaction
    # (_put_lease), then tells the timer (_lease_written) after the commit.
    # The timer only ever fires early, never late: a lease extended by a
    # rewrite leaves it armed at the old time, and the sweep then finds
    # nothing due and re-arms at the earliest lease left.

    def _put_lease(self, key: str, ttl: int) -> float | None:
        """In a write's transaction: lease ``key`` for ``ttl`` seconds, or detach its lease.

        Returns when the key expires (``None``: never).
        """
        if ttl > 0:
            expires = time.time() + ttl
            self._execute(_PUT_LEASE, (key, expires))
            return expires
        self._execute(_DROP_LEASE, (key,))
        return None

    def _lease_written(self, key: str, expires: float | None) -> None:
        """After the commit of :meth:`_put_lease`: track the key and time its expiry."""
        if expires is None:
            self._leased.discard(key)
            return
        self._leased.add(key)
        if self._expiry_unarmed:
            self._arm_next_expiry()
        elif expires < self._expiry_at:
            self._arm_expiry(expires)

    def _arm_expiry(self, when: float) -> None:
        """Fire the expiry sweep at ``when`` (wall clock), replacing the armed timer."""
        if self._expiry is not None:
            self._expiry.cancel()
        delay = max(when - time.time(), 0.0)
        self._expiry = asyncio.get_running_loop().call_later(delay, self._expire)
        self._expiry_at = when

    def _arm_next_expiry(self) -> None:
        """Arm the timer at the earliest lease in the table, unless it is armed earlier."""
        self._expiry_unarmed = False
        (when,) = self._execute(_NEXT_EXPIRY).fetchone()
        if when is not None and when < self._expiry_at:
            self._arm_expiry(when)

    def _expire(self) -> None:
        """The timer: delete every key whose lease has run out, in expiry order."""
        self._expiry = None
        self._expiry_at = math.inf
        now = time.time()
        try:
            for (name,) in self._execute(_EXPIRED, (now,)).fetchall():
                # Rare enough to wait for a shared file's write lock in SQLite's busy wait.
                self._execute("BEGIN IMMEDIATE")
                with contextlib.suppress(_NotDue):
                    self._delete(name, None, due=now)
        finally:
            self._arm_next_expiry()

    async def compact_round(self, state: CompactionRound) -> None:
        """A shared file's workers take turns, as servers on one etcd do: a round is
        claimed by the worker whose count of claimed rounds is still the file's; the
        others only take up the count (see :meth:`Storage.compact_round`)."""
        if not self._shared:
            await super().compact_round(state)
            return
        await self._begin_write()
        with self._conn:
            row = self._execute(_ROUNDS).fetchone()
            claimed, current = (row[0] if row else 0), self._current()
            if claimed == state.claimed:
                self._execute(_CLAIM_ROUND, (claimed + 1,))
        if claimed != state.claimed:  # another worker's round
            state.claimed, state.revision = claimed, current
            state.compacted = self._compacted_revision()
            return
        await self._compact_claimed(state, current)

    async def compact(self, revision: int) -> None:
        await self._begin_write()
        with self._conn:
            compacted, current = self._compacted_revision(), self._current()
            if revision <= compacted:
                return
            if revision > current:
                raise FutureRevisionError(revision, current)
            self._execute(_COMPACT_SUPERSEDED, (compacted, revision))
            self._execute(_COMPACT_DELETED, (compacted, revision, current))
            self._execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('compacted_revision', ?)",
                (revision,),
            )
        self._compacted = revision

    # -- watch ---------------------------------------------------------------

    async def watch(
        self, prefix: str, revision: int, *, progress_interval: float | None = None
    ) -> Watch:
        if self._closed:
            raise RuntimeError("storage is closed")
        compacted = self._compacted_revision()
        if revision and revision < compacted:
            raise ExpiredError(revision, compacted)
        if self._expiry_unarmed:
            self._arm_next_expiry()
        if self._shared:
            self._catch_up()
            if self._poller is None:
                self._poller = asyncio.get_running_loop().call_later(
                    SHARED_POLL_INTERVAL, self._poll
                )
        watcher = SQLiteWatch(self, prefix, revision or self._revision, progress_interval)
        # Register first, then read the history up to the last delivered revision:
        # nothing awaits in between, so no write of this store can land between
        # the two, and every live event is newer than the history (no gap, no
        # duplicate).  A shared store's later rows come live, from its catch-up.
        self._watchers.add(watcher)
        if revision and revision < self._revision:
            end = prefix_end(prefix)
            bounds = (prefix,) if end is None else (prefix, end)
            rows = self._execute(
                _HISTORY_SQL[end is not None], (revision, self._revision, *bounds)
            ).fetchall()
            watcher.history = [_row_event(row) for row in rows]
        return watcher

    def _poll(self) -> None:
        """Shared: the poll timer.  Delivers other processes' writes while watches are open."""
        self._poller = None
        if self._closed or not self._watchers:
            return  # the next watch starts polling again
        interval = min(self._poll_interval * 2, SHARED_POLL_IDLE_INTERVAL)
        try:
            (version,) = self._execute("PRAGMA data_version").fetchone()
            if version != self._data_version:
                self._data_version = version
                interval = SHARED_POLL_INTERVAL
                self._catch_up()
            self._check_leases()
        except sqlite3.Error as exc:  # e.g. the disk went away: try again next time
            log.error("reading other processes' writes to the store failed: %s", exc)
        self._poll_interval = interval
        self._poller = asyncio.get_running_loop().call_later(interval, self._poll)

    def _catch_up(self) -> None:
        """Shared: fan out every row committed since the last one delivered, in id order."""
        if not self._watchers:
            self._revision = self._current()
            return
        compacted = self._compacted_revision()
        if compacted > self._revision:
            # Rows not delivered yet may be gone: this process was stalled for longer
            # than the history is kept.  Its watchers cannot go on (clients re-list).
            error = ExpiredError(self._revision + 1, compacted)
            for watcher in self._watchers:
                watcher.expire(error)
            self._watchers.clear()
            self._revision = self._current()
            return
        for row in self._execute(_SINCE, (self._revision,)).fetchall():
            event = _row_event(row)
            self._revision = event.revision
            self._notify(row[1], event)

    def _check_leases(self) -> None:
        """Shared: at most once per interval, time the earliest lease, which another
        process may have set (and may no longer be there to expire)."""
        now = time.monotonic()
        if now - self._leases_checked_at >= _SHARED_LEASE_CHECK_INTERVAL:
            self._leases_checked_at = now
            self._arm_next_expiry()

    async def close(self) -> None:
        """End every watch, stop the expiry timer, checkpoint the WAL and close the file."""
        if self._closed:
            return
        self._closed = True
        for timer in (self._expiry, self._poller):
            if timer is not None:
                timer.cancel()
        self._expiry = self._poller = None
        for watcher in self._watchers:
            watcher.end()
        self._watchers.clear()
        # A shared file may be in use by other processes: checkpoint without waiting.
        self._execute(f"PRAGMA wal_checkpoint({'PASSIVE' if self._shared else 'TRUNCATE'})")
        self._conn.close()


class _NotDue(Exception):
    """An expiry found the key's lease renewed, detached or already expired."""
