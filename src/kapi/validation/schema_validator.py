"""Compiled OpenAPI v3 schema validation with kube-apiserver's errors.

A schema (a CRD's ``openAPIV3Schema`` as plain dicts) is compiled once into a
tree of :class:`SchemaNode`. Each node keeps its children by role
(``properties``, ``additional_properties``, ``items``, ``all_of``/``any_of``/
``one_of``/``not_``) so later passes, CRD validation ratcheting first, can walk
an old and a new object in parallel with the schema. Each node also owns two
validators built at compile time:

* ``check(value) -> bool``, the fast path: closures specialised per node that
  allocate nothing and build no path or error; almost every request stops here;
* ``collect(...)``, run only once ``check`` failed, which reproduces what
  kube-openapi's ``validate.SchemaValidator`` reports and in which order.

Errors, in order (all of them as upstream, except where noted):

1. OpenAPI errors (kube-openapi), converted as apiextensions'
   ``kubeOpenAPIResultToFieldErrors`` does, repeats of a message dropped. Per
   node: type; anyOf, oneOf, allOf, not (each failed branch's errors after or
   before its summary as upstream); maxLength, minLength or pattern (the first
   that fails); format; the number range check, multipleOf, minimum, maximum;
   array items then minItems, maxItems, uniqueItems; enum; minProperties,
   maxProperties, additional properties (document order), properties (kapi:
   schema order; upstream: Go map order, i.e. random), required (schema order).
2. Embedded-resource errors (``x-kubernetes-embedded-resource``).
3. List-type errors (``x-kubernetes-list-type`` set and map).

Paths: OpenAPI errors name fields as kube-openapi does (``spec.items[0].name``,
map entries ``spec.labels.foo``), below the caller's path prefix; the last two
passes use ``field.Path`` rendering (``spec.labels[foo]``). Composite errors
(anyOf...) and range errors are reported at the prefix itself, ``<nil>`` at
the root, exactly as upstream.

Numbers follow Go's decoding of unstructured JSON: integers are int64 (larger
ones become float64), ``1.0`` is an integer for ``type: integer``, and bounds
are compared natively (an integer against ``int64(bound)``), as kube-openapi does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kapi.apimachinery.field_errors import FieldError, Path
from kapi.validation import openapi_errors as oe
from kapi.validation import structural_checks as sc
from kapi.validation.correlation import CorrelatedObject
from kapi.validation.formats import effective_format, string_format_checker
from kapi.validation.regexp import Regexp, RegexpError, compile_regexp

Check = Callable[[Any], bool]
_NoneType: Final = type(None)
_MISSING: Final = object()
_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1
_INT32_MIN: Final = -(1 << 31)
_INT32_MAX: Final = (1 << 31) - 1
_FLOAT32_LIMIT: Final = 3.4028235677973366e38  # values at or past this overflow ParseFloat(s, 32)
_JSON_INT_LIMIT: Final = float(1 << 53)


# --- Go number semantics ----------------------------------------------------------------------


def is_json_integer(f: float) -> bool:
    """swag ``IsFloat64AJSONInteger``: integral, within 2^53, or within 1e-9 relative error."""
    if not -_JSON_INT_LIMIT <= f <= _JSON_INT_LIMIT:  # also False for NaN
        return False
    if f.is_integer():
        return True
    if f < 0:
        return False  # Go's uint64 conversion of a negative float makes the error huge
    g = float(math.floor(f))
    return g != 0 and (f - g) / (f + g) < 1e-9


def _go_number(v: Any) -> int | float:
    """The number Go's unstructured decoder would hold: int64, else float64."""
    if type(v) is int and not _INT64_MIN <= v <= _INT64_MAX:
        return float(v)
    return v


def _type_info(v: Any) -> tuple[str, str]:
    """kube-openapi ``schemaInfoForType``: the JSON type name and Go format of a value."""
    t = type(v)
    if t is int:
        return "integer", "int64"
    if t is float:
        return "number", "float64"
    return _TYPE_NAMES[t], ""


_TYPE_NAMES: Final[dict[type, str]] = {
    str: "string",
    bool: "boolean",
    list: "array",
    dict: "object",
}


# --- enum -------------------------------------------------------------------------------------


def _deep_key(v: Any) -> Any:
    """A hashable form of a JSON value equal exactly when Go's ``reflect.DeepEqual`` is."""
    t = type(v)
    if t is str or v is None:
        return v
    if t is dict:
        return (dict, frozenset((k, _deep_key(x)) for k, x in v.items()))
    if t is list:
        return (list, tuple(_deep_key(x) for x in v))
    return sc.scalar_key(v)


def _go_rune_string(i: int) -> str:
    """Go ``string(rune(i))``: invalid code points become U+FFFD."""
    return chr(i) if 0 <= i <= 0x10FFFF and not 0xD800 <= i <= 0xDFFF else "\ufffd"


class EnumRule:
    """``enum``: membership as kube-openapi decides it.

    Upstream converts the value to each member's Go type before comparing, so
    ``1.5`` matches an integer member ``1`` (truncation) and an integer matches
    a string member holding that code point. kapi keeps those conversions.
    """

    __slots__ = ("_floats", "_ints", "_keys", "_strs", "values")

    def __init__(self, values: Sequence[Any]) -> None:
        self.values = list(values)
        self._keys = frozenset(_deep_key(v) for v in values)
        self._ints = frozenset(v for v in values if type(v) is int)
        self._floats = frozenset(v for v in values if type(v) is float)
        self._strs = frozenset(v for v in values if type(v) is str)

    def check(self, v: Any) -> bool:
        if type(v) is str:
            return v in self._strs
        if v is None:
            return False  # a nil value is never converted, so never matches
        if _deep_key(v) in self._keys:
            return True
        t = type(v)
        if t is float:
            return math.isfinite(v) and int(v) in self._ints
        if t is int:
            return float(v) in self._floats or _go_rune_string(v) in self._strs
        return False

    def collect(self, v: Any, name: str, errs: list[oe.OpenAPIError]) -> None:
        if not self.check(v):
            errs.append(oe.enum_error(name, v, self.values))


# --- strings ----------------------------------------------------------------------------------


class StringRule:
    """maxLength, minLength and pattern; upstream reports only the first that fails."""

    __slots__ = ("_rx", "_rx_error", "max_length", "min_length", "pattern")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.max_length: int | None = schema.get("maxLength")
        self.min_length: int | None = schema.get("minLength")
        self.pattern: str = schema.get("pattern") or ""
        # Compiled once per schema, with Go's syntax and semantics (upstream uses Go's regexp).
        self._rx: Regexp | None = None
        self._rx_error = ""
        if self.pattern:
            try:
                self._rx = compile_regexp(self.pattern)
            except RegexpError as e:
                self._rx_error = f"{self.pattern}, but pattern is invalid: {e}"

    def check(self, v: str) -> bool:
        n = len(v)
        if self.max_length is not None and n > self.max_length:
            return False
        if self.min_length is not None and n < self.min_length:
            return False
        if self.pattern:
            return self._rx is not None and self._rx.matches(v)
        return True

    def collect(self, v: str, name: str, errs: list[oe.OpenAPIError]) -> None:
        n = len(v)
        if self.max_length is not None and n > self.max_length:
            errs.append(oe.too_long_error(name, self.max_length, v))
        elif self.min_length is not None and n < self.min_length:
            errs.append(oe.too_short_error(name, self.min_length, v))
        elif self._rx_error:
            errs.append(oe.pattern_error(name, self._rx_error, v))
        elif self._rx is not None and not self._rx.matches(v):
            errs.append(oe.pattern_error(name, self.pattern, v))


# --- numbers ----------------------------------------------------------------------------------


def _in_range(v: int | float, type_name: str, fmt: str) -> bool:
    """``IsValueValidAgainstRange``: can the value be parsed as the type and format?"""
    if type_name == "integer":
        if type(v) is float:
            if not v.is_integer():
                return False
            v = int(v)
        lo, hi = (_INT32_MIN, _INT32_MAX) if fmt == "int32" else (_INT64_MIN, _INT64_MAX)
        return lo <= v <= hi
    if fmt == "float":
        return abs(v) < _FLOAT32_LIMIT
    return True


class Bound:
    """A minimum, maximum or multipleOf value, precomputed in both native forms."""

    __slots__ = ("as_float", "as_int", "exclusive", "native", "prefix")

    def __init__(self, value: float, exclusive: bool, type_name: str, fmt: str, prefix: str):
        self.as_float = float(value)
        self.as_int = int(value)  # Go int64(float64): truncation toward zero
        self.exclusive = exclusive
        self.native = _in_range(value, type_name, fmt)  # else compared as float64
        self.prefix = prefix


class NumberRule:
    """Range check of the value, multipleOf, minimum, maximum (kube-openapi order)."""

    __slots__ = ("fmt", "maximum", "minimum", "multiple_of", "type_name")

    def __init__(self, schema: Mapping[str, Any], types: tuple[str, ...], fmt: str) -> None:
        single = types[0] if len(types) == 1 else ""
        self.type_name = single if single in ("integer", "number") else ""
        self.fmt = fmt if self.type_name else ""
        self.multiple_of = self._bound(schema, "multipleOf", False, "MultipleOf")
        self.minimum = self._bound(
            schema, "minimum", bool(schema.get("exclusiveMinimum")), "Minimum boundary"
        )
        self.maximum = self._bound(
            schema, "maximum", bool(schema.get("exclusiveMaximum")), "Maximum boundary"
        )

    def _bound(self, schema: Mapping[str, Any], key: str, excl: bool, prefix: str) -> Bound | None:
        value = schema.get(key)
        if value is None:
            return None
        return Bound(value, excl, self.type_name, self.fmt, prefix)

    def collect(self, v: int | float, name: str, errs: list[oe.OpenAPIError]) -> None:
        v = _go_number(v)
        if self.type_name and not _in_range(v, self.type_name, self.fmt):
            errs.append(oe.range_error("Checked", self.type_name, self.fmt, name))
        for bound, fn in (
            (self.multiple_of, _multiple_of_error),
            (self.minimum, _minimum_error),
            (self.maximum, _maximum_error),
        ):
            if bound is None:
                continue
            if not bound.native:
                errs.append(oe.range_error(bound.prefix, self.type_name, self.fmt, name))
            err = fn(bound, v, name)
            if err is not None:
                errs.append(err)

    def matters_for_int(self) -> bool:
        """Whether an int64 can fail: bounds, or a format narrower than int64."""
        bounds = (self.multiple_of, self.minimum, self.maximum)
        return any(b is not None for b in bounds) or self.fmt in ("int32", "float")

    def int32_only(self) -> bool:
        """Whether the rule is ``type: integer, format: int32`` alone: an int then passes it
        exactly when it is within int32 (which also makes it an int64)."""
        bounds = (self.multiple_of, self.minimum, self.maximum)
        return self.type_name == "integer" and self.fmt == "int32" and bounds == (None, None, None)

    def check(self, v: int | float) -> bool:
        # Only called for values of the node's own type; reuses collect's logic
        # on the rare nodes with numeric bounds (no allocation when all pass).
        v = _go_number(v)
        if self.type_name and not _in_range(v, self.type_name, self.fmt):
            return False
        mo, lo, hi = self.multiple_of, self.minimum, self.maximum
        return (
            (mo is None or (mo.native and _multiple_of_error(mo, v, "") is None))
            and (lo is None or (lo.native and _minimum_error(lo, v, "") is None))
            and (hi is None or (hi.native and _maximum_error(hi, v, "") is None))
        )


def _native(bound: Bound, v: int | float) -> tuple[int | float, int | float]:
    """The value and bound as upstream compares them (int64 natively, else float64)."""
    if type(v) is int and bound.native:
        return v, bound.as_int
    return float(v), bound.as_float


def _multiple_of_error(bound: Bound, v: int | float, name: str) -> oe.OpenAPIError | None:
    value, factor = _native(bound, v)
    if factor <= 0:
        return oe.multiple_of_not_positive(name, factor)
    if type(value) is int:
        ok = value % factor == 0
    else:
        mult = 1 / factor * value if factor < 1 else value / factor
        ok = is_json_integer(mult)
    return None if ok else oe.multiple_of_error(name, factor, v)


def _minimum_error(bound: Bound, v: int | float, name: str) -> oe.OpenAPIError | None:
    value, lo = _native(bound, v)
    if value < lo or (bound.exclusive and value == lo):
        return oe.minimum_error(name, lo, bound.exclusive, v)
    return None


def _maximum_error(bound: Bound, v: int | float, name: str) -> oe.OpenAPIError | None:
    value, hi = _native(bound, v)
    if value > hi or (bound.exclusive and value == hi):
        return oe.maximum_error(name, hi, bound.exclusive, v)
    return None


# --- arrays and objects -------------------------------------------------------------------------


def _all_unique(items: list[Any]) -> bool:
    """uniqueItems with ``reflect.DeepEqual``: 1 and 1.0 differ, as they do in Go."""
    keys = {_deep_key(x) for x in items}
    return len(keys) == len(items)


class ArrayRule:
    """items, then minItems, maxItems and uniqueItems (kube-openapi slice validator)."""

    __slots__ = ("items", "max_items", "min_items", "unique")

    def __init__(self, schema: Mapping[str, Any], items: SchemaNode | None) -> None:
        self.items = items
        self.min_items: int | None = schema.get("minItems")
        self.max_items: int | None = schema.get("maxItems")
        self.unique = bool(schema.get("uniqueItems"))

    def check(self, v: list[Any]) -> bool:
        n = len(v)
        if self.min_items is not None and n < self.min_items:
            return False
        if self.max_items is not None and n > self.max_items:
            return False
        if self.unique and not _all_unique(v):
            return False
        if self.items is not None:
            item = self.items.check
            for x in v:
                if not item(x):
                    return False
        return True

    def collect(
        self,
        v: list[Any],
        name: str,
        errs: list[oe.OpenAPIError],
        corr: CorrelatedObject | None = None,
    ) -> int:
        count = 0
        items = self.items
        if items is not None:
            for i, x in enumerate(v):
                at = f"{name}[{i}]"
                child = None if corr is None else corr.index(i)
                if child is None:
                    count += items.collect(x, at, errs)
                else:
                    count += items.collect_ratcheting(x, at, errs, child)
        n = len(v)
        if self.min_items is not None and n < self.min_items:
            errs.append(oe.too_few_items(name, self.min_items, n))
        if self.max_items is not None and n > self.max_items:
            errs.append(oe.too_many_items(name, self.max_items, n))
        if self.unique and not _all_unique(v):
            errs.append(oe.duplicate_items(name))
        return count + 1


class ObjectRule:
    """min/maxProperties, additionalProperties, properties and required."""

    __slots__ = ("additional", "closed", "max_props", "min_props", "properties", "required")

    def __init__(
        self,
        schema: Mapping[str, Any],
        properties: dict[str, SchemaNode],
        additional: SchemaNode | None,
    ) -> None:
        self.properties = properties
        self.additional = additional
        self.closed = schema.get("additionalProperties") is False
        self.required: tuple[str, ...] = tuple(schema.get("required") or ())
        self.min_props: int | None = schema.get("minProperties")
        self.max_props: int | None = schema.get("maxProperties")

    def build_check(self) -> Check:
        """One pass over the document's keys; each key finds its validator in a dict."""
        checks = {k: n.check for k, n in self.properties.items()}
        lookup = checks.get
        extra = self.additional.check if self.additional is not None else None
        closed, required = self.closed, self.required
        lo, hi = self.min_props, self.max_props

        def check(v: dict[str, Any]) -> bool:
            for k, x in v.items():
                c = lookup(k, extra)
                if c is None:
                    if closed:
                        return False
                elif not c(x):
                    return False
            for r in required:
                if r not in v:
                    return False
            if lo is not None and len(v) < lo:
                return False
            return hi is None or len(v) <= hi

        return check

    def collect(
        self,
        v: dict[str, Any],
        name: str,
        errs: list[oe.OpenAPIError],
        corr: CorrelatedObject | None = None,
    ) -> int:
        n = len(v)
        if self.min_props is not None and n < self.min_props:
            errs.append(oe.too_few_properties(name, self.min_props, n))
        if self.max_props is not None and n > self.max_props:
            errs.append(oe.too_many_properties(name, self.max_props, n))
        count = 0
        for k, x in v.items():
            if k in self.properties:
                continue
            if self.closed:
                errs.append(oe.property_not_allowed(name, k))
            elif self.additional is not None:
                count += _collect_child(
                    self.additional, x, f"{name}.{k}", errs, None if corr is None else corr.field(k)
                )
        for k, node in self.properties.items():
            x = v.get(k, _MISSING)
            if x is not _MISSING:
                at = f"{name}.{k}" if name else k
                count += _collect_child(node, x, at, errs, None if corr is None else corr.field(k))
        for k in self.required:
            if k not in v:
                errs.append(oe.required_error(f"{name}.{k}"))
        return count


def _collect_child(
    node: SchemaNode,
    v: Any,
    name: str,
    errs: list[oe.OpenAPIError],
    corr: CorrelatedObject | None,
) -> int:
    if corr is None:
        return node.collect(v, name, errs)
    return node.collect_ratcheting(v, name, errs, corr)


# --- composition ------------------------------------------------------------------------------


class Composition:
    """allOf, anyOf, oneOf and not, evaluated as kube-openapi's schemaPropsValidator."""

    __slots__ = ("all_of", "any_of", "not_", "one_of", "verdicts")

    def __init__(
        self,
        all_of: tuple[SchemaNode, ...],
        any_of: tuple[SchemaNode, ...],
        one_of: tuple[SchemaNode, ...],
        not_: SchemaNode | None,
    ) -> None:
        self.all_of, self.any_of, self.one_of, self.not_ = all_of, any_of, one_of, not_
        self.verdicts = self._verdicts_by_kind()

    def _verdicts_by_kind(self) -> dict[type, bool] | None:
        """Each JSON kind's verdict, when every branch looks at a value's kind alone (a
        quantity's ``oneOf: [string, number]``); ``None`` otherwise."""
        branches = (*self.all_of, *self.any_of, *self.one_of, *((self.not_,) if self.not_ else ()))
        if any(b.accepted_kinds is None for b in branches):
            return None
        return {kind: self._verdict(kind) for kind in (*_KINDS, _NoneType)}

    def _verdict(self, kind: type) -> bool:
        """:meth:`check` for any value of ``kind``, from the branches' accepted kinds."""

        def accepts(node: SchemaNode) -> bool:
            return kind in (node.accepted_kinds or ())

        if self.any_of and not any(map(accepts, self.any_of)):
            return False
        if self.one_of and sum(map(accepts, self.one_of)) != 1:
            return False
        if not all(map(accepts, self.all_of)):
            return False
        return self.not_ is None or not accepts(self.not_)

    def check(self, v: Any) -> bool:
        verdicts = self.verdicts
        if verdicts is not None:
            verdict = verdicts.get(type(v))
            if verdict is not None:
                return verdict
        if self.any_of and not any(s.check(v) for s in self.any_of):
            return False
        if self.one_of and sum(1 for s in self.one_of if s.check(v)) != 1:
            return False
        if not all(s.check(v) for s in self.all_of):
            return False
        return self.not_ is None or not self.not_.check(v)

    def collect(self, v: Any, name: str, errs: list[oe.OpenAPIError]) -> int:
        count = 0
        if self.any_of:
            count += self._collect_any_of(v, name, errs)
        if self.one_of:
            count += self._collect_one_of(v, name, errs)
        if self.all_of:
            count += self._collect_all_of(v, name, errs)
        if self.not_ is not None and self.not_.check(v):
            errs.append(oe.not_failed(name))
        return count + 1

    def _collect_any_of(self, v: Any, name: str, errs: list[oe.OpenAPIError]) -> int:
        """The first valid branch wins; else the failure with most matched checks is kept."""
        best: tuple[int, list[oe.OpenAPIError]] | None = None
        for s in self.any_of:
            branch: list[oe.OpenAPIError] = []
            matched = s.collect(v, name, branch)
            if not branch:
                return matched
            if best is None or matched > best[0]:
                best = (matched, branch)
        assert best is not None
        errs.append(oe.any_of_failed(name))
        errs.extend(best[1])
        return best[0]

    def _collect_one_of(self, v: Any, name: str, errs: list[oe.OpenAPIError]) -> int:
        valid = 0
        first_success = 0
        best: tuple[int, list[oe.OpenAPIError]] | None = None
        for s in self.one_of:
            branch: list[oe.OpenAPIError] = []
            matched = s.collect(v, name, branch)
            if not branch:
                if valid == 0:
                    first_success = matched
                valid += 1
                best = None
            elif valid == 0 and (best is None or matched > best[0]):
                best = (matched, branch)
        if valid == 1:
            return first_success
        errs.append(oe.one_of_failed(name, valid))
        if best is None:
            return 0
        errs.extend(best[1])
        return best[0]

    def _collect_all_of(self, v: Any, name: str, errs: list[oe.OpenAPIError]) -> int:
        count = valid = 0
        for s in self.all_of:
            before = len(errs)
            count += s.collect(v, name, errs)
            valid += len(errs) == before
        if valid != len(self.all_of):
            errs.append(oe.all_of_failed(name, valid == 0))
        return count


# --- nodes ------------------------------------------------------------------------------------

_KINDS: Final = (dict, list, str, int, float, bool)


class SchemaNode:
    """One compiled schema: its children by role, its rules, and its two validators.

    ``structural`` is False inside allOf/anyOf/oneOf/not, where upstream's
    embedded-resource and list-type passes never look.
    """

    __slots__ = (
        "accepted_kinds",
        "additional_properties",
        "array",
        "check",
        "composition",
        "embedded_resource",
        "enum",
        "format",
        "format_check",
        "items",
        "list_map_keys",
        "list_type",
        "nullable",
        "number",
        "object",
        "properties",
        "string",
        "structural",
        "types",
    )

    def __init__(self, schema: Mapping[str, Any], structural: bool = True) -> None:
        self.structural = structural
        self.types = _schema_types(schema)
        self.nullable = bool(schema.get("nullable"))
        self.format = effective_format(schema.get("format") or "", self.types)
        self.format_check = string_format_checker(self.format) if self.format else None
        self.enum = EnumRule(schema["enum"]) if schema.get("enum") else None
        self.properties = {
            k: SchemaNode(v, structural) for k, v in (schema.get("properties") or {}).items()
        }
        additional = schema.get("additionalProperties")
        self.additional_properties = (
            SchemaNode(additional, structural) if isinstance(additional, Mapping) else None
        )
        items = schema.get("items")
        if items is not None and not isinstance(items, Mapping):
            raise ValueError("items must be a single schema in a structural schema")
        self.items = SchemaNode(items, structural) if items is not None else None
        self.composition = _composition(schema)
        self.string = StringRule(schema) if _has_any(schema, _STRING_KEYS) else None
        self.number = (
            NumberRule(schema, self.types, self.format)
            if _has_any(schema, _NUMBER_KEYS) or self._number_range_checked()
            else None
        )
        self.array = (
            ArrayRule(schema, self.items) if self.items or _has_any(schema, _ARRAY_KEYS) else None
        )
        self.object = (
            ObjectRule(schema, self.properties, self.additional_properties)
            if (self.properties or self.additional_properties or _has_any(schema, _OBJECT_KEYS))
            else None
        )
        self.embedded_resource = structural and bool(schema.get("x-kubernetes-embedded-resource"))
        self.list_type = (schema.get("x-kubernetes-list-type") or "") if structural else ""
        self.list_map_keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
        self.check, self.accepted_kinds = _build_check(self)

    def _number_range_checked(self) -> bool:
        """Whether the value's own range is checked (integers, float32) without any bound."""
        return self.types == ("integer",) or self.format == "float"

    @property
    def type_applies(self) -> bool:
        return bool(self.types or self.format)

    def collect(
        self,
        v: Any,
        name: str,
        errs: list[oe.OpenAPIError],
        corr: CorrelatedObject | None = None,
    ) -> int:
        """Append kube-openapi's errors for ``v`` at ``name``; return its match count.

        The match count (how many checks passed, as kube-openapi's ``Result``
        counts them) decides which failing anyOf/oneOf branch is reported.
        ``corr`` pairs ``v`` with its old value on an update with ratcheting:
        the children that pair are then validated by :meth:`collect_ratcheting`.
        The branches of allOf/anyOf/oneOf/not never pair (upstream gives them a
        plain validator), so their errors ratchet with this node's.
        """
        if v is None:
            return self._collect_null(name, errs)
        count = 1
        if self.type_applies:
            count += 2 if self._collect_type(v, name, errs) else 1
        count += self.composition.collect(v, name, errs) + 1 if self.composition else 2
        t = type(v)
        if t is str:
            count += self._collect_string(v, name, errs)
        elif t is int or t is float:
            if self.number is not None:
                self.number.collect(v, name, errs)
            count += 2
        elif t is list:
            count += (self.array.collect(v, name, errs, corr) if self.array else 1) + 1
        if self.enum is not None:
            self.enum.collect(v, name, errs)
        count += 1
        if t is dict and self.object is not None:
            count += self.object.collect(v, name, errs, corr)
        return count

    def collect_ratcheting(
        self, v: Any, name: str, errs: list[oe.OpenAPIError], corr: CorrelatedObject
    ) -> int:
        """:meth:`collect`, forgiving this subtree's errors when ``v`` equals its old value.

        An error here comes from this node's keywords, from a child that did not
        pair with an old value, or from a paired child whose value changed; if
        this node as a whole is unchanged, none of them is the update's doing.
        Upstream keeps the forgiven errors as warnings of the OpenAPI result,
        which never reach the client; they are only counted here.
        """
        mine: list[oe.OpenAPIError] = []
        count = self.collect(v, name, mine, corr)
        if mine:
            if corr.equal():
                corr.stats.ratcheted += len(mine)
            else:
                errs.extend(mine)
        return count

    def _collect_null(self, name: str, errs: list[oe.OpenAPIError]) -> int:
        """A null value meets only the type (nullable) and enum checks, as upstream."""
        ok = not self.types or self.nullable
        if not ok:
            errs.append(oe.invalid_type(name, ",".join(self.types), "null"))
        if self.enum is not None:
            errs.append(oe.enum_error(name, None, self.enum.values))
        return 1 if ok else 0

    def _collect_type(self, v: Any, name: str, errs: list[oe.OpenAPIError]) -> bool:
        """kube-openapi's typeValidator, quirks included (see :func:`_type_error`)."""
        err = _type_error(self.types, self.format, _go_number(v), name)
        if err is not None:
            errs.append(err)
        return err is None

    def _collect_string(self, v: str, name: str, errs: list[oe.OpenAPIError]) -> int:
        count = 0
        if self.string is not None:
            self.string.collect(v, name, errs)
        count += 1  # the string validator applies to every string
        if self.format_check is not None:
            if not self.format_check(v):
                errs.append(oe.invalid_type(name, self.format, v))
            count += 1
        return count


def _type_error(types: tuple[str, ...], fmt: str, v: Any, name: str) -> oe.OpenAPIError | None:
    """The type check; with a format it names the format, and arrays pass it (upstream bug)."""
    sch_type, go_fmt = _type_info(v)
    numeric = "number" in types or "integer" in types
    float_int = sch_type == "number" and "integer" in types and is_json_integer(v)
    int_float = sch_type == "integer" and "number" in types
    matches = sch_type in types or float_int or int_float
    t = type(v)
    if fmt and t is not str and t is not list and not (matches or go_fmt == fmt):
        return oe.invalid_type(name, fmt, go_fmt)
    if fmt and not numeric and (t is str or t is list):
        return None
    if not matches:
        return oe.invalid_type(name, ",".join(types), sch_type)
    return None


_STRING_KEYS: Final = ("maxLength", "minLength", "pattern")
_NUMBER_KEYS: Final = ("multipleOf", "minimum", "maximum")
_ARRAY_KEYS: Final = ("minItems", "maxItems", "uniqueItems")
_OBJECT_KEYS: Final = ("required", "minProperties", "maxProperties", "additionalProperties")


def _has_any(schema: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    return any(schema.get(k) is not None for k in keys)


def _schema_types(schema: Mapping[str, Any]) -> tuple[str, ...]:
    if schema.get("x-kubernetes-int-or-string"):
        return ("integer", "string")
    t = schema.get("type")
    return (t,) if t else ()


def _composition(schema: Mapping[str, Any]) -> Composition | None:
    def nodes(key: str) -> tuple[SchemaNode, ...]:
        return tuple(SchemaNode(s, structural=False) for s in schema.get(key) or ())

    all_of, any_of, one_of = nodes("allOf"), nodes("anyOf"), nodes("oneOf")
    not_ = SchemaNode(schema["not"], structural=False) if schema.get("not") else None
    if not (all_of or any_of or one_of or not_):
        return None
    return Composition(all_of, any_of, one_of, not_)


# --- fast path ----------------------------------------------------------------------------------


def _accepts_kind(node: SchemaNode, kind: type) -> bool | None:
    """Whether the type check passes for every value of ``kind`` (None: depends on the value)."""
    if not node.type_applies:
        return True
    types = node.types
    numeric = "number" in types or "integer" in types
    if kind is str or kind is list:
        return _TYPE_NAMES[kind] in types or (bool(node.format) and not numeric)
    if kind is int:
        return numeric
    if kind is float:
        return True if "number" in types else (None if "integer" in types else False)
    return _TYPE_NAMES[kind] in types


def _kind_checks(node: SchemaNode, kind: type) -> list[Check]:
    """The value checks of one Python kind, in no particular order (the verdict is all)."""
    checks: list[Check] = []
    if kind is float and _accepts_kind(node, float) is None:
        checks.append(is_json_integer)
    int32 = kind is int and node.number is not None and node.number.int32_only()
    if int32:
        checks.append(_is_int32)  # the whole check of an int: most integer fields are int32
    elif kind is int and "number" not in node.types and "integer" in node.types:
        checks.append(_is_int64)
    if kind is str:
        if node.string is not None:
            checks.append(node.string.check)
        if node.format_check is not None:
            checks.append(node.format_check)
    elif (kind is float or kind is int) and node.number is not None:
        if kind is float or (node.number.matters_for_int() and not int32):
            checks.append(node.number.check)
    elif kind is list:
        if node.array is not None:
            checks.append(node.array.check)
        checks.extend(_list_type_checks(node))
    elif kind is dict:
        if node.object is not None:
            checks.append(node.object.build_check())
        if node.embedded_resource:
            checks.append(_embedded_ok)
    if node.composition is not None:
        checks.append(node.composition.check)
    if node.enum is not None:
        checks.append(node.enum.check)
    return checks


def _is_int64(v: int) -> bool:
    return _INT64_MIN <= v <= _INT64_MAX


def _is_int32(v: int) -> bool:
    return _INT32_MIN <= v <= _INT32_MAX


def _embedded_ok(v: dict[str, Any]) -> bool:
    return not sc.embedded_resource_errors("", v)


def _list_type_checks(node: SchemaNode) -> list[Check]:
    if node.list_type == "set":
        return [lambda v: not sc.non_unique_indices(v)]
    if node.list_type == "map":
        keys = node.list_map_keys
        return [lambda v: not sc.list_map_errors("", keys, v)]
    return []


def _build_check(node: SchemaNode) -> tuple[Check, frozenset[type] | None]:
    """The node's fast validator: a type dispatch to the few checks that kind needs; and
    the kinds it accepts when the kind of a value is all it looks at (else ``None``)."""
    table: dict[type, tuple[Check, ...]] = {}
    if (not node.types or node.nullable) and node.enum is None:
        table[_NoneType] = ()
    for kind in _KINDS:
        if _accepts_kind(node, kind) is not False:
            table[kind] = tuple(_kind_checks(node, kind))
    type_only = all(not cs for cs in table.values())
    return _combine(table), frozenset(table) if type_only else None


def _combine(table: dict[type, tuple[Check, ...]]) -> Check:
    """The cheapest closure for a dispatch table (most nodes: one type, zero or one check)."""
    if all(not cs for cs in table.values()):
        if len(table) == 1:
            (only_kind,) = table
            return lambda v: type(v) is only_kind
        kinds = frozenset(table)
        return lambda v: type(v) in kinds
    if len(table) == 1:
        ((kind, checks),) = table.items()
        if len(checks) == 1:
            (only,) = checks
            return lambda v: type(v) is kind and only(v)
    get = table.get

    def check(v: Any) -> bool:
        checks = get(type(v))
        if checks is None:
            return False
        for c in checks:  # noqa: SIM110 - a plain loop beats all() over a generator here
            if not c(v):
                return False
        return True

    return check


# --- structural passes (slow path) ----------------------------------------------------------------


def _walk_structural(
    node: SchemaNode,
    v: Any,
    path: str,
    embedded: list[FieldError],
    lists: list[FieldError],
) -> None:
    """Embedded-resource and list-type errors below ``node``, as upstream's two passes."""
    if type(v) is dict:
        if node.embedded_resource:
            embedded.extend(sc.embedded_resource_errors(path, v))
        for k, x in v.items():
            sub = node.properties.get(k)
            if sub is not None:
                _walk_structural(sub, x, sc.child(path, k), embedded, lists)
            elif node.additional_properties is not None:
                _walk_structural(
                    node.additional_properties, x, sc.subscript(path, k), embedded, lists
                )
    elif type(v) is list:
        if node.list_type == "set":
            lists.extend(sc.list_set_errors(path, v))
        elif node.list_type == "map":
            lists.extend(sc.list_map_errors(path, node.list_map_keys, v))
        if node.items is not None:
            for i, x in enumerate(v):
                _walk_structural(node.items, x, sc.subscript(path, i), embedded, lists)


def _list_errors(node: SchemaNode, v: Any, path: str) -> list[FieldError]:
    embedded: list[FieldError] = []
    lists: list[FieldError] = []
    _walk_structural(node, v, path, embedded, lists)
    return lists


# --- public API -----------------------------------------------------------------------------------


class SchemaValidator:
    """A schema compiled once; validates objects against it as kube-apiserver does for CRs.

    ``validate`` returns the errors of ``ValidateCustomResource`` followed by
    those of the embedded-resource and list-type passes (see the module
    docstring for the order). ``path`` prefixes every error path; None is the
    root, where upstream puts custom-resource errors (``spec.replicas``), and
    where errors about the root itself render as ``<nil>``.
    """

    __slots__ = ("root", "schema")

    def __init__(self, schema: dict[str, Any]) -> None:
        #: The schema as written, which also decides how an update's values pair up.
        self.schema = schema
        self.root = SchemaNode(schema)

    def validate(self, obj: Any, path: Path | None = None) -> list[FieldError]:
        if self.root.check(obj):
            return []
        openapi, embedded, lists = self._errors(obj, _prefix(path))
        return openapi + embedded + lists

    def validate_update(
        self,
        new: Any,
        old: Any,
        path: Path | None = None,
        correlation: CorrelatedObject | None = None,
    ) -> list[FieldError]:
        """Validation of an update: ``new`` as on create, with two allowances.

        * With ``correlation`` (CRD validation ratcheting on, KEP-4008), an
          OpenAPI error is dropped when the node it was found at, or the nearest
          ancestor that pairs with the old object, is unchanged (see
          :mod:`kapi.validation.correlation`); ``correlation`` must pair
          ``new`` with ``old``.
        * List-type errors are only reported when ``old`` had none (upstream's
          strategy, older than ratcheting and independent of it).

        Embedded-resource errors are reported as on create, as upstream does.
        """
        if self.root.check(new):
            return []
        prefix = _prefix(path)
        openapi, embedded, lists = self._errors(new, prefix, correlation)
        if lists and _list_errors(self.root, old, prefix):
            lists = []
        return openapi + embedded + lists

    def validate_status_update(
        self, new: Any, old: Any, *, correlation: CorrelatedObject | None = None
    ) -> list[FieldError]:
        """Validation of an update through ``/status`` (upstream's status strategy).

        Only ``status`` is checked against its schema (a spec that no longer
        validates does not block status writes); list-type errors are the whole
        object's, with the older rule of :meth:`validate_update`; embedded
        resources are not checked. With ``correlation`` (pairing the whole
        objects), unchanged status values ratchet as in :meth:`validate_update`
        and errors are named from the object's root (``status.code``); without
        it, from the status's own root (``code``), as upstream names them.
        """
        errs: list[FieldError] = []
        node = self.root.properties.get("status")
        status = new.get("status", _MISSING) if type(new) is dict else _MISSING
        if node is not None and status is not _MISSING and not node.check(status):
            collected: list[oe.OpenAPIError] = []
            pair = None if correlation is None else correlation.key("status")
            if pair is None and correlation is not None:
                # Upstream pairs the two status values on their own when the key does not.
                old_status = old.get("status") if type(old) is dict else None
                schema = self.schema["properties"]["status"]
                pair = CorrelatedObject(status, old_status, schema, correlation.stats)
            if pair is None:
                node.collect(status, "", collected)
            else:
                node.collect_ratcheting(status, "", collected, pair)
            # Upstream loses the status prefix where ratcheting is off (its non-ratcheting
            # branch validates with a nil path): ``code: ... code in body ...``.
            errs = oe.to_field_errors(collected, "" if correlation is None else "status")
        lists = _list_errors(self.root, new, "")
        if lists and _list_errors(self.root, old, ""):
            lists = []
        return errs + lists

    def _errors(
        self, obj: Any, prefix: str, correlation: CorrelatedObject | None = None
    ) -> tuple[list[FieldError], list[FieldError], list[FieldError]]:
        """The slow path: OpenAPI, embedded-resource and list-type errors, in that order."""
        collected: list[oe.OpenAPIError] = []
        if correlation is None:
            self.root.collect(obj, "", collected)
        else:
            self.root.collect_ratcheting(obj, "", collected, correlation)
        embedded: list[FieldError] = []
        lists: list[FieldError] = []
        _walk_structural(self.root, obj, prefix, embedded, lists)
        return oe.to_field_errors(collected, prefix), embedded, lists


def _prefix(path: Path | None) -> str:
    return "" if path is None else str(path)
