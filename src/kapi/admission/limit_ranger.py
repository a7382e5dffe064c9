"""The LimitRanger admission plugin for pods (upstream's ``plugin/pkg/admission/limitranger``).

Mutating: on pod creation, every Container item of the namespace's
LimitRanges gives the pod's containers and init containers the default limits
and requests they lack, and the pod records what was set in its
``kubernetes.io/limit-ranger`` annotation.  Validating: a pod whose containers
(Container items) or whose total (Pod items) is outside an item's min, max or
max limit/request ratio is refused, 403 Forbidden with upstream's messages.
PersistentVolumeClaims are not checked (upstream checks their storage).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from decimal import ROUND_CEILING, Decimal

from kapi.admission.interface import Attributes, Operation
from kapi.apimachinery import errors
from kapi.apimachinery.quantity import Quantity, QuantityError, unmarshal_json
from kapi.apimachinery.unstructured import Object

#: The annotation upstream's plugin writes on the pods it changed.
ANNOTATION = "kubernetes.io/limit-ranger"

#: The LimitRanges of a namespace.
LimitRangeLister = Callable[[str], Awaitable[list[Object]]]


def container_defaults(limit_ranges: list[Object]) -> tuple[Object, Object]:
    """``defaultContainerResourceRequirements``: (limits, requests) from Container items."""
    limits: Object = {}
    requests: Object = {}
    for limit_range in limit_ranges:
        for item in (limit_range.get("spec") or {}).get("limits") or []:
            if item.get("type") == "Container":
                requests.update(item.get("defaultRequest") or {})
                limits.update(item.get("default") or {})
    return limits, requests


def _merge(container: Object, limits: Object, requests: Object, what: str) -> list[str]:
    """``mergeContainerResources``: fill in what the container lacks; say what was set."""
    resources = container.setdefault("resources", {})
    own_limits = resources.setdefault("limits", {})
    own_requests = resources.setdefault("requests", {})
    set_limits = sorted(k for k in limits if k not in own_limits)
    set_requests = sorted(k for k in requests if k not in own_requests)
    for name in set_limits:
        own_limits[name] = limits[name]
    for name in set_requests:
        own_requests[name] = requests[name]
    for key in ("limits", "requests"):
        if not resources[key]:
            del resources[key]
    notes = []
    name = container.get("name") or ""
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {what} {name}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {what} {name}")
    return notes


def default_pod_resources(pod: Object, limit_ranges: list[Object]) -> None:
    """``mergePodResourceRequirements``: containers, then init containers."""
    limits, requests = container_defaults(limit_ranges)
    spec = pod.get("spec") or {}
    notes: list[str] = []
    for container in spec.get("containers") or []:
        notes += _merge(container, limits, requests, "container")
    for container in spec.get("initContainers") or []:
        notes += _merge(container, limits, requests, "init container")
    if notes:
        annotations = pod.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


# --- the validating half ------------------------------------------------------------------------

_MAX_MILLI = (1 << 63) // 1000  # resource.MaxMilliValue


def _quantity(value: object) -> Quantity | None:
    try:
        return unmarshal_json(value)
    except QuantityError:
        return None


def _whole(amount: Decimal) -> int:
    return int(amount.to_integral_value(rounding=ROUND_CEILING))


def _observed(
    request: Quantity | None, limit: Quantity | None, enforced: Quantity
) -> tuple[int, int, int]:
    """``requestLimitEnforcedValues``: thousandths when none of the three overflows them."""
    amounts = [q.amount if q is not None else Decimal(0) for q in (request, limit, enforced)]
    values = [_whole(a) for a in amounts]
    if all(v <= _MAX_MILLI for v in values):
        values = [_whole(a * 1000) for a in amounts]
    return values[0], values[1], values[2]


def _min_error(kind: str, name: str, enforced: Quantity, requests: Object, limits: Object) -> str:
    request, limit = _quantity(requests.get(name)), _quantity(limits.get(name))
    req, lim, bound = _observed(request, limit, enforced)
    if name not in requests:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if req < bound:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {request}"
    if name in limits and lim < bound:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {limit}"
    return ""


def _max_error(kind: str, name: str, enforced: Quantity, requests: Object, limits: Object) -> str:
    request, limit = _quantity(requests.get(name)), _quantity(limits.get(name))
    req, lim, bound = _observed(request, limit, enforced)
    if name not in limits:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if lim > bound:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {limit}"
    if name in requests and req > bound:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {request}"
    return ""


def _ratio_error(kind: str, name: str, enforced: Quantity, requests: Object, limits: Object) -> str:
    request, limit = _quantity(requests.get(name)), _quantity(limits.get(name))
    req, lim, _ = _observed(request, limit, enforced)
    prefix = f"{name} max limit to request ratio per {kind} is {enforced}"
    if name not in requests or req == 0:
        return f"{prefix}, but no request is specified or request is 0"
    if name not in limits or lim == 0:
        return f"{prefix}, but no limit is specified or limit is 0"
    ratio = lim / req
    allowed: float = _whole(enforced.amount)
    observed = ratio
    if allowed <= _MAX_MILLI:
        observed, allowed = ratio * 1000, _whole(enforced.amount * 1000)
    if observed > allowed:
        return f"{prefix}, but provided ratio is {ratio:.6f}"
    return ""


def _check(kind: str, item: Object, requests: Object, limits: Object) -> list[str]:
    found = []
    for field, check in (("min", _min_error), ("max", _max_error)):
        for name, value in sorted((item.get(field) or {}).items()):
            enforced = _quantity(value)
            if enforced is not None and (message := check(kind, name, enforced, requests, limits)):
                found.append(message)
    for name, value in sorted((item.get("maxLimitRequestRatio") or {}).items()):
        enforced = _quantity(value)
        if enforced is not None and (
            message := _ratio_error(kind, name, enforced, requests, limits)
        ):
            found.append(message)
    return found


def _resources(container: Object) -> tuple[Object, Object]:
    resources = container.get("resources") or {}
    return resources.get("requests") or {}, resources.get("limits") or {}


def _pod_total(spec: Object, field: str) -> Object:
    """The pod's total of ``field`` as the scheduler counts it: the containers' sum (and
    sidecars'), or an init container's own when larger; in the first value's format."""
    total: dict[str, Quantity] = {}

    def add(name: str, q: Quantity, keep_max: bool) -> None:
        before = total.get(name)
        if before is None:
            total[name] = Quantity(q.amount, q.format)
        elif keep_max:
            total[name] = Quantity(max(before.amount, q.amount), before.format)
        else:
            total[name] = Quantity(before.amount + q.amount, before.format)

    for container in spec.get("containers") or []:
        for name, value in ((container.get("resources") or {}).get(field) or {}).items():
            if (q := _quantity(value)) is not None:
                add(name, q, keep_max=False)
    for container in spec.get("initContainers") or []:
        sidecar = container.get("restartPolicy") == "Always"
        for name, value in ((container.get("resources") or {}).get(field) or {}).items():
            if (q := _quantity(value)) is not None:
                add(name, q, keep_max=not sidecar)
    return {name: str(q) for name, q in total.items()}


def pod_limit_errors(pod: Object, limit_ranges: list[Object]) -> list[str]:
    """``PodValidateLimitFunc`` over every LimitRange: what makes the pod unacceptable."""
    spec = pod.get("spec") or {}
    found: list[str] = []
    for limit_range in limit_ranges:
        for item in (limit_range.get("spec") or {}).get("limits") or []:
            kind = item.get("type")
            if kind == "Container":
                for field in ("containers", "initContainers"):
                    for container in spec.get(field) or []:
                        found += _check(kind, item, *_resources(container))
            elif kind == "Pod":
                found += _check(
                    kind, item, _pod_total(spec, "requests"), _pod_total(spec, "limits")
                )
    return found


def _applies(a: Attributes) -> bool:
    resource = a.resource
    return (
        resource.group == ""
        and resource.plural == "pods"
        and not a.subresource
        and a.operation is Operation.CREATE
        and a.object is not None
        and bool(a.namespace)
    )


class LimitRanger:
    """The plugin, given a read of a namespace's LimitRanges."""

    def __init__(self, list_limit_ranges: LimitRangeLister) -> None:
        self.list_limit_ranges = list_limit_ranges

    async def admit(self, a: Attributes) -> None:
        if not _applies(a):
            return
        assert a.object is not None and a.namespace
        limit_ranges = await self.list_limit_ranges(a.namespace)
        if limit_ranges:
            default_pod_resources(a.object, limit_ranges)

    async def validate(self, a: Attributes) -> None:
        if not _applies(a):
            return
        assert a.object is not None and a.namespace
        limit_ranges = await self.list_limit_ranges(a.namespace)
        found = pod_limit_errors(a.object, limit_ranges) if limit_ranges else []
        if found:
            why = found[0] if len(found) == 1 else "[" + ", ".join(found) + "]"
            name = (a.object.get("metadata") or {}).get("name") or a.name
            raise errors.forbidden("pods", "", name, why)
