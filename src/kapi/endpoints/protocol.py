"""uvicorn's httptools protocol, writing each response in one piece.

uvicorn writes a response's status line and headers as soon as the app
sends ``http.response.start``, then the body in a second write: two
syscalls, and on loopback two wake-ups of the client, per response.  Holding
the head until the body follows (or the event loop turns, for streams and
100-continue) halves both; on a 2-core machine that is a large share of a
small request's cost.

The protocol also enforces the limits Go's HTTP server applies to reading a
request's head, with kube-apiserver's values (see ``docs/limits.md``).
"""

from __future__ import annotations

import asyncio
import urllib.parse
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


#: Go's ``http.DefaultMaxHeaderBytes``, which kube-apiserver sets on its server
#: (``MaxHeaderBytes: 1 << 20``): the request line and headers together.
MAX_HEADER_BYTES = 1 << 20
#: Go reads the head through a buffer and allows its size beyond the cap.
_HEADER_SLACK = 4096
#: kube-apiserver's ``ReadHeaderTimeout`` (secure_serving.go), seconds.
READ_HEADER_TIMEOUT = 32.0
#: kube-apiserver's ``IdleTimeout``: a kept-alive connection with no request is closed.
IDLE_TIMEOUT = 90.0
#: Go's answer to a head past the cap, written as its server writes it (plain text).
_HEADERS_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n"
    b"431 Request Header Fields Too Large"
)
#: How long a refused connection is drained before it is closed (Go's
#: ``closeWriteAndWait``), so the client reads the 431 instead of a reset.
_LINGER = 0.5
#: httptools' URL splitter keeps offsets in 16 bits: longer targets are split here.
_PARSE_URL_MAX = 0xFFFF


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """The httptools protocol with Go's limits on reading a request's head.

    A request line and headers longer than ``max_header_bytes`` (plus Go's
    4 KiB read buffer) get Go's plain-text 431 and the connection is closed;
    a head that has not completed ``read_header_timeout`` seconds after the
    connection opened (or after its first byte, for later requests on a
    kept-alive connection) closes the connection without an answer, as Go
    does.  Both bound what one client can make the server hold and parse.
    """

    max_header_bytes = MAX_HEADER_BYTES
    read_header_timeout = READ_HEADER_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True
        self._head_bytes = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # draining a refused connection until it closes
        if self._in_head:
            room = self.max_header_bytes + _HEADER_SLACK - self._head_bytes
            if len(data) > room:
                # Parse up to the cap: if the head ends inside it, the rest is body
                # (or the next request); if not, the head is too large.
                self._head_bytes += room
                super().data_received(data[:room])
                if self._in_head:
                    if not self.transport.is_closing():
                        self._refuse_head()
                    return
                data = data[room:]
            else:
                self._head_bytes += len(data)
        super().data_received(data)

    # Parser callbacks

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        if self._head_timer is None:
            self._arm_head_timer()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        self._cancel_head_timer()
        url = self.url
        if len(url) <= _PARSE_URL_MAX or not url.startswith(b"/"):
            super().on_headers_complete()
            return
        # An origin-form target too long for httptools' splitter: split it here and
        # give the parent a stand-in, then put the real path and query in the scope
        # (the request's task has not run yet; the scope is the same dict).
        target = url.split(b"#", 1)[0]
        raw_path, _, query = target.partition(b"?")
        self.url = b"/"
        super().on_headers_complete()
        path = raw_path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        self.scope["path"] = self.root_path + path
        self.scope["raw_path"] = self.root_path.encode("ascii") + raw_path
        self.scope["query_string"] = query

    # Limits

    def _refuse_head(self) -> None:
        self._refused = True
        self._cancel_head_timer()
        self.transport.write(_HEADERS_TOO_LARGE)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(_LINGER, self.transport.close)

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.read_header_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            # The previous response is still being written (a pipelined head waits
            # for it, as Go reads no further request until then): wait again.
            self._arm_head_timer()
            return
        self.transport.close()


def protocol_with_limits(
    *, max_header_bytes: int, read_header_timeout: float
) -> type[CoalescingHttpToolsProtocol]:
    """The protocol class with this server's limits (uvicorn instantiates a class)."""
    return type(
        "CoalescingHttpToolsProtocol",
        (CoalescingHttpToolsProtocol,),
        {"max_header_bytes": max_header_bytes, "read_header_timeout": read_header_timeout},
    )
