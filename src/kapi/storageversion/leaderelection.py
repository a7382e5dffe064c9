"""Lease-based leader election, after client-go's ``tools/leaderelection``.

Candidates race for one coordination.k8s.io/v1 Lease: whoever writes its
``holderIdentity`` while the lease is free (empty, or not renewed within its
duration as this candidate observed it) leads, and must renew it every
retry period; a leader that cannot renew within the renew deadline steps
down (what it ran is cancelled) and becomes a candidate again.  Expiry is
judged on this process's clock, from when it last saw the record change,
as client-go does, so clock skew between servers does not matter.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.apis.coordination_v1 import micro_time
from kapi.registry.store import Store

log = logging.getLogger(__name__)

#: component-base's defaults for ``--leader-elect-*`` (seconds).
LEASE_DURATION = 15.0
RENEW_DEADLINE = 10.0
RETRY_PERIOD = 2.0
#: client-go stretches each retry period by up to this factor, at random.
JITTER = 1.2

_RECORD_FIELDS = (
    "holderIdentity",
    "leaseDurationSeconds",
    "acquireTime",
    "renewTime",
    "leaseTransitions",
)


def _now() -> datetime:
    return datetime.now(UTC)


def _record(lease: Object) -> tuple[object, ...]:
    spec = lease.get("spec") or {}
    return tuple(spec.get(name) for name in _RECORD_FIELDS)


#: How long a cancelled leader tries to release its lease before it gives up (seconds).
RELEASE_TIMEOUT = 1.0


class LeaderElector:
    """One candidate for the lease ``namespace/name``, as ``identity``.

    ``clock`` (monotonic seconds) measures how long the observed record has
    not changed; ``now`` stamps acquireTime and renewTime.
    """

    def __init__(
        self,
        leases: Store,
        namespace: str,
        name: str,
        identity: str,
        *,
        lease_duration: float = LEASE_DURATION,
        renew_deadline: float = RENEW_DEADLINE,
        retry_period: float = RETRY_PERIOD,
        now: Callable[[], datetime] = _now,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if lease_duration <= renew_deadline:
            raise ValueError("leaseDuration must be greater than renewDeadline")
        if renew_deadline <= JITTER * retry_period:
            raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
        self.leases = leases
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self._now = now
        self._clock = clock
        self._observed: Object | None = None
        self._observed_record: tuple[object, ...] | None = None
        self._observed_at = 0.0

    # -- one attempt -------------------------------------------------------------------

    def is_leader(self) -> bool:
        """Whether the lease as last observed names this candidate."""
        return self._observed_record is not None and self._observed_record[0] == self.identity

    def _observe(self, lease: Object) -> None:
        record = _record(lease)
        if record != self._observed_record:
            self._observed_record = record
            self._observed_at = self._clock()
        self._observed = lease

    def _held_by_other(self, lease: Object) -> bool:
        holder = (lease.get("spec") or {}).get("holderIdentity")
        if not holder or holder == self.identity:
            return False
        return self._observed_at + self.lease_duration > self._clock()

    async def try_acquire_or_renew(self) -> bool:
        """One attempt (client-go's ``tryAcquireOrRenew``): True when this candidate
        holds the lease afterwards."""
        stamp = micro_time(self._now())
        try:
            current = await self.leases.get(self.namespace, self.name)
        except errors.StatusError as exc:
            if exc.code != 404:
                log.error(
                    "error retrieving resource lock %s/%s: %s", self.namespace, self.name, exc
                )
                return False
            lease: Object = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": {
                    "holderIdentity": self.identity,
                    "leaseDurationSeconds": max(1, int(self.lease_duration)),
                    "acquireTime": stamp,
                    "renewTime": stamp,
                    "leaseTransitions": 0,
                },
            }
            try:
                created = await self.leases.create(lease)
            except errors.StatusError as exc:
                log.error("error initially creating leader election record: %s", exc)
                return False
            self._observe(created)
            return True
        self._observe(current)
        if self._held_by_other(current):
            return False
        spec = dict(current.get("spec") or {})
        if spec.get("holderIdentity") == self.identity:
            spec.setdefault("acquireTime", stamp)
            spec.setdefault("leaseTransitions", 0)
        else:
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
            spec["acquireTime"] = stamp
        spec["holderIdentity"] = self.identity
        spec["leaseDurationSeconds"] = max(1, int(self.lease_duration))
        spec["renewTime"] = stamp
        desired = {**current, "spec": spec}

        async def replace(_current: Object) -> Object:
            return desired

        try:
            updated = await self.leases.update(self.namespace, self.name, replace)
        except errors.StatusError as exc:
            log.error("failed to update lock %s/%s: %s", self.namespace, self.name, exc)
            return False
        self._observe(updated)
        return True

    # -- the loop ----------------------------------------------------------------------

    async def _pause(self) -> None:
        await asyncio.sleep(self.retry_period * (1 + random.random() * (JITTER - 1)))

    async def acquire(self) -> None:
        """Try every retry period (jittered) until this candidate leads."""
        log.info("attempting to acquire leader lease %s/%s...", self.namespace, self.name)
        while not await self.try_acquire_or_renew():
            await self._pause()
        log.info("successfully acquired lease %s/%s", self.namespace, self.name)

    async def renew(self) -> None:
        """Renew every retry period; returns when a renewal did not succeed within
        the renew deadline (leadership lost)."""
        while True:
            deadline = self._clock() + self.renew_deadline
            while True:
                # No wait_for around it: before Python 3.12 it can swallow a cancellation.
                renewed = await self.try_acquire_or_renew() and self._clock() < deadline
                if renewed:
                    break
                if self._clock() >= deadline:
                    log.info("failed to renew lease %s/%s", self.namespace, self.name)
                    return
                await asyncio.sleep(min(self.retry_period, max(deadline - self._clock(), 0)))
            await asyncio.sleep(self.retry_period)

    async def release(self) -> None:
        """Give the lease up now (client-go's ``ReleaseOnCancel``): an empty holder and a
        one-second duration, so that another candidate takes over at once instead of
        waiting out the lease duration.  Written over the lease as last observed: when
        someone else wrote it since, it is not ours to release."""
        if not self.is_leader() or self._observed is None:
            return
        stamp = micro_time(self._now())
        spec = dict(self._observed.get("spec") or {})
        spec.update(holderIdentity="", leaseDurationSeconds=1, acquireTime=stamp, renewTime=stamp)
        desired = {**self._observed, "spec": spec}

        async def replace(_current: Object) -> Object:
            return desired

        try:
            await self.leases.update(self.namespace, self.name, replace)
        except errors.StatusError as exc:
            log.info("leader lease %s/%s not released: %s", self.namespace, self.name, exc)
            return
        self._observed_record = None
        log.info("released leader lease %s/%s", self.namespace, self.name)

    async def run(self, lead: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Forever: acquire, run ``lead`` while renewing, cancel it on losing the lease;
        cancelled while leading, it releases the lease first (bounded by a second)."""
        while True:
            await self.acquire()
            task = asyncio.create_task(lead())
            try:
                await self.renew()
            except asyncio.CancelledError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
                releasing = asyncio.create_task(self.release())
                await asyncio.wait({releasing}, timeout=RELEASE_TIMEOUT)
                releasing.cancel()
                raise
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            log.info("leader lost: %s stepped down from %s", self.identity, self.name)
            self._observed_record = None
