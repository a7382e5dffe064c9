"""The protobuf form of a Swagger 2.0 document: gnostic's ``openapi.v2.Document``.

kube-openapi serves ``/openapi/v2`` as protobuf by parsing its JSON with
gnostic (google/gnostic-models ``openapiv2/OpenAPIv2.proto``) and marshalling
the result, which is what kubectl 1.27 and 1.28 download.  This module does
the same walk over kapi's JSON document: every object becomes the message
gnostic's compiler makes of it, with the field numbers of ``OpenAPIv2.proto``,
written in field-number order with proto3's rule of leaving out zero
scalars.  Free-form values (vendor extensions, defaults, enums, examples)
become an ``Any`` holding the value as YAML, emitted as gnostic's
``compiler.Marshal`` (yaml.v3 with styles cleared) writes it.

Keys a Swagger 2.0 object may not have are an error, as they are for
gnostic: a document kapi cannot encode would not parse upstream either.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from kapi.apimachinery.unstructured import Object
from kapi.runtime.protowire import MessageWriter

Encoder = Callable[[MessageWriter, int, Any], None]


class SwaggerEncodeError(ValueError):
    """A document that is not Swagger 2.0 as gnostic reads it."""


# --- scalar fields ------------------------------------------------------------------------


def _string(w: MessageWriter, number: int, value: Any) -> None:
    if not isinstance(value, str):
        raise SwaggerEncodeError(f"expected a string, got {value!r}")
    if value:
        w.string(number, value)


def _bool(w: MessageWriter, number: int, value: Any) -> None:
    if not isinstance(value, bool):
        raise SwaggerEncodeError(f"expected a boolean, got {value!r}")
    if value:
        w.boolean(number, True)


def _int64(w: MessageWriter, number: int, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SwaggerEncodeError(f"expected an integer, got {value!r}")
    if value:
        w.varint(number, value)


def _double(w: MessageWriter, number: int, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SwaggerEncodeError(f"expected a number, got {value!r}")
    if value:
        w.fixed64(number, struct.unpack("<Q", struct.pack("<d", float(value)))[0])


def _strings(w: MessageWriter, number: int, value: Any) -> None:
    if not isinstance(value, list):
        raise SwaggerEncodeError(f"expected a list of strings, got {value!r}")
    for item in value:
        if not isinstance(item, str):
            raise SwaggerEncodeError(f"expected a string, got {item!r}")
        w.string(number, item)


def _any(w: MessageWriter, number: int, value: Any) -> None:
    w.message(number, MessageWriter().string(2, to_yaml(value)))


def _anys(w: MessageWriter, number: int, value: Any) -> None:
    for item in _list(value):
        _any(w, number, item)


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise SwaggerEncodeError(f"expected a list, got {value!r}")
    return value


def _object(value: Any) -> Object:
    if not isinstance(value, dict):
        raise SwaggerEncodeError(f"expected an object, got {value!r}")
    return value


# --- messages -------------------------------------------------------------------------------


def _message(
    fields: Mapping[str, tuple[int, Encoder]], extensions: int | None
) -> Callable[[Any], MessageWriter]:
    """An encoder for a message whose JSON keys map one to one onto fields.

    ``extensions`` is the number of the message's ``vendor_extension`` field
    (``x-`` keys), ``None`` for messages that take none.
    """
    ordered = sorted(fields.items(), key=lambda item: item[1][0])

    def encode(value: Any) -> MessageWriter:
        obj = _object(value)
        for key in obj:
            if key not in fields and not (extensions is not None and key.startswith("x-")):
                raise SwaggerEncodeError(f"invalid property {key!r}")
        w = MessageWriter()
        for key, (number, encoder) in ordered:
            if key in obj:
                encoder(w, number, obj[key])
        if extensions is not None:
            _extensions(w, extensions, obj)
        return w

    return encode


def _extensions(w: MessageWriter, number: int, obj: Object) -> None:
    for key, value in obj.items():
        if key.startswith("x-"):
            named = MessageWriter().string(1, key)
            _any(named, 2, value)
            w.message(number, named)


def _sub(encode: Callable[[Any], MessageWriter]) -> Encoder:
    """A field holding one message."""

    def field(w: MessageWriter, number: int, value: Any) -> None:
        w.message(number, encode(value))

    return field


def _repeated(encode: Callable[[Any], MessageWriter]) -> Encoder:
    def field(w: MessageWriter, number: int, value: Any) -> None:
        for item in _list(value):
            w.message(number, encode(item))

    return field


def _named_map(encode: Callable[[Any], MessageWriter]) -> Callable[[Any], MessageWriter]:
    """A JSON object as gnostic's ``additional_properties``: ``Named<X>`` entries in key order."""

    def message(value: Any) -> MessageWriter:
        w = MessageWriter()
        for name, item in _object(value).items():
            w.message(1, MessageWriter().string(1, name).message(2, encode(item)))
        return w

    return message


def _external_docs(value: Any) -> MessageWriter:
    return _message({"description": (1, _string), "url": (2, _string)}, 3)(value)


def _xml(value: Any) -> MessageWriter:
    fields = {
        "name": (1, _string),
        "namespace": (2, _string),
        "prefix": (3, _string),
        "attribute": (4, _bool),
        "wrapped": (5, _bool),
    }
    return _message(fields, 6)(value)


def _schema(value: Any) -> MessageWriter:
    return _SCHEMA(value)


def _type_item(w: MessageWriter, number: int, value: Any) -> None:
    w.message(number, _strings_message(value if isinstance(value, list) else [value]))


def _strings_message(values: list[Any]) -> MessageWriter:
    w = MessageWriter()
    _strings(w, 1, values)
    return w


def _items_item(w: MessageWriter, number: int, value: Any) -> None:
    """gnostic's ``ItemsItem`` holds a list of schemas but reads only a single one."""
    w.message(number, MessageWriter().message(1, _schema(value)))


def _additional_properties(w: MessageWriter, number: int, value: Any) -> None:
    if isinstance(value, bool):
        w.message(number, MessageWriter().boolean(2, value))
    else:
        w.message(number, MessageWriter().message(1, _schema(value)))


_SCHEMA = _message(
    {
        "$ref": (1, _string),
        "format": (2, _string),
        "title": (3, _string),
        "description": (4, _string),
        "default": (5, _any),
        "multipleOf": (6, _double),
        "maximum": (7, _double),
        "exclusiveMaximum": (8, _bool),
        "minimum": (9, _double),
        "exclusiveMinimum": (10, _bool),
        "maxLength": (11, _int64),
        "minLength": (12, _int64),
        "pattern": (13, _string),
        "maxItems": (14, _int64),
        "minItems": (15, _int64),
        "uniqueItems": (16, _bool),
        "maxProperties": (17, _int64),
        "minProperties": (18, _int64),
        "required": (19, _strings),
        "enum": (20, _anys),
        "additionalProperties": (21, _additional_properties),
        "type": (22, _type_item),
        "items": (23, _items_item),
        "allOf": (24, _repeated(_schema)),
        "properties": (25, _sub(_named_map(_schema))),
        "discriminator": (26, _string),
        "readOnly": (27, _bool),
        "xml": (28, _sub(_xml)),
        "externalDocs": (29, _sub(_external_docs)),
        "example": (30, _any),
    },
    31,
)


def _primitives_items(value: Any) -> MessageWriter:
    return _PRIMITIVES_ITEMS(value)


def _validations(first: int) -> dict[str, tuple[int, Encoder]]:
    """The run of validation fields parameters and items share, numbered from ``first``."""
    names: list[tuple[str, Encoder]] = [
        ("maximum", _double),
        ("exclusiveMaximum", _bool),
        ("minimum", _double),
        ("exclusiveMinimum", _bool),
        ("maxLength", _int64),
        ("minLength", _int64),
        ("pattern", _string),
        ("maxItems", _int64),
        ("minItems", _int64),
        ("uniqueItems", _bool),
        ("enum", _anys),
        ("multipleOf", _double),
    ]
    return {name: (first + i, encoder) for i, (name, encoder) in enumerate(names)}


_PRIMITIVES_ITEMS = _message(
    {
        "type": (1, _string),
        "format": (2, _string),
        "items": (3, _sub(_primitives_items)),
        "collectionFormat": (4, _string),
        "default": (5, _any),
        **_validations(6),
    },
    18,
)


def _non_body_parameter(value: Any) -> tuple[int, MessageWriter]:
    """The ``NonBodyParameter`` oneof case gnostic picks by ``in``."""
    location = _object(value).get("in")
    common = {"required": (1, _bool), "in": (2, _string), "description": (3, _string)}
    if location in ("query", "formData"):
        fields = {
            **common,
            "name": (4, _string),
            "allowEmptyValue": (5, _bool),
            "type": (6, _string),
            "format": (7, _string),
            "items": (8, _sub(_primitives_items)),
            "collectionFormat": (9, _string),
            "default": (10, _any),
            **_validations(11),
        }
        case, extensions = (3 if location == "query" else 2), 23
    elif location in ("path", "header"):
        fields = {
            **common,
            "name": (4, _string),
            "type": (5, _string),
            "format": (6, _string),
            "items": (7, _sub(_primitives_items)),
            "collectionFormat": (8, _string),
            "default": (9, _any),
            **_validations(10),
        }
        case, extensions = (4 if location == "path" else 1), 22
    else:
        raise SwaggerEncodeError(f"invalid parameter location {location!r}")
    return case, _message(fields, extensions)(value)


_BODY_PARAMETER = _message(
    {
        "description": (1, _string),
        "name": (2, _string),
        "in": (3, _string),
        "required": (4, _bool),
        "schema": (5, _sub(_schema)),
    },
    6,
)


def _parameter(value: Any) -> MessageWriter:
    if _object(value).get("in") == "body":
        return MessageWriter().message(1, _BODY_PARAMETER(value))
    case, sub = _non_body_parameter(value)
    return MessageWriter().message(2, MessageWriter().message(case, sub))


_JSON_REFERENCE = _message({"$ref": (1, _string), "description": (2, _string)}, None)


def _parameters_item(value: Any) -> MessageWriter:
    if "$ref" in _object(value):
        return MessageWriter().message(2, _JSON_REFERENCE(value))
    return MessageWriter().message(1, _parameter(value))


def _schema_item(w: MessageWriter, number: int, value: Any) -> None:
    # gnostic takes any object for a Schema; a FileSchema is only what a Schema cannot be.
    w.message(number, MessageWriter().message(1, _schema(value)))


_RESPONSE = _message({"description": (1, _string), "schema": (2, _schema_item)}, 5)


def _responses(value: Any) -> MessageWriter:
    w = MessageWriter()
    obj = _object(value)
    for code, response in obj.items():
        if code.startswith("x-"):
            continue
        if not re.fullmatch(r"[0-9]{3}|default", code):
            raise SwaggerEncodeError(f"invalid response code {code!r}")
        if "$ref" in _object(response):
            response_value = MessageWriter().message(2, _JSON_REFERENCE(response))
        else:
            response_value = MessageWriter().message(1, _RESPONSE(response))
        w.message(1, MessageWriter().string(1, code).message(2, response_value))
    _extensions(w, 2, obj)
    return w


_OPERATION = _message(
    {
        "tags": (1, _strings),
        "summary": (2, _string),
        "description": (3, _string),
        "externalDocs": (4, _sub(_external_docs)),
        "operationId": (5, _string),
        "produces": (6, _strings),
        "consumes": (7, _strings),
        "parameters": (8, _repeated(_parameters_item)),
        "responses": (9, _sub(_responses)),
        "schemes": (10, _strings),
        "deprecated": (11, _bool),
    },
    13,
)

_PATH_ITEM = _message(
    {
        "$ref": (1, _string),
        "get": (2, _sub(_OPERATION)),
        "put": (3, _sub(_OPERATION)),
        "post": (4, _sub(_OPERATION)),
        "delete": (5, _sub(_OPERATION)),
        "options": (6, _sub(_OPERATION)),
        "head": (7, _sub(_OPERATION)),
        "patch": (8, _sub(_OPERATION)),
        "parameters": (9, _repeated(_parameters_item)),
    },
    10,
)


def _paths(value: Any) -> MessageWriter:
    w = MessageWriter()
    obj = _object(value)
    _extensions(w, 1, obj)
    for path, item in obj.items():
        if path.startswith("/"):
            w.message(2, MessageWriter().string(1, path).message(2, _PATH_ITEM(item)))
        elif not path.startswith("x-"):
            raise SwaggerEncodeError(f"invalid path {path!r}")
    return w


def _security_definitions_item(value: Any) -> MessageWriter:
    obj = _object(value)
    kind = obj.get("type")
    if kind == "apiKey":
        fields = {
            "type": (1, _string),
            "name": (2, _string),
            "in": (3, _string),
            "description": (4, _string),
        }
        return MessageWriter().message(2, _message(fields, 5)(obj))
    if kind == "basic":
        fields = {"type": (1, _string), "description": (2, _string)}
        return MessageWriter().message(1, _message(fields, 3)(obj))
    raise SwaggerEncodeError(f"unsupported security definition type {kind!r}")


def _security_requirement(value: Any) -> MessageWriter:
    w = MessageWriter()
    for name, scopes in _object(value).items():
        w.message(1, MessageWriter().string(1, name).message(2, _strings_message(scopes)))
    return w


_INFO = _message(
    {
        "title": (1, _string),
        "version": (2, _string),
        "description": (3, _string),
        "termsOfService": (4, _string),
        "contact": (
            5,
            _sub(_message({"name": (1, _string), "url": (2, _string), "email": (3, _string)}, 4)),
        ),
        "license": (6, _sub(_message({"name": (1, _string), "url": (2, _string)}, 3))),
    },
    7,
)

_TAG = _message(
    {"name": (1, _string), "description": (2, _string), "externalDocs": (3, _sub(_external_docs))},
    4,
)

_DOCUMENT = _message(
    {
        "swagger": (1, _string),
        "info": (2, _sub(_INFO)),
        "host": (3, _string),
        "basePath": (4, _string),
        "schemes": (5, _strings),
        "consumes": (6, _strings),
        "produces": (7, _strings),
        "paths": (8, _sub(_paths)),
        "definitions": (9, _sub(_named_map(_schema))),
        "parameters": (10, _sub(_named_map(_parameter))),
        "responses": (11, _sub(_named_map(_RESPONSE))),
        "security": (12, _repeated(_security_requirement)),
        "securityDefinitions": (13, _sub(_named_map(_security_definitions_item))),
        "tags": (14, _repeated(_TAG)),
        "externalDocs": (15, _sub(_external_docs)),
    },
    16,
)


def encode_document(document: Object) -> bytes:
    """``document`` (Swagger 2.0 JSON as a dict) as a serialized ``openapi.v2.Document``."""
    return _DOCUMENT(document).getvalue()


# --- YAML of free-form values -------------------------------------------------------------

_BEST_INDENT = 4
#: Plain scalars yaml.v3 resolves to null, bools, special floats or a merge key.
_NON_STRINGS = frozenset(
    {
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "",
        "~",
        "null",
        "Null",
        "NULL",
        ".nan",
        ".NaN",
        ".NAN",
        ".inf",
        ".Inf",
        ".INF",
        "+.inf",
        "+.Inf",
        "+.INF",
        "-.inf",
        "-.Inf",
        "-.INF",
        "<<",
    }
)
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|[0-9_]+)")
_TIMESTAMP = re.compile(r"\d{4}-\d{1,2}-\d{1,2}([Tt ].*)?")
_INDICATORS = set("#,[]{}&*!|>'\"%@`")


def to_yaml(value: Any) -> str:
    """``value`` as yaml.v3 marshals a JSON-parsed node after gnostic clears its styles.

    Block collections indented by 4 (a mapping inside a sequence item by the
    2 of ``- ``), empty collections as ``{}``/``[]``, and strings plain unless
    they would read back as another type (double-quoted) or hold characters
    a plain scalar cannot (quoted).
    """
    if isinstance(value, dict | list) and value:
        out: list[str] = []
        _block(value, -1, False, out)
        return "".join(out)
    return _scalar(value) + "\n"


def _block(value: Object | list[Any], indent: int, in_sequence: bool, out: list[str]) -> None:
    """Write a non-empty collection; ``in_sequence``: it starts on a ``- `` line."""
    if indent < 0:
        own = 0
    elif in_sequence:
        own = indent + 2
    else:
        own = _BEST_INDENT * ((indent + _BEST_INDENT) // _BEST_INDENT)
    entries = value.items() if isinstance(value, dict) else ((None, v) for v in value)
    for position, (key, item) in enumerate(entries):
        if not (in_sequence and position == 0):
            if out:
                out.append("\n")
            out.append(" " * own)
        out.append("-" if key is None else f"{_scalar(key)}:")
        if isinstance(item, dict | list) and item:
            if key is None:
                out.append(" ")
                _block(item, own, True, out)
            else:
                _block(item, own, False, out)
        else:
            out.append(" " + _scalar(item))
    if indent < 0:
        out.append("\n")


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return orjson.dumps(value).decode()
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    text = str(value)
    if _reads_as_other_type(text) or "\n" in text:
        return _double_quoted(text)
    if _plain_allowed(text):
        return text
    if text.isprintable():
        return "'" + text.replace("'", "''") + "'"
    return _double_quoted(text)


def _reads_as_other_type(text: str) -> bool:
    if text in _NON_STRINGS:
        return True
    first = text[0]
    if first.isdigit() or first in "+-":
        plain = text.replace("_", "")
        return bool(_TIMESTAMP.fullmatch(text) or _INT.fullmatch(text) or _FLOAT.fullmatch(plain))
    if first == ".":
        return bool(_FLOAT.fullmatch(text))
    return False


def _plain_allowed(text: str) -> bool:
    """libyaml's ``analyze_scalar`` verdict for a block-context plain scalar."""
    if text[0] in " \t" or text[-1] in " \t" or not text.isprintable():
        return False
    first, rest = text[0], text[1:]
    followed_by_space = len(text) == 1 or text[1] in " \t"
    if first in _INDICATORS:
        return False
    if first in "?:-" and followed_by_space:
        return False
    return ": " not in rest and not rest.endswith(":") and " #" not in text


def _double_quoted(text: str) -> str:
    return orjson.dumps(text).decode()
