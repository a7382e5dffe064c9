"""``application/vnd.kubernetes.protobuf`` bodies of built-in kinds, to and from objects.

A body is the magic ``k8s\\x00`` followed by a ``runtime.Unknown`` message:
``typeMeta`` (``apiVersion`` 1, ``kind`` 2) as field 1, the object's own
message as ``raw`` (2), and ``contentEncoding`` (3) and ``contentType`` (4),
which are always empty.  The object's message is read and written by the
tables of :mod:`kapi.runtime.protobuf_messages` into and from the same
JSON-shaped dict a JSON body gives, so everything after decoding (pruning,
defaulting, validation, storage) is shared with JSON.

Encoding follows upstream's generated marshallers byte for byte: fields in
number order, a non-pointer field written even when zero (a nested struct as
its own zero message), a pointer field only when set, map entries sorted by
key.  Decoding skips field numbers it does not know, as they do, and reads
repeated numbers both unpacked (as upstream writes them) and packed.

A message whose Go type marshals itself to JSON (the CRD schema's
``JSONSchemaPropsOr*``) carries a :class:`~kapi.runtime.protobuf_messages.CustomJSON`:
its fields are decoded by its table, then turned into its JSON value, and a
JSON value is turned into its fields before they are encoded.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from collections.abc import Generator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from kapi.apimachinery.quantity import QuantityError, parse_quantity
from kapi.apimachinery.unstructured import Object
from kapi.runtime import (
    protobuf_apiextensions,  # noqa: F401 -- registers CustomResourceDefinition
)
from kapi.runtime.cooperative import CHUNK
from kapi.runtime.protobuf_messages import MESSAGES, Field, Label, Message, ValueType, message_for
from kapi.runtime.protowire import (
    FIXED64,
    LENGTH_DELIMITED,
    VARINT,
    MessageWriter,
    ProtobufDecodeError,
    decode_varint,
    iter_fields,
    to_signed,
)

PREFIX = b"k8s\x00"
#: Go's ``%v`` of the prefix, as upstream's error message prints it.
_PREFIX_TEXT = "[" + " ".join(str(b) for b in PREFIX) + "]"
#: ``time.Time{}`` (January 1, year 1, UTC) in Unix seconds: Go's zero time, ``null`` in JSON.
_GO_ZERO_TIME = -62135596800
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_VARINT_TYPES = frozenset({ValueType.INT32, ValueType.INT64, ValueType.BOOL})
#: Value types that are Go structs with a JSON form of their own.
_STRUCT_TYPES = frozenset({ValueType.INT_OR_STRING, ValueType.FIELDS_V1, ValueType.QUANTITY})
#: Messages whose one field (``raw``, 1) is JSON text, which stands for its value in the object.
_RAW_JSON_TYPES = frozenset({ValueType.FIELDS_V1, ValueType.JSON})


class ObjectDecodeError(ProtobufDecodeError):
    """The envelope named a kind, but the object inside it is not a well-formed one.

    Upstream words this as ``<kind> in version "<version>" cannot be handled as
    ...``, where it words an envelope error as an unrecognized object.
    """

    def __init__(self, message: str, api_version: str, kind: str) -> None:
        super().__init__(message)
        self.api_version = api_version
        self.kind = kind


def supports(api_version: str, kind: str) -> bool:
    """Whether kapi reads and writes ``kind`` in protobuf."""
    return message_for(api_version, kind) is not None


# -- decoding --------------------------------------------------------------------------------


def decode(body: bytes, default: tuple[str, str] | None = None) -> Object:
    """The object in a protobuf body, ``apiVersion`` and ``kind`` first.

    ``default`` is the ``(apiVersion, kind)`` an envelope without them means
    (the request's).  A kind kapi has no table for comes back as its
    ``apiVersion`` and ``kind`` alone, for the caller to refuse as upstream's
    scheme does.  Raises :class:`ProtobufDecodeError` in upstream's words.
    """
    if not body:
        raise ProtobufDecodeError("empty data")
    if not body.startswith(PREFIX):
        raise ProtobufDecodeError(
            "provided data does not appear to be a protobuf message, expected prefix "
            + _PREFIX_TEXT
        )
    if len(body) == len(PREFIX):
        raise ProtobufDecodeError("empty body")
    api_version, kind, raw = _unwrap(body[len(PREFIX) :])
    if default is not None:
        api_version, kind = api_version or default[0], kind or default[1]
    if not kind:
        raise ProtobufDecodeError(
            f"Object 'Kind' is missing in 'runtime.TypeMeta{{APIVersion:\"{api_version}\", "
            f'Kind:""}}\''
        )
    obj: Object = {"apiVersion": api_version, "kind": kind}
    message = message_for(api_version, kind)
    if message is not None:
        try:
            obj.update(_decode_message(message, raw))
        except ProtobufDecodeError as exc:
            raise ObjectDecodeError(_gogo_wording(exc), api_version, kind) from None
    return obj


def _unwrap(data: bytes) -> tuple[str, str, bytes]:
    """``apiVersion``, ``kind`` and ``raw`` of a ``runtime.Unknown``."""
    api_version = kind = ""
    raw = b""
    try:
        for number, wire_type, value in iter_fields(data):
            if number in (1, 2) and wire_type != LENGTH_DELIMITED:
                name = "TypeMeta" if number == 1 else "Raw"
                raise ProtobufDecodeError(f"proto: wrong wireType = {wire_type} for field {name}")
            if number == 1:
                assert isinstance(value, bytes)
                for inner, inner_wire, text in iter_fields(value):
                    if inner in (1, 2) and inner_wire != LENGTH_DELIMITED:
                        name = "APIVersion" if inner == 1 else "Kind"
                        raise ProtobufDecodeError(
                            f"proto: wrong wireType = {inner_wire} for field {name}"
                        )
                    if inner == 1:
                        api_version = _text(text)
                    elif inner == 2:
                        kind = _text(text)
            elif number == 2:
                assert isinstance(value, bytes)
                raw = value
    except ProtobufDecodeError as exc:
        raise ProtobufDecodeError(_gogo_wording(exc)) from None
    return api_version, kind, raw


def _gogo_wording(exc: ProtobufDecodeError) -> str:
    """The wire primitives' error as upstream's generated unmarshallers word it."""
    text = str(exc)
    return "proto: integer overflow" if text == "integer overflow" else text


def _decode_message(message: Message, data: bytes) -> Object:
    out: Object = {}
    for number, wire_type, value in iter_fields(data):
        f = message.by_number.get(number)
        if f is None:
            continue  # a field of a newer release: skipped, as upstream's unmarshallers do
        if _is_packed(f, wire_type):
            assert isinstance(value, bytes)
            items = [_decode_value(f.type, item) for item in _packed_varints(value)]
            if items:  # no elements leave the slice nil, as upstream's unmarshallers do
                out.setdefault(f.name, []).extend(items)
            continue
        if wire_type != _wire_type(f):
            raise ProtobufDecodeError(
                f"proto: wrong wireType = {wire_type} for field {f.name[:1].upper()}{f.name[1:]}"
            )
        if f.label is Label.MAP:
            assert isinstance(value, bytes)
            key, item = _decode_entry(f, value)
            out.setdefault(f.name, {})[key] = item
        elif f.label is Label.REPEATED:
            out.setdefault(f.name, []).append(_decode_value(f.type, value))
        elif f.inline:
            assert isinstance(value, bytes)
            assert isinstance(f.type, str)  # an inline field embeds a message
            out.update(_decode_message(MESSAGES[f.type], value))
        else:
            item = _decode_value(f.type, value)
            if item is None or (not f.optional and f.omitempty and _is_zero(f.type, item)):
                out.pop(f.name, None)  # the last occurrence wins, as for any field
            else:
                out[f.name] = item
    return out


def _wire_type(f: Field) -> int:
    """The wire type of one occurrence of ``f`` (a map entry is a message)."""
    if f.label is Label.MAP:
        return LENGTH_DELIMITED
    if f.type in _VARINT_TYPES:
        return VARINT
    return FIXED64 if f.type is ValueType.DOUBLE else LENGTH_DELIMITED


def _is_packed(f: Field, wire_type: int) -> bool:
    """A repeated number sent packed: one length-delimited run of varints."""
    return f.label is Label.REPEATED and f.type in _VARINT_TYPES and wire_type == LENGTH_DELIMITED


def _packed_varints(data: bytes) -> list[int]:
    values: list[int] = []
    pos = 0
    while pos < len(data):
        value, pos = decode_varint(data, pos)
        values.append(value)
    return values


def _decode_entry(f: Field, data: bytes) -> tuple[str, Any]:
    """One ``map<string, V>`` entry; a missing key or value is its zero value."""
    value_wire = VARINT if f.type in _VARINT_TYPES else LENGTH_DELIMITED
    fields = _fields(data, {1: (LENGTH_DELIMITED, "key"), 2: (value_wire, "value")})
    default: int | bytes = 0 if value_wire == VARINT else b""
    return _text(fields.get(1, b"")), _decode_value(f.type, fields.get(2, default))


def _is_zero(value_type: ValueType | str, value: Any) -> bool:
    """A zero scalar, which a non-pointer ``omitempty`` field leaves out of the object.

    Structs are never left out (Go's ``omitempty`` does not apply to them), and an
    ``IntOrString`` is a struct.
    """
    if not isinstance(value_type, ValueType) or value_type in _STRUCT_TYPES:
        return False
    return value in ("", 0, False)


def _decode_value(value_type: ValueType | str, value: int | bytes) -> Any:
    if isinstance(value, int):
        if value_type is ValueType.BOOL:
            return value != 0
        if value_type is ValueType.INT32:
            return _int32(value)
        if value_type is ValueType.DOUBLE:
            return _decode_double(value)
        return to_signed(value)
    if value_type is ValueType.STRING:
        return _text(value)
    if value_type is ValueType.BYTES:
        return base64.b64encode(value).decode("ascii")
    if value_type is ValueType.TIME:
        return _decode_time(value, micro=False)
    if value_type is ValueType.MICRO_TIME:
        return _decode_time(value, micro=True)
    if value_type is ValueType.INT_OR_STRING:
        return _decode_int_or_string(value)
    if value_type in _RAW_JSON_TYPES:
        return _decode_raw_json(value, value_type)
    if value_type is ValueType.QUANTITY:
        return _decode_quantity(value)
    assert isinstance(value_type, str)
    message = MESSAGES[value_type]
    fields = _decode_message(message, value)
    return message.custom_json.to_json(fields) if message.custom_json else fields


def _text(value: int | bytes) -> str:
    """A string field; Go keeps invalid UTF-8, and its JSON encoder writes U+FFFD for it."""
    assert isinstance(value, bytes)
    return value.decode("utf-8", "replace")


def _fields(data: bytes, expected: dict[int, tuple[int, str]]) -> dict[int, int | bytes]:
    """The fields of a small fixed message, each checked against its wire type.

    ``expected`` maps each field number to its wire type and Go field name;
    other numbers are skipped.
    """
    out: dict[int, int | bytes] = {}
    for number, wire_type, value in iter_fields(data):
        if number in expected:
            wanted, name = expected[number]
            if wire_type != wanted:
                raise ProtobufDecodeError(f"proto: wrong wireType = {wire_type} for field {name}")
            out[number] = value
    return out


_TIMESTAMP = {1: (VARINT, "Seconds"), 2: (VARINT, "Nanos")}
_INT_OR_STRING = {1: (VARINT, "Type"), 2: (VARINT, "IntVal"), 3: (LENGTH_DELIMITED, "StrVal")}
_RAW_JSON = {1: (LENGTH_DELIMITED, "Raw")}
_QUANTITY = {1: (LENGTH_DELIMITED, "String_")}
#: ``resource.Quantity{}``'s text: what an empty message or a missing map value reads as.
_ZERO_QUANTITY = "0"


def _int32(value: int | bytes) -> int:
    assert isinstance(value, int)
    return (value + (1 << 31)) % (1 << 32) - (1 << 31)


def _decode_time(data: bytes, *, micro: bool) -> str | None:
    """A ``Timestamp`` as RFC 3339 text; the zero time is ``None`` (``null`` in JSON).

    ``Time`` drops the nanoseconds (its JSON has whole seconds); ``MicroTime``
    truncates them to microseconds.
    """
    if not data:
        return None
    fields = _fields(data, _TIMESTAMP)
    seconds = to_signed(int(fields.get(1, 0)))
    nanos = _int32(fields.get(2, 0)) if micro else 0
    if seconds == _GO_ZERO_TIME and nanos == 0:
        return None
    try:
        moment = _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
    except OverflowError:
        raise ProtobufDecodeError("Time.MarshalJSON: year outside of range [0,9999]") from None
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _decode_int_or_string(data: bytes) -> int | str:
    fields = _fields(data, _INT_OR_STRING)
    if fields.get(1, 0) == 1:
        return _text(fields.get(3, b""))
    return _int32(fields.get(2, 0))


def _decode_quantity(data: bytes) -> str:
    """A ``Quantity``'s canonical text (``"0"`` for a message without one).

    Upstream's unmarshaller parses the text as sent (without trimming it, as
    JSON's does), fails the decoding on a parse error, and its JSON writes
    ``Quantity.String()``; a Go client sends canonical text, others may not.
    """
    text = _fields(data, _QUANTITY).get(1)
    if text is None:
        return _ZERO_QUANTITY
    try:
        return str(parse_quantity(_text(text)))
    except QuantityError as exc:
        raise ProtobufDecodeError(str(exc)) from None


def _decode_raw_json(data: bytes, value_type: ValueType) -> Any:
    """The JSON value in ``raw``; ``None`` (``null``) when there is none."""
    raw = _fields(data, _RAW_JSON).get(1, b"")
    assert isinstance(raw, bytes)
    try:
        return orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        raise ProtobufDecodeError(f"{value_type.value}.Raw is not JSON") from None


def _decode_double(bits: int) -> float | int:
    """A ``float64`` as Go's JSON writes it: a whole number without a fraction.

    Go's encoder has no form for NaN and the infinities and fails on them.
    """
    value: float = struct.unpack("<d", bits.to_bytes(8, "little"))[0]
    if not math.isfinite(value):
        text = "NaN" if math.isnan(value) else f"{value:+}".replace("inf", "Inf")
        raise ProtobufDecodeError(f"json: unsupported value: {text}")
    # Below 1e21 Go writes the digits in full, as Python writes an int.
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


# -- encoding --------------------------------------------------------------------------------


def encode(obj: Object) -> bytes:
    """A protobuf body for ``obj`` (whose ``apiVersion`` and ``kind`` must be supported)."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    message = message_for(api_version, kind)
    if message is None:
        raise ValueError(f"no protobuf form for {kind} {api_version}")
    rest = MessageWriter().message(2, _encode_message(message, obj)).string(3, "").string(4, "")
    return envelope_head(api_version, kind) + rest.getvalue()


def encode_steps(obj: Object) -> Generator[None, None, bytes]:
    """:func:`encode`, yielding after every ``cooperative.CHUNK`` items of a list.

    The same bytes as :func:`encode`; drive it with ``cooperative.run_steps`` so
    that encoding a list of thousands of objects (or Table rows) gives the
    event loop a turn between chunks.  Only the top-level repeated fields
    (``items``, ``rows``) are chunked: that is where a big body's work is.
    """
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    message = message_for(api_version, kind)
    if message is None:
        raise ValueError(f"no protobuf form for {kind} {api_version}")
    out = MessageWriter()
    for f in message.fields:
        if f.label is Label.REPEATED and not f.inline:
            for i, item in enumerate(obj.get(f.name) or ()):
                if i and not i % CHUNK:
                    yield
                _write(out, f.number, f.type, item)
        else:
            _encode_field(out, f, obj)
    rest = MessageWriter().message(2, out).string(3, "").string(4, "")
    return envelope_head(api_version, kind) + rest.getvalue()


def envelope_head(api_version: str, kind: str) -> bytes:
    """How every body of ``kind`` begins: the magic, then the envelope's ``typeMeta`` (1)."""
    type_meta = MessageWriter().string(1, api_version).string(2, kind)
    return PREFIX + MessageWriter().message(1, type_meta).getvalue()


def encode_watch_event(event_type: str, obj: Object) -> bytes:
    """One frame of an ``application/vnd.kubernetes.protobuf;stream=watch`` stream.

    Upstream's stream serializer is the raw one, so the ``meta/v1`` ``WatchEvent``
    (``type`` 1, ``object`` 2, a ``RawExtension`` whose ``raw`` is 1) goes out
    without the magic and ``runtime.Unknown`` around it, while the object inside
    it is a whole body of its own.  The framer puts the event's length before
    it as four big-endian bytes.
    """
    raw_extension = MessageWriter().bytes(1, encode(obj))
    event = MessageWriter().string(1, event_type).message(2, raw_extension).getvalue()
    return len(event).to_bytes(4, "big") + event


def _encode_message(message: Message, obj: Object) -> MessageWriter:
    out = MessageWriter()
    for f in message.fields:
        _encode_field(out, f, obj)
    return out


def _encode_field(out: MessageWriter, f: Field, obj: Object) -> None:
    if f.inline:
        assert isinstance(f.type, str)  # an inline field embeds a message
        out.message(f.number, _encode_message(MESSAGES[f.type], obj))
        return
    value = obj.get(f.name)
    if f.label is Label.MAP:
        entries = value or {}
        for key in sorted(entries):
            entry = MessageWriter().string(1, key)
            _write(entry, 2, f.type, entries[key])
            out.message(f.number, entry)
    elif f.label is Label.REPEATED:
        for item in value or ():
            _write(out, f.number, f.type, item)
    elif value is not None:
        _write(out, f.number, f.type, value)
    elif not f.optional and f.type is not ValueType.BYTES:
        _write_zero(out, f)


def _write(out: MessageWriter, number: int, value_type: ValueType | str, value: Any) -> None:
    if value_type is ValueType.STRING:
        out.string(number, value)
    elif value_type is ValueType.BOOL:
        out.boolean(number, value)
    elif value_type in (ValueType.INT32, ValueType.INT64):
        out.varint(number, value)
    elif value_type is ValueType.BYTES:
        out.bytes(number, _base64(value))
    elif value_type in (ValueType.TIME, ValueType.MICRO_TIME):
        out.message(number, _encode_time(value, micro=value_type is ValueType.MICRO_TIME))
    elif value_type is ValueType.INT_OR_STRING:
        is_string = isinstance(value, str)
        out.message(
            number,
            MessageWriter()
            .varint(1, int(is_string))
            .varint(2, 0 if is_string else value)
            .string(3, value if is_string else ""),
        )
    elif value_type is ValueType.DOUBLE:
        out.fixed64(number, int.from_bytes(struct.pack("<d", value), "little"))
    elif value_type in _RAW_JSON_TYPES:
        # ``null`` leaves ``raw`` unset, as ``JSON.UnmarshalJSON`` does.
        raw = MessageWriter() if value is None else MessageWriter().bytes(1, orjson.dumps(value))
        out.message(number, raw)
    elif value_type is ValueType.QUANTITY:
        out.message(number, MessageWriter().string(1, value))
    else:
        assert isinstance(value_type, str)
        message = MESSAGES[value_type]
        fields = message.custom_json.from_json(value) if message.custom_json else value
        out.message(number, _encode_message(message, fields))


def _write_zero(out: MessageWriter, f: Field) -> None:
    """A non-pointer field the object leaves out, written as Go writes its zero value."""
    if f.type is ValueType.STRING:
        out.string(f.number, "")
    elif f.type in _VARINT_TYPES:
        out.varint(f.number, 0)
    elif f.type in (ValueType.TIME, ValueType.MICRO_TIME):
        out.message(f.number, b"")  # the zero time marshals to no bytes at all
    elif f.type is ValueType.QUANTITY:
        _write(out, f.number, f.type, _ZERO_QUANTITY)
    else:
        _write(out, f.number, f.type, 0 if f.type is ValueType.INT_OR_STRING else {})


def _base64(value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error:
        raise ValueError(f"not base64: {value!r}") from None


def _encode_time(value: str, *, micro: bool) -> bytes:
    """RFC 3339 text as a ``Timestamp``: seconds, and nanoseconds only for ``MicroTime``."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    seconds = (moment - _EPOCH) // timedelta(seconds=1)
    nanos = moment.microsecond * 1000 if micro else 0
    return MessageWriter().varint(1, seconds).varint(2, nanos).getvalue()
