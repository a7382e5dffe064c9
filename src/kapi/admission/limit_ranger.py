"""The LimitRanger admission plugin's defaulting (upstream's ``plugin/pkg/admission/limitranger``).

On pod creation, every Container item of the namespace's LimitRanges gives
the pod's containers and init containers the default limits and requests they
lack, and the pod records what was set in its ``kubernetes.io/limit-ranger``
annotation.  Upstream's plugin also refuses pods outside an item's min, max
and ratio (its validating half) and defaults PersistentVolumeClaims; kapi does
neither (see docs/builtin-api.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kapi.admission.interface import Attributes, Operation
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


class LimitRanger:
    """The plugin's mutating half, given a read of a namespace's LimitRanges."""

    def __init__(self, list_limit_ranges: LimitRangeLister) -> None:
        self.list_limit_ranges = list_limit_ranges

    async def admit(self, a: Attributes) -> None:
        resource = a.resource
        if resource.group != "" or resource.plural != "pods" or a.subresource:
            return
        if a.operation is not Operation.CREATE or a.object is None or not a.namespace:
            return
        limit_ranges = await self.list_limit_ranges(a.namespace)
        if limit_ranges:
            default_pod_resources(a.object, limit_ranges)
