"""The workload API's deprecated versions across releases, as upstream served them.

For each emulated release a table of upstream facts says which deprecated
group/versions of the workload API are served there and the exact KEP-1693
warning each answers with (a version deprecated later than the release is
served without one); every other deprecated version answers 404 and is
absent from discovery.  ``kapi deprecations`` then reports what was called.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kapi_cli import make_kapi

RBAC_V1 = "rbac.authorization.k8s.io/v1"
NET_V1 = "networking.k8s.io/v1"
FLOWCONTROL_V1 = "flowcontrol.apiserver.k8s.io/v1"
FLOWCONTROL_V1BETA3 = "flowcontrol.apiserver.k8s.io/v1beta3"
#: (group/version, resource, kind, introduced in, deprecated in, removed in (or None),
#: replacement group/version (or None)), from upstream's prerelease-lifecycle tags.
DEPRECATED = [
    ("extensions/v1beta1", "deployments", "Deployment", "1.1", "1.8", "1.16", "apps/v1"),
    ("extensions/v1beta1", "daemonsets", "DaemonSet", "1.1", "1.8", "1.16", "apps/v1"),
    ("extensions/v1beta1", "replicasets", "ReplicaSet", "1.2", "1.8", "1.16", "apps/v1"),
    ("extensions/v1beta1", "networkpolicies", "NetworkPolicy", "1.3", "1.9", "1.16", NET_V1),
    ("extensions/v1beta1", "ingresses", "Ingress", "1.1", "1.14", "1.22", NET_V1),
    (
        "extensions/v1beta1",
        "podsecuritypolicies",
        "PodSecurityPolicy",
        "1.2",
        "1.11",
        "1.16",
        "policy/v1beta1",
    ),
    ("policy/v1beta1", "podsecuritypolicies", "PodSecurityPolicy", "1.10", "1.21", "1.25", None),
    ("apps/v1beta1", "deployments", "Deployment", "1.6", "1.8", "1.16", "apps/v1"),
    ("apps/v1beta1", "statefulsets", "StatefulSet", "1.5", "1.8", "1.16", "apps/v1"),
    ("apps/v1beta1", "controllerrevisions", "ControllerRevision", "1.7", "1.8", "1.16", "apps/v1"),
    ("apps/v1beta2", "deployments", "Deployment", "1.8", "1.9", "1.16", "apps/v1"),
    ("apps/v1beta2", "daemonsets", "DaemonSet", "1.8", "1.9", "1.16", "apps/v1"),
    ("apps/v1beta2", "replicasets", "ReplicaSet", "1.8", "1.9", "1.16", "apps/v1"),
    ("apps/v1beta2", "statefulsets", "StatefulSet", "1.8", "1.9", "1.16", "apps/v1"),
    ("apps/v1beta2", "controllerrevisions", "ControllerRevision", "1.8", "1.9", "1.16", "apps/v1"),
    ("batch/v1beta1", "cronjobs", "CronJob", "1.8", "1.21", "1.25", "batch/v1"),
    (
        "autoscaling/v2beta1",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        "1.8",
        "1.22",
        "1.25",
        "autoscaling/v2",
    ),
    (
        "autoscaling/v2beta2",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
        "1.12",
        "1.23",
        "1.26",
        "autoscaling/v2",
    ),
    ("rbac.authorization.k8s.io/v1beta1", "roles", "Role", "1.6", "1.17", "1.22", RBAC_V1),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "rolebindings",
        "RoleBinding",
        "1.6",
        "1.17",
        "1.22",
        RBAC_V1,
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "clusterroles",
        "ClusterRole",
        "1.6",
        "1.17",
        "1.22",
        RBAC_V1,
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        "1.6",
        "1.17",
        "1.22",
        RBAC_V1,
    ),
    # Deprecated with no removal planned and nothing to move to.
    ("v1", "componentstatuses", "ComponentStatus", "1.0", "1.19", None, None),
    (
        "scheduling.k8s.io/v1beta1",
        "priorityclasses",
        "PriorityClass",
        "1.11",
        "1.14",
        "1.22",
        "scheduling.k8s.io/v1",
    ),
    ("node.k8s.io/v1beta1", "runtimeclasses", "RuntimeClass", "1.14", "1.22", "1.25", None),
    (
        "certificates.k8s.io/v1beta1",
        "certificatesigningrequests",
        "CertificateSigningRequest",
        "1.6",
        "1.19",
        "1.22",
        "certificates.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "flowschemas",
        "FlowSchema",
        "1.20",
        "1.23",
        "1.26",
        FLOWCONTROL_V1BETA3,
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "prioritylevelconfigurations",
        "PriorityLevelConfiguration",
        "1.20",
        "1.23",
        "1.26",
        FLOWCONTROL_V1BETA3,
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "flowschemas",
        "FlowSchema",
        "1.23",
        "1.26",
        "1.29",
        FLOWCONTROL_V1BETA3,
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "prioritylevelconfigurations",
        "PriorityLevelConfiguration",
        "1.23",
        "1.26",
        "1.29",
        FLOWCONTROL_V1BETA3,
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "flowschemas",
        "FlowSchema",
        "1.26",
        "1.29",
        "1.32",
        FLOWCONTROL_V1,
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "prioritylevelconfigurations",
        "PriorityLevelConfiguration",
        "1.26",
        "1.29",
        "1.32",
        FLOWCONTROL_V1,
    ),
]
STORAGE_V1 = "storage.k8s.io/v1"
DEPRECATED += [
    ("storage.k8s.io/v1beta1", "storageclasses", "StorageClass", "1.4", "1.19", "1.22", STORAGE_V1),
    (
        "storage.k8s.io/v1beta1",
        "volumeattachments",
        "VolumeAttachment",
        "1.10",
        "1.19",
        "1.22",
        STORAGE_V1,
    ),
    ("storage.k8s.io/v1beta1", "csidrivers", "CSIDriver", "1.14", "1.19", "1.22", STORAGE_V1),
    ("storage.k8s.io/v1beta1", "csinodes", "CSINode", "1.14", "1.17", "1.22", STORAGE_V1),
    (
        "storage.k8s.io/v1beta1",
        "csistoragecapacities",
        "CSIStorageCapacity",
        "1.21",
        "1.24",
        "1.27",
        STORAGE_V1,
    ),
]
RELEASES = ["1.15", "1.21", "1.24", "1.25", "1.31"]
CLUSTER_SCOPED = {"clusterroles", "clusterrolebindings", "podsecuritypolicies", "componentstatuses"}
CLUSTER_SCOPED |= {"storageclasses", "volumeattachments", "csidrivers", "csinodes"}
CLUSTER_SCOPED |= {"priorityclasses", "runtimeclasses", "certificatesigningrequests"}
CLUSTER_SCOPED |= {"flowschemas", "prioritylevelconfigurations"}


def _minor(release: str) -> int:
    return int(release.split(".")[1])


def expected_warning(
    group_version: str, kind: str, deprecated: str, removed: str | None, replacement: str | None
) -> str:
    """Upstream's KEP-1693 text: the removal and the replacement are each said when known."""
    text = f"{group_version} {kind} is deprecated in v{deprecated}+"
    if removed:
        text += f", unavailable in v{removed}+"
    if replacement:
        text += f"; use {replacement} {kind}"
    return text


def served_at(at: int, introduced: str, removed: str | None) -> bool:
    return _minor(introduced) <= at and (removed is None or at < _minor(removed))


@pytest.fixture(scope="module", params=RELEASES)
def release(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, KapiServer]]:
    name = f"workloads-{request.param.replace('.', '-')}"
    for server in serve_with_flags(tmp_path_factory, name, f"--emulated-version={request.param}"):
        yield request.param, server


def _path(group_version: str, resource: str) -> str:
    root = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    if resource in CLUSTER_SCOPED:
        return f"{root}/{resource}"
    return f"{root}/namespaces/default/{resource}"


def test_served_and_warned_as_upstream(release: tuple[str, KapiServer]) -> None:
    version, server = release
    at = _minor(version)
    with server.client() as http:
        for (
            group_version,
            resource,
            kind,
            introduced,
            deprecated,
            removed,
            replacement,
        ) in DEPRECATED:
            response = http.get(_path(group_version, resource))
            if not served_at(at, introduced, removed):
                assert response.status_code == 404, (version, group_version, resource)
                continue
            assert response.status_code == 200, (version, group_version, resource, response.text)
            warnings = [w.split('"')[1] for w in response.headers.get_list("warning")]
            if at >= _minor(deprecated):
                text = expected_warning(group_version, kind, deprecated, removed, replacement)
                assert warnings == [text], (version, group_version, resource)
            else:
                assert warnings == [], (version, group_version, resource)
        group_versions = {
            v["groupVersion"] for g in http.get("/apis").json()["groups"] for v in g["versions"]
        }
        for group_version in {row[0] for row in DEPRECATED} - {"v1"}:  # core: /api, always
            served = any(
                served_at(at, row[3], row[5]) for row in DEPRECATED if row[0] == group_version
            )
            assert (group_version in group_versions) == served, (version, group_version)


def test_kapi_deprecations_reports_the_calls(release: tuple[str, KapiServer]) -> None:
    version, server = release
    at = _minor(version)
    with server.client() as http:
        for group_version, resource, *_ in DEPRECATED:
            http.get(_path(group_version, resource))
    report = make_kapi(server).run("deprecations", "-o", "json")
    assert report.returncode == 0, report
    items = json.loads(report.stdout)["items"]
    reported = {
        (f"{i['group']}/{i['version']}" if i["group"] else i["version"], i["resource"])
        for i in items
    }
    expected = {
        (gv, resource)
        for gv, resource, _, introduced, deprecated, removed, _ in DEPRECATED
        if served_at(at, introduced, removed) and _minor(deprecated) <= at
    }
    assert expected <= reported, (version, expected - reported)
