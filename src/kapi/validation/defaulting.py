"""Defaulting by a structural schema (upstream ``apiserver/schema/defaulting``).

Upstream runs two steps whenever a custom resource is decoded, from a request
body and from storage alike: ``PruneNonNullableNullsWithoutDefaults`` right
after pruning, then ``Default``. :meth:`Defaulter.apply` does both, in that
order, so that

- a missing field with a ``default`` gets a deep copy of it, in properties,
  list items and ``additionalProperties`` values, top-down (a defaulted object
  is itself defaulted further);
- a ``null`` in a field that is not ``nullable`` is replaced by the field's
  default, or, when there is none, the map entry is dropped (``null`` list
  items without a default stay, as upstream);
- a ``null`` in a ``nullable`` field is kept.

A ``default: null`` counts as no default, as in upstream's ``JSON.Object``.
Fields the schema does not specify (e.g. under preserve-unknown-fields) are
left alone.
"""

from __future__ import annotations

from typing import Any


def _copy(value: Any) -> Any:
    """A deep copy of JSON data, cheaper than ``copy.deepcopy``."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


class _Node:
    """What defaulting needs of one structural schema node."""

    __slots__ = ("additional", "any_default", "default", "defaults", "items", "nullable", "props")

    def __init__(self, schema: dict[str, Any]) -> None:
        self.default: Any = schema.get("default")
        self.nullable = schema.get("nullable") is True
        props = schema.get("properties") or {}
        self.props: dict[str, _Node] = {k: _Node(v) for k, v in props.items()}
        # Properties with a default, in schema order; applied before descending.
        self.defaults = tuple(
            (k, p.default) for k, p in self.props.items() if p.default is not None
        )
        items = schema.get("items")
        self.items = _Node(items) if isinstance(items, dict) else None
        additional = schema.get("additionalProperties")
        self.additional = _Node(additional) if isinstance(additional, dict) else None
        children = (*self.props.values(), self.items, self.additional)
        #: Whether this node or one below it has a default.
        self.any_default: bool = self.default is not None or any(
            child.any_default for child in children if child is not None
        )

    def null_replacement(self) -> Any:
        """What a ``null`` under this node becomes when it is not nullable (None: nothing)."""
        return None if self.nullable or self.default is None else _copy(self.default)


def _prune_nulls(x: Any, node: _Node | None) -> None:
    """Drop map entries holding a non-nullable ``null`` that has no default to replace it."""
    if node is None:
        return
    if isinstance(x, dict):
        for k in list(x):
            child = node.props.get(k, node.additional)
            if child is None:
                continue
            v = x[k]
            if v is None:
                if not child.nullable and child.default is None:
                    del x[k]
            else:
                _prune_nulls(v, child)
    elif isinstance(x, list):
        for v in x:
            _prune_nulls(v, node.items)


def _default(x: Any, node: _Node) -> None:
    if isinstance(x, dict):
        for k, value in node.defaults:
            if x.get(k, ...) is ... or (x[k] is None and not node.props[k].nullable):
                x[k] = _copy(value)
        for k, v in x.items():
            child = node.props.get(k, node.additional)
            if child is None:
                continue
            if v is None:
                if k in node.props:
                    continue  # already handled by node.defaults above
                v = x[k] = child.null_replacement()
            _default(v, child)
    elif isinstance(x, list) and node.items is not None:
        items = node.items
        for i, v in enumerate(x):
            if v is None:
                v = x[i] = items.null_replacement()
            _default(v, items)


class Defaulter:
    """A structural schema compiled once for defaulting many objects."""

    __slots__ = ("_root",)

    def __init__(self, schema: dict[str, Any]) -> None:
        self._root = _Node(schema)

    def __call__(self, obj: Any) -> None:
        """Drop non-nullable nulls that have no default, then apply defaults, in place."""
        _prune_nulls(obj, self._root)
        _default(obj, self._root)

    def changes(self, encoded: bytes) -> bool:
        """Whether defaulting might change the JSON object ``encoded``.

        Without a default anywhere in the schema, only a ``null`` can be
        touched (dropped), so a value with no ``null`` in it stays as it is:
        reads from storage can then skip decoding it.
        """
        return self._root.any_default or b"null" in encoded
