"""The checked syntax tree of a compiled CEL expression, read from its serialized form.

cel-expr-python evaluates in C++ and exposes no syntax tree, but ``Expression.serialize()``
returns the ``cel.expr.CheckedExpr`` protobuf (wrapped in ``google.protobuf.Any``). kapi needs the
tree for what the evaluator does not do: finding references to ``oldSelf`` (transition rules),
estimating cost (static limits at CRD creation, runtime accounting), reporting fields that
the schema does not declare and checking ``format`` calls as cel-go's validator does.
protobuf itself is not a dependency, so this module reads the protobuf wire format directly;
only the fields of ``cel/expr/syntax.proto`` and ``checked.proto`` that kapi uses are decoded.

It also writes that format back, for one purpose: :func:`rewrite_calls` redirects calls the
checker resolved to functions the bindings cannot implement in Python (those returning
optionals, ``cel.@mapInsert``), and ``Env.deserialize`` plans the rewritten tree.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

# Node kinds, one per ``Expr.expr_kind`` case.
CONST = "const"
IDENT = "ident"
SELECT = "select"
CALL = "call"
LIST = "list"
STRUCT = "struct"
COMPREHENSION = "comprehension"


@dataclass(slots=True)
class Node:
    """One expression node. Which attributes are meaningful depends on ``kind``."""

    id: int = 0
    kind: str = CONST
    name: str = ""  # identifier name, selected field or function name
    value: Any = None  # constant value
    operand: Node | None = None  # select operand or call target
    test_only: bool = False  # has() macro
    args: list[Node] = field(default_factory=list)  # call args, list elements, map entries
    iter_var: str = ""
    iter_var2: str = ""  # two-variable comprehensions: the value (iter_var is index or key)
    accu_var: str = ""
    iter_range: Node | None = None
    accu_init: Node | None = None
    loop_condition: Node | None = None
    loop_step: Node | None = None
    result: Node | None = None


@dataclass(slots=True)
class CheckedExpr:
    root: Node
    overloads: dict[int, list[str]]  # node id -> overload ids the checker resolved
    positions: dict[int, int]  # node id -> code point offset in the source
    types: dict[int, str]  # node id -> cel-go type name of the checked type ("dyn", "list"...)


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def _wire_fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) triples; varints become int, the rest stays bytes."""
    out: list[tuple[int, int, Any]] = []
    i, n = 0, len(buf)
    v: int | bytes
    while i < n:
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
        elif wire == 1:
            v = buf[i : i + 8]
            i += 8
        elif wire == 2:
            ln, i = _varint(buf, i)
            v = buf[i : i + ln]
            i += ln
        elif wire == 5:
            v = buf[i : i + 4]
            i += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        out.append((num, wire, v))
    return out


def _fields(buf: bytes) -> list[tuple[int, Any]]:
    """(field number, value) pairs; length-delimited values stay bytes, varints become int."""
    return [(num, v) for num, _, v in _wire_fields(buf)]


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _constant(buf: bytes) -> Any:
    for num, v in _fields(buf):
        if num == 1:
            return None
        if num == 2:
            return bool(v)
        if num == 3:
            return _signed(v)
        if num in (4,):
            return v
        if num == 5:
            return struct.unpack("<d", v)[0]
        if num == 6:
            return bytes(v).decode()
        if num == 7:
            return bytes(v)
    return None


def _expr(buf: bytes) -> Node:
    node = Node()
    for num, v in _fields(buf):
        if num == 2:
            node.id = v
        elif num == 3:
            node.kind, node.value = CONST, _constant(v)
        elif num == 4:
            node.kind = IDENT
            node.name = next((bytes(x).decode() for n, x in _fields(v) if n == 1), "")
        elif num == 5:
            node.kind = SELECT
            for n, x in _fields(v):
                if n == 1:
                    node.operand = _expr(x)
                elif n == 2:
                    node.name = bytes(x).decode()
                elif n == 3:
                    node.test_only = bool(x)
        elif num == 6:
            node.kind = CALL
            for n, x in _fields(v):
                if n == 1:
                    node.operand = _expr(x)
                elif n == 2:
                    node.name = bytes(x).decode()
                elif n == 3:
                    node.args.append(_expr(x))
        elif num == 7:
            node.kind = LIST
            node.args = [_expr(x) for n, x in _fields(v) if n == 1]
        elif num == 8:
            node.kind = STRUCT
            for n, entry in _fields(v):
                if n == 2:
                    for en, ev in _fields(entry):
                        if en in (3, 4):  # map key, value
                            node.args.append(_expr(ev))
        elif num == 9:
            node.kind = COMPREHENSION
            for n, x in _fields(v):
                if n == 1:
                    node.iter_var = bytes(x).decode()
                elif n == 2:
                    node.iter_range = _expr(x)
                elif n == 3:
                    node.accu_var = bytes(x).decode()
                elif n == 4:
                    node.accu_init = _expr(x)
                elif n == 5:
                    node.loop_condition = _expr(x)
                elif n == 6:
                    node.loop_step = _expr(x)
                elif n == 7:
                    node.result = _expr(x)
                elif n == 8:
                    node.iter_var2 = bytes(x).decode()
    return node


# ``cel.expr.Type`` cases and enums, named as cel-go's ``Type.TypeName()`` names them.
_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}
_TYPE_CASES = {
    1: "dyn",
    2: "null_type",
    6: "list",
    7: "map",
    8: "function",
    11: "type",
    12: "*error*",
}


def _type_name(buf: bytes) -> str:
    for num, v in _fields(buf):
        if num in (3, 4):  # primitive, wrapper (a wrapper is named after its primitive)
            return _PRIMITIVES.get(v, "dyn")
        if num == 5:
            return _WELL_KNOWN.get(v, "dyn")
        if num in (9, 10):  # message type, type parameter
            return bytes(v).decode()
        if num == 14:  # abstract type: its name
            return next((bytes(x).decode() for n, x in _fields(v) if n == 1), "dyn")
        if num in _TYPE_CASES:
            return _TYPE_CASES[num]
    return "dyn"


def _map_entries(buf: bytes) -> tuple[int, bytes | int]:
    key: int = 0
    value: bytes | int = b""
    for n, x in _fields(buf):
        if n == 1:
            key = x
        elif n == 2:
            value = x
    return key, value


def decode(serialized: bytes) -> CheckedExpr:
    """Decode ``Expression.serialize()`` output (an ``Any`` holding a ``CheckedExpr``)."""
    payload = next(v for n, v in _fields(serialized) if n == 2)
    root: Node | None = None
    overloads: dict[int, list[str]] = {}
    positions: dict[int, int] = {}
    types: dict[int, str] = {}
    for num, v in _fields(payload):
        if num == 4:
            root = _expr(v)
        elif num == 2:  # reference_map
            key, ref = _map_entries(v)
            assert isinstance(ref, bytes)
            overloads[key] = [bytes(x).decode() for n, x in _fields(ref) if n == 3]
        elif num == 3:  # type_map
            key, t = _map_entries(v)
            assert isinstance(t, bytes)
            types[key] = _type_name(t)
        elif num == 5:  # source_info
            for n, x in _fields(v):
                if n == 4:
                    key, pos = _map_entries(x)
                    assert isinstance(pos, int)
                    positions[key] = pos
    if root is None:
        raise ValueError("serialized expression has no syntax tree")
    return CheckedExpr(root, overloads, positions, types)


def walk(node: Node | None):
    """Every node of the tree, depth first."""
    if node is None:
        return
    yield node
    yield from walk(node.operand)
    for a in node.args:
        yield from walk(a)
    for child in (node.iter_range, node.accu_init, node.loop_condition, node.loop_step):
        yield from walk(child)
    yield from walk(node.result)


# --- rewriting -----------------------------------------------------------------------------


class CallRewrite(NamedTuple):
    """Where calls resolved to one overload go at runtime.

    ``function`` names the implementation to call instead; with ``wrap_first`` the call is
    wrapped in ``.first()``, turning the list of zero or one element the implementation
    returns into the optional the checker expects.
    """

    function: str
    wrap_first: bool


# Expr fields holding sub-expressions, per ``expr_kind`` case (select, call, list, comprehension);
# struct entries (case 8) hold theirs one level down, in map_key and value.
_EXPR_FIELDS: dict[int, frozenset[int]] = {
    5: frozenset({1}),
    6: frozenset({1, 3}),
    7: frozenset({1}),
    9: frozenset({2, 4, 5, 6, 7}),
}
_STRUCT = 8
_ENTRY_EXPR_FIELDS = frozenset({3, 4})
_CALL = 6
_CALL_FUNCTION = 2


def _encode_varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _encode(fields: list[tuple[int, int, Any]]) -> bytes:
    out = bytearray()
    for num, wire, v in fields:
        out += _encode_varint(num << 3 | wire)
        if wire == 0:
            out += _encode_varint(v)
        elif wire == 2:
            out += _encode_varint(len(v)) + bytes(v)
        else:
            out += bytes(v)
    return bytes(out)


class _Rewriter:
    """Rewrites the calls of an expression tree whose ids are in ``targets``."""

    def __init__(self, targets: dict[int, CallRewrite], next_id: int) -> None:
        self._targets = targets
        self._next_id = next_id

    def expr(self, buf: bytes) -> bytes:
        fields = _wire_fields(buf)
        expr_id = next((v for n, _, v in fields if n == 2), 0)
        rewrite = self._targets.get(expr_id)
        out = []
        for num, wire, v in fields:
            if num in _EXPR_FIELDS:
                v = self._children(v, _EXPR_FIELDS[num], rewrite if num == _CALL else None)
            elif num == _STRUCT:
                v = _encode(
                    [
                        (n, w, self._children(x, _ENTRY_EXPR_FIELDS, None) if n == 2 else x)
                        for n, w, x in _wire_fields(v)
                    ]
                )
            out.append((num, wire, v))
        encoded = _encode(out)
        if rewrite is None or not rewrite.wrap_first:
            return encoded
        self._next_id += 1
        call = _encode([(1, 2, encoded), (_CALL_FUNCTION, 2, b"first")])
        return _encode([(2, 0, self._next_id), (_CALL, 2, call)])

    def _children(
        self, buf: bytes, expr_fields: frozenset[int], rewrite: CallRewrite | None
    ) -> bytes:
        out = []
        for num, wire, v in _wire_fields(buf):
            if num in expr_fields:
                v = self.expr(v)
            elif rewrite is not None and num == _CALL_FUNCTION:
                v = rewrite.function.encode()
            out.append((num, wire, v))
        return _encode(out)


def rewrite_calls(serialized: bytes, rewrites: Mapping[str, CallRewrite]) -> bytes | None:
    """``Expression.serialize()`` output with calls to the overloads in ``rewrites`` redirected.

    None when the expression calls none of them, so that most rules keep the program the
    compiler built.
    """
    parsed = decode(serialized)
    targets = {
        node_id: rewrites[o]
        for node_id, ids in parsed.overloads.items()
        for o in ids
        if o in rewrites
    }
    if not targets:
        return None
    rewriter = _Rewriter(targets, max(n.id for n in walk(parsed.root)))
    outer = _wire_fields(serialized)
    payload = next(v for n, _, v in outer if n == 2)
    checked = [(n, w, rewriter.expr(v) if n == 4 else v) for n, w, v in _wire_fields(payload)]
    return _encode([(n, w, _encode(checked) if n == 2 else v) for n, w, v in outer])
