"""CEL validation rules of CRD schemas (``x-kubernetes-validations``).

The Python counterpart of apiextensions-apiserver ``pkg/apiserver/schema/cel``: rules are
compiled once per schema (with upstream's CRD-validation errors and static cost limits) and
evaluated on every write of a custom resource, walking the new and old objects together so
that transition rules see ``oldSelf``.

Why cel-expr-python (Google's cel-cpp bindings). ``benchmarks/cel_libraries.py`` measured the
three candidates side by side (this machine, one run): evaluation of
``self.replicas <= self.maxReplicas`` took 21 µs with cel-expr-python, 300 µs with
common-expression-language (Rust, most of it converting the object) and 154 µs with
cel-python; ``all()`` over 50 items 29 µs, 383 µs and 7.7 ms; a regex rule 28, 346 and
537 µs. Beyond speed, cel-expr-python is the only one with CEL's type checker and ANTLR
grammar, so compile errors are cel-go's text byte for byte
(``ERROR: <input>:1:12: Syntax error: mismatched input '<EOF>' expecting {...}``), and the
only one with typed overload declarations and the optional/strings/bindings extensions Kubernetes
builds on. It has no cost tracking (neither has the Rust binding; cel-python could be
instrumented but is 20-300x slower), so kapi accounts cost itself (see ``cost``).

What is approximated, and why:

* Objects are ``map(string, dyn)``: the bindings declare message types only from protobuf
  descriptors. Undeclared fields are still compile errors (checked on the syntax tree), but
  type errors inside objects surface at runtime, property names are not CEL-escaped
  (``foo-bar`` cannot be selected), lists with ``x-kubernetes-list-type: set/map`` compare in
  order, and ``date``/``date-time``/``duration``/``byte`` strings stay strings.
* Runtime cost is the worst case for the sizes observed in the object (see ``cost``), charged
  before evaluation, rather than cel-go's exact interpreter count.
* Kubernetes ``Quantity``/``URL``/``IP``/``CIDR``/``NamedFormat`` values are tagged maps (see
  ``library``). The bindings cannot return optionals from Python functions, so the calls of
  the ``format`` library that return them (and ``cel.@mapInsert``, which the bindings declare
  without implementing) are redirected in the checked syntax tree before evaluation. The
  strings extension is kapi's own, so that ``indexOf``/``lastIndexOf`` also take lists
  (``strings``); ``optional.unwrap`` is missing from cel-cpp.
* ``allOf`` branches carrying rules are not evaluated.
* cel-cpp (as bound) stops any evaluation after 10,000 comprehension iterations in total, with
  no option to raise it; kapi reports that as the per-call cost limit. cel-go would allow,
  e.g., ``all()`` over 10,000 items or two nested ``all()`` over 100 items each.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, TypeGuard

from cel_expr_python import cel

from kapi.apimachinery import field_errors
from kapi.apimachinery.field_errors import ErrorType, FieldError, Path
from kapi.validation.cel import cost
from kapi.validation.cel.compiler import (
    OLD_SELF,
    OLD_SELF_LIST,
    SELF,
    CompiledRule,
    compile_node,
    cost_error_message,
)

__all__ = ["CELValidator"]

_MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024
_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_KEY_NOT_FOUND = re.compile(r'^Key not found in map : "(.*)"$')
_ERROR = cel.Type.ERROR
_ITERATIONS = "Iteration budget exceeded"
_TOTAL_COST_NAME = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
_CONTRIBUTED = (
    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
)

OUT_OF_BUDGET = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)


@dataclass(slots=True)
class _Node:
    """Rules of one schema node and the children under which more rules live."""

    schema: dict[str, Any]
    rules: list[CompiledRule] = dataclass_field(default_factory=list)
    properties: dict[str, _Node] = dataclass_field(default_factory=dict)
    additional: _Node | None = None
    items: _Node | None = None


def _has_rules(s: Any) -> TypeGuard[dict[str, Any]]:
    if not isinstance(s, dict):
        return False
    if s.get("x-kubernetes-validations"):
        return True
    props = s.get("properties")
    if isinstance(props, dict) and any(_has_rules(p) for p in props.values()):
        return True
    return _has_rules(s.get("additionalProperties")) or _has_rules(s.get("items"))


def _times(cardinality: int | None, bound: Any) -> int | None:
    if cardinality is None or bound is None:
        return None
    return cardinality * max(0, bound)


@dataclass(slots=True)
class _Run:
    """State of one ``validate`` call: budget, errors and the sizes observed in the object."""

    budget: int
    errors: list[FieldError]
    sizes: dict[int, int]
    largest: int
    costs: dict[int, int] = dataclass_field(default_factory=dict)

    def size_of(self, schema: dict[str, Any]) -> int:
        return self.sizes.get(id(schema), 0)


class CELValidator:
    """All compiled ``x-kubernetes-validations`` rules of one schema tree."""

    def __init__(self, root: _Node) -> None:
        self._root = root

    @classmethod
    def compile(
        cls, schema: dict[str, Any], path: Path
    ) -> tuple[CELValidator | None, list[FieldError]]:
        """Compile every rule in the schema tree once.

        ``path`` is where the schema sits in the CRD; errors are CRD-validation errors
        (compile failures, malformed rules, estimated cost over the limits). Returns
        ``(None, [])`` when the schema has no rules.
        """
        if not _has_rules(schema):
            return None, []
        errors: list[FieldError] = []
        costs: list[tuple[Path, int]] = []

        def build(s: dict[str, Any], p: Path, cardinality: int | None, is_root: bool) -> _Node:
            node = _Node(s)
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
            for p, _ in heapq.nlargest(4, costs, key=lambda pc: pc[1]):
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
        return cls(root), errors

    def validate(
        self, new: Any, old: Any | None = None, path: Path | None = None
    ) -> list[FieldError]:
        """Evaluate all rules on a custom resource (root object), transition rules when ``old``
        is given, within upstream's per-call limit and per-resource budget."""
        sizes: dict[int, int] = {}
        _observe(self._root.schema, new, sizes)
        if old is not None:
            _observe(self._root.schema, old, sizes)
        run = _Run(cost.RUNTIME_CEL_COST_BUDGET, [], sizes, max(sizes.values(), default=0))
        _validate(self._root, new, old, path, run)
        return run.errors


def _observe(s: dict[str, Any] | None, value: Any, sizes: dict[int, int]) -> None:
    """Record the largest size of values at each schema node (the runtime cost inputs)."""
    if s is None or not isinstance(value, dict | list | str):
        return
    n = len(value.encode()) if isinstance(value, str) else len(value)
    if n > sizes.get(id(s), -1):
        sizes[id(s)] = n
    if isinstance(value, dict):
        for k, v in value.items():
            _observe(_child_schema(s, k), v, sizes)
    elif isinstance(value, list):
        items = s.get("items")
        items = items if isinstance(items, dict) else None
        for v in value:
            _observe(items, v, sizes)


def _child_schema(s: dict[str, Any], key: str) -> dict[str, Any] | None:
    props = s.get("properties")
    if isinstance(props, dict) and key in props:
        return props[key]
    ap = s.get("additionalProperties")
    return ap if isinstance(ap, dict) else None


def _validate(node: _Node, obj: Any, old: Any, path: Path | None, run: _Run) -> bool:
    """Validate one value and its children; False once the budget is exhausted."""
    if obj is None:
        return True
    if node.rules and not _evaluate_rules(node, obj, old, path, run):
        return False
    if isinstance(obj, dict):
        # Maps correlate by key (granular and atomic maps alike, as upstream).
        old_map = old if isinstance(old, dict) else {}
        for k, v in obj.items():
            child = node.properties.get(k) or (
                node.additional if k not in (node.schema.get("properties") or {}) else None
            )
            if child is not None and not _validate(
                child,
                v,
                old_map.get(k),
                field_errors.child_of(path, k) if child is not node.additional else _key(path, k),
                run,
            ):
                return False
    elif isinstance(obj, list) and node.items is not None:
        old_items = _correlatable_items(node.schema, old)
        keys = node.schema.get("x-kubernetes-list-map-keys") or []
        for i, v in enumerate(obj):
            prev = old_items.get(_map_key(v, keys)) if old_items else None
            p = Path("").index(i) if path is None else path.index(i)
            if not _validate(node.items, v, prev, p, run):
                return False
    return True


def _key(path: Path | None, k: str) -> Path:
    return Path("").key(k) if path is None else path.key(k)


def _map_key(item: Any, keys: list[str]) -> tuple[Any, ...] | None:
    if not isinstance(item, dict):
        return None
    return tuple(repr(item.get(k)) for k in keys)


def _correlatable_items(schema: dict[str, Any], old: Any) -> dict[Any, Any]:
    """Old items by key: only ``x-kubernetes-list-type: map`` lists correlate (as upstream)."""
    if schema.get("x-kubernetes-list-type") != "map" or not isinstance(old, list):
        return {}
    keys = schema.get("x-kubernetes-list-map-keys") or []
    return {_map_key(item, keys): item for item in old}


def _charge(run: _Run, compiled: CompiledRule, message: bool) -> int:
    key = id(compiled) * 2 + message
    c = run.costs.get(key)
    if c is None:
        ast = compiled.message_ast if message else compiled.ast
        assert ast is not None
        c = cost.CostEstimator(
            ast, compiled.schema, run.size_of, max(run.largest, 1), runtime=True
        ).estimate()
        run.costs[key] = c
    return c


def _eval_error(err: str) -> str:
    """cel-go's wording for the evaluation errors CRD authors meet most."""
    text = _STATUS_PREFIX.sub("", err)
    m = _KEY_NOT_FOUND.match(text)
    if m:
        return f"no such key: {m.group(1)}"
    if text.startswith("No matching overloads found"):
        return "no such overload"
    if text == "divide by zero":
        return "division by zero"
    return text


def _evaluate_rules(node: _Node, obj: Any, old: Any, path: Path | None, run: _Run) -> bool:
    type_name = node.schema.get("type", "")
    fld = field_errors.path_str(path)
    if run.budget <= 0:
        run.errors.append(field_errors.invalid(fld, type_name, OUT_OF_BUDGET))
        return False
    for compiled in node.rules:
        data = {SELF: obj, OLD_SELF: old}
        if compiled.uses_old_self and old is None and not compiled.optional_old_self:
            continue  # transition rules need an existing value to compare with
        charge = _charge(run, compiled, message=False)
        # cel-go cancels an evaluation just past the per-call limit: that is all it spends.
        spent = min(charge, cost.PER_CALL_LIMIT + 1)
        if spent > run.budget:
            run.errors.append(field_errors.invalid(fld, type_name, OUT_OF_BUDGET))
            return False
        run.budget -= spent
        if compiled.optional_old_self:
            data[OLD_SELF_LIST] = [] if old is None else [old]
        try:
            if charge > cost.PER_CALL_LIMIT:
                raise _CostLimitExceeded
            result = compiled.program.eval(data=data)
        except (_CostLimitExceeded, RuntimeError) as e:
            # cel-cpp stops runaway comprehensions with its own iteration budget: the same
            # outcome as cel-go's cost limit, reported the same way.
            if isinstance(e, RuntimeError) and _ITERATIONS not in str(e):
                raise
            run.errors.append(field_errors.invalid(fld, type_name, _call_cost_exceeded(compiled)))
            return False
        if result.type() == _ERROR:
            err = _eval_error(str(result.value()))
            if err.startswith("no such overload"):
                error_detail = (
                    f"'{err}': call arguments did not match a supported operator, function "
                    f"or macro signature for rule: {compiled.error_string}"
                )
            else:
                error_detail = f"{err} evaluating rule: {compiled.error_string}"
            run.errors.append(field_errors.invalid(fld, type_name, error_detail))
            continue
        if result.value() is True:
            continue
        where = fld
        if compiled.field_path:
            where = f"{fld}.{compiled.field_path}" if path is not None else compiled.field_path
        detail = None
        if compiled.message_program is not None:
            detail = _message(compiled, data, run)
            if run.budget < 0:
                run.errors.append(
                    field_errors.invalid(
                        where,
                        type_name,
                        (
                            "messageExpression evaluation failed due to running out of cost "
                            "budget, no further validation rules will be run"
                        ),
                    )
                )
                return False
        if detail is None:
            msg = (compiled.rule.get("message") or "").strip()
            detail = msg or f"failed rule: {compiled.error_string}"
        run.errors.append(_error_for_reason(compiled.rule.get("reason"), where, type_name, detail))
    return True


def _message(compiled: CompiledRule, data: dict[str, Any], run: _Run) -> str | None:
    """The evaluated messageExpression, or None to fall back to message (as upstream)."""
    charge = _charge(run, compiled, message=True)
    if charge > run.budget:
        run.budget = -1
        return None
    run.budget -= charge
    assert compiled.message_program is not None  # the caller checked
    result = compiled.message_program.eval(data=data)
    value = None if result.type() == _ERROR else result.value()
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or "\n" in text or len(text) > _MAX_MESSAGE_EXPRESSION_BYTES:
        return None
    return text


class _CostLimitExceeded(Exception):
    """The rule's runtime cost is over the per-call limit: it is not evaluated."""


def _call_cost_exceeded(compiled: CompiledRule) -> str:
    return (
        "'operation cancelled: actual cost limit exceeded': no further validation rules will "
        f"be run due to call cost exceeds limit for rule: {compiled.error_string}"
    )


def _error_for_reason(reason: str | None, where: str, type_name: str, detail: str) -> FieldError:
    if reason == ErrorType.FORBIDDEN.value:
        return field_errors.forbidden(where, detail)
    if reason == ErrorType.REQUIRED.value:
        return field_errors.required(where, detail)
    if reason == ErrorType.DUPLICATE.value:
        return field_errors.duplicate(where, type_name)
    return field_errors.invalid(where, type_name, detail)
