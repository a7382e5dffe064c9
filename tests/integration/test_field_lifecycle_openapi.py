"""KEP-2558: ``x-kubernetes-api-lifecycle`` in /openapi/v2 and /openapi/v3 of a real server.

Which properties carry the extension, and with what, is written out below as data
from upstream: each field's ``+featureGate`` marker (or, for hand-declared kinds, the
gate upstream's strategy drops it by) and that gate's stage in each release
(pkg/features/kube_features.go of Kubernetes 1.33).  A field is tagged only in the
releases where its gate is alpha, beta or deprecated: not before the gate existed,
and not once it is GA (SidecarContainers, RecursiveReadOnlyMounts and
TopologyAwareHints are GA in 1.33, so their fields are tagged only at older emulated
versions).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kapi_cli import make_kapi
from tests.helpers.kubectl import make_kubectl

EXTENSION = "x-kubernetes-api-lifecycle"
LEASE_SPEC = "io.k8s.api.coordination.v1.LeaseSpec"


def tagged(definitions: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """(definition, property) -> extension value, for every property carrying it."""
    out = {}
    for name, definition in definitions.items():
        for prop, schema in (definition.get("properties") or {}).items():
            if EXTENSION in schema:
                out[(name, prop)] = schema[EXTENSION]
    return out


def v3_tagged(http: httpx.Client) -> dict[tuple[str, str], Any]:
    index = http.get("/openapi/v3")
    assert index.status_code == 200
    out: dict[tuple[str, str], Any] = {}
    for entry in index.json()["paths"].values():
        document = http.get(entry["serverRelativeURL"])
        assert document.status_code == 200
        out.update(tagged(document.json().get("components", {}).get("schemas", {})))
    return out


def v2_tagged(http: httpx.Client) -> dict[tuple[str, str], Any]:
    document = http.get("/openapi/v2", headers={"Accept": "application/json"})
    assert document.status_code == 200
    return tagged(document.json()["definitions"])


CORE = "io.k8s.api.core.v1."
STORAGE = "io.k8s.api.storage.v1."

#: (definition, property, gate, the gate's first release, its stage at 1.30, 1.32, 1.33);
#: ``None``: no tag in that release (the gate did not exist yet, or is GA).
FIELDS: list[tuple[str, str, str, str, str | None, str | None, str | None]] = [
    (LEASE_SPEC, "strategy", "CoordinatedLeaderElection", "v1.31", None, "alpha", "beta"),
    (LEASE_SPEC, "preferredHolder", "CoordinatedLeaderElection", "v1.31", None, "alpha", "beta"),
    (
        "io.k8s.api.discovery.v1.Endpoint",
        "hints",
        "TopologyAwareHints",
        "v1.21",
        "beta",
        "beta",
        None,
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion",
        "selectableFields",
        "CustomResourceFieldSelectors",
        "v1.30",
        "alpha",
        None,
        None,
    ),
    # The pod template of CronJob (batch/v1 and batch/v1beta1).
    (
        CORE + "Container",
        "resizePolicy",
        "InPlacePodVerticalScaling",
        "v1.27",
        "alpha",
        "alpha",
        "beta",
    ),
    (
        CORE + "EphemeralContainer",
        "resizePolicy",
        "InPlacePodVerticalScaling",
        "v1.27",
        "alpha",
        "alpha",
        "beta",
    ),
    (CORE + "Container", "restartPolicy", "SidecarContainers", "v1.28", "beta", "beta", None),
    (
        CORE + "EphemeralContainer",
        "restartPolicy",
        "SidecarContainers",
        "v1.28",
        "beta",
        "beta",
        None,
    ),
    (
        CORE + "LifecycleHandler",
        "sleep",
        "PodLifecycleSleepAction",
        "v1.29",
        "beta",
        "beta",
        "beta",
    ),
    # Node status (core/v1 nodes).
    (
        CORE + "NodeRuntimeHandlerFeatures",
        "recursiveReadOnlyMounts",
        "RecursiveReadOnlyMounts",
        "v1.30",
        "alpha",
        "beta",
        None,
    ),
    # The field came in 1.32, but kapi tags by its gate's history (beta since 1.30); the
    # generator has no per-field introduction release.
    (
        CORE + "NodeRuntimeHandlerFeatures",
        "userNamespaces",
        "UserNamespacesSupport",
        "v1.25",
        "beta",
        "beta",
        "beta",
    ),
    (CORE + "NodeStatus", "features", "SupplementalGroupsPolicy", "v1.31", None, "alpha", "beta"),
    (
        CORE + "PersistentVolumeClaimSpec",
        "volumeAttributesClassName",
        "VolumeAttributesClass",
        "v1.29",
        "alpha",
        "beta",
        "beta",
    ),
    (
        CORE + "PersistentVolumeSpec",
        "volumeAttributesClassName",
        "VolumeAttributesClass",
        "v1.29",
        "alpha",
        "beta",
        "beta",
    ),
    (
        CORE + "PodSecurityContext",
        "seLinuxChangePolicy",
        "SELinuxChangePolicy",
        "v1.32",
        None,
        "alpha",
        "beta",
    ),
    (
        CORE + "PodSecurityContext",
        "supplementalGroupsPolicy",
        "SupplementalGroupsPolicy",
        "v1.31",
        None,
        "alpha",
        "beta",
    ),
    (
        CORE + "PodSpec",
        "resourceClaims",
        "DynamicResourceAllocation",
        "v1.26",
        "alpha",
        "beta",
        "beta",
    ),
    (
        CORE + "ResourceRequirements",
        "claims",
        "DynamicResourceAllocation",
        "v1.26",
        "alpha",
        "beta",
        "beta",
    ),
    (CORE + "PodSpec", "resources", "PodLevelResources", "v1.32", None, "alpha", "alpha"),
    (
        CORE + "TypedObjectReference",
        "namespace",
        "CrossNamespaceVolumeDataSource",
        "v1.26",
        "alpha",
        "alpha",
        "alpha",
    ),
    (CORE + "Volume", "image", "ImageVolume", "v1.31", None, "alpha", "beta"),
    (
        CORE + "VolumeMount",
        "recursiveReadOnly",
        "RecursiveReadOnlyMounts",
        "v1.30",
        "alpha",
        "beta",
        None,
    ),
    (
        CORE + "VolumeProjection",
        "clusterTrustBundle",
        "ClusterTrustBundleProjection",
        "v1.29",
        "alpha",
        "alpha",
        "beta",
    ),
    # storage.k8s.io (VolumeAttachment's inline volume spec is a PersistentVolumeSpec).
    (
        CORE + "PersistentVolumeSpec",
        "volumeAttributesClassName",
        "VolumeAttributesClass",
        "v1.29",
        "alpha",
        "beta",
        "beta",
    ),
    (
        STORAGE + "CSIDriverSpec",
        "nodeAllocatableUpdatePeriodSeconds",
        "MutableCSINodeAllocatableCount",
        "v1.33",
        None,
        None,
        "alpha",
    ),
    (
        STORAGE + "CSIDriverSpec",
        "seLinuxMount",
        "SELinuxMountReadWriteOncePod",
        "v1.25",
        "beta",
        "beta",
        "beta",
    ),
    (
        STORAGE + "VolumeError",
        "errorCode",
        "MutableCSINodeAllocatableCount",
        "v1.33",
        None,
        None,
        "alpha",
    ),
    # The workload kinds' pod, service, PVC and HPA fields (pods, services, statefulsets, HPAs).
    (
        "io.k8s.api.autoscaling.v2.HPAScalingRules",
        "tolerance",
        "HPAConfigurableTolerance",
        "v1.33",
        None,
        None,
        "alpha",
    ),
    (
        CORE + "ContainerStatus",
        "allocatedResources",
        "InPlacePodVerticalScalingAllocatedStatus",
        "v1.32",
        None,
        "alpha",
        "deprecated",
    ),
    (
        CORE + "ContainerStatus",
        "allocatedResourcesStatus",
        "ResourceHealthStatus",
        "v1.31",
        None,
        "alpha",
        "alpha",
    ),
    (
        CORE + "ContainerStatus",
        "resources",
        "InPlacePodVerticalScaling",
        "v1.27",
        "alpha",
        "alpha",
        "beta",
    ),
    (CORE + "ContainerStatus", "stopSignal", "ContainerStopSignals", "v1.33", None, None, "alpha"),
    (CORE + "ContainerStatus", "user", "SupplementalGroupsPolicy", "v1.31", None, "alpha", "beta"),
    (
        CORE + "ContainerStatus",
        "volumeMounts",
        "RecursiveReadOnlyMounts",
        "v1.30",
        "alpha",
        "beta",
        None,
    ),
    (
        CORE + "PersistentVolumeClaimStatus",
        "allocatedResourceStatuses",
        "RecoverVolumeExpansionFailure",
        "v1.23",
        "alpha",
        "beta",
        "beta",
    ),
    (
        CORE + "PersistentVolumeClaimStatus",
        "allocatedResources",
        "RecoverVolumeExpansionFailure",
        "v1.23",
        "alpha",
        "beta",
        "beta",
    ),
    (
        CORE + "PersistentVolumeClaimStatus",
        "currentVolumeAttributesClassName",
        "VolumeAttributesClass",
        "v1.29",
        "alpha",
        "beta",
        "beta",
    ),
    (
        CORE + "PersistentVolumeClaimStatus",
        "modifyVolumeStatus",
        "VolumeAttributesClass",
        "v1.29",
        "alpha",
        "beta",
        "beta",
    ),
    (
        CORE + "PodCondition",
        "observedGeneration",
        "PodObservedGenerationTracking",
        "v1.33",
        None,
        None,
        "alpha",
    ),
    (
        CORE + "PodStatus",
        "observedGeneration",
        "PodObservedGenerationTracking",
        "v1.33",
        None,
        None,
        "alpha",
    ),
    (CORE + "PodStatus", "resize", "InPlacePodVerticalScaling", "v1.27", "alpha", "alpha", "beta"),
    (
        CORE + "PodStatus",
        "resourceClaimStatuses",
        "DynamicResourceAllocation",
        "v1.26",
        "alpha",
        "beta",
        "beta",
    ),
    (
        CORE + "ServiceSpec",
        "trafficDistribution",
        "ServiceTrafficDistribution",
        "v1.30",
        "alpha",
        "beta",
        None,
    ),
    (
        CORE + "VolumeMountStatus",
        "recursiveReadOnly",
        "RecursiveReadOnlyMounts",
        "v1.30",
        "alpha",
        "beta",
        None,
    ),
]


def expected(release: str) -> dict[tuple[str, str], Any]:
    """(definition, property) -> extension value published at ``release``."""
    column = {"1.30": 4, "1.32": 5, "1.33": 6}[release]
    out = {}
    for row in FIELDS:
        definition, prop, gate, min_version = row[:4]
        status = row[column]
        if status is not None:
            value = {"minVersion": min_version, "status": status, "featureGate": gate}
            out[(definition, prop)] = {"kubernetes": value}
    return out


@pytest.fixture(scope="module")
def server_1_32(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """CoordinatedLeaderElection was alpha in 1.32, SidecarContainers beta."""
    yield from serve_with_flags(tmp_path_factory, "lifecycle-1-32", "--emulated-version=1.32")


@pytest.fixture(scope="module")
def server_1_30(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """Lease had no coordinated-election fields before 1.31; pod-level resources came in 1.32."""
    yield from serve_with_flags(tmp_path_factory, "lifecycle-1-30", "--emulated-version=1.30")


def test_extension_on_exactly_the_tagged_fields(http: httpx.Client) -> None:
    assert v3_tagged(http) == expected("1.33")
    assert v2_tagged(http) == expected("1.33")


def test_older_emulated_version_publishes_that_releases_stage(server_1_32: KapiServer) -> None:
    with server_1_32.client() as http:
        assert v3_tagged(http) == expected("1.32")
        assert v2_tagged(http) == expected("1.32")


def test_nothing_before_the_field_existed(server_1_30: KapiServer) -> None:
    with server_1_30.client() as http:
        lease = http.get("/openapi/v3/apis/coordination.k8s.io/v1")
        assert lease.status_code == 200
        spec = lease.json()["components"]["schemas"][LEASE_SPEC]["properties"]
        assert EXTENSION not in spec["strategy"]
        assert v3_tagged(http) == expected("1.30")
        assert v2_tagged(http) == expected("1.30")


def _flat(text: str) -> str:
    """Explain output with its word wrapping undone."""
    return " ".join(text.split())


def test_kubectl_explain_shows_the_stage_in_the_description(
    kapi_server: KapiServer, server_1_32: KapiServer, server_1_30: KapiServer, tmp_path: Path
) -> None:
    for server, note in (
        (kapi_server, "beta"),
        (server_1_32, "alpha"),
        (server_1_30, None),
    ):
        home = tmp_path / server.url.rsplit(":", 1)[1]
        home.mkdir()
        kubectl = make_kubectl(server, home)
        page = _flat(kubectl.ok("explain", "lease.spec.strategy").stdout)
        sentence = "Lifecycle (kubernetes): {}, feature gate CoordinatedLeaderElection"
        if note is None:
            assert "Lifecycle (kubernetes)" not in page
        else:
            assert sentence.format(note) + ", field since v1.31." in page


def test_kapi_explain_shows_a_lifecycle_block_and_marks(kapi_server: KapiServer) -> None:
    kapi = make_kapi(kapi_server)
    field = kapi.ok("explain", "lease.spec.strategy").stdout.splitlines()
    block = field.index("LIFECYCLE:")
    assert field[block + 1] == (
        "    kubernetes: beta, feature gate CoordinatedLeaderElection, field since v1.31"
    )
    fields = kapi.ok("explain", "lease.spec").out_lines
    assert "  strategy\t<string> -beta-" in fields
    assert "  preferredHolder\t<string> -beta-" in fields
    assert "  holderIdentity\t<string>" in fields
