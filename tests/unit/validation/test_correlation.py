"""CorrelatedObject: how an update's old and new values pair up, and when they are equal.

The expected outcomes follow upstream's ``k8s.io/apiserver/pkg/cel/common``
(``equality.go``, ``maplist.go``); the table of :func:`test_upstream_correlation`
restates the cases of upstream's ``equality_test.go`` ``TestCorrelation`` (their
inputs and outcomes, written here as Python data).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from kapi.validation import correlation as correlation_module
from kapi.validation.correlation import CorrelatedObject, strict_equal

STR = {"type": "string"}


def corr(new: Any, old: Any, schema: dict[str, Any]) -> CorrelatedObject:
    return CorrelatedObject.for_update(new, old, schema)


def walk(node: CorrelatedObject | None, path: list[str | int]) -> CorrelatedObject | None:
    """Follow ``path`` (field names and indexes) as a validator descends; None once unpaired."""
    for step in path:
        if node is None:
            return None
        node = node.key(step) if isinstance(step, str) else node.index(step)
    return node


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def map_list(items: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": list(keys),
        "items": items,
    }


_KEYED_ITEM = obj(key=STR, bar=obj(baz=STR))
_ATOMIC_MAP_SET = {
    "properties": {
        "foo": {
            "type": "array",
            "items": {
                "type": "object",
                "x-kubernetes-map-type": "atomic",
                "properties": {"key": STR, "bar": STR},
            },
            "x-kubernetes-list-type": "set",
        }
    }
}
_FOO_KEY_BAR = {
    "properties": {"foo": {"type": "object", "properties": {"key": STR, "bar": obj(baz=STR)}}}
}

# (name, schema, new root, old root, path, expected (new, old) at path or None, equal override)
# As upstream, the expected equality is the plain deep-equality of the pair unless overridden.
_UPSTREAM: list[tuple[str, Any, Any, Any, list[str | int], tuple[Any, Any] | None, bool]] = [
    ("basic key", {"properties": {"a": STR}}, {"a": "b"}, {"a": "b"}, ["a"], ("b", "b"), False),
    (
        "atomic array not correlatable",
        {"items": STR},
        ["a", "b"],
        ["a", "b"],
        [1],
        None,
        False,
    ),
    (
        "added key not in old object",
        {"properties": {"a": STR, "c": STR}},
        {"a": "b", "c": "d"},
        {"a": "b"},
        ["c"],
        None,
        False,
    ),
    (
        "added index not in old object",
        {"items": STR},
        ["a", "b", "c"],
        ["a", "b"],
        [2],
        None,
        False,
    ),
    (
        "changed index in old object not correlatable",
        {"items": STR},
        ["a", "b"],
        ["a", "oldB"],
        [1],
        None,
        False,
    ),
    (
        "changed index in nested old object",
        {"items": STR},
        ["a", "b"],
        ["a", "oldB"],
        [],
        (["a", "b"], ["a", "oldB"]),
        False,
    ),
    (
        "changed key in old object",
        {"properties": {"a": STR}},
        {"a": "b"},
        {"a": "oldB"},
        ["a"],
        ("b", "oldB"),
        False,
    ),
    (
        "replaced key in old object",
        {"properties": {"a": STR}},
        {"a": "b"},
        {"b": "a"},
        [],
        ({"a": "b"}, {"b": "a"}),
        False,
    ),
    (
        "added key in old object",
        {"properties": {"a": STR}},
        {"a": "b"},
        {},
        [],
        ({"a": "b"}, {}),
        False,
    ),
    (
        "changed list to map",
        {"properties": {"a": STR}},
        {"a": "b"},
        ["a", "b"],
        [],
        ({"a": "b"}, ["a", "b"]),
        False,
    ),
    (
        "changed string to map",
        {"properties": {"a": STR}},
        {"a": "b"},
        "a string",
        [],
        ({"a": "b"}, "a string"),
        False,
    ),
    (
        "map list type",
        {"properties": {"foo": map_list(obj(bar=STR, val=STR), "bar")}},
        {"foo": [{"bar": "baz", "val": "newBazValue"}]},
        {"foo": [{"bar": "fizz", "val": "fizzValue"}, {"bar": "baz", "val": "bazValue"}]},
        ["foo", 0, "val"],
        ("newBazValue", "bazValue"),
        False,
    ),
    (
        "atomic list item should not correlate",
        {
            "properties": {
                "foo": {
                    "type": "array",
                    "items": obj(bar=STR, val=STR),
                    "x-kubernetes-list-type": "atomic",
                }
            }
        },
        {"foo": [{"bar": "baz", "val": "newValue"}]},
        {"foo": [{"bar": "fizz", "val": "fizzValue"}, {"bar": "baz", "val": "barValue"}]},
        ["foo", 0, "val"],
        None,
        False,
    ),
    (
        "map used inside of map list type should correlate",
        {"properties": {"foo": map_list(_KEYED_ITEM, "key")}},
        {"foo": [{"key": "keyValue", "bar": {"baz": "newValue"}}]},
        {
            "foo": [
                {"key": "otherKeyValue", "bar": {"baz": "otherOldValue"}},
                {"key": "altKeyValue", "bar": {"baz": "altOldValue"}},
                {"key": "keyValue", "bar": {"baz": "oldValue"}},
            ]
        },
        ["foo", 0, "bar", "baz"],
        ("newValue", "oldValue"),
        False,
    ),
    (
        "map used inside another map should correlate",
        _FOO_KEY_BAR,
        {"foo": {"key": "keyValue", "bar": {"baz": "newValue"}}},
        {
            "foo": {"key": "otherKeyValue", "bar": {"baz": "otherOldValue"}},
            "altFoo": {"key": "altKeyValue", "bar": {"baz": "altOldValue"}},
            "otherFoo": {"key": "keyValue", "bar": {"baz": "oldValue"}},
        },
        ["foo", "bar"],
        ({"baz": "newValue"}, {"baz": "otherOldValue"}),
        False,
    ),
    (
        "nested map equal to old",
        _FOO_KEY_BAR,
        {"foo": {"key": "newKeyValue", "bar": {"baz": "value"}}},
        {"foo": {"key": "keyValue", "bar": {"baz": "value"}}},
        ["foo", "bar"],
        ({"baz": "value"}, {"baz": "value"}),
        False,
    ),
    (
        "re-ordered list considered equal to old value due to map keys",
        {"properties": {"foo": map_list(_KEYED_ITEM, "key")}},
        {
            "foo": [
                {"key": "keyValue", "bar": {"baz": "value"}},
                {"key": "altKeyValue", "bar": {"baz": "altValue"}},
            ]
        },
        {
            "foo": [
                {"key": "altKeyValue", "bar": {"baz": "altValue"}},
                {"key": "keyValue", "bar": {"baz": "value"}},
            ]
        },
        ["foo"],
        (
            [
                {"key": "keyValue", "bar": {"baz": "value"}},
                {"key": "altKeyValue", "bar": {"baz": "altValue"}},
            ],
            [
                {"key": "altKeyValue", "bar": {"baz": "altValue"}},
                {"key": "keyValue", "bar": {"baz": "value"}},
            ],
        ),
        True,
    ),
    (
        "correlate unknown string key via additional properties",
        {"properties": {"foo": {"type": "object", "additionalProperties": obj(baz=STR)}}},
        {"foo": {"key": "keyValue", "bar": {"baz": "newValue"}}},
        {"foo": {"key": "otherKeyValue", "bar": {"baz": "otherOldValue"}}},
        ["foo", "bar", "baz"],
        ("newValue", "otherOldValue"),
        False,
    ),
    (
        "changed map value",
        _FOO_KEY_BAR,
        {"foo": {"key": "keyValue", "bar": {"baz": "newValue"}}},
        {"foo": {"key": "keyValue", "bar": {"baz": "oldValue"}}},
        ["foo", "bar"],
        ({"baz": "newValue"}, {"baz": "oldValue"}),
        False,
    ),
    (
        "changed nested map value",
        _FOO_KEY_BAR,
        {"foo": {"key": "keyValue", "bar": {"baz": "newValue"}}},
        {"foo": {"key": "keyValue", "bar": {"baz": "oldValue"}}},
        ["foo"],
        (
            {"key": "keyValue", "bar": {"baz": "newValue"}},
            {"key": "keyValue", "bar": {"baz": "oldValue"}},
        ),
        False,
    ),
    (
        "unchanged list type set with atomic map values",
        _ATOMIC_MAP_SET,
        {"foo": [{"key": "key1", "bar": "value1"}, {"key": "key2", "bar": "value2"}]},
        {"foo": [{"key": "key1", "bar": "value1"}, {"key": "key2", "bar": "value2"}]},
        ["foo"],
        (
            [{"key": "key1", "bar": "value1"}, {"key": "key2", "bar": "value2"}],
            [{"key": "key1", "bar": "value1"}, {"key": "key2", "bar": "value2"}],
        ),
        False,
    ),
    (
        "changed list type set with atomic map values",
        _ATOMIC_MAP_SET,
        {"foo": [{"key": "key1", "bar": "value1"}, {"key": "key2", "bar": "newValue2"}]},
        {"foo": [{"key": "key1", "bar": "value1"}, {"key": "key2", "bar": "value2"}]},
        ["foo"],
        (
            [{"key": "key1", "bar": "value1"}, {"key": "key2", "bar": "newValue2"}],
            [{"key": "key1", "bar": "value1"}, {"key": "key2", "bar": "value2"}],
        ),
        False,
    ),
    (
        "elements of list type set with atomic map values are not correlated",
        _ATOMIC_MAP_SET,
        {"foo": [{"key": "key1", "bar": "value1"}, {"key": "key2", "bar": "newValue2"}]},
        {"foo": [{"key": "key1", "bar": "value1"}, {"key": "key2", "bar": "value2"}]},
        ["foo", 0, "key"],
        None,
        False,
    ),
]


@pytest.mark.parametrize(
    ("schema", "new", "old", "path", "expected", "equal_override"),
    [pytest.param(*case[1:], id=case[0]) for case in _UPSTREAM],
)
def test_upstream_correlation(
    schema: dict[str, Any],
    new: Any,
    old: Any,
    path: list[str | int],
    expected: tuple[Any, Any] | None,
    equal_override: bool,
) -> None:
    node = walk(corr(new, old, schema), path)
    if expected is None:
        assert node is None
        return
    assert node is not None
    assert (node.value, node.old) == expected
    assert node.equal() is (equal_override or strict_equal(*expected))


# --- objects --------------------------------------------------------------------------------------


def test_declared_property_pairs() -> None:
    node = corr({"a": 1, "b": "x"}, {"a": 1, "b": "y"}, obj(a={"type": "integer"}, b=STR))
    a, b = node.key("a"), node.key("b")
    assert a is not None and (a.value, a.old, a.schema) == (1, 1, {"type": "integer"})
    assert a.equal() is True
    assert b is not None and b.equal() is False
    assert node.equal() is False


def test_additional_properties_schema_pairs_any_key() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    node = corr({"x": 1, "y": 2}, {"x": 1, "y": 3}, schema)
    x = node.key("x")
    assert x is not None and x.schema == {"type": "integer"} and x.equal() is True
    assert node.key("y") is not None and node.equal() is False
    assert corr({"x": 1}, {"x": 1}, schema).equal() is True


def test_properties_win_over_additional_properties() -> None:
    schema = {
        "type": "object",
        "properties": {"a": STR},
        "additionalProperties": {"type": "integer"},
    }
    node = corr({"a": "s", "b": 1}, {"a": "s", "b": 1}, schema)
    a, b = node.key("a"), node.key("b")
    assert a is not None and a.schema == STR
    assert b is not None and b.schema == {"type": "integer"}
    assert node.equal() is True


@pytest.mark.parametrize("additional", [None, True, False])
def test_key_without_a_schema_does_not_pair(additional: bool | None) -> None:
    schema: dict[str, Any] = obj(a=STR)
    if additional is not None:
        schema["additionalProperties"] = additional
    node = corr({"a": "s", "z": 1}, {"a": "s", "z": 1}, schema)
    assert node.key("z") is None
    assert node.key("a") is not None


def test_key_missing_on_either_side_does_not_pair() -> None:
    schema = obj(a=STR)
    assert corr({"a": "s"}, {}, schema).key("a") is None
    assert corr({}, {"a": "s"}, schema).key("a") is None
    assert corr({"a": "s"}, ["a"], schema).key("a") is None
    assert corr("a", {"a": "s"}, schema).key("a") is None


def test_null_values_pair_and_compare() -> None:
    schema = obj(a={"type": "string", "nullable": True})
    node = corr({"a": None}, {"a": None}, schema)
    a = node.key("a")
    assert a is not None and a.equal() is True
    assert node.equal() is True
    assert corr({"a": None}, {"a": "x"}, schema).equal() is False
    assert corr(None, None, schema).equal() is True
    assert corr(None, {}, schema).equal() is False
    assert corr({}, None, schema).equal() is False


def test_preserve_unknown_fields_object_is_never_equal() -> None:
    """Shipped quirk (equality.go: CachedDeepEqual on a key that Key() cannot pair):
    an unchanged object with a key its schema does not describe is not "equal"."""
    schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {"known": STR},
    }
    same = {"known": "a", "extra": {"x": 1}}
    node = corr(same, {"known": "a", "extra": {"x": 1}}, schema)
    assert node.equal() is False
    assert node.key("extra") is None
    known = node.key("known")
    assert known is not None and known.equal() is True
    # Without the undescribed key, the same schema compares normally.
    assert corr({"known": "a"}, {"known": "a"}, schema).equal() is True
    # And the quirk propagates upwards: the parent of such an object is not equal either.
    outer = obj(inner=schema)
    assert corr({"inner": same}, {"inner": dict(same)}, outer).equal() is False


def test_root_type_meta_fields_do_not_pair_through_field() -> None:
    schema = obj(apiVersion=STR, kind=STR, spec=obj(apiVersion=STR, kind=STR))
    value: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "K",
        "spec": {"apiVersion": "v1", "kind": "K"},
    }
    root = corr(value, {**value, "spec": dict(value["spec"])}, schema)
    assert root.field("apiVersion") is None
    assert root.field("kind") is None
    spec = root.field("spec")
    assert spec is not None
    # Only the root's: nested fields of the same names pair as any other field.
    assert spec.field("apiVersion") is not None and spec.field("kind") is not None
    # key() is upstream's Key(), which does not single them out.
    assert root.key("apiVersion") is not None
    # A node built without ``root`` is not the root of an update.
    assert CorrelatedObject(value, value, schema, root.stats).field("kind") is not None


# --- lists ----------------------------------------------------------------------------------------

_NV = obj(name=STR, v={"type": "integer"})


def test_map_list_pairs_by_single_key_regardless_of_order() -> None:
    schema = map_list(_NV, "name")
    old = [{"name": "a", "v": 1}, {"name": "b", "v": 2}]
    node = corr([{"name": "b", "v": 2}, {"name": "a", "v": 9}, {"name": "c", "v": 3}], old, schema)
    b, a, c = node.index(0), node.index(1), node.index(2)
    assert b is not None and b.old == {"name": "b", "v": 2} and b.equal() is True
    assert a is not None and a.old == {"name": "a", "v": 1} and a.equal() is False
    assert c is None
    assert node.index(3) is None
    assert node.equal() is False
    assert corr(list(reversed(old)), old, schema).equal() is True


def test_map_list_pairs_by_several_keys() -> None:
    item = obj(name=STR, proto=STR, port={"type": "integer"}, x=STR)
    schema = map_list(item, "name", "proto")
    old = [
        {"name": "a", "proto": "TCP", "x": "1"},
        {"name": "a", "proto": "UDP", "x": "2"},
    ]
    node = corr(
        [{"name": "a", "proto": "UDP", "x": "2"}, {"name": "a", "proto": "SCTP"}], old, schema
    )
    udp = node.index(0)
    assert udp is not None and udp.old == {"name": "a", "proto": "UDP", "x": "2"}
    assert udp.equal() is True
    assert node.index(1) is None


def test_map_list_first_duplicate_wins() -> None:
    schema = map_list(_NV, "name")
    old = [{"name": "a", "v": 1}, {"name": "a", "v": 2}]
    first = corr([{"name": "a", "v": 2}], old, schema).index(0)
    assert first is not None and first.old == {"name": "a", "v": 1}
    assert first.equal() is False
    # Several keys: the first item with the composite key wins as well.
    schema2 = map_list(obj(a=STR, b=STR, v={"type": "integer"}), "a", "b")
    old2 = [{"a": "x", "b": "y", "v": 1}, {"a": "x", "b": "y", "v": 2}]
    node = corr([{"a": "x", "b": "y", "v": 1}], old2, schema2).index(0)
    assert node is not None and node.old == {"a": "x", "b": "y", "v": 1}


@pytest.mark.parametrize(
    "item",
    [
        {"v": 1},  # no key at all
        {"name": None, "v": 1},  # null is not a scalar key
        {"name": {"x": 1}, "v": 1},  # objects are not keys
        {"name": ["a"], "v": 1},  # nor lists
    ],
    ids=["missing", "null", "object", "list"],
)
def test_map_list_item_without_a_scalar_key_never_pairs(item: dict[str, Any]) -> None:
    schema = map_list(obj(name={}, v={"type": "integer"}), "name")
    node = corr([item], [dict(item)], schema)
    assert node.index(0) is None
    # Shipped behaviour (equality.go: a map list whose item cannot be looked up is not
    # equal): even an identical list is then "changed".
    assert node.equal() is False


def test_map_list_non_object_items_never_pair() -> None:
    schema = map_list({"type": "string"}, "name")
    node = corr(["a"], ["a"], schema)
    assert node.index(0) is None
    assert node.equal() is False


def test_map_list_old_items_without_keys_are_skipped() -> None:
    schema = map_list(_NV, "name")
    old = [{"v": 0}, "junk", {"name": ["x"]}, {"name": "a", "v": 1}]
    node = corr([{"name": "a", "v": 1}], old, schema).index(0)
    assert node is not None and node.old == {"name": "a", "v": 1}


@pytest.mark.parametrize(
    ("new_key", "old_key", "pairs"),
    [
        ("1", "1", True),
        (1, 1, True),
        (1, 1.0, False),  # int64 and float64 are different interface keys in Go
        (1.0, 1.0, True),
        (True, True, True),
        (True, 1, False),
        (0, False, False),
        ("1", 1, False),
        (0.0, -0.0, True),  # Go map keys compare floats with ==: 0 == -0
        (1.0000001, 1.0000004, False),  # a single key is compared exactly
    ],
)
def test_single_key_identity_keeps_json_types(new_key: Any, old_key: Any, pairs: bool) -> None:
    schema = map_list(obj(k={}, v={"type": "integer"}), "k")
    node = corr([{"k": new_key, "v": 1}], [{"k": old_key, "v": 1}], schema)
    assert (node.index(0) is not None) is pairs


@pytest.mark.parametrize(
    ("new_key", "old_key", "pairs"),
    [
        ("a", "a", True),
        (1, 1, True),
        (1, 1.0, False),  # "%d" gives 1, "%f" gives 1.000000
        (1.0, 1.0, True),
        (1.0000001, 1.0000004, True),  # both print as 1.000000 with Go's %f
        (1.0000001, 1.000001, False),  # 1.000000 and 1.000001
        (0.0000001, 0.0, True),  # 0.000000
        (-0.0000001, -0.0, True),  # -0.000000
        (0.0, -0.0, False),  # 0.000000 and -0.000000
        (1e20, 1e20 + 16384, False),  # %f prints every integral digit
        (True, True, True),
        (True, "true", False),  # %t against %q
        ("1", 1, False),  # %q against %d
    ],
)
def test_multi_key_identity_prints_floats_as_go_percent_f(
    new_key: Any, old_key: Any, pairs: bool
) -> None:
    schema = map_list(obj(k={}, name=STR, v={"type": "integer"}), "name", "k")
    node = corr(
        [{"name": "n", "k": new_key, "v": 1}], [{"name": "n", "k": old_key, "v": 1}], schema
    )
    assert (node.index(0) is not None) is pairs


def test_map_list_does_not_pair_without_keys_type_or_items() -> None:
    item = [{"name": "a"}]
    no_keys = {"type": "array", "x-kubernetes-list-type": "map", "items": obj(name=STR)}
    no_type = {
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": obj(name=STR),
    }
    no_items = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
    }
    for schema in (no_keys, no_type, no_items):
        node = corr(item, [{"name": "a"}], schema)
        assert node.index(0) is None, schema
        # a map list that cannot pair its items is not equal (equality.go: mapList set)
        assert node.equal() is False, schema
    assert corr([], [], no_keys).equal() is True


@pytest.mark.parametrize("list_type", [None, "atomic", "set", "unknown"])
def test_sets_and_atomic_lists_are_compared_whole(list_type: str | None) -> None:
    schema: dict[str, Any] = {"type": "array", "items": obj(a={"type": "integer"})}
    if list_type is not None:
        schema["x-kubernetes-list-type"] = list_type
    old = [{"a": 1}, {"a": 2}]
    node = corr([{"a": 1}, {"a": 2}], old, schema)
    assert node.index(0) is None and node.index(1) is None
    assert node.equal() is True
    assert corr([{"a": 2}, {"a": 1}], old, schema).equal() is False  # order matters
    assert corr([{"a": 1}, {"a": 3}], old, schema).equal() is False
    assert corr([{"a": 1}], old, schema).equal() is False
    # Compared whole, so undescribed keys inside the items do not matter.
    assert corr([{"z": 1}], [{"z": 1}], schema).equal() is True
    assert corr([{"a": 1.0}], [{"a": 1}], schema).equal() is False


def test_map_list_of_different_length_is_not_equal() -> None:
    schema = map_list(_NV, "name")
    old = [{"name": "a", "v": 1}]
    node = corr([{"name": "a", "v": 1}, {"name": "b", "v": 1}], old, schema)
    assert node.equal() is False
    a = node.index(0)
    assert a is not None and a.equal() is True


# --- strict equality ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1, True),
        (1, 1.0, False),
        (1.5, 1.5, True),
        (True, 1, False),
        (False, 0, False),
        (True, True, True),
        ("1", 1, False),
        (None, None, True),
        (None, {}, False),
        ([], {}, False),
        ({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}, True),
        ({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2.0}]}, False),
        ({"a": [True]}, {"a": [1]}, False),
        ({"a": 1}, {"b": 1}, False),
        ({"a": None}, {}, False),
        ([1, 2], [2, 1], False),
    ],
)
def test_strict_equality(a: Any, b: Any, equal: bool) -> None:
    assert strict_equal(a, b) is equal
    assert strict_equal(b, a) is equal
    # The tree comparison agrees where it compares whole (an atomic list).
    assert corr([a], [b], {"type": "array"}).equal() is equal


def test_scalars_compare_with_their_types() -> None:
    for a, b, equal in [(1, 1, True), (1, 1.0, False), (True, 1, False), ("a", "a", True)]:
        assert corr(a, b, {}).equal() is equal


def test_nested_type_change_is_not_equal() -> None:
    schema = obj(spec=obj(n={"type": "number"}, flag={"type": "boolean"}))
    old = {"spec": {"n": 1, "flag": True}}
    assert corr({"spec": {"n": 1, "flag": True}}, old, schema).equal() is True
    assert corr({"spec": {"n": 1.0, "flag": True}}, old, schema).equal() is False
    assert corr({"spec": {"n": 1, "flag": 1}}, old, schema).equal() is False


# --- caching and statistics -----------------------------------------------------------------------


def test_children_are_created_once_and_reused() -> None:
    schema = obj(a=obj(x=STR), l=map_list(_NV, "name"))
    new = {"a": {"x": "1"}, "l": [{"name": "n", "v": 1}]}
    old = {"a": {"x": "1"}, "l": [{"name": "n", "v": 1}]}
    node = corr(new, old, schema)
    a = node.key("a")
    assert a is not None and node.key("a") is a and node.field("a") is a
    lst = node.key("l")
    assert lst is not None
    item = lst.index(0)
    assert item is not None and lst.index(0) is item
    # Children share the update's statistics.
    assert a.stats is node.stats and item.stats is node.stats


def test_parent_comparison_reuses_the_cached_result_of_its_children() -> None:
    schema = obj(a=obj(x=STR), b=STR)
    new: dict[str, Any] = {"a": {"x": "1"}, "b": "b"}
    node = corr(new, {"a": {"x": "1"}, "b": "b"}, schema)
    a = node.key("a")
    assert a is not None and a.equal() is True
    # The child's answer is cached: the parent uses it, and does not compare again.
    new["a"]["x"] = "changed after the child compared"
    assert node.equal() is True
    # And the parent's own answer is cached too.
    new["b"] = "changed"
    assert node.equal() is True
    # A fresh tree sees the change.
    assert corr(new, {"a": {"x": "1"}, "b": "b"}, schema).equal() is False


class _Clock:
    """A stand-in for time.perf_counter that advances one second per reading."""

    def __init__(self) -> None:
        self._ticks = itertools.count()

    def __call__(self) -> float:
        return float(next(self._ticks))


def test_stats_seconds_grow_only_when_equal_computes(monkeypatch: pytest.MonkeyPatch) -> None:
    """kapi times each computing equal() once. Upstream (equality.go CachedDeepEqual, Key,
    Index) also times pairing and cache hits, and adds a nested comparison's time at every
    level it runs through; only the histogram's values differ, never a validation outcome."""
    monkeypatch.setattr(correlation_module.time, "perf_counter", _Clock())
    schema = obj(a=obj(x=STR), l=map_list(_NV, "name"))
    value = {"a": {"x": "1"}, "l": [{"name": "n", "v": 1}]}
    node = corr(value, {"a": {"x": "1"}, "l": [{"name": "n", "v": 1}]}, schema)
    assert node.stats.seconds == 0.0
    a = node.key("a")
    lst = node.key("l")
    assert lst is not None and lst.index(0) is not None
    assert node.stats.seconds == 0.0  # pairing alone is not timed
    assert a is not None and a.equal() is True
    assert node.stats.seconds == 1.0  # one reading before, one after
    assert a.equal() is True
    assert node.stats.seconds == 1.0  # cached: not timed again
    assert node.equal() is True
    # The parent's comparison (reusing ``a``) is timed once, not once per level.
    assert node.stats.seconds == 2.0
    assert node.equal() is True and lst.equal() is True
    assert node.stats.seconds == 2.0
    assert node.stats.ratcheted == 0


def test_each_update_has_its_own_stats() -> None:
    schema = obj(a=STR)
    one, two = corr({"a": "x"}, {"a": "x"}, schema), corr({"a": "x"}, {"a": "x"}, schema)
    assert one.stats is not two.stats
