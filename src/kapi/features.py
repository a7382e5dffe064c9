"""Feature gates, parsed from ``--feature-gates`` as kube-apiserver does.

Gates are versioned as upstream's ``featuregate.VersionedSpecs``: each gate
lists the release at which it entered each stage, and a server emulating an
older release (``--emulated-version``) gets the stage, default and lock of
that release.  A gate not yet introduced there is pre-alpha: off, and not
settable.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from kapi.version import DEFAULT_VERSION, Version


class Stage(Enum):
    PRE_ALPHA = "PRE-ALPHA"
    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = "GA"
    #: On its way out (upstream's ``featuregate.Deprecated``); fields it guards are deprecated.
    DEPRECATED = "DEPRECATED"


@dataclass(frozen=True)
class FeatureSpec:
    """A gate's state from release ``since`` on (until the gate's next spec)."""

    since: Version
    default: bool
    stage: Stage
    #: GA gates are locked to their default: setting them otherwise is an error.
    locked: bool = False


_PRE_ALPHA = FeatureSpec(Version(0, 0), False, Stage.PRE_ALPHA)

#: Known gates, each with its specs oldest first, as upstream declares them.
KNOWN_FEATURES: dict[str, tuple[FeatureSpec, ...]] = {
    "WarningHeaders": (
        FeatureSpec(Version(1, 19), True, Stage.BETA),
        FeatureSpec(Version(1, 22), True, Stage.GA, locked=True),
    ),
    "APIServerIdentity": (
        FeatureSpec(Version(1, 20), False, Stage.ALPHA),
        FeatureSpec(Version(1, 26), True, Stage.BETA),
    ),
    # Alpha and off upstream; kapi serves KEP-2339 whole, so it defaults to on.
    "StorageVersionAPI": (FeatureSpec(Version(1, 20), True, Stage.ALPHA),),
    # Alpha (beta from 1.35) and off upstream; kapi serves storagemigration.k8s.io and
    # its migrator with KEP-2339, so it defaults to on.
    "StorageVersionMigrator": (FeatureSpec(Version(1, 30), True, Stage.ALPHA),),
    "CRDValidationRatcheting": (
        FeatureSpec(Version(1, 28), False, Stage.ALPHA),
        FeatureSpec(Version(1, 30), True, Stage.BETA),
        FeatureSpec(Version(1, 33), True, Stage.GA, locked=True),
    ),
    "DeclarativeValidation": (FeatureSpec(Version(1, 33), True, Stage.BETA),),
    "CustomResourceFieldSelectors": (
        FeatureSpec(Version(1, 30), False, Stage.ALPHA),
        FeatureSpec(Version(1, 31), True, Stage.BETA),
        FeatureSpec(Version(1, 32), True, Stage.GA, locked=True),
    ),
    # Gates of fields of the built-in kinds (KEP-2558 lifecycle tags follow these).
    # Lease spec.strategy and spec.preferredHolder.
    "CoordinatedLeaderElection": (
        FeatureSpec(Version(1, 31), False, Stage.ALPHA),
        FeatureSpec(Version(1, 33), False, Stage.BETA),
    ),
    # matchConditions of validating and mutating webhooks.
    "AdmissionWebhookMatchConditions": (
        FeatureSpec(Version(1, 27), False, Stage.ALPHA),
        FeatureSpec(Version(1, 28), True, Stage.BETA),
        FeatureSpec(Version(1, 30), True, Stage.GA, locked=True),
    ),
    # EndpointSlice endpoints[].hints.
    "TopologyAwareHints": (
        FeatureSpec(Version(1, 21), False, Stage.ALPHA),
        FeatureSpec(Version(1, 23), False, Stage.BETA),
        FeatureSpec(Version(1, 24), True, Stage.BETA),
        FeatureSpec(Version(1, 33), True, Stage.GA, locked=True),
    ),
    # Fields of the generated built-in kinds behind upstream ``+featureGate`` markers
    # (kapi.apis.generated.GATED_FIELDS says which), as of Kubernetes 1.33.
    # Projected volume sources[].clusterTrustBundle.
    "ClusterTrustBundleProjection": (
        FeatureSpec(Version(1, 29), False, Stage.ALPHA),
        FeatureSpec(Version(1, 33), False, Stage.BETA),
    ),
    # Pod status containerStatuses[].stopSignal.
    "ContainerStopSignals": (FeatureSpec(Version(1, 33), False, Stage.ALPHA),),
    # PersistentVolumeClaim spec.dataSourceRef.namespace.
    "CrossNamespaceVolumeDataSource": (FeatureSpec(Version(1, 26), False, Stage.ALPHA),),
    # Pod spec.resourceClaims, containers[].resources.claims, status.resourceClaimStatuses.
    "DynamicResourceAllocation": (
        FeatureSpec(Version(1, 26), False, Stage.ALPHA),
        FeatureSpec(Version(1, 32), False, Stage.BETA),
    ),
    # HorizontalPodAutoscaler (autoscaling/v2) spec.behavior.scaleUp/scaleDown.tolerance.
    "HPAConfigurableTolerance": (FeatureSpec(Version(1, 33), False, Stage.ALPHA),),
    # Pod spec.volumes[].image.
    "ImageVolume": (
        FeatureSpec(Version(1, 31), False, Stage.ALPHA),
        FeatureSpec(Version(1, 33), False, Stage.BETA),
    ),
    # Containers' resizePolicy, status containerStatuses[].resources and status.resize.
    "InPlacePodVerticalScaling": (
        FeatureSpec(Version(1, 27), False, Stage.ALPHA),
        FeatureSpec(Version(1, 33), True, Stage.BETA),
    ),
    # Pod status containerStatuses[].allocatedResources.
    "InPlacePodVerticalScalingAllocatedStatus": (
        FeatureSpec(Version(1, 32), False, Stage.ALPHA),
        FeatureSpec(Version(1, 33), False, Stage.DEPRECATED),
    ),
    # Pod spec.resources (pod-level requests and limits).
    "PodLevelResources": (FeatureSpec(Version(1, 32), False, Stage.ALPHA),),
    # Lifecycle handlers' sleep action (postStart, preStop).
    "PodLifecycleSleepAction": (
        FeatureSpec(Version(1, 29), False, Stage.ALPHA),
        FeatureSpec(Version(1, 30), True, Stage.BETA),
    ),
    # Pod status.observedGeneration and status.conditions[].observedGeneration.
    "PodObservedGenerationTracking": (FeatureSpec(Version(1, 33), False, Stage.ALPHA),),
    # PersistentVolumeClaim status.allocatedResources and status.allocatedResourceStatuses.
    "RecoverVolumeExpansionFailure": (
        FeatureSpec(Version(1, 23), False, Stage.ALPHA),
        FeatureSpec(Version(1, 32), True, Stage.BETA),
    ),
    # volumeMounts[].recursiveReadOnly and its status in containerStatuses[].volumeMounts.
    "RecursiveReadOnlyMounts": (
        FeatureSpec(Version(1, 30), False, Stage.ALPHA),
        FeatureSpec(Version(1, 31), True, Stage.BETA),
        FeatureSpec(Version(1, 33), True, Stage.GA, locked=True),
    ),
    # Pod status containerStatuses[].allocatedResourcesStatus.
    "ResourceHealthStatus": (FeatureSpec(Version(1, 31), False, Stage.ALPHA),),
    # Pod spec.securityContext.seLinuxChangePolicy.
    "SELinuxChangePolicy": (
        FeatureSpec(Version(1, 32), False, Stage.ALPHA),
        FeatureSpec(Version(1, 33), True, Stage.BETA),
    ),
    # Service spec.trafficDistribution.
    "ServiceTrafficDistribution": (
        FeatureSpec(Version(1, 30), False, Stage.ALPHA),
        FeatureSpec(Version(1, 31), True, Stage.BETA),
        FeatureSpec(Version(1, 33), True, Stage.GA, locked=True),
    ),
    # CSIDriver spec.storageCapacity: drivers publishing CSIStorageCapacity objects.
    "CSIStorageCapacity": (
        FeatureSpec(Version(1, 19), False, Stage.ALPHA),
        FeatureSpec(Version(1, 21), True, Stage.BETA),
        FeatureSpec(Version(1, 24), True, Stage.GA, locked=True),
    ),
    # CSIDriver spec.nodeAllocatableUpdatePeriodSeconds.
    "MutableCSINodeAllocatableCount": (FeatureSpec(Version(1, 33), False, Stage.ALPHA),),
    # CSIDriver spec.seLinuxMount.
    "SELinuxMountReadWriteOncePod": (
        FeatureSpec(Version(1, 25), False, Stage.ALPHA),
        FeatureSpec(Version(1, 27), False, Stage.BETA),
        FeatureSpec(Version(1, 28), True, Stage.BETA),
    ),
    # Pod spec.hostUsers (user namespaces).
    "UserNamespacesSupport": (
        FeatureSpec(Version(1, 25), False, Stage.ALPHA),
        FeatureSpec(Version(1, 30), False, Stage.BETA),
        FeatureSpec(Version(1, 33), True, Stage.BETA),
    ),
    # Containers' restartPolicy (sidecar init containers).
    "SidecarContainers": (
        FeatureSpec(Version(1, 28), False, Stage.ALPHA),
        FeatureSpec(Version(1, 29), True, Stage.BETA),
        FeatureSpec(Version(1, 33), True, Stage.GA, locked=True),
    ),
    # Pod spec.securityContext.supplementalGroupsPolicy, status containerStatuses[].user.
    "SupplementalGroupsPolicy": (
        FeatureSpec(Version(1, 31), False, Stage.ALPHA),
        FeatureSpec(Version(1, 33), True, Stage.BETA),
    ),
    # PersistentVolumeClaim spec.volumeAttributesClassName, status.currentVolumeAttributesClassName
    # and status.modifyVolumeStatus.
    "VolumeAttributesClass": (
        FeatureSpec(Version(1, 29), False, Stage.ALPHA),
        FeatureSpec(Version(1, 31), False, Stage.BETA),
    ),
}

#: Which gate guards which field of a hand-declared built-in kind, by definition name
#: and property (the generated kinds' fields are in kapi.apis.generated.gates, read from
#: upstream's ``+featureGate`` markers).  A gate that is GA at the emulated version
#: leaves its field untagged, but the linter still checks that a non-GA gate's field
#: carries a tag.
GATED_FIELDS: dict[tuple[str, str], str] = {
    ("io.k8s.api.coordination.v1.LeaseSpec", "strategy"): "CoordinatedLeaderElection",
    ("io.k8s.api.coordination.v1.LeaseSpec", "preferredHolder"): "CoordinatedLeaderElection",
    (
        "io.k8s.api.admissionregistration.v1.ValidatingWebhook",
        "matchConditions",
    ): "AdmissionWebhookMatchConditions",
    (
        "io.k8s.api.admissionregistration.v1.MutatingWebhook",
        "matchConditions",
    ): "AdmissionWebhookMatchConditions",
    ("io.k8s.api.discovery.v1.Endpoint", "hints"): "TopologyAwareHints",
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion",
        "selectableFields",
    ): "CustomResourceFieldSelectors",
}


def spec_at(name: str, version: Version) -> FeatureSpec:
    """Gate ``name``'s spec at release ``version``: its newest spec not after it."""
    current = _PRE_ALPHA
    for spec in KNOWN_FEATURES[name]:
        if spec.since > version:
            break
        current = spec
    return current


class FeatureGate:
    """The set of enabled features for one server, at the release it emulates."""

    def __init__(
        self, overrides: dict[str, bool] | None = None, emulated_version: Version = DEFAULT_VERSION
    ) -> None:
        self.emulated_version = emulated_version
        #: What ``--feature-gates`` set, kept to re-resolve at another version (:meth:`at`).
        self.overrides: dict[str, bool] = {}
        self._enabled = {name: spec_at(name, emulated_version).default for name in KNOWN_FEATURES}
        for name, value in (overrides or {}).items():
            self.set(name, value)

    def set(self, name: str, value: bool) -> None:
        if name not in KNOWN_FEATURES:
            raise ValueError(f"unrecognized feature gate: {name}")
        spec = spec_at(name, self.emulated_version)
        if spec.locked and value != spec.default:
            raise ValueError(
                f"cannot set feature gate {name} to {str(value).lower()}, "
                f"feature is locked to {str(spec.default).lower()}"
            )
        if spec.stage is Stage.PRE_ALPHA:
            raise ValueError(
                f"cannot set feature gate {name} to {str(value).lower()}, "
                f"feature is PreAlpha at emulated version {self.emulated_version}"
            )
        self.overrides[name] = value
        self._enabled[name] = value

    def enabled(self, name: str) -> bool:
        return self._enabled[name]

    def at(self, emulated_version: Version) -> FeatureGate:
        """The same ``--feature-gates`` resolved at another release (may raise ValueError)."""
        if emulated_version == self.emulated_version:
            return self
        return FeatureGate(self.overrides, emulated_version)

    @classmethod
    def parse(cls, text: str, emulated_version: Version = DEFAULT_VERSION) -> FeatureGate:
        """Parse ``Name=true,Other=false`` (the ``--feature-gates`` syntax)."""
        overrides: dict[str, bool] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, sep, raw = item.partition("=")
            if not sep or raw.lower() not in ("true", "false"):
                raise ValueError(
                    f"missing bool value for {name}"
                    if not sep
                    else f"invalid value of {name}={raw}, err: strconv.ParseBool: "
                    f'parsing "{raw}": invalid syntax'
                )
            overrides[name.strip()] = raw.lower() == "true"
        return cls(overrides, emulated_version)
