"""The type model server-side apply merges by (structured-merge-diff's ``schema``).

An :class:`Atom` is what a value may be: a scalar, a list, a map, or, for
untyped values, several of these (the value decides which applies).  Lists
are atomic (replaced whole) or associative: sets of scalars, or lists of maps
keyed by their ``x-kubernetes-list-map-keys``; maps and structs are granular
(merged key by key) or atomic.

Atoms come from two places, with the rules of kube-openapi's ``schemaconv``:
built-in kinds from their Python declaration (:mod:`kapi.runtime.schema`),
custom resources from the CRD's structural OpenAPI schema.  A list with no
``x-kubernetes-list-type`` falls back to its strategic-merge metadata (merge
strategy with a merge key: a map keyed by it; without one: a set); anything
else is atomic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kapi.runtime import schema as declared

NUMERIC, STRING, BOOLEAN, UNTYPED = "numeric", "string", "boolean", "untyped"


@dataclass(eq=False)
class MapType:
    """A struct (named ``fields``) or a map (values of type ``element``), or both."""

    fields: dict[str, Atom] = field(default_factory=dict)
    #: The type of keys that are not fields; ``None``: such keys are not allowed.
    element: Atom | None = None
    atomic: bool = False
    #: Field defaults, used for list map keys an item leaves out.
    defaults: dict[str, Any] = field(default_factory=dict)

    def type_of(self, key: str) -> Atom | None:
        return self.fields.get(key) or self.element

    @property
    def of_scalars(self) -> bool:
        """A map of scalars (``data``, ``labels``): no fields, every value a leaf."""
        element = self.element
        return (
            not self.fields
            and not self.atomic
            and element is not None
            and element.list is None
            and element.map is None
        )


@dataclass(eq=False)
class ListType:
    element: Atom
    associative: bool = False
    #: Map keys of an associative list of maps; empty for a set of scalars.
    keys: tuple[str, ...] = ()


class Atom:
    """One type; several of scalar, list and map only for untyped values."""

    __slots__ = ("_only", "list", "map", "scalar")

    def __init__(
        self,
        scalar: str | None = None,
        list_: ListType | None = None,
        map_: MapType | None = None,
    ) -> None:
        self.scalar = scalar
        self.list = list_
        self.map = map_
        #: The atom narrowed to one kind, for values of that kind (``deduceAtom``).
        self._only: dict[str, Atom] | None = None

    def deduce(self, value: Any) -> Atom:
        """The part of this atom that applies to ``value`` (the whole atom when none does)."""
        only = self._only
        if only is None:
            several = (self.scalar is not None) + (self.list is not None) + (self.map is not None)
            only = self._only = self._narrowed() if several > 1 else {}
        if not only:
            return self
        if isinstance(value, dict):
            return only.get("map", self)
        if isinstance(value, list):
            return only.get("list", self)
        if isinstance(value, str | int | float):
            return only.get("scalar", self)
        return self

    def _narrowed(self) -> dict[str, Atom]:
        only: dict[str, Atom] = {}
        if self.scalar is not None:
            only["scalar"] = Atom(scalar=self.scalar)
        if self.list is not None:
            only["list"] = Atom(list_=self.list)
        if self.map is not None:
            only["map"] = Atom(map_=self.map)
        return only


def _untyped_types() -> tuple[Atom, Atom]:
    """``__untyped_atomic_`` and ``__untyped_deduced_``: what free-form values are."""
    atomic = Atom(scalar=UNTYPED)
    atomic.list = ListType(atomic)
    atomic.map = MapType(element=atomic, atomic=True)
    deduced = Atom(scalar=UNTYPED, list_=ListType(atomic))
    deduced.map = MapType(element=deduced)
    return atomic, deduced


UNTYPED_ATOMIC, DEDUCED = _untyped_types()


def list_relationship(
    list_type: str | None, map_keys: Any, patch_strategy: Any, merge_key: Any
) -> tuple[bool, tuple[str, ...]]:
    """Whether a list is associative, and its keys (``getListElementRelationship``)."""
    if list_type == "set":
        return True, ()
    if list_type == "map":
        return True, tuple(k for k in map_keys or () if isinstance(k, str))
    if list_type is not None:
        return False, ()
    if patch_strategy in ("merge", "merge,retainKeys"):
        return True, ((merge_key,) if isinstance(merge_key, str) else ())
    return False, ()


def _primitive(type_: str, format_: str | None) -> Atom:
    """``convertPrimitive``: formats other than ``byte`` make a string untyped."""
    if type_ in ("integer", "number"):
        return Atom(scalar=NUMERIC)
    if type_ == "boolean":
        return Atom(scalar=BOOLEAN)
    if type_ == "string" and format_ in (None, "", "byte"):
        return Atom(scalar=STRING)
    return Atom(scalar=UNTYPED)


# -- built-in kinds ---------------------------------------------------------------------


class DeclaredTypes:
    """Atoms for built-in declarations; structs are converted once, cycles allowed."""

    def __init__(self) -> None:
        #: By the struct's identity; each entry holds its struct, so the id stays its own.
        self._structs: dict[int, tuple[declared.Struct, Atom]] = {}

    def atom(self, node: declared.Schema) -> Atom:
        if isinstance(node, declared.Struct):
            return self._struct(node)
        if isinstance(node, declared.Scalar):
            return _primitive(node.type, node.format)
        if isinstance(node, declared.Map):
            return Atom(
                map_=MapType(element=self.atom(node.values), atomic=node.map_type == "atomic")
            )
        if isinstance(node, declared.List):
            list_type = node.list_type if node.list_type != "atomic" or node.map_keys else None
            associative, keys = list_relationship(
                list_type, node.map_keys, node.patch_strategy, node.patch_merge_key
            )
            return Atom(list_=ListType(self.atom(node.items), associative, keys))
        # IntOrString, Time, MicroTime: strings with a format, which schemaconv leaves untyped.
        return Atom(scalar=UNTYPED)

    def _struct(self, node: declared.Struct) -> Atom:
        found = self._structs.get(id(node))
        if found is not None and found[0] is node:
            return found[1]
        map_type = MapType(atomic=node.map_type == "atomic")
        atom = Atom(map_=map_type)
        self._structs[id(node)] = (node, atom)
        map_type.fields = {f.name: self.atom(f.schema) for f in node.fields}
        if node.preserve_unknown_fields or not node.fields:
            map_type.element = DEDUCED
        return atom


_DECLARED = DeclaredTypes()


def declared_atom(node: declared.Schema) -> Atom:
    """The atom of a built-in declaration (shared, built once per struct)."""
    return _DECLARED.atom(node)


# -- custom resources -------------------------------------------------------------------


def openapi_atom(schema: dict[str, Any], object_meta: declared.Struct) -> Atom:
    """The atom of a custom resource version from its structural schema.

    As upstream's CRD OpenAPI builder does, ``apiVersion`` and ``kind`` are
    strings and ``metadata`` is ObjectMeta whatever the schema says.
    """
    root = _openapi(schema, False)
    if root.map is None:
        root = Atom(map_=MapType())
    assert root.map is not None
    root.map.fields = {
        **root.map.fields,
        "apiVersion": Atom(scalar=STRING),
        "kind": Atom(scalar=STRING),
        "metadata": declared_atom(object_meta),
    }
    return root


def _openapi(schema: dict[str, Any], preserve: bool) -> Atom:
    """``parseSchema``: ``x-kubernetes-preserve-unknown-fields`` holds for the whole subtree."""
    preserve = preserve or schema.get("x-kubernetes-preserve-unknown-fields") is True
    type_ = schema.get("type") or ""
    if type_ == "object":
        return Atom(map_=_openapi_object(schema, preserve))
    if type_ == "array":
        return Atom(list_=_openapi_list(schema, preserve))
    if type_ == "":
        return Atom(UNTYPED, _openapi_list(schema, preserve), _openapi_object(schema, preserve))
    return _primitive(type_, schema.get("format"))


def _openapi_object(schema: dict[str, Any], preserve: bool) -> MapType:
    properties = schema.get("properties") or {}
    fields = {name: _openapi(prop, preserve) for name, prop in properties.items()}
    defaults = {
        name: prop["default"]
        for name, prop in properties.items()
        if prop.get("default") is not None
    }
    additional = schema.get("additionalProperties")
    element: Atom | None
    if additional is None:
        element = DEDUCED if preserve or not properties else None
    elif isinstance(additional, dict):
        element = _openapi(additional, preserve)
    else:
        element = DEDUCED if additional else None
    atomic = schema.get("x-kubernetes-map-type") == "atomic"
    return MapType(fields, element, atomic, defaults)


def _openapi_list(schema: dict[str, Any], preserve: bool) -> ListType:
    items = schema.get("items")
    element = _openapi(items, preserve) if isinstance(items, dict) else UNTYPED_ATOMIC
    associative, keys = list_relationship(
        schema.get("x-kubernetes-list-type"),
        schema.get("x-kubernetes-list-map-keys"),
        schema.get("x-kubernetes-patch-strategy"),
        schema.get("x-kubernetes-patch-merge-key"),
    )
    return ListType(element, associative, keys)
