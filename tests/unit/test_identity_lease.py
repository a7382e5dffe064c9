"""APIServerIdentity: the lease name formula, the lease object, renewal and garbage collection."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kapi.apimachinery import errors
from kapi.controllers.identity import (
    IdentityLeaseController,
    IdentityLeaseGC,
    apiserver_id,
    lease_expired,
    micro_time,
)
from kapi.features import FeatureGate
from kapi.registry.predicate import EVERYTHING
from kapi.server import APIServer
from tests.helpers.in_process import run_with_server

# Computed apart from kapi, with coreutils and openssl from the formula's description
# (2-byte big-endian length + host name, 2-byte length + "kube-apiserver"; SHA-256;
# first 16 bytes; base32 without padding, lower case):
#   printf '\x00\x06kapi-0\x00\x0ekube-apiserver' | openssl dgst -sha256 -binary \
#     | head -c 16 | base32 | tr -d = | tr A-Z a-z
KNOWN_IDS = {
    "kapi-0": "apiserver-f25lhf6jyjsyfoxrhaplbhdzdm",
    "my-host.example.com": "apiserver-fla7u2v73kndc6gnnxly3bamji",
}


@pytest.mark.parametrize(("hostname", "expected"), sorted(KNOWN_IDS.items()))
def test_apiserver_id_is_upstreams_formula(hostname: str, expected: str) -> None:
    assert apiserver_id(hostname) == expected


def test_apiserver_id_depends_on_the_component_and_is_a_valid_lease_name() -> None:
    name = apiserver_id("kapi-0")
    assert apiserver_id("kapi-0", "other-apiserver") != name
    assert len(name) == len("apiserver-") + 26
    assert name == name.lower() and name.replace("-", "").isalnum()


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def test_new_lease_is_upstreams_identity_lease() -> None:
    clock = _Clock()
    controller = IdentityLeaseController(
        None,  # type: ignore[arg-type]
        "kapi-0",
        lease_duration_seconds=30,
        renew_interval=1,
        now=clock,
    )
    lease = controller.new_lease()
    holder = lease["spec"]["holderIdentity"]
    prefix, _, suffix = holder.partition("_")
    assert prefix == KNOWN_IDS["kapi-0"] and len(suffix) == 36
    assert lease == {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": KNOWN_IDS["kapi-0"],
            "namespace": "kube-system",
            "labels": {
                "apiserver.kubernetes.io/identity": "kube-apiserver",
                "kubernetes.io/hostname": "kapi-0",
            },
        },
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 30,
            "renewTime": "2026-01-02T03:04:05.678901Z",
        },
    }
    # A renewal keeps whatever holder the stored lease has and refreshes the rest.
    stored = {**lease, "spec": {**lease["spec"], "holderIdentity": "someone-else"}}
    clock.now += timedelta(seconds=5)
    renewed = controller.new_lease(stored)
    assert renewed["spec"] == {
        "holderIdentity": "someone-else",
        "leaseDurationSeconds": 30,
        "renewTime": "2026-01-02T03:04:10.678901Z",
    }
    assert stored["spec"]["renewTime"] == "2026-01-02T03:04:05.678901Z"


def test_lease_expiry_is_renew_time_plus_duration() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)

    def lease(renewed: datetime | None, duration: int | None) -> dict[str, Any]:
        spec: dict[str, Any] = {}
        if renewed is not None:
            spec["renewTime"] = micro_time(renewed)
        if duration is not None:
            spec["leaseDurationSeconds"] = duration
        return {"spec": spec}

    assert lease_expired(lease(now - timedelta(seconds=11), 10), now)
    assert not lease_expired(lease(now - timedelta(seconds=10), 10), now)
    assert not lease_expired(lease(now - timedelta(seconds=9), 10), now)
    # Without a renew time or a duration a lease is invalid, so collectable.
    assert lease_expired(lease(None, 10), now)
    assert lease_expired(lease(now, None), now)


def _run(tmp_path: Path, scenario: Callable[[APIServer], Awaitable[Any]], **config: Any) -> Any:
    return run_with_server(tmp_path, scenario, **config)


def _foreign(name: str, renewed: datetime, duration: int, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "namespace": "kube-system",
            "labels": labels or {"apiserver.kubernetes.io/identity": "kube-apiserver"},
        },
        "spec": {
            "holderIdentity": f"{name}_x",
            "leaseDurationSeconds": duration,
            "renewTime": micro_time(renewed),
        },
    }


def test_server_exposes_its_identity(tmp_path: Path) -> None:
    async def scenario(server: APIServer) -> dict[str, Any]:
        assert server.identity_lease is not None
        # The controller's first sync may still be on its way.
        for _ in range(200):
            try:
                return await server.store("coordination.k8s.io", "leases").get(
                    "kube-system", server.identity
                )
            except errors.StatusError:
                await asyncio.sleep(0.01)
        raise AssertionError("no identity lease")

    lease = _run(tmp_path, scenario, identity_hostname="node-a")
    assert lease["metadata"]["name"] == apiserver_id("node-a")
    assert lease["metadata"]["labels"]["kubernetes.io/hostname"] == "node-a"


def test_no_identity_when_the_gate_is_off(tmp_path: Path) -> None:
    gates = FeatureGate({"APIServerIdentity": False})

    async def scenario(server: APIServer) -> list[dict[str, Any]]:
        assert server.identity == "" and server.identity_lease is None
        listed = await server.store("coordination.k8s.io", "leases").list(None, EVERYTHING)
        return listed.items

    assert _run(tmp_path, scenario, feature_gates=gates) == []


def test_controller_renews_and_recovers_from_conflicts_and_deletion(tmp_path: Path) -> None:
    clock = _Clock()

    async def scenario(server: APIServer) -> None:
        leases = server.store("coordination.k8s.io", "leases")
        controller = IdentityLeaseController(
            leases, "other-host", lease_duration_seconds=40, now=clock
        )
        await controller.sync()
        created = await leases.get("kube-system", controller.name)
        assert created["spec"]["renewTime"] == micro_time(clock.now)
        assert created["spec"]["holderIdentity"] == controller.holder_identity

        clock.now += timedelta(seconds=10)
        await controller.sync()
        renewed = await leases.get("kube-system", controller.name)
        assert renewed["spec"]["renewTime"] == micro_time(clock.now)
        assert renewed["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]

        # Someone else writes the lease: the next renewal conflicts, reads it again, wins.
        async def relabel(lease: dict[str, Any]) -> dict[str, Any]:
            lease["metadata"]["labels"]["extra"] = "yes"
            return lease

        await leases.update("kube-system", controller.name, relabel)
        clock.now += timedelta(seconds=10)
        await controller.sync()
        after_conflict = await leases.get("kube-system", controller.name)
        assert after_conflict["spec"]["renewTime"] == micro_time(clock.now)
        assert after_conflict["metadata"]["labels"]["extra"] == "yes"

        # Deleted (another server's collector): the next sync creates it again.
        await leases.delete("kube-system", controller.name)
        clock.now += timedelta(seconds=10)
        await controller.sync()
        recreated = await leases.get("kube-system", controller.name)
        assert recreated["spec"]["renewTime"] == micro_time(clock.now)
        assert recreated["metadata"]["uid"] != created["metadata"]["uid"]

    _run(tmp_path, scenario)


def test_gc_deletes_expired_identity_leases_only(tmp_path: Path) -> None:
    now = datetime.now(UTC)

    async def scenario(server: APIServer) -> tuple[list[str], list[str]]:
        leases = server.store("coordination.k8s.io", "leases")
        for lease in (
            _foreign("apiserver-expired", now - timedelta(seconds=100), 30),
            _foreign("apiserver-live", now - timedelta(seconds=10), 30),
            _foreign("not-identity", now - timedelta(seconds=100), 30, **{"app": "kube-apiserver"}),
            _foreign(
                "other-component",
                now - timedelta(seconds=100),
                30,
                **{"apiserver.kubernetes.io/identity": "sample-apiserver"},
            ),
        ):
            await leases.create(lease)
        deleted = await IdentityLeaseGC(leases, period=3600, now=lambda: now).collect()
        listed = await leases.list("kube-system", EVERYTHING)
        return deleted, sorted(item["metadata"]["name"] for item in listed.items)

    deleted, remaining = _run(tmp_path, scenario, identity_hostname="gc-host")
    assert deleted == ["apiserver-expired"]
    # The server's own lease may or may not be written yet: it is not the point here.
    others = [name for name in remaining if name != apiserver_id("gc-host")]
    assert others == ["apiserver-live", "not-identity", "other-component"]


def test_gc_leaves_a_lease_renewed_since_it_was_listed(tmp_path: Path) -> None:
    """The lease is read again before the delete; one renewed meanwhile stays."""
    now = datetime.now(UTC)

    async def scenario(server: APIServer) -> tuple[list[str], dict[str, Any]]:
        leases = server.store("coordination.k8s.io", "leases")
        await leases.create(_foreign("apiserver-racing", now - timedelta(seconds=100), 30))
        gc = IdentityLeaseGC(leases, period=3600, now=lambda: now)
        real_get = leases.get

        async def get_after_renewal(namespace: str | None, name: str) -> dict[str, Any]:
            async def renew(lease: dict[str, Any]) -> dict[str, Any]:
                lease["spec"]["renewTime"] = micro_time(now)
                return lease

            await leases.update(namespace, name, renew)
            return await real_get(namespace, name)

        leases.get = get_after_renewal  # type: ignore[method-assign]
        try:
            deleted = await gc.collect()
        finally:
            del leases.get
        return deleted, await leases.get("kube-system", "apiserver-racing")

    deleted, lease = _run(tmp_path, scenario)
    assert deleted == []
    assert lease["spec"]["renewTime"] == micro_time(now)
