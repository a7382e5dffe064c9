"""OpenAPI ``pattern`` with Go's regexp (RE2) syntax and semantics, as kube-apiserver has them.

Matching is checked through :class:`SchemaValidator` (what serving custom
resources runs), compile errors through CRD validation (what creating a CRD
runs) and :func:`compile_regexp` directly.
"""

from __future__ import annotations

from typing import Any

import pytest

from kapi.apimachinery.gotext import go_quote
from kapi.apis.crd_validation import validate_crd
from kapi.validation import regexp
from kapi.validation import schema_validator as sv
from kapi.validation.regexp import RegexpError, compile_regexp
from kapi.validation.schema_validator import SchemaValidator

Obj = dict[str, Any]


def _schema(pattern: str) -> Obj:
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"x": {"pattern": pattern}}}},
    }


def _valid(pattern: str, value: str) -> bool:
    """Whether ``value`` passes the pattern; any other error fails the test."""
    errs = [str(e) for e in SchemaValidator(_schema(pattern)).validate({"spec": {"x": value}})]
    assert errs in ([], [f"spec.x: Invalid value: {go_quote(value)}: {_should_match(pattern)}"])
    return not errs


def _should_match(pattern: str) -> str:
    return f"spec.x in body should match '{pattern}'"


# --- matching ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "accepted", "rejected"),
    [
        # kubebuilder's DNS label pattern.
        (r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", ["a", "my-app-1"], ["-a", "a-", "A", "a_b"]),
        # Unicode classes, long and one-letter forms, and negated scripts.
        (r"^\p{L}+$", ["héllo", "Ωμέγα", "日本"], ["abc1", "a b", ""]),
        (r"^\pL\pN$", ["é٣"], ["é-"]),
        (r"^\P{Greek}+$", ["abc"], ["aβc"]),
        (r"^\p{^Greek}$", ["a"], ["β"]),
        # POSIX classes and \Q...\E quoting.
        (r"^[[:alpha:]]+$", ["abc"], ["ab1", "é"]),
        (r"^\Qa.b\E$", ["a.b"], ["axb"]),
        # Go's named groups, both spellings.
        ("^(?<word>[a-z]+)-(?P<n>[0-9])$", ["ab-1"], ["ab-x"]),
    ],
)
def test_go_syntax_matches(pattern: str, accepted: list[str], rejected: list[str]) -> None:
    assert [_valid(pattern, v) for v in accepted] == [True] * len(accepted)
    assert [_valid(pattern, v) for v in rejected] == [False] * len(rejected)


@pytest.mark.parametrize(
    ("pattern", "value", "valid"),
    [
        ("^a$", "a\n", False),  # $ is the end of the text (Python's re would accept)
        ("(?m)^a$", "a\nb", True),
        (r"^\s$", "\v", False),  # \s is [\t\n\f\r ]: no vertical tab
        (r"^\d$", "٣", False),  # \d, \w and \b are ASCII
        (r"^\w$", "é", False),
        (r"\bé", "é", False),
        ("^.$", "\n", False),
        ("^[^a]$", "\n", True),  # a negated class matches a newline
        ("(?i)^k$", "\u212a", True),  # Unicode simple case folding: the Kelvin sign
        ("^a{,2}$", "a{,2}", True),  # not a repeat in Go: a literal brace
        ("^a{01}$", "a{01}", True),  # a leading zero makes it a literal too
    ],
)
def test_go_semantics(pattern: str, value: str, valid: bool) -> None:
    assert _valid(pattern, value) is valid


def test_matching_takes_linear_time() -> None:
    """A pattern that makes a backtracking engine run for ever: RE2 answers at once."""
    assert _valid("^(a|aa)+$", "a" * 5000 + "!") is False
    assert _valid("^(a|aa)+$", "a" * 5000) is True


def test_lone_surrogate_is_no_match_not_a_crash() -> None:
    """YAML can carry a lone surrogate; Go sees an invalid byte that no letter class matches."""
    assert _valid(r"^\pL$", "\ud800") is False
    assert _valid("^.$", "\ud800") is True


def test_pattern_compiles_once_per_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []

    def counting(pattern: str) -> regexp.Regexp:
        compiled.append(pattern)
        return compile_regexp(pattern)

    monkeypatch.setattr(sv, "compile_regexp", counting)
    validator = SchemaValidator(_schema("^[a-z]+$"))
    for value in ("abc", "ABC", "xyz"):
        validator.validate({"spec": {"x": value}})
    assert compiled == ["^[a-z]+$"]


def test_invalid_pattern_when_serving_says_so() -> None:
    """A stored schema whose pattern does not compile fails every value, as kube-openapi does."""
    errs = SchemaValidator(_schema("(a")).validate({"spec": {"x": "a"}})
    assert [str(e) for e in errs] == [
        'spec.x: Invalid value: "a": spec.x in body should match '
        "'(a, but pattern is invalid: error parsing regexp: missing closing ): `(a`'"
    ]


# --- compile errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "error"),
    [
        # Perl syntax Go leaves out.
        (r"(a)\1", r"invalid escape sequence: `\1`"),
        ("(?=x)y", "invalid or unsupported Perl syntax: `(?=`"),
        ("(?!x)y", "invalid or unsupported Perl syntax: `(?!`"),
        ("(?>a)", "invalid or unsupported Perl syntax: `(?>`"),
        ("(?P=n)", "invalid or unsupported Perl syntax: `(?P`"),
        ("a++", "invalid nested repetition operator: `++`"),
        (r"\Z", r"invalid escape sequence: `\Z`"),
        # Go reads (?< as a named capture, so lookbehind is a bad name.
        ("(?<=a)b", "invalid named capture: `(?<=a)b`"),
        ("(?<!a)>b", "invalid named capture: `(?<!a)>`"),
        # What RE2 accepts and Go does not.
        (r"\C", r"invalid escape sequence: `\C`"),
        ("(?<é>x)", "invalid named capture: `(?<é>`"),
        ("x{1000000000}", "invalid repeat count: `{1000000000}`"),
        ("x{1,10000000000}", "invalid repeat count: `{1,10000000000}`"),
        # RE2's wording turned into Go's.
        ("(abc", "missing closing ): `(abc`"),
        ("abc)", "unexpected ): `abc)`"),
        ("x[a-z", "missing closing ]: `[a-z`"),
        ("*a", "missing argument to repetition operator: `*`"),
        ("a{2,1}", "invalid repeat count: `{2,1}`"),
        ("a{1001}", "invalid repeat count: `{1001}`"),
        ("a\\", "trailing backslash at end of expression: ``"),
        ("(?z)", "invalid or unsupported Perl syntax: `(?z`"),
        (r"\p{Foo}", r"invalid character class range: `\p{Foo}`"),
        ("[[:foo:]]", "invalid character class range: `[:foo:]`"),
        ("[z-a]", "invalid character class range: `z-a`"),
        (r"\x{110000}", r"invalid escape sequence: `\x{110000`"),
        ("(?P<a-b>x)", "invalid named capture: `(?P<a-b>`"),
    ],
)
def test_go_compile_errors(pattern: str, error: str) -> None:
    with pytest.raises(RegexpError) as raised:
        compile_regexp(pattern)
    assert str(raised.value) == f"error parsing regexp: {error}"


@pytest.mark.parametrize(
    ("pattern", "error"),
    [
        # Go parses left to right and stops at the first error, wherever RE2 differs.
        (r"(?=x)\C", "invalid or unsupported Perl syntax: `(?=`"),
        (r"a\C(?=x)", r"invalid escape sequence: `\C`"),
        (r"(\C", r"invalid escape sequence: `\C`"),  # the unclosed group comes later
        (r"abc)\C", r"unexpected ): `abc)\C`"),  # the whole expression, as Go quotes it
    ],
)
def test_first_error_from_the_left(pattern: str, error: str) -> None:
    with pytest.raises(RegexpError) as raised:
        compile_regexp(pattern)
    assert str(raised.value) == f"error parsing regexp: {error}"


@pytest.mark.parametrize(
    "pattern",
    [r"\Q\C(?=\E", "[(?<é>)]", "[]{1000000000}]", "[[:alpha:]{1000000000}]", "(?<_1>x)"],
)
def test_go_only_checks_skip_quoted_text_and_classes(pattern: str) -> None:
    assert compile_regexp(pattern).pattern == pattern


def _crd(pattern: str) -> Obj:
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": pattern}}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "listKind": "WidgetList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
            "conversion": {"strategy": "None"},
        },
        "status": {"storedVersions": ["v1"]},
    }


@pytest.mark.parametrize(
    ("pattern", "error"),
    [
        (r"^(\w)\1$", r"invalid escape sequence: `\1`"),
        ("^(?<=a)b$", "invalid named capture: `(?<=a)b$`"),
        ("^(?!x)", "invalid or unsupported Perl syntax: `(?!`"),
    ],
)
def test_crd_with_perl_only_pattern_is_rejected(pattern: str, error: str) -> None:
    errs = [str(e) for e in validate_crd(_crd(pattern))]
    path = "spec.validation.openAPIV3Schema.properties[code].pattern"
    assert errs == [
        f"{path}: Invalid value: {go_quote(pattern)}: must be a valid regular expression, "
        f"but isn't: error parsing regexp: {error}"
    ]


@pytest.mark.parametrize("pattern", [r"^\p{L}+$", r"^\pL\P{Greek}$", "^(?<n>[a-z]+)$"])
def test_crd_with_go_pattern_is_accepted(pattern: str) -> None:
    assert validate_crd(_crd(pattern)) == []
