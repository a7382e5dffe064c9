"""``/openapi/v2``: one Swagger 2.0 document for the whole server, as JSON or protobuf.

kubectl 1.27 and 1.28 download it (as gnostic protobuf) before ``create``,
``apply`` and ``explain``: for client-side validation, for the PATCH types
and patch strategies of ``apply``, and for the v2 ``explain`` renderer.

The document is derived from the v3 group version documents.  Definitions
are converted as upstream publishes them in v2 (references without the
``allOf`` wrapper; CRD schemas through apiextensions' ``ToStructuralOpenAPIV2``,
which drops what kubectl's v2 parser cannot take); operations are rendered
from the same routes as v3, in Swagger's shape (``consumes``/``produces``,
body parameters, typed query parameters); and parameters shared by many
operations move to ``parameters`` as kube-openapi's builder deduplicates them.

Served as kube-openapi's v2 handler serves it: JSON or protobuf by
``Accept`` (406 otherwise), one ETag (sha512 of the JSON) for both, 304 for
a matching ``If-None-Match``, gzip when the client accepts it.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from kapi.apimachinery.unstructured import Object
from kapi.endpoints.autoneg import parse_accept
from kapi.endpoints.http import Request, Response
from kapi.endpoints.openapi.gnostic import encode_document
from kapi.endpoints.openapi.routes import (
    BODY,
    Param,
    Route,
    Shared,
    finish_operation,
    own_params,
    path_items,
)
from kapi.endpoints.openapi.specs import Specs
from kapi.endpoints.servecontent import not_modified, serve_content

JSON = "application/json"
PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
#: The spelling client-go's ``OpenAPISchema`` asks for (kubectl 1.27 and 1.28).
PROTOBUF_DEPRECATED = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
#: What each acceptable type is answered with, in kube-openapi's order.
_ACCEPTED = ((JSON, JSON), (PROTOBUF_DEPRECATED, PROTOBUF), (PROTOBUF, PROTOBUF))

_V3_REF = "#/components/schemas/"
_V2_REF = "#/definitions/"
#: gziphandler's default: smaller bodies are not worth compressing.
_GZIP_MIN_SIZE = 1400
_NO_CACHE = (b"cache-control", b"no-cache, private")

_SECURITY_DEFINITIONS = {
    "BearerToken": {
        "description": "Bearer Token authentication",
        "type": "apiKey",
        "name": "authorization",
        "in": "header",
    }
}


@dataclass
class SwaggerSpec:
    """The document, its encodings and its ETag; encodings are made on first request."""

    document: Object
    json: bytes
    etag: str
    last_modified: float
    _encoded: dict[tuple[str, bool], bytes] = field(default_factory=dict)

    @classmethod
    def build(cls, specs: Specs, info: Object) -> SwaggerSpec:
        document = swagger_document(specs, info)
        body = orjson.dumps(document)
        return cls(document, body, hashlib.sha512(body).hexdigest().upper(), time.time())

    def encoded(self, media_type: str, compressed: bool) -> bytes:
        key = (media_type, compressed)
        found = self._encoded.get(key)
        if found is None:
            if compressed:
                found = gzip.compress(self.encoded(media_type, False), mtime=0)
            elif media_type == PROTOBUF:
                found = encode_document(self.document)
            else:
                found = self.json
            self._encoded[key] = found
        return found

    def serve(self, request: Request) -> Response:
        vary = [(b"vary", b"Accept-Encoding"), (b"vary", b"Accept")]
        for clause in parse_accept(request.headers.get("accept") or "*/*"):
            for accepted, answered in _ACCEPTED:
                if not clause.matches(accepted):
                    continue
                headers = [*vary, _NO_CACHE]
                if not_modified(request, f'"{self.etag}"', self.last_modified):
                    return serve_content(request, b"", "", self.etag, self.last_modified, headers)
                body = self.encoded(answered, False)
                if len(body) >= _GZIP_MIN_SIZE and _accepts_gzip(request):
                    body = self.encoded(answered, True)
                    headers.append((b"content-encoding", b"gzip"))
                return serve_content(
                    request, body, answered, self.etag, self.last_modified, headers
                )
        return Response(406, b"", "", [*vary, _NO_CACHE])


def _accepts_gzip(request: Request) -> bool:
    for part in request.headers.get("accept-encoding", "").split(","):
        coding, *params = (p.strip() for p in part.split(";"))
        if coding.lower() != "gzip":
            continue
        return not any(p.replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in params)
    return False


# --- the document ---------------------------------------------------------------------------


def swagger_document(specs: Specs, info: Object) -> Object:
    definitions: Object = {}
    routes: list[Route] = []
    for spec in specs.by_path.values():
        schemas = spec.document["components"]["schemas"]
        for name, schema in schemas.items():
            if name not in definitions:
                custom = name in spec.custom_definitions
                definitions[name] = custom_to_v2(schema) if custom else to_v2(schema)
        routes += spec.routes
    paths, parameters = _deduplicate(path_items(routes, _operation, _param))
    document: Object = {
        "swagger": "2.0",
        "info": info,
        "paths": paths,
        "definitions": dict(sorted(definitions.items())),
    }
    if parameters:
        document["parameters"] = parameters
    document["securityDefinitions"] = _SECURITY_DEFINITIONS
    document["security"] = [{"BearerToken": []}]
    return document


def _operation(route: Route, shared: Shared) -> Object:
    op: Object = {
        "description": route.description,
        "consumes": list(route.consumes),
        "produces": list(route.produces),
        "schemes": ["https"],
        "tags": [route.tag],
        "operationId": route.operation_id,
    }
    params = own_params(route, shared)
    if route.body is not None:
        params.append(Param("body", BODY, required=route.body_required))
    if params:
        op["parameters"] = [
            _body(route) if p.location == BODY else _param(p)
            for p in sorted(params, key=lambda p: p.name)
        ]
    responses: Object = {
        str(r.code): {"description": r.description, "schema": {"$ref": _V2_REF + r.definition}}
        for r in route.responses
    }
    return finish_operation(op, route, responses)


def _param(param: Param) -> Object:
    out: Object = {"uniqueItems": True, "type": param.type}
    if param.description:
        out["description"] = param.description
    out.update(name=param.name, **{"in": param.location})
    if param.required or param.location == "path":
        out["required"] = True
    return out


def _body(route: Route) -> Object:
    assert route.body is not None
    out: Object = {"name": "body", "in": BODY}
    if route.body_required:
        out["required"] = True
    out["schema"] = {"$ref": _V2_REF + route.body}
    return out


def _deduplicate(paths: Object) -> tuple[Object, Object]:
    """kube-openapi's shared parameters: each one moves to ``parameters`` and is referenced.

    Names stay inline (the kind is in their description), as do ``fieldValidation``
    and ``dryRun`` (older kubectl looks for them inline) and bodies of a kind's own
    schema.  A shared parameter is named ``<name>-<8 characters of FNV-1 hash>``.
    """
    names: dict[bytes, str] = {}
    shared: dict[str, Object] = {}
    for key in sorted({_go_json(p) for p in _all_params(paths) if _shareable(p)}):
        param = orjson.loads(key)
        name = f"{param.get('name') or 'param'}-{_hash(key)}"
        attempt = 0
        while name in shared:
            attempt += 1
            name = f"{param['name']}-{attempt}"
        shared[name] = param
        names[key] = name
    for item in paths.values():
        for owner in [item, *(item[m] for m in item if m != "parameters")]:
            if "parameters" in owner:
                owner["parameters"] = [
                    {"$ref": f"#/parameters/{names[k]}"} if (k := _go_json(p)) in names else p
                    for p in owner["parameters"]
                ]
    return paths, dict(sorted(shared.items()))


def _all_params(paths: Object) -> list[Object]:
    params: list[Object] = []
    for item in paths.values():
        for key, value in item.items():
            params += value if key == "parameters" else value.get("parameters", [])
    return params


def _shareable(param: Object) -> bool:
    location, name = param.get("in"), param.get("name")
    if location in ("query", "path") and name == "name":
        return False
    if location == "query" and name in ("fieldValidation", "dryRun"):
        return False
    if location == BODY:
        return str(param.get("schema", {}).get("$ref", "")).startswith(
            _V2_REF + "io.k8s.apimachinery"
        )
    return True


def _go_json(value: Any) -> bytes:
    """JSON as Go's ``encoding/json`` writes it (HTML characters escaped), for hashing."""
    return (
        orjson.dumps(value)
        .replace(b"<", b"\\u003c")
        .replace(b">", b"\\u003e")
        .replace(b"&", b"\\u0026")
    )


def _hash(text: bytes) -> str:
    """``base64Hash``: the first 6 bytes of FNV-1 (64 bit), URL-safe base64."""
    value = 0xCBF29CE484222325
    for byte in text:
        value = (value * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        value ^= byte
    return base64.urlsafe_b64encode(value.to_bytes(8, "big")[:6]).decode()


# --- schemas ---------------------------------------------------------------------------------

#: What a Swagger 2.0 schema may hold besides ``x-`` extensions.
_SCHEMA_KEYS = frozenset(
    {
        "$ref",
        "additionalProperties",
        "allOf",
        "default",
        "description",
        "discriminator",
        "enum",
        "example",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "externalDocs",
        "format",
        "items",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "multipleOf",
        "pattern",
        "properties",
        "readOnly",
        "required",
        "title",
        "type",
        "uniqueItems",
        "xml",
    }
)
#: What a structural CRD schema keeps (upstream builds CRD definitions from it).
_STRUCTURAL_KEYS = _SCHEMA_KEYS - {"allOf", "discriminator", "example", "externalDocs", "xml"}
_SUBSCHEMAS = ("items", "additionalProperties")


_STRING_OR_NUMBER = [{"type": "string"}, {"type": "number"}]


def to_v2(schema: Object) -> Object:
    """A built-in v3 schema as v2: ``allOf: [$ref]`` becomes the reference itself.

    Property and extension keys are sorted, as Go marshals its maps.
    """
    out: Object = {}
    for key, value in schema.items():
        if key == "allOf" and _is_ref_wrapper(value):
            out["$ref"] = _v2_ref(value[0]["$ref"])
        elif key == "$ref":
            out["$ref"] = _v2_ref(value)
        elif key == "properties":
            out[key] = {k: to_v2(v) for k, v in sorted(value.items())}
        elif key in _SUBSCHEMAS and isinstance(value, dict):
            out[key] = to_v2(value)
        elif key == "allOf":
            out[key] = [to_v2(v) for v in value]
        elif key == "oneOf" and (
            schema.get("format") == "int-or-string" or value == _STRING_OR_NUMBER
        ):
            # IntOrString, Quantity: v2 has no oneOf (their OpenAPISchemaType is string)
            out["type"] = "string"
        else:
            out[key] = _sorted_value(value) if _free_form(key) else value
    return _sorted_extensions(out)


#: What upstream adds to every custom resource definition, bare ones included.
_ROUTE_EXTENSIONS = ("x-kubernetes-group-version-kind", "x-kubernetes-selectable-fields")


def custom_to_v2(schema: Object) -> Object:
    """A CRD's definition as the apiextensions v2 builder publishes it.

    A schema that keeps unknown fields at its root is published as a bare
    object (kubectl would otherwise reject any field it does not list);
    every other node goes through ``ToStructuralOpenAPIV2``.
    """
    if schema.get("x-kubernetes-preserve-unknown-fields") is True:
        bare: Object = {"type": "object"}
        for key in _ROUTE_EXTENSIONS:
            if key in schema:
                bare[key] = _sorted_value(schema[key])
        return bare
    return _structural_v2(schema)


def _structural_v2(node: Object) -> Object:
    out: Object = {}
    for key, value in node.items():
        if key == "allOf" and _is_ref_wrapper(value):
            out["$ref"] = _v2_ref(value[0]["$ref"])
        elif key == "$ref":
            out["$ref"] = _v2_ref(value)
        elif key in _STRUCTURAL_KEYS or key.startswith("x-"):
            out[key] = _sorted_value(value) if _free_form(key) else value
    nullable = node.get("nullable") is True
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    if nullable:
        # kubectl treats untyped values with items or properties wrongly.
        for key in ("type", "items", "properties"):
            out.pop(key, None)
    if preserve:
        out.pop("items", None)
        out.pop("properties", None)
        if out.get("type") == "object":
            out.pop("type")
    if out.get("type") == "array" and "items" not in out:
        out.pop("type")  # kubectl cannot take an array without an item schema
    properties = out.get("properties")
    if isinstance(properties, dict):
        nullable_fields = {k for k, v in properties.items() if v.get("nullable") is True}
        out["properties"] = {k: _structural_v2(v) for k, v in sorted(properties.items())}
        if nullable_fields and "required" in out:
            out["required"] = [r for r in out["required"] if r not in nullable_fields]
            if not out["required"]:
                del out["required"]
    items = out.get("items")
    if isinstance(items, dict):
        out["items"] = _structural_v2(items)
    additional = out.get("additionalProperties")
    if isinstance(additional, dict):
        if additional.get("nullable") is True:
            out.pop("required", None)
        out["additionalProperties"] = _structural_v2(additional)
    return _sorted_extensions(out)


def _is_ref_wrapper(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 1 and set(value[0]) == {"$ref"}


def _v2_ref(ref: str) -> str:
    return _V2_REF + ref.removeprefix(_V3_REF) if ref.startswith(_V3_REF) else ref


def _free_form(key: str) -> bool:
    """Keys whose values are data, not schemas: Go holds them as maps (marshalled sorted)."""
    return key.startswith("x-") or key in ("default", "enum", "example")


def _sorted_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted_value(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_sorted_value(v) for v in value]
    return value


def _sorted_extensions(schema: Object) -> Object:
    """Extensions after the schema's own keys, by name (Go's ``Extensions`` map)."""
    own = {k: v for k, v in schema.items() if not k.startswith("x-")}
    return own | dict(sorted((k, v) for k, v in schema.items() if k.startswith("x-")))
