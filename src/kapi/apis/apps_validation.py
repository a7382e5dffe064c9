"""Validation of the apps kinds, after upstream's ``pkg/apis/apps/validation``.

Every function takes hub (``apps/v1``) objects as plain dicts, already
defaulted, and returns field errors with upstream's paths and messages.
Upstream validates its internal types, where ``replicas`` and the rolling
update bounds are plain values (not pointers); a missing one reads as zero
here as it does there.  Values shown in errors are rendered as the internal
Go types would be: structs without JSON tags by their Go field names.

The pod template itself (containers, volumes, ...) is checked by the pod
validation shared by every workload (:mod:`kapi.apis.core_v1_pod_validation`);
this module adds what a controller's template must also satisfy.
"""

from __future__ import annotations

import re
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
from kapi.apimachinery.gotext import OrderedStruct
from kapi.apimachinery.labels import Selector, SelectorParseError, label_selector_as_selector
from kapi.apimachinery.unstructured import Object
from kapi.apis import core_v1_pod_validation

SPEC = Path("spec")
STATUS = Path("status")

SELECTOR_MISMATCH = "`selector` does not match template `labels`"
ALWAYS = "Always"
RECREATE, ROLLING_UPDATE, ON_DELETE = "Recreate", "RollingUpdate", "OnDelete"
ORDERED_READY, PARALLEL = "OrderedReady", "Parallel"
RETAIN, DELETE = "Retain", "Delete"
STATEFULSET_SPEC_UPDATE_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)
#: The annotation the v1 hub keeps a DaemonSet's templateGeneration in (upstream's
#: ``DeprecatedTemplateGeneration``), and a Deployment's rollbackTo revision.
TEMPLATE_GENERATION_ANNOTATION = "deprecated.daemonset.template.generation"
ROLLBACK_TO_ANNOTATION = "deprecated.deployment.rollback.to"

_PERCENT = re.compile(r"[0-9]+%")
_PERCENT_MSG = validation.regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'",
    "[0-9]+%",
    "1%",
    "93%",
)


def _spec(obj: Object) -> Object:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _nonnegative(value: Any, path: Path) -> list[FieldError]:
    return validation.validate_nonnegative_field(_int(value), path)


def _labels(obj: Object) -> dict[str, str]:
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _selector_value(selector: Any) -> Any:
    """A ``*metav1.LabelSelector`` as its JSON (empty fields omitted)."""
    if not isinstance(selector, dict):
        return selector
    return {k: v for k, v in selector.items() if v}


# --- int-or-percent (intstr) -----------------------------------------------------------------


def _percent(value: Any) -> int | None:
    """The number of a valid percent string, else ``None`` (``getPercentValue``)."""
    if isinstance(value, str) and _PERCENT.fullmatch(value):
        return int(value[:-1])
    return None


def int_or_percent_value(value: Any) -> int:
    """``getIntOrPercentValue``: a percent's number, an int's value; anything else 0."""
    percent = _percent(value)
    if percent is not None:
        return percent
    if isinstance(value, str):
        return 0  # intstr.IntValue of a non-numeric string: Atoi fails, 0
    return _int(value)


def validate_positive_int_or_percent(value: Any, path: Path) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent``."""
    if isinstance(value, str):
        return [] if _PERCENT.fullmatch(value) else [invalid(path, value, _PERCENT_MSG)]
    if value is None:
        return []  # a zero intstr (Int 0) upstream
    return validation.validate_nonnegative_field(_int(value), path)


def is_not_more_than_100_percent(value: Any, path: Path) -> list[FieldError]:
    percent = _percent(value)
    if percent is None or percent <= 100:
        return []
    return [invalid(path, value, "must not be greater than 100%")]


def _intstr(value: Any) -> Any:
    """An intstr the internal type holds by value: absent is ``0``."""
    return 0 if value is None else value


# --- pod templates ---------------------------------------------------------------------------


def _selector_matches(selector: Any, labels: dict[str, str]) -> bool | None:
    """Whether the selector matches; ``None`` when it does not parse."""
    try:
        parsed = label_selector_as_selector(selector)
    except SelectorParseError:
        return None
    return _parsed_selector_matches(selector, parsed, labels)


def _parsed_selector_matches(selector: Any, parsed: Selector, labels: dict[str, str]) -> bool:
    """Whether ``parsed`` (``selector``, parsed) matches ``labels``."""
    if isinstance(selector, dict) and not parsed.requirements:
        return True  # an empty selector (not a missing one) is not checked against the labels
    return parsed.matches(labels)


def validate_pod_template_for_replica_set(
    template: Object, selector: Any, parsed: Selector, path: Path, kind: str
) -> list[FieldError]:
    """``ValidatePodTemplateSpecForReplicaSet`` (Deployments share it); ``parsed`` is
    ``selector`` as the spec's own check has just parsed it."""
    errs: list[FieldError] = []
    labels = _labels(template)
    if not _parsed_selector_matches(selector, parsed, labels):  # a missing one matches nothing
        errs.append(invalid(path.child("metadata", "labels"), labels or None, SELECTOR_MISMATCH))
    errs += core_v1_pod_validation.validate_pod_template_spec(template, path)
    errs += _controller_restart_rules(template, path.child("spec"), kind)
    return errs


def _controller_restart_rules(template: Object, path: Path, kind: str) -> list[FieldError]:
    pod = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    assert isinstance(pod, dict)
    errs: list[FieldError] = []
    restart = pod.get("restartPolicy") or ""
    if restart != ALWAYS:
        errs.append(not_supported(path.child("restartPolicy"), restart, [ALWAYS]))
    if pod.get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(
                path.child("activeDeadlineSeconds"),
                f"activeDeadlineSeconds in {kind} is not Supported",
            )
        )
    return errs


def _validate_selector(selector: Any, path: Path, kind: str) -> list[FieldError]:
    """A required, strictly valid, non-empty selector (Deployment, ReplicaSet, StatefulSet)."""
    if selector is None:
        return [required(path)]
    errs = validation.validate_label_selector(selector, path)
    if isinstance(selector, dict) and not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        errs.append(
            invalid(path, _selector_value(selector), f"empty selector is invalid for {kind}")
        )
    return errs


def _template_of(spec: Object) -> Object:
    template = spec.get("template")
    return template if isinstance(template, dict) else {}


# --- Deployment ------------------------------------------------------------------------------


def _deployment_strategy_value(strategy: Object) -> OrderedStruct:
    rolling = strategy.get("rollingUpdate")
    rolling_value = (
        OrderedStruct(
            MaxUnavailable=_intstr(rolling.get("maxUnavailable")),
            MaxSurge=_intstr(rolling.get("maxSurge")),
        )
        if isinstance(rolling, dict)
        else None
    )
    return OrderedStruct(Type=strategy.get("type") or "", RollingUpdate=rolling_value)


def validate_rolling_update_deployment(rolling: Object, path: Path) -> list[FieldError]:
    max_unavailable = _intstr(rolling.get("maxUnavailable"))
    max_surge = _intstr(rolling.get("maxSurge"))
    errs = validate_positive_int_or_percent(max_unavailable, path.child("maxUnavailable"))
    errs += validate_positive_int_or_percent(max_surge, path.child("maxSurge"))
    if int_or_percent_value(max_unavailable) == 0 and int_or_percent_value(max_surge) == 0:
        errs.append(
            invalid(
                path.child("maxUnavailable"), max_unavailable, "may not be 0 when `maxSurge` is 0"
            )
        )
    errs += is_not_more_than_100_percent(max_unavailable, path.child("maxUnavailable"))
    return errs


def validate_deployment_strategy(strategy: Object, path: Path) -> list[FieldError]:
    kind = strategy.get("type") or ""
    rolling = strategy.get("rollingUpdate")
    if kind == RECREATE:
        if rolling is not None:
            return [
                forbidden(
                    path.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            ]
        return []
    if kind == ROLLING_UPDATE:
        if not isinstance(rolling, dict):
            return [
                required(path.child("rollingUpdate"), "this should be defaulted and never be nil")
            ]
        return validate_rolling_update_deployment(rolling, path.child("rollingUpdate"))
    return [not_supported(path, _deployment_strategy_value(strategy), [RECREATE, ROLLING_UPDATE])]


def validate_deployment_spec(spec: Object, path: Path = SPEC) -> list[FieldError]:
    """``ValidateDeploymentSpec``."""
    errs = _nonnegative(spec.get("replicas"), path.child("replicas"))
    selector = spec.get("selector")
    errs += _validate_selector(selector, path.child("selector"), "deployment")
    errs += _template_against_selector(spec, selector, path, "Deployment")
    strategy = spec.get("strategy")
    errs += validate_deployment_strategy(
        strategy if isinstance(strategy, dict) else {}, path.child("strategy")
    )
    min_ready = _int(spec.get("minReadySeconds"))
    errs += validation.validate_nonnegative_field(min_ready, path.child("minReadySeconds"))
    if spec.get("revisionHistoryLimit") is not None:
        errs += _nonnegative(spec["revisionHistoryLimit"], path.child("revisionHistoryLimit"))
    deadline = spec.get("progressDeadlineSeconds")
    if deadline is not None:
        deadline_path = path.child("progressDeadlineSeconds")
        errs += _nonnegative(deadline, deadline_path)
        if _int(deadline) <= min_ready:
            errs.append(invalid(deadline_path, deadline, "must be greater than minReadySeconds"))
    return errs


def _template_against_selector(
    spec: Object, selector: Any, path: Path, kind: str
) -> list[FieldError]:
    try:
        parsed = label_selector_as_selector(selector)
    except SelectorParseError:
        return [
            invalid(path.child("selector"), _selector_value(selector), "invalid label selector")
        ]
    return validate_pod_template_for_replica_set(
        _template_of(spec), selector, parsed, path.child("template"), kind
    )


def validate_rollback_annotation(obj: Object) -> list[FieldError]:
    """``ValidateRollback`` of the revision the v1 hub keeps in an annotation."""
    revision = ((obj.get("metadata") or {}).get("annotations") or {}).get(ROLLBACK_TO_ANNOTATION)
    if not revision:
        return []
    try:
        value = int(revision)
    except ValueError:
        return []
    return validation.validate_nonnegative_field(value, SPEC.child("rollback", "version"))


def validate_deployment(obj: Object) -> list[FieldError]:
    return validate_deployment_spec(_spec(obj)) + validate_rollback_annotation(obj)


def validate_deployment_status(status: Object, path: Path = STATUS) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in (
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
    ):
        errs += _nonnegative(status.get(name), path.child(name))
    if status.get("collisionCount") is not None:
        errs += _nonnegative(status["collisionCount"], path.child("collisionCount"))
    errs += _replica_counts(
        status, path, ("updatedReplicas", "readyReplicas", "availableReplicas"), "readyReplicas"
    )
    return errs


def _replica_counts(
    status: Object, path: Path, names: tuple[str, ...], ready: str
) -> list[FieldError]:
    """No count above ``status.replicas``; available not above ``ready``."""
    errs: list[FieldError] = []
    replicas = _int(status.get("replicas"))
    for name in names:
        value = _int(status.get(name))
        if value > replicas:
            errs.append(invalid(path.child(name), value, "cannot be greater than status.replicas"))
    available = _int(status.get("availableReplicas"))
    if available > _int(status.get("readyReplicas")):
        errs.append(
            invalid(path.child("availableReplicas"), available, f"cannot be greater than {ready}")
        )
    return errs


def validate_collision_count_update(new: Object, old: Object) -> list[FieldError]:
    """``IsDecremented`` of ``status.collisionCount``."""
    new_count = (new.get("status") or {}).get("collisionCount")
    old_count = (old.get("status") or {}).get("collisionCount")
    if old_count is None:
        return []
    if new_count is None or _int(new_count) < _int(old_count):
        value = 0 if new_count is None else new_count
        return [invalid(STATUS.child("collisionCount"), value, "cannot be decremented")]
    return []


def validate_deployment_status_update(new: Object, old: Object) -> list[FieldError]:
    status = new.get("status") or {}
    return validate_deployment_status(status) + validate_collision_count_update(new, old)


# --- ReplicaSet ------------------------------------------------------------------------------


def validate_replica_set_spec(spec: Object, path: Path = SPEC) -> list[FieldError]:
    """``ValidateReplicaSetSpec`` (its empty-selector message says deployment, as upstream's)."""
    errs = _nonnegative(spec.get("replicas"), path.child("replicas"))
    errs += _nonnegative(spec.get("minReadySeconds"), path.child("minReadySeconds"))
    selector = spec.get("selector")
    errs += _validate_selector(selector, path.child("selector"), "deployment")
    errs += _template_against_selector(spec, selector, path, "ReplicaSet")
    return errs


def validate_replica_set(obj: Object) -> list[FieldError]:
    return validate_replica_set_spec(_spec(obj))


def validate_replica_set_status(status: Object, path: Path = STATUS) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in (
        "replicas",
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
        "observedGeneration",
    ):
        errs += _nonnegative(status.get(name), path.child(name))
    errs += _replica_counts(
        status,
        path,
        ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"),
        "readyReplicas",
    )
    return errs


# --- StatefulSet -----------------------------------------------------------------------------


def _validate_retention_policy(policy: Any, path: Path) -> list[FieldError]:
    if not isinstance(policy, dict):
        return []
    errs: list[FieldError] = []
    for name in ("whenDeleted", "whenScaled"):
        value = policy.get(name) or ""
        if value not in (RETAIN, DELETE):
            errs.append(not_supported(path.child(name), value, [RETAIN, DELETE]))
    return errs


def _validate_rolling_update_statefulset(rolling: Object, path: Path) -> list[FieldError]:
    errs = _nonnegative(rolling.get("partition"), path.child("partition"))
    max_unavailable = rolling.get("maxUnavailable")
    if max_unavailable is not None:
        max_path = path.child("maxUnavailable")
        errs += validate_positive_int_or_percent(max_unavailable, max_path)
        if int_or_percent_value(max_unavailable) == 0:
            errs.append(invalid(max_path, max_unavailable, "cannot be 0"))
        errs += is_not_more_than_100_percent(max_unavailable, max_path)
    return errs


def _statefulset_strategy_value(strategy: Object) -> OrderedStruct:
    rolling = strategy.get("rollingUpdate")
    rolling_value = (
        OrderedStruct(
            Partition=_int(rolling.get("partition")), MaxUnavailable=rolling.get("maxUnavailable")
        )
        if isinstance(rolling, dict)
        else None
    )
    return OrderedStruct(Type=strategy.get("type") or "", RollingUpdate=rolling_value)


def validate_statefulset_spec(spec: Object, path: Path = SPEC) -> list[FieldError]:
    """``ValidateStatefulSetSpec``: its template's pod spec is not validated, as upstream's."""
    errs: list[FieldError] = []
    policy = spec.get("podManagementPolicy") or ""
    if not policy:
        errs.append(required(path.child("podManagementPolicy")))
    elif policy not in (ORDERED_READY, PARALLEL):
        errs.append(
            invalid(
                path.child("podManagementPolicy"),
                policy,
                f"must be '{ORDERED_READY}' or '{PARALLEL}'",
            )
        )
    strategy = spec.get("updateStrategy")
    strategy = strategy if isinstance(strategy, dict) else {}
    strategy_type = strategy.get("type") or ""
    rolling = strategy.get("rollingUpdate")
    strategy_path = path.child("updateStrategy")
    if not strategy_type:
        errs.append(required(strategy_path))
    elif strategy_type == ON_DELETE:
        if rolling is not None:
            errs.append(
                invalid(
                    strategy_path.child("rollingUpdate"),
                    OrderedStruct(
                        Partition=_int((rolling or {}).get("partition")),
                        MaxUnavailable=(rolling or {}).get("maxUnavailable"),
                    ),
                    f"only allowed for updateStrategy '{ROLLING_UPDATE}'",
                )
            )
    elif strategy_type == ROLLING_UPDATE:
        if isinstance(rolling, dict):
            errs += _validate_rolling_update_statefulset(
                rolling, strategy_path.child("rollingUpdate")
            )
    else:
        errs.append(
            invalid(
                strategy_path,
                _statefulset_strategy_value(strategy),
                f"must be '{ROLLING_UPDATE}' or '{ON_DELETE}'",
            )
        )
    errs += _validate_retention_policy(
        spec.get("persistentVolumeClaimRetentionPolicy"),
        path.child("persistentVolumeClaimRetentionPolicy"),
    )
    errs += _nonnegative(spec.get("replicas"), path.child("replicas"))
    errs += _nonnegative(spec.get("minReadySeconds"), path.child("minReadySeconds"))
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, dict):
        errs += _nonnegative(ordinals.get("start"), path.child("ordinals.start"))
    selector = spec.get("selector")
    if selector is None:
        errs.append(required(path.child("selector")))
    else:
        errs += validation.validate_label_selector(selector, path.child("selector"))
        if isinstance(selector, dict) and not (
            selector.get("matchLabels") or selector.get("matchExpressions")
        ):
            errs.append(
                invalid(
                    path.child("selector"),
                    _selector_value(selector),
                    "empty selector is invalid for statefulset",
                )
            )
    template = _template_of(spec)
    template_path = path.child("template")
    try:
        label_selector_as_selector(selector)
    except SelectorParseError:
        errs.append(invalid(path.child("selector"), _selector_value(selector), ""))
    else:
        labels = _labels(template)
        if _selector_matches(selector, labels) is False:
            errs.append(
                invalid(
                    template_path.child("metadata", "labels"), labels or None, SELECTOR_MISMATCH
                )
            )
        metadata = template.get("metadata") or {}
        errs += validation.validate_labels(metadata.get("labels"), template_path.child("labels"))
        errs += validation.validate_annotations(
            metadata.get("annotations"), template_path.child("annotations")
        )
    errs += _controller_restart_rules(template, template_path.child("spec"), "StatefulSet")
    return errs


def validate_statefulset(obj: Object) -> list[FieldError]:
    return validate_statefulset_spec(_spec(obj))


#: The StatefulSet spec fields an update may change.
STATEFULSET_MUTABLE = (
    "replicas",
    "template",
    "updateStrategy",
    "minReadySeconds",
    "ordinals",
    "persistentVolumeClaimRetentionPolicy",
)


def validate_statefulset_update(new: Object, old: Object) -> list[FieldError]:
    errs = validate_statefulset_spec(_spec(new))
    new_rest = {k: v for k, v in _spec(new).items() if k not in STATEFULSET_MUTABLE}
    old_rest = {k: v for k, v in _spec(old).items() if k not in STATEFULSET_MUTABLE}
    if _semantic(new_rest) != _semantic(old_rest):
        errs.append(forbidden(SPEC, STATEFULSET_SPEC_UPDATE_FORBIDDEN))
    return errs


def _semantic(value: Any) -> Any:
    """Drop what Go's typed comparison cannot see: empty strings, lists, maps and nulls."""
    if isinstance(value, dict):
        out = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, "", [], {}, False, 0)}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def validate_statefulset_status(status: Object, path: Path = STATUS) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in (
        "replicas",
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
    ):
        errs += _nonnegative(status.get(name), path.child(name))
    for name in ("observedGeneration", "collisionCount"):
        if status.get(name) is not None:
            errs += _nonnegative(status[name], path.child(name))
    replicas = _int(status.get("replicas"))
    for name in ("readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        value = _int(status.get(name))
        if value > replicas:
            errs.append(invalid(path.child(name), value, "cannot be greater than status.replicas"))
    available = _int(status.get("availableReplicas"))
    if available > _int(status.get("readyReplicas")):
        errs.append(
            invalid(
                path.child("availableReplicas"),
                available,
                "cannot be greater than status.readyReplicas",
            )
        )
    return errs


# --- DaemonSet -------------------------------------------------------------------------------


def template_generation(obj: Object) -> int:
    """The templateGeneration a v1 DaemonSet keeps in its annotation (0 when absent)."""
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(
        TEMPLATE_GENERATION_ANNOTATION
    )
    try:
        return int(value) if value is not None else 0
    except ValueError:
        return 0


def validate_rolling_update_daemonset(rolling: Object, path: Path) -> list[FieldError]:
    max_unavailable = _intstr(rolling.get("maxUnavailable"))
    max_surge = _intstr(rolling.get("maxSurge"))
    errs = validate_positive_int_or_percent(max_unavailable, path.child("maxUnavailable"))
    errs += validate_positive_int_or_percent(max_surge, path.child("maxSurge"))
    errs += is_not_more_than_100_percent(max_unavailable, path.child("maxUnavailable"))
    errs += is_not_more_than_100_percent(max_surge, path.child("maxSurge"))
    has_unavailable = int_or_percent_value(max_unavailable) != 0
    has_surge = int_or_percent_value(max_surge) != 0
    if has_unavailable and has_surge:
        errs.append(
            invalid(
                path.child("maxSurge"), max_surge, "may not be set when maxUnavailable is non-zero"
            )
        )
    elif not has_unavailable and not has_surge:
        errs.append(required(path.child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
    return errs


def validate_daemonset_update_strategy(strategy: Object, path: Path) -> list[FieldError]:
    strategy_type = strategy.get("type") or ""
    if strategy_type == ON_DELETE:
        return []
    if strategy_type == ROLLING_UPDATE:
        rolling = strategy.get("rollingUpdate")
        if not isinstance(rolling, dict):
            return [required(path.child("rollingUpdate"))]
        return validate_rolling_update_daemonset(rolling, path.child("rollingUpdate"))
    rolling = strategy.get("rollingUpdate")
    value = OrderedStruct(
        Type=strategy_type,
        RollingUpdate=OrderedStruct(
            MaxUnavailable=_intstr(rolling.get("maxUnavailable")),
            MaxSurge=_intstr(rolling.get("maxSurge")),
        )
        if isinstance(rolling, dict)
        else None,
    )
    return [not_supported(path, value, [ROLLING_UPDATE, ON_DELETE])]


def validate_daemonset_spec(spec: Object, generation: int, path: Path = SPEC) -> list[FieldError]:
    """``ValidateDaemonSetSpec``; ``generation`` is the templateGeneration."""
    selector = spec.get("selector")
    errs = validation.validate_label_selector(selector, path.child("selector"))
    template = _template_of(spec)
    labels = _labels(template)
    if _selector_matches(selector, labels) is False:
        errs.append(
            invalid(path.child("template", "metadata", "labels"), labels or None, SELECTOR_MISMATCH)
        )
    if isinstance(selector, dict) and not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        errs.append(
            invalid(
                path.child("selector"),
                _selector_value(selector),
                "empty selector is invalid for daemonset",
            )
        )
    errs += core_v1_pod_validation.validate_pod_template_spec(template, path.child("template"))
    errs += _controller_restart_rules(template, path.child("template", "spec"), "DaemonSet")
    errs += _nonnegative(spec.get("minReadySeconds"), path.child("minReadySeconds"))
    errs += validation.validate_nonnegative_field(generation, path.child("templateGeneration"))
    strategy = spec.get("updateStrategy")
    errs += validate_daemonset_update_strategy(
        strategy if isinstance(strategy, dict) else {}, path.child("updateStrategy")
    )
    if spec.get("revisionHistoryLimit") is not None:
        errs += _nonnegative(spec["revisionHistoryLimit"], path.child("revisionHistoryLimit"))
    return errs


def validate_daemonset(obj: Object) -> list[FieldError]:
    return validate_daemonset_spec(_spec(obj), template_generation(obj))


def validate_daemonset_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateDaemonSetUpdate``: templateGeneration moves with the template."""
    new_gen, old_gen = template_generation(new), template_generation(old)
    path = SPEC.child("templateGeneration")
    errs: list[FieldError] = []
    if new_gen < old_gen:
        errs.append(invalid(path, new_gen, "must not be decremented"))
    template_updated = _spec(new).get("template") != _spec(old).get("template")
    if new_gen == old_gen and template_updated:
        errs.append(invalid(path, new_gen, "must be incremented upon template update"))
    elif new_gen > old_gen and not template_updated:
        errs.append(invalid(path, new_gen, "must not be incremented without template update"))
    return errs + validate_daemonset_spec(_spec(new), new_gen)


def validate_daemonset_status(status: Object, path: Path = STATUS) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in (
        "currentNumberScheduled",
        "numberMisscheduled",
        "desiredNumberScheduled",
        "numberReady",
        "observedGeneration",
        "updatedNumberScheduled",
        "numberAvailable",
        "numberUnavailable",
    ):
        errs += _nonnegative(status.get(name), path.child(name))
    if status.get("collisionCount") is not None:
        errs += _nonnegative(status["collisionCount"], path.child("collisionCount"))
    return errs


# --- ControllerRevision ----------------------------------------------------------------------


def validate_controller_revision(obj: Object) -> list[FieldError]:
    errs: list[FieldError] = []
    if obj.get("data") is None:
        errs.append(required(Path("data"), "data is mandatory"))
    errs += _nonnegative(obj.get("revision"), Path("revision"))
    return errs


def validate_controller_revision_update(new: Object, old: Object) -> list[FieldError]:
    errs = validate_controller_revision(new)
    errs += validation.validate_immutable_field(new.get("data"), old.get("data"), Path("data"))
    return errs
