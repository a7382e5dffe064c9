"""``/openapi/v2`` and ``/openapi/v3`` against a real server, and the kubectl releases using them.

kubectl 1.27 and 1.28 download the v2 document as gnostic protobuf before
``create``, ``apply`` and ``explain``; they validate ``List`` items against it
on the client and render ``explain --output=plaintext-openapiv2`` from it.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kapi.runtime.protowire import iter_fields
from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kubectl import Kubectl, make_kubectl
from tests.helpers.wait import eventually

PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
#: What client-go's ``OpenAPISchema`` asks for.
KUBECTL_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
ETAG = re.compile(r'"[0-9A-F]{128}"')
GROUP = "openapi-test.kapi.example"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "openapi")


@pytest.fixture
def http(server: KapiServer) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def gizmo_crd(replicas_type: str = "integer") -> dict[str, Any]:
    spec = {
        "type": "object",
        "required": ["size"],
        "properties": {
            "size": {"type": "string", "description": "How big the gizmo is."},
            "replicas": {"type": replicas_type},
            "note": {"type": "string", "nullable": True},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gizmos.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": "A gizmo.",
                            "properties": {"spec": spec},
                        }
                    },
                }
            ],
        },
    }


def index(http: httpx.Client) -> dict[str, str]:
    paths = http.get("/openapi/v3").json()["paths"]
    return {path: entry["serverRelativeURL"] for path, entry in paths.items()}


@pytest.fixture
def gizmos(http: httpx.Client) -> Iterator[dict[str, Any]]:
    definition = gizmo_crd()
    created = http.post(CRDS, json=definition)
    assert created.status_code == 201, created.text
    eventually(lambda: f"apis/{GROUP}/v1" in index(http), what="the CRD's OpenAPI document")
    yield definition
    http.delete(f"{CRDS}/{definition['metadata']['name']}")
    eventually(lambda: f"apis/{GROUP}/v1" not in index(http), what="the CRD's document to go")


# --- /openapi/v2 on the wire ---------------------------------------------------------------


def test_v2_json(http: httpx.Client) -> None:
    response = http.get("/openapi/v2", headers={"Accept": "application/json"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert ETAG.fullmatch(response.headers["etag"])
    assert response.headers.get_list("vary") == ["Accept-Encoding", "Accept"]
    assert response.headers["cache-control"] == "no-cache, private"
    assert "last-modified" in response.headers
    document = response.json()
    assert document["swagger"] == "2.0"
    assert document["security"] == [{"BearerToken": []}]
    configmap = document["definitions"]["io.k8s.api.core.v1.ConfigMap"]
    assert configmap["x-kubernetes-group-version-kind"] == [
        {"group": "", "kind": "ConfigMap", "version": "v1"}
    ]
    assert configmap["properties"]["metadata"]["$ref"] == (
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    )
    item = document["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]
    assert item["patch"]["operationId"] == "patchCoreV1NamespacedConfigMap"
    assert "application/strategic-merge-patch+json" in item["patch"]["consumes"]
    assert {p.get("name") for p in item["parameters"] if "name" in p} >= {"name"}
    assert any(p.get("name") == "fieldValidation" for p in item["patch"]["parameters"])


@pytest.mark.parametrize("accept", [KUBECTL_PROTOBUF, PROTOBUF, f"text/html, {PROTOBUF}"])
def test_v2_protobuf(http: httpx.Client, accept: str) -> None:
    as_json = http.get("/openapi/v2")
    response = http.get("/openapi/v2", headers={"Accept": accept})
    assert response.status_code == 200
    assert response.headers["content-type"] == PROTOBUF
    assert response.headers["etag"] == as_json.headers["etag"]  # one ETag, told apart by Vary
    swagger, info = [value for number, _, value in iter_fields(response.content)][:2]
    assert swagger == b"2.0"
    assert b"Kubernetes" in info


def test_v2_conditional_and_not_acceptable(http: httpx.Client) -> None:
    etag = http.get("/openapi/v2").headers["etag"]
    for accept in ("application/json", KUBECTL_PROTOBUF):
        cached = http.get("/openapi/v2", headers={"Accept": accept, "If-None-Match": etag})
        assert cached.status_code == 304
        assert cached.content == b""
        assert cached.headers["etag"] == etag
    refused = http.get("/openapi/v2", headers={"Accept": "text/html"})
    assert refused.status_code == 406


def test_v2_gzip(http: httpx.Client) -> None:
    plain = http.get("/openapi/v2", headers={"Accept-Encoding": "identity"})
    zipped = http.get("/openapi/v2", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in plain.headers
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.content == plain.content  # httpx has inflated it


def test_v2_follows_crds(http: httpx.Client, gizmos: dict[str, Any]) -> None:
    definitions = http.get("/openapi/v2").json()["definitions"]
    gizmo = definitions["example.kapi.openapi-test.v1.Gizmo"]
    assert gizmo["x-kubernetes-group-version-kind"] == [
        {"group": GROUP, "kind": "Gizmo", "version": "v1"}
    ]
    spec = gizmo["properties"]["spec"]
    # ToStructuralOpenAPIV2: a nullable field loses its type and leaves required.
    assert spec["properties"]["note"] == {}
    assert spec["required"] == ["size"]
    assert "example.kapi.openapi-test.v1.GizmoList" in definitions


# --- /openapi/v3 index and caching ------------------------------------------------------------


def test_v3_index_as_the_aggregator_serves_it(http: httpx.Client) -> None:
    """kube-apiserver's aggregator builds the index per request: no ETag, modified now."""
    response = http.get("/openapi/v3")
    assert response.headers["content-type"] == "text/plain; charset=utf-8"
    assert "etag" not in response.headers
    assert response.headers["cache-control"] == "no-cache, private"
    modified = response.headers["last-modified"]
    assert http.get("/openapi/v3", headers={"If-None-Match": "*"}).status_code == 200
    # If-Modified-Since at or after the modification time answers 304.
    later = email.utils.formatdate(time.time() + 5, usegmt=True)
    assert http.get("/openapi/v3", headers={"If-Modified-Since": later}).status_code == 304
    earlier = email.utils.formatdate(
        email.utils.parsedate_to_datetime(modified).timestamp() - 5, usegmt=True
    )
    assert http.get("/openapi/v3", headers={"If-Modified-Since": earlier}).status_code == 200


def test_v3_unknown_group_version(http: httpx.Client) -> None:
    response = http.get("/openapi/v3/apis/nothing.example/v1")
    assert (response.status_code, response.content) == (404, b"")


def test_v3_group_version_caching(http: httpx.Client) -> None:
    url = index(http)["api/v1"]
    digest = url.split("hash=")[1]
    pinned = http.get(url)
    assert pinned.headers["etag"] == f'"{digest}"'
    assert pinned.headers["cache-control"] == "public, immutable"
    assert pinned.headers["expires"].endswith(" UTC")
    unpinned = http.get("/openapi/v3/api/v1")
    assert unpinned.headers["cache-control"] == "no-cache, private"
    assert unpinned.content == pinned.content
    moved = http.get("/openapi/v3/api/v1?hash=0123", follow_redirects=False)
    assert moved.status_code == 301
    assert moved.headers["location"] == url
    again = http.get("/openapi/v3/api/v1", headers={"If-None-Match": f'"{digest}"'})
    assert again.status_code == 304


def test_v3_hash_changes_with_the_crd(http: httpx.Client) -> None:
    before = index(http)
    definition = gizmo_crd()
    name = definition["metadata"]["name"]
    assert http.post(CRDS, json=definition).status_code == 201
    try:
        created = eventually(
            lambda: (i := index(http)).get(f"apis/{GROUP}/v1") and i, what="the CRD"
        )
        assert {k: v for k, v in created.items() if k in before} == before
        old_url = created[f"apis/{GROUP}/v1"]

        current = http.get(f"{CRDS}/{name}").json()
        versions = current["spec"]["versions"]
        versions[0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"] = {
            "type": "string"
        }
        assert http.put(f"{CRDS}/{name}", json=current).status_code == 200
        updated = eventually(
            lambda: (u := index(http).get(f"apis/{GROUP}/v1")) != old_url and u, what="a new hash"
        )
        document = http.get(updated).json()
        gizmo = document["components"]["schemas"]["example.kapi.openapi-test.v1.Gizmo"]
        assert gizmo["properties"]["spec"]["properties"]["replicas"] == {"type": "string"}
        assert http.get(old_url, follow_redirects=False).headers["location"] == updated
    finally:
        http.delete(f"{CRDS}/{name}")
    eventually(lambda: index(http) == before, what="the index from before the CRD")


# --- kubectl 1.27 and 1.28 ------------------------------------------------------------------


def write(tmp_path: Path, name: str, document: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document))
    return str(path)


def configmap(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {"a": "1"},
        **extra,
    }


@pytest.fixture(params=["1.27", "1.28"])
def old_kubectl(request: pytest.FixtureRequest, server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(server, tmp_path, request.param)


@pytest.fixture
def ns(http: httpx.Client, request: pytest.FixtureRequest) -> Iterator[str]:
    name = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[-50:].strip("-")
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    assert http.post("/api/v1/namespaces", json=body).status_code == 201
    yield name
    http.delete(f"/api/v1/namespaces/{name}")


@pytest.mark.kubectl
def test_create_and_apply_validate(old_kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    path = write(tmp_path, "cm.yaml", configmap("x"))
    assert old_kubectl.ok("-n", ns, "create", "-f", path).out_lines == ["configmap/x created"]
    changed = write(tmp_path, "cm2.yaml", {**configmap("second"), "data": {"a": "2"}})
    assert old_kubectl.ok("-n", ns, "apply", "-f", changed).out_lines == [
        "configmap/second created"
    ]
    again = write(tmp_path, "cm3.yaml", {**configmap("second"), "data": {"a": "3"}})
    assert old_kubectl.ok("-n", ns, "apply", "-f", again).out_lines == [
        "configmap/second configured"
    ]
    assert old_kubectl.json("-n", ns, "get", "cm", "second")["data"] == {"a": "3"}


@pytest.mark.kubectl
def test_unknown_field_is_rejected_by_the_server(
    old_kubectl: Kubectl, ns: str, tmp_path: Path
) -> None:
    """The v3 document offers fieldValidation, so kubectl leaves strict validation to kapi."""
    path = write(tmp_path, "bad.yaml", configmap("bad", foo="bar"))
    failed = old_kubectl.fails("-n", ns, "create", "-f", path)
    assert failed.err_lines == [
        f'Error from server (BadRequest): error when creating "{path}": ConfigMap in version '
        '"v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "foo"'
    ]


@pytest.mark.kubectl
def test_list_items_are_validated_against_v2(old_kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    """A ``List`` cannot be checked on the server: kubectl validates it with /openapi/v2."""
    good = write(
        tmp_path, "good.yaml", {"apiVersion": "v1", "kind": "List", "items": [configmap("l1")]}
    )
    assert old_kubectl.ok("-n", ns, "create", "-f", good).out_lines == ["configmap/l1 created"]
    bad_list = {"apiVersion": "v1", "kind": "List", "items": [configmap("l2", foo="bar")]}
    bad = write(tmp_path, "bad.yaml", bad_list)
    failed = old_kubectl.fails("-n", ns, "create", "-f", bad)
    assert failed.err_lines == [
        f'error: error validating "{bad}": error validating data: ValidationError(ConfigMap): '
        'unknown field "foo" in io.k8s.api.core.v1.ConfigMap; if you choose to ignore these '
        "errors, turn validation off with --validate=false"
    ]
    wrong_type = {"apiVersion": "v1", "kind": "List", "items": [configmap("l3", immutable="no")]}
    failed = old_kubectl.fails("-n", ns, "create", "-f", write(tmp_path, "t.yaml", wrong_type))
    assert "ValidationError(ConfigMap.immutable): invalid type for " in failed.stderr
    assert old_kubectl.ok("-n", ns, "get", "cm", "-o", "name").out_lines == ["configmap/l1"]


@pytest.mark.kubectl
def test_explain_from_v2(old_kubectl: Kubectl) -> None:
    v2 = ("--output", "plaintext-openapiv2")
    whole = old_kubectl.ok("explain", "configmap", *v2).out_lines
    assert whole[:4] == ["KIND:     ConfigMap", "VERSION:  v1", "", "DESCRIPTION:"]
    fields = [line for line in whole if re.match(r"   \w+\t<", line)]
    assert fields == [
        "   apiVersion\t<string>",
        "   binaryData\t<map[string]string>",
        "   data\t<map[string]string>",
        "   immutable\t<boolean>",
        "   kind\t<string>",
        "   metadata\t<Object>",
    ]
    data = old_kubectl.ok("explain", "configmap.data", *v2).out_lines
    assert data[:6] == [
        "KIND:     ConfigMap",
        "VERSION:  v1",
        "",
        "FIELD:    data <map[string]string>",
        "",
        "DESCRIPTION:",
    ]
    recursive = old_kubectl.ok("explain", "configmap", "--recursive", *v2).out_lines
    assert "      labels\t<map[string]string>" in recursive
    assert "         manager\t<string>" in recursive


@pytest.mark.kubectl
def test_explain_default_and_custom_resources(old_kubectl: Kubectl, gizmos: dict[str, Any]) -> None:
    """The default renderer reads /openapi/v3 once the v2 document has loaded."""
    explained = old_kubectl.ok("explain", "configmap").out_lines
    assert [line.split() for line in explained[:2]] == [["KIND:", "ConfigMap"], ["VERSION:", "v1"]]
    assert old_kubectl.ok("explain", "configmap", "--recursive").stdout.count("managedFields") == 1
    gizmo = old_kubectl.ok("explain", "gizmo.spec", "--output", "plaintext-openapiv2").out_lines
    assert "RESOURCE: spec <Object>" in gizmo
    fields = [line for line in gizmo if re.match(r"   \w+\t<", line)]
    assert fields == [
        "   note\t<>",
        "   replicas\t<integer>",
        "   size\t<string> -required-",
    ]


def gizmo(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Gizmo",
        "metadata": {"name": name},
        "spec": {"size": "small", **spec},
    }


@pytest.mark.kubectl
def test_custom_resources_with_old_kubectl(
    old_kubectl: Kubectl, gizmos: dict[str, Any], ns: str, tmp_path: Path
) -> None:
    """apply finds no strategic merge for custom resources in v2; List items are validated."""
    first = write(tmp_path, "g1.yaml", gizmo("g1", replicas=1))
    assert old_kubectl.ok("-n", ns, "apply", "-f", first).out_lines == [f"gizmo.{GROUP}/g1 created"]
    second = write(tmp_path, "g2.yaml", gizmo("g1", replicas=2))
    applied = old_kubectl.ok("-n", ns, "apply", "-f", second).out_lines
    assert applied == [f"gizmo.{GROUP}/g1 configured"]
    assert old_kubectl.json("-n", ns, "get", "gizmo", "g1")["spec"]["replicas"] == 2
    items = {"apiVersion": "v1", "kind": "List", "items": [gizmo("g2", bogus=1)]}
    bad = write(tmp_path, "list.yaml", items)
    failed = old_kubectl.fails("-n", ns, "create", "-f", bad)
    assert failed.err_lines == [
        f'error: error validating "{bad}": error validating data: ValidationError(Gizmo.spec): '
        'unknown field "bogus" in example.kapi.openapi-test.v1.Gizmo.spec; if you choose to '
        "ignore these errors, turn validation off with --validate=false"
    ]
