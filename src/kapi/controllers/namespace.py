"""The namespace controller: empties a terminating namespace, then finalizes it.

Deleting a namespace only marks it (its ``spec.finalizers`` hold
``kubernetes``); this loop deletes every namespaced object in it, removes
the ``kubernetes`` finalizer through ``/finalize``, and the store then
removes the namespace, as upstream's namespace controller does.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from kapi.admission.namespace_lifecycle import SYSTEM_NAMESPACES
from kapi.apimachinery import errors
from kapi.registry.predicate import EVERYTHING
from kapi.registry.store import Store

if TYPE_CHECKING:
    from kapi.server import APIServer

log = logging.getLogger(__name__)
FINALIZER = "kubernetes"


async def ensure_system_namespaces(namespaces: Store) -> None:
    """Create ``default``, ``kube-system``, ``kube-public`` and ``kube-node-lease`` if missing."""
    for name in SYSTEM_NAMESPACES:
        try:
            await namespaces.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            )
        except errors.StatusError as exc:
            if exc.reason != "AlreadyExists":
                raise


class NamespaceController:
    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.namespaces = server.store("", "namespaces")

    async def run(self) -> None:
        while True:
            try:
                events = await self.namespaces.watch(None, EVERYTHING)
                async for event in events:
                    if event.type != "BOOKMARK" and _terminating(event.object):
                        await self.finalize(event.object["metadata"]["name"])
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("namespace controller failed; restarting")
                await asyncio.sleep(1)

    async def finalize(self, name: str) -> None:
        """Delete everything in namespace ``name``, then drop its ``kubernetes`` finalizer."""
        for store in self.server.stores.values():
            if store.resource.namespaced:
                await store.delete_collection(name, EVERYTHING)
        try:
            await self.namespaces.update(None, name, _drop_finalizer, subresource="finalize")
        except errors.StatusError as exc:
            if exc.code != 404:
                raise


def _terminating(namespace: dict[str, Any]) -> bool:
    return bool(namespace["metadata"].get("deletionTimestamp"))


def _drop_finalizer(namespace: dict[str, Any]) -> dict[str, Any]:
    spec = namespace.setdefault("spec", {})
    spec["finalizers"] = [f for f in spec.get("finalizers", []) if f != FINALIZER]
    namespace["metadata"].pop("resourceVersion", None)
    return namespace
