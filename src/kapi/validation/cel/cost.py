"""CEL cost: the worst-case estimate at CRD creation and the charge for one evaluation.

Upstream cel-go counts cost as it interprets (one unit per identifier, field selection and most
calls; a tenth of a unit per character for string work; comprehension bodies once per
iteration) and its checker estimates the same model statically, as a range (least and most)
of costs computed from a range of sizes for every string, list and map. Sizes come from
``maxItems``, ``maxProperties`` and ``maxLength`` (four bytes per character) or, where those
are missing, from the largest request the server accepts; Kubernetes adds the prices of its own
libraries. cel-expr-python evaluates in C++ with no cost hook, so kapi walks the checked
syntax tree with the same rules, twice:

* statically, with the sizes upstream gives each schema node (its ``DeclType.MaxElements``):
  the upper end of the range is upstream's ``EstimateCost(...).Max``, the figure the limits at
  CRD creation are checked against;
* at runtime, with the sizes observed in the object being validated. The charge is the upper
  end of the estimate for those sizes: branches that short-circuit are charged as if taken.

The walk follows cel-go's checker (``checker/cost.go``): sizes flow through field paths
(``self.spec.items`` is looked up in the schema, comprehension variables take the size of the
items, keys or values they range over), through literals, and through the results of calls
that report one (``+``, ``replace``, ``split``, the list-building macros...). ``==`` and the
ordering of strings are priced by the smaller operand, ``startsWith`` and ``endsWith`` by the
argument, ``contains`` and ``matches`` by the product of both sides. Kubernetes' library
functions (lists, regex, strings, quantity, IP, CIDR, URL, format) are priced as
``k8s.io/apiserver/pkg/cel/library/cost.go`` prices them, the ``sets`` functions as cel-go's
extension does. Where kapi's checker knows a value only as ``dyn`` (it types objects as maps
of ``dyn`` and numbers as ``dyn``), the type upstream would have checked is taken from the
schema, or from the function that produced the value.

Where kapi's checker cannot tell what upstream's could, the estimate errs high: a value kapi
types as ``dyn`` or as an optional, with no schema path and no function to tell its type (a
number computed from other numbers, ``optional.of(1)``), counts as of unknown size where
upstream would count a scalar as of size 1.

One figure differs on purpose at runtime: ``validate`` of the ``uri`` format runs a longer
regular expression than upstream's estimate assumes, so the charge uses the actual length.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

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
#: cel-go's unknown size: any size a 64-bit unsigned integer can hold. Costs saturate there.
UNKNOWN_SIZE: Final = 2**64 - 1

_MAX: Final = UNKNOWN_SIZE
_TWO_TO_64: Final = float(2**64)
_LIST_CREATE_COST: Final = 10
_MAP_CREATE_COST: Final = 30
_STRING_TRAVERSAL_FACTOR: Final = 0.1
_REGEX_FACTOR: Final = 0.25
#: Upstream's ``MaxNameFormatRegexSize``: the regex length ``validate`` is estimated with.
_MAX_NAME_FORMAT_REGEX_SIZE: Final = 128
_MAX_FORMAT_REGEX_SIZE: Final = max(f.max_regex_size for f in library.FORMATS.values())
#: Upstream's ``MaxFormatSize``: the longest format name, what comparing two formats costs.
_MAX_FORMAT_SIZE: Final = 64
#: Longest object name (DNS subdomain): upstream bounds ``metadata.name`` of resources with it.
_NAME_MAX_LENGTH: Final = 253
#: A ``selector`` requirement is at least two characters; each costs a struct and a list.
_SELECTOR_LENGTH_TO_REQUIREMENTS: Final = 0.5
_COST_PER_REQUIREMENT: Final = 10 + 40
#: Fixed cost of ``authorizer...check()``: two checks per expression at most.
_AUTHZ_CHECK_COST: Final = 350_000

#: Maximum size (list items, map entries, string bytes) of values at a schema node.
SizeOf = Callable[[Schema], int]


# --- schema sizes, as upstream's DeclType ---------------------------------------------------


def min_serialized_size(s: Schema) -> int:
    """Smallest JSON encoding of a value of this schema (upstream ``MinSerializedSize``)."""
    t = s.get("type")
    if s.get("x-kubernetes-int-or-string") or t in ("integer", "number"):
        return 1
    if t == "boolean":
        return 4
    if t == "string":
        return {"duration": 3, "date": 12, "date-time": 21}.get(s.get("format") or "", 2)
    if t == "object" and isinstance(s.get("properties"), dict):
        required = set(s.get("required") or ())
        size = 2
        for name, prop in s["properties"].items():
            if name in required and "default" not in prop and _declared(prop):
                size += len(name) + min_serialized_size(prop) + 4
        return size
    return 2


def _declared(s: object) -> bool:
    """Whether upstream gives the schema node a CEL type (``SchemaDeclType`` not nil)."""
    if not isinstance(s, dict):
        return False
    if s.get("x-kubernetes-int-or-string"):
        return True
    t = s.get("type")
    if t == "array":
        return _declared(s.get("items"))
    if t == "object":
        ap = s.get("additionalProperties")
        return _declared(ap) if isinstance(ap, dict) else True
    return t in ("string", "boolean", "number", "integer")


def _is_map(s: Schema) -> bool:
    return s.get("type") == "object" and isinstance(s.get("additionalProperties"), dict)


def static_size(s: Schema) -> int:
    """The size bound upstream derives from the schema alone (``DeclType.MaxElements``)."""
    t = s.get("type")
    max_length = s.get("maxLength")
    if s.get("x-kubernetes-int-or-string"):
        return max(0, max_length) * 4 if max_length is not None else MAX_REQUEST_SIZE_BYTES - 2
    if t == "array":
        if s.get("maxItems") is not None:
            return max(0, s["maxItems"])
        items = s.get("items")
        return (MAX_REQUEST_SIZE_BYTES - 2) // (
            min_serialized_size(items if isinstance(items, dict) else {}) + 1
        )
    if t == "object":
        if not _is_map(s):
            return 0
        if s.get("maxProperties") is not None:
            return max(0, s["maxProperties"])
        return (MAX_REQUEST_SIZE_BYTES - 2) // (min_serialized_size(s["additionalProperties"]) + 6)
    if t == "string":
        fmt = s.get("format")
        if fmt == "byte":
            return max(0, max_length) if max_length is not None else MAX_REQUEST_SIZE_BYTES - 2
        if fmt in ("duration", "date-time"):
            return 32
        if fmt == "date":
            return 12
        if max_length is not None:
            return max(0, max_length) * 4
        if s.get("enum"):
            return max((len(v.encode()) for v in s["enum"] if isinstance(v, str)), default=0)
        return MAX_REQUEST_SIZE_BYTES - 2
    return 0


def max_cardinality(s: Schema) -> int:
    """How often a rule could run when an enclosing list or map is unbounded."""
    return MAX_REQUEST_SIZE_BYTES // (min_serialized_size(s) + 1)


# --- ranges ---------------------------------------------------------------------------------


def _add(x: int, y: int) -> int:
    return min(x + y, _MAX)


def _mul(x: int, y: int) -> int:
    return min(x * y, _MAX)


def _times(x: int, factor: float) -> int:
    """``x * factor`` rounded up, as cel-go's ``multiplyByCostFactor`` (float64 arithmetic)."""
    xf = float(x)
    if xf > 0 and factor > 0 and xf > _TWO_TO_64 / factor:
        return _MAX
    product = math.ceil(xf * factor)
    return _MAX if product >= _TWO_TO_64 else product


class Range(NamedTuple):
    """A range of costs or sizes (cel-go's ``CostEstimate`` and ``SizeEstimate``)."""

    lo: int
    hi: int

    def add(self, other: Range) -> Range:
        return Range(_add(self.lo, other.lo), _add(self.hi, other.hi))

    def mul(self, other: Range) -> Range:
        return Range(_mul(self.lo, other.lo), _mul(self.hi, other.hi))

    def times(self, factor: float) -> Range:
        return Range(_times(self.lo, factor), _times(self.hi, factor))

    def union(self, other: Range) -> Range:
        return Range(min(self.lo, other.lo), max(self.hi, other.hi))


def _fixed(n: int) -> Range:
    return Range(n, n)


_ZERO: Final = Range(0, 0)
_ONE: Final = Range(1, 1)
_UNKNOWN: Final = Range(0, _MAX)


@dataclass(frozen=True, slots=True)
class _Entries:
    """Sizes of the keys (indexes) and values of a list or map built in the expression."""

    kind: str  # "list" or "map"
    key: Range
    val: Range

    def union(self, other: _Entries | None) -> _Entries | None:
        if other is None:
            return None
        return _Entries(self.kind, self.key.union(other.key), self.val.union(other.val))


@dataclass(frozen=True, slots=True)
class _Local:
    path: tuple[str, ...] | None
    size: Range | None
    entries: _Entries | None


class _Arg(NamedTuple):
    """What a function's price sees of one operand (cel-go's ``AstNode``)."""

    node: Node | None
    path: tuple[str, ...] | None
    kind: str  # the type upstream would have checked (see ``_kind``)
    size: Range | None  # the computed size, None when only the schema could tell


#: Checked type names as kapi's checker reports them, as the kinds the prices test.
_TYPE_KINDS: Final = {
    "google.protobuf.Timestamp": "timestamp",
    "google.protobuf.Duration": "duration",
}
_SCALARS: Final = frozenset({"bool", "double", "duration", "int", "timestamp", "uint"})
#: Types of values built by Kubernetes' libraries, which kapi's checker knows only as maps;
#: named after the function that returns them.
_LIBRARY_RESULTS: Final = {
    "ip": "net.IP",
    "cidr": "net.CIDR",
    "masked": "net.CIDR",
    "quantity": "kubernetes.Quantity",
    "add": "kubernetes.Quantity",
    "sub": "kubernetes.Quantity",
    "url": "kubernetes.URL",
}
_NOMINAL: Final = frozenset(
    {
        "serviceAccount",
        "path",
        "group",
        "resource",
        "subresource",
        "namespace",
        "name",
        "allowed",
        "reason",
        "error",
        "errored",
        "masked",
        "prefixLength",
        "family",
        "isUnspecified",
        "isLoopback",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "isGlobalUnicast",
        "format.named",
        "sign",
        "asInteger",
        "isInteger",
        "asApproximateFloat",
        "isGreaterThan",
        "isLessThan",
        "compareTo",
        "add",
        "sub",
        "major",
        "minor",
        "patch",
        "getScheme",
        "getHostname",
        "getHost",
        "getPort",
        "getEscapedPath",
        "getQuery",
    }
)
_STRING_ORDERING: Final = frozenset(
    f"{op}_{t}"
    for op in ("less", "greater", "less_equals", "greater_equals")
    for t in ("string", "bytes")
)


def _metadata(declared: object) -> Schema:
    """The ``metadata`` upstream declares for a resource: names bounded by their maxLength."""
    props = declared.get("properties") if isinstance(declared, dict) else None
    props = props if isinstance(props, dict) else {}

    def capped(name: str, limit: int) -> Schema:
        existing = props.get(name)
        ml = existing.get("maxLength") if isinstance(existing, dict) else None
        return {"type": "string", "maxLength": limit if ml is None else min(ml, limit)}

    return {
        "type": "object",
        "properties": {
            "name": capped("name", _NAME_MAX_LENGTH),
            "generateName": capped("generateName", _NAME_MAX_LENGTH - 1),
        },
    }


def _has_type_and_meta(s: Schema) -> bool:
    props = s.get("properties")
    if not isinstance(props, dict):
        return False

    def typ(p: object) -> object:
        return p.get("type") if isinstance(p, dict) else None

    meta = props.get("metadata")
    mprops = meta.get("properties") if isinstance(meta, dict) else None
    return (
        typ(props.get("kind")) == "string"
        and typ(props.get("apiVersion")) == "string"
        and typ(meta) == "object"
        and isinstance(mprops, dict)
        and typ(mprops.get("name")) == "string"
        and typ(mprops.get("generateName")) == "string"
    )


class CostEstimator:
    """Cost of one checked expression, given a size for each schema node.

    ``size_of`` gives the size of values at a schema node (``static_size`` at CRD creation,
    the sizes observed in the object at runtime); ``unknown_size`` bounds values whose schema
    is unknown. ``resource_root`` says the schema is the root of a resource (or an embedded
    one), whose ``metadata.name`` upstream bounds by the longest object name.
    """

    def __init__(
        self,
        expr: checked.CheckedExpr,
        schema: Schema,
        size_of: SizeOf,
        unknown_size: int,
        *,
        runtime: bool = False,
        resource_root: bool = False,
    ) -> None:
        self._expr = expr
        self._root = schema
        self._size_of = size_of
        self._unknown = Range(0, min(unknown_size, _MAX))
        self._runtime = runtime
        self._resource_root = resource_root
        self._paths: dict[int, tuple[str, ...] | None] = {}
        self._sizes: dict[int, Range] = {}
        self._entries: dict[int, _Entries] = {}
        self._locals: dict[str, list[_Local]] = {}
        # Schema nodes made up for resources (kind, apiVersion, metadata): never observed.
        self._synthetic: dict[tuple[object, ...], Schema] = {}
        self._resolved: dict[tuple[str, ...], Schema | None] = {}
        self._kinds: dict[int, str] = {}

    def estimate(self) -> int:
        """The most the expression can cost (upper end of upstream's estimate)."""
        return self.estimate_range().hi

    def estimate_range(self) -> Range:
        return self._cost(self._expr.root)

    # --- schema lookups ----------------------------------------------------------------------

    def _field(self, s: Schema, name: str, resource: bool) -> Schema | None:
        if resource and not _has_type_and_meta(s):
            if name in ("kind", "apiVersion"):
                return self._made_up(("string",), {"type": "string"})
            if name == "metadata":
                props = s.get("properties")
                declared = props.get("metadata") if isinstance(props, dict) else None
                return self._made_up(("metadata", id(s)), _metadata(declared))
        if s.get("type") != "object" or _is_map(s):
            return None
        props = s.get("properties")
        prop = props.get(name) if isinstance(props, dict) else None
        return prop if _declared(prop) else None

    def _made_up(self, key: tuple[object, ...], s: Schema) -> Schema:
        return self._synthetic.setdefault(key, s)

    def _resolve(self, path: tuple[str, ...] | None) -> Schema | None:
        """The schema node a field path leads to, as upstream's size estimator walks it."""
        if not path:
            return None
        try:
            return self._resolved[path]
        except KeyError:
            s = self._resolved[path] = self._walk(path)
            return s

    def _walk(self, path: tuple[str, ...]) -> Schema | None:
        s: Schema | None = self._root
        resource = self._resource_root
        for name in path[1:]:
            if s is None:
                return None
            if name in ("@items", "@values"):
                t = s.get("type")
                inner = (
                    s.get("items")
                    if t == "array"
                    else s.get("additionalProperties")
                    if _is_map(s)
                    else None
                )
                s = inner if _declared(inner) else None
                resource = bool(s and s.get("x-kubernetes-embedded-resource"))
            elif name == "@keys":
                return _MAP_KEY if _is_map(s) else None
            else:
                s = self._field(s, name, resource)
                resource = bool(s and s.get("x-kubernetes-embedded-resource"))
        return s

    def _schema_size(self, s: Schema) -> Range:
        if s is _MAP_KEY:
            return _ZERO
        if self._runtime:
            if any(v is s for v in self._synthetic.values()):
                return self._unknown
            if s.get("type") in ("boolean", "number", "integer") or (
                s.get("type") == "object" and not _is_map(s)
            ):
                return _ZERO
        return Range(0, min(self._size_of(s), _MAX))

    def _estimate_size(self, path: tuple[str, ...] | None) -> Range | None:
        s = self._resolve(path)
        return None if s is None else self._schema_size(s)

    # --- kinds ---------------------------------------------------------------------------------

    def _kind(self, n: Node) -> str:
        """The kind of type upstream's checker gives the node: from the schema when the node
        reads the object, else from kapi's checker or the function that built the value.
        Asked once the node's path is known, which then does not change."""
        kind = self._kinds.get(n.id)
        if kind is None:
            kind = self._kinds[n.id] = self._kind_of(n)
        return kind

    def _kind_of(self, n: Node) -> str:
        s = self._resolve(self._path(n))
        if s is not None and s is not _MAP_KEY:
            if s.get("x-kubernetes-int-or-string"):
                return "dyn"
            t = s.get("type")
            if t == "object":
                return "map" if _is_map(s) else "struct"
            return {
                "array": "list",
                "string": "string",
                "boolean": "bool",
                "number": "double",
                "integer": "int",
            }.get(t or "", "dyn")
        if s is _MAP_KEY:
            return "string"
        t = self._expr.types.get(n.id, "dyn")
        if n.kind == checked.CALL:
            made = _LIBRARY_RESULTS.get(n.name)
            if made is not None and (n.name != "ip" or n.operand is None or n.args):
                return made
            if n.name == "ip":  # cidr.ip()
                return "net.IP"
            if library.format_name(n.name) or (
                n.name in ("value", "orValue")
                and n.operand is not None
                and n.operand.kind == checked.CALL
                and n.operand.name == "format.named"
            ):
                return "kubernetes.NamedFormat"
        return _TYPE_KINDS.get(t, t)

    # --- paths, sizes and scopes ------------------------------------------------------------

    def _path(self, n: Node) -> tuple[str, ...] | None:
        if n.kind == checked.IDENT:
            local = self._peek(n.name)
            if local is not None:
                return local.path
        return self._paths.get(n.id)

    def _peek(self, name: str) -> _Local | None:
        stack = self._locals.get(name)
        return stack[-1] if stack else None

    def _push(self, name: str, local: _Local) -> None:
        self._locals.setdefault(name, []).append(local)

    def _pop(self, name: str) -> None:
        self._locals[name].pop()

    def _size(self, n: Node) -> Range | None:
        """cel-go's ``computeSize``: computed, literal, from the schema, scalar, or local."""
        known = self._sizes.get(n.id)
        if known is not None:
            return known
        literal = _literal_size(n)
        if literal is not None:
            return literal
        estimated = self._estimate_size(self._path(n))
        if estimated is not None:
            self._sizes[n.id] = estimated
            return estimated
        if self._kind(n) in _SCALARS:
            return _ONE
        if n.kind == checked.IDENT:
            local = self._peek(n.name)
            if local is not None and local.size is not None:
                return local.size
        return None

    def _size_or_unknown(self, n: Node) -> Range:
        size = self._size(n)
        return self._unknown_range() if size is None else size

    def _unknown_range(self) -> Range:
        return self._unknown

    def _entry_size(self, n: Node) -> _Entries | None:
        known = self._entries.get(n.id)
        if known is not None:
            return known
        if n.kind == checked.IDENT:
            local = self._peek(n.name)
            if local is not None:
                return local.entries
        return None

    def _set_size(self, n: Node, size: Range | None) -> None:
        if size is not None:
            self._sizes[n.id] = size

    def _set_entries(self, n: Node, entries: _Entries | None) -> None:
        if entries is not None:
            self._entries[n.id] = entries

    def _arg(self, n: Node) -> _Arg:
        path = self._path(n)
        if path and path[0].startswith("@"):
            path = None  # accumulators: no path is given to prices
        return _Arg(n, path, self._kind(n), self._size(n))

    def _arg_size(self, a: _Arg) -> Range:
        """Kubernetes' and the extensions' ``sizeEstimate``: computed, else by path."""
        if a.size is not None:
            return a.size
        estimated = self._estimate_size(a.path)
        return self._unknown_range() if estimated is None else estimated

    # --- the walk ----------------------------------------------------------------------------

    def _cost(self, n: Node | None) -> Range:
        if n is None:
            return _ZERO
        kind = n.kind
        if kind == checked.CONST:
            return _ZERO
        if kind == checked.IDENT:
            local = self._peek(n.name)
            self._paths[n.id] = local.path if local is not None else (n.name,)
            return _ONE
        if kind == checked.SELECT:
            assert n.operand is not None
            if n.test_only:  # has(): Kubernetes prices the presence test at 0
                return self._cost(n.operand)
            c = self._cost(n.operand)
            if self._kind(n.operand) in ("map", "struct"):
                c = c.add(_ONE)
            operand_path = self._path(n.operand)
            self._paths[n.id] = (*(operand_path or ()), n.name)
            return c
        if kind == checked.LIST:
            return self._create_list(n)
        if kind == checked.STRUCT:
            return self._create_map(n)
        if kind == checked.COMPREHENSION:
            return self._bind(n) if _is_bind(n) else self._comprehension(n)
        return self._call(n)

    def _create_list(self, n: Node) -> Range:
        total = _ZERO
        items = Range(_MAX, 0) if n.args else _ZERO
        for a in n.args:
            total = total.add(self._cost(a))
            items = items.union(self._size_or_unknown(a))
        self._set_entries(n, _Entries("list", _ONE, items))
        return total.add(_fixed(_LIST_CREATE_COST))

    def _create_map(self, n: Node) -> Range:
        total = _ZERO
        keys = Range(_MAX, 0) if n.args else _ZERO
        vals = keys
        for k, v in zip(n.args[::2], n.args[1::2], strict=True):
            total = total.add(self._cost(k)).add(self._cost(v))
            keys = keys.union(self._size_or_unknown(k))
            vals = vals.union(self._size_or_unknown(v))
        self._set_entries(n, _Entries("map", keys, vals))
        return total.add(_fixed(_MAP_CREATE_COST))

    def _container(self, range_node: Node) -> str:
        entries = self._entry_size(range_node)
        if entries is not None:
            return entries.kind
        k = self._kind(range_node)
        return "list" if k == "list" else "map" if k in ("map", "struct") else k

    def _comprehension(self, n: Node) -> Range:
        assert n.iter_range is not None
        rng = n.iter_range
        total = self._cost(rng).add(self._cost(n.accu_init))
        init = n.accu_init
        self._push(
            n.accu_var,
            _Local(
                self._path(init) if init else None,
                self._size(init) if init else None,
                self._entry_size(init) if init else None,
            ),
        )
        entries = self._entry_size(rng)
        container = self._container(rng)
        range_path = self._path(rng)
        if n.iter_var2:
            key_sub, val_sub = (
                ("@indices", "@items") if container == "list" else ("@keys", "@values")
            )
            self._push(
                n.iter_var,
                _Local(_extend(range_path, key_sub), entries.key if entries else None, None),
            )
            self._push(
                n.iter_var2,
                _Local(_extend(range_path, val_sub), entries.val if entries else None, None),
            )
        elif container == "list":
            self._push(
                n.iter_var,
                _Local(_extend(range_path, "@items"), entries.val if entries else None, None),
            )
        else:
            self._push(
                n.iter_var,
                _Local(_extend(range_path, "@keys"), entries.key if entries else None, None),
            )
        loop = self._cost(n.loop_condition)
        step = self._cost(n.loop_step)
        self._pop(n.iter_var)
        if n.iter_var2:
            self._pop(n.iter_var2)
        total = total.add(self._cost(n.result))
        self._pop(n.accu_var)
        count = self._size_or_unknown(rng)
        total = total.add(count.mul(step.add(loop)))
        if init is not None:
            if init.kind == checked.CONST:
                self._set_size(n, self._size(init))
            elif init.kind in (checked.LIST, checked.STRUCT):
                self._set_size(n, count)
                if n.loop_step is not None:
                    self._set_entries(n, self._entry_size(n.loop_step))
        return total

    def _bind(self, n: Node) -> Range:
        total = self._cost(n.iter_range).add(self._cost(n.accu_init))
        init = n.accu_init
        assert init is not None and n.result is not None
        self._push(n.accu_var, _Local(self._path(init), self._size(init), self._entry_size(init)))
        total = total.add(self._cost(n.result))
        self._pop(n.accu_var)
        self._set_size(n, self._size(n.result))
        self._set_entries(n, self._entry_size(n.result))
        return total

    def _call(self, n: Node) -> Range:
        if n.name == "dyn" and len(n.args) == 1 and n.operand is None:
            c = self._cost(n.args[0])
            self._set_size(n, self._size(n.args[0]))
            self._set_entries(n, self._entry_size(n.args[0]))
            return _ONE.add(c)
        arg_costs = []
        args = []
        for a in n.args:
            arg_costs.append(self._cost(a))
            args.append(self._arg(a))
        overloads = self._overloads(n, args)
        if not overloads:
            return _ZERO
        total = _ZERO
        target: _Arg | None = None
        if n.operand is not None:
            total = self._cost(n.operand)
            target = self._arg(n.operand)
        fn = Range(_MAX, 0)
        result: Range | None = None
        for ov in overloads:
            c, size = self._function_cost(n, ov, target, args, arg_costs)
            fn = fn.union(c)
            if size is not None:
                result = size if result is None else result.union(size)
            if ov in ("index_list", "index_map") and n.args:
                result = e.val if (e := self._entry_size(n.args[0])) else None
                sub = "@items" if ov == "index_list" else "@values"
                self._paths[n.id] = _extend(self._path(n.args[0]), sub)
            if result is None:
                result = self._size(n)
        self._set_size(n, result)
        return total.add(fn)

    def _overloads(self, n: Node, args: list[_Arg]) -> list[str]:
        """The overloads upstream's checker would have resolved. kapi's checker resolves several
        where it knows an operand only as ``dyn``; the schema usually tells which one."""
        found = self._expr.overloads.get(n.id) or []
        if len(found) < 2:
            return list(found)
        kinds = [a.kind for a in args]
        if n.name == "_[_]":
            found = [o for o in found if not o.startswith("optional_")]
            container = kinds[0] if kinds else "dyn"
            want = {"list": "index_list", "map": "index_map", "struct": "index_map"}.get(container)
        elif n.name == "@in":
            container = kinds[1] if len(kinds) > 1 else "dyn"
            want = {"list": "in_list", "map": "in_map", "struct": "in_map"}.get(container)
        else:
            want = None
            for k in kinds:
                typed = [o for o in found if _overload_takes(o, k)]
                if typed:
                    found = typed
                    break
        if want is not None and want in found:
            return [want]
        return list(found)

    def _function_cost(
        self,
        n: Node,
        overload: str,
        target: _Arg | None,
        args: list[_Arg],
        arg_costs: list[Range],
    ) -> tuple[Range, Range | None]:
        args_total = _ZERO
        for c in arg_costs:
            args_total = args_total.add(c)
        ext = self._extension_cost(overload, target, args)
        if ext is not None:
            return ext[0].add(args_total), ext[1]
        k8s = self._library_cost(n, overload, target, args)
        if k8s is not None:
            return k8s[0].add(args_total), k8s[1]
        return self._builtin_cost(n, overload, target, args, arg_costs, args_total)

    # --- cel-go extensions ------------------------------------------------------------------

    def _extension_cost(
        self, overload: str, target: _Arg | None, args: list[_Arg]
    ) -> tuple[Range, Range | None] | None:
        factor = {
            "list_sets_contains_list": 1,
            "list_sets_intersects_list": 1,
            "list_sets_equivalent_list": 2,
        }.get(overload)
        if factor is not None and len(args) == 2:
            size = self._arg_size(args[0]).mul(self._arg_size(args[1]))
            return size.times(factor).add(_ONE), None
        return None

    # --- Kubernetes' libraries ----------------------------------------------------------------

    def _library_cost(
        self, n: Node, overload: str, target: _Arg | None, args: list[_Arg]
    ) -> tuple[Range, Range | None] | None:
        fn = n.name
        size = self._arg_size
        if fn == "check":
            return _fixed(_AUTHZ_CHECK_COST), None
        if fn in ("fieldSelector", "labelSelector") and len(args) == 1:
            length = size(args[0])
            requirements = length.times(_SELECTOR_LENGTH_TO_REQUIREMENTS)
            return (
                _fixed(_LIST_CREATE_COST)
                .add(length.times(_STRING_TRAVERSAL_FACTOR))
                .add(requirements.times(_COST_PER_REQUIREMENT)),
                None,
            )
        if fn == "ip" and overload == "cidr_ip":
            return _ONE, None
        if fn in _NOMINAL:
            return _ONE, None
        if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes"):
            if target is None:
                return None
            element = self._list_element(target)
            if element is not None:
                el_cost = _ONE
                if element[0] in ("string", "bytes"):
                    el_cost = el_cost.add(element[1].times(_STRING_TRAVERSAL_FACTOR))
                return size(target).mul(el_cost), None
            if fn == "includes":
                return size(target), None
            return size(target).times(_STRING_TRAVERSAL_FACTOR), None
        if fn in ("url", "jsonpatch.escapeKey") and len(args) == 1:
            sz = size(args[0])
            return sz.times(_STRING_TRAVERSAL_FACTOR), sz
        if fn in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            sz = size(target)
            return sz.times(_STRING_TRAVERSAL_FACTOR), sz
        if fn == "replace" and target is not None and len(args) >= 2:
            return self._replace(size(target), size(args[0]), size(args[1]))
        if fn == "split" and target is not None:
            sz = size(target)
            most = sz.hi
            if len(args) > 1 and args[1].node is not None and args[1].node.kind == checked.CONST:
                limit = args[1].node.value
                if isinstance(limit, int) and not isinstance(limit, bool):
                    most = limit % 2**64  # upstream converts the int64 to uint64
            return sz.times(2 * _STRING_TRAVERSAL_FACTOR), Range(0, most)
        if fn == "join" and target is not None:
            items = size(target)
            joined = _ZERO
            element = self._list_element(target)
            if element is not None:
                joined = items.mul(element[1])
            if args:
                separators = Range(max(items.lo - 1, 0), max(items.hi - 1, 0))
                joined = joined.add(size(args[0]).mul(separators))
            return joined.times(_STRING_TRAVERSAL_FACTOR), joined
        if fn in ("find", "findAll") and target is not None and args:
            sz = size(target)
            text = sz.add(_ONE).times(_STRING_TRAVERSAL_FACTOR)
            regex = size(args[0]).times(_REGEX_FACTOR)
            return text.mul(regex), Range(0, sz.hi)
        if fn in ("cidr", "isIP", "isCIDR", "ip", "quantity", "isQuantity", "semver", "isSemver"):
            if args:
                return size(args[0]).times(_STRING_TRAVERSAL_FACTOR), None
            return None
        if fn == "ip.isCanonical" and args:
            return size(args[0]).times(2 * _STRING_TRAVERSAL_FACTOR), None
        if fn in ("containsIP", "containsCIDR") and args:
            ip_bytes = Range(4, 16)
            c = ip_bytes.add(ip_bytes).times(_STRING_TRAVERSAL_FACTOR)
            if fn == "containsCIDR":
                c = c.add(ip_bytes.times(_STRING_TRAVERSAL_FACTOR)).add(_ONE)
            if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
                c = c.add(size(args[0]).times(_STRING_TRAVERSAL_FACTOR))
            return c, None
        if fn == "validate" and args:
            if self._runtime:
                return self._validate_charge(n, size(args[0])), None
            traversal = size(args[0]).times(_STRING_TRAVERSAL_FACTOR)
            return traversal.times(_MAX_NAME_FORMAT_REGEX_SIZE * _REGEX_FACTOR), None
        if fn == "_==_" and len(args) == 2 and args[0].kind == args[1].kind:
            kind = args[0].kind
            if kind in ("net.IP", "net.CIDR", "kubernetes.Quantity", "kubernetes.Semver"):
                return _ONE, None
            if kind == "kubernetes.NamedFormat":
                return Range(1, _MAX_FORMAT_SIZE).times(_STRING_TRAVERSAL_FACTOR), None
            if kind == "kubernetes.URL":
                # As upstream: both sides of the union are the right operand's size.
                right = args[1].size
                hi = right.hi if right is not None else 1
                return Range(1, hi).times(_STRING_TRAVERSAL_FACTOR), None
        return None

    def _validate_charge(self, n: Node, size: Range) -> Range:
        """The actual cost of ``validate``: the format's own regex length (the ``uri`` format's
        exceeds the 128 the estimate assumes), known when the target is ``format.<name>()``."""
        target = n.operand
        name = (
            library.format_name(target.name)
            if target is not None and target.kind == checked.CALL
            else None
        )
        regex = library.FORMATS[name].max_regex_size if name else _MAX_FORMAT_REGEX_SIZE
        traversal = _times(_add(size.hi, 1), _STRING_TRAVERSAL_FACTOR)
        return _fixed(_mul(traversal, _times(regex, _REGEX_FACTOR)))

    @staticmethod
    def _replace(sz: Range, old: Range, new: Range) -> tuple[Range, Range]:
        """Upstream's size of ``replace``'s result; the cost is two traversals of the target.

        Each bound is ``count`` replacements plus ``kept`` characters of the target: the
        largest result pairs the largest target with the shortest match and the longest
        replacement, the smallest result the other way round."""

        def bound(size: int, match: int, unreplaced: bool) -> tuple[int, int]:
            # An empty match matches between every two characters and at both ends; when
            # ``unreplaced`` (replacing cannot move the bound further) no match is assumed.
            if match == 0:
                return (size + 1 if size < _MAX else size), size
            if unreplaced:
                return 0, size
            return math.ceil(size / match), 0

        count_hi, kept_hi = bound(sz.hi, old.lo, new.hi <= old.lo)
        count_lo, kept_lo = bound(sz.lo, old.hi, old.hi <= new.lo)
        result = Range(count_lo, count_hi).mul(new).add(Range(kept_lo, kept_hi))
        return sz.times(2 * _STRING_TRAVERSAL_FACTOR), result

    def _list_element(self, target: _Arg) -> tuple[str, Range] | None:
        """Kind and size of a list's elements (upstream's ``listElementNode``), or None when
        the target is not a list."""
        if target.kind != "list":
            return None
        path = _extend(target.path, "@items") if target.path is not None else None
        s = self._resolve(path)
        node = target.node
        if s is not None:
            kind = "string" if s.get("type") == "string" else "other"
        elif node is not None and node.kind == checked.LIST and node.args:
            kind = self._kind(node.args[0])
        else:
            kind = "dyn"
        estimated = self._estimate_size(path)
        return kind, self._unknown_range() if estimated is None else estimated

    # --- cel-go's own prices ------------------------------------------------------------------

    def _builtin_cost(
        self,
        n: Node,
        overload: str,
        target: _Arg | None,
        args: list[_Arg],
        arg_costs: list[Range],
        args_total: Range,
    ) -> tuple[Range, Range | None]:
        def size(a: _Arg) -> Range:
            return a.size if a.size is not None else self._unknown_range()

        traversal = _STRING_TRAVERSAL_FACTOR
        if overload == "string_format" and target is not None:
            return size(target).times(traversal).add(args_total), None
        if overload == "string_to_bytes" and len(args) == 1:
            sz = size(args[0])
            return sz.times(traversal).add(args_total), Range(sz.lo, _mul(sz.hi, 4))
        if overload == "bytes_to_string" and len(args) == 1:
            sz = size(args[0])
            return sz.times(traversal).add(args_total), Range(sz.lo // 4, sz.hi)
        if overload == "strings_quote" and len(args) == 1:
            sz = size(args[0])
            quoted = Range(_add(sz.lo, 2), _add(_mul(sz.hi, 2), 2))
            return sz.times(traversal).add(args_total), quoted
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return size(args[0]).times(traversal).add(args_total), None
        if overload == "in_list" and len(args) == 2:
            return size(args[1]).add(args_total), None
        if overload == "matches_string" and target is not None and len(args) == 1:
            text = size(target).add(_ONE).times(traversal)
            regex = size(args[0]).times(_REGEX_FACTOR)
            return text.mul(regex).add(args_total), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            text = size(target).times(traversal)
            sub = size(args[0]).times(traversal)
            return text.mul(sub).add(args_total), None
        if overload in ("logical_and", "logical_or"):
            lhs, rhs = arg_costs[0], arg_costs[1]
            return Range(lhs.lo, _add(lhs.hi, rhs.hi)), None
        if overload == "conditional":
            result = size(args[1]).union(size(args[2]))
            entries = self._entry_size(n.args[1])
            self._set_entries(n, entries.union(self._entry_size(n.args[2])) if entries else None)
            return arg_costs[0].add(arg_costs[1].union(arg_costs[2])), result
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = size(args[0]).add(size(args[1]))
            entries = self._entry_size(n.args[0])
            self._set_entries(n, entries.union(self._entry_size(n.args[1])) if entries else None)
            if overload == "add_list":
                return _ONE.add(args_total), result
            return result.times(traversal).add(args_total), result
        if overload in _STRING_ORDERING or overload in ("equals", "not_equals"):
            smallest = min(size(args[0]).hi, size(args[1]).hi)
            return Range(1 if smallest > 0 else 0, smallest).times(traversal).add(args_total), None
        return _ONE.add(args_total), None


#: Keys of a map: upstream declares them as strings of no size.
_MAP_KEY: Final[Schema] = {"type": "string"}


def _extend(path: tuple[str, ...] | None, name: str) -> tuple[str, ...]:
    return (*(path or ()), name)


def _literal_size(n: Node) -> Range | None:
    """cel-go's ``computeExprSize``: the exact size of literals."""
    if n.kind == checked.CONST:
        v = n.value
        if isinstance(v, str | bytes):
            return _fixed(len(v))
        return _ONE
    if n.kind == checked.LIST:
        return _fixed(len(n.args))
    if n.kind == checked.STRUCT:
        return _fixed(len(n.args) // 2)
    return None


def _is_bind(n: Node) -> bool:
    """``cel.bind``: a comprehension over an empty list that never loops."""
    rng, cond = n.iter_range, n.loop_condition
    return (
        rng is not None
        and rng.kind == checked.LIST
        and not rng.args
        and cond is not None
        and cond.kind == checked.CONST
        and cond.value is False
        and n.accu_var != "@result"
    )


_OVERLOAD_KINDS: Final[dict[str, Sequence[str]]] = {
    "string": ("_string", "string_"),
    "bytes": ("_bytes", "bytes_"),
    "list": ("_list", "list_"),
    "map": ("_map", "map_"),
    "struct": ("_map", "map_"),
    "int": ("_int64", "int64_", "_int"),
    "uint": ("_uint64", "uint64_"),
    "double": ("_double", "double_"),
    "bool": ("_bool", "bool_"),
    "timestamp": ("_timestamp", "timestamp_"),
    "duration": ("_duration", "duration_"),
}


def _overload_takes(overload: str, kind: str) -> bool:
    """Whether a standard overload id names the kind of its first operand."""
    return any(part in overload for part in _OVERLOAD_KINDS.get(kind, ()))
