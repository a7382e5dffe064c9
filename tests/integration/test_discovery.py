"""Discovery against a real server: aggregated (apidiscovery.k8s.io) and legacy documents.

kubectl 1.27-1.29 ask ``/api`` and ``/apis`` for ``v2beta1`` aggregated
discovery, 1.30 and later for ``v2`` first; a 1.33 server answers ``v2beta1``
with the legacy documents (``AggregatedDiscoveryRemoveBetaType``), an older
one with the aggregated list.  Every kubectl must print the same resources
and nothing on stderr either way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kubectl import make_kubectl
from tests.helpers.wait import eventually

V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
#: What client-go sends (kubectl 1.30+; 1.27-1.29 leave out the first clause).
KUBECTL_ACCEPT = f"{V2},{V2BETA1},application/json"
ETAG = re.compile(r'"[0-9A-F]{128}"')
GROUP = "discovery-test.kapi.example"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """A server of this module's own: its tests add and remove CRDs and compare documents."""
    yield from serve_with_flags(tmp_path_factory, "discovery")


@pytest.fixture(scope="module")
def server_1_32(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "discovery-1.32", "--emulated-version", "1.32")


@pytest.fixture
def http(server: KapiServer) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def crd(plural: str = "widgets", kind: str = "Widget") -> dict[str, Any]:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "plural": plural,
                "singular": kind.lower(),
                "kind": kind,
                "shortNames": ["wd"],
                "categories": ["all"],
            },
            "versions": [
                {
                    "name": name,
                    "served": True,
                    "storage": name == "v1",
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}} if name == "v1" else {},
                }
                for name in ("v1alpha1", "v1", "v2beta1")
            ],
        },
    }


def aggregated_groups(http: httpx.Client) -> dict[str, Any]:
    response = http.get("/apis", headers={"Accept": V2})
    assert response.status_code == 200
    return {item["metadata"]["name"]: item for item in response.json()["items"]}


@pytest.fixture
def widgets(http: httpx.Client) -> Iterator[dict[str, Any]]:
    definition = crd()
    created = http.post(CRDS, json=definition)
    assert created.status_code == 201, created.text
    eventually(lambda: GROUP in aggregated_groups(http), what="the CRD in aggregated discovery")
    yield definition
    http.delete(f"{CRDS}/{definition['metadata']['name']}")
    eventually(lambda: GROUP not in aggregated_groups(http), what="the CRD to leave discovery")


# --- aggregated discovery on the wire ---------------------------------------------------------


def test_aggregated_apis_headers_and_shape(http: httpx.Client) -> None:
    response = http.get("/apis", headers={"Accept": KUBECTL_ACCEPT})
    assert response.status_code == 200
    assert response.headers["content-type"] == V2
    assert ETAG.fullmatch(response.headers["etag"])
    assert response.headers["vary"] == "Accept"
    assert response.headers["cache-control"] == "public"
    body = response.json()
    assert (body["kind"], body["apiVersion"], body["metadata"]) == (
        "APIGroupDiscoveryList",
        "apidiscovery.k8s.io/v2",
        {},
    )
    names = [item["metadata"]["name"] for item in body["items"]]
    assert "" not in names
    # kube-aggregator's group priorities: events 17750, batch 17400, networking 17200,
    # policy 17100, admissionregistration = apiextensions 16700 (by name), coordination
    # 16500, discovery 16200.
    expected = [
        "events.k8s.io",
        "batch",
        "networking.k8s.io",
        "policy",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
    ]
    assert [n for n in names if n in expected] == expected
    batch = body["items"][names.index("batch")]
    assert batch["metadata"] == {"name": "batch", "creationTimestamp": None}
    [version] = batch["versions"]
    assert (version["version"], version["freshness"]) == ("v1", "Current")
    assert sorted(r["resource"] for r in version["resources"]) == ["cronjobs", "jobs"]
    cronjobs = next(r for r in version["resources"] if r["resource"] == "cronjobs")
    assert cronjobs == {
        "resource": "cronjobs",
        "responseKind": {"group": "", "version": "", "kind": "CronJob"},
        "scope": "Namespaced",
        "singularResource": "cronjob",
        "verbs": [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ],
        "shortNames": ["cj"],
        "categories": ["all"],
        "subresources": [
            {
                "subresource": "status",
                "responseKind": {"group": "", "version": "", "kind": "CronJob"},
                "verbs": ["get", "patch", "update"],
            }
        ],
    }


def test_aggregated_core_group(http: httpx.Client) -> None:
    response = http.get("/api", headers={"Accept": KUBECTL_ACCEPT})
    assert response.headers["content-type"] == V2
    [core] = response.json()["items"]
    assert core["metadata"] == {"creationTimestamp": None}
    [v1] = core["versions"]
    resources = {r["resource"]: r for r in v1["resources"]}
    assert list(resources) == sorted(resources)
    namespaces = resources["namespaces"]
    assert namespaces["scope"] == "Cluster"
    assert "deletecollection" not in namespaces["verbs"]
    assert [s["subresource"] for s in namespaces["subresources"]] == ["finalize", "status"]
    assert resources["configmaps"]["shortNames"] == ["cm"]


def test_etag_and_if_none_match(http: httpx.Client) -> None:
    first = http.get("/apis", headers={"Accept": V2})
    etag = first.headers["etag"]
    again = http.get("/apis", headers={"Accept": V2, "If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    assert "content-type" not in again.headers
    stale = http.get("/apis", headers={"Accept": V2, "If-None-Match": '"0"'})
    assert stale.status_code == 200
    assert stale.content == first.content


def test_plain_accept_gets_the_legacy_documents(http: httpx.Client) -> None:
    for accept in (None, "application/json", "application/json, */*"):
        headers = {"Accept": accept} if accept else {}
        groups = http.get("/apis", headers=headers)
        assert groups.headers["content-type"] == "application/json"
        assert groups.json()["kind"] == "APIGroupList"
        assert "etag" not in groups.headers
        assert http.get("/api", headers=headers).json()["kind"] == "APIVersions"


def test_v2beta1_is_legacy_on_1_33_and_aggregated_before(
    http: httpx.Client, server_1_32: KapiServer
) -> None:
    beta_accept = f"{V2BETA1},application/json"
    assert http.get("/apis", headers={"Accept": beta_accept}).json()["kind"] == "APIGroupList"
    with server_1_32.client() as old:
        response = old.get("/apis", headers={"Accept": beta_accept})
        assert response.headers["content-type"] == V2BETA1
        assert response.json()["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
        v2 = old.get("/apis", headers={"Accept": V2})
        assert v2.json()["items"] == response.json()["items"]
        assert v2.headers["etag"] == response.headers["etag"]


def test_legacy_group_list_order_and_preferred_versions(
    http: httpx.Client, widgets: dict[str, Any]
) -> None:
    groups = http.get("/apis").json()["groups"]
    names = [g["name"] for g in groups]
    assert names.index("events.k8s.io") < names.index("batch") < names.index(GROUP)
    assert names[-1] == GROUP  # CRD groups have priority 1000, below every built-in group
    widget_group = groups[-1]
    assert [v["version"] for v in widget_group["versions"]] == ["v1", "v2beta1", "v1alpha1"]
    assert widget_group["preferredVersion"] == {"groupVersion": f"{GROUP}/v1", "version": "v1"}
    assert http.get(f"/apis/{GROUP}").json()["preferredVersion"]["version"] == "v1"


# --- custom resources ---------------------------------------------------------------------------


def test_crd_in_both_discovery_forms(http: httpx.Client, widgets: dict[str, Any]) -> None:
    item = aggregated_groups(http)[GROUP]
    assert [v["version"] for v in item["versions"]] == ["v1", "v2beta1", "v1alpha1"]
    [resource] = item["versions"][0]["resources"]
    assert resource == {
        "resource": "widgets",
        "responseKind": {"group": GROUP, "version": "v1", "kind": "Widget"},
        "scope": "Namespaced",
        "singularResource": "widget",
        "verbs": [
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch",
        ],
        "shortNames": ["wd"],
        "categories": ["all"],
        "subresources": [
            {
                "subresource": "status",
                "responseKind": {"group": GROUP, "version": "v1", "kind": "Widget"},
                "verbs": ["get", "patch", "update"],
            }
        ],
    }
    legacy = http.get(f"/apis/{GROUP}/v2beta1").json()
    assert legacy["resources"] == [
        {
            "name": "widgets",
            "singularName": "widget",
            "namespaced": True,
            "kind": "Widget",
            "verbs": [
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "create",
                "update",
                "watch",
            ],
            "shortNames": ["wd"],
            "categories": ["all"],
            # The storage version's hash, whichever version is asked.
            "storageVersionHash": http.get(f"/apis/{GROUP}/v1").json()["resources"][0][
                "storageVersionHash"
            ],
        }
    ]


def test_crd_changes_the_etag_at_once(http: httpx.Client) -> None:
    before = http.get("/apis", headers={"Accept": V2}).headers["etag"]
    definition = crd("gadgets", "Gadget")
    name = definition["metadata"]["name"]
    created = http.post(CRDS, json=definition)
    assert created.status_code == 201, created.text
    try:
        during = eventually(
            lambda: (
                (
                    r := http.get("/apis", headers={"Accept": V2, "If-None-Match": before})
                ).status_code
                == 200
                and r
            ),
            what="a new discovery document",
        )
        assert GROUP in [i["metadata"]["name"] for i in during.json()["items"]]
        assert during.headers["etag"] != before
    finally:
        http.delete(f"{CRDS}/{name}")
    eventually(
        lambda: http.get("/apis", headers={"Accept": V2}).headers["etag"] == before,
        what="the document from before the CRD",
    )


# --- kubectl ----------------------------------------------------------------------------------


def configmap_file(tmp_path: Path, name: str) -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name},
                "data": {"a": "1"},
            }
        )
    )
    return str(path)


@pytest.mark.kubectl
@pytest.mark.parametrize("version", ["1.27", "1.29", "1.31", "1.33"])
def test_kubectl_reads_discovery_without_complaint(
    server: KapiServer, widgets: dict[str, Any], tmp_path: Path, version: str
) -> None:
    kubectl = make_kubectl(server, tmp_path, version)
    name = f"seen-{version.replace('.', '-')}"
    kubectl.ok("apply", "-f", configmap_file(tmp_path, name))
    widgets_line = [line for line in kubectl.ok("api-resources").out_lines if "Widget" in line]
    assert [line.split() for line in widgets_line] == [
        ["widgets", "wd", f"{GROUP}/v1", "true", "Widget"]
    ]
    versions = kubectl.ok("api-versions").out_lines
    assert f"{GROUP}/v1alpha1" in versions and "batch/v1" in versions
    assert f"configmap/{name}" in kubectl.ok("get", "cm", "-o", "name").out_lines
    assert kubectl.ok("get", "cm", name).out_lines[0].split() == ["NAME", "DATA", "AGE"]
    explained = kubectl.ok("explain", "configmap").out_lines
    assert [line.split() for line in explained[:2]] == [["KIND:", "ConfigMap"], ["VERSION:", "v1"]]


@pytest.mark.kubectl
def test_every_kubectl_sees_the_same_resources(
    server: KapiServer, widgets: dict[str, Any], tmp_path: Path
) -> None:
    """Legacy (1.27 against 1.33) and aggregated (1.30+) discovery list the same table."""
    tables = {
        version: make_kubectl(server, tmp_path, version).ok("api-resources", "-o", "wide").stdout
        for version in ("1.27", "1.30", "1.33")
    }
    assert tables["1.27"] == tables["1.30"] == tables["1.33"]
    assert "delete,deletecollection,get,list,patch,create,update,watch" in tables["1.33"]


@pytest.mark.kubectl
def test_kubectl_1_27_reads_v2beta1_aggregated_discovery(
    server_1_32: KapiServer, tmp_path: Path
) -> None:
    kubectl = make_kubectl(server_1_32, tmp_path, "1.27")
    resources = kubectl.ok("api-resources", "-o", "name").out_lines
    assert "cronjobs.batch" in resources and "namespaces" in resources
