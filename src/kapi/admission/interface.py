"""What admission sees of a request, as upstream's ``admission.Attributes``."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kapi.runtime.objects import Object

if TYPE_CHECKING:
    from kapi.runtime.scheme import Resource


class Operation(enum.Enum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"


@dataclass
class Attributes:
    operation: Operation
    resource: Resource
    subresource: str
    namespace: str | None
    name: str
    #: The new object (hub version) for CREATE and UPDATE, ``None`` for DELETE.
    object: Object | None
    #: The stored object for UPDATE and DELETE.
    old_object: Object | None
    dry_run: bool


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
