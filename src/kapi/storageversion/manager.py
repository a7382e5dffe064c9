"""Recording this server's storage versions in StorageVersion objects (KEP-2339).

After upstream ``k8s.io/apiserver/pkg/storageversion`` (the manager and its
updater): every resource this server persists is described by a
:class:`ResourceInfo`; :class:`StorageVersionManager` writes, for each, this
server's entry into the ``internal.apiserver.k8s.io/v1alpha1`` StorageVersion
named ``<group>.<resource>`` and keeps, per resource, whether that succeeded
and the last error, which the write gate in the handler chain reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from dataclasses import dataclass, field

from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.registry.store import Store
from kapi.runtime.objects import deep_copy, now_rfc3339

log = logging.getLogger(__name__)

GROUP = "internal.apiserver.k8s.io"
API_VERSION = f"{GROUP}/v1alpha1"
KIND = "StorageVersion"

CONDITION_TYPE = "AllEncodingVersionsEqual"
_SET = ("True", "CommonEncodingVersionSet", "Common encoding version set")
_UNSET = ("False", "CommonEncodingVersionUnset", "Common encoding version unset")

#: Failures other than conflicts that one resource's registration survives.
RETRIES = 3
#: Bounds of the random pause before retrying a registration (seconds).
RETRY_PAUSE = (0.01, 0.1)
#: What ``last_update_error`` answers when there was no error (Go prints a nil error so).
NO_ERROR = "<nil>"


@dataclass(frozen=True)
class ResourceInfo:
    """What this server reports for one resource; versions are GroupVersion strings
    (``v1`` for the core group, ``policy/v1`` otherwise).

    ``equivalent_resources``: other (group, resource) pairs that share this
    resource's storage (events.k8s.io ``events`` and core ``events``); they are
    pending, and registered, together with this one, as upstream's equivalent
    resource registry makes them.
    """

    group: str
    resource: str
    encoding_version: str
    decodable_versions: tuple[str, ...]
    served_versions: tuple[str, ...]
    equivalent_resources: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    #: How long a write to this resource waits for a registration in progress before
    #: it is refused (seconds).  Built-ins are refused at once, as upstream's filter
    #: does; a custom resource changing its storage version waits a moment instead.
    write_wait: float = field(default=0.0, compare=False)


def storage_version_name(group: str, resource: str) -> str:
    """``<group>.<resource>``; the core group is spelled ``core`` (a DNS subdomain)."""
    return f"{group or 'core'}.{resource}"


def set_common_encoding_version(sv: Object, now: str) -> None:
    """Recompute ``status.commonEncodingVersion`` and the AllEncodingVersionsEqual
    condition of ``sv`` in place; ``now`` (RFC 3339) is the transition time used.

    The common version is set only when every entry agrees.  The condition's
    lastTransitionTime moves when its status flips, or when the common version
    changes from one value to another.
    """
    status = sv.setdefault("status", {})
    old_common = status.pop("commonEncodingVersion", None)
    entries = status.get("storageVersions") or []
    encodings = {entry.get("encodingVersion") or "" for entry in entries}
    common = next(iter(encodings)) if len(encodings) == 1 else None
    if common is not None:
        status["commonEncodingVersion"] = common
    cond_status, reason, message = _SET if common is not None else _UNSET
    condition: Object = {"type": CONDITION_TYPE, "status": cond_status}
    generation = (sv.get("metadata") or {}).get("generation")
    if generation:
        condition["observedGeneration"] = generation
    condition["lastTransitionTime"] = now
    condition["reason"] = reason
    condition["message"] = message
    conditions: list[Object] = status.setdefault("conditions", [])
    existing = next((c for c in conditions if c.get("type") == CONDITION_TYPE), None)
    if existing is None:
        conditions.append(condition)
        return
    moved = old_common is not None and common is not None and old_common != common
    if existing.get("status") == cond_status and not moved and "lastTransitionTime" in existing:
        condition["lastTransitionTime"] = existing["lastTransitionTime"]
    existing.clear()
    existing.update(condition)


def local_update(
    sv: Object, server_id: str, info: ResourceInfo, *, now: str | None = None
) -> Object:
    """A copy of ``sv`` with this server's entry replaced (or added) from ``info``,
    and the common version and condition recomputed; other servers' entries stay."""
    updated = deep_copy(sv)
    entry: Object = {
        "apiServerID": server_id,
        "encodingVersion": info.encoding_version,
        "decodableVersions": list(info.decodable_versions),
        "servedVersions": list(info.served_versions),
    }
    entries: list[Object] = updated.setdefault("status", {}).setdefault("storageVersions", [])
    for i, existing in enumerate(entries):
        if existing.get("apiServerID") == server_id:
            entries[i] = entry
            break
    else:
        entries.append(entry)
    set_common_encoding_version(updated, now or now_rfc3339())
    return updated


@dataclass
class _Status:
    done: bool = False
    last_error: str = NO_ERROR
    #: Set once the registration succeeded: writes waiting for it go on.
    registered: asyncio.Event = field(default_factory=asyncio.Event)


def _key(group: str, resource: str) -> tuple[str, str]:
    return (group, resource)


class StorageVersionManager:
    """This server's registrations, and the per-resource state the write gate reads.

    Writes go straight through the StorageVersion ``Store`` (upstream uses a
    loopback client; the semantics, create then ``/status`` update, are the same).
    """

    def __init__(self, storage_versions: Store, server_id: str) -> None:
        self.storage_versions = storage_versions
        self.server_id = server_id
        #: The resources of the registration passes (the built-ins).
        self._infos: dict[tuple[str, str], ResourceInfo] = {}
        #: Resources registered one at a time by :meth:`register` (custom resources):
        #: their owner registers them again when what it reports changes, so a pass,
        #: working from what it read earlier, never writes them (it could record a
        #: storage version older than the one just registered).
        self._registered_alone: dict[tuple[str, str], ResourceInfo] = {}
        self._status: dict[tuple[str, str], _Status] = {}
        self._completed = False
        #: Cleared while registration is held (a test affordance): nothing registers.
        self._released = asyncio.Event()
        self._released.set()
        #: Resources not registered yet: the write gate's fast path is this being empty.
        self._pending: set[tuple[str, str]] = set()

    # -- state -------------------------------------------------------------------------

    def add_resource_info(self, *infos: ResourceInfo) -> None:
        """Record resources to register; each (and its equivalents) is pending until done."""
        for info in infos:
            self._infos[_key(info.group, info.resource)] = info
            for gr in ((info.group, info.resource), *info.equivalent_resources):
                if gr not in self._status:
                    self._status[gr] = _Status()
                    self._pending.add(gr)

    def pending_update(self, group: str, resource: str) -> bool:
        """Whether a write to this resource must still wait (unknown resources never wait)."""
        status = self._status.get(_key(group, resource))
        return status is not None and not status.done

    def hold(self) -> None:
        """Hold every registration, the passes' and :meth:`register`'s, until :meth:`release`
        (``--hold-storage-version-registration``: the 503 window made observable)."""
        self._released.clear()

    def release(self) -> None:
        if self.held:
            log.info("storage version registration released")
        self._released.set()

    @property
    def held(self) -> bool:
        return not self._released.is_set()

    def has_pending(self) -> bool:
        """Whether any resource still waits for its registration (the gate's fast path)."""
        return bool(self._pending)

    async def wait_registered(self, group: str, resource: str) -> bool:
        """Whether a write to this resource may go on: at once when it is registered (or
        unknown); else after waiting up to its ``write_wait`` for the registration."""
        key = _key(group, resource)
        status = self._status.get(key)
        if status is None or status.done:
            return True
        info = self._infos.get(key) or self._registered_alone.get(key)
        wait = info.write_wait if info is not None else 0.0
        if wait > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(status.registered.wait(), wait)
        # Removed meanwhile (its CRD deleted): nothing to wait for; the handler answers.
        return status.done or key not in self._status

    def last_update_error(self, group: str, resource: str) -> str:
        """The text of the last registration error of this resource, ``<nil>`` when none."""
        status = self._status.get(_key(group, resource))
        return NO_ERROR if status is None else status.last_error

    def completed(self) -> bool:
        """Whether one pass registered every recorded resource."""
        return self._completed

    def _record(self, info: ResourceInfo, error: str | None) -> None:
        for gr in ((info.group, info.resource), *info.equivalent_resources):
            status = self._status.get(gr)
            if status is None:
                continue
            if error is None:
                status.done, status.last_error = True, NO_ERROR
                status.registered.set()
                self._pending.discard(gr)
            else:
                status.last_error = error

    # -- registration ------------------------------------------------------------------

    async def update_storage_versions(self) -> None:
        """One pass over every resource of :meth:`add_resource_info` (not those of
        :meth:`register`), sorted by group then resource (so servers that dedup the
        same way pick the same owner); marks the manager completed when all of them
        succeeded."""
        await self._released.wait()
        infos = sorted(self._infos.values(), key=lambda i: (i.group, i.resource))
        failed = False
        for info in infos:
            try:
                await self.update_storage_version_for(info)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                message = exc.message if isinstance(exc, errors.StatusError) else str(exc)
                log.error(
                    "failed to update storage version for %s: %s",
                    errors.qualified(info.resource, info.group),
                    message,
                )
                self._record(info, message)
                failed = True
                continue
            self._record(info, None)
        if not failed:
            log.info("storage version updates complete")
            self._completed = True

    async def update_storage_version_for(self, info: ResourceInfo) -> None:
        """Get-or-create the resource's StorageVersion, then write this server's entry
        through ``/status``.

        As upstream's ``updateStorageVersionFor``: an AlreadyExists or Conflict
        (another server registering the same resource at the same moment) is
        retried without limit, other errors up to :data:`RETRIES` times.  Upstream
        pauses one second before each retry; this pauses a short random time
        (:data:`RETRY_PAUSE`) so that several servers starting together all
        register well under two seconds, and their retries do not collide again.
        """
        attempts = 0
        while True:
            try:
                await self._single_update(info)
                return
            except errors.StatusError as exc:
                if exc.reason not in ("AlreadyExists", "Conflict"):
                    attempts += 1
                    log.warning(
                        "retry %d, failed to update storage version for %s: %s",
                        attempts,
                        errors.qualified(info.resource, info.group),
                        exc.message,
                    )
                    if attempts >= RETRIES:
                        raise
            await asyncio.sleep(random.uniform(*RETRY_PAUSE))

    async def _single_update(self, info: ResourceInfo) -> None:
        name = storage_version_name(info.group, info.resource)
        try:
            current: Object | None = await self.storage_versions.get(None, name)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
            current = None
        if current is None:
            fresh: Object = {
                "apiVersion": API_VERSION,
                "kind": KIND,
                "metadata": {"name": name},
                "spec": {},
            }
            updated = local_update(fresh, self.server_id, info)
            created = await self.storage_versions.create(deep_copy(updated))
            created["status"] = updated["status"]
            desired = created
        else:
            desired = local_update(current, self.server_id, info)

        async def replace(_current: Object) -> Object:
            return desired

        await self.storage_versions.update(None, name, replace, subresource="status")

    async def register(self, info: ResourceInfo) -> None:
        """Register one resource now, whatever was registered for it before (a CRD about
        to be served, or to change its storage version): writes to it wait (see
        ``write_wait``) until this succeeds; a failure is recorded and raised."""
        self._registered_alone[_key(info.group, info.resource)] = info
        for gr in ((info.group, info.resource), *info.equivalent_resources):
            status = self._status.get(gr)
            if status is None or status.done:  # a pending one keeps its waiters
                self._status[gr] = _Status()
            self._pending.add(gr)
        await self._released.wait()
        try:
            await self.update_storage_version_for(info)
        except errors.StatusError as exc:
            self._record(info, exc.message)
            raise
        except Exception as exc:
            self._record(info, str(exc))
            raise
        self._record(info, None)

    async def remove(self, group: str, resource: str) -> None:
        """Forget a resource and delete its StorageVersion (its CRD was deleted)."""
        info = self._registered_alone.pop(_key(group, resource), None)
        for gr in ((group, resource), *(info.equivalent_resources if info else ())):
            status = self._status.pop(gr, None)
            if status is not None:
                # Writes still waiting for it go on: the resource is no longer served.
                status.registered.set()
            self._pending.discard(gr)
        try:
            await self.storage_versions.delete(None, storage_version_name(group, resource))
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
