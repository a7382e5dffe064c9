"""Storage versions of custom resources (KEP-2339's CRD design, never merged upstream).

A CRD can change the version its custom resources are written in at any time,
so a server must report the new encoding version in the resource's
StorageVersion *before* its stores start writing it; otherwise a migrator
trusting ``commonEncodingVersion`` could miss objects written in between.
:class:`CRDStorageVersions` is that step for the CRD controller: it registers
a CRD's :class:`ResourceInfo` when the CRD is first served and whenever what
it reports changes, retries in the background when the StorageVersion API
cannot be written, and deletes the StorageVersion when the CRD is gone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.apis.apiextensions_v1 import storage_version
from kapi.registry.informer import Backoff
from kapi.storageversion.manager import ResourceInfo, StorageVersionManager

log = logging.getLogger(__name__)

#: How long a custom-resource write waits for a storage version registration in
#: progress before it is refused with a 503 (seconds).
WRITE_WAIT = 5.0


def resource_info(crd: Object) -> ResourceInfo | None:
    """What this server reports for ``crd``'s resource; ``None`` before its names are
    accepted or without a storage version (it cannot be served then)."""
    accepted = (crd.get("status") or {}).get("acceptedNames") or {}
    storage = storage_version(crd)
    if not accepted.get("plural") or storage is None:
        return None
    group = crd["spec"]["group"]
    versions = crd["spec"].get("versions") or []
    return ResourceInfo(
        group=group,
        resource=accepted["plural"],
        encoding_version=f"{group}/{storage}",
        # Any version can be read back: a conversion turns it into the one asked for.
        decodable_versions=tuple(f"{group}/{v['name']}" for v in versions),
        served_versions=tuple(f"{group}/{v['name']}" for v in versions if v.get("served")),
        write_wait=WRITE_WAIT,
    )


class CRDStorageVersions:
    """Registers CRDs' storage versions before they are served; see the module docstring.

    ``resync``: how the controller syncs a CRD again by name, for the retry
    after a failed registration.
    """

    def __init__(
        self, manager: StorageVersionManager, resync: Callable[[str], Awaitable[None]]
    ) -> None:
        self._manager = manager
        self._resync = resync
        #: What was last registered, by CRD name.
        self._registered: dict[str, ResourceInfo] = {}
        self._retries: dict[str, asyncio.Task[None]] = {}
        #: Retries whose sync is under way (it may be waiting on the StorageVersion write).
        self._resyncing: dict[str, asyncio.Task[None]] = {}
        self._backoff: dict[str, Backoff] = {}

    async def ensure(self, crd: Object) -> bool:
        """Whether ``crd`` may be served as it is now: its storage version is recorded
        (registered now when it changed).  ``False`` after a failure; a retry follows."""
        name = crd["metadata"]["name"]
        info = resource_info(crd)
        if info is None:
            return False
        if self._registered.get(name) == info:
            return True
        try:
            await self._manager.register(info)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.error("storage version of CRD %s not recorded, retrying: %s", name, exc)
            self._retry_later(name)
            return False
        self._registered[name] = info
        self._backoff.pop(name, None)
        return True

    async def forget(self, crd: Object) -> None:
        """``crd`` is deleted: delete its resource's StorageVersion."""
        name = crd["metadata"]["name"]
        # A retry already syncing is stopped too: finishing, it would write the
        # StorageVersion again after the delete below, and serve the deleted CRD.
        for tasks in (self._retries, self._resyncing):
            task = tasks.pop(name, None)
            if task is not None:
                task.cancel()
        self._backoff.pop(name, None)
        info = self._registered.pop(name, None) or resource_info(crd)
        if info is None:
            return
        try:
            await self._manager.remove(info.group, info.resource)
        except errors.StatusError as exc:
            # Left behind, the object is collected once no server lists it any more.
            log.warning("deleting the StorageVersion of CRD %s: %s", name, exc.message)

    def stop(self) -> None:
        for task in (*self._retries.values(), *self._resyncing.values()):
            task.cancel()

    def _retry_later(self, name: str) -> None:
        if name in self._retries and not self._retries[name].done():
            return
        pause = self._backoff.setdefault(name, Backoff(initial=0.2)).next()

        async def retry() -> None:
            await asyncio.sleep(pause)
            # Out of the pending retries (a failure below schedules the next one), but
            # still cancellable by ``forget`` while it syncs.
            me = self._retries.pop(name)
            self._resyncing[name] = me
            try:
                await self._resync(name)
            finally:
                if self._resyncing.get(name) is me:
                    del self._resyncing[name]

        self._retries[name] = asyncio.create_task(retry())
