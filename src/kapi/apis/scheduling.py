"""scheduling.k8s.io ``PriorityClass`` in ``v1`` (hub and storage) and ``v1beta1``.

``v1beta1`` (served 1.11 to 1.21, deprecated in 1.14, per its prerelease-lifecycle
tags in ``k8s.io/api``) has v1's fields, so it is the hub renamed.  Defaulting
follows ``pkg/apis/scheduling/v1*/defaults.go``, validation
``pkg/apis/scheduling/validation`` and the strategy
``pkg/registry/scheduling/priorityclass``.

Two system classes (:data:`SYSTEM_PRIORITY_CLASSES`) are created when the
server starts, as kube-apiserver's ``scheduling/bootstrap-system-priority-classes``
post-start hook does (:mod:`kapi.controllers.priority_classes`); they may not be
deleted one by one, as upstream's REST storage refuses.  The rule that at most
one class is the global default lives in the Priority admission plugin
(:mod:`kapi.admission.priority`), as upstream's.
"""

from __future__ import annotations

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError, Path, forbidden, not_supported, required
from kapi.apimachinery.unstructured import Object
from kapi.apis.generated import scheduling_v1, scheduling_v1beta1
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.scheme import (
    GroupVersionKind,
    Lifecycle,
    Resource,
    ResourceVersion,
    renamed_version,
)
from kapi.version import Version

GROUP = "scheduling.k8s.io"
HUB = "v1"

#: ``HighestUserDefinablePriority``: user classes may not go above it.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
#: ``SystemCriticalPriority``: the base of the system classes' values.
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
SYSTEM_PREFIX = "system-"
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"

#: The classes upstream creates at start: name, value, description (in kapi's words).
SYSTEM_PRIORITY_CLASSES: tuple[tuple[str, int, str], ...] = (
    (
        "system-node-critical",
        SYSTEM_CRITICAL_PRIORITY + 1000,
        "For system pods that must stay on the node they run on.",
    ),
    (
        "system-cluster-critical",
        SYSTEM_CRITICAL_PRIORITY,
        "For system pods the cluster needs, which may move to another node.",
    ),
)
SYSTEM_PRIORITY_CLASS_NAMES = frozenset(name for name, _, _ in SYSTEM_PRIORITY_CLASSES)


def system_priority_classes() -> list[Object]:
    """Fresh copies of the system classes, as the post-start hook creates them (v1)."""
    return [
        {
            "apiVersion": f"{GROUP}/{HUB}",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "description": description,
            "preemptionPolicy": DEFAULT_PREEMPTION_POLICY,
        }
        for name, value, description in SYSTEM_PRIORITY_CLASSES
    ]


# --- defaults and validation ----------------------------------------------------------------


def default_priority_class(obj: Object) -> None:
    """``SetDefaults_PriorityClass`` (v1 and v1beta1): the preemption policy."""
    if obj.get("preemptionPolicy") is None:
        obj["preemptionPolicy"] = DEFAULT_PREEMPTION_POLICY


def _known_system_class_error(name: str, value: int, global_default: bool) -> str | None:
    """``IsKnownSystemPriorityClass``: why ``name`` is no system class as given, or None."""
    for known, known_value, _ in SYSTEM_PRIORITY_CLASSES:
        if known != name:
            continue
        if value != known_value:
            return f"value of {known} PriorityClass must be {known_value}"
        if global_default:  # no system class is the global default
            return f"globalDefault of {known} PriorityClass must be false"
        return None
    return f"{name} is not a known system priority class"


def validate_preemption_policy(policy: object, path: Path) -> list[FieldError]:
    """``ValidatePreemptionPolicy`` (core validation)."""
    if policy == "" or policy is None:
        return [required(path, "")]
    if policy not in PREEMPTION_POLICIES:
        return [not_supported(path, policy, PREEMPTION_POLICIES)]
    return []


def validate_priority_class(obj: Object) -> list[FieldError]:
    """``ValidatePriorityClass``: reserved names, the user ceiling, the preemption policy."""
    errs: list[FieldError] = []
    name = (obj.get("metadata") or {}).get("name") or ""
    value = obj.get("value") or 0
    if name.startswith(SYSTEM_PREFIX):
        why = _known_system_class_error(name, value, bool(obj.get("globalDefault")))
        if why is not None:
            errs.append(
                forbidden(
                    Path("metadata", "name"),
                    f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved for "
                    f"system use only. error: {why}",
                )
            )
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            forbidden(
                Path("value"),
                "maximum allowed value of a user defined priority is "
                f"{HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    if "preemptionPolicy" in obj and obj["preemptionPolicy"] is not None:
        errs += validate_preemption_policy(obj["preemptionPolicy"], Path("preemptionPolicy"))
    return errs


def validate_priority_class_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidatePriorityClassUpdate``: value and preemption policy are immutable.

    Upstream checks nothing else on update: a system class's description may change.
    """
    errs: list[FieldError] = []
    if (new.get("value") or 0) != (old.get("value") or 0):
        errs.append(forbidden(Path("value"), "may not be changed in an update."))
    errs += validation.validate_immutable_field(
        new.get("preemptionPolicy"), old.get("preemptionPolicy"), Path("preemptionPolicy")
    )
    return errs


class PriorityClassStrategy(Strategy):
    """Upstream ``priorityClassStrategy``: generation 1 at creation, never bumped."""

    has_generation = True

    def spec_changed(self, new: Object, old: Object) -> bool:
        return False  # upstream's PrepareForUpdate leaves the generation as stored

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_priority_class(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_priority_class_update(new, old)

    def refuse_delete(self, name: str) -> str | None:
        """Upstream's ``REST.Delete``: the system classes stay."""
        if name in SYSTEM_PRIORITY_CLASS_NAMES:
            return "this is a system priority class and cannot be deleted"
        return None


# --- resource -------------------------------------------------------------------------------

COLUMNS = (
    NAME,
    Column(
        "Value",
        "integer",
        "The priority pods of this class get; higher runs first.",
        lambda obj: obj.get("value") or 0,
    ),
    Column(
        "Global-Default",
        "boolean",
        "Whether pods naming no class get this one.",
        lambda obj: bool(obj.get("globalDefault")),
    ),
    AGE,
    Column(
        "PreemptionPolicy",
        "string",
        "Whether pods of this class may preempt pods of lower priority.",
        lambda obj: obj.get("preemptionPolicy") or "",
    ),
)


def resources() -> list[Resource]:
    """The scheduling.k8s.io resources (a fresh strategy for a new scheme)."""
    return [
        Resource(
            group=GROUP,
            kind="PriorityClass",
            plural="priorityclasses",
            singular="priorityclass",
            namespaced=False,
            versions={
                HUB: ResourceVersion(
                    HUB,
                    scheduling_v1.PriorityClass,
                    Lifecycle(introduced=Version(1, 14)),
                    default_priority_class,
                ),
                "v1beta1": renamed_version(
                    "v1beta1",
                    scheduling_v1beta1.PriorityClass,
                    Lifecycle(
                        introduced=Version(1, 11),
                        deprecated=Version(1, 14),
                        removed=Version(1, 22),
                        replacement=GroupVersionKind(GROUP, HUB, "PriorityClass"),
                    ),
                    default_priority_class,
                ),
            },
            hub_version=HUB,
            storage_version=HUB,
            strategy=PriorityClassStrategy(),
            short_names=("pc",),
            columns=COLUMNS,
        )
    ]
