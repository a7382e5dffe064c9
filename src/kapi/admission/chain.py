"""The admission chain, in upstream's two phases: mutating, then validating.

Mutating plugins (``admit``) run before the strategy prepares and validates
an object, so what they change is validated like the rest of the request;
validating plugins (``validate``) run after, on the object about to be
stored.  In each phase plugins run in order and the first rejection wins.
"""

from __future__ import annotations

from collections.abc import Sequence

from kapi.admission.interface import Attributes, MutationInterface, ValidationInterface


class AdmissionChain:
    def __init__(self, plugins: Sequence[MutationInterface | ValidationInterface]) -> None:
        self.mutating = [p for p in plugins if isinstance(p, MutationInterface)]
        self.validating = [p for p in plugins if isinstance(p, ValidationInterface)]

    async def admit(self, attributes: Attributes) -> None:
        """The mutating phase: plugins may change ``attributes.object``."""
        for plugin in self.mutating:
            await plugin.admit(attributes)

    async def validate(self, attributes: Attributes) -> None:
        """The validating phase: plugins may only reject."""
        for plugin in self.validating:
            await plugin.validate(attributes)
