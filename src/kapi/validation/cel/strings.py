"""cel-go's strings extension (version 0 functions) and the Kubernetes list ``indexOf``.

cel-expr-python takes one declaration per function name, and its own strings
extension declares ``indexOf``/``lastIndexOf`` for strings only, leaving no
room for the list overloads of Kubernetes' lists library.  So kapi declares
the strings functions itself, with the list overloads under the same names,
and implements them here as cel-go v0.23 (what Kubernetes 1.33 builds on)
does: indexes count code points (Go's runes), out-of-range indexes are errors
worded as cel-go words them, ``trim`` removes what Go's ``unicode.IsSpace``
calls space, and ``split``/``replace`` follow Go's ``strings`` package.
"""

from __future__ import annotations

import string
from typing import Any, Final

#: Go's ``unicode.IsSpace``: ASCII and Latin-1 spaces, and Unicode's White_Space.
_GO_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


class StringsError(ValueError):
    """An evaluation error of a strings function; CEL turns it into an error value."""


def _out_of_range(index: int) -> StringsError:
    return StringsError(f"index out of range: {index}")


def char_at(s: str, index: int) -> str:
    if index < 0 or index > len(s):
        raise _out_of_range(index)
    return s[index : index + 1]


def index_of(s: str, sub: str, offset: int = 0) -> int:
    if not sub:
        return offset
    if offset < 0:
        raise _out_of_range(offset)
    if offset >= len(s):
        return -1
    return s.find(sub, offset)


def last_index_of(s: str, sub: str, offset: int | None = None) -> int:
    if offset is None:
        if not sub:
            return len(s)
        offset = len(s) - 1
    elif not sub:
        return offset
    if offset < 0:
        raise _out_of_range(offset)
    if offset >= len(s):
        return -1
    return s.rfind(sub, 0, offset + len(sub))


_TO_LOWER: Final = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_TO_UPPER: Final = str.maketrans(string.ascii_lowercase, string.ascii_uppercase)


def lower_ascii(s: str) -> str:
    return s.translate(_TO_LOWER)


def upper_ascii(s: str) -> str:
    return s.translate(_TO_UPPER)


def replace(s: str, old: str, new: str, n: int = -1) -> str:
    """Go's ``strings.Replace``: a negative ``n`` replaces all; an empty ``old`` matches
    before every code point and at the end, as in Python."""
    return s.replace(old, new, max(n, -1))


def split(s: str, sep: str, n: int = -1) -> list[str]:
    """Go's ``strings.SplitN``: ``n == 0`` gives no strings, ``n < 0`` all of them, else
    at most ``n``, the last holding the rest; an empty ``sep`` splits into code points."""
    if n == 0:
        return []
    if sep:
        return s.split(sep, n - 1 if n > 0 else -1)
    if n < 0 or n >= len(s):
        return list(s)
    return [*s[: n - 1], s[n - 1 :]]


def substring(s: str, start: int, end: int | None = None) -> str:
    if end is None:
        if start < 0 or start > len(s):
            raise _out_of_range(start)
        return s[start:]
    if start > end:
        raise StringsError(f"invalid substring range. start: {start}, end: {end}")
    for index in (start, end):
        if index < 0 or index > len(s):
            raise _out_of_range(index)
    return s[start:end]


def trim(s: str) -> str:
    return s.strip(_GO_SPACE)


def _equal(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality: numbers by value, booleans only with booleans."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def list_index_of(items: list[Any], value: Any) -> int:
    """Kubernetes' ``<list>.indexOf(<value>)``: the first equal element's index, or -1."""
    return next((i for i, item in enumerate(items) if _equal(item, value)), -1)


def list_last_index_of(items: list[Any], value: Any) -> int:
    """Kubernetes' ``<list>.lastIndexOf(<value>)``: the last equal element's index, or -1."""
    for i in range(len(items) - 1, -1, -1):
        if _equal(items[i], value):
            return i
    return -1
