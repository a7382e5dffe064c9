"""The two structural passes upstream runs after OpenAPI validation of a custom resource.

``customResourceStrategy.Validate`` appends, after the kube-openapi errors,

1. ``schema/objectmeta.Validate``: every ``x-kubernetes-embedded-resource``
   object needs ``apiVersion`` and ``kind`` and a valid ``metadata``;
2. ``schema/listtype.ValidateListSetsAndMaps``: ``x-kubernetes-list-type: set``
   lists hold no duplicates, ``map`` lists no two items with the same keys.

Both walk only the structural part of the schema (properties,
additionalProperties, items; never allOf/anyOf/oneOf/not) and build paths
with ``field.Path`` semantics: map entries are ``[key]`` here, unlike the
``.key`` names kube-openapi uses. Paths are strings; "" is the nil root.
Upstream walks Go maps in random order; kapi walks documents in key order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from kapi.apimachinery.field_errors import FieldError, Path, duplicate, invalid, required
from kapi.apimachinery.gotext import go_json
from kapi.apimachinery.validation import (
    is_dns1035_label,
    name_is_path_segment,
    validate_object_meta,
)

# --- paths ----------------------------------------------------------------------------------


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def subscript(path: str, key: str | int) -> str:
    return f"{path}[{key}]"


# --- list sets and maps ----------------------------------------------------------------------

_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1


def scalar_key(x: Any) -> Any:
    """A hashable key that keeps Go's distinctions: 1, 1.0 and true are different values."""
    t = type(x)
    if t is int and not _INT64_MIN <= x <= _INT64_MAX:
        return (float, float(x))  # Go decodes such numbers as float64
    return (t, x)


def non_unique_indices(items: list[Any]) -> list[int]:
    """``validateListSet``: the index of each value's second appearance.

    Compound values compare by their JSON encoding, scalars by Go value (type-aware).
    """
    if len(items) <= 1:
        return []
    seen: dict[Any, int] = {}
    out: list[int] = []
    for i, x in enumerate(items):
        key = ("json", go_json(x)) if isinstance(x, dict | list) else scalar_key(x)
        times = seen.get(key, 0)
        if times == 1:
            out.append(i)
        seen[key] = times + 1
    return out


class _Unspecified:
    """An item without the map key (or a null item): unspecified keys collide with each other."""

    __slots__ = ()


UNSPECIFIED: Final = _Unspecified()


def list_set_errors(path: str, items: list[Any]) -> list[FieldError]:
    return [duplicate(subscript(path, i), items[i]) for i in non_unique_indices(items)]


def list_map_errors(path: str, keys: tuple[str, ...], items: list[Any]) -> list[FieldError]:
    """``validateListMap``: items must be objects; no two may share the key fields' values."""
    for i, x in enumerate(items):
        if x is not None and not isinstance(x, dict):
            msg = "must be an object for an array of list-type map"
            return [invalid(subscript(path, i), x, msg)]
    if len(items) <= 1:
        return []
    if len(keys) == 1:
        k = keys[0]
        values = [UNSPECIFIED if x is None else x.get(k, UNSPECIFIED) for x in items]
        return [
            duplicate(subscript(path, i), {} if values[i] is UNSPECIFIED else {k: values[i]})
            for i in non_unique_indices(values)
        ]
    compound = [{} if x is None else {k: x[k] for k in keys if k in x} for x in items]
    return [duplicate(subscript(path, i), compound[i]) for i in non_unique_indices(compound)]


# --- embedded resources ------------------------------------------------------------------------

_JSON_TYPE_NAMES: Final = {
    str: "string",
    bool: "bool",
    int: "number",
    float: "number",
    list: "array",
    dict: "object",
}

# ObjectMeta fields decoding can fail on, with Go's type and a predicate for valid JSON.
_STRING: Final = ("string", lambda v: isinstance(v, str))
_STRING_MAP: Final = ("map[string]string", lambda v: isinstance(v, dict))
_META_FIELDS: Final[dict[str, tuple[str, Callable[[Any], bool]]]] = {
    "name": _STRING,
    "generateName": _STRING,
    "namespace": _STRING,
    "selfLink": _STRING,
    "uid": _STRING,
    "resourceVersion": _STRING,
    "generation": ("int64", lambda v: type(v) is int),
    "labels": _STRING_MAP,
    "annotations": _STRING_MAP,
    "finalizers": ("[]string", lambda v: isinstance(v, list)),
    "ownerReferences": ("[]v1.OwnerReference", lambda v: isinstance(v, list)),
    "managedFields": ("[]v1.ManagedFieldsEntry", lambda v: isinstance(v, list)),
}


def _unmarshal_error(value: Any, go_type: str, field_name: str | None) -> str:
    json_type = _JSON_TYPE_NAMES.get(type(value), "value")
    where = f"Go struct field ObjectMeta.{field_name}" if field_name else "Go value"
    return f"json: cannot unmarshal {json_type} into {where} of type {go_type}"


def object_meta_decode_error(meta: Any) -> str | None:
    """Why ``json.Unmarshal`` into ``metav1.ObjectMeta`` would fail, or None.

    Covers the fields users write; the text follows Go's ``UnmarshalTypeError``.
    """
    if not isinstance(meta, dict):
        return _unmarshal_error(meta, "v1.ObjectMeta", None)
    for name, value in meta.items():
        spec = _META_FIELDS.get(name)
        if spec is None or value is None:
            continue
        go_type, ok = spec
        if not ok(value):
            return _unmarshal_error(value, go_type, name)
        if go_type == "map[string]string" or go_type == "[]string":
            members = value.values() if isinstance(value, dict) else value
            bad = next((m for m in members if m is not None and not isinstance(m, str)), None)
            if bad is not None:
                return _unmarshal_error(bad, "string", name)
    return None


def _parse_group_version_error(gv: str) -> str | None:
    if gv.count("/") > 1:
        return f"unexpected GroupVersion string: {gv}"
    return None


def _api_version_errors(path: str, v: Any) -> list[FieldError]:
    p = child(path, "apiVersion")
    if not isinstance(v, str):
        return [invalid(p, v, "must be a string")]
    if not v:
        return [invalid(p, v, "must not be empty")]
    err = _parse_group_version_error(v)
    return [invalid(p, v, err)] if err else []


def _kind_errors(path: str, v: Any) -> list[FieldError]:
    p = child(path, "kind")
    if not isinstance(v, str):
        return [invalid(p, v, "must be a string")]
    if not v:
        return [invalid(p, v, "must not be empty")]
    msgs = is_dns1035_label(v.lower())
    if msgs:
        return [invalid(p, v, "may have mixed case, but should otherwise match: " + ",".join(msgs))]
    return []


def _metadata_errors(path: str, meta: Any) -> list[FieldError]:
    p = child(path, "metadata")
    if meta is None:
        meta = {}  # JSON null decodes to an empty ObjectMeta
    err = object_meta_decode_error(meta)
    if err is not None:
        return [invalid(p, meta, err)]
    assert isinstance(meta, dict)
    if not meta.get("name"):
        meta = {**meta, "name": "fakename"}  # upstream sets one "to avoid an error"
    return validate_object_meta(
        meta,
        namespaced=bool(meta.get("namespace")),
        name_validator=name_is_path_segment,
        path=Path(p),
    )


def embedded_resource_errors(path: str, obj: Mapping[str, Any]) -> list[FieldError]:
    """``validateEmbeddedResource``: apiVersion and kind required, metadata valid if present."""
    errs: list[FieldError] = []
    if "apiVersion" not in obj:
        errs.append(required(child(path, "apiVersion"), ""))
    if "kind" not in obj:
        errs.append(required(child(path, "kind"), ""))
    if "apiVersion" in obj:
        errs.extend(_api_version_errors(path, obj["apiVersion"]))
    if "kind" in obj:
        errs.extend(_kind_errors(path, obj["kind"]))
    if "metadata" in obj:
        errs.extend(_metadata_errors(path, obj["metadata"]))
    return errs
