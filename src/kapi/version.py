"""Kubernetes release versions: the one kapi models and the one it emulates."""

from __future__ import annotations

import re
from typing import NamedTuple

#: The newest Kubernetes release whose API kapi models; the default emulated version.
KUBERNETES_VERSION = "1.33"
#: kapi's own version, reported in /version's gitVersion build metadata.
KAPI_VERSION = "0.1.0"

_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?")


class Version(NamedTuple):
    """A Kubernetes ``major.minor`` release, ordered."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> Version:
        match = _VERSION.fullmatch(text.strip())
        if not match:
            raise ValueError(f"invalid Kubernetes version {text!r}: expected <major>.<minor>")
        return cls(int(match[1]), int(match[2]))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


DEFAULT_VERSION = Version.parse(KUBERNETES_VERSION)
