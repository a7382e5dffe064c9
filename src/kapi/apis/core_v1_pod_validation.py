"""Placeholder until h-pod's pod-spec validation is merged (replaced by theirs)."""

from __future__ import annotations

from kapi.apimachinery.field_errors import FieldError, Path, required
from kapi.apimachinery.unstructured import Object


def validate_pod_spec(spec: Object, path: Path, *, opts: object | None = None) -> list[FieldError]:
    if not spec.get("containers"):
        return [required(path.child("containers"), "")]
    return []


def validate_pod_template_spec(template: Object, path: Path) -> list[FieldError]:
    return validate_pod_spec(template.get("spec") or {}, path.child("spec"))


def validate_pod_update(new: Object, old: Object) -> list[FieldError]:
    return validate_pod_spec(new.get("spec") or {}, Path("spec"))
