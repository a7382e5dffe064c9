"""Evaluation of a schema tree's CEL rules on a custom resource.

The walk follows upstream's ``Validator.Validate``: the new and old objects
are walked together so transition rules see ``oldSelf`` (maps correlate by
key, lists only when ``x-kubernetes-list-type: map``), each rule is charged
its estimated runtime cost against the per-call limit and the per-resource
budget, and evaluation errors and failed rules become field errors in
upstream's wording.

With CRD validation ratcheting (KEP-4008) an update also carries a
:class:`~kapi.validation.correlation.CorrelatedObject`: a failed rule without
``oldSelf`` whose value, or nearest ancestor that pairs with the old object,
is unchanged is not an error but a warning for the client. Evaluation errors
and transition rules are never forgiven, as upstream.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Final

from cel_expr_python import cel

from kapi.apimachinery import field_errors
from kapi.apimachinery.field_errors import OMIT_VALUE, ErrorType, FieldError, Path
from kapi.validation.cel import cost
from kapi.validation.cel.compiler import OLD_SELF, OLD_SELF_LIST, SELF, CompiledRule
from kapi.validation.cel.schema_rules import RuleNode
from kapi.validation.correlation import CorrelatedObject, MapList

_MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024
_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_KEY_NOT_FOUND = re.compile(r'^Key not found in map : "(.*)"$')
_ERROR = cel.Type.ERROR
_ITERATIONS = "Iteration budget exceeded"

OUT_OF_BUDGET = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)
_MESSAGE_OUT_OF_BUDGET = (
    "messageExpression evaluation failed due to running out of cost budget, "
    "no further validation rules will be run"
)


@dataclass(slots=True)
class RuleResults:
    """What the rules said: errors, and the failures forgiven by ratcheting (for warnings)."""

    errors: list[FieldError]
    ratcheted: list[FieldError]


@dataclass(slots=True)
class _Run:
    """State of one ``validate`` call: budget, errors and the sizes observed in the object."""

    budget: int
    errors: list[FieldError]
    sizes: dict[int, int]
    largest: int
    #: Whether a rule with ``optionalOldSelf`` runs without an old value (ratcheting's gate).
    optional_old_self: bool
    ratcheted: list[FieldError] = dataclass_field(default_factory=list)
    costs: dict[int, int] = dataclass_field(default_factory=dict)

    def size_of(self, schema: dict[str, Any]) -> int:
        return self.sizes.get(id(schema), 0)


@dataclass(frozen=True, slots=True)
class _Ratchet:
    """Where a node stands for ratcheting (upstream ``ratchetingOptions``).

    ``current`` pairs the node with its old value; when it does not pair,
    ``parent`` is the nearest ancestor that did, whose equality then decides.
    Both None: nothing is forgiven (no ratcheting, or the root's type fields).
    """

    current: CorrelatedObject | None = None
    parent: CorrelatedObject | None = None

    def forgives(self) -> bool:
        node = self.current if self.current is not None else self.parent
        return node is not None and node.equal()

    def key(self, name: str) -> _Ratchet:
        current = self.current
        if current is None:
            return self
        if self.parent is None and name in _TYPE_META:
            return _NO_RATCHET  # the root's type fields were rewritten by conversion
        return _Ratchet(current.key(name), current)

    def index(self, i: int) -> _Ratchet:
        current = self.current
        if current is None:
            return self
        return _Ratchet(current.index(i), current)


_NO_RATCHET: Final = _Ratchet()
_TYPE_META: Final = frozenset({"apiVersion", "kind"})


def validate_tree(
    root: RuleNode,
    new: Any,
    old: Any | None,
    path: Path | None,
    correlation: CorrelatedObject | None = None,
    *,
    optional_old_self: bool = True,
) -> RuleResults:
    """Evaluate all rules under ``root`` on ``new`` (and ``old`` for transition rules).

    ``correlation`` (an update with ratcheting on) pairs ``new`` with ``old``;
    ``optional_old_self`` is off only when ratcheting's gate is, as upstream
    ties the two together.
    """
    sizes: dict[int, int] = {}
    _observe(root.schema, new, sizes)
    if old is not None:
        _observe(root.schema, old, sizes)
    run = _Run(
        cost.RUNTIME_CEL_COST_BUDGET,
        [],
        sizes,
        max(sizes.values(), default=0),
        optional_old_self,
    )
    _validate(root, new, old, path, run, _Ratchet(correlation) if correlation else _NO_RATCHET)
    return RuleResults(run.errors, run.ratcheted)


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


def _validate(
    node: RuleNode, obj: Any, old: Any, path: Path | None, run: _Run, ratchet: _Ratchet
) -> bool:
    """Validate one value and its children; False once the budget is exhausted."""
    if obj is None:
        return True
    if node.rules and not _evaluate_rules(node, obj, old, path, run, ratchet):
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
                ratchet.key(k),
            ):
                return False
    elif isinstance(obj, list) and node.items is not None:
        # Only map-list items have an oldSelf: the old item with the same keys.
        old_items = MapList(node.schema, old)
        for i, v in enumerate(obj):
            prev = old_items.get(v)
            p = Path("").index(i) if path is None else path.index(i)
            if not _validate(node.items, v, prev, p, run, ratchet.index(i)):
                return False
    return True


def _key(path: Path | None, k: str) -> Path:
    return Path("").key(k) if path is None else path.key(k)


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


def _evaluate_rules(
    node: RuleNode, obj: Any, old: Any, path: Path | None, run: _Run, ratchet: _Ratchet
) -> bool:
    type_name = node.schema.get("type", "")
    # A failed rule names the value only when it is a scalar (upstream from 1.35).
    shown = OMIT_VALUE if type_name in ("object", "array") else obj
    fld = field_errors.path_str(path)
    if run.budget <= 0:
        run.errors.append(field_errors.invalid(fld, type_name, OUT_OF_BUDGET))
        return False
    for compiled in node.rules:
        data = {SELF: obj, OLD_SELF: old}
        if (
            compiled.uses_old_self
            and old is None
            and not (compiled.optional_old_self and run.optional_old_self)
        ):
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
        # Ratcheting forgives a failure of a rule that does not compare with oldSelf.
        failures = (
            run.ratcheted if not compiled.uses_old_self and ratchet.forgives() else run.errors
        )
        detail = None
        if compiled.message_program is not None:
            detail = _message(compiled, data, run)
            if run.budget < 0:
                failures.append(field_errors.invalid(where, type_name, _MESSAGE_OUT_OF_BUDGET))
                return False
        if detail is None:
            msg = (compiled.rule.get("message") or "").strip()
            detail = msg or f"failed rule: {compiled.error_string}"
        failures.append(_error_for_reason(compiled.rule.get("reason"), where, shown, detail))
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


def _error_for_reason(reason: str | None, where: str, value: Any, detail: str) -> FieldError:
    if reason == ErrorType.FORBIDDEN.value:
        return field_errors.forbidden(where, detail)
    if reason == ErrorType.REQUIRED.value:
        return field_errors.required(where, detail)
    if reason == ErrorType.DUPLICATE.value:
        return field_errors.duplicate(where, value)
    return field_errors.invalid(where, value, detail)
