"""Fallback load generator for machines without ``wrk``: asyncio, raw sockets, keep-alive.

``run.py`` prefers wrk (C, one pre-built request per GET): a Python client
spends CPU per request that wrk does not, and on a 2-core machine that CPU
is taken from the server.  This client is as lean as Python gets (uvloop when
installed, one pre-encoded request for GETs, no HTTP library), runs in its
own process, and sends the same requests as the Lua scripts in ``wrk/``
(same bodies, same name scheme), then prints the same ``WRK_RESULT`` JSON
line, so ``run.py`` reads both the same way.  Its numbers at 16 clients are a
lower bound for the fast bare app, whose rate it may cap: ``run.py`` says so
in its output when it uses this fallback.

    python benchmarks/loadgen.py --port 8080 --connections 16 --duration 3 \\
        --kind create --path /api/v1/namespaces/bench/configmaps --prefix c1 --data '{"a":"b"}'
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections.abc import Callable

Builder = Callable[[int, int], bytes]

_HEADERS = "Host: {host}\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"


def _request(method: str, path: str, host: str, body: bytes = b"") -> bytes:
    head = f"{method} {path} HTTP/1.1\r\n"
    if method == "GET":
        return f"{head}Host: {host}\r\n\r\n".encode()
    return f"{head}{_HEADERS.format(host=host, length=len(body))}".encode() + body


def builder(kind: str, path: str, host: str, prefix: str, data: str, pool: int) -> Builder:
    """A function (connection id, request number) -> request bytes, mirroring wrk/*.lua."""
    if kind == "get":
        fixed = _request("GET", path, host)
        return lambda conn, n: fixed
    if kind == "create":

        def create(conn: int, n: int) -> bytes:
            body = (
                '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"'
                f'{prefix}-{conn}-{n}","labels":{{"app":"bench"}}}},"data":{data}}}'
            )
            return _request("POST", path, host, body.encode())

        return create
    if kind == "update":
        head = data[:-1]

        def update(conn: int, n: int) -> bytes:
            name = f"{prefix}-{(conn * 7919 + n) % pool}"
            body = (
                '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"'
                f'{name}","labels":{{"app":"bench"}}}},"data":{head},"seq":"{conn}-{n}"}}}}'
            )
            return _request("PUT", f"{path}/{name}", host, body.encode())

        return update
    raise ValueError(f"unknown kind {kind!r}")


async def _connection(
    host: str,
    port: int,
    conn: int,
    build: Builder,
    deadline: float,
    latencies: list[float],
    errors: dict[str, int],
    totals: list[int],
) -> None:
    """One keep-alive connection sending requests back to back until the deadline."""
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError:
        errors["connect"] += 1
        return
    n = 0
    clock = time.perf_counter
    try:
        while clock() < deadline:
            n += 1
            payload = build(conn, n)
            started = clock()
            writer.write(payload)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
                    break
            body = await reader.readexactly(length)
            latencies.append(clock() - started)
            totals[0] += len(head) + len(body)
            if not 200 <= status < 400:
                errors["status"] += 1
    except (OSError, asyncio.IncompleteReadError, ValueError):
        errors["read"] += 1
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def run(
    host: str, port: int, connections: int, duration: float, build: Builder
) -> dict[str, object]:
    """Drive ``connections`` clients for ``duration`` seconds; the result as wrk's done() has it."""
    latencies: list[float] = []
    errors = {"connect": 0, "read": 0, "write": 0, "status": 0, "timeout": 0}
    totals = [0]
    started = time.perf_counter()
    deadline = started + duration
    await asyncio.gather(
        *(
            _connection(host, port, i, build, deadline, latencies, errors, totals)
            for i in range(connections)
        )
    )
    elapsed = time.perf_counter() - started
    latencies.sort()

    def pct(p: float) -> int:
        if not latencies:
            return 0
        return round(latencies[min(len(latencies) - 1, int(len(latencies) * p / 100))] * 1e6)

    return {
        "requests": len(latencies),
        "duration_us": round(elapsed * 1e6),
        "bytes": totals[0],
        "errors": errors,
        "latency_us": {
            "mean": round(sum(latencies) / len(latencies) * 1e6, 1) if latencies else 0.0,
            "p50": pct(50),
            "p90": pct(90),
            "p99": pct(99),
            "max": round(latencies[-1] * 1e6) if latencies else 0,
        },
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--duration", type=float, default=3.0)
    parser.add_argument("--kind", choices=("get", "create", "update"), default="get")
    parser.add_argument("--path", default="/")
    parser.add_argument("--prefix", default="lg")
    parser.add_argument("--data", default="{}")
    parser.add_argument("--pool", type=int, default=1)
    args = parser.parse_args(argv)
    build = builder(
        args.kind, args.path, f"{args.host}:{args.port}", args.prefix, args.data, args.pool
    )
    try:
        import uvloop
    except ImportError:
        runner = asyncio.run
    else:
        runner = uvloop.run
    result = runner(run(args.host, args.port, args.connections, args.duration, build))
    print("WRK_RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
