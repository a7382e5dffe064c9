"""Defaulting of every served apps version, and conversion of the deprecated ones to v1.

The hub of the apps kinds is ``apps/v1`` itself (upstream converts through an
internal version instead).  Two internal fields have no v1 field and live in
annotations of the v1 object, exactly as upstream's v1 conversion keeps them:
a Deployment's ``rollbackTo`` revision (``deprecated.deployment.rollback.to``)
and a DaemonSet's ``templateGeneration``
(``deprecated.daemonset.template.generation``).  ``apps/v1beta2`` converts
the same way as v1, so its objects are v1's under another ``apiVersion``;
``apps/v1beta1`` and ``extensions/v1beta1`` carry those two as spec fields,
and moving them between the field and the annotation is their conversion.

Defaults differ per version, as upstream's ``defaults.go`` of each
(``pkg/apis/apps/v1``, ``v1beta1``, ``v1beta2``, ``pkg/apis/extensions/v1beta1``):
the betas default the selector (and the object's labels) from the template's
labels, ``apps/v1beta1`` keeps only 2 old ReplicaSets, ``extensions/v1beta1``
keeps them all, with no progress deadline and a surge of 1, and its
DaemonSets and ``apps/v1beta1``'s StatefulSets update on delete.  Every
version defaults the pod template as a Pod
(:func:`kapi.apis.core_v1_pod_defaults.default_pod_template`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kapi.apimachinery.unstructured import Object
from kapi.apis import core_v1_pod_defaults
from kapi.apis.apps_validation import ROLLBACK_TO_ANNOTATION, TEMPLATE_GENERATION_ANNOTATION
from kapi.runtime.objects import deep_copy

MAX_INT32 = 2**31 - 1
ROLLING_UPDATE, ON_DELETE = "RollingUpdate", "OnDelete"

Defaulter = Callable[[Object], None]


def _spec(obj: Object) -> Object:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def _template(spec: Object) -> Object:
    template = spec.get("template")
    if not isinstance(template, dict):
        template = spec["template"] = {}
    return template


def _default_template(spec: Object) -> None:
    core_v1_pod_defaults.default_pod_template(_template(spec))


def _default_selector_from_template(obj: Object, spec: Object) -> None:
    """The betas' selector (and object labels) from the template's labels, when it has some."""
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if labels is None:
        return
    if spec.get("selector") is None:
        spec["selector"] = {"matchLabels": dict(labels)}
    metadata = obj.setdefault("metadata", {})
    if not metadata.get("labels"):
        metadata["labels"] = dict(labels)


def _default_rolling_update(strategy: Object, max_unavailable: Any, max_surge: Any) -> None:
    rolling = strategy.get("rollingUpdate")
    if not isinstance(rolling, dict):
        rolling = strategy["rollingUpdate"] = {}
    if rolling.get("maxUnavailable") is None:
        rolling["maxUnavailable"] = max_unavailable
    if rolling.get("maxSurge") is None:
        rolling["maxSurge"] = max_surge


def _strategy(spec: Object, name: str) -> Object:
    strategy = spec.get(name)
    if not isinstance(strategy, dict):
        strategy = spec[name] = {}
    return strategy


# --- Deployment ------------------------------------------------------------------------------


def _default_deployment(
    obj: Object,
    *,
    surge: Any,
    unavailable: Any,
    history: int,
    deadline: int,
    beta_selector: bool,
    rolling_when_set: bool = False,
) -> None:
    spec = _spec(obj)
    if beta_selector:
        _default_selector_from_template(obj, spec)
    spec.setdefault("replicas", 1)
    if spec["replicas"] is None:
        spec["replicas"] = 1
    strategy = _strategy(spec, "strategy")
    if not strategy.get("type"):
        strategy["type"] = ROLLING_UPDATE
    # extensions/v1beta1 also fills a rollingUpdate given with another type.
    if strategy["type"] == ROLLING_UPDATE or (
        rolling_when_set and strategy.get("rollingUpdate") is not None
    ):
        _default_rolling_update(strategy, unavailable, surge)
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = history
    if spec.get("progressDeadlineSeconds") is None:
        spec["progressDeadlineSeconds"] = deadline
    _default_template(spec)


def default_deployment_v1(obj: Object) -> None:
    """apps/v1 and apps/v1beta2: 25% surge and unavailability, 10 old ReplicaSets, 600s."""
    _default_deployment(
        obj, surge="25%", unavailable="25%", history=10, deadline=600, beta_selector=False
    )


def default_deployment_apps_v1beta1(obj: Object) -> None:
    _default_deployment(
        obj, surge="25%", unavailable="25%", history=2, deadline=600, beta_selector=True
    )


def default_deployment_extensions(obj: Object) -> None:
    _default_deployment(
        obj,
        surge=1,
        unavailable=1,
        history=MAX_INT32,
        deadline=MAX_INT32,
        beta_selector=True,
        rolling_when_set=True,
    )


# --- ReplicaSet ------------------------------------------------------------------------------


def default_replicaset_v1(obj: Object) -> None:
    spec = _spec(obj)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    _default_template(spec)


def default_replicaset_extensions(obj: Object) -> None:
    _default_selector_from_template(obj, _spec(obj))
    default_replicaset_v1(obj)


# --- StatefulSet -----------------------------------------------------------------------------


def _default_claim_templates(spec: Object) -> None:
    """Each volumeClaimTemplate as a PersistentVolumeClaim: Filesystem mode, Pending phase."""
    for claim in spec.get("volumeClaimTemplates") or ():
        if not isinstance(claim, dict):
            continue
        claim_spec = claim.setdefault("spec", {})
        if isinstance(claim_spec, dict) and claim_spec.get("volumeMode") is None:
            claim_spec["volumeMode"] = "Filesystem"
        status = claim.setdefault("status", {})
        if isinstance(status, dict) and not status.get("phase"):
            status["phase"] = "Pending"


def _default_statefulset(obj: Object, *, beta: bool) -> None:
    """v1/v1beta2 (``beta`` False) and apps/v1beta1 (``beta`` True)."""
    spec = _spec(obj)
    if not spec.get("podManagementPolicy"):
        spec["podManagementPolicy"] = "OrderedReady"
    strategy = _strategy(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = ON_DELETE if beta else ROLLING_UPDATE
        if not beta and strategy.get("rollingUpdate") is None:
            strategy["rollingUpdate"] = {}
    if beta:
        _default_selector_from_template(obj, spec)
    rolling = strategy.get("rollingUpdate")
    if (
        strategy["type"] == ROLLING_UPDATE
        and isinstance(rolling, dict)
        and rolling.get("partition") is None
    ):
        rolling["partition"] = 0
    # StatefulSetAutoDeletePVC is GA (and locked on) in the modelled release.
    policy = spec.get("persistentVolumeClaimRetentionPolicy")
    if not isinstance(policy, dict):
        policy = spec["persistentVolumeClaimRetentionPolicy"] = {}
    for name in ("whenDeleted", "whenScaled"):
        if not policy.get(name):
            policy[name] = "Retain"
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    _default_template(spec)
    _default_claim_templates(spec)


def default_statefulset_v1(obj: Object) -> None:
    _default_statefulset(obj, beta=False)


def default_statefulset_apps_v1beta1(obj: Object) -> None:
    _default_statefulset(obj, beta=True)


# --- DaemonSet -------------------------------------------------------------------------------


def _default_daemonset(obj: Object, *, extensions: bool) -> None:
    spec = _spec(obj)
    if extensions:
        _default_selector_from_template(obj, spec)
    strategy = _strategy(spec, "updateStrategy")
    if not strategy.get("type"):
        strategy["type"] = ON_DELETE if extensions else ROLLING_UPDATE
    if strategy["type"] == ROLLING_UPDATE:
        _default_rolling_update(strategy, 1, 0)
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    _default_template(spec)


def default_daemonset_v1(obj: Object) -> None:
    _default_daemonset(obj, extensions=False)


def default_daemonset_extensions(obj: Object) -> None:
    _default_daemonset(obj, extensions=True)


# --- conversions -----------------------------------------------------------------------------


def _annotations(obj: Object) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def _with_annotations(obj: Object, annotations: dict[str, str]) -> None:
    """Set the object's annotations; none left drops the field (a nil map in Go)."""
    metadata = obj.setdefault("metadata", {})
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)


def deployment_field_to_hub(obj: Object) -> Object:
    """apps/v1beta1 and extensions/v1beta1 to v1: ``rollbackTo`` becomes the annotation."""
    out = deep_copy(obj)
    spec = out.get("spec") if isinstance(out.get("spec"), dict) else None
    rollback = spec.pop("rollbackTo", None) if spec is not None else None
    annotations = dict(_annotations(out))
    if isinstance(rollback, dict):
        annotations[ROLLBACK_TO_ANNOTATION] = str(rollback.get("revision") or 0)
    else:
        annotations.pop(ROLLBACK_TO_ANNOTATION, None)
    _with_annotations(out, annotations)
    return out


def deployment_field_from_hub(obj: Object) -> Object:
    """v1 to apps/v1beta1 and extensions/v1beta1: the annotation becomes ``rollbackTo``.

    An annotation that is not an integer is dropped (upstream fails the
    conversion instead).
    """
    out = deep_copy(obj)
    annotations = dict(_annotations(out))
    revision = annotations.pop(ROLLBACK_TO_ANNOTATION, None)
    if revision and revision.lstrip("-").isdigit():
        out.setdefault("spec", {})["rollbackTo"] = {"revision": int(revision)}
    _with_annotations(out, annotations)
    return out


def daemonset_field_to_hub(obj: Object) -> Object:
    """extensions/v1beta1 to v1: ``spec.templateGeneration`` becomes the annotation."""
    out = deep_copy(obj)
    spec = out.get("spec") if isinstance(out.get("spec"), dict) else {}
    generation = spec.pop("templateGeneration", None) if spec else None
    annotations = dict(_annotations(out))
    annotations[TEMPLATE_GENERATION_ANNOTATION] = str(generation or 0)
    _with_annotations(out, annotations)
    return out


def daemonset_field_from_hub(obj: Object) -> Object:
    """v1 to extensions/v1beta1: the annotation becomes ``spec.templateGeneration``."""
    out = deep_copy(obj)
    annotations = dict(_annotations(out))
    value = annotations.pop(TEMPLATE_GENERATION_ANNOTATION, None)
    if value is not None:
        try:
            generation = int(value)
        except ValueError:
            generation = 0
        if generation:
            out.setdefault("spec", {})["templateGeneration"] = generation
    _with_annotations(out, annotations)
    return out
