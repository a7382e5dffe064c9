"""Pruning of unknown fields by a structural schema (upstream ``apiserver/schema/pruning``).

A custom resource keeps only the fields its structural schema specifies, like a
built-in object decoded into Go structs. The rules are upstream's:

- a map field is kept when it is in ``properties`` or, failing that, when the
  schema has ``additionalProperties`` at all (``true``, ``false`` or a schema);
  the value under an ``additionalProperties`` without a schema is pruned as if
  it had no schema, so a nested object there loses all its fields;
- ``x-kubernetes-preserve-unknown-fields: true`` keeps unknown fields of that
  node (not of nodes below it), while specified fields are still pruned by their
  own schemas;
- an ``x-kubernetes-embedded-resource`` node, and the resource root, keep
  ``apiVersion``, ``kind`` and ``metadata`` untouched;
- the ``metadata`` of an embedded resource is then cut down to the fields of
  ObjectMeta, as upstream's ``objectmeta.Coerce`` does by a round trip through
  the Go struct (root ``metadata`` is the server's business).

Pruned paths are reported in upstream's form for ``fieldValidation``: map keys
joined with ``.`` and list indexes as ``[i]`` (``spec.items[0].foo``), sorted,
followed by the sorted unknown fields of embedded metadata, which upstream
renders as ``field.Path`` strings (``spec.template.metadata.foo``, map entries as
``spec.byName[a].metadata.foo``).

Not covered: type coercion of embedded ``apiVersion``/``kind``/``metadata``
(upstream rejects a non-string ``kind`` there; the schema validator reports it),
and normalisation beyond dropping unknown and empty ObjectMeta fields.
"""

from __future__ import annotations

from typing import Any, Final

from kapi.runtime.meta import ObjectMeta
from kapi.runtime.pruning import zero_metadata_nulls
from kapi.runtime.schema import List, Schema, Struct

_META_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata"})


class _Node:
    """The structural part of one schema node, all that pruning looks at."""

    __slots__ = (
        "additional",
        "embedded",
        "embedded_below",
        "items",
        "open_map",
        "preserve",
        "props",
    )

    def __init__(self, schema: dict[str, Any]) -> None:
        props = schema.get("properties") or {}
        self.props: dict[str, _Node] = {k: _Node(v) for k, v in props.items()}
        items = schema.get("items")
        self.items = _Node(items) if isinstance(items, dict) else None
        additional = schema.get("additionalProperties")
        self.open_map = additional is not None
        self.additional = _Node(additional) if isinstance(additional, dict) else None
        self.preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
        self.embedded = schema.get("x-kubernetes-embedded-resource") is True
        children = [*self.props.values(), self.items, self.additional]
        # Only subtrees holding an embedded resource need the metadata pass.
        self.embedded_below: bool = self.embedded or any(
            c is not None and c.embedded_below for c in children
        )

    def as_resource_root(self) -> _Node:
        """A copy that keeps TypeMeta and ObjectMeta, as upstream treats the resource root."""
        if self.embedded:
            return self
        clone = object.__new__(_Node)
        for name in _Node.__slots__:
            setattr(clone, name, getattr(self, name))
        clone.embedded = clone.embedded_below = True
        return clone


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _prune(x: Any, node: _Node | None, prefix: str, out: list[str]) -> None:
    if node is not None and node.preserve:
        _skip_prune(x, node, prefix, out)
    elif isinstance(x, dict):
        _prune_map(x, node, prefix, out)
    elif isinstance(x, list):
        items = node.items if node is not None else None
        for i, v in enumerate(x):
            if isinstance(v, dict | list):
                _prune(v, items, f"{prefix}[{i}]", out)


def _prune_map(x: dict[str, Any], node: _Node | None, prefix: str, out: list[str]) -> None:
    if node is None:
        out.extend(_join(prefix, k) for k in x)
        x.clear()
        return
    for k in list(x):
        if node.embedded and k in _META_FIELDS:
            continue
        child = node.props.get(k)
        if child is None and not node.open_map:
            # Upstream does not report apiVersion/kind/metadata directly under the root.
            if k not in _META_FIELDS or prefix:
                out.append(_join(prefix, k))
            del x[k]
            continue
        v = x[k]
        if isinstance(v, dict | list):
            _prune(v, child if child is not None else node.additional, _join(prefix, k), out)


def _skip_prune(x: Any, node: _Node, prefix: str, out: list[str]) -> None:
    """Below preserve-unknown-fields: keep unknown keys, prune the specified ones."""
    if isinstance(x, dict):
        for k, v in x.items():
            if (node.embedded and k in _META_FIELDS) or not isinstance(v, dict | list):
                continue
            child = node.props.get(k)
            if child is not None:
                _prune(v, child, _join(prefix, k), out)
            elif node.open_map:
                _prune(v, node.additional, _join(prefix, k), out)
    elif isinstance(x, list) and node.items is not None:
        for i, v in enumerate(x):
            if isinstance(v, dict | list):
                _skip_prune(v, node.items, f"{prefix}[{i}]", out)


# --- embedded ObjectMeta ------------------------------------------------------------------


def _known_fields(struct: Struct) -> dict[str, Schema]:
    return {f.name: f.schema for f in struct.fields}


_OBJECT_META_FIELDS: Final = _known_fields(ObjectMeta)


def _strict_unknown(value: Any, schema: Schema, prefix: str, out: list[str]) -> None:
    """Unknown fields of ``value`` as Go's strict JSON decoding into ``schema`` names them."""
    if isinstance(schema, Struct) and isinstance(value, dict):
        if schema.preserve_unknown_fields:
            return
        known = schema.by_name
        for k in list(value):
            f = known.get(k)
            if f is None:
                out.append(f"{prefix}.{k}")
                del value[k]
            else:
                _strict_unknown(value[k], f.schema, f"{prefix}.{k}", out)
    elif isinstance(schema, List) and isinstance(value, list):
        for i, v in enumerate(value):
            _strict_unknown(v, schema.items, f"{prefix}[{i}]", out)


def _coerce_embedded_metadata(meta: dict[str, Any], prefix: str, out: list[str]) -> None:
    """Cut embedded metadata down to ObjectMeta: unknown fields go, empty ones are omitted."""
    for k in list(meta):
        schema = _OBJECT_META_FIELDS.get(k)
        if schema is None:
            out.append(f"{prefix}.{k}")
            del meta[k]
        elif meta[k] in (None, "", 0, {}, []) and not isinstance(meta[k], bool):
            del meta[k]  # every ObjectMeta field is omitempty in the Go round trip
        else:
            _strict_unknown(meta[k], schema, f"{prefix}.{k}", out)
    zero_metadata_nulls(meta)


def _coerce(x: Any, node: _Node, path: str, out: list[str], *, own_meta: bool = True) -> None:
    """Walk like upstream ``objectmeta.Coerce``: every embedded resource, preserved or not.

    ``own_meta=False`` leaves this node's ``metadata`` alone: the resource root's
    ObjectMeta is handled by the server with the rest of the request.
    """
    if isinstance(x, dict):
        for k, v in x.items():
            if own_meta and node.embedded and k == "metadata" and isinstance(v, dict):
                _coerce_embedded_metadata(v, _join(path, "metadata"), out)
            child = node.props.get(k)
            if child is not None:
                if child.embedded_below:
                    _coerce(v, child, _join(path, k), out)
            elif node.additional is not None and node.additional.embedded_below:
                _coerce(v, node.additional, f"{path}[{k}]", out)
    elif isinstance(x, list) and node.items is not None and node.items.embedded_below:
        for i, v in enumerate(x):
            _coerce(v, node.items, f"{path}[{i}]", out)


class Pruner:
    """A structural schema compiled once for pruning many objects."""

    __slots__ = ("_resource_root", "_root")

    def __init__(self, schema: dict[str, Any]) -> None:
        self._root = _Node(schema)
        self._resource_root = self._root.as_resource_root()

    def prune(
        self, obj: Any, *, is_resource_root: bool = True, embedded_metadata: bool = True
    ) -> list[str]:
        """Remove unknown fields from ``obj`` in place; return their paths, upstream style.

        ``embedded_metadata=False`` skips cutting embedded metadata down to
        ObjectMeta, leaving upstream's bare ``pruning.Prune`` (what CRD default
        checks use).
        """
        pruned: list[str] = []
        _prune(obj, self._resource_root if is_resource_root else self._root, "", pruned)
        pruned.sort()
        if not embedded_metadata or not self._root.embedded_below:
            return pruned
        meta_unknown: list[str] = []
        _coerce(obj, self._root, "", meta_unknown, own_meta=not is_resource_root)
        meta_unknown.sort()
        return pruned + meta_unknown


def prune(
    obj: Any,
    schema: dict[str, Any],
    *,
    is_resource_root: bool = True,
    embedded_metadata: bool = True,
) -> list[str]:
    """One-off :meth:`Pruner.prune`; compile a :class:`Pruner` for repeated use."""
    return Pruner(schema).prune(
        obj, is_resource_root=is_resource_root, embedded_metadata=embedded_metadata
    )
