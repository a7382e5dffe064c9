"""Defaulting follows upstream ``apiserver/schema/defaulting`` (Default + PruneNonNullableNulls)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.validation.defaulting import Defaulter


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def _defaulted(schema: dict[str, Any], obj: Any) -> Any:
    Defaulter(schema)(obj)
    return obj


def test_missing_properties_get_defaults_in_list_items() -> None:
    schema = {
        "type": "array",
        "items": _obj(a={"type": "string", "default": "A"}, b={"default": "B"}, c={"default": "C"}),
    }
    got = _defaulted(schema, [{"a": 1}, {"b": 1}, {"c": 1}])
    assert got == [
        {"a": 1, "b": "B", "c": "C"},
        {"a": "A", "b": 1, "c": "C"},
        {"a": "A", "b": "B", "c": 1},
    ]


def test_defaults_in_objects_and_additional_properties() -> None:
    schema = _obj(
        object=_obj(a={"default": "N"}, b={"default": "O"}),
        map={"type": "object", "additionalProperties": _obj(a={"default": "alpha"})},
        foo={"type": "string", "default": "bar"},
    )
    got = _defaulted(schema, {"object": {"a": 1}, "map": {"x": {"a": 1}, "y": {}}})
    assert got == {
        "object": {"a": 1, "b": "O"},
        "map": {"x": {"a": 1}, "y": {"a": "alpha"}},
        "foo": "bar",
    }


def test_only_missing_and_null_count_as_unset() -> None:
    schema = {"type": "array", "items": _obj(a={"default": "A"})}
    got = _defaulted(
        schema, [{}, {"a": 1}, {"a": 0}, {"a": 0.0}, {"a": ""}, {"a": None}, {"a": []}, {"a": {}}]
    )
    assert got == [
        {"a": "A"},
        {"a": 1},
        {"a": 0},
        {"a": 0.0},
        {"a": ""},
        {"a": "A"},
        {"a": []},
        {"a": {}},
    ]


def test_a_defaulted_object_is_defaulted_further() -> None:
    schema = _obj(spec={"type": "object", "default": {}, "properties": {"n": {"default": 3}}})
    assert _defaulted(schema, {}) == {"spec": {"n": 3}}


def test_defaults_are_deep_copied() -> None:
    defaulter = Defaulter(_obj(spec={"type": "object", "default": {"list": [1]}}))
    first: dict[str, Any] = {}
    defaulter(first)
    first["spec"]["list"].append(2)
    second: dict[str, Any] = {}
    defaulter(second)
    assert second == {"spec": {"list": [1]}}


def test_null_in_nullable_field_is_kept() -> None:
    schema = _obj(a={"nullable": True, "default": "A"})
    assert _defaulted(schema, {"a": None}) == {"a": None}


def test_null_in_non_nullable_field_gets_its_default() -> None:
    assert _defaulted(_obj(a={"default": "A"}), {"a": None}) == {"a": "A"}


def test_null_item_of_non_nullable_list_gets_the_item_default() -> None:
    schema = {"type": "array", "items": {"type": "string", "default": "A"}}
    assert _defaulted(schema, [None]) == ["A"]


def test_null_item_without_default_stays() -> None:
    schema = {"type": "array", "items": _obj(a={"default": "A"})}
    assert _defaulted(schema, [None]) == [None]


def test_null_additional_property_gets_the_value_default() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "string", "default": "v"}}
    assert _defaulted(schema, {"k": None}) == {"k": "v"}


def test_non_nullable_nulls_without_default_are_dropped() -> None:
    schema = {
        "type": "array",
        "items": _obj(
            a={"default": "A"},
            b={"nullable": True},
            c={"default": "C", "nullable": True},
            d={"type": "string"},
        ),
    }
    got = _defaulted(schema, [{"a": None}, {"b": None}, {"c": None}, {"d": None}, {"e": None}])
    # a is defaulted, b and c are nullable, d is dropped, e is unknown to the schema.
    assert got == [
        {"a": "A", "c": "C"},
        {"a": "A", "b": None, "c": "C"},
        {"a": "A", "c": None},
        {"a": "A", "c": "C"},
        {"a": "A", "c": "C", "e": None},
    ]


def test_null_map_values_without_default_are_dropped() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "string"}}
    assert _defaulted(schema, {"k": None, "v": "x"}) == {"v": "x"}


def test_preserved_unknown_fields_are_not_touched() -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert _defaulted(schema, {"free": None, "nested": {"x": None}}) == {
        "free": None,
        "nested": {"x": None},
    }


def test_default_null_counts_as_no_default() -> None:
    assert _defaulted(_obj(a={"type": "string", "default": None}), {}) == {}


@pytest.mark.parametrize("value", [None, 4, "s", [1, None]])
def test_values_without_object_schema_are_left_alone(value: Any) -> None:
    schema = {"type": "string", "default": "foo"}
    assert _defaulted(schema, value) == value


def test_changes_tells_when_a_stored_value_may_be_left_as_it_is() -> None:
    plain = Defaulter(_obj(spec={"type": "object", "properties": {"a": {"type": "string"}}}))
    defaulted = Defaulter(_obj(spec={"type": "object", "properties": {"a": {"default": "x"}}}))
    assert not plain.changes(b'{"spec":{"a":"b"}}')
    assert plain.changes(b'{"spec":{"a":null}}')  # a null may be pruned
    assert defaulted.changes(b'{"spec":{"a":"b"}}')
    # What `changes` promises: a value it lets through is exactly what defaulting makes of it.
    obj = {"spec": {"a": "b", "extra": [1, {"x": True}]}}
    plain(obj)
    assert obj == {"spec": {"a": "b", "extra": [1, {"x": True}]}}
