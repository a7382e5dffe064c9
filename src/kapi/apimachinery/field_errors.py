"""Field paths and field-level validation errors.

The Python counterpart of ``k8s.io/apimachinery/pkg/util/validation/field``.
Clients match on these strings (``Status.details.causes`` and the aggregated
``Status.message``), so rendering follows upstream ``(*Error).Error()`` and
``ErrorBody()`` byte for byte, including how bad values are printed: Go's
``%q`` for strings, ``%v`` for numbers and booleans, and ``encoding/json`` for
everything else.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any, Final

from kapi.apimachinery.gotext import go_format_float, go_json, go_quote, go_sprint


class Path:
    """An immutable path from a root to a field, rendered like upstream ``field.Path``.

    ``Path("metadata").child("labels").key("app")`` renders ``metadata.labels[app]``;
    ``Path("spec", "items").index(0)`` renders ``spec.items[0]``.
    """

    __slots__ = ("_children", "_str", "_subscripts", "name", "parent")

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
        self._subscripts: dict[int | str, Path] | None = None

    @staticmethod
    def _element(name: str, index: str | None, parent: Path | None) -> Path:
        p = object.__new__(Path)
        p.name = name
        p.parent = parent
        p._str = _render(parent, name, index)
        p._children = None
        p._subscripts = None
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
        """A list element of this path (``[i]``); memoised as fields are, so the fields
        of ``spec.containers[0]`` are built once too."""
        return self._subscript(i)

    def key(self, k: str) -> Path:
        """A map entry of this path (``[k]``); keys are not quoted, as upstream."""
        return self._subscript(k)

    def _subscript(self, sub: int | str) -> Path:
        subscripts = self._subscripts
        if subscripts is None:
            subscripts = self._subscripts = {}
        p = subscripts.get(sub)
        if p is None:
            p = Path._element("", str(sub), self)
            if len(subscripts) < _MAX_CACHED_CHILDREN:  # bounded: keys come from users
                subscripts[sub] = p
        return p

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
    quoted = [go_quote(v if isinstance(v, str) else go_sprint(v)) for v in valid_values]
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


class GoSyntax:
    """A bad value of a Go type that ``ErrorBody`` prints with ``%#v`` (``uint64(0)`` as
    ``0x0``); ``text`` is that rendering."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoSyntax) and other.text == self.text

    __hash__ = None  # type: ignore[assignment]


def render_value(value: Any) -> str:
    """A bad value as upstream ``ErrorBody`` prints it."""
    if isinstance(value, GoSyntax):
        return value.text
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_format_float(value)
    return go_json(value)
