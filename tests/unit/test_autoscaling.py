"""HPA defaulting, conversions between versions, validation and table cells, on dicts."""

from __future__ import annotations

import json
from typing import Any

from kapi.apis import autoscaling as hpa


def messages(errs: list) -> list[str]:
    return [e.error_message() for e in errs]


def v2(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 4, **spec},
    }


PODS = {
    "type": "Pods",
    "pods": {
        "metric": {"name": "qps"},
        "target": {"type": "AverageValue", "averageValue": "10"},
    },
}
EXTERNAL = {
    "type": "External",
    "external": {
        "metric": {"name": "queue", "selector": {"matchLabels": {"q": "a"}}},
        "target": {"type": "Value", "value": "30"},
    },
}
OBJECT = {
    "type": "Object",
    "object": {
        "describedObject": {
            "kind": "Ingress",
            "name": "main",
            "apiVersion": "networking.k8s.io/v1",
        },
        "metric": {"name": "rps"},
        "target": {"type": "Value", "value": "2k"},
    },
}


def test_v2_defaults_fill_behavior_rules_only_when_set() -> None:
    obj = v2()
    hpa.default_hpa_v2(obj)
    assert obj["spec"]["minReplicas"] == 1
    assert obj["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 80
    assert "behavior" not in obj["spec"]
    obj = v2(behavior={"scaleUp": {"selectPolicy": "Min"}})
    hpa.default_hpa_v2(obj)
    assert obj["spec"]["behavior"]["scaleUp"]["selectPolicy"] == "Min"
    assert obj["spec"]["behavior"]["scaleUp"]["stabilizationWindowSeconds"] == 0
    assert "stabilizationWindowSeconds" not in obj["spec"]["behavior"]["scaleDown"]


def test_v2beta1_metric_shapes_round_trip() -> None:
    for metric in (PODS, EXTERNAL, OBJECT):
        beta = hpa.metric_spec_to_beta(metric)
        assert hpa.metric_spec_from_beta(beta) == metric, beta
    assert hpa.metric_spec_to_beta(OBJECT)["object"] == {
        "target": {"kind": "Ingress", "name": "main", "apiVersion": "networking.k8s.io/v1"},
        "metricName": "rps",
        "targetValue": "2k",
    }


def test_v1_keeps_what_it_cannot_say_in_annotations() -> None:
    obj = v2(metrics=[PODS, EXTERNAL])
    obj["status"] = {
        "currentReplicas": 2,
        "desiredReplicas": 2,
        "currentMetrics": [
            {"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "8"}}}
        ],
        "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}],
    }
    v1 = hpa.hub_to_v1(obj)
    assert "targetCPUUtilizationPercentage" not in v1["spec"]
    annotations = v1["metadata"]["annotations"]
    assert json.loads(annotations[hpa.METRIC_SPECS_ANNOTATION])[0] == {
        "type": "Pods",
        "pods": {"metricName": "qps", "targetAverageValue": "10"},
    }
    assert json.loads(annotations[hpa.CONDITIONS_ANNOTATION]) == [
        {
            "type": "AbleToScale",
            "status": "True",
            "lastTransitionTime": None,
            "reason": "ReadyForNewScale",
        }
    ]
    back = hpa.v1_to_hub(v1)
    assert back["spec"]["metrics"] == [PODS, EXTERNAL]
    assert back["status"]["conditions"] == obj["status"]["conditions"]
    assert back["status"]["currentMetrics"] == obj["status"]["currentMetrics"]
    assert back["metadata"]["annotations"] == {}


def test_v1_cpu_target_is_its_own_field() -> None:
    cpu = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
    }
    v1 = hpa.hub_to_v1(v2(metrics=[cpu]))
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 60
    assert "annotations" not in v1["metadata"]
    assert hpa.v1_to_hub(v1)["spec"]["metrics"] == [cpu]


def test_behavior_annotation_uses_go_field_names() -> None:
    behavior = {"scaleDown": {"selectPolicy": "Disabled", "policies": []}}
    text = hpa.behavior_annotation(behavior)
    assert text == (
        '{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":null,'
        '"SelectPolicy":"Disabled","Policies":[],"Tolerance":null}}'
    )
    assert hpa.behavior_from_annotation(text) == {
        "scaleDown": {"selectPolicy": "Disabled", "policies": []}
    }


def test_metric_validation_messages() -> None:
    spec = v2(metrics=[{"type": "Pods", "resource": {"name": "cpu"}}, {"type": "Bogus"}])["spec"]
    assert messages(hpa.validate_hpa_spec(spec)) == [
        "spec.metrics[0].resource.target.type: Required value: must specify a metric target type",
        'spec.metrics[0].resource.target.type: Invalid value: "": '
        "must be either Utilization, Value, or AverageValue",
        "spec.metrics[0].resource.target.averageUtilization: Required value: "
        "must set either a target raw value or a target utilization",
        "spec.metrics[0].pods: Required value: "
        "must populate information for the given metric source",
        'spec.metrics[1].type: Unsupported value: "Bogus": supported values: '
        '"ContainerResource", "External", "Object", "Pods", "Resource"',
        'spec.metrics[1].type: Unsupported value: "Bogus": supported values: '
        '"ContainerResource", "External", "Object", "Pods", "Resource"',
    ]


def test_two_sources_forbid_the_unexpected_one() -> None:
    metric = {**PODS, "external": EXTERNAL["external"]}
    assert messages(hpa.validate_hpa_spec(v2(metrics=[metric])["spec"])) == [
        "spec.metrics[0].external: Forbidden: must populate the given metric source only"
    ]


def test_behavior_validation_messages() -> None:
    rules = {
        "stabilizationWindowSeconds": 4000,
        "selectPolicy": "Most",
        "policies": [{"type": "Pods", "value": 0, "periodSeconds": 2000}],
    }
    spec = v2(behavior={"scaleUp": rules})["spec"]
    assert messages(hpa.validate_hpa_spec(spec)) == [
        "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: 4000: "
        "must be less than or equal to 3600",
        'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Most": supported values: '
        '"Disabled", "Max", "Min"',
        "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
        "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 2000: "
        "must be less than or equal to 1800",
    ]


def test_targets_cell() -> None:
    obj = v2(metrics=[PODS, EXTERNAL, OBJECT])
    assert hpa.targets_cell(obj) == "<unknown>/10, <unknown>/30 + 1 more..."
    obj["status"] = {
        "currentMetrics": [{"type": "Pods", "pods": {"current": {"averageValue": "1500m"}}}]
    }
    assert hpa.targets_cell(obj).startswith("1500m/10, ")
    assert hpa.targets_cell(v2()) == "<none>"
