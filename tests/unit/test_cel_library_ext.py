"""CEL libraries of Kubernetes 1.33 CRD rules beyond the basics: the ``format`` library, the
strings extension at version 2 (cel-go's ``format``, ``strings.quote``, ``join``), ``sets``,
two-variable comprehensions and ``url`` parsing, with upstream's results, texts and costs.

Expected texts come from upstream (k8s.io/apiserver ``pkg/cel/library/format_test.go``,
cel-go ``ext/strings_test.go``, Go's ``net/url`` errors).
"""

from __future__ import annotations

from typing import Any

import pytest

from kapi.validation.cel import CELValidator, cost
from tests.helpers.cel import SCHEMA_PATH, crd_schema, node_rules, static_cost

RULE_PATH = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]"


def compiled(*rules: dict[str, Any]) -> CELValidator:
    v, errs = CELValidator.compile(crd_schema(list(rules)), SCHEMA_PATH)
    assert [str(e) for e in errs] == []
    assert v is not None
    return v


def compile_errors(rule: dict[str, Any]) -> list[str]:
    _, errs = CELValidator.compile(crd_schema([rule]), SCHEMA_PATH)
    return [e.detail for e in errs]


def failures(v: CELValidator, **spec: Any) -> list[str]:
    return [str(e) for e in v.validate({"spec": spec})]


def holds(rule: str, **spec: Any) -> bool:
    """Whether ``rule`` passes on ``spec``; an evaluation error fails the test."""
    got = failures(compiled({"rule": rule}), **spec)
    assert got in ([], [f"spec: Invalid value: failed rule: {rule}"]), got
    return got == []


def message(expression: str, **spec: Any) -> str:
    """What a messageExpression evaluates to, read from the error of a failing rule."""
    got = failures(compiled({"rule": "false", "messageExpression": expression}), **spec)
    prefix = "spec: Invalid value: "
    assert len(got) == 1 and got[0].startswith(prefix), got
    return got[0][len(prefix) :]


# --- format library ------------------------------------------------------------------------

VALID_BY_FORMAT = {
    "dns1123Label": "my-label-name",
    "dns1123Subdomain": "apiextensions.k8s.io",
    "dns1035Label": "my-label-name",
    "qualifiedName": "apiextensions.k8s.io/v1beta1",
    "dns1123LabelPrefix": "my-label-prefix-",
    "dns1123SubdomainPrefix": "mysubdomain.prefix.-",
    "dns1035LabelPrefix": "my-label-prefix-",
    "labelValue": "my-cool-label-Value",
    "uri": "http://example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "byte": "aGVsbG8=",
    "date": "2021-01-01",
    "datetime": "2021-01-01T00:00:00Z",
}

LABEL_ERR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1035_ERR = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
INVALID_BY_FORMAT = {
    "dns1123Label": ("contains a space", LABEL_ERR),
    "dns1123Subdomain": ("contains a space", SUBDOMAIN_ERR),
    "dns1035Label": ("contains a space", DNS1035_ERR),
    "qualifiedName": (
        "contains a space",
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
        "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ),
    "dns1123LabelPrefix": ("contains a space-", LABEL_ERR),
    "dns1123SubdomainPrefix": ("contains a space-", SUBDOMAIN_ERR),
    "dns1035LabelPrefix": ("contains a space-", DNS1035_ERR),
    "labelValue": (
        "my-cool-label-Value!!",
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ),
    "uri": ("example.com/path", 'parse "example.com/path": invalid URI for request'),
    "uuid": ("123e4567", "does not match the UUID format"),
    "byte": ("aGVsbG8", "invalid base64"),
    "date": ("2020-01-32", "invalid date"),
    "datetime": ("2020-01-32T00:00:00Z", "invalid datetime"),
}


def test_every_upstream_format_is_offered() -> None:
    assert set(VALID_BY_FORMAT) == set(INVALID_BY_FORMAT)
    for name in VALID_BY_FORMAT:
        assert holds(f"format.named('{name}').value() == format.{name}()")


@pytest.mark.parametrize(("name", "value"), VALID_BY_FORMAT.items())
def test_format_accepts_valid_value(name: str, value: str) -> None:
    assert holds(f"!format.{name}().validate(self.name).hasValue()", name=value)


@pytest.mark.parametrize(("name", "case"), INVALID_BY_FORMAT.items())
def test_format_reports_upstream_errors(name: str, case: tuple[str, str]) -> None:
    value, error = case
    assert not holds(f"!format.{name}().validate(self.name).hasValue()", name=value)
    # One error each; join() over a list of unknown size would exceed the cost limit upstream.
    assert message(f"format.{name}().validate(self.name).value()[0]", name=value) == error


def test_format_named() -> None:
    assert not holds("format.named('unknown').hasValue()")
    assert holds("format.named('dns1123Label').hasValue()")
    assert holds("format.named('dns1123Label').value().validate(self.name).hasValue()", name="A")
    assert not holds("format.dns1123Label() == format.dns1123LabelPrefix()")
    # optional.none() is an ordinary optional: orValue
    assert holds("format.named(self.name).orValue(format.uuid()) == format.uuid()", name="x")
    # Comparing two optionals of unknown size is priced at cel-go's unknown size: refused.
    rule = "format.dns1123Label().validate(self.name) == optional.none()"
    errors = compile_errors({"rule": rule})
    assert errors[0].startswith("estimated rule cost exceeds budget by factor of more than 100x")


def test_value_of_an_unknown_format_is_an_error() -> None:
    rule = "format.named(self.name).value().validate('x').hasValue()"
    assert failures(compiled({"rule": rule}), name="nope") == [
        f'spec: Invalid value: "object": optional.none() dereference evaluating rule: {rule}'
    ]


def test_format_validate_cost() -> None:
    # Upstream's estimate: a 128-character regex over self.name (63 characters, 252 bytes):
    # ceil(252 * 0.1) * ceil(128 * 0.25) = 26 * 32, plus 1 for format.dns1123Label(),
    # 2 for self.name, 1 each for hasValue() and !.
    assert static_cost("!format.dns1123Label().validate(self.name).hasValue()") == 837
    # Evaluation counts the format's own regex estimate: uri's (1103 characters) exceeds 128,
    # so the charge for a 20-byte name is ceil(21 * 0.1) * ceil(1103 * 0.25), plus 1 for
    # format.uri(), 2 for self.name and 1 for hasValue().
    [rule] = node_rules("format.uri().validate(self.name).hasValue()").compiled
    charge = cost.CostEstimator(rule.ast, rule.schema, lambda s: 20, 20, runtime=True)
    assert charge.estimate() == 3 * 276 + 4


# --- strings extension ---------------------------------------------------------------------


def test_strings_version_2_has_no_reverse() -> None:
    assert compile_errors({"rule": "self.name.reverse() == ''"}) == [
        "compilation failed: ERROR: <input>:1:18: undeclared reference to 'reverse' "
        "(in container '')\n"
        " | self.name.reverse() == ''\n"
        " | .................^"
    ]


@pytest.mark.parametrize(
    "rule",
    [
        "'%s and %s'.format(['a', 1]) == 'a and 1'",
        "strings.quote('two escape sequences \\a\\n') == '\"two escape sequences \\\\a\\\\n\"'",
        "'héllo'.charAt(1) == 'é' && 'héllo'.indexOf('l') == 2 && 'héllo'.lastIndexOf('l') == 3",
        "'TacoCat'.lowerAscii() == 'tacocat' && 'TacoCat'.upperAscii() == 'TACOCAT'",
        "'a,b,c'.split(',', 2) == ['a', 'b,c'] && 'aaa'.replace('a', 'b', 2) == 'bba'",
        "'tacocat'.substring(4) == 'cat' && ' \\ttrim\\n '.trim() == 'trim'",
    ],
)
def test_strings_functions(rule: str) -> None:
    assert holds(rule)


def test_join() -> None:
    # On a list whose items have a maxLength: join() of a list literal is refused upstream, its
    # items having no size the estimate can know.
    assert holds("self.items.join() == 'ab' && self.items.join('-') == 'a-b'", items=["a", "b"])


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("'%s'.format([self.items])", '["a", "b"]'),
        ("'%s'.format([['abc', 3.14, null, [9, 8]]])", '["abc", 3.140000, null, [9, 8]]'),
        ("'%s'.format([self.labels])", '{"x":1, "y":2}'),
        (
            "'%s'.format([{'k': b'xyz', 'd': duration('2h')}])",
            '{"d":duration("7200s"), "k":b"xyz"}',
        ),
        ("'%s'.format([timestamp('2023-02-03T23:31:20+00:00')])", "2023-02-03T23:31:20Z"),
        ("'%s and %s'.format([0.000000002, 2.0])", "2e-09 and 2"),
        ("'%d%%'.format([50])", "50%"),
        ("'%.3f'.format([1.2345])", "1.234"),
        ("'%.2f'.format([1234.5])", "1,234.50"),
        ("'%f'.format(['-Infinity'])", "-\u221e"),
        ("'%e'.format([1052.032911275])", "1.052033\u202f\u00d7\u202f10\u2070\u00b3"),
        ("'%b %o %x %X'.format([-5, 11, 'Hi', 255])", "-101 13 4869 FF"),
        ("'%s'.format([type(self.items)])", "list"),
    ],
)
def test_string_format(expression: str, expected: str) -> None:
    assert message(expression, items=["a", "b"], labels={"y": 2, "x": 1}) == expected


def test_string_format_checked_at_compile_time() -> None:
    assert compile_errors({"rule": "'%d'.format(['a']) == ''"}) == [
        "compilation failed: ERROR: <input>:1:14: error during formatting: decimal clause can "
        "only be used on integers, was given string\n"
        " | '%d'.format(['a']) == ''\n"
        " | .............^"
    ]
    # The schema types properties as upstream's checker does: name is a string.
    # (A selection is located at its dot.)
    assert compile_errors({"rule": "'%d'.format([self.name]) == ''"}) == [
        "compilation failed: ERROR: <input>:1:18: error during formatting: decimal clause can "
        "only be used on integers, was given string\n"
        " | '%d'.format([self.name]) == ''\n"
        " | .................^"
    ]
    assert compile_errors({"rule": "true", "messageExpression": "'%s'.format(['a', 'b'])"}) == [
        "messageExpression compilation failed: ERROR: <input>:1:12: too many arguments "
        "supplied to string.format (expected 1, got 2)\n"
        " | '%s'.format(['a', 'b'])\n"
        " | ...........^"
    ]
    assert compile_errors({"rule": "'%z %.f'.format([1, 2.0]) == ''"}) == [
        "compilation failed: ERROR: <input>:1:16: could not parse formatting clause: "
        'unrecognized formatting clause "z"\n'
        " | '%z %.f'.format([1, 2.0]) == ''\n"
        " | ...............^"
    ]


def test_string_format_errors_at_runtime() -> None:
    rule = "'%d'.format([self.number]) != ''"
    assert failures(compiled({"rule": rule}), number=1.5) == [
        'spec: Invalid value: "object": error during formatting: decimal clause can only be '
        f"used on integers, was given double evaluating rule: {rule}"
    ]
    rule = "'%s %s'.format(self.items) == ''"
    assert failures(compiled({"rule": rule}), items=["x"]) == [
        f'spec: Invalid value: "object": index 1 out of range evaluating rule: {rule}'
    ]


# --- sets ----------------------------------------------------------------------------------


def test_sets() -> None:
    assert holds("sets.contains(['a', 'b', 'c'], self.items)", items=["c", "a"])
    assert not holds("sets.contains(['a', 'b', 'c'], self.items)", items=["d"])
    assert holds("sets.equivalent(self.items, ['b', 'a'])", items=["a", "b", "a"])
    assert not holds("sets.equivalent(self.items, ['b'])", items=["a", "b"])
    assert holds("sets.intersects(self.items, ['x', 'b'])", items=["a", "b"])
    assert not holds("sets.intersects(self.items, [])", items=["a"])


def test_sets_cost() -> None:
    # cel-go: 1 + size(a) * size(b) * factor (2 for equivalent), plus the arguments:
    # the list literal 10, self.items 2 (maxItems 10).
    assert static_cost("sets.contains(['a', 'b', 'c'], self.items)") == 10 + 2 + 1 + 3 * 10
    assert static_cost("sets.equivalent(['a', 'b', 'c'], self.items)") == 10 + 2 + 1 + 60


# --- two-variable comprehensions -----------------------------------------------------------


@pytest.mark.parametrize(
    "rule",
    [
        "self.items.all(i, v, i < 2 && v != '')",
        "self.labels.all(k, v, k.size() == 1 && v > 0)",
        "self.items.exists(i, v, i == 1 && v == 'b')",
        "self.labels.existsOne(k, v, v == 2)",
        "self.items.transformList(i, v, i > 0, v + '!') == ['b!']",
        "self.items.transformMap(i, v, v) == {0: 'a', 1: 'b'}",
        "self.labels.transformMap(k, v, v < 2, v * 10) == {'x': 10}",
        "self.items.transformMapEntry(i, v, {v: i}) == {'a': 0, 'b': 1}",
    ],
)
def test_two_variable_comprehensions(rule: str) -> None:
    assert holds(rule, items=["a", "b"], labels={"x": 1, "y": 2})


def test_transform_map_entry_duplicate_key() -> None:
    rule = "self.items.transformMapEntry(i, v, {v: i}).size() > 0"
    assert failures(compiled({"rule": rule}), items=["a", "a"]) == [
        'spec: Invalid value: "object": insert failed: key a already exists evaluating rule: '
        + rule
    ]


def test_two_variable_comprehension_fields_are_checked() -> None:
    assert compile_errors({"rule": "self.objs.all(i, o, o.nope == i)"}) == [
        "compilation failed: ERROR: <input>:1:22: undefined field 'nope'\n"
        " | self.objs.all(i, o, o.nope == i)\n"
        " | .....................^"
    ]
    assert holds("self.objs.all(i, o, o.v == i)", objs=[{"v": 0}, {"v": 1}])


def test_comprehension_building_a_list_has_its_range_size() -> None:
    # As cel-go: the list transformList builds has at most maxItems (10) entries, so the
    # all() over it iterates 10 times, not as often as the largest request allows.
    assert static_cost("self.items.transformList(i, v, i).all(x, x >= 0)") < 1000


# --- url -----------------------------------------------------------------------------------


def test_url_follows_go_parse_request_uri() -> None:
    assert holds("isURL('https://example.com/path#fragment')")
    assert holds("url('https://example.com/p#frag').getEscapedPath() == '/p'")
    rule = "isURL(self.name) || url(self.name).getScheme() == ''"
    assert failures(compiled({"rule": rule}), name="https://a:b:c/") == [
        'spec: Invalid value: "object": URL parse error during conversion from string: '
        'parse "https://a:b:c/": invalid port ":c" after host evaluating rule: ' + rule
    ]
    assert failures(compiled({"rule": rule}), name="http://x/%zz") == [
        'spec: Invalid value: "object": URL parse error during conversion from string: '
        'parse "http://x/%zz": invalid URL escape "%zz" evaluating rule: ' + rule
    ]


# --- ip / cidr -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rule",
    [
        "ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')",
        "ip('224.0.0.251').isLinkLocalMulticast() && !ip('224.0.1.1').isLinkLocalMulticast()",
        "ip('ff02::fb').isLinkLocalMulticast() && !ip('ff05::1').isLinkLocalMulticast()",
        "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
    ],
)
def test_ip_functions(rule: str) -> None:
    assert holds(rule)


def test_ip_functions_cost() -> None:
    # Upstream: ip.isCanonical parses and compares, ceil(252 * 2 * 0.1) = 51, plus self.name 2.
    assert static_cost("ip.isCanonical(self.name)") == 53
    # cidr.ip() reads a field: a nominal 1, not a traversal of its (unknown-size) target.
    with_ip = static_cost("cidr('192.168.0.1/24').ip().family() == 4")
    assert with_ip == static_cost("cidr('192.168.0.1/24').family() == 4") + 1


# --- quantity ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "error"),
    [
        # The three errors of resource.ParseQuantity, which upstream's quantity() returns.
        ("1.2.3", "quantities must match the regular expression '^([+-]?[0-9.]+)"),
        ("1ki", "unable to parse quantity's suffix"),
        ("1e", "unable to parse quantity's suffix"),
    ],
)
def test_quantity_reports_the_parsers_error(text: str, error: str) -> None:
    rule = f"quantity('{text}').isGreaterThan(quantity('0'))"
    (got,) = failures(compiled({"rule": rule}))
    assert got.startswith(f'spec: Invalid value: "object": {error}'), got
    assert got.endswith(f" evaluating rule: {rule}")
    assert not holds(f"isQuantity('{text}')")


def test_quantity_is_parsed_as_resource_quantity() -> None:
    # Finer than a nano rounds up, as ParseQuantity does; exponents and binary suffixes scale.
    assert holds("quantity('1.0000000001') == quantity('1000000001n')")
    assert holds("quantity('1e3') == quantity('1k') && quantity('1.5Gi') == quantity('1536Mi')")
    assert holds("isQuantity('.5') && isQuantity('+5.') && !isQuantity('') && !isQuantity('1 ')")
