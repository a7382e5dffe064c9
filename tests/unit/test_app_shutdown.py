"""The handler chain once shutdown has begun: 503 and Retry-After, as upstream's WithWaitGroup."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson

from kapi.endpoints.app import APIServerApp
from kapi.server import APIServer, ServerConfig


async def _call(app: APIServerApp, method: str, path: str, query: bytes = b"") -> dict[str, Any]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query,
        "headers": [(b"host", b"test")],
    }
    await app(scope, receive, send)
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return {"status": start["status"], "headers": dict(start["headers"]), "body": body}


def test_requests_after_shutdown_began_are_told_to_retry(tmp_path: Path) -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        server = APIServer(ServerConfig(data_dir=tmp_path))
        app = server.app()
        await server.start()
        try:
            before = await _call(app, "GET", "/api/v1/namespaces/default")
            server.stopping.set()
            during = await _call(app, "GET", "/api/v1/namespaces/default")
            ready = await _call(app, "GET", "/readyz")
        finally:
            await server.stop()
        return before, during, ready

    before, during, ready = asyncio.run(scenario())
    assert before["status"] == 200
    assert during["status"] == 503
    assert during["headers"][b"retry-after"] == b"1"
    status = orjson.loads(during["body"])
    assert (status["kind"], status["reason"], status["code"]) == (
        "Status",
        "ServiceUnavailable",
        503,
    )
    assert status["message"] == "apiserver is shutting down"
    assert ready["status"] == 500
    assert b"[-]shutdown failed: reason withheld" in ready["body"]
