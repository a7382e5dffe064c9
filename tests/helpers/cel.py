"""CRD validation rules (CEL) on a small spec schema: compiled as at CRD creation."""

from __future__ import annotations

from typing import Any

from kapi.apimachinery.field_errors import Path
from kapi.validation.cel import compiler

SCHEMA_PATH = Path("spec", "validation", "openAPIV3Schema")

SPEC_PROPERTIES: dict[str, Any] = {
    "name": {"type": "string", "maxLength": 63},
    "items": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}},
    "labels": {
        "type": "object",
        "maxProperties": 10,
        "additionalProperties": {"type": "integer"},
    },
    "number": {"type": "number"},
    "objs": {
        "type": "array",
        "maxItems": 10,
        "items": {"type": "object", "properties": {"v": {"type": "integer"}}},
    },
}


def crd_schema(rules: list[dict[str, Any]]) -> dict[str, Any]:
    """An openAPIV3Schema whose ``spec`` has SPEC_PROPERTIES and the ``rules``."""
    spec = {"type": "object", "properties": SPEC_PROPERTIES, "x-kubernetes-validations": rules}
    return {"type": "object", "properties": {"spec": spec}}


def node_rules(rule: str) -> compiler.NodeRules:
    """The compiled rule on the spec node (cardinality 1) and its estimated cost."""
    node = crd_schema([{"rule": rule}])["properties"]["spec"]
    return compiler.compile_node(node, SCHEMA_PATH, 1, False)


def static_cost(rule: str) -> int:
    """Estimated cost of one rule at CRD creation."""
    [(_, estimate)] = node_rules(rule).max_cost
    return estimate
