"""From an established CRD to the :class:`Resource` and per-version strategies that serve it.

Everything a request needs is compiled here once per CRD change: each
version's schema validator, CEL rules, pruner, defaulter, table columns and
deprecation warning, and the CRD's converter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from kapi.apiextensions.conversion import converter_for
from kapi.apiextensions.jsonpath import JSONPath
from kapi.apiextensions.strategy import (
    CustomResourceStrategy,
    Ratcheting,
    RatchetingMetrics,
    ScaleSpec,
)
from kapi.apimachinery.field_errors import Path
from kapi.apimachinery.unstructured import Object
from kapi.features import FeatureGate
from kapi.registry.tables import AGE, NAME, Column, since
from kapi.runtime import pruning
from kapi.runtime.meta import ObjectMeta
from kapi.runtime.schema import Field, Struct
from kapi.runtime.scheme import Resource, ResourceVersion, version_priority_key
from kapi.validation.cel import CELValidator
from kapi.validation.defaulting import Defaulter
from kapi.validation.pruning import Pruner
from kapi.validation.schema_validator import SchemaValidator
from kapi.webhook import WebhookClientManager

#: What a version without a schema accepts (only possible for CRDs stored before v1).
_ANYTHING: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

#: Root ``metadata`` is ObjectMeta whatever the schema says; it is pruned like a built-in's.
_ROOT_METADATA = Struct("CustomResourceMetadata", (Field("metadata", ObjectMeta),))


@dataclass
class CustomResource:
    """A CRD's resource and the strategy each served version validates with."""

    resource: Resource
    strategies: dict[str, CustomResourceStrategy]


def custom_resource(
    crd: Object,
    clients: WebhookClientManager,
    gates: FeatureGate,
    ratcheting_metrics: RatchetingMetrics,
) -> CustomResource:
    """Compile ``crd`` (established, so its names are accepted) for serving.

    With ``CustomResourceFieldSelectors`` off, the versions' ``selectableFields``
    are neither field labels nor published in OpenAPI, as upstream; with
    ``CRDValidationRatcheting`` off, updates are validated as creates are.
    """
    field_selectors = gates.enabled("CustomResourceFieldSelectors")
    spec = crd["spec"]
    names = crd["status"]["acceptedNames"]
    group = spec["group"]
    ratcheting = (
        Ratcheting(ratcheting_metrics, group, names["plural"])
        if gates.enabled("CRDValidationRatcheting")
        else None
    )
    storage = next(v["name"] for v in spec["versions"] if v.get("storage"))
    versions: dict[str, ResourceVersion] = {}
    strategies: dict[str, CustomResourceStrategy] = {}
    for index, version in enumerate(spec["versions"]):
        name = version["name"]
        schema = (version.get("schema") or {}).get("openAPIV3Schema") or _ANYTHING
        subresources = version.get("subresources") or {}
        scale = subresources.get("scale")
        cel, _ = CELValidator.compile(
            schema, Path("spec", "versions").index(index).child("schema", "openAPIV3Schema")
        )
        strategies[name] = CustomResourceStrategy(
            SchemaValidator(schema),
            cel,
            status="status" in subresources,
            scale=ScaleSpec.from_crd(scale) if scale else None,
            ratcheting=ratcheting,
        )
        versions[name] = ResourceVersion(
            name,
            None,
            defaulter=Defaulter(schema),
            pruner=_pruner(schema),
            openapi_schema=schema,
            served=bool(version.get("served")),
            deprecation_warning=deprecation_warning(spec, version),
            subresources=tuple(s for s in ("status", "scale") if s in subresources),
            columns=_columns(version.get("additionalPrinterColumns") or []),
            field_labels=_field_labels(version) if field_selectors else (),
        )
    resource = Resource(
        group=group,
        kind=names["kind"],
        plural=names["plural"],
        singular=names.get("singular") or names["kind"].lower(),
        namespaced=spec["scope"] == "Namespaced",
        versions=versions,
        hub_version=storage,
        storage_version=storage,
        strategy=strategies[storage],
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        list_kind=names.get("listKind") or "",
        converter=converter_for(crd, clients),
        default_on_read=True,
    )
    return CustomResource(resource, strategies)


def deprecation_warning(spec: Object, version: Object) -> str | None:
    """Upstream's warning for a ``deprecated`` version, unless ``deprecationWarning`` says it.

    The default names the highest-priority served, non-deprecated version
    that ranks above the deprecated one, when there is such a version.
    """
    if not version.get("deprecated"):
        return None
    if version.get("deprecationWarning") is not None:
        return str(version["deprecationWarning"])
    group, kind, name = spec["group"], spec["names"]["kind"], version["name"]
    text = f"{group}/{name} {kind} is deprecated"
    rank = version_priority_key(name)
    better = sorted(
        (
            v["name"]
            for v in spec["versions"]
            if v.get("served")
            and not v.get("deprecated")
            and version_priority_key(v["name"]) < rank
        ),
        key=version_priority_key,
    )
    if better:
        text += f"; use {group}/{better[0]} {kind}"
    return text


def _field_labels(version: Object) -> tuple[str, ...]:
    """The field selector labels of a version's ``selectableFields``: paths without the dot.

    Selectors read them at the label's dotted path on objects decoded into the
    requested version: each served version has a store of its own, as upstream
    has a storage per version, so a conversion webhook has run before they do.
    """
    return tuple(f["jsonPath"].removeprefix(".") for f in version.get("selectableFields") or ())


def _pruner(schema: dict[str, Any]) -> Any:
    pruner = Pruner(schema)

    def prune(obj: Object) -> list[str]:
        unknown = pruner.prune(obj)
        metadata = obj.get("metadata")
        if isinstance(metadata, dict):
            # Raises DecodeTypeError (400) on a mistyped metadata field, as decoding does.
            unknown += pruning.prune({"metadata": metadata}, _ROOT_METADATA)
            pruning.zero_metadata_nulls(metadata)
        return unknown

    return prune


def _columns(definitions: list[Object]) -> tuple[Column, ...]:
    """``NAME`` and the declared columns, or ``NAME AGE`` when none are declared (upstream)."""
    if not definitions:
        return (NAME, _date_column("Age", AGE.description, ".metadata.creationTimestamp", 0))
    columns = [NAME]
    for d in definitions:
        if d.get("type") == "date":
            column = _date_column(
                d["name"], d.get("description", ""), d["jsonPath"], d.get("priority", 0)
            )
        else:
            column = Column(
                d["name"],
                d["type"],
                d.get("description", ""),
                _cell(JSONPath(d["jsonPath"]), d["type"]),
                format=d.get("format", ""),
                priority=d.get("priority", 0),
            )
        columns.append(column)
    return tuple(columns)


def _date_column(name: str, description: str, path: str, priority: int) -> Column:
    """A ``date`` column's cell is the age of its timestamp, computed by the server (upstream)."""
    return Column(name, "date", description, _cell(JSONPath(path), "date"), priority=priority)


def _cell(path: JSONPath, type_: str) -> Any:
    def cell(obj: Object) -> Any:
        value = path.first(obj)
        if value is None:
            return None
        if type_ == "date" and isinstance(value, str):
            try:
                return since(value)
            except ValueError:  # not a metav1.Time: shown as it is
                return value
        if type_ == "string" and not isinstance(value, str):
            return (
                str(value) if not isinstance(value, dict | list) else orjson.dumps(value).decode()
            )
        return value

    return cell
