"""The namespace controller: empties a terminating namespace, then finalizes it.

Deleting a namespace only marks it (its ``spec.finalizers`` hold
``kubernetes``); this loop deletes every namespaced object in it, removes
the ``kubernetes`` finalizer through ``/finalize``, and the store then
removes the namespace, as upstream's namespace controller does.

Custom resources are found from the CRDs in storage, not only from those
this server serves: with several servers on one storage, a CRD created a
moment ago on another server may not be installed here yet, and its objects
in the namespace must still go before the namespace does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

from kapi.apiextensions.crd_stores import CustomResourceStores
from kapi.apimachinery import errors
from kapi.apis.core_v1 import SYSTEM_NAMESPACES
from kapi.registry.informer import Backoff, reflect
from kapi.registry.predicate import EVERYTHING
from kapi.registry.store import Store, WatchEvent

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
    """Given the namespace store, the stores of everything (``stores()``, read each pass)
    and, to reach custom resources of CRDs not installed here, the CRD store and the
    custom resource stores."""

    #: How long to wait before looking again at content that is still finalizing.
    retry_interval = 1.0

    def __init__(
        self,
        namespaces: Store,
        stores: Callable[[], Iterable[Store]],
        crds: Store | None = None,
        custom_resources: CustomResourceStores | None = None,
    ) -> None:
        self.namespaces = namespaces
        self._stores = stores
        self._crds = crds
        self._custom_resources = custom_resources
        self._finalizing: dict[str, asyncio.Task[None]] = {}

    async def run(self) -> None:
        """Follow the namespaces in storage, whichever server wrote them, until cancelled."""
        try:
            await reflect(self.namespaces, self)
        finally:
            for task in self._finalizing.values():
                task.cancel()

    async def replace(self, namespaces: list[dict[str, Any]]) -> None:
        for namespace in namespaces:
            if _terminating(namespace):
                self._start(namespace["metadata"]["name"])

    async def apply(self, event: WatchEvent) -> None:
        if event.type != "DELETED" and _terminating(event.object):
            self._start(event.object["metadata"]["name"])

    def _start(self, name: str) -> None:
        task = self._finalizing.get(name)
        if task is None or task.done():
            self._finalizing[name] = asyncio.create_task(self.finalize(name))

    async def finalize(self, name: str) -> None:
        """Delete everything in ``name`` until it is empty, then drop the ``kubernetes`` finalizer.

        Content whose own finalizers keep it around holds the namespace in
        Terminating, as upstream's namespace controller does.  Every server
        sharing the storage finalizes the same namespace: content another one
        deleted first, a conflicting write and a namespace already gone are
        expected; other failures (storage unavailable) are retried until the
        namespace is gone.
        """
        backoff = Backoff(initial=self.retry_interval)
        while True:
            try:
                if await self._delete_content(name):
                    await asyncio.sleep(self.retry_interval)
                    continue
                await self.namespaces.update(None, name, _drop_finalizer, subresource="finalize")
                return
            except asyncio.CancelledError:
                raise
            except errors.StatusError as exc:
                if exc.code == 404:
                    return  # finalized, by this server or another
                log.warning("finalizing namespace %s: %s; retrying", name, exc)
                await asyncio.sleep(backoff.next())
            except Exception as exc:
                log.warning("finalizing namespace %s: %r; retrying", name, exc)
                await asyncio.sleep(backoff.next())

    async def _delete_content(self, name: str) -> int:
        """Delete what is in the namespace; return how many objects are still there."""
        remaining = 0
        for store in await self._namespaced_stores():
            await store.delete_collection(name, EVERYTHING)
            remaining += len((await store.list(name, EVERYTHING)).items)
        return remaining

    async def _namespaced_stores(self) -> list[Store]:
        """The stores of every namespaced resource, custom ones by the CRDs in storage.

        A namespaced CRD this server has not installed (yet) gets a store built
        for the occasion, as the CRD controller builds one to clean up a CRD it
        never served: its objects are deleted through the same store logic
        (finalizers, graceful deletion) as anywhere else, and no server can
        finalize the namespace while they are there.
        """
        found = {
            (store.resource.group, store.resource.plural): store
            for store in self._stores()
            if store.resource.namespaced
        }
        if self._crds is not None and self._custom_resources is not None:
            for crd in (await self._crds.list(None, EVERYTHING)).items:
                if crd["spec"].get("scope") != "Namespaced" or not _established(crd):
                    continue  # never established: served nowhere, so it has no objects
                try:
                    # None: its names were never accepted, so it can have no objects.
                    store = self._custom_resources.store_or_new(crd)
                except Exception as exc:
                    # A CRD no server can build a store for (a conversion webhook
                    # with a bad CA bundle) is served nowhere: it has no objects.
                    log.debug(
                        "namespace finalization skips CRD %s: %r", crd["metadata"]["name"], exc
                    )
                    continue
                if store is not None:
                    found.setdefault((store.resource.group, store.resource.plural), store)
        return list(found.values())


def _established(crd: dict[str, Any]) -> bool:
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def _terminating(namespace: dict[str, Any]) -> bool:
    return bool(namespace["metadata"].get("deletionTimestamp"))


async def _drop_finalizer(namespace: dict[str, Any]) -> dict[str, Any]:
    spec = namespace.setdefault("spec", {})
    spec["finalizers"] = [f for f in spec.get("finalizers", []) if f != FINALIZER]
    namespace["metadata"].pop("resourceVersion", None)
    return namespace
