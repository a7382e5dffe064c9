"""CRD ``selectableFields`` (KEP-4358): CRD validation, and field selectors on custom resources.

Validation texts are kube-apiserver 1.33's (``validation.go``); serving follows
upstream's ``crConverter.ConvertFieldLabel`` (which labels a version accepts)
and the custom resource strategy's ``GetAttrs`` (the values they match).
"""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import orjson
import pytest

from kapi.apiextensions.resource import custom_resource
from kapi.apimachinery.field_selector import parse_selector
from kapi.apis.apiextensions_v1 import CustomResourceDefinitionStrategy
from kapi.apis.crd_validation import validate_crd
from kapi.endpoints.app import APIServerApp
from kapi.endpoints.openapi.v2 import custom_to_v2
from kapi.features import FeatureGate
from kapi.registry.predicate import SelectionPredicate
from kapi.server import APIServer, ServerConfig
from kapi.version import Version
from kapi.webhook import WebhookClientManager

Obj = dict[str, Any]


class _NoMetrics:
    """Ratcheting's figures, discarded: these tests compile CRDs without a server."""

    def observe_ratcheting(self, seconds: float) -> None:
        pass

    def count_ratcheted(self, group: str, resource: str, source: str, count: int) -> None:
        pass


_NO_METRICS = _NoMetrics()

SPEC_SCHEMA: Obj = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "color": {"type": "string"},
                "quantity": {"type": "integer"},
                "size": {"type": "string", "enum": ["S", "M"]},
                "since": {"type": "string", "format": "date-time"},
                "branded": {"type": "boolean"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        }
    },
}


def _version(name: str, fields: list[str], schema: Obj | None = None, **extra: Any) -> Obj:
    return {
        "name": name,
        "served": True,
        "storage": name == "v1",
        "schema": {"openAPIV3Schema": copy.deepcopy(schema or SPEC_SCHEMA)},
        "selectableFields": [{"jsonPath": path} for path in fields],
        **extra,
    }


def _crd(*versions: Obj, scope: str = "Namespaced") -> Obj:
    names = {"plural": "shirts", "singular": "shirt", "kind": "Shirt", "listKind": "ShirtList"}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "shirts.example.com"},
        "spec": {
            "group": "example.com",
            "scope": scope,
            "names": names,
            "versions": list(versions),
            "conversion": {"strategy": "None"},
        },
        "status": {"storedVersions": ["v1"], "acceptedNames": names},
    }


def _errors(crd: Obj) -> list[str]:
    return [str(e) for e in validate_crd(crd)]


# --- CRD validation ---------------------------------------------------------------------------


def test_fields_of_every_selectable_type_are_accepted() -> None:
    paths = [
        ".spec.color",
        ".spec.quantity",
        ".spec.size",  # an enum string
        ".spec.since",  # a string with a format
        ".spec.branded",
        ".spec.labels.team",  # a key of a map of strings
    ]
    assert _errors(_crd(_version("v1", paths))) == []


def test_per_version_fields_need_per_version_schemas() -> None:
    """Upstream moves identical schemas to ``spec.validation``; per-version fields then fail."""
    crd = _crd(_version("v1", [".spec.color"]), _version("v1beta1", [".spec.size"]))
    detail = "selectableFields may only be set when version.schema.openAPIV3Schema is not included"
    assert _errors(crd) == [
        f'spec.versions[0].selectableFields: Invalid value: "": {detail}',
        f'spec.versions[1].selectableFields: Invalid value: "": {detail}',
    ]
    crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["description"] = "differs"
    assert _errors(crd) == []


def test_fields_without_a_schema_are_refused_in_1_33_words() -> None:
    version = _version("v1", [".spec.color"])
    del version["schema"]
    errors = _errors(_crd(version))
    assert [e for e in errors if e.startswith("spec.selectableFields")] == [
        'spec.selectableFields: Invalid value: "": '
        "selectableFields may only be set when validations.schema is included"
    ]


def test_bad_fields_are_refused_with_upstreams_messages() -> None:
    fields = [".spec.labels", ".metadata.name", ".spec.color", ".spec.color", ".spec.nope"]
    p = "spec.selectableFields"
    assert _errors(_crd(_version("v1", fields))) == [
        f'{p}[0].jsonPath: Invalid value: ".spec.labels": must point to a field of type string, '
        "boolean or integer. Enum string fields and strings with formats are allowed.",
        f'{p}[1].jsonPath: Invalid value: ".metadata.name": is an invalid path: does not refer '
        "to a valid field",
        f'{p}[3].jsonPath: Duplicate value: ".spec.color"',
        f'{p}[4].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a '
        "valid field",
    ]


def test_at_most_eight_distinct_fields() -> None:
    schema = {"type": "object", "properties": {f"f{i}": {"type": "string"} for i in range(9)}}
    eight = [f".f{i}" for i in range(8)]
    assert _errors(_crd(_version("v1", [*eight, ".f0"], schema))) == [
        'spec.selectableFields[8].jsonPath: Duplicate value: ".f0"'
    ]
    assert _errors(_crd(_version("v1", [*eight, ".f8"], schema))) == [
        "spec.selectableFields: Too many: 9: must have at most 8 items"
    ]


# --- the served resource ----------------------------------------------------------------------


def test_each_version_has_its_selectable_fields_as_field_labels() -> None:
    schema_b = {**SPEC_SCHEMA, "description": "b"}
    crd = _crd(
        _version("v1", [".spec.color", ".spec.quantity"]),
        _version("v1beta1", [".spec.size"], schema_b),
        _version("v1alpha1", [], {**SPEC_SCHEMA, "description": "a"}),
    )
    resource = custom_resource(crd, WebhookClientManager(), FeatureGate(), _NO_METRICS).resource
    labels = {name: rv.field_labels for name, rv in resource.versions.items()}
    assert labels == {
        "v1": ("spec.color", "spec.quantity"),
        "v1beta1": ("spec.size",),
        "v1alpha1": (),
    }


def test_with_the_gate_off_selectable_fields_are_no_field_labels() -> None:
    crd = _crd(_version("v1", [".spec.color"]))
    off = FeatureGate({"CustomResourceFieldSelectors": False}, Version(1, 31))
    resource = custom_resource(crd, WebhookClientManager(), off, _NO_METRICS).resource
    assert resource.versions["v1"].field_labels == ()


def test_with_the_gate_off_a_new_crd_loses_its_selectable_fields() -> None:
    """Upstream ``dropDisabledFields``: dropped on create, kept on update if already used."""
    strategy = CustomResourceDefinitionStrategy(FeatureGate(emulated_version=Version(1, 30)))
    new = _crd(_version("v1", [".spec.color"]))
    strategy.prepare_for_create(new)
    assert "selectableFields" not in new["spec"]["versions"][0]

    old = _crd(_version("v1", [".spec.color"]))
    updated = _crd(_version("v1", [".spec.color", ".spec.size"]))
    strategy.prepare_for_update(updated, old)
    assert updated["spec"]["versions"][0]["selectableFields"] == [
        {"jsonPath": ".spec.color"},
        {"jsonPath": ".spec.size"},
    ]
    unused = _crd(_version("v1", []))
    del unused["spec"]["versions"][0]["selectableFields"]
    strategy.prepare_for_update(updated, unused)
    assert "selectableFields" not in updated["spec"]["versions"][0]


SHIRT: Obj = {
    "metadata": {"name": "s", "namespace": "ns"},
    "spec": {"color": "blue", "quantity": 2, "branded": False, "labels": {"team": "a"}},
}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("spec.color=blue", True),
        ("spec.quantity=2", True),
        ("spec.quantity=2.0", False),
        ("spec.branded=false", True),  # as Go's fmt.Sprint writes a bool
        ("spec.branded=False", False),
        ("spec.size=", True),  # a missing field is ""
        ("spec.size!=M", True),
        ("spec.labels.team=a", True),
        ("spec.color=blue,spec.quantity!=2", False),
    ],
)
def test_values_are_matched_as_upstream_writes_them(selector: str, matches: bool) -> None:
    assert SelectionPredicate(field=parse_selector(selector)).matches(SHIRT) is matches


# --- list requests ----------------------------------------------------------------------------


async def _get(app: APIServerApp, path: str, field_selector: str) -> tuple[int, Obj]:
    sent: list[Obj] = []

    async def receive() -> Obj:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Obj) -> None:
        sent.append(message)

    query = b"fieldSelector=" + field_selector.encode()
    scope = {"type": "http", "method": "GET", "path": path, "query_string": query, "headers": []}
    await app(scope, receive, send)
    return sent[0]["status"], orjson.loads(b"".join(m.get("body", b"") for m in sent[1:]))


def _list(tmp_path: Path, crd: Obj, objects: list[Obj], requests: list[tuple[str, str]]) -> Any:
    """Serve ``crd`` with ``objects`` stored, then answer ``(path, fieldSelector)`` lists."""

    async def run() -> list[tuple[int, Obj]]:
        server = APIServer(ServerConfig(data_dir=tmp_path))
        await server.start()
        try:
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}
            await server.store("", "namespaces").create(namespace)
            server.custom_resources.install(crd)
            resource = server.scheme.by_kind("example.com", "Shirt")
            assert resource is not None
            store = server.custom_resources.store_for(resource, "v1")
            for obj in objects:
                await store.create({"apiVersion": "example.com/v1", "kind": "Shirt", **obj})
            app = server.app()
            return [await _get(app, path, selector) for path, selector in requests]
        finally:
            await server.stop()

    return asyncio.run(run())


def _outcome(status: int, body: Obj) -> Any:
    if status == 200:
        return sorted(item["metadata"]["name"] for item in body["items"])
    return status, body["message"]


def test_cluster_scoped_resources_have_no_namespace_label(tmp_path: Path) -> None:
    crd = _crd(_version("v1", [".spec.color"]), scope="Cluster")
    shirts = [
        {"metadata": {"name": "a"}, "spec": {"color": "blue"}},
        {"metadata": {"name": "b"}, "spec": {"color": "red"}},
    ]
    path = "/apis/example.com/v1/shirts"
    answers = _list(
        tmp_path,
        crd,
        shirts,
        [(path, "spec.color=blue"), (path, "metadata.name=b"), (path, "metadata.namespace=")],
    )
    assert [_outcome(*a) for a in answers] == [
        ["a"],
        ["b"],
        (400, "field label not supported: metadata.namespace"),
    ]


def test_versions_accept_their_own_labels_only(tmp_path: Path) -> None:
    crd = _crd(
        _version("v1", [".spec.color"]),
        _version("v1beta1", [], {**SPEC_SCHEMA, "description": "b"}),
    )
    shirts = [{"metadata": {"name": "a", "namespace": "ns"}, "spec": {"color": "blue"}}]
    v1, v1beta1 = "/apis/example.com/v1/shirts", "/apis/example.com/v1beta1/namespaces/ns/shirts"
    answers = _list(
        tmp_path,
        crd,
        shirts,
        [
            (v1, "spec.color=blue,metadata.namespace=ns"),
            (v1beta1, "metadata.namespace=ns"),
            # Without selectable fields a custom resource still answers in crConverter's words.
            (v1beta1, "spec.color=blue"),
            (v1, "spec.quantity=1"),
        ],
    )
    assert [_outcome(*a) for a in answers] == [
        ["a"],
        ["a"],
        (400, "field label not supported: spec.color"),
        (400, "field label not supported: spec.quantity"),
    ]


# --- OpenAPI and the feature gate -------------------------------------------------------------


def test_openapi_v2_keeps_selectable_fields_on_a_bare_definition() -> None:
    """A root that keeps unknown fields is published as a bare object, extensions kept."""
    gvk = [{"group": "example.com", "kind": "Shirt", "version": "v1"}]
    selectable = [{"fieldPath": "spec.color"}]
    schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"spec": {"type": "object"}},
        "x-kubernetes-group-version-kind": gvk,
        "x-kubernetes-selectable-fields": selectable,
    }
    assert custom_to_v2(schema) == {
        "type": "object",
        "x-kubernetes-group-version-kind": gvk,
        "x-kubernetes-selectable-fields": selectable,
    }


def test_feature_gate_is_ga_and_locked_on() -> None:
    assert FeatureGate.parse("CustomResourceFieldSelectors=true").enabled(
        "CustomResourceFieldSelectors"
    )
    with pytest.raises(ValueError) as locked:
        FeatureGate.parse("CustomResourceFieldSelectors=false")
    assert str(locked.value) == (
        "cannot set feature gate CustomResourceFieldSelectors to false, feature is locked to true"
    )


@pytest.mark.parametrize(("emulated", "default"), [(Version(1, 30), False), (Version(1, 31), True)])
def test_feature_gate_follows_the_emulated_release(emulated: Version, default: bool) -> None:
    """Alpha (off) in 1.30 and beta (on) in 1.31, settable either way until GA in 1.32."""
    assert FeatureGate(emulated_version=emulated).enabled("CustomResourceFieldSelectors") is default
    for value in (True, False):
        gates = FeatureGate.parse(f"CustomResourceFieldSelectors={str(value).lower()}", emulated)
        assert gates.enabled("CustomResourceFieldSelectors") is value
