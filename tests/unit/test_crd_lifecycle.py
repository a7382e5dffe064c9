"""``x-kubernetes-api-lifecycle`` in a CRD schema: one case per rule, and the paths found."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.apimachinery.field_errors import Path
from kapi.apis.crd_lifecycle import schema_errors, tagged_paths
from kapi.runtime.lifecycle import FieldLifecycle

EXT = "x-kubernetes-api-lifecycle"
ROOT = Path("schema")


def field(extension: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"f": {"type": "string", EXT: extension}}}


def messages(extension: Any) -> list[str]:
    return [str(e) for e in schema_errors(field(extension), ROOT)]


WHERE = f"schema.properties[f].{EXT}"


@pytest.mark.parametrize(
    ("extension", "expected"),
    [
        ({"example.com": {"minVersion": "v1.2.3", "status": "beta", "featureGate": "X"}}, []),
        ({"kubernetes": {"minVersion": "v1.31", "featureGate": "CoordinatedLeaderElection"}}, []),
        ([], [f"{WHERE}: Invalid value: []: must be a non-empty map of component to tag"]),
        ({}, [f"{WHERE}: Invalid value: {{}}: must be a non-empty map of component to tag"]),
        (
            {"example.com": "v1"},
            [
                f'{WHERE}[example.com]: Invalid value: "v1": must be a map of minVersion, status, '
                "featureGate"
            ],
        ),
        (
            {"example.com": {"status": "alpha"}},
            [f"{WHERE}[example.com].minVersion: Required value"],
        ),
        (
            {"kubernetes": {"minVersion": "v1.31.0"}},
            [
                f'{WHERE}[kubernetes].minVersion: Invalid value: "v1.31.0": must match '
                r"v[1-9][0-9]*\.(0|[1-9][0-9]*)"
            ],
        ),
        (
            {"kubernetes": {"minVersion": "v1.31", "featureGate": "NoSuchGate"}},
            [
                f'{WHERE}[kubernetes].featureGate: Invalid value: "NoSuchGate": not a Kubernetes '
                "feature gate kapi knows"
            ],
        ),
        (
            {"example.com": {"minVersion": "v1.0", "featureGate": ""}},
            [f'{WHERE}[example.com].featureGate: Invalid value: "": must be a gate name'],
        ),
    ],
)
def test_rules(extension: Any, expected: list[str]) -> None:
    assert messages(extension) == expected


def test_fields_inside_items_and_map_values_are_checked_and_found() -> None:
    tag = {"example.com": {"minVersion": "v2.0", "status": "deprecated"}}
    schema = {
        "type": "object",
        "properties": {
            "list": {
                "type": "array",
                "items": {"type": "object", "properties": {"old": {EXT: tag}}},
            },
            "map": {"type": "object", "additionalProperties": {"type": "string", EXT: {}}},
        },
    }
    assert [str(e) for e in schema_errors(schema, ROOT)] == [
        f"schema.properties[map].additionalProperties.{EXT}: Forbidden: may only be set on a "
        "field in properties"
    ]
    del schema["properties"]["map"]["additionalProperties"][EXT]
    schema["properties"]["map"]["additionalProperties"] = {
        "type": "object",
        "properties": {"gone": {"type": "string", EXT: tag}},
    }
    assert schema_errors(schema, ROOT) == []
    deprecated = (FieldLifecycle("v2.0", "deprecated", component="example.com"),)
    assert [(str(p), p.tags) for p in tagged_paths(schema)] == [
        ("list[*].old", deprecated),
        ("map[*].gone", deprecated),
    ]
