"""Periodic compaction shared by several servers on one etcd, as kube-apiserver's.

Servers take turns on the ``compact_rev_key`` key at the root of etcd's key
space: a round is claimed by the transaction that bumps the key's version from
the one its server saw last, the claimer compacts to the revision it saw one
round earlier, and every other server only catches up with the key.  So
history is compacted once per interval across all servers, and when the
claiming server stops, another one claims the next round.  Nothing here
asserts how long anything took; every wait is bounded.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc.aio
import pytest
import uvloop
from aetcd import rpc

from kapi.server import compact_periodically
from kapi.storage.etcd import EtcdStorage
from kapi.storage.interface import CompactionRound, ExpiredError, Storage
from tests.helpers.etcd import EtcdServer

CM = "/registry/configmaps/"
#: Bounds every wait.
BOUND = 60.0


@pytest.fixture
def etcd(tmp_path: Path) -> Iterator[EtcdServer]:
    """An etcd of the test's own: compaction is global to it."""
    server = EtcdServer.launch(tmp_path)
    yield server
    server.close()


def compact_rev_key(server: EtcdServer) -> tuple[int, str] | None:
    """``(version, value)`` of ``compact_rev_key`` as etcdctl reads it at etcd's root."""
    answer = json.loads(server.etcdctl("get", "compact_rev_key", "-w", "json"))
    kvs = answer.get("kvs") or []
    if not kvs:
        return None
    return int(kvs[0]["version"]), base64.b64decode(kvs[0]["value"]).decode()


async def compacted_revision(storage: Storage) -> int:
    """etcd's compacted revision, as a read at revision 1 is refused with it."""
    with pytest.raises(ExpiredError) as refused:
        await storage.list(CM, revision=1)
    return refused.value.compacted


async def write(storage: Storage, name: str) -> int:
    return (await storage.create(f"{CM}default/{name}", b"{}")).mod_revision


def test_servers_take_turns_and_one_takes_over_when_the_other_stops(etcd: EtcdServer) -> None:
    async def main() -> None:
        # Different prefixes, one key: compaction is global to the etcd.
        a = await EtcdStorage.connect(etcd.endpoints)
        b = await EtcdStorage.connect(etcd.endpoints, prefix="/other")
        try:
            sa, sb = CompactionRound(), CompactionRound()
            # First round: A claims it and only notes the revision (nothing to compact).
            await a.compact_round(sa)
            seen_by_a = sa.revision
            assert (sa.claimed, sa.compacted) == (1, 0)
            assert await asyncio.to_thread(compact_rev_key, etcd) == (1, "0")
            await write(a, "one")
            # B's first round: already claimed, B catches up and compacts nothing.
            await b.compact_round(sb)
            seen_by_b = sb.revision
            assert (sb.claimed, sb.compacted) == (1, 0)
            assert seen_by_b > seen_by_a
            assert await asyncio.to_thread(compact_rev_key, etcd) == (1, "0")
            await write(a, "two")

            # Second round: A claims it and compacts to what it saw at the first.
            await a.compact_round(sa)
            assert (sa.claimed, sa.compacted) == (2, seen_by_a)
            assert await asyncio.to_thread(compact_rev_key, etcd) == (2, str(seen_by_a))
            assert await compacted_revision(a) == seen_by_a
            # B's second round: A's; B learns what was compacted and compacts nothing.
            await b.compact_round(sb)
            assert (sb.claimed, sb.compacted) == (2, seen_by_a)
            assert await compacted_revision(b) == seen_by_a
            seen_by_b = sb.revision
            await write(b, "three")

            # A stops compacting (gone): B's next round is unclaimed, and B claims it.
            await b.compact_round(sb)
            assert (sb.claimed, sb.compacted) == (3, seen_by_b)
            assert await asyncio.to_thread(compact_rev_key, etcd) == (3, str(seen_by_b))
            assert await compacted_revision(a) == seen_by_b
            # A comes back with its old count: behind, so it catches up, compacting nothing.
            await write(a, "four")
            await a.compact_round(sa)
            assert (sa.claimed, sa.compacted) == (3, seen_by_b)
            assert await compacted_revision(a) == seen_by_b
        finally:
            await a.close()
            await b.close()

    uvloop.run(main())
    # Written where kube-apiserver writes it: at the root, under neither prefix.
    assert etcd.etcdctl("get", "--prefix", "/", "--keys-only").split() == [
        "/other/configmaps/default/three",
        "/registry/configmaps/default/four",
        "/registry/configmaps/default/one",
        "/registry/configmaps/default/two",
    ]
    assert etcd.etcdctl("get", "compact_rev_key", "--print-value-only").strip() != ""


async def claims_of(endpoint: str, start: int, until: asyncio.Event) -> list[tuple[int, int, int]]:
    """``(version, value, mod_revision)`` of every write to ``compact_rev_key`` after
    ``start``, read by a raw etcd watch until ``until`` is set."""
    channel = grpc.aio.insecure_channel(endpoint.removeprefix("http://"))
    claims: list[tuple[int, int, int]] = []
    request = rpc.WatchRequest(
        create_request=rpc.WatchCreateRequest(key=b"compact_rev_key", start_revision=start + 1)
    )
    call: Any = rpc.WatchStub(channel).Watch(iter([request]))

    async def read() -> None:
        async for response in call:
            for event in response.events:
                kv = event.kv
                claims.append((int(kv.version), int(kv.value), int(kv.mod_revision)))

    reader = asyncio.create_task(read())
    try:
        await until.wait()
        await asyncio.sleep(0.5)  # let the last events arrive
    finally:
        reader.cancel()
        call.cancel()
        await channel.close()
    return claims


def test_two_servers_compact_once_per_interval_between_them(etcd: EtcdServer) -> None:
    """Two compaction loops, one interval: every round is claimed by one of them and
    compacts once, to a revision seen between the previous claim and its own."""

    async def main() -> tuple[list[tuple[int, int, int]], list[int]]:
        a = await EtcdStorage.connect(etcd.endpoints)
        b = await EtcdStorage.connect(etcd.endpoints, prefix="/other")
        compactions: list[int] = []
        for storage in (a, b):
            real = storage.compact

            async def record(revision: int, real: Any = real) -> None:
                compactions.append(revision)
                await real(revision)

            storage.compact = record  # type: ignore[method-assign]
        done = asyncio.Event()
        start = await a.current_revision()
        watcher = asyncio.create_task(claims_of(etcd.client_url, start, done))
        await asyncio.sleep(0.2)  # the watch is open
        sa, sb = CompactionRound(), CompactionRound()
        loops = [
            asyncio.create_task(compact_periodically(a, 0.3, sa)),
            asyncio.create_task(compact_periodically(b, 0.3, sb)),
        ]
        try:
            async with asyncio.timeout(BOUND):
                count = 0
                while max(sa.claimed, sb.claimed) < 6:
                    count += 1
                    await write(a if count % 2 else b, f"cm{count}")
                    await asyncio.sleep(0.02)
        finally:
            for loop in loops:
                loop.cancel()
            await asyncio.gather(*loops, return_exceptions=True)
            done.set()
            claims = await watcher
            await a.close()
            await b.close()
        return claims, compactions

    claims, compactions = uvloop.run(main())
    versions = [version for version, _, _ in claims]
    assert versions == list(range(1, len(claims) + 1))
    assert len(claims) >= 6
    # The first claim only notes the revision; each later one compacts to a revision
    # seen at or after the claim before it, and before its own.
    assert claims[0][1] == 0
    for (_, _, previous), (_, value, mod_revision) in itertools.pairwise(claims):
        assert previous <= value < mod_revision
    # Each claimed round compacted once, by one server (the last claim may have been
    # cut short by the loops' cancellation before it compacted).
    expected = [value for _, value, _ in claims[1:]]
    assert compactions in (expected, expected[:-1])
