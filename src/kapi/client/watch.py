"""Watch events, decoded from the API server's newline-delimited JSON stream."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from kapi.client.errors import error_from_status


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One watch event: ``ADDED``, ``MODIFIED``, ``DELETED`` or ``BOOKMARK``.

    ``ERROR`` events never surface as values: they end the watch by raising the
    Status's typed error, so a too-old resourceVersion reads as ``GoneError``.
    """

    type: str
    object: dict[str, Any]


def decode_event(line: str | bytes) -> WatchEvent | None:
    """The event on one line of the stream; ``None`` for a blank line."""
    if not line.strip():
        return None
    frame = orjson.loads(line)
    event_type = frame["type"]
    if event_type == "ERROR":
        raise error_from_status(frame["object"])
    return WatchEvent(event_type, frame["object"])
