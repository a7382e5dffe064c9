"""The DefaultIngressClass admission plugin, as upstream's.

An Ingress created in networking.k8s.io without a class (no
``spec.ingressClassName`` and no legacy ``kubernetes.io/ingress.class``
annotation) gets the default IngressClass: the one annotated
``ingressclass.kubernetes.io/is-default-class: "true"``.  With several
defaults the newest wins, then the lowest name, as upstream chooses since
1.25.  Only creates are defaulted; updates keep what they send.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kapi.admission.interface import Attributes, Operation
from kapi.apimachinery.unstructured import Object
from kapi.apis.networking import GROUP, INGRESS_CLASS_ANNOTATION
from kapi.apis.networking_policies import DEFAULT_CLASS_ANNOTATION

#: Lists the stored IngressClasses.
ClassLister = Callable[[], Awaitable[list[Object]]]


def default_class(classes: list[Object]) -> Object | None:
    """The default IngressClass of ``classes``, or ``None`` when none is marked default."""
    marked = [
        c
        for c in classes
        if ((c.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION)
        == "true"
    ]
    # Newest first; equally old ones by name.  RFC 3339 UTC stamps sort as text.
    marked.sort(key=lambda c: c["metadata"].get("name") or "")
    marked.sort(key=lambda c: c["metadata"].get("creationTimestamp") or "", reverse=True)
    return marked[0] if marked else None


class DefaultIngressClass:
    """The plugin, given a way to list the IngressClasses (upstream hands it a lister)."""

    def __init__(self, list_classes: ClassLister) -> None:
        self.list_classes = list_classes

    async def admit(self, a: Attributes) -> None:
        resource = a.resource
        if (resource.group, resource.plural) != (GROUP, "ingresses") or a.subresource:
            return
        if a.operation is not Operation.CREATE or a.object is None:
            return
        spec = a.object.get("spec")
        if isinstance(spec, dict) and spec.get("ingressClassName") is not None:
            return
        annotations = (a.object.get("metadata") or {}).get("annotations") or {}
        if INGRESS_CLASS_ANNOTATION in annotations:
            return
        chosen = default_class(await self.list_classes())
        if chosen is None:
            return
        if not isinstance(spec, dict):
            spec = a.object["spec"] = {}
        spec["ingressClassName"] = chosen["metadata"]["name"]
