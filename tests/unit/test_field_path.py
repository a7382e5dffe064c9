"""Field paths and field errors render exactly as k8s.io/apimachinery/pkg/util/validation/field."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kapi.apimachinery import errors, field_errors
from kapi.apimachinery.field_errors import ErrorType, FieldError, Path
from kapi.apimachinery.gotext import OrderedStruct, go_quote


def test_path_rendering() -> None:
    assert str(Path("metadata")) == "metadata"
    assert str(Path("metadata", "labels")) == "metadata.labels"
    assert str(Path("metadata").child("labels").key("foo")) == "metadata.labels[foo]"
    assert str(Path("spec").child("items").index(0)) == "spec.items[0]"
    assert str(Path("spec").child("a", "b").index(3).child("c")) == "spec.a.b[3].c"
    # Keys are not quoted or escaped, as upstream.
    assert str(Path("m").key("a.b/c d")) == "m[a.b/c d]"
    # Consecutive subscripts, as in label selector value errors.
    assert str(Path("values").index(0).key("x")) == "values[0][x]"
    # An empty name is a subscript, even at the root (upstream quirk).
    assert str(Path("")) == "[]"
    assert str(Path("a").child("")) == "a[]"


def test_path_parent_root_equality() -> None:
    p = Path("a", "b").index(2)
    assert p.parent is not None and str(p.parent) == "a.b"
    assert str(p.root()) == "a"
    assert p == Path("a").child("b").index(2)
    assert hash(p) == hash(Path("a").child("b").index(2))
    assert field_errors.path_str(None) == "<nil>"
    assert str(field_errors.child_of(None, "key")) == "key"


_segment = st.one_of(
    st.tuples(st.just("child"), st.from_regex(r"[a-zA-Z][a-zA-Z0-9]{0,8}", fullmatch=True)),
    st.tuples(st.just("index"), st.integers(min_value=0, max_value=1000)),
    st.tuples(st.just("key"), st.text(min_size=0, max_size=8)),
)


@given(st.from_regex(r"[a-z][a-zA-Z0-9]{0,8}", fullmatch=True), st.lists(_segment, max_size=6))
def test_path_matches_reference_rendering(root: str, segments: list[tuple[str, object]]) -> None:
    p = Path(root)
    expected = root
    for kind, v in segments:
        if kind == "child":
            p = p.child(str(v))
            expected += "." + str(v)
        elif kind == "index":
            p = p.index(int(v))  # type: ignore[call-overload]
            expected += f"[{v}]"
        else:
            p = p.key(str(v))
            expected += f"[{v}]"
    assert str(p) == expected


P = Path("metadata").child("name")


def test_error_type_strings() -> None:
    assert ErrorType.REQUIRED == "FieldValueRequired"
    assert ErrorType.INVALID == "FieldValueInvalid"
    assert ErrorType.NOT_SUPPORTED == "FieldValueNotSupported"
    assert ErrorType.DUPLICATE == "FieldValueDuplicate"
    assert ErrorType.FORBIDDEN == "FieldValueForbidden"
    assert ErrorType.TOO_LONG == "FieldValueTooLong"
    assert ErrorType.TOO_MANY == "FieldValueTooMany"
    assert ErrorType.TYPE_INVALID == "FieldValueTypeInvalid"
    assert ErrorType.INTERNAL == "InternalError"
    assert ErrorType.INVALID.reason == "FieldValueInvalid"
    assert ErrorType.REQUIRED.message == "Required value"
    assert ErrorType.INVALID.message == "Invalid value"
    assert ErrorType.TYPE_INVALID.message == "Invalid value"
    assert ErrorType.NOT_SUPPORTED.message == "Unsupported value"
    assert ErrorType.TOO_LONG.message == "Too long"


def test_required_and_forbidden_never_show_value() -> None:
    e = field_errors.required(P, "name or generateName is required")
    assert e.type is ErrorType.REQUIRED
    assert e.field == "metadata.name"
    assert e.error_message() == "metadata.name: Required value: name or generateName is required"
    assert str(field_errors.required(Path("metadata", "namespace"))) == (
        "metadata.namespace: Required value"
    )
    assert str(
        field_errors.forbidden(Path("metadata", "namespace"), "not allowed on this type")
    ) == ("metadata.namespace: Forbidden: not allowed on this type")


def test_invalid_renders_values_like_go() -> None:
    assert str(field_errors.invalid(P, "Foo", "bad")) == 'metadata.name: Invalid value: "Foo": bad'
    assert str(field_errors.invalid(P, -1, "neg")) == "metadata.name: Invalid value: -1: neg"
    assert str(field_errors.invalid(P, True, "x")) == "metadata.name: Invalid value: true: x"
    assert str(field_errors.invalid(P, None, "x")) == "metadata.name: Invalid value: null: x"
    assert str(field_errors.invalid(P, [], "x")) == "metadata.name: Invalid value: []: x"
    assert (
        str(field_errors.invalid(P, ["a", "b"], "x"))
        == 'metadata.name: Invalid value: ["a","b"]: x'
    )
    # Go maps marshal with sorted keys and HTML-safe strings.
    assert str(field_errors.invalid(P, {"b": 1, "a": "<&>"}, "x")) == (
        'metadata.name: Invalid value: {"a":"\\u003c\\u0026\\u003e","b":1}: x'
    )
    # Go structs keep field order.
    assert field_errors.render_value(OrderedStruct(kind="K", apiVersion="v1")) == (
        '{"kind":"K","apiVersion":"v1"}'
    )
    # Empty detail: no trailing colon.
    assert str(field_errors.invalid(P, "x", "")) == 'metadata.name: Invalid value: "x"'
    assert str(field_errors.type_invalid(P, "x", "must be integer")) == (
        'metadata.name: Invalid value: "x": must be integer'
    )


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        ("plain", '"plain"'),
        ('q"b\\s', '"q\\"b\\\\s"'),
        ("a\nb\tc\x07", '"a\\nb\\tc\\a"'),
        ("\x01\x7f", '"\\x01\\x7f"'),
        ("é😀", '"é😀"'),
        ("\u00ad\u2028", '"\\u00ad\\u2028"'),
        ("\U000e0001", '"\\U000e0001"'),
    ],
)
def test_strings_are_quoted_with_go_percent_q(value: str, rendered: str) -> None:
    assert field_errors.render_value(value) == rendered
    assert go_quote(value) == rendered


@pytest.mark.parametrize(
    ("value", "percent_v", "as_json"),
    [
        (1.0, "1", "1"),
        (1.5, "1.5", "1.5"),
        (-2.25, "-2.25", "-2.25"),
        (123456.0, "123456", "123456"),
        (1e6, "1e+06", "1000000"),
        (1234567.0, "1.234567e+06", "1234567"),
        (0.0001, "0.0001", "0.0001"),
        (0.00001, "1e-05", "0.00001"),
        (1.5e-7, "1.5e-07", "1.5e-7"),
        (1e20, "1e+20", "100000000000000000000"),
        (1e21, "1e+21", "1e+21"),
        (0.0, "0", "0"),
    ],
)
def test_floats_render_like_go(value: float, percent_v: str, as_json: str) -> None:
    assert field_errors.render_value(value) == percent_v
    assert field_errors.render_value([value]) == f"[{as_json}]"


def test_not_supported_lists_quoted_values() -> None:
    e = field_errors.not_supported(Path("spec", "policy"), "Bad", ["Always", "Never"])
    assert str(e) == ('spec.policy: Unsupported value: "Bad": supported values: "Always", "Never"')
    assert str(field_errors.not_supported(Path("x"), "v", [])) == 'x: Unsupported value: "v"'


def test_too_long_too_many_duplicate() -> None:
    a = Path("metadata", "annotations")
    assert str(field_errors.too_long(a, "", 262144)) == (
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    )
    assert (
        str(field_errors.too_long(a, "", 1))
        == "metadata.annotations: Too long: may not be more than 1 byte"
    )
    assert (
        str(field_errors.too_long(a, "", -1)) == "metadata.annotations: Too long: value is too long"
    )
    assert (
        str(field_errors.too_many(Path("items"), 3, 2))
        == "items: Too many: 3: must have at most 2 items"
    )
    assert (
        str(field_errors.too_many(Path("items"), -1, 1))
        == "items: Too many: must have at most 1 item"
    )
    assert str(field_errors.duplicate(Path("spec", "ports").index(1), "http")) == (
        'spec.ports[1]: Duplicate value: "http"'
    )


def test_cause_and_aggregate() -> None:
    e = field_errors.invalid(P, "Foo", "bad")
    [cause] = errors.invalid("Widget", "", "foo", [e]).details["causes"]
    assert cause == {
        "reason": "FieldValueInvalid",
        "message": 'Invalid value: "Foo": bad',
        "field": "metadata.name",
    }
    r = field_errors.required(P, "")
    assert field_errors.aggregate_message([]) == ""
    assert field_errors.aggregate_message([e]) == 'metadata.name: Invalid value: "Foo": bad'
    assert field_errors.aggregate_message([e, r, e]) == (
        '[metadata.name: Invalid value: "Foo": bad, metadata.name: Required value]'
    )


def test_equality() -> None:
    assert field_errors.invalid(P, "a", "d") == FieldError(
        ErrorType.INVALID, "metadata.name", "a", "d"
    )
    assert field_errors.invalid(P, "a", "d") != field_errors.invalid(P, "b", "d")


def test_child_paths_are_shared_but_bounded() -> None:
    root = Path("spec")
    assert root.child("a") is root.child("a")
    for i in range(200):
        assert str(root.child(f"f{i}")) == f"spec.f{i}"
    assert root._children is not None and len(root._children) <= 64
