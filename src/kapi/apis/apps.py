"""The apps group: Deployments, ReplicaSets, StatefulSets, DaemonSets, ControllerRevisions.

``apps/v1`` is each kind's hub and storage version.  The deprecated versions
upstream served are here too, each with its real lifecycle (its
``prerelease-lifecycle-gen`` tags): ``apps/v1beta1`` (Deployments,
StatefulSets, ControllerRevisions; deprecated in 1.8) and ``apps/v1beta2``
(all five; deprecated in 1.9), both removed in 1.16; and the
``extensions/v1beta1`` Deployments, DaemonSets and ReplicaSets (deprecated in
1.8, removed in 1.16), which are apps objects in another group: like
events.k8s.io Events with core Events, they share the apps kinds' storage,
stored as ``apps/v1``.  Defaults and conversions per version are in
:mod:`kapi.apis.apps_versions`, validation in :mod:`kapi.apis.apps_validation`.

Strategies follow ``pkg/registry/apps``: a ``status`` subresource, status
reset on create, generation bumped by spec changes (and by a Deployment's
annotations, which its ReplicaSets copy), a DaemonSet's templateGeneration
bumped with its template, and a selector that may not change, except through
the versions upstream left it mutable in (``apps/v1beta1`` and
``extensions/v1beta1`` Deployments, ``extensions/v1beta1`` ReplicaSets and
DaemonSets).  Deployments, ReplicaSets and StatefulSets have ``/scale``; the
Deployments of apps/v1beta1 and extensions/v1beta1 also take ``/rollback``
(:mod:`kapi.apis.apps_rollback`).
kapi runs no controllers for these kinds: nothing rolls a Deployment out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError
from kapi.apimachinery.labels import SelectorParseError, label_selector_as_selector
from kapi.apimachinery.unstructured import Object
from kapi.apis import apps_validation as v
from kapi.apis import apps_versions as d
from kapi.apis.apps_rollback import DeploymentRollbackCreator
from kapi.apis.generated import apps_v1, apps_v1beta1, apps_v1beta2, extensions_v1beta1
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column, container_columns, label_selector_cell
from kapi.request import current as current_request
from kapi.runtime.objects import deep_copy
from kapi.runtime.scale import BuiltinScale
from kapi.runtime.schema import Struct
from kapi.runtime.scheme import (
    Converter,
    Defaulter,
    GroupVersionKind,
    Lifecycle,
    Resource,
    ResourceVersion,
    renamed_hub,
)
from kapi.runtime.strategy import SubresourceCreator
from kapi.version import Version

GROUP = "apps"
EXTENSIONS = "extensions"
#: The hub of the extensions/v1beta1 resources: apps/v1 objects, never served by that group.
EXTENSIONS_HUB = "__apps_v1"
#: The subresources of the Deployment versions that served ``/rollback``.
WITH_ROLLBACK = ("status", "scale", "rollback")

NAME_NOT_DNS_LABEL_WARNING = (
    "metadata.name: this is used in Pod names and hostnames, which can result in surprising "
    "behavior; a DNS label is recommended: "
)

# --- strategies ------------------------------------------------------------------------------


def _spec(obj: Object) -> Object:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _request_group_version() -> tuple[str, str]:
    info = current_request().info
    return info.api_group, info.api_version


def _name_warnings(obj: Object) -> list[str]:
    """A valid name that is not a DNS label makes odd pod hostnames: warn about it."""
    messages = validation.is_dns1123_label((obj.get("metadata") or {}).get("name") or "")
    if not messages:
        return []
    return [NAME_NOT_DNS_LABEL_WARNING + "[" + " ".join(messages) + "]"]  # Go's %v of []string


def _selector_immutable(new: Object, old: Object) -> list[FieldError]:
    new_selector = _spec(new).get("selector")
    if new_selector == _spec(old).get("selector"):
        return []
    shown = (
        {k: val for k, val in new_selector.items() if val}
        if isinstance(new_selector, dict)
        else new_selector
    )
    return validation.validate_immutable_field(
        shown, _spec(old).get("selector"), v.SPEC.child("selector")
    )


class _WorkloadStrategy(Strategy):
    """What the workload kinds share: status reset on create, generation, selector rules."""

    has_generation = True
    has_status = True
    #: Request group/versions in which the selector may still change.
    mutable_selector_in: tuple[tuple[str, str], ...] = ()
    warn_on_name = True
    #: The status's fields without ``omitempty``: Go writes them even when zero.
    zero_status: tuple[str, ...] = ()

    def prepare_for_create(self, obj: Object) -> None:
        # The zero status, as Go serialises it: the struct always, its non-omitempty counts.
        obj["status"] = dict.fromkeys(self.zero_status, 0)

    def spec_changed(self, new: Object, old: Object) -> bool:
        return new.get("spec") != old.get("spec")

    def _selector_errors(self, new: Object, old: Object) -> list[FieldError]:
        if _request_group_version() in self.mutable_selector_in:
            return []
        return _selector_immutable(new, old)

    def warnings_on_create(self, obj: Object) -> list[str]:
        return _name_warnings(obj) if self.warn_on_name else []


class DeploymentStrategy(_WorkloadStrategy):
    mutable_selector_in = ((GROUP, "v1beta1"), (EXTENSIONS, "v1beta1"))
    orphans_by_default_in = frozenset(
        {(EXTENSIONS, "v1beta1"), (GROUP, "v1beta1"), (GROUP, "v1beta2")}
    )
    #: ``rollback`` is written by :class:`DeploymentRollbackCreator` alone, past this strategy.
    subresource_fields = {"status": ("status",), "rollback": ()}

    def spec_changed(self, new: Object, old: Object) -> bool:
        """Annotations count too: a Deployment's ReplicaSets copy them."""
        annotations = [(o.get("metadata") or {}).get("annotations") or {} for o in (new, old)]
        return new.get("spec") != old.get("spec") or annotations[0] != annotations[1]

    def validate(self, obj: Object) -> list[FieldError]:
        return v.validate_deployment(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return v.validate_deployment(new) + self._selector_errors(new, old)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return v.validate_deployment_status_update(new, old)


class ReplicaSetStrategy(_WorkloadStrategy):
    mutable_selector_in = ((EXTENSIONS, "v1beta1"),)
    orphans_by_default_in = frozenset({(EXTENSIONS, "v1beta1"), (GROUP, "v1beta2")})
    zero_status = ("replicas",)

    def validate(self, obj: Object) -> list[FieldError]:
        return v.validate_replica_set(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return v.validate_replica_set(new) + self._selector_errors(new, old)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return v.validate_replica_set_status(new.get("status") or {})


class StatefulSetStrategy(_WorkloadStrategy):
    """Names are DNS labels (pods are ``<name>-<ordinal>``); most of the spec is fixed."""

    warn_on_name = False
    zero_status = ("replicas", "availableReplicas")
    orphans_by_default_in = frozenset({(GROUP, "v1beta1"), (GROUP, "v1beta2")})

    @staticmethod
    def validate_name(name: str, prefix: bool) -> list[str]:
        return validation.name_is_dns_label(name, prefix)

    def validate(self, obj: Object) -> list[FieldError]:
        return v.validate_statefulset(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return v.validate_statefulset_update(new, old)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return v.validate_statefulset_status(
            new.get("status") or {}
        ) + v.validate_collision_count_update(new, old)


def _set_template_generation(obj: Object, generation: int) -> None:
    metadata = obj.setdefault("metadata", {})
    annotations = dict(metadata.get("annotations") or {})
    annotations[v.TEMPLATE_GENERATION_ANNOTATION] = str(generation)
    metadata["annotations"] = annotations


class DaemonSetStrategy(_WorkloadStrategy):
    """templateGeneration (an annotation of the v1 object) starts at 1 and follows the template."""

    mutable_selector_in = ((EXTENSIONS, "v1beta1"),)
    orphans_by_default_in = frozenset({(EXTENSIONS, "v1beta1"), (GROUP, "v1beta2")})
    zero_status = (
        "currentNumberScheduled",
        "numberMisscheduled",
        "desiredNumberScheduled",
        "numberReady",
    )

    def prepare_for_create(self, obj: Object) -> None:
        super().prepare_for_create(obj)
        if v.template_generation(obj) < 1:
            _set_template_generation(obj, 1)

    def prepare_for_update(self, new: Object, old: Object) -> None:
        super().prepare_for_update(new, old)
        if _spec(new).get("template") != _spec(old).get("template"):
            _set_template_generation(new, v.template_generation(old) + 1)
        elif v.TEMPLATE_GENERATION_ANNOTATION in (
            (old.get("metadata") or {}).get("annotations") or {}
        ):
            # Upstream reads it back from the annotation the client sent; one a client
            # dropped reads as 0 and fails validation below.
            _set_template_generation(new, v.template_generation(new))

    def validate(self, obj: Object) -> list[FieldError]:
        return v.validate_daemonset(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return v.validate_daemonset_update(new, old) + self._selector_errors(new, old)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return v.validate_daemonset_status(
            new.get("status") or {}
        ) + v.validate_collision_count_update(new, old)


class ControllerRevisionStrategy(Strategy):
    """No status, no generation; data may not change."""

    def validate(self, obj: Object) -> list[FieldError]:
        return v.validate_controller_revision(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return v.validate_controller_revision_update(new, old)


# --- table columns ---------------------------------------------------------------------------


def _status(obj: Object) -> Object:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def _count(obj: Object, name: str) -> int:
    value = _status(obj).get(name)
    return value if isinstance(value, int) else 0


def _desired(obj: Object) -> int:
    value = _spec(obj).get("replicas")
    return value if isinstance(value, int) else 0


def _pod_spec(obj: Object) -> Object:
    template = _spec(obj).get("template")
    pod = template.get("spec") if isinstance(template, dict) else None
    return pod if isinstance(pod, dict) else {}


def _containers(obj: Object) -> list[Object]:
    return [c for c in _pod_spec(obj).get("containers") or () if isinstance(c, dict)]


def _ready_of_desired(obj: Object) -> str:
    return f"{_count(obj, 'readyReplicas')}/{_desired(obj)}"


def _selector_string(obj: Object) -> str:
    """A Deployment's selector as upstream's printer writes it: empty when it has no terms."""
    try:
        return str(label_selector_as_selector(_spec(obj).get("selector")))
    except SelectorParseError:
        return "<invalid>"


def _node_selector(obj: Object) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, ``<none>`` when empty."""
    selector = _pod_spec(obj).get("nodeSelector") or {}
    return ",".join(f"{k}={val}" for k, val in sorted(selector.items())) or "<none>"


def _controller(obj: Object) -> str:
    """The owner that controls a revision, as ``<kind>.<group>/<name>`` in lower case."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            group = (ref.get("apiVersion") or "").rpartition("/")[0]
            kind = ref.get("kind") or ""
            qualified = f"{kind}.{group}" if group else kind
            return f"{qualified.lower()}/{ref.get('name', '')}" if kind else ref.get("name", "")
    return "<none>"


CONTAINERS, IMAGES = container_columns(_containers)
_SELECTOR_DOC = "The label query over the pods this object manages."
READY = Column("Ready", "string", "Ready pods out of the desired count.", _ready_of_desired)


def _int_column(name: str, doc: str, cell: Callable[[Object], int]) -> Column:
    return Column(name, "integer", doc, cell)


DEPLOYMENT_COLUMNS = (
    NAME,
    READY,
    Column(
        "Up-to-date",
        "string",
        "How many pods run the latest template.",
        lambda o: _count(o, "updatedReplicas"),
    ),
    Column(
        "Available",
        "string",
        "How many pods have been ready for at least minReadySeconds.",
        lambda o: _count(o, "availableReplicas"),
    ),
    AGE,
    CONTAINERS,
    IMAGES,
    Column("Selector", "string", _SELECTOR_DOC, _selector_string, priority=1),
)
_WIDE_SELECTOR = Column(
    "Selector",
    "string",
    _SELECTOR_DOC,
    lambda o: label_selector_cell(_spec(o).get("selector")),
    priority=1,
)
REPLICASET_COLUMNS = (
    NAME,
    _int_column("Desired", "How many pods are wanted.", _desired),
    _int_column("Current", "How many pods exist.", lambda o: _count(o, "replicas")),
    _int_column("Ready", "How many pods are ready.", lambda o: _count(o, "readyReplicas")),
    AGE,
    CONTAINERS,
    IMAGES,
    _WIDE_SELECTOR,
)
STATEFULSET_COLUMNS = (NAME, READY, AGE, CONTAINERS, IMAGES)
DAEMONSET_COLUMNS = (
    NAME,
    _int_column(
        "Desired",
        "How many nodes should run the pod.",
        lambda o: _count(o, "desiredNumberScheduled"),
    ),
    _int_column(
        "Current",
        "How many nodes run the pod.",
        lambda o: _count(o, "currentNumberScheduled"),
    ),
    _int_column("Ready", "How many of those pods are ready.", lambda o: _count(o, "numberReady")),
    _int_column(
        "Up-to-date",
        "How many nodes run the latest template.",
        lambda o: _count(o, "updatedNumberScheduled"),
    ),
    _int_column(
        "Available",
        "How many of those pods are available.",
        lambda o: _count(o, "numberAvailable"),
    ),
    Column(
        "Node Selector",
        "string",
        "The labels a node must have to run the pod.",
        _node_selector,
    ),
    AGE,
    CONTAINERS,
    IMAGES,
    _WIDE_SELECTOR,
)
CONTROLLER_REVISION_COLUMNS = (
    NAME,
    Column("Controller", "string", "The object that owns and manages this one.", _controller),
    Column(
        "Revision",
        "integer",
        "The revision this object holds.",
        lambda o: o.get("revision") if isinstance(o.get("revision"), int) else 0,
    ),
    AGE,
)

# --- resources -------------------------------------------------------------------------------


def _renamed(obj: Object) -> Object:
    """A version with v1's fields under another apiVersion (the scheme sets it)."""
    return dict(obj)


def _copy(obj: Object) -> Object:
    return deep_copy(obj)


def _lifecycle(introduced: tuple[int, int], deprecated: tuple[int, int], kind: str) -> Lifecycle:
    return Lifecycle(
        introduced=Version(*introduced),
        deprecated=Version(*deprecated),
        removed=Version(1, 16),
        replacement=GroupVersionKind(GROUP, "v1", kind),
    )


V1 = Lifecycle(introduced=Version(1, 9))


def _beta(
    version: str,
    schema: Struct,
    lifecycle: Lifecycle,
    defaulter: Defaulter,
    to_hub: Converter = _renamed,
    from_hub: Converter = _renamed,
) -> ResourceVersion:
    renamed = to_hub is _renamed and from_hub is _renamed
    return ResourceVersion(
        version,
        schema,
        lifecycle,
        defaulter,
        to_hub=to_hub,
        from_hub=from_hub,
        reads_as_hub=renamed_hub if renamed else None,
    )


def _scale(*betas: tuple[str, Any]) -> BuiltinScale:
    """``/scale``: autoscaling/v1 in v1; each beta version (given with its generated
    module) answers its own group's Scale."""
    versions: dict[str, tuple[str, Struct]] = {}
    for version, module in betas:
        group = EXTENSIONS if module is extensions_v1beta1 else GROUP
        versions[version] = (f"{group}/{version}", module.Scale)
    return BuiltinScale(versions=versions)


def _apps_resource(
    kind: str,
    plural: str,
    versions: dict[str, ResourceVersion],
    strategy: Strategy,
    columns: tuple[Column, ...],
    *,
    short_names: tuple[str, ...] = (),
    workload: bool = True,
    scale: BuiltinScale | None = None,
    creators: Mapping[str, SubresourceCreator] | None = None,
) -> Resource:
    subresources: tuple[str, ...] = ()
    if workload:
        subresources = ("status", "scale") if scale is not None else ("status",)
    return Resource(
        group=GROUP,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=True,
        versions=versions,
        hub_version="v1",
        storage_version="v1",
        strategy=strategy,
        short_names=short_names,
        categories=("all",) if workload else (),
        subresources=subresources,
        creators=creators or {},
        columns=columns,
        scale=scale,
    )


def _extensions_resource(
    kind: str,
    plural: str,
    hub: Struct,
    beta: ResourceVersion,
    strategy: Strategy,
    columns: tuple[Column, ...],
    short_names: tuple[str, ...],
    scale: BuiltinScale | None,
    creators: Mapping[str, SubresourceCreator] | None = None,
) -> Resource:
    """An extensions/v1beta1 kind: apps/v1 objects in the apps kind's storage."""
    subresources = ("status", "scale") if scale is not None else ("status",)
    return Resource(
        group=EXTENSIONS,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=True,
        versions={
            "v1beta1": beta,
            EXTENSIONS_HUB: ResourceVersion(EXTENSIONS_HUB, hub, served=False),
        },
        hub_version=EXTENSIONS_HUB,
        storage_version=EXTENSIONS_HUB,
        strategy=strategy,
        short_names=short_names,
        categories=("all",),
        subresources=subresources + tuple(creators or ()),
        creators=creators or {},
        columns=columns,
        scale=scale,
        hub_api_version=f"{GROUP}/v1",
    )


def _extensions_lifecycle(introduced: tuple[int, int], kind: str) -> Lifecycle:
    return _lifecycle(introduced, (1, 8), kind)


def resources() -> list[Resource]:
    """The apps resources, and the extensions/v1beta1 ones that share their storage."""
    deployment_v1beta1 = dataclasses.replace(
        _beta(
            "v1beta1",
            apps_v1beta1.Deployment,
            _lifecycle((1, 6), (1, 8), "Deployment"),
            d.default_deployment_apps_v1beta1,
            d.deployment_field_to_hub,
            d.deployment_field_from_hub,
        ),
        subresources=WITH_ROLLBACK,
    )
    return [
        _apps_resource(
            "Deployment",
            "deployments",
            {
                "v1": ResourceVersion("v1", apps_v1.Deployment, V1, d.default_deployment_v1),
                "v1beta1": deployment_v1beta1,
                "v1beta2": _beta(
                    "v1beta2",
                    apps_v1beta2.Deployment,
                    _lifecycle((1, 8), (1, 9), "Deployment"),
                    d.default_deployment_v1,
                ),
            },
            DeploymentStrategy(),
            DEPLOYMENT_COLUMNS,
            short_names=("deploy",),
            scale=_scale(("v1beta1", apps_v1beta1), ("v1beta2", apps_v1beta2)),
            creators={"rollback": DeploymentRollbackCreator()},
        ),
        _apps_resource(
            "ReplicaSet",
            "replicasets",
            {
                "v1": ResourceVersion("v1", apps_v1.ReplicaSet, V1, d.default_replicaset_v1),
                "v1beta2": _beta(
                    "v1beta2",
                    apps_v1beta2.ReplicaSet,
                    _lifecycle((1, 8), (1, 9), "ReplicaSet"),
                    d.default_replicaset_v1,
                ),
            },
            ReplicaSetStrategy(),
            REPLICASET_COLUMNS,
            short_names=("rs",),
            scale=_scale(("v1beta2", apps_v1beta2)),
        ),
        _apps_resource(
            "StatefulSet",
            "statefulsets",
            {
                "v1": ResourceVersion("v1", apps_v1.StatefulSet, V1, d.default_statefulset_v1),
                "v1beta1": _beta(
                    "v1beta1",
                    apps_v1beta1.StatefulSet,
                    _lifecycle((1, 5), (1, 8), "StatefulSet"),
                    d.default_statefulset_apps_v1beta1,
                ),
                "v1beta2": _beta(
                    "v1beta2",
                    apps_v1beta2.StatefulSet,
                    _lifecycle((1, 8), (1, 9), "StatefulSet"),
                    d.default_statefulset_v1,
                ),
            },
            StatefulSetStrategy(),
            STATEFULSET_COLUMNS,
            short_names=("sts",),
            scale=_scale(("v1beta1", apps_v1beta1), ("v1beta2", apps_v1beta2)),
        ),
        _apps_resource(
            "DaemonSet",
            "daemonsets",
            {
                "v1": ResourceVersion("v1", apps_v1.DaemonSet, V1, d.default_daemonset_v1),
                "v1beta2": _beta(
                    "v1beta2",
                    apps_v1beta2.DaemonSet,
                    _lifecycle((1, 8), (1, 9), "DaemonSet"),
                    d.default_daemonset_v1,
                ),
            },
            DaemonSetStrategy(),
            DAEMONSET_COLUMNS,
            short_names=("ds",),
        ),
        _apps_resource(
            "ControllerRevision",
            "controllerrevisions",
            {
                "v1": ResourceVersion("v1", apps_v1.ControllerRevision, V1),
                "v1beta1": _beta(
                    "v1beta1",
                    apps_v1beta1.ControllerRevision,
                    _lifecycle((1, 7), (1, 8), "ControllerRevision"),
                    _no_defaults,
                ),
                "v1beta2": _beta(
                    "v1beta2",
                    apps_v1beta2.ControllerRevision,
                    _lifecycle((1, 8), (1, 9), "ControllerRevision"),
                    _no_defaults,
                ),
            },
            ControllerRevisionStrategy(),
            CONTROLLER_REVISION_COLUMNS,
            workload=False,
        ),
        _extensions_resource(
            "Deployment",
            "deployments",
            apps_v1.Deployment,
            _beta(
                "v1beta1",
                extensions_v1beta1.Deployment,
                _extensions_lifecycle((1, 1), "Deployment"),
                d.default_deployment_extensions,
                d.deployment_field_to_hub,
                d.deployment_field_from_hub,
            ),
            DeploymentStrategy(),
            DEPLOYMENT_COLUMNS,
            ("deploy",),
            _scale(("v1beta1", extensions_v1beta1)),
            creators={"rollback": DeploymentRollbackCreator()},
        ),
        _extensions_resource(
            "DaemonSet",
            "daemonsets",
            apps_v1.DaemonSet,
            _beta(
                "v1beta1",
                extensions_v1beta1.DaemonSet,
                _extensions_lifecycle((1, 1), "DaemonSet"),
                d.default_daemonset_extensions,
                d.daemonset_field_to_hub,
                d.daemonset_field_from_hub,
            ),
            DaemonSetStrategy(),
            DAEMONSET_COLUMNS,
            ("ds",),
            None,
        ),
        _extensions_resource(
            "ReplicaSet",
            "replicasets",
            apps_v1.ReplicaSet,
            _beta(
                "v1beta1",
                extensions_v1beta1.ReplicaSet,
                _extensions_lifecycle((1, 2), "ReplicaSet"),
                d.default_replicaset_extensions,
                _copy,
                _copy,
            ),
            ReplicaSetStrategy(),
            REPLICASET_COLUMNS,
            ("rs",),
            _scale(("v1beta1", extensions_v1beta1)),
        ),
    ]


def _no_defaults(obj: Object) -> None:
    """ControllerRevisions have no defaults in any version."""
