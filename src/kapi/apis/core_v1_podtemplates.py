"""core/v1 ``PodTemplate``: a stored pod template (``pkg/registry/core/podtemplate``).

Its template gets the pod defaults and ``ValidatePodTemplateSpec``; every
change to the template is a new generation.
"""

from __future__ import annotations

from kapi.apimachinery.field_errors import FieldError, Path
from kapi.apimachinery.unstructured import Object
from kapi.apis import core_v1_pod_validation as pod_validation
from kapi.apis.core_v1_pod_defaults import default_pod_template
from kapi.apis.generated.core_v1 import PodTemplate
from kapi.registry.strategy import Strategy
from kapi.registry.tables import NAME, Column, container_columns
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.version import Version


def default_pod_template_object(obj: Object) -> None:
    """The pod defaults, on ``template`` (upstream defaults every embedded PodSpec)."""
    template = obj.get("template")
    if isinstance(template, dict):
        default_pod_template(template)


class PodTemplateStrategy(Strategy):
    """Upstream ``podTemplateStrategy``: generation, the template validated as a pod's."""

    has_generation = True

    def validate(self, obj: Object) -> list[FieldError]:
        return pod_validation.validate_pod_template_spec(
            obj.get("template") or {}, Path("template")
        )


def _template(obj: Object) -> Object:
    return obj.get("template") or {}


def _containers(obj: Object) -> list[Object]:
    return (_template(obj).get("spec") or {}).get("containers") or []


def format_labels(labels: dict[str, str] | None) -> str:
    """``labels.FormatLabels``: ``k=v`` pairs sorted by key, or ``<none>``."""
    text = ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items()))
    return text or "<none>"


def resources() -> list[Resource]:
    """The core/v1 PodTemplate resource."""
    return [
        Resource(
            group="",
            kind="PodTemplate",
            plural="podtemplates",
            singular="podtemplate",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1",
                    PodTemplate,
                    Lifecycle(introduced=Version(1, 0)),
                    default_pod_template_object,
                )
            },
            hub_version="v1",
            storage_version="v1",
            strategy=PodTemplateStrategy(),
            columns=(
                NAME,
                *container_columns(_containers, priority=0),
                Column(
                    "Pod Labels",
                    "string",
                    "The labels of the pods made from the template.",
                    lambda o: format_labels((_template(o).get("metadata") or {}).get("labels")),
                ),
            ),
        )
    ]
