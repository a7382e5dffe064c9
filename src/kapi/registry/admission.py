"""What the generic store hands admission, and what it asks of it.

The store (:mod:`kapi.registry.store`) runs admission around every write, as
upstream's ``genericregistry.Store`` runs the admission functions the REST
handlers pass it (``rest.ValidateObjectFunc``).  The registry defines the
request it describes (:class:`Attributes`, upstream's ``admission.Attributes``)
and the :class:`Admission` it calls; :mod:`kapi.admission` implements it and
the server wires the two together, so the registry never imports admission.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from kapi.apimachinery.unstructured import Object

if TYPE_CHECKING:
    from kapi.runtime.scheme import Resource


class Operation(enum.Enum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CONNECT = "CONNECT"


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


class Admission(Protocol):
    """The admission a store runs: a mutating phase, then a validating one.

    ``mutating`` and ``validating`` are the plugins of each phase; the store
    skips a phase that has none without building its :class:`Attributes`.
    """

    @property
    def mutating(self) -> Sequence[object]: ...

    @property
    def validating(self) -> Sequence[object]: ...

    async def admit(self, attributes: Attributes) -> None:
        """The mutating phase: it may change ``attributes.object``."""
        ...

    async def validate(self, attributes: Attributes) -> None:
        """The validating phase: it may only reject."""
        ...
