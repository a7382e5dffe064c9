"""kapi's own cost per request, without sockets: the ASGI app called in a loop.

``run.py`` measures what a client sees, which on a shared 2-core VM moves by
tens of percent from one round to the next and includes costs that are not
kapi's (uvicorn, the event loop, loopback TCP, waking the client up).  This
calls ``APIServerApp`` (and ``BareApp`` for comparison) directly with
pre-built ASGI messages, so the number is the app's own CPU per request
(process CPU time, user and system, so time spent descheduled by other
processes is not counted): steady enough (best of several repetitions) to
see a 5% change, which is what an optimisation of src/ needs.  It is a
diagnostic, not a replacement for ``run.py``: no HTTP parsing, no socket
writes, hot caches.

    python benchmarks/app_only.py [--requests 3000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import run as bench
from bare_app import BareApp

Body = Callable[[int], bytes]


async def call(app: Any, method: str, path: str, body: bytes) -> tuple[int, int]:
    """One request through ``app``; its status and response body size."""
    headers = [(b"host", b"bench"), (b"content-type", b"application/json")]
    if body:
        headers.append((b"content-length", str(len(body)).encode()))
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": b"",
        "headers": headers,
    }
    status = size = 0

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status, size
        if message["type"] == "http.response.start":
            status = message["status"]
        else:
            size += len(message.get("body", b""))

    await app(scope, receive, send)
    # A served request ends with the event loop reading sockets again, which lets
    # background tasks (the informers admission reads) run; do the same.
    await asyncio.sleep(0)
    return status, size


def _configmap(name: str, seq: int = 0) -> bytes:
    obj = bench.configmap(name)
    if seq:
        obj["data"] = {**obj["data"], "seq": str(seq)}
    return json.dumps(obj).encode()


async def measure(requests: int, repeat: int) -> list[tuple[str, float, int]]:
    from kapi.server import APIServer, ServerConfig

    rows: list[tuple[str, float, int]] = []
    with tempfile.TemporaryDirectory(prefix="kapi-app-only-") as tmp:
        server = APIServer(ServerConfig(data_dir=Path(tmp)))
        await server.start()
        try:
            app = server.app()
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "bench"}}
            await call(app, "POST", "/api/v1/namespaces", json.dumps(namespace).encode())
            base = f"/api/v1/namespaces/{bench.NAMESPACE}/configmaps"
            await call(app, "POST", base, _configmap("x"))
            _, get_size = await call(app, "GET", f"{base}/x", b"")
            # Same response size as kapi's GET, as in run.py.
            bare = BareApp(b"x" * get_size)
            counter = iter(range(1, 1 << 62))
            cases: list[tuple[str, Any, str, Callable[[], str], Body | None]] = [
                ("bare GET", bare, "GET", lambda: "/", None),
                ("kapi GET", app, "GET", lambda: f"{base}/x", None),
                ("bare POST", bare, "POST", lambda: base, lambda i: _configmap(f"c-{i}")),
                ("kapi CREATE", app, "POST", lambda: base, lambda i: _configmap(f"c-{i}")),
                ("kapi UPDATE", app, "PUT", lambda: f"{base}/x", lambda i: _configmap("x", i)),
            ]
            for label, target, method, path, make in cases:
                best = float("inf")
                status = 0
                for _ in range(repeat):
                    bodies = [make(next(counter)) if make else b"" for _ in range(requests)]
                    url = path()
                    started = time.process_time()
                    for body in bodies:
                        status, _ = await call(target, method, url, body)
                    best = min(best, (time.process_time() - started) / requests)
                rows.append((label, best * 1e6, status))
        finally:
            await server.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000, help="requests per repetition")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions; the best is kept")
    args = parser.parse_args(argv)
    rows = asyncio.run(measure(args.requests, args.repeat))
    print(f"{'app only (no sockets)':<22}{'us/request':>11}{'status':>8}")
    for label, us, status in rows:
        print(f"{label:<22}{us:>11.1f}{status:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
