"""Error ``Status`` bodies and watch events in protobuf, byte for byte.

The expected bytes are written out by hand from upstream's ``generated.proto``
(``k8s.io/apimachinery/pkg/apis/meta/v1``: Status, ListMeta, StatusDetails,
StatusCause, WatchEvent; ``pkg/runtime``: Unknown, RawExtension) and the
gogo-protobuf marshalling rules Kubernetes uses: every non-pointer field is
written, even when empty, in field-number order; a pointer (``details``) only
when set.  A watch event is framed by a four-byte big-endian length and is not
wrapped in the magic and ``Unknown`` (upstream's stream serializer is the raw
one); the object inside it is.
"""

from __future__ import annotations

from kapi.apimachinery import errors
from kapi.runtime import protobuf

# The envelope: magic, Unknown.typeMeta (1) = {apiVersion (1) "v1", kind (2) "Status"}.
STATUS_HEAD = "6b387300" + "0a0c" + "0a02" + b"v1".hex() + "1206" + b"Status".hex()
# Unknown.contentEncoding (3) and contentType (4), both empty.
UNKNOWN_TAIL = "1a00" + "2200"
# Status.metadata (1): a ListMeta with its three strings empty (selfLink, resourceVersion,
# continue) and no remainingItemCount (a pointer).
EMPTY_LIST_META = "0a06" + "0a00" + "1200" + "1a00"
FAILURE = "1207" + b"Failure".hex()


def hex_bytes(*parts: str) -> bytes:
    return bytes.fromhex("".join(parts))


NOT_FOUND = hex_bytes(
    STATUS_HEAD,
    "124f",  # Unknown.raw (2): the Status, 79 bytes
    EMPTY_LIST_META,
    FAILURE,  # status (2)
    "1a18" + b'configmaps "x" not found'.hex(),  # message (3), 24 bytes
    "2208" + b"NotFound".hex(),  # reason (4)
    "2a15",  # details (5), 21 bytes
    "0a0178",  # name (1) "x"
    "1200",  # group (2) ""
    "1a0a" + b"configmaps".hex(),  # kind (3)
    "2800",  # retryAfterSeconds (5) 0
    "3200",  # uid (6) ""
    "309403",  # code (6) 404
    UNKNOWN_TAIL,
)

INVALID = hex_bytes(
    STATUS_HEAD,
    "128f01",  # Unknown.raw (2): the Status, 143 bytes
    EMPTY_LIST_META,
    FAILURE,
    "1a2e" + b'ConfigMap "x" is invalid: data: Required value'.hex(),  # message, 46 bytes
    "2207" + b"Invalid".hex(),  # reason
    "2a40",  # details, 64 bytes
    "0a0178",  # name "x"
    "1200",  # group ""
    "1a09" + b"ConfigMap".hex(),  # kind
    "222a",  # causes (4): one StatusCause, 42 bytes
    "0a12" + b"FieldValueRequired".hex(),  # reason (1)
    "120e" + b"Required value".hex(),  # message (2)
    "1a04" + b"data".hex(),  # field (3)
    "2800",  # retryAfterSeconds 0
    "3200",  # uid ""
    "30a603",  # code 422
    UNKNOWN_TAIL,
)


def test_not_found_status_matches_upstream_bytes() -> None:
    assert protobuf.encode(errors.not_found("configmaps", "", "x").status) == NOT_FOUND


def test_invalid_status_carries_its_causes() -> None:
    cause = {"reason": "FieldValueRequired", "message": "Required value", "field": "data"}
    error = errors.StatusError(
        422,
        "Invalid",
        'ConfigMap "x" is invalid: data: Required value',
        {"name": "x", "kind": "ConfigMap", "causes": [cause]},
    )
    assert protobuf.encode(error.status) == INVALID


def test_status_reads_back_as_its_json_form() -> None:
    status = errors.not_found("configmaps", "", "x").status
    assert protobuf.decode(NOT_FOUND) == status


def test_watch_event_is_a_length_prefixed_bare_message() -> None:
    frame = protobuf.encode_watch_event("ERROR", errors.not_found("configmaps", "", "x").status)
    # The envelope above is 103 bytes: RawExtension.raw (1) holds it whole.
    raw_extension = "0a67" + NOT_FOUND.hex()
    event = "0a05" + b"ERROR".hex() + "1269" + raw_extension  # type (1), object (2): 105 bytes
    assert frame == bytes.fromhex("00000072" + event)  # 114 bytes of event


def test_watch_event_length_counts_past_one_varint_byte() -> None:
    """A frame's length is a fixed four bytes, not a varint, however long the event."""
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}}
    obj["data"] = {"k": "v" * 70000}
    frame = protobuf.encode_watch_event("ADDED", obj)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4 > 0xFFFF
    assert frame[4:11] == b"\x0a\x05ADDED"
