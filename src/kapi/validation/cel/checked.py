"""The checked syntax tree of a compiled CEL expression, read from its serialized form.

cel-expr-python evaluates in C++ and exposes no syntax tree, but ``Expression.serialize()``
returns the ``cel.expr.CheckedExpr`` protobuf (wrapped in ``google.protobuf.Any``). kapi needs the
tree for what the evaluator does not do: finding references to ``oldSelf`` (transition rules),
estimating cost (static limits at CRD creation, runtime accounting) and reporting fields that
the schema does not declare. protobuf itself is not a dependency, so this module reads the
protobuf wire format directly; only the fields of ``cel/expr/syntax.proto`` and
``checked.proto`` that kapi uses are decoded.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

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


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, Any]]:
    """(field number, value) pairs; length-delimited values stay bytes, varints become int."""
    out: list[tuple[int, Any]] = []
    i, n = 0, len(buf)
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
        out.append((num, v))
    return out


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
    return node


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
    for num, v in _fields(payload):
        if num == 4:
            root = _expr(v)
        elif num == 2:  # reference_map
            key, ref = _map_entries(v)
            assert isinstance(ref, bytes)
            overloads[key] = [bytes(x).decode() for n, x in _fields(ref) if n == 3]
        elif num == 5:  # source_info
            for n, x in _fields(v):
                if n == 4:
                    key, pos = _map_entries(x)
                    assert isinstance(pos, int)
                    positions[key] = pos
    if root is None:
        raise ValueError("serialized expression has no syntax tree")
    return CheckedExpr(root, overloads, positions)


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
