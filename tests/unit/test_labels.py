"""Label selectors as k8s.io/apimachinery/pkg/labels parses, prints and matches them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kapi.apimachinery import labels as L
from kapi.apimachinery.labels import SelectorParseError

BINARY_OPS = "in, notin, =, ==, !=, gt, lt"
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    "s", ["x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"]
)
def test_good_strings_restring_without_spaces(s: str) -> None:
    assert str(L.parse(s)) == s.replace(" ", "")


@pytest.mark.parametrize(
    ("s", "out"),
    [
        ("\rx", "x"),
        ("this-is-a-dns.domain.com/key-with-dash", "this-is-a-dns.domain.com/key-with-dash"),
        (
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)",
        ),
        ("foo  in\t (abc)", "foo in (abc)"),
        ("x notin\n (abc)", "x notin (abc)"),
        ("x in (abc,)", "x in (,abc)"),
        ("x in (abc,abc)", "x in (abc)"),
        ("x in ()", "x in ()"),
        ("x in (a,,)", "x in (,a)"),
        ("x in (a,,,,,,)", "x in (,a)"),
        ("x in (a,,a,,a,,a,,)", "x in (,a)"),
        ("x notin (abc,,def),bar,z in (),w", "bar,w,x notin (,abc,def),z in ()"),
        ("x notin ( )", "x notin ()"),
        ("x notin (, a)", "x notin (,a)"),
        ("a ", "a"),
        ("a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"),
        ("notin=in", "notin=in"),
        ("x==a", "x==a"),
        ("z!=a,z", "z!=a,z"),
    ],
)
def test_parse_canonical_string(s: str, out: str) -> None:
    assert str(L.parse(s)) == out


@pytest.mark.parametrize(
    ("s", "message"),
    [
        ("x==a==b", "found '==', expected: ',' or 'end of string'"),
        ("!x=a", "found '=', expected: ',' or 'end of string'"),
        ("x,,y", "found ',', expected: identifier after ','"),
        (",x,y", "found ',', expected: !, identifier, or 'end of string'"),
        ("(", "found '(', expected: !, identifier, or 'end of string'"),
        ("a in (xyz),", "found '', expected: identifier after ','"),
        ("a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'"),
        ("x nott in (y)", f"unable to parse requirement: found 'nott', expected: {BINARY_OPS}"),
        ("a (", f"unable to parse requirement: found '(', expected: {BINARY_OPS}"),
        ("a notin(", "unable to parse requirement: found '', expected: ',', ')' or identifier"),
        ("a in (xyz abc)", "unable to parse requirement: found 'abc', expected: ',' or ')'"),
        ("a in x", "unable to parse requirement: found 'x' expected: '('"),
        ("a in (x=)", "unable to parse requirement: found '=', expected: ',' or ')'"),
        ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        ("a in (x,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
        ("a=(", "unable to parse requirement: found '(', expected: identifier"),
        ("!=a", "found '!=', expected: !, identifier, or 'end of string'"),
        ("!,a", "unable to parse requirement: found ',', expected: identifier"),
        (
            "x<a",
            'unable to parse requirement: values[0]: Invalid value: "a": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "x=a||y=b",
            f'unable to parse requirement: values[0][x]: Invalid value: "a||y": {LABEL_VALUE_MSG}',
        ),
        (
            "-a",
            f'unable to parse requirement: <nil>: Invalid value: "-a": {NAME_PART_MSG}',
        ),
        (
            "k=" + "v" * 64,
            'unable to parse requirement: values[0][k]: Invalid value: "'
            + "v" * 64
            + '": must be no more than 63 bytes',
        ),
    ],
)
def test_parse_errors_use_upstream_messages(s: str, message: str) -> None:
    with pytest.raises(SelectorParseError) as exc:
        L.parse(s)
    assert str(exc.value) == message
    assert isinstance(exc.value, ValueError)


def test_parse_error_key_path_option() -> None:
    from kapi.apimachinery.field_errors import Path

    with pytest.raises(SelectorParseError) as exc:
        L.parse("-a", path=Path("spec", "selector"))
    assert str(exc.value).startswith(
        'unable to parse requirement: spec.selector: Invalid value: "-a"'
    )
    with pytest.raises(SelectorParseError) as exc:
        L.parse("a=-", path=Path("sel"))
    assert str(exc.value).startswith(
        'unable to parse requirement: sel.values[0][a]: Invalid value: "-"'
    )


def test_nul_reads_as_end_of_input() -> None:
    # Upstream's lexer reads a NUL byte as its end-of-input 0: it ends the selector where a
    # token would start, and is silently consumed inside a token.
    assert str(L.parse("x=\x00b")) == "x=b"
    assert str(L.parse("x\x00")) == "x"
    assert str(L.parse("\x00b")) == ""


def test_deterministic_parse() -> None:
    assert str(L.parse("x=a,a=x")) == str(L.parse("a=x,x=a")) == "a=x,x=a"


def _match(sel: str, labels: dict[str, str]) -> bool:
    return L.parse(sel).matches(labels)


def test_matching() -> None:
    assert _match("", {"x": "y"})
    assert _match("x=y", {"x": "y"})
    assert _match("x=y,z=w", {"x": "y", "z": "w"})
    assert _match("x!=y,z!=w", {"x": "z", "z": "a"})
    assert _match("notin=in", {"notin": "in"})
    assert _match("x", {"x": "z"})
    assert _match("!x", {"y": "z"})
    assert _match("x>1", {"x": "2"})
    assert _match("x<1", {"x": "0"})
    assert _match("x<1", {"x": "-5"})
    assert _match("x in (a,b)", {"x": "b"})
    assert _match("x notin (a,b)", {})
    assert _match("x notin (a,b)", {"x": "c"})
    assert _match("x=", {"x": ""})
    assert _match("x!=y", {})
    assert not _match("x=z", {})
    assert not _match("x=y", {"x": "z"})
    assert not _match("x=y,z=w", {"x": "w", "z": "w"})
    assert not _match("x!=y,z!=w", {"x": "z", "z": "w"})
    assert not _match("x", {"y": "z"})
    assert not _match("!x", {"x": "z"})
    assert not _match("x>1", {"x": "0"})
    assert not _match("x>1", {"x": "v2"})
    assert not _match("x>1", {})
    assert not _match("x<1", {"x": "2"})
    assert not _match("x in (a,b)", {"x": "c"})
    assert not _match("x in (a,b)", {})
    assert not _match("x notin (a,b)", {"x": "a"})
    assert not _match("x=", {})
    labelset = {"foo": "bar", "baz": "blah"}
    assert _match("foo=bar,baz=blah", labelset)
    assert not _match("foo=bar,foobar=bar,baz=blah", labelset)


def test_everything_nothing_and_empty() -> None:
    everything = L.label_selector_as_selector({})
    assert everything.matches({"x": "y"}) and everything.empty()
    assert L.parse("").empty() and L.parse("").matches({})
    nothing = L.label_selector_as_selector(None)
    assert not nothing.matches({}) and not nothing.empty()
    assert str(nothing) == ""
    assert not L.parse("x").empty()
    assert L.parse("").matches(None)


def test_new_requirement_errors() -> None:
    def err(key: str, op: str, vals: list[str] | None) -> str:
        with pytest.raises(SelectorParseError) as exc:
            L.new_requirement(key, op, vals)
        return str(exc.value)

    assert err("x1", L.IN, []) == (
        "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"
    )
    assert err("x5", L.EQUALS, ["bar", "foo"]) == (
        'values: Invalid value: ["bar","foo"]: exact-match compatibility requires one single value'
    )
    assert err("x8", L.EXISTS, ["foo"]) == (
        'values: Invalid value: ["foo"]: values set must be empty for exists and does not exist'
    )
    assert err("x13", L.GREATER_THAN, []) == (
        "values: Invalid value: []: for 'Gt', 'Lt' operators, exactly one value is required"
    )
    assert err("x18", "unsupportedOp", []) == (
        'operator: Unsupported value: "unsupportedOp": supported values: "in", "notin", "=", '
        '"==", "!=", "gt", "lt", "exists", "!"'
    )
    key_err = err("a" * 254, L.EXISTS, [])
    assert key_err.startswith('key: Invalid value: "' + "a" * 254 + '": name part must be no more')
    # Several errors aggregate as [a, b], upstream ToAggregate().Error().
    assert err("-k", L.IN, []) == (
        f'[key: Invalid value: "-k": {NAME_PART_MSG}, '
        "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty]"
    )
    r = L.new_requirement("k", L.IN, ["b", "a"])
    assert str(r) == "k in (a,b)"
    assert r.values == ("b", "a")  # unsorted in memory, sorted when printed


def test_label_selector_as_selector() -> None:
    assert not L.label_selector_as_selector(None).matches({})
    assert L.label_selector_as_selector({}).empty()
    assert L.label_selector_as_selector({"matchLabels": {}, "matchExpressions": []}).matches(
        {"a": "b"}
    )
    sel = L.label_selector_as_selector(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["fe", "be"]},
                {"key": "env", "operator": "NotIn", "values": ["prod"]},
                {"key": "owner", "operator": "Exists"},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    assert str(sel) == "app=web,env notin (prod),!legacy,owner,tier in (be,fe)"
    assert sel.matches({"app": "web", "tier": "fe", "owner": "me"})
    assert not sel.matches({"app": "web", "tier": "fe", "owner": "me", "env": "prod"})
    assert not sel.matches({"app": "web", "tier": "fe", "owner": "me", "legacy": ""})
    assert not sel.matches({"app": "web", "tier": "fe"})


def test_label_selector_as_selector_errors() -> None:
    with pytest.raises(SelectorParseError) as exc:
        L.label_selector_as_selector({"matchExpressions": [{"key": "a", "operator": "Equals"}]})
    assert str(exc.value) == '"Equals" is not a valid label selector operator'
    with pytest.raises(SelectorParseError) as exc:
        L.label_selector_as_selector(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}
        )
    # Upstream copies the values into a nil slice, which marshals as null.
    assert str(exc.value) == (
        "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
    )
    with pytest.raises(SelectorParseError) as exc:
        L.label_selector_as_selector(
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}
        )
    assert str(exc.value) == (
        'values: Invalid value: ["x"]: values set must be empty for exists and does not exist'
    )
    with pytest.raises(SelectorParseError) as exc:
        L.label_selector_as_selector({"matchLabels": {"a": "b c"}})
    assert str(exc.value) == f'values[0][a]: Invalid value: "b c": {LABEL_VALUE_MSG}'


# --- round trip ---------------------------------------------------------------------------------

_name = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?", fullmatch=True)
_prefix = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?(\.[a-z0-9]{1,5}){0,2}", fullmatch=True)
_key = st.one_of(_name, st.tuples(_prefix, _name).map("/".join), st.sampled_from(["in", "notin"]))
_value = st.one_of(st.just(""), _name)
# Gt/Lt values must also be valid label values, so no sign.
_int = st.integers(min_value=0, max_value=2**63 - 1).map(str)


@st.composite
def _requirement_text(draw: st.DrawFn) -> str:
    key = draw(_key)
    kind = draw(st.sampled_from(["exists", "!", "=", "==", "!=", "in", "notin", ">", "<"]))
    ws = draw(st.sampled_from(["", " ", "  ", "\t"]))
    if kind == "exists":
        return key
    if kind == "!":
        return "!" + ws + key
    if kind in ("in", "notin"):
        vals = draw(st.lists(_value, min_size=1, max_size=4))
        return f"{key} {kind}{ws}({f',{ws}'.join(vals)})"
    if kind in (">", "<"):
        return f"{key}{ws}{kind}{ws}{draw(_int)}"
    return f"{key}{ws}{kind}{ws}{draw(_value)}"


_selector_text = st.lists(_requirement_text(), max_size=5).map(",".join)


@given(_selector_text)
def test_round_trip_parse_str_parse(text: str) -> None:
    sel = L.parse(text)
    printed = str(sel)
    again = L.parse(printed)
    assert again == sel
    assert str(again) == printed


@given(_selector_text, st.dictionaries(st.sampled_from(["a", "b", "x", "k"]), _value, max_size=4))
def test_printed_selector_matches_the_same(text: str, labels: dict[str, str]) -> None:
    sel = L.parse(text)
    assert L.parse(str(sel)).matches(labels) == sel.matches(labels)


@given(st.dictionaries(_key, _value, max_size=5))
def test_match_labels_round_trip(labels: dict[str, str]) -> None:
    sel = L.label_selector_as_selector({"matchLabels": labels})
    assert sel.matches(labels)
    assert L.parse(str(sel)) == sel


# --- the compiled matcher agrees with evaluating each term --------------------------------

_KEYS = ["a", "b", "c", "d"]
_VALS = ["", "x", "y", "1", "-3", "20", "9223372036854775808", "z"]
_OPERATORS = ["in", "notin", "=", "==", "!=", "exists", "!", "gt", "lt"]


def _reference(op: str, key: str, values: list[str], labels: dict[str, str | None]) -> bool:
    """What a term means, written out as plainly as possible (upstream ``Requirement.Matches``)."""
    have = labels.get(key)
    if op in ("in", "=", "=="):
        return have is not None and have in values
    if op in ("notin", "!="):
        return have is None or have not in values
    if op == "exists":
        return key in labels
    if op == "!":
        return key not in labels
    if have is None or len(values) != 1:
        return False
    try:
        a, b = int(have), int(values[0])
    except ValueError:
        return False
    if not all(-(2**63) <= n < 2**63 for n in (a, b)):
        return False
    return a > b if op == "gt" else a < b


_some_values = st.lists(st.sampled_from(_VALS), max_size=3)
_raw_requirement = st.tuples(
    st.sampled_from(_OPERATORS),
    st.sampled_from(_KEYS),
    # Mostly one value (what =, !=, gt and lt take), sometimes none or several.
    st.one_of(st.sampled_from(_VALS).map(lambda v: [v]), _some_values),
)
_small_int = st.integers(-4, 4).map(str)
#: Several bounds on few keys, so that bounds on one key combine.
_numeric_requirement = st.tuples(
    st.sampled_from(["gt", "lt", "in", "notin", "!="]),
    st.sampled_from(_KEYS[:2]),
    st.lists(_small_int, min_size=1, max_size=2),
)
_label_maps = st.dictionaries(
    st.sampled_from(_KEYS), st.one_of(st.sampled_from(_VALS), st.none()), max_size=4
)


@settings(deadline=None, max_examples=400)  # deadline: a loaded shared machine is slow
@given(st.lists(_raw_requirement, max_size=8), _label_maps)
def test_compiled_selector_agrees_with_term_by_term_evaluation(
    raw: list[tuple[str, str, list[str]]], labels: dict[str, str | None]
) -> None:
    # Requirements built without validation too: an empty 'in', a 'gt' of two values
    # or of a non-integer must match nothing, as the single term does.
    requirements = [L.Requirement(key, op, values) for op, key, values in raw]
    expected = all(_reference(op, key, values, labels) for op, key, values in raw)
    assert all(r.matches(labels) for r in requirements) == expected  # type: ignore[arg-type]
    assert L.Selector(requirements).matches(labels) == expected  # type: ignore[arg-type]


@settings(deadline=None, max_examples=300)  # deadline: a loaded shared machine is slow
@given(
    st.lists(_numeric_requirement, max_size=6),
    st.dictionaries(st.sampled_from(_KEYS[:2]), _small_int, max_size=2),
)
def test_compiled_numeric_terms_agree_with_term_by_term_evaluation(
    raw: list[tuple[str, str, list[str]]], labels: dict[str, str]
) -> None:
    requirements = [L.Requirement(key, op, values) for op, key, values in raw]
    expected = all(_reference(op, key, values, labels) for op, key, values in raw)  # type: ignore[arg-type]
    assert L.Selector(requirements).matches(labels) == expected


@settings(deadline=None)  # a loaded shared machine, not the code, is slow
@given(st.lists(_raw_requirement, min_size=1, max_size=6), _label_maps)
def test_parsed_selector_agrees_with_term_by_term_evaluation(
    raw: list[tuple[str, str, list[str]]], labels: dict[str, str | None]
) -> None:
    valid = []
    for op, key, values in raw:
        try:
            valid.append(L.new_requirement(key, op, values))
        except SelectorParseError:
            continue
    text = ",".join(str(r) for r in valid)
    expected = all(_reference(r.operator, r.key, list(r.values), labels) for r in valid)
    assert L.parse(text).matches(labels) == expected  # type: ignore[arg-type]


def test_thousands_of_terms() -> None:
    sel = L.parse(",".join(f"k{i}!=x" for i in range(5500)))
    assert sel.matches({"app": "a"})
    assert sel.matches({"k17": "y"})
    assert not sel.matches({"k5499": "x"})
    assert not sel.matches({"k17": "y", "k4000": "x"})  # found whichever side is iterated
    many = {f"k{i}": "y" for i in range(6000)}
    assert sel.matches(many)
    assert not sel.matches({**many, "k0": "x"})
    positive = L.parse(",".join(f"k{i}=y" for i in range(3000)) + ",!gone,k1 in (y,z)")
    assert positive.matches(many)
    assert not positive.matches({"k0": "y"})
    assert not positive.matches({**many, "gone": ""})


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("a=x,a=y", {"a": "x"}, False),  # no value satisfies both
        ("a in (x,y),a in (y,z)", {"a": "y"}, True),
        ("a in (x,y),a in (y,z)", {"a": "x"}, False),
        ("a,!a", {"a": "x"}, False),
        ("a,!a", {}, False),
        ("a>1,a<5", {"a": "3"}, True),
        ("a>1,a<5,a>3", {"a": "3"}, False),
        ("a>1,a<5", {"a": "5"}, False),
        ("a!=x,a notin (y)", {"a": "y"}, False),
        ("a!=x,a notin (y)", {"a": "z"}, True),
        ("a!=x,a notin (y)", {}, True),
    ],
)
def test_terms_on_one_key_combine(text: str, labels: dict[str, str], expected: bool) -> None:
    assert L.parse(text).matches(labels) is expected


def test_compile_is_what_matches_uses() -> None:
    sel = L.parse("a=x,!b")
    matcher = sel.compile()
    assert sel.compile() is matcher
    assert matcher({"a": "x"}) and not matcher({"a": "x", "b": ""})
    nothing = L.label_selector_as_selector(None)
    assert not nothing.matches({}) and not nothing.compile()({})
    assert L.label_selector_as_selector({}).compile()({"any": "thing"})
