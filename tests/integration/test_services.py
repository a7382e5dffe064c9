"""core/v1 Services on a real server: kubectl creates and prints them, cluster IPs and node
ports come from the server's ranges (or are refused with upstream's texts), deleting frees
them, and the default ``kubernetes`` Service is there and comes back when deleted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags, start_server
from tests.helpers.kubectl import Kubectl, make_kubectl
from tests.helpers.objects import unique
from tests.helpers.wait import eventually

#: Dynamic IPs come from .17-.30 first (KEP-3070), so requests below .17 never meet them.
RANGE = "10.96.0.0/27"
NODE_PORTS = "30100-30109"
#: kubectl 1.32+ send built-in kinds as protobuf bodies.
KUBECTL = "1.33"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """A server of this module's own: small ranges, so that they can be filled."""
    yield from serve_with_flags(
        tmp_path_factory,
        "services",
        "--service-cluster-ip-range",
        RANGE,
        "--service-node-port-range",
        NODE_PORTS,
    )


@pytest.fixture
def client(server: KapiServer) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


@pytest.fixture
def ns(client: httpx.Client) -> str:
    name = unique("svc")
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    assert client.post("/api/v1/namespaces", json=body).status_code == 201
    return name


@pytest.fixture
def kubectl(server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(server, tmp_path, KUBECTL)


def services(ns: str, name: str = "") -> str:
    path = f"/api/v1/namespaces/{ns}/services"
    return f"{path}/{name}" if name else path


def service(name: str, *ports: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"ports": [{"port": p} for p in ports], **spec},
    }


def listed(client: httpx.Client, ns: str) -> list[str]:
    response = client.get(services(ns))
    assert response.status_code == 200, response.text
    return sorted(s["metadata"]["name"] for s in response.json()["items"])


def test_kubectl_creates_and_prints_services(
    kubectl: Kubectl, client: httpx.Client, ns: str
) -> None:
    kubectl.ok("create", "service", "clusterip", "web", "--tcp=80:8080", "-n", ns)
    kubectl.ok("create", "service", "nodeport", "edge", "--tcp=80:8080", "-n", ns)
    web = client.get(services(ns, "web")).json()
    spec = web["spec"]
    assert spec["type"] == "ClusterIP" and spec["clusterIPs"] == [spec["clusterIP"]]
    assert spec["clusterIP"].startswith("10.96.0.")
    assert spec["ports"] == [{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}]
    assert (spec["sessionAffinity"], spec["ipFamilyPolicy"], spec["ipFamilies"]) == (
        "None",
        "SingleStack",
        ["IPv4"],
    )
    assert spec["internalTrafficPolicy"] == "Cluster" and "externalTrafficPolicy" not in spec
    assert web["status"] == {"loadBalancer": {}}
    edge = client.get(services(ns, "edge")).json()["spec"]
    node_port = edge["ports"][0]["nodePort"]
    assert 30100 <= node_port <= 30109 and edge["externalTrafficPolicy"] == "Cluster"
    lines = kubectl.ok("get", "svc", "-n", ns, "-o", "wide").out_lines
    assert lines[0].split() == [
        "NAME",
        "TYPE",
        "CLUSTER-IP",
        "EXTERNAL-IP",
        "PORT(S)",
        "AGE",
        "SELECTOR",
    ]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["edge"][1:5] == ["NodePort", edge["clusterIP"], "<none>", f"80:{node_port}/TCP"]
    assert rows["web"][1:5] == ["ClusterIP", spec["clusterIP"], "<none>", "80/TCP"]
    assert rows["web"][6] == "app=web"
    assert "service/web" in kubectl.ok("get", "all", "-n", ns, "-o", "name").stdout


def test_a_requested_ip_is_honoured_once(kubectl: Kubectl, client: httpx.Client, ns: str) -> None:
    created = client.post(services(ns), json=service("a", 80, clusterIP="10.96.0.3"))
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["clusterIPs"] == ["10.96.0.3"]
    taken = client.post(services(ns), json=service("b", 80, clusterIP="10.96.0.3"))
    assert (taken.status_code, taken.json()["reason"], taken.json()["message"]) == (
        422,
        "Invalid",
        'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.3"}: '
        "failed to allocate IP 10.96.0.3: provided IP is already allocated",
    )
    outside = kubectl.fails(
        "create", "service", "clusterip", "c", "--clusterip=10.1.2.3", "--tcp=80", "-n", ns
    )
    assert outside.stderr == (
        'error: failed to create ClusterIP service: Service "c" is invalid: spec.clusterIPs: '
        'Invalid value: []string{"10.1.2.3"}: failed to allocate IP 10.1.2.3: the provided IP '
        "(10.1.2.3) is not in the valid range. The range of valid IPs is 10.96.0.0/27\n"
    )
    assert listed(client, ns) == ["a"]
    headless = client.post(services(ns), json=service("h", clusterIP="None"))
    assert headless.status_code == 201, headless.text
    assert headless.json()["spec"]["clusterIPs"] == ["None"]


def test_node_ports_outside_the_range_are_refused(
    kubectl: Kubectl, client: httpx.Client, ns: str
) -> None:
    refused = kubectl.fails(
        "create", "service", "nodeport", "np", "--tcp=80:8080", "--node-port=30000", "-n", ns
    )
    assert refused.stderr == (
        'error: failed to create NodePort service: Service "np" is invalid: '
        "spec.ports[0].nodePort: Invalid value: 30000: provided port is not in the valid range. "
        "The range of valid ports is 30100-30109\n"
    )
    first = client.post(services(ns), json=service("np1", 80, type="NodePort"))
    port = first.json()["spec"]["ports"][0]["nodePort"]
    again = service("np2", 80, type="NodePort")
    again["spec"]["ports"][0]["nodePort"] = port
    taken = client.post(services(ns), json=again)
    assert (taken.status_code, taken.json()["message"]) == (
        422,
        f'Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: {port}: '
        "provided port is already allocated",
    )
    assert listed(client, ns) == ["np1"]
    assert client.delete(services(ns, "np1")).status_code == 200
    reused = client.post(services(ns), json=again)
    assert reused.status_code == 201, reused.text
    assert reused.json()["spec"]["ports"][0]["nodePort"] == port


def test_deleting_frees_the_ip(client: httpx.Client, ns: str) -> None:
    first = client.post(services(ns), json=service("first", 80, clusterIP="10.96.0.5"))
    assert first.status_code == 201, first.text
    assert client.delete(services(ns, "first")).status_code == 200
    second = client.post(services(ns), json=service("second", 80, clusterIP="10.96.0.5"))
    assert second.status_code == 201, second.text


def test_validation_and_the_immutable_cluster_ip(client: httpx.Client, ns: str) -> None:
    no_ports = client.post(services(ns), json=service("x"))
    assert (no_ports.status_code, no_ports.json()["message"]) == (
        422,
        'Service "x" is invalid: spec.ports: Required value',
    )
    bad = client.post(services(ns), json=service("x", 80, type="Bogus"))
    assert bad.json()["message"] == (
        'Service "x" is invalid: spec.type: Unsupported value: "Bogus": supported values: '
        '"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"'
    )
    created = client.post(services(ns), json=service("x", 80))
    assert created.status_code == 201, created.text
    ip = created.json()["spec"]["clusterIP"]
    other = "10.96.0.6" if ip != "10.96.0.6" else "10.96.0.7"
    patched = client.patch(
        services(ns, "x"),
        json={"spec": {"clusterIP": other}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert (patched.status_code, patched.json()["message"]) == (
        422,
        f'Service "x" is invalid: spec.clusterIPs[0]: Invalid value: []string{{"{other}"}}: '
        "may not change once set",
    )
    assert client.get(services(ns, "x")).json()["spec"]["clusterIP"] == ip
    # A PUT that leaves the allocated values out keeps them.
    current = client.get(services(ns, "x")).json()
    current["spec"].pop("clusterIP")
    current["spec"].pop("clusterIPs")
    replaced = client.put(services(ns, "x"), json=current)
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["spec"]["clusterIPs"] == [ip]


def test_the_kubernetes_service_exists_and_comes_back(
    client: httpx.Client, server: KapiServer
) -> None:
    port = int(server.url.rsplit(":", 1)[1])
    svc = client.get(services("default", "kubernetes")).json()
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert svc["spec"]["clusterIP"] == "10.96.0.1"
    assert svc["spec"]["ports"] == [
        {"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}
    ]
    slice_path = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"
    endpoint_slice = client.get(slice_path).json()
    assert endpoint_slice["metadata"]["labels"] == {"kubernetes.io/service-name": "kubernetes"}
    assert endpoint_slice["ports"] == [{"name": "https", "port": port, "protocol": "TCP"}]
    endpoints = client.get("/api/v1/namespaces/default/endpoints/kubernetes").json()
    assert endpoints["subsets"][0]["ports"] == [{"name": "https", "port": port, "protocol": "TCP"}]
    assert client.delete(services("default", "kubernetes")).status_code == 200
    assert client.delete(slice_path).status_code == 200

    def back() -> Any:
        found = client.get(services("default", "kubernetes"))
        again = client.get(slice_path)
        return found.status_code == 200 and again.status_code == 200 and found.json()

    restored = eventually(back, what="the kubernetes service recreated", timeout=30)
    assert restored["spec"]["clusterIP"] == "10.96.0.1"
    assert restored["metadata"]["uid"] != svc["metadata"]["uid"]


def test_a_restart_keeps_allocations_and_the_kubernetes_service(tmp_path: Path) -> None:
    flags = ("--service-cluster-ip-range", RANGE)
    first = start_server(tmp_path / "data", *flags)
    try:
        with first.client() as c:
            created = c.post(services("default"), json=service("kept", 80))
            assert created.status_code == 201, created.text
            ip = created.json()["spec"]["clusterIP"]
    finally:
        first.stop()
    second = start_server(tmp_path / "data", *flags)
    try:
        with second.client() as c:
            assert listed(c, "default") == ["kept", "kubernetes"]
            assert c.get(services("default", "kept")).json()["spec"]["clusterIP"] == ip
            taken = c.post(services("default"), json=service("copy", 80, clusterIP=ip))
            assert taken.status_code == 422
            assert "provided IP is already allocated" in taken.json()["message"]
    finally:
        second.stop()


def test_changing_the_type_drops_and_frees_its_node_ports(
    kubectl: Kubectl, client: httpx.Client, ns: str
) -> None:
    kubectl.ok("create", "service", "nodeport", "flip", "--tcp=80:8080", "-n", ns)
    port = client.get(services(ns, "flip")).json()["spec"]["ports"][0]["nodePort"]
    kubectl.ok("patch", "service", "flip", "-n", ns, "-p", '{"spec":{"type":"ClusterIP"}}')
    spec = client.get(services(ns, "flip")).json()["spec"]
    assert "nodePort" not in spec["ports"][0] and "externalTrafficPolicy" not in spec
    taker = service("taker", 80, type="NodePort")
    taker["spec"]["ports"][0]["nodePort"] = port
    assert client.post(services(ns), json=taker).status_code == 201
