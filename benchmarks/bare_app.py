"""The ceiling kapi is measured against: a bare ASGI app on kapi's exact server stack.

Every kapi request pays for uvicorn + uvloop + httptools (HTTP parsing, the
ASGI event dicts, the socket writes) before kapi's own code runs.  This app
pays only that: GET answers a fixed JSON body, POST reads the whole request
body and answers 201 with a fixed body.  ``kapi GET rate / bare GET rate`` is
therefore the share of the stack's capacity that kapi keeps, which is
meaningful across machines where absolute req/s are not.

The uvicorn flags are copied from :func:`kapi.server.serve` (uvloop, httptools,
lifespan on, log level warning, no access log) so that the only difference
between the two servers is the application.

Run standalone::

    python benchmarks/bare_app.py --port 8080 [--body-file response.json]
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def default_body() -> bytes:
    """A ConfigMap GET response of the shape ``run.py`` creates (about 600 bytes).

    ``run.py`` passes kapi's real response instead (``--body-file``) so that
    both servers write the same number of bytes; this default keeps the app
    usable on its own.
    """
    return orjson.dumps(
        {
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {
                "name": "x",
                "namespace": "bench",
                "uid": "0b5e5a54-8c1e-4f43-9a3b-5d3f0a3c2e11",
                "resourceVersion": "12",
                "creationTimestamp": "2025-01-01T00:00:00Z",
                "labels": {"app": "bench", "tier": "backend"},
                "managedFields": [],
            },
            "data": {f"key-{i}": "v" * 40 for i in range(8)},
        }
    )


class BareApp:
    """GET: 200 + fixed body; any other method: drain the body, 201 + fixed body."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        # Built once: the point is to measure the server stack, not this app.
        self.headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            # kapi runs with lifespan="on"; answer it the same way.
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        status = 200
        if scope["method"] != "GET":
            # Read the whole body, as kapi must before it can decode it.
            chunks = []
            while True:
                message = await receive()
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    break
            b"".join(chunks)
            status = 201
        await send({"type": "http.response.start", "status": status, "headers": self.headers})
        await send({"type": "http.response.body", "body": self.body})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--body-file", type=Path, help="the response body to serve (default: a ConfigMap)"
    )
    args = parser.parse_args(argv)
    body = args.body_file.read_bytes() if args.body_file else default_body()

    import uvicorn

    from kapi.server import UVICORN_OPTIONS

    # The same server stack and flags as ``kapi serve``.
    uvicorn.run(BareApp(body), host=args.host, port=args.port, **UVICORN_OPTIONS)


if __name__ == "__main__":
    main()
