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
    """The media type of a request body; missing means JSON (kubectl's chunked bodies)."""
    media = (content_type or serializer.JSON).split(";", 1)[0].strip().lower()
    if media not in allowed:
        raise errors.unsupported_media_type(allowed)
    return media
