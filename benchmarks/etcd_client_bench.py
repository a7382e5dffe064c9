"""Which etcd v3 client the etcd storage backend should use, measured side by side.

Starts one real etcd (tests/helpers/etcd.py) and, under uvloop as kapi runs,
drives the same operations through every candidate that can be imported:

* ``kapi-etcd``: kapi's ``EtcdStorage`` itself, for what it adds to the transport;
* ``grpc-raw``: ``grpc.aio`` calls on the generated etcd stubs that the
  ``aetcd`` package ships (``aetcd.rpc``), with no client layer in between:
  what kapi's backend does;
* ``aetcd``: the ``aetcd`` client's own API (one endpoint per client);
* ``etcd3aio``: the ``etcd3aio`` client's own API;
* ``gateway``: etcd's JSON gateway (``/v3/kv/range``, ``/v3/kv/txn``,
  ``/v3/watch``) over ``httpx``, base64 keys and values.

Operations: ``get`` (a range of one key), ``txn-create`` (compare
create_revision == 0, then put, else range: kapi's create), ``txn-update``
(compare mod_revision, then put, else range: kapi's update), ``range-1000``
(one range of 1000 keys of about 300 bytes) and ``watch`` (a put, then the
time until a prefix watch with prev_kv delivers its event).  Latency is the
median of sequential calls; throughput is with 32 concurrent callers.

    PYTHONPATH=src python benchmarks/etcd_client_bench.py \\
        [--candidates grpc-raw,aetcd,etcd3aio,gateway] [--path etcd3aio=/tmp/etcd3aio]

Each candidate runs in a process of its own (see :func:`main`); ``--path``
lets one try a package installed with ``pip install --target DIR`` without
installing it.  Candidates whose package is missing are reported and skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import httpx
import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.etcd import EtcdServer

VALUE = b"x" * 300
SEQUENTIAL = 400
CONCURRENT_OPS = 2000
CONCURRENCY = 32
RANGE_KEYS = 1000
RANGE_REPEAT = 30
WATCH_EVENTS = 300


def prefix_end(prefix: bytes) -> bytes:
    return prefix[:-1] + bytes([prefix[-1] + 1])


class Candidate(Protocol):
    name: str

    async def get(self, key: bytes) -> None: ...
    async def create(self, key: bytes, value: bytes) -> int: ...
    async def update(self, key: bytes, value: bytes, revision: int) -> int: ...
    async def range(self, prefix: bytes) -> int: ...
    async def put(self, key: bytes, value: bytes) -> None: ...
    def watch(self, prefix: bytes) -> AsyncIterator[int]: ...
    async def close(self) -> None: ...


class GrpcRaw:
    name = "grpc-raw"

    def __init__(self, endpoint: str) -> None:
        from aetcd import rpc

        self.rpc = rpc
        self.channel = rpc.insecure_channel(endpoint.removeprefix("http://"))
        self.kv = rpc.KVStub(self.channel)
        self.watch_stub = rpc.WatchStub(self.channel)

    async def get(self, key: bytes) -> None:
        await self.kv.Range(self.rpc.RangeRequest(key=key), timeout=5)

    async def create(self, key: bytes, value: bytes) -> int:
        rpc = self.rpc
        response = await self.kv.Txn(
            rpc.TxnRequest(
                compare=[
                    rpc.Compare(
                        key=key,
                        target=rpc.Compare.CREATE,
                        result=rpc.Compare.EQUAL,
                        create_revision=0,
                    )
                ],
                success=[rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))],
                failure=[rpc.RequestOp(request_range=rpc.RangeRequest(key=key))],
            ),
            timeout=5,
        )
        assert response.succeeded
        return int(response.header.revision)

    async def update(self, key: bytes, value: bytes, revision: int) -> int:
        rpc = self.rpc
        response = await self.kv.Txn(
            rpc.TxnRequest(
                compare=[
                    rpc.Compare(
                        key=key,
                        target=rpc.Compare.MOD,
                        result=rpc.Compare.EQUAL,
                        mod_revision=revision,
                    )
                ],
                success=[rpc.RequestOp(request_put=rpc.PutRequest(key=key, value=value))],
                failure=[rpc.RequestOp(request_range=rpc.RangeRequest(key=key))],
            ),
            timeout=5,
        )
        assert response.succeeded
        return int(response.header.revision)

    async def range(self, prefix: bytes) -> int:
        response = await self.kv.Range(
            self.rpc.RangeRequest(key=prefix, range_end=prefix_end(prefix)), timeout=5
        )
        return len(response.kvs)

    async def put(self, key: bytes, value: bytes) -> None:
        await self.kv.Put(self.rpc.PutRequest(key=key, value=value), timeout=5)

    async def watch(self, prefix: bytes) -> AsyncIterator[int]:
        rpc = self.rpc
        requests: asyncio.Queue[Any] = asyncio.Queue()
        requests.put_nowait(
            rpc.WatchRequest(
                create_request=rpc.WatchCreateRequest(
                    key=prefix, range_end=prefix_end(prefix), prev_kv=True
                )
            )
        )

        async def feed() -> AsyncIterator[Any]:
            while True:
                yield await requests.get()

        call = self.watch_stub.Watch(feed())
        try:
            async for response in call:
                if response.created:
                    yield 0
                for event in response.events:
                    yield int(event.kv.mod_revision)
        finally:
            call.cancel()

    async def close(self) -> None:
        await self.channel.close()


class Aetcd:
    name = "aetcd"

    def __init__(self, endpoint: str) -> None:
        import aetcd

        host, port = endpoint.removeprefix("http://").rsplit(":", 1)
        self.client = aetcd.Client(host=host, port=int(port), timeout=5)

    async def get(self, key: bytes) -> None:
        await self.client.get(key)

    async def create(self, key: bytes, value: bytes) -> int:
        t = self.client.transactions
        ok, _ = await self.client.transaction(
            compare=[t.create(key) == 0], success=[t.put(key, value)], failure=[t.get(key)]
        )
        assert ok
        return 0  # the API hides the header revision: update reads it back with get

    async def update(self, key: bytes, value: bytes, revision: int) -> int:
        if revision == 0:
            current = await self.client.get(key)
            assert current is not None
            revision = current.mod_revision
        t = self.client.transactions
        ok, _ = await self.client.transaction(
            compare=[t.mod(key) == revision], success=[t.put(key, value)], failure=[t.get(key)]
        )
        assert ok
        return 0

    async def range(self, prefix: bytes) -> int:
        return len(list(await self.client.get_prefix(prefix)))

    async def put(self, key: bytes, value: bytes) -> None:
        await self.client.put(key, value)

    async def watch(self, prefix: bytes) -> AsyncIterator[int]:
        watch = await self.client.watch_prefix(prefix, prev_kv=True)
        yield 0
        async for event in watch:
            yield int(event.kv.mod_revision)

    async def close(self) -> None:
        await self.client.close()


class Etcd3aio:
    name = "etcd3aio"

    def __init__(self, endpoint: str) -> None:
        from etcd3aio import Etcd3Client

        self.client = Etcd3Client([endpoint.removeprefix("http://")])

    async def start(self) -> None:
        await self.client.connect()

    async def get(self, key: bytes) -> None:
        await self.client.kv.get(key)

    async def create(self, key: bytes, value: bytes) -> int:
        kv = self.client.kv
        response = await kv.txn(
            compare=[kv.txn_compare_create_revision(key, 0)],
            success=[kv.txn_op_put(key, value)],
            failure=[kv.txn_op_get(key)],
        )
        assert response.succeeded
        return int(response.header.revision)

    async def update(self, key: bytes, value: bytes, revision: int) -> int:
        from etcd3aio._protobuf import Compare  # no mod_revision helper in its API

        kv = self.client.kv
        mod = Compare(key=key, target=Compare.MOD, result=Compare.EQUAL, mod_revision=revision)
        response = await kv.txn(
            compare=[mod],
            success=[kv.txn_op_put(key, value)],
            failure=[kv.txn_op_get(key)],
        )
        assert response.succeeded
        return int(response.header.revision)

    async def range(self, prefix: bytes) -> int:
        response = await self.client.kv.get(prefix, range_end=prefix_end(prefix))
        return len(response.kvs)

    async def put(self, key: bytes, value: bytes) -> None:
        await self.client.kv.put(key, value)

    async def watch(self, prefix: bytes) -> AsyncIterator[int]:
        async for response in self.client.watch.watch(
            prefix, range_end=prefix_end(prefix), prev_kv=True
        ):
            if response.created:
                yield 0
            for event in response.events:
                yield int(event.kv.mod_revision)

    async def close(self) -> None:
        await self.client.close()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


class Gateway:
    name = "gateway"

    def __init__(self, endpoint: str) -> None:
        self.client = httpx.AsyncClient(
            base_url=endpoint, timeout=5, limits=httpx.Limits(max_connections=CONCURRENCY)
        )

    async def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = await self.client.post(path, content=json.dumps(body))
        response.raise_for_status()
        return response.json()  # type: ignore[no-any-return]

    async def get(self, key: bytes) -> None:
        result = await self._call("/v3/kv/range", {"key": b64(key)})
        for kv in result.get("kvs", ()):
            base64.b64decode(kv["value"])

    async def _txn(self, key: bytes, value: bytes, target: str, field: str, rev: int) -> int:
        result = await self._call(
            "/v3/kv/txn",
            {
                "compare": [
                    {"key": b64(key), "target": target, "result": "EQUAL", field: str(rev)}
                ],
                "success": [{"request_put": {"key": b64(key), "value": b64(value)}}],
                "failure": [{"request_range": {"key": b64(key)}}],
            },
        )
        assert result.get("succeeded")
        return int(result["header"]["revision"])

    async def create(self, key: bytes, value: bytes) -> int:
        return await self._txn(key, value, "CREATE", "create_revision", 0)

    async def update(self, key: bytes, value: bytes, revision: int) -> int:
        return await self._txn(key, value, "MOD", "mod_revision", revision)

    async def range(self, prefix: bytes) -> int:
        result = await self._call(
            "/v3/kv/range", {"key": b64(prefix), "range_end": b64(prefix_end(prefix))}
        )
        kvs = result.get("kvs", [])
        for kv in kvs:
            base64.b64decode(kv["value"])
        return len(kvs)

    async def put(self, key: bytes, value: bytes) -> None:
        await self._call("/v3/kv/put", {"key": b64(key), "value": b64(value)})

    async def watch(self, prefix: bytes) -> AsyncIterator[int]:
        body = {
            "create_request": {
                "key": b64(prefix),
                "range_end": b64(prefix_end(prefix)),
                "prev_kv": True,
            }
        }
        base = str(self.client.base_url)
        async with (
            httpx.AsyncClient(base_url=base, timeout=None) as c,
            c.stream("POST", "/v3/watch", content=json.dumps(body)) as response,
        ):
            async for line in response.aiter_lines():
                if not line.strip():
                    continue
                result = json.loads(line)["result"]
                if result.get("created"):
                    yield 0
                for event in result.get("events", ()):
                    yield int(event["kv"]["mod_revision"])

    async def close(self) -> None:
        await self.client.aclose()


class KapiStore:
    """kapi's own backend (``EtcdStorage``) on the chosen transport: what it adds."""

    name = "kapi-etcd"

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    async def start(self) -> None:
        from kapi.storage.etcd import EtcdStorage

        self.store = await EtcdStorage.connect([self.endpoint], prefix="/kapi-bench")

    @staticmethod
    def _key(key: bytes) -> str:
        return "/registry" + key.decode()

    async def get(self, key: bytes) -> None:
        await self.store.get(self._key(key))

    async def create(self, key: bytes, value: bytes) -> int:
        return (await self.store.create(self._key(key), value)).mod_revision

    async def update(self, key: bytes, value: bytes, revision: int) -> int:
        return (await self.store.update(self._key(key), value, revision)).mod_revision

    async def range(self, prefix: bytes) -> int:
        return len((await self.store.list(self._key(prefix))).kvs)

    async def put(self, key: bytes, value: bytes) -> None:
        await self.store.create(self._key(key), value)

    async def watch(self, prefix: bytes) -> AsyncIterator[int]:
        watch = await self.store.watch(self._key(prefix), 0)
        yield 0
        async for event in watch:
            yield event.revision

    async def close(self) -> None:
        await self.store.close()


FACTORIES: dict[str, Callable[[str], Any]] = {
    "kapi-etcd": KapiStore,
    "grpc-raw": GrpcRaw,
    "aetcd": Aetcd,
    "etcd3aio": Etcd3aio,
    "gateway": Gateway,
}


async def sequential(call: Callable[[int], Awaitable[object]], count: int) -> float:
    """Median seconds per call of ``count`` calls one after another."""
    times = []
    for i in range(count):
        start = time.perf_counter()
        await call(i)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def concurrent(call: Callable[[int], Awaitable[object]], count: int) -> float:
    """Calls per second with CONCURRENCY callers sharing ``count`` calls."""
    counter = iter(range(count))

    async def worker() -> None:
        for i in counter:
            await call(i)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return count / (time.perf_counter() - start)


async def measure(candidate: Candidate, run: int) -> dict[str, tuple[float, float | None]]:
    base = f"/bench/{candidate.name}/{run}/".encode()
    results: dict[str, tuple[float, float | None]] = {}

    key = base + b"get"
    await candidate.create(key, VALUE)
    results["get"] = (
        await sequential(lambda i: candidate.get(key), SEQUENTIAL),
        await concurrent(lambda i: candidate.get(key), CONCURRENT_OPS),
    )

    revisions: dict[bytes, int] = {}

    async def create(prefix: bytes, i: int) -> None:
        k = prefix + b"%06d" % i
        revisions[k] = await candidate.create(k, VALUE)

    results["txn-create"] = (
        await sequential(lambda i: create(base + b"seq/", i), SEQUENTIAL),
        await concurrent(lambda i: create(base + b"conc/", i), CONCURRENT_OPS),
    )

    async def update(prefix: bytes, i: int) -> None:
        k = prefix + b"%06d" % i
        revisions[k] = await candidate.update(k, VALUE, revisions[k])

    results["txn-update"] = (
        await sequential(lambda i: update(base + b"seq/", i), SEQUENTIAL),
        await concurrent(lambda i: update(base + b"conc/", i), CONCURRENT_OPS),
    )

    range_prefix = base + b"range/"
    await concurrent(lambda i: candidate.put(range_prefix + b"%06d" % i, VALUE), RANGE_KEYS)
    assert await candidate.range(range_prefix) == RANGE_KEYS
    results["range-1000"] = (
        await sequential(lambda i: candidate.range(range_prefix), RANGE_REPEAT),
        None,
    )

    watch_prefix = base + b"watch/"
    events = candidate.watch(watch_prefix)
    assert await anext(events) == 0  # the watch is established

    async def put_and_see(i: int) -> None:
        await candidate.put(watch_prefix + b"%06d" % i, VALUE)
        await anext(events)

    results["watch"] = (await sequential(put_and_see, WATCH_EVENTS), None)
    with contextlib.suppress(Exception):
        await events.aclose()  # type: ignore[attr-defined]
    return results


async def measure_one(name: str, endpoint: str, run: int) -> None:
    """In a process of its own: measure one candidate and print its figures as JSON."""
    try:
        candidate = FACTORIES[name](endpoint)
    except ImportError as err:
        print(json.dumps({"error": f"not installed ({err})"}))
        return
    if hasattr(candidate, "start"):
        await candidate.start()
    try:
        print(json.dumps(await measure(candidate, run)))
    finally:
        await candidate.close()


def main(names: list[str], paths: dict[str, str]) -> None:
    """One etcd; each candidate measured in a subprocess of its own.

    Separate processes because the candidates cannot share one: aetcd and
    etcd3aio both register etcd's protobuf messages in protobuf's default
    descriptor pool, and the second import fails with "duplicate symbol".
    """
    table: dict[str, dict[str, list[float | None]]] = {}
    with tempfile.TemporaryDirectory() as workdir:
        server = EtcdServer.launch(Path(workdir))
        try:
            for run, name in enumerate(names):
                env = dict(os.environ)
                if name in paths:
                    env["PYTHONPATH"] = os.pathsep.join(
                        filter(None, [paths[name], env.get("PYTHONPATH", "")])
                    )
                done = subprocess.run(
                    [sys.executable, __file__, "--one", name, server.client_url, str(run)],
                    capture_output=True,
                    text=True,
                    check=False,
                    env=env,
                )
                lines = done.stdout.strip().splitlines()
                result = json.loads(lines[-1]) if lines else {"error": done.stderr[-500:]}
                if "error" in result:
                    print(f"{name}: {result['error']}")
                else:
                    table[name] = result
        finally:
            server.close()
    ops = ["get", "txn-create", "txn-update", "range-1000", "watch"]
    print(f"one etcd {etcd_version()}, uvloop; latency: median of sequential calls;")
    print(f"throughput: ops/s with {CONCURRENCY} concurrent callers\n")
    print(f"{'operation':<12}" + "".join(f"{n:>22}" for n in table))
    for op in ops:
        cells = []
        for name in table:
            latency, rate = table[name][op]
            assert latency is not None
            cell = f"{latency * 1e6:8.0f}us"
            cell += f" {rate:7.0f}/s" if rate is not None else " " * 10
            cells.append(f"{cell:>22}")
        print(f"{op:<12}" + "".join(cells))


def etcd_version() -> str:
    out = subprocess.run(["etcd", "--version"], capture_output=True, text=True, check=False)
    return out.stdout.split("\n")[0].removeprefix("etcd Version: ")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", default=",".join(FACTORIES))
    parser.add_argument(
        "--path",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="put DIR first on the import path of candidate NAME (e.g. a pip --target dir)",
    )
    parser.add_argument(
        "--one", nargs=3, metavar=("NAME", "ENDPOINT", "RUN"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.one:
        name, endpoint, run = args.one
        uvloop.run(measure_one(name, endpoint, int(run)))
    else:
        main(args.candidates.split(","), dict(p.split("=", 1) for p in args.path))
