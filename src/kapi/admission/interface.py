"""What admission sees of a request, as upstream's ``admission.Attributes``."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from kapi.runtime.scheme import Resource

Object = dict[str, Any]


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
    #: Validates the object again; mutating admission calls it after changing the object,
    #: since upstream validates after mutating admission and a webhook may break the object.
    revalidate: Callable[[], None] | None = None


class AdmissionPlugin(Protocol):
    """An in-process admission plugin: raise a ``StatusError`` to reject."""

    async def admit(self, attributes: Attributes) -> None: ...
