"""The pvc-protection and pv-protection controllers, as kube-controller-manager runs them.

Every new PersistentVolumeClaim carries ``kubernetes.io/pvc-protection`` and every
new PersistentVolume ``kubernetes.io/pv-protection`` (StorageObjectInUseProtection
admission).  Deleting one only marks it; these loops then remove the finalizer
once the object is no longer in use, and the store removes the object:

* a claim is in use while a pod of its namespace that has not finished
  (phase neither Succeeded nor Failed) names it in a ``persistentVolumeClaim``
  volume, or owns it through an ``ephemeral`` volume (``<pod>-<volume>``);
* a volume is in use while it is ``Bound``.

A marked object still in use is looked at again every few seconds.  Every
server sharing the storage runs these; their updates are conditional, and an
object another server released first is no error.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.apis.core_v1_persistentvolumes import PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER
from kapi.registry.informer import Backoff, reflect
from kapi.registry.predicate import EVERYTHING
from kapi.registry.store import Store, WatchEvent

log = logging.getLogger(__name__)

_FINISHED = ("Succeeded", "Failed")


def pod_uses_claim(pod: Object, claim: str) -> bool:
    """Whether a pod that has not finished mounts ``claim`` (by name or as its ephemeral one)."""
    if (pod.get("status") or {}).get("phase") in _FINISHED:
        return False
    pod_name = (pod.get("metadata") or {}).get("name", "")
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName") == claim:
            return True
        if volume.get("ephemeral") is not None and f"{pod_name}-{volume.get('name')}" == claim:
            return True
    return False


class ProtectionController:
    """Releases the marked objects of ``store`` whose finalizer ``finalizer`` guards
    nothing any more; ``in_use`` says whether an object still is."""

    retry_interval = 2.0

    def __init__(
        self, store: Store, finalizer: str, in_use: Callable[[Object], Awaitable[bool]]
    ) -> None:
        self.store = store
        self.finalizer = finalizer
        self.in_use = in_use
        self._pending: dict[tuple[str | None, str], asyncio.Task[None]] = {}

    async def run(self) -> None:
        try:
            await reflect(self.store, self)
        finally:
            for task in self._pending.values():
                task.cancel()

    async def replace(self, objects: list[Object]) -> None:
        for obj in objects:
            self._consider(obj)

    async def apply(self, event: WatchEvent) -> None:
        if event.type != "DELETED":
            self._consider(event.object)

    def _consider(self, obj: Object) -> None:
        metadata = obj.get("metadata") or {}
        if not metadata.get("deletionTimestamp"):
            return
        if self.finalizer not in (metadata.get("finalizers") or ()):
            return
        key = (metadata.get("namespace"), metadata["name"])
        task = self._pending.get(key)
        if task is None or task.done():
            self._pending[key] = asyncio.create_task(self._release(*key))

    async def _release(self, namespace: str | None, name: str) -> None:
        backoff = Backoff(initial=self.retry_interval)
        while True:
            try:
                current = await self.store.get(namespace, name)
                if self.finalizer not in (current["metadata"].get("finalizers") or ()):
                    return
                if await self.in_use(current):
                    await asyncio.sleep(self.retry_interval)
                    continue
                await self.store.update(namespace, name, self._drop(current))
                return
            except asyncio.CancelledError:
                raise
            except errors.StatusError as exc:
                if exc.code == 404:
                    return
                log.info("releasing %s %s: %s; retrying", self.store.resource.kind, name, exc)
                await asyncio.sleep(backoff.next())
            except Exception as exc:
                log.warning("releasing %s %s: %r; retrying", self.store.resource.kind, name, exc)
                await asyncio.sleep(backoff.next())

    def _drop(self, read: Object) -> Callable[[Object], Awaitable[Object]]:
        resource_version = read["metadata"].get("resourceVersion")

        async def drop(obj: Object) -> Object:
            metadata = obj["metadata"]
            metadata["finalizers"] = [
                f for f in metadata.get("finalizers") or () if f != self.finalizer
            ]
            # Conditional on what was checked: a change since makes it look again.
            metadata["resourceVersion"] = resource_version
            return obj

        return drop


def claim_protection(claims: Store, pods: Store) -> ProtectionController:
    async def in_use(claim: Object) -> bool:
        metadata = claim["metadata"]
        listed = await pods.list(metadata.get("namespace"), EVERYTHING)
        return any(pod_uses_claim(pod, metadata["name"]) for pod in listed.items)

    return ProtectionController(claims, PVC_PROTECTION_FINALIZER, in_use)


def volume_protection(volumes: Store) -> ProtectionController:
    async def in_use(volume: Object) -> bool:
        return (volume.get("status") or {}).get("phase") == "Bound"

    return ProtectionController(volumes, PV_PROTECTION_FINALIZER, in_use)
