"""Regular expressions as Go's ``regexp`` package compiles and matches them.

kube-apiserver checks an OpenAPI ``pattern`` with ``regexp.Compile`` and
``MatchString``, and rejects a CRD whose pattern does not compile. Go's
package is a port of RE2, so kapi uses RE2 itself (the ``google-re2``
bindings): the same syntax (``\\pL``, ``\\p{Greek}``, ``[[:alpha:]]``,
``\\Q...\\E``; no backreferences or lookaround), the same matching (``$`` is
the end of the text, ASCII ``\\d\\s\\w\\b``), and matching in linear time, so
no pattern can make a request backtrack for ever.

Where Go's parser rejects what RE2's accepts, this module rejects it first:
``\\C``, capture names outside ``[A-Za-z0-9_]`` (and ``(?<=``, which Go reads
as a named capture) and repeat counts too long to parse. RE2's error texts
are given Go's wording, ``error parsing regexp: <code>: `<expr>```.

Known differences left: Go's parse-tree depth limit (1000 nested groups) is
not checked, RE2 refuses programs over its 8 MiB memory budget (Go allows
more, e.g. ``\\pL{1000}``), and each follows its own Unicode version for
``\\p`` classes.
"""

from __future__ import annotations

import re
from typing import Final

import re2

# The pybind class under re2's Python wrapper: its ``Match`` answers a search in a
# quarter of the time of the wrapper's ``search`` (which builds a match object).
from re2 import _re2

# Go's ``syntax.ErrorCode`` texts.
INVALID_ESCAPE: Final = "invalid escape sequence"
INVALID_NAMED_CAPTURE: Final = "invalid named capture"
INVALID_REPEAT_SIZE: Final = "invalid repeat count"
MISSING_PAREN: Final = "missing closing )"
UNEXPECTED_PAREN: Final = "unexpected )"
LARGE: Final = "expression too large"

#: RE2's ``RegexpStatus`` code texts in Go's words.
_GO_CODES: Final = {
    "unexpected error": "regexp/syntax: internal error",
    "invalid escape sequence": INVALID_ESCAPE,
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": MISSING_PAREN,
    "unexpected )": UNEXPECTED_PAREN,
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": INVALID_REPEAT_SIZE,
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": INVALID_NAMED_CAPTURE,
    "pattern too large - compile failed": LARGE,
}
#: Errors Go reports with the whole expression rather than a part of it.
_WHOLE_EXPRESSION: Final = frozenset({MISSING_PAREN, UNEXPECTED_PAREN, LARGE})

_OPTIONS: Final = re2.Options()
_OPTIONS.log_errors = False  # errors are returned to the client, not logged
_OPTIONS.never_capture = True  # only whether it matches is asked
_UNANCHORED: Final = _re2.RE2.Anchor.UNANCHORED
_NO_MATCH: Final = (-1, -1)

#: Go's ``isValidCaptureName``.
_CAPTURE_NAME: Final = re.compile(r"[A-Za-z0-9_]+")
#: A repeat ``{n}``, ``{n,}`` or ``{n,m}`` as Go's ``parseRepeat`` reads it (no leading zeros).
_REPEAT: Final = re.compile(r"\{(0|[1-9][0-9]*)(?:,(0|[1-9][0-9]*)?)?\}")
#: Go's ``parseInt`` gives up on numbers of this many digits and the repeat is invalid.
_OVERFLOW_DIGITS: Final = 10


class RegexpError(ValueError):
    """A pattern Go's ``regexp.Compile`` rejects; ``str()`` is Go's error text."""

    def __init__(self, code: str, expr: str) -> None:
        super().__init__(f"error parsing regexp: {code}: `{expr}`")
        self.code = code
        self.expr = expr


class Regexp:
    """A compiled pattern."""

    __slots__ = ("_re", "pattern")

    def __init__(self, pattern: str, compiled: _re2.RE2) -> None:
        self.pattern = pattern
        self._re = compiled

    def matches(self, text: str) -> bool:
        """Go's ``MatchString``: does the pattern match anywhere in ``text``?"""
        data = _utf8(text)
        return self._re.Match(_UNANCHORED, data, 0, len(data))[0] != _NO_MATCH


def compile_regexp(pattern: str) -> Regexp:
    """Go's ``regexp.Compile``; raises :class:`RegexpError` with Go's message."""
    go_only = _go_only_error(pattern)
    if go_only is None:
        return Regexp(pattern, _compile_re2(pattern, pattern))
    # Go stops at the first error from the left: one RE2 finds before this point
    # wins, except the missing ')' of a prefix cut short.
    offset, error = go_only
    try:
        _compile_re2(pattern[:offset], pattern)
    except RegexpError as e:
        if e.code != MISSING_PAREN:
            raise
    raise error


def _compile_re2(pattern: str, whole: str) -> _re2.RE2:
    compiled = _re2.RE2(_utf8(pattern), _OPTIONS)
    if compiled.ok():
        return compiled
    text = compiled.error().decode("utf-8", "replace")
    code, _, expr = text.partition(": ")
    go_code = _GO_CODES.get(code, code)
    raise RegexpError(go_code, whole if go_code in _WHOLE_EXPRESSION else expr)


def _utf8(text: str) -> bytes:
    """UTF-8 for RE2; a lone surrogate (YAML can carry one) stays a bad byte, as in Go."""
    return text.encode("utf-8", "surrogatepass")


def _go_only_error(pattern: str) -> tuple[int, RegexpError] | None:
    """The first construct RE2 accepts (or words differently) that Go rejects, and where."""
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if pattern.startswith("\\C", i):  # any byte: RE2 only
                return i, RegexpError(INVALID_ESCAPE, "\\C")
            if pattern.startswith("\\Q", i):  # literal text up to \E
                end = pattern.find("\\E", i + 2)
                i = n if end < 0 else end + 2
            else:
                i = _escape_end(pattern, i)
        elif c == "[":
            i = _class_end(pattern, i)
        elif c == "(" and (named := _named_capture_error(pattern, i)) is not None:
            return i, named
        elif c == "{" and (m := _REPEAT.match(pattern, i)) is not None:
            if any(len(count) >= _OVERFLOW_DIGITS for count in m.groups() if count):
                return i, RegexpError(INVALID_REPEAT_SIZE, m.group())
            i = m.end()
        else:
            i += 1
    return None


def _named_capture_error(pattern: str, i: int) -> RegexpError | None:
    """Go's check of ``(?P<name>`` and ``(?<name>`` at ``i`` (``(?<=`` included)."""
    if pattern.startswith("(?P<", i) and len(pattern) - i > 4:
        start = i + 4
    elif pattern.startswith("(?<", i) and len(pattern) - i > 3:
        start = i + 3
    else:
        return None
    end = pattern.find(">", start)
    if end < 0:
        return RegexpError(INVALID_NAMED_CAPTURE, pattern[i:])
    if _CAPTURE_NAME.fullmatch(pattern, start, end) is None:
        return RegexpError(INVALID_NAMED_CAPTURE, pattern[i : end + 1])
    return None


def _escape_end(pattern: str, i: int) -> int:
    """Past the escape at ``i``; ``\\x{...}`` and ``\\p{...}`` end at their brace."""
    if pattern[i + 1 : i + 2] in ("x", "p", "P") and pattern.startswith("{", i + 2):
        end = pattern.find("}", i + 3)
        return len(pattern) if end < 0 else end + 1
    return i + 2


def _class_end(pattern: str, i: int) -> int:
    """Past the character class opening at ``i``, as Go's ``parseClass`` reads it."""
    j, n = i + 1, len(pattern)
    if pattern.startswith("^", j):
        j += 1
    first = True  # a ']' first in the class is a literal
    while j < n and (pattern[j] != "]" or first):
        first = False
        named = pattern.find(":]", j + 2) if pattern.startswith("[:", j) else -1
        if named >= 0:
            j = named + 2
        elif pattern[j] == "\\":
            j = _escape_end(pattern, j)
        else:
            j += 1
    return j + 1
