"""CustomResourceStrategy: schema, CEL and scale checks in upstream's order and wording."""

from __future__ import annotations

from typing import Any

from kapi.apiextensions.strategy import CustomResourceStrategy, ScaleSpec
from kapi.apimachinery.field_errors import Path
from kapi.validation.cel import CELValidator
from kapi.validation.schema_validator import SchemaValidator

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "max": {"type": "integer"}},
            "x-kubernetes-validations": [
                {"rule": "self.replicas <= self.max", "message": "replicas above max"}
            ],
        },
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
    },
}


def strategy() -> CustomResourceStrategy:
    cel, errors = CELValidator.compile(SCHEMA, Path("openAPIV3Schema"))
    assert cel is not None and errors == []
    return CustomResourceStrategy(
        SchemaValidator(SCHEMA),
        cel,
        status=True,
        scale=ScaleSpec(".spec.replicas", ".status.replicas", None),
    )


def messages(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    s = strategy()
    errs = s.validate(obj) if old is None else s.validate_update(obj, old)
    return [str(e) for e in errs]


def test_rules_run_on_a_schema_valid_object() -> None:
    assert messages({"spec": {"replicas": 3, "max": 2}}) == [
        "spec: Invalid value: replicas above max"
    ]
    assert messages({"spec": {"replicas": 1, "max": 2}}) == []


def test_rules_are_skipped_after_a_blocking_schema_error() -> None:
    assert messages({"spec": {"replicas": "three", "max": 2}}) == [
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type '
        'integer: "string"',
        '<nil>: Invalid value: "null": some validation rules were not checked because the '
        "object was invalid; correct the existing errors to complete validation",
        '.spec.replicas: Invalid value: "three": should be an integer',
    ]


def test_scale_replicas_must_be_non_negative_integers() -> None:
    assert messages({"spec": {"replicas": -1, "max": 2}}) == [
        ".spec.replicas: Invalid value: -1: should be a non-negative integer"
    ]
    assert messages({"spec": {"replicas": 1, "max": 2}, "status": {"replicas": -2}}) == [
        ".status.replicas: Invalid value: -2: should be a non-negative integer"
    ]
