"""The default ``kubernetes`` Service and the service allocation repair, as kube-apiserver
runs them (its ``bootstrap-controller`` and the cluster IP / node port repair loops).

:class:`KubernetesServiceController` keeps, in ``default``:

* the ``kubernetes`` Service: ClusterIP, the first IP of the service range,
  port ``https`` 443 to this server's port; created when missing, its ports and
  type put back when changed (its cluster IP is left alone, as upstream's);
* its Endpoints (``endpointslice.kubernetes.io/skip-mirror``) and EndpointSlice
  (``kubernetes.io/service-name: kubernetes``) naming this server's address and
  port: written at start (the server that started last is the one named, as
  kapi keeps no lease per server the way upstream's endpoint reconciler does)
  and recreated when deleted.

:func:`repair_allocations` makes the reservations in storage match the stored
Services: a Service's IP or node port with no reservation gets one back, and a
reservation no Service holds is freed, but only once older than a grace period,
since a create on another server reserves before it writes the Service.  Every
server runs both; their writes are conditional, so they agree.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Callable

from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.apis.core_v1_services import (
    ServiceAllocator,
    ServiceNetwork,
    default_service,
    service_ips,
    service_node_ports,
    service_owner,
)
from kapi.registry.allocator import AllocationError, Reservations
from kapi.registry.predicate import SelectionPredicate
from kapi.registry.store import Store

log = logging.getLogger(__name__)

NAMESPACE = "default"
NAME = "kubernetes"
PORT_NAME = "https"
SERVICE_PORT = 443
#: How often the objects are checked (upstream's endpoint interval is 10 s).
CHECK_INTERVAL = 10.0
#: How often allocations are repaired (upstream: every 3 minutes).
REPAIR_INTERVAL = 180.0
#: A reservation with no Service is freed once older than this (seconds).
LEAK_GRACE = 60.0

EVERYTHING = SelectionPredicate()


def advertise_address(bind_address: str) -> str:
    """The address other clients reach this server at (``--advertise-address``'s default):
    the bind address when it is a routable one, else that of the interface the default
    route leaves by; empty when there is none."""
    if bind_address not in ("", "0.0.0.0", "::", "::1") and not bind_address.startswith("127."):
        return bind_address
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.254.254.254", 1))  # no packet is sent: this only picks a route
        address = str(s.getsockname()[0])
        if not address.startswith("127.") and address != "0.0.0.0":
            return address
    return ""


def kubernetes_service(network: ServiceNetwork, port: int) -> Object:
    service: Object = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"component": "apiserver", "provider": "kubernetes"},
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": network.primary.first_address(),
            "ports": [_service_port(port)],
            "sessionAffinity": "None",
            "ipFamilyPolicy": "SingleStack",
        },
    }
    default_service(service)
    return service


def _service_port(port: int) -> Object:
    return {"name": PORT_NAME, "port": SERVICE_PORT, "protocol": "TCP", "targetPort": port}


def kubernetes_endpoints(address: str, port: int) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
        },
        "subsets": [
            {
                "addresses": [{"ip": address}],
                "ports": [{"name": PORT_NAME, "port": port, "protocol": "TCP"}],
            }
        ],
    }


def kubernetes_endpoint_slice(address: str, port: int) -> Object:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {"kubernetes.io/service-name": NAME},
        },
        "addressType": "IPv6" if ":" in address else "IPv4",
        "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
        "ports": [{"name": PORT_NAME, "port": port, "protocol": "TCP"}],
    }


class KubernetesServiceController:
    """Keeps the ``kubernetes`` Service, Endpoints and EndpointSlice, and repairs allocations."""

    def __init__(
        self,
        services: Store,
        endpoints: Store,
        endpoint_slices: Store,
        allocator: ServiceAllocator,
        network: ServiceNetwork,
        address: str,
        port: int,
        *,
        check_interval: float = CHECK_INTERVAL,
        repair_interval: float = REPAIR_INTERVAL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.services = services
        self.endpoints = endpoints
        self.endpoint_slices = endpoint_slices
        self.allocator = allocator
        self.network = network
        self.address = address
        self.port = port
        self.check_interval = check_interval
        self.repair_interval = repair_interval
        self.clock = clock

    async def run(self) -> None:
        started = True
        last_repair = -self.repair_interval
        while True:
            now = asyncio.get_running_loop().time()
            if now - last_repair >= self.repair_interval:
                last_repair = now
                try:
                    await repair_allocations(self.services, self.allocator, self.clock)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("repairing service allocations failed")
            try:
                await self.sync(refresh_endpoints=started)
                started = False
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("reconciling the kubernetes service failed")
            await asyncio.sleep(self.check_interval)

    async def sync(self, *, refresh_endpoints: bool = False) -> None:
        """One pass: the Service, then (with an address) its Endpoints and EndpointSlice."""
        await self._ensure_service()
        if not self.address:
            return
        await self._ensure(
            self.endpoints, kubernetes_endpoints(self.address, self.port), refresh_endpoints
        )
        await self._ensure(
            self.endpoint_slices,
            kubernetes_endpoint_slice(self.address, self.port),
            refresh_endpoints,
        )

    async def _ensure_service(self) -> None:
        desired = kubernetes_service(self.network, self.port)
        try:
            current = await self.services.get(NAMESPACE, NAME)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
            try:
                await self.services.create(desired)
                log.info("created the default kubernetes service")
            except errors.StatusError as create_error:
                # Another server starting at the same time may have won the create, or the
                # reservation of its IP just before it: only a Service still missing is news.
                if create_error.code != 409 and not await self._exists():
                    log.error("cannot create the kubernetes service: %s", create_error.message)
            return
        spec = current.get("spec") or {}
        if spec.get("ports") == desired["spec"]["ports"] and spec.get("type") == "ClusterIP":
            return

        async def fix(obj: Object) -> Object:
            obj["spec"]["ports"] = desired["spec"]["ports"]
            obj["spec"]["type"] = "ClusterIP"
            return obj

        await self.services.update(NAMESPACE, NAME, fix)

    async def _exists(self) -> bool:
        try:
            await self.services.get(NAMESPACE, NAME)
        except errors.StatusError:
            return False
        return True

    async def _ensure(self, store: Store, desired: Object, refresh: bool) -> None:
        store.scheme.default(store.resource, desired, store.hub_version)
        try:
            current = await store.get(NAMESPACE, NAME)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
            with contextlib.suppress(errors.StatusError):
                await store.create(desired)
            return
        if not refresh:
            return
        keys = [k for k in desired if k not in ("apiVersion", "kind", "metadata")]
        labels = desired["metadata"]["labels"]
        if all(current.get(k) == desired[k] for k in keys) and all(
            (current["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items()
        ):
            return

        async def replace(obj: Object) -> Object:
            for key in keys:
                obj[key] = desired[key]
            obj["metadata"].setdefault("labels", {}).update(labels)
            return obj

        await store.update(NAMESPACE, NAME, replace)


async def repair_allocations(
    services: Store,
    allocator: ServiceAllocator,
    clock: Callable[[], float] = time.time,
    grace: float = LEAK_GRACE,
) -> tuple[int, int]:
    """Make the reservations match the stored Services; returns (restored, freed)."""
    listed = await services.list(None, EVERYTHING)
    holds_ip: dict[str, str] = {}
    holds_port: dict[str, str] = {}
    for service in listed.items:
        owner = service_owner(service)
        for ip in service_ips(service):
            holds_ip[ip] = owner
        for port in service_node_ports(service):
            holds_port[str(port)] = owner
    restored = freed = 0
    for reservations, holders in ((allocator.ips, holds_ip), (allocator.ports, holds_port)):
        restored += await _restore(reservations, holders)
        freed += await _free_leaks(reservations, holders, clock() - grace)
    if restored or freed:
        log.info("service allocations repaired: %d restored, %d freed", restored, freed)
    return restored, freed


async def _restore(reservations: Reservations, holders: dict[str, str]) -> int:
    held = {r.value: r.owner for r in await reservations.all()}
    restored = 0
    for value, owner in holders.items():
        if value in held:
            if held[value] != owner:
                log.warning(
                    "%s%s is held by %s and also used by the service %s",
                    reservations.prefix,
                    value,
                    held[value],
                    owner,
                )
            continue
        try:
            await reservations.reserve(value, owner)
            restored += 1
        except AllocationError:
            continue
    return restored


async def _free_leaks(reservations: Reservations, holders: dict[str, str], before: float) -> int:
    freed = 0
    for reservation in await reservations.all():
        if holders.get(reservation.value) == reservation.owner:
            continue
        if reservation.created > before:
            continue  # possibly a create in flight on some server
        await reservations.release(reservation.value, reservation.owner)
        freed += 1
    return freed
