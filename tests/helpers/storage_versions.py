"""What the KEP-2339 tests share: paths, the held start, and reading StorageVersions."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import httpx

from tests.conftest import KapiServer, etcd_prefix_for, session_etcd, storage_backend
from tests.helpers.wait import eventually

SV = "/apis/internal.apiserver.k8s.io/v1alpha1/storageversions"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
IDENTITY = "apiserver.kubernetes.io/identity=kube-apiserver"
HOOK = "poststarthook/built-in-resources-storage-version-updater"
#: The StorageVersions every server registers for the built-ins it serves by default.
BUILTINS = {
    "core.configmaps",
    "core.endpoints",
    "core.events",
    "core.limitranges",
    "core.namespaces",
    "core.nodes",
    "core.persistentvolumeclaims",
    "core.persistentvolumes",
    "core.pods",
    "core.podtemplates",
    "core.replicationcontrollers",
    "core.resourcequotas",
    "core.secrets",
    "core.serviceaccounts",
    "core.services",
    "admissionregistration.k8s.io.mutatingwebhookconfigurations",
    "admissionregistration.k8s.io.validatingwebhookconfigurations",
    "apiextensions.k8s.io.customresourcedefinitions",
    "apps.controllerrevisions",
    "apps.daemonsets",
    "apps.deployments",
    "apps.replicasets",
    "apps.statefulsets",
    "autoscaling.horizontalpodautoscalers",
    "batch.cronjobs",
    "batch.jobs",
    "coordination.k8s.io.leases",
    "discovery.k8s.io.endpointslices",
    "flowcontrol.apiserver.k8s.io.flowschemas",
    "flowcontrol.apiserver.k8s.io.prioritylevelconfigurations",
    "internal.apiserver.k8s.io.storageversions",
    "networking.k8s.io.ingressclasses",
    "networking.k8s.io.ingresses",
    "networking.k8s.io.networkpolicies",
    "policy.poddisruptionbudgets",
    "rbac.authorization.k8s.io.clusterrolebindings",
    "rbac.authorization.k8s.io.clusterroles",
    "rbac.authorization.k8s.io.rolebindings",
    "rbac.authorization.k8s.io.roles",
    "storage.k8s.io.csidrivers",
    "storage.k8s.io.csinodes",
    "storage.k8s.io.csistoragecapacities",
    "storage.k8s.io.storageclasses",
    "storage.k8s.io.volumeattachments",
    "scheduling.k8s.io.priorityclasses",
    "node.k8s.io.runtimeclasses",
    "certificates.k8s.io.certificatesigningrequests",
    "storagemigration.k8s.io.storageversionmigrations",
}


def wait_for_hold(server: KapiServer) -> None:
    """Wait until a ``--hold-storage-version-registration`` server logs that it holds
    (its identity lease exists by then, and nothing is registered yet)."""
    eventually(
        lambda: b"storage version registration held" in server.log_path.read_bytes(),
        what="the hold to be logged",
    )


def identities(http: httpx.Client) -> set[str]:
    """The IDs of the servers with an identity lease."""
    response = http.get(LEASES, params={"labelSelector": IDENTITY})
    assert response.status_code == 200, response.text
    return {lease["metadata"]["name"] for lease in response.json()["items"]}


def entries(sv: dict[str, Any]) -> dict[str, str]:
    """A StorageVersion's entries: server ID to encoding version."""
    return {
        e["apiServerID"]: e["encodingVersion"]
        for e in (sv.get("status") or {}).get("storageVersions") or []
    }


def storage_versions(http: httpx.Client) -> dict[str, dict[str, Any]]:
    """Every StorageVersion, by name."""
    response = http.get(SV)
    assert response.status_code == 200, response.text
    return {sv["metadata"]["name"]: sv for sv in response.json()["items"]}


def stored_object(server: KapiServer, key: str) -> dict[str, Any]:
    """The value stored at ``key`` (``/registry/...``), read beside the server: from its
    etcd prefix, or from its SQLite file (only readable while the server is stopped)."""
    if storage_backend() == "etcd":
        etcd_key = etcd_prefix_for(server.data_dir) + key[len("/registry") :]
        out = session_etcd().etcdctl("get", etcd_key, "--print-value-only")
        return dict(json.loads(out))
    connection = sqlite3.connect(server.data_dir / "kapi.db")
    try:
        row = connection.execute(
            "SELECT value, deleted FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1", (key,)
        ).fetchone()
    finally:
        connection.close()
    assert row is not None and not row[1], key
    return dict(json.loads(row[0]))
