"""HorizontalPodAutoscalers against a real server: v2 defaults and validation messages,
the status subresource, the v1 <-> v2 round trip through upstream's annotations, the
table kubectl prints, and the deprecated v2beta1 / v2beta2 at the releases that served them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kubectl import Kubectl

V2BETA1_WARNING = (
    "autoscaling/v2beta1 HorizontalPodAutoscaler is deprecated in v1.22+, unavailable in v1.25+; "
    "use autoscaling/v2 HorizontalPodAutoscaler"
)
V2BETA2_WARNING = (
    "autoscaling/v2beta2 HorizontalPodAutoscaler is deprecated in v1.23+, unavailable in v1.26+; "
    "use autoscaling/v2 HorizontalPodAutoscaler"
)


def hpas(namespace: str, version: str = "v2") -> str:
    return f"/apis/autoscaling/{version}/namespaces/{namespace}/horizontalpodautoscalers"


def hpa(name: str, version: str = "v2", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"autoscaling/{version}",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "maxReplicas": 5,
            **spec,
        },
    }


def causes(response: httpx.Response) -> list[str]:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["reason"] == "Invalid"
    assert body["details"]["group"] == "autoscaling"
    assert body["details"]["kind"] == "HorizontalPodAutoscaler"
    return [f"{c['field']}: {c['message']}" for c in body["details"]["causes"]]


MEMORY = {
    "type": "Resource",
    "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "500Mi"}},
}
CPU_50 = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
}


def test_v2_defaults(http: httpx.Client, namespace: str) -> None:
    response = http.post(hpas(namespace), json=hpa("web"))
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["spec"]["minReplicas"] == 1
    assert created["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80},
            },
        }
    ]
    assert "behavior" not in created["spec"]
    assert created["metadata"]["generation"] == 1

    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    response = http.post(hpas(namespace), json=hpa("tuned", behavior=behavior))
    assert response.status_code == 201, response.text
    assert response.json()["spec"]["behavior"] == {
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "selectPolicy": "Max",
            "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15},
            ],
        },
        "scaleDown": {
            "stabilizationWindowSeconds": 60,
            "selectPolicy": "Max",
            "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
        },
    }


def test_validation_messages(http: httpx.Client, namespace: str) -> None:
    body = hpa("bad", minReplicas=0, maxReplicas=0)
    body["spec"]["scaleTargetRef"] = {"kind": "", "name": "a/b"}
    assert causes(http.post(hpas(namespace), json=body)) == [
        "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
        "spec.maxReplicas: Invalid value: 0: must be greater than 0",
        "spec.scaleTargetRef.kind: Required value",
        "spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/'",
        "spec.metrics: Forbidden: must specify at least one Object or External metric to "
        "support scaling to zero replicas",
    ]
    body = hpa("small", minReplicas=3, maxReplicas=2)
    assert causes(http.post(hpas(namespace), json=body)) == [
        "spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"
    ]
    metric = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization"}}}
    body = hpa("metric", metrics=[metric])
    assert causes(http.post(hpas(namespace), json=body)) == [
        "spec.metrics[0].resource.target.averageUtilization: Required value: "
        "must set either a target raw value or a target utilization"
    ]
    assert http.get(hpas(namespace)).json()["items"] == []


def test_status_subresource(http: httpx.Client, namespace: str) -> None:
    created = http.post(hpas(namespace), json=hpa("st")).json()
    assert created["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    status = {"currentReplicas": 2, "desiredReplicas": 3}
    ignored = http.put(f"{hpas(namespace)}/st", json={**created, "status": status})
    assert ignored.status_code == 200, ignored.text
    assert ignored.json()["status"] == created["status"]
    updated = http.put(f"{hpas(namespace)}/st/status", json={**ignored.json(), "status": status})
    assert updated.status_code == 200, updated.text
    assert updated.json()["status"] == status
    bad = {**updated.json(), "status": {"currentReplicas": -1, "desiredReplicas": 0}}
    assert causes(http.put(f"{hpas(namespace)}/st/status", json=bad)) == [
        "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0"
    ]
    assert http.get(f"{hpas(namespace)}/st").json()["status"] == status


def test_v1_reads_keep_v2_metrics_in_annotations(http: httpx.Client, namespace: str) -> None:
    behavior = {"scaleUp": {"policies": [{"type": "Pods", "value": 2, "periodSeconds": 30}]}}
    body = hpa("rt", metrics=[CPU_50, MEMORY], behavior=behavior)
    created = http.post(hpas(namespace), json=body)
    assert created.status_code == 201, created.text
    v1 = http.get(f"{hpas(namespace, 'v1')}/rt").json()
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 50
    assert "metrics" not in v1["spec"]
    annotations = v1["metadata"]["annotations"]
    assert json.loads(annotations["autoscaling.alpha.kubernetes.io/metrics"]) == [
        {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "500Mi"}}
    ]
    assert json.loads(annotations["autoscaling.alpha.kubernetes.io/behavior"]) == {
        "ScaleUp": {
            "StabilizationWindowSeconds": 0,
            "SelectPolicy": "Max",
            "Policies": [{"Type": "Pods", "Value": 2, "PeriodSeconds": 30}],
            "Tolerance": None,
        },
        "ScaleDown": {
            "StabilizationWindowSeconds": None,
            "SelectPolicy": "Max",
            "Policies": [{"Type": "Percent", "Value": 100, "PeriodSeconds": 15}],
            "Tolerance": None,
        },
    }
    # A v1 client's update sends the annotations back: the v2 metrics survive it.
    v1["spec"]["maxReplicas"] = 7
    updated = http.put(f"{hpas(namespace, 'v1')}/rt", json=v1)
    assert updated.status_code == 200, updated.text
    v2 = http.get(f"{hpas(namespace)}/rt").json()
    assert v2["spec"]["maxReplicas"] == 7
    assert v2["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "memory",
                "target": {"type": "AverageValue", "averageValue": "500Mi"},
            },
        },
        CPU_50,
    ]
    assert v2["spec"]["behavior"]["scaleUp"]["policies"] == [
        {"type": "Pods", "value": 2, "periodSeconds": 30}
    ]
    assert not any(k.startswith("autoscaling.alpha") for k in v2["metadata"].get("annotations", {}))


def test_v1_create_gets_the_cpu_default(http: httpx.Client, namespace: str) -> None:
    created = http.post(hpas(namespace, "v1"), json=hpa("v1", "v1"))
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["targetCPUUtilizationPercentage"] == 80
    assert "annotations" not in created.json()["metadata"]
    v2 = http.get(f"{hpas(namespace)}/v1").json()
    assert v2["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80},
            },
        }
    ]


def test_deprecated_versions_absent_at_default(http: httpx.Client) -> None:
    versions = [v["version"] for v in http.get("/apis/autoscaling").json()["versions"]]
    assert versions == ["v2", "v1"]
    assert http.get("/apis/autoscaling/v2beta2").status_code == 404
    assert http.get("/apis/autoscaling/v2beta1").status_code == 404


@pytest.fixture(scope="module")
def server_1_24(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "hpa-1-24", "--emulated-version=1.24")


@pytest.fixture(scope="module")
def server_1_25(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "hpa-1-25", "--emulated-version=1.25")


def _namespace(http: httpx.Client) -> str:
    name = f"hpa-{uuid.uuid4().hex[:8]}"
    assert http.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    return name


def test_v2beta1_served_with_warning_at_1_24(server_1_24: KapiServer) -> None:
    with server_1_24.client() as http:
        ns = _namespace(http)
        body = hpa("beta", "v2beta1")
        created = http.post(hpas(ns, "v2beta1"), json=body)
        assert created.status_code == 201, created.text
        assert created.headers.get_list("warning") == [f'299 - "{V2BETA1_WARNING}"']
        # v2beta1's own defaulting: CPU at 80% in its shape.
        assert created.json()["spec"]["metrics"] == [
            {"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 80}}
        ]
        v2 = http.get(f"{hpas(ns)}/beta")
        assert v2.headers.get_list("warning") == []
        assert v2.json()["spec"]["metrics"] == [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ]
        beta2 = http.get(f"{hpas(ns, 'v2beta2')}/beta")
        assert beta2.status_code == 200, beta2.text
        assert beta2.headers.get_list("warning") == [f'299 - "{V2BETA2_WARNING}"']


def test_only_v2beta2_at_1_25(server_1_25: KapiServer) -> None:
    with server_1_25.client() as http:
        ns = _namespace(http)
        assert http.get(hpas(ns, "v2beta1")).status_code == 404
        listed = http.get(hpas(ns, "v2beta2"))
        assert listed.status_code == 200, listed.text
        assert listed.headers.get_list("warning") == [f'299 - "{V2BETA2_WARNING}"']


@pytest.mark.kubectl
def test_kubectl_get_hpa(kubectl: Kubectl, namespace: str, http: httpx.Client) -> None:
    body = hpa("web", metrics=[CPU_50, MEMORY], minReplicas=2)
    assert http.post(hpas(namespace), json=body).status_code == 201
    lines = kubectl.ok("-n", namespace, "get", "hpa").out_lines
    assert lines[0].split() == [
        "NAME",
        "REFERENCE",
        "TARGETS",
        "MINPODS",
        "MAXPODS",
        "REPLICAS",
        "AGE",
    ]
    assert lines[1].split()[:-1] == [
        "web",
        "Deployment/web",
        "cpu:",
        "<unknown>/50%,",
        "memory:",
        "<unknown>/500Mi",
        "2",
        "5",
        "0",
    ]
    assert (
        "horizontalpodautoscaler.autoscaling/web"
        in kubectl.ok("-n", namespace, "get", "all", "-o", "name").out_lines
    )
