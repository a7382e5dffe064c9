"""CustomResourceDefinition and events.k8s.io/v1beta1 Event in protobuf.

The wire-form tests build their messages field by field with the numbers of
upstream's ``generated.proto`` (``k8s.io/apiextensions-apiserver``
``pkg/apis/apiextensions/v1``, ``k8s.io/api`` ``events/v1beta1``), laid out as
gogo-protobuf's marshallers write them: fields in number order, every
non-pointer field even when zero, map entries by key, a ``JSON``'s ``raw``
only when set.  The JSON they must decode to is written by hand from
``types.go``, ``types_jsonschema.go`` and ``marshal.go``: ``omitempty`` zeros
gone, pointers kept when zero, the ``JSONSchemaPropsOr*`` types in their own
JSON forms.  Encoding must give those very bytes back.
"""

from __future__ import annotations

import base64
import copy
import struct
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from kapi.runtime import protobuf
from kapi.runtime.protowire import LENGTH_DELIMITED, MessageWriter, ProtobufDecodeError, iter_fields

Object = dict[str, Any]
W = MessageWriter
CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
CA_BUNDLE = b"-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAK\n-----END CERTIFICATE-----\n"
#: 2024-05-06T07:08:09Z in Unix seconds.
TRANSITION = 1714979289


def envelope(api_version: str, kind: str, raw: bytes | MessageWriter) -> bytes:
    """A body as upstream writes it: ``runtime.Unknown`` with empty encoding and type."""
    type_meta = W().string(1, api_version).string(2, kind)
    unknown = W().message(1, type_meta).message(2, raw).string(3, "").string(4, "")
    return b"k8s\x00" + unknown.getvalue()


def field(message: bytes, *path: int) -> bytes:
    """The bytes of the first field at ``path`` (numbers, one per level) inside ``message``."""
    for number in path:
        found = [v for n, w, v in iter_fields(message) if n == number and w == LENGTH_DELIMITED]
        assert found, f"no field {number}"
        assert isinstance(found[0], bytes)
        message = found[0]
    return message


def raw_object(body: bytes) -> bytes:
    """The object's own message inside a body's ``runtime.Unknown``."""
    return field(body[4:], 2)


# -- writing JSONSchemaProps as gogo does ------------------------------------------------------

Write = Callable[[MessageWriter, int], object]


def text(value: str) -> Write:
    return lambda w, n: w.string(n, value)


def flag(value: bool) -> Write:
    return lambda w, n: w.boolean(n, value)


def number(value: int) -> Write:
    return lambda w, n: w.varint(n, value)


def double(value: float) -> Write:
    """A ``double``: wire type 1, the IEEE 754 bits little-endian."""
    return lambda w, n: w.fixed64(n, int.from_bytes(struct.pack("<d", value), "little"))


def nested(value: MessageWriter | bytes) -> Write:
    return lambda w, n: w.message(n, value)


def raw_json(value: bytes | None) -> Write:
    """A ``JSON`` message: ``raw`` (1) holds the JSON text; ``null`` leaves it unset."""
    return nested(W() if value is None else W().bytes(1, value))


def entries(schemas: dict[str, MessageWriter]) -> list[Write]:
    """``map<string, JSONSchemaProps>`` entries (key 1, value 2), sorted by key as gogo sorts."""
    return [nested(W().string(1, key).message(2, schemas[key])) for key in sorted(schemas)]


#: JSONSchemaProps' non-pointer scalars, which gogo writes even when zero: id 1, schema 2,
#: description 4, type 5, format 6, title 7, pattern 15 (strings); exclusiveMaximum 10,
#: exclusiveMinimum 12, uniqueItems 18, nullable 37, xKubernetesEmbeddedResource 39,
#: xKubernetesIntOrString 40 (bools).
_ALWAYS_WRITTEN: dict[int, Write] = {
    **{n: text("") for n in (1, 2, 4, 5, 6, 7, 15)},
    **{n: flag(False) for n in (10, 12, 18, 37, 39, 40)},
}


def props(fields: dict[int, Write | list[Write]]) -> MessageWriter:
    """A JSONSchemaProps as gogo marshals it: ``fields`` and the zero non-pointers, by number."""
    merged = {**_ALWAYS_WRITTEN, **fields}
    out = W()
    for n in sorted(merged):
        writes = merged[n]
        for write in writes if isinstance(writes, list) else [writes]:
            write(out, n)
    return out


def or_bool(allows: bool, schema: MessageWriter | None = None) -> Write:
    """JSONSchemaPropsOrBool: allows 1 (always written), schema 2."""
    message = W().boolean(1, allows)
    return nested(message if schema is None else message.message(2, schema))


def validation_rule(
    rule: str,
    message: str = "",
    message_expression: str = "",
    reason: str | None = None,
    field_path: str = "",
    optional_old_self: bool | None = None,
) -> Write:
    """ValidationRule: rule 1, message 2, messageExpression 3, reason 4 (*), fieldPath 5,
    optionalOldSelf 6 (*)."""
    out = W().string(1, rule).string(2, message).string(3, message_expression)
    if reason is not None:
        out.string(4, reason)
    out.string(5, field_path)
    if optional_old_self is not None:
        out.boolean(6, optional_old_self)
    return nested(out)


def time(seconds: int) -> W:
    """``metav1.Time``: seconds 1, nanos 2."""
    return W().varint(1, seconds).varint(2, 0)


# -- a whole CRD, by hand --------------------------------------------------------------------

SPEC_PROPERTIES = {
    "closed": props({5: text("object"), 30: or_bool(False)}),
    "labels": props({5: text("object"), 30: or_bool(True, props({5: text("string")}))}),
    "name": props({5: text("string"), 13: number(63), 14: number(1), 15: text("^[a-z]+$")}),
    "port": props(
        {
            27: [nested(props({5: text("integer")})), nested(props({5: text("string")}))],
            40: flag(True),
        }
    ),
    "ports": props(
        {
            5: text("array"),
            16: number(8),
            24: nested(
                W().message(
                    1,
                    props(
                        {
                            5: text("object"),
                            23: [text("name")],
                            29: entries(
                                {
                                    "name": props({5: text("string")}),
                                    "port": props({5: text("integer")}),
                                }
                            ),
                        }
                    ),
                )
            ),
            41: [text("name")],
            42: text("map"),
        }
    ),
    "ratio": props({5: text("number"), 9: double(1.5), 19: double(0.25)}),
    "replicas": props(
        {5: text("integer"), 6: text("int32"), 8: raw_json(b"1"), 9: double(100.0), 11: double(0.0)}
    ),
    "size": props(
        {
            5: text("string"),
            8: raw_json(b'"small"'),
            20: [raw_json(b'"small"'), raw_json(b'"large"'), raw_json(None)],
            37: flag(True),
        }
    ),
    "strict": props({5: text("object"), 38: flag(False), 43: text("atomic")}),
    "template": props({5: text("object"), 38: flag(True), 39: flag(True)}),
    "tuple": props(
        {
            5: text("array"),
            24: nested(
                W().message(2, props({5: text("string")})).message(2, props({5: text("integer")}))
            ),
            33: or_bool(True),
        }
    ),
}
SPEC_SCHEMA = props(
    {
        5: text("object"),
        23: [text("size")],
        25: [nested(props({23: [text("replicas")]}))],
        28: nested(props({23: [text("legacy")]})),
        29: entries(SPEC_PROPERTIES),
        36: raw_json(b'{"size":"small","replicas":1}'),
        44: [
            validation_rule(
                "self.replicas <= 100",
                message="too many",
                reason="FieldValueInvalid",
                field_path=".replicas",
            ),
            validation_rule(
                "self.size == oldSelf.size",
                message_expression="'size is immutable'",
                optional_old_self=True,
            ),
            validation_rule("!has(oldSelf.name) || has(self.name)", optional_old_self=False),
        ],
    }
)
ROOT_SCHEMA = props(
    {
        4: text("A widget."),
        5: text("object"),
        7: text("Widget"),
        29: entries({"spec": SPEC_SCHEMA, "status": props({5: text("object"), 38: flag(True)})}),
        35: nested(W().string(1, "Widget docs").string(2, "https://example.com/widgets")),
    }
)


def column(
    name: str, type_: str, json_path: str, fmt: str = "", doc: str = "", priority: int = 0
) -> W:
    """CustomResourceColumnDefinition: name 1, type 2, format 3, description 4, priority 5,
    jsonPath 6 (all non-pointers)."""
    return (
        W()
        .string(1, name)
        .string(2, type_)
        .string(3, fmt)
        .string(4, doc)
        .varint(5, priority)
        .string(6, json_path)
    )


def names(
    plural: str, singular: str, kind: str, short: list[str], list_kind: str, categories: list[str]
) -> W:
    """CustomResourceDefinitionNames: plural 1, singular 2, shortNames 3, kind 4, listKind 5,
    categories 6."""
    out = W().string(1, plural).string(2, singular)
    for name in short:
        out.string(3, name)
    out.string(4, kind).string(5, list_kind)
    for category in categories:
        out.string(6, category)
    return out


WIDGET_NAMES = names("widgets", "widget", "Widget", ["wd"], "WidgetList", ["all"])
# CustomResourceDefinitionVersion: name 1, served 2, storage 3, schema 4 (CustomResourceValidation:
# openAPIV3Schema 1), subresources 5 (status 1, scale 2), additionalPrinterColumns 6,
# deprecated 7, deprecationWarning 8 (*), selectableFields 9 (jsonPath 1).
VERSION_V1 = (
    W()
    .string(1, "v1")
    .boolean(2, True)
    .boolean(3, True)
    .message(4, W().message(1, ROOT_SCHEMA))
    .message(
        5,
        W()
        .message(1, b"")
        .message(
            2,
            W()
            .string(1, ".spec.replicas")
            .string(2, ".status.replicas")
            .string(3, ".status.selector"),
        ),
    )
    .message(6, column("Size", "string", ".spec.size"))
    .message(6, column("Replicas", "integer", ".spec.replicas", "int32", "Desired replicas", 1))
    .boolean(7, False)
    .message(9, W().string(1, ".spec.size"))
)
VERSION_V1BETA1 = (
    W()
    .string(1, "v1beta1")
    .boolean(2, True)
    .boolean(3, False)
    .message(4, W().message(1, props({5: text("object"), 38: flag(True)})))
    .boolean(7, True)
    .string(8, "example.com/v1beta1 Widget is deprecated")
)
# CustomResourceConversion: strategy 1, webhook 2 (WebhookConversion: clientConfig 2,
# conversionReviewVersions 3).  WebhookClientConfig: service 1 (namespace 1, name 2, path 3,
# port 4), caBundle 2, url 3.
CONVERSION = (
    W()
    .string(1, "Webhook")
    .message(
        2,
        W()
        .message(
            2,
            W()
            .message(
                1,
                W()
                .string(1, "widgets")
                .string(2, "converter")
                .string(3, "/convert")
                .varint(4, 8443),
            )
            .bytes(2, CA_BUNDLE),
        )
        .string(3, "v1")
        .string(3, "v1beta1"),
    )
)
# CustomResourceDefinitionSpec: group 1, names 3, scope 4, versions 7, conversion 9,
# preserveUnknownFields 10.
SPEC = (
    W()
    .string(1, "example.com")
    .message(3, WIDGET_NAMES)
    .string(4, "Namespaced")
    .message(7, VERSION_V1)
    .message(7, VERSION_V1BETA1)
    .message(9, CONVERSION)
    .boolean(10, False)
)


def condition(type_: str, reason: str, message: str, generation: int) -> W:
    """CustomResourceDefinitionCondition: type 1, status 2, lastTransitionTime 3, reason 4,
    message 5, observedGeneration 6."""
    return (
        W()
        .string(1, type_)
        .string(2, "True")
        .message(3, time(TRANSITION))
        .string(4, reason)
        .string(5, message)
        .varint(6, generation)
    )


# CustomResourceDefinitionStatus: conditions 1, acceptedNames 2, storedVersions 3,
# observedGeneration 4.
STATUS = (
    W()
    .message(1, condition("NamesAccepted", "NoConflicts", "no conflicts found", 0))
    .message(
        1,
        condition("Established", "InitialNamesAccepted", "the initial names have been accepted", 2),
    )
    .message(2, WIDGET_NAMES)
    .string(3, "v1")
    .varint(4, 2)
)
WIDGETS = W().message(1, W().string(1, "widgets.example.com")).message(2, SPEC).message(3, STATUS)

WIDGET_NAMES_JSON = {
    "plural": "widgets",
    "singular": "widget",
    "shortNames": ["wd"],
    "kind": "Widget",
    "listKind": "WidgetList",
    "categories": ["all"],
}
WIDGETS_JSON: Object = {
    "apiVersion": CRD[0],
    "kind": CRD[1],
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": WIDGET_NAMES_JSON,
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "description": "A widget.",
                        "type": "object",
                        "title": "Widget",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["size"],
                                "allOf": [{"required": ["replicas"]}],
                                "not": {"required": ["legacy"]},
                                "properties": {
                                    "closed": {"type": "object", "additionalProperties": False},
                                    "labels": {
                                        "type": "object",
                                        "additionalProperties": {"type": "string"},
                                    },
                                    "name": {
                                        "type": "string",
                                        "maxLength": 63,
                                        "minLength": 1,
                                        "pattern": "^[a-z]+$",
                                    },
                                    "port": {
                                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                                        "x-kubernetes-int-or-string": True,
                                    },
                                    "ports": {
                                        "type": "array",
                                        "maxItems": 8,
                                        "items": {
                                            "type": "object",
                                            "required": ["name"],
                                            "properties": {
                                                "name": {"type": "string"},
                                                "port": {"type": "integer"},
                                            },
                                        },
                                        "x-kubernetes-list-map-keys": ["name"],
                                        "x-kubernetes-list-type": "map",
                                    },
                                    "ratio": {"type": "number", "maximum": 1.5, "multipleOf": 0.25},
                                    "replicas": {
                                        "type": "integer",
                                        "format": "int32",
                                        "default": 1,
                                        "maximum": 100,
                                        "minimum": 0,
                                    },
                                    "size": {
                                        "type": "string",
                                        "default": "small",
                                        "enum": ["small", "large", None],
                                        "nullable": True,
                                    },
                                    "strict": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": False,
                                        "x-kubernetes-map-type": "atomic",
                                    },
                                    "template": {
                                        "type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True,
                                        "x-kubernetes-embedded-resource": True,
                                    },
                                    "tuple": {
                                        "type": "array",
                                        "items": [{"type": "string"}, {"type": "integer"}],
                                        "additionalItems": True,
                                    },
                                },
                                "example": {"size": "small", "replicas": 1},
                                "x-kubernetes-validations": [
                                    {
                                        "rule": "self.replicas <= 100",
                                        "message": "too many",
                                        "reason": "FieldValueInvalid",
                                        "fieldPath": ".replicas",
                                    },
                                    {
                                        "rule": "self.size == oldSelf.size",
                                        "messageExpression": "'size is immutable'",
                                        "optionalOldSelf": True,
                                    },
                                    {
                                        "rule": "!has(oldSelf.name) || has(self.name)",
                                        "optionalOldSelf": False,
                                    },
                                ],
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                        "externalDocs": {
                            "description": "Widget docs",
                            "url": "https://example.com/widgets",
                        },
                    }
                },
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.selector",
                    },
                },
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "string", "jsonPath": ".spec.size"},
                    {
                        "name": "Replicas",
                        "type": "integer",
                        "format": "int32",
                        "description": "Desired replicas",
                        "priority": 1,
                        "jsonPath": ".spec.replicas",
                    },
                ],
                "selectableFields": [{"jsonPath": ".spec.size"}],
            },
            {
                "name": "v1beta1",
                "served": True,
                "storage": False,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
                "deprecated": True,
                "deprecationWarning": "example.com/v1beta1 Widget is deprecated",
            },
        ],
        "conversion": {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {
                    "service": {
                        "namespace": "widgets",
                        "name": "converter",
                        "path": "/convert",
                        "port": 8443,
                    },
                    "caBundle": base64.b64encode(CA_BUNDLE).decode(),
                },
                "conversionReviewVersions": ["v1", "v1beta1"],
            },
        },
    },
    "status": {
        "conditions": [
            {
                "type": "NamesAccepted",
                "status": "True",
                "lastTransitionTime": "2024-05-06T07:08:09Z",
                "reason": "NoConflicts",
                "message": "no conflicts found",
            },
            {
                "type": "Established",
                "status": "True",
                "lastTransitionTime": "2024-05-06T07:08:09Z",
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted",
                "observedGeneration": 2,
            },
        ],
        "acceptedNames": WIDGET_NAMES_JSON,
        "storedVersions": ["v1"],
        "observedGeneration": 2,
    },
}


def test_upstream_bytes_decode_to_the_json_upstream_writes() -> None:
    assert protobuf.decode(envelope(*CRD, WIDGETS)) == WIDGETS_JSON


def test_encoding_writes_upstream_bytes() -> None:
    raw = raw_object(protobuf.encode(WIDGETS_JSON))
    # Metadata is ObjectMeta's own business (tested with the core kinds); spec and status
    # must come out as gogo writes them, byte for byte.
    assert field(raw, 2) == SPEC.getvalue()
    assert field(raw, 3) == STATUS.getvalue()


def test_round_trip_of_the_whole_definition() -> None:
    body = protobuf.encode(WIDGETS_JSON)
    assert protobuf.decode(body) == WIDGETS_JSON
    assert protobuf.encode(protobuf.decode(body)) == body


def test_list_of_definitions() -> None:
    second = copy.deepcopy(WIDGETS_JSON)
    second["metadata"]["name"] = "gadgets.example.com"
    items = [
        {k: v for k, v in crd.items() if k not in ("apiVersion", "kind")}
        for crd in (WIDGETS_JSON, second)
    ]
    listed = {
        "apiVersion": CRD[0],
        "kind": "CustomResourceDefinitionList",
        "metadata": {"resourceVersion": "42"},
        "items": items,
    }
    assert protobuf.supports(CRD[0], "CustomResourceDefinitionList")
    body = protobuf.encode(listed)
    assert protobuf.decode(body) == listed
    # CustomResourceDefinitionList: metadata 1 (ListMeta), items 2.
    assert next(v for n, _, v in iter_fields(raw_object(body)) if n == 2) == raw_object(
        protobuf.encode(WIDGETS_JSON)
    )


# -- the zero values Go writes, and those it leaves out ------------------------------------------


#: ``CustomResourceDefinitionNames{}`` as gogo writes it: its four strings, empty.
ZERO_NAMES = W().string(1, "").string(2, "").string(4, "").string(5, "")
#: ``CustomResourceDefinitionStatus{}``: acceptedNames and observedGeneration.
ZERO_STATUS = W().message(2, ZERO_NAMES).varint(4, 0)


def test_an_empty_definition_shows_the_fields_go_always_writes() -> None:
    """Non-pointer structs, and fields without ``omitempty``, show in JSON even when zero."""
    spec = W().string(1, "").message(3, ZERO_NAMES).string(4, "").boolean(10, False)
    body = envelope(*CRD, W().message(1, b"").message(2, spec).message(3, ZERO_STATUS))
    empty = {
        "apiVersion": CRD[0],
        "kind": CRD[1],
        "metadata": {},
        "spec": {"group": "", "names": {"plural": "", "kind": ""}, "scope": ""},
        "status": {"acceptedNames": {"plural": "", "kind": ""}},
    }
    assert protobuf.decode(body) == empty
    raw = raw_object(protobuf.encode(empty))
    assert (field(raw, 2), field(raw, 3)) == (spec.getvalue(), ZERO_STATUS.getvalue())


def test_a_version_keeps_served_and_storage_when_false() -> None:
    version = W().string(1, "v2").boolean(2, False).boolean(3, False).boolean(7, False)
    decoded = protobuf.decode(envelope(*CRD, W().message(2, W().message(7, version))))
    assert decoded["spec"]["versions"] == [{"name": "v2", "served": False, "storage": False}]


# -- JSONSchemaProps' own JSON forms -------------------------------------------------------------


def crd_with_schema(schema: Object) -> Object:
    return {
        "apiVersion": CRD[0],
        "kind": CRD[1],
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "things", "kind": "Thing"},
            "scope": "Cluster",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
        "status": {"acceptedNames": {"plural": "", "kind": ""}},
    }


def body_with_schema(schema: MessageWriter) -> bytes:
    """The body gogo writes for :func:`crd_with_schema` (with ``schema`` already on the wire)."""
    version = (
        W()
        .string(1, "v1")
        .boolean(2, True)
        .boolean(3, True)
        .message(4, W().message(1, schema))
        .boolean(7, False)
    )
    spec = (
        W()
        .string(1, "example.com")
        .message(3, W().string(1, "things").string(2, "").string(4, "Thing").string(5, ""))
        .string(4, "Cluster")
        .message(7, version)
        .boolean(10, False)
    )
    metadata = W().string(1, "things.example.com")
    return envelope(*CRD, W().message(1, metadata).message(2, spec).message(3, ZERO_STATUS))


def encoded_schema(obj: Object) -> bytes:
    """``spec`` 2, ``versions`` 7, ``schema`` 4, ``openAPIV3Schema`` 1."""
    return field(raw_object(protobuf.encode(obj)), 2, 7, 4, 1)


SCHEMA_FORMS = [
    pytest.param(
        {"items": {"type": "string"}},
        {24: nested(W().message(1, props({5: text("string")})))},
        id="items-schema",
    ),
    pytest.param(
        {"items": [{"type": "string"}, {}]},
        {24: nested(W().message(2, props({5: text("string")})).message(2, props({})))},
        id="items-array",
    ),
    pytest.param({"additionalProperties": True}, {30: or_bool(True)}, id="additional-true"),
    pytest.param({"additionalProperties": False}, {30: or_bool(False)}, id="additional-false"),
    pytest.param(
        {"additionalProperties": {"type": "integer"}},
        {30: or_bool(True, props({5: text("integer")}))},
        id="additional-schema",
    ),
    pytest.param(
        {"additionalItems": {}}, {33: or_bool(True, props({}))}, id="additional-items-empty-schema"
    ),
    pytest.param(
        {"dependencies": {"a": ["b", "c"], "d": {"required": ["e"]}, "f": None}},
        {
            32: [
                nested(W().string(1, "a").message(2, W().string(2, "b").string(2, "c"))),
                nested(W().string(1, "d").message(2, W().message(1, props({23: [text("e")]})))),
                nested(W().string(1, "f").message(2, b"")),
            ]
        },
        id="dependencies",
    ),
    pytest.param(
        {"default": {"a": [1, 2.5, None, True]}, "example": "x", "enum": [{"k": "v"}, 3, None]},
        {
            8: raw_json(b'{"a":[1,2.5,null,true]}'),
            20: [raw_json(b'{"k":"v"}'), raw_json(b"3"), raw_json(None)],
            36: raw_json(b'"x"'),
        },
        id="json-values",
    ),
    pytest.param(
        {
            "id": "urn:x",
            "$schema": "http://json-schema.org/draft-04/schema#",
            "$ref": "#/definitions/a",
        },
        {
            1: text("urn:x"),
            2: text("http://json-schema.org/draft-04/schema#"),
            3: text("#/definitions/a"),
        },
        id="dollar-names",
    ),
    pytest.param(
        {
            "patternProperties": {"^x-": {"type": "string"}},
            "definitions": {"a": {"type": "integer"}},
        },
        {
            31: entries({"^x-": props({5: text("string")})}),
            34: entries({"a": props({5: text("integer")})}),
        },
        id="schema-maps",
    ),
    pytest.param(
        {"minimum": -3, "exclusiveMinimum": True, "maximum": 1e21, "exclusiveMaximum": True},
        {9: double(1e21), 10: flag(True), 11: double(-3.0), 12: flag(True)},
        id="doubles",
    ),
    pytest.param(
        {"minItems": 0, "maxProperties": 5, "minProperties": 0, "uniqueItems": True},
        {17: number(0), 18: flag(True), 21: number(5), 22: number(0)},
        id="zero-pointers",
    ),
]


@pytest.mark.parametrize(("schema", "fields"), SCHEMA_FORMS)
def test_schema_forms_both_ways(schema: Object, fields: dict[int, Write | list[Write]]) -> None:
    wire = props(fields)
    assert protobuf.decode(body_with_schema(wire)) == crd_with_schema(schema)
    assert encoded_schema(crd_with_schema(schema)) == wire.getvalue()


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        # An OrArray or OrBool holding nothing is null in upstream's JSON, gone once stored.
        ({24: nested(b"")}, {}),
        ({24: nested(W().message(1, props({})))}, {"items": {}}),
        # A schema wins over ``allows``, whatever ``allows`` says.
        (
            {30: or_bool(False, props({5: text("string")}))},
            {"additionalProperties": {"type": "string"}},
        ),
        # A string array wins over a schema.
        (
            {32: [nested(W().string(1, "a").message(2, W().message(1, props({})).string(2, "b")))]},
            {"dependencies": {"a": ["b"]}},
        ),
        # An empty JSON is null, which a pointer leaves out.
        ({8: raw_json(None), 36: raw_json(b"")}, {}),
        # A double without a fraction is a JSON integer, as Go writes it.
        (
            {9: double(-0.5), 11: double(2.0), 19: double(1e-7)},
            {"maximum": -0.5, "minimum": 2, "multipleOf": 1e-7},
        ),
    ],
)
def test_decoding_follows_marshal_go(
    fields: dict[int, Write | list[Write]], expected: Object
) -> None:
    assert protobuf.decode(body_with_schema(props(fields))) == crd_with_schema(expected)


def test_whole_doubles_are_json_integers() -> None:
    """Go writes a float64 without a fraction (below 1e21) as an integer; so must kapi's JSON."""
    decoded = protobuf.decode(body_with_schema(props({9: double(100.0), 11: double(-0.5)})))
    schema = decoded["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert orjson.dumps(schema) == b'{"maximum":100,"minimum":-0.5}'


def test_additional_properties_must_be_a_bool_or_a_schema() -> None:
    with pytest.raises(ValueError, match="boolean or JSON schema expected"):
        protobuf.encode(crd_with_schema({"additionalProperties": "yes"}))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({9: double(float("nan"))}, "json: unsupported value: NaN"),
        ({11: double(float("-inf"))}, "json: unsupported value: -Inf"),
        ({9: number(3)}, "proto: wrong wireType = 0 for field Maximum"),
        ({8: raw_json(b"{nope")}, "JSON.Raw is not JSON"),
    ],
)
def test_undecodable_schemas(fields: dict[int, Write | list[Write]], message: str) -> None:
    with pytest.raises(ProtobufDecodeError) as caught:
        protobuf.decode(body_with_schema(props(fields)))
    assert str(caught.value) == message


# -- events.k8s.io/v1beta1 -----------------------------------------------------------------------

# Event (events/v1beta1 generated.proto): metadata 1, eventTime 2 (MicroTime), series 3
# (count 1, lastObservedTime 2), reportingController 4, reportingInstance 5, action 6, reason 7,
# regarding 8, related 9 (*), note 10, type 11, deprecatedSource 12 (component 1, host 2),
# deprecatedFirstTimestamp 13, deprecatedLastTimestamp 14, deprecatedCount 15.
# ObjectReference: kind 1, namespace 2, name 3, uid 4, apiVersion 5, resourceVersion 6, fieldPath 7.
BETA_EVENT = (
    W()
    .message(1, W().string(1, "e").string(3, "ns"))
    .message(2, W().varint(1, TRANSITION).varint(2, 123456000))
    .message(3, W().varint(1, 4).message(2, W().varint(1, TRANSITION + 60).varint(2, 0)))
    .string(4, "example.com/syncer")
    .string(5, "syncer-1")
    .string(6, "Sync")
    .string(7, "Synced")
    .message(
        8,
        W()
        .string(1, "ConfigMap")
        .string(2, "ns")
        .string(3, "cm")
        .string(4, "")
        .string(5, "v1")
        .string(6, "")
        .string(7, ""),
    )
    .string(10, "synced once")
    .string(11, "Normal")
    .message(12, W().string(1, "syncer").string(2, ""))
    .message(13, b"")
    .message(14, b"")
    .varint(15, 3)
)
BETA_EVENT_JSON: Object = {
    "apiVersion": "events.k8s.io/v1beta1",
    "kind": "Event",
    "metadata": {"name": "e", "namespace": "ns"},
    "eventTime": "2024-05-06T07:08:09.123456Z",
    "series": {"count": 4, "lastObservedTime": "2024-05-06T07:09:09.000000Z"},
    "reportingController": "example.com/syncer",
    "reportingInstance": "syncer-1",
    "action": "Sync",
    "reason": "Synced",
    "regarding": {"kind": "ConfigMap", "namespace": "ns", "name": "cm", "apiVersion": "v1"},
    "note": "synced once",
    "type": "Normal",
    "deprecatedSource": {"component": "syncer"},
    "deprecatedCount": 3,
}


def test_v1beta1_event_from_upstream_bytes() -> None:
    assert protobuf.supports("events.k8s.io/v1beta1", "Event")
    assert protobuf.supports("events.k8s.io/v1beta1", "EventList")
    assert (
        protobuf.decode(envelope("events.k8s.io/v1beta1", "Event", BETA_EVENT)) == BETA_EVENT_JSON
    )


def test_v1beta1_event_has_v1s_wire_form() -> None:
    """Same fields, same numbers: only the envelope's apiVersion tells the versions apart."""
    beta = protobuf.encode(BETA_EVENT_JSON)
    v1 = protobuf.encode({**BETA_EVENT_JSON, "apiVersion": "events.k8s.io/v1"})
    assert raw_object(beta) == raw_object(v1)
    # Everything after the metadata (field 1) is as upstream writes it.
    after_metadata = BETA_EVENT.getvalue()[
        len(W().message(1, W().string(1, "e").string(3, "ns")).getvalue()) :
    ]
    assert raw_object(beta).endswith(after_metadata)
    assert protobuf.decode(beta) == BETA_EVENT_JSON


def test_v1beta1_event_list() -> None:
    item = {k: v for k, v in BETA_EVENT_JSON.items() if k not in ("apiVersion", "kind")}
    listed = {
        "apiVersion": "events.k8s.io/v1beta1",
        "kind": "EventList",
        "metadata": {"resourceVersion": "7"},
        "items": [item, item],
    }
    assert protobuf.decode(protobuf.encode(listed)) == listed
