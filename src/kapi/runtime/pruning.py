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
from kapi.runtime.protobuf_messages import (
    MESSAGES,
    OBJECT_META,
    Field,
    Label,
    ValueType,
    message_for,
)
from kapi.runtime.schema import STRING, List, Map, Scalar, Schema, Struct


class DecodeTypeError(ValueError):
    """A value of the wrong type; ``str()`` is the Go decoder's message."""


def prune(obj: dict[str, Any], struct: Struct) -> list[str]:
    """Drop fields ``struct`` does not declare; return their paths, in document order.

    Raises :class:`DecodeTypeError` on a value of the wrong type.
    """
    found = _Found()
    _walk_struct(obj, struct, [], found)
    message = message_for(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if message is not None:
        if found.nulls:
            _zero_nulls_in(obj, message.name)
        _quantities_in(obj, message.name)
    return found.unknown


class _Found:
    """What the walk met besides errors: unknown fields, and whether a null may be left.

    The walk drops null fields and looks at every item of every list and map it
    enters, so unless it met a null item (or skipped a free-form subtree) the
    object holds no null at all, and the second walk that turns null items into
    their zero values has nothing to do.
    """

    __slots__ = ("nulls", "unknown")

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.nulls = False


# -- where a value is ---------------------------------------------------------------------
#
# The walk keeps the way from the root as a stack of segments (a field's name, a list
# item's index, a map value's key as a 1-tuple) and spells paths and Go field names
# from it only when a field is unknown or a value is wrong: building both texts for
# every field of every request was most of the walk's cost.

_Trail = list[str | int | tuple[str]]


def _path_text(trail: _Trail) -> str:
    """The field path as unknown-field warnings name it: ``spec.ports[0].x``, ``data.k``."""
    out = ""
    for segment in trail:
        if type(segment) is int:
            out += f"[{segment}]"
        elif type(segment) is tuple:
            out += f".{segment[0]}"
        else:
            out += f".{segment}" if out else str(segment)
    return out


def _go_field(owner: Struct, trail: _Trail) -> str:
    """Go's name for the field: the innermost struct and the field names from the root
    (``LeaseSpec.spec.x``), without list indexes or map keys."""
    names = ".".join(segment for segment in trail if type(segment) is str)
    return f"{owner.type_name}.{names}"


def _mismatch(value: Any, schema: Schema, owner: Struct, trail: _Trail) -> DecodeTypeError:
    kind = go_json_kind(value)
    if type(value) is float and isinstance(schema, Scalar) and schema.type == "integer":
        kind = f"number {value!r}"  # Go quotes the literal it could not parse as an integer
    return DecodeTypeError(
        f"json: cannot unmarshal {kind} into Go struct field {_go_field(owner, trail)} "
        f"of type {_go_type(schema)}"
    )


def _go_type(schema: Schema) -> str:
    """A field's Go type as ``reflect`` prints it: structs with their package (``v1.Time``)."""
    if isinstance(schema, Struct):
        parts = schema.name.rsplit(".", 2)
        return f"{parts[-2]}.{parts[-1]}" if len(parts) == 3 else schema.type_name
    if isinstance(schema, List):
        return f"[]{_go_type(schema.items)}"
    if isinstance(schema, Map):
        return f"map[string]{_go_type(schema.values)}"
    return schema.type_name


# -- the walk -------------------------------------------------------------------------------


@cache
def _plain_strings(struct: Struct) -> frozenset[str]:
    """The fields of ``struct`` that are plain strings: a type check is all they need.

    Most leaves of a built-in object are, and checking them in the struct's own loop
    saves a call per leaf.
    """
    return frozenset(
        f.name
        for f in struct.fields
        if isinstance(f.schema, Scalar) and f.schema.type == "string" and f.schema.format != "byte"
    )


def _walk_struct(obj: dict[str, Any], struct: Struct, trail: _Trail, found: _Found) -> None:
    if struct.preserve_unknown_fields:
        found.nulls = True  # not looked at: may hold some
        return
    by_name = struct.by_name
    plain = _plain_strings(struct)
    drop: list[str] = []
    for key, value in obj.items():
        field = by_name.get(key)
        if field is None:
            trail.append(key)
            found.unknown.append(_path_text(trail))
            trail.pop()
            drop.append(key)
        elif value is None or (
            not value
            and isinstance(field.schema, Map | List)
            and isinstance(value, field.schema.json_type)
        ):
            # Go decodes null and empty maps/slices to nil, which ``omitempty`` drops.
            drop.append(key)
        elif key in plain:
            if not isinstance(value, str):
                raise _mismatch(value, field.schema, struct, [*trail, key])
        else:
            trail.append(key)
            canonical = _walk(value, field.schema, struct, trail, found)
            trail.pop()
            if canonical is not value:
                obj[key] = canonical
    for key in drop:
        del obj[key]


def _walk(value: Any, schema: Schema, owner: Struct, trail: _Trail, found: _Found) -> Any:
    """Check ``value`` against ``schema``; return it, or its canonical form where decoding
    rewrites it (wrapped base64).  ``owner`` is the struct whose field holds it."""
    json_type = schema.json_type
    if json_type is not None and (
        not isinstance(value, json_type) or (isinstance(value, bool) and bool not in json_type)
    ):
        raise _mismatch(value, schema, owner, trail)
    if isinstance(schema, Struct):
        _walk_struct(value, schema, trail, found)
    elif isinstance(schema, Map):
        values = schema.values
        if values == STRING:  # labels, annotations, data: a type check is all they need
            for item in value.values():
                if type(item) is not str:
                    if item is not None:
                        raise _mismatch(item, values, owner, trail)
                    found.nulls = True
            return value
        for key, item in value.items():
            if item is None:
                found.nulls = True
            else:
                trail.append((key,))
                canonical = _walk(item, values, owner, trail, found)
                trail.pop()
                if canonical is not item:
                    value[key] = canonical
    elif isinstance(schema, List):
        items = schema.items
        for i, item in enumerate(value):
            if item is None:
                found.nulls = True
            else:
                trail.append(i)
                canonical = _walk(item, items, owner, trail, found)
                trail.pop()
                if canonical is not item:
                    value[i] = canonical
    elif isinstance(schema, Scalar):
        if schema.format == "byte":
            return _canonical_base64(value)
        if (
            schema.type == "integer"
            and not -_INT_BOUNDS[schema.format] <= value < _INT_BOUNDS[schema.format]
        ):
            # Go's decoder refuses a number its field's int type cannot hold.
            raise DecodeTypeError(
                f"json: cannot unmarshal number {value} into Go struct field "
                f"{_go_field(owner, trail)} of type {schema.type_name}"
            )
    return value


#: Half the range of each integer format, as Go's int32 and int64 hold them.
_INT_BOUNDS = {"int32": 1 << 31, "int64": 1 << 63, None: 1 << 63}


def _canonical_base64(value: str) -> str:
    """Check a ``[]byte`` field's base64 and return the text the server answers with.

    Go's decoder skips CR and LF anywhere in the text (PEM-style wrapped lines
    are accepted) and the object is written back from the decoded bytes, so a
    wrapped value comes back as one unbroken line.
    """
    text = value.replace("\r", "").replace("\n", "") if "\n" in value or "\r" in value else value
    try:
        decoded = binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        raise DecodeTypeError(
            f"illegal base64 data at input byte {_bad_base64_offset(value)}"
        ) from None
    if text is value:
        return value
    return binascii.b2a_base64(decoded, newline=False).decode("ascii")


_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _bad_base64_offset(value: str) -> int:
    """The offset Go's base64 decoder reports: the first byte that breaks the encoding.

    Line breaks are skipped when grouping the text into 4-character quanta but
    still count in the offset, as Go reports a position in the input it was given.
    """
    positions = [i for i, ch in enumerate(value) if ch not in "\r\n"]
    text = "".join(value[i] for i in positions)
    offset = _bad_offset_unwrapped(text)
    return positions[offset] if offset < len(positions) else len(value)


def _bad_offset_unwrapped(value: str) -> int:
    for i, ch in enumerate(value):
        if ch == "=":
            return i if (i % 4) < 2 else min(i, len(value) - 1)
        if ch not in _ALPHABET:
            return i
    return len(value) - len(value) % 4 if len(value) % 4 else len(value)


# -- nulls in lists and maps ------------------------------------------------------------------
#
# Go decodes a JSON ``null`` that stands for a slice item or a map value into the
# zero value of the item's type: ``""`` for a string, ``0`` for a number, an empty
# struct for a struct.  (A ``null`` for a whole field is a nil pointer, slice or
# map, which ``omitempty`` leaves out: pruning drops those.)  The kind's protobuf
# tables type every field, also where its schema is free-form (the pod template),
# so they say what each null stands for.

_ZERO_VALUES: dict[ValueType, Any] = {
    ValueType.STRING: "",
    ValueType.INT32: 0,
    ValueType.INT64: 0,
    ValueType.BOOL: False,
    ValueType.BYTES: "",
    ValueType.INT_OR_STRING: 0,
    ValueType.DOUBLE: 0,
    # A zero quantity is canonicalized to "0" later; time, raw JSON and fields sets keep
    # their null, which is how Go writes their zero value back.
}


#: How one field of a message is walked: its JSON name, its label, the message its values
#: are (``None`` for a scalar) and the zero value a null item becomes (``None``: stays).
_NullStep = tuple[str, Label, str | None, Any, bool]


@cache
def _null_steps(message: str) -> tuple[_NullStep, ...]:
    """The fields of ``message`` where a null may stand for an item, at any depth."""
    steps: list[_NullStep] = []
    for f in MESSAGES[message].fields:
        if isinstance(f.type, str):
            nested = MESSAGES[f.type]
            if f.label is Label.SINGLE and not _may_hold_items(f.type):
                continue
            zero: Any = {} if nested.custom_json is None else None
            steps.append((f.name, f.label, f.type, zero, f.inline))
        elif f.label is not Label.SINGLE:
            steps.append((f.name, f.label, None, _ZERO_VALUES.get(f.type), False))
    return tuple(steps)


@cache
def _may_hold_items(message: str) -> bool:
    """Whether a list or a map is reachable from ``message`` (a walk: schemas nest)."""
    seen, pending = {message}, [message]
    while pending:
        for f in MESSAGES[pending.pop()].fields:
            if f.label is not Label.SINGLE:
                return True
            if isinstance(f.type, str) and f.type not in seen:
                seen.add(f.type)
                pending.append(f.type)
    return False


def _zero_nulls_in(obj: dict[str, Any], message: str) -> None:
    """Replace each null item of a list or value of a map in ``obj`` by its zero value."""
    for name, label, nested, zero, is_inline in _null_steps(message):
        if is_inline:
            assert nested is not None
            _zero_nulls_in(obj, nested)
            continue
        value = obj.get(name)
        if value is None:
            continue
        if label is Label.REPEATED:
            if type(value) is not list:
                continue
            if zero is not None and None in value:
                value[:] = [_copy_zero(zero) if item is None else item for item in value]
            items: Iterable[Any] = value
        elif label is Label.MAP:
            if type(value) is not dict:
                continue
            if zero is not None:
                for key, item in value.items():
                    if item is None:
                        value[key] = _copy_zero(zero)
            items = value.values()
        else:
            items = (value,)
        if nested is not None and MESSAGES[nested].custom_json is None:
            for item in items:
                if type(item) is dict:
                    _zero_nulls_in(item, nested)


def zero_metadata_nulls(metadata: dict[str, Any]) -> None:
    """The null items of an ObjectMeta's lists and maps as their zero values.

    For a custom resource's metadata, which upstream reads into the Go ObjectMeta
    and writes back (``objectmeta.Coerce``), as decoding a built-in kind does.
    """
    _zero_nulls_in(metadata, OBJECT_META)


def _copy_zero(zero: Any) -> Any:
    return {} if type(zero) is dict else zero


# -- quantities ------------------------------------------------------------------------------


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
