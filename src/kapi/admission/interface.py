"""What admission sees of a request, and the plugins of its two phases.

The request, :class:`Attributes` (upstream's ``admission.Attributes``), is
defined by the registry that builds it (:mod:`kapi.registry.admission`), so the
store need not import admission; plugins take it from here.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from kapi.registry.admission import Attributes, Operation

__all__ = ["Attributes", "MutationInterface", "Operation", "ValidationInterface"]


@runtime_checkable
class MutationInterface(Protocol):
    """A plugin of the mutating phase (upstream ``admission.MutationInterface``).

    It may change ``attributes.object``; raise a ``StatusError`` to reject.
    """

    async def admit(self, attributes: Attributes) -> None: ...


@runtime_checkable
class ValidationInterface(Protocol):
    """A plugin of the validating phase (upstream ``admission.ValidationInterface``)."""

    async def validate(self, attributes: Attributes) -> None: ...
