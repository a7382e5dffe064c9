"""``/openapi/v3`` (an index and one OAS 3.0 document per group version) and ``/openapi/v2``.

Documents are generated from the scheme's declared schemas and the CRDs'
schemas, and rebuilt whenever the served resources change (a CRD is
created, updated or deleted).  As kube-openapi's handler does, each group
version's document has an ETag (sha512 of its JSON) and the index links it
with ``?hash=<etag>``, so a changed document gets a new URL and a document
fetched by its current hash may be cached for good.  The index itself is
served as kube-apiserver's aggregator serves it: rebuilt per request, with
no ETag.  The Swagger 2.0 document that kubectl 1.27 and 1.28 read is
derived from the v3 documents by :mod:`kapi.endpoints.openapi.v2`.
"""

from __future__ import annotations

import email.utils
import hashlib
import time
from urllib.parse import urlencode

import orjson

from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.endpoints.autoneg import parse_accept
from kapi.endpoints.discovery import is_custom, ordered_groups
from kapi.endpoints.http import Request, Response
from kapi.endpoints.openapi import meta as openapi_meta
from kapi.endpoints.openapi import v2 as openapi_v2
from kapi.endpoints.openapi.routes import (
    Param,
    Route,
    Shared,
    finish_operation,
    group_version_routes,
    gvk_dict,
    own_params,
    path_items,
    resource_routes,
    scale_struct,
)
from kapi.endpoints.openapi.specs import GroupVersionSpec, Specs
from kapi.endpoints.scheme_cache import SchemeCache
from kapi.endpoints.servecontent import serve_content
from kapi.runtime import schema, serializer
from kapi.runtime.lifecycle import EXTENSION as LIFECYCLE_EXTENSION
from kapi.runtime.lifecycle import note as lifecycle_note
from kapi.runtime.meta import (
    API_VERSION_DOC,
    KIND_DOC,
    LIST_METADATA_DOC,
    OBJECT_METADATA_DOC,
    ListMeta,
    ObjectMeta,
    list_struct,
)
from kapi.runtime.scheme import Resource, Scheme

_REF_PREFIX = "#/components/schemas/"
#: Definitions every group version's operations refer to.
_OPERATION_DEFINITIONS = (
    openapi_meta.APIResourceList,
    openapi_meta.DeleteOptions,
    openapi_meta.Patch,
    openapi_meta.Status,
    openapi_meta.WatchEvent,
)
_NO_CACHE = (b"cache-control", b"no-cache, private")
#: What Go's ``http.DetectContentType`` makes of a JSON body.
_SNIFFED_TEXT = "text/plain; charset=utf-8"


class OpenAPIService:
    def __init__(self, scheme: Scheme) -> None:
        self.scheme = scheme
        self._previous: Specs | None = None
        self._specs = SchemeCache(scheme, self._build)
        self._v2 = SchemeCache(
            scheme, lambda: openapi_v2.SwaggerSpec.build(self.specs(), self.info)
        )

    @property
    def info(self) -> Object:
        return {"title": "Kubernetes", "version": f"v{self.scheme.emulated_version}.0"}

    def specs(self) -> Specs:
        return self._specs.get()

    async def serve(self, request: Request, parts: list[str]) -> Response:
        if parts == ["v2"]:
            return self._v2.get().serve(request)
        if parts == ["v3"]:
            # kube-apiserver's aggregator serves the index afresh on every request: no ETag,
            # modified "now", and a content type Go sniffs from the JSON.
            return serve_content(
                request, self.specs().index, _SNIFFED_TEXT, None, time.time(), [_NO_CACHE]
            )
        if parts[:1] == ["v3"] and len(parts) > 1:
            return self._serve_group_version(request, "/".join(parts[1:]))
        raise _not_found()

    def _serve_group_version(self, request: Request, path: str) -> Response:
        """kube-openapi's ``HandleGroupVersion``, JSON only (no v3 protobuf)."""
        vary = (b"vary", b"Accept")
        accept = request.headers.get("accept") or "*/*"
        if not any(clause.matches(serializer.JSON) for clause in parse_accept(accept)):
            return Response(406, b"", "", [vary, _NO_CACHE])
        spec = self.specs().by_path.get(path)
        if spec is None:
            # The aggregator's answer for a group version no server publishes: a bare 404.
            return Response(404, b"", "", [vary, _NO_CACHE])
        wanted = request.query.get("hash")
        if not wanted:
            headers = [vary, _NO_CACHE]
        elif wanted != spec.etag:
            return _redirect(server_relative_url(path, spec.etag))
        else:
            expires = email.utils.formatdate(time.time() + 365 * 86400, usegmt=True)
            headers = [
                vary,
                (b"cache-control", b"public, immutable"),
                (b"expires", expires.replace("GMT", "UTC").encode()),
            ]
        return serve_content(
            request, spec.body, serializer.JSON, spec.etag, spec.last_modified, headers
        )

    def _build(self) -> Specs:
        previous = self._previous.by_path if self._previous is not None else {}
        now = time.time()
        by_path: dict[str, GroupVersionSpec] = {}
        for group, versions in ordered_groups(self.scheme):
            for version in versions:
                path = f"apis/{group}/{version}" if group else f"api/{version}"
                document, routes, custom = self.document(group, version)
                body = orjson.dumps(document)
                old = previous.get(path)
                if old is not None and old.body == body:
                    by_path[path] = old  # unchanged: keep its Last-Modified
                    continue
                etag = _etag(body)
                by_path[path] = GroupVersionSpec(document, routes, custom, body, etag, now)
        index = orjson.dumps(
            {
                "paths": {
                    path: {"serverRelativeURL": server_relative_url(path, spec.etag)}
                    for path, spec in sorted(by_path.items())
                }
            }
        )
        specs = Specs(by_path, index)
        self._previous = specs
        return specs

    def document(
        self, group: str, version: str
    ) -> tuple[Object, tuple[Route, ...], frozenset[str]]:
        """The OAS 3.0 document of a group version, its routes and its CRD definitions."""
        roots: list[schema.Struct] = list(_OPERATION_DEFINITIONS)
        custom: Object = {}
        routes = group_version_routes(group, version)
        for resource in self.scheme.resources():
            if resource.group != group or not self.scheme.served(resource, version):
                continue
            rv = resource.versions[version]
            if rv.schema is not None:
                roots += [rv.schema, list_struct(rv.schema)]
                if "scale" in resource.subresources_of(version):
                    roots.append(scale_struct(resource, version))
                name = rv.schema.name
            else:
                name = _custom_definition_name(resource, version)
                custom.update(_custom_definitions(resource, version, name, rv.openapi_schema or {}))
                roots += [ObjectMeta, ListMeta]
                if "scale" in resource.subresources_of(version):
                    roots.append(openapi_meta.Scale)
            routes += resource_routes(resource, version, name, is_custom(resource))
        components = schema.components(roots, self.scheme.emulated_version)
        components.update(custom)
        document = {
            "openapi": "3.0.0",
            "info": self.info,
            "paths": path_items(routes, _operation, _param),
            "components": {"schemas": dict(sorted(components.items()))},
        }
        return document, tuple(routes), frozenset(custom)


def server_relative_url(path: str, etag: str) -> str:
    return f"/openapi/v3/{path}?{urlencode({'hash': etag})}"


def _etag(body: bytes) -> str:
    return hashlib.sha512(body).hexdigest().upper()


def _not_found() -> errors.StatusError:
    return errors.StatusError(404, "NotFound", "the server could not find the requested resource")


def _redirect(location: str) -> Response:
    """Go's ``http.Redirect`` with 301 for a GET: a Location and a short HTML body."""
    body = f'<a href="{location}">Moved Permanently</a>.\n\n'.encode()
    return Response(
        301, body, "text/html; charset=utf-8", [(b"location", location.encode()), _NO_CACHE]
    )


# --- paths ------------------------------------------------------------------------------


def _operation(route: Route, shared: Shared) -> Object:
    op: Object = {
        "tags": [route.tag],
        "description": route.description,
        "operationId": route.operation_id,
    }
    own = own_params(route, shared)
    if own:
        op["parameters"] = [_param(p) for p in own]
    if route.body is not None:
        content = {media: {"schema": _ref(route.body)} for media in sorted(route.consumes)}
        body: Object = {"content": content}
        if route.body_required:
            body["required"] = True
        op["requestBody"] = body
    responses: Object = {}
    for response in route.responses:
        schema_ref = {"schema": _ref(response.definition)}
        responses[str(response.code)] = {
            "description": response.description,
            "content": {media: schema_ref for media in sorted(route.produces)},
        }
    return finish_operation(op, route, responses)


def _param(param: Param) -> Object:
    out: Object = {"name": param.name, "in": param.location}
    if param.description:
        out["description"] = param.description
    if param.required or param.location == "path":
        out["required"] = True
    out["schema"] = {"type": param.type, "uniqueItems": True}
    return out


def _ref(definition: str) -> Object:
    return {"$ref": _REF_PREFIX + definition}


# --- custom resources --------------------------------------------------------------------


def _custom_definition_name(resource: Resource, version: str) -> str:
    """Upstream names a custom resource's schema by its reversed group: ``com.example.v1.Kind``."""
    return ".".join([*reversed(resource.group.split(".")), version, resource.kind])


def _lifecycle_notes(schema: Object) -> Object:
    """``schema`` with each KEP-2558 tagged field's lifecycle said in its description too.

    kubectl explain prints descriptions but not extensions; built-in kinds get
    the same sentence from :meth:`kapi.runtime.schema.Struct.definition`.
    """
    out = dict(schema)
    if isinstance(extension := schema.get(LIFECYCLE_EXTENSION), dict):
        out["description"] = lifecycle_note(str(schema.get("description", "")), extension)
    if isinstance(properties := schema.get("properties"), dict):
        out["properties"] = {
            name: _lifecycle_notes(prop) if isinstance(prop, dict) else prop
            for name, prop in properties.items()
        }
    for key in ("items", "additionalProperties"):
        if isinstance(child := schema.get(key), dict):
            out[key] = _lifecycle_notes(child)
    return out


def _custom_definitions(resource: Resource, version: str, name: str, crd_schema: Object) -> Object:
    """A custom resource's schema with the standard fields added, and its list (upstream)."""
    crd_schema = _lifecycle_notes(crd_schema)
    gvk = [gvk_dict((resource.group, version, resource.kind))]
    properties = {
        "apiVersion": {"type": "string", "description": API_VERSION_DOC},
        "kind": {"type": "string", "description": KIND_DOC},
        "metadata": {"allOf": [ObjectMeta.ref()], "description": OBJECT_METADATA_DOC},
        **crd_schema.get("properties", {}),
    }
    item = {**crd_schema, "properties": properties, "x-kubernetes-group-version-kind": gvk}
    list_gvk = [{**gvk[0], "kind": resource.list_kind}]
    # Upstream names the version's selectable fields on both (not in discovery).
    selectable = [{"fieldPath": f} for f in resource.versions[version].field_labels or ()]
    selectable_fields = {"x-kubernetes-selectable-fields": selectable} if selectable else {}
    return {
        name: {**item, **selectable_fields},
        name + "List": {
            "description": f"{resource.kind} objects, as a list request returns them.",
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": properties["apiVersion"],
                "items": {"type": "array", "items": {"$ref": f"{_REF_PREFIX}{name}"}},
                "kind": properties["kind"],
                "metadata": {"allOf": [ListMeta.ref()], "description": LIST_METADATA_DOC},
            },
            "x-kubernetes-group-version-kind": list_gvk,
            **selectable_fields,
        },
    }
