"""``Accept`` header parsing as upstream's ``goautoneg.ParseAccept`` does it.

kube-apiserver and kube-openapi walk the parsed clauses in this order and
serve the first one they can: highest ``q`` first, then concrete types
before wildcards, ties kept in header order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class MediaRange:
    type: str
    subtype: str
    q: float = 1.0
    params: dict[str, str] = field(default_factory=dict)

    def matches(self, media_type: str) -> bool:
        """Whether this clause accepts ``media_type`` (``type/subtype``), wildcards included."""
        type_, _, subtype = media_type.partition("/")
        return self.type in (type_, "*") and self.subtype in (subtype, "*")


def parse_accept(header: str) -> list[MediaRange]:
    ranges: list[MediaRange] = []
    for part in header.split(","):
        media, *raw_params = part.strip().split(";")
        type_, *rest = media.split("/")
        type_ = type_.strip()
        if not rest and type_ == "*":
            subtype = "*"
        elif len(rest) == 1:
            subtype = rest[0].strip()
        else:
            continue
        q = 1.0
        params: dict[str, str] = {}
        for raw in raw_params:
            key, sep, value = raw.partition("=")
            if not sep:
                continue
            key = key.strip()
            if key == "q":
                q = _parse_q(value)
            else:
                params[key] = value.strip()
        ranges.append(MediaRange(type_, subtype, q, params))
    return sorted(ranges, key=lambda r: (-r.q, r.type == "*", r.subtype == "*"))


_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def _parse_q(value: str) -> float:
    """Go's ``ParseFloat`` of the raw value; upstream ignores its error, leaving 0."""
    return float(value) if _DECIMAL.fullmatch(value) else 0.0
