"""The protobuf wire primitives, checked against known encodings and by round trip."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kapi.runtime.protowire import (
    FIXED64,
    LENGTH_DELIMITED,
    VARINT,
    MessageWriter,
    ProtobufDecodeError,
    decode_varint,
    encode_varint,
    iter_fields,
    to_signed,
)


def test_varints_match_the_protobuf_documentation() -> None:
    # The examples of https://protobuf.dev/programming-guides/encoding/.
    assert encode_varint(1) == b"\x01"
    assert encode_varint(150) == b"\x96\x01"
    assert encode_varint(-1) == b"\xff" * 9 + b"\x01"
    assert to_signed(decode_varint(encode_varint(-2), 0)[0]) == -2


@given(st.integers(min_value=0, max_value=(1 << 64) - 1))
def test_varint_round_trip(value: int) -> None:
    encoded = encode_varint(value)
    assert decode_varint(encoded, 0) == (value, len(encoded))


def test_message_fields_read_back_in_order() -> None:
    inner = MessageWriter().string(1, "v1").string(2, "ConfigMap")
    data = (
        MessageWriter().message(1, inner).varint(3, 150).boolean(4, False).fixed64(5, 7)
    ).getvalue()
    assert list(iter_fields(data)) == [
        (1, LENGTH_DELIMITED, b"\n\x02v1\x12\tConfigMap"),
        (3, VARINT, 150),
        (4, VARINT, 0),
        (5, FIXED64, 7),
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x0a\x05ab", "unexpected EOF"),  # a 5-byte string with 2 bytes left
        (b"\x08", "unexpected EOF"),  # a varint field with no value
        (b"\x08" + b"\xff" * 10 + b"\x01", "integer overflow"),
        (b"\x0b", "illegal wireType 3 for field 1"),  # a group
        (b"\x00\x01", "illegal tag 0"),
    ],
)
def test_malformed_messages_are_rejected(data: bytes, message: str) -> None:
    with pytest.raises(ProtobufDecodeError, match=message):
        list(iter_fields(data))
