"""Content negotiation: which media type a response uses, which a body is in."""

from __future__ import annotations

from dataclasses import dataclass

from kapi.apimachinery import errors
from kapi.runtime import serializer

#: What kapi can answer with, in the order upstream lists its serializers.
_SUPPORTED = (serializer.JSON, serializer.YAML, serializer.PROTOBUF)


@dataclass(frozen=True)
class Output:
    media_type: str
    #: ``Table`` or ``PartialObjectMetadata(List)`` asked for with ``as=``.
    as_kind: str = ""
    #: The group version of ``as_kind`` (``meta.k8s.io/v1``).
    as_version: str = ""


JSON_OUTPUT = Output(serializer.JSON)
PROTOBUF_OUTPUT = Output(serializer.PROTOBUF)


def negotiate_output(
    accept: str | None, *, allow_transform: bool = True, protobuf: bool = False
) -> Output:
    """Pick the response media type from ``Accept`` (406 when none can be served).

    Protobuf is served only for kinds that have a protobuf form (``protobuf``);
    for the others, as for custom resources upstream, the next type asked for is.
    """
    if not accept:
        return JSON_OUTPUT
    for clause in accept.split(","):
        media, *params = (p.strip() for p in clause.split(";"))
        options = dict(p.split("=", 1) for p in params if "=" in p)
        if "as" in options:
            if not allow_transform or options.get("g") != "meta.k8s.io":
                continue
            if options["as"] == "Table" and options.get("v") in ("v1", "v1beta1"):
                return Output(serializer.JSON, "Table", f"meta.k8s.io/{options['v']}")
            continue
        if media in ("application/json", "application/*", "*/*", "*"):
            return JSON_OUTPUT
        if media == "application/yaml":
            return Output(serializer.YAML)
        if media == serializer.PROTOBUF and protobuf:
            return PROTOBUF_OUTPUT
    raise errors.not_acceptable(_SUPPORTED if protobuf else serializer.TEXT_BODY_TYPES)


def body_media_type(content_type: str | None, allowed: tuple[str, ...]) -> str:
    """The media type of a request body; missing means JSON (kubectl's chunked bodies).

    Upstream's ``NegotiateInputSerializer``: a header Go's ``mime.ParseMediaType``
    cannot parse (``application/json;;;``) is a 415 like an unknown type.
    """
    media = go_media_type(content_type or serializer.JSON)
    if media is None or media not in allowed:
        raise errors.unsupported_media_type(allowed)
    return media


def patch_media_type(content_type: str | None, allowed: tuple[str, ...]) -> str:
    """The patch type of a PATCH body: upstream cuts the header at its first ``;`` and
    parses nothing after it, so a malformed parameter list does not matter here."""
    media = (content_type or serializer.JSON).split(";", 1)[0].strip().lower()
    if media not in allowed:
        raise errors.unsupported_media_type(allowed)
    return media


#: RFC 2045 tspecials: not allowed in a token (Go's ``mime.isTSpecial``).
_TSPECIALS = frozenset('()<>@,;:\\"/[]?=')


def _is_token_char(char: str) -> bool:
    return " " < char < "\x7f" and char not in _TSPECIALS


def _token(text: str) -> tuple[str, str]:
    """The leading token of ``text`` and what follows it (Go's ``consumeToken``)."""
    end = 0
    while end < len(text) and _is_token_char(text[end]):
        end += 1
    return text[:end], text[end:]


def _quoted_string(text: str) -> tuple[str, str]:
    """A leading quoted string's value and the rest ("" and ``text`` when unterminated)."""
    value: list[str] = []
    i = 1
    while i < len(text):
        char = text[i]
        if char == '"':
            return "".join(value), text[i + 1 :]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in _TSPECIALS:
            i += 1
            char = text[i]
        elif char in "\r\n":
            break
        value.append(char)
        i += 1
    return "", text


def _parameter(text: str) -> tuple[str, str, str] | None:
    """``; name=value`` at the start of ``text``: the name, the value and the rest,
    or None when there is none (Go's ``consumeMediaParam``)."""
    rest = text.lstrip()
    if not rest.startswith(";"):
        return None
    name, rest = _token(rest[1:].lstrip())
    if not name:
        return None
    rest = rest.lstrip()
    if not rest.startswith("="):
        return None
    rest = rest[1:].lstrip()
    if rest.startswith('"'):
        value, after = _quoted_string(rest)
    else:
        value, after = _token(rest)
    if not value and after == rest:
        return None
    return name.lower(), value, after


def go_media_type(value: str) -> str | None:
    """The lower-cased media type of a header as Go's ``mime.ParseMediaType`` reads it,
    or None where it fails: a type that is not ``token[/token]``, a malformed or
    repeated parameter with another value.  A single trailing ``;`` is allowed, as in Go."""
    base = value.partition(";")[0]
    media = base.strip().lower()
    kind, rest = _token(media)
    if not kind:
        return None
    if rest:
        if not rest.startswith("/"):
            return None
        subtype, rest = _token(rest[1:])
        if not subtype or rest:
            return None
    rest = value[len(base) :]
    seen: dict[str, str] = {}
    while rest.strip():
        parsed = _parameter(rest)
        if parsed is None:
            if rest.strip() == ";":
                break
            return None
        name, param, rest = parsed
        if seen.setdefault(name, param) != param:
            return None
    return media
