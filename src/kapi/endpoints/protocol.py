"""uvicorn's httptools protocol, writing each response in one piece.

uvicorn writes a response's status line and headers as soon as the app
sends ``http.response.start``, then the body in a second write: two
syscalls, and on loopback two wake-ups of the client, per response.  Holding
the head until the body follows (or the event loop turns, for streams and
100-continue) halves both; on a 2-core machine that is a large share of a
small request's cost.

The protocol also enforces the limits Go's HTTP server applies to reading a
request's head, with kube-apiserver's values (see ``docs/limits.md``), and reads
a request line as Go's server does where httptools would refuse it: raw
non-ASCII bytes and ``#`` in the target, and methods httptools does not know,
reach the handlers; what Go refuses gets Go's plain-text answer (400, or 505
for an HTTP version other than 1.x).
"""

from __future__ import annotations

import asyncio
import re
import urllib.parse
from typing import Any

import httptools
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
#: Go's answer to a request it cannot parse (net/http server.go), byte for byte.
_BAD_REQUEST = (
    b"HTTP/1.1 400 Bad Request\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n"
    b"400 Bad Request"
)
#: Go's answer, once the head is read, to an HTTP version other than 1.x (a statusError).
_VERSION_NOT_SUPPORTED = (
    b"HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n"
    b"505 HTTP Version Not Supported: unsupported protocol version"
)
#: How long a refused connection is drained before it is closed (Go's
#: ``closeWriteAndWait``), so the client reads the answer instead of a reset.
_LINGER = 0.5
#: httptools' URL splitter keeps offsets in 16 bits: longer targets are split here.
_PARSE_URL_MAX = 0xFFFF

# Request lines.  Go's server splits the line at its first two spaces, wants a token
# for the method and HTTP/x.y for the version, and parses the target with
# ``url.ParseRequestURI``: no control bytes, a path (or a scheme), and well-formed
# %-escapes in the path; any other byte is kept, and ``#`` is part of the path or the
# query (a request has no fragment).  httptools refuses bytes >= 0x80 and methods
# outside its table, and cuts the target at ``#``.  A line httptools reads as Go does
# is recognised by one match; the others are read here first.

#: A line both parsers read alike: a common method, visible ASCII except ``#``, HTTP/1.x.
_PLAIN_LINE = re.compile(rb"(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) [!-\"$-~]+ HTTP/1\.[01]\r\n")
#: RFC 7230 token characters (Go's ``validMethod``).
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: Bytes ``url.ParseRequestURI`` refuses anywhere in the target.
_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")
#: A target with a scheme (``http://host/path``): Go parses it as an absolute URL.
_SCHEME = re.compile(rb"[A-Za-z][A-Za-z0-9+\-.]*:")
#: Bytes of a target Go keeps that httptools refuses or treats as a fragment.
_UNPARSABLE = re.compile(rb"[\x80-\xff#]")
#: A ``%`` not followed by two hex digits: Go's ``unescape`` refuses the path.
_BAD_ESCAPE = re.compile(rb"%(?![0-9A-Fa-f]{2})")
#: Methods httptools parses as ordinary requests (CONNECT and PRI it does not).
_PARSER_METHODS = frozenset(
    b"GET HEAD POST PUT DELETE OPTIONS TRACE PATCH COPY LOCK MKCOL MOVE PROPFIND "
    b"PROPPATCH SEARCH UNLOCK BIND REBIND UNBIND ACL REPORT MKACTIVITY CHECKOUT MERGE "
    b"M-SEARCH NOTIFY SUBSCRIBE UNSUBSCRIBE PURGE MKCALENDAR LINK UNLINK SOURCE QUERY".split()
)
#: What httptools is given for a method it does not know; the scope gets the real one.
_STAND_IN_METHOD = b"GET"


def _percent_encode(match: re.Match[bytes]) -> bytes:
    return b"%%%02X" % match[0][0]


def _go_http_version(proto: bytes) -> bool:
    """Whether Go's ``ParseHTTPVersion`` accepts ``proto`` (``HTTP/`` and one digit each)."""
    return (
        len(proto) == 8
        and proto.startswith(b"HTTP/")
        and proto[5:6].isdigit()
        and proto[6:7] == b"."
        and proto[7:8].isdigit()
    )


def _go_accepts_target(target: bytes) -> bool:
    """Whether ``url.ParseRequestURI`` accepts ``target``, short of its %-escapes.

    The escapes of the path are checked once the head is complete, for every request.
    """
    if not target or _CONTROL.search(target):
        return False
    if target.startswith(b"/") or target == b"*":
        return True
    if target.startswith(b":"):
        return False  # "missing protocol scheme"
    scheme = _SCHEME.match(target)
    # Without a scheme a request target must be a path ("invalid URI for request").
    return scheme is not None


class _Refused(httptools.HttpParserError):
    """Raised in a parser callback for a request Go refuses once its head is read.

    uvicorn catches it as a parse error and calls ``send_400_response``, which
    writes the protocol's ``_answer`` (Go's 400 unless set otherwise).
    """


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """The httptools protocol with Go's limits on reading a request's head.

    A request line and headers longer than ``max_header_bytes`` (plus Go's
    4 KiB read buffer) get Go's plain-text 431 and the connection is closed;
    a head that has not completed ``read_header_timeout`` seconds after the
    connection opened (or after its first byte, for later requests on a
    kept-alive connection) closes the connection without an answer, as Go
    does; a kept-alive connection without a new request for ``idle_timeout``
    seconds is closed (uvicorn's keep-alive timer, given this value).  These
    bound what one client can make the server hold and parse.

    A request line that is not plain is read whole before httptools sees it
    and judged as Go's ``readRequest`` judges it: Go's 400, or a line
    rewritten so httptools accepts what Go accepts, with the scope as Go's
    request would have it (path, escaped path, method).  Only a line at the
    start of a read is judged so: one pipelined behind another in the same
    read reaches httptools as sent, and if httptools refuses it, the answer
    is Go's 400.
    """

    max_header_bytes = MAX_HEADER_BYTES
    read_header_timeout = READ_HEADER_TIMEOUT
    idle_timeout = IDLE_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # uvicorn's keep-alive timeout is armed when a response completes and cancelled by
        # the next byte: Go's IdleTimeout.  The protocol's value wins over uvicorn's config
        # (which types it int; it only reaches loop.call_later, which takes a float).
        self.timeout_keep_alive = self.idle_timeout  # type: ignore[assignment]
        self._in_head = True
        self._head_bytes = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._refused = False
        # Whether the next byte starts a request line, and that line's bytes held so far
        # (a line is read whole before the parser sees it, when it is not plain).
        self._line_start = True
        self._held: list[bytes] = []
        self._held_bytes = 0
        # The method of a line whose method httptools does not know, for the scope; and
        # Go's answer to the request once its head is complete, if it will not serve it.
        self._method: bytes | None = None
        self._answer_at_head: bytes | None = None
        self._answer = _BAD_REQUEST

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_CoalescingTransport(transport, self.loop))  # type: ignore[arg-type]
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # draining a refused connection until it closes
        if self._line_start and (self._held or not _PLAIN_LINE.match(data)):
            taken = self._take_request_line(data)
            if taken is None:
                return
            data = taken
        if self._in_head:
            room = self.max_header_bytes + _HEADER_SLACK - self._head_bytes
            if len(data) > room:
                # Parse up to the cap: if the head ends inside it, the rest is body
                # (or the next request); if not, the head is too large.
                self._head_bytes += room
                super().data_received(data[:room])
                if self._refused or self.transport.is_closing():
                    return
                if self._in_head:
                    self._refuse(_HEADERS_TOO_LARGE)
                    return
                data = data[room:]
            else:
                self._head_bytes += len(data)
        super().data_received(data)

    def send_400_response(self, msg: str) -> None:
        """A request httptools cannot parse: Go's plain-text 400, not uvicorn's."""
        if not self._refused:
            self._refuse(self._answer)

    def _take_request_line(self, data: bytes) -> bytes | None:
        """The request line read as Go reads it, rewritten for httptools where needed.

        None while the line is incomplete (its bytes are held) or when Go refuses it
        (the connection has its 400).
        """
        if data.find(b"\n") < 0:
            if not self._held:
                # A request has begun: the idle timeout ends and the head timeout runs.
                self._unset_keepalive_if_required()
                if self._head_timer is None:
                    self._arm_head_timer()
            self._held.append(data)
            self._held_bytes += len(data)
            if self._held_bytes > self.max_header_bytes + _HEADER_SLACK:
                self._refuse(_HEADERS_TOO_LARGE)
            return None
        if self._held:
            self._held.append(data)
            data = b"".join(self._held)
            self._held.clear()
            self._held_bytes = 0
        end = data.index(b"\n")
        if end and data[end - 1] == 0x0D:
            end -= 1
        line = data[:end]
        if not line:
            return data  # an empty line before the request: httptools skips it
        method, _, rest = line.partition(b" ")
        target, space, proto = rest.partition(b" ")
        if (
            not space
            or not _TOKEN.fullmatch(method)
            or not _go_http_version(proto)
            or not _go_accepts_target(target)
        ):
            self._unset_keepalive_if_required()
            self._refuse(_BAD_REQUEST)
            return None
        known = method in _PARSER_METHODS
        unparsable = _UNPARSABLE.search(target) is not None
        if proto[5:6] != b"1":
            # Go reads the head, then answers 505 (only HTTP/1.x is served here).
            self._answer_at_head = _VERSION_NOT_SUPPORTED
            proto = b"HTTP/1.1"
        elif proto[7:8] not in b"01":
            proto = b"HTTP/1.1"  # Go serves HTTP/1.2 to 1.9 as 1.x; httptools refuses them
        elif known and not unparsable:
            return data  # httptools reads this line as Go does
        if unparsable:
            # The scope's path decodes these escapes back to Go's bytes, and its raw
            # path is the escaped form: Go's URL.EscapedPath (the audit's requestURI).
            target = _UNPARSABLE.sub(_percent_encode, target)
        if not known:
            self._method = method
        new_line = (method if known else _STAND_IN_METHOD) + b" " + target + b" " + proto
        # The head limit counts the bytes as sent, not the escapes added here.
        self._head_bytes -= len(new_line) - len(line)
        return new_line + data[end:]

    # Parser callbacks

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._line_start = False
        self._in_head = True
        if self._head_timer is None:
            self._arm_head_timer()

    def on_message_complete(self) -> None:
        # Whatever comes next on the connection is the head of another request.
        self._line_start = True
        self._in_head = True
        super().on_message_complete()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        self._cancel_head_timer()
        url = self.url
        if b"%" in url and _BAD_ESCAPE.search(url.partition(b"?")[0]):
            raise _Refused  # Go's url.ParseRequestURI: an invalid URL escape
        if self._answer_at_head is not None:
            self._answer, self._answer_at_head = self._answer_at_head, None
            raise _Refused
        method, self._method = self._method, None
        if len(url) <= _PARSE_URL_MAX or not url.startswith(b"/"):
            super().on_headers_complete()
        else:
            self._split_long_target(url)
        if method is not None:
            self.scope["method"] = method.decode("ascii")  # for the stand-in httptools saw

    def _split_long_target(self, url: bytes) -> None:
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

    def _refuse(self, answer: bytes) -> None:
        """Answer as Go's server does before any handler runs, and close."""
        self._refused = True
        self._cancel_head_timer()
        self.transport.write(answer)
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
    *, max_header_bytes: int, read_header_timeout: float, idle_timeout: float
) -> type[CoalescingHttpToolsProtocol]:
    """The protocol class with this server's limits (uvicorn instantiates a class)."""
    return type(
        "CoalescingHttpToolsProtocol",
        (CoalescingHttpToolsProtocol,),
        {
            "max_header_bytes": max_header_bytes,
            "read_header_timeout": read_header_timeout,
            "idle_timeout": idle_timeout,
        },
    )
