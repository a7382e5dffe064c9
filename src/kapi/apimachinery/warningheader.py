"""The ``Warning`` header wire format (RFC 7234 section 5.5), written and read as upstream does.

The counterpart of the warning functions of ``k8s.io/apimachinery/pkg/util/net``:
the server's recorder writes with :func:`new_warning_header`, clients read with
:func:`parse_warning_headers`.  Both sides live here so that what one writes
the other reads back.

A value is ``warn-code warn-agent "warn-text" ["warn-date"]``; several values
may share one header, comma-separated.  Parsing is tolerant the way client-go
is: a malformed value is reported and the rest of *that header* is skipped,
later headers are still read, and no input raises out of
:func:`parse_warning_headers`.  Text encoded as RFC 2047 words (what RFC 2616
servers sent) is decoded, as Go's ``mime.WordDecoder`` does.

Header values arrive as bytes; as ``str`` they are handled as UTF-8 with bad
bytes kept as lone surrogates (``surrogateescape``), so that invalid UTF-8 is
detected and refused, as Go does, instead of being silently replaced.
"""

from __future__ import annotations

import base64
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

#: Every character Go's ``unicode.IsSpace`` accepts.  Python's ``str.isspace``
#: differs (it also counts U+001C..U+001F), so trimming uses this set.
GO_WHITESPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_CODE = re.compile(r"[0-9]{3}")


@dataclass(frozen=True, slots=True)
class WarningHeader:
    """One parsed warning (client-go's ``net.WarningHeader``); any warn-date is dropped."""

    #: 299 is "miscellaneous persistent warning", the only code Kubernetes servers send.
    code: int
    #: Who added the warning; ``-`` when unknown, as kube-apiserver always sends.
    agent: str
    text: str


def new_warning_header(code: int, agent: str, text: str) -> bytes | None:
    """One header value, ``299 - "text"``; None where upstream's ``NewWarningHeader`` errs.

    The agent must be one token (no spaces, quotes, backslashes or control
    characters); empty means ``-``.  The text must be valid UTF-8 without
    control characters: such text is refused rather than repaired.  Only
    ``"`` and ``\\`` are escaped; the rest goes on the wire as UTF-8.
    """
    if not 0 <= code <= 999:
        return None
    if not agent:
        agent = "-"
    elif not is_valid_utf8(agent) or any(
        ch in '\\"' or ch in GO_WHITESPACE or is_control(ch) for ch in agent
    ):
        return None
    # Printable ASCII, nearly every warning, can hold neither: skip the per-character scan.
    if not (text.isascii() and text.isprintable()) and (
        not is_valid_utf8(text) or any(is_control(ch) for ch in text)
    ):
        return None
    quoted = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'{code:03d} {agent} "{quoted}"'.encode()


def parse_warning_headers(
    headers: Iterable[str | bytes],
) -> tuple[list[WarningHeader], list[ValueError]]:
    """All warnings of several ``Warning`` header values, and the errors met on the way.

    After a malformed value the rest of that header is skipped (its later
    values cannot be found reliably) and parsing resumes with the next header.
    """
    results: list[WarningHeader] = []
    errors: list[ValueError] = []
    for header in headers:
        remainder = as_text(header)
        while remainder:
            try:
                warning, remainder = parse_warning_header(remainder)
            except ValueError as exc:
                errors.append(exc)
                break
            results.append(warning)
    return results, errors


def parse_warning_header(header: str | bytes) -> tuple[WarningHeader, str]:
    """The first warning of ``header`` and the unparsed rest (after its comma).

    Raises :class:`ValueError` when the first value is malformed.
    """
    header = as_text(header).strip(GO_WHITESPACE)
    parts = header.split(" ", 2)
    if len(parts) != 3:
        raise ValueError("invalid warning header: fewer than 3 segments")
    code, agent, rest = parts
    if not _CODE.fullmatch(code):
        raise ValueError("invalid warning header: code segment is not 3 digits")
    if not agent:
        raise ValueError("invalid warning header: empty agent segment")
    if not is_valid_utf8(agent) or any(is_control(ch) for ch in agent):
        raise ValueError("invalid warning header: invalid agent")
    if not rest:
        raise ValueError("invalid warning header: empty text segment")
    text, rest = _parse_quoted_string(rest)
    text = _decode_rfc2047(text)
    if not is_valid_utf8(text) or any(is_control(ch) for ch in text):
        raise ValueError("invalid warning header: invalid text")
    remainder = rest
    if rest.startswith('"'):
        end = rest.find('"', 1)
        if end == -1:
            raise ValueError("invalid warning header: unterminated date segment")
        remainder = rest[end + 1 :].strip(GO_WHITESPACE)
    if remainder:
        if remainder[0] != ",":
            raise ValueError("invalid warning header: unexpected token after warn-date")
        remainder = remainder[1:].strip(GO_WHITESPACE)
    return WarningHeader(int(code), agent, text), remainder


def as_text(value: str | bytes) -> str:
    """A header value as text, invalid UTF-8 bytes kept as lone surrogates."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return value


def is_valid_utf8(text: str) -> bool:
    """False when ``text`` holds lone surrogates, i.e. came from invalid UTF-8."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def is_control(ch: str) -> bool:
    """Go's ``unicode.IsControl``: exactly the ``Cc`` category (C0, DEL and C1)."""
    return unicodedata.category(ch) == "Cc"


def _parse_quoted_string(quoted: str) -> tuple[str, str]:
    """The unescaped content of a leading quoted string, and what follows it, trimmed.

    A backslash makes the next character literal, whatever it is.
    """
    if not quoted:
        raise ValueError("invalid warning header: invalid quoted string: 0-length")
    if quoted[0] != '"':
        raise ValueError("invalid warning header: invalid quoted string: missing initial quote")
    content: list[str] = []
    escaping = False
    for index in range(1, len(quoted)):
        ch = quoted[index]
        if escaping:
            content.append(ch)
            escaping = False
        elif ch == "\\":
            escaping = True
        elif ch == '"':
            return "".join(content), quoted[index + 1 :].strip(GO_WHITESPACE)
        else:
            content.append(ch)
    raise ValueError("invalid warning header: invalid quoted string: missing closing quote")


# -- RFC 2047 encoded words (Go's mime.WordDecoder.DecodeHeader) -------------------------


def _decode_rfc2047(text: str) -> str:
    """``text`` with its ``=?charset?B|Q?...?=`` words decoded, as client-go tolerates.

    Words that do not decode stay as they are; whitespace between two decoded
    words is dropped.  A charset other than UTF-8, ISO-8859-1 or US-ASCII makes
    Go give up on the whole text, which is then kept undecoded.
    """
    start = text.find("=?")
    if start == -1:
        return text
    out = [text[:start]]
    rest = text[start:]
    between_words = False
    while (start := rest.find("=?")) != -1:
        cursor = start + 2
        question = rest.find("?", cursor)
        if question == -1:
            break
        charset = rest[cursor:question]
        cursor = question + 1
        if len(rest) < cursor + len("Q??="):
            break
        encoding = rest[cursor]
        cursor += 1
        if rest[cursor] != "?":
            break
        cursor += 1
        end = rest.find("?=", cursor)
        if end == -1:
            break
        content = _decode_word(encoding, rest[cursor:end])
        if content is None:
            between_words = False
            out.append(rest[: start + 2])
            rest = rest[start + 2 :]
            continue
        if start > 0 and (not between_words or rest[:start].strip(" \t\r\n")):
            out.append(rest[:start])
        converted = _convert(charset, content)
        if converted is None:
            return text
        out.append(converted)
        rest = rest[end + 2 :]
        between_words = True
    out.append(rest)
    return _rejoin("".join(out))


def _rejoin(text: str) -> str:
    """Go joins decoded bytes, so a character split across two words decodes whole."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # surrogates that never were bytes: invalid either way
        return text


def _decode_word(encoding: str, word: str) -> bytes | None:
    if encoding in "Bb":
        try:
            return base64.b64decode(word.replace("\r", "").replace("\n", ""), validate=True)
        except ValueError:
            return None
    if encoding in "Qq":
        return _q_decode(word)
    return None


def _q_decode(word: str) -> bytes | None:
    """RFC 2047 "Q" decoding: ``_`` is a space, ``=XX`` a byte, other bytes printable ASCII."""
    out = bytearray()
    index = 0
    while index < len(word):
        ch = word[index]
        if ch == "_":
            out.append(0x20)
        elif ch == "=":
            if index + 2 >= len(word):
                return None
            pair = word[index + 1 : index + 3]
            if not all(c in "0123456789abcdefABCDEF" for c in pair):
                return None
            out.append(int(pair, 16))
            index += 2
        elif " " <= ch <= "~" or ch in "\n\r\t":
            out.append(ord(ch))
        else:
            return None
        index += 1
    return bytes(out)


def _convert(charset: str, content: bytes) -> str | None:
    folded = charset.casefold()
    if folded == "utf-8":
        return content.decode("utf-8", "surrogateescape")
    if folded == "iso-8859-1":
        return content.decode("latin-1")
    if folded == "us-ascii":
        return "".join(chr(b) if b < 0x80 else "\ufffd" for b in content)
    return None
