"""The CRD controller: accepts names, establishes CRDs, serves them, and cleans up on delete.

One loop does what upstream splits over the naming, establishing, finalizer
and handler controllers: on every change of a CRD it recomputes
``status.acceptedNames`` and the ``NamesAccepted``/``Established``
conditions, installs (or reinstalls) the CRD's resource in the
:class:`~kapi.apiextensions.crd_stores.CustomResourceStores`, and for a CRD
being deleted removes its custom resources, then its finalizer.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kapi.apiextensions.crd_stores import CustomResourceStores
from kapi.apiextensions.storage_version import CRDStorageVersions
from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.apis.apiextensions_v1 import CLEANUP_FINALIZER
from kapi.registry.informer import Backoff, reflect
from kapi.registry.predicate import EVERYTHING
from kapi.registry.store import Store, WatchEvent
from kapi.runtime.objects import now_rfc3339
from kapi.storageversion.manager import StorageVersionManager

log = logging.getLogger(__name__)
_NAME_FIELDS = ("plural", "singular", "kind", "listKind")


class CRDController:
    #: How long to wait before looking again at custom resources still finalizing.
    retry_interval = 0.5

    def __init__(
        self,
        crds: Store,
        custom_resources: CustomResourceStores,
        storage_versions: StorageVersionManager | None = None,
    ) -> None:
        self.crds = crds
        self.custom_resources = custom_resources
        #: Records each CRD's storage version before it is served (KEP-2339); ``None``
        #: when the StorageVersion API is off.
        self.storage_versions = (
            CRDStorageVersions(storage_versions, self._resync)
            if storage_versions is not None
            else None
        )
        self._cleanups: dict[str, asyncio.Task[None]] = {}
        #: Every CRD in storage as last seen, by name: names are checked against the
        #: names the others have accepted there (shared by every server), never against
        #: what this server happens to have installed, so servers agree on conflicts.
        self._known: dict[str, Object] = {}

    async def run(self) -> None:
        """Follow the CRDs in storage, whichever server wrote them, until cancelled."""
        try:
            await reflect(self.crds, self)
        finally:
            for task in self._cleanups.values():
                task.cancel()
            if self.storage_versions is not None:
                self.storage_versions.stop()

    async def replace(self, crds: list[Object]) -> None:
        """After a (re)list: stop serving CRDs deleted meanwhile, then sync every listed one."""
        self._known = {crd["metadata"]["name"]: crd for crd in crds}
        for installed in self.custom_resources.definitions():
            if installed["metadata"]["name"] not in self._known:
                await self._forget(installed)
        for crd in crds:
            await self.sync(crd)

    async def apply(self, event: WatchEvent) -> None:
        name = event.object["metadata"]["name"]
        if event.type == "DELETED":
            self._known.pop(name, None)
            await self._forget(event.object)
            # Names it held are free: CRDs of its group refused them may now have them.
            group = event.object["spec"]["group"]
            for other in list(self._known.values()):
                refused = _condition(other, "NamesAccepted") == "False"
                if refused and other["spec"]["group"] == group:
                    await self.sync(other)
        else:
            self._known[name] = event.object
            await self.sync(event.object)

    async def sync(self, crd: Object) -> None:
        name = crd["metadata"]["name"]
        if crd["metadata"].get("deletionTimestamp"):
            task = self._cleanups.get(name)
            if task is None or task.done():
                self._cleanups[name] = asyncio.create_task(self._clean_up(crd))
            return
        status = self._desired_status(crd)
        if status != crd.get("status"):
            try:
                crd = await self.crds.update(
                    None, name, _with_status(status, crd), subresource="status"
                )
            except errors.StatusError as exc:
                if exc.code not in (404, 409):
                    raise
                return  # a newer event follows
            self._known[name] = crd
        if _condition(crd, "Established") == "True":
            # A storage version is recorded before the stores writing it are in place;
            # until then the stores installed before (if any) keep serving.
            if self.storage_versions is not None and not await self.storage_versions.ensure(crd):
                return
            try:
                self.custom_resources.install(crd)
            except Exception as exc:
                # One CRD that cannot be served (a conversion webhook's unusable CA bundle)
                # must not stall the others: a failure here would fail the whole watch.
                log.warning("serving CRD %s: %r", name, exc)

    async def _resync(self, name: str) -> None:
        """Sync a CRD again as last seen (a retry), unless it is gone meanwhile."""
        crd = self._known.get(name)
        if crd is not None:
            await self.sync(crd)

    async def _forget(self, crd: Object) -> None:
        """``crd`` is gone from storage: stop serving it and drop its StorageVersion."""
        self.custom_resources.uninstall(crd)
        if self.storage_versions is not None:
            await self.storage_versions.forget(crd)

    def _desired_status(self, crd: Object) -> Object:
        """Accepted names and conditions, as the naming and establishing controllers set them."""
        status = dict(crd.get("status") or {})
        names = crd["spec"]["names"]
        conflict = self._conflict(crd)
        if conflict is None:
            accepted = {k: v for k, v in names.items() if v not in (None, [], "")}
            status["acceptedNames"] = accepted
            conditions = [
                ("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
                (
                    "Established",
                    "True",
                    "InitialNamesAccepted",
                    "the initial names have been accepted",
                ),
            ]
        else:
            reason, message = conflict
            conditions = [
                ("NamesAccepted", "False", reason, message),
                ("Established", "False", "NotAccepted", "not all names are accepted"),
            ]
        status["conditions"] = _set_conditions(status.get("conditions") or [], conditions)
        return status

    def _conflict(self, crd: Object) -> tuple[str, str] | None:
        """The first name another CRD of the same group has accepted (upstream's wording)."""
        spec = crd["spec"]
        names = spec["names"]
        for other in self._known.values():
            if other["metadata"]["name"] == crd["metadata"]["name"]:
                continue
            if other["spec"]["group"] != spec["group"]:
                continue
            taken = (other.get("status") or {}).get("acceptedNames") or {}
            taken_all = {taken.get(k) for k in _NAME_FIELDS} | set(taken.get("shortNames") or ())
            if names.get("plural") in taken_all:
                return "PluralConflict", f'"{names["plural"]}" is already in use'
            if names.get("singular") in taken_all:
                return "SingularConflict", f'"{names["singular"]}" is already in use'
            for short in names.get("shortNames") or ():
                if short in taken_all:
                    return "ShortNamesConflict", f'"{short}" is already in use'
            if names.get("kind") in taken_all:
                return "KindConflict", f'"{names["kind"]}" is already in use'
            if names.get("listKind") in taken_all:
                return "ListKindConflict", f'"{names["listKind"]}" is already in use'
        return None

    async def _clean_up(self, crd: Object) -> None:
        """Delete every custom resource of a deleted CRD, then let the CRD go.

        Every server sharing the storage runs this for the same CRD: objects
        another one deleted first and a finalizer it already dropped are not
        errors, and a failure (storage unavailable) is retried, not given up.
        """
        name = crd["metadata"]["name"]
        backoff = Backoff(initial=self.retry_interval)
        while True:
            try:
                if await self._delete_instances(crd):
                    await self.crds.update(None, name, _drop_cleanup_finalizer)
                    return
                await asyncio.sleep(self.retry_interval)
            except asyncio.CancelledError:
                raise
            except errors.StatusError as exc:
                if exc.code == 404:
                    return  # the CRD is gone: another server finished first
                log.warning("cleaning up CRD %s: %s; retrying", name, exc)
                await asyncio.sleep(backoff.next())
            except Exception as exc:
                log.warning("cleaning up CRD %s: %r; retrying", name, exc)
                await asyncio.sleep(backoff.next())

    async def _delete_instances(self, crd: Object) -> bool:
        """Delete ``crd``'s custom resources; whether none is left (then it stops serving)."""
        store = self.custom_resources.store_or_new(crd)
        if store is not None:
            await store.delete_collection(None, EVERYTHING)
            if (await store.list(None, EVERYTHING)).items:
                return False
        self.custom_resources.uninstall(crd)
        return True


async def _drop_cleanup_finalizer(obj: Object) -> Object:
    finalizers = obj["metadata"].get("finalizers") or []
    obj["metadata"]["finalizers"] = [f for f in finalizers if f != CLEANUP_FINALIZER]
    obj["metadata"].pop("resourceVersion", None)  # retried on a conflict: the latest counts
    return obj


def _with_status(status: Object, crd: Object) -> Any:
    resource_version = crd["metadata"]["resourceVersion"]

    async def update(obj: Object) -> Object:
        obj["status"] = status
        obj["metadata"]["resourceVersion"] = resource_version
        return obj

    return update


def _condition(crd: Object, type_: str) -> str | None:
    for condition in (crd.get("status") or {}).get("conditions") or []:
        if condition.get("type") == type_:
            return condition.get("status")
    return None


def _set_conditions(current: list[Object], wanted: list[tuple[str, str, str, str]]) -> list[Object]:
    """Upstream ``SetCRDCondition``: a transition time changes only with the status."""
    by_type = {c.get("type"): c for c in current}
    out = [c for c in current if c.get("type") not in {w[0] for w in wanted}]
    for type_, status, reason, message in wanted:
        old = by_type.get(type_)
        if old is None or old.get("status") != status:
            since = now_rfc3339()
        else:
            since = old["lastTransitionTime"]
        out.append(
            {
                "type": type_,
                "status": status,
                "lastTransitionTime": since,
                "reason": reason,
                "message": message,
            }
        )
    return out
