"""The internal form of a ``CustomResourceDefinition`` spec, and its Go rendering.

Upstream validates a CRD after converting it from v1 to the internal version,
and the errors users see name the internal form: per-version ``schema``,
``subresources``, ``additionalPrinterColumns`` and ``selectableFields`` that
are the same in every version move up to the spec. :class:`InternalSpec`
builds that form from the v1 object.

Where an error shows a struct as its bad value (``spec.versions``, a schema
root), upstream prints the internal Go types as ``encoding/json`` writes them:
Go field names, every field, ``null`` for nil. The ``go_*`` renderers build
those values as :class:`OrderedStruct` so :mod:`kapi.apimachinery.field_errors`
prints them in Go's field order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any, Final

from kapi.apimachinery.gotext import OrderedStruct

# --- accessors: the wire form is JSON, so tolerate wrong types ------------------------------


def as_dict(value: Any) -> dict[str, Any]:
    """A JSON object, or an empty one for anything else."""
    return value if isinstance(value, dict) else {}


def as_str(value: Any) -> str:
    """A JSON string, or ``""`` (Go's zero value) for anything else."""
    return value if isinstance(value, str) else ""


def as_list(value: Any) -> list[Any] | None:
    """A JSON array, or None when absent (Go's nil slice)."""
    return value if isinstance(value, list) else None


# --- Go rendering of the internal types (bad values) ---------------------------------------

# (Go field name, v1 JSON key, kind) of internal JSONSchemaProps, in struct order.
# Kinds: s string, b bool, p pointer or JSON value, l slice of scalars, S schema
# pointer, L schema slice, M schema map, A JSONSchemaPropsOrArray, B
# JSONSchemaPropsOrBool, D dependencies, E external docs, R validation rules.
SCHEMA_FIELDS: Final = (
    ("ID", "id", "s"),
    ("Schema", "$schema", "s"),
    ("Ref", "$ref", "p"),
    ("Description", "description", "s"),
    ("Type", "type", "s"),
    ("Nullable", "nullable", "b"),
    ("Format", "format", "s"),
    ("Title", "title", "s"),
    ("Default", "default", "p"),
    ("Maximum", "maximum", "p"),
    ("ExclusiveMaximum", "exclusiveMaximum", "b"),
    ("Minimum", "minimum", "p"),
    ("ExclusiveMinimum", "exclusiveMinimum", "b"),
    ("MaxLength", "maxLength", "p"),
    ("MinLength", "minLength", "p"),
    ("Pattern", "pattern", "s"),
    ("MaxItems", "maxItems", "p"),
    ("MinItems", "minItems", "p"),
    ("UniqueItems", "uniqueItems", "b"),
    ("MultipleOf", "multipleOf", "p"),
    ("Enum", "enum", "l"),
    ("MaxProperties", "maxProperties", "p"),
    ("MinProperties", "minProperties", "p"),
    ("Required", "required", "l"),
    ("Items", "items", "A"),
    ("AllOf", "allOf", "L"),
    ("OneOf", "oneOf", "L"),
    ("AnyOf", "anyOf", "L"),
    ("Not", "not", "S"),
    ("Properties", "properties", "M"),
    ("AdditionalProperties", "additionalProperties", "B"),
    ("PatternProperties", "patternProperties", "M"),
    ("Dependencies", "dependencies", "D"),
    ("AdditionalItems", "additionalItems", "B"),
    ("Definitions", "definitions", "M"),
    ("ExternalDocs", "externalDocs", "E"),
    ("Example", "example", "p"),
    ("XPreserveUnknownFields", "x-kubernetes-preserve-unknown-fields", "p"),
    ("XEmbeddedResource", "x-kubernetes-embedded-resource", "b"),
    ("XIntOrString", "x-kubernetes-int-or-string", "b"),
    ("XListMapKeys", "x-kubernetes-list-map-keys", "l"),
    ("XListType", "x-kubernetes-list-type", "p"),
    ("XMapType", "x-kubernetes-map-type", "p"),
    ("XValidations", "x-kubernetes-validations", "R"),
)


def go_schema(s: Any) -> OrderedStruct | None:
    """An ``openAPIV3Schema`` as Go marshals internal ``*JSONSchemaProps``."""
    if not isinstance(s, dict):
        return None
    out = OrderedStruct()
    for go_name, key, kind in SCHEMA_FIELDS:
        out[go_name] = _GO_SCHEMA_KINDS[kind](s.get(key))
    return out


def _go_schema_list(v: Any) -> list[Any] | None:
    return None if not isinstance(v, list) else [go_schema(x) for x in v]


def _go_schema_map(v: Any) -> dict[str, Any] | None:
    return None if not isinstance(v, dict) else {k: go_schema(x) for k, x in v.items()}


def _go_or_array(v: Any) -> OrderedStruct | None:
    if isinstance(v, list):
        return OrderedStruct(Schema=None, JSONSchemas=_go_schema_list(v))
    return None if v is None else OrderedStruct(Schema=go_schema(v), JSONSchemas=None)


def _go_or_bool(v: Any) -> OrderedStruct | None:
    if isinstance(v, bool):
        return OrderedStruct(Allows=v, Schema=None)
    return None if v is None else OrderedStruct(Allows=True, Schema=go_schema(v))


def _go_dependencies(v: Any) -> dict[str, Any] | None:
    if not isinstance(v, dict):
        return None
    return {
        k: OrderedStruct(Schema=None, Property=x)
        if isinstance(x, list)
        else OrderedStruct(Schema=go_schema(x), Property=None)
        for k, x in v.items()
    }


def _go_docs(v: Any) -> OrderedStruct | None:
    if not isinstance(v, dict):
        return None
    return OrderedStruct(Description=as_str(v.get("description")), URL=as_str(v.get("url")))


def _go_rules(v: Any) -> list[Any] | None:
    if not isinstance(v, list):
        return None
    return [
        OrderedStruct(
            Rule=as_str(r.get("rule")),
            Message=as_str(r.get("message")),
            MessageExpression=as_str(r.get("messageExpression")),
            Reason=r.get("reason"),
            FieldPath=as_str(r.get("fieldPath")),
            OptionalOldSelf=r.get("optionalOldSelf"),
        )
        for r in map(as_dict, v)
    ]


_GO_SCHEMA_KINDS: Final[dict[str, Callable[[Any], Any]]] = {
    "s": as_str,
    "b": lambda v: v is True,
    "p": lambda v: v,
    "l": lambda v: v if isinstance(v, list) else None,
    "S": go_schema,
    "L": _go_schema_list,
    "M": _go_schema_map,
    "A": _go_or_array,
    "B": _go_or_bool,
    "D": _go_dependencies,
    "E": _go_docs,
    "R": _go_rules,
}


def _go_validation(v: Any) -> OrderedStruct | None:
    """Internal ``*CustomResourceValidation``."""
    return (
        None
        if v is None
        else OrderedStruct(OpenAPIV3Schema=go_schema(as_dict(v).get("openAPIV3Schema")))
    )


def _go_subresources(v: Any) -> OrderedStruct | None:
    if v is None:
        return None
    sub = as_dict(v)
    scale = sub.get("scale")
    return OrderedStruct(
        Status=None if sub.get("status") is None else OrderedStruct(),
        Scale=None
        if scale is None
        else OrderedStruct(
            SpecReplicasPath=as_str(as_dict(scale).get("specReplicasPath")),
            StatusReplicasPath=as_str(as_dict(scale).get("statusReplicasPath")),
            LabelSelectorPath=as_dict(scale).get("labelSelectorPath"),
        ),
    )


def _go_columns(v: Any) -> list[Any] | None:
    if not isinstance(v, list):
        return None
    return [
        OrderedStruct(
            Name=as_str(c.get("name")),
            Type=as_str(c.get("type")),
            Format=as_str(c.get("format")),
            Description=as_str(c.get("description")),
            Priority=c.get("priority") or 0,
            JSONPath=as_str(c.get("jsonPath")),
        )
        for c in map(as_dict, v)
    ]


def _go_selectable_fields(v: Any) -> list[Any] | None:
    if not isinstance(v, list):
        return None
    return [OrderedStruct(JSONPath=as_str(as_dict(f).get("jsonPath"))) for f in v]


def _semantic(value: Any) -> Any:
    """A key for ``apiequality.Semantic.DeepEqual``, which equates nil and empty containers."""
    if isinstance(value, dict):
        return {k: _semantic(v) for k, v in value.items()} or None
    if isinstance(value, list):
        return [_semantic(v) for v in value] or None
    return value


# --- the internal form ---------------------------------------------------------------------

# (v1 version key, internal spec key, internal version field, Go renderer), in the
# internal CustomResourceDefinitionVersion's field order.
_HOISTED: Final = (
    ("schema", "validation", "Schema", _go_validation),
    ("subresources", "subresources", "Subresources", _go_subresources),
    (
        "additionalPrinterColumns",
        "additionalPrinterColumns",
        "AdditionalPrinterColumns",
        _go_columns,
    ),
    ("selectableFields", "selectableFields", "SelectableFields", _go_selectable_fields),
)


@dataclass
class InternalSpec:
    """The parts of internal ``CustomResourceDefinitionSpec`` validation looks at.

    ``top`` holds hoisted values (v1 wire form) under their internal keys;
    ``per_version`` the same for each version, None where hoisted.
    """

    raw: dict[str, Any]
    versions: list[dict[str, Any]] | None
    top: dict[str, Any] = dataclass_field(default_factory=dict)
    per_version: list[dict[str, Any]] = dataclass_field(default_factory=list)

    @classmethod
    def from_v1(cls, spec: dict[str, Any]) -> InternalSpec:
        """Upstream ``Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_...``."""
        raw_versions = as_list(spec.get("versions"))
        versions = None if raw_versions is None else [as_dict(v) for v in raw_versions]
        out = cls(spec, versions, per_version=[{} for _ in versions or ()])
        for key, internal_key, _, render in _HOISTED:
            values = [v.get(key) for v in versions or ()]
            first = _semantic(render(values[0])) if values else None
            identical = bool(values) and all(_semantic(render(v)) == first for v in values)
            out.top[internal_key] = values[0] if identical else None
            for i, value in enumerate(values):
                out.per_version[i][internal_key] = None if identical else value
        return out

    @property
    def preserve_unknown_fields(self) -> bool:
        return self.raw.get("preserveUnknownFields") is True

    def names(self) -> dict[str, Any]:
        return as_dict(self.raw.get("names"))

    def go_versions(self) -> list[Any] | None:
        """``spec.Versions`` as upstream prints it in ``spec.versions`` errors."""
        if self.versions is None:
            return None
        out = []
        for version, hoisted in zip(self.versions, self.per_version, strict=True):
            go = OrderedStruct(
                Name=as_str(version.get("name")),
                Served=version.get("served") is True,
                Storage=version.get("storage") is True,
                Deprecated=version.get("deprecated") is True,
                DeprecationWarning=version.get("deprecationWarning"),
            )
            for _, internal_key, go_name, render in _HOISTED:
                go[go_name] = render(hoisted[internal_key])
            out.append(go)
        return out

    def subresources_for(self, i: int) -> Any:
        """Upstream ``getSubresourcesForVersion``."""
        per_version = any(v["subresources"] is not None for v in self.per_version)
        return self.per_version[i]["subresources"] if per_version else self.top["subresources"]

    def any_status_enabled(self) -> bool:
        return has_status(self.top["subresources"]) or any(
            has_status(v["subresources"]) for v in self.per_version
        )

    def all_versions_have_schema(self) -> bool:
        """Upstream ``allVersionsSpecifyOpenAPISchema``."""
        if root_schema(self.top["validation"]) is not None:
            return True
        return all(root_schema(v["validation"]) is not None for v in self.per_version)

    def schemas(self) -> Iterable[dict[str, Any]]:
        for validation in [self.top["validation"], *(v["validation"] for v in self.per_version)]:
            root = root_schema(validation)
            if root is not None:
                yield root


def has_status(subresources: Any) -> bool:
    """Whether ``subresources`` turns the status subresource on."""
    return isinstance(subresources, dict) and subresources.get("status") is not None


def root_schema(validation: Any) -> dict[str, Any] | None:
    """The ``openAPIV3Schema`` of a ``validation`` (or version ``schema``), if it is an object."""
    schema = as_dict(validation).get("openAPIV3Schema")
    return schema if isinstance(schema, dict) else None
