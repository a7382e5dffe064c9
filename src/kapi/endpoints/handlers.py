"""REST handlers: one HTTP verb on one resource, from query and body to Store call.

The counterpart of upstream's ``endpoints/handlers``: decode the body in the
requested version (pruning and reporting unknown and duplicate fields per
``fieldValidation``), default and convert it to the hub version, call the
store, and encode the result in the requested version or as a ``Table``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, replace
from typing import Any

import jsonpatch
import orjson

from kapi.apimachinery import errors, field_errors
from kapi.apimachinery.field_errors import Path
from kapi.apimachinery.field_selector import FieldLabelNotSupportedError, field_label_converter
from kapi.apimachinery.field_selector import FieldSelectorParseError as FieldSelectorError
from kapi.apimachinery.field_selector import Requirement as FieldRequirement
from kapi.apimachinery.field_selector import Selector as FieldSelector
from kapi.apimachinery.field_selector import parse_selector as parse_field_selector
from kapi.apimachinery.gotext import go_json_kind, go_quote, parse_go_int
from kapi.apimachinery.labels import SelectorParseError as LabelSelectorError
from kapi.apimachinery.labels import parse_selector
from kapi.apimachinery.unstructured import Object
from kapi.apimachinery.validation import validate_field_manager
from kapi.endpoints import tables
from kapi.endpoints.http import Request, Response, StreamingResponse
from kapi.endpoints.negotiation import JSON_OUTPUT, Output, body_media_type, patch_media_type
from kapi.endpoints.openapi import meta as openapi_meta
from kapi.registry.deletion import Propagation
from kapi.registry.fieldmanager.manager import manager_or_user_agent
from kapi.registry.predicate import SelectionPredicate
from kapi.registry.store import ListResult, Preconditions, Store
from kapi.request import current as current_request
from kapi.runtime import patch, protobuf, serializer
from kapi.runtime.cooperative import CHUNK, run_steps
from kapi.runtime.objects import deep_copy, meta
from kapi.runtime.pruning import DecodeTypeError, prune
from kapi.runtime.scheme import GroupVersion, Resource, Scheme

_FIELD_VALIDATION = ("Ignore", "Warn", "Strict")
_META_FIELD_LABELS = ("metadata.name", "metadata.namespace")
_PATCH_TYPES = (
    serializer.JSON_PATCH,
    serializer.MERGE_PATCH,
    serializer.APPLY_PATCH,
    serializer.STRATEGIC_MERGE_PATCH,
)
_PATCH_TYPES_SUPPORTED = (
    serializer.JSON_PATCH,
    serializer.MERGE_PATCH,
    serializer.STRATEGIC_MERGE_PATCH,
    serializer.APPLY_PATCH,
)
_PATCH_TYPES_SUPPORTED_CUSTOM = (
    serializer.JSON_PATCH,
    serializer.MERGE_PATCH,
    serializer.APPLY_PATCH,
)
#: Watches last between 30 and 60 minutes unless the client says otherwise (upstream).
DEFAULT_WATCH_TIMEOUT = 1800.0


@dataclass
class RequestScope:
    """Everything a handler needs about the resource a request addresses."""

    scheme: Scheme
    store: Store
    resource: Resource
    version: str
    namespace: str | None
    name: str
    subresource: str
    output: Output
    bookmark_interval: float
    #: Set when the server starts shutting down: open watches end then.
    stopping: asyncio.Event
    #: The store of any resource and version (subresources that write other kinds use it).
    store_for: Callable[[Resource, str], Store] | None = None

    @property
    def api_version(self) -> str:
        return GroupVersion(self.resource.group, self.version).api_version

    # -- encoding ---------------------------------------------------------------------

    async def to_version(self, obj: Object) -> Object:
        """``obj`` in the request's version, ``kind`` and ``apiVersion`` first as upstream."""
        return (await self.to_version_many([obj]))[0]

    async def to_version_many(self, objs: list[Object]) -> list[Object]:
        out = objs
        if self.store.hub_version != self.version:
            out = await self.scheme.from_hub_many(self.resource, objs, self.version)
        head = {"kind": self.resource.kind, "apiVersion": self.api_version}
        return [{**head, **obj} for obj in out]

    async def respond(self, status: int, obj: Object) -> Response:
        versioned = await self.to_version(obj)
        if self.output.as_kind == "Table":
            versioned = tables.table_for(
                self.resource.columns_of(self.version),
                [versioned],
                self.output,
                obj["metadata"].get("resourceVersion", ""),
            )
        return encode(status, versioned, self.output)

    # -- decoding ---------------------------------------------------------------------

    async def decode_object(self, raw: Any, duplicates: list[str], validation: str) -> Object:
        """A versioned request object, checked and pruned, as a defaulted hub object."""
        kind = self.resource.kind
        if not isinstance(raw, dict):
            raise self.unrecognized(
                f"couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{go_json_kind(raw)} into Go value of type struct {{ APIVersion string "
                f'"json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }}',
                b"",
            )
        body_version = raw.get("apiVersion") or self.api_version
        body_kind = raw.get("kind") or kind
        if not isinstance(body_version, str) or not isinstance(body_kind, str):
            raise errors.bad_request(
                "couldn't get version/kind; json parse error: json: cannot unmarshal "
                "non-string into Go struct field .apiVersion of type string"
            )
        gv = GroupVersion.parse(body_version)
        registered = self.scheme.by_kind(gv.group, body_kind)
        if registered is None or gv.version not in registered.versions:
            raise errors.bad_request(
                f'{body_kind} in version "{gv.version}" cannot be handled as a {kind}: no kind '
                f'"{body_kind}" is registered for version "{body_version}" in scheme '
                '"pkg/api/legacyscheme/scheme.go:30"'
            )
        if registered is not self.resource:
            raise errors.bad_request(
                f'{body_kind} in version "{gv.version}" cannot be handled as a {kind}: converting '
                f"({gv.version}.{body_kind}) to ({self.resource.group or 'core'}.{kind}): "
                "unknown conversion"
            )
        if body_version != self.api_version:
            raise errors.bad_request(
                f"the API version in the data ({body_version}) does not match the expected "
                f"API version ({self.api_version})"
            )
        raw["apiVersion"], raw["kind"] = body_version, body_kind
        version = self.resource.versions[self.version]
        order = _document_order(raw) if duplicates else None
        try:
            if version.pruner is not None:
                unknown = version.pruner(raw)
            else:
                assert version.schema is not None
                unknown = prune(raw, version.schema)
        except DecodeTypeError as exc:
            raise self._cannot_handle(str(exc)) from None
        problems = _field_problems(unknown, duplicates, order)
        if problems and validation == "Strict":
            raise self._cannot_handle("strict decoding error: " + ", ".join(problems))
        if problems and validation == "Warn":
            request = current_request()
            for problem in problems:
                request.add_warning(problem)
        self.scheme.default(self.resource, raw, self.version)
        if self.store.hub_version == self.version:
            return raw
        return await self.scheme.to_hub(self.resource, raw, self.version)

    def unrecognized(self, why: str, body: bytes) -> errors.StatusError:
        return errors.bad_request(
            f"the object provided is unrecognized (must be of type {self.resource.kind}): "
            f"{why} ({serializer.summarize(body)})"
        )

    def _cannot_handle(self, why: str) -> errors.StatusError:
        kind = self.resource.kind
        return errors.bad_request(
            f'{kind} in version "{self.version}" cannot be handled as a {kind}: {why}'
        )

    def set_namespace(self, obj: Object) -> None:
        """Fill in or check the object's namespace against the URL (upstream ``ValidNamespace``)."""
        metadata = meta(obj)
        if not self.resource.namespaced:
            metadata.pop("namespace", None)
            return
        given = metadata.get("namespace")
        if not given:
            metadata["namespace"] = self.namespace
        elif given != self.namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )


def _document_order(obj: Any) -> dict[str, int]:
    """Each field path's position in the document (dicts keep first-occurrence order)."""
    order: dict[str, int] = {}

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                child = f"{path}.{key}" if path else key
                order[child] = len(order)
                walk(value, child)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(obj, "")
    return order


def _field_problems(
    unknown: list[str], duplicates: list[str], order: dict[str, int] | None
) -> list[str]:
    """Unknown and duplicate fields in document order, as the strict decoder reports them.

    A field that is both unknown and repeated, or that sits inside an unknown
    field, is reported once, as unknown.
    """
    if not duplicates:
        return [f"unknown field {go_quote(p)}" for p in unknown]
    dropped = set(unknown)
    repeated = [
        p
        for p in duplicates
        if p not in dropped and not any(p.startswith((u + ".", u + "[")) for u in dropped)
    ]
    problems = [(p, f"unknown field {go_quote(p)}") for p in unknown]
    problems += [(p, f"duplicate field {go_quote(p)}") for p in repeated]
    assert order is not None
    problems.sort(key=lambda item: order.get(item[0], len(order)))
    return [text for _, text in problems]


async def encode_many(status: int, obj: Any, output: Output, count: int) -> Response:
    """:func:`encode` of a list of ``count`` items, without holding up other requests.

    JSON is one call into orjson (milliseconds even for tens of thousands of
    items); protobuf is encoded a chunk of items at a time with the loop given
    a turn in between; YAML, one call into PyYAML, runs in a thread, which the
    interpreter interrupts every few milliseconds to let the loop run.
    """
    if count <= CHUNK or output.media_type not in (serializer.YAML, serializer.PROTOBUF):
        return encode(status, obj, output)
    if output.media_type == serializer.PROTOBUF:
        body = await run_steps(protobuf.encode_steps(obj))
        return Response(status, body, serializer.PROTOBUF)
    return Response(status, await asyncio.to_thread(serializer.encode_yaml, obj), serializer.YAML)


def encode(status: int, obj: Any, output: Output) -> Response:
    if output.media_type == serializer.YAML:
        return Response(status, serializer.encode_yaml(obj), serializer.YAML)
    if output.media_type == serializer.PROTOBUF:
        return Response(status, protobuf.encode(obj), serializer.PROTOBUF)
    return Response(status, orjson.dumps(obj))


# -- query parameters -----------------------------------------------------------------


def write_options(
    query: dict[str, str], options_kind: str, patch_type: str = ""
) -> tuple[bool, str]:
    """``dryRun``, ``fieldValidation`` and ``fieldManager``, checked as upstream's
    ``Validate{Create,Update,Patch}Options`` (422 on ``<Kind>Options.meta.k8s.io``).

    A patch also checks ``force`` (apply only) and that an apply names its manager."""
    dry_run = _dry_run_values(query)
    validation = query.get("fieldValidation", "")
    errs = []
    if patch_type and patch_type != serializer.APPLY_PATCH and "force" in query:
        errs.append(
            field_errors.forbidden(Path("force"), "may not be specified for non-apply patch")
        )
    if patch_type == serializer.APPLY_PATCH and not query.get("fieldManager"):
        errs.append(field_errors.required(Path("fieldManager"), "is required for apply patch"))
    errs += validate_field_manager(query.get("fieldManager", ""), Path("fieldManager"))
    if any(value != "All" for value in dry_run):
        errs.append(field_errors.not_supported(Path("dryRun"), dry_run, ["All"]))
    if validation not in ("", *_FIELD_VALIDATION):
        errs.append(
            field_errors.not_supported(
                Path("fieldValidation"), validation, sorted(["", *_FIELD_VALIDATION])
            )
        )
    if errs:
        raise errors.invalid(options_kind, "meta.k8s.io", "", errs)
    return bool(dry_run), validation or "Warn"


def _dry_run_values(query: dict[str, str]) -> list[str]:
    value = query.get("dryRun")
    return [value] if value else []


#: Selectors longer than this (in characters, label and field together) are parsed
#: in a thread: parsing costs about 12 µs a term, so tens of milliseconds for a
#: URL of tens of kilobytes, which other requests should not wait for.
_LONG_SELECTOR = 4096


async def _predicate(query: dict[str, str], scope: RequestScope) -> SelectionPredicate:
    size = len(query.get("labelSelector", "")) + len(query.get("fieldSelector", ""))
    if size > _LONG_SELECTOR:
        return await asyncio.to_thread(_parse_and_compile, query, scope)
    return _parse_predicate(query, scope)


def _parse_and_compile(query: dict[str, str], scope: RequestScope) -> SelectionPredicate:
    """The predicate, its selectors' matchers made here too (in the thread)."""
    predicate = _parse_predicate(query, scope)
    if predicate.label is not None:
        predicate.label.compile()
    if predicate.field is not None:
        predicate.field.compile()
    return predicate


def _parse_predicate(query: dict[str, str], scope: RequestScope) -> SelectionPredicate:
    try:
        label = parse_selector(query.get("labelSelector", ""))
    except LabelSelectorError as exc:
        raise errors.bad_request(str(exc)) from None
    try:
        fields = parse_field_selector(query.get("fieldSelector", ""))
    except FieldSelectorError as exc:
        raise errors.bad_request(str(exc)) from None
    fields = _convert_field_labels(fields, scope.resource, scope.version)
    return SelectionPredicate(label, fields, scope.resource.selectable_fields)


def _convert_field_labels(fields: Any, resource: Resource, version: str) -> Any:
    """Reject field selectors on unsupported fields with upstream's two wordings,
    and name the accepted ones as the hub does.

    Custom resources and kinds with their own field-label conversion (Secret,
    Namespace, Event) answer ``field label not supported``; the others use the
    generic metadata-only one.
    """
    allowed = _own_field_labels(resource, version)
    if allowed is not None:
        try:
            return fields.transform(field_label_converter(allowed, resource.field_label_renames))
        except FieldLabelNotSupportedError as exc:
            raise errors.bad_request(str(exc)) from None
    for requirement in fields.requirements:
        if requirement.field not in _META_FIELD_LABELS:
            raise errors.bad_request(
                f'"{requirement.field}" is not a known field selector: only '
                '"metadata.name", "metadata.namespace"'
            )
    return fields


def _own_field_labels(resource: Resource, version: str) -> set[str] | None:
    """The labels a kind's own field-label conversion accepts; None: it has none.

    A custom resource version's (upstream ``crConverter``) has ``metadata.namespace``
    only when namespaced, and its ``selectableFields``.
    """
    custom = resource.versions[version].field_labels
    if custom is not None:
        meta = _META_FIELD_LABELS if resource.namespaced else _META_FIELD_LABELS[:1]
        return {*meta, *custom}
    if resource.field_labels:
        return {*_META_FIELD_LABELS, *resource.field_labels}
    return None


def _int_param(query: dict[str, str], name: str) -> int | None:
    value = query.get(name)
    if value in (None, ""):
        return None
    try:
        return parse_go_int(value)
    except ValueError as exc:
        # Upstream decodes the query into ListOptions (int64 fields) and answers the
        # conversion's strconv error as it is.
        raise errors.bad_request(str(exc)) from None


def bool_param(query: dict[str, str], name: str) -> bool | None:
    value = query.get(name)
    if value in (None, ""):
        return None
    return value.lower() in ("true", "1")


def _validate_list_options(query: dict[str, str], watch: bool) -> None:
    """Upstream's ``ValidateListOptions`` (422 on ``ListOptions.meta.k8s.io``)."""
    rv = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    initial = query.get("sendInitialEvents")
    path = Path("resourceVersionMatch")
    errs: list[field_errors.FieldError] = []
    if watch:
        if initial is not None and match != "NotOlderThan":
            errs.append(
                field_errors.forbidden(
                    path, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
                )
            )
        if match:
            if initial is None:
                errs.append(
                    field_errors.forbidden(
                        path,
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents "
                        "is provided",
                    )
                )
            if match != "NotOlderThan":
                errs.append(field_errors.not_supported(path, match, ["NotOlderThan"]))
            if query.get("continue"):
                errs.append(
                    field_errors.forbidden(
                        path, "resourceVersionMatch is forbidden when continue is provided"
                    )
                )
    else:
        if match:
            if not rv:
                errs.append(
                    field_errors.forbidden(
                        path, "resourceVersionMatch is forbidden unless resourceVersion is provided"
                    )
                )
            if query.get("continue"):
                errs.append(
                    field_errors.forbidden(
                        path, "resourceVersionMatch is forbidden when continue is provided"
                    )
                )
            if match not in ("Exact", "NotOlderThan"):
                errs.append(field_errors.not_supported(path, match, ["Exact", "NotOlderThan", ""]))
            if match == "Exact" and rv == "0":
                errs.append(
                    field_errors.forbidden(
                        path, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'
                    )
                )
        if initial is not None:
            errs.append(
                field_errors.forbidden(
                    Path("sendInitialEvents"), "sendInitialEvents is forbidden for list"
                )
            )
    if errs:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", errs)
    if query.get("continue") and rv not in ("", "0"):
        raise errors.bad_request("specifying resource version is not allowed when using continue")


# -- verbs ---------------------------------------------------------------------------


async def get(scope: RequestScope, request: Request) -> Response:
    kv = await scope.store.read(scope.namespace, scope.name)
    if scope.output == JSON_OUTPUT:
        body = scope.store.json_response(kv, scope.version)
        if body is not None:
            return Response(200, body)
    return await scope.respond(200, await scope.store.decode(kv))


async def list_(scope: RequestScope, request: Request) -> Response:
    query = request.query
    _validate_list_options(query, watch=False)
    result = await scope.store.list(
        scope.namespace,
        await _predicate(query, scope),
        limit=_int_param(query, "limit") or 0,
        continue_token=query.get("continue", ""),
        resource_version=query.get("resourceVersion", ""),
        resource_version_match=query.get("resourceVersionMatch", ""),
        json_items=scope.version if scope.output == JSON_OUTPUT else None,
    )
    rv = str(result.resource_version)
    if result.json_items is not None:
        return Response(200, _json_list(scope, _list_meta(result, rv), result.json_items))
    items = await scope.to_version_many(result.items)
    if scope.output.as_kind == "Table":
        columns = scope.resource.columns_of(scope.version)
        if scope.resource.table_row_order is not None:
            items = sorted(items, key=scope.resource.table_row_order)
        table = await tables.table_for_many(columns, items, scope.output, rv)
        if result.continue_token:
            table["metadata"]["continue"] = result.continue_token
        return await encode_many(200, table, scope.output, len(items))
    body = {
        "kind": scope.resource.list_kind,
        "apiVersion": scope.api_version,
        "metadata": _list_meta(result, rv),
        "items": items,
    }
    return await encode_many(200, body, scope.output, len(items))


def _list_meta(result: ListResult, rv: str) -> Object:
    list_meta: Object = {"resourceVersion": rv}
    if result.continue_token:
        list_meta["continue"] = result.continue_token
        if result.remaining is not None:
            list_meta["remainingItemCount"] = result.remaining
    return list_meta


def _json_list(scope: RequestScope, list_meta: Object, items: list[bytes]) -> bytes:
    """The list's JSON around items already encoded (``Store.list(json_items=...)``)."""
    head = orjson.dumps(
        {"kind": scope.resource.list_kind, "apiVersion": scope.api_version, "metadata": list_meta}
    )
    return b"".join((head[:-1], b',"items":[', b",".join(items), b"]}"))


async def watch(scope: RequestScope, request: Request) -> StreamingResponse:
    query = request.query
    _validate_list_options(query, watch=True)
    timeout = _int_param(query, "timeoutSeconds")
    bookmarks = bool_param(query, "allowWatchBookmarks")
    predicate = await _predicate(query, scope)  # a bad selector is a 400, as for a list
    if scope.name:
        predicate = _one_object(predicate, scope.name)
    encode_event, media_type = _watch_encoding(scope.output)
    try:
        events = await scope.store.watch(
            scope.namespace,
            predicate,
            resource_version=query.get("resourceVersion", ""),
            send_initial_events=bool_param(query, "sendInitialEvents"),
            progress_interval=scope.bookmark_interval if bookmarks else None,
        )
    except errors.StatusError as exc:
        # Upstream starts the stream and sends the error as its only event (410 for a
        # compacted resourceVersion), so watch clients see it as a watch event.
        return StreamingResponse(200, _error_event(exc, encode_event), media_type)
    deadline = float(timeout) if timeout else DEFAULT_WATCH_TIMEOUT
    return StreamingResponse(200, _watch_stream(scope, events, deadline, encode_event), media_type)


def _one_object(predicate: SelectionPredicate, name: str) -> SelectionPredicate:
    """A watch of one object (the deprecated ``/watch/.../{name}`` path), as upstream's
    ``ListResource`` serves it: the name becomes a ``metadata.name`` field selector, and
    a field selector the request gave must pin that same name."""
    fields = predicate.field
    if fields is not None and not fields.empty():
        if fields.exact("metadata.name") != name:
            raise errors.bad_request("fieldSelector metadata.name doesn't match requested name")
        return predicate
    return replace(predicate, field=FieldSelector([FieldRequirement("metadata.name", "=", name)]))


#: Encodes one watch event (its type and object) as it goes on the wire.
WatchEventEncoder = Callable[[str, Object], bytes]


def _watch_encoding(output: Output) -> tuple[WatchEventEncoder, str]:
    """The event encoder and content type of a watch answered in ``output``'s media type.

    Upstream frames a watch with the stream serializer of the media type it
    negotiated: newline-separated JSON, or length-prefixed protobuf events
    (``;stream=watch``).  A ``Table`` watch is JSON.
    """
    if output.media_type == serializer.PROTOBUF:
        return protobuf.encode_watch_event, serializer.PROTOBUF_WATCH
    return _json_watch_event, serializer.JSON


def _json_watch_event(event_type: str, obj: Object) -> bytes:
    return orjson.dumps({"type": event_type, "object": obj}) + b"\n"


async def _error_event(
    exc: errors.StatusError, encode_event: WatchEventEncoder
) -> AsyncGenerator[bytes]:
    yield encode_event("ERROR", exc.status)


async def _watch_stream(
    scope: RequestScope,
    events: AsyncGenerator[Any],
    timeout: float,
    encode_event: WatchEventEncoder,
) -> AsyncGenerator[bytes]:
    """Encode events until the timeout, the end of the storage watch, or server shutdown."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    stopping = asyncio.ensure_future(scope.stopping.wait())
    next_event: asyncio.Future[Any] | None = None
    try:
        while True:
            next_event = asyncio.ensure_future(anext(events))
            done, _ = await asyncio.wait(
                (next_event, stopping),
                timeout=max(0.0, deadline - loop.time()),
                return_when=asyncio.FIRST_COMPLETED,
            )
            if next_event not in done:
                return
            try:
                event = next_event.result()
            except StopAsyncIteration:
                return
            except errors.StatusError as exc:
                # The storage watch could not go on (410 Expired, or InternalError): upstream
                # sends the Status as an ERROR event and ends the stream.
                yield encode_event("ERROR", exc.status)
                return
            yield encode_event(event.type, await _watch_object(scope, event))
    finally:
        stopping.cancel()
        if next_event is not None and not next_event.done():
            # The generator is still running in this task (timeout, shutdown, or the
            # client went away): let the cancellation land before closing it.
            next_event.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await next_event
        await events.aclose()


async def _watch_object(scope: RequestScope, event: Any) -> Object:
    obj: Object = event.object
    if event.type == "BOOKMARK":
        return {**obj, "apiVersion": scope.api_version}
    versioned = await scope.to_version(obj)
    if scope.output.as_kind == "Table":
        rv = versioned["metadata"].get("resourceVersion", "")
        return tables.table_for(
            scope.resource.columns_of(scope.version), [versioned], scope.output, rv
        )
    return versioned


async def _decoded_body(scope: RequestScope, request: Request, validation: str) -> Object:
    kind = (scope.api_version, scope.resource.kind)
    allowed = serializer.BODY_TYPES if protobuf.supports(*kind) else serializer.TEXT_BODY_TYPES
    media = body_media_type(request.headers.get("content-type"), allowed)
    body = await request.body()
    try:
        decoded = serializer.decode(
            body, media, find_duplicates=validation != "Ignore", default_kind=kind
        )
    except serializer.SyntaxDecodeError as exc:
        if exc.named is None:
            raise scope.unrecognized(str(exc), body) from None
        api_version, named_kind = exc.named
        version = GroupVersion.parse(api_version).version
        raise errors.bad_request(
            f'{named_kind} in version "{version}" cannot be handled as a '
            f"{scope.resource.kind}: {exc}"
        ) from None
    raw = decoded.obj
    # ``managedFields: []`` resets them; decoding drops empty lists, so keep that apart.
    metadata = raw.get("metadata") if isinstance(raw, dict) else None
    reset = isinstance(metadata, dict) and metadata.get("managedFields") == []
    obj = await scope.decode_object(raw, decoded.duplicates, validation)
    if reset:
        meta(obj)["managedFields"] = []
    return obj


async def create(scope: RequestScope, request: Request) -> Response:
    query = request.query
    dry_run, validation = write_options(query, "CreateOptions")
    obj = await _decoded_body(scope, request, validation)
    scope.set_namespace(obj)
    await _record_update(scope, request, None, obj)
    created = await scope.store.create(obj, dry_run=dry_run)
    return await scope.respond(201, created)


async def update(scope: RequestScope, request: Request) -> Response:
    query = request.query
    dry_run, validation = write_options(query, "UpdateOptions")
    obj = await _decoded_body(scope, request, validation)
    scope.set_namespace(obj)
    name = meta(obj).get("name")
    if not name:
        meta(obj)["name"] = scope.name
    elif name != scope.name:
        raise errors.bad_request(
            f"the name of the object ({name}) does not match the name on the URL ({scope.name})"
        )

    async def replace(old: Object) -> Object:
        # A fresh copy per attempt: the request's own managedFields decide each time.
        new = {**obj, "metadata": dict(obj["metadata"])}
        await _record_update(scope, request, await scope.to_version(old), new)
        return new

    try:
        updated = await scope.store.update(
            scope.namespace,
            scope.name,
            replace,
            subresource=scope.subresource,
            dry_run=dry_run,
            replacement=True,
        )
    except errors.StatusError as exc:
        # Kinds whose strategy allows it (Endpoints, Event) are created by a PUT, as upstream.
        if exc.code != 404 or scope.subresource or not scope.store.strategy.allow_create_on_update:
            raise
        await _record_update(scope, request, None, obj)
        return await scope.respond(201, await scope.store.create(obj, dry_run=dry_run))
    return await scope.respond(200, updated)


async def patch_(scope: RequestScope, request: Request) -> Response:
    query = request.query
    media = patch_media_type(request.headers.get("content-type"), _PATCH_TYPES)
    strategic_schema = scope.resource.versions[scope.version].schema
    # Custom resources have no patch strategies to merge by (upstream answers 415 too).
    supported = _PATCH_TYPES_SUPPORTED if strategic_schema else _PATCH_TYPES_SUPPORTED_CUSTOM
    if media not in supported:
        raise errors.unsupported_media_type(supported)
    dry_run, validation = write_options(query, "PatchOptions", media)
    if media == serializer.APPLY_PATCH:
        return await _server_side_apply(scope, request, dry_run, validation)
    document = decode_patch(await request.body())

    async def apply(old: Object) -> Object:
        current = await scope.to_version(old)
        old_rv = current["metadata"].get("resourceVersion")
        if media == serializer.JSON_PATCH:
            patched = apply_json_patch(current, document)
        elif media == serializer.MERGE_PATCH:
            patched = patch.merge_patch(current, document)
        else:
            assert strategic_schema is not None
            try:
                patched = patch.strategic_merge_patch(current, document, strategic_schema)
            except patch.StrategicMergePatchError as exc:
                raise _strategic_merge_patch_error(exc) from None
        if not isinstance(patched, dict):
            raise errors.bad_request("the patch must produce an object")
        _check_nesting(patched)
        new = await scope.decode_object(patched, [], validation)
        scope.set_namespace(new)
        metadata = meta(new)
        _check_name(metadata.get("name"), scope.name)
        if metadata.get("resourceVersion") == old_rv and not _patch_sets_rv(document):
            metadata.pop("resourceVersion", None)
        await _record_update(scope, request, current, new)
        return new

    updated = await scope.store.update(
        scope.namespace, scope.name, apply, subresource=scope.subresource, dry_run=dry_run
    )
    return await scope.respond(200, updated)


async def _record_update(
    scope: RequestScope, request: Request, live: Object | None, new: Object
) -> None:
    """Set ``new``'s managedFields for an Update by the request's manager over ``live``
    (already in the request's version; ``None`` for a create), as upstream's
    ``UpdateNoErrors`` does before admission."""
    manager = scope.store.field_managers.get(scope.version, scope.subresource)
    if manager is None:
        return
    name = manager_or_user_agent(
        request.query.get("fieldManager", ""), request.headers.get("user-agent", "")
    )
    entries = await manager.update(live, await scope.to_version(new), name)
    if entries is None:
        meta(new).pop("managedFields", None)
    else:
        meta(new)["managedFields"] = entries


async def _server_side_apply(
    scope: RequestScope, request: Request, dry_run: bool, validation: str
) -> Response:
    """PATCH with ``application/apply-patch+yaml``: merge the configuration, creating the
    object when it does not exist (201), as upstream's ``applyPatcher``."""
    manager = scope.store.field_managers.get(scope.version, scope.subresource)
    if manager is None:
        raise errors.internal_error(RuntimeError(f"no field manager for {scope.subresource}"))
    config = apply_configuration(await request.body())
    query = request.query
    force = bool(bool_param(query, "force"))

    async def apply(old: Object | None) -> Object:
        current = await scope.to_version(old) if old is not None else None
        applied = await manager.apply(current, deep_copy(config), query["fieldManager"], force)
        old_rv = current["metadata"].get("resourceVersion") if current is not None else None
        _check_nesting(applied)
        new = await scope.decode_object(deep_copy(applied), [], validation)
        metadata = meta(new)
        if old is None and metadata.get("uid"):
            raise errors.conflict(
                scope.resource.plural,
                scope.resource.group,
                scope.name,
                f"uid mismatch: the provided object specified uid {metadata['uid']}, "
                "and no existing object was found",
            )
        scope.set_namespace(new)
        _check_name(metadata.get("name"), scope.name)
        if metadata.get("resourceVersion") == old_rv and not _patch_sets_rv(config):
            metadata.pop("resourceVersion", None)
        return new

    while True:
        applied_to_live = False

        async def apply_to_live(old: Object) -> Object:
            nonlocal applied_to_live
            applied_to_live = True
            return await apply(old)

        try:
            updated = await scope.store.update(
                scope.namespace,
                scope.name,
                apply_to_live,
                subresource=scope.subresource,
                dry_run=dry_run,
            )
            return await scope.respond(200, updated)
        except errors.StatusError as exc:
            # Only a missing object is created, and never through a subresource.
            if exc.code != 404 or applied_to_live or scope.subresource:
                raise
        try:
            created = await scope.store.create(await apply(None), dry_run=dry_run)
        except errors.StatusError as exc:
            if exc.reason == "AlreadyExists":
                continue  # created meanwhile: apply to it
            raise
        return await scope.respond(201, created)


def decode_patch(body: bytes) -> Any:
    """A JSON or merge patch document; malformed JSON is a 400, as upstream's patcher says."""
    try:
        return serializer.decode(body, serializer.JSON, find_duplicates=False).obj
    except serializer.SyntaxDecodeError as exc:
        raise errors.bad_request(f"error decoding patch: {exc.detail}") from None


def _check_nesting(obj: Any) -> None:
    """A patch's result nested deeper than kapi stores: refused as such a body is."""
    detail = serializer.object_nesting_error(obj)
    if detail is not None:
        raise errors.bad_request("couldn't get version/kind; json parse error: " + detail)


def apply_configuration(body: bytes) -> Object:
    """An apply patch body: YAML, or JSON (what kubectl sends, read as JSON for exactness)."""
    try:
        config = orjson.loads(body) if body.lstrip()[:1] == b"{" else None
    except orjson.JSONDecodeError:
        config = None
    if config is None:
        try:
            config = serializer.decode(body, serializer.YAML, find_duplicates=False).obj
        except serializer.SyntaxDecodeError as exc:
            raise errors.bad_request(f"error decoding YAML: {exc}") from None
    if config is None:
        return {}
    _check_nesting(config)
    if not isinstance(config, dict):
        raise errors.bad_request(
            f"error decoding YAML: json: cannot unmarshal {go_json_kind(config)} into Go value "
            "of type map[string]interface {}"
        )
    return config


def _check_name(name: str | None, url_name: str) -> None:
    """Upstream ``checkName`` on a patched object: the patch may not drop or change the name."""
    if not name:
        raise errors.bad_request(
            f"the name of the object ({url_name} based on URL) was undeterminable: "
            "name must be provided"
        )
    if name != url_name:
        raise errors.bad_request(
            f"the name of the object ({name}) does not match the name on the URL ({url_name})"
        )


def _strategic_merge_patch_error(exc: patch.StrategicMergePatchError) -> errors.StatusError:
    """Upstream's ``interpretStrategicMergePatchError``: format errors are 400, lists of
    lists a generic 422, anything else a bare 500 with the merge's message."""
    if isinstance(exc, patch.BadPatchFormatError):
        return errors.bad_request(str(exc))
    if isinstance(exc, patch.UnprocessablePatchError):
        return errors.StatusError(
            422, "Invalid", "the server rejected our request due to an error in our request"
        )
    return errors.untyped(str(exc))


def _patch_sets_rv(document: Any) -> bool:
    if isinstance(document, dict):
        return "resourceVersion" in (document.get("metadata") or {})
    if isinstance(document, list):
        return any(
            isinstance(op, dict) and op.get("path") == "/metadata/resourceVersion"
            for op in document
        )
    return False


def apply_json_patch(obj: Object, document: Any) -> Any:
    if not isinstance(document, list):
        raise errors.bad_request(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
        )
    try:
        return jsonpatch.JsonPatch(document).apply(obj)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as exc:
        raise errors.StatusError(
            422, "Invalid", f"the server rejected our request due to an error in our request: {exc}"
        ) from None


async def delete(scope: RequestScope, request: Request) -> Response:
    query = request.query
    options = await _delete_options(request)
    dry_run = _delete_dry_run(query, options)
    pre = options.get("preconditions") or {}
    preconditions = Preconditions(pre.get("uid"), pre.get("resourceVersion")) if pre else None
    if (why := scope.store.strategy.refuse_delete(scope.name)) is not None:
        raise errors.forbidden(scope.resource.plural, scope.resource.group, scope.name, why)
    obj, gone = await scope.store.delete(
        scope.namespace,
        scope.name,
        preconditions=preconditions,
        dry_run=dry_run,
        propagation=_propagation(options),
    )
    if gone:
        details: Object = {"name": scope.name}
        if scope.resource.group:
            details["group"] = scope.resource.group
        details["kind"] = scope.resource.plural
        details["uid"] = obj["metadata"].get("uid", "")
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        }
        return encode(200, status, scope.output)
    return await scope.respond(200, obj)


async def delete_collection(scope: RequestScope, request: Request) -> Response:
    query = request.query
    options = await _delete_options(request)
    dry_run = _delete_dry_run(query, options)
    deleted = await scope.store.delete_collection(
        scope.namespace,
        await _predicate(query, scope),
        dry_run=dry_run,
        propagation=_propagation(options),
    )
    body = {
        "kind": scope.resource.list_kind,
        "apiVersion": scope.api_version,
        "metadata": {},
        "items": await scope.to_version_many(deleted),
    }
    return await encode_many(200, body, scope.output, len(deleted))


#: ``strconv.ParseBool``'s spellings, for ``orphanDependents`` given as a query parameter.
_GO_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


async def _delete_options(request: Request) -> Object:
    """The DELETE's options: its body, or without one the query (as upstream decodes them)."""
    body = await request.body()
    if not body.strip():
        return _query_delete_options(request.query)
    media = body_media_type(request.headers.get("content-type"), serializer.BODY_TYPES)
    try:
        options = serializer.decode(body, media, find_duplicates=False).obj
    except serializer.SyntaxDecodeError as exc:
        raise errors.bad_request(str(exc)) from None
    if not isinstance(options, dict):
        raise errors.bad_request("DeleteOptions must be an object")
    for key in ("apiVersion", "kind"):
        value = options.get(key)
        if value is not None and not isinstance(value, str):
            # The decoder reads the type first, into an anonymous struct of two strings.
            raise errors.untyped(
                "couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{go_json_kind(value)} into Go struct field .{key} of type string"
            )
    try:
        prune(options, openapi_meta.DeleteOptions)
    except DecodeTypeError as exc:
        # Upstream's delete handler passes the decoder's error on as it is: a 500.
        raise errors.untyped(str(exc)) from None
    policy = options.get("propagationPolicy")
    if policy not in (None, "Orphan", "Background", "Foreground"):
        raise errors.invalid(
            "DeleteOptions",
            "meta.k8s.io",
            "",
            [_unsupported_policy(policy)],
        )
    return options


def _query_delete_options(query: dict[str, str]) -> Object:
    options: Object = {}
    policy = query.get("propagationPolicy")
    if policy:
        if policy not in ("Orphan", "Background", "Foreground"):
            raise errors.invalid("DeleteOptions", "meta.k8s.io", "", [_unsupported_policy(policy)])
        options["propagationPolicy"] = policy
    orphan = query.get("orphanDependents")
    if orphan:
        if orphan not in _GO_BOOLS:
            raise errors.bad_request(f'strconv.ParseBool: parsing "{orphan}": invalid syntax')
        options["orphanDependents"] = _GO_BOOLS[orphan]
    return options


def _propagation(options: Object) -> Propagation:
    """What the DeleteOptions ask of the garbage collector (validated by ``_delete_options``)."""
    return Propagation(options.get("propagationPolicy"), options.get("orphanDependents"))


def _delete_dry_run(query: dict[str, str], options: Object) -> bool:
    """``dryRun`` from the query or the DeleteOptions body (kubectl sends it in the body)."""
    values = _dry_run_values(query) or list(options.get("dryRun") or [])
    if any(value != "All" for value in values):
        raise errors.invalid(
            "DeleteOptions",
            "meta.k8s.io",
            "",
            [field_errors.not_supported(Path("dryRun"), values, ["All"])],
        )
    return bool(values)


def _unsupported_policy(policy: Any) -> field_errors.FieldError:
    return field_errors.not_supported(
        Path("propagationPolicy"), policy, ["Foreground", "Background", "Orphan", "nil"]
    )


async def create_subresource(scope: RequestScope, request: Request) -> Response:
    """POST to a subresource that takes its own kind (``pods/binding``, ``pods/eviction``).

    The body is decoded by the declaration the creator names for its
    apiVersion and kind (unknown fields dropped), then handed over with a way
    to reach other resources' stores.  The answer is the creator's object; a
    ``Status`` goes out with its own ``code`` (201 when it has none), as
    upstream's create handler writes it.
    """
    creator = scope.resource.creators[scope.subresource]
    dry_run, _ = write_options(request.query, "CreateOptions")
    group, version, kind = creator.kind
    default = GroupVersion(group, version).api_version if group or version else scope.api_version
    body_kind = (default, kind or scope.resource.kind)
    allowed = serializer.BODY_TYPES if protobuf.supports(*body_kind) else serializer.TEXT_BODY_TYPES
    media = body_media_type(request.headers.get("content-type"), allowed)
    body = await request.body()
    try:
        raw = serializer.decode(body, media, find_duplicates=False, default_kind=body_kind).obj
    except serializer.SyntaxDecodeError as exc:
        raise errors.bad_request(str(exc)) from None
    if not isinstance(raw, dict):
        raise errors.bad_request(
            f"the object provided is unrecognized (must be of type {body_kind[1]}): "
            f"couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{go_json_kind(raw)} into Go value of type struct"
        )
    api_version = raw.get("apiVersion") or body_kind[0]
    raw_kind = raw.get("kind") or body_kind[1]
    schema = creator.body_schema(str(api_version), str(raw_kind))
    if schema is None:
        gv = GroupVersion.parse(str(api_version))
        raise errors.bad_request(
            f'{raw_kind} in version "{gv.version}" cannot be handled as a {body_kind[1]}: no '
            f'kind "{raw_kind}" is registered for version "{api_version}" in scheme '
            '"pkg/api/legacyscheme/scheme.go:30"'
        )
    try:
        prune(raw, schema)
    except DecodeTypeError as exc:
        raise errors.bad_request(
            f'{raw_kind} in version "{GroupVersion.parse(str(api_version)).version}" cannot be '
            f"handled as a {body_kind[1]}: {exc}"
        ) from None
    raw["apiVersion"], raw["kind"] = api_version, raw_kind
    store_for, scheme = scope.store_for, scope.scheme

    def stores(other_group: str, plural: str) -> Store:
        if other_group == scope.resource.group and plural == scope.resource.plural:
            return scope.store
        found = next(
            (r for r in scheme.resources() if (r.group, r.plural) == (other_group, plural)), None
        )
        if found is None or store_for is None:
            raise errors.internal_error(LookupError(f"no store for {plural}.{other_group}"))
        return store_for(found, found.hub_version)

    result = await creator.create(stores, scope.namespace, scope.name, raw, dry_run=dry_run)
    code = 201
    if result.get("kind") == "Status":
        code = result.setdefault("code", 201) or 201
    return encode(code, result, scope.output)


#: A subresource that only takes POSTs of its own kind.
CREATOR_VERBS = {"create": create_subresource}


# -- computed resources (componentstatuses) ---------------------------------------------


async def read_computed(scope: RequestScope, request: Request) -> Response:
    """A get of a resource whose objects are computed on each read."""
    reader = scope.resource.reader
    assert reader is not None
    for obj in await reader.read_all():
        if obj["metadata"].get("name") == scope.name:
            return await scope.respond(200, obj)
    raise errors.not_found(reader.not_found_resource, scope.resource.group, scope.name)


async def list_computed(scope: RequestScope, request: Request) -> Response:
    """A list of a computed resource: every object the selectors match, in one page with
    no resourceVersion (upstream's ``ComponentStatusList`` has none)."""
    reader = scope.resource.reader
    assert reader is not None
    query = request.query
    _validate_list_options(query, watch=False)
    predicate = await _predicate(query, scope)
    items = await scope.to_version_many(
        [obj for obj in await reader.read_all() if predicate.matches(obj)]
    )
    if scope.output.as_kind == "Table":
        columns = scope.resource.columns_of(scope.version)
        table = await tables.table_for_many(columns, items, scope.output, "")
        table["metadata"] = {}
        return await encode_many(200, table, scope.output, len(items))
    body = {
        "kind": scope.resource.list_kind,
        "apiVersion": scope.api_version,
        "metadata": {},
        "items": items,
    }
    return await encode_many(200, body, scope.output, len(items))


READER_VERBS = {"get": read_computed, "list": list_computed}

VERBS = {
    "get": get,
    "list": list_,
    "watch": watch,
    "create": create,
    "update": update,
    "patch": patch_,
    "delete": delete,
    "deletecollection": delete_collection,
}
