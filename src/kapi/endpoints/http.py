"""A thin request/response layer over raw ASGI.

kapi speaks ASGI directly rather than through a web framework: the hot path
(a GET of one object) is a path split, a storage read and an orjson dump,
and every layer a framework adds shows up in the GET benchmark.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from kapi.apimachinery import errors

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

#: Upstream's limit on request bodies (3 MiB).
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024


class Request:
    __slots__ = ("_headers", "_query", "method", "path", "receive", "scope")

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.scope = scope
        self.receive = receive
        self.method: str = scope["method"]
        self.path: str = scope["path"]
        self._query: dict[str, str] | None = None
        self._headers: dict[str, str] | None = None

    @property
    def query(self) -> dict[str, str]:
        """Query parameters; the first value of a repeated one wins, as in Go's ``Get``."""
        if self._query is None:
            raw = self.scope.get("query_string", b"")
            self._query = (
                {
                    k: v[0]
                    for k, v in parse_qs(raw.decode("latin-1"), keep_blank_values=True).items()
                }
                if raw
                else {}
            )
        return self._query

    @property
    def headers(self) -> dict[str, str]:
        if self._headers is None:
            headers: dict[str, str] = {}
            for key, value in self.scope["headers"]:
                name = key.decode("latin-1")
                text = value.decode("latin-1")
                headers[name] = f"{headers[name]}, {text}" if name in headers else text
            self._headers = headers
        return self._headers

    async def body(self, limit: int = MAX_REQUEST_BODY_BYTES) -> bytes:
        """The whole body; over ``limit`` bytes is 413, as upstream's ``limitedReadBody``."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise errors.request_entity_too_large(f"limit is {limit}")
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        return b"".join(chunks)


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)


@dataclass
class StreamingResponse:
    """A response written chunk by chunk (watch): each chunk is flushed as it comes."""

    status: int
    chunks: AsyncGenerator[bytes]
    content_type: str = "application/json"
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)


async def send_response(
    send: Send,
    response: Response | StreamingResponse,
    extra: list[tuple[bytes, bytes]],
    receive: Receive,
) -> None:
    # An empty content type sends none (a 304 Not Modified, as upstream answers it).
    own = [(b"content-type", response.content_type.encode())] if response.content_type else []
    headers = [*own, *response.headers, *extra]
    if isinstance(response, Response):
        headers.append((b"content-length", str(len(response.body)).encode()))
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        await send({"type": "http.response.body", "body": response.body})
        return
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    # A watch may sit idle for minutes: notice the client going away while it waits,
    # or its storage watch would live on until the timeout.
    streaming = asyncio.create_task(_stream(send, response.chunks))
    disconnected = asyncio.create_task(_wait_for_disconnect(receive))
    try:
        await asyncio.wait((streaming, disconnected), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (streaming, disconnected):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await streaming
        with contextlib.suppress(asyncio.CancelledError):
            await disconnected
    if streaming.done() and not streaming.cancelled() and streaming.exception() is None:
        await send({"type": "http.response.body", "body": b""})


async def _stream(send: Send, chunks: AsyncGenerator[bytes]) -> None:
    try:
        async for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    finally:
        await chunks.aclose()  # ends the storage watch behind the stream at once


async def _wait_for_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
