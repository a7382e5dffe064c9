"""The REST clients against ``httpx.MockTransport``: URLs, parameters, bodies, errors, watches."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml

from kapi.client import (
    AlreadyExistsError,
    ApiError,
    AsyncClient,
    Client,
    ClientConfig,
    ConflictError,
    ExpiredError,
    ForbiddenError,
    GoneError,
    InternalError,
    InvalidError,
    NotFoundError,
    ServiceUnavailableError,
    UnsupportedMediaTypeError,
    WatchEvent,
)

Handler = Callable[[httpx.Request], httpx.Response]

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}}


def status(code: int, reason: str, message: str, **details: Any) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": details,
        "code": code,
    }


class Server:
    """A canned server that records what it was asked."""

    def __init__(self, respond: Handler | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self._respond = respond or (lambda request: httpx.Response(200, json={"kind": "Echo"}))

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self._respond(request)

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]

    def client(self, **config: Any) -> Client:
        options = {"server": "https://kapi.test:6443", "namespace": "ns", **config}
        return Client(ClientConfig(**options), transport=httpx.MockTransport(self))

    def async_client(self, **config: Any) -> AsyncClient:
        options = {"server": "https://kapi.test:6443", "namespace": "ns", **config}
        return AsyncClient(ClientConfig(**options), transport=httpx.MockTransport(self))


def body(request: httpx.Request) -> Any:
    return orjson.loads(request.content)


# -- URLs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("api_version", "plural", "namespaced", "call", "path"),
    [
        ("v1", "configmaps", True, lambda r: r.get("a"), "/api/v1/namespaces/ns/configmaps/a"),
        ("v1", "configmaps", True, lambda r: r.get("a", "o"), "/api/v1/namespaces/o/configmaps/a"),
        ("v1", "configmaps", True, lambda r: r.list(), "/api/v1/namespaces/ns/configmaps"),
        ("v1", "configmaps", True, lambda r: r.list(""), "/api/v1/configmaps"),
        ("v1", "namespaces", False, lambda r: r.get("ns"), "/api/v1/namespaces/ns"),
        ("v1", "nodes", False, lambda r: r.list("ignored"), "/api/v1/nodes"),
        (
            "apps/v1",
            "deployments",
            True,
            lambda r: r.get("d", subresource="status"),
            "/apis/apps/v1/namespaces/ns/deployments/d/status",
        ),
        (
            "apiextensions.k8s.io/v1",
            "customresourcedefinitions",
            False,
            lambda r: r.get("a.b.c"),
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/a.b.c",
        ),
    ],
)
def test_resource_urls(
    api_version: str, plural: str, namespaced: bool, call: Callable[[Any], Any], path: str
) -> None:
    server = Server()
    with server.client() as client:
        call(client.resource(api_version, plural, namespaced=namespaced))

    assert server.last.method == "GET"
    assert server.last.url.path == path
    assert server.last.url.host == "kapi.test"


def test_server_path_prefix_is_kept() -> None:
    server = Server()
    with server.client(server="https://proxy.test/k8s/clusters/c1") as client:
        client.resource("v1", "pods").get("p")

    assert server.last.url.path == "/k8s/clusters/c1/api/v1/namespaces/ns/pods/p"


def test_names_are_path_escaped() -> None:
    server = Server()
    with server.client() as client:
        client.resource("v1", "configmaps").get("a/b")

    assert server.last.url.raw_path == b"/api/v1/namespaces/ns/configmaps/a%2Fb"


def test_addressing_an_object_needs_a_name_and_a_namespace() -> None:
    with Server().client() as client:
        configmaps = client.resource("v1", "configmaps")
        with pytest.raises(ValueError, match="namespace is required"):
            configmaps.get("a", "")
        with pytest.raises(ValueError, match="name is required"):
            configmaps.replace({"metadata": {}})
        with pytest.raises(ValueError, match="unknown patch type"):
            configmaps.patch("a", {}, patch_type="xml")  # type: ignore[arg-type]


# -- Parameters, headers and bodies --------------------------------------------------------------


def test_list_query_parameters() -> None:
    server = Server()
    with server.client() as client:
        client.resource("v1", "pods").list(
            label_selector="app=web,tier!=db",
            field_selector="spec.nodeName=n1",
            limit=50,
            continue_="tok",
            resource_version="0",
        )

    assert dict(server.last.url.params) == {
        "labelSelector": "app=web,tier!=db",
        "fieldSelector": "spec.nodeName=n1",
        "limit": "50",
        "continue": "tok",
        "resourceVersion": "0",
    }


def test_default_headers_carry_credentials_and_user_agent() -> None:
    server = Server()
    with server.client(token="abc") as client:
        client.resource("v1", "pods").list()

    assert server.last.headers["authorization"] == "Bearer abc"
    assert server.last.headers["accept"] == "application/json"
    assert server.last.headers["user-agent"].startswith("kapi-client/")


def test_create_posts_json_to_the_object_namespace() -> None:
    server = Server(lambda request: httpx.Response(201, json=body(request)))
    with server.client() as client:
        obj = {**CM, "metadata": {"name": "cm", "namespace": "other"}}
        created = client.resource("v1", "configmaps").create(
            obj, dry_run=True, field_manager="me", field_validation="Strict"
        )

    assert created == obj
    assert server.last.method == "POST"
    assert server.last.url.path == "/api/v1/namespaces/other/configmaps"
    assert server.last.headers["content-type"] == "application/json"
    assert dict(server.last.url.params) == {
        "dryRun": "All",
        "fieldManager": "me",
        "fieldValidation": "Strict",
    }


def test_explicit_namespace_beats_the_object_namespace() -> None:
    server = Server()
    with server.client() as client:
        client.resource("v1", "configmaps").create(CM, "explicit")

    assert server.last.url.path == "/api/v1/namespaces/explicit/configmaps"


def test_replace_puts_to_the_object_name() -> None:
    server = Server()
    with server.client() as client:
        client.resource("apps/v1", "deployments").replace(
            {"metadata": {"name": "d", "resourceVersion": "7"}}, subresource="status"
        )

    assert server.last.method == "PUT"
    assert server.last.url.path == "/apis/apps/v1/namespaces/ns/deployments/d/status"
    assert body(server.last) == {"metadata": {"name": "d", "resourceVersion": "7"}}
    assert not server.last.url.params


@pytest.mark.parametrize(
    ("patch_type", "content_type"),
    [
        ("merge", "application/merge-patch+json"),
        ("json", "application/json-patch+json"),
        ("strategic", "application/strategic-merge-patch+json"),
        ("apply", "application/apply-patch+yaml"),
    ],
)
def test_patch_content_types(patch_type: Any, content_type: str) -> None:
    server = Server()
    with server.client() as client:
        client.resource("v1", "configmaps").patch("cm", {"data": {"k": "v"}}, patch_type=patch_type)

    assert server.last.method == "PATCH"
    assert server.last.url.path == "/api/v1/namespaces/ns/configmaps/cm"
    assert server.last.headers["content-type"] == content_type
    assert body(server.last) == {"data": {"k": "v"}}


def test_json_patch_list_and_apply_parameters() -> None:
    server = Server()
    operations = [{"op": "replace", "path": "/data/k", "value": "v"}]
    with server.client() as client:
        configmaps = client.resource("v1", "configmaps")
        configmaps.patch("cm", operations, patch_type="json")
        assert body(server.last) == operations
        configmaps.patch("cm", "data: {k: v}\n", patch_type="apply", field_manager="me", force=True)

    assert server.last.content == b"data: {k: v}\n"
    assert dict(server.last.url.params) == {"fieldManager": "me", "force": "true"}


def test_delete_sends_delete_options() -> None:
    server = Server()
    with server.client() as client:
        client.resource("v1", "pods").delete(
            "p",
            preconditions={"uid": "u-1", "resourceVersion": "9"},
            propagation_policy="Foreground",
            grace_period_seconds=0,
            dry_run=True,
        )

    assert server.last.method == "DELETE"
    assert server.last.url.path == "/api/v1/namespaces/ns/pods/p"
    assert server.last.headers["content-type"] == "application/json"
    assert body(server.last) == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "preconditions": {"uid": "u-1", "resourceVersion": "9"},
        "propagationPolicy": "Foreground",
        "gracePeriodSeconds": 0,
        "dryRun": ["All"],
    }


def test_delete_collection_selects_by_query_and_options_by_body() -> None:
    server = Server()
    with server.client() as client:
        client.resource("v1", "pods").delete_collection(
            label_selector="app=web", propagation_policy="Background"
        )

    assert server.last.method == "DELETE"
    assert server.last.url.path == "/api/v1/namespaces/ns/pods"
    assert dict(server.last.url.params) == {"labelSelector": "app=web"}
    assert body(server.last) == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Background",
    }


def test_low_level_request_returns_a_response() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            content=yaml.safe_dump({"kind": "APIVersions"}).encode(),
            headers={"content-type": "application/yaml", "x-extra": "1"},
        )

    server = Server(respond)
    with server.client() as client:
        response = client.request(
            "get", "/api", params={"pretty": True, "skip": None}, accept="application/yaml"
        )

    assert response.status == 200
    assert response.headers["x-extra"] == "1"
    assert response.body == {"kind": "APIVersions"}
    assert response.warnings == []
    assert server.last.headers["accept"] == "application/yaml"
    assert dict(server.last.url.params) == {"pretty": "true"}


def test_low_level_request_bodies() -> None:
    server = Server(lambda request: httpx.Response(204))
    with server.client() as client:
        empty = client.request("POST", "/x", body=b"raw", content_type="application/yaml")
        assert server.last.content == b"raw"
        assert server.last.headers["content-type"] == "application/yaml"
        client.request("POST", "/x", body=[1, 2])
        assert server.last.headers["content-type"] == "application/json"
        client.request("GET", "/x")

    assert "content-type" not in server.last.headers
    assert empty.body is None


def test_tls_server_name_is_sent_as_sni() -> None:
    server = Server()
    with server.client(tls_server_name="kubernetes.default", insecure_skip_tls_verify=True) as c:
        c.request("GET", "/version")

    assert server.last.extensions["sni_hostname"] == "kubernetes.default"


def test_from_kubeconfig(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:6443"}}],
                "contexts": [
                    {"name": "a", "context": {"cluster": "c"}},
                    {"name": "b", "context": {"cluster": "c", "namespace": "nb"}},
                ],
                "current-context": "a",
            }
        )
    )

    with Client.from_kubeconfig(str(path)) as client:
        assert (client.config.server, client.namespace) == ("http://127.0.0.1:6443", "default")

    async def main() -> str:
        async with AsyncClient.from_kubeconfig(str(path), context="b") as client:
            return client.namespace

    assert asyncio.run(main()) == "nb"


# -- Errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "error_type"),
    [
        (
            status(404, "NotFound", 'configmaps "cm" not found', name="cm", kind="configmaps"),
            NotFoundError,
        ),
        (status(409, "AlreadyExists", 'configmaps "cm" already exists'), AlreadyExistsError),
        (status(409, "Conflict", "the object has been modified"), ConflictError),
        (status(410, "Expired", "too old resource version: 1 (5)"), ExpiredError),
        (status(403, "Forbidden", "nope"), ForbiddenError),
        (
            status(415, "UnsupportedMediaType", "the body of the request was in an unknown format"),
            UnsupportedMediaTypeError,
        ),
        (
            status(422, "Invalid", 'ConfigMap "cm" is invalid', causes=[{"field": "data"}]),
            InvalidError,
        ),
        # An unknown reason falls back to the code, like client-go's IsNotFound.
        (status(404, "SomethingNew", "gone missing"), NotFoundError),
        (status(500, "", "boom"), InternalError),
        (status(418, "Teapot", "short and stout"), ApiError),
    ],
)
def test_status_bodies_raise_typed_errors(payload: dict[str, Any], error_type: type) -> None:
    server = Server(lambda request: httpx.Response(payload["code"], json=payload))
    with server.client() as client, pytest.raises(ApiError) as caught:
        client.resource("v1", "configmaps").get("cm")

    assert type(caught.value) is error_type
    assert caught.value.status == payload
    assert caught.value.code == payload["code"]
    assert caught.value.reason == payload["reason"]
    assert caught.value.message == payload["message"] == str(caught.value)
    assert caught.value.details == payload["details"]


def test_expired_is_a_gone_error() -> None:
    assert issubclass(ExpiredError, GoneError)
    assert not issubclass(AlreadyExistsError, ConflictError)


@pytest.mark.parametrize(
    ("code", "method", "content_type", "text", "error_type", "reason", "message"),
    [
        (404, "GET", "text/plain", "404 page not found", NotFoundError, "NotFound",
         "the server could not find the requested resource"),
        (409, "POST", "text/plain", "", AlreadyExistsError, "AlreadyExists",
         "the server reported a conflict"),
        (409, "PUT", "text/plain", "", ConflictError, "Conflict",
         "the server reported a conflict"),
        (403, "GET", "text/plain; charset=utf-8", "  denied by proxy \n", ForbiddenError,
         "Forbidden", "denied by proxy"),
        (500, "GET", "text/plain", "boom", InternalError, "InternalError",
         'an error on the server ("boom") has prevented the request from succeeding'),
        (502, "GET", "text/html", "<html>bad gateway</html>", InternalError, "InternalError",
         'an error on the server ("unknown") has prevented the request from succeeding'),
        (410, "GET", "text/html", "<html/>", GoneError, "Unknown",
         "the server responded with the status code 410 but did not return more information"),
        (418, "GET", "text/plain", "teapot", ApiError, "Unknown",
         "the server responded with the status code 418 but did not return more information"),
    ],
)  # fmt: skip
def test_non_status_bodies_raise_errors_by_code(
    code: int,
    method: str,
    content_type: str,
    text: str,
    error_type: type,
    reason: str,
    message: str,
) -> None:
    server = Server(
        lambda request: httpx.Response(code, text=text, headers={"content-type": content_type})
    )
    with server.client() as client, pytest.raises(ApiError) as caught:
        client.request(method, "/api/v1/namespaces/ns/configmaps/cm", body={})

    assert type(caught.value) is error_type
    assert (caught.value.code, caught.value.reason, caught.value.message) == (code, reason, message)
    assert caught.value.status["kind"] == "Status"
    assert caught.value.details["causes"][0]["reason"] == "UnexpectedServerResponse"


def test_json_that_is_not_a_failure_status_is_treated_as_unstructured() -> None:
    payload = {"kind": "Status", "status": "Success", "code": 503}
    server = Server(lambda request: httpx.Response(503, json=payload, headers={"retry-after": "7"}))
    with server.client() as client, pytest.raises(ServiceUnavailableError) as caught:
        client.request("GET", "/healthz")

    assert caught.value.message == "the server is currently unable to handle the request"
    assert caught.value.details["retryAfterSeconds"] == 7


# -- Watch -------------------------------------------------------------------------------------


def frame(event_type: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": event_type, "object": obj}) + b"\n"


def pod(name: str, rv: str) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": name, "resourceVersion": rv}}


STREAM = [
    frame("ADDED", pod("a", "1")),
    frame("MODIFIED", pod("a", "2")),
    b"\n",
    frame("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": "3"}}),
    frame("DELETED", pod("a", "4")),
]
EXPECTED = [
    WatchEvent("ADDED", pod("a", "1")),
    WatchEvent("MODIFIED", pod("a", "2")),
    WatchEvent("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": "3"}}),
    WatchEvent("DELETED", pod("a", "4")),
]
EXPIRED = status(410, "Expired", "too old resource version: 1 (40)")


def chunked(lines: Iterable[bytes]) -> list[bytes]:
    """Re-cut the stream so frames straddle chunk boundaries, as on a real connection."""
    data = b"".join(lines)
    return [data[i : i + 7] for i in range(0, len(data), 7)]


def stream_response(lines: Iterable[bytes]) -> httpx.Response:
    return httpx.Response(
        200, content=iter(chunked(lines)), headers={"content-type": "application/json"}
    )


async def _aiter(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def async_stream_response(lines: Iterable[bytes]) -> httpx.Response:
    return httpx.Response(
        200, content=_aiter(chunked(lines)), headers={"content-type": "application/json"}
    )


def test_watch_parses_the_event_stream() -> None:
    server = Server(lambda request: stream_response(STREAM))
    with server.client() as client:
        events = list(
            client.resource("v1", "pods").watch(
                resource_version="0",
                label_selector="app=web",
                allow_bookmarks=True,
                timeout_seconds=30,
            )
        )

    assert events == EXPECTED
    assert server.last.url.path == "/api/v1/namespaces/ns/pods"
    assert dict(server.last.url.params) == {
        "watch": "true",
        "resourceVersion": "0",
        "labelSelector": "app=web",
        "allowWatchBookmarks": "true",
        "timeoutSeconds": "30",
    }
    assert server.last.extensions["timeout"]["read"] is None


def test_watch_is_lazy() -> None:
    server = Server(lambda request: stream_response(STREAM))
    with server.client() as client:
        events = client.resource("v1", "pods").watch()
        assert server.requests == []
        assert next(iter(events)) == EXPECTED[0]


def test_watch_error_event_raises_gone() -> None:
    server = Server(lambda request: stream_response([STREAM[0], frame("ERROR", EXPIRED)]))
    received: list[WatchEvent] = []
    with server.client() as client, pytest.raises(GoneError) as caught:
        for event in client.resource("v1", "pods").watch(resource_version="1"):
            received.append(event)

    assert received == EXPECTED[:1]
    assert isinstance(caught.value, ExpiredError)
    assert caught.value.code == 410
    assert caught.value.message == "too old resource version: 1 (40)"


def test_watch_refused_up_front_raises() -> None:
    denied = status(403, "Forbidden", 'pods is forbidden: User "x" cannot watch resource "pods"')
    server = Server(lambda request: httpx.Response(403, json=denied))
    with server.client() as client, pytest.raises(ForbiddenError) as caught:
        list(client.resource("v1", "pods").watch())

    assert caught.value.status == denied


# -- Async -------------------------------------------------------------------------------------


def test_async_resource_verbs_and_errors() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(404, json=status(404, "NotFound", 'configmaps "cm" not found'))
        return httpx.Response(201, json=body(request))

    server = Server(respond)

    async def main() -> dict[str, Any]:
        async with server.async_client() as client:
            configmaps = client.resource("v1", "configmaps")
            with pytest.raises(NotFoundError) as caught:
                await configmaps.get("cm")
            assert caught.value.reason == "NotFound"
            return await configmaps.create(CM, field_manager="me")

    assert asyncio.run(main()) == CM
    assert [(r.method, r.url.path) for r in server.requests] == [
        ("GET", "/api/v1/namespaces/ns/configmaps/cm"),
        ("POST", "/api/v1/namespaces/ns/configmaps"),
    ]
    assert dict(server.last.url.params) == {"fieldManager": "me"}


def test_async_low_level_request_and_unstructured_error() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/version":
            return httpx.Response(200, json={"major": "1"})
        return httpx.Response(500, text="boom", headers={"content-type": "text/plain"})

    server = Server(respond)

    async def main() -> Any:
        async with server.async_client() as client:
            with pytest.raises(InternalError):
                await client.request("GET", "/broken")
            return (await client.request("GET", "/version")).body

    assert asyncio.run(main()) == {"major": "1"}


def test_async_watch_parses_the_event_stream() -> None:
    server = Server(lambda request: async_stream_response(STREAM))

    async def main() -> list[WatchEvent]:
        async with server.async_client() as client:
            return [event async for event in client.resource("v1", "pods").watch("")]

    assert asyncio.run(main()) == EXPECTED
    assert server.last.url.path == "/api/v1/pods"
    assert dict(server.last.url.params) == {"watch": "true"}


def test_async_watch_error_event_raises_gone() -> None:
    server = Server(lambda request: async_stream_response([STREAM[0], frame("ERROR", EXPIRED)]))

    async def main() -> list[WatchEvent]:
        received: list[WatchEvent] = []
        async with server.async_client() as client:
            with pytest.raises(GoneError) as caught:
                async for event in client.resource("v1", "pods").watch(resource_version="1"):
                    received.append(event)
            assert caught.value.reason == "Expired"
        return received

    assert asyncio.run(main()) == EXPECTED[:1]


def test_async_watch_refused_up_front_raises() -> None:
    server = Server(lambda request: httpx.Response(410, json=EXPIRED))

    async def main() -> None:
        async with server.async_client() as client:
            async for _ in client.resource("v1", "pods").watch(resource_version="1"):
                pass

    with pytest.raises(ExpiredError):
        asyncio.run(main())
