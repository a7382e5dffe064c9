# ruff: noqa: RUF001  (Greek letters are part of cel-go's test strings)
"""The strings extension and the lists library's ``indexOf``/``lastIndexOf`` in CRD rules.

Expressions and error texts are cel-go v0.23.2's ``ext/strings_test.go`` (what
Kubernetes 1.33 builds on) and the examples of k8s.io/apiserver
``pkg/cel/library/lists.go``; each runs as a rule through compilation and
evaluation, as a CRD author's rule does.
"""

from __future__ import annotations

from typing import Any

import pytest

from kapi.validation.cel import CELValidator
from tests.helpers.cel import SCHEMA_PATH, static_cost


def evaluate(rule: str, properties: dict[str, Any] | None = None, **spec: Any) -> list[str]:
    """The errors of ``rule`` on ``spec``: none when it holds."""
    spec_schema: dict[str, Any] = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-validations": [{"rule": rule}],
    }
    if properties:
        spec_schema["properties"] = properties
    schema = {"type": "object", "properties": {"spec": spec_schema}}
    validator, errs = CELValidator.compile(schema, SCHEMA_PATH)
    assert [str(e) for e in errs] == []
    assert validator is not None
    return [str(e) for e in validator.validate({"spec": spec})]


CEL_GO_STRINGS = [
    "'tacocat'.charAt(3) == 'o'",
    "'tacocat'.charAt(7) == ''",
    "'©αT'.charAt(0) == '©' && '©αT'.charAt(1) == 'α' && '©αT'.charAt(2) == 'T'",
    "'tacocat'.indexOf('') == 0",
    "'tacocat'.indexOf('ac') == 1",
    "'tacocat'.indexOf('none') == -1",
    "'tacocat'.indexOf('', 3) == 3",
    "'tacocat'.indexOf('a', 3) == 5",
    "'tacocat'.indexOf('at', 3) == 5",
    "'ta©o©αT'.indexOf('©') == 2",
    "'ta©o©αT'.indexOf('©', 3) == 4",
    "'ta©o©αT'.indexOf('©αT', 3) == 4",
    "'ta©o©αT'.indexOf('©α', 5) == -1",
    "'ijk'.indexOf('k') == 2",
    "'hello wello'.indexOf('hello wello') == 0",
    "'hello wello'.indexOf('ello', 6) == 7",
    "'hello wello'.indexOf('elbo room!!') == -1",
    "'tacocat'.lastIndexOf('') == 7",
    "'tacocat'.lastIndexOf('at') == 5",
    "'tacocat'.lastIndexOf('none') == -1",
    "'tacocat'.lastIndexOf('', 3) == 3",
    "'tacocat'.lastIndexOf('a', 3) == 1",
    "'ta©o©αT'.lastIndexOf('©') == 4",
    "'ta©o©αT'.lastIndexOf('©', 3) == 2",
    "'ta©o©αT'.lastIndexOf('©α', 4) == 4",
    "'hello wello'.lastIndexOf('ello', 6) == 1",
    "'hello wello'.lastIndexOf('low') == -1",
    "'hello wello'.lastIndexOf('elbo room!!!') == -1",
    "'hello wello'.lastIndexOf('hello wello') == 0",
    "'bananananana'.lastIndexOf('nana', 7) == 6",
    "'TacoCat'.lowerAscii() == 'tacocat'",
    "'TacoCÆt Xii'.lowerAscii() == 'tacocÆt xii'",
    "'tacoCαt'.upperAscii() == 'TACOCαT'",
    '"{0} days {0} hours".replace("{0}", "2") == "2 days 2 hours"',
    '"{0} days {0} hours".replace("{0}", "2", 1).replace("{0}", "23") == "2 days 23 hours"',
    '"1 ©αT taco".replace("αT", "o©α") == "1 ©o©α taco"',
    '"hello hello".replace("", "_") == "_h_e_l_l_o_ _h_e_l_l_o_"',
    '"hello hello".replace("h", "") == "ello ello"',
    '"hello world".split(" ") == ["hello", "world"]',
    '"hello world events!".split(" ", 0) == []',
    '"hello world events!".split(" ", 1) == ["hello world events!"]',
    '"o©o©o©o".split("©", -1) == ["o", "o", "o", "o"]',
    '"tacocat".substring(4) == "cat"',
    '"tacocat".substring(7) == ""',
    '"tacocat".substring(0, 4) == "taco"',
    '"tacocat".substring(4, 4) == ""',
    "'ta©o©αT'.substring(2, 6) == \"©o©α\"",
    "'ta©o©αT'.substring(7, 7) == \"\"",
    '" \\f\\n\\r\\t\\vtext  ".trim() == "text"',
    '"\\u0085\\u00a0\\u1680text".trim() == "text"',
    '"text\\u2000\\u2001\\u2002\\u2003\\u2004\\u2004\\u2006\\u2007\\u2008\\u2009".trim() == "text"',
    '"\\u200atext\\u2028\\u2029\\u202F\\u205F\\u3000".trim() == "text"',
    '"\\u180etext\\u200b\\u200c\\u200d\\u2060\\ufeff".trim() == '
    '"\\u180etext\\u200b\\u200c\\u200d\\u2060\\ufeff"',
    "'tacocat'.indexOf('a', 30) == -1",
    "'tacocat'.lastIndexOf('a', 30) == -1",
]


@pytest.mark.parametrize("rule", CEL_GO_STRINGS)
def test_strings_as_cel_go(rule: str) -> None:
    assert evaluate(rule) == []


@pytest.mark.parametrize(
    ("rule", "error"),
    [
        ("'tacocat'.charAt(30) == ''", "index out of range: 30"),
        ("'tacocat'.lastIndexOf('a', -1) == -1", "index out of range: -1"),
        ('"tacocat".substring(40) == "cat"', "index out of range: 40"),
        ('"tacocat".substring(-1) == "cat"', "index out of range: -1"),
        ('"tacocat".substring(1, 50) == "cat"', "index out of range: 50"),
        ('"tacocat".substring(49, 50) == "cat"', "index out of range: 49"),
        ('"tacocat".substring(4, 3) == ""', "invalid substring range. start: 4, end: 3"),
        # cel-go v0.23 (Kubernetes 1.33): the empty string has no last index to start from.
        ("''.lastIndexOf('a') == -1", "index out of range: -1"),
    ],
)
def test_out_of_range_is_cel_gos_error(rule: str, error: str) -> None:
    assert evaluate(rule) == [f'spec: Invalid value: "object": {error} evaluating rule: {rule}']


@pytest.mark.parametrize(
    "rule",
    [
        "[1, 2, 2, 3].indexOf(2) == 1",
        "[1.0].indexOf(1.1) == -1",
        "[].indexOf('string') == -1",
        "self.items.indexOf('b') == 1 && self.items.lastIndexOf('b') == 3",
        "self.items.indexOf('z') == -1 && self.items.lastIndexOf('z') == -1",
        "self.ports.indexOf(443) == 1 && self.ports.indexOf(443.0) == 1",
        "self.flags.indexOf(1) == -1 && self.flags.indexOf(true) == 0",
        "self.objs.indexOf({'v': 2}) == 1 && self.objs.lastIndexOf({'v': 1}) == 2",
        "self.name.indexOf('b') == 1",
    ],
)
def test_list_index_of_beside_the_string_one(rule: str) -> None:
    spec = {
        "items": ["a", "b", "c", "b"],
        "ports": [80, 443],
        "flags": [True, False],
        "objs": [{"v": 1}, {"v": 2}, {"v": 1}],
        "name": "abc",
    }
    # Declared with bounds: searches of lists of unknown size exceed the cost limit upstream.
    bounded = {"type": "array", "maxItems": 10}
    properties = {
        "items": {**bounded, "items": {"type": "string", "maxLength": 10}},
        "ports": {**bounded, "items": {"x-kubernetes-int-or-string": True}},
        "flags": {**bounded, "items": {"x-kubernetes-int-or-string": True}},
        "objs": {**bounded, "items": {"type": "object", "properties": {"v": {"type": "integer"}}}},
        "name": {"type": "string", "maxLength": 10},
    }
    assert evaluate(rule, properties, **spec) == []


def test_a_list_search_is_priced_as_one_traversal_of_the_list() -> None:
    """As upstream's lists library prices ``indexOf`` beside ``sum``: per element, not per
    byte of a string (before, a list receiver was priced as a string search)."""
    list_search = static_cost("self.items.indexOf('a') == 0")
    assert list_search == static_cost("self.items.sum() == 0")
    assert static_cost("self.items.lastIndexOf('a') == 0") == list_search
