"""The etcd v3 storage backend: several kapi servers sharing one etcd (cluster).

Client choice, by measurement
-----------------------------
``benchmarks/etcd_client_bench.py`` drives one etcd 3.4.23 under uvloop through
four clients: ``grpc.aio`` on the generated stubs the ``aetcd`` package ships
(``aetcd.rpc``, no client layer on top), the ``aetcd`` and ``etcd3aio``
clients' own APIs, and etcd's JSON gateway over ``httpx``.  Figures of one run
(2 shared cores, so ±30% between runs; latency = median of sequential calls,
rate = 32 concurrent callers)::

    operation     grpc-raw         aetcd            etcd3aio         gateway
    get           691us 2237/s     789us 1665/s     524us 3215/s     4037us 210/s
    txn-create   1381us 1518/s    1672us 1400/s    1080us 2363/s     3393us 112/s
    txn-update   1297us 1455/s    2562us  696/s     857us 2548/s     7964us 125/s
    range-1000   6164us           8660us           3682us           33862us
    watch        1680us           1426us            939us            5659us

The three gRPC columns are one transport (grpc.aio); repeated runs in either
order put grpc-raw and etcd3aio within noise of each other.  The gateway is
5-10x slower (JSON plus base64 on both sides, and a proxy hop inside etcd), so
gRPC it is.  Neither client's API fits the contract as it stands: aetcd's
client takes one endpoint; etcd3aio's watch silently resumes past a
compaction (kapi must report it as ExpiredError), it has no mod_revision
compare, and it puts its own top-level ``etcd`` and ``google`` packages on
``sys.path`` (importing it beside aetcd fails on duplicate protobuf symbols).
So kapi calls the generated stubs through ``grpc.aio`` itself and takes
``aetcd`` only for them: a maintained package whose ``aetcd.rpc`` exposes the
stubs built from etcd's own .proto files, with nothing generated at build time.

Layout and semantics
--------------------
Callers' keys start with the logical root ``/registry``; it is replaced by the
configured prefix (``--etcd-prefix``, default ``/registry``, so by default the
etcd key *is* the logical key, as kube-apiserver lays them out).  Values are the
registry's bytes unchanged.  Revisions are etcd's: a fresh etcd is at 1.

* create: ``Txn(create_revision == 0 → Put)``, a failed compare is KeyExistsError;
* update: ``Txn(mod_revision == expected → Put(prev_kv), else Range)``; the
  failure branch's Range tells KeyNotFoundError from ConflictError;
* delete: ``Txn(mod_revision == expected → DeleteRange(prev_kv), else Range)``,
  or a plain ``DeleteRange(prev_kv)`` without a precondition;
* a TTL write attaches a lease; a write without one is a plain put, which
  detaches any earlier lease.  Leases are reused as kube-apiserver's
  LeaseManager does: one lease per TTL value, granted for ``ttl`` plus a
  reuse window (5% of the TTL, at most a minute) and shared by every write
  with that TTL during the window.  Events (TTL one hour) are the bulk of TTL
  writes; one lease per write would double their etcd round trips, and keys
  outliving their TTL by at most 5% is what upstream accepts too.
* a watch is one gRPC Watch stream with ``prev_kv``, one per kapi watch (gRPC
  multiplexes them over the endpoint's HTTP/2 connection).  With a progress
  interval, a quiet stream sends etcd a progress request and yields its
  answer's header revision as PROGRESS.  etcd 3.4 answers from its store
  revision and may send that answer just ahead of events it already counts,
  so kapi asks only after a whole quiet interval and holds the answer for
  :data:`PROGRESS_GRACE` to let such events through first.

Endpoints, failures and timeouts
--------------------------------
One gRPC channel per endpoint; calls go to the current endpoint and move to
the next one when it cannot be reached (or, for a read, has not answered in
half the budget).  Each operation has
:data:`OPERATION_TIMEOUT` seconds in all (every attempt and failover included;
long enough for a three-member cluster to elect a new leader, about 1-2 s)
and then raises :class:`StorageUnavailableError`.  Reads are retried on any
unavailability; a write is retried only when it cannot have been applied (the
endpoint could not be connected, or etcd said it has no leader), otherwise its
outcome is unknown and it raises StorageUnavailableError at once, as the
interface documents.  (A write caught by the loss of the leader waits out
the whole budget: etcd drops the proposal and answers only after its own
request timeout.)  Channels reconnect with a backoff of 0.1-1 s, so an
etcd that comes back is used again within a second.

Periodic compaction is shared between every server on the etcd, through the
key kube-apiserver's compactor uses, ``compact_rev_key`` at the root of the
key space (outside ``--etcd-prefix``, so kapi and kube-apiserver servers on
one etcd take turns alike).  Each round, a server tries a transaction: if the
key's version is the one it saw at its last round, it writes the key (bumping
its version, the round counter) with the revision it saw then and compacts
to that revision; otherwise another server claimed the round, and it adopts
the key's version and the current revision and compacts nothing.  So history
is compacted once per interval across the servers, to a revision seen an
interval earlier, and when the claiming server goes away another one claims
the next round after at most one more interval.

A watch whose stream breaks reopens itself, on the next endpoint, from the
revision after the last one it delivered (event or progress), for as long as
it takes; only a compaction past that revision ends it, with ExpiredError.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit

import grpc
import grpc.aio
from aetcd import rpc

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
    StorageError,
    StorageUnavailableError,
    Watch,
    WatchEvent,
)

#: The logical root every caller's key starts with (see the module docstring).
LOGICAL_ROOT = "/registry"
#: The key servers sharing an etcd claim compaction rounds on (kube-apiserver's name,
#: at the root of the key space whatever the prefix).
COMPACT_REV_KEY = b"compact_rev_key"
#: Seconds one storage operation may take in all, failovers included.
OPERATION_TIMEOUT = 5.0
#: Seconds to wait between rounds over every endpoint when none answered.
RETRY_PAUSE = 0.1
#: Seconds a progress answer waits for events etcd may have sent right behind it.
PROGRESS_GRACE = 0.02
#: A watch's first pause before reopening a broken stream, and the longest.
WATCH_RETRY = (0.1, 1.0)

# etcd's error texts (its gRPC status details).
_COMPACTED = "mvcc: required revision has been compacted"
_FUTURE = "mvcc: required revision is a future revision"
_LEASE_NOT_FOUND = "requested lease not found"

_CHANNEL_OPTIONS = [
    # A member that comes back is used again quickly.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
    # A member that silently stops answering breaks the watch streams on it.
    # etcd accepts pings every 5 s at the most by default.
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.max_receive_message_length", 2**31 - 1),
]
# Watches are cancelled by etcd when their member loses its leader, instead
# of staying open on a member cut off from the cluster.
_WATCH_METADATA = (("hasleader", "true"),)

_T = TypeVar("_T")


def _prefix_end(prefix: bytes) -> bytes:
    """The smallest key above every key that starts with ``prefix`` (etcd's rule)."""
    end = bytearray(prefix)
    while end:
        if end[-1] < 0xFF:
            end[-1] += 1
            return bytes(end)
        end.pop()
    return b"\x00"  # the whole key space


def _put(key: bytes, value: bytes, lease: int, *, prev_kv: bool = False) -> Any:
    return rpc.RequestOp(
        request_put=rpc.PutRequest(key=key, value=value, lease=lease, prev_kv=prev_kv)
    )


def _unapplied(err: grpc.aio.AioRpcError) -> bool:
    """Whether a failed write certainly did not happen, so it may be retried."""
    if err.code() != grpc.StatusCode.UNAVAILABLE:
        return False
    details = (err.details() or "").lower()
    return (
        "failed to connect" in details
        or "no leader" in details
        or "connection refused" in (details)
    )


def _retryable(err: grpc.aio.AioRpcError) -> bool:
    return err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class EtcdWatch(Watch):
    """One kapi watch: a gRPC Watch stream, reopened after breaks (see the module docstring)."""

    def __init__(
        self,
        storage: EtcdStorage,
        prefix: str,
        revision: int,
        interval: float | None,
    ) -> None:
        self._storage = storage
        self._key = storage._to_etcd(prefix)
        self._end = _prefix_end(self._key)
        #: The last revision delivered: the stream (re)starts after it.
        self._revision = revision
        self._interval = interval
        self._closed = False
        self._call: Any = None
        #: Requests to send on the open stream; ``None`` ends the request side.
        self._requests: asyncio.Queue[Any] | None = None
        #: What the open stream's reader task received: responses, ``EOF`` or an error.
        #: (Timing out a ``read()`` itself would cancel the whole gRPC call.)
        self._responses: asyncio.Queue[Any] | None = None
        self._reader: asyncio.Task[None] | None = None

    async def _open(self, index: int, timeout: float) -> None:
        """Open a stream on endpoint ``index`` from ``self._revision + 1``; wait until created."""
        requests: asyncio.Queue[Any] = asyncio.Queue()
        requests.put_nowait(
            rpc.WatchRequest(
                create_request=rpc.WatchCreateRequest(
                    key=self._key,
                    range_end=self._end,
                    start_revision=self._revision + 1,
                    prev_kv=True,
                )
            )
        )

        async def feed() -> AsyncIterator[Any]:
            while True:
                request = await requests.get()
                if request is None:
                    return
                yield request

        call = self._storage._watch[index].Watch(feed(), metadata=_WATCH_METADATA)
        try:
            async with asyncio.timeout(timeout):
                response = await call.read()
        except BaseException:  # TimeoutError included: _call moves to the next member
            call.cancel()
            raise
        if response is grpc.aio.EOF or not response.created:
            call.cancel()
            raise StorageUnavailableError("etcd did not create the watch")
        if response.canceled:
            call.cancel()
            self._canceled(response)
        responses: asyncio.Queue[Any] = asyncio.Queue()
        self._call, self._requests, self._responses = call, requests, responses
        self._reader = asyncio.get_running_loop().create_task(_pump(call, responses))

    def _canceled(self, response: Any) -> None:
        if response.compact_revision:
            raise ExpiredError(self._revision, int(response.compact_revision))
        raise StorageUnavailableError(f"etcd cancelled the watch: {response.cancel_reason}")

    def _drop(self) -> None:
        """Forget the open stream (cancelled; its reader task ends with it)."""
        if self._call is not None:
            self._call.cancel()
        if self._requests is not None:
            self._requests.put_nowait(None)
        if self._responses is not None:
            self._responses.put_nowait(grpc.aio.EOF)  # wakes an iteration waiting on it
        self._call = self._requests = self._responses = self._reader = None

    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        # Each iteration goes on from where the last one stopped (the stream and
        # its position are the watch's, not the iterator's), as SQLite's does.
        return self._events()

    async def _events(self) -> AsyncIterator[WatchEvent]:
        pause = WATCH_RETRY[0]
        while not self._closed:
            try:
                if self._call is None:
                    await self._storage._call(self._open, what="watch")
                async for event in self._stream():
                    pause = WATCH_RETRY[0]
                    yield event
            except (grpc.aio.AioRpcError, StorageUnavailableError, TimeoutError):
                # The stream broke (member down, no leader): start over after the
                # last delivered revision once etcd answers again.
                self._drop()
                if self._closed:
                    return
                self._storage._failed_endpoint()
                await asyncio.sleep(pause)
                pause = min(pause * 2, WATCH_RETRY[1])

    async def _stream(self) -> AsyncIterator[WatchEvent]:
        """Events of the open stream until it ends (raises when it breaks).

        A progress answer is held for :data:`PROGRESS_GRACE` before it is
        yielded: etcd 3.4 may send it just ahead of events it already counts
        (its send loop picks between the two at random), and those arrive right
        behind it.  Events newer than the held revision make it moot.
        """
        responses, interval = self._responses, self._interval
        assert responses is not None
        asked = False
        held = 0  # a progress revision waiting out its grace period
        while True:
            wait = PROGRESS_GRACE if held else interval
            if wait is not None:
                try:
                    async with asyncio.timeout(wait):
                        response = await responses.get()
                except TimeoutError:
                    if held:
                        if held >= self._revision:
                            self._revision = held
                            yield WatchEvent(EventType.PROGRESS, held)
                        held = 0
                        continue
                    if self._requests is None:
                        return
                    if not asked:
                        asked = True
                        self._requests.put_nowait(
                            rpc.WatchRequest(progress_request=rpc.WatchProgressRequest())
                        )
                    continue
            else:
                response = await responses.get()
            if isinstance(response, Exception):
                raise response
            if response is grpc.aio.EOF:
                if self._closed:
                    return
                raise StorageUnavailableError("the watch stream ended")
            if response.canceled:
                self._canceled(response)
            if not response.events:
                # A progress answer (etcd 3.4 sends it with watch id -1).
                asked = False
                if interval is not None:
                    held = max(held, int(response.header.revision))
                continue
            for event in response.events:
                converted = self._storage._event(event)
                self._revision = converted.revision
                yield converted
            if held and self._revision >= held:
                held = 0

    async def close(self) -> None:
        self._closed = True
        self._drop()
        self._storage._watches.discard(self)


async def _pump(call: Any, responses: asyncio.Queue[Any]) -> None:
    """Move a watch stream's responses to ``responses``, then ``EOF`` or the error."""
    try:
        while True:
            response = await call.read()
            responses.put_nowait(response)
            if response is grpc.aio.EOF:
                return
    except asyncio.CancelledError:
        responses.put_nowait(grpc.aio.EOF)  # the call was cancelled: the watch was dropped
    except Exception as err:
        responses.put_nowait(err)


class EtcdStorage(Storage):
    """A :class:`Storage` on etcd v3 (see the module docstring)."""

    def __init__(self, endpoints: Sequence[str], prefix: str = LOGICAL_ROOT) -> None:
        if not endpoints:
            raise ValueError("at least one etcd endpoint is required")
        self._targets = [_target(url) for url in endpoints]
        self._channels = [
            grpc.aio.insecure_channel(target, options=_CHANNEL_OPTIONS) for target in self._targets
        ]
        self._kv = [rpc.KVStub(channel) for channel in self._channels]
        self._watch = [rpc.WatchStub(channel) for channel in self._channels]
        self._lease = [rpc.LeaseStub(channel) for channel in self._channels]
        #: The endpoint calls go to until it fails.
        self._current = 0
        self._prefix = prefix.rstrip("/")
        self._prefix_bytes = self._prefix.encode()
        #: TTL -> (lease id, monotonic time it stops being reused).
        self._leases: dict[int, tuple[int, float]] = {}
        self._lease_lock = asyncio.Lock()
        self._watches: set[EtcdWatch] = set()
        self._closed = False

    @classmethod
    async def connect(cls, endpoints: Sequence[str], *, prefix: str = LOGICAL_ROOT) -> EtcdStorage:
        """A store on ``endpoints`` (URLs such as ``http://127.0.0.1:2379``).

        Raises :class:`StorageUnavailableError` when none answers in
        :data:`OPERATION_TIMEOUT` seconds.
        """
        store = cls(endpoints, prefix)
        try:
            await store.current_revision()
        except BaseException:
            await store.close()
            raise
        return store

    # -- keys ----------------------------------------------------------------

    def _to_etcd(self, key: str) -> bytes:
        """The etcd key of a logical key or key prefix."""
        if key.startswith(LOGICAL_ROOT):
            return (self._prefix + key[len(LOGICAL_ROOT) :]).encode()
        if LOGICAL_ROOT.startswith(key):
            # A prefix of the root itself ("" lists everything): every key of ours.
            return self._prefix_bytes + b"/"
        raise ValueError(f"storage keys start with {LOGICAL_ROOT}: {key!r}")

    def _from_etcd(self, key: bytes) -> str:
        return LOGICAL_ROOT + key[len(self._prefix_bytes) :].decode()

    def _keyvalue(self, kv: Any) -> KeyValue:
        return KeyValue(
            self._from_etcd(kv.key), kv.value, int(kv.create_revision), int(kv.mod_revision)
        )

    def _event(self, event: Any) -> WatchEvent:
        kv = event.kv
        revision = int(kv.mod_revision)
        prev = self._keyvalue(event.prev_kv) if event.HasField("prev_kv") else None
        if event.type == rpc.Event.DELETE:
            # etcd's delete event carries only the key: the last value is prev_kv's.
            last = KeyValue(
                self._from_etcd(kv.key),
                prev.value if prev else b"",
                prev.create_revision if prev else 0,
                revision,
            )
            return WatchEvent(EventType.DELETED, revision, last, prev)
        current = self._keyvalue(kv)
        if kv.create_revision == kv.mod_revision:
            return WatchEvent(EventType.CREATED, revision, current)
        return WatchEvent(EventType.UPDATED, revision, current, prev)

    # -- calls ---------------------------------------------------------------

    def _failed_endpoint(self) -> None:
        """Move on to the next endpoint."""
        self._current = (self._current + 1) % len(self._channels)

    async def _call(
        self,
        call: Callable[[int, float], Awaitable[_T]],
        *,
        write: bool = False,
        what: str = "request",
    ) -> _T:
        """Run ``call(endpoint index, timeout)``, failing over between endpoints.

        See the module docstring for which failures are retried.
        """
        if self._closed:
            raise RuntimeError("storage is closed")
        deadline = time.monotonic() + OPERATION_TIMEOUT
        last: grpc.aio.AioRpcError | None = None
        for attempt in itertools.count():
            if attempt and attempt % len(self._channels) == 0:
                # Every endpoint failed once in this round: pause before the next.
                await asyncio.sleep(min(RETRY_PAUSE, max(deadline - time.monotonic(), 0)))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            index = self._current
            if not write and len(self._channels) > 1:
                # A member that hangs (stopped, cut off) must not take a read's
                # whole budget: half of it, and the next member gets the rest.
                remaining = min(remaining, OPERATION_TIMEOUT / 2)
            try:
                return await call(index, remaining)
            except grpc.aio.AioRpcError as err:
                if not _retryable(err):
                    raise
                last = err
                if write and not _unapplied(err):
                    break
                if index == self._current:
                    self._failed_endpoint()
            except TimeoutError:  # a watch not created in time (EtcdWatch._open)
                if index == self._current:
                    self._failed_endpoint()
        detail = f": {last.code().name} {last.details()}" if last is not None else ""
        raise StorageUnavailableError(f"etcd {what} failed{detail}")

    async def _range(self, request: Any) -> Any:
        return await self._call(
            lambda i, timeout: self._kv[i].Range(request, timeout=timeout), what="range"
        )

    # -- reads ---------------------------------------------------------------

    async def get(self, key: str) -> KeyValue | None:
        response = await self._range(rpc.RangeRequest(key=self._to_etcd(key)))
        return self._keyvalue(response.kvs[0]) if response.kvs else None

    async def list(
        self,
        prefix: str,
        *,
        revision: int = 0,
        start_key: str | None = None,
        limit: int = 0,
    ) -> ListResult:
        key = self._to_etcd(prefix)
        start = key
        if start_key is not None:
            start = max(self._to_etcd(start_key), key)
        request = rpc.RangeRequest(
            key=start, range_end=_prefix_end(key), revision=revision, limit=max(limit, 0)
        )
        try:
            response = await self._range(request)
        except grpc.aio.AioRpcError as err:
            raise await self._revision_error(err, revision) from err
        kvs = [self._keyvalue(kv) for kv in response.kvs]
        more = bool(response.more)
        remaining = int(response.count) - len(kvs) if more else 0
        at = revision or int(response.header.revision)
        return ListResult(kvs, at, more, remaining)

    async def _revision_error(self, err: grpc.aio.AioRpcError, revision: int) -> Exception:
        """The storage error for etcd's answer to a read at ``revision``."""
        details = err.details() or ""
        if _COMPACTED in details:
            return ExpiredError(revision, await self._compacted_revision())
        if _FUTURE in details:
            return FutureRevisionError(revision, await self.current_revision())
        return err

    async def _compacted_revision(self) -> int:
        """etcd's compacted revision: a watch from revision 1 is cancelled with it.

        Only called once a read was refused as compacted, so the revision is
        known to be above 1 and the cancel follows the watch's creation.
        """

        async def probe(index: int, timeout: float) -> int:
            request = rpc.WatchRequest(
                create_request=rpc.WatchCreateRequest(
                    key=self._prefix_bytes + b"/", range_end=b"\x00", start_revision=1
                )
            )
            call = self._watch[index].Watch(iter([request]), timeout=timeout)
            try:
                async for response in call:
                    if response.compact_revision:
                        return int(response.compact_revision)
                    if response.events:  # not compacted after all
                        return 0
            finally:
                call.cancel()
            return 0

        return await self._call(probe, what="watch")

    async def current_revision(self) -> int:
        response = await self._range(
            rpc.RangeRequest(key=self._prefix_bytes + b"/", limit=1, keys_only=True)
        )
        return int(response.header.revision)

    # -- writes --------------------------------------------------------------

    async def _txn(self, request: Any) -> Any:
        return await self._call(
            lambda i, timeout: self._kv[i].Txn(request, timeout=timeout), write=True, what="txn"
        )

    async def _put_txn(self, ttl: int, build: Callable[[int], Any]) -> Any:
        """Run the transaction ``build(lease id)`` (lease 0 without a TTL).

        A reused lease that etcd no longer knows (revoked by hand, or an etcd
        restored from another data set) is forgotten and the write retried
        once with a new one; etcd refuses such a put without applying it.
        """
        if ttl <= 0:
            return await self._txn(build(0))
        lease = await self._lease_for(ttl)
        try:
            return await self._txn(build(lease))
        except grpc.aio.AioRpcError as err:
            if _LEASE_NOT_FOUND not in (err.details() or ""):
                raise
            if self._leases.get(ttl, (None,))[0] == lease:
                del self._leases[ttl]
            return await self._txn(build(await self._lease_for(ttl)))

    async def create(self, key: str, value: bytes, *, ttl: int = 0) -> KeyValue:
        etcd_key = self._to_etcd(key)
        response = await self._put_txn(
            ttl,
            lambda lease: rpc.TxnRequest(
                compare=[
                    rpc.Compare(
                        key=etcd_key,
                        target=rpc.Compare.CREATE,
                        result=rpc.Compare.EQUAL,
                        create_revision=0,
                    )
                ],
                success=[_put(etcd_key, value, lease)],
            ),
        )
        if not response.succeeded:
            raise KeyExistsError(key)
        revision = int(response.header.revision)
        return KeyValue(key, value, revision, revision)

    def _guarded(self, key: bytes, expected: int, op: Any) -> Any:
        """A transaction: ``op`` if the key's mod_revision is ``expected``, else read it."""
        return rpc.TxnRequest(
            compare=[
                rpc.Compare(
                    key=key, target=rpc.Compare.MOD, result=rpc.Compare.EQUAL, mod_revision=expected
                )
            ],
            success=[op],
            failure=[rpc.RequestOp(request_range=rpc.RangeRequest(key=key))],
        )

    def _refused(self, key: str, response: Any) -> StorageError:
        """The error of a guarded transaction whose compare failed."""
        kvs = response.responses[0].response_range.kvs
        if not kvs:
            return KeyNotFoundError(key)
        return ConflictError(key, self._keyvalue(kvs[0]))

    async def update(
        self, key: str, value: bytes, expected_revision: int, *, ttl: int = 0
    ) -> KeyValue:
        etcd_key = self._to_etcd(key)
        if expected_revision <= 0:
            # mod_revision == 0 would match a missing key and create it.
            current = await self.get(key)
            if current is None:
                raise KeyNotFoundError(key)
            raise ConflictError(key, current)
        response = await self._put_txn(
            ttl,
            lambda lease: self._guarded(
                etcd_key, expected_revision, _put(etcd_key, value, lease, prev_kv=True)
            ),
        )
        if not response.succeeded:
            raise self._refused(key, response)
        prev = response.responses[0].response_put.prev_kv
        return KeyValue(key, value, int(prev.create_revision), int(response.header.revision))

    async def delete(self, key: str, expected_revision: int | None = None) -> tuple[KeyValue, int]:
        etcd_key = self._to_etcd(key)
        op = rpc.RequestOp(request_delete_range=rpc.DeleteRangeRequest(key=etcd_key, prev_kv=True))
        if expected_revision is None:
            request = rpc.TxnRequest(success=[op])
        elif expected_revision <= 0:
            current = await self.get(key)
            if current is None:
                raise KeyNotFoundError(key)
            raise ConflictError(key, current)
        else:
            request = self._guarded(etcd_key, expected_revision, op)
        response = await self._txn(request)
        if not response.succeeded:
            raise self._refused(key, response)
        deleted = response.responses[0].response_delete_range
        if not deleted.prev_kvs:
            raise KeyNotFoundError(key)
        return self._keyvalue(deleted.prev_kvs[0]), int(response.header.revision)

    # -- leases --------------------------------------------------------------

    async def _lease_for(self, ttl: int) -> int:
        """A lease that expires ``ttl`` seconds from now, or up to 5% (≤ 60 s) later."""
        now = time.monotonic()
        cached = self._leases.get(ttl)
        if cached is not None and now < cached[1]:
            return cached[0]
        async with self._lease_lock:
            cached = self._leases.get(ttl)
            now = time.monotonic()
            if cached is not None and now < cached[1]:
                return cached[0]
            window = min(ttl * 0.05, 60.0)
            granted = int(ttl + window)
            request = rpc.LeaseGrantRequest(TTL=granted)
            # Granting is safe to retry: a lease granted twice just expires unused.
            response = await self._call(
                lambda i, timeout: self._lease[i].LeaseGrant(request, timeout=timeout),
                what="lease grant",
            )
            lease_id = int(response.ID)
            self._leases[ttl] = (lease_id, now + (granted - ttl))
            return lease_id

    # -- compaction ----------------------------------------------------------

    async def compact(self, revision: int) -> None:
        request = rpc.CompactionRequest(revision=revision)
        try:
            await self._call(
                lambda i, timeout: self._kv[i].Compact(request, timeout=timeout),
                what="compaction",
            )
        except grpc.aio.AioRpcError as err:
            details = err.details() or ""
            if _COMPACTED in details:
                return  # already compacted at or past it
            if _FUTURE in details:
                raise FutureRevisionError(revision, await self.current_revision()) from err
            raise

    async def compact_round(self, state: CompactionRound) -> None:
        """Claim this round on :data:`COMPACT_REV_KEY` and compact, unless another
        server claimed it (see the module docstring)."""
        request = rpc.TxnRequest(
            compare=[
                rpc.Compare(
                    key=COMPACT_REV_KEY,
                    target=rpc.Compare.VERSION,
                    result=rpc.Compare.EQUAL,
                    version=state.claimed,
                )
            ],
            success=[_put(COMPACT_REV_KEY, str(state.revision).encode(), 0)],
            failure=[rpc.RequestOp(request_range=rpc.RangeRequest(key=COMPACT_REV_KEY))],
        )
        # Unknown outcome (StorageUnavailableError): the state stays, and the next
        # round's compare tells whether this write went through.
        response = await self._txn(request)
        current = int(response.header.revision)
        if not response.succeeded:
            kvs = response.responses[0].response_range.kvs
            # Someone else's round: take up its count (0 if the key was deleted).
            state.claimed = int(kvs[0].version) if kvs else 0
            state.revision = current
            if kvs and kvs[0].value.isdigit():
                state.compacted = int(kvs[0].value) or state.compacted
            return
        await self._compact_claimed(state, current)

    # -- watch ---------------------------------------------------------------

    async def watch(
        self, prefix: str, revision: int, *, progress_interval: float | None = None
    ) -> Watch:
        if self._closed:
            raise RuntimeError("storage is closed")
        key = self._to_etcd(prefix)
        if revision:
            # etcd creates a watch from a compacted revision and cancels it right
            # after; a read at the watch's first revision tells it beforehand.
            probe = rpc.RangeRequest(key=key, revision=revision + 1, limit=1, count_only=True)
            try:
                await self._range(probe)
            except grpc.aio.AioRpcError as err:
                error = await self._revision_error(err, revision)
                if not isinstance(error, FutureRevisionError):
                    raise error from err
        else:
            revision = await self.current_revision()
        watch = EtcdWatch(self, prefix, revision, progress_interval)
        await self._call(watch._open, what="watch")
        self._watches.add(watch)
        return watch

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for watch in list(self._watches):
            await watch.close()
        for channel in self._channels:
            await channel.close()


def _target(url: str) -> str:
    """The gRPC target (``host:port``) of an endpoint URL such as ``http://127.0.0.1:2379``."""
    if "://" not in url:
        return url
    parts = urlsplit(url)
    if parts.scheme != "http":
        raise ValueError(f"only http:// etcd endpoints are supported: {url}")
    if parts.hostname is None:
        raise ValueError(f"etcd endpoint without a host: {url}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{parts.port or 2379}"
