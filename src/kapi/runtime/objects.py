"""Small helpers for objects as JSON data (dicts, lists, scalars)."""

from __future__ import annotations

import os
import time
from typing import Any

import orjson

from kapi.apimachinery.unstructured import Object


def deep_copy(obj: Any) -> Any:
    """A deep copy of JSON data; orjson's round trip beats ``copy.deepcopy`` by far."""
    return orjson.loads(orjson.dumps(obj))


_last_second: tuple[int, str] = (-1, "")


def now_rfc3339() -> str:
    """The current time as ``metav1.Time`` serialises it (seconds, UTC, ``Z``).

    Formatting is cached per second: every create and delete asks for it.
    """
    global _last_second
    second = int(time.time())
    if second != _last_second[0]:
        text = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))
        _last_second = (second, text)
    return _last_second[1]


def new_uid() -> str:
    """A random (version 4) UUID string, as ``uuid.uuid4()`` but without its object overhead."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def meta(obj: Object) -> Object:
    """``obj.metadata``, created empty when absent (or not an object)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = obj["metadata"] = {}
    return metadata
