"""Built-in declarations through the validation engine, in shadow mode (KEP-5073)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.apimachinery.field_errors import Path, not_supported
from kapi.apis import builtin_resources
from kapi.runtime.schema import INT32, STRING, Field, List, Scalar, Struct, Time
from kapi.runtime.scheme import Resource
from kapi.validation.declarative import DeclarativeValidation, declared_schema


def _resource(kind: str) -> Resource:
    return next(r for r in builtin_resources() if r.kind == kind)


def _declaration(kind: str) -> Struct:
    resource = _resource(kind)
    struct = resource.versions[resource.hub_version].schema
    assert struct is not None
    return struct


class Counter:
    def __init__(self) -> None:
        self.count = 0

    def inc(self) -> None:
        self.count += 1


@pytest.fixture
def mismatches() -> Counter:
    return Counter()


@pytest.fixture
def shadow(mismatches: Counter) -> DeclarativeValidation:
    return DeclarativeValidation(mismatches.inc)


def _refs(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        found = [schema["$ref"]] if "$ref" in schema else []
        return found + [ref for value in schema.values() for ref in _refs(value)]
    if isinstance(schema, list):
        return [ref for item in schema for ref in _refs(item)]
    return []


@pytest.mark.parametrize("resource", builtin_resources(), ids=lambda r: f"{r.group}/{r.kind}")
def test_every_builtin_declaration_compiles_to_one_self_contained_schema(
    resource: Resource, shadow: DeclarativeValidation
) -> None:
    struct = resource.versions[resource.hub_version].schema
    assert struct is not None
    schema = declared_schema(struct)
    assert _refs(schema) == []
    assert "metadata" not in schema.get("properties", {})
    shadow.validator(struct)  # the engine accepts it


def test_the_declaration_keeps_constraints_and_drops_documentation() -> None:
    spec = declared_schema(_declaration("CronJob"))["properties"]["spec"]
    assert spec["properties"]["concurrencyPolicy"] == {
        "type": "string",
        "enum": ["Allow", "Forbid", "Replace"],
    }
    assert "description" not in spec
    assert sorted(spec["required"]) == ["jobTemplate", "schedule"]


def test_timestamps_may_be_null_and_int_or_string_is_the_extension() -> None:
    event = declared_schema(_declaration("Event"))["properties"]
    assert event["eventTime"] == {"type": "string", "format": "date-time", "nullable": True}
    pdb = declared_schema(_declaration("PodDisruptionBudget"))["properties"]["spec"]
    assert pdb["properties"]["minAvailable"] == {"x-kubernetes-int-or-string": True}


def test_a_type_that_contains_itself_stops_at_its_first_repetition() -> None:
    # Definitions are by name: the inner struct's reference is the outer one's.
    leaf = Struct("io.example.Node", (Field("value", INT32),))
    node = Struct("io.example.Node", (Field("value", INT32), Field("next", leaf)))
    schema = declared_schema(node)
    assert schema["properties"]["next"] == {"x-kubernetes-preserve-unknown-fields": True}


CRON_JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "CronJob",
    "metadata": {"name": "x", "namespace": "ns"},
    "spec": {
        "schedule": "* * * * *",
        "concurrencyPolicy": "Allow",
        "jobTemplate": {"spec": {"template": {"spec": {"containers": []}}}},
    },
}


def _handwritten(obj: dict[str, Any]) -> list[Any]:
    return _resource("CronJob").strategy.validate(obj)


def test_agreement_is_not_counted(shadow: DeclarativeValidation, mismatches: Counter) -> None:
    bad = copy.deepcopy(CRON_JOB)
    bad["spec"]["concurrencyPolicy"] = "Sometimes"
    handwritten = _handwritten(bad)
    assert any(e.field == "spec.concurrencyPolicy" for e in handwritten)
    assert shadow.compare(_declaration("CronJob"), bad, handwritten)
    assert shadow.compare(_declaration("CronJob"), CRON_JOB, [])
    assert mismatches.count == 0


def test_an_error_the_handwritten_checks_miss_is_counted_not_answered(
    shadow: DeclarativeValidation, mismatches: Counter
) -> None:
    bad = copy.deepcopy(CRON_JOB)
    bad["spec"]["concurrencyPolicy"] = "Sometimes"
    assert not shadow.compare(_declaration("CronJob"), bad, [])
    assert mismatches.count == 1


WIDGET = Struct(
    "io.example.Widget",
    (
        Field("metadata", Struct("io.example.Meta", (Field("name", STRING),))),
        Field("size", Scalar("string", enum=("S", "M")), required=True),
        Field("parts", List(Struct("io.example.Part", (Field("name", STRING),)), "map", ("name",))),
        Field("since", Time()),
        Field("count", INT32),
    ),
)


@pytest.mark.parametrize(
    ("widget", "errors"),
    [
        ({"size": "S", "since": None, "count": 1, "metadata": {"name": 3}}, []),
        ({"size": "L"}, ['size: Unsupported value: "L": supported values: "S", "M"']),
        ({}, ["size: Required value"]),
        (
            {"size": "M", "parts": [{"name": "a"}, {"name": "a"}]},
            ['parts[1]: Duplicate value: {"name":"a"}'],
        ),
    ],
)
def test_the_engine_checks_what_the_declaration_states(
    shadow: DeclarativeValidation, widget: dict[str, Any], errors: list[str]
) -> None:
    assert [str(e) for e in shadow.validator(WIDGET).validate(widget)] == errors


def test_the_same_field_and_type_is_agreement_whatever_the_wording(
    shadow: DeclarativeValidation, mismatches: Counter
) -> None:
    handwritten = [not_supported(Path("size"), "L", ("S", "M", "XL"))]
    assert shadow.compare(WIDGET, {"size": "L"}, handwritten)
    assert mismatches.count == 0
