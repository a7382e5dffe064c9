"""The Storage contract, run on every backend: SQLite (owned, and shared as
``kapi serve --workers`` opens it) and a real etcd.

Each test gets a fresh store: a new SQLite file, or on etcd (one server per
module) a key prefix of its own.  Revisions are asserted relative to the
store's revision when the test starts (``base``): SQLite starts at 0, etcd at 1
and its revision is shared by every test of the module.  The loop is uvloop,
as ``kapi serve`` runs.  Backend specifics live in test_storage_sqlite.py,
test_storage_ttl.py and test_storage_etcd.py.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import uvloop

from kapi.storage.etcd import EtcdStorage
from kapi.storage.interface import (
    CompactionRound,
    ConflictError,
    EventType,
    ExpiredError,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    Storage,
    Watch,
    WatchEvent,
)
from kapi.storage.sqlite import SQLiteStorage
from tests.helpers.etcd import EtcdServer
from tests.helpers.storage_events import summary, take

CM = "/registry/configmaps/"
EV = "/registry/events/default/"
#: Long enough for a one-second lease on a loaded machine, short enough to fail fast.
EXPIRY_TIMEOUT = 15.0

Body = Callable[[Storage, int], Awaitable[None]]
Opener = Callable[[], Awaitable[Storage]]

_prefixes = itertools.count(1)


@pytest.fixture(scope="module")
def etcd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    server = EtcdServer.launch(tmp_path_factory.mktemp("etcd"))
    yield server
    server.close()


@pytest.fixture(params=["sqlite", "sqlite-shared", "etcd"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """Opens the test's store (again, for a second run over the same data)."""
    if request.param.startswith("sqlite"):
        shared = request.param == "sqlite-shared"

        async def open_sqlite() -> Storage:
            return SQLiteStorage.open(tmp_path / "kapi.db", shared=shared)

        return open_sqlite
    server: EtcdServer = request.getfixturevalue("etcd_server")
    prefix = f"/contract-{next(_prefixes)}"

    async def open_etcd() -> Storage:
        return await EtcdStorage.connect(server.endpoints, prefix=prefix)

    return open_etcd


@pytest.fixture
def run(opener: Opener) -> Callable[[Body], None]:
    """Run ``body(store, base)`` on uvloop against the test's store, closed afterwards."""

    def runner(body: Body) -> None:
        async def main() -> None:
            store = await opener()
            try:
                await body(store, await store.current_revision())
            finally:
                await store.close()

        uvloop.run(main())

    return runner


def state(kvs: list[KeyValue], base: int) -> list[tuple[str, bytes, int, int]]:
    return [(kv.key, kv.value, kv.create_revision - base, kv.mod_revision - base) for kv in kvs]


def test_crud_and_preconditions(run: Callable[[Body], None]) -> None:
    async def body(s: Storage, base: int) -> None:
        key = CM + "default/a"
        assert await s.get(key) is None

        created = await s.create(key, b"v1")
        assert created == KeyValue(key, b"v1", base + 1, base + 1)
        assert await s.get(key) == created
        with pytest.raises(KeyExistsError):
            await s.create(key, b"again")

        updated = await s.update(key, b"v2", expected_revision=base + 1)
        assert updated == KeyValue(key, b"v2", base + 1, base + 2)
        with pytest.raises(ConflictError) as conflict:
            await s.update(key, b"stale", expected_revision=base + 1)
        assert conflict.value.current == updated
        with pytest.raises(ConflictError) as conflict:
            await s.delete(key, expected_revision=base + 1)
        assert conflict.value.current == updated
        assert await s.get(key) == updated  # failed writes changed nothing
        assert await s.current_revision() == base + 2

        assert await s.delete(key, expected_revision=base + 2) == (updated, base + 3)
        assert await s.get(key) is None
        with pytest.raises(KeyNotFoundError):
            await s.update(key, b"v3", expected_revision=base + 3)
        with pytest.raises(KeyNotFoundError):
            await s.delete(key)
        with pytest.raises(KeyNotFoundError):
            await s.update(CM + "default/never", b"x", expected_revision=base + 1)
        assert await s.current_revision() == base + 3  # refused writes take no revision

        recreated = await s.create(key, b"v4")
        assert recreated == KeyValue(key, b"v4", base + 4, base + 4)
        assert await s.delete(key) == (recreated, base + 5)
        assert await s.current_revision() == base + 5

    run(body)


def test_list_at_old_revisions(run: Callable[[Body], None]) -> None:
    async def body(s: Storage, base: int) -> None:
        a, b, c = CM + "ns/a", CM + "ns/b", CM + "ns/c"
        await s.create(a, b"a1")  # 1
        await s.create(b, b"b1")  # 2
        await s.update(a, b"a2", base + 1)  # 3
        await s.delete(b)  # 4
        await s.create(c, b"c1")  # 5

        expected = {
            1: [(a, b"a1", 1, 1)],
            2: [(a, b"a1", 1, 1), (b, b"b1", 2, 2)],
            3: [(a, b"a2", 1, 3), (b, b"b1", 2, 2)],
            4: [(a, b"a2", 1, 3)],
            5: [(a, b"a2", 1, 3), (c, b"c1", 5, 5)],
        }
        for revision, kvs in expected.items():
            result = await s.list(CM, revision=base + revision)
            assert state(result.kvs, base) == kvs, revision
            assert (result.revision, result.more, result.remaining) == (base + revision, False, 0)
        latest = await s.list(CM)
        assert state(latest.kvs, base) == expected[5]
        assert latest.revision == base + 5
        with pytest.raises(FutureRevisionError) as future:
            await s.list(CM, revision=base + 6)
        assert (future.value.requested, future.value.current) == (base + 6, base + 5)

    run(body)


def test_pagination_with_limit_start_key_and_remaining(run: Callable[[Body], None]) -> None:
    async def body(s: Storage, base: int) -> None:
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

    run(body)


def test_prefix_isolation(run: Callable[[Body], None]) -> None:
    async def body(s: Storage, base: int) -> None:
        await s.create("/registry/configmaps/ns/a", b"1")
        await s.create("/registry/configmapsx/ns/a", b"2")
        await s.create("/registry/configmaps0", b"3")
        await s.create("/registry/configmaps/ns/\U0010ffff", b"4")
        inside = await s.list("/registry/configmaps/")
        assert [kv.value for kv in inside.kvs] == [b"1", b"4"]
        assert [kv.value for kv in (await s.list("")).kvs] == [b"1", b"4", b"3", b"2"]

        watch = await s.watch("/registry/configmaps/", 0)
        await s.update("/registry/configmapsx/ns/a", b"2b", base + 2)
        await s.update("/registry/configmaps/ns/a", b"1b", base + 1)
        (event,) = await take(watch, 1)
        assert (event.type, event.revision, event.kv and event.kv.value) == (
            EventType.UPDATED,
            base + 6,
            b"1b",
        )

    run(body)


async def compacted_revision(s: Storage, revision: int) -> int:
    """The revision history is compacted up to, as a read at ``revision`` reports it."""
    with pytest.raises(ExpiredError) as expired:
        await s.list(CM, revision=revision)
    return expired.value.compacted


def test_a_compaction_round_compacts_to_the_revision_seen_a_round_earlier(
    run: Callable[[Body], None],
) -> None:
    """One store alone: every round is its own (on etcd, claimed on compact_rev_key)."""
    a = CM + "ns/a"

    async def body(s: Storage, base: int) -> None:
        await s.create(a, b"a1")  # 1
        await s.update(a, b"a2", base + 1)  # 2
        rounds = CompactionRound()
        await s.compact_round(rounds)
        noted = rounds.revision
        # The first round only notes where history stands.
        assert rounds.compacted == 0 and noted >= base + 2
        assert [kv.value for kv in (await s.list(CM, revision=base + 1)).kvs] == [b"a1"]
        await s.update(a, b"a3", base + 2)
        await s.compact_round(rounds)
        assert (rounds.compacted, rounds.claimed) == (noted, 2)
        assert rounds.revision > noted
        with pytest.raises(ExpiredError) as expired:
            await s.list(CM, revision=base + 1)
        assert expired.value.compacted == noted
        assert [kv.value for kv in (await s.list(CM)).kvs] == [b"a3"]

    run(body)


def test_compaction_expires_old_revisions_and_keeps_latest(run: Callable[[Body], None]) -> None:
    a, b, c = CM + "ns/a", CM + "ns/b", CM + "ns/c"

    async def body(s: Storage, base: int) -> None:
        await s.create(a, b"a1")  # 1
        await s.update(a, b"a2", base + 1)  # 2
        await s.create(b, b"b1")  # 3
        await s.delete(b)  # 4
        await s.create(c, b"c1")  # 5
        await s.delete(c)  # 6
        await s.create(c, b"c2")  # 7
        await s.update(a, b"a3", base + 2)  # 8

        await s.compact(base + 6)
        for revision in (1, 5):
            with pytest.raises(ExpiredError) as expired:
                await s.list(CM, revision=base + revision)
            assert (expired.value.requested, expired.value.compacted) == (
                base + revision,
                base + 6,
            )
        # A watch from R delivers revisions from R + 1 on, which must not be compacted.
        for revision in (1, 4):
            with pytest.raises(ExpiredError) as expired:
                await s.watch(CM, base + revision)
            assert (expired.value.requested, expired.value.compacted) == (
                base + revision,
                base + 6,
            )
        with pytest.raises(FutureRevisionError):
            await s.compact(base + 9)

        at_compaction = await s.list(CM, revision=base + 6)
        assert [(kv.key, kv.value) for kv in at_compaction.kvs] == [(a, b"a2")]
        assert [kv.value for kv in (await s.list(CM)).kvs] == [b"a3", b"c2"]
        # History after the compaction revision survives, for watches from it.
        events = await take(await s.watch(CM, base + 6), 2)
        assert summary(events, base) == [
            (EventType.CREATED, 7, c, b"c2"),
            (EventType.UPDATED, 8, a, b"a3"),
        ]
        assert events[1].prev_kv == KeyValue(a, b"a2", base + 1, base + 2)

        await s.compact(base + 8)
        assert [kv.value for kv in (await s.list(CM, revision=base + 8)).kvs] == [b"a3", b"c2"]
        await s.compact(base + 3)  # older than the compacted revision: nothing to do
        assert await compacted_revision(s, base + 1) == base + 8

    run(body)


def test_watch_replays_history_then_live_without_duplicates(run: Callable[[Body], None]) -> None:
    async def body(s: Storage, base: int) -> None:
        a, b = CM + "ns/a", CM + "ns/b"
        await s.create(a, b"a1")  # 1
        await s.create(b, b"b1")  # 2
        await s.update(a, b"a2", base + 1)  # 3
        await s.delete(b)  # 4
        watch = await s.watch(CM, base + 1)
        await s.update(a, b"a3", base + 3)  # 5, written while history is pending
        events = await take(watch, 4)
        await s.create(b, b"b2")  # 6
        events += await take(watch, 1)
        await watch.close()

        assert summary(events, base) == [
            (EventType.CREATED, 2, b, b"b1"),
            (EventType.UPDATED, 3, a, b"a2"),
            (EventType.DELETED, 4, b, b"b1"),
            (EventType.UPDATED, 5, a, b"a3"),
            (EventType.CREATED, 6, b, b"b2"),
        ]
        assert events[1].prev_kv == KeyValue(a, b"a1", base + 1, base + 1)
        assert events[2].kv == KeyValue(b, b"b1", base + 2, base + 4)
        assert events[2].prev_kv == KeyValue(b, b"b1", base + 2, base + 2)
        assert events[3].prev_kv == KeyValue(a, b"a2", base + 1, base + 3)
        assert events[4].prev_kv is None

        # A watch from 0 starts now; a watch from the future skips up to there.
        now, future = await s.watch(CM, 0), await s.watch(CM, base + 8)
        kv = await s.get(a)
        for i in range(4):
            assert kv is not None
            kv = await s.update(a, f"x{i}".encode(), kv.mod_revision)  # 7, 8, 9, 10
        assert [e.revision - base for e in await take(now, 4)] == [7, 8, 9, 10]
        assert [e.revision - base for e in await take(future, 2)] == [9, 10]

    run(body)


def test_progress_events(run: Callable[[Body], None]) -> None:
    async def body(s: Storage, base: int) -> None:
        await s.create(CM + "ns/a", b"1")
        await s.create("/registry/secrets/ns/a", b"1")
        watch = await s.watch(CM, 0, progress_interval=0.05)
        (progress,) = await take(watch, 1)
        assert (progress.type, progress.revision, progress.kv) == (
            EventType.PROGRESS,
            base + 2,
            None,
        )

        await s.update(CM + "ns/a", b"2", base + 1)  # 3
        await s.create("/registry/secrets/ns/b", b"1")  # 4, not under the prefix
        event, progress = await take(watch, 2)
        assert (event.type, event.revision) == (EventType.UPDATED, base + 3)
        assert (progress.type, progress.revision) == (EventType.PROGRESS, base + 4)
        await watch.close()

    run(body)


def test_close_ends_watches(opener: Opener) -> None:
    async def main() -> None:
        store = await opener()
        base = await store.current_revision()
        await store.create(CM + "ns/a", b"1")
        closed_by_watch = await store.watch(CM, 0)
        closed_by_store = await store.watch(CM, base + 1)
        seen: list[list[WatchEvent]] = [[], []]

        async def drain(watch: Watch, into: list[WatchEvent]) -> None:
            async for event in watch:
                into.append(event)

        tasks = [
            asyncio.create_task(drain(w, into))
            for w, into in zip((closed_by_watch, closed_by_store), seen, strict=True)
        ]
        await asyncio.sleep(0.01)
        await closed_by_watch.close()
        await store.create(CM + "ns/b", b"1")
        async with asyncio.timeout(5):
            while not seen[1]:
                await asyncio.sleep(0.01)
        await store.close()
        async with asyncio.timeout(5):
            await asyncio.gather(*tasks)
        assert seen[0] == []
        assert [e.revision for e in seen[1]] == [base + 2]

    uvloop.run(main())


def test_concurrent_cas_increments(run: Callable[[Body], None]) -> None:
    async def body(s: Storage, base: int) -> None:
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
        assert sorted(revisions) == list(range(base + 2, base + 52))
        assert conflicts > 0  # the test did exercise the retry path
        events = await take(watch, 50, timeout=20)
        assert [e.revision for e in events] == list(range(base + 2, base + 52))
        assert [e.kv.value for e in events if e.kv] == [str(i).encode() for i in range(1, 51)]

    run(body)


def test_watcher_sees_every_concurrent_write_once_in_order(run: Callable[[Body], None]) -> None:
    async def body(s: Storage, base: int) -> None:
        watch = await s.watch(CM, 0)

        async def writer(n: int) -> None:
            key = f"{CM}ns/w{n}"
            kv = await s.create(key, b"0")
            for i in range(1, 49):
                await asyncio.sleep(0)
                kv = await s.update(key, str(i).encode(), kv.mod_revision)
            await s.delete(key)

        consumer = asyncio.create_task(take(watch, 200, timeout=30))
        await asyncio.gather(*(writer(n) for n in range(4)))
        events = await consumer
        assert [e.revision for e in events] == list(range(base + 1, base + 201))
        for n in range(4):
            mine = [e for e in events if e.kv and e.kv.key == f"{CM}ns/w{n}"]
            assert [e.type for e in mine] == [
                EventType.CREATED,
                *[EventType.UPDATED] * 48,
                EventType.DELETED,
            ]
            assert [e.kv.value for e in mine if e.kv][:-1] == [str(i).encode() for i in range(49)]

    run(body)


# -- leases (TTLs) -----------------------------------------------------------
#
# Every test waits for expiry through a watch with a bounded timeout; none
# asserts how long anything took.  TTLs are one second, the smallest there is.


async def next_deleted(watch: Watch) -> WatchEvent:
    """The next DELETED event of ``watch``, failing instead of hanging."""
    async with asyncio.timeout(EXPIRY_TIMEOUT):
        async for event in watch:
            if event.type is EventType.DELETED:
                return event
    raise AssertionError("watch ended")


async def expire_marker(store: Storage, watch: Watch) -> None:
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


def test_expired_key_is_deleted_with_a_watch_event_in_revision_order(
    run: Callable[[Body], None],
) -> None:
    async def body(store: Storage, base: int) -> None:
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

    run(body)


def test_keys_expire_in_the_order_their_leases_run_out(run: Callable[[Body], None]) -> None:
    async def body(store: Storage, base: int) -> None:
        watch = await store.watch(EV, 0)
        await store.create(EV + "late", b"", ttl=2)
        await store.create(EV + "early", b"", ttl=1)
        first, second = await next_deleted(watch), await next_deleted(watch)
        assert first.kv is not None and second.kv is not None
        assert (first.kv.key, second.kv.key) == (EV + "early", EV + "late")
        assert first.revision < second.revision
        await watch.close()

    run(body)


def test_a_rewrite_with_a_ttl_replaces_the_lease(run: Callable[[Body], None]) -> None:
    async def body(store: Storage, base: int) -> None:
        watch = await store.watch(EV, 0)
        created = await store.create(EV + "a", b"1", ttl=1)
        await store.update(EV + "a", b"2", created.mod_revision, ttl=3)
        await expire_marker(store, watch)
        current = await store.get(EV + "a")
        assert current is not None and current.value == b"2"
        deleted = await next_deleted(watch)
        assert deleted.kv is not None and deleted.kv.key == EV + "a"
        await watch.close()

    run(body)


def test_a_write_without_ttl_detaches_the_lease(run: Callable[[Body], None]) -> None:
    async def body(store: Storage, base: int) -> None:
        watch = await store.watch(EV, 0)
        created = await store.create(EV + "a", b"1", ttl=1)
        await store.update(EV + "a", b"2", created.mod_revision)
        await expire_marker(store, watch)
        assert await store.get(EV + "a") is not None
        await watch.close()

    run(body)


def test_delete_removes_the_lease(run: Callable[[Body], None]) -> None:
    async def body(store: Storage, base: int) -> None:
        watch = await store.watch(EV, 0)
        created = await store.create(EV + "a", b"leased", ttl=1)
        await store.delete(EV + "a", created.mod_revision)
        await store.create(EV + "a", b"kept")
        await expire_marker(store, watch)
        current = await store.get(EV + "a")
        assert current is not None and current.value == b"kept"
        await watch.close()

    run(body)


def test_leases_outlive_the_store_that_set_them(opener: Opener) -> None:
    async def first_run() -> int:
        store = await opener()
        try:
            await store.create(EV + "kept", b"")
            return (await store.create(EV + "a", b"", ttl=1)).mod_revision
        finally:
            await store.close()

    async def second_run(created: int) -> None:
        store = await opener()
        try:
            watch = await store.watch(EV, created)
            deleted = await next_deleted(watch)
            assert deleted.kv is not None and deleted.kv.key == EV + "a"
            assert deleted.revision == created + 1
            assert await store.get(EV + "kept") is not None
            await watch.close()
        finally:
            await store.close()

    uvloop.run(second_run(uvloop.run(first_run())))
