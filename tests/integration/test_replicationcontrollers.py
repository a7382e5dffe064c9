"""core/v1 ReplicationControllers on a real server: defaults, validation, status, scale."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import KapiServer
from tests.helpers.kubectl import make_kubectl
from tests.helpers.status import assert_status

Object = dict[str, Any]


def _rc(name: str, **spec: Any) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]},
            },
            **spec,
        },
    }


def _base(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/replicationcontrollers"


def test_defaults_from_template_labels(http: httpx.Client, namespace: str) -> None:
    response = http.post(_base(namespace), json=_rc("web"))
    assert response.status_code == 201, response.text
    rc = response.json()
    assert rc["spec"]["selector"] == {"app": "web"}
    assert rc["spec"]["replicas"] == 1
    assert rc["metadata"]["labels"] == {"app": "web"}
    assert rc["metadata"]["generation"] == 1
    assert rc["status"] == {"replicas": 0}
    assert rc["spec"]["template"]["spec"]["restartPolicy"] == "Always"


def test_selector_must_match_template_labels(http: httpx.Client, namespace: str) -> None:
    assert_status(
        http.post(_base(namespace), json=_rc("web", selector={"app": "other"})),
        422,
        "Invalid",
        'ReplicationController "web" is invalid: spec.template.metadata.labels: Invalid value: '
        'map[string]string{"app":"web"}: selector does not match template labels',
    )
    assert http.get(f"{_base(namespace)}/web").status_code == 404


def test_template_required_and_restart_policy_always(http: httpx.Client, namespace: str) -> None:
    body = _rc("web", selector={"app": "web"})
    del body["spec"]["template"]
    assert_status(
        http.post(_base(namespace), json=body),
        422,
        "Invalid",
        'ReplicationController "web" is invalid: spec.template: Required value',
    )
    body = _rc("web")
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert_status(
        http.post(_base(namespace), json=body),
        422,
        "Invalid",
        'ReplicationController "web" is invalid: spec.template.spec.restartPolicy: Unsupported '
        'value: "Never": supported values: "Always"',
    )
    assert http.get(_base(namespace)).json()["items"] == []


def test_scale_subresource(http: httpx.Client, namespace: str) -> None:
    assert http.post(_base(namespace), json=_rc("web")).status_code == 201
    path = f"{_base(namespace)}/web/scale"
    scale = http.get(path).json()
    assert scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 1}
    assert scale["status"] == {"replicas": 0, "selector": "app=web"}
    scale["spec"]["replicas"] = 4
    response = http.put(path, json=scale)
    assert response.status_code == 200, response.text
    assert response.json()["spec"] == {"replicas": 4}
    rc = http.get(f"{_base(namespace)}/web").json()
    assert rc["spec"]["replicas"] == 4
    assert rc["metadata"]["generation"] == 2


def test_status_subresource(http: httpx.Client, namespace: str) -> None:
    rc = http.post(_base(namespace), json=_rc("web")).json()
    rc["status"] = {"replicas": 1, "readyReplicas": 2}
    assert_status(
        http.put(f"{_base(namespace)}/web/status", json=rc),
        422,
        "Invalid",
        'ReplicationController "web" is invalid: status.readyReplicas: Invalid value: 2: '
        "cannot be greater than status.replicas",
    )
    rc["status"] = {"replicas": 1, "readyReplicas": 1, "fullyLabeledReplicas": 1}
    response = http.put(f"{_base(namespace)}/web/status", json=rc)
    assert response.status_code == 200, response.text
    assert response.json()["status"]["readyReplicas"] == 1
    assert response.json()["metadata"]["generation"] == 1


def test_table_columns(http: httpx.Client, namespace: str) -> None:
    assert http.post(_base(namespace), json=_rc("web")).status_code == 201
    table = http.get(
        _base(namespace), headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    ).json()
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == [
        "Name",
        "Desired",
        "Current",
        "Ready",
        "Age",
        "Containers",
        "Images",
        "Selector",
    ]
    [row] = table["rows"]
    assert row["cells"][:4] == ["web", 1, 0, 0]
    assert row["cells"][5:] == ["main", "nginx", "app=web"]


def test_discovery(http: httpx.Client) -> None:
    resources = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}
    rc = resources["replicationcontrollers"]
    assert rc["shortNames"] == ["rc"]
    assert rc["categories"] == ["all"]
    scale = resources["replicationcontrollers/scale"]
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")


def test_kubectl_create_scale_and_get(
    kapi_server: KapiServer, tmp_path: Path, namespace: str
) -> None:
    kubectl = make_kubectl(kapi_server, tmp_path, "1.33")
    manifest = tmp_path / "rc.json"
    manifest.write_text(json.dumps(_rc("web")))
    assert kubectl.ok("-n", namespace, "create", "-f", str(manifest)).stdout == (
        "replicationcontroller/web created\n"
    )
    assert kubectl.ok("-n", namespace, "scale", "rc", "web", "--replicas=3").stdout == (
        "replicationcontroller/web scaled\n"
    )
    lines = kubectl.ok("-n", namespace, "get", "rc", "-o", "wide").out_lines
    assert lines[0].split() == [
        "NAME",
        "DESIRED",
        "CURRENT",
        "READY",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    cells = lines[1].split()
    assert cells[:4] == ["web", "3", "0", "0"]
    assert cells[5:] == ["main", "nginx", "app=web"]
    assert (
        "replicationcontroller/web"
        in kubectl.ok("-n", namespace, "get", "all", "-o", "name").stdout
    )
