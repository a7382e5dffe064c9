"""CRD validation ratcheting (KEP-4008) in the validators, without a server.

* OpenAPI schema errors: ``SchemaValidator.validate_update`` with a correlation.
  The table of :func:`test_upstream_schema_ratcheting` restates the cases of
  apiextensions-apiserver ``pkg/apiserver/validation/ratcheting_test.go``
  (inputs and whether the update is valid).
* CEL rules: ``CELValidator.validate_update``; the table of
  :func:`test_upstream_cel_ratcheting` restates ``TestRatcheting`` of
  ``pkg/apiserver/schema/cel/validation_test.go`` (which failures are errors and
  which become warnings), the optionalOldSelf tables its ``TestOptionalOldSelf*``.
* Properties (hypothesis): a no-op update never fails on schema errors, and a
  changed leaf that breaks its own constraint is always reported.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kapi.apimachinery.field_errors import FieldError, Path
from kapi.validation.cel import CELValidator, RuleResults
from kapi.validation.cel import cost as cel_cost
from kapi.validation.correlation import CorrelatedObject
from kapi.validation.schema_validator import SchemaValidator

STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
NUM: dict[str, Any] = {"type": "number"}


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def update(schema: dict[str, Any], new: Any, old: Any) -> list[FieldError]:
    """A schema-validated update with ratcheting on, as the custom resource strategy runs it."""
    correlation = CorrelatedObject.for_update(new, old, schema)
    return SchemaValidator(schema).validate_update(new, old, correlation=correlation)


def texts(errs: list[FieldError]) -> list[str]:
    return [str(e) for e in errs]


def cases(table: list[Any], divergent: list[Any] | None = None, reason: str = "") -> list[Any]:
    """Parameters of a table of ``(id, *arguments)`` rows; the ``divergent`` rows are strict
    xfails, for ``reason``."""
    params = [pytest.param(*case[1:], id=case[0]) for case in table]
    xfail = pytest.mark.xfail(strict=True, reason=reason)
    return params + [pytest.param(*case[1:], id=case[0], marks=xfail) for case in divergent or []]


def map_list(items: dict[str, Any], *keys: str, **schema: Any) -> dict[str, Any]:
    """An array of ``items`` of list type map, keyed by ``keys``."""
    return {
        "type": "array",
        **schema,
        "items": items,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": list(keys),
    }


# === OpenAPI schema ===============================================================================

_ZERO = {"type": "number", "minimum": 0, "maximum": 0}
_SMALL = {"type": "number", "maximum": 50}
_MEDIUM = {"type": "number", "minimum": 50, "maximum": 10000}
_LARGE = {"type": "number", "minimum": 10000}
_OBJECT = obj(zero=_ZERO, small=_SMALL, medium=_MEDIUM, large=_LARGE)
_OBJECT_OBJECT = obj(nested=_OBJECT)
_NUMERIC_FORMAT = obj(intThirtyTwo={"type": "integer", "format": "int32"}, unrelated=STR)
_INT32_PAST = 2**31  # math.MaxInt32 + 1

# (name, schema, new, old, valid)
_UPSTREAM_SCHEMA: list[tuple[str, dict[str, Any], Any, Any, bool]] = [
    # TestScalarRatcheting
    ("scalar unchanged", _MEDIUM, 1, 1, True),
    ("scalar changed", _MEDIUM, 1, 2, False),
    # TestObjectScalarFieldsRatcheting
    ("object field unchanged", _OBJECT, {"small": 500}, {"small": 500}, True),
    (
        "object field unchanged, sibling removed",
        _OBJECT,
        {"small": 501},
        {"small": 501, "medium": 500},
        True,
    ),
    ("object field changed", _OBJECT, {"small": 500}, {"small": 501}, False),
    # TestObjectObjectFieldsRatcheting
    (
        "nested field unchanged",
        _OBJECT_OBJECT,
        {"nested": {"small": 500}},
        {"nested": {"small": 500}},
        True,
    ),
    (
        "nested field unchanged, sibling removed",
        _OBJECT_OBJECT,
        {"nested": {"small": 501}},
        {"nested": {"small": 501, "medium": 500}},
        True,
    ),
    (
        "nested field changed",
        _OBJECT_OBJECT,
        {"nested": {"small": 500}},
        {"nested": {"small": 501}},
        False,
    ),
    # TestNumericFormatRatcheting
    (
        "int32 overflow unchanged",
        _NUMERIC_FORMAT,
        {"intThirtyTwo": _INT32_PAST},
        {"intThirtyTwo": _INT32_PAST},
        True,
    ),
    (
        "int32 overflow unchanged, other field changed",
        _NUMERIC_FORMAT,
        {"intThirtyTwo": _INT32_PAST, "unrelated": "changed"},
        {"intThirtyTwo": _INT32_PAST, "unrelated": "original"},
        True,
    ),
    (
        "int32 overflow changed to another overflow",
        _NUMERIC_FORMAT,
        {"intThirtyTwo": _INT32_PAST + 1},
        {"intThirtyTwo": _INT32_PAST},
        False,
    ),
]


@pytest.mark.parametrize(
    ("schema", "new", "old", "valid"),
    cases(_UPSTREAM_SCHEMA),
)
def test_upstream_schema_ratcheting(
    schema: dict[str, Any], new: Any, old: Any, valid: bool
) -> None:
    validator = SchemaValidator(schema)
    on_create = validator.validate(new)
    assert on_create, "every case is invalid without ratcheting"
    got = update(schema, new, old)
    # Invalid updates report exactly what a create would (nothing else is wrong in them).
    assert texts(got) == ([] if valid else texts(on_create))


def test_without_correlation_nothing_ratchets() -> None:
    """The gate off: validate_update without a correlation is validation of ``new``."""
    v = SchemaValidator(_OBJECT)
    same = {"small": 500}
    assert texts(v.validate_update(same, {"small": 500})) == [
        "small: Invalid value: 500: small in body should be less than or equal to 50"
    ]


def test_error_order_is_preserved() -> None:
    fields: dict[str, Any] = {name: {"type": "integer", "maximum": 0} for name in "abcdef"}
    schema = obj(spec=obj(**fields), other=STR)
    old: dict[str, Any] = {"spec": dict.fromkeys("abcdef", 1), "other": "x"}
    new = {"spec": {**old["spec"], "b": 2, "e": 3}, "other": "y"}
    want = [e for e in texts(SchemaValidator(schema).validate(new)) if e[5] in "be"]
    assert want == [
        "spec.b: Invalid value: 2: spec.b in body should be less than or equal to 0",
        "spec.e: Invalid value: 3: spec.e in body should be less than or equal to 0",
    ]
    correlation = CorrelatedObject.for_update(new, old, schema)
    got = SchemaValidator(schema).validate_update(new, old, correlation=correlation)
    assert texts(got) == want
    assert correlation.stats.ratcheted == 4


def test_error_order_across_kinds_of_errors() -> None:
    """OpenAPI errors (after ratcheting) come before embedded-resource and list-type ones."""
    schema = obj(
        spec=obj(
            n={"type": "integer", "maximum": 0},
            m={"type": "integer", "maximum": 0},
            tags={"type": "array", "items": STR, "x-kubernetes-list-type": "set"},
            template={
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            },
        )
    )
    old = {"spec": {"n": 1, "m": 1, "tags": [], "template": {}}}
    new = {"spec": {"n": 1, "m": 2, "tags": ["a", "a"], "template": {}}}
    assert texts(update(schema, new, old)) == [
        "spec.m: Invalid value: 2: spec.m in body should be less than or equal to 0",
        "spec.template.apiVersion: Required value",
        "spec.template.kind: Required value",
        'spec.tags[1]: Duplicate value: "a"',
    ]


def test_list_type_errors_follow_the_old_object_not_the_correlation() -> None:
    """Upstream strategy.go: set/map uniqueness is checked only when the old object had
    no such error anywhere; the correlation plays no part in it."""
    schema = obj(
        a={"type": "array", "items": INT, "x-kubernetes-list-type": "set"},
        b={"type": "array", "items": INT, "x-kubernetes-list-type": "set"},
    )
    # Unchanged duplicates: old had them, so they are not reported.
    assert update(schema, {"a": [1, 1]}, {"a": [1, 1]}) == []
    # A new duplicate in another list is not reported either while old had one anywhere.
    assert update(schema, {"a": [1, 1], "b": [2, 2]}, {"a": [1, 1], "b": []}) == []
    # Old without duplicates: a new one is reported.
    assert texts(update(schema, {"a": [1, 1]}, {"a": [1, 2]})) == ["a[1]: Duplicate value: 1"]
    # Likewise when the duplicate is added next to an unchanged list.
    assert texts(update(schema, {"a": [1], "b": [2, 2]}, {"a": [1], "b": [2]})) == [
        "b[1]: Duplicate value: 2"
    ]


def test_map_list_duplicate_keys_are_reported_when_old_had_none() -> None:
    item = obj(name=STR, v=INT)
    schema = obj(l=map_list(item, "name"))
    dup = {"l": [{"name": "a", "v": 1}, {"name": "a", "v": 1}]}
    assert update(schema, dup, copy.deepcopy(dup)) == []
    assert texts(update(schema, dup, {"l": [{"name": "a", "v": 1}]})) == [
        'l[1]: Duplicate value: {"name":"a"}'
    ]


def test_embedded_resource_errors_never_ratchet() -> None:
    schema = obj(
        spec=obj(
            template={
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            }
        )
    )
    same = {"spec": {"template": {"metadata": {"name": "a/b"}}}}
    want = [
        "spec.template.apiVersion: Required value",
        "spec.template.kind: Required value",
        "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/'",
    ]
    assert texts(SchemaValidator(schema).validate(same)) == want
    assert texts(update(schema, same, copy.deepcopy(same))) == want


_TYPE_META_SCHEMA = obj(
    apiVersion={"type": "string", "enum": ["example.com/v1"]},
    kind={"type": "string", "pattern": "^Widget$"},
    spec=obj(
        apiVersion={"type": "string", "enum": ["v1"]},
        kind={"type": "string", "maxLength": 3},
        note=STR,
    ),
    other=STR,
)


def test_root_api_version_and_kind_never_pair() -> None:
    """Both objects were converted to the request's version, so the root's apiVersion and
    kind never count as unchanged (ratcheting.go SubPropertyValidator, path "")."""
    old: dict[str, Any] = {
        "apiVersion": "example.com/v2",
        "kind": "Gadget",
        "spec": {"apiVersion": "v2", "kind": "Gadget", "note": "a"},
        "other": "a",
    }
    new = copy.deepcopy(old)
    new["other"] = "b"
    new["spec"]["note"] = "b"
    assert texts(update(_TYPE_META_SCHEMA, new, old)) == [
        'apiVersion: Unsupported value: "example.com/v2": supported values: "example.com/v1"',
        "kind: Invalid value: \"Gadget\": kind in body should match '^Widget$'",
    ]
    # The nested fields of the same names, invalid and unchanged, ratcheted as any other.
    assert [e.field for e in SchemaValidator(_TYPE_META_SCHEMA).validate(new)] == [
        "apiVersion",
        "kind",
        "spec.apiVersion",
        "spec.kind",
    ]


def test_root_type_meta_errors_drop_with_a_wholly_unchanged_root() -> None:
    """The root validator itself still ratchets: when the entire object is unchanged, its
    errors (those of apiVersion and kind included) go, as upstream's root
    ratchetingValueValidator turns all of its result into warnings."""
    old = {"apiVersion": "example.com/v2", "kind": "Gadget", "other": "a"}
    assert update(_TYPE_META_SCHEMA, old, copy.deepcopy(old)) == []


def test_nested_api_version_and_kind_ratchet() -> None:
    old: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "spec": {"apiVersion": "v2", "kind": "Gadget", "note": "a"},
        "other": "a",
    }
    new = copy.deepcopy(old)
    new["other"] = "b"
    assert update(_TYPE_META_SCHEMA, new, old) == []
    new["spec"]["kind"] = "Gizmo"
    assert texts(update(_TYPE_META_SCHEMA, new, old)) == [
        "spec.kind: Too long: may not be more than 3 bytes"
    ]


def test_unchanged_sibling_ratchets_changed_sibling_does_not() -> None:
    schema = obj(
        spec=obj(a={"type": "string", "maxLength": 1}, b={"type": "string", "maxLength": 1})
    )
    old = {"spec": {"a": "long", "b": "long"}}
    new = {"spec": {"a": "long", "b": "longer"}}
    assert texts(update(schema, new, old)) == ["spec.b: Too long: may not be more than 1 byte"]


def test_changed_node_reports_its_own_keywords() -> None:
    schema = obj(spec={**obj(a=STR, b=STR), "maxProperties": 1, "required": ["c"]})
    old = {"spec": {"a": "x", "b": "y"}}
    assert update(schema, old, copy.deepcopy(old)) == []
    assert texts(update(schema, {"spec": {"a": "x", "b": "z"}}, old)) == [
        "spec: Too many: 2: must have at most 1 item",
        "spec.c: Required value",
    ]


def test_additional_properties_values_ratchet_by_key() -> None:
    schema = obj(
        labels={"type": "object", "additionalProperties": {"type": "string", "maxLength": 2}}
    )
    old = {"labels": {"x": "long", "y": "long"}}
    new = {"labels": {"x": "long", "y": "longer", "z": "new-and-long"}}
    got = texts(update(schema, new, old))
    assert got == [
        "labels.y: Too long: may not be more than 2 bytes",
        "labels.z: Too long: may not be more than 2 bytes",
    ]


def test_atomic_list_items_ratchet_only_with_the_whole_list() -> None:
    schema = obj(
        l={"type": "array", "items": {"type": "integer", "maximum": 0}},
        other=STR,
    )
    old = {"l": [1, 2], "other": "a"}
    assert update(schema, {"l": [1, 2], "other": "b"}, old) == []
    # One item changed: the list is not equal, and every item's error is reported,
    # the unchanged first one included (items of atomic lists do not pair).
    assert texts(update(schema, {"l": [1, 3], "other": "a"}, old)) == [
        "l[0]: Invalid value: 1: l[0] in body should be less than or equal to 0",
        "l[1]: Invalid value: 3: l[1] in body should be less than or equal to 0",
    ]


def test_map_list_items_ratchet_by_key_whatever_their_position() -> None:
    schema = obj(l=map_list(obj(name=STR, v={"type": "integer", "maximum": 0}), "name"))
    old = {"l": [{"name": "a", "v": 1}, {"name": "b", "v": 1}]}
    assert update(schema, {"l": [{"name": "b", "v": 1}, {"name": "a", "v": 1}]}, old) == []
    new = {"l": [{"name": "b", "v": 1}, {"name": "a", "v": 2}, {"name": "c", "v": 1}]}
    assert texts(update(schema, new, old)) == [
        "l[1].v: Invalid value: 2: l[1].v in body should be less than or equal to 0",
        "l[2].v: Invalid value: 1: l[2].v in body should be less than or equal to 0",
    ]


def test_map_list_duplicate_keys_defeat_a_no_op_update() -> None:
    """Upstream maplist.go: the later duplicate pairs with the first old item of its key.
    When the two differ, an update that changes nothing still reports the later item's
    errors (its list-type error is dropped, old had it)."""
    schema = obj(l=map_list(obj(name=STR, v={"type": "integer", "maximum": 1}), "name"))
    same = {"l": [{"name": "a", "v": 1}, {"name": "a", "v": 2}]}
    assert texts(update(schema, same, copy.deepcopy(same))) == [
        "l[1].v: Invalid value: 2: l[1].v in body should be less than or equal to 1"
    ]


def test_preserve_unknown_fields_object_never_counts_as_unchanged() -> None:
    """The shipped quirk at work: an object with undescribed keys is never "equal", so its
    own errors survive a no-op update; its described children still ratchet."""
    schema = obj(
        spec={
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "maxProperties": 1,
            "properties": {"a": {"type": "string", "maxLength": 1}},
        }
    )
    same = {"spec": {"a": "long", "unknown": 1}}
    assert texts(update(schema, same, copy.deepcopy(same))) == [
        "spec: Too many: 2: must have at most 1 item"
    ]
    # Without the undescribed key, the same object ratchets.
    schema["properties"]["spec"]["properties"]["unknown"] = INT
    assert update(schema, same, copy.deepcopy(same)) == []


@pytest.mark.parametrize(
    "composition",
    [
        {"allOf": [{"properties": {"a": {"maxLength": 1}}}]},
        {"anyOf": [{"properties": {"a": {"maxLength": 1}}}]},
        {"oneOf": [{"properties": {"a": {"maxLength": 1}}}]},
        {"not": {"properties": {"a": {"maxLength": 2}}}},
    ],
    ids=["allOf", "anyOf", "oneOf", "not"],
)
def test_composition_errors_ratchet_with_the_node_that_declares_it(
    composition: dict[str, Any],
) -> None:
    """kube-openapi validates allOf/anyOf/oneOf/not branches with plain validators whose
    errors merge into the declaring node's result: they ratchet when that node is
    unchanged, even if the branch's field is unchanged and a sibling changed."""
    schema = obj(spec={**obj(a=STR, b=STR), **composition}, other=STR)
    old = {"spec": {"a": "xx", "b": "1"}, "other": "1"}
    assert SchemaValidator(schema).validate(old) != []
    # spec unchanged, a root sibling changed: forgiven.
    assert update(schema, {"spec": {"a": "xx", "b": "1"}, "other": "2"}, old) == []
    # spec changed elsewhere than ``a``: the branch's error on the unchanged ``a`` stays.
    new = {"spec": {"a": "xx", "b": "2"}, "other": "1"}
    assert texts(update(schema, new, old)) == texts(SchemaValidator(schema).validate(new))


def test_a_plain_keyword_on_the_same_field_ratchets_with_the_field() -> None:
    """Contrast with compositions: declared on the property itself, the error ratchets
    with the unchanged property although its parent changed."""
    schema = obj(spec=obj(a={"type": "string", "maxLength": 1}, b=STR))
    assert update(schema, {"spec": {"a": "xx", "b": "2"}}, {"spec": {"a": "xx", "b": "1"}}) == []


def test_type_change_is_never_unchanged() -> None:
    schema = obj(spec=obj(n={"type": "number", "maximum": 0}, other=STR))
    old = {"spec": {"n": 1, "other": "a"}}
    assert update(schema, {"spec": {"n": 1, "other": "b"}}, old) == []
    assert texts(update(schema, {"spec": {"n": 1.0, "other": "b"}}, old)) == [
        "spec.n: Invalid value: 1: spec.n in body should be less than or equal to 0"
    ]


def test_new_field_and_removed_old_field_do_not_ratchet() -> None:
    schema = obj(spec=obj(a={"type": "string", "maxLength": 1}))
    assert texts(update(schema, {"spec": {"a": "long"}}, {"spec": {}})) == [
        "spec.a: Too long: may not be more than 1 byte"
    ]
    assert texts(update(schema, {"spec": {"a": "long"}}, {})) == [
        "spec.a: Too long: may not be more than 1 byte"
    ]


def test_wrong_type_ratchets_when_unchanged() -> None:
    schema = obj(spec=obj(n=INT, other=STR))
    old = {"spec": {"n": "seven", "other": "a"}}
    assert update(schema, {"spec": {"n": "seven", "other": "b"}}, old) == []
    assert texts(update(schema, {"spec": {"n": "eight", "other": "b"}}, old)) == [
        'spec.n: Invalid value: "string": spec.n in body must be of type integer: "string"'
    ]


def test_unchanged_null_ratchets() -> None:
    """kube-openapi validates a null with its type and enum checks only; an unchanged null
    pairs with the old one (both nil: equal) and those errors ratchet."""
    schema = obj(a={"type": "string", "enum": ["x"]}, other=STR)
    old = {"a": None, "other": "1"}
    assert SchemaValidator(schema).validate(old) != []
    assert update(schema, {"a": None, "other": "2"}, old) == []
    new = {"a": None, "other": "2"}
    assert texts(update(schema, new, {"a": "x", "other": "1"})) == texts(
        SchemaValidator(schema).validate(new)
    )


def test_ratcheted_schema_errors_are_counted() -> None:
    schema = obj(spec=obj(a={"type": "integer", "maximum": 0}, b={"type": "integer", "maximum": 0}))
    old = {"spec": {"a": 1, "b": 1}}
    correlation = CorrelatedObject.for_update(old, copy.deepcopy(old), schema)
    assert SchemaValidator(schema).validate_update(old, old, correlation=correlation) == []
    assert correlation.stats.ratcheted == 2
    fresh = CorrelatedObject.for_update({"spec": {"a": 1, "b": 2}}, old, schema)
    new = {"spec": {"a": 1, "b": 2}}
    assert len(SchemaValidator(schema).validate_update(new, old, correlation=fresh)) == 1
    assert fresh.stats.ratcheted == 1


# === CEL ==========================================================================================

_SCHEMA_PATH = Path("spec", "validation", "openAPIV3Schema")
_ROOT = Path("root")


def cel(schema: dict[str, Any]) -> CELValidator:
    v, errs = CELValidator.compile(schema, _SCHEMA_PATH)
    assert errs == []
    assert v is not None
    return v


def cel_update(schema: dict[str, Any], new: Any, old: Any) -> RuleResults:
    correlation = CorrelatedObject.for_update(new, old, schema)
    return cel(schema).validate_update(new, old, correlation, _ROOT)


def rule(expr: str, message: str | None = None, **kw: Any) -> dict[str, Any]:
    r: dict[str, Any] = {"rule": expr, **kw}
    if message is not None:
        r["message"] = message
    return r


def _gotta(expr: str, message: str) -> dict[str, Any]:
    return {"type": "string", "x-kubernetes-validations": [rule(expr, message)]}


_BAR_OBJ = obj(bar=_gotta('self == "baz"', "gotta be baz"))
_ODD = {
    "type": "number",
    "x-kubernetes-validations": [rule("int(self) % 2 == 1", "gotta be odd")],
}
_KV_MAP_LIST = {
    "type": "array",
    "maxItems": 10,
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["key"],
    "items": obj(key=STR, value=_gotta('self == "baz"', "gotta be baz")),
}
_TYPE_META_RULES = obj(
    apiVersion={"type": "string", "x-kubernetes-validations": [rule('self == "v1"')]},
    kind={"type": "string", "x-kubernetes-validations": [rule('self == "Pod"')]},
)

# (name, schema, old, new, errors, warnings) as in upstream's TestRatcheting. Some arrays
# gained a maxItems: kapi compiles rules with the CRD's cost limit, which upstream's unit
# test bypasses by building the validator directly.
_UPSTREAM_CEL: list[tuple[str, dict[str, Any], Any, Any, list[str], list[str]]] = [
    (
        "normal CEL expression",
        obj(foo=_gotta('self == "bar"', "gotta be bar")),
        {"foo": "baz"},
        {"foo": "baz"},
        [],
        ['root.foo: Invalid value: "baz": gotta be bar'],
    ),
    (
        "descendent of an atomic array whose parent is totally unchanged",
        {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "atomic", "items": _BAR_OBJ},
        [{"bar": "bar"}],
        [{"bar": "bar"}],
        [],
        ['root[0].bar: Invalid value: "bar": gotta be baz'],
    ),
    (
        "descendent of a set whose parent is totally unchanged",
        {"type": "array", "x-kubernetes-list-type": "set", "items": _ODD},
        [1, 2],
        [1, 2],
        [],
        ["root[1]: Invalid value: 2: gotta be odd"],
    ),
    (
        "descendent of a set and one of its siblings has changed",
        obj(
            stringField=STR,
            setArray={"type": "array", "x-kubernetes-list-type": "set", "items": _ODD},
        ),
        {"stringField": "foo", "setArray": [1, 3, 2]},
        {"stringField": "changed but ratcheted", "setArray": [1, 3, 2]},
        [],
        ["root.setArray[2]: Invalid value: 2: gotta be odd"],
    ),
    (
        "descendent of a map list whose parent is unchanged",
        _KV_MAP_LIST,
        [{"key": "foo", "value": "notbaz"}, {"key": "bar", "value": "notbaz"}],
        [
            {"key": "foo", "value": "notbaz"},
            {"key": "bar", "value": "notbaz"},
            {"key": "baz", "value": "baz"},
        ],
        [],
        [
            'root[0].value: Invalid value: "notbaz": gotta be baz',
            'root[1].value: Invalid value: "notbaz": gotta be baz',
        ],
    ),
    (
        "descendent of a map list whose siblings have changed",
        _KV_MAP_LIST,
        [{"key": "foo", "value": "notbaz"}, {"key": "bar", "value": "notbaz"}],
        [{"key": "foo", "value": "baz"}, {"key": "bar", "value": "notbaz"}],
        [],
        ['root[1].value: Invalid value: "notbaz": gotta be baz'],
    ),
    (
        "descendent of a map whose parent is totally unchanged",
        obj(
            stringField=STR,
            mapField=obj(
                foo=_gotta('self == "baz"', "gotta be baz"),
                mapField=obj(bar=_gotta('self == "baz"', "gotta be nested baz")),
            ),
        ),
        {"stringField": "foo", "mapField": {"foo": "notbaz", "mapField": {"bar": "notbaz"}}},
        {"stringField": "foo", "mapField": {"foo": "notbaz", "mapField": {"bar": "notbaz"}}},
        [],
        [
            'root.mapField.foo: Invalid value: "notbaz": gotta be baz',
            'root.mapField.mapField.bar: Invalid value: "notbaz": gotta be nested baz',
        ],
    ),
    (
        "descendent of a map whose siblings have changed",
        obj(
            stringField=STR,
            mapField=obj(
                foo=_gotta('self == "baz"', "gotta be baz"),
                mapField=obj(
                    bar=_gotta('self == "baz"', "gotta be baz"),
                    otherBar=_gotta('self == "otherBaz"', "gotta be otherBaz"),
                ),
            ),
        ),
        {
            "stringField": "foo",
            "mapField": {"foo": "baz", "mapField": {"bar": "notbaz", "otherBar": "nototherBaz"}},
        },
        {
            "stringField": "foo",
            "mapField": {"foo": "notbaz", "mapField": {"bar": "notbaz", "otherBar": "otherBaz"}},
        },
        ['root.mapField.foo: Invalid value: "notbaz": gotta be baz'],
        ['root.mapField.mapField.bar: Invalid value: "notbaz": gotta be baz'],
    ),
    (
        "descendent of an atomic array whose siblings has changed",
        obj(
            stringField=STR,
            atomicArray={
                "type": "array",
                "maxItems": 10,
                "x-kubernetes-list-type": "atomic",
                "items": _BAR_OBJ,
            },
        ),
        {"stringField": "foo", "atomicArray": [{"bar": "bar"}]},
        {"stringField": "changed but ratcheted", "atomicArray": [{"bar": "bar"}]},
        [],
        ['root.atomicArray[0].bar: Invalid value: "bar": gotta be baz'],
    ),
    (
        "uncorrelatable part of the schema whose parent has changed",
        {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "atomic", "items": _BAR_OBJ},
        [{"bar": "bar"}],
        [{"bar": "bar"}, {"bar": "baz"}],
        ['root[0].bar: Invalid value: "bar": gotta be baz'],
        [],
    ),
    (
        "transition rules never ratchet for correlatable schemas",
        obj(foo=_gotta('oldSelf != "bar" && self == "baz"', "gotta be baz")),
        {"foo": "bar"},
        {"foo": "bar"},
        ['root.foo: Invalid value: "bar": gotta be baz'],
        [],
    ),
    (
        "changing field path does not change ratcheting logic",
        {
            **obj(bar=STR, foo=STR),
            "x-kubernetes-validations": [
                rule('self.foo == "baz"', "gotta be baz", fieldPath=".foo")
            ],
        },
        {"foo": "bar"},
        {"foo": "bar", "bar": "invalid"},
        ["root.foo: Invalid value: gotta be baz"],
        [],
    ),
    (
        "typemeta fields are not ratcheted",
        _TYPE_META_RULES,
        {"apiVersion": "v2", "kind": "Baz"},
        {"apiVersion": "v2", "kind": "Baz"},
        [
            'root.apiVersion: Invalid value: "v2": failed rule: self == "v1"',
            'root.kind: Invalid value: "Baz": failed rule: self == "Pod"',
        ],
        [],
    ),
    (
        "nested typemeta fields may still be ratcheted",
        obj(
            list={
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "maxItems": 2,
                "items": {
                    **_TYPE_META_RULES,
                    "properties": {"name": STR, **_TYPE_META_RULES["properties"]},
                },
            },
            subField={
                **_TYPE_META_RULES,
                "properties": {"otherField": STR, **_TYPE_META_RULES["properties"]},
            },
        ),
        {
            "subField": {"apiVersion": "v2", "kind": "Baz"},
            "list": [
                {"name": "entry1", "apiVersion": "v2", "kind": "Baz"},
                {"name": "entry2", "apiVersion": "v3", "kind": "Bar"},
            ],
        },
        {
            "subField": {"apiVersion": "v2", "kind": "Baz", "otherField": "newValue"},
            "list": [
                {"name": "entry1", "apiVersion": "v2", "kind": "Baz", "otherField": "newValue2"},
                {"name": "entry2", "apiVersion": "v3", "kind": "Bar", "otherField": "newValue3"},
            ],
        },
        [],
        [
            'root.subField.apiVersion: Invalid value: "v2": failed rule: self == "v1"',
            'root.subField.kind: Invalid value: "Baz": failed rule: self == "Pod"',
            'root.list[0].apiVersion: Invalid value: "v2": failed rule: self == "v1"',
            'root.list[0].kind: Invalid value: "Baz": failed rule: self == "Pod"',
            'root.list[1].apiVersion: Invalid value: "v3": failed rule: self == "v1"',
            'root.list[1].kind: Invalid value: "Bar": failed rule: self == "Pod"',
        ],
    ),
]


@pytest.mark.parametrize(
    ("schema", "old", "new", "errors", "warnings"),
    cases(_UPSTREAM_CEL),
)
def test_upstream_cel_ratcheting(
    schema: dict[str, Any], old: Any, new: Any, errors: list[str], warnings: list[str]
) -> None:
    got = cel_update(schema, new, old)
    # Upstream's test does not fix the order (Go map iteration); kapi's is deterministic.
    assert sorted(texts(got.errors)) == sorted(errors)
    assert sorted(texts(got.ratcheted)) == sorted(warnings)
    # Without ratcheting, the warnings are errors (upstream: "errors that should occur
    # with the ratcheting feature disabled").
    plain = cel(schema).validate(new, old, _ROOT)
    assert sorted(texts(plain)) == sorted(errors + warnings)


def test_cost_budget_errors_are_not_ratcheted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cel_cost, "RUNTIME_CEL_COST_BUDGET", 1)
    schema = {
        "type": "string",
        "minLength": 5,
        "x-kubernetes-validations": [rule('self == "baz"', "gotta be baz")],
    }
    got = cel_update(schema, "unchanged", "unchanged")
    assert texts(got.errors) == [
        'root: Invalid value: "string": validation failed due to running out of cost budget, '
        "no further validation rules will be run"
    ]
    assert got.ratcheted == []


def test_evaluation_errors_are_not_ratcheted() -> None:
    schema = obj(
        spec={
            **obj(a=STR, b=STR),
            "x-kubernetes-validations": [rule("self.a == self.b", "a must equal b")],
        }
    )
    same = {"spec": {"a": "x"}}
    got = cel_update(schema, same, copy.deepcopy(same))
    assert texts(got.errors) == [
        'root.spec: Invalid value: "object": no such key: b evaluating rule: a must equal b'
    ]
    assert got.ratcheted == []


def test_message_expression_failure_ratchets_with_its_rule() -> None:
    schema = obj(
        n={
            "type": "integer",
            "x-kubernetes-validations": [
                rule("self >= 10", messageExpression="'n is %d, need 10'.format([self])")
            ],
        },
        other=STR,
    )
    old = {"n": 4, "other": "a"}
    got = cel_update(schema, {"n": 4, "other": "b"}, old)
    assert got.errors == []
    assert texts(got.ratcheted) == ["root.n: Invalid value: 4: n is 4, need 10"]
    got = cel_update(schema, {"n": 5, "other": "b"}, old)
    assert texts(got.errors) == ["root.n: Invalid value: 5: n is 5, need 10"]


def test_objects_and_arrays_omit_the_value_in_ratcheted_failures() -> None:
    schema = obj(
        spec={
            **obj(min=INT, max=INT),
            "x-kubernetes-validations": [rule("self.min <= self.max")],
        },
        other=STR,
    )
    old = {"spec": {"min": 2, "max": 1}, "other": "a"}
    got = cel_update(schema, {"spec": {"min": 2, "max": 1}, "other": "b"}, old)
    assert got.errors == []
    assert texts(got.ratcheted) == ["root.spec: Invalid value: failed rule: self.min <= self.max"]


def test_rules_on_the_root_of_a_no_op_update_ratchet() -> None:
    """The root itself pairs (only its apiVersion and kind children are excluded)."""
    schema = {**obj(a=INT), "x-kubernetes-validations": [rule("self.a > 1", "a > 1")]}
    same = {"a": 1}
    got = cel_update(schema, same, copy.deepcopy(same))
    assert (texts(got.errors), texts(got.ratcheted)) == ([], ["root: Invalid value: a > 1"])
    got = cel_update(schema, {"a": 0}, same)
    assert (texts(got.errors), texts(got.ratcheted)) == (["root: Invalid value: a > 1"], [])


def test_preserve_unknown_fields_object_rules_never_ratchet() -> None:
    """The shipped quirk for CEL: an unchanged object with undescribed keys is not equal."""
    schema = obj(
        spec={
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {"a": _gotta('self == "ok"', "a must be ok")},
            "x-kubernetes-validations": [rule("self.a == 'ok'", "spec.a must be ok")],
        }
    )
    same = {"spec": {"a": "bad", "extra": 1}}
    got = cel_update(schema, same, copy.deepcopy(same))
    assert texts(got.errors) == ["root.spec: Invalid value: spec.a must be ok"]
    assert texts(got.ratcheted) == ['root.spec.a: Invalid value: "bad": a must be ok']


# --- transition rules and optionalOldSelf ---------------------------------------------------------

_MIN_OR_GROW = {
    "type": "integer",
    "x-kubernetes-validations": [
        rule(
            "self >= 10 || (oldSelf.hasValue() && oldSelf.value() <= self)",
            optionalOldSelf=True,
        )
    ],
}


def _object_rule(expr: str) -> dict[str, Any]:
    return {**obj(foo=STR), "x-kubernetes-validations": [rule(expr, optionalOldSelf=True)]}


# (name, schema, new, old (None: a create), fails) as in upstream's TestOptionalOldSelf
_OPTIONAL_OLD_SELF: list[tuple[str, dict[str, Any], Any, Any, bool]] = [
    (
        "allow new value if old value is null",
        _object_rule("self.foo == 'not bar' || !oldSelf.hasValue()"),
        {"foo": "bar"},
        None,
        False,
    ),
    (
        "block new value if old value is not null",
        _object_rule("self.foo == 'valid' || !oldSelf.hasValue()"),
        {"foo": "invalid"},
        {"foo": "bar"},
        True,
    ),
    (
        "allow invalid new value if old value is also invalid",
        _object_rule(
            "self.foo == 'valid' || (oldSelf.hasValue() && oldSelf.value().foo != 'valid')"
        ),
        {"foo": "invalid again"},
        {"foo": "invalid"},
        False,
    ),
    (
        "allow invalid new value if old value is also invalid with chained optionals",
        _object_rule("self.foo == 'valid' || oldSelf.foo.orValue('') != 'valid'"),
        {"foo": "invalid again"},
        {"foo": "invalid"},
        False,
    ),
    (
        "block invalid new value if old value is valid",
        _object_rule(
            "self.foo == 'valid' || (oldSelf.hasValue() && oldSelf.value().foo != 'valid')"
        ),
        {"foo": "invalid"},
        {"foo": "valid"},
        True,
    ),
    ("create: new min or allow higher than oldValue", _MIN_OR_GROW, 10, None, False),
    ("block create: new min or allow higher than oldValue", _MIN_OR_GROW, 9, None, True),
    ("update: new min or allow higher than oldValue", _MIN_OR_GROW, 10, 5, False),
    ("ratchet update: new min or allow higher than oldValue", _MIN_OR_GROW, 9, 5, False),
    ("ratchet noop update: new min or allow higher than oldValue", _MIN_OR_GROW, 5, 5, False),
    ("block update: new min or allow higher than oldValue", _MIN_OR_GROW, 4, 5, True),
]


@pytest.mark.parametrize(
    ("schema", "new", "old", "fails"),
    cases(_OPTIONAL_OLD_SELF),
)
def test_upstream_optional_old_self(
    schema: dict[str, Any], new: Any, old: Any, fails: bool
) -> None:
    v = cel(schema)
    if old is None:
        errs = v.validate(new, None, _ROOT)
    else:
        results = cel_update(schema, new, old)
        assert results.ratcheted == []  # rules with oldSelf never ratchet
        errs = results.errors
        assert texts(v.validate(new, old, _ROOT)) == texts(errs)
    assert len(errs) == (1 if fails else 0)
    for e in errs:
        assert e.type.value == "FieldValueInvalid"
        assert "failed rule" in str(e)


def _null_check(schema: dict[str, Any], expr: str) -> dict[str, Any]:
    return {**schema, "x-kubernetes-validations": [rule(expr, optionalOldSelf=True)]}


_KV = obj(key=STR, value=STR)

# (name, schema, new, old) as in upstream's TestOptionalOldSelfCheckForNull: no errors,
# with a null old value (create) and with this old value.
_CHECK_FOR_NULL: list[tuple[str, dict[str, Any], Any, Any]] = [
    (
        "object",
        _null_check(obj(foo=STR), '!oldSelf.hasValue() || self.foo == "bar"'),
        {"foo": "bar"},
        {"foo": "baz"},
    ),
    (
        "object - conditional field",
        _null_check(obj(foo=STR), 'self.foo != "bar" || oldSelf.?foo.orValue("baz") == "baz"'),
        {"foo": "bar"},
        {"foo": "baz"},
    ),
    ("string", _null_check(STR, '!oldSelf.hasValue() || self == "bar"'), "bar", "baz"),
    ("integer", _null_check(INT, "!oldSelf.hasValue() || self == 1"), 1, 2),
    ("number", _null_check(NUM, "!oldSelf.hasValue() || self == 1.1"), 1.1, 2.2),
    (
        "boolean",
        _null_check({"type": "boolean"}, "!oldSelf.hasValue() || self == true"),
        True,
        False,
    ),
    (
        "array",
        _null_check({"type": "array", "items": STR}, '!oldSelf.hasValue() || self[0] == "bar"'),
        ["bar"],
        ["baz"],
    ),
    (
        "array - conditional index",
        _null_check(
            {"type": "array", "items": STR},
            'self.size() > 0 || oldSelf[?0].orValue("baz") == "baz"',
        ),
        [],
        ["baz"],
    ),
    (
        "set-array",
        _null_check(
            {"type": "array", "items": STR, "x-kubernetes-list-type": "set"},
            '!oldSelf.hasValue() || self[0] == "bar"',
        ),
        ["bar"],
        ["baz"],
    ),
    (
        "map-array",
        _null_check(
            {
                "type": "array",
                "items": _KV,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["key"],
            },
            '!oldSelf.hasValue() || self[0].value == "bar"',
        ),
        [{"key": "foo", "value": "bar"}],
        [{"key": "foo", "value": "baz"}],
    ),
]


@pytest.mark.parametrize(
    ("schema", "new", "old"),
    cases(_CHECK_FOR_NULL),
)
def test_upstream_optional_old_self_check_for_null(
    schema: dict[str, Any], new: Any, old: Any
) -> None:
    v = cel(schema)
    assert v.validate(new, None, _ROOT) == []
    assert v.validate(new, old, _ROOT) == []
    assert cel_update(schema, new, old) == RuleResults([], [])


_STRINGS_ARRAY: dict[str, Any] = {"type": "array", "items": STR, "maxItems": 5}

# (name, schema, rule, a text the compile error must contain) as in upstream's
# TestOptionalOldSelfIsOptionalType: with optionalOldSelf, oldSelf is an optional.
_OLD_SELF_IS_OPTIONAL: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "forbid direct usage of optional integer",
        INT,
        "oldSelf + self > 5",
        "no matching overload for '_+_' applied to '(optional_type(int), int)",
    ),
    (
        "forbid direct usage of optional string",
        STR,
        'oldSelf == "foo"',
        "no matching overload for '_==_' applied to '(optional_type(string), string)",
    ),
    (
        "forbid direct usage of optional array element",
        _STRINGS_ARRAY,
        'oldSelf[0] == "foo"',
        "found no matching overload for '_==_' applied to '(optional_type(string), string)",
    ),
]
# DIVERGENCES: kapi's compiler (cel-cpp) words these two checker errors differently from
# cel-go (checker/errors.go notAComprehensionRange, typeDoesNotSupportFieldSelection):
# kapi says "cannot be the range of a comprehension" and "expression of type
# 'list(map(string, dyn))' cannot be the operand of a select operation". Not specific to
# optionalOldSelf: plain rules get the same wording.
_OLD_SELF_IS_OPTIONAL_DIVERGENT: list[tuple[str, dict[str, Any], str, str]] = [
    (
        "forbid direct usage of optional array",
        _STRINGS_ARRAY,
        "oldSelf.all(x, x == x)",
        "expression of type 'optional_type(list(string))' cannot be range of a comprehension",
    ),
    (
        "forbid direct usage of optional struct",
        {
            "type": "array",
            "maxItems": 5,
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["key"],
            "items": obj(key=STR, value=STR),
        },
        'oldSelf.key == "foo"',
        "does not support field selection",
    ),
]


@pytest.mark.parametrize(
    ("schema", "expr", "contains"),
    cases(
        _OLD_SELF_IS_OPTIONAL,
        _OLD_SELF_IS_OPTIONAL_DIVERGENT,
        "DIVERGENCE: cel-cpp's checker wording differs from cel-go's",
    ),
)
def test_upstream_optional_old_self_is_an_optional(
    schema: dict[str, Any], expr: str, contains: str
) -> None:
    with_rule = {**schema, "x-kubernetes-validations": [rule(expr, optionalOldSelf=True)]}
    _, errs = CELValidator.compile(with_rule, _SCHEMA_PATH)
    assert len(errs) == 1
    assert contains in errs[0].detail


def test_compile_error_of_an_optional_old_self_rule_shows_the_rule_as_written() -> None:
    """cel-go compiles the rule as written (oldSelf declared as an optional), so its error
    points into that text, as it does for a rule without optionalOldSelf."""
    with_rule = {
        **INT,
        "x-kubernetes-validations": [rule("oldSelf + self > 5", optionalOldSelf=True)],
    }
    _, errs = CELValidator.compile(with_rule, _SCHEMA_PATH)
    assert [e.detail for e in errs] == [
        "compilation failed: ERROR: <input>:1:9: found no matching overload for '_+_' "
        "applied to '(optional_type(int), int)'\n | oldSelf + self > 5\n | ........^"
    ]


def test_optional_old_self_is_skipped_on_create_while_the_gate_is_off() -> None:
    v = cel(_MIN_OR_GROW)
    assert len(v.validate(9, None, _ROOT)) == 1
    assert v.validate(9, None, _ROOT, optional_old_self=False) == []
    # A plain transition rule never runs on create, gate or not.
    plain = cel({"type": "integer", "x-kubernetes-validations": [rule("self >= oldSelf")]})
    assert plain.validate(1, None, _ROOT) == []


def test_optional_old_self_on_unmatched_map_list_items() -> None:
    """An item whose key the old list lacks has no oldSelf: optionalOldSelf rules see none,
    plain transition rules skip it; both keep their failures as errors."""
    item = {
        **obj(name=STR, v=INT),
        "x-kubernetes-validations": [
            rule(
                "oldSelf.hasValue() || self.v == 0",
                "new items start at zero",
                optionalOldSelf=True,
            ),
            rule("self.v >= oldSelf.v", "v may not decrease"),
        ],
    }
    schema = obj(l=map_list(item, "name"))
    old = {"l": [{"name": "a", "v": 5}]}
    new = {"l": [{"name": "b", "v": 1}, {"name": "a", "v": 5}, {"name": "c", "v": 0}]}
    got = cel_update(schema, new, old)
    assert texts(got.errors) == ["root.l[0]: Invalid value: new items start at zero"]
    assert got.ratcheted == []
    got = cel_update(schema, {"l": [{"name": "a", "v": 4}]}, old)
    assert texts(got.errors) == ["root.l[0]: Invalid value: v may not decrease"]
    # The same list unchanged: the matched item has its oldSelf and passes both.
    assert cel_update(schema, old, copy.deepcopy(old)) == RuleResults([], [])


def _immutable_v_items(*keys: str) -> dict[str, Any]:
    item = {
        **obj(name={"type": "string", "maxLength": 5}, w=NUM, v=INT),
        "x-kubernetes-validations": [rule("self.v == oldSelf.v", "v is immutable")],
    }
    return obj(l=map_list(item, *keys, maxItems=5))


_IMMUTABLE = ["root.l[0]: Invalid value: v is immutable"]

# (name, map keys, new items, old items, errors upstream reports). The oldSelf of a
# map-list item is found with upstream's MapList (validation.go:875, maplist.go), the
# same lookup CorrelatedObject uses for ratcheting.
_OLD_SELF_PAIRING: list[tuple[str, list[str], list[Any], list[Any], list[str]]] = [
    ("same key", ["name"], [{"name": "a", "v": 2}], [{"name": "a", "v": 1}], _IMMUTABLE),
    ("new key", ["name"], [{"name": "b", "v": 2}], [{"name": "a", "v": 1}], []),
    ("int and float keys differ", ["w"], [{"w": 1.0, "v": 2}], [{"w": 1, "v": 1}], []),
]

# Upstream's MapList keying (k8s.io/apiserver pkg/cel/common/maplist.go), shared by oldSelf
# and ratcheting (kapi.validation.correlation.MapList):
_OLD_SELF_PAIRING_AS_MAP_LIST: list[tuple[str, list[str], list[Any], list[Any], list[str]]] = [
    # maplist.go:136 keeps the first item of a key: oldSelf is v=1, the rule passes.
    (
        "first duplicate is oldSelf",
        ["name"],
        [{"name": "a", "v": 1}],
        [{"name": "a", "v": 1}, {"name": "a", "v": 2}],
        [],
    ),
    # maplist.go:48: an item without its key has no oldSelf, the rule does not run.
    ("item without a key has no oldSelf", ["name"], [{"v": 2}], [{"v": 1}], []),
    # maplist.go:80: several keys join floats printed with %f, 1.0000001 and 1.0000004
    # both being 1.000000: the items pair and the rule fails.
    (
        "multi-key floats compare as %f",
        ["name", "w"],
        [{"name": "a", "w": 1.0000004, "v": 2}],
        [{"name": "a", "w": 1.0000001, "v": 1}],
        _IMMUTABLE,
    ),
    # A single float key is a Go map key, where 0.0 == -0.0: the items pair.
    ("0.0 and -0.0 are one key", ["w"], [{"w": 0.0, "v": 2}], [{"w": -0.0, "v": 1}], _IMMUTABLE),
]


@pytest.mark.parametrize(
    ("keys", "new", "old", "errors"),
    cases(_OLD_SELF_PAIRING + _OLD_SELF_PAIRING_AS_MAP_LIST),
)
def test_old_self_of_map_list_items_pairs_as_upstream_map_list(
    keys: list[str], new: list[Any], old: list[Any], errors: list[str]
) -> None:
    schema = _immutable_v_items(*keys)
    got = cel_update(schema, {"l": new}, {"l": old})
    assert (texts(got.errors), got.ratcheted) == (errors, [])
    assert texts(cel(schema).validate({"l": new}, {"l": old}, _ROOT)) == errors


def test_transition_rule_failure_is_an_error_even_on_a_no_op_update() -> None:
    """Upstream integration test CEL Optional OldSelf: ``!oldSelf.hasValue()`` passes on
    create, fails on every update, the no-op one included (never ratcheted)."""
    schema = obj(
        field={
            "type": "string",
            "x-kubernetes-validations": [
                rule("!oldSelf.hasValue()", "oldSelf must be null", optionalOldSelf=True)
            ],
        }
    )
    v = cel(schema)
    assert v.validate({"field": "value"}, None, _ROOT) == []
    for new in ({"field": "value2"}, {"field": "value"}):
        got = cel_update(schema, new, {"field": "value"})
        assert texts(got.errors) == [
            f'root.field: Invalid value: "{new["field"]}": oldSelf must be null'
        ]
        assert got.ratcheted == []


# === properties ===================================================================================

_PATTERNS = ["^[a-z]+$", "^a", "b$", "^[0-9]*$", "^.{0,3}$"]


def _bounds(draw: st.DrawFn, schema: dict[str, Any], lo: str, hi: str, top: int) -> None:
    if draw(st.booleans()):
        schema[lo] = draw(st.integers(0, top))
    if draw(st.booleans()):
        schema[hi] = draw(st.integers(0, top))


@st.composite
def _scalar_schema(draw: st.DrawFn, kind: str | None = None) -> dict[str, Any]:
    kind = kind or draw(st.sampled_from(["string", "integer", "number", "boolean"]))
    s: dict[str, Any] = {"type": kind}
    if kind == "string":
        _bounds(draw, s, "minLength", "maxLength", 6)
        if draw(st.booleans()):
            s["pattern"] = draw(st.sampled_from(_PATTERNS))
        if draw(st.integers(0, 4)) == 0:
            s["enum"] = draw(st.lists(_STRINGS, min_size=1, max_size=3, unique=True))
    elif kind in ("integer", "number"):
        if draw(st.booleans()):
            s["minimum"] = draw(st.integers(-20, 20))
        if draw(st.booleans()):
            s["maximum"] = draw(st.integers(-20, 20))
        if draw(st.integers(0, 3)) == 0:
            s["multipleOf"] = draw(st.sampled_from([2, 3, 5] if kind == "integer" else [0.5, 2, 3]))
        if draw(st.integers(0, 4)) == 0:
            s["enum"] = draw(st.lists(st.integers(-5, 5), min_size=1, max_size=3, unique=True))
    elif draw(st.integers(0, 3)) == 0:
        s["enum"] = [draw(st.booleans())]
    return s


_STRINGS = st.text(alphabet="ab09-!", max_size=8)


def _object_schema(
    children: st.SearchStrategy[dict[str, Any]],
) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        names = draw(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=4, unique=True))
        s: dict[str, Any] = {"type": "object", "properties": {n: draw(children) for n in names}}
        if draw(st.booleans()):
            s["required"] = draw(st.lists(st.sampled_from(names), max_size=2, unique=True))
        if draw(st.integers(0, 3)) == 0:
            s["maxProperties"] = draw(st.integers(0, 3))
        return s

    return build()


def _array_schema(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        list_type = draw(st.sampled_from([None, "atomic", "set", "map"]))
        s: dict[str, Any] = {"type": "array"}
        if list_type == "map":
            keys = draw(st.sampled_from([["name"], ["name", "port"]]))
            props = {"name": draw(_scalar_schema("string")), "port": {"type": "integer"}}
            extra = draw(children)
            item: dict[str, Any] = {"type": "object", "properties": {**props, "x": extra}}
            if draw(st.booleans()):
                item["maxProperties"] = draw(st.integers(1, 3))
            s.update(
                {
                    "items": item,
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": keys,
                }
            )
        elif list_type == "set":
            s.update({"items": draw(_scalar_schema()), "x-kubernetes-list-type": "set"})
        else:
            s["items"] = draw(children)
            if list_type is not None:
                s["x-kubernetes-list-type"] = list_type
        _bounds(draw, s, "minItems", "maxItems", 3)
        return s

    return build()


_SCHEMAS = st.recursive(
    _scalar_schema(),
    lambda children: st.one_of(_object_schema(children), _array_schema(children)),
    max_leaves=6,
)
_ROOT_SCHEMAS = _object_schema(_SCHEMAS)


def _value(
    draw: Callable[[st.SearchStrategy[Any]], Any], schema: dict[str, Any], depth: int = 0
) -> Any:
    """A value of the schema's types (its constraints are not respected on purpose)."""
    t = schema["type"]
    if t == "string":
        return draw(st.one_of(_STRINGS, st.sampled_from(schema.get("enum") or ["a"])))
    if t == "integer":
        return draw(st.integers(-30, 30))
    if t == "number":
        return draw(
            st.one_of(
                st.integers(-30, 30),
                st.floats(-30, 30, allow_nan=False, allow_infinity=False),
            )
        )
    if t == "boolean":
        return draw(st.booleans())
    if t == "object":
        props = schema["properties"]
        names = draw(
            st.lists(
                st.sampled_from(sorted(props)),
                unique=True,
                min_size=1 if depth == 0 else 0,
                max_size=len(props),
            )
        )
        return {n: _value(draw, props[n], depth + 1) for n in names}
    items = schema["items"]
    size = draw(st.integers(0, 3))
    if schema.get("x-kubernetes-list-type") == "map":
        # Unique keys: a duplicate pairs with the first old item of its key (see
        # test_map_list_duplicate_keys_defeat_a_no_op_update).
        keys = schema["x-kubernetes-list-map-keys"]
        out = []
        seen = set()
        for _ in range(size):
            item = _value(draw, items, depth + 1)
            item["name"] = draw(_STRINGS)
            if "port" in keys:
                item["port"] = draw(st.integers(0, 3))
            identity = tuple(item[k] for k in keys)
            if identity not in seen:
                seen.add(identity)
                out.append(item)
        return out
    return [_value(draw, items, depth + 1) for _ in range(size)]


def _leaves(value: Any, path: str = "") -> list[tuple[list[str | int], str]]:
    """Paths to every scalar in ``value``: as a key list and as kapi prints them."""
    out: list[tuple[list[str | int], str]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            at = f"{path}.{k}" if path else k
            out += [([k, *steps], shown) for steps, shown in _leaves(v, at)]
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += [([i, *steps], shown) for steps, shown in _leaves(v, f"{path}[{i}]")]
    else:
        out.append(([], path))
    return out


def _schema_at(schema: dict[str, Any], steps: list[str | int]) -> dict[str, Any]:
    for step in steps:
        schema = schema["items"] if isinstance(step, int) else schema["properties"][step]
    return schema


def _is_subsequence(part: list[str], whole: list[str]) -> bool:
    it = iter(whole)
    return all(any(x == y for y in it) for x in part)


_PROPERTY_SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@_PROPERTY_SETTINGS
@given(data=st.data())
def test_property_no_op_updates_pass_and_changed_leaves_keep_their_errors(
    data: st.DataObject,
) -> None:
    """Two properties on one random schema and object (generating them is the costly part).

    (a) An update that changes nothing never fails on schema errors while ratcheting is on.
    (b) When the update changes one leaf, the errors about that leaf are those a create
        reports, and everything reported is, in order, part of what a create reports.
    """
    schema = data.draw(_ROOT_SCHEMAS, label="schema")
    old = _value(data.draw, schema)
    assert update(schema, old, copy.deepcopy(old)) == []

    leaves = _leaves(old)
    if not leaves:
        return
    steps, shown = data.draw(st.sampled_from(leaves), label="leaf")
    leaf_schema = _schema_at(schema, steps)
    new = copy.deepcopy(old)
    parent = new
    for step in steps[:-1]:
        parent = parent[step]
    replacement = _value(data.draw, leaf_schema)
    parent[steps[-1]] = replacement
    validator = SchemaValidator(schema)
    on_create = texts(validator.validate(new))
    got = texts(update(schema, new, old))
    # Whatever ratcheting keeps is a subsequence of what a create reports (order kept).
    assert _is_subsequence(got, on_create)
    if replacement == old_leaf(old, steps) and type(replacement) is type(old_leaf(old, steps)):
        return  # not a change after all
    if _renamed_onto_another_item(schema, new, steps):
        # The item now pairs with the old item that had this key, where the leaf had the
        # same value: unchanged, as upstream would have it (the duplicate key it created
        # is reported by the list-type check instead).
        return
    # Set items are leaves too; their uniqueness errors follow the older list-type rule
    # (reported only when old had none), tested on their own above.
    at_leaf = [e for e in on_create if e.startswith(f"{shown}: ") and _NOT_DUPLICATE(e)]
    assert [e for e in got if e.startswith(f"{shown}: ") and _NOT_DUPLICATE(e)] == at_leaf


def _renamed_onto_another_item(schema: dict[str, Any], new: Any, steps: list[str | int]) -> bool:
    """Whether the leaf is a map-list key and its item's new identity is another item's."""
    if len(steps) < 2 or not isinstance(steps[-2], int):
        return False
    list_schema = _schema_at(schema, steps[:-2])
    keys = list_schema.get("x-kubernetes-list-map-keys") or []
    if steps[-1] not in keys:
        return False
    items = old_leaf(new, steps[:-2])
    identities = [tuple(item.get(k) for k in keys) for item in items]
    return identities.count(identities[steps[-2]]) > 1


def _NOT_DUPLICATE(error: str) -> bool:
    return ": Duplicate value: " not in error


def old_leaf(value: Any, steps: list[str | int]) -> Any:
    for step in steps:
        value = value[step]
    return value
