"""The sync :class:`Client` and the async :class:`AsyncClient`.

Both are thin: request building lives in :mod:`kapi.client.resource` and
:mod:`kapi.client.request`, response handling in :meth:`_ClientBase._receive`.
What remains per class is the I/O call itself, sync or async.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Awaitable, Iterator, Mapping
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

import httpx

from kapi.apimachinery.unstructured import Object
from kapi.client.config import ClientConfig
from kapi.client.errors import error_from_response
from kapi.client.kubeconfig import load_kubeconfig
from kapi.client.request import Request, ResourceType, Response, decode_body
from kapi.client.resource import Resource
from kapi.client.warnings import WarningHandler, WarningHeader, handle_warnings
from kapi.client.watch import WatchEvent, decode_event

#: Seconds allowed for connecting and for each read of an ordinary request; watches
#: are exempt from the read limit, since they idle until something changes.
DEFAULT_TIMEOUT = 30.0

#: Connections kept open between calls: a CLI or test suite makes many small requests.
_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=60.0)

T = TypeVar("T")
W = TypeVar("W")

SyncResource = Resource[Object, Iterator[WatchEvent]]
AsyncResource = Resource[Awaitable[Object], AsyncIterator[WatchEvent]]


class _ClientBase(abc.ABC, Generic[T, W]):
    """Configuration and the I/O-free steps every request goes through.

    Warnings: each response's ``Warning`` headers go to ``warning_handler``
    when the client has one, else to the process-wide default of
    :func:`~kapi.client.warnings.set_default_warning_handler` at that moment.
    The parsed warnings are on :attr:`Response.warnings` for ``request()``
    calls, and ``last_warnings`` holds those of the latest response this
    client received, successful or not, which is how callers of
    ``client.resource(...).get()`` and the like read them.  Calls running
    concurrently on one client overwrite each other's ``last_warnings``;
    give such a client a handler instead.
    """

    def __init__(
        self,
        config: ClientConfig,
        timeout: float | None = DEFAULT_TIMEOUT,
        warning_handler: WarningHandler | None = None,
    ) -> None:
        self.config = config
        self.warning_handler = warning_handler
        #: The warnings of the latest response, parsed; empty before the first.
        self.last_warnings: list[WarningHeader] = []
        self._timeout = timeout
        self._extensions = (
            {"sni_hostname": config.tls_server_name} if config.tls_server_name else {}
        )

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | None = None,
        context: str | None = None,
        *,
        warning_handler: WarningHandler | None = None,
    ) -> Self:
        """A client for ``context`` of the kubeconfig kubectl would pick (``load_kubeconfig``)."""
        return cls(load_kubeconfig(path, context), warning_handler=warning_handler)

    @property
    def namespace(self) -> str:
        """The default namespace for namespaced calls that name none."""
        return self.config.namespace

    def resource(self, api_version: str, plural: str, *, namespaced: bool = True) -> Resource[T, W]:
        """A handle on one resource type, e.g. ``resource("apps/v1", "deployments")``."""
        return Resource(self, ResourceType(api_version, plural, namespaced))

    @abc.abstractmethod
    def _call(self, request: Request) -> T:
        """Send ``request`` and return its decoded body (an awaitable of it, when async)."""

    @abc.abstractmethod
    def _watch(self, request: Request) -> W:
        """Open the watch ``request`` and iterate over its events."""

    def _client_options(self) -> dict[str, Any]:
        headers = {"User-Agent": self.config.user_agent, **self.config.auth_headers()}
        options: dict[str, Any] = {
            "base_url": self.config.server,
            "headers": headers,
            "limits": _LIMITS,
        }
        if self.config.server.startswith("https:"):
            options["verify"] = self.config.ssl_context()
        return options

    def _prepare(
        self, http: httpx.Client | httpx.AsyncClient, request: Request, *, watch: bool = False
    ) -> httpx.Request:
        timeout = httpx.Timeout(self._timeout, read=None if watch else self._timeout)
        return http.build_request(
            request.method,
            request.path,
            params=request.params,
            content=request.body,
            headers=request.headers(),
            timeout=timeout,
            extensions=self._extensions,
        )

    def _receive(self, raw: httpx.Response, content: bytes) -> Response:
        """Every response passes through here, failed or not, watch or not.

        This is the single place a response's headers are looked at, so response
        policies such as warning handling belong here and cover every call.
        Warnings are handled before a failure raises its typed
        :class:`~kapi.client.errors.ApiError`, as client-go handles them.
        """
        values = [value for key, value in raw.headers.raw if key.lower() == b"warning"]
        warnings = handle_warnings(values, self.warning_handler)
        self.last_warnings = warnings
        if raw.is_error:
            raise error_from_response(raw.status_code, raw.request.method, raw.headers, content)
        body = decode_body(content, raw.headers.get("content-type", ""))
        return Response(raw.status_code, raw.headers, content, body, warnings)


class Client(_ClientBase[Object, Iterator[WatchEvent]]):
    """A blocking API client over one keep-alive connection pool.

    ``transport`` replaces the network (e.g. ``httpx.MockTransport`` in tests);
    ``warning_handler`` overrides the process-wide one for this client.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
        warning_handler: WarningHandler | None = None,
    ) -> None:
        super().__init__(config, timeout, warning_handler)
        self._http = httpx.Client(transport=transport, **self._client_options())

    def request(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        accept: str | None = None,
    ) -> Response:
        """Any API call by path; dict and list bodies are sent as JSON."""
        return self._send(Request.build(method, path, params, body, content_type, accept))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _send(self, request: Request) -> Response:
        raw = self._http.send(self._prepare(self._http, request))
        return self._receive(raw, raw.content)

    def _call(self, request: Request) -> Object:
        return self._send(request).body

    def _watch(self, request: Request) -> Iterator[WatchEvent]:
        raw = self._http.send(self._prepare(self._http, request, watch=True), stream=True)
        try:
            self._receive(raw, raw.read() if raw.is_error else b"")
            for line in raw.iter_lines():
                event = decode_event(line)
                if event is not None:
                    yield event
        finally:
            raw.close()


class AsyncClient(_ClientBase[Awaitable[Object], AsyncIterator[WatchEvent]]):
    """The asyncio twin of :class:`Client`: same API, with ``await`` and ``async for``."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
        warning_handler: WarningHandler | None = None,
    ) -> None:
        super().__init__(config, timeout, warning_handler)
        self._http = httpx.AsyncClient(transport=transport, **self._client_options())

    async def request(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        accept: str | None = None,
    ) -> Response:
        """Any API call by path; dict and list bodies are sent as JSON."""
        return await self._send(Request.build(method, path, params, body, content_type, accept))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _send(self, request: Request) -> Response:
        raw = await self._http.send(self._prepare(self._http, request))
        return self._receive(raw, raw.content)

    async def _call(self, request: Request) -> Object:
        return (await self._send(request)).body

    async def _watch(self, request: Request) -> AsyncIterator[WatchEvent]:
        raw = await self._http.send(self._prepare(self._http, request, watch=True), stream=True)
        try:
            self._receive(raw, await raw.aread() if raw.is_error else b"")
            async for line in raw.aiter_lines():
                event = decode_event(line)
                if event is not None:
                    yield event
        finally:
            await raw.aclose()
