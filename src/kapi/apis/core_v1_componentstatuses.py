"""core/v1 ``ComponentStatus``: the health of the control plane's parts, computed on each read.

Upstream's ``componentstatuses`` (deprecated since 1.19, never removed) has no
storage: each get or list probes the scheduler, the controller manager and every
etcd server, and reports each as a ``Healthy`` condition.  kapi has no scheduler
and no controller manager to probe, so it reports only what it can know: its
storage, as ``etcd-0`` (whichever backend it is: etcd, or the embedded SQLite
store), healthy when a read of its current revision answers within
``--etcd-healthcheck-timeout`` (the same check as ``/healthz/etcd``).  Only get
and list are served, as upstream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kapi.apimachinery.unstructured import Object
from kapi.apis.generated.core_v1 import ComponentStatus
from kapi.registry.strategy import Strategy
from kapi.registry.tables import NAME, Column
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.version import Version

#: The name upstream gives its first etcd server's status.
STORAGE_COMPONENT = "etcd-0"
#: What upstream's etcd check says when healthy.
HEALTHY_MESSAGE = "ok"

#: A storage check: returns when storage answers, raises why not otherwise.
Probe = Callable[[], Awaitable[None]]


def component_status(name: str, healthy: bool, message: str, error: str) -> Object:
    """One ComponentStatus with its ``Healthy`` condition, as upstream builds it (no
    metadata beyond the name)."""
    condition: Object = {"type": "Healthy", "status": "True" if healthy else "False"}
    if message:
        condition["message"] = message
    if error:
        condition["error"] = error
    return {
        "apiVersion": "v1",
        "kind": "ComponentStatus",
        "metadata": {"name": name},
        "conditions": [condition],
    }


class ComponentStatusReader:
    """Computes the statuses; the server hands it its storage check (:attr:`probe`)."""

    #: Upstream's 404 names the singular resource: ``componentstatus "x" not found``.
    not_found_resource = "componentstatus"

    def __init__(self, probe: Probe | None = None) -> None:
        self.probe = probe

    async def read_all(self) -> list[Object]:
        return [await self._storage()]

    async def _storage(self) -> Object:
        if self.probe is None:
            return component_status(STORAGE_COMPONENT, False, "", "storage not open")
        try:
            await self.probe()
        except Exception as exc:
            return component_status(STORAGE_COMPONENT, False, "", str(exc) or repr(exc))
        return component_status(STORAGE_COMPONENT, True, HEALTHY_MESSAGE, "")


def _healthy_condition(obj: Object) -> Object | None:
    for condition in obj.get("conditions") or ():
        if isinstance(condition, dict) and condition.get("type") == "Healthy":
            return condition
    return None


def _status_cell(obj: Object) -> str:
    """``printComponentStatus``: Healthy, Unhealthy, or Unknown without the condition."""
    condition = _healthy_condition(obj)
    if condition is None:
        return "Unknown"
    return "Healthy" if condition.get("status") == "True" else "Unhealthy"


def _condition_cell(key: str) -> Callable[[Object], Any]:
    return lambda obj: str((_healthy_condition(obj) or {}).get(key) or "")


COLUMNS = (
    NAME,
    Column("Status", "string", "Whether the component is healthy.", _status_cell),
    Column("Message", "string", "What the health check said.", _condition_cell("message")),
    Column("Error", "string", "Why the health check failed.", _condition_cell("error")),
)


def resources() -> list[Resource]:
    """The core/v1 ComponentStatus resource (read-only, computed)."""
    return [
        Resource(
            group="",
            kind="ComponentStatus",
            plural="componentstatuses",
            singular="componentstatus",
            namespaced=False,
            versions={
                "v1": ResourceVersion(
                    "v1",
                    ComponentStatus,
                    Lifecycle(introduced=Version(1, 0), deprecated=Version(1, 19)),
                )
            },
            hub_version="v1",
            storage_version="v1",
            strategy=Strategy(),
            short_names=("cs",),
            columns=COLUMNS,
            verbs=("get", "list"),
            reader=ComponentStatusReader(),
        )
    ]
