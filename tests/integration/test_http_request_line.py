"""Request lines httptools refuses but Go's server reads, and those Go refuses too.

kube-apiserver reads a request line with Go's net/http: the method must be a
token, the version ``HTTP/x.y``, and the target must pass ``url.ParseRequestURI``
(no control bytes, a path, well-formed %-escapes in the path).  Any other byte
is kept: raw non-ASCII in the path is routed as its %-escaped form would be, and
``#`` belongs to the path or the query.  What Go refuses gets its plain-text 400
before any Kubernetes code runs.  kapi's parser (httptools) refuses more, so the
protocol reads such lines first; these tests send raw bytes over a socket.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import KapiServer
from tests.helpers.audit import events_of
from tests.helpers.status import assert_status, storage_unchanged
from tests.integration.paths import cm_path
from tests.integration.test_http_limits import connect, read_until_closed

#: Go's answer to a request line or target it cannot parse, byte for byte (server.go).
GO_400 = (
    b"HTTP/1.1 400 Bad Request\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n"
    b"400 Bad Request"
)
#: Go's answer to an HTTP version other than 1.x, once the head is read (a statusError).
GO_505 = (
    b"HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n"
    b"Connection: close\r\n\r\n"
    b"505 HTTP Version Not Supported: unsupported protocol version"
)
LABEL_VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character "
    "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def selector_error(value: str) -> str:
    """Upstream's message for a label selector ``a=value`` whose value is not a label value."""
    return (
        f'unable to parse requirement: values[0][a]: Invalid value: "{value}": {LABEL_VALUE_RULE}'
    )


def head(method: bytes, target: bytes, extra: bytes = b"") -> bytes:
    return method + b" " + target + b" HTTP/1.1\r\nHost: kapi\r\nConnection: close\r\n" + extra


def parse(answer: bytes) -> httpx.Response:
    """A response read off a socket (kapi answers with a Content-Length here)."""
    head_, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head_.decode("latin-1").split("\r\n")
    headers = [tuple(line.split(": ", 1)) for line in lines]
    return httpx.Response(int(status_line.split()[1]), headers=headers, content=body)


def send(server: KapiServer, request: bytes) -> bytes:
    with connect(server) as sock:
        sock.sendall(request)
        return read_until_closed(sock)


def get(server: KapiServer, target: bytes, method: bytes = b"GET") -> httpx.Response:
    return parse(send(server, head(method, target) + b"\r\n"))


def escaped(target: bytes) -> bytes:
    """The target with the bytes Go keeps but httptools refuses %-escaped, as a client would."""
    return b"".join(b"%%%02X" % b if b >= 0x80 or b == 0x23 else bytes([b]) for b in target)


def read_as_escaped(server: KapiServer, target: bytes) -> httpx.Response:
    """The answer to a GET of ``target``, which must be the answer to its %-escaped form."""
    response = get(server, target)
    assert response.content == get(server, escaped(target)).content
    return response


def test_non_ascii_name_in_the_path_is_routed(kapi_server: KapiServer, namespace: str) -> None:
    target = cm_path(namespace).encode() + "/café".encode()
    assert_status(
        read_as_escaped(kapi_server, target),
        404,
        "NotFound",
        'configmaps "café" not found',
        {"name": "café", "kind": "configmaps"},
    )


def test_non_ascii_namespace_is_routed(kapi_server: KapiServer) -> None:
    target = "/api/v1/namespaces/café".encode()
    assert_status(get(kapi_server, target), 404, "NotFound", 'namespaces "café" not found')
    # Listing in a namespace that does not exist is an empty list, as upstream.
    listed = get(kapi_server, target + b"/configmaps")
    assert listed.status_code == 200, listed.text
    assert listed.json()["items"] == []


def test_create_in_a_non_ascii_namespace_is_refused_and_stores_nothing(
    kapi_server: KapiServer, http: httpx.Client
) -> None:
    body = b'{"metadata":{"name":"a"}}'
    target = "/api/v1/namespaces/café/configmaps".encode()
    extra = b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    response = parse(send(kapi_server, head(b"POST", target, extra) + body))
    assert_status(response, 404, "NotFound", 'namespaces "café" not found')
    assert http.get("/api/v1/namespaces/caf%C3%A9/configmaps").json()["items"] == []


def test_non_ascii_in_the_query_is_decoded(kapi_server: KapiServer, namespace: str) -> None:
    target = cm_path(namespace).encode() + "?labelSelector=a%3Dé".encode()
    assert_status(read_as_escaped(kapi_server, target), 400, "BadRequest", selector_error("é"))


def test_hash_belongs_to_the_path(kapi_server: KapiServer, namespace: str) -> None:
    """A request target has no fragment: Go keeps ``#`` in the path (httptools cut it off)."""
    response = get(kapi_server, cm_path(namespace, "a#b").encode())
    assert_status(response, 404, "NotFound", 'configmaps "a#b" not found')


def test_hash_belongs_to_the_query(kapi_server: KapiServer, namespace: str) -> None:
    response = get(kapi_server, cm_path(namespace).encode() + b"?labelSelector=a%3Db#c")
    assert_status(response, 400, "BadRequest", selector_error("b#c"))


@pytest.mark.parametrize("method", [b"FOO", b"get", b"CONNECT"])
def test_a_method_httptools_does_not_know_is_routed(
    kapi_server: KapiServer, namespace: str, method: bytes
) -> None:
    """Go takes any token as a method; the handlers answer it as any other unsupported one."""
    response = get(kapi_server, cm_path(namespace).encode(), method)
    assert_status(
        response,
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )


def test_the_connection_serves_plain_requests_after_a_rewritten_one(
    kapi_server: KapiServer, namespace: str
) -> None:
    keep_alive = b"Host: kapi\r\n\r\n"
    with connect(kapi_server) as sock:
        sock.sendall(b"GET " + cm_path(namespace, "é").encode() + b" HTTP/1.1\r\n" + keep_alive)
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 404 Not Found\r\n"), first
        sock.sendall(b"GET /version HTTP/1.1\r\n" + keep_alive)
        second = sock.recv(65536)
        assert second.startswith(b"HTTP/1.1 200 OK\r\n"), second


def test_a_request_line_arriving_in_pieces_is_read_whole(
    kapi_server: KapiServer, namespace: str
) -> None:
    with connect(kapi_server) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(b"GET " + cm_path(namespace).encode() + b"/caf\xc3")
        time.sleep(0.2)  # lets the server read the first piece on its own
        sock.sendall(b"\xa9 HTTP/1.1\r\nHost: kapi\r\nConnection: close\r\n\r\n")
        response = parse(read_until_closed(sock))
    assert_status(response, 404, "NotFound", 'configmaps "café" not found')


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b"GET /api/v1/namespaces/a\tb HTTP/1.1", id="tab"),
        pytest.param(b"GET /api/v1/namespaces/a\x00b HTTP/1.1", id="nul"),
        pytest.param(b"GET /api/v1/namespaces/a\x01b HTTP/1.1", id="control"),
        pytest.param(b"GET /api/v1/namespaces/a\x7fb HTTP/1.1", id="del"),
        pytest.param(b"GET /api/v1/namespaces/\xc3\xa9\x1b HTTP/1.1", id="non-ascii-and-control"),
        pytest.param(b"GET /api/v1/namespaces/a b HTTP/1.1", id="space"),
        pytest.param(b"GET /api/v1/namespaces/caf\xc3\xa9 b HTTP/1.1", id="non-ascii-and-space"),
        pytest.param(b"GET  /api/v1/namespaces HTTP/1.1", id="two-spaces"),
        pytest.param(b"GET /api/v1/namespaces HTTP/1.1 ", id="trailing-space"),
        pytest.param(b"GET /api/v1/namespaces", id="no-version"),
        pytest.param(b"GET /api/v1/namespaces HTTP/1", id="bad-version"),
        pytest.param(b"GET api/v1/namespaces HTTP/1.1", id="not-a-path"),
        pytest.param(b"GET :api HTTP/1.1", id="missing-scheme"),
        pytest.param(b"G(T /api/v1/namespaces HTTP/1.1", id="method-not-a-token"),
        pytest.param("GÉT /api/v1/namespaces HTTP/1.1".encode(), id="method-non-ascii"),
        pytest.param(b"GET /api/v1/namespaces/%zz HTTP/1.1", id="bad-escape"),
        pytest.param(b"GET /api/v1/namespaces/%4 HTTP/1.1", id="short-escape"),
        pytest.param(b"GET /api/v1/namespaces/caf\xc3\xa9%g0 HTTP/1.1", id="non-ascii-bad-escape"),
    ],
)
def test_go_refuses_the_line_with_its_plain_400(
    kapi_server: KapiServer, http: httpx.Client, namespace: str, line: bytes
) -> None:
    with storage_unchanged(http, namespace):
        assert send(kapi_server, line + b"\r\nHost: kapi\r\n\r\n") == GO_400
    assert http.get("/version").status_code == 200


@pytest.mark.parametrize("version", [b"HTTP/2.0", b"HTTP/0.9", b"HTTP/3.1"])
def test_a_version_other_than_1_x_gets_go_505(kapi_server: KapiServer, version: bytes) -> None:
    """Go parses any HTTP/x.y, reads the head, then serves only 1.x (a statusError)."""
    answer = send(kapi_server, b"GET /version " + version + b"\r\nHost: kapi\r\n\r\n")
    assert answer == GO_505


def test_http_1_2_is_served_as_1_x(kapi_server: KapiServer) -> None:
    request = b"GET /version HTTP/1.2\r\nHost: kapi\r\nConnection: close\r\n\r\n"
    response = parse(send(kapi_server, request))
    assert response.status_code == 200, response.text
    assert "gitVersion" in response.json()


def test_a_bad_escape_in_the_query_is_not_refused(kapi_server: KapiServer, namespace: str) -> None:
    """Go checks the path's escapes when it reads the request; the query's pairs are
    dropped later, silently, by ``URL.Query``."""
    response = get(kapi_server, cm_path(namespace).encode() + b"?x=%zz")
    assert response.status_code == 200, response.text
    assert response.json()["items"] == []


def test_a_refused_post_stores_nothing(
    kapi_server: KapiServer, http: httpx.Client, namespace: str
) -> None:
    body = b'{"metadata":{"name":"refused"}}'
    extra = b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    path = cm_path(namespace).encode()
    with storage_unchanged(http, namespace):
        assert send(kapi_server, head(b"POST", path + b"/%zz", extra) + body) == GO_400
        assert send(kapi_server, head(b"POST", path + b"\x01", extra) + body) == GO_400
    assert http.get(cm_path(namespace, "refused")).status_code == 404


def test_audit_records_the_escaped_path(audited: tuple[KapiServer, Path]) -> None:
    """Go's audit ``requestURI`` is ``URL.RequestURI()``: the path as ``EscapedPath``
    writes it (non-ASCII and ``#`` escaped), the query as sent."""
    server, log = audited
    with server.client() as c:
        ns = f"line-{time.monotonic_ns()}"
        assert c.post("/api/v1/namespaces", json={"metadata": {"name": ns}}).status_code == 201
    response = get(server, cm_path(ns).encode() + "/é#x?limit=5".encode())
    assert response.status_code == 404, response.text
    events = events_of(log, response.headers["audit-id"])
    assert {e["requestURI"] for e in events} == {f"{cm_path(ns)}/%C3%A9%23x?limit=5"}
