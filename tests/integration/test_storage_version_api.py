"""internal.apiserver.k8s.io/v1alpha1 StorageVersion on a real ``kapi serve``: kubectl
creates and reads one, discovery and OpenAPI list it, an invalid one is refused with
upstream's message and nothing stored, and ``/status`` writes the status alone."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kapi.runtime import protobuf
from tests.conftest import KapiServer, start_server
from tests.helpers.kubectl import Kubectl, make_kubectl
from tests.helpers.protobuf_requests import PROTOBUF

pytestmark = pytest.mark.kubectl

GROUP_VERSION = "internal.apiserver.k8s.io/v1alpha1"
COLLECTION = f"/apis/{GROUP_VERSION}/storageversions"


@pytest.fixture
def kubectl(kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(kapi_server, tmp_path)


def _manifest(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "StorageVersion",
        "metadata": {"name": name},
        **extra,
    }


def _names(http: httpx.Client) -> list[str]:
    response = http.get(COLLECTION)
    assert response.status_code == 200, response.text
    return sorted(item["metadata"]["name"] for item in response.json()["items"])


def test_kubectl_creates_and_reads_back(
    kubectl: Kubectl, http: httpx.Client, tmp_path: Path
) -> None:
    manifest = tmp_path / "sv.yaml"
    # A status in the create is dropped: the main resource never writes it.
    status = {
        "storageVersions": [
            {"apiServerID": "a", "encodingVersion": "v1", "decodableVersions": ["v1"]}
        ],
        "commonEncodingVersion": "v1",
    }
    manifest.write_text(yaml.safe_dump(_manifest("kubectl.widgets", status=status)))
    assert kubectl.ok("create", "-f", str(manifest)).out_lines == [
        "storageversion.internal.apiserver.k8s.io/kubectl.widgets created"
    ]
    read = yaml.safe_load(
        kubectl.ok("get", "storageversions", "kubectl.widgets", "-o", "yaml").stdout
    )
    assert read["apiVersion"] == GROUP_VERSION
    assert read["kind"] == "StorageVersion"
    assert read["metadata"]["name"] == "kubectl.widgets"
    assert "namespace" not in read["metadata"]
    assert read["spec"] == {}
    assert read["status"] == {}
    lines = kubectl.ok("get", "storageversions", "kubectl.widgets").out_lines
    assert lines[0].split() == ["NAME", "COMMONENCODINGVERSION", "STORAGEVERSIONS", "AGE"]
    assert lines[1].split()[:3] == ["kubectl.widgets", "<unset>", "<unset>"]


def _identity_lease(http: httpx.Client, name: str) -> None:
    """A live identity lease for ``name``, so that a storage version GC keeps its entries."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "labels": {"apiserver.kubernetes.io/identity": "kube-apiserver"},
        },
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 3600, "renewTime": now},
    }
    response = http.post("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", json=lease)
    assert response.status_code == 201, response.text


def _with_status(http: httpx.Client, name: str, *entries: tuple[str, str]) -> None:
    created = http.post(COLLECTION, json=_manifest(name))
    assert created.status_code == 201, created.text
    obj = created.json()
    obj["status"] = {
        "storageVersions": [
            {"apiServerID": sid, "encodingVersion": version, "decodableVersions": [version]}
            for sid, version in entries
        ]
    }
    if len({version for _, version in entries}) == 1:
        obj["status"]["commonEncodingVersion"] = entries[0][1]
    updated = http.put(f"{COLLECTION}/{name}/status", json=obj)
    assert updated.status_code == 200, updated.text


def test_kubectl_table_cells_are_upstreams(kubectl: Kubectl, http: httpx.Client) -> None:
    """printStorageVersion: ``<unset>`` for no common version, ``id=version`` for the first
    three servers joined by commas, then `` + N more...``."""
    for x in "abcde":
        _identity_lease(http, f"server-{x}")
    _with_status(http, "cells.one", ("server-a", "v1"))
    _with_status(http, "cells.split", ("server-a", "cells/v1"), ("server-b", "cells/v2"))
    _with_status(
        http,
        "cells.five",
        *[(f"server-{x}", "cells/v1") for x in "abcde"],
    )
    lines = kubectl.ok("get", "storageversions", "cells.one", "cells.split", "cells.five").out_lines
    assert [line.rsplit(None, 1)[0].rstrip() for line in lines] == [
        "NAME          COMMONENCODINGVERSION   STORAGEVERSIONS",
        "cells.one     v1                      server-a=v1",
        "cells.split   <unset>                 server-a=cells/v1,server-b=cells/v2",
        "cells.five    cells/v1                "
        "server-a=cells/v1,server-b=cells/v1,server-c=cells/v1 + 2 more...",
    ]
    table = http.get(
        f"{COLLECTION}/cells.one",
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"},
    ).json()
    assert [(c["name"], c["type"], c["format"]) for c in table["columnDefinitions"]] == [
        ("Name", "string", "name"),
        ("CommonEncodingVersion", "string", ""),
        ("StorageVersions", "string", ""),
        ("Age", "string", ""),
    ]


def test_discovery_and_openapi_list_it(http: httpx.Client) -> None:
    groups = http.get("/apis").json()["groups"]
    group = next(g for g in groups if g["name"] == "internal.apiserver.k8s.io")
    assert [v["version"] for v in group["versions"]] == ["v1alpha1"]
    resources = {r["name"]: r for r in http.get(f"/apis/{GROUP_VERSION}").json()["resources"]}
    assert set(resources) == {"storageversions", "storageversions/status"}
    assert resources["storageversions"]["namespaced"] is False
    assert resources["storageversions"]["kind"] == "StorageVersion"
    spec = http.get(f"/openapi/v3/apis/{GROUP_VERSION}").json()
    schemas = spec["components"]["schemas"]
    status = schemas["io.k8s.api.apiserverinternal.v1alpha1.StorageVersionStatus"]
    assert sorted(status["properties"]) == [
        "commonEncodingVersion",
        "conditions",
        "storageVersions",
    ]
    entry = schemas["io.k8s.api.apiserverinternal.v1alpha1.ServerStorageVersion"]
    assert sorted(entry["properties"]) == [
        "apiServerID",
        "decodableVersions",
        "encodingVersion",
        "servedVersions",
    ]
    assert f"/apis/{GROUP_VERSION}/storageversions/{{name}}/status" in spec["paths"]


def test_invalid_name_is_refused_and_nothing_stored(http: httpx.Client) -> None:
    before = _names(http)
    response = http.post(COLLECTION, json=_manifest("nodots"))
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        'StorageVersion.internal.apiserver.k8s.io "nodots" is invalid: metadata.name: '
        'Invalid value: "nodots": name must be in the form of <group>.<resource>'
    )
    assert _names(http) == before


def test_status_update_writes_status_only(http: httpx.Client) -> None:
    name = "status.widgets"
    created = http.post(COLLECTION, json=_manifest(name))
    assert created.status_code == 201, created.text
    obj = created.json()
    obj["metadata"]["labels"] = {"ignored": "yes"}
    obj["status"] = {
        "storageVersions": [
            {
                "apiServerID": "kube-apiserver-a",
                "encodingVersion": "example.com/v1",
                "decodableVersions": ["example.com/v1", "example.com/v2"],
                "servedVersions": ["example.com/v1"],
            }
        ],
        "commonEncodingVersion": "example.com/v1",
    }
    updated = http.put(f"{COLLECTION}/{name}/status", json=obj)
    assert updated.status_code == 200, updated.text
    read = http.get(f"{COLLECTION}/{name}").json()
    assert read["status"] == obj["status"]
    assert "labels" not in read["metadata"]
    # The main resource keeps the stored status whatever the request says.
    read["status"] = {}
    read["metadata"]["labels"] = {"kept": "yes"}
    assert http.put(f"{COLLECTION}/{name}", json=read).status_code == 200
    again = http.get(f"{COLLECTION}/{name}").json()
    assert again["status"] == obj["status"]
    assert again["metadata"]["labels"] == {"kept": "yes"}


def test_invalid_status_is_refused_and_nothing_stored(http: httpx.Client) -> None:
    name = "refused.widgets"
    created = http.post(COLLECTION, json=_manifest(name))
    assert created.status_code == 201, created.text
    obj = created.json()
    obj["status"] = {
        "storageVersions": [
            {"apiServerID": "a", "encodingVersion": "v2", "decodableVersions": ["v1"]}
        ]
    }
    response = http.put(f"{COLLECTION}/{name}/status", json=obj)
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        f'StorageVersion.internal.apiserver.k8s.io "{name}" is invalid: ['
        'status.storageVersions[0].decodableVersions: Invalid value: []string{"v1"}: '
        "decodableVersions must include encodingVersion v2, "
        'status.commonEncodingVersion: Invalid value: "null": '
        "the common encoding version is v2]"
    )
    read = http.get(f"{COLLECTION}/{name}").json()
    assert read["status"] == {}
    assert read["metadata"]["resourceVersion"] == created.json()["metadata"]["resourceVersion"]


def test_served_in_protobuf(http: httpx.Client) -> None:
    name = "protobuf.widgets"
    assert http.post(COLLECTION, json=_manifest(name)).status_code == 201
    response = http.get(f"{COLLECTION}/{name}", headers={"Accept": PROTOBUF})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == PROTOBUF
    obj = protobuf.decode(response.content)
    assert (obj["kind"], obj["metadata"]["name"]) == ("StorageVersion", name)
    assert (obj["spec"], obj["status"]) == ({}, {})


def test_not_served_with_the_gate_off(tmp_path: Path) -> None:
    server = start_server(tmp_path / "data", "--feature-gates", "StorageVersionAPI=false")
    try:
        with server.client() as client:
            groups = [g["name"] for g in client.get("/apis").json()["groups"]]
            assert "internal.apiserver.k8s.io" not in groups
            assert "coordination.k8s.io" in groups
            assert client.get(COLLECTION).status_code == 404
    finally:
        server.stop()


def test_metrics_endpoint_exposes_the_migrator_series(http: httpx.Client) -> None:
    response = http.get("/metrics")
    assert response.status_code == 200
    text = response.text
    for name, kind in [
        ("storage_migrator_core_migrator_migrated_objects", "counter"),
        ("storage_migrator_core_migrator_remaining_objects", "gauge"),
        ("storage_migrator_core_migrator_migrations", "counter"),
    ]:
        assert f"# TYPE {name} {kind}\n" in text
    assert "storage_migrator_core_migrator_migrations_total" not in text
