"""storage.k8s.io: StorageClass, VolumeAttachment, CSIDriver, CSINode, CSIStorageCapacity.

``v1`` is the hub and storage version of each.  ``v1beta1`` has the same
fields and defaults, so it is the hub renamed; kube-apiserver served it from
each kind's introduction until 1.22 (1.27 for CSIStorageCapacity), as the
prerelease-lifecycle tags of ``k8s.io/api`` and ``storage_storage.go`` say.
The v1 releases are the kinds' GA releases.

Schemas are generated (:mod:`kapi.apis.generated`); defaulting, validation,
strategies and printer columns are in :mod:`kapi.apis.storage_validation`.
kapi stores these objects; no controller attaches or provisions anything.
"""

from __future__ import annotations

from collections.abc import Callable

from kapi.apimachinery.unstructured import Object
from kapi.apis import storage_validation as sv
from kapi.apis.generated import storage_v1, storage_v1beta1
from kapi.features import FeatureGate
from kapi.registry.strategy import Strategy
from kapi.runtime.columns import Column
from kapi.runtime.schema import Struct
from kapi.runtime.scheme import (
    GroupVersionKind,
    Lifecycle,
    Resource,
    ResourceVersion,
    renamed_version,
)
from kapi.version import Version

GROUP = sv.GROUP
HUB = "v1"


def _resource(
    kind: str,
    plural: str,
    *,
    namespaced: bool,
    schemas: tuple[Struct, Struct],
    v1_since: Version,
    beta: tuple[Version, Version, Version],
    strategy: Strategy,
    columns: tuple[Column, ...],
    defaulter: Callable[[Object], None] | None = None,
    short_names: tuple[str, ...] = (),
    subresources: tuple[str, ...] = (),
) -> Resource:
    v1, v1beta1 = schemas
    introduced, deprecated, removed = beta
    return Resource(
        group=GROUP,
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        versions={
            HUB: ResourceVersion(HUB, v1, Lifecycle(introduced=v1_since), defaulter),
            "v1beta1": renamed_version(
                "v1beta1",
                v1beta1,
                Lifecycle(
                    introduced=introduced,
                    deprecated=deprecated,
                    removed=removed,
                    replacement=GroupVersionKind(GROUP, HUB, kind),
                ),
                defaulter,
            ),
        },
        hub_version=HUB,
        storage_version=HUB,
        strategy=strategy,
        short_names=short_names,
        subresources=subresources,
        columns=columns,
    )


def resources(gates: FeatureGate) -> list[Resource]:
    """The storage.k8s.io resources (fresh strategies for a new scheme)."""
    v1_22 = Version(1, 22)
    return [
        _resource(
            "StorageClass",
            "storageclasses",
            namespaced=False,
            schemas=(storage_v1.StorageClass, storage_v1beta1.StorageClass),
            v1_since=Version(1, 6),
            beta=(Version(1, 4), Version(1, 19), v1_22),
            strategy=sv.StorageClassStrategy(),
            columns=sv.STORAGE_CLASS_COLUMNS,
            defaulter=sv.default_storage_class,
            short_names=("sc",),
        ),
        _resource(
            "VolumeAttachment",
            "volumeattachments",
            namespaced=False,
            schemas=(storage_v1.VolumeAttachment, storage_v1beta1.VolumeAttachment),
            v1_since=Version(1, 13),
            beta=(Version(1, 10), Version(1, 19), v1_22),
            strategy=sv.VolumeAttachmentStrategy(gates),
            columns=sv.VOLUME_ATTACHMENT_COLUMNS,
            subresources=("status",),
        ),
        _resource(
            "CSIDriver",
            "csidrivers",
            namespaced=False,
            schemas=(storage_v1.CSIDriver, storage_v1beta1.CSIDriver),
            v1_since=Version(1, 18),
            beta=(Version(1, 14), Version(1, 19), v1_22),
            strategy=sv.CSIDriverStrategy(gates),
            columns=sv.CSI_DRIVER_COLUMNS,
            defaulter=sv.csi_driver_defaulter(gates),
        ),
        _resource(
            "CSINode",
            "csinodes",
            namespaced=False,
            schemas=(storage_v1.CSINode, storage_v1beta1.CSINode),
            v1_since=Version(1, 17),
            beta=(Version(1, 14), Version(1, 17), v1_22),
            strategy=sv.CSINodeStrategy(gates),
            columns=sv.CSI_NODE_COLUMNS,
        ),
        _resource(
            "CSIStorageCapacity",
            "csistoragecapacities",
            namespaced=True,
            schemas=(storage_v1.CSIStorageCapacity, storage_v1beta1.CSIStorageCapacity),
            v1_since=Version(1, 24),
            beta=(Version(1, 21), Version(1, 24), Version(1, 27)),
            strategy=sv.CSIStorageCapacityStrategy(),
            columns=sv.CSI_STORAGE_CAPACITY_COLUMNS,
        ),
    ]
