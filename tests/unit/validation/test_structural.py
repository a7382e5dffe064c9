"""CRD schema checks render exactly as upstream apiextensions validation does."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.apimachinery.field_errors import FieldError, Path
from kapi.validation.structural import go_regexp_error, validate_crd_schema

ROOT = Path("spec", "versions").index(0).child("schema", "openAPIV3Schema")
P = "spec.versions[0].schema.openAPIV3Schema"


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def _errors(schema: dict[str, Any], **kwargs: Any) -> list[str]:
    return [str(e) for e in validate_crd_schema(schema, ROOT, **kwargs)]


def test_a_well_formed_schema_passes() -> None:
    schema = _obj(
        metadata={"type": "object", "properties": {"name": {"type": "string", "maxLength": 63}}},
        spec=_obj(
            replicas={"type": "integer", "default": 1, "minimum": 0},
            port={
                "x-kubernetes-int-or-string": True,
                "anyOf": [{"type": "integer"}, {"type": "string"}],
            },
            labels={"type": "object", "additionalProperties": {"type": "string"}},
            raw={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            ports={
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": _obj(name={"type": "string"}) | {"required": ["name"]},
            },
            name={"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"},
        ),
        status={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    )
    assert _errors(schema) == []


def test_types_are_required_per_level() -> None:
    schema = {"properties": {"spec": {"properties": {"list": {"type": "array", "items": {}}}}}}
    assert _errors(schema) == [
        f"{P}.properties[spec].properties[list].items.type: Required value: "
        "must not be empty for specified array items",
        f"{P}.properties[spec].type: Required value: must not be empty for specified object fields",
        f"{P}.type: Required value: must not be empty at the root",
    ]


def test_root_must_be_an_object_without_additional_properties() -> None:
    assert _errors({"type": "string", "additionalProperties": {"type": "string"}}) == [
        f"{P}.additionalProperties: Forbidden: must not be used at the root",
        f'{P}.type: Invalid value: "string": must be object at the root',
    ]


def test_nullable_root_is_forbidden() -> None:
    assert _errors({"type": "object", "nullable": True}) == [
        f"{P}.nullable: Forbidden: nullable cannot be true at the root"
    ]


def test_array_needs_items() -> None:
    assert _errors(_obj(list={"type": "array"})) == [
        f"{P}.properties[list].items: Required value: must be specified"
    ]


def test_untyped_fields_are_fine_under_int_or_string_and_preserve_unknown_fields() -> None:
    schema = _obj(
        a={"x-kubernetes-int-or-string": True},
        b={"x-kubernetes-preserve-unknown-fields": True},
    )
    assert _errors(schema) == []


def test_value_validations_must_not_structure_data() -> None:
    schema = _obj(
        spec={
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "anyOf": [{"type": "string", "properties": {"a": {"default": "x", "nullable": True}}}],
            "allOf": [{"description": "d", "x-kubernetes-validations": [{"rule": "true"}]}],
            "not": {"additionalProperties": True, "properties": {"metadata": {}}},
        }
    )
    s = f"{P}.properties[spec]"
    assert _errors(schema) == [
        f"{s}.allOf[0].description: Forbidden: must be empty to be structural",
        f"{s}.allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural",
        f"{s}.anyOf[0].properties[a].default: Forbidden: must be undefined to be structural",
        f"{s}.anyOf[0].properties[a].nullable: Forbidden: must be false to be structural",
        f"{s}.anyOf[0].type: Forbidden: must be empty to be structural",
        f"{s}.not.additionalProperties: Forbidden: must be undefined to be structural",
        f"{s}.not.properties[metadata]: Forbidden: must not be specified in a nested context",
    ]


def test_int_or_string_patterns_may_name_types() -> None:
    any_of = [{"type": "integer"}, {"type": "string"}]
    schema = _obj(
        a={"x-kubernetes-int-or-string": True, "anyOf": any_of},
        b={"x-kubernetes-int-or-string": True, "allOf": [{"anyOf": any_of}, {"pattern": "^a"}]},
        c={"x-kubernetes-int-or-string": True, "oneOf": any_of},
    )
    assert _errors(schema) == [
        f"{P}.properties[c].oneOf[0].type: Forbidden: must be empty to be structural",
        f"{P}.properties[c].oneOf[1].type: Forbidden: must be empty to be structural",
    ]


def test_int_or_string_excludes_other_extensions() -> None:
    schema = _obj(
        a={
            "type": "object",
            "x-kubernetes-int-or-string": True,
            "x-kubernetes-preserve-unknown-fields": True,
            "x-kubernetes-embedded-resource": True,
            "properties": {"x": {"type": "string"}},
        }
    )
    assert _errors(schema) == [
        f"{P}.properties[a].x-kubernetes-embedded-resource: Invalid value: true: "
        "must be false if x-kubernetes-int-or-string is true",
        f"{P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: "
        "must be false if x-kubernetes-int-or-string is true",
    ]


def test_root_value_validations_must_name_specified_fields() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "anyOf": [{"required": ["a"]}, {"properties": {"b": {"minLength": 1}}}],
    }
    assert _errors(schema) == [
        f"{P}.properties[b]: Required value: because it is defined in {P}.anyOf[1].properties[b]"
    ]


def test_root_metadata_may_only_restrict_name_and_generate_name() -> None:
    schema = _obj(
        metadata={"type": "object", "properties": {"labels": {"type": "object"}}},
        kind={"type": "integer"},
    )
    assert _errors(schema) == [
        f'{P}.properties[kind].type: Invalid value: "integer": must be string',
        f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and "
        "generateName, but metadata is implicitly specified",
    ]


def test_top_level_meta_defaults_are_forbidden() -> None:
    schema = _obj(
        metadata={"type": "object", "properties": {"name": {"type": "string", "default": "n"}}},
        apiVersion={"type": "string", "default": "g/v1"},
    )
    assert _errors(schema) == [
        f"{P}.properties[metadata].properties[name].default: Forbidden: "
        "must not be set in top-level metadata",
        f"{P}.properties[apiVersion].default: Forbidden: must not be set in top-level apiVersion",
    ]


def test_embedded_resource_rules() -> None:
    schema = _obj(
        a={"x-kubernetes-embedded-resource": True, "additionalProperties": {"type": "string"}},
        b={"type": "string", "x-kubernetes-embedded-resource": True},
        c={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"metadata": {"type": "object", "x-kubernetes-embedded-resource": True}},
        },
    )
    assert _errors(schema) == [
        f"{P}.properties[a].additionalProperties: Forbidden: "
        "must not be used if x-kubernetes-embedded-resource is set",
        f"{P}.properties[a].properties: Required value: must not be empty if "
        "x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        f"{P}.properties[a].type: Required value: "
        "must be object if x-kubernetes-embedded-resource is true",
        f"{P}.properties[b].properties: Required value: must not be empty if "
        "x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        f'{P}.properties[b].type: Invalid value: "string": '
        "must be object if x-kubernetes-embedded-resource is true",
        f"{P}.properties[c].properties[metadata].properties: Required value: must not be empty if "
        "x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        f"{P}.properties[c].properties[metadata].x-kubernetes-embedded-resource: Forbidden: "
        "must not be used inside of resource meta",
    ]


def test_unsupported_keywords() -> None:
    schema = _obj(
        a={"type": "object", "$ref": "#/definitions/x", "definitions": {"x": {"type": "string"}}},
        b={"type": "array", "items": [{"type": "string"}], "additionalItems": False},
        c={"type": "object", "id": "c", "patternProperties": {"^x": {"type": "string"}}},
        d={"type": "object", "dependencies": {"x": ["y"]}},
        e={"type": "null"},
        f={"type": "float"},
    )
    assert _errors(schema) == [
        f"{P}.properties[a].definitions: Forbidden: definitions is not supported",
        f"{P}.properties[a].$ref: Forbidden: $ref is not supported",
        f"{P}.properties[b].additionalItems: Forbidden: additionalItems is not supported",
        f"{P}.properties[b].items: Forbidden: items must be a schema object and not an array",
        f"{P}.properties[c].id: Forbidden: id is not supported",
        f"{P}.properties[c].patternProperties: Forbidden: patternProperties is not supported",
        f"{P}.properties[d].dependencies: Forbidden: dependencies is not supported",
        f'{P}.properties[e].type: Unsupported value: "null": supported values: "array", '
        '"boolean", "integer", "number", "object", "string"',
        f"{P}.properties[e].type: Forbidden: type cannot be set to null, "
        "use nullable as an alternative",
        f'{P}.properties[f].type: Unsupported value: "float": supported values: "array", '
        '"boolean", "integer", "number", "object", "string"',
    ]


def test_schema_keyword_surfaces_as_the_structural_conversion_error() -> None:
    assert _errors({"type": "object", "$schema": "http://json-schema.org/schema#"}) == [
        f"""{P}: Invalid value: "": OpenAPIV3Schema 'schema' is not supported"""
    ]


def test_conversion_error_hides_structural_errors() -> None:
    # Upstream skips ValidateStructural when NewStructural fails: no "type" error here.
    assert _errors({"properties": {"a": {"$ref": "#/x"}}}) == [
        f"{P}.properties[a].$ref: Forbidden: $ref is not supported"
    ]


def test_structural_rules_can_be_skipped() -> None:
    assert _errors({"properties": {"a": {}}}, require_structural=False) == []


def test_unique_items_preserve_false_and_properties_with_additional_properties() -> None:
    schema = _obj(
        a={"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        b={
            "type": "object",
            "properties": {"x": {"type": "string"}},
            "additionalProperties": False,
        },
        c={"type": "object", "x-kubernetes-preserve-unknown-fields": False},
    )
    assert _errors(schema) == [
        f"{P}.properties[a].uniqueItems: Forbidden: "
        "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        f"{P}.properties[b].additionalProperties: Forbidden: "
        "additionalProperties and properties are mutual exclusive",
        f"{P}.properties[c].x-kubernetes-preserve-unknown-fields: Invalid value: false: "
        "must be true or undefined",
    ]


def test_list_and_map_type_rules() -> None:
    schema = _obj(
        a={"type": "object", "x-kubernetes-list-type": "set"},
        b={"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"},
        c={"type": "array", "items": {"type": "string"}, "x-kubernetes-list-map-keys": ["k"]},
        d={"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "map"},
        e={"x-kubernetes-map-type": "deep", "x-kubernetes-preserve-unknown-fields": True},
    )
    assert _errors(schema) == [
        f'{P}.properties[a].type: Invalid value: "object": '
        "must be array if x-kubernetes-list-type is specified",
        f'{P}.properties[b].x-kubernetes-list-type: Unsupported value: "bag": '
        'supported values: "atomic", "set", "map"',
        f"{P}.properties[c].x-kubernetes-list-type: Required value: "
        "must be map if x-kubernetes-list-map-keys is non-empty",
        f"{P}.properties[d].x-kubernetes-list-map-keys: Required value: "
        "must not be empty if x-kubernetes-list-type is map",
        f'{P}.properties[d].items.type: Invalid value: "string": '
        "must be object if parent array's x-kubernetes-list-type is map",
        f"{P}.properties[e].type: Required value: "
        "must be object if x-kubernetes-map-type is specified",
        f'{P}.properties[e].x-kubernetes-map-type: Unsupported value: "deep": '
        'supported values: "atomic", "granular"',
    ]


def test_map_list_keys_must_be_scalar_required_item_properties() -> None:
    items = {
        "type": "object",
        "required": ["name"],
        "nullable": True,
        "properties": {
            "name": {"type": "string"},
            "port": {"type": "integer", "nullable": True},
            "sub": {"type": "object"},
        },
    }
    schema = _obj(
        a={
            "type": "array",
            "items": items,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name", "port", "sub", "missing", "name"],
        }
    )
    a = f"{P}.properties[a]"
    keys = '["name","port","sub","missing","name"]'
    assert _errors(schema) == [
        f'{a}.items.properties[sub].type: Invalid value: "object": '
        "must be a scalar type if parent array's x-kubernetes-list-type is map",
        f"{a}.x-kubernetes-list-map-keys: Invalid value: {keys}: "
        "entries must all be names of item properties",
        f"{a}.x-kubernetes-list-map-keys: Invalid value: {keys}: "
        "must not contain duplicate entries",
        f"{a}.items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map",
        f"{a}.items.properties[port].default: Required value: this property is in "
        "x-kubernetes-list-map-keys, so it must have a default or be a required property",
        f"{a}.items.properties[port].nullable: Forbidden: "
        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
        f"{a}.items.properties[sub].default: Required value: this property is in "
        "x-kubernetes-list-map-keys, so it must have a default or be a required property",
    ]


def test_set_items_must_be_atomic() -> None:
    schema = _obj(
        a={"type": "array", "x-kubernetes-list-type": "set", "items": _obj(x={"type": "string"})},
        b={
            "type": "array",
            "x-kubernetes-list-type": "set",
            "items": {
                "type": "array",
                "x-kubernetes-list-type": "set",
                "items": {"type": "string"},
            },
        },
    )
    detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
    assert _errors(schema) == [
        f"{P}.properties[a].items.x-kubernetes-map-type: Invalid value: null: {detail}",
        f'{P}.properties[b].items.x-kubernetes-list-type: Invalid value: "set": {detail}',
    ]


def test_defaults_must_not_have_unknown_fields() -> None:
    schema = _obj(
        spec={
            "type": "object",
            "default": {"a": 1, "b": 2},
            "properties": {"a": {"type": "integer"}},
        },
        embedded={
            "type": "object",
            "x-kubernetes-embedded-resource": True,
            "properties": {"spec": {"type": "object"}},
            "default": {"apiVersion": "v1", "kind": "K", "metadata": {"x": 1}, "spec": {}},
        },
    )
    assert _errors(schema) == [
        f'{P}.properties[spec].default: Invalid value: {{"a":1,"b":2}}: '
        "must not have unknown fields"
    ]


def test_default_validator_is_consulted_for_every_default() -> None:
    seen: list[tuple[Any, str]] = []

    def validator(schema: dict[str, Any], value: Any, path: Path) -> list[FieldError]:
        seen.append((value, str(path)))
        return []

    schema = _obj(
        spec=_obj(n={"type": "integer", "default": 1}), m={"type": "object", "default": {}}
    )
    assert validate_crd_schema(schema, ROOT, default_validator=validator) == []
    assert seen == [
        (1, f"{P}.properties[spec].properties[n].default"),
        ({}, f"{P}.properties[m].default"),
    ]


def test_invalid_pattern_uses_go_wording() -> None:
    assert _errors(_obj(a={"type": "string", "pattern": "(?=x)y"})) == [
        f'{P}.properties[a].pattern: Invalid value: "(?=x)y": must be a valid regular expression, '
        "but isn't: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
    ]


@pytest.mark.parametrize(
    ("pattern", "error"),
    [
        ("(abc", "missing closing ): `(abc`"),
        ("abc)", "unexpected ): `abc)`"),
        ("x[a-z", "missing closing ]: `[a-z`"),
        ("*a", "missing argument to repetition operator: `*`"),
        ("a**", "invalid nested repetition operator: `**`"),
        ("a++", "invalid nested repetition operator: `++`"),
        (r"(a)\1", r"invalid escape sequence: `\1`"),
        (r"\q", r"invalid escape sequence: `\q`"),
        ("a{2,1}", "invalid repeat count: `{2,1}`"),
        ("a\\", "trailing backslash at end of expression: ``"),
        ("(?!a)", "invalid or unsupported Perl syntax: `(?!`"),
    ],
)
def test_go_regexp_errors(pattern: str, error: str) -> None:
    assert go_regexp_error(pattern) == f"error parsing regexp: {error}"


@pytest.mark.parametrize("pattern", [r"^\p{L}+$", "(?<name>a)", "(?P<n>b)", r"[\]]", r"\d+\.\d+"])
def test_go_regexp_accepts_go_syntax(pattern: str) -> None:
    assert go_regexp_error(pattern) is None


def test_validation_rule_static_checks() -> None:
    rules = [
        {"rule": "  "},
        {"rule": "self.a > 0", "message": "  "},
        {"rule": "self.a > 0\n&& true"},
        {"rule": "true", "messageExpression": " ", "reason": "Bad", "fieldPath": "a\nb"},
        {"rule": "true", "message": "a\nb", "fieldPath": " "},
    ]
    schema = {"type": "object", "x-kubernetes-validations": rules}
    v = f"{P}.x-kubernetes-validations"
    assert _errors(schema) == [
        f"{v}[0].rule: Required value: rule is not specified",
        f'{v}[1].message: Invalid value: "  ": message must be non-empty if specified',
        f"{v}[2].message: Required value: message must be specified if rule contains line breaks",
        f"{v}[3].messageExpression: Required value: "
        "messageExpression must be non-empty if specified",
        f'{v}[3].reason: Unsupported value: "Bad": supported values: "FieldValueDuplicate", '
        '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
        f'{v}[3].fieldPath: Invalid value: "a\\nb": fieldPath must not contain line breaks',
        f'{v}[4].message: Invalid value: "a\\nb": message must not contain line breaks',
        f'{v}[4].fieldPath: Invalid value: " ": fieldPath must be non-empty if specified',
    ]


@pytest.mark.parametrize(
    ("metadata", "forbidden"),
    [
        ({"type": "object"}, False),
        (
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "generateName": {"type": "string", "maxLength": 9},
                },
            },
            False,
        ),
        ({"type": "object", "properties": {}}, False),
        ({"type": "object", "description": "standard object metadata"}, True),
        ({"type": "object", "additionalProperties": False}, True),
        ({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, True),
    ],
)
def test_what_root_metadata_may_say(metadata: dict[str, Any], forbidden: bool) -> None:
    expected = [
        f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and "
        "generateName, but metadata is implicitly specified"
    ]
    assert _errors(_obj(metadata=metadata)) == (expected if forbidden else [])
