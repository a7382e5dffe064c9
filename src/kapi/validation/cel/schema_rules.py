"""The compiled ``x-kubernetes-validations`` rules of a schema tree.

Compilation walks the schema once, compiles the rules of every node that has
some (:mod:`kapi.validation.cel.compiler`), and keeps only the branches that
lead to rules, so evaluation never visits a subtree without any. It also
applies upstream's limit on the estimated cost of all rules of one schema.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, TypeGuard

from kapi.apimachinery import field_errors
from kapi.apimachinery.field_errors import FieldError, Path
from kapi.validation.cel import cost
from kapi.validation.cel.compiler import CompiledRule, compile_node, cost_error_message

_TOTAL_COST_NAME = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
_CONTRIBUTED = (
    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
)


@dataclass(slots=True)
class RuleNode:
    """Rules of one schema node and the children under which more rules live."""

    schema: dict[str, Any]
    rules: list[CompiledRule] = dataclass_field(default_factory=list)
    properties: dict[str, RuleNode] = dataclass_field(default_factory=dict)
    additional: RuleNode | None = None
    items: RuleNode | None = None


def _has_rules(s: Any) -> TypeGuard[dict[str, Any]]:
    """Whether the schema node or any node below it carries rules."""
    if not isinstance(s, dict):
        return False
    if s.get("x-kubernetes-validations"):
        return True
    props = s.get("properties")
    if isinstance(props, dict) and any(_has_rules(p) for p in props.values()):
        return True
    return _has_rules(s.get("additionalProperties")) or _has_rules(s.get("items"))


def _times(cardinality: int | None, bound: Any) -> int | None:
    """How many values a child may have: the parent's count times a ``max*`` bound."""
    if cardinality is None or bound is None:
        return None
    return cardinality * max(0, bound)


def build_rule_tree(schema: dict[str, Any], path: Path) -> tuple[RuleNode | None, list[FieldError]]:
    """Compile every rule in the schema tree once.

    ``path`` is where the schema sits in the CRD; errors are CRD-validation errors
    (compile failures, malformed rules, estimated cost over the limits). Returns
    ``(None, [])`` when the schema has no rules.
    """
    if not _has_rules(schema):
        return None, []
    errors: list[FieldError] = []
    costs: list[tuple[Path, int]] = []

    def build(s: dict[str, Any], p: Path, cardinality: int | None, is_root: bool) -> RuleNode:
        node = RuleNode(s)
        if s.get("x-kubernetes-validations"):
            compiled = compile_node(s, p, cardinality, is_root)
            node.rules = compiled.compiled
            errors.extend(compiled.errors)
            costs.extend(compiled.max_cost)
        props = s.get("properties")
        if isinstance(props, dict):
            for name, prop in props.items():
                if _has_rules(prop):
                    node.properties[name] = build(
                        prop, p.child("properties").key(name), cardinality, False
                    )
        ap = s.get("additionalProperties")
        if _has_rules(ap):
            node.additional = build(
                ap,
                p.child("additionalProperties"),
                _times(cardinality, s.get("maxProperties")),
                False,
            )
        items = s.get("items")
        if _has_rules(items):
            node.items = build(
                items, p.child("items"), _times(cardinality, s.get("maxItems")), False
            )
        return node

    root = build(schema, path, 1, True)
    total = sum(c for _, c in costs)
    if total > cost.STATIC_ESTIMATED_CRD_COST_LIMIT:
        # Upstream names the four costliest rules, leaving out any under 1% of the limit.
        floor = cost.STATIC_ESTIMATED_CRD_COST_LIMIT // 100
        significant = [pc for pc in costs if pc[1] >= floor]
        for p, _ in heapq.nlargest(4, significant, key=lambda pc: pc[1]):
            errors.append(field_errors.forbidden(p, _CONTRIBUTED))
        errors.append(
            field_errors.forbidden(
                path,
                cost_error_message(
                    _TOTAL_COST_NAME,
                    total,
                    cost.STATIC_ESTIMATED_CRD_COST_LIMIT,
                ),
            )
        )
    return root, errors
