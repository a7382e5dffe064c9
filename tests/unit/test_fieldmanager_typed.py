"""Typed values: field sets, comparison, merge and removal per list and map type."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.apis.core_v1 import ConfigMap
from kapi.registry.fieldmanager import typed
from kapi.registry.fieldmanager.fieldpath import FieldSet, path_string
from kapi.registry.fieldmanager.schema import declared_atom, openapi_atom
from kapi.runtime.meta import ObjectMeta

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name", "protocol"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "protocol": {"type": "string", "default": "TCP"},
                            "port": {"type": "integer"},
                        },
                    },
                },
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
                "args": {"type": "array", "items": {"type": "string"}},
                "env": {
                    "type": "array",
                    "x-kubernetes-patch-strategy": "merge",
                    "x-kubernetes-patch-merge-key": "name",
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
                    },
                },
                "selector": {
                    "type": "object",
                    "x-kubernetes-map-type": "atomic",
                    "additionalProperties": {"type": "string"},
                },
                "config": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "replicas": {"type": "integer"},
            },
        },
    },
}
ATOM = openapi_atom(SCHEMA, ObjectMeta)


def paths(s: FieldSet) -> list[str]:
    return [path_string(p) for p in s.paths()]


def spec(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "spec": fields}


# -- field sets ---------------------------------------------------------------------------


def test_field_set_per_list_and_map_type() -> None:
    obj = spec(
        ports=[{"name": "http", "port": 80}],
        tags=["a", "b"],
        args=["x", "y"],
        env=[{"name": "A", "value": "1"}],
        selector={"app": "x"},
        config={"k": "v"},
        free={"deep": {"er": [1, 2]}},
        replicas=1,
    )
    assert paths(typed.to_field_set(obj, ATOM)) == [
        ".apiVersion",
        ".kind",
        ".spec.args",  # atomic list: one leaf
        ".spec.replicas",
        ".spec.selector",  # atomic map: one leaf
        ".spec.config.k",  # map values are members too
        '.spec.env[name="A"]',
        '.spec.env[name="A"].name',
        '.spec.env[name="A"].value',
        ".spec.free.deep",
        ".spec.free.deep.er",  # a free-form list is atomic
        '.spec.ports[name="http",protocol="TCP"]',  # a missing key takes its default
        '.spec.ports[name="http",protocol="TCP"].name',
        '.spec.ports[name="http",protocol="TCP"].port',
        '.spec.tags[="a"]',
        '.spec.tags[="b"]',
    ]


def test_field_set_members_for_empty_and_null_values() -> None:
    obj = {"spec": {"config": {}, "replicas": None, "tags": []}}
    assert paths(typed.to_field_set(obj, ATOM)) == [".spec.config", ".spec.replicas"]


def test_built_in_lists_follow_their_declared_strategy() -> None:
    atom = declared_atom(ConfigMap)
    obj = {
        "metadata": {
            "finalizers": ["a"],
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "X", "name": "n", "uid": "u"},
            ],
        }
    }
    assert paths(typed.to_field_set(obj, atom)) == [
        '.metadata.finalizers[="a"]',
        '.metadata.ownerReferences[uid="u"]',  # an OwnerReference is atomic: one leaf
    ]


# -- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (spec(nope=1), ".spec.nope: field not declared in schema"),
        (spec(replicas="x"), ".spec.replicas: expected numeric (int or float), got string"),
        (
            spec(config={"k": 1}),
            ".spec.config.k: expected string, got &value.valueUnstructured{Value:1}",
        ),
        (
            spec(tags=["a", "a"]),
            '.spec.tags: duplicate entries for key [="a"]',
        ),
        (
            spec(ports=[{"port": 1}]),
            ".spec.ports: element 0: associative list with keys has an element that omits "
            'key field "name" (and doesn\'t have default value)',
        ),
        (
            spec(tags=[{"a": 1}]),
            ".spec.tags: element 0: associative list without keys has an element that's a map type",
        ),
        (spec(ports="x"), ".spec.ports: expected list, got &{x}"),
    ],
)
def test_validation_errors(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(typed.ValidationErrors) as raised:
        typed.validate(obj, ATOM)
    assert str(raised.value) == message


def test_live_objects_may_hold_duplicates() -> None:
    obj = spec(tags=["a", "a"])
    typed.validate(obj, ATOM, allow_duplicates=True)
    assert paths(typed.to_field_set(obj, ATOM)) == [".apiVersion", ".kind", '.spec.tags[="a"]']


# -- comparison ---------------------------------------------------------------------------


def test_compare_reports_removed_modified_added() -> None:
    old = spec(replicas=1, tags=["a", "b"], config={"k": "v", "gone": "x"})
    new = spec(replicas=2, tags=["b", "c"], config={"k": "v"}, args=["z"])
    comparison = typed.compare(old, new, ATOM)
    assert paths(comparison.removed) == [".spec.config.gone", '.spec.tags[="a"]']
    assert paths(comparison.modified) == [".spec.replicas"]
    assert paths(comparison.added) == [".spec.args", '.spec.tags[="c"]']
    same = typed.compare(new, new, ATOM)
    assert not same.removed and not same.modified and not same.added


def test_compare_marks_new_maps_and_items_themselves() -> None:
    comparison = typed.compare(spec(), spec(config={"k": "v"}, ports=[{"name": "a"}]), ATOM)
    assert paths(comparison.added) == [
        ".spec.config",
        ".spec.ports",
        ".spec.config.k",
        '.spec.ports[name="a",protocol="TCP"]',
        '.spec.ports[name="a",protocol="TCP"].name',
    ]


def test_compare_atomic_values_as_leaves() -> None:
    comparison = typed.compare(
        spec(selector={"a": "1"}, args=["x"]), spec(selector={"a": "2"}, args=["y"]), ATOM
    )
    assert paths(comparison.modified) == [".spec.args", ".spec.selector"]


def test_compare_numbers_by_value() -> None:
    free_old, free_new = spec(free={"n": 1, "s": "1"}), spec(free={"n": 1.0, "s": 1})
    assert paths(typed.compare(free_old, free_new, ATOM).modified) == [".spec.free.s"]


# -- merge --------------------------------------------------------------------------------


def test_merge_per_list_type() -> None:
    live = spec(
        ports=[{"name": "a", "port": 1}, {"name": "b", "port": 2}],
        tags=["x", "y"],
        args=["1", "2"],
        selector={"keep": "me"},
        config={"old": "1"},
    )
    config = spec(
        ports=[{"name": "b", "port": 20}, {"name": "c", "port": 3}],
        tags=["z"],
        args=["3"],
        selector={"new": "1"},
        config={"new": "2"},
    )
    merged = typed.merge(live, config, ATOM)
    assert merged["spec"] == {
        # Items merge by key; the live order is kept, new items follow the one before them.
        "ports": [{"name": "a", "port": 1}, {"name": "b", "port": 20}, {"name": "c", "port": 3}],
        "tags": ["x", "y", "z"],
        # Atomic lists and maps are replaced whole; granular maps merge.
        "args": ["3"],
        "selector": {"new": "1"},
        "config": {"old": "1", "new": "2"},
    }


def test_merge_follows_the_configuration_order_for_shared_items() -> None:
    live = spec(tags=["a", "b", "c"])
    merged = typed.merge(live, spec(tags=["c", "a"]), ATOM)
    assert merged["spec"]["tags"] == ["b", "c", "a"]


def test_merge_rejects_duplicates_in_the_configuration() -> None:
    with pytest.raises(typed.ValidationErrors, match=r'duplicate entries for key \[="a"\]'):
        typed.merge(spec(), spec(tags=["a", "a"]), ATOM)


# -- removal ------------------------------------------------------------------------------


def test_remove_items_leaves_null_for_emptied_containers() -> None:
    obj = spec(tags=["a", "b"], config={"k": "v"}, replicas=1)
    to_remove = typed.to_field_set(spec(tags=["a"], config={"k": "v"}), ATOM)
    out = typed.remove_items(obj, ATOM, to_remove)
    assert out == {"spec": {"tags": ["b"], "config": None, "replicas": 1}}
