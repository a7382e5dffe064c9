"""Unknown-field pruning and type checking against a kind's declared schema.

This is what decoding into upstream's Go structs does implicitly: fields the
type does not declare are dropped (and reported, for ``fieldValidation``),
a value of the wrong JSON type fails the request with Go's
``json: cannot unmarshal ...`` text, and every ``resource.Quantity`` is parsed
and written back in its canonical form.
"""

from __future__ import annotations

import binascii
from collections.abc import Iterable
from functools import cache
from typing import Any

from kapi.apimachinery.gotext import go_json_kind
from kapi.apimachinery.quantity import QuantityError, unmarshal_json
from kapi.runtime import protobuf_batch  # noqa: F401 -- registers CronJob and its pod template
from kapi.runtime.protobuf_messages import MESSAGES, Field, Label, ValueType, message_for
from kapi.runtime.schema import STRING, List, Map, Scalar, Schema, Struct


class DecodeTypeError(ValueError):
    """A value of the wrong type; ``str()`` is the Go decoder's message."""


def prune(obj: dict[str, Any], struct: Struct) -> list[str]:
    """Drop fields ``struct`` does not declare; return their paths, in document order.

    Raises :class:`DecodeTypeError` on a value of the wrong type.
    """
    unknown: list[str] = []
    _walk_struct(obj, struct, "", struct.type_name, unknown)
    _canonicalize_quantities(obj)
    return unknown


def _mismatch(value: Any, schema: Schema, go_field: str) -> DecodeTypeError:
    return DecodeTypeError(
        f"json: cannot unmarshal {go_json_kind(value)} into Go struct field {go_field} "
        f"of type {schema.type_name}"
    )


def _walk_struct(
    obj: dict[str, Any], struct: Struct, path: str, go_field: str, unknown: list[str]
) -> None:
    if struct.preserve_unknown_fields:
        return
    by_name = struct.by_name
    drop: list[str] = []
    for key, value in obj.items():
        field = by_name.get(key)
        if field is None:
            unknown.append(f"{path}.{key}" if path else key)
            drop.append(key)
        elif value is None or (
            not value
            and isinstance(field.schema, Map | List)
            and isinstance(value, field.schema.json_type)
        ):
            # Go decodes null and empty maps/slices to nil, which ``omitempty`` drops.
            drop.append(key)
        else:
            child = f"{path}.{key}" if path else key
            _walk(value, field.schema, child, f"{go_field}.{key}", unknown)
    for key in drop:
        del obj[key]


def _walk(value: Any, schema: Schema, path: str, go_field: str, unknown: list[str]) -> None:
    json_type = schema.json_type
    if json_type is not None and (
        not isinstance(value, json_type) or (isinstance(value, bool) and bool not in json_type)
    ):
        raise _mismatch(value, schema, go_field)
    if isinstance(schema, Struct):
        _walk_struct(value, schema, path, go_field, unknown)
    elif isinstance(schema, Map):
        values = schema.values
        if values == STRING:  # labels, annotations, data: a type check is all they need
            for item in value.values():
                if item is not None and type(item) is not str:
                    raise _mismatch(item, values, go_field)
            return
        for key, item in value.items():
            if item is not None:
                _walk(item, values, f"{path}.{key}", go_field, unknown)
    elif isinstance(schema, List):
        for i, item in enumerate(value):
            if item is not None:
                _walk(item, schema.items, f"{path}[{i}]", go_field, unknown)
    elif isinstance(schema, Scalar) and schema.format == "byte":
        _check_base64(value)


def _check_base64(value: str) -> None:
    try:
        binascii.a2b_base64(value.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        raise DecodeTypeError(
            f"illegal base64 data at input byte {_bad_base64_offset(value)}"
        ) from None


def _bad_base64_offset(value: str) -> int:
    """The offset Go's base64 decoder reports: the first byte that breaks the encoding."""
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    for i, ch in enumerate(value):
        if ch == "=":
            return i if (i % 4) < 2 else min(i, len(value) - 1)
        if ch not in alphabet:
            return i
    return len(value) - len(value) % 4 if len(value) % 4 else len(value)


# -- quantities ------------------------------------------------------------------------------


def _canonicalize_quantities(obj: dict[str, Any]) -> None:
    """Write each ``resource.Quantity`` of a built-in object as ``Quantity.String()`` does.

    Upstream decodes a quantity into Go's ``resource.Quantity`` (a failure fails
    the whole decoding, with the parser's error) and encodes it back canonical.
    The kind's protobuf tables say where its quantities are: they type every
    field, where the kind's schema may leave a part free-form (the pod template).
    """
    message = message_for(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if message is not None:
        _quantities_in(obj, message.name)


@cache
def _fields_to_quantities(message: str) -> tuple[Field, ...]:
    """The fields of ``message`` that are quantities or hold some, at any depth."""
    return tuple(
        f
        for f in MESSAGES[message].fields
        if f.type is ValueType.QUANTITY or (isinstance(f.type, str) and _holds_quantities(f.type))
    )


@cache
def _holds_quantities(message: str) -> bool:
    """Whether a quantity is reachable from ``message``; a walk, as the CRD schema nests itself."""
    seen, pending = {message}, [message]
    while pending:
        for f in MESSAGES[pending.pop()].fields:
            if f.type is ValueType.QUANTITY:
                return True
            if isinstance(f.type, str) and f.type not in seen:
                seen.add(f.type)
                pending.append(f.type)
    return False


def _quantities_in(obj: dict[str, Any], message: str) -> None:
    for f in _fields_to_quantities(message):
        if f.inline:
            _quantities_in(obj, str(f.type))
        elif f.name not in obj:
            continue
        elif f.type is ValueType.QUANTITY:
            _canonicalize_field(obj, f)
        else:
            for item in _values(obj[f.name], f.label):
                if isinstance(item, dict):
                    _quantities_in(item, str(f.type))


def _values(value: Any, label: Label) -> Iterable[Any]:
    """The values of a field in JSON: itself, a list's items or a map's values."""
    if label is Label.SINGLE:
        return (value,)
    if label is Label.MAP:
        return value.values() if isinstance(value, dict) else ()
    return value if isinstance(value, list) else ()


def _canonicalize_field(obj: dict[str, Any], f: Field) -> None:
    value = obj[f.name]
    if f.label is Label.MAP:
        if isinstance(value, dict):
            for key, item in value.items():
                value[key] = _canonical_quantity(item)
    elif value is None and f.optional:
        del obj[f.name]  # a nil *Quantity, which omitempty leaves out
    else:
        obj[f.name] = _canonical_quantity(value)


def _canonical_quantity(value: Any) -> str:
    """The quantity's canonical text; ``null`` is the zero quantity, ``"0"``."""
    try:
        return str(unmarshal_json(value))
    except QuantityError as exc:
        raise DecodeTypeError(str(exc)) from None
