"""Placeholder until h-pod's pod-spec defaulting is merged (replaced by theirs)."""

from __future__ import annotations

from kapi.apimachinery.unstructured import Object


def default_pod_spec(spec: Object) -> None:
    spec.setdefault("restartPolicy", "Always")


def default_pod_template(template: Object) -> None:
    default_pod_spec(template.setdefault("spec", {}))


def default_pod(obj: Object) -> None:
    spec = obj.setdefault("spec", {})
    default_pod_spec(spec)
    for container in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        resources = container.get("resources") or {}
        limits = resources.get("limits") or {}
        if limits:
            requests = resources.setdefault("requests", {})
            for name, value in limits.items():
                requests.setdefault(name, value)
