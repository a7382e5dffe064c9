"""Where a kind's lifecycle-tagged fields are (KEP-2558), found once per kind.

The tags sit on schema fields (:class:`kapi.runtime.schema.Field`), but what
a write needs is their place in an object: ``spec.strategy``, or
``spec.template.spec.containers[*].resizePolicy`` where a list or a map lies
on the way.  :func:`tagged_paths` walks a built-in kind's declaration for
them; a custom resource's come from its CRD's schema (the apiextensions layer
builds the same :class:`TaggedPath` values), and
:func:`kapi.registry.field_lifecycle` acts on both alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from kapi.runtime.lifecycle import FieldLifecycle
from kapi.runtime.schema import List, Map, Schema, Struct, guarded

#: A path segment standing for every item of a list or every value of a map.
EACH = "*"


@dataclass(frozen=True)
class TaggedPath:
    """A tagged field, by the JSON names leading to it from the object's root."""

    path: tuple[str, ...]
    tags: tuple[FieldLifecycle, ...]

    def __str__(self) -> str:
        """``spec.containers[*].name``: the path as metrics and reports name it."""
        out = ""
        for segment in self.path:
            out += "[*]" if segment == EACH else (f".{segment}" if out else segment)
        return out

    def values(self, obj: Any) -> Iterator[tuple[str, Any, dict[str, Any]]]:
        """Each place ``obj`` sets the field: its ``field.Path`` text, value and parent object.

        Items and values on the way are named as upstream's errors name them
        (``spec.containers[0].x``, ``metadata.labels[key]``).
        """
        places: list[tuple[str, Any, dict[str, Any]]] = []
        _collect(obj, self.path, 0, (), places)
        return iter(places)


def _collect(
    node: Any, path: tuple[str, ...], at: int, keys: tuple[Any, ...], out: list[Any]
) -> None:
    """Append to ``out`` each place below ``node`` that sets ``path[at:]``.

    ``keys`` are the indexes and map keys taken so far, one per :data:`EACH`.
    A plain recursion into a list, naming a place only once it is found: every
    write of a kind walks each of its tagged paths this way, and most end at a
    field the object does not set.
    """
    segment = path[at]
    if segment == EACH:
        items: Any = (
            enumerate(node)
            if isinstance(node, list)
            else node.items()
            if isinstance(node, dict)
            else ()
        )
        for key, item in items:
            _collect(item, path, at + 1, (*keys, key), out)
        return
    if not isinstance(node, dict):
        return
    value = node.get(segment)
    if value is None:
        return
    if at + 1 < len(path):
        _collect(value, path, at + 1, keys, out)
    else:
        out.append((_where(path, keys), value, node))


def _where(path: tuple[str, ...], keys: tuple[Any, ...]) -> str:
    """The ``field.Path`` text of ``path`` with its :data:`EACH` segments as ``keys``."""
    out = ""
    taken = iter(keys)
    for segment in path:
        if segment == EACH:
            out += f"[{next(taken)}]"
        else:
            out += f".{segment}" if out else segment
    return out


@cache
def tagged_paths(struct: Struct) -> tuple[TaggedPath, ...]:
    """Every tagged field reachable from ``struct``, in declaration order.

    A recursive type is followed once along any one path (a tag inside it is
    found at its first level, which is where clients set it).
    """
    return tuple(_walk(struct, (), frozenset()))


def _walk(schema: Schema, path: tuple[str, ...], seen: frozenset[str]) -> Iterator[TaggedPath]:
    while isinstance(schema, List | Map):
        schema = schema.items if isinstance(schema, List) else schema.values
        path = (*path, EACH)
    if not isinstance(schema, Struct) or schema.name in seen:
        return
    inside = seen | {schema.name}
    for field in schema.fields:
        here = (*path, field.name)
        tags = guarded(schema.name, field)
        if tags:
            yield TaggedPath(here, tags)
        yield from _walk(field.schema, here, inside)
