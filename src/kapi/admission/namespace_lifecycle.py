"""The NamespaceLifecycle admission plugin, as upstream's.

Content may only be created in a namespace that exists and is not being
terminated, and the system namespaces may not be deleted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kapi.admission.interface import Attributes, Operation
from kapi.apimachinery import errors

if TYPE_CHECKING:
    from kapi.server import APIServer

#: Namespaces that may never be deleted.
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
#: Namespaces the server creates at start (``kube-node-lease`` may be deleted).
SYSTEM_NAMESPACES = (*IMMORTAL_NAMESPACES, "kube-node-lease")


async def get_namespace(server: APIServer, name: str) -> dict[str, Any]:
    """A namespace from the server's informer, or from storage when the cache misses it.

    Raises the 404 of a missing namespace.  A miss is looked up live, as
    upstream's NamespaceLifecycle does, so that content can be created in a
    namespace whose creation the informer has not yet seen.
    """
    cached = server.namespace_informer.get(None, name)
    if cached is not None:
        return cached
    return await server.store("", "namespaces").get(None, name)


class NamespaceLifecycle:
    def __init__(self, server: APIServer) -> None:
        self.server = server

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
            namespace = await get_namespace(self.server, a.namespace)
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
