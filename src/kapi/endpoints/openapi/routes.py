"""The REST routes a group version publishes in OpenAPI, as upstream's installers lay them out.

Built-in resources follow kube-apiserver's installer (collection, item,
subresource and deprecated ``/watch/`` paths; list across namespaces);
custom resources follow the CRD OpenAPI builder, which publishes fewer
media types, no watch paths and option parameters of its own.  Each route
is rendered as OpenAPI v3 by :mod:`kapi.endpoints.openapi.service` and as Swagger 2.0
by :mod:`kapi.endpoints.openapi.v2`, so both documents describe the same API.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from kapi.apimachinery.unstructured import Object
from kapi.endpoints.discovery import resource_verbs
from kapi.endpoints.openapi.meta import (
    APIResourceList,
    DeleteOptions,
    Patch,
    Scale,
    Status,
    WatchEvent,
)
from kapi.runtime import serializer
from kapi.runtime.schema import Struct
from kapi.runtime.scheme import GroupVersion, Resource

QUERY, PATH, BODY = "query", "path", "body"


@dataclass(frozen=True)
class Param:
    name: str
    location: str
    type: str = "string"
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class Response:
    code: int
    description: str
    #: The ``components.schemas`` / ``definitions`` name of the response body.
    definition: str


@dataclass(frozen=True)
class Route:
    path: str
    #: The HTTP method, lower case as OpenAPI path items name it.
    method: str
    #: ``x-kubernetes-action``; empty for a group version's discovery route.
    action: str
    operation_id: str
    tag: str
    description: str
    params: tuple[Param, ...]
    #: The definition the body is (``None``: no body) and whether it must be sent.
    body: str | None
    body_required: bool
    consumes: tuple[str, ...]
    produces: tuple[str, ...]
    responses: tuple[Response, ...]
    #: ``x-kubernetes-group-version-kind`` of the operation (``None`` for discovery).
    gvk: tuple[str, str, str] | None


_DESCRIPTIONS = {
    "allowWatchBookmarks": "Ask for BOOKMARK events while watching; servers send them at their "
    "own discretion. Ignored unless watching.",
    "continue": "The continue token of a previous paginated list response, to fetch the next "
    "chunk of the same list.",
    "dryRun": "When present, indicates that modifications should not be persisted. The only "
    "valid value is All: every stage runs, nothing is stored.",
    "fieldManager": "fieldManager is a name associated with the actor or entity that is making "
    "these changes; required for apply patches.",
    "fieldSelector": "Restrict the returned objects by their fields. Defaults to everything.",
    "fieldValidation": "fieldValidation instructs the server on how to handle objects in the "
    "request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: "
    "Ignore, Warn (the default) and Strict.",
    "force": "Force an apply request: take over the fields other managers own. Must be unset "
    "for patches other than apply.",
    "gracePeriodSeconds": "Seconds before the object is deleted; zero deletes it at once, "
    "unset uses the kind's default.",
    "labelSelector": "Restrict the returned objects by their labels. Defaults to everything.",
    "limit": "The maximum number of objects a list call returns in one chunk; the continue "
    "token of the response fetches the next.",
    "orphanDependents": "Deprecated: use propagationPolicy. Whether dependents are orphaned "
    "instead of deleted.",
    "pretty": "If 'true', then the output is pretty printed.",
    "propagationPolicy": "Whether and how dependents are garbage collected: Orphan, "
    "Background or Foreground.",
    "resourceVersion": "Constrains the resource versions the request may be served from; see "
    "the resourceVersion semantics of the API concepts.",
    "resourceVersionMatch": "How resourceVersion applies to a list call (Exact or NotOlderThan).",
    "sendInitialEvents": "With watch, first send synthetic ADDED events for the current "
    "state, then a BOOKMARK marking their end.",
    "timeoutSeconds": "Timeout of the list or watch call, whatever its activity.",
    "watch": "Watch for changes to the described resources instead of listing them.",
}
_TYPES = {
    "allowWatchBookmarks": "boolean",
    "force": "boolean",
    "gracePeriodSeconds": "integer",
    "limit": "integer",
    "orphanDependents": "boolean",
    "sendInitialEvents": "boolean",
    "timeoutSeconds": "integer",
    "watch": "boolean",
}


def _query(*names: str) -> tuple[Param, ...]:
    return tuple(
        Param(name, QUERY, _TYPES.get(name, "string"), _DESCRIPTIONS[name]) for name in names
    )


_LIST_OPTIONS = _query(
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
)
#: ListOptions without the watch-only ones, as the installer trims them for deletecollection.
_DELETE_COLLECTION_LIST_OPTIONS = tuple(
    p for p in _LIST_OPTIONS if p.name not in ("allowWatchBookmarks", "watch")
)
_WRITE_OPTIONS = _query("dryRun", "fieldManager", "fieldValidation")
_PATCH_OPTIONS = _query("dryRun", "fieldManager", "fieldValidation", "force")
_DELETE_OPTIONS = _query("dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy")
_GET_OPTIONS = _query("resourceVersion")
_PRETTY = _query("pretty")
_NAMESPACE = Param(
    "namespace", PATH, description="object name and auth scope, such as for teams and projects"
)

_BUILTIN_PRODUCES = (serializer.JSON, serializer.YAML, serializer.PROTOBUF)
_BUILTIN_WATCH_PRODUCES = (
    *_BUILTIN_PRODUCES,
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
)
_CUSTOM_MEDIA_TYPES = (serializer.JSON, serializer.YAML)
_BUILTIN_PATCH_TYPES = (
    serializer.JSON_PATCH,
    serializer.MERGE_PATCH,
    serializer.STRATEGIC_MERGE_PATCH,
    serializer.APPLY_PATCH,
)
#: Custom resources merge by JSON rules: no strategic merge patch.
_CUSTOM_PATCH_TYPES = (serializer.JSON_PATCH, serializer.MERGE_PATCH, serializer.APPLY_PATCH)
_ANY = ("*/*",)


def operation_prefix(group: str, version: str) -> tuple[str, str]:
    """The operation id infix and tag of a group version (``CoreV1``, ``core_v1``).

    Upstream's ``GetOperationIDAndTags``: the group without ``.k8s.io``, camel
    cased at every non-letter, the core group named ``core``.
    """
    group = (group or "core").removesuffix(".k8s.io")
    return _camel(group, True) + _camel(version, True), f"{_camel(group, False)}_{version}"


def _camel(text: str, capitalize: bool) -> str:
    out: list[str] = []
    upper = capitalize
    for i, char in enumerate(text):
        if char.isalpha() or char == "_" or (i and char.isdigit()):
            out.append(char.upper() if upper else char)
            upper = False
        else:
            upper = True
    return "".join(out)


_VERB = re.compile(r"(get|log|read|replace|patch|delete|watch|connect|proxy|list|create)")


def _operation_id(operation: str, infix: str) -> str:
    """Put the group version after the operation's verb (the shortest one that matches)."""
    match = _VERB.match(operation)
    assert match is not None, operation
    verb = match.group()
    return verb + infix + _camel(operation[len(verb) :], True)


def _article(kind: str) -> str:
    """Upstream's ``GetArticleForNoun``: none for plural-looking kinds (``Endpoints``)."""
    if kind.endswith("s") and not kind.endswith("ss"):
        return " "
    return " an " if kind[:1].lower() in "aeiou" else " a "


_OK, _CREATED, _ACCEPTED = (200, "OK"), (201, "Created"), (202, "Accepted")


@dataclass
class _Builder:
    """Collects the routes of one resource version; one method per kind of operation."""

    resource: Resource
    version: str
    definition: str
    custom: bool

    def __post_init__(self) -> None:
        self.routes: list[Route] = []
        self.infix, self.tag = operation_prefix(self.resource.group, self.version)
        self.kind = self.resource.kind
        self.ns = "Namespaced" if self.resource.namespaced else ""

    def add(
        self,
        path: str,
        method: str,
        action: str,
        operation: str,
        description: str,
        params: tuple[Param, ...],
        responses: tuple[tuple[int, str], ...],
        definition: str,
        body: str | None = None,
        body_required: bool = True,
        watch: bool = False,
    ) -> None:
        path_params: list[Param] = []
        if "{name}" in path:
            path_params.append(Param("name", PATH, description=f"name of the {self.kind}"))
        if "{namespace}" in path:
            path_params.append(_NAMESPACE)
        consumes: tuple[str, ...]
        produces: tuple[str, ...]
        if self.custom:
            consumes = _CUSTOM_PATCH_TYPES if method == "patch" else _CUSTOM_MEDIA_TYPES
            produces = _CUSTOM_MEDIA_TYPES
        else:
            consumes = _BUILTIN_PATCH_TYPES if method == "patch" else _ANY
            produces = _BUILTIN_WATCH_PRODUCES if watch else _BUILTIN_PRODUCES
        self.routes.append(
            Route(
                path=path,
                method=method,
                action=action,
                operation_id=_operation_id(operation, self.infix),
                tag=self.tag,
                description=description,
                params=(*path_params, *_PRETTY, *params),
                body=body,
                body_required=body_required,
                consumes=consumes,
                produces=produces,
                responses=tuple(Response(c, d, definition) for c, d in responses),
                gvk=(self.resource.group, self.version, self.kind),
            )
        )

    def list(self, path: str, operation: str, description: str) -> None:
        self.add(
            path,
            "get",
            "list",
            operation,
            description,
            _LIST_OPTIONS,
            (_OK,),
            self.definition + "List",
            watch=True,
        )

    def create(self, path: str) -> None:
        self.add(
            path,
            "post",
            "post",
            f"create{self.ns}{self.kind}",
            f"create{_article(self.kind)}{self.kind}",
            _WRITE_OPTIONS,
            (_OK, _CREATED, _ACCEPTED),
            self.definition,
            body=self.definition,
        )

    def delete_collection(self, path: str, params: tuple[Param, ...], body: str | None) -> None:
        self.add(
            path,
            "delete",
            "deletecollection",
            f"deletecollection{self.ns}{self.kind}",
            f"delete collection of {self.kind}",
            params,
            (_OK,),
            Status.name,
            body=body,
            body_required=False,
        )

    def read(self, path: str, sub: str, definition: str, params: tuple[Param, ...]) -> None:
        what = f"{sub} of the specified" if sub else "the specified"
        self.add(
            path,
            "get",
            "get",
            f"read{self.ns}{self.kind}{sub.title()}",
            f"read {what} {self.kind}",
            params,
            (_OK,),
            definition,
        )

    def replace(self, path: str, sub: str, definition: str) -> None:
        what = f"{sub} of the specified" if sub else "the specified"
        self.add(
            path,
            "put",
            "put",
            f"replace{self.ns}{self.kind}{sub.title()}",
            f"replace {what} {self.kind}",
            _WRITE_OPTIONS,
            (_OK, _CREATED),
            definition,
            body=definition,
        )

    def patch(self, path: str, sub: str, definition: str) -> None:
        what = f"{sub} of the specified" if sub else "the specified"
        # The CRD builder declares no 201 for patches; the installer does.
        responses = (_OK,) if self.custom else (_OK, _CREATED)
        self.add(
            path,
            "patch",
            "patch",
            f"patch{self.ns}{self.kind}{sub.title()}",
            f"partially update {what} {self.kind}",
            _PATCH_OPTIONS,
            responses,
            definition,
            body=Patch.name,
        )

    def delete(self, path: str) -> None:
        self.add(
            path,
            "delete",
            "delete",
            f"delete{self.ns}{self.kind}",
            f"delete{_article(self.kind)}{self.kind}",
            _DELETE_OPTIONS,
            (_OK, _ACCEPTED),
            Status.name,
            body=DeleteOptions.name,
            body_required=False,
        )

    def watch(self, path: str, operation: str, action: str, description: str) -> None:
        self.add(
            path,
            "get",
            action,
            operation,
            description,
            _LIST_OPTIONS,
            (_OK,),
            WatchEvent.name,
            watch=True,
        )


def group_version_routes(group: str, version: str) -> list[Route]:
    """The discovery route of a group version's root path (``/api/v1/``)."""
    infix, tag = operation_prefix(group, version)
    return [
        Route(
            path=f"/apis/{group}/{version}/" if group else f"/api/{version}/",
            method="get",
            action="",
            operation_id=f"get{infix}APIResources",
            tag=tag,
            description="get available resources",
            params=(),
            body=None,
            body_required=False,
            consumes=_BUILTIN_PRODUCES,
            produces=_BUILTIN_PRODUCES,
            responses=(Response(*_OK, APIResourceList.name),),
            gvk=None,
        )
    ]


def resource_routes(resource: Resource, version: str, definition: str, custom: bool) -> list[Route]:
    """Every route of one resource version, in upstream's registration order."""
    builder = _Builder(resource, version, definition, custom)
    gv = GroupVersion(resource.group, version)
    root = f"/apis/{gv.api_version}" if resource.group else f"/api/{version}"
    scope = f"{root}/namespaces/{{namespace}}" if resource.namespaced else root
    if custom:
        _custom_routes(builder, root, scope)
    else:
        _builtin_routes(builder, root, scope)
    return builder.routes


def scale_struct(resource: Resource, version: str) -> Struct:
    """The Scale a built-in version's ``/scale`` answers (``autoscaling/v1`` unless declared)."""
    own = resource.scale.scale_schema(version) if resource.scale else None
    return own or Scale


def scale_definition(resource: Resource, version: str) -> str:
    return scale_struct(resource, version).name


def _builtin_routes(b: _Builder, root: str, scope: str) -> None:
    """kube-apiserver's installer: every verb, subresources, and the deprecated watch paths."""
    plural, kind = b.resource.plural, b.kind
    collection = f"{scope}/{plural}"
    item = f"{collection}/{{name}}"
    listing = f"list or watch objects of kind {kind}"
    if b.resource.reader is not None:
        # Computed objects (componentstatuses): upstream installs a get and a list only.
        b.list(collection, f"list{b.ns}{kind}", f"list objects of kind {kind}")
        b.read(item, "", b.definition, ())
        return
    if b.resource.namespaced:
        b.list(f"{root}/{plural}", f"list{kind}ForAllNamespaces", listing)
    b.list(collection, f"list{b.ns}{kind}", listing)
    b.create(collection)
    if "deletecollection" in resource_verbs(b.resource):
        b.delete_collection(
            collection, _DELETE_OPTIONS + _DELETE_COLLECTION_LIST_OPTIONS, DeleteOptions.name
        )
    b.read(item, "", b.definition, ())
    b.replace(item, "", b.definition)
    b.delete(item)
    b.patch(item, "", b.definition)
    for sub in sorted(b.resource.subresources_of(b.version)):
        if sub in b.resource.creators:
            continue  # POST-only subresources of another kind are not described
        if sub == "finalize":
            b.replace(f"{item}/{sub}", sub, b.definition)
            continue
        if sub == "token":  # a create of another kind (TokenRequest): no read/replace/patch
            continue
        definition = scale_definition(b.resource, b.version) if sub == "scale" else b.definition
        b.read(f"{item}/{sub}", sub, definition, ())
        b.replace(f"{item}/{sub}", sub, definition)
        b.patch(f"{item}/{sub}", sub, definition)
    watch_list = (
        f"watch individual changes to a list of {kind}. deprecated: use the 'watch' "
        "parameter with a list operation instead."
    )
    if b.resource.namespaced:
        b.watch(
            f"{root}/watch/{plural}", f"watch{kind}ListForAllNamespaces", "watchlist", watch_list
        )
    watch_collection = f"{root}/watch{scope.removeprefix(root)}/{plural}"
    b.watch(watch_collection, f"watch{b.ns}{kind}List", "watchlist", watch_list)
    b.watch(
        f"{watch_collection}/{{name}}",
        f"watch{b.ns}{kind}",
        "watch",
        f"watch changes to an object of kind {kind}. deprecated: use the 'watch' parameter "
        "with a list operation instead, filtered to a single item with the 'fieldSelector' "
        "parameter.",
    )


def _custom_routes(b: _Builder, root: str, scope: str) -> None:
    """The CRD OpenAPI builder: no watch paths, GetOptions on reads, ListOptions on deletes."""
    plural, kind = b.resource.plural, b.kind
    collection = f"{scope}/{plural}"
    item = f"{collection}/{{name}}"
    listing = f"list objects of kind {kind}"
    if b.resource.namespaced:
        b.list(f"{root}/{plural}", f"list{kind}ForAllNamespaces", listing)
    b.list(collection, f"list{b.ns}{kind}", listing)
    b.create(collection)
    b.delete_collection(collection, _LIST_OPTIONS, None)
    b.read(item, "", b.definition, _GET_OPTIONS)
    b.replace(item, "", b.definition)
    b.delete(item)
    b.patch(item, "", b.definition)
    subresources = b.resource.subresources_of(b.version)
    for sub, definition in (("status", b.definition), ("scale", Scale.name)):
        if sub in subresources:
            b.read(f"{item}/{sub}", sub, definition, _GET_OPTIONS)
            b.replace(f"{item}/{sub}", sub, definition)
            b.patch(f"{item}/{sub}", sub, definition)


# --- grouping routes into path items ------------------------------------------------------

#: The order of operations in a serialized path item.
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")

Shared = set[tuple[str, str]]


def path_items(
    routes: list[Route] | tuple[Route, ...],
    operation: Callable[[Route, Shared], Object],
    parameter: Callable[[Param], Object],
) -> Object:
    """``paths`` of a document, sorted, each operation rendered by ``operation``.

    Parameters every operation of a path takes (bodies aside) are listed once,
    on the path, as kube-openapi's builders do; ``operation`` gets their
    ``(name, in)`` keys to leave them out.
    """
    by_path: dict[str, list[Route]] = {}
    for route in routes:
        by_path.setdefault(route.path, []).append(route)
    paths: Object = {}
    for path, path_routes in sorted(by_path.items()):
        common = _common_params(path_routes)
        shared = {(p.name, p.location) for p in common}
        item: Object = {}
        for route in sorted(path_routes, key=lambda r: _METHODS.index(r.method)):
            item[route.method] = operation(route, shared)
        if common:
            item["parameters"] = [parameter(p) for p in common]
        paths[path] = item
    return paths


def _common_params(routes: list[Route]) -> list[Param]:
    counts: dict[tuple[str, str], int] = {}
    found: dict[tuple[str, str], Param] = {}
    for route in routes:
        for param in route.params:
            key = (param.name, param.location)
            counts[key] = counts.get(key, 0) + 1
            found[key] = param
    common = [found[k] for k, n in counts.items() if n == len(routes) and k[1] != BODY]
    return sorted(common, key=lambda p: p.name)


def own_params(route: Route, shared: Shared) -> list[Param]:
    """The parameters an operation lists itself, sorted by name as upstream sorts them."""
    own = (p for p in route.params if (p.name, p.location) not in shared)
    return sorted(own, key=lambda p: p.name)


def gvk_dict(gvk: tuple[str, str, str]) -> Object:
    group, version, kind = gvk
    return {"group": group, "version": version, "kind": kind}


def finish_operation(op: Object, route: Route, responses: Object) -> Object:
    """How every operation ends in both specs: its ``responses`` (plus ``401``), then
    the Kubernetes extensions ``x-kubernetes-action`` and ``-group-version-kind``."""
    responses["401"] = {"description": "Unauthorized"}
    op["responses"] = responses
    if route.action:
        op["x-kubernetes-action"] = route.action
    if route.gvk is not None:
        op["x-kubernetes-group-version-kind"] = gvk_dict(route.gvk)
    return op
