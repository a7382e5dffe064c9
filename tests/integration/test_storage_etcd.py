"""What is particular to the etcd backend, against real etcd processes.

Where keys land (read back with etcdctl), failing over between members,
StorageUnavailableError when no member answers, watches that resume on their
own after etcd comes back, and ExpiredError when what they missed was
compacted.  The Storage contract itself is test_storage_contract.py's.
Nothing here asserts how long anything took; every wait is bounded so that a
hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvloop

from kapi.storage.etcd import EtcdStorage
from kapi.storage.interface import (
    EventType,
    ExpiredError,
    StorageUnavailableError,
    WatchEvent,
)
from tests.helpers.etcd import EtcdCluster, EtcdServer
from tests.helpers.storage_events import take

CM = "/registry/configmaps/"
#: Bounds every wait: the backend gives up on an operation after 5 s.
BOUND = 30.0

_prefixes = itertools.count(1)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    """One etcd for the tests that neither stop nor compact it."""
    server = EtcdServer.launch(tmp_path_factory.mktemp("etcd"))
    yield server
    server.close()


@pytest.fixture
def own(tmp_path: Path) -> Iterator[EtcdServer]:
    """An etcd of the test's own, to stop, restart or compact."""
    server = EtcdServer.launch(tmp_path)
    yield server
    server.close()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[EtcdCluster]:
    cluster = EtcdCluster.launch(tmp_path)
    yield cluster
    cluster.close()


def etcd_keys(server: EtcdServer | EtcdCluster, prefix: str) -> list[tuple[str, str]]:
    """``(key, value)`` of every key under ``prefix``, as etcdctl reads them."""
    lines = server.etcdctl("get", "--prefix", prefix).splitlines()
    return list(zip(lines[::2], lines[1::2], strict=True))


def test_keys_land_under_the_configured_prefix_as_upstream_lays_them_out(
    shared: EtcdServer,
) -> None:
    custom = f"/kapi-{next(_prefixes)}"

    async def main() -> None:
        default = await EtcdStorage.connect(shared.endpoints)
        prefixed = await EtcdStorage.connect(shared.endpoints, prefix=custom)
        try:
            await default.create("/registry/configmaps/ns1/a", b'{"kind":"ConfigMap"}')
            await prefixed.create("/registry/configmaps/ns1/a", b'{"kind":"Other"}')
            await prefixed.create(
                "/registry/apiextensions.k8s.io/customresourcedefinitions/w.example.com", b"{}"
            )
            await prefixed.create("/registry/example.com/widgets/ns1/w", b"{}")
            # Each store sees its own keys only, under the same logical names.
            assert [kv.value for kv in (await default.list(CM)).kvs] == [b'{"kind":"ConfigMap"}']
            own_keys = [kv.key for kv in (await prefixed.list("/registry/")).kvs]
            assert own_keys == [
                "/registry/apiextensions.k8s.io/customresourcedefinitions/w.example.com",
                "/registry/configmaps/ns1/a",
                "/registry/example.com/widgets/ns1/w",
            ]
        finally:
            await default.close()
            await prefixed.close()

    uvloop.run(main())
    assert etcd_keys(shared, "/registry/") == [
        ("/registry/configmaps/ns1/a", '{"kind":"ConfigMap"}')
    ]
    assert etcd_keys(shared, custom + "/") == [
        (custom + "/apiextensions.k8s.io/customresourcedefinitions/w.example.com", "{}"),
        (custom + "/configmaps/ns1/a", '{"kind":"Other"}'),
        (custom + "/example.com/widgets/ns1/w", "{}"),
    ]


def test_a_write_with_a_ttl_is_leased_and_one_without_is_not(shared: EtcdServer) -> None:
    prefix = f"/kapi-{next(_prefixes)}"

    async def main() -> None:
        store = await EtcdStorage.connect(shared.endpoints, prefix=prefix)
        try:
            created = await store.create("/registry/events/ns/e", b"1", ttl=3600)
            await store.create("/registry/events/ns/f", b"1", ttl=3600)
            await store.create("/registry/configmaps/ns/c", b"1")
            leased = [
                lease
                for lease in etcd_leases(shared)
                if any(key.startswith(prefix) for key in etcd_lease_keys(shared, lease))
            ]
            assert len(leased) == 1  # writes with one TTL share a lease (upstream's reuse)
            assert sorted(etcd_lease_keys(shared, leased[0])) == [
                prefix + "/events/ns/e",
                prefix + "/events/ns/f",
            ]
            await store.update("/registry/events/ns/e", b"2", created.mod_revision)
            assert etcd_lease_keys(shared, leased[0]) == [prefix + "/events/ns/f"]
        finally:
            await store.close()

    uvloop.run(main())


def test_a_reused_lease_that_etcd_dropped_is_replaced(shared: EtcdServer) -> None:
    prefix = f"/kapi-{next(_prefixes)}"

    async def main() -> None:
        store = await EtcdStorage.connect(shared.endpoints, prefix=prefix)
        try:
            await store.create("/registry/events/ns/e", b"1", ttl=7200)
            (lease,) = [
                lease
                for lease in etcd_leases(shared)
                if prefix + "/events/ns/e" in etcd_lease_keys(shared, lease)
            ]
            shared.etcdctl("lease", "revoke", lease)  # its key goes with it
            assert await store.get("/registry/events/ns/e") is None
            await store.create("/registry/events/ns/f", b"1", ttl=7200)
            assert await store.get("/registry/events/ns/f") is not None
            (renewed,) = [
                lease
                for lease in etcd_leases(shared)
                if prefix + "/events/ns/f" in etcd_lease_keys(shared, lease)
            ]
            assert renewed != lease
        finally:
            await store.close()

    uvloop.run(main())


def etcd_leases(server: EtcdServer) -> list[str]:
    """The ids (hex) of the leases etcd holds."""
    lines = server.etcdctl("lease", "list").splitlines()
    return [line.strip() for line in lines[1:] if line.strip()]


def etcd_lease_keys(server: EtcdServer, lease: str) -> list[str]:
    out = server.etcdctl("lease", "timetolive", "--keys", lease)
    # "lease 694d... granted with TTL(3780s), remaining(3779s), attached keys([/a /b])"
    attached = out.split("attached keys([", 1)[1].split("])", 1)[0]
    return attached.split()


def test_fails_over_when_a_member_stops(cluster: EtcdCluster) -> None:
    async def main() -> None:
        store = await EtcdStorage.connect(cluster.endpoints)
        try:
            first = await store.create(CM + "ns/a", b"1")
            watch = await store.watch(CM, first.mod_revision)
            cluster.members[0].stop()  # the endpoint the store (and its watch) use first
            async with asyncio.timeout(BOUND):
                second = await store.update(CM + "ns/a", b"2", first.mod_revision)
                assert await store.get(CM + "ns/a") == second
                third = await store.create(CM + "ns/b", b"1")
                (updated, created) = await take(watch, 2, timeout=BOUND)
            assert (updated.type, updated.revision) == (EventType.UPDATED, second.mod_revision)
            assert (created.type, created.revision) == (EventType.CREATED, third.mod_revision)

            # Back with all three, then down to the third alone: no quorum, no answer.
            cluster.members[0].start()
            cluster.members[0].wait_healthy()
            cluster.members[1].stop()
            async with asyncio.timeout(BOUND):
                assert (await store.get(CM + "ns/b")) == third
            cluster.members[0].stop()
            async with asyncio.timeout(BOUND):
                with pytest.raises(StorageUnavailableError):
                    await store.create(CM + "ns/c", b"1")
            await watch.close()
        finally:
            await store.close()

    uvloop.run(main())


def test_reads_and_watches_move_off_a_member_that_hangs(cluster: EtcdCluster) -> None:
    async def main() -> None:
        store = await EtcdStorage.connect(cluster.endpoints)
        try:
            created = await store.create(CM + "ns/a", b"1")
            cluster.members[0].pause()  # the endpoint the store uses first
            async with asyncio.timeout(BOUND):
                # The watch first: it finds the member hung on its own (no read moved on yet).
                watch = await store.watch(CM, created.mod_revision - 1)
                (event,) = await take(watch, 1, timeout=BOUND)
                assert await store.get(CM + "ns/a") == created
            assert (event.type, event.revision) == (EventType.CREATED, created.mod_revision)
            await watch.close()
        finally:
            cluster.members[0].resume()
            await store.close()

    uvloop.run(main())


def test_unavailable_while_etcd_is_stopped_and_serving_again_after(own: EtcdServer) -> None:
    async def main() -> None:
        store = await EtcdStorage.connect(own.endpoints)
        try:
            created = await store.create(CM + "ns/a", b"1")
            own.stop()
            async with asyncio.timeout(BOUND):
                with pytest.raises(StorageUnavailableError):
                    await store.get(CM + "ns/a")
                with pytest.raises(StorageUnavailableError):
                    await store.update(CM + "ns/a", b"2", created.mod_revision)
                with pytest.raises(StorageUnavailableError):
                    await store.watch(CM, 0)
            own.start()
            own.wait_healthy()
            async with asyncio.timeout(BOUND):
                assert await store.get(CM + "ns/a") == created  # the refused update did not land
                updated = await store.update(CM + "ns/a", b"2", created.mod_revision)
            assert (updated.value, updated.create_revision) == (b"2", created.mod_revision)
        finally:
            await store.close()

    uvloop.run(main())


def test_connect_fails_when_no_endpoint_answers(tmp_path: Path) -> None:
    server = EtcdServer.create(tmp_path)  # ports reserved, never started

    async def main() -> None:
        async with asyncio.timeout(BOUND):
            with pytest.raises(StorageUnavailableError):
                await EtcdStorage.connect(server.endpoints)

    uvloop.run(main())


def test_a_watch_resumes_after_etcd_restarts(own: EtcdServer) -> None:
    async def main() -> None:
        store = await EtcdStorage.connect(own.endpoints)
        try:
            first = await store.create(CM + "ns/a", b"1")
            watch = await store.watch(CM, 0, progress_interval=0.2)
            events: list[WatchEvent] = []

            async def consume() -> None:
                async for event in watch:
                    if event.type is not EventType.PROGRESS:
                        events.append(event)

            consumer = asyncio.create_task(consume())
            second = await store.update(CM + "ns/a", b"2", first.mod_revision)
            own.stop()
            await asyncio.sleep(0.5)  # the watch sees its stream break meanwhile
            own.start()
            own.wait_healthy()
            async with asyncio.timeout(BOUND):
                third = await store.update(CM + "ns/a", b"3", second.mod_revision)
                while len(events) < 2:
                    await asyncio.sleep(0.02)
            assert [(e.type, e.revision) for e in events] == [
                (EventType.UPDATED, second.mod_revision),
                (EventType.UPDATED, third.mod_revision),
            ]
            assert not consumer.done()
            await watch.close()
            async with asyncio.timeout(BOUND):
                await consumer
        finally:
            await store.close()

    uvloop.run(main())


def test_a_watch_that_missed_compacted_history_raises_expired(own: EtcdServer) -> None:
    async def main() -> None:
        store = await EtcdStorage.connect(own.endpoints)
        try:
            first = await store.create(CM + "ns/a", b"1")
            watch = await store.watch(CM, first.mod_revision - 1)
            (created,) = await take(watch, 1, timeout=BOUND)
            assert created.revision == first.mod_revision
            # Nobody iterates the watch while etcd restarts, the key changes twice
            # and history is compacted past what the watch would resume from.
            own.stop()
            own.start()
            own.wait_healthy()
            async with asyncio.timeout(BOUND):
                second = await store.update(CM + "ns/a", b"2", first.mod_revision)
                third = await store.update(CM + "ns/a", b"3", second.mod_revision)
                await store.compact(third.mod_revision)
                with pytest.raises(ExpiredError) as expired:
                    await take(watch, 1, timeout=BOUND)
            assert (expired.value.requested, expired.value.compacted) == (
                first.mod_revision,
                third.mod_revision,
            )
        finally:
            await store.close()

    uvloop.run(main())
