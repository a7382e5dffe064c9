"""core/v1 ``Node``: defaults, validation, strategy, ``status``, table and field selectors.

Follows ``SetDefaults_NodeStatus`` (allocatable defaults to capacity),
``ValidateNode``/``ValidateNodeUpdate`` of ``pkg/apis/core/validation`` and
``pkg/registry/core/node``: a Node may be created with its status (kubelets
register that way), updates of the main resource keep the stored status and
``/status`` keeps the stored spec.  kapi runs no kubelet and no node
lifecycle controller: a Node is a record, and nothing marks it Ready or NotReady.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    ErrorType,
    FieldError,
    GoSyntax,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kapi.apimachinery.gotext import go_quote
from kapi.apimachinery.unstructured import Object
from kapi.apis.core_v1 import core_resource
from kapi.apis.core_v1_resource_names import go_string_slice, validate_quantity_value
from kapi.apis.generated.core_v1 import Node
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.scheme import Resource

#: In the order upstream's message lists them (not sorted).
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TAINT_NOT_UNIQUE = "taints must be unique by key and effect pair"
POD_CIDR_IMMUTABLE = 'node updates may not change podCIDR except from "" to valid'
PROVIDER_ID_IMMUTABLE = 'node updates may not change providerID except from "" to valid'
ONE_CIDR_PER_FAMILY = "may specify no more than one CIDR for each IP family"
INVALID_CIDR = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
CONFIG_SOURCE_WARNING = "spec.configSource: the feature is removed"
EXTERNAL_ID_WARNING = "spec.externalID: this field is deprecated, and is unused by Kubernetes"
ROLE_LABEL_PREFIX = "node-role.kubernetes.io/"
ROLE_LABEL = "kubernetes.io/role"


def _spec(obj: Object) -> Object:
    return obj.get("spec") or {}


def _status(obj: Object) -> Object:
    return obj.get("status") or {}


# --- defaulting -----------------------------------------------------------------------------


def default_node(obj: Object) -> None:
    """``SetDefaults_NodeStatus``: without an allocatable, a node can use all its capacity."""
    status = obj.get("status")
    if isinstance(status, dict) and status.get("allocatable") is None:
        capacity = status.get("capacity")
        if capacity is not None:
            status["allocatable"] = dict(capacity)


# --- validation -----------------------------------------------------------------------------


def _go_taint(taint: Object) -> GoSyntax:
    """``%#v`` of a ``core.Taint`` (a set ``timeAdded`` prints as a pointer upstream)."""
    added = "(*v1.Time)(nil)" if not taint.get("timeAdded") else "(*v1.Time)(0xc000000000)"
    return GoSyntax(
        f"core.Taint{{Key:{go_quote(taint.get('key') or '')}, "
        f"Value:{go_quote(taint.get('value') or '')}, "
        f"Effect:{go_quote(taint.get('effect') or '')}, TimeAdded:{added}}}"
    )


def validate_taints(taints: list[Object], path: Path) -> list[FieldError]:
    """``validateNodeTaints``: label-like keys and values, known effects, unique key+effect."""
    errs: list[FieldError] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        idx = path.index(i)
        key, value, effect = (str(taint.get(k) or "") for k in ("key", "value", "effect"))
        errs += validation.validate_label_name(key, idx.child("key"))
        messages = validation.is_valid_label_value(value)
        if messages:
            errs.append(invalid(idx.child("value"), value, ";".join(messages)))
        if not effect:
            errs.append(required(idx.child("effect")))
        elif effect not in TAINT_EFFECTS:
            errs.append(not_supported(idx.child("effect"), effect, TAINT_EFFECTS))
        if (effect, key) in seen:
            error = duplicate(idx, _go_taint(taint))
            error.detail = TAINT_NOT_UNIQUE
            errs.append(error)
            continue
        seen.add((effect, key))
    return errs


def validate_node_resources(obj: Object) -> list[FieldError]:
    """``ValidateNodeResources``: capacity and allocatable quantities (paths use ``.name``)."""
    errs: list[FieldError] = []
    status = _status(obj)
    for field in ("capacity", "allocatable"):
        for name, value in sorted((status.get(field) or {}).items()):
            errs += validate_quantity_value(name, value, Path("status", field, name))
    return errs


def _cidr_family(value: str) -> int | None:
    try:
        return ipaddress.ip_network(value, strict=False).version
    except ValueError:
        return None


def validate_pod_cidrs(cidrs: list[str]) -> list[FieldError]:
    """The ``spec.podCIDRs`` part of ``ValidateNode``."""
    path = Path("spec", "podCIDRs")
    errs: list[FieldError] = []
    families = [_cidr_family(c) for c in cidrs]
    for i, (value, family) in enumerate(zip(cidrs, families, strict=True)):
        if family is None:
            errs.append(invalid(path.index(i), value, INVALID_CIDR))
    if len(cidrs) > 1:
        bad = next((c for c, f in zip(cidrs, families, strict=True) if f is None), None)
        if bad is not None:
            errs.append(
                FieldError(
                    ErrorType.INTERNAL,
                    str(path),
                    "",
                    "invalid PodCIDRs. failed to check with dual stack with error:"
                    f"failed to parse cidr value:{go_quote(bad)} with error:"
                    f"invalid CIDR address: {bad}",
                )
            )
        dual = len(cidrs) == 2 and None not in families and families[0] != families[1]
        if not dual:
            errs.append(invalid(path, go_string_slice("string", cidrs), ONE_CIDR_PER_FAMILY))
        seen: set[str] = set()
        for i, value in enumerate(cidrs):
            if value in seen:
                errs.append(duplicate(path.index(i), value))
            seen.add(value)
    return errs


def validate_node(obj: Object) -> list[FieldError]:
    """``ValidateNode`` (the metadata part is the store's)."""
    spec = _spec(obj)
    errs: list[FieldError] = []
    taints = spec.get("taints") or []
    if taints:
        # Upstream reports taints under metadata, not spec.
        errs += validate_taints(taints, Path("metadata", "taints"))
    errs += validate_node_resources(obj)
    cidrs = list(spec.get("podCIDRs") or [])
    if cidrs:
        errs += validate_pod_cidrs(cidrs)
    return errs


def _go_address(address: Object) -> GoSyntax:
    return GoSyntax(
        f"core.NodeAddress{{Type:{go_quote(address.get('type') or '')}, "
        f"Address:{go_quote(address.get('address') or '')}}}"
    )


def validate_node_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateNodeUpdate``: podCIDRs and providerID set once; unique addresses."""
    errs = validate_node_resources(new)
    seen: set[tuple[str, str]] = set()
    for i, address in enumerate(_status(new).get("addresses") or []):
        key = (address.get("type") or "", address.get("address") or "")
        if key in seen:
            errs.append(duplicate(Path("status", "addresses").index(i), _go_address(address)))
        seen.add(key)
    spec, old_spec = _spec(new), _spec(old)
    old_cidrs = list(old_spec.get("podCIDRs") or [])
    cidrs = list(spec.get("podCIDRs") or [])
    if old_cidrs:
        path = Path("spec", "podCIDRs")
        if len(old_cidrs) != len(cidrs):
            errs.append(forbidden(path, POD_CIDR_IMMUTABLE))
        else:
            errs += [
                forbidden(path, POD_CIDR_IMMUTABLE)
                for before, after in zip(old_cidrs, cidrs, strict=True)
                if before != after
            ]
    old_provider = old_spec.get("providerID") or ""
    if old_provider and old_provider != (spec.get("providerID") or ""):
        errs.append(forbidden(Path("spec", "providerID"), PROVIDER_ID_IMMUTABLE))
    taints = spec.get("taints") or []
    if taints:
        errs += validate_taints(taints, Path("metadata", "taints"))
    if (spec.get("externalID") or "") != (old_spec.get("externalID") or ""):
        errs.append(forbidden(Path("spec", "externalID"), "may not be updated"))
    return errs


def _deprecated_field_warnings(obj: Object) -> list[str]:
    spec = _spec(obj)
    warnings = []
    if spec.get("configSource") is not None:
        warnings.append(CONFIG_SOURCE_WARNING)
    if spec.get("externalID"):
        warnings.append(EXTERNAL_ID_WARNING)
    return warnings


def normalize_pod_cidrs(obj: Object) -> None:
    """The internal version holds one list: ``podCIDR`` is ``podCIDRs[0]`` (conversion)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    cidrs = spec.get("podCIDRs") or []
    single = spec.get("podCIDR") or ""
    if single and not cidrs:
        spec["podCIDRs"] = [single]
    elif cidrs and single != cidrs[0]:
        spec["podCIDR"] = cidrs[0]


# --- strategy -------------------------------------------------------------------------------


class NodeStrategy(Strategy):
    """Upstream ``nodeStrategy`` and ``nodeStatusStrategy``."""

    has_status = True

    def prepare_for_create(self, obj: Object) -> None:
        # Nodes may be created with their status; only the removed dynamic kubelet
        # configuration is dropped.
        obj.setdefault("spec", {}).pop("configSource", None)
        if isinstance(obj.get("status"), dict):
            obj["status"].pop("config", None)
        normalize_pod_cidrs(obj)

    def prepare_for_update(self, new: Object, old: Object) -> None:
        super().prepare_for_update(new, old)
        if _spec(old).get("configSource") is None:
            new.setdefault("spec", {}).pop("configSource", None)
        normalize_pod_cidrs(new)

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_node(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_node(new) + validate_node_update(new, old)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return validate_node_update(new, old)

    def warnings_on_create(self, obj: Object) -> list[str]:
        return _deprecated_field_warnings(obj)

    def warnings_on_update(self, new: Object, old: Object) -> list[str]:
        return _deprecated_field_warnings(new)


# --- field selectors (``NodeToSelectableFields``) ------------------------------------------------

FIELD_LABELS = ("spec.unschedulable",)


def selectable_fields(node: Object) -> dict[str, str]:
    """``spec.unschedulable`` is ``true`` or ``false`` (Go's ``fmt.Sprint`` of a bool)."""
    return {
        "metadata.name": (node.get("metadata") or {}).get("name") or "",
        "spec.unschedulable": "true" if _spec(node).get("unschedulable") else "false",
    }


# --- table (``printNode``) ------------------------------------------------------------------------


def status_cell(node: Object) -> str:
    """``Ready``/``NotReady`` from the Ready condition (``Unknown`` without one), then
    ``SchedulingDisabled`` for a cordoned node."""
    states = []
    for condition in _status(node).get("conditions") or []:
        if condition.get("type") == "Ready":
            states = ["Ready" if condition.get("status") == "True" else "NotReady"]
    states = states or ["Unknown"]
    if _spec(node).get("unschedulable"):
        states.append("SchedulingDisabled")
    return ",".join(states)


def roles_cell(node: Object) -> str:
    """``findNodeRoles``: ``node-role.kubernetes.io/<role>`` keys and ``kubernetes.io/role``."""
    roles: set[str] = set()
    for key, value in ((node.get("metadata") or {}).get("labels") or {}).items():
        if key.startswith(ROLE_LABEL_PREFIX):
            role = key[len(ROLE_LABEL_PREFIX) :]
            if role:
                roles.add(role)
        elif key == ROLE_LABEL and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def _address(kind: str) -> Any:
    def cell(node: Object) -> str:
        for address in _status(node).get("addresses") or []:
            if address.get("type") == kind:
                return str(address.get("address") or "")
        return "<none>"

    return cell


def _info(name: str) -> Any:
    return lambda node: (_status(node).get("nodeInfo") or {}).get(name) or ""


def _info_or_unknown(name: str) -> Any:
    return lambda node: (_status(node).get("nodeInfo") or {}).get(name) or "<unknown>"


COLUMNS = (
    NAME,
    Column(
        "Status", "string", "Whether the node is ready, and whether it is cordoned.", status_cell
    ),
    Column("Roles", "string", "The roles the node's labels give it.", roles_cell),
    AGE,
    Column("Version", "string", "The kubelet version the node reports.", _info("kubeletVersion")),
    Column(
        "Internal-IP",
        "string",
        "The node's first internal address.",
        _address("InternalIP"),
        priority=1,
    ),
    Column(
        "External-IP",
        "string",
        "The node's first external address.",
        _address("ExternalIP"),
        priority=1,
    ),
    Column(
        "OS-Image",
        "string",
        "The operating system image the node reports.",
        _info_or_unknown("osImage"),
        priority=1,
    ),
    Column(
        "Kernel-Version",
        "string",
        "The kernel version the node reports.",
        _info_or_unknown("kernelVersion"),
        priority=1,
    ),
    Column(
        "Container-Runtime",
        "string",
        "The container runtime and version the node reports.",
        _info_or_unknown("containerRuntimeVersion"),
        priority=1,
    ),
)


def resources() -> list[Resource]:
    """The core/v1 Node resource (cluster-scoped)."""
    return [
        core_resource(
            "Node",
            "nodes",
            Node,
            NodeStrategy(),
            default_node,
            namespaced=False,
            short_names=("no",),
            subresources=("status",),
            storage_resource="minions",  # upstream's etcd key, from the API's earliest days
            field_labels=FIELD_LABELS,
            selectable_fields=selectable_fields,
            columns=COLUMNS,
        )
    ]
