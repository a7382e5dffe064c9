"""Field paths and field-level validation errors.

The Python counterpart of ``k8s.io/apimachinery/pkg/util/validation/field``.
Clients match on these strings (``Status.details.causes`` and the aggregated
``Status.message``), so rendering follows upstream ``(*Error).Error()`` and
``ErrorBody()`` byte for byte, including how bad values are printed: Go's
``%q`` for strings, ``%v`` for numbers and booleans, and ``encoding/json`` for
everything else.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from enum import StrEnum
from typing import Any, Final


class Path:
    """An immutable path from a root to a field, rendered like upstream ``field.Path``.

    ``Path("metadata").child("labels").key("app")`` renders ``metadata.labels[app]``;
    ``Path("spec", "items").index(0)`` renders ``spec.items[0]``.
    """

    __slots__ = ("_children", "_str", "name", "parent")

    def __init__(self, name: str, *more_names: str) -> None:
        parent: Path | None = None
        for n in more_names:
            # `name` is the root; each further name is a child of the previous one.
            parent = Path._element(name, None, parent)
            name = n
        self.name = name
        self.parent = parent
        self._str = _render(parent, name, None)
        self._children: dict[str, Path] | None = None

    @staticmethod
    def _element(name: str, index: str | None, parent: Path | None) -> Path:
        p = object.__new__(Path)
        p.name = name
        p.parent = parent
        p._str = _render(parent, name, index)
        p._children = None
        return p

    def child(self, name: str, *more_names: str) -> Path:
        """A field of this path (``.name``).

        Field children are memoised: validators build the same paths on every
        request (``metadata.labels``...), usually without reporting an error.
        """
        children = self._children
        if children is None:
            children = self._children = {}
        p = children.get(name)
        if p is None:
            p = Path._element(name, None, self)
            if len(children) < _MAX_CACHED_CHILDREN:  # bounded: names may come from users
                children[name] = p
        for n in more_names:
            p = p.child(n)
        return p

    def index(self, i: int) -> Path:
        """A list element of this path (``[i]``)."""
        return Path._element("", str(i), self)

    def key(self, k: str) -> Path:
        """A map entry of this path (``[k]``); keys are not quoted, as upstream."""
        return Path._element("", k, self)

    def root(self) -> Path:
        p = self
        while p.parent is not None:
            p = p.parent
        return p

    def __str__(self) -> str:
        return self._str

    def __repr__(self) -> str:
        return f"Path({self._str!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and other._str == self._str

    def __hash__(self) -> int:
        return hash(self._str)


_MAX_CACHED_CHILDREN: Final = 64


def _render(parent: Path | None, name: str, index: str | None) -> str:
    # Upstream: an element with an empty name is a subscript, even at the root.
    if name:
        return name if parent is None else f"{parent._str}.{name}"
    sub = f"[{index or ''}]"
    return sub if parent is None else parent._str + sub


def path_str(path: Path | str | None) -> str:
    """``(*Path).String()``, including ``<nil>`` for a nil path; strings pass through."""
    if path is None:
        return "<nil>"
    return path if isinstance(path, str) else path._str


def child_of(path: Path | None, name: str) -> Path:
    """``path.Child(name)`` where a nil path yields a new root, as upstream."""
    return Path(name) if path is None else path.child(name)


class ErrorType(StrEnum):
    """Machine-readable reasons; the values are the ``StatusCause.reason`` strings."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    TOO_FEW = "FieldValueTooFew"
    INTERNAL = "InternalError"
    TYPE_INVALID = "FieldValueTypeInvalid"
    TOO_SHORT = "FieldValueTooShort"

    @property
    def message(self) -> str:
        """The canonical human text (``ErrorType.String()``)."""
        return _TYPE_MESSAGES[self]

    @property
    def reason(self) -> str:
        """The ``StatusCause.reason`` (``CauseType``) string, e.g. ``FieldValueInvalid``."""
        return self.value


_TYPE_MESSAGES: Final[dict[ErrorType, str]] = {
    ErrorType.NOT_FOUND: "Not found",
    ErrorType.REQUIRED: "Required value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.TOO_FEW: "Too few",
    ErrorType.INTERNAL: "Internal error",
    ErrorType.TYPE_INVALID: "Invalid value",
    ErrorType.TOO_SHORT: "Too short",
}

# Types whose body never shows the bad value.
_NO_VALUE_TYPES: Final = frozenset(
    {
        ErrorType.REQUIRED,
        ErrorType.FORBIDDEN,
        ErrorType.TOO_LONG,
        ErrorType.TOO_SHORT,
        ErrorType.INTERNAL,
    }
)


class _OmitValue:
    """Marker for a bad value that must not be printed (upstream ``omitValue``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "OMIT_VALUE"


OMIT_VALUE: Final = _OmitValue()


class OrderedStruct(dict[str, Any]):
    """A dict rendered in insertion order, like a Go struct (Go maps render key-sorted)."""


class FieldError:
    """One field-level validation error (upstream ``*field.Error``)."""

    __slots__ = ("bad_value", "detail", "field", "origin", "type")

    def __init__(
        self,
        type: ErrorType,
        field: str,
        bad_value: Any = "",
        detail: str = "",
        origin: str = "",
    ) -> None:
        self.type = type
        self.field = field
        self.bad_value = bad_value
        self.detail = detail
        self.origin = origin

    def error_body(self) -> str:
        """The message without the field name (``ErrorBody()``), used in StatusCause."""
        t = self.type
        if t in _NO_VALUE_TYPES or self.bad_value is OMIT_VALUE:
            s = t.message
        else:
            s = f"{t.message}: {render_value(self.bad_value)}"
        if self.detail:
            s += ": " + self.detail
        return s

    def error_message(self) -> str:
        """``field: body``, exactly as upstream ``(*Error).Error()``."""
        return f"{self.field}: {self.error_body()}"

    def __str__(self) -> str:
        return self.error_message()

    def __repr__(self) -> str:
        return f"FieldError({self.type.name}, {self.field!r}, {self.bad_value!r}, {self.detail!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldError):
            return NotImplemented
        return (
            self.type == other.type
            and self.field == other.field
            and self.bad_value == other.bad_value
            and self.detail == other.detail
        )

    __hash__ = None  # type: ignore[assignment]


# --- constructors (upstream names, snake_case) ---------------------------------------------


def type_invalid(path: Path | str | None, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.TYPE_INVALID, path_str(path), value, detail)


def required(path: Path | str | None, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, path_str(path), "", detail)


def duplicate(path: Path | str | None, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, path_str(path), value)


def invalid(path: Path | str | None, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.INVALID, path_str(path), value, detail)


def not_supported(
    path: Path | str | None, value: Any, valid_values: Iterable[Any] = ()
) -> FieldError:
    """Detail lists the valid values, each quoted with Go ``strconv.Quote``."""
    quoted = [go_quote(v if isinstance(v, str) else _go_sprint(v)) for v in valid_values]
    detail = "supported values: " + ", ".join(quoted) if quoted else ""
    return FieldError(ErrorType.NOT_SUPPORTED, path_str(path), value, detail)


def forbidden(path: Path | str | None, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, path_str(path), "", detail)


def too_long(path: Path | str | None, value: Any = None, max_length: int = -1) -> FieldError:
    """Length in bytes; the value itself is never shown."""
    if max_length >= 0:
        msg = f"may not be more than {max_length} {'byte' if max_length == 1 else 'bytes'}"
    else:
        msg = "value is too long"
    return FieldError(ErrorType.TOO_LONG, path_str(path), "<value omitted>", msg)


def too_many(path: Path | str | None, actual_quantity: int, max_quantity: int) -> FieldError:
    if max_quantity >= 0:
        msg = f"must have at most {max_quantity} {'item' if max_quantity == 1 else 'items'}"
    else:
        msg = "has too many items"
    actual: Any = actual_quantity if actual_quantity >= 0 else OMIT_VALUE
    return FieldError(ErrorType.TOO_MANY, path_str(path), actual, msg)


def aggregate_message(errors: Iterable[object]) -> str:
    """``ErrorList.ToAggregate().Error()``: de-duplicated, ``[a, b]`` when more than one.

    This is the tail of an Invalid Status message (``Kind "name" is invalid: ...``).
    """
    seen: set[str] = set()
    msgs: list[str] = []
    for e in errors:
        m = str(e)
        if m not in seen:
            seen.add(m)
            msgs.append(m)
    if not msgs:
        return ""
    if len(msgs) == 1:
        return msgs[0]
    return "[" + ", ".join(msgs) + "]"


# --- Go value rendering --------------------------------------------------------------------


def render_value(value: Any) -> str:
    """A bad value as upstream ``ErrorBody`` prints it."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_format_float(value)
    return go_json(value)


_SHORT_ESCAPES: Final = {
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
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
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


_JSON_HTML: Final = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def _json_string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False).translate(_JSON_HTML)


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


def _go_sprint(v: Any) -> str:
    """``fmt.Sprint`` for the simple values used as enum members."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return go_format_float(v)
    return str(v)
