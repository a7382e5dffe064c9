"""Lease-based leader election: two candidates against one real lease store."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kapi.features import FeatureGate
from kapi.registry.store import Store
from kapi.server import APIServer, ServerConfig
from kapi.storageversion.leaderelection import LeaderElector


class _Clock:
    """Monotonic seconds the test moves by hand."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _elector(leases: Store, identity: str, clock: _Clock) -> LeaderElector:
    return LeaderElector(
        leases,
        "kube-system",
        "kapi-storage-version-gc",
        identity,
        lease_duration=15,
        renew_deadline=10,
        retry_period=2,
        now=lambda: datetime.fromtimestamp(1_767_000_000 + clock.t, UTC),
        clock=clock,
    )


def _with_leases(tmp_path: Path, scenario: Any) -> None:
    async def main() -> None:
        gates = FeatureGate.parse("APIServerIdentity=false")
        server = APIServer(ServerConfig(data_dir=tmp_path, feature_gates=gates))
        await server.start()
        try:
            await scenario(server.store("coordination.k8s.io", "leases"))
        finally:
            await server.stop()

    asyncio.run(main())


def test_one_leads_the_other_waits_then_takes_over_an_expired_lease(tmp_path: Path) -> None:
    async def scenario(leases: Store) -> None:
        clock = _Clock()
        a, b = _elector(leases, "a_1", clock), _elector(leases, "b_2", clock)
        assert await a.try_acquire_or_renew()
        assert a.is_leader()
        lease = await leases.get("kube-system", "kapi-storage-version-gc")
        assert lease["spec"]["holderIdentity"] == "a_1"
        assert lease["spec"]["leaseDurationSeconds"] == 15
        assert lease["spec"]["leaseTransitions"] == 0
        assert not await b.try_acquire_or_renew()
        assert not b.is_leader()
        clock.t += 5
        assert await a.try_acquire_or_renew()  # a renews: still its lease
        clock.t += 14
        # b saw the record change at the renewal 14 s ago: not expired yet.
        assert not await b.try_acquire_or_renew()
        clock.t += 16
        assert await b.try_acquire_or_renew()  # a stopped renewing: b takes over
        lease = await leases.get("kube-system", "kapi-storage-version-gc")
        assert lease["spec"]["holderIdentity"] == "b_2"
        assert lease["spec"]["leaseTransitions"] == 1
        assert not await a.try_acquire_or_renew()  # a sees b's new record: fresh
        assert not a.is_leader()

    _with_leases(tmp_path, scenario)


def test_a_released_lease_is_free_at_once(tmp_path: Path) -> None:
    async def scenario(leases: Store) -> None:
        clock = _Clock()
        a, b = _elector(leases, "a_1", clock), _elector(leases, "b_2", clock)
        assert await a.try_acquire_or_renew()

        async def release(lease: dict[str, Any]) -> dict[str, Any]:
            lease["spec"]["holderIdentity"] = ""
            return lease

        await leases.update("kube-system", "kapi-storage-version-gc", release)
        assert await b.try_acquire_or_renew()

    _with_leases(tmp_path, scenario)


def test_only_the_leader_runs_and_a_leader_that_cannot_renew_steps_down(tmp_path: Path) -> None:
    async def scenario(leases: Store) -> None:
        a = LeaderElector(
            leases,
            "kube-system",
            "kapi-storage-version-gc",
            "a_1",
            lease_duration=1.5,
            renew_deadline=0.5,
            retry_period=0.1,
        )
        running = asyncio.Event()
        stopped = asyncio.Event()

        async def lead() -> None:
            running.set()
            try:
                await asyncio.Event().wait()
            finally:
                stopped.set()

        task = asyncio.create_task(a.run(lead))
        await asyncio.wait_for(running.wait(), 10)
        # Someone else takes the lease: a's renewals fail and it stops leading.

        async def steal(lease: dict[str, Any]) -> dict[str, Any]:
            lease["spec"]["holderIdentity"] = "b_2"
            lease["spec"]["leaseDurationSeconds"] = 3600
            return lease

        await leases.update("kube-system", "kapi-storage-version-gc", steal)
        await asyncio.wait_for(stopped.wait(), 10)
        assert not a.is_leader()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    _with_leases(tmp_path, scenario)


def test_timings_are_checked() -> None:
    with pytest.raises(ValueError, match="leaseDuration must be greater than renewDeadline"):
        LeaderElector(None, "ns", "n", "i", lease_duration=10, renew_deadline=10)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="renewDeadline must be greater than retryPeriod"):
        LeaderElector(None, "ns", "n", "i", renew_deadline=2, retry_period=2)  # type: ignore[arg-type]


def test_a_leader_cancelled_releases_its_lease_for_the_next_at_once(tmp_path: Path) -> None:
    async def scenario(leases: Store) -> None:
        clock = _Clock()
        a, b = _elector(leases, "a_1", clock), _elector(leases, "b_2", clock)
        leading = asyncio.Event()

        async def lead() -> None:
            leading.set()
            await asyncio.Event().wait()

        running = asyncio.create_task(a.run(lead))
        await asyncio.wait_for(leading.wait(), 5)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        lease = await leases.get("kube-system", "kapi-storage-version-gc")
        assert lease["spec"]["holderIdentity"] == ""
        assert lease["spec"]["leaseDurationSeconds"] == 1
        # No need to wait out the 15 s: the clock has not moved and b takes over.
        assert await b.try_acquire_or_renew()
        lease = await leases.get("kube-system", "kapi-storage-version-gc")
        assert lease["spec"]["holderIdentity"] == "b_2"

    _with_leases(tmp_path, scenario)
