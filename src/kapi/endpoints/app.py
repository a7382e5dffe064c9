"""The handler chain: every HTTP request enters here.

In upstream's order: request info, (authentication comes with TLS), the
request context with its warning recorder, metrics, max body size (in the
handlers' body read), then routing to a non-resource endpoint or to a REST
handler.  Any :class:`StatusError` raised below becomes the upstream
``Status`` response.

The chain is handed what it serves with (:class:`HandlerConfig`) by
:mod:`kapi.server`; the audit filter is one of those, by the protocol
:class:`AuditFilter` (:mod:`kapi.audit` implements it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from kapi.apimachinery import errors
from kapi.endpoints import discovery, handlers, scale
from kapi.endpoints.aggregated_discovery import AggregatedDiscovery
from kapi.endpoints.health import HealthChecks
from kapi.endpoints.http import (
    Receive,
    Request,
    Response,
    Scope,
    Send,
    StreamingResponse,
    send_response,
)
from kapi.endpoints.metrics import APIServerMetrics
from kapi.endpoints.negotiation import negotiate_output
from kapi.endpoints.openapi.service import OpenAPIService
from kapi.endpoints.requestinfo import parse_request_info
from kapi.registry.store import Store
from kapi.request import RequestContext, RequestInfo, bind
from kapi.runtime import protobuf, serializer
from kapi.runtime.scheme import Deprecation, GroupVersion, Resource, Scheme
from kapi.storage.interface import StorageUnavailableError

log = logging.getLogger(__name__)

_NOT_FOUND = errors.StatusError(404, "NotFound", "the server could not find the requested resource")
_SHUTTING_DOWN = errors.service_unavailable("apiserver is shutting down")
#: Audit annotations upstream adds to requests for deprecated APIs (KEP-1693).
DEPRECATED_ANNOTATION = "k8s.io/deprecated"
REMOVED_RELEASE_ANNOTATION = "k8s.io/removed-release"
_METHOD_NOT_ALLOWED = errors.StatusError(
    405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
)


#: A POST to a subresource that creates (upstream's ``rest.NamedCreater`` subresources).
SubresourceCreate = Callable[[handlers.RequestScope, Request], Awaitable[Response]]


class AuditedRequest(Protocol):
    """One request's audit, from :meth:`AuditFilter.begin` (upstream's ``WithAudit``)."""

    def panic(self, exc: BaseException) -> None:
        """Record an unexpected error (a Go handler's panic)."""
        ...

    async def respond(
        self,
        send: Send,
        response: Response | StreamingResponse,
        extra: list[tuple[bytes, bytes]],
        receive: Receive,
    ) -> None:
        """Write the response (with ``extra`` headers), recording the response stages."""
        ...


class AuditFilter(Protocol):
    """The audit filter the chain runs every request through (upstream's ``WithAudit``)."""

    def begin(
        self, request: Request, info: RequestInfo, context: RequestContext
    ) -> AuditedRequest: ...


class StorageVersionGate(Protocol):
    """This server's StorageVersion registrations, as the write gate reads them
    (:class:`kapi.storageversion.manager.StorageVersionManager` implements it)."""

    def has_pending(self) -> bool:
        """Whether any resource waits for its registration (else the gate lets all through):
        the built-ins until start-up registered them, a CRD while its storage version
        is being recorded."""
        ...

    def pending_update(self, group: str, resource: str) -> bool: ...

    async def wait_registered(self, group: str, resource: str) -> bool:
        """Whether a write may go on, after waiting as long as the resource allows
        (built-ins: not at all, as upstream; custom resources: a moment)."""
        ...

    def last_update_error(self, group: str, resource: str) -> str:
        """The last registration error's text, ``<nil>`` when none."""
        ...


class _RegistrationPending(errors.StatusError):
    """The gate's 503: upstream writes it without a ``Retry-After`` header."""


#: Writes the gate always lets through: StorageVersions themselves (registration
#: writes them) and, in kube-system only, leases (identity and leader election).
_GATE_FREE = frozenset({("internal.apiserver.k8s.io", "storageversions")})
_READ_VERBS = frozenset({"get", "list", "watch"})


async def _storage_version_gate(gate: StorageVersionGate, info: RequestInfo) -> None:
    """Upstream's ``WithStorageVersionPrecondition`` for a resource request, while
    some registration is pending: a write to a resource still pending is refused
    (custom resources: once a short wait for their registration ran out)."""
    if info.verb in _READ_VERBS:
        return
    group, resource = info.api_group, info.resource
    if (group, resource) in _GATE_FREE:
        return
    if group == "coordination.k8s.io" and resource == "leases" and info.namespace == "kube-system":
        return
    if not gate.pending_update(group, resource) or await gate.wait_registered(group, resource):
        return
    raise _RegistrationPending(
        503,
        "ServiceUnavailable",
        "wait for storage version registration to complete for resource: "
        f"{errors.qualified(resource, group)}, "
        f"last seen error: {gate.last_update_error(group, resource)}",
    )


@dataclass(frozen=True)
class HandlerConfig:
    """What the handler chain serves with, handed over by :mod:`kapi.server`."""

    scheme: Scheme
    #: The store serving a version of a resource (custom resources have one per version).
    store_for: Callable[[Resource, str], Store]
    metrics: APIServerMetrics
    #: ``None`` when auditing is off: the chain then does no audit work.
    audit: AuditFilter | None
    #: The checks of ``/healthz``, ``/livez`` and ``/readyz``, by path.
    health: Mapping[str, HealthChecks]
    #: The ``/version`` body.
    version_info: Callable[[], dict[str, str]]
    #: ``host:port``, as ``/api`` advertises it.
    address: str
    openapi: OpenAPIService
    #: How often a quiet watch with ``allowWatchBookmarks`` gets a BOOKMARK (seconds).
    bookmark_interval: float
    #: Set when shutdown begins: watches end and new requests are told to retry.
    stopping: asyncio.Event
    #: The lifespan: start the server before the first request, stop it after the last.
    start: Callable[[], Awaitable[None]]
    stop: Callable[[], Awaitable[None]]
    #: The StorageVersion write gate (KEP-2339); ``None`` when the server has none.
    storage_versions: StorageVersionGate | None = None
    #: Subresources answered by a POST of another kind (``serviceaccounts/token``), by
    #: (group, resource, subresource).
    subresource_creates: Mapping[tuple[str, str, str], SubresourceCreate] = field(
        default_factory=dict
    )


class APIServerApp:
    """The ASGI application of one API server, given what it serves with."""

    def __init__(self, config: HandlerConfig) -> None:
        self.config = config
        self.metrics = config.metrics
        self.discovery = AggregatedDiscovery(config.scheme)
        #: The write gate; requests pay one ``has_pending`` call for it once nothing waits.
        self._storage_version_gate = config.storage_versions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.config.start()
                except Exception as exc:
                    # Unreachable storage is said in one line; anything else is a bug.
                    unreachable = isinstance(exc, StorageUnavailableError)
                    log.error("start-up failed: %s", exc, exc_info=not unreachable)
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.config.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        request = Request(scope, receive)
        query = request.query
        info = parse_request_info(request.method, request.path, query.get("watch") in ("1", "true"))
        context = RequestContext(info)
        bind(context)
        auditor = self.config.audit
        audit = auditor.begin(request, info, context) if auditor is not None else None
        try:
            if info.is_resource_request:
                response = await self._resource(request, info, context)
            else:
                response = await self._non_resource(request)
        except (errors.StatusError, StorageUnavailableError) as exc:
            err = exc if isinstance(exc, errors.StatusError) else _unreachable(info)
            response = self._status_response(err, request, info)
            retry_after = err.details.get("retryAfterSeconds") if err.details else None
            if retry_after or (err.code == 503 and not isinstance(err, _RegistrationPending)):
                response.headers.append((b"retry-after", str(retry_after or 1).encode()))
        except Exception as exc:
            log.exception("internal error serving %s %s", request.method, request.path)
            if audit is not None:
                audit.panic(exc)
            err = errors.internal_error(exc)
            response = Response(err.code, orjson.dumps(err.status))
        if audit is None:
            await send_response(send, response, context.warning_recorder.headers(), receive)
        else:
            await audit.respond(send, response, context.warning_recorder.headers(), receive)
        self.metrics.observe(
            info,
            request.method,
            query.get("dryRun") == "All",
            response.status,
            time.perf_counter() - started,
            request.headers.get("content-type", "") if request.method == "PATCH" else "",
        )

    def _status_response(
        self, exc: errors.StatusError, request: Request, info: RequestInfo
    ) -> Response:
        """A failed resource request's ``Status``, as upstream's ``ErrorNegotiated`` writes it.

        It goes in the media type ``Accept`` picks among the serializers of the
        resource's kind (no protobuf for custom resources), or among all of them
        when the request named no served resource (upstream's NotFound handler).
        When ``Accept`` allows none, the error is still the one reported, in
        indented JSON (``WriteRawJSON``).
        """
        status = exc.status
        if not info.is_resource_request:
            return Response(exc.code, orjson.dumps(status))
        accept = request.headers.get("accept")
        resource = self.config.scheme.lookup(info.api_group, info.api_version, info.resource)
        offers_protobuf = resource is None or _protobuf_asked(accept, resource, info)
        try:
            output = negotiate_output(accept, allow_transform=False, protobuf=offers_protobuf)
        except errors.StatusError:
            return Response(exc.code, orjson.dumps(status, option=orjson.OPT_INDENT_2))
        return handlers.encode(exc.code, status, output)

    async def _resource(self, request: Request, info: RequestInfo, context: RequestContext) -> Any:
        config = self.config
        if config.stopping.is_set() and info.verb != "watch":
            # Upstream's WithWaitGroup: once shutdown has begun, requests that still arrive
            # on open connections are told to retry (another server, or this one restarted).
            raise _SHUTTING_DOWN
        gate = self._storage_version_gate
        if gate is not None and gate.has_pending():
            await _storage_version_gate(gate, info)
        resource = config.scheme.lookup(info.api_group, info.api_version, info.resource)
        if resource is None:
            raise _NOT_FOUND
        if info.subresource and info.subresource not in resource.subresources_of(info.api_version):
            raise _NOT_FOUND
        if info.namespace and not resource.namespaced and info.resource != "namespaces":
            raise _NOT_FOUND
        creates = config.subresource_creates.get(
            (resource.group, resource.plural, info.subresource)
        )
        handler: Any
        if resource.reader is not None:
            handler = _reader_handler(resource, info, request)
        elif creates is not None:
            if info.verb != "create":
                raise _METHOD_NOT_ALLOWED
            handler = creates
        else:
            verbs: Mapping[str, Callable[..., Awaitable[Any]]] = handlers.VERBS
            if info.subresource in resource.creators:
                verbs = handlers.CREATOR_VERBS
            elif info.subresource == "scale":
                verbs = scale.VERBS
            handler = verbs.get(info.verb)
            if handler is None or not _route_allows(resource, info, request.method):
                raise _METHOD_NOT_ALLOWED
        deprecation = config.scheme.deprecation(resource, info.api_version)
        if deprecation is not None:
            self._record_deprecated(info, deprecation, context)
        accept = request.headers.get("accept")
        output = negotiate_output(accept, protobuf=_protobuf_asked(accept, resource, info))
        scope = handlers.RequestScope(
            scheme=config.scheme,
            store=config.store_for(resource, info.api_version),
            resource=resource,
            version=info.api_version,
            namespace=(info.namespace or None) if resource.namespaced else None,
            name=info.name,
            subresource=info.subresource,
            output=output,
            bookmark_interval=config.bookmark_interval,
            stopping=config.stopping,
            store_for=config.store_for,
        )
        return await handler(scope, request)

    def _record_deprecated(
        self, info: RequestInfo, deprecation: Deprecation, context: RequestContext
    ) -> None:
        """Upstream's deprecated-API handling: the warning, the gauge, audit annotations.

        The annotations are only kept when an audit log is being written: upstream
        adds them to the request's audit context, which exists only then.
        """
        removed_release = deprecation.removed_release
        self.metrics.record_deprecated(info, removed_release)
        context.warning_recorder.add_warning(deprecation.warning)
        if self.config.audit is not None:
            context.audit_annotations[DEPRECATED_ANNOTATION] = "true"
            if removed_release:
                context.audit_annotations[REMOVED_RELEASE_ANNOTATION] = removed_release

    async def _non_resource(self, request: Request) -> Response:
        path = request.path.rstrip("/") or "/"
        if request.method not in ("GET", "HEAD"):
            raise (
                _NOT_FOUND
                if path not in _KNOWN_PATHS
                else errors.StatusError(
                    405,
                    "MethodNotAllowed",
                    "the server does not allow this method on the requested resource",
                )
            )
        config = self.config
        parts = path.strip("/").split("/")
        if parts[0] in ("healthz", "livez", "readyz"):
            checks = config.health[parts[0]]
            code, text = await checks.run(request.query, "/".join(parts[1:]))
            return Response(
                code,
                text.encode(),
                "text/plain; charset=utf-8",
                [(b"x-content-type-options", b"nosniff")],
            )
        if path == "/version":
            return _json(config.version_info())
        if path == "/metrics":
            return Response(200, self.metrics.render(), "text/plain; version=0.0.4; charset=utf-8")
        if path in ("/api", "/apis"):
            aggregated = self.discovery.serve(request, core=path == "/api")
            if aggregated is not None:
                return aggregated
        if path == "/api":
            return _json(discovery.api_versions(config.address))
        if path == "/apis":
            return _json(discovery.api_group_list(config.scheme))
        if parts[0] == "openapi":
            return await config.openapi.serve(request, parts[1:])
        if parts[0] == "api" and len(parts) == 2:
            body = discovery.api_resource_list(config.scheme, "", parts[1])
        elif parts[0] == "apis" and len(parts) == 2:
            body = discovery.api_group(config.scheme, parts[1])
            if body is not None:
                body = {"kind": "APIGroup", "apiVersion": "v1", **body}
        elif parts[0] == "apis" and len(parts) == 3:
            body = discovery.api_resource_list(config.scheme, parts[1], parts[2])
        else:
            body = None
        if body is None:
            raise _NOT_FOUND
        return _json(body)


#: The storage operation each verb names in a ``ServerTimeout`` (upstream's Interpret*Error).
_STORAGE_OPERATIONS = {"patch": "update", "deletecollection": "delete", "watch": "list"}


def _unreachable(info: RequestInfo) -> errors.StatusError:
    """Storage did not answer: a retryable ``ServerTimeout`` naming the operation."""
    operation = _STORAGE_OPERATIONS.get(info.verb, info.verb)
    return errors.server_timeout(info.resource, info.api_group, operation, 2)


def _protobuf_asked(accept: str | None, resource: Resource, info: RequestInfo) -> bool:
    """Whether this kind's protobuf form matters to negotiating ``accept``.

    Looked up only when the answer can change the outcome: a request that
    accepts JSON and not protobuf (most of them) is answered in JSON either
    way, while a 406 lists protobuf among the types the kind offers.
    """
    if accept is None or (
        serializer.PROTOBUF not in accept and ("application/json" in accept or "*/*" in accept)
    ):
        return False
    api_version = GroupVersion(resource.group, info.api_version).api_version
    return protobuf.supports(api_version, resource.kind)


def _reader_handler(resource: Resource, info: RequestInfo, request: Request) -> Any:
    """The handler of a computed resource's get or list (upstream registers no other route).

    A list with ``watch`` reaches upstream's list handler, which refuses it as a verb
    the resource does not support; the deprecated ``/watch/`` paths are not routed.
    """
    if info.verb == "watch":
        if "/watch/" in info.path:
            raise _NOT_FOUND
        kind = errors.qualified(info.resource, info.api_group)
        details = {"group": info.api_group} if info.api_group else {}
        refusal = errors.StatusError(
            405,
            "MethodNotAllowed",
            f'watch is not supported on resources of kind "{kind}"',
            {**details, "kind": info.resource},
        )

        async def refuse(scope: Any, request: Request) -> Any:
            raise refusal  # from the list handler, as upstream: deprecation warnings and all

        return refuse
    handler = handlers.READER_VERBS.get(info.verb)
    if handler is None or (info.verb == "list" and request.method not in ("GET", "HEAD")):
        raise _METHOD_NOT_ALLOWED
    return handler


def _route_allows(resource: Resource, info: RequestInfo, method: str) -> bool:
    """Whether upstream registers a route for this verb on this path (else 405).

    Collections take list/watch/create, and deletecollection where discovery
    lists it (not namespaces), items get/update/patch/delete, subresources
    get/update/patch; a namespaced resource's all-namespaces path takes only
    list and watch.
    """
    if info.verb == "watch" and method not in ("GET", "HEAD"):
        return False  # a /watch/ path is routed for GET only
    if info.subresource in resource.creators:
        return info.verb == "create"  # upstream routes only POST to a NamedCreater
    if info.subresource:
        return info.verb in ("get", "update", "patch")
    if info.name:
        # watch: only the deprecated /watch/ path of one object gets here with it.
        return info.verb in ("get", "update", "patch", "delete", "watch")
    if resource.namespaced and not info.namespace:
        return info.verb in ("list", "watch")
    if info.verb == "deletecollection":
        return "deletecollection" in discovery.resource_verbs(resource)
    return info.verb in ("list", "watch", "create")


_KNOWN_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/metrics", "/api", "/apis"})


def _json(body: Any) -> Response:
    return Response(200, orjson.dumps(body))
