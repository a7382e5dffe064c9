"""Differential test: kapi's SchemaValidator and jsonschema's Draft 4 give the same verdict.

Generated schemas and documents stay inside the features both implement alike.
Known differences are kept out of generation on purpose:

* Go number semantics: kube-openapi compares an integer with ``int64(bound)``
  and converts values to an enum member's type (``1.5`` matches ``[1]``), and
  Go's ``DeepEqual`` tells ``1`` from ``1.0``. So bounds and multipleOf are
  integers, enums hold strings, and floats are never integral (``x.5``).
* kube-openapi checks only type and enum of a null value, skipping allOf/anyOf/
  oneOf/not; so composition only appears on typed, non-nullable schemas.
* OpenAPI v3.0 ``nullable`` is Draft 4's ``type: [t, "null"]``; its boolean
  ``exclusiveMinimum``/``exclusiveMaximum`` are Draft 4's too (not 2020-12's numbers).
* Formats are left out: jsonschema checks few of them, and differently.
* Patterns are anchored simply and documents hold no newlines, where RE2's
  ``$`` and Python's differ.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kapi.validation.schema_validator import SchemaValidator

_TEXT = st.text("ab", max_size=4)
_FLOAT = st.integers(-6, 24).map(lambda i: i / 2 + 0.25 if i % 2 else i / 2 + 0.5)
_SCALARS = st.none() | st.booleans() | st.integers(-3, 12) | _FLOAT | _TEXT
_DOCS = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abc"), inner),
    max_leaves=8,
)


@st.composite
def _constraints(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    """Keywords for one type (and, untyped, for composition branches)."""
    s: dict[str, Any] = {}
    if kind in ("integer", "number"):
        lo, hi = draw(st.integers(-2, 6)), draw(st.integers(0, 10))
        if draw(st.booleans()):
            s["minimum"] = lo
            s["exclusiveMinimum"] = draw(st.booleans())
        if draw(st.booleans()):
            s["maximum"] = hi
            s["exclusiveMaximum"] = draw(st.booleans())
        if draw(st.booleans()):
            s["multipleOf"] = draw(st.integers(1, 3))
    elif kind == "string":
        if draw(st.booleans()):
            s["minLength"] = draw(st.integers(0, 3))
        if draw(st.booleans()):
            s["maxLength"] = draw(st.integers(0, 3))
        if draw(st.booleans()):
            s["pattern"] = draw(st.sampled_from(["^a", "b$", "^a*b*$", "ab"]))
        if draw(st.booleans()):
            s["enum"] = draw(st.lists(_TEXT, min_size=1, max_size=3, unique=True))
    elif kind == "array":
        if draw(st.booleans()):
            s["minItems"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            s["maxItems"] = draw(st.integers(0, 3))
        if draw(st.booleans()):
            s["uniqueItems"] = True
    elif kind == "object":
        if draw(st.booleans()):
            s["minProperties"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            s["maxProperties"] = draw(st.integers(0, 3))
        if draw(st.booleans()):
            s["required"] = draw(st.lists(st.sampled_from("abc"), min_size=1, unique=True))
    return s


_KINDS = st.sampled_from(["object", "array", "string", "integer", "number", "boolean"])


@st.composite
def _schema(draw: st.DrawFn, depth: int = 2) -> dict[str, Any]:
    kind = draw(_KINDS)
    s: dict[str, Any] = {"type": kind, **draw(_constraints(kind))}
    if kind == "array" and depth and draw(st.booleans()):
        s["items"] = draw(_schema(depth - 1))
    if kind == "object" and depth:
        keys = draw(st.lists(st.sampled_from("abc"), max_size=3, unique=True))
        s["properties"] = {k: draw(_schema(depth - 1)) for k in keys}
        extra = draw(st.sampled_from(["absent", "false", "schema"]))
        if extra == "false":
            s["additionalProperties"] = False
        elif extra == "schema":
            s["additionalProperties"] = draw(_schema(depth - 1))
    if draw(st.booleans()):
        s["nullable"] = True
    elif draw(st.integers(0, 3)) == 0:
        key = draw(st.sampled_from(["allOf", "anyOf", "oneOf", "not"]))
        branch = st.builds(lambda c: c, _KINDS.flatmap(_constraints))
        if key == "not":
            s["not"] = draw(branch.filter(bool))
        else:
            s[key] = draw(st.lists(branch, min_size=1, max_size=3))
    return s


def _as_draft4(s: Any) -> Any:
    """OpenAPI v3.0 to Draft 4: ``nullable`` becomes a "null" type (property names are a-c)."""
    if isinstance(s, list):
        return [_as_draft4(x) for x in s]
    if not isinstance(s, dict):
        return s
    out = {k: _as_draft4(v) for k, v in s.items() if k != "nullable"}
    if s.get("nullable"):
        out["type"] = [s["type"], "null"]
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_schema(), st.data())
def test_same_verdict_as_jsonschema(schema: dict[str, Any], data: st.DataObject) -> None:
    reference = jsonschema.Draft4Validator(_as_draft4(schema))
    kapi = SchemaValidator(schema)
    for _ in range(5):
        doc = data.draw(_DOCS)
        expected = reference.is_valid(doc)
        errors = kapi.validate(doc)
        assert (errors == []) == expected, (schema, doc, [str(e) for e in errors])
