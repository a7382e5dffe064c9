"""Go's spelling of values and errors that appear inside upstream webhook messages."""

from __future__ import annotations

import json
from typing import Any


def go_duration(seconds: float) -> str:
    """``time.Duration.String()``: ``30s``, ``1m30s``, ``500ms``, ``1h0m0s``.

    Upstream puts the call's timeout in the URL as ``?timeout=<duration>``.
    """
    nanos = round(seconds * 1e9)
    if nanos == 0:
        return "0s"
    if nanos < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if nanos >= size:
                return _trim(nanos / size) + unit
    whole_minutes, secs = divmod(nanos, 60_000_000_000)
    hours, minutes = divmod(whole_minutes, 60)
    text = _trim(secs / 1e9) + "s"
    if hours:
        return f"{hours}h{minutes}m{text}"
    if minutes:
        return f"{minutes}m{text}"
    return text


def go_json_kind(value: Any) -> str:
    """encoding/json's name for a decoded JSON value's type in unmarshal errors."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"


def gvk_string(api_version: str, kind: str) -> str:
    """``schema.GroupVersionKind.String()``: ``example.com/v1, Kind=Foo``; ``/v1, Kind=Foo``."""
    group_version = api_version if "/" in api_version else f"/{api_version}"
    return f"{group_version}, Kind={kind}"


def _trim(value: float) -> str:
    return f"{value:.9f}".rstrip("0").rstrip(".")


def _quote_char(char: str) -> str:
    """Go's ``quoteChar`` in encoding/json syntax errors."""
    if char == "'":
        return "'\\''"
    if char == '"':
        return "'\"'"
    if char.isprintable():
        return f"'{char}'"
    return "'" + json.dumps(char)[1:-1] + "'"


def json_syntax_error(err: json.JSONDecodeError) -> str:
    """encoding/json's text for the common syntax errors, Python's for the rest."""
    if err.pos >= len(err.doc.rstrip()):
        return "unexpected end of JSON input"
    char = _quote_char(err.doc[err.pos])
    context = _SYNTAX_CONTEXT.get(err.msg, err.msg)
    return f"invalid character {char} {context}"


#: Python's decoder messages and the context encoding/json names instead.
_SYNTAX_CONTEXT = {
    "Expecting value": "looking for beginning of value",
    "Extra data": "after top-level value",
    "Expecting property name enclosed in double quotes": (
        "looking for beginning of object key string"
    ),
    "Expecting ':' delimiter": "after object key",
}
