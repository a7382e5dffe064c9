"""autoscaling ``HorizontalPodAutoscaler``: ``v2`` (hub and storage), ``v1``, and the
deprecated ``v2beta1`` and ``v2beta2``.

The rules follow upstream's ``pkg/apis/autoscaling`` (defaults per version, the
conversions, validation messages kept byte for byte) and
``pkg/registry/autoscaling/horizontalpodautoscaler`` (the strategy); the code is kapi's.

``v1`` only has a CPU target.  Converting from the hub keeps whatever ``v1`` cannot
say in annotations, as upstream does, so a v1 client's read-modify-write keeps the
other metrics: the metric specs and statuses (in ``v2beta1``'s shape), the
conditions, and the behavior (as upstream marshals its internal type, with Go's
field names).  ``v2beta1`` has the same metric shape, and keeps the behavior in the
same annotation; ``v2beta2`` has the hub's fields.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kapi.apimachinery.quantity import QuantityError, unmarshal_json
from kapi.apimachinery.unstructured import Object
from kapi.apis.generated import (
    autoscaling_v1,
    autoscaling_v2,
    autoscaling_v2beta1,
    autoscaling_v2beta2,
)
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.scheme import GroupVersionKind, Lifecycle, Resource, ResourceVersion
from kapi.version import Version

METRIC_SPECS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
METRIC_STATUSES_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
_ROUND_TRIP_ANNOTATIONS = (
    METRIC_SPECS_ANNOTATION,
    METRIC_STATUSES_ANNOTATION,
    CONDITIONS_ANNOTATION,
    BEHAVIOR_ANNOTATION,
)

DEFAULT_CPU_UTILIZATION = 80
MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
#: Sorted, as upstream lists a ``sets.String``.
METRIC_SOURCE_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
SELECT_POLICIES = ("Disabled", "Max", "Min")
SCALING_POLICY_TYPES = ("Percent", "Pods")
_SOURCE_FIELDS = {
    "Object": "object",
    "Pods": "pods",
    "Resource": "resource",
    "External": "external",
    "ContainerResource": "containerResource",
}


def _cpu_metric(utilization: int) -> Object:
    return {
        "type": "Resource",
        "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": utilization},
        },
    }


# --- defaulting -----------------------------------------------------------------------------


def _scale_up_rules() -> Object:
    return {
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15},
        ],
    }


def _scale_down_rules() -> Object:
    # No stabilization window: the controller manager's flag decides it.
    return {
        "selectPolicy": "Max",
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
    }


def _fill_rules(rules: Object | None, defaults: Object) -> Object:
    """The defaults, overridden by every field ``rules`` sets."""
    if rules is None:
        return defaults
    for key in ("selectPolicy", "stabilizationWindowSeconds", "policies", "tolerance"):
        if rules.get(key) is not None:
            defaults[key] = rules[key]
    return defaults


def default_behavior(spec: Object) -> None:
    """A behavior that is set gets every rule it leaves out (upstream's generated rules)."""
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _fill_rules(behavior.get("scaleUp"), _scale_up_rules())
        behavior["scaleDown"] = _fill_rules(behavior.get("scaleDown"), _scale_down_rules())


def default_hpa_v2(obj: Object) -> None:
    """``v2`` and ``v2beta2``: one replica at least, CPU at 80% without metrics, behavior."""
    spec = obj.setdefault("spec", {})
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
    default_behavior(spec)


def default_hpa_v1(obj: Object) -> None:
    """``v1``: only the replica floor (its CPU default is applied converting to the hub)."""
    spec = obj.setdefault("spec", {})
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1


def default_hpa_v2beta1(obj: Object) -> None:
    spec = obj.setdefault("spec", {})
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "targetAverageUtilization": DEFAULT_CPU_UTILIZATION},
            }
        ]


# --- metric conversions between the hub and v2beta1's shape (also v1's annotations) -------


def _put(out: Object, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


def _ref_to_beta(ref: Object | None) -> Object:
    ref = ref or {}
    out = {"kind": ref.get("kind", ""), "name": ref.get("name", "")}
    _put(out, "apiVersion", ref.get("apiVersion"))
    return out


def metric_spec_to_beta(spec: Object) -> Object:
    """A hub MetricSpec in v2beta1's (and v1's annotation's) shape."""
    out: Object = {"type": spec.get("type", "")}
    obj, pods = spec.get("object"), spec.get("pods")
    resource, container, external = (
        spec.get("resource"),
        spec.get("containerResource"),
        spec.get("external"),
    )
    if obj is not None:
        target, metric = obj.get("target") or {}, obj.get("metric") or {}
        src: Object = {
            "target": _ref_to_beta(obj.get("describedObject")),
            "metricName": metric.get("name", ""),
            "targetValue": target.get("value") if target.get("value") is not None else "0",
        }
        _put(src, "selector", metric.get("selector"))
        _put(src, "averageValue", target.get("averageValue"))
        out["object"] = src
    if pods is not None:
        target, metric = pods.get("target") or {}, pods.get("metric") or {}
        src = {"metricName": metric.get("name", "")}
        src["targetAverageValue"] = target.get("averageValue") or "0"
        _put(src, "selector", metric.get("selector"))
        out["pods"] = src
    if resource is not None:
        target = resource.get("target") or {}
        src = {"name": resource.get("name", "")}
        _put(src, "targetAverageUtilization", target.get("averageUtilization"))
        _put(src, "targetAverageValue", target.get("averageValue"))
        out["resource"] = src
    if container is not None:
        target = container.get("target") or {}
        src = {"name": container.get("name", "")}
        _put(src, "targetAverageUtilization", target.get("averageUtilization"))
        _put(src, "targetAverageValue", target.get("averageValue"))
        src["container"] = container.get("container", "")
        out["containerResource"] = src
    if external is not None:
        target, metric = external.get("target") or {}, external.get("metric") or {}
        src = {"metricName": metric.get("name", "")}
        _put(src, "metricSelector", metric.get("selector"))
        _put(src, "targetValue", target.get("value"))
        _put(src, "targetAverageValue", target.get("averageValue"))
        out["external"] = src
    return out


def _metric_id(name: Any, selector: Any) -> Object:
    out: Object = {"name": name or ""}
    _put(out, "selector", selector)
    return out


def metric_spec_from_beta(spec: Object) -> Object:
    """A v2beta1-shaped MetricSpec in the hub's shape."""
    out: Object = {"type": spec.get("type", "")}
    obj, pods = spec.get("object"), spec.get("pods")
    resource, container, external = (
        spec.get("resource"),
        spec.get("containerResource"),
        spec.get("external"),
    )
    if obj is not None:
        average = obj.get("averageValue")
        target: Object = {"type": "Value" if average is None else "AverageValue"}
        target["value"] = obj.get("targetValue") or "0"
        _put(target, "averageValue", average)
        out["object"] = {
            "describedObject": _ref_to_beta(obj.get("target")),
            "target": target,
            "metric": _metric_id(obj.get("metricName"), obj.get("selector")),
        }
    if pods is not None:
        out["pods"] = {
            "metric": _metric_id(pods.get("metricName"), pods.get("selector")),
            "target": {
                "type": "AverageValue",
                "averageValue": pods.get("targetAverageValue") or "0",
            },
        }
    for key, src in (("resource", resource), ("containerResource", container)):
        if src is None:
            continue
        utilization = src.get("targetAverageUtilization")
        target = {"type": "AverageValue" if utilization is None else "Utilization"}
        _put(target, "averageUtilization", utilization)
        _put(target, "averageValue", src.get("targetAverageValue"))
        converted: Object = {"name": src.get("name", ""), "target": target}
        if key == "containerResource":
            converted["container"] = src.get("container", "")
        out[key] = converted
    if external is not None:
        value = external.get("targetValue")
        target = {"type": "AverageValue" if value is None else "Value"}
        _put(target, "value", value)
        _put(target, "averageValue", external.get("targetAverageValue"))
        out["external"] = {
            "metric": _metric_id(external.get("metricName"), external.get("metricSelector")),
            "target": target,
        }
    return out


def metric_status_to_beta(status: Object) -> Object:
    out: Object = {"type": status.get("type", "")}
    obj, pods = status.get("object"), status.get("pods")
    resource, container, external = (
        status.get("resource"),
        status.get("containerResource"),
        status.get("external"),
    )
    if obj is not None:
        current, metric = obj.get("current") or {}, obj.get("metric") or {}
        src: Object = {
            "target": _ref_to_beta(obj.get("describedObject")),
            "metricName": metric.get("name", ""),
            "currentValue": current.get("value") or "0",
        }
        _put(src, "selector", metric.get("selector"))
        _put(src, "averageValue", current.get("averageValue"))
        out["object"] = src
    if pods is not None:
        current, metric = pods.get("current") or {}, pods.get("metric") or {}
        src = {
            "metricName": metric.get("name", ""),
            "currentAverageValue": current.get("averageValue") or "0",
        }
        _put(src, "selector", metric.get("selector"))
        out["pods"] = src
    for key, res in (("resource", resource), ("containerResource", container)):
        if res is None:
            continue
        current = res.get("current") or {}
        src = {"name": res.get("name", "")}
        _put(src, "currentAverageUtilization", current.get("averageUtilization"))
        src["currentAverageValue"] = current.get("averageValue") or "0"
        if key == "containerResource":
            src["container"] = res.get("container", "")
        out[key] = src
    if external is not None:
        current, metric = external.get("current") or {}, external.get("metric") or {}
        src = {"metricName": metric.get("name", "")}
        _put(src, "metricSelector", metric.get("selector"))
        src["currentValue"] = current.get("value") or "0"
        _put(src, "currentAverageValue", current.get("averageValue"))
        out["external"] = src
    return out


def metric_status_from_beta(status: Object) -> Object:
    out: Object = {"type": status.get("type", "")}
    obj, pods = status.get("object"), status.get("pods")
    resource, container, external = (
        status.get("resource"),
        status.get("containerResource"),
        status.get("external"),
    )
    if obj is not None:
        current: Object = {"value": obj.get("currentValue") or "0"}
        _put(current, "averageValue", obj.get("averageValue"))
        out["object"] = {
            "metric": _metric_id(obj.get("metricName"), obj.get("selector")),
            "current": current,
            "describedObject": _ref_to_beta(obj.get("target")),
        }
    if pods is not None:
        out["pods"] = {
            "metric": _metric_id(pods.get("metricName"), pods.get("selector")),
            "current": {"averageValue": pods.get("currentAverageValue") or "0"},
        }
    for key, res in (("resource", resource), ("containerResource", container)):
        if res is None:
            continue
        current = {"averageValue": res.get("currentAverageValue") or "0"}
        _put(current, "averageUtilization", res.get("currentAverageUtilization"))
        converted: Object = {"name": res.get("name", ""), "current": current}
        if key == "containerResource":
            converted["container"] = res.get("container", "")
        out[key] = converted
    if external is not None:
        current = {"value": external.get("currentValue") or "0"}
        _put(current, "averageValue", external.get("currentAverageValue"))
        out["external"] = {
            "metric": _metric_id(external.get("metricName"), external.get("metricSelector")),
            "current": current,
        }
    return out


# --- behavior as upstream marshals its internal type ----------------------------------------


def _rules_to_go(rules: Object | None) -> Object | None:
    if rules is None:
        return None
    return {
        "StabilizationWindowSeconds": rules.get("stabilizationWindowSeconds"),
        "SelectPolicy": rules.get("selectPolicy"),
        "Policies": [
            {
                "Type": p.get("type", ""),
                "Value": p.get("value", 0),
                "PeriodSeconds": p.get("periodSeconds", 0),
            }
            for p in rules.get("policies") or ()
        ]
        if rules.get("policies") is not None
        else None,
        "Tolerance": rules.get("tolerance"),
    }


def behavior_annotation(behavior: Object) -> str:
    return _go_json(
        {
            "ScaleUp": _rules_to_go(behavior.get("scaleUp")),
            "ScaleDown": _rules_to_go(behavior.get("scaleDown")),
        }
    )


def _ci(obj: Object, name: str) -> Any:
    """Go's ``encoding/json`` matches field names case-insensitively."""
    for key, value in obj.items():
        if key.lower() == name.lower():
            return value
    return None


def _rules_from_go(rules: Any) -> Object | None:
    if not isinstance(rules, dict):
        return None
    out: Object = {}
    _put(out, "stabilizationWindowSeconds", _ci(rules, "StabilizationWindowSeconds"))
    _put(out, "selectPolicy", _ci(rules, "SelectPolicy"))
    policies = _ci(rules, "Policies")
    if isinstance(policies, list):
        out["policies"] = [
            {
                "type": _ci(p, "Type") or "",
                "value": _ci(p, "Value") or 0,
                "periodSeconds": _ci(p, "PeriodSeconds") or 0,
            }
            for p in policies
            if isinstance(p, dict)
        ]
    _put(out, "tolerance", _ci(rules, "Tolerance"))
    return out


def behavior_from_annotation(text: str) -> Object | None:
    try:
        raw = json.loads(text)
    except ValueError:
        return None
    if not isinstance(raw, dict):
        return None
    out: Object = {}
    _put(out, "scaleUp", _rules_from_go(_ci(raw, "ScaleUp")))
    _put(out, "scaleDown", _rules_from_go(_ci(raw, "ScaleDown")))
    return out


def _go_json(value: Any) -> str:
    """``json.Marshal``'s compact form (keys in the order given, HTML-safe escapes)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _condition_to_v1(condition: Object) -> Object:
    out: Object = {
        "type": condition.get("type", ""),
        "status": condition.get("status", ""),
        "lastTransitionTime": condition.get("lastTransitionTime"),
    }
    _put(out, "reason", condition.get("reason") or None)
    _put(out, "message", condition.get("message") or None)
    return out


def _annotation_list(annotations: dict[str, str], key: str) -> list[Object] | None:
    """A JSON list kept in an annotation, or ``None`` if absent or unreadable (as upstream)."""
    if key not in annotations:
        return None
    try:
        value = json.loads(annotations[key])
    except ValueError:
        return None
    if not isinstance(value, list):
        return None
    return [v for v in value if isinstance(v, dict)]


def _without_round_trip_annotations(obj: Object) -> None:
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("annotations"), dict):
        annotations = {
            k: v for k, v in metadata["annotations"].items() if k not in _ROUND_TRIP_ANNOTATIONS
        }
        metadata["annotations"] = annotations


# --- v1 <-> hub -------------------------------------------------------------------------------


def _is_cpu_resource(metric: Object) -> bool:
    resource = metric.get("resource")
    return (
        metric.get("type") == "Resource"
        and isinstance(resource, dict)
        and resource.get("name") == "cpu"
    )


def v1_to_hub(obj: Object) -> Object:
    """A v1 HPA in the hub's version, its metrics and conditions back from the annotations."""
    out = copy.deepcopy(obj)
    spec_in = obj.get("spec") or {}
    status_in = obj.get("status") or {}
    annotations = dict((obj.get("metadata") or {}).get("annotations") or {})
    spec: Object = {}
    _put(spec, "scaleTargetRef", spec_in.get("scaleTargetRef"))
    _put(spec, "minReplicas", spec_in.get("minReplicas"))
    spec["maxReplicas"] = spec_in.get("maxReplicas", 0)
    metrics: list[Object] = []
    if spec_in.get("targetCPUUtilizationPercentage") is not None:
        metrics = [_cpu_metric(spec_in["targetCPUUtilizationPercentage"])]
    others = _annotation_list(annotations, METRIC_SPECS_ANNOTATION)
    if others is not None:
        metrics = [metric_spec_from_beta(m) for m in others] + metrics[:1]
    if not metrics:
        # v1's implicit CPU target, made explicit now that every metric is known.
        metrics = [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
    spec["metrics"] = metrics
    behavior = annotations.get(BEHAVIOR_ANNOTATION)
    if behavior is not None:
        parsed = behavior_from_annotation(behavior)
        if parsed is not None:
            spec["behavior"] = parsed
    out["spec"] = spec
    if "status" in obj:
        status: Object = {}
        for key in ("observedGeneration", "lastScaleTime"):
            _put(status, key, status_in.get(key))
        status["currentReplicas"] = status_in.get("currentReplicas", 0)
        status["desiredReplicas"] = status_in.get("desiredReplicas", 0)
        current = status_in.get("currentCPUUtilizationPercentage")
        if current is not None:
            status["currentMetrics"] = [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "current": {"averageUtilization": current}},
                }
            ]
        statuses = _annotation_list(annotations, METRIC_STATUSES_ANNOTATION)
        if statuses is not None:
            status["currentMetrics"] = [metric_status_from_beta(m) for m in statuses]
        conditions = _annotation_list(annotations, CONDITIONS_ANNOTATION)
        if conditions is not None:
            status["conditions"] = [
                {k: v for k, v in c.items() if v is not None} for c in conditions
            ]
        out["status"] = status
    _without_round_trip_annotations(out)
    return out


def hub_to_v1(obj: Object) -> Object:
    """A hub HPA in v1: the CPU target as v1's field, everything else in annotations."""
    out = copy.deepcopy(obj)
    spec_in = obj.get("spec") or {}
    status_in = obj.get("status") or {}
    metadata = out.setdefault("metadata", {})
    annotations = dict(metadata.get("annotations") or {})
    spec: Object = {}
    _put(spec, "scaleTargetRef", spec_in.get("scaleTargetRef"))
    _put(spec, "minReplicas", spec_in.get("minReplicas"))
    spec["maxReplicas"] = spec_in.get("maxReplicas", 0)
    metrics = spec_in.get("metrics") or []
    for metric in metrics:
        if _is_cpu_resource(metric):
            utilization = (metric["resource"].get("target") or {}).get("averageUtilization")
            if utilization is not None:
                spec["targetCPUUtilizationPercentage"] = utilization
            break
    others = [
        metric_spec_to_beta(m)
        for m in metrics
        if not (
            _is_cpu_resource(m)
            and (m["resource"].get("target") or {}).get("averageUtilization") is not None
        )
    ]
    if others:
        annotations[METRIC_SPECS_ANNOTATION] = _go_json(others)
    current_metrics = status_in.get("currentMetrics") or []
    if current_metrics:
        annotations[METRIC_STATUSES_ANNOTATION] = _go_json(
            [metric_status_to_beta(m) for m in current_metrics]
        )
    if spec_in.get("behavior") is not None:
        annotations[BEHAVIOR_ANNOTATION] = behavior_annotation(spec_in["behavior"])
    conditions = status_in.get("conditions") or []
    if conditions:
        annotations[CONDITIONS_ANNOTATION] = _go_json([_condition_to_v1(c) for c in conditions])
    if annotations:
        metadata["annotations"] = annotations
    out["spec"] = spec
    if "status" in obj:
        status: Object = {}
        for key in ("observedGeneration", "lastScaleTime"):
            _put(status, key, status_in.get(key))
        status["currentReplicas"] = status_in.get("currentReplicas", 0)
        status["desiredReplicas"] = status_in.get("desiredReplicas", 0)
        for metric in current_metrics:
            if _is_cpu_resource(metric):
                current = (metric["resource"].get("current") or {}).get("averageUtilization")
                if current is not None:
                    status["currentCPUUtilizationPercentage"] = current
        out["status"] = status
    return out


# --- v2beta1 <-> hub --------------------------------------------------------------------------


def v2beta1_to_hub(obj: Object) -> Object:
    out = copy.deepcopy(obj)
    spec = out.get("spec")
    if isinstance(spec, dict):
        spec["metrics"] = [metric_spec_from_beta(m) for m in spec.get("metrics") or []]
        if not spec["metrics"]:
            del spec["metrics"]
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if BEHAVIOR_ANNOTATION in annotations:
            parsed = behavior_from_annotation(annotations[BEHAVIOR_ANNOTATION])
            if parsed is not None:
                spec["behavior"] = parsed
    status = out.get("status")
    if isinstance(status, dict) and status.get("currentMetrics"):
        status["currentMetrics"] = [metric_status_from_beta(m) for m in status["currentMetrics"]]
    metadata = out.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("annotations"), dict):
        metadata["annotations"] = {
            k: v for k, v in metadata["annotations"].items() if k != BEHAVIOR_ANNOTATION
        }
    return out


def hub_to_v2beta1(obj: Object) -> Object:
    out = copy.deepcopy(obj)
    spec = out.get("spec")
    if isinstance(spec, dict):
        if spec.get("metrics"):
            spec["metrics"] = [metric_spec_to_beta(m) for m in spec["metrics"]]
        behavior = spec.pop("behavior", None)
        if behavior is not None:
            metadata = out.setdefault("metadata", {})
            annotations = dict(metadata.get("annotations") or {})
            annotations[BEHAVIOR_ANNOTATION] = behavior_annotation(behavior)
            metadata["annotations"] = annotations
    status = out.get("status")
    if isinstance(status, dict) and status.get("currentMetrics"):
        status["currentMetrics"] = [metric_status_to_beta(m) for m in status["currentMetrics"]]
    return out


# --- validation -------------------------------------------------------------------------------


def _path_segment(value: str, path: Path) -> list[FieldError]:
    return [invalid(path, value, m) for m in validation.name_is_path_segment(value, False)]


def validate_cross_version_ref(ref: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("kind", "name"):
        value = ref.get(key) or ""
        if not value:
            errs.append(required(path.child(key), ""))
        else:
            errs += _path_segment(value, path.child(key))
    return errs


def _sign(value: Any) -> int:
    try:
        amount = unmarshal_json(value).amount
    except (QuantityError, ValueError, TypeError):
        return 0
    return (amount > 0) - (amount < 0)


def _validate_target(target: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    kind = target.get("type") or ""
    if not kind:
        errs.append(required(path.child("type"), "must specify a metric target type"))
    if kind not in ("Utilization", "Value", "AverageValue"):
        detail = "must be either Utilization, Value, or AverageValue"
        errs.append(invalid(path.child("type"), kind, detail))
    for key in ("value", "averageValue"):
        if target.get(key) is not None and _sign(target[key]) != 1:
            errs.append(invalid(path.child(key), target[key], "must be positive"))
    utilization = target.get("averageUtilization")
    if utilization is not None and utilization < 1:
        errs.append(
            invalid(path.child("averageUtilization"), utilization, "must be greater than 0")
        )
    return errs


def _validate_metric_id(metric: Object, path: Path) -> list[FieldError]:
    name = metric.get("name") or ""
    if not name:
        return [required(path.child("name"), "must specify a metric name")]
    return _path_segment(name, path.child("name"))


def _validate_source(kind: str, src: Object, path: Path) -> list[FieldError]:
    target = src.get("target") or {}
    target_path = path.child("target")
    errs: list[FieldError] = []
    if kind == "object":
        errs += validate_cross_version_ref(
            src.get("describedObject") or {}, path.child("describedObject")
        )
        errs += _validate_metric_id(src.get("metric") or {}, path.child("metric"))
        errs += _validate_target(target, target_path)
        if target.get("value") is None and target.get("averageValue") is None:
            detail = "must set either a target value or averageValue"
            errs.append(required(target_path.child("averageValue"), detail))
    elif kind == "external":
        errs += _validate_metric_id(src.get("metric") or {}, path.child("metric"))
        errs += _validate_target(target, target_path)
        if target.get("value") is None and target.get("averageValue") is None:
            detail = "must set either a target value for metric or a per-pod target"
            errs.append(required(target_path.child("averageValue"), detail))
        if target.get("value") is not None and target.get("averageValue") is not None:
            detail = "may not set both a target value for metric and a per-pod target"
            errs.append(forbidden(target_path.child("value"), detail))
    elif kind == "pods":
        errs += _validate_metric_id(src.get("metric") or {}, path.child("metric"))
        errs += _validate_target(target, target_path)
        if target.get("averageValue") is None:
            detail = "must specify a positive target averageValue"
            errs.append(required(target_path.child("averageValue"), detail))
    else:  # resource, containerResource
        name = src.get("name") or ""
        if not name:
            errs.append(required(path.child("name"), "must specify a resource name"))
        if kind == "containerResource":
            container = src.get("container") or ""
            if not container:
                errs.append(required(path.child("container"), "must specify a container"))
            else:
                errs += [
                    invalid(path.child("container"), container, m)
                    for m in validation.is_dns1123_label(container)
                ]
        errs += _validate_target(target, target_path)
        utilization, average = target.get("averageUtilization"), target.get("averageValue")
        if utilization is None and average is None:
            detail = "must set either a target raw value or a target utilization"
            errs.append(required(target_path.child("averageUtilization"), detail))
        if utilization is not None and average is not None:
            detail = "may not set both a target raw value and a target utilization"
            errs.append(forbidden(target_path.child("averageValue"), detail))
    return errs


def _validate_metric_spec(spec: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    kind = spec.get("type") or ""
    if not kind:
        errs.append(required(path.child("type"), "must specify a metric source type"))
    if kind not in METRIC_SOURCE_TYPES:
        errs.append(not_supported(path.child("type"), kind, METRIC_SOURCE_TYPES))
    present: list[str] = []
    for field in ("object", "external", "pods", "resource", "containerResource"):
        if spec.get(field) is not None:
            present.append(field)
            if len(present) == 1:
                errs += _validate_source(field, spec[field], path.child(field))
    expected = _SOURCE_FIELDS.get(kind, "")
    if expected:
        if spec.get(expected) is None:
            detail = "must populate information for the given metric source"
            errs.append(required(path.child(expected), detail))
    else:
        errs.append(not_supported(path.child("type"), kind, METRIC_SOURCE_TYPES))
    if len(present) != 1:
        # Upstream walks a Go map here; kapi reports in declaration order.
        for field in present:
            if field != expected:
                errs.append(
                    forbidden(path.child(field), "must populate the given metric source only")
                )
    return errs


def _validate_rules(rules: Object | None, path: Path) -> list[FieldError]:
    if rules is None:
        return []
    errs: list[FieldError] = []
    window = rules.get("stabilizationWindowSeconds")
    window_path = path.child("stabilizationWindowSeconds")
    if window is not None and window < 0:
        errs.append(invalid(window_path, window, "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        detail = f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"
        errs.append(invalid(window_path, window, detail))
    select = rules.get("selectPolicy")
    if select is not None and select not in SELECT_POLICIES:
        errs.append(not_supported(path.child("selectPolicy"), select, SELECT_POLICIES))
    policies = rules.get("policies") or []
    policies_path = path.child("policies")
    if not policies:
        errs.append(required(policies_path, "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        policy_path = policies_path.index(i)
        kind = policy.get("type") or ""
        if kind not in SCALING_POLICY_TYPES:
            errs.append(not_supported(policy_path.child("type"), kind, SCALING_POLICY_TYPES))
        value, period = policy.get("value") or 0, policy.get("periodSeconds") or 0
        if value <= 0:
            errs.append(invalid(policy_path.child("value"), value, "must be greater than zero"))
        if period <= 0:
            errs.append(
                invalid(policy_path.child("periodSeconds"), period, "must be greater than zero")
            )
        if period > MAX_PERIOD_SECONDS:
            detail = f"must be less than or equal to {MAX_PERIOD_SECONDS}"
            errs.append(invalid(policy_path.child("periodSeconds"), period, detail))
    return errs


def validate_hpa_spec(spec: Object, *, min_replicas_floor: int = 1) -> list[FieldError]:
    """``validateHorizontalPodAutoscalerSpec`` on a hub spec."""
    path = Path("spec")
    errs: list[FieldError] = []
    min_replicas = spec.get("minReplicas")
    max_replicas = spec.get("maxReplicas") or 0
    if min_replicas is not None and min_replicas < min_replicas_floor:
        detail = f"must be greater than or equal to {min_replicas_floor}"
        errs.append(invalid(path.child("minReplicas"), min_replicas, detail))
    if max_replicas < 1:
        errs.append(invalid(path.child("maxReplicas"), max_replicas, "must be greater than 0"))
    if min_replicas is not None and max_replicas < min_replicas:
        detail = "must be greater than or equal to `minReplicas`"
        errs.append(invalid(path.child("maxReplicas"), max_replicas, detail))
    errs += validate_cross_version_ref(
        spec.get("scaleTargetRef") or {}, path.child("scaleTargetRef")
    )
    metrics_path = path.child("metrics")
    kinds = set()
    for i, metric in enumerate(spec.get("metrics") or []):
        errs += _validate_metric_spec(metric or {}, metrics_path.index(i))
        kinds.add((metric or {}).get("type"))
    if min_replicas == 0 and not kinds & {"Object", "External"}:
        detail = (
            "must specify at least one Object or External metric to support scaling to zero "
            "replicas"
        )
        errs.append(forbidden(metrics_path, detail))
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        errs += _validate_rules(behavior.get("scaleUp"), path.child("behavior", "scaleUp"))
        errs += _validate_rules(behavior.get("scaleDown"), path.child("behavior", "scaleDown"))
    return errs


class HPAStrategy(Strategy):
    """Upstream's ``autoscalerStrategy``: generation and a status subresource."""

    has_generation = True
    has_status = True

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"currentReplicas": 0, "desiredReplicas": 0}  # a zero status

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_hpa_spec(obj.get("spec") or {})

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        # An HPA that already scales to zero may keep doing so.
        floor = 0 if (old.get("spec") or {}).get("minReplicas") == 0 else 1
        return validate_hpa_spec(new.get("spec") or {}, min_replicas_floor=floor)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        status = new.get("status") or {}
        path = Path("status")
        errs: list[FieldError] = []
        for key in ("currentReplicas", "desiredReplicas"):
            errs += validation.validate_nonnegative_field(status.get(key) or 0, path.child(key))
        return errs


# --- table (printHorizontalPodAutoscaler) ----------------------------------------------------


def _quantity(value: Any) -> str:
    try:
        return str(unmarshal_json(value))
    except (QuantityError, ValueError, TypeError):
        return str(value)


def _metric_cell(spec: Object, status: Object | None) -> str:
    kind = spec.get("type")
    if kind in ("External", "Object"):
        src = spec.get(kind.lower()) or {}
        target = src.get("target") or {}
        current = ((status or {}).get(kind.lower()) or {}).get("current")
        if target.get("averageValue") is not None:
            shown = "<unknown>"
            if current is not None and current.get("averageValue") is not None:
                shown = _quantity(current["averageValue"])
            return f"{shown}/{_quantity(target['averageValue'])} (avg)"
        shown = _quantity(current.get("value", "0")) if current is not None else "<unknown>"
        return f"{shown}/{_quantity(target.get('value', '0'))}"
    if kind == "Pods":
        target = (spec.get("pods") or {}).get("target") or {}
        current = ((status or {}).get("pods") or {}).get("current")
        shown = _quantity(current.get("averageValue", "0")) if current is not None else "<unknown>"
        return f"{shown}/{_quantity(target.get('averageValue', '0'))}"
    if kind in ("Resource", "ContainerResource"):
        key = "resource" if kind == "Resource" else "containerResource"
        src = spec.get(key) or {}
        target = src.get("target") or {}
        current = ((status or {}).get(key) or {}).get("current")
        name = src.get("name", "")
        if target.get("averageValue") is not None:
            shown = (
                _quantity(current.get("averageValue", "0")) if current is not None else "<unknown>"
            )
            return f"{name}: {shown}/{_quantity(target['averageValue'])}"
        shown = "<unknown>"
        if current is not None and current.get("averageUtilization") is not None:
            shown = f"{current['averageUtilization']}%"
        goal = "<auto>"
        if target.get("averageUtilization") is not None:
            goal = f"{target['averageUtilization']}%"
        return f"{name}: {shown}/{goal}"
    return "<unknown type>"


def targets_cell(obj: Object) -> str:
    """The TARGETS column: the first two metrics as current/target, then a count of the rest."""
    metrics = (obj.get("spec") or {}).get("metrics") or []
    if not metrics:
        return "<none>"
    statuses = (obj.get("status") or {}).get("currentMetrics") or []
    cells = [
        _metric_cell(m, statuses[i] if i < len(statuses) else None) for i, m in enumerate(metrics)
    ]
    if len(cells) > 2:
        return ", ".join(cells[:2]) + f" + {len(cells) - 2} more..."
    return ", ".join(cells)


def _reference_cell(obj: Object) -> str:
    ref = (obj.get("spec") or {}).get("scaleTargetRef") or {}
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


def _min_pods_cell(obj: Object) -> str:
    value = (obj.get("spec") or {}).get("minReplicas")
    return "<unset>" if value is None else str(value)


HPA_COLUMNS = (
    NAME,
    Column("Reference", "string", "The kind and name of the object being scaled.", _reference_cell),
    Column("Targets", "string", "Each metric's current value against its target.", targets_cell),
    Column("MinPods", "string", "The fewest replicas the autoscaler keeps.", _min_pods_cell),
    Column(
        "MaxPods",
        "integer",
        "The most replicas the autoscaler scales to.",
        lambda o: (o.get("spec") or {}).get("maxReplicas", 0),
    ),
    Column(
        "Replicas",
        "integer",
        "How many replicas the autoscaler last saw.",
        lambda o: (o.get("status") or {}).get("currentReplicas", 0),
    ),
    AGE,
)


def _identity(obj: Object) -> Object:
    return dict(obj)


def resources() -> list[Resource]:
    """The autoscaling resources this module defines."""
    v2 = GroupVersionKind("autoscaling", "v2", "HorizontalPodAutoscaler")
    return [
        Resource(
            group="autoscaling",
            kind="HorizontalPodAutoscaler",
            plural="horizontalpodautoscalers",
            singular="horizontalpodautoscaler",
            namespaced=True,
            versions={
                "v2": ResourceVersion(
                    "v2",
                    autoscaling_v2.HorizontalPodAutoscaler,
                    Lifecycle(introduced=Version(1, 23)),
                    default_hpa_v2,
                ),
                "v1": ResourceVersion(
                    "v1",
                    autoscaling_v1.HorizontalPodAutoscaler,
                    Lifecycle(introduced=Version(1, 2)),
                    default_hpa_v1,
                    to_hub=v1_to_hub,
                    from_hub=hub_to_v1,
                ),
                "v2beta2": ResourceVersion(
                    "v2beta2",
                    autoscaling_v2beta2.HorizontalPodAutoscaler,
                    Lifecycle(
                        introduced=Version(1, 12),
                        deprecated=Version(1, 23),
                        removed=Version(1, 26),
                        replacement=v2,
                    ),
                    default_hpa_v2,
                    to_hub=_identity,
                    from_hub=_identity,
                ),
                "v2beta1": ResourceVersion(
                    "v2beta1",
                    autoscaling_v2beta1.HorizontalPodAutoscaler,
                    Lifecycle(
                        introduced=Version(1, 8),
                        deprecated=Version(1, 22),
                        removed=Version(1, 25),
                        replacement=v2,
                    ),
                    default_hpa_v2beta1,
                    to_hub=v2beta1_to_hub,
                    from_hub=hub_to_v2beta1,
                ),
            },
            hub_version="v2",
            storage_version="v2",
            strategy=HPAStrategy(),
            short_names=("hpa",),
            categories=("all",),
            subresources=("status",),
            columns=HPA_COLUMNS,
        )
    ]
