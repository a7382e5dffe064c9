"""Field paths, field sets and their ``FieldsV1`` encoding (structured-merge-diff's ``fieldpath``).

A path element is kept in its ``FieldsV1`` spelling, which is also its
identity: ``f:<name>`` (a field of a map or struct), ``k:{"name":"x"}`` (an
item of a list keyed by its map keys, sorted by key name), ``v:"x"`` (an
item of a set, by value) and ``i:0`` (by index).  Keys and values use Go's
JSON spelling, so equal elements have equal strings and a ``FieldsV1``
document decodes without re-encoding its keys.

A :class:`FieldSet` is a trie: ``members`` are the path elements that end a
path here, ``children`` the subsets below an element.  Sets are never changed
once built; operations return new sets and share unchanged subtrees, so an
operation that changes nothing returns its operand and the ``FieldsV1`` form
of a decoded set is reused when the set comes back unchanged.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from typing import Any

import orjson

from kapi.apimachinery.gotext import go_format_float, go_json, go_quote

PathElement = str
Path = tuple[PathElement, ...]

FIELD, KEY, VALUE, INDEX = "f:", "k:", "v:", "i:"


class FieldsV1Error(ValueError):
    """A ``fieldsV1`` document that does not decode (upstream's ``FromJSON`` errors)."""


def field_element(name: str) -> PathElement:
    return FIELD + name


def index_element(index: int) -> PathElement:
    return f"{INDEX}{index}"


def value_element(value: Any) -> PathElement:
    return VALUE + go_json(value)


def key_element(fields: list[tuple[str, Any]]) -> PathElement:
    """A list item by its key fields (sorted by name, as ``value.FieldList.Sort``)."""
    fields.sort(key=lambda f: f[0])
    if all(type(v) in _CACHED_KEY_TYPES for _, v in fields):
        # The type goes into the cache key too: True == 1 and 1.0 == 1 in Python.
        return _key_element(tuple((n, type(v), v) for n, v in fields))
    return _spell_key(fields)


#: Key values whose element strings are remembered: hashable, and what keys usually are.
_CACHED_KEY_TYPES = frozenset({str, int, bool, float, type(None)})


@functools.lru_cache(maxsize=4096)
def _key_element(fields: tuple[tuple[str, type, Any], ...]) -> PathElement:
    """:func:`_spell_key`, remembered: every write of an object spells the same keys
    (a container's name, a port's number and protocol) for its managedFields."""
    return _spell_key([(n, v) for n, _, v in fields])


def _spell_key(fields: list[tuple[str, Any]]) -> PathElement:
    return KEY + "{" + ",".join(f"{go_json(n)}:{go_json(v)}" for n, v in fields) + "}"


# -- order and printing -------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def sort_key(pe: PathElement) -> tuple[Any, ...]:
    """``PathElement.Compare``: fields, then keys, then values, then indexes."""
    kind = pe[:2]
    if kind == FIELD:
        return (0, pe[2:])
    if kind == KEY:
        fields = json.loads(pe[2:])
        return (1, tuple((name, value_sort_key(v)) for name, v in fields.items()))
    if kind == VALUE:
        return (2, value_sort_key(json.loads(pe[2:])))
    return (3, int(pe[2:]))


def value_sort_key(v: Any) -> tuple[Any, ...]:
    """``value.Compare``: numbers, strings, booleans, lists, maps, then null."""
    if isinstance(v, bool):
        return (2, v)
    if isinstance(v, int | float):
        return (0, v)
    if isinstance(v, str):
        return (1, v)
    if isinstance(v, list):
        return (3, tuple(value_sort_key(x) for x in v))
    if isinstance(v, dict):
        return (4, tuple((k, value_sort_key(x)) for k, x in sorted(v.items())))
    return (5,)


def value_string(v: Any) -> str:
    """``value.ToString``: how key values appear in paths (``[name="x"]``)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return go_format_float(v)
    if isinstance(v, str):
        return go_quote(v)
    if isinstance(v, list):
        return "[" + ",".join(value_string(x) for x in v) + "]"
    return "".join(f"{k}={value_string(x)}" for k, x in v.items())


def element_string(pe: PathElement) -> str:
    """``PathElement.String``: ``.name``, ``[name="x",port=80]``, ``[=v]`` or ``[0]``."""
    kind = pe[:2]
    if kind == FIELD:
        return "." + pe[2:]
    if kind == KEY:
        fields = json.loads(pe[2:])
        return "[" + ",".join(f"{k}={value_string(v)}" for k, v in fields.items()) + "]"
    if kind == VALUE:
        return f"[={value_string(json.loads(pe[2:]))}]"
    return f"[{pe[2:]}]"


def path_string(path: Path) -> str:
    return "".join(element_string(pe) for pe in path)


# -- sets ---------------------------------------------------------------------------------


class FieldSet:
    """A set of field paths (``fieldpath.Set``); immutable once built.

    Children are never empty, so emptiness is a constant-time check.
    """

    __slots__ = ("_fields_v1", "children", "members")

    def __init__(
        self,
        members: set[PathElement] | None = None,
        children: dict[PathElement, FieldSet] | None = None,
    ) -> None:
        self.members: set[PathElement] = members if members is not None else set()
        self.children: dict[PathElement, FieldSet] = children if children is not None else {}
        #: The ``FieldsV1`` form, once computed (or the document this set was decoded from).
        self._fields_v1: dict[str, Any] | None = None

    @classmethod
    def of(cls, *paths: Path) -> FieldSet:
        out = cls()
        for path in paths:
            out._insert(path)
        return out

    def _insert(self, path: Path) -> None:
        """Add ``path``; only while the set is being built."""
        node = self
        for pe in path[:-1]:
            child = node.children.get(pe)
            if child is None:
                child = node.children[pe] = FieldSet()
            node = child
        if path:
            node.members.add(path[-1])

    def empty(self) -> bool:
        return not self.members and not self.children

    def __bool__(self) -> bool:
        return bool(self.members or self.children)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSet):
            return NotImplemented
        return self is other or (self.members == other.members and self.children == other.children)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FieldSet({[path_string(p) for p in self.paths()]})"

    def has(self, path: Path) -> bool:
        node = self
        for pe in path[:-1]:
            child = node.children.get(pe)
            if child is None:
                return False
            node = child
        return bool(path) and path[-1] in node.members

    def paths(self, prefix: Path = ()) -> Iterator[Path]:
        """Every path, in upstream's ``Iterate`` order: members, then children, each sorted."""
        for pe in sorted(self.members, key=sort_key):
            yield (*prefix, pe)
        for pe in sorted(self.children, key=sort_key):
            yield from self.children[pe].paths((*prefix, pe))

    # -- algebra --------------------------------------------------------------------------

    def union(self, other: FieldSet) -> FieldSet:
        if other is self or not other:
            return self
        if not self:
            return other
        members = self.members | other.members if other.members else self.members
        children = self.children
        if other.children:
            children = dict(self.children)
            for pe, theirs in other.children.items():
                mine = children.get(pe)
                children[pe] = theirs if mine is None else mine.union(theirs)
        if len(members) == len(self.members) and _same_children(children, self.children):
            return self
        return FieldSet(set(members), children)

    def intersection(self, other: FieldSet) -> FieldSet:
        if other is self:
            return self
        if not self or not other:
            return EMPTY
        members = self.members & other.members
        children: dict[PathElement, FieldSet] = {}
        small, large = (
            (self.children, other.children)
            if len(self.children) <= len(other.children)
            else (other.children, self.children)
        )
        for pe, child in small.items():
            theirs = large.get(pe)
            if theirs is not None:
                both = child.intersection(theirs)
                if both:
                    children[pe] = both
        return FieldSet(members, children) if members or children else EMPTY

    def difference(self, other: FieldSet) -> FieldSet:
        """``Set.Difference``: members go by member, children by the other's children only."""
        if not self or not other:
            return self
        if other is self:
            return EMPTY
        members = self.members - other.members if other.members else self.members
        changed = len(members) != len(self.members)
        children = self.children
        if other.children and self.children:
            children = {}
            for pe, mine in self.children.items():
                theirs = other.children.get(pe)
                if theirs is None:
                    children[pe] = mine
                    continue
                rest = mine.difference(theirs)
                changed |= rest is not mine
                if rest:
                    children[pe] = rest
        return self._remainder(changed, members, children)

    def recursive_difference(self, other: FieldSet) -> FieldSet:
        """``Set.RecursiveDifference``: a member of ``other`` also removes what lies below it."""
        if not self or not other:
            return self
        members = self.members - other.members if other.members else self.members
        changed = len(members) != len(self.members)
        children: dict[PathElement, FieldSet] = {}
        for pe, mine in self.children.items():
            if pe in other.members:
                changed = True
                continue
            theirs = other.children.get(pe)
            rest = mine if theirs is None else mine.recursive_difference(theirs)
            changed |= rest is not mine
            if rest:
                children[pe] = rest
        return self._remainder(changed, members, children)

    def _remainder(
        self, changed: bool, members: set[PathElement], children: dict[PathElement, FieldSet]
    ) -> FieldSet:
        """What a difference leaves: ``self`` itself when it removed nothing (so callers
        can tell by identity), else the rest, or ``EMPTY`` when nothing is left."""
        if not changed:
            return self
        return FieldSet(set(members), children) if members or children else EMPTY

    # -- FieldsV1 -------------------------------------------------------------------------

    def to_fields_v1(self) -> dict[str, Any]:
        """The ``FieldsV1`` document (``Set.ToJSON``), keys in upstream's order.

        The result is shared: callers copy it before changing it.
        """
        if self._fields_v1 is None:
            self._fields_v1 = self._emit()
        return self._fields_v1

    def _emit(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        members, children = self.members, self.children
        order = sorted(members | children.keys())
        if order and not (order[0].startswith(FIELD) and order[-1].startswith(FIELD)):
            order.sort(key=sort_key)  # string order is field order only among fields
        for pe in order:
            child = children.get(pe)
            if child is None:
                out[pe] = {}
            elif pe in members:
                out[pe] = {".": {}, **child.to_fields_v1()}
            else:
                out[pe] = child.to_fields_v1()
        return out


EMPTY = FieldSet()


def _same_children(a: dict[PathElement, FieldSet], b: dict[PathElement, FieldSet]) -> bool:
    return a is b or (len(a) == len(b) and all(b.get(pe) is child for pe, child in a.items()))


def from_fields_v1(document: Any) -> FieldSet:
    """Decode a ``FieldsV1`` document (``Set.FromJSON``).

    Keys of unknown kinds are skipped and a node without children is a member,
    as upstream reads them.  Objects are read far more often than their
    managedFields change, so decoded sets are cached by their JSON; a document
    in canonical form is kept (a private copy) as the set's encoding, so an
    unchanged set is not encoded again.
    """
    if not isinstance(document, dict):
        raise FieldsV1Error(f"expected an object, got {go_json(document)}")
    if not document:
        return EMPTY
    return _decode(orjson.dumps(document))


@functools.lru_cache(maxsize=4096)
def _decode(raw: bytes) -> FieldSet:
    found, _, _ = _read(orjson.loads(raw))
    return EMPTY if found is None else found


def _read(node: dict[str, Any]) -> tuple[FieldSet | None, bool, bool]:
    """One node (``readIterV1``): the set below it, whether it is a member, and whether
    ``node`` is exactly the canonical spelling of both."""
    members: set[PathElement] = set()
    children: dict[PathElement, FieldSet] = {}
    is_member = False
    canonical = True
    previous: tuple[Any, ...] | None = None
    for key, value in node.items():
        if key == ".":
            canonical = canonical and previous is None and not is_member and value == {}
            is_member = True
            continue
        pe = _canonical_element(key)
        if pe is None:
            canonical = False
            continue
        order = sort_key(pe)
        canonical = canonical and pe == key and (previous is None or previous < order)
        previous = order
        if not isinstance(value, dict):
            raise FieldsV1Error(f"expected an object at {key}, got {go_json(value)}")
        grandchildren, child_is_member, child_canonical = _read(value)
        canonical = canonical and child_canonical
        if child_is_member:
            members.add(pe)
        if grandchildren is not None:
            children[pe] = grandchildren
    if not members and not children:
        # A node with nothing below it is a member; only ``{}`` spells that canonically.
        return None, True, canonical and not node
    found = FieldSet(members, children)
    if canonical:
        found._fields_v1 = {k: v for k, v in node.items() if k != "."} if is_member else node
    return found, is_member, canonical


@functools.lru_cache(maxsize=4096)
def _canonical_element(key: str) -> PathElement | None:
    """A key's canonical spelling; ``None`` for an unknown kind (skipped, as upstream)."""
    if len(key) < 2:
        raise FieldsV1Error(f"parsing key as path element: key must be 2 characters long: {key}")
    if key[1] != ":":
        raise FieldsV1Error(f"parsing key as path element: missing colon: {key}")
    kind = key[:2]
    if kind == FIELD:
        return key
    try:
        if kind == INDEX:
            return index_element(int(key[2:]))
        if kind == VALUE:
            return value_element(json.loads(key[2:]))
        if kind == KEY:
            fields = json.loads(key[2:])
            if not isinstance(fields, dict):
                raise ValueError("expected an object")
            return key_element(list(fields.items()))
    except ValueError as exc:
        raise FieldsV1Error(f"parsing key as path element: {exc}") from None
    return None
