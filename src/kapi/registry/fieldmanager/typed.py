"""Typed operations on JSON values: structured-merge-diff's ``typed`` package.

Values are plain decoded JSON; :data:`MISSING` marks an absent field, which
differs from ``null``.  Every operation walks a value with its
:class:`~kapi.registry.fieldmanager.schema.Atom`:

- :func:`validate` checks a value against its type (an applied configuration
  must be valid; live objects may hold duplicate list keys);
- :func:`to_field_set` lists the leaf fields and list items a value sets;
- :func:`compare` splits the difference of two values into removed, modified
  and added fields;
- :func:`merge` lays a configuration over a value (the configuration wins on
  leaves; lists of items merge by key and keep a sensible order);
- :func:`remove_items` drops fields and list items.

Field sets are built bottom-up: each node returns whether its own path is a
member and the set of paths below it, so no path is copied on the way down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kapi.apimachinery.gotext import go_sharp_v, go_sprint, go_type
from kapi.registry.fieldmanager.fieldpath import (
    EMPTY,
    FIELD,
    KEY,
    FieldSet,
    PathElement,
    element_string,
    field_element,
    index_element,
    key_element,
    value_element,
)
from kapi.registry.fieldmanager.schema import BOOLEAN, NUMERIC, STRING, Atom, ListType, MapType


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class ValidationErrors(Exception):
    """Errors of a typed walk, each at a path (``typed.ValidationErrors``)."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        super().__init__(errors)
        self.errors = errors

    def __str__(self) -> str:
        lines = [f"{path}: {message}" if path else message for path, message in self.errors]
        if len(lines) == 1:
            return lines[0]
        return "\n  ".join(["errors:", *lines])


_INVALID_ATOM = "schema error: invalid atom: inlined"
_SCALARS = frozenset({str, int, float, bool, type(None)})


# -- scalar errors, worded with Go's printing of values (kapi.apimachinery.gotext) ---------


def scalar_error(kind: str, v: Any) -> str | None:
    """``validateScalar``: why ``v`` is not a scalar of ``kind`` (``None`` if it is)."""
    if v is None or v is MISSING:
        return None
    if kind == NUMERIC:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return f"expected numeric (int or float), got {go_type(v)}"
    elif kind == STRING:
        if not isinstance(v, str):
            return f"expected string, got &value.valueUnstructured{{Value:{go_sharp_v(v)}}}"
    elif kind == BOOLEAN:
        if not isinstance(v, bool):
            return f"expected boolean, got &{{{go_sprint(v)}}}"
    elif isinstance(v, dict | list):
        return f"expected any scalar, got &{{{go_sprint(v)}}}"
    return None


def equal(a: Any, b: Any) -> bool:
    """``value.Equals`` for leaves: numbers compare by value, booleans only with booleans."""
    return a == b and (type(a) is bool) == (type(b) is bool)


# -- list items ---------------------------------------------------------------------------


class _ItemError(Exception):
    pass


def item_element(t: ListType, item: Any) -> PathElement:
    """``listItemToPathElement`` for an associative list."""
    if t.keys:
        if item is None:
            raise _ItemError("associative list with keys may not have a null element")
        if not isinstance(item, dict):
            raise _ItemError("associative list with keys may not have non-map elements")
        fields: list[tuple[str, Any]] = []
        element_map = t.element.map
        for name in t.keys:
            if name in item:
                fields.append((name, item[name]))
                continue
            if element_map is None:
                raise _ItemError(
                    f"couldn't find default value for {name}: "
                    "associative list may not have non-map types"
                )
            default = element_map.defaults.get(name)
            if default is None:
                raise _ItemError(
                    f"associative list with keys has an element that omits key field "
                    f'"{name}" (and doesn\'t have default value)'
                )
            fields.append((name, default))
        return key_element(fields)
    if isinstance(item, dict):
        raise _ItemError("associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise _ItemError("not supported: associative list with lists as elements")
    if item is None:
        raise _ItemError("associative list without keys has an element that's an explicit null")
    return value_element(item)


# -- validation ---------------------------------------------------------------------------


def validate(value: Any, atom: Atom, *, allow_duplicates: bool = False) -> None:
    """Raise :class:`ValidationErrors` unless ``value`` conforms to ``atom``."""
    errs: list[tuple[str, str]] = []
    _validate(value, atom, "", allow_duplicates, errs)
    if errs:
        raise ValidationErrors(errs)


def _validate(v: Any, atom: Atom, path: str, dup: bool, errs: list[tuple[str, str]]) -> None:
    a = atom.deduce(v)
    if a.map is not None:
        if v is None:
            return
        if not isinstance(v, dict):
            errs.append((path, f"expected map, got &{{{go_sprint(v)}}}"))
            return
        t = a.map
        for key, child in v.items():
            child_type = t.type_of(key)
            if child_type is None:
                errs.append((f"{path}.{key}", "field not declared in schema"))
                return
            _validate(child, child_type, f"{path}.{key}", dup, errs)
    elif a.scalar is not None:
        message = scalar_error(a.scalar, v)
        if message:
            errs.append((path, message))
    elif a.list is not None:
        if v is None:
            return
        if not isinstance(v, list):
            errs.append((path, f"expected list, got &{{{go_sprint(v)}}}"))
            return
        lt = a.list
        seen: set[PathElement] = set()
        for i, item in enumerate(v):
            if not lt.associative:
                pe = index_element(i)
            else:
                try:
                    pe = item_element(lt, item)
                except _ItemError as exc:
                    errs.append((path, f"element {i}: {exc}"))
                    return
                if pe in seen and not dup:
                    errs.append((path, f"duplicate entries for key {element_string(pe)}"))
                seen.add(pe)
            _validate(item, lt.element, path + element_string(pe), dup, errs)
    else:
        errs.append((path, _INVALID_ATOM))


# -- field sets ---------------------------------------------------------------------------


def to_field_set(value: Any, atom: Atom) -> FieldSet:
    """Every leaf field and list item ``value`` sets (``TypedValue.ToFieldSet``)."""
    _, below = _field_set(value, atom)
    return below or EMPTY


def _field_set(v: Any, atom: Atom) -> tuple[bool, FieldSet | None]:
    """Whether this node's own path is in the set, and the set below it."""
    a = atom.deduce(v)
    if a.map is not None:
        t = a.map
        if t.atomic:
            return True, None
        if not isinstance(v, dict) or not v:
            return False, None
        members: set[PathElement] = set()
        children: dict[PathElement, FieldSet] = {}
        fields = t.fields
        for key, child in v.items():
            pe = FIELD + key
            child_type = fields.get(key)
            declared = child_type is not None
            if child_type is None:
                child_type = t.element
                if child_type is None:
                    raise ValidationErrors([(f".{key}", "field not declared in schema")])
            is_member, below = _field_set(child, child_type)
            if (
                is_member
                or child is None
                or not declared
                or (isinstance(child, dict) and not child)
            ):
                members.add(pe)
            if below is not None:
                children[pe] = below
        return False, FieldSet(members, children) if members or children else None
    if a.scalar is not None:
        return True, None
    if a.list is not None:
        lt = a.list
        if not lt.associative:
            return True, None
        if not isinstance(v, list) or not v:
            return False, None
        pes = [_element_or_error(lt, item, i) for i, item in enumerate(v)]
        members = set(pes)
        duplicates = {pe for pe in members if pes.count(pe) > 1} if len(members) < len(pes) else ()
        children = {}
        for pe, item in zip(pes, v, strict=True):
            if pe in duplicates:
                continue
            _, below = _field_set(item, lt.element)
            if below is not None:
                children[pe] = below
        return False, FieldSet(members, children)
    raise ValidationErrors([("", _INVALID_ATOM)])


def _element_or_error(t: ListType, item: Any, index: int) -> PathElement:
    try:
        return item_element(t, item)
    except _ItemError as exc:
        raise ValidationErrors([("", f"element {index}: {exc}")]) from None


def ensure_named_fields_are_members(s: FieldSet, atom: Atom | None) -> FieldSet:
    """``Set.EnsureNamedFieldsAreMembers``: a struct field with children is a member too."""
    if not s.children:
        return s
    map_type = atom.map if atom is not None else None
    list_type = atom.list if atom is not None else None
    members = s.members
    children: dict[PathElement, FieldSet] = {}
    for pe, child in s.children.items():
        child_type: Atom | None = None
        if pe.startswith(FIELD) and map_type is not None:
            name = pe[2:]
            child_type = map_type.fields.get(name)
            if child_type is not None:
                if pe not in members:
                    members = members | {pe}
            else:
                child_type = map_type.element
        elif pe.startswith(KEY) and list_type is not None:
            child_type = list_type.element
        children[pe] = ensure_named_fields_are_members(child, child_type)
    return FieldSet(set(members), children)


# -- comparison ---------------------------------------------------------------------------


@dataclass
class Comparison:
    """Fields ``rhs`` removed, modified and added relative to ``lhs``."""

    removed: FieldSet
    modified: FieldSet
    added: FieldSet


_ADDED, _REMOVED, _MODIFIED = 1, 2, 4
#: One node's comparison: its own path's flags and the removed/modified/added sets below it.
_Result = tuple[int, "FieldSet | None", "FieldSet | None", "FieldSet | None"]
_NOTHING: _Result = (0, None, None, None)


def compare(lhs: Any, rhs: Any, atom: Atom) -> Comparison:
    """``TypedValue.Compare``; duplicate list items compare as one atomic item."""
    errs: list[tuple[str, str]] = []
    _, removed, modified, added = _compare(lhs, rhs, atom, errs)
    if errs:
        raise ValidationErrors(errs)
    return Comparison(removed or EMPTY, modified or EMPTY, added or EMPTY)


def _compare(l: Any, r: Any, atom: Atom, errs: list[tuple[str, str]]) -> _Result:  # noqa: E741
    # Shortcuts with the walk's results: a new or dropped subtree is added or removed as
    # a whole, and an equal one (compared in C) has no changes.  Python's equality only
    # differs from upstream's for a boolean and a number at the same place (``true == 1``).
    if l is MISSING:
        return (_ADDED, None, None, _all_below(r, atom, errs))
    if r is MISSING:
        return (_REMOVED, _all_below(l, atom, errs), None, None)
    if l is r or (l == r and (type(l) is bool) == (type(r) is bool)):
        return _NOTHING
    al, ar = atom.deduce(l), atom.deduce(r)
    if r is MISSING:
        in_leaf, result = _compare_atom(al, l, r, errs)
    elif l is MISSING or al is ar:
        in_leaf, result = _compare_atom(ar, l, r, errs)
    else:
        _, first = _compare_atom(al, l, r, errs)
        in_leaf, result = _compare_atom(ar, l, r, errs)
        result = _union_results(first, result)
    if not in_leaf:
        if l is MISSING:
            result = (result[0] | _ADDED, *result[1:])
        elif r is MISSING:
            result = (result[0] | _REMOVED, *result[1:])
    return result


def all_fields(value: Any, atom: Atom) -> FieldSet:
    """Every field, map and list item of ``value``: what it adds to nothing."""
    errs: list[tuple[str, str]] = []
    found = _all_below(value, atom, errs)
    if errs:
        raise ValidationErrors(errs)
    return found or EMPTY


def _all_below(v: Any, atom: Atom, errs: list[tuple[str, str]]) -> FieldSet | None:
    """Every path below ``v``, each a member: how a subtree compares with a missing one."""
    a = atom.deduce(v)
    if a.map is not None:
        t = a.map
        if t.atomic or not isinstance(v, dict) or not v:
            return None
        if t.of_scalars:
            return FieldSet({FIELD + key for key in v})
        members: set[PathElement] = set()
        children: dict[PathElement, FieldSet] = {}
        fields, element = t.fields, t.element
        for key, child in v.items():
            child_type = fields.get(key) or element
            if child_type is None:
                errs.append((f".{key}", _INVALID_ATOM))
                continue
            pe = FIELD + key
            members.add(pe)
            if child.__class__ in _SCALARS:
                continue  # nothing below a scalar, whatever its declared type
            below = _all_below(child, child_type, errs)
            if below is not None:
                children[pe] = below
        return FieldSet(members, children) if members else None
    if a.scalar is not None:
        return None
    if a.list is not None:
        t_list = a.list
        if not t_list.associative or not isinstance(v, list) or not v:
            return None
        items = _index_items(t_list, v, errs)
        children = {}
        for pe, found in items.items():
            if len(found) == 1:
                below = _all_below(found[0], t_list.element, errs)
                if below is not None:
                    children[pe] = below
        return FieldSet(set(items), children) if items else None
    errs.append(("", _INVALID_ATOM))
    return None


def _union_results(a: _Result, b: _Result) -> _Result:
    def union(x: FieldSet | None, y: FieldSet | None) -> FieldSet | None:
        return y if x is None else x if y is None else x.union(y)

    return (a[0] | b[0], union(a[1], b[1]), union(a[2], b[2]), union(a[3], b[3]))


def _leaf(l: Any, r: Any) -> _Result:  # noqa: E741
    if l is MISSING:
        return (_ADDED, None, None, None)
    if r is MISSING:
        return (_REMOVED, None, None, None)
    if not equal(l, r):
        return (_MODIFIED, None, None, None)
    return _NOTHING


def _compare_atom(
    a: Atom,
    l: Any,  # noqa: E741
    r: Any,
    errs: list[tuple[str, str]],
) -> tuple[bool, _Result]:
    """One handler of ``compareWalker``: whether the node was a leaf, and its result."""
    if a.map is not None:
        t = a.map
        lhs = l if isinstance(l, dict) else None
        rhs = r if isinstance(r, dict) else None
        if t.atomic or (not lhs and not rhs):
            return True, _leaf(l, r)
        return False, _compare_map(t, lhs, rhs, errs)
    if a.scalar is not None:
        left, right = scalar_error(a.scalar, l), scalar_error(a.scalar, r)
        if left and right:
            errs += [("", "lhs: " + left), ("", "rhs: " + right)]
            return False, _NOTHING
        return True, _leaf(l, r)
    if a.list is not None:
        t_list = a.list
        lhs_list = l if isinstance(l, list) else None
        rhs_list = r if isinstance(r, list) else None
        if not t_list.associative or (not lhs_list and not rhs_list):
            return True, _leaf(l, r)
        return False, _compare_list(t_list, lhs_list or [], rhs_list or [], errs)
    errs.append(("", _INVALID_ATOM))
    return False, _NOTHING


class _Builder:
    """Accumulates the removed/modified/added sets of one node's children."""

    __slots__ = ("sets",)

    def __init__(self) -> None:
        self.sets: list[tuple[set[PathElement], dict[PathElement, FieldSet]] | None] = [
            None,
            None,
            None,
        ]

    def _at(self, i: int) -> tuple[set[PathElement], dict[PathElement, FieldSet]]:
        found = self.sets[i]
        if found is None:
            found = self.sets[i] = (set(), {})
        return found

    def add(self, pe: PathElement, child: _Result) -> None:
        flags = child[0]
        if flags:
            if flags & _REMOVED:
                self._at(0)[0].add(pe)
            if flags & _MODIFIED:
                self._at(1)[0].add(pe)
            if flags & _ADDED:
                self._at(2)[0].add(pe)
        for i, below in enumerate(child[1:]):
            if below is not None:
                self._at(i)[1][pe] = below

    def member(self, i: int, pe: PathElement) -> None:
        self._at(i)[0].add(pe)

    def result(self) -> _Result:
        if self.sets == [None, None, None]:
            return _NOTHING
        out: list[FieldSet | None] = [None, None, None]
        for i, found in enumerate(self.sets):
            if found is not None and (found[0] or found[1]):
                out[i] = FieldSet(found[0], found[1])
        return (0, out[0], out[1], out[2])


def _compare_map(
    t: MapType,
    lhs: dict[str, Any] | None,
    rhs: dict[str, Any] | None,
    errs: list[tuple[str, str]],
) -> _Result:
    """The fields of two maps, compared key by key.

    The common cases are handled inline (this is the hot path of every write):
    equal values, scalars that differ, and keys only one side has.
    """
    lhs, rhs = lhs or {}, rhs or {}
    if t.of_scalars:
        return _compare_scalar_map(lhs, rhs)
    fields, element = t.fields, t.element
    # Members and children of the removed, modified and added sets below this map.
    rm: set[PathElement] = set()
    mm: set[PathElement] = set()
    am: set[PathElement] = set()
    rc: dict[PathElement, FieldSet] = {}
    mc: dict[PathElement, FieldSet] = {}
    ac: dict[PathElement, FieldSet] = {}
    for key, lv in lhs.items():
        rv = rhs.get(key, MISSING)
        if lv is rv or (lv == rv and lv.__class__ is rv.__class__):
            continue
        child_type = fields.get(key) or element
        if child_type is None:
            errs.append((f".{key}", _INVALID_ATOM))
            continue
        pe = FIELD + key
        if rv is MISSING:
            rm.add(pe)
            if lv.__class__ not in _SCALARS:
                below = _all_below(lv, child_type, errs)
                if below is not None:
                    rc[pe] = below
        elif lv.__class__ in _SCALARS and rv.__class__ in _SCALARS:
            if not equal(lv, rv):
                mm.add(pe)
        else:
            flags, below_removed, below_modified, below_added = _compare(lv, rv, child_type, errs)
            if flags & _REMOVED:
                rm.add(pe)
            if flags & _MODIFIED:
                mm.add(pe)
            if flags & _ADDED:
                am.add(pe)
            if below_removed is not None:
                rc[pe] = below_removed
            if below_modified is not None:
                mc[pe] = below_modified
            if below_added is not None:
                ac[pe] = below_added
    for key, rv in rhs.items():
        if key in lhs:
            continue
        child_type = fields.get(key) or element
        if child_type is None:
            errs.append((f".{key}", _INVALID_ATOM))
            continue
        pe = FIELD + key
        am.add(pe)
        if rv.__class__ not in _SCALARS:
            below = _all_below(rv, child_type, errs)
            if below is not None:
                ac[pe] = below
    return (
        0,
        FieldSet(rm, rc) if rm or rc else None,
        FieldSet(mm, mc) if mm or mc else None,
        FieldSet(am, ac) if am or ac else None,
    )


def _compare_scalar_map(lhs: dict[str, Any], rhs: dict[str, Any]) -> _Result:
    """A map of scalars: every key is a leaf."""
    removed = {FIELD + k for k in lhs.keys() - rhs.keys()}
    added = {FIELD + k for k in rhs.keys() - lhs.keys()}
    modified = {FIELD + k for k, v in lhs.items() if k in rhs and not equal(v, rhs[k])}
    return (
        0,
        FieldSet(removed) if removed else None,
        FieldSet(modified) if modified else None,
        FieldSet(added) if added else None,
    )


def _index_items(
    t: ListType, items: list[Any], errs: list[tuple[str, str]]
) -> dict[PathElement, list[Any]]:
    found: dict[PathElement, list[Any]] = {}
    for i, item in enumerate(items):
        try:
            pe = item_element(t, item)
        except _ItemError as exc:
            errs.append(("", f"element {i}: {exc}"))
            continue
        found.setdefault(pe, []).append(item)
    return found


def _compare_list(
    t: ListType, lhs: list[Any], rhs: list[Any], errs: list[tuple[str, str]]
) -> _Result:
    left, right = _index_items(t, lhs, errs), _index_items(t, rhs, errs)
    out = _Builder()
    for pe in [*left, *(pe for pe in right if pe not in left)]:
        lv, rv = left.get(pe, ()), right.get(pe, ())
        if len(lv) <= 1 and len(rv) <= 1:
            child = _compare(lv[0] if lv else MISSING, rv[0] if rv else MISSING, t.element, errs)
            if child is not _NOTHING:
                out.add(pe, child)
        elif len(lv) >= 2 and len(rv) >= 2:
            if len(lv) != len(rv) or not all(map(equal, lv, rv)):
                out.member(1, pe)
        elif len(lv) >= 2:
            if rv:
                out.add(pe, _compare(MISSING, rv[0], t.element, errs))
            out.member(0, pe)
        else:
            if lv:
                out.add(pe, _compare(lv[0], MISSING, t.element, errs))
            out.member(2, pe)
    return out.result()


# -- merge --------------------------------------------------------------------------------


def merge(lhs: Any, rhs: Any, atom: Atom) -> Any:
    """``TypedValue.Merge``: ``rhs`` laid over ``lhs``; :data:`MISSING` when nothing is left."""
    errs: list[tuple[str, str]] = []
    out = _merge(lhs, rhs, atom, errs)
    if errs:
        raise ValidationErrors(errs)
    return out


def _merge(l: Any, r: Any, atom: Atom, errs: list[tuple[str, str]]) -> Any:  # noqa: E741
    al, ar = atom.deduce(l), atom.deduce(r)
    if r is MISSING:
        return _merge_atom(al, l, r, errs)
    if l is not MISSING and al is not ar:
        _merge_atom(al, l, r, errs)
    return _merge_atom(ar, l, r, errs)


def _merge_atom(a: Atom, l: Any, r: Any, errs: list[tuple[str, str]]) -> Any:  # noqa: E741
    if a.map is not None:
        t = a.map
        lhs = l if isinstance(l, dict) else None
        rhs = r if isinstance(r, dict) else None
        if t.atomic or (not lhs and not rhs):
            return r if r is not MISSING else l
        return _merge_map(t, lhs or {}, rhs or {}, errs)
    if a.scalar is not None:
        left, right = scalar_error(a.scalar, l), scalar_error(a.scalar, r)
        if left and right:
            errs += [("", "lhs: " + left), ("", "rhs: " + right)]
            return MISSING
        return r if r is not MISSING else l
    if a.list is not None:
        t_list = a.list
        lhs_list = l if isinstance(l, list) else None
        rhs_list = r if isinstance(r, list) else None
        if not t_list.associative or (not lhs_list and not rhs_list):
            return r if r is not MISSING else l
        return _merge_list(t_list, lhs_list or [], rhs_list or [], errs)
    errs.append(("", _INVALID_ATOM))
    return MISSING


def _merge_map(
    t: MapType, lhs: dict[str, Any], rhs: dict[str, Any], errs: list[tuple[str, str]]
) -> Any:
    out: dict[str, Any] = {}
    for key in [*lhs, *(k for k in rhs if k not in lhs)]:
        child_type = t.type_of(key)
        if child_type is None:
            errs.append((f".{key}", _INVALID_ATOM))
            continue
        merged = _merge(lhs.get(key, MISSING), rhs.get(key, MISSING), child_type, errs)
        if merged is not MISSING:
            out[key] = merged
    return out if out else MISSING


def _index_for_merge(
    t: ListType, items: list[Any], allow_duplicates: bool, errs: list[tuple[str, str]]
) -> tuple[list[PathElement], dict[PathElement, Any]]:
    """``indexListPathElements``: duplicates of the live list merge as ``null``."""
    pes: list[PathElement] = []
    observed: dict[PathElement, Any] = {}
    for i, item in enumerate(items):
        try:
            pe = item_element(t, item)
        except _ItemError as exc:
            errs.append(("", f"element {i}: {exc}"))
            continue
        if pe in observed:
            if not allow_duplicates:
                errs.append(("", f"duplicate entries for key {element_string(pe)}"))
                continue
            observed[pe] = None
        else:
            observed[pe] = item
        pes.append(pe)
    return pes, observed


def _merge_list(t: ListType, lhs: list[Any], rhs: list[Any], errs: list[tuple[str, str]]) -> Any:
    """Merge by key; items keep the live order unless the configuration reorders shared ones."""
    index_errs: list[tuple[str, str]] = []
    rhs_pes, observed_rhs = _index_for_merge(t, rhs, False, index_errs)
    lhs_pes, observed_lhs = _index_for_merge(t, lhs, True, index_errs)
    if index_errs:
        errs += index_errs
        return MISSING
    # Errors inside items are dropped, as upstream's merge drops them.
    item_errs: list[tuple[str, str]] = []
    shared = [pe for pe in rhs_pes if pe in observed_lhs]
    shared.reverse()
    next_shared = shared.pop() if shared else None
    merged_rhs: set[PathElement] = set()
    out: list[Any] = []

    def emit(lv: Any, rv: Any) -> None:
        merged = _merge(lv, rv, t.element, item_errs)
        if merged is not MISSING:
            out.append(merged)

    li = ri = 0
    n_lhs, n_rhs = len(lhs_pes), len(rhs_pes)
    while li < n_lhs or ri < n_rhs:
        if li < n_lhs and ri < n_rhs:
            pe = lhs_pes[li]
            if pe == rhs_pes[ri]:
                merged_rhs.add(pe)
                emit(observed_lhs.get(pe, MISSING), observed_rhs.get(pe, MISSING))
                li += 1
                ri += 1
                next_shared = shared.pop() if shared else None
                continue
            if pe in observed_rhs and next_shared is not None and next_shared != pe:
                li += 1
                continue
        if li < n_lhs:
            pe = lhs_pes[li]
            if pe not in observed_rhs:
                emit(lhs[li], MISSING)
                li += 1
                continue
            if pe in merged_rhs:
                li += 1
        if ri < n_rhs:
            pe = rhs_pes[ri]
            merged_rhs.add(pe)
            emit(observed_lhs.get(pe, MISSING), observed_rhs.get(pe, MISSING))
            ri += 1
            if next_shared is not None and next_shared == pe:
                next_shared = shared.pop() if shared else None
    return out if out else MISSING


# -- removal ------------------------------------------------------------------------------


def remove_items(value: Any, atom: Atom | None, to_remove: FieldSet) -> Any:
    """``TypedValue.RemoveItems``: drop the fields and list items of ``to_remove``.

    As upstream, a map or list left empty (or not of its declared kind) becomes ``null``.
    """
    if atom is None:
        return None
    a = atom.deduce(value)
    if a.map is not None:
        t = a.map
        if not isinstance(value, dict) or not value or t.atomic:
            return None
        out: dict[str, Any] = {}
        for key, child in value.items():
            pe = field_element(key)
            if pe in to_remove.members:
                continue
            below = to_remove.children.get(pe)
            out[key] = child if below is None else remove_items(child, t.type_of(key), below)
        return out or None
    if a.scalar is not None:
        return value
    if a.list is not None:
        t_list = a.list
        if not isinstance(value, list) or not value or not t_list.associative:
            return None
        items: list[Any] = []
        for item in value:
            try:
                pe = item_element(t_list, item)
            except _ItemError:
                pe = ""
            if pe in to_remove.members:
                continue
            below = to_remove.children.get(pe)
            items.append(item if below is None else remove_items(item, t_list.element, below))
        return items or None
    return None
