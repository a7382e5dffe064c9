"""CRD ``selectableFields`` end to end: field selectors on custom resources (KEP-4358).

The real kubectl (1.33 and 1.31) against a real ``kapi serve``, with the
objects and selectors of upstream's ``fieldselector_test.go``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kubectl import Kubectl, Watch, make_kubectl

pytestmark = pytest.mark.kubectl

GROUP = "selectable.example.com"
CRD_NAME = f"shirts.{GROUP}"
#: v1 selects on four fields; v1beta1 (conversion None) only on size.
V1_FIELDS = (".spec.color", ".spec.quantity", ".spec.size", ".spec.branded")
V1BETA1_FIELDS = (".spec.size",)


def shirt_crd() -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "color": {"type": "string"},
                    "quantity": {"type": "integer"},
                    "size": {"type": "string", "enum": ["S", "M", "L", "XL"]},
                    "branded": {"type": "boolean"},
                },
            }
        },
    }

    def version(name: str, storage: bool, fields: tuple[str, ...]) -> dict[str, Any]:
        return {
            "name": name,
            "served": True,
            "storage": storage,
            # The schemas must differ: upstream rejects per-version selectableFields
            # when every version has the same schema (it moves that to spec.validation).
            "schema": {"openAPIV3Schema": {**copy.deepcopy(schema), "description": name}},
            "selectableFields": [{"jsonPath": path} for path in fields],
        }

    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "shirts", "singular": "shirt", "kind": "Shirt"},
            "versions": [version("v1", True, V1_FIELDS), version("v1beta1", False, V1BETA1_FIELDS)],
        },
    }


def shirt(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Shirt",
        "metadata": {"name": name},
        "spec": spec,
    }


SHIRTS = (
    shirt("shirt1", color="blue", quantity=2, size="S", branded=True),
    shirt("shirt2", color="blue", quantity=3, size="M", branded=False),
    shirt("shirt3", color="green", quantity=2, branded=False),
)


def write(tmp_path: Path, name: str, *docs: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


@pytest.fixture
def kubectl(kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(kapi_server, tmp_path, "1.33")


@pytest.fixture
def shirts(kubectl: Kubectl, tmp_path: Path, namespace: str) -> Iterator[str]:
    """The CRD established and the three shirts in ``namespace``; the CRD deleted afterwards."""
    kubectl.ok("apply", "-f", write(tmp_path, "crd.yaml", shirt_crd()))
    kubectl.ok("wait", "--for=condition=Established", f"crd/{CRD_NAME}", "--timeout=20s")
    kubectl.ok("-n", namespace, "create", "-f", write(tmp_path, "shirts.yaml", *SHIRTS))
    yield namespace
    kubectl.run("delete", "crd", CRD_NAME, "--wait=true")


def selected(
    kubectl: Kubectl, namespace: str, selector: str, resource: str = "shirts"
) -> list[str]:
    names = kubectl.ok("-n", namespace, "get", resource, "--field-selector", selector, "-o", "name")
    return [line.rpartition("/")[2] for line in names.out_lines]


SELECTIONS = [
    ("spec.color=blue", ["shirt1", "shirt2"]),
    ("spec.quantity=2", ["shirt1", "shirt3"]),
    ("spec.size=M", ["shirt2"]),
    ("spec.branded=false", ["shirt2", "shirt3"]),  # booleans as Go prints them
    ("spec.branded=true", ["shirt1"]),
    ("spec.color=blue,spec.quantity=2", ["shirt1"]),
    ("spec.color==green", ["shirt3"]),
    ("spec.color!=blue", ["shirt3"]),
    ("spec.size!=M", ["shirt1", "shirt3"]),  # a missing field is ""
    ("spec.size=", ["shirt3"]),
    ("metadata.name=shirt2,spec.color=blue", ["shirt2"]),
]


@pytest.mark.parametrize("version", ["1.33", "1.31"])
def test_kubectl_get_with_field_selector_on_selectable_fields(
    kapi_server: KapiServer, tmp_path: Path, shirts: str, version: str
) -> None:
    kubectl = make_kubectl(kapi_server, tmp_path, version)
    got = {selector: selected(kubectl, shirts, selector) for selector, _ in SELECTIONS}
    assert got == dict(SELECTIONS)


@pytest.mark.parametrize("version", ["1.33", "1.31"])
def test_kubectl_prints_upstreams_error_for_a_field_not_selectable(
    kapi_server: KapiServer, tmp_path: Path, shirts: str, version: str
) -> None:
    kubectl = make_kubectl(kapi_server, tmp_path, version)
    result = kubectl.fails("-n", shirts, "get", "shirts", "--field-selector", "spec.nosuchfield=x")
    assert result.err_lines == [
        f'Error from server (BadRequest): Unable to find "{GROUP}/v1, Resource=shirts" that '
        'match label selector "", field selector "spec.nosuchfield=x": '
        "field label not supported: spec.nosuchfield"
    ]


def test_each_version_selects_on_its_own_fields(kubectl: Kubectl, shirts: str) -> None:
    v1beta1 = f"shirts.v1beta1.{GROUP}"
    assert selected(kubectl, shirts, "spec.size=S", v1beta1) == ["shirt1"]
    result = kubectl.fails("-n", shirts, "get", v1beta1, "--field-selector", "spec.color=blue")
    assert result.err_lines == [
        f'Error from server (BadRequest): Unable to find "{GROUP}/v1beta1, Resource=shirts" '
        'that match label selector "", field selector "spec.color=blue": '
        "field label not supported: spec.color"
    ]


def test_list_rejects_other_fields_with_upstreams_status(http: httpx.Client, shirts: str) -> None:
    response = http.get(
        f"/apis/{GROUP}/v1/namespaces/{shirts}/shirts",
        params={"fieldSelector": "spec.color=blue,status.phase=x"},
    )
    assert response.status_code == 400
    status = response.json()
    assert (status["reason"], status["message"]) == (
        "BadRequest",
        "field label not supported: status.phase",
    )


def test_watch_with_field_selector_sees_objects_enter_and_leave(
    kubectl: Kubectl, shirts: str
) -> None:
    args = ("-n", shirts, "get", "shirts", "--watch", "--output-watch-events", "-o", "json")
    with kubectl.watch(*args, "--field-selector", "spec.color=blue") as watch:
        watch.wait_for(lambda _: len(_events(watch)) >= 2, "the two blue shirts")
        kubectl.ok("-n", shirts, "patch", "shirt", "shirt2", "--type=merge", "-p", _color("red"))
        kubectl.ok("-n", shirts, "patch", "shirt", "shirt3", "--type=merge", "-p", _color("blue"))
        watch.wait_for(lambda _: len(_events(watch)) >= 4, "shirt2 leave and shirt3 enter")
    events = _events(watch)
    assert sorted(events[:2]) == [("ADDED", "shirt1"), ("ADDED", "shirt2")]
    assert events[2:] == [("DELETED", "shirt2"), ("ADDED", "shirt3")]


def _events(watch: Watch) -> list[tuple[str, str]]:
    return [(e["type"], e["object"]["metadata"]["name"]) for e in watch.objects()]


def _color(color: str) -> str:
    return json.dumps({"spec": {"color": color}})


def test_openapi_names_each_versions_selectable_fields(http: httpx.Client, shirts: str) -> None:
    v3 = {
        version: http.get(f"/openapi/v3/apis/{GROUP}/{version}").json()["components"]["schemas"]
        for version in ("v1", "v1beta1")
    }
    v2 = http.get("/openapi/v2").json()["definitions"]
    for version, fields in (("v1", V1_FIELDS), ("v1beta1", V1BETA1_FIELDS)):
        expected = [{"fieldPath": path.removeprefix(".")} for path in fields]
        for kind in ("Shirt", "ShirtList"):
            name = f"com.example.selectable.{version}.{kind}"
            assert v3[version][name]["x-kubernetes-selectable-fields"] == expected
            assert v2[name]["x-kubernetes-selectable-fields"] == expected


#: Every field of a discovery entry (``APIResource``, aggregated ``APIResourceDiscovery``).
API_RESOURCE_FIELDS = {
    "name",
    "singularName",
    "namespaced",
    "kind",
    "verbs",
    "shortNames",
    "categories",
    "storageVersionHash",
}
RESOURCE_DISCOVERY_FIELDS = {
    "resource",
    "responseKind",
    "scope",
    "singularResource",
    "verbs",
    "shortNames",
    "categories",
    "subresources",
}
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def test_discovery_does_not_publish_selectable_fields(http: httpx.Client, shirts: str) -> None:
    """Upstream's ``APIResource`` has no field for them: OpenAPI is where they are named."""
    (resource,) = http.get(f"/apis/{GROUP}/v1").json()["resources"]
    assert resource["name"] == "shirts"
    assert set(resource) <= API_RESOURCE_FIELDS
    groups = http.get("/apis", headers={"Accept": AGGREGATED}).json()["items"]
    (group,) = [g for g in groups if g["metadata"]["name"] == GROUP]
    entries = [r for v in group["versions"] for r in v["resources"]]
    assert [r["resource"] for r in entries] == ["shirts", "shirts"]
    assert all(set(r) <= RESOURCE_DISCOVERY_FIELDS for r in entries)


@pytest.fixture(scope="module")
def gate_off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """A 1.31 server (the gate is beta there) with ``CustomResourceFieldSelectors`` turned off."""
    yield from serve_with_flags(
        tmp_path_factory,
        "kapi-no-field-selectors",
        "--emulated-version=1.31",
        "--feature-gates=CustomResourceFieldSelectors=false",
    )


def test_with_the_gate_off_selectable_fields_are_dropped_and_not_selectable(
    gate_off: KapiServer, tmp_path: Path
) -> None:
    kubectl = make_kubectl(gate_off, tmp_path, "1.31")
    kubectl.ok("apply", "-f", write(tmp_path, "crd.yaml", shirt_crd()))
    kubectl.ok("wait", "--for=condition=Established", f"crd/{CRD_NAME}", "--timeout=20s")
    stored = json.loads(kubectl.ok("get", "crd", CRD_NAME, "-o", "json").stdout)
    assert [sorted(v) for v in stored["spec"]["versions"]] == [
        ["name", "schema", "served", "storage"]
    ] * 2
    kubectl.ok("create", "-f", write(tmp_path, "shirts.yaml", *SHIRTS))
    result = kubectl.fails("get", "shirts", "--field-selector", "spec.color=blue")
    assert result.err_lines == [
        f'Error from server (BadRequest): Unable to find "{GROUP}/v1, Resource=shirts" that '
        'match label selector "", field selector "spec.color=blue": '
        "field label not supported: spec.color"
    ]
    assert selected(kubectl, "default", "metadata.name=shirt2") == ["shirt2"]
