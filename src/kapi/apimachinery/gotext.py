"""Go's spelling of values, types and errors, for messages that must read as upstream's.

kube-apiserver builds many error texts with ``fmt`` verbs over decoded JSON
(``%v``, ``%q``, ``%#v``, ``%T``), with ``strconv`` and ``time`` formatting, or
from ``encoding/json``; these render the same text from Python values. This is
the one place kapi spells Go: other modules import from here rather than
keeping their own variants.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, Final

# --- strings (%q, len) ---------------------------------------------------------------------

#: The one-letter escapes of Go string literals (``strconv.Quote`` writes these).
GO_SHORT_ESCAPES: Final = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def go_quote(s: str) -> str:
    """Go ``strconv.Quote`` (``%q``): printable runes kept, others escaped."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
            continue
        cp = ord(ch)
        if ch.isprintable() and not 0xD800 <= cp <= 0xDFFF:
            out.append(ch)
        elif ch in GO_SHORT_ESCAPES:
            out.append(GO_SHORT_ESCAPES[ch])
        elif cp < 0x20 or cp == 0x7F:
            out.append(f"\\x{cp:02x}")
        elif 0xD800 <= cp <= 0xDFFF:
            out.append("\\ufffd")  # not a valid rune in Go
        elif cp < 0x10000:
            out.append(f"\\u{cp:04x}")
        else:
            out.append(f"\\U{cp:08x}")
    out.append('"')
    return "".join(out)


def go_len(s: str) -> int:
    """Go's ``len`` of a string: its UTF-8 bytes (a lone surrogate counts 3, as Go's U+FFFD)."""
    return len(s) if s.isascii() else len(s.encode("utf-8", "surrogatepass"))


# --- numbers (%v of a float64, encoding/json of a float64) ---------------------------------


def _shortest_digits(f: float) -> tuple[str, int]:
    """Shortest round-trip digits of abs(f) != 0 and the decimal point position."""
    d = Decimal(repr(abs(f)))
    digits = "".join(map(str, d.as_tuple().digits)).rstrip("0")
    return digits, d.adjusted() + 1


def _fmt_e(neg: bool, ds: str, dp: int) -> str:
    exp = dp - 1
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    sign = "-" if exp < 0 else "+"
    return f"{'-' if neg else ''}{mant}e{sign}{abs(exp):02d}"


def _fmt_f(neg: bool, ds: str, dp: int) -> str:
    if dp <= 0:
        s = "0." + "0" * (-dp) + ds
    elif dp >= len(ds):
        s = ds + "0" * (dp - len(ds))
    else:
        s = ds[:dp] + "." + ds[dp:]
    return ("-" if neg else "") + s


def _special_float(f: float) -> str | None:
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    return None


def go_format_float(f: float) -> str:
    """Go ``%v`` of a float64 (``strconv.FormatFloat(f, 'g', -1, 64)``)."""
    special = _special_float(f)
    if special is not None:
        return special
    ds, dp = _shortest_digits(f)
    exp = dp - 1
    if exp < -4 or exp >= 6:  # Go uses precision 6 for the %e decision when shortest
        return _fmt_e(f < 0, ds, dp)
    return _fmt_f(f < 0, ds, dp)


def go_format_fixed(f: float, precision: int = 6) -> str:
    """Go ``%.<precision>f`` of a float64 (default ``%f``); ``NaN``, ``+Inf``, ``-Inf`` as Go."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    return f"{f:.{precision}f}"


def go_json_float(f: float) -> str:
    """A float64 as Go ``encoding/json`` writes it (ES6-like, ``1e-7`` not ``1e-07``)."""
    special = _special_float(f)
    if special is not None:
        return special
    ds, dp = _shortest_digits(f)
    a = abs(f)
    if a < 1e-6 or a >= 1e21:
        s = _fmt_e(f < 0, ds, dp)
        if s[-4] == "e" and s[-3] == "-" and s[-2] == "0":
            s = s[:-2] + s[-1]
        return s
    return _fmt_f(f < 0, ds, dp)


# --- encoding/json output ------------------------------------------------------------------


class OrderedStruct(dict[str, Any]):
    """A dict rendered in insertion order, like a Go struct (Go maps render key-sorted)."""


_JSON_HTML: Final = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def go_html_escape(text: str) -> str:
    """JSON text with the characters ``encoding/json`` escapes even inside strings escaped."""
    return text.translate(_JSON_HTML)


def _json_string(s: str) -> str:
    return go_html_escape(json.dumps(s, ensure_ascii=False))


def go_json(value: Any) -> str:
    """Go ``json.Marshal`` of decoded JSON data: maps key-sorted, HTML-safe strings."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_json_float(value)
    if isinstance(value, Mapping):
        items = value.items() if isinstance(value, OrderedStruct) else sorted(value.items())
        return "{" + ",".join(f"{_json_string(str(k))}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple | set | frozenset):
        seq = sorted(value) if isinstance(value, set | frozenset) else value
        return "[" + ",".join(go_json(v) for v in seq) + "]"
    return _json_string(str(value))


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


# --- fmt verbs over decoded JSON (%v, %#v, %T) ---------------------------------------------

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


def go_sharp_v_strings(values: Iterable[str]) -> str:
    """``%#v`` of a ``[]string``: ``[]string{"a", "b"}``."""
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


# --- durations -----------------------------------------------------------------------------


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


def _trim(value: float) -> str:
    return f"{value:.9f}".rstrip("0").rstrip(".")


# --- group, version and kind --------------------------------------------------------------


def gvk_string(api_version: str, kind: str) -> str:
    """``schema.GroupVersionKind.String()``: ``example.com/v1, Kind=Foo``; ``/v1, Kind=Foo``."""
    group_version = api_version if "/" in api_version else f"/{api_version}"
    return f"{group_version}, Kind={kind}"


_DECIMAL = re.compile(r"[+-]?[0-9]+")


def parse_go_int(text: str, bits: int = 64) -> int:
    """``strconv.ParseInt(text, 10, bits)``: a signed decimal that fits ``bits``.

    Raises ``ValueError`` with Go's message, which kube-apiserver returns as a
    400 for a bad integer query parameter (``limit``, ``timeoutSeconds``).
    Python's ``int()`` is laxer: it takes spaces, underscores and any size.
    """
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f"strconv.ParseInt: parsing {go_quote(text)}: invalid syntax")
    value = int(text)
    bound = 1 << (bits - 1)
    if not -bound <= value < bound:
        raise ValueError(f"strconv.ParseInt: parsing {go_quote(text)}: value out of range")
    return value
