"""Go's limits on reading a request's head, as kube-apiserver configures them.

kube-apiserver caps a request line and headers at 1 MiB (``MaxHeaderBytes``,
plus Go's 4 KiB read buffer) and answers a longer head with Go's plain-text
431; a head that has not arrived within ``ReadHeaderTimeout`` closes the
connection without an answer; a kept-alive connection that sends no new request
within ``IdleTimeout`` is closed.  The servers here use ``--read-header-timeout
1s`` and ``--idle-timeout 1s`` so the timeouts can be seen; sockets wait at most
10 s, so a server that never closes fails the test instead of hanging it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.status import assert_status, storage_unchanged
from tests.integration.paths import cm_path

MAX_HEADER_BYTES = 1 << 20
#: Go allows its read buffer's size past MaxHeaderBytes.
GO_SLACK = 4096
#: Go's answer to a head past the cap, byte for byte (net/http server.go).
GO_431 = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n"
    b"431 Request Header Fields Too Large"
)


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "head-limits", "--read-header-timeout", "1s")


@pytest.fixture(scope="module")
def idle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "idle-limit", "--idle-timeout", "1s")


@pytest.fixture
def client(limited: KapiServer) -> Iterator[httpx.Client]:
    with limited.client() as c:
        yield c


@pytest.fixture
def ns(client: httpx.Client) -> str:
    name = f"limits-{time.monotonic_ns()}"
    response = client.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


def connect(server: KapiServer) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (10 s at most)."""
    received = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return received
        received += chunk


def raw_get(server: KapiServer, target: str) -> httpx.Response:
    """GET a target too long for httpx (it refuses URLs over 64 KiB), over a raw socket."""
    with connect(server) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: kapi\r\nConnection: close\r\n\r\n".encode())
        answer = read_until_closed(sock)
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = [tuple(line.split(": ", 1)) for line in lines]
    return httpx.Response(int(status_line.split()[1]), headers=headers, content=body)


def read_response(sock: socket.socket) -> bytes:
    """One whole response with a Content-Length, leaving the connection open."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def send_ignoring_reset(sock: socket.socket, data: bytes) -> None:
    """Send what the server takes: it may stop reading once it has refused the head."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        sock.sendall(data)


def test_headers_over_one_mebibyte_get_go_431_and_others_are_served(
    limited: KapiServer, client: httpx.Client
) -> None:
    headers = b"".join(b"X-Filler-%d: %s\r\n" % (i, b"v" * 1000) for i in range(1100))
    assert len(headers) > MAX_HEADER_BYTES + GO_SLACK
    with connect(limited) as sock:
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: kapi\r\n" + headers[: len(headers) // 2])
        # Half a huge head is held by one client: another one is answered meanwhile.
        assert client.get("/version").status_code == 200
        send_ignoring_reset(sock, headers[len(headers) // 2 :] + b"\r\n")
        assert read_until_closed(sock) == GO_431
    assert client.get("/version").status_code == 200


def test_one_header_value_over_the_cap_gets_431(limited: KapiServer) -> None:
    with connect(limited) as sock:
        big = b"X-Big: " + b"x" * (MAX_HEADER_BYTES + 64 * 1024) + b"\r\n\r\n"
        send_ignoring_reset(sock, b"GET /version HTTP/1.1\r\nHost: kapi\r\n" + big)
        assert read_until_closed(sock) == GO_431


def test_url_just_over_the_cap_gets_431(limited: KapiServer, client: httpx.Client, ns: str) -> None:
    path = cm_path(ns, "a" * (MAX_HEADER_BYTES + GO_SLACK))
    with storage_unchanged(client, ns), connect(limited) as sock:
        send_ignoring_reset(sock, b"GET " + path.encode() + b" HTTP/1.1\r\nHost: kapi\r\n\r\n")
        assert read_until_closed(sock) == GO_431


def test_one_mebibyte_url_is_answered_with_a_status(limited: KapiServer, ns: str) -> None:
    """A 1 MiB request target is inside Go's cap: the request is served (here a 404)."""
    name = "a" * (MAX_HEADER_BYTES - len(cm_path(ns, "x")) + 1)
    path = cm_path(ns, name)
    assert len(path) == MAX_HEADER_BYTES
    assert_status(raw_get(limited, path), 404, "NotFound", f'configmaps "{name}" not found')


def test_long_query_is_answered(limited: KapiServer, ns: str) -> None:
    """Past httptools' 64 KiB URL splitter: the query still reaches the handler whole."""
    name = "b" * (200 * 1024)
    response = raw_get(limited, f"{cm_path(ns)}?fieldSelector=metadata.name%3D{name}")
    assert response.status_code == 200, response.text
    assert response.json()["items"] == []
    response = raw_get(limited, f"{cm_path(ns)}?fieldSelector=metadata.nam%3D{name}")
    assert_status(
        response,
        400,
        "BadRequest",
        '"metadata.nam" is not a known field selector: only "metadata.name", "metadata.namespace"',
    )


def test_head_not_complete_in_time_closes_the_connection(limited: KapiServer) -> None:
    with connect(limited) as sock:
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: kapi\r\n")
        assert read_until_closed(sock) == b""  # closed without an answer, as Go does


def test_connection_without_a_request_is_closed(limited: KapiServer) -> None:
    with connect(limited) as sock:
        assert read_until_closed(sock) == b""


def test_kept_alive_connection_outlives_the_header_timeout(limited: KapiServer) -> None:
    """Between requests the idle timeout (90 s) applies, not the header timeout."""
    request = b"GET /version HTTP/1.1\r\nHost: kapi\r\n\r\n"
    with connect(limited) as sock:
        sock.sendall(request)
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 OK\r\n"), first
        time.sleep(1.5)
        sock.sendall(request)
        second = sock.recv(65536)
        assert second.startswith(b"HTTP/1.1 200 OK\r\n"), second


def test_watch_outlives_the_header_timeout(client: httpx.Client, ns: str) -> None:
    """Once its head is read, a request is not bound by the header timeout."""
    with client.stream("GET", cm_path(ns), params={"watch": "1", "timeoutSeconds": "2"}) as w:
        assert w.status_code == 200
        body = b"".join(w.iter_bytes())  # the server ends the stream after 2 s, cleanly
    assert body == b""


def test_idle_kept_alive_connection_is_closed(idle: KapiServer) -> None:
    """Go's IdleTimeout is uvicorn's keep-alive timer, with the protocol's value: armed
    when a response is complete, cancelled by the next request's first byte."""
    with connect(idle) as sock:
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: kapi\r\n\r\n")
        assert read_response(sock).startswith(b"HTTP/1.1 200 OK\r\n")
        # Kept alive, then idle past 1 s: the server closes it (the default would wait 90 s,
        # past this socket's 10 s timeout).
        assert read_until_closed(sock) == b""


def test_idle_timeout_is_wired_from_the_server_config_into_uvicorns_keep_alive() -> None:
    """The one value (``--idle-timeout``, default kube-apiserver's 90 s) reaches the timer
    uvicorn arms between requests, whatever uvicorn's own keep-alive default is."""
    import asyncio

    import uvicorn
    from uvicorn.server import ServerState

    from kapi.endpoints.protocol import IDLE_TIMEOUT
    from kapi.server import ServerConfig, uvicorn_options

    async def app(scope: object, receive: object, send: object) -> None:  # pragma: no cover
        pass

    loop = asyncio.new_event_loop()
    try:
        for config, expected in ((ServerConfig(), 90.0), (ServerConfig(idle_timeout=7.5), 7.5)):
            options = uvicorn_options(config)
            uvicorn_config = uvicorn.Config(app, **options)
            protocol = options["http"](uvicorn_config, ServerState(), {}, _loop=loop)
            assert protocol.timeout_keep_alive == expected != uvicorn_config.timeout_keep_alive
    finally:
        loop.close()
    assert IDLE_TIMEOUT == 90.0


def test_request_whose_body_is_slow_is_not_cut_by_the_idle_timeout(
    idle: KapiServer,
) -> None:
    """Once a request has begun the connection is active: no idle timer runs."""
    with idle.client() as c:
        ns = f"idle-{time.monotonic_ns()}"
        assert c.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).status_code == 201
        body = b'{"metadata":{"name":"slow"}}'
        with connect(idle) as sock:
            sock.sendall(
                f"POST {cm_path(ns)} HTTP/1.1\r\nHost: kapi\r\n".encode()
                + b"Content-Type: application/json\r\n"
                + b"Content-Length: %d\r\n\r\n" % len(body)
            )
            time.sleep(1.5)  # longer than the idle timeout, mid-request
            sock.sendall(body)
            answer = read_response(sock)
        assert answer.startswith(b"HTTP/1.1 201 Created\r\n"), answer
        assert c.get(cm_path(ns, "slow")).status_code == 200


def test_watch_is_not_cut_by_the_idle_timeout(idle: KapiServer) -> None:
    """A response still being written is not idle: a watch gets events past 1 s."""
    with idle.client() as c:
        ns = f"idle-{time.monotonic_ns()}"
        assert c.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).status_code == 201
        params = {"watch": "1", "timeoutSeconds": "8"}
        with c.stream("GET", cm_path(ns), params=params) as watch:
            assert watch.status_code == 200
            lines = watch.iter_lines()
            time.sleep(2)  # longer than the idle timeout
            with idle.client() as other:
                created = other.post(cm_path(ns), json={"metadata": {"name": "late"}})
                assert created.status_code == 201, created.text
            event = json.loads(next(lines))
            assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "late")
            assert list(lines) == []  # the server ends the stream at timeoutSeconds, cleanly


@pytest.mark.parametrize(
    ("flag", "value", "error"),
    [
        (
            "read-header-timeout",
            "abc",
            'invalid argument "abc" for "--read-header-timeout" flag: time: invalid duration',
        ),
        (
            "read-header-timeout",
            "0s",
            'invalid argument "0s" for "--read-header-timeout" flag: must be positive',
        ),
        (
            "read-header-timeout",
            "-1s",
            'invalid argument "-1s" for "--read-header-timeout" flag: must not be negative',
        ),
        (
            "idle-timeout",
            "abc",
            'invalid argument "abc" for "--idle-timeout" flag: time: invalid duration',
        ),
        ("idle-timeout", "0s", 'invalid argument "0s" for "--idle-timeout" flag: must be positive'),
    ],
)
def test_a_bad_timeout_flag_is_refused(tmp_path: Path, flag: str, value: str, error: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kapi", "serve", f"--data-dir={tmp_path}", f"--{flag}={value}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert error in result.stderr, result.stderr
    assert "kapi serving" not in result.stdout
