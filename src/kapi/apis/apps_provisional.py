"""Stand-in declarations of the apps kinds until the generated ones land (issue 21).

Each kind keeps its spec and status free-form but for the pod template (whose
patch metadata strategic merge patch needs) and the selector; the generated
modules (``kapi.apis.generated.apps_v1`` ...) replace this module.
"""

from __future__ import annotations

from types import SimpleNamespace

from kapi.apis.core_v1_podtemplate import PodTemplateSpec
from kapi.runtime.meta import LabelSelector, kind_struct
from kapi.runtime.schema import INT32, INT64, STRING, Field, Map, Struct


def _kind(group: str, version: str, kind: str, spec: bool = True) -> Struct:
    prefix = f"io.k8s.api.{group}.{version}"
    fields: tuple[Field, ...]
    if spec:
        fields = (
            Field(
                "spec",
                Struct(
                    f"{prefix}.{kind}Spec",
                    (
                        Field("selector", LabelSelector, "Which pods this object manages."),
                        Field("template", PodTemplateSpec, "The pods this object makes."),
                    ),
                    f"What a {kind} wants.",
                    preserve_unknown_fields=True,
                ),
                "The desired state.",
            ),
            Field(
                "status",
                Struct(
                    f"{prefix}.{kind}Status", (), f"A {kind}'s state.", preserve_unknown_fields=True
                ),
                "The observed state.",
            ),
        )
    else:
        fields = (
            Field(
                "data",
                Struct(f"{prefix}.{kind}Data", (), "Any data.", preserve_unknown_fields=True),
                "The data.",
            ),
            Field("revision", INT64, "A number."),
        )
    return kind_struct(f"{prefix}.{kind}", ((group, version, kind),), fields, f"A {kind}.")


def _scale(group: str, version: str) -> Struct:
    prefix = f"io.k8s.api.{group}.{version}"
    return kind_struct(
        f"{prefix}.Scale",
        ((group, version, "Scale"),),
        (
            Field(
                "spec",
                Struct(f"{prefix}.ScaleSpec", (Field("replicas", INT32, "Wanted."),), "Wanted."),
                "Wanted.",
            ),
            Field(
                "status",
                Struct(
                    f"{prefix}.ScaleStatus",
                    (
                        Field("replicas", INT32, "Seen."),
                        Field("selector", Map(STRING), "Labels."),
                        Field("targetSelector", STRING, "Selector."),
                    ),
                    "Seen.",
                ),
                "Seen.",
            ),
        ),
        "A Scale.",
    )


def _module(group: str, version: str, kinds: tuple[str, ...]) -> SimpleNamespace:
    ns = SimpleNamespace(**{k: _kind(group, version, k) for k in kinds})
    if group in ("apps", "extensions") and version != "v1":
        ns.Scale = _scale(group, version)
    if "ControllerRevision" in kinds:
        ns.ControllerRevision = _kind(group, version, "ControllerRevision", spec=False)
    return ns


_ALL = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision")
apps_v1 = _module("apps", "v1", _ALL)
apps_v1beta1 = _module("apps", "v1beta1", ("Deployment", "StatefulSet", "ControllerRevision"))
apps_v1beta2 = _module("apps", "v1beta2", _ALL)
extensions_v1beta1 = _module("extensions", "v1beta1", ("Deployment", "ReplicaSet", "DaemonSet"))
