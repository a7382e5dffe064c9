"""Pruning follows upstream ``apiserver/schema/pruning`` (cases mirror its algorithm_test)."""

from __future__ import annotations

from typing import Any

from kapi.validation.pruning import Pruner, prune


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def _pruned(obj: Any, schema: dict[str, Any], *, root: bool = False) -> tuple[Any, list[str]]:
    paths = prune(obj, schema, is_resource_root=root)
    return obj, paths


def test_object_array() -> None:
    schema = {"type": "array", "items": _obj(a={}, c={})}
    got = _pruned([{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}], schema)
    assert got == ([{"a": 1}, {}, {"a": 1, "c": 3}], ["[1].b", "[2].b"])


def test_nested_paths_use_dots_and_indexes_sorted() -> None:
    schema = _obj(array={"type": "array", "items": _obj(a={}, c={})}, specified=_obj(a={}, c={}))
    obj = {
        "unspecified": {"a": 1},
        "specified": {"a": 1, "b": 2, "c": 3},
        "array": [{"a": 1}, {"b": 1}, {"a": 1, "b": 2, "c": 3}],
    }
    assert _pruned(obj, schema) == (
        {"specified": {"a": 1, "c": 3}, "array": [{"a": 1}, {}, {"a": 1, "c": 3}]},
        ["array[1].b", "array[2].b", "specified.b", "unspecified"],
    )


def test_preserve_unknown_fields_applies_to_its_node_only() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {
            "alpha": {"type": "string"},
            "pruning": _obj(
                preserving={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                pruning={"type": "object"},
            ),
            "preserving": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {
                    "pruning": {"type": "object"},
                    "anything": {"x-kubernetes-preserve-unknown-fields": True},
                },
            },
            "map": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "additionalProperties": _obj(specified={"type": "object"}),
            },
        },
    }
    obj = {
        "unspecified": "bar",
        "alpha": "abc",
        "pruning": {
            "unspecified": "bar",
            "pruning": {"unspecified": "bar"},
            "apiVersion": "unknown",
            "preserving": {"unspecified": "bar"},
        },
        "preserving": {
            "unspecified": {"unspecified": "bar"},
            "pruning": {"unspecified": "bar"},
            "anything": [{"foo": True}],
        },
        "map": {"foo": {"specified": {"unspecified": "bar"}, "unspecified": "bar"}},
    }
    got, paths = _pruned(obj, schema)
    assert got == {
        "unspecified": "bar",
        "alpha": "abc",
        "pruning": {"pruning": {}, "preserving": {"unspecified": "bar"}},
        "preserving": {
            "unspecified": {"unspecified": "bar"},
            "pruning": {},
            "anything": [{"foo": True}],
        },
        "map": {"foo": {"specified": {}}},
    }
    assert paths == [
        "map.foo.specified.unspecified",
        "map.foo.unspecified",
        "preserving.pruning.unspecified",
        "pruning.apiVersion",
        "pruning.pruning.unspecified",
        "pruning.unspecified",
    ]


def test_additional_properties_schema_prunes_values() -> None:
    schema = _obj(a={}, c={"type": "object", "additionalProperties": {"type": "integer"}})
    obj = {"a": 1, "b": 1, "c": {"a": 1, "b": 2, "c": {"a": 1}}}
    assert _pruned(obj, schema) == ({"a": 1, "c": {"a": 1, "b": 2, "c": {}}}, ["b", "c.c.a"])


def test_additional_properties_without_schema_keeps_keys_but_not_their_fields() -> None:
    for allows in (True, False):
        schema = _obj(a={}, c={"type": "object", "additionalProperties": allows})
        obj = {"a": 1, "b": 1, "c": {"a": 1, "c": {"a": 1, "apiVersion": "unknown"}}}
        assert _pruned(obj, schema) == (
            {"a": 1, "c": {"a": 1, "c": {}}},
            ["b", "c.c.a", "c.c.apiVersion"],
        )


def test_resource_root_keeps_type_and_object_meta() -> None:
    obj = {"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x", "odd": 1}, "extra": 1}
    paths = Pruner(_obj(spec={"type": "object"})).prune(obj)
    assert obj == {"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x", "odd": 1}}
    assert paths == ["extra"]


def test_meta_fields_at_a_non_resource_root_are_dropped_without_report() -> None:
    obj = {"apiVersion": "a/v1", "kind": "K", "metadata": {}, "extra": 1}
    assert _pruned(obj, _obj(spec={})) == ({}, ["extra"])


def test_embedded_resources() -> None:
    embedded = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "properties": {"spec": {"type": "object"}},
    }
    preserving = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }
    schema = _obj(
        pruned=embedded,
        preserving=preserving,
        nested=_obj(items={"type": "array", "items": embedded}),
    )

    def resource() -> dict[str, Any]:
        return {
            "apiVersion": "foo/v1",
            "kind": "Foo",
            "unspecified": "bar",
            "metadata": {"name": "instance", "unspecified": "bar"},
            "spec": {"unspecified": "bar"},
        }

    obj = {"pruned": resource(), "preserving": resource(), "nested": {"items": [resource()]}}
    got, paths = _pruned(obj, schema, root=True)
    cut = {"apiVersion": "foo/v1", "kind": "Foo", "metadata": {"name": "instance"}, "spec": {}}
    assert got == {
        "pruned": cut,
        "preserving": {
            "apiVersion": "foo/v1",
            "kind": "Foo",
            "unspecified": "bar",
            "metadata": {"name": "instance"},
            "spec": {"unspecified": "bar"},
        },
        "nested": {"items": [cut]},
    }
    # Pruned fields first (upstream pruning), then embedded ObjectMeta (objectmeta.Coerce).
    assert paths == [
        "nested.items[0].spec.unspecified",
        "nested.items[0].unspecified",
        "pruned.spec.unspecified",
        "pruned.unspecified",
        "nested.items[0].metadata.unspecified",
        "preserving.metadata.unspecified",
        "pruned.metadata.unspecified",
    ]


def test_embedded_metadata_is_cut_to_object_meta() -> None:
    schema = _obj(
        templates={
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            },
        }
    )
    meta = {
        "name": "n",
        "namespace": "",
        "labels": {"a": "b"},
        "creationTimestamp": None,
        "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "u", "x": 1}],
        "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}],
    }
    obj = {"templates": {"t": {"metadata": meta}}}
    paths = prune(obj, schema)
    assert obj["templates"]["t"]["metadata"] == {
        "name": "n",
        "labels": {"a": "b"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "u"}],
        "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}],
    }
    # Upstream builds these with field.Path, so map entries render as [key].
    assert paths == ["templates[t].metadata.ownerReferences[0].x"]


def test_embedded_metadata_can_be_left_alone() -> None:
    schema = _obj(
        r={"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"a": {}}}
    )
    obj = {"r": {"metadata": {"odd": 1}, "b": 1}}
    assert prune(obj, schema, embedded_metadata=False) == ["r.b"]
    assert obj == {"r": {"metadata": {"odd": 1}}}


def test_compiled_pruner_is_reusable() -> None:
    pruner = Pruner(_obj(spec=_obj(a={})))
    for _ in range(2):
        obj = {"spec": {"a": 1, "b": 2}}
        assert pruner.prune(obj) == ["spec.b"]
        assert obj == {"spec": {"a": 1}}


def test_scalars_and_null_pass_through() -> None:
    assert _pruned(4, {}) == (4, [])
    assert _pruned(None, {}) == (None, [])
    assert _pruned([1, 2], {"type": "array", "items": {}}) == ([1, 2], [])
