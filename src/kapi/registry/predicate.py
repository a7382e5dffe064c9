"""Label and field selectors applied to objects (upstream ``SelectionPredicate``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kapi.apimachinery.field_selector import FieldSelector
from kapi.apimachinery.gotext import go_sprint
from kapi.apimachinery.labels import Selector
from kapi.apimachinery.unstructured import Object


@dataclass(frozen=True)
class SelectionPredicate:
    label: Selector | None = None
    field: FieldSelector | None = None
    #: The object's selectable fields (upstream ``GetAttrs``), for kinds whose field
    #: labels are not plain paths; else each selected label is read at its path.
    get_fields: Callable[[Object], Mapping[str, str]] | None = None

    def empty(self) -> bool:
        return (self.label is None or self.label.empty()) and (
            self.field is None or self.field.empty()
        )

    def matches(self, obj: Object) -> bool:
        metadata = obj.get("metadata", {})
        if self.label is not None and not self.label.matches(metadata.get("labels") or {}):
            return False
        if self.field is None:
            return True
        fields = self.get_fields(obj) if self.get_fields is not None else self._field_set(obj)
        return self.field.matches(fields)

    def single_name(self) -> str | None:
        """The name an exact ``metadata.name=`` requirement pins, if any."""
        return None if self.field is None else self.field.exact("metadata.name")

    def _field_set(self, obj: Object) -> dict[str, str]:
        """The values of the fields the selector names, read by their dotted paths.

        Which paths are allowed was checked when the selector was parsed
        (``metadata.name``, ``metadata.namespace`` and the kind's field labels).
        Values are written as Go's ``fmt.Sprint`` does (``true``, ``3``), a missing
        one as "", as upstream's custom resource ``GetAttrs``.
        """
        assert self.field is not None
        fields: dict[str, str] = {}
        for field in self.field.fields():
            node: Any = obj
            for part in field.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            fields[field] = "" if node is None else go_sprint(node)
        return fields


EVERYTHING = SelectionPredicate()
