"""Field selectors as k8s.io/apimachinery/pkg/fields parses, prints and matches them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kapi.apimachinery import field_selector as F
from kapi.apimachinery.field_selector import FieldLabelNotSupportedError, FieldSelectorParseError


@pytest.mark.parametrize(
    ("selector", "terms"),
    [
        ("a", ["a"]),
        ("a=avalue", ["a=avalue"]),
        ("a=avalue,b=bvalue", ["a=avalue", "b=bvalue"]),
        ("a=avalue,b==bvalue,c!=cvalue", ["a=avalue", "b==bvalue", "c!=cvalue"]),
        ("", []),
        ("a=a,", ["a=a", ""]),
        (",a=a", ["", "a=a"]),
        ("k=\\,,k2=v2", ["k=\\,", "k2=v2"]),
        ("k=\\\\,k2=v2", ["k=\\\\", "k2=v2"]),
        ("k=\\\\\\,,k2=v2", ["k=\\\\\\,", "k2=v2"]),
        ("k=\\a\\b\\", ["k=\\a\\b\\"]),
        ("k=\\", ["k=\\"]),
        ("함=수,목=록", ["함=수", "목=록"]),
    ],
)
def test_split_terms(selector: str, terms: list[str]) -> None:
    assert F._split_terms(selector) == terms


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("a=value", ("a", "=", "value")),
        ("b==value", ("b", "==", "value")),
        ("c!=value", ("c", "!=", "value")),
        ("", None),
        ("a", None),
        ("k=\\,", ("k", "=", "\\,")),
        ("k=\\\\\\a\\b\\=\\,\\", ("k", "=", "\\\\\\a\\b\\=\\,\\")),
        ("함=수", ("함", "=", "수")),
    ],
)
def test_split_term(term: str, expected: tuple[str, str, str] | None) -> None:
    assert F._split_term(term) == expected


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("", ""),
        ("a", "a"),
        ("=", "\\="),
        (",", "\\,"),
        ("\\", "\\\\"),
        ("\\=\\,\\", "\\\\\\=\\\\\\,\\\\"),
    ],
)
def test_escape_unescape(raw: str, escaped: str) -> None:
    assert F.escape_value(raw) == escaped
    assert F.unescape_value(escaped) == raw


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("\\", "invalid field selector: invalid escape sequence: \\"),
        ("\\\\\\", "invalid field selector: invalid escape sequence: \\"),
        ("\\a", "invalid field selector: invalid escape sequence: \\a"),
        # Upstream prints the rune with %v: its code point.
        ("a=b", "invalid field selector: unescaped character in value: 61"),
        ("a,b", "invalid field selector: unescaped character in value: 44"),
    ],
)
def test_unescape_errors(value: str, message: str) -> None:
    with pytest.raises(FieldSelectorParseError) as exc:
        F.unescape_value(value)
    assert str(exc.value) == message


@pytest.mark.parametrize("s", ["x=a,y=b,z=c", "", "x!=a,y=b", "x=a||y\\=b", "x=a\\=\\=b"])
def test_good_strings_restring(s: str) -> None:
    assert str(F.parse_selector(s)) == s


@pytest.mark.parametrize(
    ("s", "message"),
    [
        ("x=a||y=b", "invalid field selector: unescaped character in value: 61"),
        ("x==a==b", "invalid field selector: unescaped character in value: 61"),
        ("x=a,b", "invalid selector: 'x=a,b'; can't understand 'b'"),
        ("x in (a)", "invalid selector: 'x in (a)'; can't understand 'x in (a)'"),
        ("x in (a,b,c)", "invalid selector: 'x in (a,b,c)'; can't understand 'b'"),
        ("x", "invalid selector: 'x'; can't understand 'x'"),
    ],
)
def test_bad_strings(s: str, message: str) -> None:
    with pytest.raises(FieldSelectorParseError) as exc:
        F.parse_selector(s)
    assert str(exc.value) == message


def test_double_equals_prints_single_and_terms_sort() -> None:
    assert str(F.parse_selector("x==a")) == "x=a"
    assert str(F.parse_selector("x=a,a=x")) == str(F.parse_selector("a=x,x=a")) == "a=x,x=a"
    assert str(F.parse_selector("a=b,,")) == "a=b"
    sel = F.parse_selector("metadata.name=foo,metadata.namespace!=bar")
    assert [(r.field, r.operator, r.value) for r in sel.requirements] == [
        ("metadata.name", "=", "foo"),
        ("metadata.namespace", "!=", "bar"),
    ]


def _match(sel: str, fields: dict[str, str]) -> bool:
    return F.parse_selector(sel).matches(fields)


def test_matching() -> None:
    assert _match("", {"x": "y"})
    assert _match("x=y", {"x": "y"})
    assert _match("x=y,z=w", {"x": "y", "z": "w"})
    assert _match("x!=y,z!=w", {"x": "z", "z": "a"})
    assert _match("x=", {})  # a missing field reads as ""
    assert _match("x!=y", {})
    assert _match("x=a\\,b", {"x": "a,b"})
    assert not _match("x=y", {"x": "z"})
    assert not _match("x=y,z=w", {"x": "w", "z": "w"})
    assert not _match("x!=y,z!=w", {"x": "z", "z": "w"})
    assert not _match("x=z", {})


def test_empty_and_exact_match() -> None:
    assert F.parse_selector("").empty() and F.parse_selector("").matches({"a": "b"})
    sel = F.parse_selector("metadata.name=foo,status.phase!=Running")
    assert not sel.empty()
    assert sel.requires_exact_match("metadata.name") == ("foo", True)
    assert sel.requires_exact_match("status.phase") == ("", False)
    assert sel.requires_exact_match("nope") == ("", False)
    assert sel.exact("metadata.name") == "foo" and sel.exact("status.phase") is None


def test_field_label_converter_rejects_the_first_unsupported_label() -> None:
    convert = F.field_label_converter({"metadata.name", "metadata.namespace"})
    F.parse_selector("metadata.name=a,metadata.namespace=b").transform(convert)
    F.parse_selector("").transform(convert)
    with pytest.raises(FieldLabelNotSupportedError) as exc:
        F.parse_selector("spec.foo=a,metadata.name=x,abc=1").transform(convert)
    # The first unsupported term in selector (sorted) order, as upstream's Transform.
    assert str(exc.value) == "field label not supported: abc"
    assert exc.value.label == "abc"
    assert isinstance(exc.value, ValueError)


def test_transform() -> None:
    sel = F.parse_selector("a=1,b=2")
    out = sel.transform(lambda f, v: ("", "") if f == "a" else (f.upper(), v + "!"))
    assert str(out) == "B=2!"
    with pytest.raises(FieldLabelNotSupportedError, match=r"^field label not supported: b$"):
        sel.transform(F.field_label_converter({"a"}))


@given(st.text(max_size=20))
def test_escape_round_trip(value: str) -> None:
    escaped = F.escape_value(value)
    assert F.unescape_value(escaped) == value
    assert F.parse_selector("f=" + escaped).matches({"f": value})


_field = st.from_regex(r"[a-z][a-zA-Z0-9.]{0,15}", fullmatch=True)


@given(
    st.lists(
        st.tuples(_field, st.sampled_from(["=", "==", "!="]), st.text(max_size=10)), max_size=5
    )
)
def test_round_trip_parse_str_parse(terms: list[tuple[str, str, str]]) -> None:
    text = ",".join(f"{f}{op}{F.escape_value(v)}" for f, op, v in terms)
    sel = F.parse_selector(text)
    assert len(sel.requirements) == len(terms)
    again = F.parse_selector(str(sel))

    def key(r: F.Requirement) -> tuple[str, str, str]:
        return (r.field, r.operator, r.value)

    # Upstream sorts raw terms, so '==' terms may move once after printing as '='.
    assert sorted(map(key, again.requirements)) == sorted(map(key, sel.requirements))
    assert str(F.parse_selector(str(again))) == str(again)
    values = {f: v for f, _, v in terms}
    assert again.matches(values) == sel.matches(values)


_FIELDS = ["metadata.name", "status.phase", "spec.nodeName"]
_FIELD_VALUES = ["", "a", "b", "c"]


@settings(deadline=None)  # a loaded shared machine, not the code, is slow
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_FIELDS), st.sampled_from(["=", "!="]), st.sampled_from(_FIELD_VALUES)
        ),
        max_size=8,
    ),
    st.dictionaries(st.sampled_from(_FIELDS), st.sampled_from(_FIELD_VALUES), max_size=3),
)
def test_compiled_selector_agrees_with_term_by_term_evaluation(
    terms: list[tuple[str, str, str]], fields: dict[str, str]
) -> None:
    # Upstream reads a missing field as "".
    expected = all((fields.get(f, "") == v) == (op == "=") for f, op, v in terms)
    assert F.Selector(F.Requirement(f, op, v) for f, op, v in terms).matches(fields) == expected


def test_thousands_of_terms_on_one_field() -> None:
    sel = F.parse_selector(",".join(f"metadata.name!=x{i}" for i in range(5500)))
    assert sel.fields() == ("metadata.name",)
    assert sel.matches({"metadata.name": "y"})
    assert sel.matches({})
    assert not sel.matches({"metadata.name": "x4321"})
    assert not F.parse_selector("metadata.name=a,metadata.name=b").matches({"metadata.name": "a"})
    assert not F.parse_selector("metadata.name=a,metadata.name!=a").matches({"metadata.name": "a"})
