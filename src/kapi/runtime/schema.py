"""Declaring built-in types once, in Python, and deriving their OpenAPI from it.

A built-in kind is a tree of :class:`Schema` nodes.  The same declaration
drives the OpenAPI v3 document (:meth:`Schema.openapi`), decoding
(:mod:`kapi.runtime.pruning` finds unknown fields and type errors with it),
and the KEP-2558 field-lifecycle tags (:mod:`kapi.runtime.lifecycle`) that
OpenAPI publishes and ``kapi lint lifecycle`` checks.  Named :class:`Struct` nodes
become ``components.schemas`` entries referenced by ``$ref``, as upstream's
generated definitions are.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from kapi.apimachinery.unstructured import Object as JSON
from kapi.features import GATED_FIELDS
from kapi.runtime.lifecycle import EXTENSION as LIFECYCLE_EXTENSION
from kapi.runtime.lifecycle import FieldLifecycle, with_gate
from kapi.runtime.lifecycle import extension as lifecycle_extension
from kapi.runtime.lifecycle import note as lifecycle_note
from kapi.version import Version


class Schema:
    """A node of a type declaration."""

    #: The JSON type decoding accepts for this node (``None``: anything).
    json_type: tuple[type, ...] | None = None
    #: The Go-ish type name used in upstream decode errors ("string", "int32").
    type_name: str = "object"

    def openapi(self, refs: dict[str, Struct]) -> JSON:
        """The node's OpenAPI v3 schema; named structs are added to ``refs``."""
        raise NotImplementedError


@dataclass(frozen=True)
class Scalar(Schema):
    """A string, integer, number or boolean (with an optional ``format``)."""

    type: str
    format: str | None = None
    enum: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Plain attributes, not properties: decoding reads them for every value.
        object.__setattr__(self, "json_type", _SCALAR_JSON_TYPES[self.type])
        if self.type == "integer":
            type_name = self.format or "int64"
        else:
            type_name = {"number": "float64", "boolean": "bool"}.get(self.type, "string")
        object.__setattr__(self, "type_name", type_name)

    def openapi(self, refs: dict[str, Struct]) -> JSON:
        schema: JSON = {"type": self.type}
        if self.format:
            schema["format"] = self.format
        if self.enum:
            schema["enum"] = list(self.enum)
        return schema


_SCALAR_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}

STRING = Scalar("string")
BYTES = Scalar("string", "byte")
INT32 = Scalar("integer", "int32")
INT64 = Scalar("integer", "int64")
BOOLEAN = Scalar("boolean")


@dataclass(frozen=True)
class IntOrString(Schema):
    type_name = "intstr.IntOrString"
    json_type = (int, str)

    def openapi(self, refs: dict[str, Struct]) -> JSON:
        return {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}


@dataclass(frozen=True)
class Time(Schema):
    """``metav1.Time``: an RFC 3339 timestamp string."""

    type_name = "metav1.Time"
    json_type = (str,)

    def openapi(self, refs: dict[str, Struct]) -> JSON:
        return {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}


@dataclass(frozen=True)
class MicroTime(Schema):
    """``metav1.MicroTime``: an RFC 3339 timestamp with microseconds."""

    type_name = "metav1.MicroTime"
    json_type = (str,)

    def openapi(self, refs: dict[str, Struct]) -> JSON:
        return {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"}


@dataclass(frozen=True)
class Quantity(Schema):
    """``resource.Quantity``: a string (or a JSON number) such as ``500m`` or ``1Gi``."""

    type_name = "resource.Quantity"
    #: Any JSON literal reaches upstream's ``UnmarshalJSON``, ``true`` included, and fails
    #: there as a badly formed quantity rather than as a type mismatch.
    json_type = (str, int, float, bool)

    def openapi(self, refs: dict[str, Struct]) -> JSON:
        refs.setdefault(_QUANTITY.name, _QUANTITY)
        return _QUANTITY.ref()


@dataclass(frozen=True)
class Map(Schema):
    """A JSON object with free keys (``map[string]T``)."""

    values: Schema
    #: ``x-kubernetes-map-type`` (upstream's ``+mapType``): ``"atomic"`` maps are owned,
    #: merged and replaced as one value by server-side apply.
    map_type: str | None = None
    json_type = (dict,)

    @property
    def type_name(self) -> str:  # type: ignore[override]
        return f"map[string]{self.values.type_name}"

    def openapi(self, refs: dict[str, Struct]) -> JSON:
        schema: JSON = {"type": "object", "additionalProperties": _with_default(self.values, refs)}
        if self.map_type:
            schema["x-kubernetes-map-type"] = self.map_type
        return schema


@dataclass(frozen=True)
class List(Schema):
    """A JSON array, with its list type and strategic-merge metadata."""

    items: Schema
    list_type: str = "atomic"
    map_keys: tuple[str, ...] = ()
    patch_strategy: str | None = None
    patch_merge_key: str | None = None
    json_type = (list,)

    @property
    def type_name(self) -> str:  # type: ignore[override]
        return f"[]{self.items.type_name}"

    def openapi(self, refs: dict[str, Struct]) -> JSON:
        schema: JSON = {"type": "array", "items": _with_default(self.items, refs)}
        if self.list_type != "atomic" or self.map_keys:
            schema["x-kubernetes-list-type"] = self.list_type
        if self.map_keys:
            schema["x-kubernetes-list-map-keys"] = list(self.map_keys)
        if self.patch_merge_key:
            schema["x-kubernetes-patch-merge-key"] = self.patch_merge_key
        if self.patch_strategy:
            schema["x-kubernetes-patch-strategy"] = self.patch_strategy
        return schema


@dataclass(frozen=True)
class Field:
    """A property of a :class:`Struct`."""

    name: str
    schema: Schema
    description: str = ""
    required: bool = False
    #: ``x-kubernetes-patch-strategy`` of a non-list field (``replace`` on PDB v1's
    #: selector); a list's strategy is on its :class:`List`.
    patch_strategy: str | None = None
    #: KEP-2558 lifecycle tags (``+lifecycle:<component>:...``), published as
    #: ``x-kubernetes-api-lifecycle``; empty for a GA field.
    lifecycle: tuple[FieldLifecycle, ...] = ()
    #: The upstream feature gate guarding the field (its ``+featureGate`` marker), whatever
    #: the gate's stage: a GA gate's field carries no tag, but a server emulating a release
    #: where the gate was alpha or beta publishes and enforces that stage.
    gate: str | None = None
    #: Where the field is declared (``path:line``), for the lifecycle linter's errors.
    declared_at: tuple[str, int] = field(default=("", 0), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        frame = sys._getframe(1)
        # Skip the dataclass-generated __init__ and helpers of this module.
        while frame.f_back is not None and frame.f_code.co_filename in ("<string>", __file__):
            frame = frame.f_back
        object.__setattr__(self, "declared_at", (frame.f_code.co_filename, frame.f_lineno))


def guarded(definition: str, f: Field) -> tuple[FieldLifecycle, ...]:
    """``f``'s tags, and the tag its gate's history implies when no tag names the gate.

    The gate is the field's own (:attr:`Field.gate`) or, for a hand-declared kind,
    :data:`kapi.features.GATED_FIELDS`'; the implied tag has no status of its own and
    is meant to be resolved at an emulated release (:func:`kapi.runtime.lifecycle.at_version`).
    """
    return with_gate(f.lifecycle, f.gate or GATED_FIELDS.get((definition, f.name)))


@dataclass(frozen=True, eq=False)
class Struct(Schema):
    """A named object type: a ``components.schemas`` definition."""

    #: The definition name, e.g. ``io.k8s.api.core.v1.ConfigMap``.
    name: str
    fields: tuple[Field, ...]
    description: str = ""
    #: ``(group, version, kind)`` triples for top-level kinds.
    gvks: tuple[tuple[str, str, str], ...] = ()
    #: Free-form object (``x-kubernetes-preserve-unknown-fields``): no pruning.
    preserve_unknown_fields: bool = False
    #: ``x-kubernetes-map-type``: ``"atomic"`` for upstream's ``+structType=atomic`` types,
    #: which server-side apply owns, merges and conflicts on as one value.
    map_type: str | None = None
    json_type = (dict,)
    by_name: dict[str, Field] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})

    @property
    def type_name(self) -> str:  # type: ignore[override]
        return self.name.rsplit(".", 1)[-1]

    def ref(self) -> JSON:
        return {"$ref": f"#/components/schemas/{self.name}"}

    def openapi(self, refs: dict[str, Struct]) -> JSON:
        if self.name not in refs:
            refs[self.name] = self
        return self.ref()

    def definition(self, refs: dict[str, Struct], version: Version | None = None) -> JSON:
        """The body of this struct's ``components.schemas`` entry.

        ``version`` is the emulated release lifecycle tags are resolved at
        (:func:`kapi.runtime.lifecycle.at_version`); ``None`` publishes them as declared.
        """
        schema: JSON = {}
        if self.description:
            schema["description"] = self.description
        schema["type"] = "object"
        if self.fields:
            properties: JSON = {}
            for f in self.fields:
                prop = _with_default(f.schema, refs)
                tags = f.lifecycle if version is None else guarded(self.name, f)
                lifecycle = lifecycle_extension(tags, version) if tags else None
                # kubectl explain prints descriptions, not extensions: say the stage there too.
                description = (
                    lifecycle_note(f.description, lifecycle) if lifecycle else f.description
                )
                if description:
                    prop = {"description": description, **prop}
                if f.patch_strategy:
                    prop["x-kubernetes-patch-strategy"] = f.patch_strategy
                if lifecycle:
                    prop[LIFECYCLE_EXTENSION] = lifecycle
                properties[f.name] = prop
            schema["properties"] = properties
        required = [f.name for f in self.fields if f.required]
        if required:
            schema["required"] = required
        if self.map_type:
            schema["x-kubernetes-map-type"] = self.map_type
        if self.preserve_unknown_fields:
            schema["x-kubernetes-preserve-unknown-fields"] = True
        if self.gvks:
            schema["x-kubernetes-group-version-kind"] = [
                {"group": g, "version": v, "kind": k} for g, v, k in self.gvks
            ]
        return schema


@dataclass(frozen=True, eq=False)
class _Definition(Struct):
    """A shared definition that is not an object (only published where it is used)."""

    body: JSON = field(default_factory=dict)

    def definition(self, refs: dict[str, Struct], version: Version | None = None) -> JSON:
        return dict(self.body)


# Upstream publishes Quantity as a string in v2 and as string-or-number in v3.
_QUANTITY = _Definition(
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    (),
    body={
        "description": "Quantity is a fixed-point representation of a number, such as 500m or "
        "1Gi, in its canonical text form.",
        "oneOf": [{"type": "string"}, {"type": "number"}],
    },
)


def _with_default(schema: Schema, refs: dict[str, Struct]) -> JSON:
    """Inline a property's schema; references are wrapped in ``allOf`` as upstream v3 does."""
    out = schema.openapi(refs)
    if "$ref" in out and isinstance(schema, Struct):
        return {"allOf": [out], "default": {}}
    if "$ref" in out:
        return {"allOf": [out]}
    return out


def components(roots: list[Struct], version: Version | None = None) -> JSON:
    """``components.schemas`` for ``roots`` and every struct they reach.

    Lifecycle extensions follow release ``version`` when it is given.
    """
    refs: dict[str, Struct] = {}
    for root in roots:
        root.openapi(refs)
    out: JSON = {}
    done: set[str] = set()
    while len(done) < len(refs):
        for name in sorted(set(refs) - done):
            out[name] = refs[name].definition(refs, version)
            done.add(name)
    out.update(_SHARED_DEFINITIONS)
    return dict(sorted(out.items()))


_SHARED_DEFINITIONS: JSON = {
    # v3 publishes IntOrString's OpenAPIV3OneOfTypes, without a type of its own (so
    # ``kubectl explain`` names it); /openapi/v2 gives it its v2 type, string.
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "description": 'Either a 32-bit integer or a string, such as 3 or "25%".',
        "format": "int-or-string",
        "oneOf": [{"type": "integer"}, {"type": "string"}],
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": {
        "description": "An RFC 3339 timestamp in UTC with six fractional digits.",
        "format": "date-time",
        "type": "string",
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": {
        "description": "An RFC 3339 timestamp in UTC, to the second.",
        "format": "date-time",
        "type": "string",
    },
}
