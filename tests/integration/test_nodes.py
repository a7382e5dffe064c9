"""core/v1 Nodes on a real server: status on create, /status, validation, table, kubectl."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from kapi.runtime import protobuf
from tests.conftest import KapiServer
from tests.helpers.kubectl import make_kubectl
from tests.helpers.protobuf_requests import PROTOBUF, post
from tests.helpers.status import assert_status

Object = dict[str, Any]
NODES = "/api/v1/nodes"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@pytest.fixture
def name(http: httpx.Client) -> Any:
    """A fresh node name; the node is deleted afterwards (nodes are cluster-scoped)."""
    node = f"node-{uuid.uuid4().hex[:8]}"
    yield node
    http.delete(f"{NODES}/{node}")


def _node(name: str, **spec: Any) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"node-role.kubernetes.io/worker": ""}},
        "spec": spec,
        "status": {
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
            "addresses": [
                {"type": "InternalIP", "address": "10.0.0.5"},
                {"type": "Hostname", "address": name},
            ],
            "nodeInfo": {
                "kubeletVersion": "v1.33.0",
                "osImage": "Ubuntu 24.04",
                "kernelVersion": "6.8.0",
                "containerRuntimeVersion": "containerd://2.0.0",
                "architecture": "amd64",
                "operatingSystem": "linux",
                "bootID": "",
                "machineID": "",
                "systemUUID": "",
                "kubeProxyVersion": "",
            },
        },
    }


def test_create_keeps_status_and_defaults_allocatable(http: httpx.Client, name: str) -> None:
    response = http.post(NODES, json=_node(name, podCIDR="10.244.1.0/24"))
    assert response.status_code == 201, response.text
    node = response.json()
    assert node["status"]["capacity"] == {"cpu": "4", "memory": "8Gi", "pods": "110"}
    assert node["status"]["allocatable"] == node["status"]["capacity"]
    assert node["spec"]["podCIDRs"] == ["10.244.1.0/24"]  # podCIDR fills podCIDRs
    assert "generation" not in node["metadata"]
    assert "namespace" not in node["metadata"]
    assert http.get(f"{NODES}/{name}").json()["status"] == node["status"]


def test_status_ignored_on_main_resource_and_spec_on_status(http: httpx.Client, name: str) -> None:
    assert http.post(NODES, json=_node(name)).status_code == 201
    merge = {"content-type": "application/merge-patch+json"}
    patched = http.patch(
        f"{NODES}/{name}",
        json={"spec": {"unschedulable": True}, "status": {"capacity": {"cpu": "8"}}},
        headers=merge,
    ).json()
    assert patched["spec"]["unschedulable"] is True
    assert patched["status"]["capacity"]["cpu"] == "4"
    patched = http.patch(
        f"{NODES}/{name}/status",
        json={"spec": {"unschedulable": False}, "status": {"capacity": {"cpu": "8"}}},
        headers=merge,
    ).json()
    assert patched["spec"]["unschedulable"] is True
    assert patched["status"]["capacity"]["cpu"] == "8"


def test_bad_taint_effect_and_duplicates(http: httpx.Client, name: str) -> None:
    taints = [
        {"key": "dedicated", "value": "gpu", "effect": "NoRun"},
        {"key": "zone", "effect": "NoSchedule"},
        {"key": "zone", "value": "b", "effect": "NoSchedule"},
        {"key": "x"},
    ]
    status = assert_status(
        http.post(NODES, json=_node(name, taints=taints)),
        422,
        "Invalid",
        f'Node "{name}" is invalid: [metadata.taints[0].effect: Unsupported value: "NoRun": '
        'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute", '
        'metadata.taints[2]: Duplicate value: core.Taint{Key:"zone", Value:"b", '
        'Effect:"NoSchedule", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and '
        "effect pair, metadata.taints[3].effect: Required value]",
    )
    assert [c["reason"] for c in status["details"]["causes"]] == [
        "FieldValueNotSupported",
        "FieldValueDuplicate",
        "FieldValueRequired",
    ]
    assert http.get(f"{NODES}/{name}").status_code == 404


def test_bad_pod_cidrs(http: httpx.Client, name: str) -> None:
    assert_status(
        http.post(NODES, json=_node(name, podCIDRs=["10.244.0.0/24", "10.245.0.0/24"])),
        422,
        "Invalid",
        f'Node "{name}" is invalid: spec.podCIDRs: Invalid value: '
        '[]string{"10.244.0.0/24", "10.245.0.0/24"}: may specify no more than one CIDR for '
        "each IP family",
    )
    assert_status(
        http.post(NODES, json=_node(name, podCIDRs=["10.244.0/24"])),
        422,
        "Invalid",
        f'Node "{name}" is invalid: spec.podCIDRs[0]: Invalid value: "10.244.0/24": must be a '
        "valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
    )
    assert http.get(f"{NODES}/{name}").status_code == 404


def test_pod_cidr_and_provider_id_are_set_once(http: httpx.Client, name: str) -> None:
    created = http.post(NODES, json=_node(name)).json()
    merge = {"content-type": "application/merge-patch+json"}
    # Unset to set is allowed (the node IPAM controller does it).
    set_once = {"spec": {"podCIDRs": ["10.244.3.0/24"], "providerID": "kind://node"}}
    assert http.patch(f"{NODES}/{name}", json=set_once, headers=merge).status_code == 200
    stored = http.get(f"{NODES}/{name}").json()
    assert stored["spec"]["podCIDR"] == "10.244.3.0/24"
    change = {"spec": {"podCIDRs": ["10.244.4.0/24"], "providerID": "kind://other"}}
    assert_status(
        http.patch(f"{NODES}/{name}", json=change, headers=merge),
        422,
        "Invalid",
        f'Node "{name}" is invalid: [spec.podCIDRs: Forbidden: node updates may not change '
        'podCIDR except from "" to valid, spec.providerID: Forbidden: node updates may not '
        'change providerID except from "" to valid]',
    )
    after = http.get(f"{NODES}/{name}").json()
    assert after == stored
    assert after["metadata"]["uid"] == created["metadata"]["uid"]


def test_negative_capacity_is_refused(http: httpx.Client, name: str) -> None:
    body = _node(name)
    body["status"]["capacity"]["pods"] = "-1"
    assert_status(
        http.post(NODES, json=body),
        422,
        "Invalid",
        f'Node "{name}" is invalid: [status.capacity.pods: Invalid value: "-1": must be greater '
        'than or equal to 0, status.allocatable.pods: Invalid value: "-1": must be greater than '
        "or equal to 0]",
    )


def test_deprecated_external_id_warns(http: httpx.Client, name: str) -> None:
    response = http.post(NODES, json=_node(name, externalID="i-123"))
    assert response.status_code == 201, response.text
    assert response.headers["warning"] == (
        '299 - "spec.externalID: this field is deprecated, and is unused by Kubernetes"'
    )


def test_field_selector_unschedulable(http: httpx.Client, name: str) -> None:
    assert http.post(NODES, json=_node(name, unschedulable=True)).status_code == 201
    cordoned = http.get(NODES, params={"fieldSelector": "spec.unschedulable=true"}).json()
    assert name in [n["metadata"]["name"] for n in cordoned["items"]]
    ready = http.get(NODES, params={"fieldSelector": "spec.unschedulable=false"}).json()
    assert name not in [n["metadata"]["name"] for n in ready["items"]]
    assert_status(
        http.get(NODES, params={"fieldSelector": "spec.podCIDR=x"}),
        400,
        "BadRequest",
        "field label not supported: spec.podCIDR",
    )


def test_table_columns(http: httpx.Client, name: str) -> None:
    body = _node(name, unschedulable=True)
    body["status"]["addresses"].append({"type": "ExternalIP", "address": "203.0.113.9"})
    assert http.post(NODES, json=body).status_code == 201
    table = http.get(f"{NODES}/{name}", headers={"accept": TABLE}).json()
    assert [(c["name"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", 0),
        ("Status", 0),
        ("Roles", 0),
        ("Age", 0),
        ("Version", 0),
        ("Internal-IP", 1),
        ("External-IP", 1),
        ("OS-Image", 1),
        ("Kernel-Version", 1),
        ("Container-Runtime", 1),
    ]
    [row] = table["rows"]
    cells = row["cells"]
    assert cells[:3] == [name, "Ready,SchedulingDisabled", "worker"]
    assert cells[4:] == [
        "v1.33.0",
        "10.0.0.5",
        "203.0.113.9",
        "Ubuntu 24.04",
        "6.8.0",
        "containerd://2.0.0",
    ]


def test_table_of_a_bare_node(http: httpx.Client, name: str) -> None:
    body = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    assert http.post(NODES, json=body).status_code == 201
    [row] = http.get(f"{NODES}/{name}", headers={"accept": TABLE}).json()["rows"]
    cells = row["cells"]
    assert cells[:3] == [name, "Unknown", "<none>"]
    assert cells[4:] == ["", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"]


def test_discovery(http: httpx.Client) -> None:
    resources = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}
    nodes = resources["nodes"]
    assert nodes["namespaced"] is False
    assert nodes["shortNames"] == ["no"]
    assert nodes["kind"] == "Node"
    assert "categories" not in nodes
    assert "nodes/status" in resources


def test_protobuf_round_trip(http: httpx.Client, name: str) -> None:
    body = _node(name, podCIDRs=["10.244.7.0/24"], taints=[{"key": "a", "effect": "NoSchedule"}])
    response = post(http, NODES, protobuf.encode(body), accept=PROTOBUF)
    assert response.status_code == 201, response.text
    created = protobuf.decode(response.content)
    as_json = http.get(f"{NODES}/{name}").json()
    assert created == as_json
    assert as_json["spec"]["taints"] == [{"key": "a", "effect": "NoSchedule"}]
    assert as_json["status"]["allocatable"]["memory"] == "8Gi"
    got = http.get(f"{NODES}/{name}", headers={"accept": PROTOBUF})
    assert protobuf.decode(got.content) == as_json


def test_kubectl_get_and_cordon(
    kapi_server: KapiServer, http: httpx.Client, tmp_path: Path, name: str
) -> None:
    assert http.post(NODES, json=_node(name)).status_code == 201
    kubectl = make_kubectl(kapi_server, tmp_path, "1.33")
    lines = kubectl.ok("get", "nodes", name).out_lines
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    cells = lines[1].split()
    assert (cells[0], cells[1], cells[2], cells[4]) == (name, "Ready", "worker", "v1.33.0")
    wide = kubectl.ok("get", "no", name, "-o", "wide").out_lines
    assert wide[0].split()[5:] == [
        "INTERNAL-IP",
        "EXTERNAL-IP",
        "OS-IMAGE",
        "KERNEL-VERSION",
        "CONTAINER-RUNTIME",
    ]
    assert kubectl.ok("cordon", name).stdout == f"node/{name} cordoned\n"
    assert http.get(f"{NODES}/{name}").json()["spec"]["unschedulable"] is True
    assert kubectl.ok("get", "nodes", name).out_lines[1].split()[1] == "Ready,SchedulingDisabled"
    assert kubectl.ok("uncordon", name).stdout == f"node/{name} uncordoned\n"
    assert "unschedulable" not in http.get(f"{NODES}/{name}").json()["spec"]
