"""Label selectors: parsing, matching and ``metav1.LabelSelector`` conversion.

The Python counterpart of ``k8s.io/apimachinery/pkg/labels`` (selector.go) and
``metav1.LabelSelectorAsSelector``. The lexer and parser follow upstream step
by step so that accepted inputs, canonical strings and error messages are the
same (``?labelSelector=`` errors reach clients verbatim in a 400 Status).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from kapi.apimachinery.field_errors import (
    FieldError,
    Path,
    aggregate_message,
    child_of,
    invalid,
    not_supported,
)
from kapi.apimachinery.gotext import go_quote
from kapi.apimachinery.selection import (
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    AndSelector,
    MatchesNothing,
)
from kapi.apimachinery.validation import is_qualified_name, is_valid_label_value

_UNARY_OPERATORS: Final = (EXISTS, DOES_NOT_EXIST)
_BINARY_OPERATORS: Final = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_VALID_OPERATORS: Final = _BINARY_OPERATORS + _UNARY_OPERATORS

_INT64_RE: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1


def _parse_int64(s: str) -> int | None:
    """Go ``strconv.ParseInt(s, 10, 64)``; None on error."""
    if not _INT64_RE.fullmatch(s):
        return None
    v = int(s)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


class SelectorParseError(ValueError):
    """An invalid selector or requirement; ``str()`` is the upstream error text.

    ``errors`` holds the field errors when the cause was requirement validation.
    """

    def __init__(self, message: str, errors: Sequence[FieldError] = ()) -> None:
        super().__init__(message)
        self.errors = list(errors)


class Requirement:
    """One ``key op values`` term of a selector (upstream ``labels.Requirement``)."""

    __slots__ = ("_set", "key", "operator", "values")

    def __init__(self, key: str, operator: str, values: Sequence[str]) -> None:
        self.key = key
        self.operator = operator
        self.values: tuple[str, ...] = tuple(values)
        self._set = frozenset(self.values)

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            v = labels.get(self.key)
            return v is not None and v in self._set
        if op in (NOT_IN, NOT_EQUALS):
            v = labels.get(self.key)
            return v is None or v not in self._set
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            v = labels.get(self.key)
            if v is None or len(self.values) != 1:
                return False
            have, want = _parse_int64(v), _parse_int64(self.values[0])
            if have is None or want is None:
                return False
            return have > want if op == GREATER_THAN else have < want
        return False

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        vals = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if op == IN:
            return f"{self.key} in ({vals})"
        if op == NOT_IN:
            return f"{self.key} notin ({vals})"
        sym = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{sym}{vals}"

    def __repr__(self) -> str:
        return f"Requirement({self.key!r}, {self.operator!r}, {list(self.values)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Requirement):
            return NotImplemented
        return (self.key, self.operator, self.values) == (other.key, other.operator, other.values)

    def __hash__(self) -> int:
        return hash((self.key, self.operator, self.values))


def _requirement_errors(
    key: str, operator: str, values: Sequence[str] | None, path: Path | None
) -> list[FieldError]:
    """The checks of upstream ``NewRequirement``, in its order."""
    errs: list[FieldError] = []
    key_msgs = is_qualified_name(key)
    if key_msgs:
        errs.append(invalid(child_of(path, "key"), key, "; ".join(key_msgs)))
    values_path = child_of(path, "values")
    # A nil slice marshals as null, an empty one as [].
    shown: Any = None if values is None else list(values)
    vals = values or ()
    if operator in (IN, NOT_IN):
        if not vals:
            errs.append(
                invalid(
                    values_path, shown, "for 'in', 'notin' operators, values set can't be empty"
                )
            )
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(vals) != 1:
            errs.append(
                invalid(values_path, shown, "exact-match compatibility requires one single value")
            )
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if vals:
            errs.append(
                invalid(
                    values_path, shown, "values set must be empty for exists and does not exist"
                )
            )
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(vals) != 1:
            errs.append(
                invalid(
                    values_path, shown, "for 'Gt', 'Lt' operators, exactly one value is required"
                )
            )
        for i, v in enumerate(vals):
            if _parse_int64(v) is None:
                errs.append(
                    invalid(
                        values_path.index(i),
                        v,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    else:
        errs.append(not_supported(child_of(path, "operator"), operator, _VALID_OPERATORS))
    for i, v in enumerate(vals):
        msgs = is_valid_label_value(v)
        if msgs:
            errs.append(invalid(values_path.index(i).key(key), v, "; ".join(msgs)))
    return errs


def new_requirement(
    key: str, operator: str, values: Sequence[str] | None = None, *, path: Path | None = None
) -> Requirement:
    """Validated constructor (upstream ``NewRequirement``); raises ``SelectorParseError``."""
    errs = _requirement_errors(key, operator, values, path)
    if errs:
        raise SelectorParseError(aggregate_message(errs), errs)
    return Requirement(key, operator, values or ())


LabelMatcher = Callable[[Mapping[str, str]], bool]


def _never(_: Mapping[str, str]) -> bool:
    return False


def _always(_: Mapping[str, str]) -> bool:
    return True


def compile_requirements(requirements: Sequence[Requirement]) -> LabelMatcher:
    """One function that answers as ``all(r.matches(labels) for r in requirements)``.

    A selector can hold thousands of terms (a URL carries tens of kilobytes), and
    a list applies it to every stored object; evaluating each term with a method
    call costs terms x objects.  Grouping the terms by key and kind once makes a
    match cost about the size of the object's labels instead:

    * ``=``, ``==``, ``in``: per key, the values allowed (the intersection over
      the key's terms); every such key must be present with one of them;
    * ``!=``, ``notin``: per key, the values refused (the union); only the
      object's own labels need looking at;
    * ``exists`` / ``!``: key sets, checked by containment / disjointness;
    * ``gt`` / ``lt``: per key, the tightest bounds (an unparsable bound matches
      nothing, as the term itself never matches then).

    A label whose value is None counts as missing (``labels.get``), as in
    :meth:`Requirement.matches`.
    """
    allowed: dict[str, frozenset[str]] = {}
    refused: dict[str, set[str]] = {}
    present: set[str] = set()
    absent: set[str] = set()
    lower: dict[str, int] = {}  # value must be > lower[key]
    upper: dict[str, int] = {}  # value must be < upper[key]
    for r in requirements:
        op, key = r.operator, r.key
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            have = allowed.get(key)
            allowed[key] = r._set if have is None else have & r._set
        elif op in (NOT_IN, NOT_EQUALS):
            refused.setdefault(key, set()).update(r.values)
        elif op == EXISTS:
            present.add(key)
        elif op == DOES_NOT_EXIST:
            absent.add(key)
        elif op in (GREATER_THAN, LESS_THAN):
            bound = _parse_int64(r.values[0]) if len(r.values) == 1 else None
            if bound is None:
                return _never
            if op == GREATER_THAN:
                lower[key] = max(bound, lower.get(key, bound))
            else:
                upper[key] = min(bound, upper.get(key, bound))
        else:
            return _never
    if any(not values for values in allowed.values()) or not absent.isdisjoint(
        present.union(allowed, lower, upper)
    ):
        return _never  # a key both required and forbidden, or no value allowed
    # Keys that must be present, for a quick count check before looking at values.
    required = len(present.union(allowed, lower, upper))
    allowed_items = tuple(allowed.items())
    refused_map = {k: frozenset(v) for k, v in refused.items() if v}
    present_keys = tuple(present - allowed.keys() - lower.keys() - upper.keys())
    absent_keys = frozenset(absent)
    bounded = tuple((k, lower.get(k), upper.get(k)) for k in sorted(lower.keys() | upper.keys()))
    if not (required or refused_map or absent_keys):
        return _always

    def matches(labels: Mapping[str, str]) -> bool:
        if required > len(labels):
            return False
        get = labels.get
        for key, values in allowed_items:
            v = get(key)
            if v is None or v not in values:
                return False
        if refused_map:
            if len(refused_map) < len(labels):
                for key, values in refused_map.items():
                    v = get(key)
                    if v is not None and v in values:
                        return False
            else:
                for key, v in labels.items():
                    refused_values = refused_map.get(key)
                    if refused_values is not None and v is not None and v in refused_values:
                        return False
        for key in present_keys:
            if key not in labels:
                return False
        if absent_keys and not absent_keys.isdisjoint(labels):
            return False
        for key, low, high in bounded:
            v = get(key)
            n = None if v is None else _parse_int64(v)
            if n is None or (low is not None and n <= low) or (high is not None and n >= high):
                return False
        return True

    return matches


class Selector(AndSelector[Requirement]):
    """A conjunction of requirements, sorted by key (upstream ``internalSelector``).

    :meth:`matches` compiles the requirements on first use (see
    :func:`compile_requirements`), so a selector parsed once per request is
    grouped once however many objects it is applied to.
    """

    __slots__ = ("_matcher",)

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        super().__init__(sorted(requirements, key=lambda r: r.key))
        self._matcher: LabelMatcher | None = None

    def compile(self) -> LabelMatcher:
        """The matcher :meth:`matches` uses, made now if it was not yet."""
        matcher = self._matcher
        if matcher is None:
            matcher = self._matcher = compile_requirements(self.requirements)
        return matcher

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        return (self._matcher or self.compile())(labels or {})


class _NothingSelector(MatchesNothing, Selector):
    """Matches no labels; what a nil ``metav1.LabelSelector`` converts to."""

    __slots__ = ()

    def compile(self) -> LabelMatcher:
        return _never


_EVERYTHING: Final = Selector()
_NOTHING: Final = _NothingSelector()


# --- lexer / parser --------------------------------------------------------------------------

# Tokens.
_ERROR, _EOS, _CPAR, _COMMA, _NOT, _DEQ, _EQ, _GT, _ID, _IN, _LT, _NEQ, _NOTIN, _OPAR = range(14)

_STRING_TO_TOKEN: Final = {
    ")": _CPAR,
    ",": _COMMA,
    "!": _NOT,
    "==": _DEQ,
    "=": _EQ,
    ">": _GT,
    "in": _IN,
    "<": _LT,
    "!=": _NEQ,
    "notin": _NOTIN,
    "(": _OPAR,
}
_SPECIAL: Final = frozenset("=!(),><")
_WHITESPACE: Final = frozenset(" \t\r\n")
_NUL: Final = "\x00"


def _scan(s: str) -> list[tuple[int, str]]:
    """Tokenise like upstream ``Lexer``, which reads a NUL byte as end of input."""
    items: list[tuple[int, str]] = []
    pos = 0
    n = len(s)
    while True:
        while pos < n and s[pos] in _WHITESPACE:
            pos += 1
        if pos >= n or s[pos] == _NUL:
            items.append((_EOS, ""))
            return items
        if s[pos] in _SPECIAL:
            # The longest run of special characters that is still a token.
            buf = ""
            last: tuple[int, str] = (_ERROR, "")
            while pos < n:
                c = s[pos]
                pos += 1
                if c == _NUL:
                    break
                if c not in _SPECIAL:
                    pos -= 1
                    break
                buf += c
                tok = _STRING_TO_TOKEN.get(buf)
                if tok is not None:
                    last = (tok, buf)
                elif last[0] != _ERROR:
                    pos -= 1
                    break
            # Every single special character is a token, so `last` is always set.
            items.append(last)
        else:
            start = j = pos
            while j < n:
                c = s[j]
                if c == _NUL:  # consumed, as upstream
                    pos = j + 1
                    break
                if c in _SPECIAL or c in _WHITESPACE:
                    pos = j
                    break
                j += 1
            else:
                pos = n
            lit = s[start:j]
            items.append((_STRING_TO_TOKEN.get(lit, _ID), lit))


class _Parser:
    __slots__ = ("items", "path", "pos")

    def __init__(self, s: str, path: Path | None) -> None:
        self.items = _scan(s)
        self.pos = 0
        self.path = path

    def lookahead(self, values: bool) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        if values and tok in (_IN, _NOTIN):
            tok = _ID
        return tok, lit

    def consume(self, values: bool) -> tuple[int, str]:
        tok, lit = self.items[self.pos]
        self.pos += 1
        if values and tok in (_IN, _NOTIN):
            tok = _ID
        return tok, lit

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.lookahead(True)
            if tok in (_ID, _NOT):
                try:
                    r = self.parse_requirement()
                except SelectorParseError as e:
                    raise SelectorParseError(f"unable to parse requirement: {e}", e.errors) from e
                reqs.append(r)
                t, lit2 = self.consume(True)
                if t == _EOS:
                    return reqs
                if t == _COMMA:
                    t2, l2 = self.lookahead(True)
                    if t2 not in (_ID, _NOT):
                        raise SelectorParseError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise SelectorParseError(f"found '{lit2}', expected: ',' or 'end of string'")
            elif tok == _EOS:
                return reqs
            else:
                raise SelectorParseError(
                    f"found '{lit}', expected: !, identifier, or 'end of string'"
                )

    def parse_requirement(self) -> Requirement:
        key, op = self.parse_key_and_infer_operator()
        if op in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, op, [], path=self.path)
        op = self.parse_operator()
        values = self.parse_values() if op in (IN, NOT_IN) else self.parse_exact_value()
        return new_requirement(key, op, sorted(values), path=self.path)

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        op = ""
        tok, lit = self.consume(True)
        if tok == _NOT:
            op = DOES_NOT_EXIST
            tok, lit = self.consume(True)
        if tok != _ID:
            raise SelectorParseError(f"found '{lit}', expected: identifier")
        msgs = is_qualified_name(lit)
        if msgs:
            err = invalid(self.path, lit, "; ".join(msgs))
            raise SelectorParseError(str(err), [err])
        t, _ = self.lookahead(True)
        if t in (_EOS, _COMMA) and op != DOES_NOT_EXIST:
            op = EXISTS
        return lit, op

    def parse_operator(self) -> str:
        tok, lit = self.consume(False)
        op = _TOKEN_TO_OPERATOR.get(tok)
        if op is None:
            raise SelectorParseError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return op

    def parse_values(self) -> set[str]:
        tok, lit = self.consume(True)
        if tok != _OPAR:
            raise SelectorParseError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead(True)
        if tok in (_ID, _COMMA):
            s = self.parse_identifiers_list()
            if self.consume(True)[0] != _CPAR:
                raise SelectorParseError(f"found '{lit}', expected: ')'")
            return s
        if tok == _CPAR:
            self.consume(True)
            return {""}
        raise SelectorParseError(f"found '{lit}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        s: set[str] = set()
        while True:
            tok, lit = self.consume(True)
            if tok == _ID:
                s.add(lit)
                tok2, lit2 = self.lookahead(True)
                if tok2 == _COMMA:
                    continue
                if tok2 == _CPAR:
                    return s
                raise SelectorParseError(f"found '{lit2}', expected: ',' or ')'")
            if tok == _COMMA:
                if not s:
                    s.add("")  # "(,"
                tok2, _ = self.lookahead(True)
                if tok2 == _CPAR:
                    s.add("")  # ",)"
                    return s
                if tok2 == _COMMA:
                    s.add("")  # ",,"
                continue
            raise SelectorParseError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        tok, _ = self.lookahead(True)
        if tok in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume(True)
        if tok == _ID:
            return {lit}
        raise SelectorParseError(f"found '{lit}', expected: identifier")


_TOKEN_TO_OPERATOR: Final = {
    _IN: IN,
    _EQ: EQUALS,
    _DEQ: DOUBLE_EQUALS,
    _GT: GREATER_THAN,
    _LT: LESS_THAN,
    _NOTIN: NOT_IN,
    _NEQ: NOT_EQUALS,
}


def parse(selector: str, *, path: Path | None = None) -> Selector:
    """Parse a label selector string (``labels.Parse``).

    Grammar: comma-separated requirements, each ``[!]key``, ``key (=|==|!=) value``,
    ``key (in|notin) (v1,v2,...)`` or ``key (>|<) integer``. Raises
    ``SelectorParseError`` with upstream's message.
    """
    return Selector(_Parser(selector, path).parse())


parse_selector = parse


# --- metav1.LabelSelector --------------------------------------------------------------------

_LABEL_SELECTOR_OPERATORS: Final = {
    "In": IN,
    "NotIn": NOT_IN,
    "Exists": EXISTS,
    "DoesNotExist": DOES_NOT_EXIST,
}


def label_selector_as_selector(label_selector: Mapping[str, Any] | None) -> Selector:
    """``metav1.LabelSelectorAsSelector``: None matches nothing, empty matches everything."""
    if label_selector is None:
        return _NOTHING
    match_labels: Mapping[str, str] = label_selector.get("matchLabels") or {}
    match_expressions: Sequence[Mapping[str, Any]] = label_selector.get("matchExpressions") or ()
    if not match_labels and not match_expressions:
        return _EVERYTHING
    reqs = [new_requirement(k, EQUALS, [v]) for k, v in match_labels.items()]
    for expr in match_expressions:
        raw_op = expr.get("operator") or ""
        op = _LABEL_SELECTOR_OPERATORS.get(raw_op)
        if op is None:
            raise SelectorParseError(f"{go_quote(raw_op)} is not a valid label selector operator")
        values = expr.get("values")
        # Upstream copies into a nil slice, so an empty list reports as null.
        reqs.append(new_requirement(expr.get("key") or "", op, list(values) if values else None))
    return Selector(reqs)
