"""``namespaceSelector`` and ``objectSelector``, as upstream's namespace and object matchers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kapi.admission.webhook.rules import RequestTarget
from kapi.apimachinery.labels import Selector


def _labels(obj: Mapping[str, Any] | None) -> dict[str, str]:
    return dict((obj or {}).get("metadata", {}).get("labels") or {})


def object_selector_matches(
    selector: Selector, obj: Mapping[str, Any] | None, old: Mapping[str, Any] | None
) -> bool:
    """The new or the old object's labels match; an empty selector matches even no object."""
    if selector.empty():
        return True
    return any(o is not None and selector.matches(_labels(o)) for o in (obj, old))


def namespace_selector_applies(target: RequestTarget) -> bool:
    """Cluster-scoped objects other than namespaces are not filtered by namespace labels."""
    return bool(target.namespace) or target.resource == "namespaces"


def own_namespace_labels(
    target: RequestTarget, obj: Mapping[str, Any] | None
) -> dict[str, str] | None:
    """A namespace being created or updated is matched on its own new labels.

    ``None`` means the labels must be read from the stored namespace.
    """
    if (
        target.resource == "namespaces"
        and not target.subresource
        and target.operation in ("CREATE", "UPDATE")
    ):
        return _labels(obj)
    return None
