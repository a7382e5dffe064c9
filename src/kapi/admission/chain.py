"""The admission chain: plugins run in order, and the first rejection wins."""

from __future__ import annotations

from collections.abc import Sequence

from kapi.admission.interface import AdmissionPlugin, Attributes


class AdmissionChain:
    def __init__(self, plugins: Sequence[AdmissionPlugin]) -> None:
        self.plugins = list(plugins)

    async def __call__(self, attributes: Attributes) -> None:
        for plugin in self.plugins:
            await plugin.admit(attributes)
