"""Services without HTTP: ranges, defaulting, validation texts, and allocation through the
store on a real SQLite storage, with two stores standing for two servers on one store."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kapi.apimachinery import errors
from kapi.apis import builtin_resources
from kapi.apis.core_v1_services import (
    ServiceAllocator,
    ServiceNetwork,
    default_service,
    validate_service,
    validate_service_update,
)
from kapi.controllers.kubernetes_service import repair_allocations
from kapi.registry.allocator import IPRange, PortRange
from kapi.registry.predicate import SelectionPredicate
from kapi.registry.store import Store
from kapi.runtime.scheme import Scheme
from kapi.storage.sqlite import SQLiteStorage
from kapi.version import DEFAULT_VERSION

Object = dict[str, Any]
NETWORK = ServiceNetwork()


def service(name: str, *ports: int, **spec: Any) -> Object:
    obj: Object = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"ports": [{"port": p} for p in ports], **spec},
    }
    default_service(obj)
    return obj


def messages(errs: list[Any]) -> list[str]:
    return [e.error_message() for e in errs]


# --- ranges ---------------------------------------------------------------------------------


def test_ip_range_leaves_out_network_and_broadcast_and_prefers_the_upper_part() -> None:
    r = IPRange.parse("10.0.0.0/24")
    assert (r.first_address(), r.size, r.offset) == ("10.0.0.1", 254, 16)
    order = list(r.candidates(random.Random(1)))
    assert sorted(order, key=lambda ip: int(ip.rsplit(".", 1)[1])) == [
        f"10.0.0.{i}" for i in range(1, 255)
    ]
    assert all(int(ip.rsplit(".", 1)[1]) > 16 for ip in order[:238])
    assert str(r.not_in_range("10.9.0.1")) == (
        "the provided IP (10.9.0.1) is not in the valid range. The range of valid IPs is "
        "10.0.0.0/24"
    )
    assert IPRange.parse("fd00::/120").family == "IPv6"
    with pytest.raises(ValueError, match="shortest allowed prefix length"):
        IPRange.parse("fd00::/48")


def test_port_range_parses_and_prints_as_upstream() -> None:
    r = PortRange.parse("30000-32767")
    assert (str(r), r.size, r.contains(30000), r.contains(32768)) == (
        "30000-32767",
        2768,
        True,
        False,
    )
    assert str(PortRange.parse("30000+9")) == "30000-30009"
    assert str(r.not_in_range()) == (
        "provided port is not in the valid range. The range of valid ports is 30000-32767"
    )
    with pytest.raises(ValueError):
        PortRange.parse("abc")


def test_service_network_flags() -> None:
    assert ServiceNetwork.parse("10.0.0.0/24,fd00::/112", "30000-32767").range_of("IPv6")
    with pytest.raises(ValueError, match="different IP family"):
        ServiceNetwork.parse("10.0.0.0/24,10.1.0.0/24", "30000-32767")


# --- defaulting and validation -------------------------------------------------------------


def test_defaults_follow_set_defaults_service() -> None:
    obj = service("np", 80, type="NodePort")
    spec = obj["spec"]
    assert spec["sessionAffinity"] == "None"
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert (spec["externalTrafficPolicy"], spec["internalTrafficPolicy"]) == ("Cluster", "Cluster")
    plain = service("c", 80)["spec"]
    assert plain["type"] == "ClusterIP" and "externalTrafficPolicy" not in plain
    lb = service("lb", 80, type="LoadBalancer")["spec"]
    assert lb["allocateLoadBalancerNodePorts"] is True


def test_validation_texts_are_upstreams() -> None:
    assert messages(validate_service(service("x"), NETWORK)) == ["spec.ports: Required value"]
    assert validate_service(service("h", clusterIP="None", clusterIPs=["None"]), NETWORK) == []
    bad_port = validate_service(service("x", 70000), NETWORK)
    assert messages(bad_port) == [  # targetPort defaulted to the port, so both are out
        "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
        "spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
    ]
    dup = service("x", 80, 80)
    dup["spec"]["ports"][0]["name"] = "a"
    dup["spec"]["ports"][1]["name"] = "a"
    assert messages(validate_service(dup, NETWORK)) == [
        'spec.ports[1].name: Duplicate value: "a"',
        'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", '
        "AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, "
        'StrVal:""}, NodePort:0}',
    ]
    unnamed = messages(validate_service(service("x", 80, 81), NETWORK))
    assert unnamed == ["spec.ports[0].name: Required value", "spec.ports[1].name: Required value"]
    kind = messages(validate_service(service("x", 80, type="Bogus"), NETWORK))
    assert kind == [
        'spec.type: Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", '
        '"LoadBalancer", "NodePort"'
    ]
    node_port = service("x", 80)
    node_port["spec"]["ports"][0]["nodePort"] = 30001
    assert messages(validate_service(node_port, NETWORK)) == [
        "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"
    ]
    selector = messages(validate_service(service("x", 80, selector={"a": "b c"}), NETWORK))
    assert selector[0].startswith('spec.selector: Invalid value: "b c": a valid label must be')


def test_the_cluster_ip_may_not_change() -> None:
    old = service("x", 80, clusterIP="10.0.0.5", clusterIPs=["10.0.0.5"])
    new = service("x", 80, clusterIP="10.0.0.6", clusterIPs=["10.0.0.6"])
    for obj in (old, new):
        obj["spec"].update(ipFamilies=["IPv4"], ipFamilyPolicy="SingleStack")
    assert messages(validate_service_update(new, old, NETWORK)) == [
        'spec.clusterIPs[0]: Invalid value: []string{"10.0.0.6"}: may not change once set'
    ]


# --- allocation through the store ----------------------------------------------------------

Stores = Callable[[], Store]


def run(tmp_path: Path, body: Callable[[Stores, ServiceAllocator], Awaitable[Any]]) -> Any:
    """``body`` gets a factory of Service stores on one SQLite file, each with its own
    allocator (servers share only storage), and one allocator to inspect with."""

    async def main() -> Any:
        storage = SQLiteStorage(tmp_path / "kapi.db")
        network = ServiceNetwork.parse("10.0.0.0/28", "30000-30009")

        def new_store() -> Store:
            scheme = Scheme(DEFAULT_VERSION)
            for resource in builtin_resources():
                scheme.add(resource)
            resource = scheme.lookup("", "v1", "services")
            assert resource is not None
            resource.strategy.network = network  # type: ignore[attr-defined]
            store = Store(resource, storage, scheme)
            store.hooks = ServiceAllocator(storage, network)
            return store

        try:
            return await body(new_store, ServiceAllocator(storage, network))
        finally:
            await storage.close()

    return asyncio.run(main())


async def _create(store: Store, obj: Object, dry_run: bool = False) -> Object:
    return await store.create(obj, dry_run=dry_run)


async def _error(awaitable: Awaitable[Any]) -> errors.StatusError:
    try:
        await awaitable
    except errors.StatusError as exc:
        return exc
    raise AssertionError("no error")


def test_servers_on_one_store_never_hand_out_one_ip_twice(tmp_path: Path) -> None:
    async def body(new_store: Stores, alloc: ServiceAllocator) -> None:
        a, b = new_store(), new_store()
        created = await asyncio.gather(
            *(_create((a, b)[i % 2], service(f"s{i}", 80)) for i in range(14))
        )
        ips = [s["spec"]["clusterIP"] for s in created]
        assert len(set(ips)) == 14  # a /28 has 14 usable addresses
        assert sorted(r.value for r in await alloc.ips.all()) == sorted(ips)
        full = await _error(_create(a, service("s14", 80)))
        assert (full.code, full.message) == (
            500,
            "Internal error occurred: failed to allocate a serviceIP: range is full",
        )
        await a.delete("default", "s3")
        again = await _create(b, service("s15", 80))
        assert again["spec"]["clusterIP"] == ips[3]

    run(tmp_path, body)


def test_requested_values_are_honoured_or_refused_with_upstreams_text(tmp_path: Path) -> None:
    async def body(new_store: Stores, alloc: ServiceAllocator) -> None:
        a, b = new_store(), new_store()
        first = await _create(a, service("a", 80, clusterIP="10.0.0.3"))
        assert first["spec"]["clusterIPs"] == ["10.0.0.3"]
        taken = await _error(_create(b, service("b", 80, clusterIP="10.0.0.3")))
        assert (taken.code, taken.message) == (
            422,
            'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.3"}: '
            "failed to allocate IP 10.0.0.3: provided IP is already allocated",
        )
        outside = await _error(_create(b, service("b", 80, clusterIP="10.1.0.3")))
        assert outside.message == (
            'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.1.0.3"}: '
            "failed to allocate IP 10.1.0.3: the provided IP (10.1.0.3) is not in the valid "
            "range. The range of valid IPs is 10.0.0.0/28"
        )
        np = service("np", 80, type="NodePort")
        np["spec"]["ports"][0]["nodePort"] = 80
        refused = await _error(_create(b, np))
        assert refused.message == (
            'Service "np" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port '
            "is not in the valid range. The range of valid ports is 30000-30009"
        )
        # The refusals reserved nothing: only a's IP is held.
        assert [r.value for r in await alloc.ips.all()] == ["10.0.0.3"]
        assert await alloc.ports.all() == []
        headless = await _create(b, service("h", clusterIP="None"))
        assert headless["spec"]["clusterIPs"] == ["None"]

    run(tmp_path, body)


def test_node_ports_allocate_share_and_release(tmp_path: Path) -> None:
    async def body(new_store: Stores, alloc: ServiceAllocator) -> None:
        store = new_store()
        obj = service("dns", 53, 53, 80, type="NodePort")
        for port, (name, protocol) in zip(
            obj["spec"]["ports"], (("a", "TCP"), ("b", "UDP"), ("c", "TCP")), strict=True
        ):
            port.update(name=name, protocol=protocol)
        created = await _create(store, obj)
        node_ports = [p["nodePort"] for p in created["spec"]["ports"]]
        assert node_ports[0] == node_ports[1] != node_ports[2]  # one port number, one node port
        assert sorted(int(r.value) for r in await alloc.ports.all()) == sorted(set(node_ports))

        async def to_cluster_ip(current: Object) -> Object:
            current["spec"]["type"] = "ClusterIP"  # the node ports and policy go with it
            return current

        changed = await store.update("default", "dns", to_cluster_ip)
        assert [p.get("nodePort") for p in changed["spec"]["ports"]] == [None] * 3
        assert "externalTrafficPolicy" not in changed["spec"]
        assert changed["spec"]["clusterIP"] == created["spec"]["clusterIP"]
        assert await alloc.ports.all() == []

        async def to_external_name(current: Object) -> Object:
            current["spec"].update(type="ExternalName", externalName="example.com")
            return current

        external = await store.update("default", "dns", to_external_name)
        assert "clusterIP" not in external["spec"] and "ipFamilies" not in external["spec"]
        assert await alloc.ips.all() == []

        async def back_to_cluster_ip(current: Object) -> Object:
            current["spec"]["type"] = "ClusterIP"
            current["spec"]["internalTrafficPolicy"] = "Cluster"
            current["spec"].pop("externalName")
            return current

        again = await store.update("default", "dns", back_to_cluster_ip)
        assert [r.value for r in await alloc.ips.all()] == [again["spec"]["clusterIP"]]
        await store.delete("default", "dns")
        assert await alloc.ips.all() == []

    run(tmp_path, body)


def test_dry_run_and_failed_writes_keep_nothing(tmp_path: Path) -> None:
    async def body(new_store: Stores, alloc: ServiceAllocator) -> None:
        store = new_store()
        dry = await _create(store, service("x", 80, type="NodePort"), dry_run=True)
        assert dry["spec"]["clusterIP"] and dry["spec"]["ports"][0]["nodePort"]
        assert await alloc.ips.all() == [] and await alloc.ports.all() == []
        await _create(store, service("x", 80))
        exists = await _error(_create(store, service("x", 80, type="NodePort")))
        assert exists.reason == "AlreadyExists"
        assert len(await alloc.ips.all()) == 1 and await alloc.ports.all() == []

    run(tmp_path, body)


def test_repair_restores_missing_and_frees_only_old_leaks(tmp_path: Path) -> None:
    async def body(new_store: Stores, alloc: ServiceAllocator) -> None:
        store = new_store()
        kept = await _create(store, service("kept", 80))
        ip = kept["spec"]["clusterIP"]
        await alloc.ips.release(ip)  # lost: the Service holds an IP nobody reserved
        leak = "10.0.0.9" if ip != "10.0.0.9" else "10.0.0.10"  # the allocator picks at random
        await alloc.ips.reserve(leak, "default/gone")
        # Fresh: the leak might be a create in flight on another server; nothing is freed.
        assert await repair_allocations(store, alloc) == (1, 0)
        assert sorted(r.value for r in await alloc.ips.all()) == sorted([ip, leak])
        # Once older than the grace period it is freed; the kept one stays.
        assert await repair_allocations(store, alloc, grace=-3600) == (0, 1)
        assert [r.value for r in await alloc.ips.all()] == [ip]
        listed = await store.list(None, SelectionPredicate())
        assert [s["spec"]["clusterIP"] for s in listed.items] == [ip]

    run(tmp_path, body)
