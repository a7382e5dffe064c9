"""Static checks of a CRD's ``openAPIV3Schema``, as upstream runs them on CRD create/update.

Upstream splits them over ``ValidateCustomResourceDefinitionOpenAPISchema``
(apiextensions validation) and ``schema.NewStructural``/``ValidateStructural``/
``defaulting.ValidateDefaults`` (apiextensions-apiserver). CRD authors see them
as the causes of one 422, so the order and wording here follow upstream's
``validateCustomResourceDefinitionValidation``:

1. ``nullable`` at the root;
2. when structural schemas are required: the "must be structural" errors,
   sorted as upstream sorts them, or, only when there are none, the default
   value checks;
3. the keyword checks of every node, in document order (upstream walks Go maps);
4. only when nothing else failed, the error that stopped ``NewStructural``
   (e.g. ``$schema``), reported on the schema itself as upstream does.

Covered: unsupported keywords (``id``, ``$schema``, ``$ref``, ``patternProperties``,
``dependencies``, ``additionalItems``, ``definitions``, ``items`` as an array),
``uniqueItems``, ``type`` values, ``additionalProperties`` with ``properties``,
``x-kubernetes-preserve-unknown-fields: false``, defaults forbidden in top-level
``metadata``/``apiVersion``/``kind`` and in ``additionalProperties`` of
metadata, embedded resources inside metadata, map/list types (``list-type``,
``list-map-keys``, ``map-type``, set items atomic, map keys required or defaulted
and not nullable), the static checks of ``x-kubernetes-validations`` entries
(rule, message, messageExpression, reason, fieldPath emptiness and line breaks),
all ``ValidateStructural`` rules (types required per level, root type object,
no ``additionalProperties`` at the root, the value-validation restrictions in
``allOf``/``anyOf``/``oneOf``/``not`` with the two int-or-string patterns,
int-or-string/embedded-resource extension conflicts, embedded resources, root
``metadata`` limited to ``name``/``generateName``, ``kind``/``apiVersion`` string,
completeness of value validations at the root, ``pattern`` that Go cannot
compile) and defaults that would be pruned ("must not have unknown fields").

Not covered here: checks that need other engines, i.e. validating a default
against its schema and CEL rules (pass ``default_validator`` to plug the schema
validator in), compiling CEL rules and their costs, whether a rule's
``fieldPath`` names a real field, the metadata checks of defaults inside
embedded ``metadata``, the status-subresource restrictions on the root, and the
ratcheting options upstream applies on update to CRDs that already broke a rule
(every rule here is the one for a new CRD). ``pattern`` is compiled by
:mod:`kapi.validation.regexp` (RE2, with Go's restrictions and error texts).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, Final

from kapi.apimachinery import field_errors
from kapi.apimachinery.field_errors import FieldError, Path
from kapi.validation.pruning import prune
from kapi.validation.regexp import RegexpError, compile_regexp

#: Validates one default value against the schema node holding it; errors at the path given.
DefaultValidator = Callable[[dict[str, Any], Any, Path], list[FieldError]]

_OPENAPI_TYPES: Final = ("array", "boolean", "integer", "number", "object", "string")
_META_FIELDS: Final = frozenset({"metadata", "kind", "apiVersion"})
VALIDATION_REASONS: Final = (
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
)
_JUNCTORS: Final = ("allOf", "anyOf", "oneOf")


def validate_crd_schema(
    schema: dict[str, Any],
    path: Path,
    *,
    require_structural: bool = True,
    default_validator: DefaultValidator | None = None,
) -> list[FieldError]:
    """All upstream errors for one ``openAPIV3Schema`` at ``path``, in upstream's order."""
    errs: list[FieldError] = []
    if schema.get("nullable") is True:
        errs.append(
            field_errors.forbidden(path.child("nullable"), "nullable cannot be true at the root")
        )
    init_error = None
    if require_structural:
        init_error = _new_structural_error(schema)
        if init_error is None:
            structural = validate_structural(schema, path)
            errs += structural or _default_errors(schema, path, default_validator)
    errs += _check(schema, path, _Context(), is_root=True)
    if not errs and init_error is not None:
        errs.append(field_errors.invalid(path, "", init_error))
    return errs


# --- Go zero values ------------------------------------------------------------------------


def _set(s: dict[str, Any], key: str) -> bool:
    """Whether a keyword holds a non-zero Go value (``false``/``""``/``null``/empty are unset)."""
    v = s.get(key)
    return v is not None and v is not False and v != "" and v != [] and v != {}


def _props(s: dict[str, Any]) -> dict[str, Any]:
    return s.get("properties") or {}


def _items(s: dict[str, Any]) -> dict[str, Any] | None:
    items = s.get("items")
    return items if isinstance(items, dict) else None


def _additional_schema(s: dict[str, Any]) -> dict[str, Any] | None:
    ap = s.get("additionalProperties")
    return ap if isinstance(ap, dict) else None


# --- NewStructural -------------------------------------------------------------------------

_UNSUPPORTED: Final = (
    ("id", "id"),
    ("$schema", "schema"),
    ("$ref", "$ref"),
    ("patternProperties", "patternProperties"),
    ("dependencies", "dependencies"),
    ("additionalItems", "additionalItems"),
    ("definitions", "definitions"),
)


def _new_structural_error(s: dict[str, Any]) -> str | None:
    """The error upstream ``NewStructural`` stops at, or None when it converts ``s``."""
    for key, name in _UNSUPPORTED:
        present = s.get(key) is not None if key == "additionalItems" else _set(s, key)
        if present:
            return f"OpenAPIV3Schema '{name}' is not supported"
    for sub in _value_validation_children(s):
        if (err := _new_structural_error(sub)) is not None:
            return err
    ap = _additional_schema(s)
    if ap is not None and (err := _new_structural_error(ap)) is not None:
        return err
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
    items = s.get("items")
    if isinstance(items, list) and items:
        return "OpenAPIV3Schema 'items' must be a schema, but is an array"
    if isinstance(items, dict) and (err := _new_structural_error(items)) is not None:
        return err
    for prop in _props(s).values():
        if (err := _new_structural_error(prop)) is not None:
            return err
    return None


def _value_validation_children(s: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if isinstance(s.get("not"), dict):
        yield s["not"]
    for junctor in _JUNCTORS:
        yield from s.get(junctor) or ()


# --- ValidateStructural --------------------------------------------------------------------


class _Level(Enum):
    ROOT = "at the root"
    ITEM = "for specified array items"
    FIELD = "for specified object fields"


def validate_structural(schema: dict[str, Any], path: Path) -> list[FieldError]:
    """Upstream ``ValidateStructural``: the "must be structural" rules, sorted like upstream."""
    errs = _invariants(schema, _Level.ROOT, path)
    errs += _completeness(schema, path)
    errs.sort(key=str)
    return errs


def _invariants(s: dict[str, Any], lvl: _Level, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    items = _items(s)
    if s.get("type") == "array" and items is None:
        errs.append(field_errors.required(path.child("items"), "must be specified"))
    if items is not None:
        errs += _invariants(items, _Level.ITEM, path.child("items"))
    for k, prop in _props(s).items():
        errs += _invariants(prop, _Level.FIELD, path.child("properties").key(k))
    has_additional = s.get("additionalProperties") is not None
    if has_additional and lvl is _Level.ROOT:
        errs.append(
            field_errors.forbidden(
                path.child("additionalProperties"), "must not be used at the root"
            )
        )
    if (ap := _additional_schema(s)) is not None:
        errs += _invariants(ap, _Level.FIELD, path.child("additionalProperties"))
    errs += _extension_conflicts(s, path)
    errs += _value_validation(s, _int_or_string_any_of(s), _int_or_string_all_of(s), path)
    errs += _type_invariants(s, lvl, path)
    if _set(s, "x-kubernetes-embedded-resource") and has_additional:
        errs.append(
            field_errors.forbidden(
                path.child("additionalProperties"),
                "must not be used if x-kubernetes-embedded-resource is set",
            )
        )
    errs += _meta_invariants(s, lvl, path)
    return errs


def _extension_conflicts(s: dict[str, Any], path: Path) -> list[FieldError]:
    if not _set(s, "x-kubernetes-int-or-string"):
        return []
    errs = []
    for ext in ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource"):
        if _set(s, ext):
            detail = "must be false if x-kubernetes-int-or-string is true"
            errs.append(field_errors.invalid(path.child(ext), True, detail))
    return errs


def _type_invariants(s: dict[str, Any], lvl: _Level, path: Path) -> list[FieldError]:
    errs = []
    typ = s.get("type") or ""
    if _set(s, "x-kubernetes-embedded-resource") and typ != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(_required_or_invalid(path.child("type"), typ, detail))
    elif not typ and not (
        _set(s, "x-kubernetes-int-or-string") or _set(s, "x-kubernetes-preserve-unknown-fields")
    ):
        errs.append(field_errors.required(path.child("type"), f"must not be empty {lvl.value}"))
    if lvl is _Level.ROOT and typ and typ != "object":
        errs.append(field_errors.invalid(path.child("type"), typ, "must be object at the root"))
    return errs


def _required_or_invalid(path: Path, value: str, detail: str) -> FieldError:
    return (
        field_errors.required(path, detail)
        if not value
        else field_errors.invalid(path, value, detail)
    )


def _meta_invariants(s: dict[str, Any], lvl: _Level, path: Path) -> list[FieldError]:
    """TypeMeta must be strings and root metadata may only restrict name and generateName."""
    errs = []
    embedded = _set(s, "x-kubernetes-embedded-resource")
    check_metadata = lvl is _Level.ROOT or embedded
    props = _props(s)
    for name in ("kind", "apiVersion"):
        if name in props and check_metadata and props[name].get("type") != "string":
            type_path = path.child("properties").key(name).child("type")
            errs.append(
                field_errors.invalid(type_path, props[name].get("type") or "", "must be string")
            )
    if "metadata" in props:
        meta, meta_path = props["metadata"], path.child("properties").key("metadata")
        if check_metadata and meta.get("type") != "object":
            errs.append(
                field_errors.invalid(
                    meta_path.child("type"), meta.get("type") or "", "must be object"
                )
            )
        if lvl is _Level.ROOT and not _only_name_restrictions(meta):
            detail = (
                "must not specify anything other than name and generateName, "
                "but metadata is implicitly specified"
            )
            errs.append(field_errors.forbidden(meta_path, detail))
    if embedded and not _set(s, "x-kubernetes-preserve-unknown-fields") and not props:
        detail = (
            "must not be empty if x-kubernetes-embedded-resource is true "
            "without x-kubernetes-preserve-unknown-fields"
        )
        errs.append(field_errors.required(path.child("properties"), detail))
    return errs


def _only_name_restrictions(meta: dict[str, Any]) -> bool:
    """Upstream's test: nothing but type, default and name/generateName properties is set."""
    props = _props(meta)
    if props and not set(props) <= {"name", "generateName"}:
        return False
    # Upstream clears type, default and these properties, then compares with an empty schema.
    ignored = {"type", "default", "properties"}
    return not any(_nested_sets(meta, k) for k in meta if k not in ignored) and all(
        meta.get(k) is None for k in ("additionalProperties", "example")
    )


_INT_OR_STRING_ANY_OF: Final = ({"type": "integer"}, {"type": "string"})


def _is_bare_type(s: Any, typ: str) -> bool:
    """Whether a nested schema sets nothing but ``type`` (Go DeepEqual with zero values)."""
    return (
        isinstance(s, dict)
        and s.get("type") == typ
        and not any(_set(s, k) for k in s if k != "type")
    )


def _is_int_or_string_any_of(any_of: Any) -> bool:
    return (
        isinstance(any_of, list)
        and len(any_of) == 2
        and all(
            _is_bare_type(x, t["type"]) for x, t in zip(any_of, _INT_OR_STRING_ANY_OF, strict=True)
        )
    )


def _int_or_string_any_of(s: dict[str, Any]) -> bool:
    return _is_int_or_string_any_of(s.get("anyOf"))


def _int_or_string_all_of(s: dict[str, Any]) -> bool:
    all_of = s.get("allOf") or []
    return bool(all_of) and _is_int_or_string_any_of(all_of[0].get("anyOf"))


def _value_validation(
    s: dict[str, Any], skip_any_of: bool, skip_first_all_of_any_of: bool, path: Path
) -> list[FieldError]:
    errs: list[FieldError] = []
    if not skip_any_of:
        for i, sub in enumerate(s.get("anyOf") or ()):
            errs += _nested(sub, False, path.child("anyOf").index(i))
    for i, sub in enumerate(s.get("allOf") or ()):
        errs += _nested(sub, skip_first_all_of_any_of and i == 0, path.child("allOf").index(i))
    for i, sub in enumerate(s.get("oneOf") or ()):
        errs += _nested(sub, False, path.child("oneOf").index(i))
    if isinstance(s.get("not"), dict):
        errs += _nested(s["not"], False, path.child("not"))
    pattern = s.get("pattern")
    if pattern and (err := go_regexp_error(pattern)) is not None:
        detail = f"must be a valid regular expression, but isn't: {err}"
        errs.append(field_errors.invalid(path.child("pattern"), pattern, detail))
    return errs


#: Keywords that structure data and so must stay out of value validations.
_NESTED_FORBIDDEN: Final = (
    ("type", "must be empty to be structural"),
    ("additionalProperties", "must be undefined to be structural"),
    ("default", "must be undefined to be structural"),
    ("title", "must be empty to be structural"),
    ("description", "must be empty to be structural"),
    ("nullable", "must be false to be structural"),
    ("externalDocs", "must be undefined to be structural"),
    ("x-kubernetes-preserve-unknown-fields", "must be false to be structural"),
    ("x-kubernetes-embedded-resource", "must be false to be structural"),
    ("x-kubernetes-int-or-string", "must be false to be structural"),
    ("x-kubernetes-list-map-keys", "must be empty to be structural"),
    ("x-kubernetes-list-type", "must be undefined to be structural"),
    ("x-kubernetes-map-type", "must be undefined to be structural"),
    ("x-kubernetes-validations", "must be empty to be structural"),
)


#: Keywords that are Go pointers in upstream's types: any value counts as set.
_POINTER_KEYWORDS: Final = frozenset(
    {"default", "externalDocs", "x-kubernetes-list-type", "x-kubernetes-map-type"}
)


def _nested_sets(v: dict[str, Any], key: str) -> bool:
    value = v.get(key)
    if key == "additionalProperties":
        return value is not None and value is not False  # `false` converts to nil there
    if key in _POINTER_KEYWORDS:
        return value is not None
    return _set(v, key)


def _nested(v: dict[str, Any], skip_any_of: bool, path: Path) -> list[FieldError]:
    """A schema inside allOf/anyOf/oneOf/not: only value validations are allowed."""
    errs = _value_validation(v, skip_any_of, False, path)
    if (items := _items(v)) is not None:
        errs += _nested(items, False, path.child("items"))
    for k, prop in _props(v).items():
        errs += _nested(prop, False, path.child("properties").key(k))
    for key, detail in _NESTED_FORBIDDEN:
        if _nested_sets(v, key):
            errs.append(field_errors.forbidden(path.child(key), detail))
    if "metadata" in _props(v):
        detail = "must not be specified in a nested context"
        errs.append(field_errors.forbidden(path.child("properties").key("metadata"), detail))
    return errs


def _completeness(s: dict[str, Any], path: Path) -> list[FieldError]:
    """Fields and items named in the root's value validations must exist structurally."""
    return _value_validation_completeness(s, s, path, path)


def _value_validation_completeness(
    v: dict[str, Any], s: dict[str, Any] | None, s_path: Path, v_path: Path
) -> list[FieldError]:
    errs: list[FieldError] = []
    if isinstance(v.get("not"), dict):
        errs += _nested_completeness(v["not"], s, s_path, v_path.child("not"))
    for junctor in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(v.get(junctor) or ()):
            errs += _nested_completeness(sub, s, s_path, v_path.child(junctor).index(i))
    return errs


def _nested_completeness(
    v: dict[str, Any], s: dict[str, Any] | None, s_path: Path, v_path: Path
) -> list[FieldError]:
    if s is None:
        return [field_errors.required(s_path, f"because it is defined in {v_path}")]
    errs = _value_validation_completeness(v, s, s_path, v_path)
    if (items := _items(v)) is not None:
        errs += _nested_completeness(items, _items(s), s_path.child("items"), v_path.child("items"))
    s_props = _props(s)
    for k, prop in _props(v).items():
        s_prop_path = s_path.child("properties").key(k)
        errs += _nested_completeness(
            prop, s_props.get(k), s_prop_path, v_path.child("properties").key(k)
        )
    return errs


# --- defaults ------------------------------------------------------------------------------


def _default_errors(
    schema: dict[str, Any], path: Path, default_validator: DefaultValidator | None
) -> list[FieldError]:
    """Upstream ``ValidateDefaults``: defaults must survive pruning (and validate, if asked)."""
    return _defaults(schema, path, True, False, default_validator)


def _defaults(
    s: dict[str, Any],
    path: Path,
    is_root: bool,
    inside_meta: bool,
    default_validator: DefaultValidator | None,
) -> list[FieldError]:
    errs: list[FieldError] = []
    embedded = is_root or _set(s, "x-kubernetes-embedded-resource")
    if embedded:
        inside_meta = False
    default = s.get("default")
    if default is not None:
        if not inside_meta:
            pruned = copy.deepcopy(default)  # any YAML-decoded value, not only JSON data
            prune(pruned, s, is_resource_root=embedded, embedded_metadata=False)
            if pruned != default:
                errs.append(
                    field_errors.invalid(
                        path.child("default"), default, "must not have unknown fields"
                    )
                )
        if default_validator is not None:
            errs += default_validator(s, default, path.child("default"))
    # Like upstream, additionalProperties is not followed.
    if (items := _items(s)) is not None:
        errs += _defaults(items, path.child("items"), False, inside_meta, default_validator)
    for k, prop in _props(s).items():
        sub_meta = inside_meta or (embedded and k in _META_FIELDS)
        sub_path = path.child("properties").key(k)
        errs += _defaults(prop, sub_path, False, sub_meta, default_validator)
    return errs


# --- ValidateCustomResourceDefinitionOpenAPISchema -----------------------------------------


@dataclass(frozen=True)
class _Context:
    """Upstream's ``specStandardValidatorV3`` state, narrowed while descending."""

    allow_defaults: bool = True
    disallow_defaults_reason: str = ""
    inside_resource_meta: bool = False

    def forbid_defaults(self, reason: str) -> _Context:
        return replace(self, allow_defaults=False, disallow_defaults_reason=reason)


def _check(
    s: dict[str, Any], path: Path, ctx: _Context, *, is_root: bool = False
) -> list[FieldError]:
    """The keyword checks every node gets, structural or inside a value validation."""
    errs = _keyword_errors(s, path, ctx)
    if s.get("uniqueItems") is True:
        detail = "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
        errs.append(field_errors.forbidden(path.child("uniqueItems"), detail))
    errs += _check_children(s, path, ctx, is_root)
    errs += _extension_errors(s, path)
    errs += _validation_rule_errors(s, path)
    return errs


def _check_children(
    s: dict[str, Any], path: Path, ctx: _Context, is_root: bool
) -> list[FieldError]:
    errs: list[FieldError] = []
    ap = s.get("additionalProperties")
    if ap is not None:
        if _props(s) and (ap is False or isinstance(ap, dict)):
            detail = "additionalProperties and properties are mutual exclusive"
            errs.append(field_errors.forbidden(path.child("additionalProperties"), detail))
        if isinstance(ap, dict):
            sub = ctx
            if ctx.inside_resource_meta:
                sub = ctx.forbid_defaults("inside additionalProperties applying to object metadata")
            errs += _check(ap, path.child("additionalProperties"), sub)
    embedded = _set(s, "x-kubernetes-embedded-resource")
    for k, prop in _props(s).items():
        sub = ctx
        if (is_root or embedded) and k in _META_FIELDS:
            sub = replace(sub, inside_resource_meta=True)
            if is_root:
                sub = sub.forbid_defaults(f"in top-level {k}")
        errs += _check(prop, path.child("properties").key(k), sub)
    if isinstance(s.get("not"), dict):
        errs += _check(s["not"], path.child("not"), ctx)
    for junctor in ("allOf", "oneOf", "anyOf"):
        for i, sub_schema in enumerate(s.get(junctor) or ()):
            errs += _check(sub_schema, path.child(junctor).index(i), ctx)
    for k, sub_schema in (s.get("definitions") or {}).items():
        errs += _check(sub_schema, path.child("definitions").key(k), ctx)
    items = s.get("items")
    if isinstance(items, dict):
        errs += _check(items, path.child("items"), ctx)
    elif isinstance(items, list):
        for i, sub_schema in enumerate(items):
            errs += _check(sub_schema, path.child("items").index(i), ctx)
    for k, dep in (s.get("dependencies") or {}).items():
        if isinstance(dep, dict):
            errs += _check(dep, path.child("dependencies").key(k), ctx)
    return errs


def _keyword_errors(s: dict[str, Any], path: Path, ctx: _Context) -> list[FieldError]:
    """Upstream ``specStandardValidatorV3.validate``."""
    errs = []
    typ = s.get("type") or ""
    if typ and typ not in _OPENAPI_TYPES:
        errs.append(field_errors.not_supported(path.child("type"), typ, _OPENAPI_TYPES))
    if s.get("default") is not None and not ctx.allow_defaults:
        detail = "must not be set"
        if ctx.disallow_defaults_reason:
            detail += " " + ctx.disallow_defaults_reason
        errs.append(field_errors.forbidden(path.child("default"), detail))
    for key, present in (
        ("id", _set(s, "id")),
        ("additionalItems", s.get("additionalItems") is not None),
        ("patternProperties", _set(s, "patternProperties")),
        ("definitions", _set(s, "definitions")),
        ("dependencies", s.get("dependencies") is not None),
        ("$ref", s.get("$ref") is not None),
    ):
        if present:
            errs.append(field_errors.forbidden(path.child(key), f"{key} is not supported"))
    if typ == "null":
        detail = "type cannot be set to null, use nullable as an alternative"
        errs.append(field_errors.forbidden(path.child("type"), detail))
    if isinstance(s.get("items"), list) and s["items"]:
        detail = "items must be a schema object and not an array"
        errs.append(field_errors.forbidden(path.child("items"), detail))
    if ctx.inside_resource_meta and _set(s, "x-kubernetes-embedded-resource"):
        detail = "must not be used inside of resource meta"
        errs.append(field_errors.forbidden(path.child("x-kubernetes-embedded-resource"), detail))
    return errs


def _extension_errors(s: dict[str, Any], path: Path) -> list[FieldError]:
    errs = []
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(
            field_errors.invalid(
                path.child("x-kubernetes-preserve-unknown-fields"),
                False,
                "must be true or undefined",
            )
        )
    errs += _map_type_errors(s, path)
    errs += _list_type_errors(s, path)
    errs += _list_map_keys_errors(s, path)
    errs += _map_set_item_errors(s, path)
    return errs


def _map_type_errors(s: dict[str, Any], path: Path) -> list[FieldError]:
    map_type = s.get("x-kubernetes-map-type")
    if map_type is None:
        return []
    errs = []
    typ = s.get("type") or ""
    if typ != "object":
        detail = "must be object if x-kubernetes-map-type is specified"
        errs.append(_required_or_invalid(path.child("type"), typ, detail))
    if map_type not in ("atomic", "granular"):
        errs.append(
            field_errors.not_supported(
                path.child("x-kubernetes-map-type"), map_type, ("atomic", "granular")
            )
        )
    return errs


def _list_type_errors(s: dict[str, Any], path: Path) -> list[FieldError]:
    list_type = s.get("x-kubernetes-list-type")
    if list_type is None:
        return []
    errs = []
    typ = s.get("type") or ""
    items = _items(s)
    if typ != "array":
        detail = "must be array if x-kubernetes-list-type is specified"
        errs.append(_required_or_invalid(path.child("type"), typ, detail))
    elif list_type == "set" and items is not None:
        errs += _set_item_errors(items, path.child("items"))
    if list_type not in ("atomic", "set", "map"):
        errs.append(
            field_errors.not_supported(
                path.child("x-kubernetes-list-type"), list_type, ("atomic", "set", "map")
            )
        )
    return errs


def _set_item_errors(items: dict[str, Any], path: Path) -> list[FieldError]:
    """Items of a set must be atomic, so that set membership is well defined."""
    detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
    item_list_type = items.get("x-kubernetes-list-type")
    if items.get("type") == "array" and item_list_type not in (None, "atomic"):
        return [field_errors.invalid(path.child("x-kubernetes-list-type"), item_list_type, detail)]
    if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
        # Upstream reports the item's list type here, usually null.
        return [field_errors.invalid(path.child("x-kubernetes-map-type"), item_list_type, detail)]
    return []


def _list_map_keys_errors(s: dict[str, Any], path: Path) -> list[FieldError]:
    errs = []
    list_type = s.get("x-kubernetes-list-type")
    keys = s.get("x-kubernetes-list-map-keys") or []
    if keys and list_type != "map":
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        errs.append(
            _required_or_invalid(path.child("x-kubernetes-list-type"), list_type or "", detail)
        )
    if list_type != "map":
        return errs
    if not keys:
        detail = "must not be empty if x-kubernetes-list-type is map"
        errs.append(field_errors.required(path.child("x-kubernetes-list-map-keys"), detail))
    items = s.get("items")
    if items is None:
        detail = "must have a schema if x-kubernetes-list-type is map"
        errs.append(field_errors.required(path.child("items"), detail))
    elif isinstance(items, list):
        detail = "must only have a single schema if x-kubernetes-list-type is map"
        errs.append(field_errors.invalid(path.child("items"), items, detail))
    elif items.get("type") != "object":
        detail = "must be object if parent array's x-kubernetes-list-type is map"
        errs.append(
            field_errors.invalid(path.child("items", "type"), items.get("type") or "", detail)
        )
    else:
        errs += _map_key_property_errors(items, keys, path)
    return errs


def _map_key_property_errors(
    items: dict[str, Any], keys: list[str], path: Path
) -> list[FieldError]:
    errs = []
    props = _props(items)
    seen: set[str] = set()
    keys_path = path.child("x-kubernetes-list-map-keys")
    for k in keys:
        if k not in props:
            detail = "entries must all be names of item properties"
            errs.append(field_errors.invalid(keys_path, keys, detail))
        elif props[k].get("type") in ("array", "object"):
            # Upstream reports the item type (object) as the bad value.
            type_path = path.child("items", "properties").key(k).child("type")
            detail = "must be a scalar type if parent array's x-kubernetes-list-type is map"
            errs.append(field_errors.invalid(type_path, items["type"], detail))
        if k in seen:
            errs.append(field_errors.invalid(keys_path, keys, "must not contain duplicate entries"))
        seen.add(k)
    return errs


def _map_set_item_errors(s: dict[str, Any], path: Path) -> list[FieldError]:
    """Items of sets and maps, and map keys, must be identifiable: not null, always present."""
    items = _items(s)
    list_type = s.get("x-kubernetes-list-type")
    if items is None or list_type not in ("set", "map"):
        return []
    errs = []
    if items.get("nullable") is True:
        detail = f"cannot be nullable when x-kubernetes-list-type is {list_type}"
        errs.append(field_errors.forbidden(path.child("items", "nullable"), detail))
    if list_type != "map":
        return errs
    required = set(items.get("required") or ())
    props = _props(items)
    for k in s.get("x-kubernetes-list-map-keys") or ():
        if k not in props:
            continue
        prop_path = path.child("items", "properties").key(k)
        if k not in required and props[k].get("default") is None:
            detail = (
                "this property is in x-kubernetes-list-map-keys, "
                "so it must have a default or be a required property"
            )
            errs.append(field_errors.required(prop_path.child("default"), detail))
        if props[k].get("nullable") is True:
            detail = "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
            errs.append(field_errors.forbidden(prop_path.child("nullable"), detail))
    return errs


_NEWLINES: Final = re.compile(r"[\n\r]+")


def _validation_rule_errors(s: dict[str, Any], path: Path) -> list[FieldError]:
    """The checks of ``x-kubernetes-validations`` entries that need no CEL compiler."""
    errs: list[FieldError] = []
    for i, rule in enumerate(s.get("x-kubernetes-validations") or ()):
        errs += rule_errors(rule, path.child("x-kubernetes-validations").index(i))
    return errs


def rule_errors(rule: dict[str, Any], path: Path) -> list[FieldError]:
    """Upstream's static checks of one ``x-kubernetes-validations`` entry at ``path``.

    All but ``fieldPath`` naming a declared field, which needs the CEL package
    (``cel.compiler`` adds it).
    """
    errs = []
    text = (rule.get("rule") or "").strip()
    message = rule.get("message") or ""
    trimmed_message = message.strip()
    if not text:
        errs.append(field_errors.required(path.child("rule"), "rule is not specified"))
    elif message and not trimmed_message:
        detail = "message must be non-empty if specified"
        errs.append(field_errors.invalid(path.child("message"), message, detail))
    elif _NEWLINES.search(trimmed_message):
        detail = "message must not contain line breaks"
        errs.append(field_errors.invalid(path.child("message"), message, detail))
    elif _NEWLINES.search(text) and not trimmed_message:
        detail = "message must be specified if rule contains line breaks"
        errs.append(field_errors.required(path.child("message"), detail))
    message_expression = rule.get("messageExpression") or ""
    if message_expression and not message_expression.strip():
        detail = "messageExpression must be non-empty if specified"
        errs.append(field_errors.required(path.child("messageExpression"), detail))
    reason = rule.get("reason")
    if reason is not None and reason not in VALIDATION_REASONS:
        errs.append(field_errors.not_supported(path.child("reason"), reason, VALIDATION_REASONS))
    field_path = rule.get("fieldPath") or ""
    if field_path and not field_path.strip():
        detail = "fieldPath must be non-empty if specified"
        errs.append(field_errors.invalid(path.child("fieldPath"), field_path, detail))
    if _NEWLINES.search(field_path):
        detail = "fieldPath must not contain line breaks"
        errs.append(field_errors.invalid(path.child("fieldPath"), field_path, detail))
    return errs


# --- Go regexp ------------------------------------------------------------------------------


def go_regexp_error(pattern: str) -> str | None:
    """The error Go's ``regexp.Compile`` gives for ``pattern``, or None if it compiles."""
    try:
        compile_regexp(pattern)
    except RegexpError as e:
        return str(e)
    return None
