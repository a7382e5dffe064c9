"""Validation of ``CustomResourceDefinition`` objects (``apiextensions.k8s.io/v1``).

The Python counterpart of apiextensions-apiserver
``pkg/apis/apiextensions/validation/validation.go``, which sits beside the API
types upstream; here it sits beside :mod:`kapi.apis.apiextensions_v1`, whose
strategy calls it. Upstream checks the internal form of a CRD
(:mod:`kapi.apis.crd_internal`), so errors carry its paths:

* hoisted fields report ``spec.validation.openAPIV3Schema``,
  ``spec.subresources.scale...`` and ``spec.additionalPrinterColumns[0]...``
  for a CRD whose versions all agree;
* ``spec.conversion.webhook.{clientConfig,conversionReviewVersions}`` report
  as ``spec.conversion.{webhookClientConfig,conversionReviewVersions}``;
* bad values that are structs print as Go's ``encoding/json`` writes them.

This module reproduces those paths, texts and the order of errors. The
OpenAPI schemas themselves are checked by :mod:`kapi.validation.structural`
and :mod:`kapi.validation.cel`, called from here at the internal path; webhook
addresses by :mod:`kapi.webhook.validation`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from kapi.apimachinery import field_errors
from kapi.apimachinery.field_errors import FieldError, Path
from kapi.apimachinery.gotext import go_len, go_quote
from kapi.apimachinery.validation import (
    is_dns1035_label,
    is_dns1123_subdomain,
    name_is_dns_subdomain,
    validate_immutable_field,
    validate_object_meta,
)
from kapi.apis import crd_lifecycle
from kapi.apis.crd_internal import (
    SCHEMA_FIELDS,
    InternalSpec,
    as_dict,
    as_list,
    as_str,
    go_schema,
    has_status,
    root_schema,
)
from kapi.webhook import validate_webhook_service, validate_webhook_url

PRINTER_COLUMN_TYPES: Final = ("boolean", "date", "integer", "number", "string")
PRINTER_COLUMN_FORMATS: Final = (
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
)
#: ConversionReview versions the server understands (``acceptedConversionReviewVersions``).
ACCEPTED_CONVERSION_REVIEW_VERSIONS: Final = ("v1", "v1beta1")
MAX_SELECTABLE_FIELDS: Final = 8
MAX_DEPRECATION_WARNING_BYTES: Final = 256
KUBE_API_APPROVED_ANNOTATION: Final = "api-approved.kubernetes.io"

_SCOPES: Final = ("Cluster", "Namespaced")
_STRATEGIES: Final = ("None", "Webhook")
_SPEC: Final = Path("spec")
_STATUS: Final = Path("status")
_ANNOTATIONS: Final = Path("metadata", "annotations")


# --- schema walks ------------------------------------------------------------------------


def schema_has(schema: Any, pred: Callable[[dict[str, Any]], bool]) -> bool:
    """Upstream ``SchemaHas``: whether any schema node in the tree satisfies ``pred``."""
    if not isinstance(schema, dict):
        return False
    if pred(schema):
        return True
    children: list[Any] = []
    for key in ("items", "allOf", "oneOf", "anyOf"):
        value = schema.get(key)
        children.extend(value if isinstance(value, list) else [value])
    for key in ("properties", "patternProperties", "definitions", "dependencies"):
        children.extend(as_dict(schema.get(key)).values())
    children += [
        schema.get("not"),
        schema.get("additionalProperties"),
        schema.get("additionalItems"),
    ]
    return any(schema_has(c, pred) for c in children)


def _has_default(s: dict[str, Any]) -> bool:
    return s.get("default") is not None


def _has_kubernetes_extensions(s: dict[str, Any]) -> bool:
    return (
        s.get("x-kubernetes-embedded-resource") is True
        or s.get("x-kubernetes-preserve-unknown-fields") is not None
        or s.get("x-kubernetes-int-or-string") is True
        or bool(s.get("x-kubernetes-list-map-keys"))
        or s.get("x-kubernetes-list-type") is not None
        or bool(s.get("x-kubernetes-validations"))
    )


# --- options (what an update may keep from the old object) ---------------------------------


@dataclass
class _Options:
    """Upstream ``validationOptions``: rules an update relaxes to keep old objects valid."""

    require_recognized_review_version: bool = True
    require_immutable_names: bool = False
    require_openapi_schema: bool = True
    old_spec: InternalSpec | None = None
    allow_too_many_selectable_fields: frozenset[str] = frozenset()

    def old_schemas_non_structural(self) -> bool:
        """Upstream ``specHasNonStructuralSchema`` of the old spec; computed only when needed."""
        return self.old_spec is not None and any(
            _is_non_structural(s) for s in self.old_spec.schemas()
        )


def _established(crd: dict[str, Any]) -> bool:
    conditions = as_list(as_dict(crd.get("status")).get("conditions")) or []
    return any(
        as_dict(c).get("type") == "Established" and as_dict(c).get("status") == "True"
        for c in conditions
    )


def _update_options(new: dict[str, Any], old: dict[str, Any]) -> _Options:
    old_spec = InternalSpec.from_v1(as_dict(old.get("spec")))
    conversion = old_spec.raw.get("conversion")
    review_versions = as_list(
        as_dict(as_dict(conversion).get("webhook")).get("conversionReviewVersions")
    )
    return _Options(
        require_recognized_review_version=conversion is None
        or not review_versions
        or any(v in ACCEPTED_CONVERSION_REVIEW_VERSIONS for v in review_versions),
        require_immutable_names=_established(old),
        require_openapi_schema=old_spec.all_versions_have_schema(),
        old_spec=old_spec,
        allow_too_many_selectable_fields=_unchanged_oversized_selectable_fields(
            as_dict(new.get("spec")), old_spec
        ),
    )


def _is_non_structural(schema: dict[str, Any]) -> bool:
    """Upstream ``schemaIsNonStructural``: whether an existing schema breaks the rules."""
    try:
        from kapi.validation.structural import validate_crd_schema
    except ImportError:
        return False
    return bool(validate_crd_schema(schema, Path("schema"), require_structural=True))


def _unchanged_oversized_selectable_fields(
    new_spec: dict[str, Any], old_spec: InternalSpec
) -> frozenset[str]:
    """Versions (by name) whose over-limit selectableFields are kept unchanged on update."""
    new_by_name = {
        as_str(v.get("name")): v for v in map(as_dict, as_list(new_spec.get("versions")) or [])
    }
    allowed = set()
    for old_version in old_spec.versions or ():
        fields = as_list(old_version.get("selectableFields")) or []
        new_version = new_by_name.get(as_str(old_version.get("name")))
        if (
            len(fields) > MAX_SELECTABLE_FIELDS
            and new_version is not None
            and new_version.get("selectableFields") == fields
        ):
            allowed.add(as_str(old_version.get("name")))
    return frozenset(allowed)


# --- public API ----------------------------------------------------------------------------


def validate_crd(crd: dict[str, Any]) -> list[FieldError]:
    """``ValidateCustomResourceDefinition``: a CRD being created (after v1 defaulting).

    Includes ObjectMeta validation, because the CRD's name rule depends on its
    spec (``spec.names.plural + "." + spec.group``).
    """
    spec = as_dict(crd.get("spec"))
    names = as_dict(spec.get("names"))
    required_name = as_str(names.get("plural")) + "." + as_str(spec.get("group"))

    def name_validator(name: str, prefix: bool) -> list[str]:
        messages = name_is_dns_subdomain(name, prefix)
        if name != required_name:
            messages.append('must be spec.names.plural+"."+spec.group')
        return messages

    errs = validate_object_meta(
        as_dict(crd.get("metadata")), namespaced=False, name_validator=name_validator
    )
    errs += _validate_spec(InternalSpec.from_v1(spec), _Options())
    errs += validate_crd_status(as_dict(crd.get("status")), spec, _STATUS)
    errs += _validate_api_approval(crd, None)
    errs += _validate_preserve_unknown_fields(spec, None)
    return errs


def validate_crd_update(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionUpdate`` without ObjectMeta.

    The generic store validates the ObjectMeta update itself
    (``validate_object_meta_update``); everything after it is here, in order.
    """
    spec = as_dict(new.get("spec"))
    errs = _validate_spec_update(
        InternalSpec.from_v1(spec), as_dict(old.get("spec")), _update_options(new, old)
    )
    errs += validate_crd_status(as_dict(new.get("status")), spec, _STATUS)
    errs += _validate_api_approval(new, old)
    errs += _validate_preserve_unknown_fields(spec, as_dict(old.get("spec")))
    return errs


def validate_crd_status(
    status: dict[str, Any],
    spec: dict[str, Any],
    path: Path,
    *,
    stored_versions: bool = True,
) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionStatus`` then ``...StoredVersions``.

    Upstream's status-subresource update (``ValidateUpdateCustomResourceDefinitionStatus``)
    checks only ``acceptedNames``; pass ``stored_versions=False`` to match it.
    """
    errs = _validate_names(as_dict(status.get("acceptedNames")), path.child("acceptedNames"))
    if stored_versions:
        errs += _validate_stored_versions(
            as_list(status.get("storedVersions")),
            [as_dict(v) for v in as_list(spec.get("versions")) or ()],
            path.child("storedVersions"),
        )
    return errs


# --- status --------------------------------------------------------------------------------


def _validate_stored_versions(
    stored: list[Any] | None, versions: list[dict[str, Any]], path: Path
) -> list[FieldError]:
    """Every stored version must stay listed until a storage migration removes it."""
    if not stored:
        return [field_errors.invalid(path, stored, "must have at least one stored version")]
    errs: list[FieldError] = []
    remaining = {v: i for i, v in enumerate(stored)}
    for version in versions:
        name = version.get("name")
        found = remaining.pop(name, None) is not None
        if version.get("storage") is True and not found:
            errs.append(field_errors.invalid(path, stored, f"must have the storage version {name}"))
    for name, i in sorted(remaining.items(), key=lambda kv: kv[1]):
        errs.append(
            field_errors.invalid(
                path.index(i),
                name,
                f"missing from spec.versions; {name} was previously a storage version, and "
                f"must remain in spec.versions until a storage migration ensures no data "
                f"remains persisted in {name} and removes {name} from status.storedVersions",
            )
        )
    return errs


def _validate_names(names: dict[str, Any], path: Path) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionNames``: format only; presence is checked by the spec."""
    errs: list[FieldError] = []
    for key in ("plural", "singular"):
        value = as_str(names.get(key))
        if value and (messages := is_dns1035_label(value)):
            errs.append(field_errors.invalid(path.child(key), value, ",".join(messages)))
    for key in ("kind", "listKind"):
        value = as_str(names.get(key))
        if value and (messages := is_dns1035_label(value.lower())):
            detail = "may have mixed case, but should otherwise match: " + ",".join(messages)
            errs.append(field_errors.invalid(path.child(key), value, detail))
    errs += _validate_label_list(names.get("shortNames"), path.child("shortNames"))
    kind = as_str(names.get("kind"))
    if kind and kind == names.get("listKind"):
        errs.append(
            field_errors.invalid(
                path.child("listKind"), kind, "kind and listKind may not be the same"
            )
        )
    errs += _validate_label_list(names.get("categories"), path.child("categories"))
    return errs


def _validate_label_list(values: Any, path: Path) -> list[FieldError]:
    errs = []
    for i, value in enumerate(as_list(values) or ()):
        if messages := is_dns1035_label(as_str(value)):
            errs.append(field_errors.invalid(path.index(i), value, ",".join(messages)))
    return errs


# --- spec ----------------------------------------------------------------------------------


def _validate_spec_update(
    spec: InternalSpec, old_spec: dict[str, Any], opts: _Options
) -> list[FieldError]:
    """Storage-affecting fields are pinned: scope and kind once established, group and plural
    always (they make up the CRD's name)."""
    errs = _validate_spec(spec, opts)
    names, old_names = spec.names(), as_dict(old_spec.get("names"))
    if opts.require_immutable_names:
        errs += validate_immutable_field(
            as_str(spec.raw.get("scope")), as_str(old_spec.get("scope")), _SPEC.child("scope")
        )
        errs += validate_immutable_field(
            as_str(names.get("kind")), as_str(old_names.get("kind")), _SPEC.child("names", "kind")
        )
    errs += validate_immutable_field(
        as_str(spec.raw.get("group")), as_str(old_spec.get("group")), _SPEC.child("group")
    )
    errs += validate_immutable_field(
        as_str(names.get("plural")), as_str(old_names.get("plural")), _SPEC.child("names", "plural")
    )
    return errs


def _validate_spec(spec: InternalSpec, opts: _Options) -> list[FieldError]:
    """``validateCustomResourceDefinitionSpec`` over the internal form, in upstream order."""
    errs = _validate_group(as_str(spec.raw.get("group")))
    errs += _validate_enum(_SPEC.child("scope"), spec.raw.get("scope"), _SCOPES)
    errs += _validate_schemas_present(spec, opts)
    require_structural = _require_structural(spec, opts)
    if any(schema_has(s, _has_default) for s in spec.schemas()) and spec.preserve_unknown_fields:
        errs.append(
            field_errors.invalid(
                _SPEC.child("preserveUnknownFields"),
                True,
                "must be false in order to use defaults in the schema",
            )
        )
    errs += _validate_versions(spec, opts, require_structural)
    errs += _validate_required_names(spec.names())
    errs += _validate_names(spec.names(), _SPEC.child("names"))
    errs += _validate_validation(
        spec.top["validation"],
        spec.any_status_enabled(),
        require_structural,
        _SPEC.child("validation"),
    )
    errs += _validate_subresources(spec.top["subresources"], _SPEC.child("subresources"))
    errs += _validate_columns(
        spec.top["additionalPrinterColumns"], _SPEC.child("additionalPrinterColumns")
    )
    errs += _validate_top_selectable_fields(spec, opts)
    errs += _validate_conversion(spec, opts)
    return errs


def _validate_group(group: str) -> list[FieldError]:
    path = _SPEC.child("group")
    if not group:
        return [field_errors.required(path, "")]
    if messages := is_dns1123_subdomain(group):
        return [field_errors.invalid(path, group, ",".join(messages))]
    if "." not in group:
        return [field_errors.invalid(path, group, "should be a domain with at least one dot")]
    return []


def _validate_enum(path: Path, value: Any, accepted: tuple[str, ...]) -> list[FieldError]:
    """Upstream ``validateEnumStrings`` with ``required`` set."""
    if not value:
        return [field_errors.required(path, "")]
    if value not in accepted:
        return [field_errors.not_supported(path, value, accepted)]
    return []


def _validate_schemas_present(spec: InternalSpec, opts: _Options) -> list[FieldError]:
    """v1 requires a schema per version; old CRDs lacking one need it for served versions."""
    if root_schema(spec.top["validation"]) is not None:
        return []
    errs = []
    for i, version in enumerate(spec.versions or ()):
        missing = root_schema(spec.per_version[i]["validation"]) is None
        path = _SPEC.child("versions").index(i).child("schema", "openAPIV3Schema")
        if opts.require_openapi_schema:
            if missing:
                errs.append(field_errors.required(path, ""))
        elif not spec.preserve_unknown_fields and version.get("served") is True and missing:
            errs.append(field_errors.required(path, "because otherwise all fields are pruned"))
    return errs


def _require_structural(spec: InternalSpec, opts: _Options) -> bool:
    """Pruning, defaults and Kubernetes extensions all need structural schemas.

    Only a legacy CRD with ``preserveUnknownFields: true`` whose stored schema
    was already non-structural may keep a non-structural schema.
    """
    if not spec.preserve_unknown_fields or not opts.old_schemas_non_structural():
        return True
    return any(
        schema_has(s, _has_default) or schema_has(s, _has_kubernetes_extensions)
        for s in spec.schemas()
    )


def _validate_versions(
    spec: InternalSpec, opts: _Options, require_structural: bool
) -> list[FieldError]:
    errs: list[FieldError] = []
    versions = spec.versions or []
    seen: set[str] = set()
    unique = True
    for i, version in enumerate(versions):
        name = as_str(version.get("name"))
        unique = unique and name not in seen
        seen.add(name)
        path = _SPEC.child("versions").index(i)
        if messages := is_dns1035_label(name):
            errs.append(field_errors.invalid(path.child("name"), name, ",".join(messages)))
        status_enabled = has_status(spec.subresources_for(i))
        errs += _validate_version(
            version, spec.per_version[i], opts, status_enabled, require_structural, path
        )
    if not unique:
        errs.append(
            field_errors.invalid(
                _SPEC.child("versions"), spec.go_versions(), "must contain unique version names"
            )
        )
    if sum(1 for v in versions if v.get("storage") is True) != 1:
        errs.append(
            field_errors.invalid(
                _SPEC.child("versions"),
                spec.go_versions(),
                "must have exactly one version marked as storage version",
            )
        )
    if versions:  # conversion copies versions[0].name to the internal spec.version
        first = as_str(versions[0].get("name"))
        if first and (messages := is_dns1035_label(first)):
            errs.append(field_errors.invalid(_SPEC.child("version"), first, ",".join(messages)))
    return errs


def _validate_version(
    version: dict[str, Any],
    internal: dict[str, Any],
    opts: _Options,
    status_enabled: bool,
    require_structural: bool,
    path: Path,
) -> list[FieldError]:
    """``validateCustomResourceDefinitionVersion``; ``internal`` holds the non-hoisted fields."""
    errs = [
        field_errors.invalid(path.child("deprecationWarning"), version.get("deprecationWarning"), m)
        for m in _deprecation_warning_errors(
            version.get("deprecated") is True, version.get("deprecationWarning")
        )
    ]
    errs += _validate_validation(
        internal["validation"], status_enabled, require_structural, path.child("schema")
    )
    errs += _validate_subresources(internal["subresources"], path.child("subresources"))
    errs += _validate_columns(
        internal["additionalPrinterColumns"], path.child("additionalPrinterColumns")
    )
    fields = as_list(internal["selectableFields"])
    if fields:
        root = root_schema(internal["validation"])
        if root is None:
            errs.append(
                field_errors.invalid(
                    path.child("selectableFields"),
                    "",
                    "selectableFields may only be set when version.schema.openAPIV3Schema "
                    "is not included",
                )
            )
        else:
            allow_many = as_str(version.get("name")) in opts.allow_too_many_selectable_fields
            errs += _validate_selectable_fields(
                fields, root, path.child("selectableFields"), allow_many
            )
    return errs


def _deprecation_warning_errors(deprecated: bool, warning: Any) -> list[str]:
    """The warning is sent in a ``Warning`` header, so it must be short and printable."""
    if not deprecated and warning is not None:
        return ["can only be set for deprecated versions"]
    if not isinstance(warning, str):
        return []
    messages = []
    if go_len(warning) > MAX_DEPRECATION_WARNING_BYTES:
        messages.append(f"must be <= {MAX_DEPRECATION_WARNING_BYTES} characters long")
    if not warning:
        messages.append("must not be an empty string")
    offset = 0
    for ch in warning:
        # Go decodes lone surrogates in JSON to the printable U+FFFD.
        if not ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF:
            messages.append(
                "must only contain printable UTF-8 characters; "
                f"non-printable character found at index {offset}"
            )
            break
        offset += go_len(ch)
    return messages


def _validate_required_names(names: dict[str, Any]) -> list[FieldError]:
    path = _SPEC.child("names")
    return [
        field_errors.required(path.child(key), "")
        for key in ("plural", "singular", "kind", "listKind")
        if not as_str(names.get(key))
    ]


# --- schema --------------------------------------------------------------------------------


def _validate_validation(
    validation: Any, status_enabled: bool, require_structural: bool, path: Path
) -> list[FieldError]:
    """``validateCustomResourceDefinitionValidation``: root rules here, the schema elsewhere."""
    schema = root_schema(validation)
    if schema is None:
        return []
    schema_path = path.child("openAPIV3Schema")
    errs = _status_root_errors(schema, schema_path) if status_enabled else []
    errs += _schema_errors(schema, schema_path, require_structural)
    return errs + crd_lifecycle.schema_errors(schema, schema_path)


_IF_STATUS: Final = " if the status subresource is enabled"

#: Internal JSONSchemaProps fields allowed at the root when the status subresource is on.
_ALLOWED_AT_STATUS_ROOT: Final = (
    "Description",
    "Type",
    "Format",
    "Title",
    "Maximum",
    "ExclusiveMaximum",
    "Minimum",
    "ExclusiveMinimum",
    "MaxLength",
    "MinLength",
    "Pattern",
    "MaxItems",
    "MinItems",
    "UniqueItems",
    "MultipleOf",
    "Required",
    "Items",
    "Properties",
    "ExternalDocs",
    "Example",
    "XPreserveUnknownFields",
    "XValidations",
)


def _status_root_errors(schema: dict[str, Any], path: Path) -> list[FieldError]:
    """With /status, the root may only hold what survives splitting off ``properties[status]``.

    Upstream walks the internal struct in field order and stops at the first
    offending field.
    """
    for go_name, key, kind in SCHEMA_FIELDS:
        value = schema.get(key)
        if value is None or (kind in "sb" and not value):
            continue
        if go_name == "Type":
            if value != "object":
                detail = (
                    f'only "object" is allowed as the type at the root of the schema{_IF_STATUS}'
                )
                return [field_errors.invalid(path.child("type"), value, detail)]
            continue
        if go_name not in _ALLOWED_AT_STATUS_ROOT:
            allowed = " ".join(_ALLOWED_AT_STATUS_ROOT)
            detail = f"only [{allowed}] fields are allowed at the root of the schema{_IF_STATUS}"
            return [field_errors.invalid(path, go_schema(schema), detail)]
    return []


def _schema_errors(
    schema: dict[str, Any], path: Path, require_structural: bool
) -> list[FieldError]:
    """The OpenAPI/structural checks and, for a sound structural schema, CEL compilation."""
    try:
        from kapi.validation.structural import validate_crd_schema
    except ImportError:
        return []
    errs = validate_crd_schema(schema, path, require_structural=require_structural)
    if errs or not require_structural:
        return errs
    try:
        from kapi.validation.cel import CELValidator
    except ImportError:
        return errs
    _, cel_errs = CELValidator.compile(schema, path)
    return cel_errs


# --- subresources, printer columns, selectable fields --------------------------------------


def _validate_subresources(subresources: Any, path: Path) -> list[FieldError]:
    scale = as_dict(subresources).get("scale")
    if scale is None:
        return []
    scale = as_dict(scale)
    errs = _scale_path_errors(
        as_str(scale.get("specReplicasPath")), path.child("scale", "specReplicasPath"), ("spec",)
    )
    errs += _scale_path_errors(
        as_str(scale.get("statusReplicasPath")),
        path.child("scale", "statusReplicasPath"),
        ("status",),
    )
    selector = scale.get("labelSelectorPath")
    if isinstance(selector, str) and selector:
        errs += _scale_path_errors(
            selector, path.child("scale", "labelSelectorPath"), ("spec", "status")
        )
    return errs


def _scale_path_errors(value: str, path: Path, roots: tuple[str, ...]) -> list[FieldError]:
    """A scale path must be a simple JSON path below one of ``roots``."""
    if not value:
        return [field_errors.required(path, "")]
    if errs := _simple_json_path_errors(value, path):
        return errs
    if not value.startswith(tuple(f".{r}." for r in roots)):
        under = " or ".join(f".{r}" for r in roots)
        detail = f"should be a json path under {'either ' if len(roots) > 1 else ''}{under}"
        return [field_errors.invalid(path, value, detail)]
    return []


def _simple_json_path_errors(value: str, path: Path) -> list[FieldError]:
    if not value.startswith("."):
        return [field_errors.invalid(path, value, "must be a simple json path starting with .")]
    return []


def _validate_columns(columns: Any, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    types_detail = "must be one of " + ",".join(PRINTER_COLUMN_TYPES)
    for i, column in enumerate(as_list(columns) or ()):
        column, p = as_dict(column), path.index(i)
        if not as_str(column.get("name")):
            errs.append(field_errors.required(p.child("name"), ""))
        col_type = as_str(column.get("type"))
        if not col_type:
            errs.append(field_errors.required(p.child("type"), types_detail))
        elif col_type not in PRINTER_COLUMN_TYPES:
            errs.append(field_errors.invalid(p.child("type"), col_type, types_detail))
        fmt = as_str(column.get("format"))
        if fmt and fmt not in PRINTER_COLUMN_FORMATS:
            detail = "must be one of " + ",".join(PRINTER_COLUMN_FORMATS)
            errs.append(field_errors.invalid(p.child("format"), fmt, detail))
        json_path = as_str(column.get("jsonPath"))
        if not json_path:
            errs.append(field_errors.required(p.child("JSONPath"), ""))
        else:
            errs += _simple_json_path_errors(json_path, p.child("JSONPath"))
    return errs


def _validate_top_selectable_fields(spec: InternalSpec, opts: _Options) -> list[FieldError]:
    fields = as_list(spec.top["selectableFields"])
    if not fields:
        return []
    root = root_schema(spec.top["validation"])
    if root is None:
        detail = "selectableFields may only be set when validations.schema is included"
        return [field_errors.invalid(_SPEC.child("selectableFields"), "", detail)]
    names = {as_str(v.get("name")) for v in spec.versions or ()}
    allow_many = bool(names) and names <= opts.allow_too_many_selectable_fields
    return _validate_selectable_fields(fields, root, _SPEC.child("selectableFields"), allow_many)


def _validate_selectable_fields(
    fields: list[Any], schema: dict[str, Any], path: Path, allow_too_many: bool
) -> list[FieldError]:
    """Selectable fields must name scalar fields of the schema outside metadata, at most 8."""
    errs: list[FieldError] = []
    unique: set[str] = set()
    for i, selectable in enumerate(fields):
        p = path.index(i).child("jsonPath")
        json_path = as_str(as_dict(selectable).get("jsonPath"))
        if not json_path:
            errs.append(field_errors.required(p, ""))
            continue
        try:
            found_path, found = _resolve_field_path(json_path, schema)
        except ValueError as e:
            errs.append(field_errors.invalid(p, json_path, f"is an invalid path: {e}"))
            continue
        if found_path.root().name == "metadata":
            errs.append(field_errors.invalid(p, json_path, "must not point to fields in metadata"))
        if as_dict(found).get("type") not in ("string", "boolean", "integer"):
            detail = (
                "must point to a field of type string, boolean or integer. "
                "Enum string fields and strings with formats are allowed."
            )
            errs.append(field_errors.invalid(p, json_path, detail))
        if str(found_path) in unique:
            errs.append(field_errors.duplicate(p, json_path))
        unique.add(str(found_path))
    if len(unique) > MAX_SELECTABLE_FIELDS and not allow_too_many:
        errs.append(field_errors.too_many(path, len(unique), MAX_SELECTABLE_FIELDS))
    return errs


_PATH_TOKEN: Final = re.compile(r"[.\[\]]|[^.\[\]]+")


def _resolve_field_path(json_path: str, schema: dict[str, Any]) -> tuple[Path, Any]:
    """Upstream ``cel.ValidFieldPath`` without array notation: dotted names through the schema."""
    tokens = iter(_PATH_TOKEN.findall(json_path))
    path: Path | None = None
    node: Any = schema
    for token in tokens:
        if token == "[":
            raise ValueError("array notation is not allowed")
        if token != ".":
            raise ValueError(f"expected [ or . but got: {token}")
        name = next(tokens, None)
        if name is None:
            raise ValueError("unexpected end of JSON path")
        path, node = _field_path_step(path, node, name)
    assert path is not None  # json_path is non-empty, so a step was taken or an error raised
    return path, node


def _field_path_step(path: Path | None, node: Any, name: str) -> tuple[Path, Any]:
    """One ``.name``: a property of a struct, or a key of a map (``additionalProperties``)."""
    properties = as_dict(node).get("properties")
    additional = as_dict(node).get("additionalProperties")
    if properties:
        if name not in properties:
            raise ValueError("does not refer to a valid field")
        return field_errors.child_of(path, name), properties[name]
    if isinstance(additional, dict):
        return (Path(f"[{name}]") if path is None else path.key(name)), additional
    raise ValueError("does not refer to a valid field")


# --- conversion ----------------------------------------------------------------------------


def _validate_conversion(spec: InternalSpec, opts: _Options) -> list[FieldError]:
    """Strategy ``Webhook`` needs a reachable webhook that speaks a known ConversionReview."""
    conversion = spec.raw.get("conversion")
    if conversion is None:
        return []
    conversion = as_dict(conversion)
    path = _SPEC.child("conversion")
    strategy = conversion.get("strategy")
    errs: list[FieldError] = []
    if strategy != "None" and spec.preserve_unknown_fields:
        errs.append(
            field_errors.invalid(
                path.child("strategy"),
                as_str(strategy),
                "must be None if spec.preserveUnknownFields is true",
            )
        )
    errs += _validate_enum(path.child("strategy"), strategy, _STRATEGIES)
    webhook = as_dict(conversion.get("webhook"))
    client_config = webhook.get("clientConfig")
    review_versions = as_list(webhook.get("conversionReviewVersions"))
    if strategy == "Webhook":
        if client_config is None:
            errs.append(
                field_errors.required(
                    path.child("webhookClientConfig"), "required when strategy is set to Webhook"
                )
            )
        else:
            errs += _validate_client_config(
                as_dict(client_config), path.child("webhookClientConfig")
            )
        errs += _validate_review_versions(
            review_versions,
            opts.require_recognized_review_version,
            path.child("conversionReviewVersions"),
        )
        return errs
    not_webhook = "should not be set when strategy is not set to Webhook"
    if client_config is not None:
        errs.append(field_errors.forbidden(path.child("webhookClientConfig"), not_webhook))
    if review_versions:
        errs.append(field_errors.forbidden(path.child("conversionReviewVersions"), not_webhook))
    return errs


def _validate_review_versions(
    versions: list[Any] | None, require_recognized: bool, path: Path
) -> list[FieldError]:
    if not versions:
        return [field_errors.required(path, "")]
    errs: list[FieldError] = []
    seen: set[Any] = set()
    for i, version in enumerate(versions):
        if version in seen:
            errs.append(field_errors.invalid(path.index(i), version, "duplicate version"))
            continue
        seen.add(version)
        errs += [
            field_errors.invalid(path.index(i), version, m)
            for m in is_dns1035_label(as_str(version))
        ]
    if require_recognized and not seen.intersection(ACCEPTED_CONVERSION_REVIEW_VERSIONS):
        detail = "must include at least one of " + ", ".join(ACCEPTED_CONVERSION_REVIEW_VERSIONS)
        errs.append(field_errors.invalid(path, versions, detail))
    return errs


def _validate_client_config(config: dict[str, Any], path: Path) -> list[FieldError]:
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        return [field_errors.required(path, "exactly one of url or service is required")]
    if url is not None:
        return validate_webhook_url(path.child("url"), as_str(url), force_https=True)
    service = as_dict(service)
    port = service.get("port")
    return validate_webhook_service(
        path.child("service"),
        as_str(service.get("namespace")),
        as_str(service.get("name")),
        service.get("path"),
        443 if port is None else port,
    )


# --- metadata-level rules ------------------------------------------------------------------


def _validate_api_approval(crd: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """Groups under k8s.io / kubernetes.io need the community's API approval annotation."""
    group = as_str(as_dict(crd.get("spec")).get("group"))
    if not _is_protected_community_group(group):
        return []
    annotation = as_str(
        as_dict(as_dict(crd.get("metadata")).get("annotations")).get(KUBE_API_APPROVED_ANNOTATION)
    )
    state, reason = _api_approval_state(annotation)
    if old is not None:
        old_annotations = as_dict(as_dict(old.get("metadata")).get("annotations"))
        if (
            _api_approval_state(as_str(old_annotations.get(KUBE_API_APPROVED_ANNOTATION)))[0]
            == state
        ):
            return []
    path = _ANNOTATIONS.key(KUBE_API_APPROVED_ANNOTATION)
    if state == "missing":
        return [field_errors.required(path, reason)]
    if state == "invalid":
        return [field_errors.invalid(path, annotation, reason)]
    return []


def _is_protected_community_group(group: str) -> bool:
    return any(group == d or group.endswith("." + d) for d in ("k8s.io", "kubernetes.io"))


def _api_approval_state(annotation: str) -> tuple[str, str]:
    """Upstream ``apihelpers.GetAPIApprovalState``: (state, reason)."""
    key = go_quote(KUBE_API_APPROVED_ANNOTATION)
    see = "see https://github.com/kubernetes/enhancements/pull/1111"
    if not annotation:
        return "missing", f"protected groups must have approval annotation {key}, {see}"
    if annotation.startswith("unapproved"):
        return "bypassed", f"not approved: {go_quote(annotation)}"
    parts = urlsplit(annotation)
    if (
        parts.scheme
        and parts.netloc.rpartition("@")[2]
        and not any(c.isspace() for c in annotation)
    ):
        return "approved", f"approved in {annotation}"
    return "invalid", (
        f"protected groups must have approval annotation {key} with either a URL or a reason "
        f'starting with "unapproved", {see}'
    )


def _validate_preserve_unknown_fields(
    spec: dict[str, Any], old_spec: dict[str, Any] | None
) -> list[FieldError]:
    """v1 prunes unknown fields; only CRDs that already preserved them may keep doing so."""
    if old_spec is not None and old_spec.get("preserveUnknownFields") is True:
        return []
    if spec.get("preserveUnknownFields") is True:
        detail = (
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true "
            "in spec.versions[*].schema instead"
        )
        return [field_errors.invalid(_SPEC.child("preserveUnknownFields"), True, detail)]
    return []
