"""uvicorn's httptools protocol, writing each response in one piece.

uvicorn writes a response's status line and headers as soon as the app
sends ``http.response.start``, then the body in a second write: two
syscalls, and on loopback two wake-ups of the client, per response.  Holding
the head until the body follows (or the event loop turns, for streams and
100-continue) halves both; on a 2-core machine that is a large share of a
small request's cost.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class _CoalescingTransport:
    """A transport proxy that joins a held response head to the next write."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        if self._held is not None:
            data, self._held = self._held + data, None
        elif data.startswith(b"HTTP/1.1 ") and data.endswith(b"\r\n\r\n"):
            self._held = data
            self._loop.call_soon(self._flush)
            return
        self._transport.write(data)

    def _flush(self) -> None:
        if self._held is not None:
            data, self._held = self._held, None
            self._transport.write(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]
