"""storagemigration.k8s.io/v1beta1 StorageVersionMigration and storage migration on a real
``kapi serve``: kubectl and the API create, read and list migrations, ``/status`` writes
the status alone, ``spec.resource`` is immutable with upstream's message; ``kapi migrate``
rewrites a custom resource after its CRD's storage version changed and trims
``status.storedVersions``, and refuses (exit 1, the Failed condition's message) when the
StorageVersion has no common encoding version; the in-server migrator
(``--enable-storage-migrator``) creates and runs a migration by itself.

StorageVersion objects are written by the tests through the API: each test makes the
StorageVersion it needs, so the tests do not depend on the servers' own registration.
"""

from __future__ import annotations

import copy
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml

from tests.conftest import KapiServer, serve_with_flags, start_server
from tests.helpers.crds import CRDS, established
from tests.helpers.kapi_cli import make_kapi
from tests.helpers.kubectl import Kubectl, make_kubectl
from tests.helpers.wait import eventually

GROUP_VERSION = "storagemigration.k8s.io/v1beta1"
SVMS = f"/apis/{GROUP_VERSION}/storageversionmigrations"
SVS = "/apis/internal.apiserver.k8s.io/v1alpha1/storageversions"


@pytest.fixture
def kubectl(kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(kapi_server, tmp_path)


@pytest.fixture(scope="module")
def migrator_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "migrator", "--enable-storage-migrator")


def _svm(name: str, group: str, resource: str) -> dict[str, Any]:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "StorageVersionMigration",
        "metadata": {"name": name},
        "spec": {"resource": {"group": group, "resource": resource}},
    }


def _names(http: httpx.Client) -> list[str]:
    response = http.get(SVMS)
    assert response.status_code == 200, response.text
    return sorted(item["metadata"]["name"] for item in response.json()["items"])


def _condition(obj: dict[str, Any], condition_type: str) -> dict[str, Any] | None:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition["type"] == condition_type:
            return condition  # type: ignore[no-any-return]
    return None


def _set_storage_version(http: httpx.Client, name: str, status: dict[str, Any]) -> None:
    """Create the StorageVersion ``name`` if missing, then write its status."""
    response = http.get(f"{SVS}/{name}")
    if response.status_code == 404:
        manifest = {
            "apiVersion": "internal.apiserver.k8s.io/v1alpha1",
            "kind": "StorageVersion",
            "metadata": {"name": name},
        }
        response = http.post(SVS, json=manifest)
        assert response.status_code == 201, response.text
    obj = response.json()
    obj["status"] = status
    updated = http.put(f"{SVS}/{name}/status", json=obj)
    assert updated.status_code == 200, updated.text


def _widget_crd(group: str) -> dict[str, Any]:
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            },
        }
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": copy.deepcopy(schema)},
                {"name": "v2", "served": True, "storage": False, "schema": copy.deepcopy(schema)},
            ],
        },
    }


def _install_widgets_stored_in_v1_then_switch_to_v2(
    http: httpx.Client, group: str, namespace: str, count: int
) -> None:
    """Widgets written while v1 is the storage version, then v2 made the storage version."""
    crd = _widget_crd(group)
    name = crd["metadata"]["name"]
    assert http.post(CRDS, json=crd).status_code == 201
    eventually(lambda: established(http, name), what=f"the CRD {name} established")
    collection = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    for i in range(count):
        body = {
            "apiVersion": f"{group}/v1",
            "kind": "Widget",
            "metadata": {"name": f"w{i}"},
            "spec": {"n": i},
        }
        response = eventually(
            lambda body=body: (r := http.post(collection, json=body)).status_code == 201 and r,
            what="a widget created",
        )
        assert response
    current = http.get(f"{CRDS}/{name}").json()
    for version in current["spec"]["versions"]:
        version["storage"] = version["name"] == "v2"
    assert http.put(f"{CRDS}/{name}", json=current).status_code == 200
    eventually(
        lambda: http.get(f"{CRDS}/{name}").json()["status"].get("storedVersions") == ["v1", "v2"],
        what="storedVersions [v1, v2]",
    )


def _stored_api_versions(data_dir: Path, prefix: str) -> list[str]:
    """The apiVersion of the latest stored value of each live key under ``prefix``, read
    from the SQLite file of a stopped server."""
    connection = sqlite3.connect(data_dir / "kapi.db")
    try:
        rows = connection.execute(
            "SELECT name, value, deleted FROM kv WHERE id IN "
            "(SELECT MAX(id) FROM kv WHERE name LIKE ? GROUP BY name) ORDER BY name",
            (prefix + "%",),
        ).fetchall()
    finally:
        connection.close()
    return [orjson.loads(value)["apiVersion"] for _, value, deleted in rows if not deleted]


# --- the kind -------------------------------------------------------------------------------


def test_kubectl_creates_gets_and_lists(
    kubectl: Kubectl, http: httpx.Client, tmp_path: Path
) -> None:
    manifest = tmp_path / "svm.yaml"
    body = _svm("kubectl-pdbs", "policy", "poddisruptionbudgets")
    body["status"] = {"resourceVersion": "12"}  # dropped: the main resource never writes it
    manifest.write_text(yaml.safe_dump(body))
    assert kubectl.ok("create", "-f", str(manifest)).out_lines == [
        "storageversionmigration.storagemigration.k8s.io/kubectl-pdbs created"
    ]
    read = yaml.safe_load(
        kubectl.ok("get", "storageversionmigrations", "kubectl-pdbs", "-o", "yaml").stdout
    )
    assert read["apiVersion"] == GROUP_VERSION
    assert read["spec"] == {"resource": {"group": "policy", "resource": "poddisruptionbudgets"}}
    assert read["status"] == {}
    assert "namespace" not in read["metadata"]
    lines = kubectl.ok("get", "storageversionmigrations").out_lines
    assert lines[0].split() == ["NAME", "AGE"]
    assert "kubectl-pdbs" in [line.split()[0] for line in lines[1:]]
    assert "kubectl-pdbs" in _names(http)
    got = http.get(f"{SVMS}/kubectl-pdbs")
    assert got.status_code == 200 and got.json()["kind"] == "StorageVersionMigration"


def test_discovery_lists_the_group(http: httpx.Client) -> None:
    groups = http.get("/apis").json()["groups"]
    group = next(g for g in groups if g["name"] == "storagemigration.k8s.io")
    assert [v["version"] for v in group["versions"]] == ["v1beta1"]
    resources = {r["name"]: r for r in http.get(f"/apis/{GROUP_VERSION}").json()["resources"]}
    assert set(resources) == {"storageversionmigrations", "storageversionmigrations/status"}
    assert resources["storageversionmigrations"]["namespaced"] is False


def test_spec_resource_is_immutable(http: httpx.Client) -> None:
    created = http.post(SVMS, json=_svm("immutable", "apps", "deployments"))
    assert created.status_code == 201, created.text
    obj = created.json()
    obj["spec"]["resource"]["resource"] = "replicasets"
    response = http.put(f"{SVMS}/immutable", json=obj)
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        'StorageVersionMigration.storagemigration.k8s.io "immutable" is invalid: spec: '
        "Invalid value: storagemigration.StorageVersionMigrationSpec{Resource:v1.GroupResource"
        '{Group:"apps", Resource:"replicasets"}}: field is immutable'
    )
    read = http.get(f"{SVMS}/immutable").json()
    assert read["spec"]["resource"] == {"group": "apps", "resource": "deployments"}
    assert read["metadata"]["resourceVersion"] == created.json()["metadata"]["resourceVersion"]


def test_invalid_spec_is_refused_and_nothing_stored(http: httpx.Client) -> None:
    before = _names(http)
    response = http.post(SVMS, json=_svm("no-resource", "apps", ""))
    assert response.status_code == 422, response.text
    assert response.json()["message"] == (
        'StorageVersionMigration.storagemigration.k8s.io "no-resource" is invalid: '
        "spec.resource.resource: Required value: resource is required to be set"
    )
    assert _names(http) == before


def test_status_subresource_writes_status_only(http: httpx.Client) -> None:
    created = http.post(SVMS, json=_svm("status-only", "apps", "deployments"))
    assert created.status_code == 201, created.text
    obj = created.json()
    obj["metadata"]["labels"] = {"ignored": "yes"}
    obj["spec"]["resource"]["resource"] = "ignored"
    obj["status"] = {
        "resourceVersion": "42",
        "conditions": [
            {
                "type": "Running",
                "status": "True",
                "reason": "StorageVersionMigrationInProgress",
                "message": "migrated 1 of about 2 objects",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
    }
    updated = http.put(f"{SVMS}/status-only/status", json=obj)
    assert updated.status_code == 200, updated.text
    read = http.get(f"{SVMS}/status-only").json()
    assert read["status"] == obj["status"]
    assert "labels" not in read["metadata"]
    assert read["spec"]["resource"]["resource"] == "deployments"
    # Once set, status.resourceVersion is immutable; nothing is stored on refusal.
    read["status"]["resourceVersion"] = "43"
    refused = http.put(f"{SVMS}/status-only/status", json=read)
    assert refused.status_code == 422, refused.text
    assert refused.json()["message"] == (
        'StorageVersionMigration.storagemigration.k8s.io "status-only" is invalid: '
        'status.resourceVersion: Invalid value: "43": field is immutable'
    )
    assert http.get(f"{SVMS}/status-only").json()["status"] == obj["status"]


# --- kapi migrate ---------------------------------------------------------------------------


def test_kapi_migrate_rewrites_a_custom_resource_and_trims_stored_versions(
    kapi_server: KapiServer, http: httpx.Client, namespace: str
) -> None:
    group = f"m{namespace.replace('-', '')}.example.com"
    _install_widgets_stored_in_v1_then_switch_to_v2(http, group, namespace, count=5)
    _set_storage_version(
        http,
        f"{group}.widgets",
        {
            "storageVersions": [
                {
                    "apiServerID": "test-server",
                    "encodingVersion": f"{group}/v2",
                    "decodableVersions": [f"{group}/v1", f"{group}/v2"],
                }
            ],
            "commonEncodingVersion": f"{group}/v2",
        },
    )
    run = make_kapi(kapi_server).run("migrate", f"widgets.{group}", "--chunk-size", "2")
    assert (run.returncode, run.stderr) == (0, ""), run
    lines = run.out_lines
    assert lines[0].startswith(f"storageversionmigration.storagemigration.k8s.io/{group}.widgets-")
    # Not a terminal: one plain line per page that had more, then the result.
    assert lines[1:] == [
        f"widgets.{group}: migrated 2 of about 5 objects",
        f"widgets.{group}: migrated 4 of about 5 objects",
        f"widgets.{group}: migrated 5 of about 5 objects",
        f"widgets.{group}: migrated 5 objects of widgets.{group} to {group}/v2 "
        "(0 changed and 0 deleted meanwhile)",
    ]
    name = lines[0].split("/", 1)[1].split()[0]
    svm = http.get(f"{SVMS}/{name}").json()
    succeeded = _condition(svm, "Succeeded")
    assert succeeded is not None and succeeded["status"] == "True"
    assert _condition(svm, "Failed") is None
    crd = http.get(f"{CRDS}/widgets.{group}").json()
    assert crd["status"]["storedVersions"] == ["v2"]
    # Every widget is still there.
    listed = http.get(f"/apis/{group}/v2/namespaces/{namespace}/widgets").json()
    assert sorted(w["metadata"]["name"] for w in listed["items"]) == [f"w{i}" for i in range(5)]


@pytest.mark.sqlite_only
def test_kapi_migrate_re_encodes_stored_objects(tmp_path: Path) -> None:
    data = tmp_path / "data"
    group = "reencode.example.com"
    prefix = f"/registry/{group}/widgets/default/"
    server = start_server(data)
    try:
        with server.client() as http:
            _install_widgets_stored_in_v1_then_switch_to_v2(http, group, "default", count=3)
            _set_storage_version(
                http,
                f"{group}.widgets",
                {
                    "storageVersions": [
                        {
                            "apiServerID": "test-server",
                            "encodingVersion": f"{group}/v2",
                            "decodableVersions": [f"{group}/v1", f"{group}/v2"],
                        }
                    ],
                    "commonEncodingVersion": f"{group}/v2",
                },
            )
    finally:
        assert server.stop() == 0
    # The SQLite file is locked while a server has it open: read it between runs.
    assert _stored_api_versions(data, prefix) == [f"{group}/v1"] * 3
    server = start_server(data)
    try:
        make_kapi(server).ok("migrate", f"widgets.{group}")
    finally:
        assert server.stop() == 0
    assert _stored_api_versions(data, prefix) == [f"{group}/v2"] * 3


def test_kapi_migrate_refuses_without_a_common_encoding_version(
    kapi_server: KapiServer, http: httpx.Client, namespace: str
) -> None:
    # Two servers disagree on how PodDisruptionBudgets are stored.
    _set_storage_version(
        http,
        "policy.poddisruptionbudgets",
        {
            "storageVersions": [
                {
                    "apiServerID": "old-server",
                    "encodingVersion": "policy/v1beta1",
                    "decodableVersions": ["policy/v1", "policy/v1beta1"],
                },
                {
                    "apiServerID": "new-server",
                    "encodingVersion": "policy/v1",
                    "decodableVersions": ["policy/v1", "policy/v1beta1"],
                },
            ],
        },
    )
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "p"},
        "spec": {"minAvailable": 1},
    }
    pdbs = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets"
    assert http.post(pdbs, json=pdb).status_code == 201
    before = http.get(f"{pdbs}/p").json()["metadata"]["resourceVersion"]
    run = make_kapi(kapi_server).run("migrate", "pdb")
    expected = (
        "the API servers do not agree on the version they store poddisruptionbudgets.policy "
        "in: StorageVersion policy.poddisruptionbudgets has no commonEncodingVersion"
    )
    assert run.returncode == 1, run
    assert run.err_lines == [f"error: {expected}"]
    name = run.out_lines[0].split("/", 1)[1].split()[0]
    failed = _condition(http.get(f"{SVMS}/{name}").json(), "Failed")
    assert failed is not None
    assert (failed["status"], failed["reason"], failed["message"]) == (
        "True",
        "StorageVersionMigrationFailed",
        expected,
    )
    # Nothing was rewritten.
    assert http.get(f"{pdbs}/p").json()["metadata"]["resourceVersion"] == before


# --- the in-server migrator -----------------------------------------------------------------


def test_the_server_migrator_creates_and_runs_a_migration(migrator_server: KapiServer) -> None:
    with migrator_server.client() as http:
        namespace = "migrated"
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        assert http.post("/api/v1/namespaces", json=ns).status_code == 201
        group = "auto.example.com"
        _install_widgets_stored_in_v1_then_switch_to_v2(http, group, namespace, count=3)
        _set_storage_version(
            http,
            f"{group}.widgets",
            {
                "storageVersions": [
                    {
                        "apiServerID": "test-server",
                        "encodingVersion": f"{group}/v2",
                        "decodableVersions": [f"{group}/v1", f"{group}/v2"],
                    }
                ],
                "commonEncodingVersion": f"{group}/v2",
            },
        )

        def succeeded() -> dict[str, Any] | None:
            for item in http.get(SVMS).json()["items"]:
                if item["spec"]["resource"] == {"group": group, "resource": "widgets"}:
                    return _condition(item, "Succeeded")
            return None

        condition = eventually(succeeded, what="the migrator's migration to succeed")
        assert condition["status"] == "True"
        crd = http.get(f"{CRDS}/widgets.{group}").json()
        assert crd["status"]["storedVersions"] == ["v2"]

        # The run shows in the out-of-tree migrator's series (they were declared
        # but never fed): three objects rewritten, none left, one success.
        label = f'resource="widgets.{group}"'
        succeeded_line = (
            f'storage_migrator_core_migrator_migrations{{Status="Succeeded",{label}}} 1.0'
        )

        def metric_lines() -> list[str] | None:
            # The condition is written just before the run reports its end.
            response = http.get("/metrics")
            assert response.status_code == 200, response.text
            lines = response.text.splitlines()
            return lines if succeeded_line in lines else None

        lines = eventually(metric_lines, what="the migration counted in /metrics")
        assert f"storage_migrator_core_migrator_migrated_objects{{{label}}} 3.0" in lines
        assert f"storage_migrator_core_migrator_remaining_objects{{{label}}} 0.0" in lines
