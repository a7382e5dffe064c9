"""core/v1 PodTemplates on a real server: pod defaults, validation, generation, table."""

from __future__ import annotations

from typing import Any

import httpx

from tests.helpers.status import assert_status

Object = dict[str, Any]


def _template(name: str, containers: list[Object] | None = None) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": name},
        "template": {
            "metadata": {"labels": {"tier": "web", "app": "shop"}},
            "spec": {
                "containers": [{"name": "main", "image": "nginx"}]
                if containers is None
                else containers
            },
        },
    }


def _base(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/podtemplates"


def test_create_defaults_and_generation(http: httpx.Client, namespace: str) -> None:
    response = http.post(_base(namespace), json=_template("t1"))
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["metadata"]["generation"] == 1
    assert created["template"]["spec"]["restartPolicy"] == "Always"
    created["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
    response = http.put(f"{_base(namespace)}/t1", json=created)
    assert response.status_code == 200, response.text
    assert response.json()["metadata"]["generation"] == 2
    labels_only = response.json()
    labels_only["metadata"]["labels"] = {"x": "y"}
    response = http.put(f"{_base(namespace)}/t1", json=labels_only)
    assert response.json()["metadata"]["generation"] == 2


def test_template_without_containers_is_refused(http: httpx.Client, namespace: str) -> None:
    assert_status(
        http.post(_base(namespace), json=_template("t1", containers=[])),
        422,
        "Invalid",
        'PodTemplate "t1" is invalid: template.spec.containers: Required value',
    )
    assert http.get(_base(namespace)).json()["items"] == []


def test_table_columns(http: httpx.Client, namespace: str) -> None:
    assert http.post(_base(namespace), json=_template("t1")).status_code == 201
    table = http.get(
        _base(namespace), headers={"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    ).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Containers",
        "Images",
        "Pod Labels",
    ]
    assert table["rows"][0]["cells"] == ["t1", "main", "nginx", "app=shop,tier=web"]
