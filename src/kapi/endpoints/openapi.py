"""``/openapi/v3``: an index of group-versions and one OAS 3.0 document for each.

Documents are generated from the scheme's declared schemas and cached by
content hash; the index links each with ``?hash=`` so clients can cache
them, as upstream's ``/openapi/v3`` does.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from kapi.apimachinery import errors
from kapi.apis.meta import ListMeta, ObjectMeta, list_struct
from kapi.endpoints.http import Request, Response
from kapi.runtime import schema, serializer
from kapi.runtime.scheme import GroupVersion, Resource, Scheme

Object = dict[str, Any]

_QUERY = "query"
_COMMON_WRITE_PARAMS = (
    ("dryRun", "When present, indicates that modifications should not be persisted."),
    (
        "fieldManager",
        "fieldManager is a name associated with the actor or entity that is making these changes.",
    ),
    (
        "fieldValidation",
        "fieldValidation instructs the server on how to handle objects in the "
        "request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: "
        "Ignore, Warn (the default) and Strict.",
    ),
)
_LIST_PARAMS = (
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


class OpenAPIService:
    def __init__(self, scheme: Scheme) -> None:
        self.scheme = scheme
        self._cache: dict[str, tuple[bytes, str]] = {}
        self._cache_key: object = None

    def _documents(self) -> dict[str, tuple[bytes, str]]:
        key = (self.scheme.emulated_version, tuple(id(r) for r in self.scheme.resources()))
        if key != self._cache_key:
            docs: dict[str, tuple[bytes, str]] = {}
            for group, versions in self.scheme.group_versions().items():
                for version in versions:
                    path = f"apis/{group}/{version}" if group else f"api/{version}"
                    body = orjson.dumps(self.document(group, version))
                    docs[path] = (body, hashlib.sha512(body).hexdigest().upper())
            self._cache, self._cache_key = docs, key
        return self._cache

    async def serve(self, request: Request, parts: list[str]) -> Response:
        if parts == ["v3"]:
            docs = self._documents()
            index = {
                "paths": {
                    path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
                    for path, (_, digest) in sorted(docs.items())
                }
            }
            return Response(200, orjson.dumps(index))
        if parts[:1] == ["v3"]:
            found = self._documents().get("/".join(parts[1:]))
            if found is not None:
                body, digest = found
                etag = f'"{digest}"'
                if request.headers.get("if-none-match") == etag:
                    return Response(304, b"", headers=[(b"etag", etag.encode())])
                cache = (
                    b"public, immutable"
                    if request.query.get("hash") == digest
                    else b"no-cache, private"
                )
                return Response(
                    200, body, headers=[(b"etag", etag.encode()), (b"cache-control", cache)]
                )
        raise errors.StatusError(
            404, "NotFound", "the server could not find the requested resource"
        )

    def document(self, group: str, version: str) -> Object:
        resources = [
            r
            for r in self.scheme.resources()
            if r.group == group and self.scheme.served(r, version)
        ]
        roots: list[schema.Struct] = []
        custom: Object = {}
        paths: Object = {}
        for resource in resources:
            rv = resource.versions[version]
            if rv.schema is not None:
                roots += [rv.schema, list_struct(rv.schema)]
                paths.update(_paths(resource, version, rv.schema.name))
                continue
            name = _custom_definition_name(resource, version)
            custom.update(_custom_definitions(resource, version, name, rv.openapi_schema or {}))
            roots += [ObjectMeta, ListMeta]
            paths.update(_paths(resource, version, name))
        components = schema.components(roots)
        components.update(custom)
        return {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": f"v{self.scheme.emulated_version}.0"},
            "paths": dict(sorted(paths.items())),
            "components": {"schemas": dict(sorted(components.items()))},
        }


def _patch_types(resource: Resource, version: str) -> tuple[str, ...]:
    """PATCH bodies a version accepts: kubectl only sends strategic merge where listed."""
    if resource.versions[version].schema is None:  # custom resources merge by JSON rules
        return tuple(t for t in _PATCH_TYPES if t != serializer.STRATEGIC_MERGE_PATCH)
    return _PATCH_TYPES


_PATCH_TYPES = (
    serializer.JSON_PATCH,
    serializer.MERGE_PATCH,
    serializer.STRATEGIC_MERGE_PATCH,
    serializer.APPLY_PATCH,
)


def _custom_definition_name(resource: Resource, version: str) -> str:
    """Upstream names a custom resource's schema by its reversed group: ``com.example.v1.Kind``."""
    return ".".join([*reversed(resource.group.split(".")), version, resource.kind])


def _custom_definitions(resource: Resource, version: str, name: str, crd_schema: Object) -> Object:
    """A custom resource's schema with the standard fields added, and its list (upstream)."""
    gvk = [{"group": resource.group, "version": version, "kind": resource.kind}]
    properties = {
        "apiVersion": {"type": "string", "description": "APIVersion of this object."},
        "kind": {"type": "string", "description": "Kind of this object."},
        "metadata": {"allOf": [ObjectMeta.ref()], "description": "Standard object's metadata."},
        **crd_schema.get("properties", {}),
    }
    item = {**crd_schema, "properties": properties, "x-kubernetes-group-version-kind": gvk}
    list_gvk = [{**gvk[0], "kind": resource.list_kind}]
    return {
        name: item,
        name + "List": {
            "type": "object",
            "required": ["items"],
            "properties": {
                "apiVersion": properties["apiVersion"],
                "items": {"type": "array", "items": {"$ref": f"#/components/schemas/{name}"}},
                "kind": properties["kind"],
                "metadata": {"allOf": [ListMeta.ref()], "description": "Standard list metadata."},
            },
            "x-kubernetes-group-version-kind": list_gvk,
        },
    }


def _param(name: str, description: str = "") -> Object:
    param: Object = {"name": name, "in": _QUERY, "schema": {"type": "string", "uniqueItems": True}}
    if description:
        param["description"] = description
    return param


def _paths(resource: Resource, version: str, definition: str) -> Object:
    gv = GroupVersion(resource.group, version)
    base = f"/apis/{gv.api_version}" if resource.group else f"/api/{version}"
    collection = (
        f"{base}/namespaces/{{namespace}}/{resource.plural}"
        if resource.namespaced
        else f"{base}/{resource.plural}"
    )
    gvk = {"group": resource.group, "version": version, "kind": resource.kind}
    ref = {"$ref": f"#/components/schemas/{definition}"}
    list_ref = {"$ref": f"#/components/schemas/{definition}List"}
    body = {"content": {"*/*": {"schema": ref}}, "required": True}

    def op(
        action: str,
        verb: str,
        response: Object,
        params: tuple[str, ...] = (),
        with_body: bool = False,
    ) -> Object:
        out: Object = {
            "operationId": f"{verb}{resource.kind}",
            "parameters": [_param(n) for n in params],
            "responses": {
                "200": {"description": "OK", "content": {"application/json": {"schema": response}}}
            },
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        }
        if with_body:
            out["parameters"] = [_param(n, d) for n, d in _COMMON_WRITE_PARAMS]
            out["requestBody"] = body
        return out

    item = f"{collection}/{{name}}"
    paths: Object = {
        collection: {
            "get": op("list", "list", list_ref, _LIST_PARAMS),
            "post": op("post", "create", ref, with_body=True),
            "delete": op("deletecollection", "deleteCollection", {}),
        },
        item: {
            "get": op("get", "read", ref),
            "put": op("put", "replace", ref, with_body=True),
            "patch": {
                **op("patch", "patch", ref, with_body=True),
                "requestBody": {
                    "content": {
                        t: {"schema": {"type": "object"}} for t in _patch_types(resource, version)
                    },
                    "required": True,
                },
            },
            "delete": op("delete", "delete", {}),
        },
    }
    if "status" in resource.subresources_of(version):
        paths[f"{item}/status"] = {
            "get": op("get", "read", ref),
            "put": op("put", "replace", ref, with_body=True),
            "patch": op("patch", "patch", ref, with_body=True),
        }
    return paths
