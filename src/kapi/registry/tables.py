"""Server-side printing: a resource's columns for ``meta.k8s.io/v1`` ``Table``.

Each built-in resource declares its upstream columns once; the endpoints turn
them into Table responses for ``kubectl get``.  A :class:`Column` is defined
with the :class:`~kapi.runtime.scheme.Resource` that carries it
(:mod:`kapi.runtime.columns`); the cells and default columns are here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from kapi.apimachinery.labels import SelectorParseError, label_selector_as_selector
from kapi.apimachinery.unstructured import Object
from kapi.runtime.columns import Column
from kapi.runtime.meta import CREATION_TIMESTAMP_DOC, NAME_DOC


def age(obj: Object) -> str:
    """The AGE cell: upstream prints the creation timestamp as a short duration."""
    return since(obj.get("metadata", {}).get("creationTimestamp"))


def since(timestamp: str | None) -> str:
    """``translateTimestampSince``: how long ago a ``metav1.Time`` was, or ``<unknown>``."""
    if not timestamp:
        return "<unknown>"
    then = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return short_duration((datetime.now(UTC) - then).total_seconds())


def first_of(values: list[str], total: int, limit: int = 3) -> str:
    """Upstream printers' capped lists: ``a,b,c + 2 more...`` once ``total`` exceeds ``limit``."""
    text = ",".join(values[:limit])
    return f"{text} + {total - limit} more..." if total > limit else text


def label_selector_cell(selector: Object | None) -> str:
    """``metav1.FormatLabelSelector``: a selector as text, ``<none>`` when it has no terms."""
    try:
        text = str(label_selector_as_selector(selector))
    except SelectorParseError:
        return "<error>"
    return text or "<none>"


def short_duration(seconds: float) -> str:
    """``duration.HumanDuration`` from apimachinery: 5s, 3m2s, 4h, 2d3h, 40d, 3y."""
    s = int(seconds)
    if s < 0:
        return "<invalid>"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = (s % 3600) // 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        years = hours // (24 * 365)
        days = (hours // 24) % 365
        return f"{years}y{days}d" if days else f"{years}y"
    return f"{hours // (24 * 365)}y"


NAME = Column(
    "Name",
    "string",
    NAME_DOC,
    lambda obj: obj.get("metadata", {}).get("name", ""),
    format="name",
)

AGE = Column("Age", "string", CREATION_TIMESTAMP_DOC, age)

#: The columns of a resource with no printer of its own (upstream's default table convertor).
DEFAULT_COLUMNS = (
    NAME,
    Column(
        "Created At",
        "date",
        AGE.description,
        lambda obj: obj.get("metadata", {}).get("creationTimestamp"),
    ),
)


def container_columns(
    containers: Callable[[Object], Iterable[Object]], *, priority: int = 1
) -> tuple[Column, Column]:
    """Upstream's ``layoutContainerCells``: the Containers and Images of a pod template.

    ``containers`` finds the template's containers in an object of the kind;
    the workload kinds show both columns with ``-o wide`` (``priority`` 1).
    """
    return (
        Column(
            "Containers",
            "string",
            "The names of the template's containers.",
            lambda o: ",".join(c.get("name", "") for c in containers(o)),
            priority=priority,
        ),
        Column(
            "Images",
            "string",
            "The images of the template's containers.",
            lambda o: ",".join(c.get("image", "") for c in containers(o)),
            priority=priority,
        ),
    )
