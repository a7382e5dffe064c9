"""Protocol Buffers wire format: the primitives, without generated code.

Kubernetes speaks protobuf in two places kapi must understand: request and
response bodies of built-in kinds (``application/vnd.kubernetes.protobuf``)
and the OpenAPI v2 document that kubectl 1.27 and 1.28 fetch.  Both are a
handful of messages whose field numbers are fixed by upstream's ``.proto``
files, so kapi writes them with these primitives and a table per message
instead of depending on ``protoc`` output.

Only the wire types Kubernetes uses are read: varint (0), 64-bit (1),
length-delimited (2) and 32-bit (5).  Groups (3, 4) are long deprecated and
are rejected, as is any truncated or overlong input.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator

VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
FIXED32 = 5

_MASK64 = (1 << 64) - 1


class ProtobufDecodeError(ValueError):
    """Bytes that are not a well-formed protobuf message."""


def encode_varint(value: int) -> bytes:
    """``value`` as a base-128 varint; negative numbers take ten bytes, as int64 does."""
    value &= _MASK64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """The unsigned varint at ``pos`` and the position after it."""
    result = shift = 0
    end = len(data)
    while True:
        if pos >= end:
            raise ProtobufDecodeError("unexpected EOF")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ProtobufDecodeError("integer overflow")


def to_signed(value: int) -> int:
    """An ``int64``/``int32`` field's value from its unsigned varint."""
    return value - (1 << 64) if value >= 1 << 63 else value


def iter_fields(data: bytes | memoryview) -> Iterator[tuple[int, int, int | bytes]]:
    """Each ``(field number, wire type, value)`` of one message, in wire order.

    Varints and fixed-width fields yield ints (unsigned); length-delimited
    fields yield their bytes, to be decoded as a string, bytes, a packed list
    or a nested message by whoever knows the field's type.
    """
    view = memoryview(data)
    pos, end = 0, len(view)
    while pos < end:
        key, pos = decode_varint(view, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise ProtobufDecodeError("illegal tag 0")
        if wire_type == VARINT:
            value, pos = decode_varint(view, pos)
            yield number, wire_type, value
        elif wire_type == LENGTH_DELIMITED:
            size, pos = decode_varint(view, pos)
            if pos + size > end:
                raise ProtobufDecodeError("unexpected EOF")
            yield number, wire_type, bytes(view[pos : pos + size])
            pos += size
        elif wire_type in (FIXED64, FIXED32):
            width = 8 if wire_type == FIXED64 else 4
            if pos + width > end:
                raise ProtobufDecodeError("unexpected EOF")
            yield number, wire_type, int.from_bytes(view[pos : pos + width], "little")
            pos += width
        else:
            raise ProtobufDecodeError(f"illegal wireType {wire_type} for field {number}")


class MessageWriter:
    """Builds one message field by field, in the order the fields are added.

    Upstream's generated marshallers write fields in field-number order and
    skip unset optional scalars; callers keep that order so that kapi's bytes
    match upstream's for the same object.
    """

    __slots__ = ("_out",)

    def __init__(self) -> None:
        self._out = bytearray()

    def varint(self, number: int, value: int) -> MessageWriter:
        self._out += encode_varint(number << 3 | VARINT)
        self._out += encode_varint(value)
        return self

    def boolean(self, number: int, value: bool) -> MessageWriter:
        return self.varint(number, 1 if value else 0)

    def bytes(self, number: int, value: bytes) -> MessageWriter:
        self._out += encode_varint(number << 3 | LENGTH_DELIMITED)
        self._out += encode_varint(len(value))
        self._out += value
        return self

    def string(self, number: int, value: str) -> MessageWriter:
        return self.bytes(number, value.encode())

    def message(self, number: int, value: MessageWriter | builtins.bytes) -> MessageWriter:
        """A nested message; an empty one is still written, as gogo-protobuf does."""
        return self.bytes(number, value.getvalue() if isinstance(value, MessageWriter) else value)

    def fixed64(self, number: int, value: int) -> MessageWriter:
        self._out += encode_varint(number << 3 | FIXED64)
        self._out += (value & _MASK64).to_bytes(8, "little")
        return self

    def getvalue(self) -> builtins.bytes:
        return bytes(self._out)
