"""The ``/scale`` subresource of built-in kinds, declared on their :class:`Resource`.

Custom resources name their replica paths in the CRD; built-in kinds
(Deployments, ReplicaSets, StatefulSets, ReplicationControllers) keep them at
``.spec.replicas`` and ``.status.replicas`` and answer a Scale whose
``status.selector`` is the kind's label selector written out as a string
(upstream's ``metav1.LabelSelectorAsSelector(...).String()``; a
ReplicationController's selector is a plain map).

Which ``Scale`` a version answers is upstream's too: ``autoscaling/v1`` for
the GA versions, and the deprecated versions' own ``Scale`` kind
(``apps/v1beta1``, ``apps/v1beta2``, ``extensions/v1beta1``), whose status
also carries the selector as a map when it has only labels to match.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kapi.apimachinery.labels import (
    SelectorParseError,
    label_selector_as_selector,
)
from kapi.apimachinery.unstructured import Object
from kapi.runtime.schema import Struct

AUTOSCALING_V1 = "autoscaling/v1"
SELECTOR_PATH = ".spec.selector"


def _walk(obj: Object, path: str) -> Any:
    node: Any = obj
    for name in path.lstrip(".").split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(name)
    return node


@dataclass(frozen=True)
class BuiltinScale:
    """Where a built-in kind's replicas are, and which Scale each version answers.

    It implements :class:`~kapi.runtime.strategy.ScaleSubresource`: reading
    ``label_selector`` gives the selector as a string, not the selector object.
    """

    #: Served version -> (the Scale's apiVersion, its declaration); versions not
    #: listed answer ``autoscaling/v1`` (declared by the endpoints' OpenAPI).
    versions: Mapping[str, tuple[str, Struct]] = field(default_factory=dict)
    #: ``True`` for a selector that is a plain label map (ReplicationController).
    map_selector: bool = False
    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    label_selector: str | None = SELECTOR_PATH

    def get(self, obj: Object, path: str) -> Any:
        if path == self.label_selector:
            return self.selector_string(obj)
        return _walk(obj, path)

    @staticmethod
    def set(obj: Object, path: str, value: Any) -> None:
        set_path(obj, path, value)

    def selector_string(self, obj: Object) -> str:
        selector = _walk(obj, SELECTOR_PATH)
        if self.map_selector:
            if not isinstance(selector, dict):
                return ""
            return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        try:
            return str(label_selector_as_selector(selector))
        except SelectorParseError:
            return ""

    def scale_api_version(self, version: str) -> str:
        entry = self.versions.get(version)
        return entry[0] if entry else AUTOSCALING_V1

    def scale_schema(self, version: str) -> Struct | None:
        """The version's own Scale declaration; ``None`` for ``autoscaling/v1``."""
        entry = self.versions.get(version)
        return entry[1] if entry else None

    def selector_labels(self, obj: Object) -> dict[str, str] | None:
        """The beta Scales' ``status.selector``: the labels when nothing but labels is matched.

        Upstream parses the selector string back (``ParseToLabelSelector``); only
        equality terms become labels, so a selector with any expression has none.
        """
        selector = _walk(obj, SELECTOR_PATH)
        if self.map_selector:
            return dict(selector) if isinstance(selector, dict) and selector else None
        if not isinstance(selector, dict) or selector.get("matchExpressions"):
            return None
        labels = selector.get("matchLabels")
        return dict(labels) if isinstance(labels, dict) and labels else None


def set_path(obj: Object, path: str, value: Any) -> None:
    """Set a ``.a.b.c`` path, creating the objects on the way (scale paths are that simple)."""
    names = path.lstrip(".").split(".")
    node = obj
    for name in names[:-1]:
        child = node.get(name)
        if not isinstance(child, dict):
            child = node[name] = {}
        node = child
    node[names[-1]] = value
