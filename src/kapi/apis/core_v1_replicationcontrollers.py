"""core/v1 ``ReplicationController``: defaults, validation, strategy, ``status`` and ``scale``.

Follows ``SetDefaults_ReplicationController`` (the selector and the object's
labels default to the template's labels, replicas to 1), ``ValidateReplicationController``
of ``pkg/apis/core/validation`` and ``pkg/registry/core/replicationcontroller``.
kapi runs no replication manager: the pods an RC asks for are not created.
"""

from __future__ import annotations

from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    GoSyntax,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kapi.apimachinery.unstructured import Object
from kapi.apis import core_v1_pod_validation as pod_validation
from kapi.apis.core_v1_pod_defaults import default_pod_template
from kapi.apis.generated.core_v1 import ReplicationController
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column, container_columns
from kapi.runtime.scale import BuiltinScale
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.version import Version

SELECTOR_MISMATCH = "selector does not match template labels"
ACTIVE_DEADLINE_FORBIDDEN = "activeDeadlineSeconds in ReplicationController is not Supported"
GREATER_THAN_REPLICAS = "cannot be greater than status.replicas"
_STATUS_COUNTS = (
    "replicas",
    "fullyLabeledReplicas",
    "readyReplicas",
    "availableReplicas",
    "observedGeneration",
)


def _spec(obj: Object) -> Object:
    return obj.get("spec") or {}


# --- defaulting -----------------------------------------------------------------------------


def default_replication_controller(obj: Object) -> None:
    """``SetDefaults_ReplicationController`` and the template's pod defaults."""
    spec = obj.setdefault("spec", {})
    template = spec.get("template")
    labels = (template or {}).get("metadata", {}).get("labels") if template else None
    if labels is not None:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        metadata = obj.setdefault("metadata", {})
        if not metadata.get("labels"):
            metadata["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if isinstance(template, dict):
        default_pod_template(template)


# --- validation -----------------------------------------------------------------------------


def _selector_matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def go_string_map(value: dict[str, str] | None) -> GoSyntax:
    """A ``map[string]string`` as ``%#v`` prints a bad value: keys sorted."""
    items = ", ".join(f'"{k}":"{v}"' for k, v in sorted((value or {}).items()))
    return GoSyntax(f"map[string]string{{{items}}}")


def validate_pod_template_for_rc(spec: Object, path: Path) -> list[FieldError]:
    """``ValidatePodTemplateSpecForRC``."""
    template = spec.get("template")
    if template is None:
        return [required(path, "")]
    selector = spec.get("selector") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    errs: list[FieldError] = []
    if selector and not _selector_matches(selector, labels):
        errs.append(
            invalid(path.child("metadata", "labels"), go_string_map(labels), SELECTOR_MISMATCH)
        )
    errs += pod_validation.validate_pod_template_spec(template, path)
    pod_spec = template.get("spec") or {}
    restart_policy = pod_spec.get("restartPolicy") or ""
    if restart_policy != "Always":
        errs.append(not_supported(path.child("spec", "restartPolicy"), restart_policy, ["Always"]))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(path.child("spec", "activeDeadlineSeconds"), ACTIVE_DEADLINE_FORBIDDEN)
        )
    return errs


def validate_replication_controller_spec(spec: Object) -> list[FieldError]:
    """``ValidateReplicationControllerSpec``."""
    path = Path("spec")
    errs = validation.validate_nonnegative_field(
        spec.get("minReadySeconds") or 0, path.child("minReadySeconds")
    )
    if not spec.get("selector"):
        errs.append(required(path.child("selector"), ""))
    errs += validation.validate_nonnegative_field(spec.get("replicas") or 0, path.child("replicas"))
    errs += validate_pod_template_for_rc(spec, path.child("template"))
    return errs


def validate_replication_controller_status(status: Object) -> list[FieldError]:
    """``ValidateReplicationControllerStatus``."""
    path = Path("status")
    errs: list[FieldError] = []
    counts = {name: status.get(name) or 0 for name in _STATUS_COUNTS}
    for name, value in counts.items():
        errs += validation.validate_nonnegative_field(value, path.child(name))
    for name in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        if counts[name] > counts["replicas"]:
            errs.append(invalid(path.child(name), counts[name], GREATER_THAN_REPLICAS))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        errs.append(
            invalid(
                path.child("availableReplicas"),
                counts["availableReplicas"],
                "cannot be greater than readyReplicas",
            )
        )
    return errs


# --- strategy -------------------------------------------------------------------------------


#: ``/scale``: replicas at ``spec.replicas`` and ``status.replicas``; the Scale's selector is
#: the RC's selector map written as a label selector.
RC_SCALE = BuiltinScale(map_selector=True)


class ReplicationControllerStrategy(Strategy):
    """Upstream ``rcStrategy`` and ``rcStatusStrategy``."""

    has_generation = True
    has_status = True
    #: Deletes orphan the pods unless told otherwise, as before the garbage collector.
    orphans_by_default_in = frozenset({("", "v1")})

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"replicas": 0}  # a zero status: replicas always serialises

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_replication_controller_spec(_spec(obj))

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return validate_replication_controller_status(new.get("status") or {})


# --- resource -------------------------------------------------------------------------------


def _status_int(name: str) -> Any:
    return lambda obj: (obj.get("status") or {}).get(name) or 0


def _containers(obj: Object) -> list[Object]:
    return ((_spec(obj).get("template") or {}).get("spec") or {}).get("containers") or []


def resources() -> list[Resource]:
    """The core/v1 ReplicationController resource."""
    return [
        Resource(
            group="",
            kind="ReplicationController",
            plural="replicationcontrollers",
            singular="replicationcontroller",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1",
                    ReplicationController,
                    Lifecycle(introduced=Version(1, 0)),
                    default_replication_controller,
                )
            },
            hub_version="v1",
            storage_version="v1",
            strategy=ReplicationControllerStrategy(),
            short_names=("rc",),
            categories=("all",),
            subresources=("scale", "status"),
            storage_resource="controllers",  # upstream's etcd key, not the plural
            scale=RC_SCALE,
            columns=(
                NAME,
                Column(
                    "Desired",
                    "integer",
                    "How many pods the controller is asked to keep.",
                    lambda o: _spec(o).get("replicas") or 0,
                ),
                Column(
                    "Current",
                    "integer",
                    "How many pods the controller last saw.",
                    _status_int("replicas"),
                ),
                Column(
                    "Ready",
                    "integer",
                    "How many of those pods are ready.",
                    _status_int("readyReplicas"),
                ),
                AGE,
                *container_columns(_containers),
                Column(
                    "Selector",
                    "string",
                    "The label query over the pods the controller counts.",
                    RC_SCALE.selector_string,
                    priority=1,
                ),
            ),
        )
    ]
