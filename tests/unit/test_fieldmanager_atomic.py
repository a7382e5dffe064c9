"""Atomic structs (``+structType=atomic``) in server-side apply: one value, owned whole.

A LabelSelector, an OwnerReference or an ObjectReference is a leaf to the
field manager, as structured-merge-diff makes any map typed
``x-kubernetes-map-type: atomic``: its field set stops at the struct, an
apply replaces it instead of merging into it, and a conflict names the
struct.  The declarations publish the marker in OpenAPI v3 and v2.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import pathlib
import pkgutil
from collections.abc import Iterator
from typing import Any

import pytest

import kapi.apis
from kapi.apimachinery.errors import StatusError
from kapi.apis import generated
from kapi.apis.core_v1 import ConfigMap
from kapi.apis.policy import PodDisruptionBudgetV1, PodDisruptionBudgetV1beta1
from kapi.endpoints.openapi.v2 import to_v2
from kapi.registry.fieldmanager import typed
from kapi.registry.fieldmanager.fieldpath import path_string
from kapi.registry.fieldmanager.manager import FieldManager
from kapi.registry.fieldmanager.schema import declared_atom
from kapi.registry.fieldmanager.updater import Converter
from kapi.runtime import patch
from kapi.runtime.meta import LabelSelector
from kapi.runtime.schema import STRING, Field, List, Map, Schema, Struct, components

Object = dict[str, Any]
FACTS = pathlib.Path(__file__).parents[2] / "tools" / "apigen" / "facts"
PDB = declared_atom(PodDisruptionBudgetV1)
OLD = "2020-01-01T00:00:00Z"


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def pdb_manager() -> FieldManager:
    return FieldManager(
        kind="PodDisruptionBudget",
        api_version="policy/v1",
        atom=PDB,
        converter=Converter(lambda v: PDB if v == "policy/v1" else None),
        held_by_value=("spec", "status"),
    )


def pdb(selector: Object | None = None, **spec: Any) -> Object:
    if selector is not None:
        spec["selector"] = selector
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": spec,
    }


def labels(**match: str) -> Object:
    return {"matchLabels": match}


def stored(obj: Object) -> Object:
    """``obj`` as the store holds it after the write: with a uid."""
    out = json.loads(json.dumps(obj))
    out["metadata"]["uid"] = "0000"
    return out


def fields_of(obj: Object) -> dict[str, Object]:
    """Each manager's FieldsV1."""
    return {e["manager"]: e["fieldsV1"] for e in obj["metadata"].get("managedFields") or []}


def apply(live: Object | None, config: Object, manager: str, force: bool = False) -> Object:
    return stored(run(pdb_manager().apply(live, config, manager, force)))


def conflict(live: Object, config: Object, manager: str) -> StatusError:
    with pytest.raises(StatusError) as caught:
        run(pdb_manager().apply(live, config, manager, False))
    assert caught.value.code == 409
    return caught.value


# -- the schema -------------------------------------------------------------------------


def _structs(node: Schema, seen: dict[int, Struct]) -> Iterator[Struct]:
    if isinstance(node, Struct):
        if id(node) in seen:
            return
        seen[id(node)] = node
        yield node
        for f in node.fields:
            yield from _structs(f.schema, seen)
    elif isinstance(node, List):
        yield from _structs(node.items, seen)
    elif isinstance(node, Map):
        yield from _structs(node.values, seen)


def declared_structs() -> list[Struct]:
    """Every struct the built-in kinds declare (a name may be declared more than once)."""
    seen: dict[int, Struct] = {}
    out: list[Struct] = []
    names = [f"kapi.apis.{m.name}" for m in pkgutil.iter_modules(kapi.apis.__path__)]
    names += [f"kapi.apis.generated.{m.name}" for m in pkgutil.iter_modules(generated.__path__)]
    for name in names:
        for value in vars(importlib.import_module(name)).values():
            if isinstance(value, Struct):
                out += _structs(value, seen)
    return out


#: The structs kapi declares that k8s.io/api and apimachinery tag ``+structType=atomic``.
UPSTREAM_ATOMIC = {
    "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector",
    "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
    "io.k8s.api.core.v1.EndpointAddress",
    "io.k8s.api.core.v1.EndpointPort",
    "io.k8s.api.core.v1.LocalObjectReference",
    "io.k8s.api.core.v1.ObjectReference",
    "io.k8s.api.core.v1.TypedLocalObjectReference",
    "io.k8s.api.discovery.v1.EndpointPort",
    "io.k8s.api.networking.v1.ServiceBackendPort",
} | {
    # The generated declarations (tools/apigen) carry the marker from upstream's facts.
    f"io.k8s.api.{facts['source']['package'].replace('/', '.')}.{name}"
    for path in sorted(FACTS.glob("*.json"))
    for facts in [json.loads(path.read_text())]
    for name, declared in facts["types"].items()
    if declared.get("structType") == "atomic"
}


def test_the_structs_upstream_makes_atomic_are_declared_atomic() -> None:
    structs = declared_structs()
    assert {s.name for s in structs} >= UPSTREAM_ATOMIC
    for struct in structs:
        expected = "atomic" if struct.name in UPSTREAM_ATOMIC else None
        assert struct.map_type == expected, struct.name
        assert declared_atom(struct).map.atomic is (expected == "atomic"), struct.name  # type: ignore[union-attr]


def test_openapi_publishes_the_map_type_on_the_definition() -> None:
    schemas = components([PodDisruptionBudgetV1])
    selector = schemas["io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"]
    assert selector["x-kubernetes-map-type"] == "atomic"
    assert to_v2(selector)["x-kubernetes-map-type"] == "atomic"
    requirement = schemas["io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement"]
    assert "x-kubernetes-map-type" not in requirement
    # The PDB v1 property keeps its strategic-merge strategy beside the reference.
    spec = schemas["io.k8s.api.policy.v1.PodDisruptionBudgetSpec"]["properties"]["selector"]
    assert spec["x-kubernetes-patch-strategy"] == "replace"
    assert "x-kubernetes-map-type" not in spec


def test_a_struct_declared_atomic_is_an_atomic_map() -> None:
    fields = (Field("a", STRING),)
    assert declared_atom(Struct("test.Atomic", fields, map_type="atomic")).map.atomic  # type: ignore[union-attr]
    assert not declared_atom(Struct("test.Granular", fields)).map.atomic  # type: ignore[union-attr]


# -- typed values -----------------------------------------------------------------------


def test_an_atomic_struct_is_one_leaf_of_the_field_set() -> None:
    obj = pdb(labels(a="1", b="2"), minAvailable=1)
    found = typed.to_field_set(obj, PDB)
    assert [path_string(p) for p in found.paths()] == [
        ".apiVersion",
        ".kind",
        ".metadata.name",
        ".metadata.namespace",
        ".spec.minAvailable",
        ".spec.selector",
    ]
    assert found.to_fields_v1()["f:spec"] == {"f:minAvailable": {}, "f:selector": {}}


def test_a_change_inside_an_atomic_struct_modifies_the_struct() -> None:
    comparison = typed.compare(pdb(labels(a="1")), pdb(labels(a="1", b="2")), PDB)
    assert [path_string(p) for p in comparison.modified.paths()] == [".spec.selector"]
    assert not comparison.added and not comparison.removed


# -- apply ------------------------------------------------------------------------------


def test_a_different_selector_conflicts_on_the_selector_as_a_whole() -> None:
    live = apply(None, pdb(labels(a="1", b="2"), minAvailable=1), "A")
    error = conflict(live, pdb(labels(c="3")), "B")
    assert error.message == 'Apply failed with 1 conflict: conflict with "A": .spec.selector'
    assert error.details == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "A"',
                "field": ".spec.selector",
            }
        ]
    }


def test_reapplying_replaces_the_selector_instead_of_merging_into_it() -> None:
    live = apply(None, pdb(labels(a="1", b="2"), minAvailable=1), "A")
    after = apply(live, pdb(labels(a="1"), minAvailable=1), "A")
    assert after["spec"]["selector"] == labels(a="1")
    assert fields_of(after) == {"A": {"f:spec": {"f:minAvailable": {}, "f:selector": {}}}}


def test_matching_a_granular_map_merges_where_the_atomic_struct_replaces() -> None:
    # matchLabels inside the atomic selector is replaced; labels in metadata merge.
    first = pdb(labels(a="1", b="2"), minAvailable=1)
    first["metadata"]["labels"] = {"x": "1"}
    live = apply(None, first, "A")
    second = pdb(labels(b="2"))
    second["metadata"]["labels"] = {"y": "1"}
    after = apply(live, second, "B", force=True)
    assert after["spec"]["selector"] == labels(b="2")
    assert after["metadata"]["labels"] == {"x": "1", "y": "1"}


def test_leaving_the_selector_out_removes_it() -> None:
    live = apply(None, pdb(labels(a="1"), minAvailable=1), "A")
    after = apply(live, pdb(minAvailable=1), "A")
    assert "selector" not in after["spec"]
    assert fields_of(after) == {"A": {"f:spec": {"f:minAvailable": {}}}}


def test_the_same_selector_is_co_owned_and_then_neither_may_change_it_alone() -> None:
    live = apply(None, pdb(labels(a="1"), minAvailable=1), "A")
    live = apply(live, pdb(labels(a="1")), "B")
    assert fields_of(live)["B"] == {"f:spec": {"f:selector": {}}}
    error = conflict(live, pdb(labels(a="2"), minAvailable=1), "A")
    assert error.message == 'Apply failed with 1 conflict: conflict with "B": .spec.selector'
    # A leaving it out keeps it: B still owns it.
    after = apply(live, pdb(minAvailable=1), "A")
    assert after["spec"]["selector"] == labels(a="1")


def test_forcing_takes_the_whole_selector() -> None:
    live = apply(None, pdb(labels(a="1", b="2"), minAvailable=1), "A")
    after = apply(live, pdb(labels(c="3")), "B", force=True)
    assert after["spec"]["selector"] == labels(c="3")
    assert fields_of(after) == {
        "B": {"f:spec": {"f:selector": {}}},
        "A": {"f:spec": {"f:minAvailable": {}}},
    }


def test_an_update_inside_the_selector_takes_the_selector_from_its_applier() -> None:
    live = apply(None, pdb(labels(a="1"), minAvailable=1), "A")
    edited = json.loads(json.dumps(live))
    edited["spec"]["selector"]["matchLabels"]["b"] = "2"
    managed = run(pdb_manager().update(live, edited, "editor"))
    edited["metadata"]["managedFields"] = managed
    assert fields_of(edited) == {
        "A": {"f:spec": {"f:minAvailable": {}}},
        "editor": {"f:spec": {"f:selector": {}}},
    }
    error = conflict(stored(edited), pdb(labels(a="1"), minAvailable=1), "A")
    assert error.message == (
        'Apply failed with 1 conflict: conflict with "editor" using policy/v1: .spec.selector'
    )


def test_fields_owned_inside_a_struct_that_became_atomic_collapse_to_it() -> None:
    live = stored(pdb(labels(a="1"), minAvailable=1))
    live["metadata"]["managedFields"] = [
        {
            "manager": "before",
            "operation": "Apply",
            "apiVersion": "policy/v1",
            "time": OLD,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:selector": {"f:matchLabels": {"f:a": {}}}}},
        }
    ]
    error = conflict(live, pdb(labels(a="1", b="2")), "B")
    assert error.message == 'Apply failed with 1 conflict: conflict with "before": .spec.selector'
    edited = json.loads(json.dumps(live))
    edited["spec"]["minAvailable"] = 2
    managed = run(pdb_manager().update(live, edited, "editor"))
    assert managed[0]["manager"] == "before"
    assert managed[0]["fieldsV1"] == {"f:spec": {"f:selector": {}}}


# -- other atomic structs ---------------------------------------------------------------


def test_an_owner_reference_is_owned_as_one_list_item() -> None:
    atom = declared_atom(ConfigMap)
    fm = FieldManager(
        kind="ConfigMap",
        api_version="v1",
        atom=atom,
        converter=Converter(lambda v: atom if v == "v1" else None),
    )
    owner = {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u-1"}
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default", "ownerReferences": [owner]},
    }
    managed = run(fm.update(None, obj, "creator"))
    assert managed[0]["fieldsV1"] == {
        "f:metadata": {"f:ownerReferences": {".": {}, 'k:{"uid":"u-1"}': {}}}
    }


# -- strategic merge patch is not server-side apply -------------------------------------


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (PodDisruptionBudgetV1, labels(b="2")),  # patchStrategy replace
        (PodDisruptionBudgetV1beta1, labels(a="1", b="2")),
    ],
)
def test_strategic_merge_patch_follows_the_patch_strategy_not_the_map_type(
    schema: Struct, expected: Object
) -> None:
    assert LabelSelector.map_type == "atomic"
    patched = patch.strategic_merge_patch(
        pdb(labels(a="1")), {"spec": {"selector": labels(b="2")}}, schema
    )
    assert patched["spec"]["selector"] == expected
