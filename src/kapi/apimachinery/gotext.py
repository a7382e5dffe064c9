"""Go's spelling of values, types and errors, for messages that must read as upstream's.

kube-apiserver builds many error texts with ``fmt`` verbs over decoded JSON
(``%v``, ``%#v``, ``%T``) or from ``encoding/json``; these render the same
text from Python values.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kapi.apimachinery.field_errors import go_format_float


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


#: ``time.ParseDuration``'s units, in nanoseconds (both spellings of the micro sign).
_DURATION_UNITS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_MAX_DURATION = (1 << 63) - 1
#: One term of a duration: digits, an optional fraction, and whatever follows up to the
#: next number (the unit, checked against the table).
_DURATION_TERM = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]*)")
#: The fraction digits Go accumulates (an int64 numerator); later ones are ignored.
_FRACTION_DIGITS = 18


def parse_go_duration(text: str) -> float:
    """``time.ParseDuration``: ``1h0m0s``, ``90m``, ``1.5h``, ``-30s``, ``0`` in seconds.

    A signed sequence of decimal numbers, each with an optional fraction and a
    unit; kube-apiserver's duration flags take this syntax.  Raises
    :class:`ValueError` with Go's message (``time: invalid duration "x"``).
    """
    quoted = _go_time_quote(text)
    rest = text[1:] if text[:1] in ("-", "+") else text
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError(f"time: invalid duration {quoted}")
    nanos = 0
    at = 0
    while at < len(rest):
        term = _DURATION_TERM.match(rest, at)
        assert term is not None  # every group may be empty
        whole, fraction, unit = term[1], (term[2] or "")[:_FRACTION_DIGITS], term[3]
        at = term.end()
        if not whole and not fraction:
            raise ValueError(f"time: invalid duration {quoted}")
        if not unit:
            raise ValueError(f"time: missing unit in duration {quoted}")
        size = _DURATION_UNITS.get(unit)
        if size is None:
            raise ValueError(f"time: unknown unit {_go_time_quote(unit)} in duration {quoted}")
        # As Go: the fraction in float64, truncated to whole nanoseconds.
        nanos += int(whole or 0) * size + int(int(fraction or 0) * (size / 10 ** len(fraction)))
        if nanos > _MAX_DURATION + 1:
            raise ValueError(f"time: invalid duration {quoted}")
    if text.startswith("-"):
        return -nanos / 1e9
    if nanos > _MAX_DURATION:
        raise ValueError(f"time: invalid duration {quoted}")
    return nanos / 1e9


def _go_time_quote(text: str) -> str:
    """How the time package quotes input in errors: non-ASCII and control bytes as ``\\xNN``."""
    out: list[str] = []
    for char in text:
        if char < " " or char >= "\x80":
            out.extend(f"\\x{byte:02x}" for byte in char.encode("utf-8", "surrogatepass"))
        elif char in '"\\':
            out.append("\\" + char)
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def go_json_kind(value: Any) -> str:
    """encoding/json's name for a decoded JSON value's type in unmarshal errors."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"


#: ``%T`` of decoded JSON (``unstructured``: integers are int64).
_GO_TYPES: dict[type, str] = {
    dict: "map[string]interface {}",
    list: "[]interface {}",
    str: "string",
    int: "int64",
    float: "float64",
    bool: "bool",
}


def go_type(value: Any) -> str:
    """``%T`` of a decoded JSON value."""
    return "<nil>" if value is None else _GO_TYPES[type(value)]


def go_sprint(value: Any, verb: str = "v") -> str:
    """``%v`` (or ``%s``) of a decoded JSON value: ``map[k:v]``, ``[a b]``, ``<nil>``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        pairs = (f"{k}:{go_sprint(value[k], verb)}" for k in sorted(value))
        return "map[" + " ".join(pairs) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_sprint(item, verb) for item in value) + "]"
    if value is None:
        return "%!s(<nil>)" if verb == "s" else "<nil>"
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float):
        text = go_format_float(value)
    else:
        text = str(value)
    return f"%!s({_GO_TYPES[type(value)]}={text})" if verb == "s" else text


def go_sharp_v(value: Any) -> str:
    """``%#v`` of a decoded JSON value held in an ``interface{}``."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, dict):
        inner = ", ".join(f'"{k}":{go_sharp_v(x)}' for k, x in sorted(value.items()))
        return "map[string]interface {}{" + inner + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_sharp_v(x) for x in value) + "}"
    return str(value)


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
