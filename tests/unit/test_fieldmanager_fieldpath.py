"""Field sets and their FieldsV1 encoding, as structured-merge-diff's ``fieldpath``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kapi.registry.fieldmanager.fieldpath import (
    EMPTY,
    FieldSet,
    FieldsV1Error,
    field_element,
    from_fields_v1,
    index_element,
    key_element,
    path_string,
    value_element,
)

F = field_element

# Documents in the spelling kube-apiserver writes (keys in its order, "." first).
UPSTREAM_DOCUMENTS = [
    '{"f:metadata":{".":{},"f:name":{}}}',
    '{"f:data":{".":{},"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}}',
    '{"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},'
    '"f:name":{},"f:ports":{".":{},"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":'
    '{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}',
    '{"f:metadata":{"f:finalizers":{".":{},"v:\\"a\\"":{},"v:\\"b\\"":{}}}}',
    '{"f:spec":{"f:args":{},"f:items":{"i:0":{},"i:1":{"f:x":{}}}}}',
    "{}",
]


@pytest.mark.parametrize("document", UPSTREAM_DOCUMENTS)
def test_upstream_documents_round_trip(document: str) -> None:
    decoded = from_fields_v1(json.loads(document))
    assert json.dumps(decoded.to_fields_v1(), separators=(",", ":")) == document


def test_members_and_children() -> None:
    decoded = from_fields_v1(json.loads(UPSTREAM_DOCUMENTS[1]))
    assert decoded.has((F("data"),))
    assert decoded.has((F("data"), F("a")))
    assert decoded.has((F("metadata"), F("labels"), F("app")))
    # "metadata" has children but no "." entry: it is not a member itself.
    assert not decoded.has((F("metadata"),))
    assert len(list(decoded.paths())) == 5


def test_iteration_order_and_path_strings() -> None:
    pe_http = key_element([("name", "http")])
    s = FieldSet.of(
        (F("spec"), F("ports"), pe_http, F("port")),
        (F("spec"), F("replicas")),
        (F("metadata"), F("labels"), F("app")),
        (F("spec"), F("tags"), value_element("x")),
        (F("spec"), F("args"), index_element(3)),
    )
    assert [path_string(p) for p in s.paths()] == [
        ".metadata.labels.app",
        ".spec.replicas",
        ".spec.args[3]",
        '.spec.ports[name="http"].port',
        '.spec.tags[="x"]',
    ]


def test_element_order_is_upstreams() -> None:
    """Fields, then keys, then values, then indexes; key values compare by value."""
    port = (F("ports"),)
    s = FieldSet.of(
        (*port, key_element([("port", 443)])),
        (*port, key_element([("port", 80)])),
        (*port, key_element([("port", 8080)])),
    )
    assert list(s.to_fields_v1()["f:ports"]) == [
        'k:{"port":80}',
        'k:{"port":443}',
        'k:{"port":8080}',
    ]
    mixed = FieldSet.of((index_element(0),), (value_element(1),), (F("z"),), (F("a"),))
    assert list(mixed.to_fields_v1()) == ["f:a", "f:z", "v:1", "i:0"]
    values = FieldSet.of((value_element("b"),), (value_element(True),), (value_element(2),))
    assert list(values.to_fields_v1()) == ["v:2", 'v:"b"', "v:true"]


def test_key_elements_sort_their_fields_and_escape_as_go() -> None:
    assert key_element([("protocol", "TCP"), ("containerPort", 80)]) == (
        'k:{"containerPort":80,"protocol":"TCP"}'
    )
    assert value_element("<a&b>") == 'v:"\\u003ca\\u0026b\\u003e"'
    assert key_element([("n", 1.0)]) == 'k:{"n":1}'


def test_non_canonical_documents_decode_to_canonical_sets() -> None:
    document = {
        "f:b": {},
        'k:{"protocol":"TCP","port":80}': {".": {}, "f:x": {}},
        "f:a": {".": {}},
        "x:unknown": {"f:ignored": {}},
    }
    decoded = from_fields_v1(document)
    assert decoded.to_fields_v1() == {
        "f:a": {},
        "f:b": {},
        'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:x": {}},
    }
    assert list(decoded.to_fields_v1()) == ["f:a", "f:b", 'k:{"port":80,"protocol":"TCP"}']


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"f": {}}, "key must be 2 characters long: f"),
        ({"fx": {}}, "missing colon: fx"),
        ({"i:x": {}}, "invalid literal"),
        ({"k:[1]": {}}, "expected an object"),
        ({"f:a": 1}, "expected an object at f:a"),
    ],
)
def test_malformed_documents(document: dict[str, object], message: str) -> None:
    with pytest.raises(FieldsV1Error, match=message):
        from_fields_v1(document)


def test_algebra_follows_upstream() -> None:
    a = FieldSet.of((F("m"),), (F("m"), F("x")), (F("m"), F("y")), (F("n"),))
    b = FieldSet.of((F("m"),), (F("m"), F("x")))
    # Difference removes members only: children of "m" that b does not list stay.
    assert a.difference(b) == FieldSet.of((F("m"), F("y")), (F("n"),))
    # Recursive difference also drops everything below a member of the other set.
    assert a.recursive_difference(FieldSet.of((F("m"),))) == FieldSet.of((F("n"),))
    assert a.intersection(b) == b
    assert b.union(FieldSet.of((F("n"),))) == FieldSet.of((F("m"),), (F("m"), F("x")), (F("n"),))
    assert a.intersection(FieldSet.of((F("z"),))) is EMPTY


def test_unchanged_operands_come_back_unchanged() -> None:
    a = FieldSet.of((F("m"), F("x")))
    assert a.union(EMPTY) is a
    assert a.difference(FieldSet.of((F("other"),))) is a
    assert a.union(FieldSet.of((F("m"), F("x")))) is a


_names = st.sampled_from(["a", "b", "c", "metadata", "spec"])
_elements = st.one_of(
    _names.map(field_element),
    st.integers(0, 3).map(index_element),
    st.sampled_from(["x", "y"]).map(value_element),
    st.tuples(st.sampled_from(["p", "q"]), st.integers(0, 500)).map(
        lambda kv: key_element([("name", kv[0]), ("port", kv[1])])
    ),
)
_paths = st.lists(_elements, min_size=1, max_size=4).map(tuple)
_sets = st.lists(_paths, max_size=12).map(lambda paths: FieldSet.of(*paths))


@given(_sets)
def test_encoding_round_trips(s: FieldSet) -> None:
    document = json.loads(json.dumps(s.to_fields_v1()))
    assert from_fields_v1(document) == s


@given(_sets, _sets)
def test_set_laws(a: FieldSet, b: FieldSet) -> None:
    union = a.union(b)
    for path in a.paths():
        assert union.has(path)
    for path in b.paths():
        assert union.has(path)
    both = a.intersection(b)
    assert all(a.has(p) and b.has(p) for p in both.paths())
    rest = a.difference(b)
    assert all(a.has(p) and not b.has(p) for p in rest.paths())
    assert sorted(p for p in union.paths()) == sorted({*a.paths(), *b.paths()})
