"""API server identity (upstream's ``APIServerIdentity`` gate): a heartbeat Lease per server.

Each server names itself after its host (:func:`apiserver_id`), keeps a
coordination.k8s.io/v1 Lease of that name in ``kube-system`` renewed
(:class:`IdentityLeaseController`, upstream's
``start-kube-apiserver-identity-lease-controller`` hook running the
component-helpers lease controller), and deletes the identity leases of
servers that stopped renewing theirs (:class:`IdentityLeaseGC`, upstream's
``apiserverleasegc`` controller).  Both go through the ordinary lease store,
so watches and every other server see the same objects.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import hashlib
import logging
import random
import struct
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from kapi.apimachinery import errors
from kapi.apimachinery.labels import parse as parse_labels
from kapi.apimachinery.unstructured import Object
from kapi.apis.coordination_v1 import lease_expired, micro_time
from kapi.registry.predicate import SelectionPredicate
from kapi.registry.store import Store

log = logging.getLogger(__name__)

#: The label that marks an identity lease and names the component owning it.
IDENTITY_LABEL = "apiserver.kubernetes.io/identity"
#: The component kapi identifies as, as kube-apiserver does.
COMPONENT = "kube-apiserver"
HOSTNAME_LABEL = "kubernetes.io/hostname"
LEASE_NAMESPACE = "kube-system"

#: Renewal attempts in a row before a sync gives up until the next interval.
MAX_UPDATE_RETRIES = 5
#: The longest wait between attempts to read or create the lease.
MAX_BACKOFF = 7.0
#: Each renewal interval is stretched by up to this fraction, at random.
JITTER = 0.04


def apiserver_id(hostname: str, component: str = COMPONENT) -> str:
    """The server's ID and its identity lease's name, as kube-apiserver derives them.

    SHA-256 over the host name and the component name, each preceded by its
    length as a big-endian 16-bit integer; the first 16 bytes of the digest in
    unpadded, lower-case base32, after ``apiserver-``.
    """
    data = b""
    for part in (hostname.encode(), component.encode()):
        if len(part) > 0xFFFF:
            raise ValueError(f"identity part longer than 65535 bytes: {part[:32]!r}...")
        data += struct.pack(">H", len(part)) + part
    digest = hashlib.sha256(data).digest()[:16]
    return "apiserver-" + base64.b32encode(digest).decode().rstrip("=").lower()


def _now() -> datetime:
    return datetime.now(UTC)


class IdentityLeaseController:
    """Creates this server's identity lease and renews it every ``renew_interval`` seconds.

    As upstream's lease controller: a renewal writes over the lease last seen
    (conditional on its resourceVersion); a conflict or a missing lease makes
    it read the lease again, or create it, backing off while that fails.  The
    holder identity is set when the lease is created and kept by renewals;
    every write sets the duration, the renew time and the labels.
    """

    def __init__(
        self,
        leases: Store,
        hostname: str,
        *,
        lease_duration_seconds: int = 3600,
        renew_interval: float = 10.0,
        now: Callable[[], datetime] = _now,
    ) -> None:
        self.leases = leases
        self.hostname = hostname
        self.name = apiserver_id(hostname)
        self.holder_identity = f"{self.name}_{uuid.uuid4()}"
        self.lease_duration_seconds = lease_duration_seconds
        self.renew_interval = renew_interval
        self._now = now
        #: The lease as this controller last wrote or read it.
        self.latest: Object | None = None

    def new_lease(self, base: Object | None = None) -> Object:
        """The lease to write: a fresh one, or a copy of ``base``, with this server's state."""
        if base is None:
            lease: Object = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": LEASE_NAMESPACE},
                "spec": {"holderIdentity": self.holder_identity},
            }
        else:
            lease = copy.deepcopy(base)
        spec = lease.setdefault("spec", {})
        spec["leaseDurationSeconds"] = self.lease_duration_seconds
        spec["renewTime"] = micro_time(self._now())
        labels = lease["metadata"].setdefault("labels", {})
        labels[IDENTITY_LABEL] = COMPONENT
        labels[HOSTNAME_LABEL] = self.hostname
        return lease

    async def run(self) -> None:
        while True:
            try:
                await self.sync()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("identity lease %s: sync failed", self.name)
            await asyncio.sleep(self.renew_interval * (1 + random.random() * JITTER))

    async def sync(self) -> None:
        if self.latest is not None:
            try:
                await self._retry_update(self.latest)
                return
            except _UpdateFailed as exc:
                log.info("identity lease %s: %s; reading it again", self.name, exc)
        lease, created = await self._backoff_ensure()
        self.latest = lease
        if not created:
            try:
                await self._retry_update(lease)
            except _UpdateFailed as exc:
                log.error(
                    "identity lease %s: %s; retrying in %ss", self.name, exc, self.renew_interval
                )

    async def _retry_update(self, base: Object) -> None:
        for _ in range(MAX_UPDATE_RETRIES):
            desired = self.new_lease(base)

            async def replace(_current: Object, desired: Object = desired) -> Object:
                return desired

            try:
                self.latest = await self.leases.update(LEASE_NAMESPACE, self.name, replace)
                return
            except errors.StatusError as exc:
                log.warning("identity lease %s: update failed: %s", self.name, exc)
                if exc.code == 409:
                    base, _ = await self._backoff_ensure()
                elif exc.code == 404:
                    break
        raise _UpdateFailed(f"failed {MAX_UPDATE_RETRIES} attempts to update lease")

    async def _backoff_ensure(self) -> tuple[Object, bool]:
        """The lease as stored, created first when missing; retried with a growing pause."""
        pause = 0.1
        while True:
            try:
                return await self._ensure()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                pause = min(2 * pause, MAX_BACKOFF)
                log.error(
                    "identity lease %s: cannot ensure it exists, retrying in %ss: %s",
                    self.name,
                    pause,
                    exc,
                )
                await asyncio.sleep(pause)

    async def _ensure(self) -> tuple[Object, bool]:
        try:
            return await self.leases.get(LEASE_NAMESPACE, self.name), False
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
        return await self.leases.create(self.new_lease()), True


class _UpdateFailed(Exception):
    pass


def identity_leases(component: str = COMPONENT) -> SelectionPredicate:
    """The identity leases of ``component``: upstream's GC label selector."""
    return SelectionPredicate(label=parse_labels(f"{IDENTITY_LABEL}={component}"))


class IdentityLeaseGC:
    """Deletes expired identity leases in ``kube-system``, every ``period`` seconds.

    As upstream's ``apiserverleasegc``: a lease found expired is read again and
    deleted only if still expired; several servers may collect the same lease,
    so one already gone is fine.  The delete carries no precondition, as
    upstream's does not.
    """

    def __init__(self, leases: Store, period: float, *, now: Callable[[], datetime] = _now) -> None:
        self.leases = leases
        self.period = period
        self._now = now
        self._selector = identity_leases()

    async def run(self) -> None:
        while True:
            try:
                await self.collect()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("identity lease garbage collection failed")
            await asyncio.sleep(self.period)

    async def collect(self) -> list[str]:
        """One pass; returns the names of the leases it deleted."""
        deleted: list[str] = []
        listed = await self.leases.list(LEASE_NAMESPACE, self._selector)
        for lease in listed.items:
            if not lease_expired(lease, self._now()):
                continue
            name = lease["metadata"]["name"]
            try:
                fresh = await self.leases.get(LEASE_NAMESPACE, name)
            except errors.StatusError as exc:
                if exc.code != 404:
                    log.error("identity lease gc: reading %s: %s", name, exc)
                continue
            if not lease_expired(fresh, self._now()):
                continue
            try:
                await self.leases.delete(LEASE_NAMESPACE, name)
            except errors.StatusError as exc:
                if exc.code not in (404, 409):
                    log.error("identity lease gc: deleting %s: %s", name, exc)
                continue
            deleted.append(name)
        return deleted
