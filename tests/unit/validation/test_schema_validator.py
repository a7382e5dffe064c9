"""SchemaValidator: every keyword with upstream's exact messages, paths and causes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kapi.apimachinery import errors
from kapi.apimachinery.field_errors import FieldError, Path
from kapi.validation.correlation import CorrelatedObject
from kapi.validation.schema_validator import SchemaValidator


def _errs(schema: dict[str, Any], obj: Any, path: Path | None = None) -> list[str]:
    return [str(e) for e in SchemaValidator(schema).validate(obj, path)]


def _causes(errs: list[FieldError]) -> list[dict[str, str]]:
    """The StatusCauses a 422 for these errors carries."""
    return errors.invalid("Widget", "example.com", "w", errs).details["causes"]


def _spec(props: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": props, **kw}},
    }


def test_go_named_group_pattern_matches() -> None:
    schema = _spec({"x": {"type": "string", "pattern": "^(?<word>[a-z]+)$"}})
    assert _errs(schema, {"spec": {"x": "abc"}}) == []


def test_minimum_message_and_cause() -> None:
    errs = SchemaValidator(_spec({"replicas": {"type": "integer", "minimum": 1}})).validate(
        {"spec": {"replicas": 0}}
    )
    assert [str(e) for e in errs] == [
        "spec.replicas: Invalid value: 0: "
        "spec.replicas in body should be greater than or equal to 1"
    ]
    assert _causes(errs)[0] == {
        "reason": "FieldValueInvalid",
        "message": "Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
        "field": "spec.replicas",
    }


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        (
            {"type": "integer", "maximum": 5},
            6,
            "Invalid value: 6: spec.x in body should be less than or equal to 5",
        ),
        (
            {"type": "integer", "maximum": 5, "exclusiveMaximum": True},
            5,
            "Invalid value: 5: spec.x in body should be less than 5",
        ),
        (
            {"type": "integer", "minimum": 5, "exclusiveMinimum": True},
            5,
            "Invalid value: 5: spec.x in body should be greater than 5",
        ),
        (
            {"type": "number", "minimum": 0.5},
            0.25,
            "Invalid value: 0.25: spec.x in body should be greater than or equal to 0.5",
        ),
        (
            {"type": "integer", "multipleOf": 3},
            4,
            "Invalid value: 4: spec.x in body should be a multiple of 3",
        ),
        ({"type": "string", "maxLength": 2}, "abc", "Too long: may not be more than 2 bytes"),
        (
            {"type": "string", "minLength": 2},
            "a",
            'Invalid value: "a": spec.x in body should be at least 2 chars long',
        ),
        (
            {"type": "string", "pattern": "^[a-z]+$"},
            "A1",
            "Invalid value: \"A1\": spec.x in body should match '^[a-z]+$'",
        ),
        (
            {"type": "string", "pattern": "^(?<word>[a-z]+)$"},  # Go's named-group syntax
            "A1",
            "Invalid value: \"A1\": spec.x in body should match '^(?<word>[a-z]+)$'",
        ),
        (
            {"type": "string", "format": "uuid"},
            "nope",
            'Invalid value: "nope": spec.x in body must be of type uuid: "nope"',
        ),
        (
            {"type": "string", "format": "date-time"},
            "x",
            'Invalid value: "x": spec.x in body must be of type date-time: "x"',
        ),
        (
            {"type": "integer"},
            "s",
            'Invalid value: "string": spec.x in body must be of type integer: "string"',
        ),
        (
            {"type": "string"},
            None,
            'Invalid value: "null": spec.x in body must be of type string: "null"',
        ),
        (
            {"type": "boolean"},
            1,
            'Invalid value: "integer": spec.x in body must be of type boolean: "integer"',
        ),
        (
            {"type": "array", "minItems": 2},
            [1],
            "Invalid value: 1: spec.x in body should have at least 2 items",
        ),
        ({"type": "array", "maxItems": 1}, [1, 2], "Too many: 2: must have at most 1 item"),
        (
            {"type": "array", "uniqueItems": True},
            [1, 1],
            'Invalid value: "": spec.x in body shouldn\'t contain duplicates',
        ),
        (
            {"type": "object", "minProperties": 1},
            {},
            "Invalid value: 0: spec.x in body should have at least 1 properties",
        ),
        (
            {"type": "object", "maxProperties": 1},
            {"a": 1, "b": 2},
            "Too many: 2: must have at most 1 item",
        ),
        (
            {"type": "string", "enum": ["red", "blue"]},
            "pink",
            'Unsupported value: "pink": supported values: "red", "blue"',
        ),
        (
            {"type": "integer", "enum": [1, 2]},
            3,
            'Unsupported value: 3: supported values: "1", "2"',
        ),
        (
            {"x-kubernetes-int-or-string": True},
            True,
            'Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"',
        ),
    ],
)
def test_keyword_messages(schema: dict[str, Any], value: Any, message: str) -> None:
    assert _errs(_spec({"x": schema}), {"spec": {"x": value}}) == [f"spec.x: {message}"]


def test_required_and_paths_into_arrays_and_maps() -> None:
    schema = _spec(
        {
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        required=["size"],
    )
    doc = {"spec": {"items": [{"name": "a"}, {"name": 1}], "labels": {"foo": 2}}}
    assert _errs(schema, doc) == [
        'spec.items[1].name: Invalid value: "integer": spec.items[1].name in body must be of '
        'type string: "integer"',
        # kube-openapi names map entries with a dot, not field.Path's [key].
        'spec.labels.foo: Invalid value: "integer": spec.labels.foo in body must be of type '
        'string: "integer"',
        "spec.size: Required value",
    ]


def test_path_prefix_and_nil_root() -> None:
    schema = {"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 1}}}
    assert _errs(schema, {"replicas": 0}, Path("status")) == [
        "status.replicas: Invalid value: 0: replicas in body should be greater than or equal to 1"
    ]
    assert _errs(schema, "x") == [
        '<nil>: Invalid value: "string":  in body must be of type object: "string"'
    ]


def test_additional_properties_false() -> None:
    schema = _spec({"a": {"type": "string"}}, additionalProperties=False)
    assert _errs(schema, {"spec": {"a": "x", "b": 1}}) == [
        'spec: Invalid value: "b": spec.b in body is a forbidden property'
    ]


def test_nullable() -> None:
    schema = _spec({"x": {"type": "string", "nullable": True}})
    assert _errs(schema, {"spec": {"x": None}}) == []


def test_integer_accepts_integral_float_and_rejects_fraction() -> None:
    schema = _spec({"x": {"type": "integer"}})
    assert _errs(schema, {"spec": {"x": 2.0}}) == []
    assert _errs(schema, {"spec": {"x": 2.5}}) == [
        'spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"',
        '<nil>: Invalid value: "": '
        "Checked value must be of type integer (default format) in spec.x",
    ]


def test_bool_is_not_an_integer() -> None:
    assert _errs(_spec({"x": {"type": "integer"}}), {"spec": {"x": True}}) == [
        'spec.x: Invalid value: "boolean": spec.x in body must be of type integer: "boolean"'
    ]


def test_composition_messages() -> None:
    any_of = _spec({"x": {"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 1}]}})
    assert _errs(any_of, {"spec": {"x": 3}}) == [
        '<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)',
        "spec.x: Invalid value: 3: spec.x in body should be greater than or equal to 5",
    ]
    one_of = _spec({"x": {"type": "integer", "oneOf": [{"minimum": 1}, {"maximum": 5}]}})
    assert _errs(one_of, {"spec": {"x": 3}}) == [
        '<nil>: Invalid value: "": "spec.x" must validate one and only one schema (oneOf). '
        "Found 2 valid alternatives"
    ]
    all_of = _spec({"x": {"type": "integer", "allOf": [{"minimum": 5}, {"maximum": 1}]}})
    assert _errs(all_of, {"spec": {"x": 3}}) == [
        "spec.x: Invalid value: 3: spec.x in body should be greater than or equal to 5",
        "spec.x: Invalid value: 3: spec.x in body should be less than or equal to 1",
        '<nil>: Invalid value: "": "spec.x" must validate all the schemas (allOf). None validated',
    ]
    not_ = _spec({"x": {"type": "integer", "not": {"minimum": 1}}})
    assert _errs(not_, {"spec": {"x": 3}}) == [
        '<nil>: Invalid value: "": "spec.x" must not validate the schema (not)'
    ]


def test_list_type_set_and_map() -> None:
    schema = _spec(
        {
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
        }
    )
    doc = {"spec": {"tags": ["a", "b", "a"], "ports": [{"name": "h"}, {"name": "h"}]}}
    errs = SchemaValidator(schema).validate(doc)
    assert [str(e) for e in errs] == [
        'spec.tags[2]: Duplicate value: "a"',
        'spec.ports[1]: Duplicate value: {"name":"h"}',
    ]
    assert _causes(errs)[1]["reason"] == "FieldValueDuplicate"


def test_list_type_errors_ratchet_on_update_when_old_had_them() -> None:
    schema = _spec({"tags": {"type": "array", "x-kubernetes-list-type": "set"}})
    v = SchemaValidator(schema)
    bad = {"spec": {"tags": [1, 1]}}
    assert [str(e) for e in v.validate_update(bad, {"spec": {}})] == [
        "spec.tags[1]: Duplicate value: 1"
    ]
    assert v.validate_update(bad, bad) == []


def test_embedded_resource() -> None:
    schema = _spec(
        {
            "template": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            }
        }
    )
    assert _errs(schema, {"spec": {"template": {"metadata": {"name": "a/b"}}}}) == [
        "spec.template.apiVersion: Required value",
        "spec.template.kind: Required value",
        "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
    ]
    ok = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    assert _errs(schema, {"spec": {"template": ok}}) == []


def test_map_type_and_atomic_are_accepted() -> None:
    schema = _spec(
        {
            "m": {"type": "object", "x-kubernetes-map-type": "atomic"},
            "l": {"type": "array", "x-kubernetes-list-type": "atomic"},
        }
    )
    assert _errs(schema, {"spec": {"m": {"a": 1}, "l": [1, 1]}}) == []


def test_unknown_format_is_ignored() -> None:
    assert _errs(_spec({"x": {"type": "string", "format": "color"}}), {"spec": {"x": "?"}}) == []


_SCHEMA = _spec(
    {
        "n": {"type": "integer", "minimum": 0, "maximum": 10, "multipleOf": 2},
        "s": {"type": "string", "maxLength": 3, "pattern": "^a", "enum": ["a", "ab", "b"]},
        "l": {"type": "array", "maxItems": 2, "uniqueItems": True, "items": {"type": "number"}},
        "o": {"type": "object", "additionalProperties": {"type": "boolean"}, "maxProperties": 1},
        "u": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    },
    required=["n"],
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.floats(-3, 12) | st.text("ab", max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({}, optional={k: _JSON for k in ("n", "s", "l", "o", "u")}))
def test_fast_path_agrees_with_error_path(spec: dict[str, Any]) -> None:
    """The allocation-free check and the error collector must give the same verdict."""
    v = SchemaValidator(_SCHEMA)
    doc = {"spec": spec}
    assert v.root.check(doc) == (v._errors(doc, "")[0] == [])


def test_status_update_checks_only_status_and_ratchets_it() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"a": {"type": "string", "minLength": 3}}},
            "status": {
                "type": "object",
                "properties": {"n": {"type": "integer", "maximum": 3}, "m": {"type": "string"}},
            },
        },
    }
    v = SchemaValidator(schema)
    old = {"spec": {"a": "x"}, "status": {"n": 5, "m": "a"}}
    new = {"spec": {"a": "x"}, "status": {"n": 5, "m": "b"}}
    # The spec is not checked on a status write; the status is, below its own root.
    assert [str(e) for e in v.validate_status_update(new, old)] == [
        "n: Invalid value: 5: n in body should be less than or equal to 3"
    ]
    pair = CorrelatedObject.for_update(new, old, schema)
    assert v.validate_status_update(new, old, correlation=pair) == []
    assert pair.stats.ratcheted == 1
    changed = {"spec": {"a": "x"}, "status": {"n": 6, "m": "a"}}
    pair = CorrelatedObject.for_update(changed, old, schema)
    assert [str(e) for e in v.validate_status_update(changed, old, correlation=pair)] == [
        "status.n: Invalid value: 6: n in body should be less than or equal to 3"
    ]
