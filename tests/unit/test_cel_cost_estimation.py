"""Estimated costs of CEL rules at CRD creation: upstream's own figures, rule by rule.

Every expected figure is the one an upstream test asserts for the same rule on the same
schema (the upper end of cel-go's estimate, ``MaxCost``), cited next to it:

* ``compilation_test.go``: k8s.io/apiextensions-apiserver ``pkg/apiserver/schema/cel``,
  ``TestCostEstimation`` (each case twice: ``calc`` without bounds, ``set`` with
  ``maxItems``/``maxProperties``/``maxLength`` set to ``setMaxElements``);
* ``library/cost_test.go``: k8s.io/apiserver ``pkg/cel/library`` (``expectEstimatedCost``);
* ``checker/cost_test.go``: github.com/google/cel-go.

Cases of the last two use literals only, so their figures do not depend on the size
estimator those tests plug in.
"""

from __future__ import annotations

from typing import Any

import pytest

from kapi.apimachinery.field_errors import Path
from kapi.validation.cel import compiler, cost

Schema = dict[str, Any]

#: compilation_test.go's ``costLimit``: the O(n^2) and O(n^3) loops exceed it unbounded.
COST_LIMIT = 100_000_000


def estimate(schema: Schema, rule: str) -> int:
    """kapi's estimate of ``rule`` on a schema node, as at CRD creation."""
    self_type = compiler.cel_type(schema)
    env = compiler._env(self_type, (compiler.OLD_SELF, self_type))
    _, ast = compiler._compile(env, rule, schema, False)
    return cost.CostEstimator(ast, schema, cost.static_size, cost.UNKNOWN_SIZE).estimate()


# --- schemas as compilation_test.go builds them (None: the bound left unset) ----------------


def _bound(schema: Schema, key: str, value: int | None) -> Schema:
    return schema if value is None else {**schema, key: value}


def scalar(kind: str) -> Schema:
    if kind == "int-or-string":
        return {"x-kubernetes-int-or-string": True}
    if kind in ("duration", "date", "date-time"):
        return {"type": "string", "format": kind}
    return {"type": kind}


def array_of(kind: str, max_items: int | None) -> Schema:
    return _bound({"type": "array", "items": scalar(kind)}, "maxItems", max_items)


def map_of(kind: str, max_properties: int | None) -> Schema:
    return _bound(
        {"type": "object", "additionalProperties": scalar(kind)}, "maxProperties", max_properties
    )


def map_with(item: Schema, max_properties: int | None) -> Schema:
    return _bound({"type": "object", "additionalProperties": item}, "maxProperties", max_properties)


def string(max_length: int | None) -> Schema:
    return _bound({"type": "string"}, "maxLength", max_length)


def object_item() -> Schema:
    """compilation_test.go's item with a required and an optional string."""
    return {
        "type": "object",
        "properties": {"required": {"type": "string"}, "optional": {"type": "string"}},
        "required": ["required"],
    }


def array_of_arrays(max_items: int | None) -> Schema:
    inner = {"type": "array", "items": {"type": "number"}}
    return _bound({"type": "array", "items": inner}, "maxItems", max_items)


def array_of_objects(max_items: int | None) -> Schema:
    return _bound({"type": "array", "items": object_item()}, "maxItems", max_items)


def array_of_number_maps(max_items: int | None) -> Schema:
    item = {"type": "object", "additionalProperties": {"type": "number"}}
    return _bound({"type": "array", "items": item}, "maxItems", max_items)


def map_of_bounded_strings(n: int | None) -> Schema:
    return _bound({"type": "object", "additionalProperties": string(n)}, "maxProperties", n)


def nested(n: int | None, *, all_bounded: bool) -> Schema:
    """compilation_test.go's genAllMaxNestedSpecWithRootRule / genOneMaxNestedSpecWithRootRule."""
    value = object_item()
    if all_bounded:
        value = _bound(value, "maxProperties", n)
    item = _bound({"type": "object", "additionalProperties": value}, "maxProperties", n)
    array = {"type": "array", "items": item}
    return _bound(array, "maxItems", n) if all_bounded else array


def strings_list(n: int | None) -> Schema:
    return _bound({"type": "array", "items": string(n)}, "maxItems", n)


def enum(n: int | None) -> Schema:
    return _bound({"type": "string", "enum": ["A", "B", "C", "LongValue"]}, "maxLength", n)


def int_or_string(n: int | None) -> Schema:
    return _bound({"x-kubernetes-int-or-string": True}, "maxLength", n)


def replace_object(n: int | None) -> Schema:
    props = {"str": string(n), "before": string(2), "after": string(4)}
    return {"type": "object", "properties": props}


def split_object(n: int | None) -> Schema:
    return {"type": "object", "properties": {"str": string(n), "separator": string(n)}}


# (compilation_test.go case name, schema for a bound, rule, calc cost, setMaxElements, set cost)
COMPILATION_TEST = [
    (
        "number array with all",
        lambda n: array_of("number", n),
        "self.all(x, true)",
        4718591,
        10,
        32,
    ),
    (
        "string array with all",
        lambda n: array_of("string", n),
        "self.all(x, true)",
        3145727,
        20,
        62,
    ),
    (
        "boolean array with all",
        lambda n: array_of("boolean", n),
        "self.all(x, true)",
        1887437,
        5,
        17,
    ),
    ("array of number arrays with all", array_of_arrays, "self.all(x, true)", 3145727, 100, 302),
    ("array of objects with all", array_of_objects, "self.all(x, true)", 555128, 50, 152),
    (
        "map of numbers with all",
        lambda n: map_of("number", n),
        "self.all(x, true)",
        1348169,
        10,
        32,
    ),
    ("map of strings with all", lambda n: map_of("string", n), "self.all(x, true)", 1179647, 3, 11),
    (
        "map of booleans with all",
        lambda n: map_of("boolean", n),
        "self.all(x, true)",
        943718,
        100,
        302,
    ),
    ("string with contains", string, "self.contains('test')", 314574, 10, 5),
    ("string with startsWith", string, "self.startsWith('test')", 2, 15, 2),
    ("string with endsWith", string, "self.endsWith('test')", 2, 30, 2),
    ("concat string", string, 'size(self + "hello") > size("hello")', 314578, 4, 7),
    ("index of array with numbers", lambda n: array_of("number", n), "self[1] == 0.0", 2, 5000, 2),
    (
        "index of array with strings",
        lambda n: array_of("string", n),
        "self[1] == self[1]",
        314577,
        8,
        314577,
    ),
    (
        "O(n^2) loop with numbers",
        lambda n: array_of("number", n),
        "self.all(x, self.all(y, true))",
        None,
        10,
        352,
    ),
    (
        "O(n^3) loop with numbers",
        lambda n: array_of("number", n),
        "self.all(x, self.all(y, self.all(z, true)))",
        None,
        10,
        3552,
    ),
    ("regex matches simple", string, 'self.matches("x")', 314574, 50, 22),
    ("regex matches empty string", string, '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7),
    ("regex matches empty regex", string, 'self.matches("")', 1, 100, 1),
    (
        "map of strings with value length",
        map_of_bounded_strings,
        "self.all(x, x.contains(self[x]))",
        2752507,
        10,
        72,
    ),
    ("set array maxLength to zero", lambda n: array_of("number", n), "self[3] == 0.0", 2, 0, 2),
    ("set map maxLength to zero", lambda n: map_of("number", n), 'self["x"] == 0.0', 2, 0, 2),
    ("set string maxLength to zero", string, 'self == "x"', 2, 0, 1),
    (
        "set maxLength greater than estimated maxLength",
        lambda n: array_of("number", n),
        "self.all(x, x == 0.0)",
        6291454,
        3 * 1024 * 2048,
        25165826,
    ),
    (
        "nested types with root rule with all supporting maxLength",
        lambda n: nested(n, all_bounded=True),
        'self.all(x, x["y"].required == "z")',
        7340027,
        10,
        72,
    ),
    (
        "nested types with root rule with one supporting maxLength",
        lambda n: nested(n, all_bounded=False),
        'self.all(x, x["y"].required == "z")',
        7340027,
        10,
        7340027,
    ),
    (
        "int-or-string array with all",
        lambda n: array_of("int-or-string", n),
        "self.all(x, true)",
        4718591,
        10,
        32,
    ),
    (
        "index of array with int-or-strings",
        lambda n: array_of("int-or-string", n),
        "self[0] == 5",
        3,
        10,
        3,
    ),
    (
        "index of array with booleans",
        lambda n: array_of("boolean", n),
        "self[0] == false",
        2,
        25,
        2,
    ),
    ("index of array of array of numnbers", array_of_arrays, "self[0][0] == -1.0", 3, 51, 3),
    (
        "array of number maps with all",
        array_of_number_maps,
        "self.all(x, x.y == 25.2)",
        6291452,
        12,
        74,
    ),
    ("index of array of number maps", array_of_number_maps, "self[0].x > 2.0", 4, 3000, 4),
    (
        "duration array with all",
        lambda n: array_of("duration", n),
        "self.all(x, true)",
        2359295,
        5,
        17,
    ),
    ("date array with all", lambda n: array_of("date", n), "self.all(x, true)", 725936, 15, 47),
    (
        "date-time array with all",
        lambda n: array_of("date-time", n),
        "self.all(x, true)",
        428963,
        25,
        77,
    ),
    (
        "map of int-or-strings with all",
        lambda n: map_of("int-or-string", n),
        "self.all(x, true)",
        1348169,
        15,
        47,
    ),
    (
        "map of objects with all",
        lambda n: map_with(object_item(), n),
        "self.all(x, true)",
        428963,
        20,
        62,
    ),
    (
        "map of number maps with all",
        lambda n: map_with({"type": "object", "additionalProperties": {"type": "number"}}, n),
        "self.all(x, true)",
        1179647,
        10,
        32,
    ),
    (
        "map of number arrays with all",
        lambda n: map_with({"type": "array", "items": {"type": "number"}}, n),
        "self.all(x, true)",
        1179647,
        25,
        77,
    ),
    (
        "map of durations with all",
        lambda n: map_of("duration", n),
        "self.all(x, true)",
        1048577,
        5,
        17,
    ),
    ("map of dates with all", lambda n: map_of("date", n), "self.all(x, true)", 524288, 10, 32),
    (
        "map of date-times with all",
        lambda n: map_of("date-time", n),
        "self.all(x, true)",
        349526,
        25,
        77,
    ),
    ("extended library regex find", string, "self.find('[0-9]+') == ''", 629147, 10, 11),
    ("extended library join", strings_list, "self.join(' ') == 'aa bb'", 329853068905, 10, 43),
    ("extended library isSorted", strings_list, "self.isSorted() == true", 329854432052, 10, 52),
    (
        "extended library replace",
        replace_object,
        "self.str.replace(self.before, self.after) == 'does not matter'",
        629154,
        4,
        12,
    ),
    (
        "extended library split",
        split_object,
        "self.str.split(self.separator) == []",
        629160,
        10,
        22,
    ),
    ("extended library lowerAscii", string, "self.lowerAscii() == 'lower!'", 314575, 10, 6),
    (
        "check cost of size call",
        lambda n: map_of("integer", n),
        "oldSelf.size() == self.size()",
        5,
        10,
        5,
    ),
    (
        "check cost of timestamp comparison",
        lambda n: map_of("date-time", n),
        'self["a"] == self["b"]',
        8,
        7,
        8,
    ),
    (
        "check cost of duration comparison",
        lambda n: map_of("duration", n),
        'self["c"] == self["d"]',
        8,
        42,
        8,
    ),
    (
        "enums with maxLength equals to the longest possible value",
        enum,
        "self.contains('A')",
        2,
        1000,
        401,
    ),
    ("IntOrString type with quantity rule", int_or_string, "isQuantity(self)", 314574, 20, 9),
]


@pytest.mark.parametrize(
    ("schema_for", "rule", "calc"),
    [pytest.param(c[1], c[2], c[3], id=f"calc: {c[0]}") for c in COMPILATION_TEST],
)
def test_compilation_test_calc_max_length(schema_for: Any, rule: str, calc: int | None) -> None:
    # compilation_test.go TestCostEstimation "calc maxLength" (bounds left unset)
    got = estimate(schema_for(None), rule)
    if calc is None:  # expectCalcCostExceedsLimit: costLimit
        assert got >= COST_LIMIT
    else:
        assert got == calc


@pytest.mark.parametrize(
    ("schema_for", "rule", "bound", "expected"),
    [pytest.param(c[1], c[2], c[4], c[5], id=f"set: {c[0]}") for c in COMPILATION_TEST],
)
def test_compilation_test_set_max_length(
    schema_for: Any, rule: str, bound: int, expected: int
) -> None:
    # compilation_test.go TestCostEstimation "set maxLength" (bounds set to setMaxElements)
    assert estimate(schema_for(bound), rule) == expected


#: A schema for rules on literals: an object without properties.
LITERALS: Schema = {"type": "object"}

LITERAL_CASES = [
    # library/cost_test.go TestListsCost (".sum()", ".isSorted()", ".max()" on literals)
    ("[1, 2, 3, 4, 5].sum()", 15),
    ("[1.0, 2.0, 3.0, 4.0, 5.0].sum()", 15),
    ("[uint(1), uint(2), uint(3), uint(4), uint(5)].sum()", 20),
    ("[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')].sum()", 20),
    ("[1, 2, 3, 4, 5].isSorted()", 15),
    ("[false, true, false, true, false].max()", 15),
    # library/cost_test.go TestIndexOfCost
    ("[1, 2, 3, 4, 5].indexOf(1)", 15),
    # library/cost_test.go TestStringLibrary
    ("'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3),
    ("'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 9),
    ("'ABCDEFGHIJ abcdefghij'.upperAscii() == 'abcdefghij ABCDEFGHIJ'.upperAscii()", 9),
    ("strings.quote('ABCDEFGHIJ abcdefghij')", 3),
    ("strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 11),
    ("'abc 123 def 123'.replace('123', '456')", 3),
    ("'abc 123 def 123'.replace('', 'x')", 3),
    ("'abc 123 def 123'.replace('123', '456', 1)", 3),
    ("'abc 123 def 123'.split(' ')", 3),
    ("'abc 123 def 123'.split(' ', 1)", 3),
    ("'abc 123 def 123'.substring(5, 8)", 2),
    ("'  abc 123 def 123  '.trim()", 2),
    ("'abc 123 def 123'.find('123')", 2),
    ("'abc 123 def 123'.findAll('123', 1)", 2),
    # library/cost_test.go TestURLsCost
    ("url('https:://kubernetes.io/').getScheme()", 4),
    ("url('https:://kubernetes.io/') == url('https:://kubernetes.io/')", 9),
    ("url('https:://kubernetes.io/') == url('http://x.b')", 5),
    # library/cost_test.go TestIPCost
    ("ip('192.168.0.1')", 2),
    ("ip('2001:db8:3333:4444:5555:6666:7777:8888')", 4),
    ("ip('192.168.0.1').family()", 3),
    ("ip('192.168.0.1') == ip('192.168.0.1')", 5),
    # library/cost_test.go TestIPIsCanonicalCost
    ("ip.isCanonical('2001:db8:3333:4444:5555:6666:7777:8888')", 8),
    # library/cost_test.go TestCIDRCost (base 2, plus the operation's)
    ("cidr('192.168.0.0/16').ip()", 3),
    ("cidr('192.168.0.0/16').masked()", 3),
    ("cidr('2001:db8::/32') == cidr('2001:db8::/32')", 5),
    ("cidr('192.168.0.0/16').containsCIDR(cidr('192.0.0.0/30'))", 11),
    ("cidr('192.168.0.0/16').containsCIDR('192.0.0.0/30')", 11),
    ("cidr('192.168.0.0/16').containsIP(ip('192.169.0.1'))", 8),
    ("cidr('192.168.0.0/16').containsIP('192.0.0.1')", 7),
    # library/cost_test.go TestQuantityCost
    ('quantity("12Mi")', 1),
    ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', 6),
    ('quantity("50M").isLessThan(quantity("50Mi"))', 3),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', 5),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() > 0', 7),
    # library/cost_test.go TestNameFormatCost
    ('format.named("dns1123subdomain")', 1),
    ('format.named("dns1123Label").value().validate("my-name")', 34),
    ('format.named("dns1123Label").value() == format.named("dns1123Label").value()', 11),
    # library/cost_test.go TestSetsCost
    ("sets.contains([], [])", 21),
    ("sets.contains([1, 2, 3, 4], [2, 3])", 29),
    ("sets.contains([[1], [2, 3]], [[2, 3.0]])", 53),
    ("!sets.contains([1], [1, 2])", 24),
    ("sets.equivalent([1, 2, 3], [3u, 2.0, 1])", 39),
    ("sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])", 65),
    # library/cost_test.go TestTwoVariableComprehensionCost
    ("{'a': 1, 'b': 2}.all(k, v, v > 0)", 41),
    ("{'a': 1, 'b': 2}.exists(k, v, v > 0)", 43),
    ("{'a': 1, 'b': 2}.existsOne(k, v, v > 0)", 40),
    ("{'a': 1, 'b': 2}.transformMap(k, v, v + 1)", 71),
    ("{'a': 1, 'b': 2}.transformMap(k, v, v < 5, v + 1)", 75),
    ("{'a': 1, 'b': 2}.transformMapEntry(k, v, {k: v + 1})", 131),
    ("{'a': 1, 'b': 2}.transformMapEntry(k, v, v < 5, {k: v + 1})", 135),
    ("[1, 2].all(i, v, v > 0)", 21),
    ("[1, 2].existsOne(i, v, v > 0)", 20),
    ("[1, 2].transformList(i, v, v + 1)", 49),
    ("[1, 2].transformList(i, v, v < 5, v + 1)", 53),
    # checker/cost_test.go TestCost
    ('"Hello World!"', 0),
    ("[1, 2, 3]", 10),
    ('{"a": 1, "b": 2, "c": 3}', 30),
    ("[1, 2, 3].all(x, true)", 20),
    ("'123'.matches('[0-9]')", 2),
    ("2 in [1, 2, 3]", 13),
    ("true ? 1 : 2", 0),
    ("((5 != 6) == (1 == 2)) == ((3 <= 4) == (9 != 9))", 7),
    ("[1,2,3,4,5].filter(x, x % 2 == 0)", 101),
    ("[1,2,3,4,5].map(x, x)", 86),
    ("[1,2,3,4,5].map(x, x).map(x, x) + [1]", 173),
    ("[1,2,3,4,5].map(x, x)[4]", 87),
    ("[[1,2],[1,2],[1,2],[1,2],[1,2]][4]", 61),
    ("{'a': [1,2], 'b': [1,2], 'c': [1,2], 'd': [1,2], 'e': [1,2]}.b", 81),
    ("[1,2,3].all(i, i in [1,2,3].map(j, j + j))", 230),
    ("dyn([1,2,3]).all(i, i in dyn([1,2,3]).map(j, j + j))", 234),
    ("{'hello': 'hi'}['hello'] != {'hello': 'bye'}['hello']", 63),
    ("['hello', 'hi'][0] != ['hello', 'bye'][1]", 23),
]


@pytest.mark.parametrize(("expression", "expected"), LITERAL_CASES)
def test_literal_expressions(expression: str, expected: int) -> None:
    assert estimate(LITERALS, expression) == expected


def test_the_rules_of_issue_17_are_within_the_limit() -> None:
    """An unbounded list of strings of maxLength 64 with a rule on its items, and an unbounded
    map of strings with a rule on its values: cel-go prices ``==`` by the smaller operand and
    ``startsWith`` by its argument, so both cost 2 per value, about 2 million in all."""
    items = {"type": "array", "items": {"type": "string", "maxLength": 64}}
    values = {"type": "object", "additionalProperties": {"type": "string"}}
    assert estimate(items["items"], "self == 'baz'") == 2
    assert estimate(values["additionalProperties"], "self.startsWith('k8s')") == 2
    # Compiled in place, the rule runs once per item: upstream's maxCardinality for items of
    # at least 2 bytes is 3 MiB / (2 + 1) = 1048576, so the total is under the 10M limit.
    items["items"]["x-kubernetes-validations"] = [{"rule": "self == 'baz'"}]
    compiled = compiler.compile_node(items["items"], Path("items"), None, False)
    assert compiled.errors == []
    [(_, total)] = compiled.max_cost
    assert total == 2 * 1048576


def test_metadata_name_is_bounded_at_the_root() -> None:
    """compilation_test.go TestMetadataNameCostIsBounded: at a resource's root, ``metadata.name``
    and ``generateName`` are estimated as strings of at most 253 characters."""
    for rule in ("self.metadata.name.contains('x')", "self.metadata.generateName.contains('x')"):
        schema: Schema = {"type": "object", "x-kubernetes-validations": [{"rule": rule}]}
        compiled = compiler.compile_node(schema, Path("openAPIV3Schema"), 1, True)
        [(_, estimated)] = compiled.max_cost
        assert 0 < estimated <= 10_000
