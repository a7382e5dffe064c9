"""CEL cost: the worst-case estimate at CRD creation and the charge for one evaluation.

Upstream cel-go counts cost as it interprets (one unit per identifier, field selection and most
calls; a tenth of a unit per character for string work; comprehension bodies once per
iteration) and estimates the same model statically, taking sizes from ``maxItems``,
``maxProperties`` and ``maxLength`` or, where those are missing, from the largest request the
server accepts. cel-expr-python evaluates in C++ with no cost hook, so kapi applies one
estimator over the checked syntax tree twice:

* statically, with sizes from the schema, as upstream ``EstimateCost`` (limits at CRD creation);
* at runtime, with the sizes observed in the object being validated. The charge is the
  worst case for those sizes: branches that short-circuit are charged as if taken, so the
  charge is an upper bound of what cel-go would count for the same object, never below it.

The per-function weights follow cel-go's model in shape (constant, linear in string length,
linear in list length, comprehension = iterations x body); the exact constants of every
overload are not reproduced, so figures can differ from kube-apiserver's by small factors.
As in cel-go, a comprehension's accumulator is as large as its initial value, and the list or
map a comprehension builds (``map()``, ``transformList()``...) as large as the range it walks.
The ``sets`` functions, ``<format>.validate`` and ``ip.isCanonical`` use upstream's formulas.
Where cel-go's actual cost can exceed its own estimate (``validate`` of the ``uri`` format
runs a longer expression than the estimate assumes), the runtime charge takes the actual
formula for the worst case.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

from kapi.apimachinery.unstructured import Object as Schema
from kapi.validation.cel import checked, library
from kapi.validation.cel.checked import Node

#: Largest request body kube-apiserver accepts; bounds sizes the schema leaves open.
MAX_REQUEST_SIZE_BYTES: Final = 3 * 1024 * 1024
#: Runtime limit of one evaluation (celconfig.PerCallLimit).
PER_CALL_LIMIT: Final = 1_000_000
#: Runtime budget for all rules of one custom resource (celconfig.RuntimeCELCostBudget).
RUNTIME_CEL_COST_BUDGET: Final = 10_000_000
#: Largest estimated cost of one rule at CRD creation.
STATIC_ESTIMATED_COST_LIMIT: Final = 10_000_000
#: Largest estimated cost of all rules of a CRD version's schema.
STATIC_ESTIMATED_CRD_COST_LIMIT: Final = 100_000_000

_LIST_CREATE_COST: Final = 10
_MAP_CREATE_COST: Final = 30
_STRING_TRAVERSAL_FACTOR: Final = 0.1
_REGEX_FACTOR: Final = 0.25

_STRING_FUNCTIONS: Final = frozenset(
    {
        "contains",
        "startsWith",
        "endsWith",
        "lowerAscii",
        "upperAscii",
        "trim",
        "replace",
        "split",
        "substring",
        "indexOf",
        "lastIndexOf",
        "url",
        "isURL",
        "quantity",
        "isQuantity",
        "ip",
        "isIP",
        "cidr",
        "isCIDR",
        "string",
    }
)
_REGEX_FUNCTIONS: Final = frozenset({"matches", "find", "findAll"})
_LIST_FUNCTIONS: Final = frozenset({"isSorted", "sum", "min", "max", "join", "_in_"})
#: Searches of a string, or of a list when called on one (Kubernetes' lists library).
_LIST_SEARCHES: Final = frozenset({"indexOf", "lastIndexOf"})
#: Upstream's ``MaxNameFormatRegexSize``: the regex length ``validate`` is estimated with.
_MAX_NAME_FORMAT_REGEX_SIZE: Final = 128
_MAX_FORMAT_REGEX_SIZE: Final = max(f.max_regex_size for f in library.FORMATS.values())

#: Maximum size (list items, map entries, string bytes) of values at a schema node.
SizeOf = Callable[[Schema], int]


def min_serialized_size(s: Schema) -> int:
    """Smallest JSON encoding of a value of this schema (upstream ``MinSerializedSize``)."""
    t = s.get("type")
    if s.get("x-kubernetes-int-or-string") or t in ("integer", "number"):
        return 1
    if t == "boolean":
        return 4
    if t == "string":
        return 2
    if t == "object" and isinstance(s.get("properties"), dict):
        required = set(s.get("required") or ())
        size = 2
        for name, prop in s["properties"].items():
            if name in required and "default" not in prop:
                size += len(name) + min_serialized_size(prop) + 4
        return size
    return 2


def static_size(s: Schema) -> int:
    """The size bound upstream derives from the schema alone."""
    t = s.get("type")
    if t == "array":
        if s.get("maxItems") is not None:
            return max(0, s["maxItems"])
        items = s.get("items")
        if not isinstance(items, dict):
            items = {}
        return (MAX_REQUEST_SIZE_BYTES - 2) // (min_serialized_size(items) + 1)
    if t == "object":
        if s.get("maxProperties") is not None:
            return max(0, s["maxProperties"])
        ap = s.get("additionalProperties")
        value = ap if isinstance(ap, dict) else {}
        return (MAX_REQUEST_SIZE_BYTES - 2) // (min_serialized_size(value) + 6)
    if t == "string":
        if s.get("maxLength") is not None:
            return max(0, s["maxLength"]) * 4
        if s.get("enum"):
            return max((len(v) for v in s["enum"] if isinstance(v, str)), default=0)
        fmt = s.get("format")
        if fmt in ("duration", "date-time"):
            return 32
        if fmt == "date":
            return 12
    return MAX_REQUEST_SIZE_BYTES - 2


def max_cardinality(s: Schema) -> int:
    """How often a rule could run when an enclosing list or map is unbounded."""
    return MAX_REQUEST_SIZE_BYTES // (min_serialized_size(s) + 1)


def _element_schema(s: Schema | None) -> Schema | None:
    if s is None:
        return None
    if s.get("type") == "array":
        items = s.get("items")
        return items if isinstance(items, dict) else None
    if s.get("type") == "object":
        return {"type": "string"}  # comprehensions over maps range over keys
    return None


def _value_schema(s: Schema | None) -> Schema | None:
    """The second variable of a two-variable comprehension: list element or map value."""
    if s is not None and s.get("type") == "object":
        ap = s.get("additionalProperties")
        return ap if isinstance(ap, dict) else None
    return _element_schema(s)


def _field_schema(s: Schema | None, name: str) -> Schema | None:
    if s is None:
        return None
    props = s.get("properties")
    if isinstance(props, dict) and name in props:
        return props[name]
    ap = s.get("additionalProperties")
    return ap if isinstance(ap, dict) else None


class CostEstimator:
    """Worst-case cost of one checked expression, given a size for each schema node."""

    def __init__(
        self,
        expr: checked.CheckedExpr,
        schema: Schema,
        size_of: SizeOf,
        unknown_size: int,
        *,
        runtime: bool = False,
    ) -> None:
        self._size_of = size_of
        self._unknown = unknown_size
        self._root_schema = schema
        self._expr = expr
        self._runtime = runtime
        # Sizes of the comprehension accumulators in scope: as cel-go, that of their initial value.
        self._accumulators: dict[str, int | None] = {}

    def estimate(self) -> int:
        scope: dict[str, Schema | None] = {"self": self._root_schema, "oldSelf": self._root_schema}
        return self._cost(self._expr.root, scope)[0]

    def _size(self, schema: Schema | None, literal: int | None) -> int:
        if literal is not None:
            return literal
        return self._unknown if schema is None else self._size_of(schema)

    def _cost(
        self, n: Node, scope: dict[str, Schema | None]
    ) -> tuple[int, Schema | None, int | None]:
        """(cost, schema of the result when known, size of the result when known otherwise:
        literals and the lists or maps comprehensions build)."""
        kind = n.kind
        if kind == checked.CONST:
            lit = len(n.value) if isinstance(n.value, str | bytes) else None
            return 0, None, lit
        if kind == checked.IDENT:
            accumulators = self._accumulators
            return 1, scope.get(n.name), accumulators.get(n.name) if accumulators else None
        if kind == checked.SELECT:
            assert n.operand is not None
            c, s, _ = self._cost(n.operand, scope)
            return c + 1, None if n.test_only else _field_schema(s, n.name), None
        if kind == checked.LIST:
            return (
                _LIST_CREATE_COST + sum(self._cost(a, scope)[0] for a in n.args),
                None,
                len(n.args),
            )
        if kind == checked.STRUCT:
            return _MAP_CREATE_COST + sum(self._cost(a, scope)[0] for a in n.args), None, None
        if kind == checked.COMPREHENSION:
            return self._comprehension(n, scope)
        return self._call(n, scope)

    def _comprehension(
        self, n: Node, scope: dict[str, Schema | None]
    ) -> tuple[int, None, int | None]:
        assert n.iter_range is not None
        range_cost, range_schema, range_lit = self._cost(n.iter_range, scope)
        iterations = self._size(range_schema, range_lit)
        inner = dict(scope)
        if n.iter_var2:
            keyed = range_schema is not None and range_schema.get("type") == "object"
            inner[n.iter_var] = _element_schema(range_schema) if keyed else None
            inner[n.iter_var2] = _value_schema(range_schema)
        else:
            inner[n.iter_var] = _element_schema(range_schema)
        inner[n.accu_var] = None
        init_cost, _, init_size = self._cost(n.accu_init, scope) if n.accu_init else (0, None, None)
        outer_accumulator = self._accumulators.get(n.accu_var)
        self._accumulators[n.accu_var] = init_size
        body = sum(self._cost(x, inner)[0] for x in (n.loop_condition, n.loop_step) if x)
        result = self._cost(n.result, inner)[0] if n.result else 0
        self._accumulators[n.accu_var] = outer_accumulator
        # As cel-go: a comprehension building a list or map (map(), filter(), transformList()...)
        # has at most as many entries as it iterates.
        builds = n.accu_init is not None and n.accu_init.kind in (checked.LIST, checked.STRUCT)
        total = range_cost + init_cost + result + iterations * body
        return total, None, iterations if builds else None

    def _call(self, n: Node, scope: dict[str, Schema | None]) -> tuple[int, Schema | None, None]:
        parts = [self._cost(a, scope) for a in ([n.operand] if n.operand else []) + n.args]
        fn = n.name
        if fn == "_?_:_":
            return parts[0][0] + max(parts[1][0], parts[2][0]), None, None
        cost = sum(p[0] for p in parts)
        sizes = [self._size(s, lit) for _, s, lit in parts]
        if fn in ("_&&_", "_||_", "@not_strictly_false"):
            return cost, None, None
        if fn == "_[_]":
            container = parts[0][1]
            elem = (
                _element_schema(container)
                if container and container.get("type") == "array"
                else _field_schema(container, str(n.args[1].value))
            )
            return cost + 1, elem, None
        if fn in ("_==_", "_!=_", "_+_") and any(
            lit is not None or (s and s.get("type") in ("string", "array")) for _, s, lit in parts
        ):
            return cost + 1 + math.ceil(_STRING_TRAVERSAL_FACTOR * max(sizes)), None, None
        if fn in _REGEX_FUNCTIONS:
            pattern = sizes[-1]
            return (
                cost
                + 1
                + math.ceil(
                    _STRING_TRAVERSAL_FACTOR * sizes[0] * max(1.0, _REGEX_FACTOR * pattern)
                ),
                None,
                None,
            )
        formula = _FORMULAS.get(fn)
        own = formula(n, sizes, self._runtime) if formula is not None else None
        if own is not None:
            return cost + own, None, None
        if fn in _LIST_FUNCTIONS or (fn in _LIST_SEARCHES and _is_list(parts[0][1])):
            return cost + 1 + (sizes[-1] if fn == "_in_" else sizes[0]), None, None
        if fn in _STRING_FUNCTIONS:
            return cost + 1 + math.ceil(_STRING_TRAVERSAL_FACTOR * max(sizes or [0])), None, None
        return cost + 1, None, None


#: A function's own cost from its call node, the sizes of its target and arguments and whether
#: the charge is for an evaluation; None where the general rules apply.
Formula = Callable[[Node, list[int], bool], int | None]


def _is_list(schema: Schema | None) -> bool:
    return schema is not None and schema.get("type") == "array"


def _sets(factor: int) -> Formula:
    """cel-go ext.Sets: the product of the two list sizes, times ``factor``."""
    return lambda n, sizes, runtime: 1 + sizes[0] * sizes[1] * factor


def _validate(n: Node, sizes: list[int], runtime: bool) -> int | None:
    """``<format>.validate(s)``: a regex over ``s``, as upstream estimates and counts it.

    The estimate assumes a 128-character regex; the actual cost uses the format's own
    estimate (the ``uri`` format's exceeds 128), known here when the target is a
    ``format.<name>()`` call, else the largest.
    """
    if n.operand is None:
        return None
    size = sizes[1]
    if not runtime:
        traversal = math.ceil(_STRING_TRAVERSAL_FACTOR * size)
        return math.ceil(traversal * _MAX_NAME_FORMAT_REGEX_SIZE * _REGEX_FACTOR)
    target = n.operand
    name = library.format_name(target.name) if target.kind == checked.CALL else None
    regex = library.FORMATS[name].max_regex_size if name else _MAX_FORMAT_REGEX_SIZE
    traversal = math.ceil(_STRING_TRAVERSAL_FACTOR * (1 + size))
    return traversal * math.ceil(regex * _REGEX_FACTOR)


_FORMULAS: Final[dict[str, Formula]] = {
    "sets.contains": _sets(1),
    "sets.intersects": _sets(1),
    "sets.equivalent": _sets(2),
    "validate": _validate,
    # cidr.ip() reads a field; ip(string) parses, as the other string functions.
    "ip": lambda n, sizes, runtime: 1 if n.operand is not None else None,
    # ip.isCanonical parses, then compares with the original.
    "ip.isCanonical": lambda n, sizes, runtime: math.ceil(2 * _STRING_TRAVERSAL_FACTOR * sizes[0]),
}
