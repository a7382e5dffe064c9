"""Small helpers for objects as JSON data (dicts, lists, scalars)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson

Object = dict[str, Any]


def deep_copy(obj: Any) -> Any:
    """A deep copy of JSON data; orjson's round trip beats ``copy.deepcopy`` by far."""
    return orjson.loads(orjson.dumps(obj))


def now_rfc3339() -> str:
    """The current time as ``metav1.Time`` serialises it (seconds, UTC, ``Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(obj: Object) -> Object:
    """``obj.metadata``, created empty when absent (or not an object)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        metadata = obj["metadata"] = {}
    return metadata
