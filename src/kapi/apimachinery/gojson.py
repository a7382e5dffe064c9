"""Go's ``encoding/json`` syntax errors, byte for byte.

Go checks a whole document with its scanner before decoding any of it
(``checkValid``), so a malformed body fails with the scanner's first error:
``invalid character 'x' looking for beginning of value``, ``unexpected end of
JSON input`` and so on. Clients and tests match those texts, so kapi does not
translate Python's decoder messages; it runs the same state machine over the
bytes. Parsing stays with the fast decoders: callers ask for the text only
once a document has failed to parse.
"""

from __future__ import annotations

import re
from typing import Any

from kapi.apimachinery.gotext import go_quote


class _JSONSyntaxError(ValueError):
    pass


_JSON_SPACE = b" \t\r\n"
#: Runs the scanner takes a byte at a time, matched in one step: they cannot fail.
_SPACE_RUN = re.compile(rb"[ \t\r\n]*")
_STRING_RUN = re.compile(rb'[^"\\\x00-\x1f]*')
_DIGIT_RUN = re.compile(rb"[0-9]*")
_DIGITS = b"0123456789"
_HEX = b"0123456789abcdefABCDEF"
_ESCAPES = b'"\\/bfnrt'
_LITERALS = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}
_MAX_DEPTH = 10000
#: The closing bracket allowed right after an opening one (``[]``, ``{}``).
_CLOSERS = {"value_or_end": ord("]"), "key_or_end": ord("}")}


def _quote_char(c: int) -> str:
    """``encoding/json``'s ``quoteChar``: a byte in single quotes, Go-escaped."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    return "'" + go_quote(chr(c))[1:-1] + "'"


def _invalid_char(c: int, context: str) -> _JSONSyntaxError:
    return _JSONSyntaxError(f"invalid character {_quote_char(c)} {context}")


def _skip(run: re.Pattern[bytes], data: bytes, pos: int) -> int:
    """Where the run of ``run`` starting at ``pos`` ends (every run may be empty)."""
    match = run.match(data, pos)
    assert match is not None
    return match.end()


def _at(data: bytes, pos: int) -> int:
    """The byte at ``pos``; past the end, a space, which is what Go's scanner feeds at EOF."""
    return data[pos] if pos < len(data) else 0x20


def _scan_string(data: bytes, pos: int) -> int:
    pos += 1
    while (pos := _skip(_STRING_RUN, data, pos)) < len(data):
        c = data[pos]
        if c == ord('"'):
            return pos + 1
        if c == ord("\\"):
            pos += 1
            c = _at(data, pos)
            if c == ord("u"):
                for _ in range(4):
                    pos += 1
                    if _at(data, pos) not in _HEX:
                        raise _invalid_char(_at(data, pos), "in \\u hexadecimal character escape")
            elif c not in _ESCAPES:
                raise _invalid_char(c, "in string escape code")
        elif c < 0x20:
            raise _invalid_char(c, "in string literal")
        pos += 1
    raise _JSONSyntaxError("unexpected end of JSON input")


def _scan_digits(data: bytes, pos: int, context: str) -> int:
    if _at(data, pos) not in _DIGITS:
        raise _invalid_char(_at(data, pos), context)
    return _skip(_DIGIT_RUN, data, pos)


def _scan_number(data: bytes, pos: int) -> int:
    if data[pos] == ord("-"):
        pos += 1
    if _at(data, pos) == ord("0"):
        pos += 1
    else:
        pos = _scan_digits(data, pos, "in numeric literal")
    if _at(data, pos) == ord("."):
        pos = _scan_digits(data, pos + 1, "after decimal point in numeric literal")
    if _at(data, pos) in b"eE":
        pos += 1
        if _at(data, pos) in b"+-":
            pos += 1
        pos = _scan_digits(data, pos, "in exponent of numeric literal")
    return pos


def _scan_scalar(data: bytes, pos: int) -> int:
    c = data[pos]
    if c == ord('"'):
        return _scan_string(data, pos)
    if word := _LITERALS.get(c):
        for i in range(1, len(word)):
            if _at(data, pos + i) != word[i]:
                expecting = _quote_char(word[i])
                raise _invalid_char(
                    _at(data, pos + i), f"in literal {word.decode()} (expecting {expecting})"
                )
        return pos + len(word)
    if c == ord("-") or c in _DIGITS:
        return _scan_number(data, pos)
    raise _invalid_char(c, "looking for beginning of value")


def _check_json(data: bytes) -> None:
    """Go's ``checkValid``: raises the first syntax error, with the scanner's exact text."""
    stack: list[int] = []  # the open brackets
    state = "value"  # value | value_or_end | key | key_or_end | colon | next
    pos = 0
    while True:
        pos = _skip(_SPACE_RUN, data, pos)
        if pos == len(data):
            if state == "next" and not stack:
                return
            raise _JSONSyntaxError("unexpected end of JSON input")
        c = data[pos]
        if c == _CLOSERS.get(state):
            stack.pop()
            pos, state = pos + 1, "next"
        elif state in ("value", "value_or_end"):
            if c in b"{[":
                if len(stack) >= _MAX_DEPTH:
                    raise _invalid_char(c, "exceeded max depth")
                stack.append(c)
                pos, state = pos + 1, ("key_or_end" if c == ord("{") else "value_or_end")
            else:
                pos, state = _scan_scalar(data, pos), "next"
        elif state in ("key", "key_or_end"):
            if c != ord('"'):
                raise _invalid_char(c, "looking for beginning of object key string")
            pos, state = _scan_string(data, pos), "colon"
        elif state == "colon":
            if c != ord(":"):
                raise _invalid_char(c, "after object key")
            pos, state = pos + 1, "value"
        elif not stack:
            raise _invalid_char(c, "after top-level value")
        else:
            in_object = stack[-1] == ord("{")
            if c == ord(","):
                state = "key" if in_object else "value"
            elif c == ord("}" if in_object else "]"):
                stack.pop()
            else:
                raise _invalid_char(
                    c, "after object key:value pair" if in_object else "after array element"
                )
            pos += 1


def nesting_error(value: Any, limit: int) -> str | None:
    """The scanner's error for a decoded ``value`` nesting objects and arrays deeper than
    ``limit`` (``invalid character '{' exceeded max depth``), or None.

    Level by level, not recursively: the value may be nested as deep as its decoder allows.
    """
    level: list[Any] = [value] if isinstance(value, dict | list) else []
    depth = 1
    while level:
        if depth > limit:
            c = ord("{") if isinstance(level[0], dict) else ord("[")
            return str(_invalid_char(c, "exceeded max depth"))
        below: dict[int, Any] = {}  # each object once: YAML aliases share them
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if isinstance(child, dict | list):
                    below[id(child)] = child
        level = list(below.values())
        depth += 1
    return None


def syntax_error(data: bytes) -> str | None:
    """The syntax error ``encoding/json`` reports for ``data``, or None when it is valid JSON."""
    error = None
    try:
        _check_json(data)
    except _JSONSyntaxError as exc:
        error = str(exc)
    return error


def unmarshal_map_error(data: bytes) -> str | None:
    """The error of Go's ``json.Unmarshal(data, &map[string]interface{}{})``, or None."""
    if (error := syntax_error(data)) is not None:
        return error
    first = data.lstrip(_JSON_SPACE)[:1]
    if first in (b"{", b"n"):  # an object, or null (a nil map)
        return None
    kind = {b"[": "array", b'"': "string", b"t": "bool", b"f": "bool"}.get(first, "number")
    return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
