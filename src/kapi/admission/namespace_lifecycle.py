"""The NamespaceLifecycle admission plugin, as upstream's.

Content may only be created in a namespace that exists and is not being
terminated, and the system namespaces may not be deleted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kapi.admission.interface import Attributes, Operation
from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.apis.core_v1 import IMMORTAL_NAMESPACES
from kapi.registry.informer import Informer

#: Reads a namespace by name; raises the 404 ``StatusError`` of a missing one.
NamespaceGetter = Callable[[str], Awaitable[Object]]


def namespace_getter(informer: Informer, live: NamespaceGetter) -> NamespaceGetter:
    """Namespaces from ``informer``, or from ``live`` (storage) when the cache misses one.

    The getter raises the 404 of a missing namespace.  A miss is looked up
    live, as upstream's NamespaceLifecycle does, so that content can be
    created in a namespace whose creation the informer has not yet seen.
    """

    async def get_namespace(name: str) -> Object:
        cached = informer.get(None, name)
        if cached is not None:
            return cached
        return await live(name)

    return get_namespace


class NamespaceLifecycle:
    """The plugin, given the namespaces' informer and a live read of one namespace.

    Upstream's plugin is handed the same two: a namespace lister and a client.
    """

    def __init__(self, informer: Informer, live: NamespaceGetter) -> None:
        self.get_namespace = namespace_getter(informer, live)

    async def admit(self, a: Attributes) -> None:
        resource = a.resource
        if resource.group == "" and resource.plural == "namespaces":
            if a.operation is Operation.DELETE and a.name in IMMORTAL_NAMESPACES:
                raise errors.forbidden(
                    "namespaces", "", a.name, "this namespace may not be deleted"
                )
            return
        if a.operation is not Operation.CREATE or not resource.namespaced or not a.namespace:
            return
        try:
            namespace = await self.get_namespace(a.namespace)
        except errors.StatusError as exc:
            if exc.code == 404:
                raise errors.not_found("namespaces", "", a.namespace) from None
            raise
        if namespace.get("status", {}).get("phase") == "Terminating" or namespace["metadata"].get(
            "deletionTimestamp"
        ):
            raise errors.forbidden(
                resource.plural,
                resource.group,
                a.name,
                f"unable to create new content in namespace {a.namespace} because it is being "
                "terminated",
                [
                    {
                        "reason": "NamespaceTerminating",
                        "message": f"namespace {a.namespace} is being terminated",
                        "field": "metadata.namespace",
                    }
                ],
            )
