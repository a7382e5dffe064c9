"""Reading Kubernetes protobuf without kapi: the wire format and the few messages tests check.

Written from upstream's ``generated.proto`` files (``k8s.io/apimachinery/pkg/runtime``
for ``Unknown`` and ``RawExtension``, ``pkg/apis/meta/v1`` for ``Status``,
``ListMeta``, ``ObjectMeta`` and ``WatchEvent``, ``k8s.io/api/core/v1`` for
``ConfigMap``) and sharing no code with kapi's encoder, so that a test decoding
kapi's bytes with it checks them against the definitions, not against kapi.
"""

from __future__ import annotations

from typing import Any

Object = dict[str, Any]
Fields = dict[int, list[int | bytes]]

MAGIC = b"k8s\x00"
_VARINT, _LENGTH_DELIMITED = 0, 2


def fields(data: bytes) -> Fields:
    """Each field's values by number, in wire order (Kubernetes messages use wire types 0 and 2)."""
    out: Fields = {}
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire_type = key >> 3, key & 7
        value: int | bytes
        if wire_type == _VARINT:
            value, pos = _varint(data, pos)
        elif wire_type == _LENGTH_DELIMITED:
            size, pos = _varint(data, pos)
            value = data[pos : pos + size]
            assert len(value) == size, "truncated field"
            pos += size
        else:
            raise AssertionError(f"unexpected wire type {wire_type} for field {number}")
        out.setdefault(number, []).append(value)
    return out


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _bytes(message: Fields, number: int) -> bytes:
    values = message.get(number, [b""])
    assert isinstance(values[-1], bytes)
    return values[-1]


def _string(message: Fields, number: int) -> str:
    return _bytes(message, number).decode()


def _int(message: Fields, number: int) -> int:
    value = message.get(number, [0])[-1]
    assert isinstance(value, int)
    return value


def envelope(body: bytes) -> tuple[str, str, bytes]:
    """``apiVersion``, ``kind`` and ``raw`` of a body: the magic, then a ``runtime.Unknown``.

    ``Unknown``: typeMeta 1 (apiVersion 1, kind 2), raw 2, contentEncoding 3, contentType 4.
    """
    assert body[: len(MAGIC)] == MAGIC, body[:16]
    unknown = fields(body[len(MAGIC) :])
    assert (_string(unknown, 3), _string(unknown, 4)) == ("", "")
    type_meta = fields(_bytes(unknown, 1))
    return _string(type_meta, 1), _string(type_meta, 2), _bytes(unknown, 2)


def _omit_empty(obj: Object) -> Object:
    """``obj`` without its zero values (an empty struct such as ``metadata`` stays)."""
    return {key: value for key, value in obj.items() if value not in ("", 0, [], None)}


def status(body: bytes) -> Object:
    """A ``Status`` body in its JSON form, where every field but ``metadata`` is omitempty.

    Status: metadata 1 (ListMeta: selfLink 1, resourceVersion 2, continue 3,
    remainingItemCount 4), status 2, message 3, reason 4, details 5, code 6.
    StatusDetails: name 1, group 2, kind 3, causes 4, retryAfterSeconds 5, uid 6.
    StatusCause: reason 1, message 2, field 3.
    """
    api_version, kind, raw = envelope(body)
    message = fields(raw)
    list_meta = fields(_bytes(message, 1))
    out: Object = {
        "kind": kind,
        "apiVersion": api_version,
        "metadata": _omit_empty(
            {
                "selfLink": _string(list_meta, 1),
                "resourceVersion": _string(list_meta, 2),
                "continue": _string(list_meta, 3),
                "remainingItemCount": list_meta.get(4, [None])[-1],
            }
        ),
        "status": _string(message, 2),
        "message": _string(message, 3),
        "reason": _string(message, 4),
        "details": _details(message[5][-1]) if 5 in message else None,
        "code": _int(message, 6),
    }
    return _omit_empty(out)


def _details(data: int | bytes) -> Object:
    assert isinstance(data, bytes)
    details = fields(data)
    causes = []
    for cause in details.get(4, []):
        assert isinstance(cause, bytes)
        cause_fields = fields(cause)
        causes.append(
            _omit_empty(
                {
                    "reason": _string(cause_fields, 1),
                    "message": _string(cause_fields, 2),
                    "field": _string(cause_fields, 3),
                }
            )
        )
    return _omit_empty(
        {
            "name": _string(details, 1),
            "group": _string(details, 2),
            "kind": _string(details, 3),
            "causes": causes,
            "retryAfterSeconds": _int(details, 5),
            "uid": _string(details, 6),
        }
    )


def config_map(body: bytes) -> Object:
    """The parts of a ``ConfigMap`` body tests look at.

    ConfigMap: metadata 1, data 2 (map entries: key 1, value 2).  ObjectMeta:
    name 1, namespace 3, resourceVersion 6, annotations 12 (map entries).
    """
    api_version, kind, raw = envelope(body)
    message = fields(raw)
    metadata = fields(_bytes(message, 1))
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": _string(metadata, 1),
        "namespace": _string(metadata, 3),
        "resourceVersion": _string(metadata, 6),
        "annotations": _map(metadata.get(12, [])),
        "data": _map(message.get(2, [])),
    }


def _map(entries: list[int | bytes]) -> dict[str, str]:
    out = {}
    for entry in entries:
        assert isinstance(entry, bytes)
        entry_fields = fields(entry)
        out[_string(entry_fields, 1)] = _string(entry_fields, 2)
    return out


def watch_events(stream: bytes) -> tuple[list[tuple[str, bytes]], bytes]:
    """The whole events of a ``;stream=watch`` stream, and the bytes of a partial last one.

    Each event is a four-byte big-endian length, then a bare ``WatchEvent``
    (type 1, object 2: a ``RawExtension`` whose raw 1 is the object's own body).
    """
    events = []
    while len(stream) >= 4:
        size = int.from_bytes(stream[:4], "big")
        if len(stream) < 4 + size:
            break
        event = fields(stream[4 : 4 + size])
        raw_extension = fields(_bytes(event, 2))
        events.append((_string(event, 1), _bytes(raw_extension, 1)))
        stream = stream[4 + size :]
    return events, stream
