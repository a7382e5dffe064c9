"""The PriorityClass half of upstream's Priority admission plugin.

At most one PriorityClass may be the global default: creating a second one,
or marking another class as the default, is forbidden while one exists.
(Upstream's plugin also resolves pods' priorities from their class; kapi
leaves pods' ``priority`` as the client sent it.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kapi.admission.interface import Attributes, Operation
from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.apis.scheduling import GROUP

PLURAL = "priorityclasses"

#: Lists every stored PriorityClass (upstream reads its informer's lister).
PriorityClassLister = Callable[[], Awaitable[list[Object]]]


def default_priority_class(classes: list[Object]) -> Object | None:
    """The global default; after a race left several, the one of the lowest value."""
    found: Object | None = None
    for pc in classes:
        if pc.get("globalDefault") and (
            found is None or (found.get("value") or 0) > (pc.get("value") or 0)
        ):
            found = pc
    return found


class PriorityAdmission:
    """Validating phase only: it checks PriorityClass creates and updates."""

    def __init__(self, lister: PriorityClassLister) -> None:
        self.lister = lister

    async def validate(self, a: Attributes) -> None:
        if a.subresource or a.resource.group != GROUP or a.resource.plural != PLURAL:
            return
        if a.operation not in (Operation.CREATE, Operation.UPDATE) or a.object is None:
            return
        if not a.object.get("globalDefault"):
            return
        current = default_priority_class(await self.lister())
        if current is None:
            return
        name = current["metadata"]["name"]
        if a.operation is Operation.CREATE or name != a.name:
            raise errors.forbidden(
                PLURAL,
                GROUP,
                a.name,
                f"PriorityClass {name} is already marked as default. Only one default can exist",
            )
