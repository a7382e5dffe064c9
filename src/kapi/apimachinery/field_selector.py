"""Field selectors: parsing, matching and field-label checks.

The Python counterpart of ``k8s.io/apimachinery/pkg/fields``. Terms are
``field=value``, ``field==value`` or ``field!=value`` joined by ',' (AND);
values escape ``\\``, ``,`` and ``=`` with a backslash. Error texts match
upstream because they are returned to clients in 400 Status messages.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Final

from kapi.apimachinery.selection import (
    DOUBLE_EQUALS,
    EQUALS,
    NOT_EQUALS,
    AndSelector,
)

# `!=` and `==` are tried before `=` so no '=' is left on either side.
_TERM_OPERATORS: Final = (NOT_EQUALS, DOUBLE_EQUALS, EQUALS)

TransformFunc = Callable[[str, str], tuple[str, str]]
"""(field, value) -> (field, value); raises to reject the term."""


class FieldSelectorParseError(ValueError):
    """An invalid field selector; ``str()`` is the upstream message."""


class FieldLabelNotSupportedError(ValueError):
    """A field label the resource cannot select on (``field label not supported: x``)."""

    def __init__(self, label: str) -> None:
        super().__init__(f"field label not supported: {label}")
        self.label = label


class Requirement:
    """One term; ``operator`` is ``=`` or ``!=`` (``==`` parses as ``=``)."""

    __slots__ = ("field", "operator", "value")

    def __init__(self, field: str, operator: str, value: str) -> None:
        self.field = field
        self.operator = operator
        self.value = value

    def matches(self, fields: Mapping[str, str]) -> bool:
        # Upstream Fields.Get returns "" for a missing field.
        have = fields.get(self.field, "")
        return have == self.value if self.operator == EQUALS else have != self.value

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_value(self.value)}"

    def __repr__(self) -> str:
        return f"Requirement({self.field!r}, {self.operator!r}, {self.value!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Requirement):
            return NotImplemented
        return (self.field, self.operator, self.value) == (other.field, other.operator, other.value)

    def __hash__(self) -> int:
        return hash((self.field, self.operator, self.value))


class Selector(AndSelector[Requirement]):
    """An AND of terms, in parse order (the parser sorts the raw terms first)."""

    __slots__ = ("_fields", "_matcher")

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        super().__init__(requirements)
        self._matcher: Callable[[Mapping[str, str]], bool] | None = None
        self._fields = tuple(dict.fromkeys(r.field for r in self.requirements))

    def compile(self) -> Callable[[Mapping[str, str]], bool]:
        """The matcher :meth:`matches` uses, made now if it was not yet."""
        matcher = self._matcher
        if matcher is None:
            matcher = self._matcher = _compile(self.requirements)
        return matcher

    def matches(self, fields: Mapping[str, str]) -> bool:
        return (self._matcher or self.compile())(fields)

    def fields(self) -> tuple[str, ...]:
        """The distinct fields the terms name, in order of first appearance."""
        return self._fields

    def requires_exact_match(self, field: str) -> tuple[str, bool]:
        """The value ``field`` must equal, if some ``=`` term pins it."""
        for r in self.requirements:
            if r.operator == EQUALS and r.field == field:
                return r.value, True
        return "", False

    def exact(self, field: str) -> str | None:
        """``requires_exact_match`` as a value or None."""
        value, found = self.requires_exact_match(field)
        return value if found else None

    def transform(self, fn: TransformFunc) -> Selector:
        """Rewrite each term; a term mapped to ("", "") is dropped, as upstream."""
        out: list[Requirement] = []
        for r in self.requirements:
            f, v = fn(r.field, r.value)
            if f or v:
                out.append(Requirement(f, r.operator, v))
        return Selector(out)


def _compile(requirements: Sequence[Requirement]) -> Callable[[Mapping[str, str]], bool]:
    """``all(r.matches(fields) ...)`` as one check per distinct field.

    Per field, the ``=`` terms leave at most one value it may have (two different
    ones match nothing) and the ``!=`` terms a set it may not, so thousands of
    terms on a handful of fields cost a handful of lookups per object.
    """
    wanted: dict[str, str] = {}
    refused: dict[str, set[str]] = {}
    for r in requirements:
        if r.operator == EQUALS:
            if wanted.setdefault(r.field, r.value) != r.value:
                return lambda _: False
        else:
            refused.setdefault(r.field, set()).add(r.value)
    for field, value in wanted.items():
        if value in refused.get(field, ()):
            return lambda _: False
    checks = tuple(
        (field, wanted.get(field), frozenset(refused.get(field, ())))
        for field in dict.fromkeys([*wanted, *refused])
    )

    def matches(fields: Mapping[str, str]) -> bool:
        for field, want, refuse in checks:
            have = fields.get(field, "")
            if (want is not None and have != want) or have in refuse:
                return False
        return True

    return matches


_ESCAPES: Final = str.maketrans({"\\": "\\\\", ",": "\\,", "=": "\\="})


def escape_value(value: str) -> str:
    """Escape ``\\``, ``,`` and ``=`` so any literal can be a selector value."""
    return value.translate(_ESCAPES)


def unescape_value(value: str) -> str:
    """Undo ``escape_value``; unescaped ``,``/``=`` or unknown escapes are errors."""
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    out: list[str] = []
    in_slash = False
    for c in value:
        if in_slash:
            if c in "\\,=":
                out.append(c)
            else:
                raise FieldSelectorParseError(
                    f"invalid field selector: invalid escape sequence: \\{c}"
                )
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c in ",=":
            # Upstream formats the rune with %v, i.e. as its code point number.
            raise FieldSelectorParseError(
                f"invalid field selector: unescaped character in value: {ord(c)}"
            )
        else:
            out.append(c)
    if in_slash:
        raise FieldSelectorParseError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(selector: str) -> list[str]:
    """Split on commas that are not backslash-escaped; escapes stay in the terms."""
    if not selector:
        return []
    if "\\" not in selector:
        return selector.split(",")
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, c in enumerate(selector):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(selector[start:i])
            start = i + 1
    terms.append(selector[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """(lhs, op, rhs) at the first operator; the lhs has no escaping."""
    for i in range(len(term)):
        for op in _TERM_OPERATORS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


def parse_selector(selector: str) -> Selector:
    """Parse a field selector string (``fields.ParseSelector``)."""
    items: list[Requirement] = []
    for part in sorted(_split_terms(selector)):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise FieldSelectorParseError(
                f"invalid selector: '{selector}'; can't understand '{part}'"
            )
        lhs, op, rhs = split
        value = unescape_value(rhs)
        items.append(Requirement(lhs, NOT_EQUALS if op == NOT_EQUALS else EQUALS, value))
    return Selector(items)


def field_label_converter(
    allowed: Collection[str], renames: Mapping[str, str] | None = None
) -> TransformFunc:
    """A ``TransformFunc`` accepting only ``allowed`` labels, for ``Selector.transform``.

    ``renames`` maps a label to the one the internal object knows it by (upstream's
    field label conversion functions, such as events.k8s.io's ``regarding.*``).
    """
    renames = renames or {}

    def convert(label: str, value: str) -> tuple[str, str]:
        if label not in allowed:
            raise FieldLabelNotSupportedError(label)
        return renames.get(label, label), value

    return convert


# Names other modules use.
FieldSelector = Selector
