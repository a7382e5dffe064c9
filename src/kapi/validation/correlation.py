"""Old and new values of an update, paired node by node (upstream ``CorrelatedObject``).

CRD validation ratcheting (KEP-4008) forgives an error when the value it is
about did not change.  "The value" is a node of the new object together with
the node of the old object it *corresponds to*, which the schema decides:

* object fields pair by name, for declared ``properties`` and for keys an
  ``additionalProperties`` schema covers; keys with no schema do not pair;
* items of an ``x-kubernetes-list-type: map`` list pair by their map keys, so
  reordering the list changes nothing;
* items of sets and atomic lists do not pair: such a list is compared whole.

A :class:`CorrelatedObject` is created per update at the root and grows lazily
as validation walks down (``key``/``index``); each node caches whether it is
deep-equal to its old value, and a parent's comparison reuses its children's.
The comparison is type-strict as Go's ``reflect.DeepEqual`` on decoded JSON is:
``1`` and ``1.0`` differ, and so do ``true`` and ``1``.

Kept from the shipped upstream code, where it differs from a plain deep-equal:
an object with a key its schema does not describe (preserved unknown fields)
is never equal to its old value, and a map-list item without its keys never
pairs.  The time spent comparing is accumulated in :class:`RatchetingStats`,
which kube-apiserver reports as ``apiextensions_apiserver_validation_ratcheting_seconds``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Final

_TYPE_META: Final = frozenset({"apiVersion", "kind"})


class RatchetingStats:
    """What one update's ratcheting cost and forgave, shared by all nodes of its tree."""

    __slots__ = ("ratcheted", "seconds")

    def __init__(self) -> None:
        self.seconds = 0.0
        #: Errors dropped (schema) or turned into warnings (CEL) because their value was unchanged.
        self.ratcheted = 0


class CorrelatedObject:
    """A node of the new object, the old node it corresponds to, and the schema of both."""

    __slots__ = ("_children", "_equal", "_map_list", "_root", "old", "schema", "stats", "value")

    def __init__(
        self,
        value: Any,
        old: Any,
        schema: Mapping[str, Any],
        stats: RatchetingStats,
        *,
        root: bool = False,
    ) -> None:
        self.value = value
        self.old = old
        self.schema = schema
        self.stats = stats
        self._root = root
        self._equal: bool | None = None
        self._children: dict[str | int, CorrelatedObject | None] | None = None
        self._map_list: MapList | None = None

    @classmethod
    def for_update(cls, new: Any, old: Any, schema: Mapping[str, Any]) -> CorrelatedObject:
        """The root of an update's correlation tree, with fresh statistics."""
        return cls(new, old, schema, RatchetingStats(), root=True)

    # --- walking down ------------------------------------------------------------------------

    def key(self, name: str) -> CorrelatedObject | None:
        """The child at field ``name``, or None when it has no counterpart in the old object."""
        return self._child(name, self._key)

    def _child(
        self, at: str | int, pair: Callable[[Any], CorrelatedObject | None]
    ) -> CorrelatedObject | None:
        """The child at ``at``, paired once: later calls (a parent's comparison) reuse it."""
        children = self._children
        if children is None:
            children = self._children = {}
        elif at in children:
            return children[at]
        child = children[at] = pair(at)
        return child

    def _key(self, name: str) -> CorrelatedObject | None:
        value, old = self.value, self.old
        if type(value) is not dict or type(old) is not dict:
            return None
        if name not in value or name not in old:
            return None
        schema = _field_schema(self.schema, name)
        if schema is None:
            return None
        return CorrelatedObject(value[name], old[name], schema, self.stats)

    def field(self, name: str) -> CorrelatedObject | None:
        """The child a validator descends into at ``name``.

        As :meth:`key`, except that the root's ``apiVersion`` and ``kind`` never
        pair: both objects were converted to the same version before validation,
        so an unchanged value there says nothing about what the client sent.
        """
        if self._root and name in _TYPE_META:
            return None
        return self.key(name)

    def index(self, i: int) -> CorrelatedObject | None:
        """The child at item ``i``: only map-list items pair with an old item."""
        return self._child(i, self._index)

    def _index(self, i: int) -> CorrelatedObject | None:
        value, old = self.value, self.old
        if type(value) is not list or type(old) is not list or i >= len(value):
            return None
        if self.schema.get("x-kubernetes-list-type") != "map":
            return None
        item = value[i]
        if self._map_list is None:
            self._map_list = MapList(self.schema, old)
        previous = self._map_list.get(item)
        items = self.schema.get("items")
        if previous is None or not isinstance(items, Mapping):
            return None
        return CorrelatedObject(item, previous, items, self.stats)

    # --- comparing ------------------------------------------------------------------------------

    def equal(self) -> bool:
        """Whether this node is deep-equal to its old counterpart (cached, timed)."""
        if self._equal is not None:
            return self._equal
        start = time.perf_counter()
        try:
            return self._compare()
        finally:
            self.stats.seconds += time.perf_counter() - start

    def _compare(self) -> bool:
        if self._equal is None:
            self._equal = self._uncached_compare()
        return self._equal

    def _uncached_compare(self) -> bool:
        value, old = self.value, self.old
        if value is None or old is None:
            return value is None and old is None
        t = type(value)
        if t is not type(old):
            return False
        if t is list:
            if len(value) != len(old):
                return False
            if self.schema.get("x-kubernetes-list-type") != "map":
                return strict_equal(value, old)  # compared whole, as it cannot pair item by item
            for i in range(len(value)):
                child = self.index(i)
                if child is None or not child._compare():
                    return False
            return True
        if t is dict:
            if len(value) != len(old):
                return False
            for name in value:
                child = self.key(name)
                if child is None or not child._compare():
                    return False
            return True
        return value == old


def _field_schema(schema: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    properties = schema.get("properties")
    if properties and name in properties:
        return properties[name]
    additional = schema.get("additionalProperties")
    return additional if isinstance(additional, Mapping) else None


class MapList:
    """The items of an ``x-kubernetes-list-type: map`` list by their keys (upstream ``MapList``).

    Both ratcheting and CEL's ``oldSelf`` find an item's old counterpart here:
    the first item with the same keys, none for an item missing a key or
    holding a non-scalar one, and none at all unless the schema is an array
    with map keys.
    """

    __slots__ = ("_by_key", "_schema")

    def __init__(self, schema: Mapping[str, Any], items: Any) -> None:
        self._schema = schema
        self._by_key: dict[Any, Any] = {}
        if (
            type(items) is list
            and schema.get("type") == "array"
            and schema.get("x-kubernetes-list-type") == "map"
            and schema.get("x-kubernetes-list-map-keys")
        ):
            for item in items:
                k = _map_key(schema, item)
                if k is not None and k not in self._by_key:
                    self._by_key[k] = item

    def get(self, item: Any) -> Any:
        """The item with ``item``'s keys, or None."""
        if not self._by_key:
            return None
        return self._by_key.get(_map_key(self._schema, item))


def _map_key(schema: Mapping[str, Any], item: Any) -> Any:
    """An item's identity in a map list, or None when it lacks a key or a key is not a scalar.

    Values keep their JSON type, as Go's interface keys do (``1`` and ``1.0`` are
    different keys).  Several keys form one tuple; upstream joins them in a string
    that prints floats with six decimals, so floats are rounded alike here.
    """
    if type(item) is not dict:
        return None
    names = schema.get("x-kubernetes-list-map-keys") or ()
    parts = []
    for name in names:
        v = item.get(name, _MISSING)
        t = type(v)
        if t is float and len(names) > 1:
            parts.append((t, f"{v:f}"))
        elif t in _SCALARS:
            parts.append((t, v))
        else:
            return None
    return tuple(parts)


_MISSING: Final = object()
_SCALARS: Final = frozenset({str, int, float, bool})


def strict_equal(a: Any, b: Any) -> bool:
    """Deep equality of decoded JSON with Go's ``reflect.DeepEqual`` types: 1 != 1.0 != True."""
    t = type(a)
    if t is not type(b):
        return False
    if t is dict:
        if len(a) != len(b):
            return False
        for k, v in a.items():
            w = b.get(k, _MISSING)
            if w is _MISSING or not strict_equal(v, w):
                return False
        return True
    if t is list:
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
