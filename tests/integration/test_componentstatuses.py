"""core/v1 ComponentStatuses: computed on each read, get and list only, deprecated since 1.19.

kapi reports its storage as ``etcd-0``; it has no scheduler or controller manager.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from kapi.runtime import protobuf
from tests.conftest import KapiServer
from tests.helpers.kubectl import make_kubectl
from tests.helpers.protobuf_requests import PROTOBUF
from tests.helpers.status import assert_status

CS = "/api/v1/componentstatuses"
WARNING = '299 - "v1 ComponentStatus is deprecated in v1.19+"'
ETCD = {
    "kind": "ComponentStatus",
    "apiVersion": "v1",
    "metadata": {"name": "etcd-0"},
    "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}],
}


def test_list_and_get_report_the_storage(http: httpx.Client) -> None:
    listed = http.get(CS)
    assert listed.status_code == 200, listed.text
    assert listed.headers.get_list("warning") == [WARNING]
    assert listed.json() == {
        "kind": "ComponentStatusList",
        "apiVersion": "v1",
        "metadata": {},
        "items": [ETCD],
    }
    got = http.get(f"{CS}/etcd-0")
    assert got.status_code == 200, got.text
    assert got.json() == ETCD
    assert got.headers.get_list("warning") == [WARNING]
    selected = http.get(CS, params={"fieldSelector": "metadata.name=scheduler"})
    assert selected.json()["items"] == []


def test_absent_components_are_not_found(http: httpx.Client) -> None:
    for name in ("scheduler", "controller-manager"):
        assert_status(
            http.get(f"{CS}/{name}"),
            404,
            "NotFound",
            f'componentstatus "{name}" not found',
            {"name": name, "kind": "componentstatus"},
        )


def test_only_get_and_list_are_served(http: httpx.Client) -> None:
    body = {"apiVersion": "v1", "kind": "ComponentStatus", "metadata": {"name": "etcd-0"}}
    refused = "the server does not allow this method on the requested resource"
    assert_status(http.post(CS, json=body), 405, "MethodNotAllowed", refused)
    assert_status(http.put(f"{CS}/etcd-0", json=body), 405, "MethodNotAllowed", refused)
    assert_status(http.delete(f"{CS}/etcd-0"), 405, "MethodNotAllowed", refused)
    assert_status(http.delete(CS), 405, "MethodNotAllowed", refused)
    watched = http.get(CS, params={"watch": "true"})
    assert_status(
        watched,
        405,
        "MethodNotAllowed",
        'watch is not supported on resources of kind "componentstatuses"',
        {"kind": "componentstatuses"},
    )
    assert watched.headers.get_list("warning") == [WARNING]
    assert_status(http.get("/api/v1/watch/componentstatuses"), 404, "NotFound")
    assert http.get(CS).json()["items"] == [ETCD]  # nothing was written


def test_discovery_and_table(http: httpx.Client) -> None:
    resources = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}
    assert resources["componentstatuses"] == {
        "name": "componentstatuses",
        "singularName": "componentstatus",
        "namespaced": False,
        "kind": "ComponentStatus",
        "verbs": ["get", "list"],
        "shortNames": ["cs"],
    }
    table = http.get(CS, headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert [c["name"] for c in table.json()["columnDefinitions"]] == [
        "Name",
        "Status",
        "Message",
        "Error",
    ]
    assert [row["cells"] for row in table.json()["rows"]] == [["etcd-0", "Healthy", "ok", ""]]


def test_protobuf(http: httpx.Client) -> None:
    got = http.get(f"{CS}/etcd-0", headers={"accept": PROTOBUF})
    assert got.headers["content-type"] == PROTOBUF
    assert protobuf.decode(got.content) == ETCD
    listed = protobuf.decode(http.get(CS, headers={"accept": PROTOBUF}).content)
    # List items travel without their kind and apiVersion in protobuf, as upstream's.
    assert listed["kind"] == "ComponentStatusList"
    assert listed["items"] == [{"metadata": ETCD["metadata"], "conditions": ETCD["conditions"]}]


@pytest.mark.kubectl
def test_kubectl_get_cs_warns(kapi_server: KapiServer, tmp_path: Path) -> None:
    kubectl = make_kubectl(kapi_server, tmp_path, "1.33")
    result = kubectl.run("get", "cs")
    assert result.returncode == 0, str(result)
    assert result.err_lines == ["Warning: v1 ComponentStatus is deprecated in v1.19+"]
    assert [line.split() for line in result.out_lines] == [
        ["NAME", "STATUS", "MESSAGE", "ERROR"],
        ["etcd-0", "Healthy", "ok"],
    ]
