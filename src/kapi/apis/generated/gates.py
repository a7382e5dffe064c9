"""Which upstream ``+featureGate`` marker guards which generated field.

``kapi lint lifecycle`` checks that each of these fields carries the tag its
gate calls for at the release kapi models, even when the gate is GA or not yet
in ``kapi.features`` (then :func:`kapi.apis.generated.gated` gives no tag).
"""

from __future__ import annotations

#: ``(definition, property) -> gate``, as the markers in the facts say.
GATED_FIELDS: dict[tuple[str, str], str] = {
    ("io.k8s.api.autoscaling.v2.HPAScalingRules", "tolerance"): "HPAConfigurableTolerance",
    ("io.k8s.api.core.v1.Container", "resizePolicy"): "InPlacePodVerticalScaling",
    ("io.k8s.api.core.v1.Container", "restartPolicy"): "SidecarContainers",
    (
        "io.k8s.api.core.v1.ContainerStatus",
        "allocatedResources",
    ): "InPlacePodVerticalScalingAllocatedStatus",
    ("io.k8s.api.core.v1.ContainerStatus", "allocatedResourcesStatus"): "ResourceHealthStatus",
    ("io.k8s.api.core.v1.ContainerStatus", "resources"): "InPlacePodVerticalScaling",
    ("io.k8s.api.core.v1.ContainerStatus", "stopSignal"): "ContainerStopSignals",
    ("io.k8s.api.core.v1.ContainerStatus", "user"): "SupplementalGroupsPolicy",
    ("io.k8s.api.core.v1.ContainerStatus", "volumeMounts"): "RecursiveReadOnlyMounts",
    ("io.k8s.api.core.v1.EphemeralContainer", "resizePolicy"): "InPlacePodVerticalScaling",
    ("io.k8s.api.core.v1.EphemeralContainer", "restartPolicy"): "SidecarContainers",
    ("io.k8s.api.core.v1.EphemeralContainerCommon", "resizePolicy"): "InPlacePodVerticalScaling",
    ("io.k8s.api.core.v1.EphemeralContainerCommon", "restartPolicy"): "SidecarContainers",
    ("io.k8s.api.core.v1.LifecycleHandler", "sleep"): "PodLifecycleSleepAction",
    (
        "io.k8s.api.core.v1.PersistentVolumeClaimSpec",
        "volumeAttributesClassName",
    ): "VolumeAttributesClass",
    (
        "io.k8s.api.core.v1.PersistentVolumeClaimStatus",
        "allocatedResourceStatuses",
    ): "RecoverVolumeExpansionFailure",
    (
        "io.k8s.api.core.v1.PersistentVolumeClaimStatus",
        "allocatedResources",
    ): "RecoverVolumeExpansionFailure",
    (
        "io.k8s.api.core.v1.PersistentVolumeClaimStatus",
        "currentVolumeAttributesClassName",
    ): "VolumeAttributesClass",
    (
        "io.k8s.api.core.v1.PersistentVolumeClaimStatus",
        "modifyVolumeStatus",
    ): "VolumeAttributesClass",
    ("io.k8s.api.core.v1.PodCondition", "observedGeneration"): "PodObservedGenerationTracking",
    ("io.k8s.api.core.v1.PodSecurityContext", "seLinuxChangePolicy"): "SELinuxChangePolicy",
    (
        "io.k8s.api.core.v1.PodSecurityContext",
        "supplementalGroupsPolicy",
    ): "SupplementalGroupsPolicy",
    ("io.k8s.api.core.v1.PodSpec", "resourceClaims"): "DynamicResourceAllocation",
    ("io.k8s.api.core.v1.PodSpec", "resources"): "PodLevelResources",
    ("io.k8s.api.core.v1.PodStatus", "observedGeneration"): "PodObservedGenerationTracking",
    ("io.k8s.api.core.v1.PodStatus", "resize"): "InPlacePodVerticalScaling",
    ("io.k8s.api.core.v1.PodStatus", "resourceClaimStatuses"): "DynamicResourceAllocation",
    ("io.k8s.api.core.v1.ResourceRequirements", "claims"): "DynamicResourceAllocation",
    ("io.k8s.api.core.v1.ServiceSpec", "trafficDistribution"): "ServiceTrafficDistribution",
    ("io.k8s.api.core.v1.TypedObjectReference", "namespace"): "CrossNamespaceVolumeDataSource",
    ("io.k8s.api.core.v1.Volume", "image"): "ImageVolume",
    ("io.k8s.api.core.v1.VolumeMount", "recursiveReadOnly"): "RecursiveReadOnlyMounts",
    ("io.k8s.api.core.v1.VolumeMountStatus", "recursiveReadOnly"): "RecursiveReadOnlyMounts",
    ("io.k8s.api.core.v1.VolumeProjection", "clusterTrustBundle"): "ClusterTrustBundleProjection",
    ("io.k8s.api.core.v1.VolumeSource", "image"): "ImageVolume",
}
