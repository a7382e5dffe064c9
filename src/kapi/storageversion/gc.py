"""Garbage collection of StorageVersion entries of servers that are gone.

After upstream ``pkg/controller/storageversiongc``: an entry whose
``apiServerID`` has no live identity lease in kube-system (missing, not
labelled as a kube-apiserver's, or expired) is removed, the common encoding
version is recomputed, and a StorageVersion left without entries is
deleted.  It runs every ``period`` seconds and whenever an identity lease is
deleted; only the leader of the servers sharing the storage runs it
(:mod:`kapi.storageversion.leaderelection`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from kapi.apimachinery import errors
from kapi.apimachinery.labels import parse as parse_labels
from kapi.apimachinery.unstructured import Object
from kapi.apis.coordination_v1 import lease_expired
from kapi.registry.informer import reflect
from kapi.registry.predicate import EVERYTHING, SelectionPredicate
from kapi.registry.store import Store, WatchEvent
from kapi.runtime.objects import deep_copy, now_rfc3339
from kapi.storageversion.manager import set_common_encoding_version

log = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-system"
IDENTITY_LABEL = "apiserver.kubernetes.io/identity"
COMPONENT = "kube-apiserver"
DEFAULT_PERIOD = 60.0


def _now() -> datetime:
    return datetime.now(UTC)


def live_servers(leases: Iterable[Object], now: datetime) -> set[str]:
    """The IDs of servers with an identity lease (labelled kube-apiserver) not expired."""
    return {
        lease["metadata"]["name"]
        for lease in leases
        if ((lease["metadata"].get("labels") or {}).get(IDENTITY_LABEL) == COMPONENT)
        and not lease_expired(lease, now)
    }


def prune(sv: Object, live: set[str], now: str) -> tuple[str, Object | None]:
    """What the collector does with ``sv``: ``("keep", None)``, ``("delete", None)``
    when no entry is left, or ``("update", new)`` with the stale entries removed
    and the common version recomputed (transition time ``now``)."""
    entries = (sv.get("status") or {}).get("storageVersions") or []
    kept = [entry for entry in entries if entry.get("apiServerID") in live]
    if len(kept) == len(entries):
        return "keep", None
    if not kept:
        return "delete", None
    updated = deep_copy(sv)
    updated["status"]["storageVersions"] = kept
    set_common_encoding_version(updated, now)
    return "update", updated


class StorageVersionGC:
    """Removes stale StorageVersion entries; see the module's description."""

    def __init__(
        self,
        storage_versions: Store,
        leases: Store,
        period: float = DEFAULT_PERIOD,
        *,
        now: Callable[[], datetime] = _now,
    ) -> None:
        self.storage_versions = storage_versions
        self.leases = leases
        self.period = period
        self._now = now
        self._identity = SelectionPredicate(label=parse_labels(f"{IDENTITY_LABEL}={COMPONENT}"))
        self._wake = asyncio.Event()

    async def collect(self) -> list[tuple[str, str]]:
        """One pass; returns (name, "update" | "delete") for each object it changed."""
        listed = await self.leases.list(LEASE_NAMESPACE, self._identity)
        live = live_servers(listed.items, self._now())
        done: list[tuple[str, str]] = []
        for sv in (await self.storage_versions.list(None, EVERYTHING)).items:
            action, updated = prune(sv, live, now_rfc3339())
            name = sv["metadata"]["name"]
            try:
                if action == "delete":
                    await self.storage_versions.delete(None, name)
                elif action == "update" and updated is not None:
                    desired = updated

                    async def replace(_current: Object, desired: Object = desired) -> Object:
                        return desired

                    await self.storage_versions.update(None, name, replace, subresource="status")
                else:
                    continue
            except errors.StatusError as exc:
                # Changed meanwhile (a server registering): the next pass looks again.
                if exc.code not in (404, 409):
                    log.error("storage version gc: %s %s: %s", action, name, exc.message)
                continue
            log.info(
                "storage version gc: %s %s", "deleted" if action == "delete" else "pruned", name
            )
            done.append((name, action))
        return done

    async def run(self) -> None:
        """Collect every period and whenever an identity lease is deleted, until cancelled."""
        follower = asyncio.create_task(reflect(self.leases, _LeaseDeletions(self._wake)))
        try:
            while True:
                self._wake.clear()
                try:
                    await self.collect()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("storage version garbage collection failed")
                # asyncio.wait, not wait_for: before Python 3.12 that can swallow a cancel.
                waiter = asyncio.ensure_future(self._wake.wait())
                try:
                    await asyncio.wait({waiter}, timeout=self.period)
                finally:
                    waiter.cancel()
        finally:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await follower


class _LeaseDeletions:
    """Wakes the collector when an identity lease in kube-system is deleted."""

    def __init__(self, wake: asyncio.Event) -> None:
        self._wake = wake

    async def replace(self, objects: list[Object]) -> None:
        return None

    async def apply(self, event: WatchEvent) -> None:
        metadata = event.object.get("metadata") or {}
        if (
            event.type == "DELETED"
            and metadata.get("namespace") == LEASE_NAMESPACE
            and (metadata.get("labels") or {}).get(IDENTITY_LABEL) == COMPONENT
        ):
            self._wake.set()
