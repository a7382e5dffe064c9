"""The Swagger 2.0 document: its derivation from v3, and its gnostic protobuf encoding.

The protobuf is decoded back here with the field numbers of gnostic-models'
``openapiv2/OpenAPIv2.proto`` (written out below, independently of the
encoder) and compared with the JSON document field by field.
"""

from __future__ import annotations

import base64
import re
import struct
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from kapi.apis import builtin_resources
from kapi.endpoints.openapi import gnostic
from kapi.endpoints.openapi import v2 as openapi_v2
from kapi.endpoints.openapi.service import OpenAPIService
from kapi.runtime.protowire import FIXED64, LENGTH_DELIMITED, iter_fields
from kapi.runtime.scheme import Scheme
from kapi.version import DEFAULT_VERSION

Object = dict[str, Any]


# --- decoding with OpenAPIv2.proto's field numbers ------------------------------------------


def fields(data: bytes) -> list[tuple[int, Any]]:
    out = []
    for number, wire_type, value in iter_fields(data):
        if wire_type == FIXED64:
            value = struct.unpack("<d", struct.pack("<Q", value))[0]
        out.append((number, value))
    assert all(wt in (0, 1, LENGTH_DELIMITED) for _, wt, _ in iter_fields(data))
    return out


def one(data: bytes, number: int) -> Any:
    found = [v for n, v in fields(data) if n == number]
    assert len(found) == 1, (number, fields(data))
    return found[0]


def every(data: bytes, number: int) -> list[Any]:
    return [v for n, v in fields(data) if n == number]


def named(data: bytes, number: int) -> dict[str, bytes]:
    """Repeated ``Named<X>`` messages (name = 1, value = 2) as a dict, in wire order."""
    out: dict[str, bytes] = {}
    for entry in every(data, number):
        out[one(entry, 1).decode()] = dict(fields(entry)).get(2, b"")
    return out


class V3Loader(yaml.SafeLoader):
    """Reads plain scalars as yaml.v3 (YAML 1.2 core) resolves them, not as YAML 1.1."""


V3Loader.yaml_implicit_resolvers = {
    # YAML 1.1's "=" (the value key) is a plain string in YAML 1.2 core.
    k: [
        (tag, regexp)
        for tag, regexp in v
        if not tag.endswith((":bool", ":int", ":float", ":value"))
    ]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^[-+]?(?:0x[0-9a-fA-F_]+|0o[0-7_]+|0b[01_]+|[0-9][0-9_]*)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
        r"|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
):
    V3Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), list(_first))


def any_value(data: bytes) -> Any:
    """An ``Any`` (value = 1, yaml = 2): its YAML, read back."""
    return yaml.load(one(data, 2).decode(), Loader=V3Loader)


SCHEMA_STRINGS = {1: "$ref", 2: "format", 3: "title", 4: "description", 13: "pattern"}
SCHEMA_BOOLS = {8: "exclusiveMaximum", 10: "exclusiveMinimum", 16: "uniqueItems", 27: "readOnly"}
SCHEMA_INTS = {11: "maxLength", 12: "minLength", 14: "maxItems", 15: "minItems"}
SCHEMA_DOUBLES = {6: "multipleOf", 7: "maximum", 9: "minimum"}


def decode_schema(data: bytes) -> Object:
    out: Object = {}
    for number, value in fields(data):
        if number in SCHEMA_STRINGS:
            out[SCHEMA_STRINGS[number]] = value.decode()
        elif number in SCHEMA_BOOLS:
            out[SCHEMA_BOOLS[number]] = bool(value)
        elif number in SCHEMA_INTS:
            out[SCHEMA_INTS[number]] = value
        elif number in SCHEMA_DOUBLES:
            out[SCHEMA_DOUBLES[number]] = value
        elif number == 5:
            out["default"] = any_value(value)
        elif number == 19:
            out.setdefault("required", []).append(value.decode())
        elif number == 20:
            out.setdefault("enum", []).append(any_value(value))
        elif number == 21:  # AdditionalPropertiesItem: schema = 1 | boolean = 2
            kind, inner = fields(value)[0]
            out["additionalProperties"] = decode_schema(inner) if kind == 1 else bool(inner)
        elif number == 22:  # TypeItem: repeated string value = 1
            types = [t.decode() for t in every(value, 1)]
            out["type"] = types[0] if len(types) == 1 else types
        elif number == 23:  # ItemsItem: repeated Schema schema = 1
            items = [decode_schema(s) for s in every(value, 1)]
            out["items"] = items[0] if len(items) == 1 else items
        elif number == 25:  # Properties: repeated NamedSchema additional_properties = 1
            out["properties"] = {k: decode_schema(v) for k, v in named(value, 1).items()}
        elif number == 31:  # repeated NamedAny vendor_extension
            name = one(value, 1).decode()
            out[name] = any_value(one(value, 2))
        else:
            raise AssertionError(f"unexpected Schema field {number}")
    return out


@pytest.fixture(scope="module")
def service() -> OpenAPIService:
    scheme = Scheme(DEFAULT_VERSION)
    for resource in builtin_resources():
        scheme.add(resource)
    return OpenAPIService(scheme)


@pytest.fixture(scope="module")
def document(service: OpenAPIService) -> Object:
    return openapi_v2.swagger_document(service.specs(), service.info)


@pytest.fixture(scope="module")
def encoded(document: Object) -> bytes:
    return gnostic.encode_document(document)


def test_document_header(encoded: bytes) -> None:
    assert one(encoded, 1) == b"2.0"  # swagger
    info = one(encoded, 2)
    assert one(info, 1) == b"Kubernetes"
    assert re.fullmatch(rb"v1\.\d+\.0", one(info, 2))
    security_definitions = named(one(encoded, 13), 1)
    api_key = one(security_definitions["BearerToken"], 2)  # SecurityDefinitionsItem.api_key
    assert [one(api_key, n) for n in (1, 2, 3)] == [b"apiKey", b"authorization", b"header"]


def test_every_definition_decodes_to_its_json(document: Object, encoded: bytes) -> None:
    definitions = named(one(encoded, 9), 1)
    assert list(definitions) == list(document["definitions"])
    for name, schema in document["definitions"].items():
        assert decode_schema(definitions[name]) == schema, name


def test_configmap_definition_as_kubectl_reads_it(encoded: bytes) -> None:
    configmap = decode_schema(named(one(encoded, 9), 1)["io.k8s.api.core.v1.ConfigMap"])
    assert configmap["x-kubernetes-group-version-kind"] == [
        {"group": "", "kind": "ConfigMap", "version": "v1"}
    ]
    properties = configmap["properties"]
    assert list(properties) == sorted(properties)
    assert properties["data"]["type"] == "object"
    assert properties["data"]["additionalProperties"]["type"] == "string"
    metadata = properties["metadata"]
    assert metadata["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert "allOf" not in metadata and "type" not in metadata


def _operation(encoded: bytes, path: str, method_field: int) -> bytes:
    paths = named(one(encoded, 8), 2)  # Paths: path = 2 (NamedPathItem)
    return one(paths[path], method_field)


def test_patch_operation_as_kubectl_1_27_reads_it(encoded: bytes) -> None:
    """kubectl looks for the PATCH types and the fieldValidation query parameter."""
    patch = _operation(encoded, "/api/v1/namespaces/{namespace}/configmaps/{name}", 8)
    assert [c.decode() for c in every(patch, 7)] == [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
    ]
    extensions = {one(e, 1).decode(): any_value(one(e, 2)) for e in every(patch, 13)}
    assert extensions["x-kubernetes-group-version-kind"] == {
        "group": "",
        "version": "v1",
        "kind": "ConfigMap",
    }
    assert extensions["x-kubernetes-action"] == "patch"
    query_names = []
    for item in every(patch, 8):  # ParametersItem: parameter = 1 | json_reference = 2
        kind, value = fields(item)[0]
        if kind == 1 and fields(value)[0][0] == 2:  # Parameter.non_body_parameter
            case, sub = fields(fields(value)[0][1])[0]
            if case == 3:  # NonBodyParameter.query_parameter_sub_schema
                assert one(sub, 2) == b"query"
                query_names.append(one(sub, 4).decode())
    assert "fieldValidation" in query_names


def test_body_and_shared_parameters(encoded: bytes, document: Object) -> None:
    put = _operation(encoded, "/api/v1/namespaces/{namespace}/configmaps/{name}", 3)
    body = one(one(every(put, 8)[0], 1), 1)  # ParametersItem.parameter.body_parameter
    assert [one(body, n) for n in (2, 3, 4)] == [b"body", b"body", 1]
    schema = decode_schema(one(body, 5))
    assert schema == {"$ref": "#/definitions/io.k8s.api.core.v1.ConfigMap"}
    shared = named(one(encoded, 10), 1)
    assert set(shared) == set(document["parameters"])


def test_shared_patch_body_has_upstreams_name(document: Object) -> None:
    """Upstream's swagger.json refers to the Patch body as ``#/parameters/body-78PwaGsr``."""
    assert document["parameters"]["body-78PwaGsr"] == {
        "name": "body",
        "in": "body",
        "required": True,
        "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"},
    }


def test_fnv1_hash_matches_the_reference_vector() -> None:
    # FNV-1 (not 1a), 64 bit, of "a" is 0xaf63bd4c8601b7be.
    expected = base64.urlsafe_b64encode(bytes.fromhex("af63bd4c8601")).decode()
    assert openapi_v2._hash(b"a") == expected


def test_inline_parameters_kubectl_looks_for_stay_inline(document: Object) -> None:
    for path, item in document["paths"].items():
        for method, op in item.items():
            if method == "parameters":
                continue
            for param in op.get("parameters", []):
                if param.get("name") in ("fieldValidation", "dryRun", "name"):
                    assert "$ref" not in param, (path, method)


def test_unknown_keys_are_rejected() -> None:
    with pytest.raises(gnostic.SwaggerEncodeError, match="nullable"):
        gnostic.encode_document({"swagger": "2.0", "definitions": {"X": {"nullable": True}}})


# --- CRD schemas in v2 ----------------------------------------------------------------------


def test_crd_schema_conversion() -> None:
    v3 = {
        "type": "object",
        "properties": {
            "metadata": {"allOf": [{"$ref": "#/components/schemas/Meta"}], "description": "m"},
            "spec": {
                "type": "object",
                "required": ["a", "maybe"],
                "properties": {
                    "maybe": {"type": "string", "nullable": True},
                    "free": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                        "properties": {"x": {"type": "string"}},
                    },
                    "port": {
                        "x-kubernetes-int-or-string": True,
                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                    },
                    "list": {"type": "array", "x-kubernetes-preserve-unknown-fields": True},
                    "a": {"type": "string", "example": "x", "oneOf": [{"minLength": 1}]},
                },
            },
        },
        "x-kubernetes-group-version-kind": [{"version": "v1", "kind": "K", "group": "g"}],
    }
    assert openapi_v2.custom_to_v2(v3) == {
        "type": "object",
        "properties": {
            "metadata": {"$ref": "#/definitions/Meta", "description": "m"},
            "spec": {
                "type": "object",
                "required": ["a"],
                "properties": {
                    "a": {"type": "string"},
                    "free": {"x-kubernetes-preserve-unknown-fields": True},
                    "list": {"x-kubernetes-preserve-unknown-fields": True},
                    "maybe": {},
                    "port": {"x-kubernetes-int-or-string": True},
                },
            },
        },
        "x-kubernetes-group-version-kind": [{"group": "g", "kind": "K", "version": "v1"}],
    }


def test_crd_schema_keeping_unknown_fields_at_the_root_is_a_bare_object() -> None:
    gvk = [{"group": "g", "version": "v1", "kind": "K"}]
    v3 = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"spec": {"type": "object"}},
        "x-kubernetes-group-version-kind": gvk,
    }
    assert openapi_v2.custom_to_v2(v3) == {
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": "g", "kind": "K", "version": "v1"}],
    }


# --- YAML of Any values -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # yaml.v3: a mapping in a sequence item is indented by the 2 of "- ".
        (
            [{"group": "", "kind": "ConfigMap", "version": "v1"}],
            '- group: ""\n  kind: ConfigMap\n  version: v1\n',
        ),
        ({"a": {"b": [1]}}, "a:\n    b:\n        - 1\n"),
        ({"a": {}, "b": []}, "a: {}\nb: []\n"),
        ("merge,retainKeys", "merge,retainKeys\n"),
        ("true", '"true"\n'),
        ("10", '"10"\n'),
        ("a: b", "'a: b'\n"),
        (0.5, "0.5\n"),
    ],
)
def test_yaml_emitted_as_yaml_v3_does(value: Any, text: str) -> None:
    assert gnostic.to_yaml(value) == text


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text("abcdef-_.:", min_size=1, max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@given(_json_values)
def test_yaml_reads_back_as_the_value(value: Any) -> None:
    assert yaml.load(gnostic.to_yaml(value), Loader=V3Loader) == value
