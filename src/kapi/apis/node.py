"""node.k8s.io ``RuntimeClass`` in ``v1`` (hub and storage) and ``v1beta1``.

``v1beta1`` has v1's shape (``handler``, ``overhead`` and ``scheduling`` at the
top level; only the never-served ``v1alpha1`` nested them under ``spec``), so it
is the hub renamed.  kube-apiserver served it from 1.14 (``k8s.io/api`` has no
``node`` package before; its lifecycle tag says 1.13) until 1.25, deprecated in
1.22.  Validation follows ``pkg/apis/node/validation`` and the strategy
``pkg/registry/node/runtimeclass``: PUT may create, and updates must name a
resourceVersion.
"""

from __future__ import annotations

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError, Path, invalid
from kapi.apimachinery.unstructured import Object
from kapi.apis.core_v1_pod_validation import validate_resource_requirements, validate_tolerations
from kapi.apis.generated import node_v1, node_v1beta1
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion, renamed_version
from kapi.version import Version

GROUP = "node.k8s.io"
HUB = "v1"


def validate_runtime_class(obj: Object) -> list[FieldError]:
    """``ValidateRuntimeClass``: the handler is a DNS label; overhead and scheduling."""
    handler = obj.get("handler") or ""
    errs = [
        invalid(Path("handler"), handler, message)
        for message in validation.name_is_dns_label(handler, False)
    ]
    overhead = obj.get("overhead")
    if isinstance(overhead, dict):
        errs += validate_resource_requirements(
            {"limits": overhead.get("podFixed") or {}}, Path("overhead")
        )
    scheduling = obj.get("scheduling")
    if isinstance(scheduling, dict):
        path = Path("scheduling")
        if scheduling.get("nodeSelector") is not None:
            errs += validation.validate_labels(
                scheduling["nodeSelector"], path.child("nodeSelector")
            )
        errs += validate_tolerations(scheduling.get("tolerations"), path.child("tolerations"))
    return errs


class RuntimeClassStrategy(Strategy):
    """Upstream's RuntimeClass ``strategy``."""

    allow_create_on_update = True
    allow_unconditional_update = False

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_runtime_class(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        """``ValidateRuntimeClass`` then ``ValidateRuntimeClassUpdate``: the handler stays."""
        return validate_runtime_class(new) + validation.validate_immutable_field(
            new.get("handler") or "", old.get("handler") or "", Path("handler")
        )


COLUMNS = (
    NAME,
    Column(
        "Handler",
        "string",
        "The container runtime configuration that runs pods of this class.",
        lambda obj: obj.get("handler") or "",
    ),
    AGE,
)


def resources() -> list[Resource]:
    """The node.k8s.io resources (a fresh strategy for a new scheme)."""
    return [
        Resource(
            group=GROUP,
            kind="RuntimeClass",
            plural="runtimeclasses",
            singular="runtimeclass",
            namespaced=False,
            versions={
                HUB: ResourceVersion(
                    HUB, node_v1.RuntimeClass, Lifecycle(introduced=Version(1, 20))
                ),
                "v1beta1": renamed_version(
                    "v1beta1",
                    node_v1beta1.RuntimeClass,
                    Lifecycle(
                        introduced=Version(1, 14),
                        deprecated=Version(1, 22),
                        removed=Version(1, 25),
                        # Its lifecycle tags name no replacement, so upstream's warning names none.
                    ),
                ),
            },
            hub_version=HUB,
            storage_version=HUB,
            strategy=RuntimeClassStrategy(),
            columns=COLUMNS,
        )
    ]
