"""core/v1 ``Pod``: strategy, table, field selectors and the pod subresources.

Follows ``pkg/registry/core/pod`` of Kubernetes 1.33: a pod gets generation 1
on create and a new generation on every spec change, starts ``Pending`` with
its QoS class computed, and has these subresources:

- ``status`` (everything but status is kept from the stored pod);
- ``ephemeralcontainers`` (only ``spec.ephemeralContainers`` changes, and
  existing ones may be neither removed nor changed);
- ``binding`` (a POSTed ``Binding`` sets ``spec.nodeName`` once);
- ``eviction`` (a POSTed ``policy/v1`` or ``v1beta1`` ``Eviction`` deletes the
  pod unless a PodDisruptionBudget forbids it, using up one of its allowed
  disruptions as upstream's eviction REST does).

kapi runs no kubelet, so ``log``, ``exec``, ``attach``, ``portforward`` and
``proxy`` are not served (404), and a pod is deleted at once: nobody would
ever finish a graceful deletion.  Defaulting and the pod-spec validation come
from :mod:`kapi.apis.core_v1_pod_defaults` and
:mod:`kapi.apis.core_v1_pod_validation`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from kapi.apimachinery import errors, validation
from kapi.apimachinery.field_errors import (
    FieldError,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kapi.apimachinery.labels import SelectorParseError, label_selector_as_selector
from kapi.apimachinery.quantity import QuantityError, parse_quantity
from kapi.apimachinery.unstructured import Object
from kapi.apis import core_v1_pod_validation as pod_validation
from kapi.apis.core_v1_pod_defaults import default_pod
from kapi.apis.generated import core_v1
from kapi.registry.predicate import EVERYTHING
from kapi.registry.store import Preconditions
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column, since
from kapi.runtime import protobuf_messages as pb
from kapi.runtime.meta import kind_struct
from kapi.runtime.objects import deep_copy
from kapi.runtime.schema import BOOLEAN, INT64, STRING, Field, List, Struct
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.runtime.strategy import StoreLookup
from kapi.version import Version

PENDING, RUNNING, SUCCEEDED, FAILED = "Pending", "Running", "Succeeded", "Failed"
BEST_EFFORT, BURSTABLE, GUARANTEED = "BestEffort", "Burstable", "Guaranteed"
#: The resources the QoS class looks at (upstream's ``supportedQoSComputeResources``).
QOS_RESOURCES = ("cpu", "memory")
SCHEDULING_GATED = "SchedulingGated"
SCHEDULING_GATED_MESSAGE = "Scheduling is blocked due to non-empty scheduling gates"
NODE_UNREACHABLE_REASON = "NodeLost"


def _spec(obj: Object) -> Object:
    return obj.get("spec") or {}


def _status(obj: Object) -> Object:
    return obj.get("status") or {}


# --- QoS class (``pkg/apis/core/helper/qos``) -----------------------------------------------


def _amount(value: Any) -> Decimal:
    try:
        return parse_quantity(str(value)).amount
    except QuantityError:
        return Decimal(0)


def _positive(resources: Mapping[str, Any] | None) -> dict[str, Decimal]:
    """The QoS resources of a requests or limits map whose amount is above zero."""
    out: dict[str, Decimal] = {}
    for name, value in (resources or {}).items():
        if name in QOS_RESOURCES and (amount := _amount(value)) > 0:
            out[name] = amount
    return out


def pod_qos_class(spec: Object) -> str:
    """``GetPodQOS``: BestEffort without any cpu/memory request or limit; Guaranteed when
    every container limits both and requests equal limits; otherwise Burstable.

    Pod-level ``resources`` (gate PodLevelResources, alpha and off in 1.33) are
    not considered.
    """
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        resources = container.get("resources") or {}
        for name, amount in _positive(resources.get("requests")).items():
            requests[name] = requests.get(name, Decimal(0)) + amount
        container_limits = _positive(resources.get("limits"))
        for name, amount in container_limits.items():
            limits[name] = limits.get(name, Decimal(0)) + amount
        if not all(name in container_limits for name in QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    equal = all(limits.get(name) == amount for name, amount in requests.items())
    if guaranteed and equal and len(requests) == len(limits):
        return GUARANTEED
    return BURSTABLE


# --- strategy ----------------------------------------------------------------------------


def scheduling_gated_condition(obj: Object) -> None:
    """``applySchedulingGatedCondition``: a pod created with scheduling gates says so."""
    if not _spec(obj).get("schedulingGates"):
        return
    conditions = obj["status"].setdefault("conditions", [])
    if any(c.get("type") == "PodScheduled" for c in conditions):
        return
    conditions.append(
        {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": None,
            "reason": SCHEDULING_GATED,
            "message": SCHEDULING_GATED_MESSAGE,
        }
    )


_POD_OPTIONS = dataclasses.replace(pod_validation.DEFAULT_OPTIONS, resource_is_pod=True)

NAME_NOT_DNS_LABEL_WARNING = (
    "metadata.name: this is used in the Pod's hostname, which can result in surprising "
    "behavior; a DNS label is recommended: "
)
STATIC_POD_EPHEMERAL = "static pods do not support ephemeral containers"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def validate_ephemeral_containers_update(new: Object, old: Object) -> list[FieldError]:
    """Part 2 of ``ValidatePodEphemeralContainersUpdate``: existing ephemeral containers
    stay as they are.

    Upstream appends a ``cmp.Diff`` of the change to the "may not be changed"
    message; kapi ends it at the line break before that diff.
    """
    if MIRROR_POD_ANNOTATION in (old.get("metadata", {}).get("annotations") or {}):
        return [forbidden("", STATIC_POD_EPHEMERAL)]  # upstream field.NewPath(""): no path
    path = Path("spec", "ephemeralContainers")
    by_name = {c.get("name"): c for c in _spec(new).get("ephemeralContainers") or []}
    errs: list[FieldError] = []
    for container in _spec(old).get("ephemeralContainers") or []:
        name = container.get("name") or ""
        current = by_name.get(name)
        if current is None:
            detail = f'existing ephemeral containers "{name}" may not be removed\n'
            errs.append(forbidden(path, detail))
        elif current != container:
            errs.append(
                forbidden(path, f'existing ephemeral containers "{name}" may not be changed\n')
            )
    return errs


def validate_pod_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidatePodUpdate``: the spec, and what may not change on a pod."""
    return pod_validation.validate_pod_update(new, old)


def validate_container_state_transition(
    new: list[Object], old: list[Object], path: Path, restart_policy: str
) -> list[FieldError]:
    """``ValidateContainerStateTransition``: a container that may not restart stays
    terminated."""
    if restart_policy == "Always":
        return []
    errs: list[FieldError] = []
    for i, previous in enumerate(old):
        terminated = (previous.get("state") or {}).get("terminated")
        if terminated is None:
            continue
        if (terminated.get("exitCode") or 0) != 0 and restart_policy == "OnFailure":
            continue
        for current in new:
            still = (current.get("state") or {}).get("terminated")
            if current.get("name") == previous.get("name") and still is None:
                detail = "may not be transitioned to non-terminated state"
                errs.append(forbidden(path.index(i).child("state"), detail))
    return errs


def validate_pod_status_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidatePodStatusUpdate``, without the IP address and resource health rules: a
    valid nominated node name, and no terminated container brought back to life."""
    path = Path("status")
    status, old_status = _status(new), _status(old)
    errs: list[FieldError] = []
    nominated = status.get("nominatedNodeName") or ""
    if nominated and nominated != old_status.get("nominatedNodeName"):
        for message in validation.name_is_dns_subdomain(nominated, False):
            errs.append(invalid(path.child("nominatedNodeName"), nominated, message))
    restart_policy = _spec(old).get("restartPolicy") or ""
    for key in ("containerStatuses", "initContainerStatuses"):
        errs += validate_container_state_transition(
            status.get(key) or [], old_status.get(key) or [], path.child(key), restart_policy
        )
    return errs


class PodStrategy(Strategy):
    """Upstream ``podStrategy``, ``podStatusStrategy`` and ``podEphemeralContainersStrategy``."""

    has_generation = True
    has_status = True
    subresource_fields = {
        "status": ("status",),
        "ephemeralcontainers": ("spec", "ephemeralContainers"),
        "binding": (),  # written by BindingCreator only, past the pod strategy
    }
    spec_subresources = frozenset({"ephemeralcontainers"})

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"phase": PENDING, "qosClass": pod_qos_class(_spec(obj))}
        scheduling_gated_condition(obj)

    def validate(self, obj: Object) -> list[FieldError]:
        return pod_validation.validate_pod_create(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_pod_update(new, old)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        if subresource == "ephemeralcontainers":
            # ``validatePodMetadataAndSpec`` first: new ephemeral containers must be valid too.
            spec_errs = pod_validation.validate_pod_spec(
                _spec(new), Path("spec"), opts=_POD_OPTIONS
            )
            return spec_errs + validate_ephemeral_containers_update(new, old)
        if subresource == "status":
            # The QoS class is fixed at creation: old kubelets dropped it, so it is backfilled.
            status = new.setdefault("status", {})
            if not status.get("qosClass") and _status(old).get("qosClass"):
                status["qosClass"] = _status(old)["qosClass"]
            return validate_pod_status_update(new, old)
        return []

    def warnings_on_create(self, obj: Object) -> list[str]:
        messages = validation.is_dns1123_label(obj.get("metadata", {}).get("name") or "")
        if not messages:
            return []
        return [NAME_NOT_DNS_LABEL_WARNING + "[" + " ".join(messages) + "]"]


# --- field selectors (``ToSelectableFields``) ------------------------------------------------

FIELD_LABELS = (
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)


def selectable_fields(pod: Object) -> dict[str, str]:
    """The values pod field selectors match; ``spec.hostNetwork`` is ``true``/``false``."""
    metadata, spec, status = pod.get("metadata", {}), _spec(pod), _status(pod)
    pod_ips = status.get("podIPs") or []
    return {
        "metadata.name": metadata.get("name") or "",
        "metadata.namespace": metadata.get("namespace") or "",
        "spec.nodeName": spec.get("nodeName") or "",
        "spec.restartPolicy": spec.get("restartPolicy") or "",
        "spec.schedulerName": spec.get("schedulerName") or "",
        "spec.serviceAccountName": spec.get("serviceAccountName") or "",
        "spec.hostNetwork": "true" if spec.get("hostNetwork") else "false",
        "status.phase": status.get("phase") or "",
        "status.podIP": (pod_ips[0].get("ip") or "") if pod_ips else "",
        "status.nominatedNodeName": status.get("nominatedNodeName") or "",
    }


# --- table (``printPod``) -------------------------------------------------------------------


def _restartable(container: Object | None) -> bool:
    """A sidecar: an init container with ``restartPolicy: Always``."""
    return bool(container) and (container or {}).get("restartPolicy") == "Always"


def _parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _later(current: datetime | None, status: Object) -> datetime | None:
    terminated = (status.get("lastState") or {}).get("terminated")
    finished = _parse_time((terminated or {}).get("finishedAt"))
    if finished is not None and (current is None or current < finished):
        return finished
    return current


def _condition_true(status: Object, condition_type: str) -> bool:
    return any(
        c.get("type") == condition_type and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def _terminated_reason(terminated: Object, prefix: str) -> str:
    if terminated.get("reason"):
        return prefix + terminated["reason"]
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{terminated.get('exitCode') or 0}"


def pod_summary(pod: Object) -> tuple[str, str, str]:
    """printPod's READY, STATUS and RESTARTS cells."""
    spec, status = _spec(pod), _status(pod)
    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == SCHEDULING_GATED:
            reason = SCHEDULING_GATED
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(spec.get("containers") or []) + sum(
        1 for c in init_specs.values() if _restartable(c)
    )
    ready = restarts = sidecar_restarts = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None
    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for i, container in enumerate(init_statuses):
        restarts += container.get("restartCount") or 0
        last_restart = _later(last_restart, container)
        sidecar = _restartable(init_specs.get(container.get("name")))
        if sidecar:
            sidecar_restarts += container.get("restartCount") or 0
            last_sidecar_restart = _later(last_sidecar_restart, container)
        state = container.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated is not None and (terminated.get("exitCode") or 0) == 0:
            continue
        if sidecar and container.get("started"):
            ready += 1 if container.get("ready") else 0
            continue
        if terminated is not None:
            reason = _terminated_reason(terminated, "Init:")
        elif (
            waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing"
        ):
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break
    if not initializing or _condition_true(status, "Initialized"):
        restarts, last_restart = sidecar_restarts, last_sidecar_restart
        running = False
        for container in reversed(status.get("containerStatuses") or []):
            restarts += container.get("restartCount") or 0
            last_restart = _later(last_restart, container)
            state = container.get("state") or {}
            terminated, waiting = state.get("terminated"), state.get("waiting")
            if waiting is not None and waiting.get("reason"):
                reason = waiting["reason"]
            elif terminated is not None:
                reason = _terminated_reason(terminated, "")
            elif container.get("ready") and state.get("running") is not None:
                running = True
                ready += 1
        if reason == "Completed" and running:
            reason = "Running" if _condition_true(status, "Ready") else "NotReady"
    deleting = bool(pod.get("metadata", {}).get("deletionTimestamp"))
    if deleting and status.get("reason") == NODE_UNREACHABLE_REASON:
        reason = "Unknown"
    elif deleting and phase not in (SUCCEEDED, FAILED):
        reason = "Terminating"
    restarts_cell = str(restarts)
    if restarts and last_restart is not None:
        restarts_cell = f"{restarts} ({since(last_restart.strftime('%Y-%m-%dT%H:%M:%SZ'))} ago)"
    return f"{ready}/{total}", reason, restarts_cell


def _or_none(value: str | None) -> str:
    return value or "<none>"


def readiness_gates_cell(pod: Object) -> str:
    gates = _spec(pod).get("readinessGates") or []
    if not gates:
        return "<none>"
    conditions = _status(pod).get("conditions") or []
    true = 0
    for gate in gates:
        for condition in conditions:
            if condition.get("type") == gate.get("conditionType"):
                true += condition.get("status") == "True"
                break
    return f"{true}/{len(gates)}"


def _pod_ip(pod: Object) -> str:
    ips = _status(pod).get("podIPs") or []
    return _or_none(ips[0].get("ip") if ips else None)


POD_COLUMNS = (
    NAME,
    Column(
        "Ready",
        "string",
        "How many of the pod's containers are ready, out of how many.",
        lambda o: pod_summary(o)[0],
    ),
    Column(
        "Status",
        "string",
        "The pod's state, summed up from its phase and its containers' states.",
        lambda o: pod_summary(o)[1],
    ),
    Column(
        "Restarts",
        "string",
        "How often the pod's containers restarted, and how long ago the last one did.",
        lambda o: pod_summary(o)[2],
    ),
    AGE,
    Column("IP", "string", "The pod's first IP address.", _pod_ip, priority=1),
    Column(
        "Node",
        "string",
        "The node the pod is bound to.",
        lambda o: _or_none(_spec(o).get("nodeName")),
        priority=1,
    ),
    Column(
        "Nominated Node",
        "string",
        "The node the scheduler expects to run the pod on once room is made.",
        lambda o: _or_none(_status(o).get("nominatedNodeName")),
        priority=1,
    ),
    Column(
        "Readiness Gates",
        "string",
        "How many of the pod's readiness gates are met, out of how many.",
        readiness_gates_cell,
        priority=1,
    ),
)

# --- binding (``BindingREST``) --------------------------------------------------------------


def validate_binding(binding: Object) -> list[FieldError]:
    """``ValidatePodBinding``."""
    target = binding.get("target") or {}
    errs: list[FieldError] = []
    kind = target.get("kind") or ""
    if kind and kind != "Node":
        errs.append(not_supported(Path("target", "kind"), kind, ["Node", "<empty>"]))
    if not target.get("name"):
        errs.append(required(Path("target", "name"), ""))
    return errs


def _aggregate(errs: list[FieldError]) -> str:
    """``ErrorList.ToAggregate().Error()``: one message, or several in brackets."""
    messages = [e.error_message() for e in errs]
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def set_condition(status: Object, condition: Object) -> None:
    """``UpdatePodCondition``: the condition replaces the one of its type (reason and
    message included), or is added; its transition time is now unless the status stays."""
    replacement = {"lastProbeTime": None, **condition}
    replacement["lastTransitionTime"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    conditions = status.setdefault("conditions", [])
    for i, existing in enumerate(conditions):
        if existing.get("type") == condition["type"]:
            if existing.get("status") == condition.get("status"):
                replacement["lastTransitionTime"] = existing.get("lastTransitionTime")
            conditions[i] = replacement
            return
    conditions.append(replacement)


def bind(pod: Object, binding: Object) -> Object:
    """``setPodNodeAndMetadata``: the pod bound to the binding's node, or a ``ValueError``
    with upstream's reason."""
    metadata, spec = pod["metadata"], pod.setdefault("spec", {})
    name = metadata.get("name")
    if metadata.get("deletionTimestamp"):
        raise ValueError(f"pod {name} is being deleted, cannot be assigned to a host")
    if spec.get("nodeName"):
        raise ValueError(f'pod {name} is already assigned to node "{spec["nodeName"]}"')
    if spec.get("schedulingGates"):
        raise ValueError(f"pod {name} has non-empty .spec.schedulingGates")
    spec["nodeName"] = (binding.get("target") or {}).get("name") or ""
    annotations = (binding.get("metadata") or {}).get("annotations") or {}
    if annotations:
        metadata["annotations"] = {**(metadata.get("annotations") or {}), **annotations}
    set_condition(pod.setdefault("status", {}), {"type": "PodScheduled", "status": "True"})
    return pod


SUCCESS: Object = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}


class BindingCreator:
    """``pods/binding``: POST a ``Binding`` naming a node."""

    kind = ("", "", "Binding")

    def body_schema(self, api_version: str, kind: str) -> Struct | None:
        return core_v1.Binding if (api_version, kind) == ("v1", "Binding") else None

    async def create(
        self, stores: StoreLookup, namespace: str | None, name: str, body: Object, *, dry_run: bool
    ) -> Object:
        metadata = body.get("metadata") or {}
        if metadata.get("name") != name:
            raise errors.bad_request("name in URL does not match name in Binding object")
        if errs := validate_binding(body):
            raise errors.untyped(_aggregate(errs))  # upstream returns the aggregate as is: a 500
        uid, rv = metadata.get("uid"), metadata.get("resourceVersion")
        store = stores("", "pods")

        async def assign(pod: Object) -> Object:
            if uid and uid != pod["metadata"].get("uid"):
                raise _binding_conflict(
                    name,
                    f"Precondition failed: UID in precondition: {uid}, "
                    f"UID in object meta: {pod['metadata'].get('uid', '')}",
                )
            if rv and rv != pod["metadata"].get("resourceVersion"):
                raise _binding_conflict(
                    name,
                    f"Precondition failed: ResourceVersion in precondition: {rv}, "
                    f"ResourceVersion in object meta: {pod['metadata'].get('resourceVersion')}",
                )
            try:
                return bind(pod, body)
            except ValueError as exc:
                raise _binding_conflict(name, str(exc)) from None

        await store.update(namespace, name, assign, subresource="binding", dry_run=dry_run)
        return dict(SUCCESS)


def _binding_conflict(name: str, why: str) -> errors.StatusError:
    return errors.conflict("pods/binding", "", name, why)


# --- eviction (``EvictionREST``) ------------------------------------------------------------


_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
#: The options of the deletion an eviction makes (``metav1.DeleteOptions``, whose
#: declaration lives with the endpoints; the eviction body needs its fields only).
DeleteOptions = Struct(
    f"{_META}.DeleteOptions",
    (
        Field("apiVersion", STRING, "The options' API version."),
        Field("dryRun", List(STRING), "All: act as if, and store nothing."),
        Field("gracePeriodSeconds", INT64, "Seconds before the object is deleted."),
        Field("kind", STRING, "DeleteOptions."),
        Field("orphanDependents", BOOLEAN, "Deprecated: orphan the dependents."),
        Field(
            "preconditions",
            Struct(
                f"{_META}.Preconditions",
                (
                    Field("resourceVersion", STRING, "The resourceVersion the object must have."),
                    Field("uid", STRING, "The UID the object must have."),
                ),
                "What the object must be for the deletion to go ahead.",
            ),
            "What the object must be for the deletion to go ahead.",
        ),
        Field("propagationPolicy", STRING, "Whether and how dependents are collected."),
    ),
    "Options of a deletion.",
)


def _eviction(version: str) -> tuple[Struct, str]:
    """policy ``Eviction`` in ``version`` (v1 and v1beta1 have the same fields and numbers),
    and its protobuf message, registered for the kind."""
    struct = kind_struct(
        f"io.k8s.api.policy.{version}.Eviction",
        (("policy", version, "Eviction"),),
        (Field("deleteOptions", DeleteOptions, "How the evicted pod is deleted."),),
        "Asks to evict a pod within its disruption budget; POSTed to the pod's eviction "
        "subresource.",
    )
    message = pb.message(
        f"k8s.io.api.policy.{version}.Eviction",
        pb.omitempty(1, "metadata", pb.OBJECT_META),
        pb.pointer(2, "deleteOptions", pb.DELETE_OPTIONS),
    )
    pb.KINDS[f"policy/{version}", "Eviction"] = message  # no list kind: none exists
    return struct, message


EvictionV1, EVICTION_V1 = _eviction("v1")
EvictionV1beta1, EVICTION_V1BETA1 = _eviction("v1beta1")

TOO_MANY_REQUESTS_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_PDBS_MESSAGE = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
    "support."
)
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
MAX_DISRUPTED_PODS = 2000


def too_many_requests(pdb_name: str, cause: str, retry_after: int) -> errors.StatusError:
    """``NewTooManyRequests`` with the DisruptionBudget cause upstream adds."""
    details: dict[str, Any] = {"causes": [{"reason": DISRUPTION_BUDGET_CAUSE, "message": cause}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return errors.StatusError(429, "TooManyRequests", TOO_MANY_REQUESTS_MESSAGE, details)


def still_processing(pdb_name: str) -> errors.StatusError:
    return too_many_requests(
        pdb_name, f"The disruption budget {pdb_name} is still being processed by the server.", 10
    )


def can_ignore_pdb(pod: Object) -> bool:
    """Pods that finished, never started (Pending) or are being deleted evict freely."""
    phase = _status(pod).get("phase")
    return phase in (SUCCEEDED, FAILED, PENDING) or bool(
        pod.get("metadata", {}).get("deletionTimestamp")
    )


def pod_ready(pod: Object) -> bool:
    return _condition_true(_status(pod), "Ready")


def matching_pdbs(pod: Object, pdbs: list[Object]) -> list[Object]:
    """The budgets whose selector selects the pod (an invalid selector selects nothing)."""
    labels = pod.get("metadata", {}).get("labels") or {}
    out = []
    for pdb in pdbs:
        try:
            selector = label_selector_as_selector(_spec(pdb).get("selector"))
        except SelectorParseError:
            continue
        if selector.matches(labels):
            out.append(pdb)
    return out


def update_disruption_allowed_condition(pdb: Object) -> None:
    """``UpdateDisruptionAllowedCondition`` of component-helpers."""
    status = pdb.setdefault("status", {})
    allowed = (status.get("disruptionsAllowed") or 0) > 0
    condition = {
        "type": "DisruptionAllowed",
        "status": "True" if allowed else "False",
        "reason": "SufficientPods" if allowed else "InsufficientPods",
        "message": "",
        "observedGeneration": status.get("observedGeneration") or 0,
    }
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    conditions = status.setdefault("conditions", [])
    for i, existing in enumerate(conditions):
        if existing.get("type") == "DisruptionAllowed":
            time = existing.get("lastTransitionTime") or now
            if existing.get("status") != condition["status"]:
                time = now
            conditions[i] = {**condition, "lastTransitionTime": time}
            return
    conditions.append({**condition, "lastTransitionTime": now})


def check_and_decrement(pdb: Object, pod_name: str, *, dry_run: bool) -> Object:
    """``checkAndDecrement``: the budget with one disruption used up and the pod recorded
    as disrupted, or the error that refuses the eviction."""
    name = pdb["metadata"]["name"]
    status = pdb.get("status") or {}
    if (status.get("observedGeneration") or 0) < (pdb["metadata"].get("generation") or 0):
        raise still_processing(name)
    allowed = status.get("disruptionsAllowed") or 0
    if allowed < 0:
        raise errors.forbidden(
            "poddisruptionbudget", "policy", name, "pdb disruptions allowed is negative"
        )
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
        raise errors.forbidden(
            "poddisruptionbudget",
            "policy",
            name,
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        )
    if allowed == 0:
        raise too_many_requests(
            name,
            f"The disruption budget {name} needs {status.get('desiredHealthy') or 0} healthy "
            f"pods and has {status.get('currentHealthy') or 0} currently",
            0,
        )
    out = deep_copy(pdb)
    out_status = out.setdefault("status", {})
    out_status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        update_disruption_allowed_condition(out)
    if not dry_run:
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        out_status.setdefault("disruptedPods", {})[pod_name] = now
    return out


class EvictionCreator:
    """``pods/eviction``: POST a ``policy/v1`` (or ``v1beta1``) ``Eviction``."""

    kind = ("policy", "v1", "Eviction")

    def body_schema(self, api_version: str, kind: str) -> Struct | None:
        if kind != "Eviction":
            return None
        return {"policy/v1": EvictionV1, "policy/v1beta1": EvictionV1beta1}.get(api_version)

    async def create(
        self, stores: StoreLookup, namespace: str | None, name: str, body: Object, *, dry_run: bool
    ) -> Object:
        if (body.get("metadata") or {}).get("name") != name:
            raise errors.bad_request("name in URL does not match name in Eviction object")
        options = body.get("deleteOptions") or {}
        in_body = list(options.get("dryRun") or [])
        if in_body and dry_run and in_body != ["All"]:
            raise errors.untyped(
                "Non-matching dry-run options in request and content: [All] and "
                f"[{' '.join(in_body)}]"
            )
        dry_run = dry_run or bool(in_body)
        pods = stores("", "pods")
        pod = await pods.get(namespace, name)
        if not can_ignore_pdb(pod):
            pdb_store = stores("policy", "poddisruptionbudgets")
            listed = await pdb_store.list(namespace, EVERYTHING)
            found = matching_pdbs(pod, listed.items)
            if len(found) > 1:
                return {
                    **SUCCESS,
                    "status": "Failure",
                    "message": MULTIPLE_PDBS_MESSAGE,
                    "code": 500,
                }
            if found:
                await _use_budget(pdb_store, pod, found[0], dry_run=dry_run)
        await _delete(pods, pod, options, dry_run=dry_run)
        return dict(SUCCESS)


async def _use_budget(pdb_store: Any, pod: Object, pdb: Object, *, dry_run: bool) -> None:
    status = pdb.get("status") or {}
    if not pod_ready(pod):
        if _spec(pdb).get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
            return
        current, desired = status.get("currentHealthy") or 0, status.get("desiredHealthy") or 0
        if current >= desired > 0:
            return
    pod_name = pod["metadata"]["name"]

    async def decrement(current: Object) -> Object:
        return check_and_decrement(current, pod_name, dry_run=dry_run)

    # The check runs on the budget as stored, retried on conflicts (``RetryOnConflict``).
    await pdb_store.update(
        pdb["metadata"].get("namespace"),
        pdb["metadata"]["name"],
        decrement,
        subresource="status",
        dry_run=dry_run,
    )


DISRUPTION_TARGET: Object = {
    "type": "DisruptionTarget",
    "status": "True",
    "reason": "EvictionByEvictionAPI",
    "message": "Eviction API: evicting",
}


async def _delete(pods: Any, pod: Object, options: Object, *, dry_run: bool) -> None:
    """``addConditionAndDeletePod``: mark the pod as a disruption target, then delete it
    (a precondition on the resourceVersion then names the marked pod's)."""
    pre = options.get("preconditions") or {}
    uid, rv = pre.get("uid"), pre.get("resourceVersion")
    metadata = pod["metadata"]
    namespace, name = metadata.get("namespace"), metadata["name"]
    if not dry_run:

        async def mark(latest: Object) -> Object:
            current = latest["metadata"]
            if uid and uid != current.get("uid"):
                raise errors.conflict(
                    "Pod",
                    "",
                    name,
                    f"the UID in the precondition ({uid}) does not match the UID in record "
                    f"({current.get('uid')}). The object might have been deleted and then "
                    "recreated",
                )
            if rv and rv != current.get("resourceVersion"):
                raise errors.conflict(
                    "Pod",
                    "",
                    name,
                    f"the ResourceVersion in the precondition ({rv}) does not match the "
                    f"ResourceVersion in record ({current.get('resourceVersion')}). The object "
                    "might have been modified",
                )
            set_condition(latest.setdefault("status", {}), dict(DISRUPTION_TARGET))
            del current["resourceVersion"]  # written on the latest pod, retried on conflicts
            return latest

        marked = await pods.update(namespace, name, mark, subresource="status")
        if rv:
            rv = marked["metadata"]["resourceVersion"]
    preconditions = Preconditions(uid, rv) if pre else None
    await pods.delete(namespace, name, preconditions=preconditions, dry_run=dry_run)


# --- schema and resource ------------------------------------------------------------------


def resources() -> list[Resource]:
    """The core/v1 Pod resource."""
    return [
        Resource(
            group="",
            kind="Pod",
            plural="pods",
            singular="pod",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1", core_v1.Pod, Lifecycle(introduced=Version(1, 0)), default_pod
                )
            },
            hub_version="v1",
            storage_version="v1",
            strategy=PodStrategy(),
            short_names=("po",),
            categories=("all",),
            subresources=("binding", "ephemeralcontainers", "eviction", "status"),
            creators={"binding": BindingCreator(), "eviction": EvictionCreator()},
            field_labels=FIELD_LABELS,
            selectable_fields=selectable_fields,
            columns=POD_COLUMNS,
        )
    ]
