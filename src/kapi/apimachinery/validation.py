"""Name, label, annotation and ObjectMeta validation with upstream messages.

Mirrors, as of Kubernetes 1.36 (k8s.io/apimachinery v0.36):

* ``pkg/util/validation`` (DNS names, ``RegexError`` / ``MaxLenError``),
* ``pkg/api/validate/content`` (label keys and values; lengths there say *bytes*),
* ``pkg/api/validation`` (``generic.go``, ``objectmeta.go``),
* ``pkg/apis/meta/v1/validation`` (labels, label selectors, managed fields).

Clients and tests compare these messages verbatim, so the texts, the order of
errors and the bad values match upstream. Lengths are counted in UTF-8 bytes,
as Go's ``len`` does. Maps are walked in insertion order (Go's is random).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from kapi.apimachinery.field_errors import (
    FieldError,
    Path,
    forbidden,
    invalid,
    required,
    too_long,
)
from kapi.apimachinery.gotext import OrderedStruct, go_len, go_quote, go_sharp_v_strings

NameValidator = Callable[[str, bool], list[str]]
"""``ValidateNameFunc``: (name, prefix) -> messages; prefix is True for generateName."""

# --- message helpers (pkg/util/validation) -------------------------------------------------


def max_len_error(length: int) -> str:
    """``validation.MaxLenError`` (DNS names count characters)."""
    return f"must be no more than {length} characters"


def _content_max_len_error(length: int) -> str:
    """``content.MaxLenError`` (label keys and values count bytes)."""
    return f"must be no more than {length} bytes"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError``: message, examples and the regex used."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    ex = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {ex}regex used for validation is '{fmt}')"


def empty_error() -> str:
    return "must be non-empty"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


# --- DNS names -------------------------------------------------------------------------------

DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_ERR_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
DNS1123_LABEL_MAX_LENGTH: Final = 63

DNS1123_SUBDOMAIN_FMT: Final = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_ERR_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253

DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL_ERR_MSG: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
DNS1035_LABEL_MAX_LENGTH: Final = 63

# fullmatch: Go's `^...$` never matches before a trailing newline, Python's `$` would.
_DNS1123_LABEL_RE: Final = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE: Final = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE: Final = re.compile(DNS1035_LABEL_FMT)

_DNS1123_LABEL_REGEX_MSG: Final = regex_error(
    DNS1123_LABEL_ERR_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"
)
_DNS1123_SUBDOMAIN_REGEX_MSG: Final = regex_error(
    DNS1123_SUBDOMAIN_ERR_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"
)
_DNS1035_LABEL_REGEX_MSG: Final = regex_error(
    DNS1035_LABEL_ERR_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"
)


def is_dns1123_label(value: str) -> list[str]:
    """RFC 1123 label (namespace names, most short names)."""
    errs: list[str] = []
    if go_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        if _DNS1123_SUBDOMAIN_RE.fullmatch(value):
            # A valid subdomain that is not a label: length was checked, so it is dots.
            errs.append("must not contain dots")
        else:
            errs.append(_DNS1123_LABEL_REGEX_MSG)
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """RFC 1123 subdomain (the default rule for object names)."""
    errs: list[str] = []
    if go_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_DNS1123_SUBDOMAIN_REGEX_MSG)
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """RFC 1035 label (Service names)."""
    errs: list[str] = []
    if go_len(value) > DNS1035_LABEL_MAX_LENGTH:
        errs.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errs.append(_DNS1035_LABEL_REGEX_MSG)
    return errs


def _content_is_dns1123_subdomain(value: str) -> list[str]:
    """``content.IsDNS1123Subdomain``: as above but the length message says bytes."""
    errs: list[str] = []
    if go_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(_content_max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_DNS1123_SUBDOMAIN_REGEX_MSG)
    return errs


# --- label keys ("qualified names") and values (pkg/api/validate/content) ------------------

LABEL_KEY_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_KEY_ERR_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
LABEL_KEY_MAX_LENGTH: Final = 63
LABEL_VALUE_FMT: Final = "(" + LABEL_KEY_FMT + ")?"
LABEL_VALUE_ERR_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
LABEL_VALUE_MAX_LENGTH: Final = 63

_LABEL_KEY_RE: Final = re.compile(LABEL_KEY_FMT)
_LABEL_VALUE_RE: Final = re.compile(LABEL_VALUE_FMT)
_LABEL_KEY_REGEX_MSG: Final = regex_error(
    LABEL_KEY_ERR_MSG, LABEL_KEY_FMT, "MyName", "my.name", "123-abc"
)
_LABEL_KEY_TOO_MANY_SLASHES: Final = (
    "a valid label key "
    + _LABEL_KEY_REGEX_MSG
    + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
)
# Valid keys no longer than 63 characters (so both parts are within their limits).
_QUALIFIED_NAME_FAST_RE: Final = re.compile(f"(?:{DNS1123_SUBDOMAIN_FMT}/)?{LABEL_KEY_FMT}")
_LABEL_VALUE_REGEX_MSG: Final = regex_error(
    LABEL_VALUE_ERR_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"
)


def is_qualified_name(value: str) -> list[str]:
    """A label key: optional DNS-subdomain prefix and '/', then a name (``IsLabelKey``)."""
    if len(value) <= LABEL_KEY_MAX_LENGTH and _QUALIFIED_NAME_FAST_RE.fullmatch(value):
        return []  # the common case; anything else takes the path that explains why
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = value
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            errs.extend("prefix part " + m for m in _content_is_dns1123_subdomain(prefix))
    else:
        return [_LABEL_KEY_TOO_MANY_SLASHES]
    if not name:
        errs.append("name part " + empty_error())
    elif go_len(name) > LABEL_KEY_MAX_LENGTH:
        errs.append("name part " + _content_max_len_error(LABEL_KEY_MAX_LENGTH))
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append("name part " + _LABEL_KEY_REGEX_MSG)
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """A label value: empty, or up to 63 bytes of ``[-A-Za-z0-9_.]`` with alnum ends."""
    errs: list[str] = []
    if go_len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(_content_max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_LABEL_VALUE_REGEX_MSG)
    return errs


# --- name validators (pkg/api/validation/generic.go) ---------------------------------------


def _mask_trailing_dash(name: str) -> str:
    """Upstream ``maskTrailingDash``: for a generateName prefix ending in '-'.

    Upstream drops the last *two* characters and appends 'a'; mirrored as is.
    """
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    if prefix:
        name = _mask_trailing_dash(name)
    return is_dns1123_subdomain(name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    if prefix:
        name = _mask_trailing_dash(name)
    return is_dns1123_label(name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    if prefix:
        name = _mask_trailing_dash(name)
    return is_dns1035_label(name)


def name_is_path_segment(name: str, prefix: bool) -> list[str]:
    """``path.ValidatePathSegmentName``: the generic store's rule, which Events keep.

    A name may be anything that fits in one URL path segment: not ``.`` or
    ``..``, and no ``/`` or ``%``.
    """
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


validate_namespace_name: NameValidator = name_is_dns_label

IS_NEGATIVE_ERROR_MSG: Final = "must be greater than or equal to 0"
FIELD_IMMUTABLE_ERROR_MSG: Final = "field is immutable"


def validate_nonnegative_field(value: int, path: Path) -> list[FieldError]:
    if value < 0:
        return [invalid(path, value, IS_NEGATIVE_ERROR_MSG)]
    return []


# --- labels, annotations (meta/v1/validation, objectmeta.go) ------------------------------


def validate_label_name(name: str, path: Path) -> list[FieldError]:
    return [invalid(path, name, m) for m in is_qualified_name(name)]


def validate_labels(labels: Mapping[str, str] | None, path: Path) -> list[FieldError]:
    """Keys are qualified names, values label values; errors are at the map's path."""
    errs: list[FieldError] = []
    if not labels:
        return errs
    for k, v in labels.items():
        errs.extend(invalid(path, k, m) for m in is_qualified_name(k))
        errs.extend(invalid(path, v, m) for m in is_valid_label_value(v))
    return errs


TOTAL_ANNOTATION_SIZE_LIMIT_B: Final = 256 * (1 << 10)  # 256 KiB


def annotations_size(annotations: Mapping[str, str] | None) -> int:
    """Total bytes of keys and values, as ``ValidateAnnotationsSize`` counts them."""
    if not annotations:
        return 0
    return sum(go_len(k) + go_len(v) for k, v in annotations.items())


def _go_to_lower(s: str) -> str:
    # Go's strings.ToLower uses simple case mapping; U+0130 is the one rune where
    # Python's full mapping differs (it yields 'i' + combining dot).
    return s.lower() if s.isascii() else s.replace("\u0130", "i").lower()


def validate_annotations(annotations: Mapping[str, str] | None, path: Path) -> list[FieldError]:
    """Keys are qualified names (case-insensitively); the total size is capped at 256 KiB."""
    errs: list[FieldError] = []
    if not annotations:
        return errs
    for k in annotations:
        errs.extend(invalid(path, k, m) for m in is_qualified_name(_go_to_lower(k)))
    if annotations_size(annotations) > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(too_long(path, "", TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


# --- owner references -----------------------------------------------------------------------

# GroupVersionKinds (group, version, kind) that may not own objects.
BANNED_OWNERS: Final = frozenset({("", "v1", "Event")})


def _parse_group_version(gv: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``; None where upstream returns an error."""
    if not gv or gv == "/":
        return "", ""
    n = gv.count("/")
    if n == 0:
        return "", gv
    if n == 1:
        g, v = gv.split("/")
        return g, v
    return None


def _owner_struct(ref: Mapping[str, Any]) -> OrderedStruct:
    """An ownerReference rendered as Go's struct (field order, omitempty)."""
    out = OrderedStruct(
        apiVersion=ref.get("apiVersion") or "",
        kind=ref.get("kind") or "",
        name=ref.get("name") or "",
        uid=ref.get("uid") or "",
    )
    for k in ("controller", "blockOwnerDeletion"):
        if ref.get(k) is not None:
            out[k] = ref[k]
    return out


def _validate_owner_reference(ref: Mapping[str, Any], path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    api_version = ref.get("apiVersion") or ""
    kind = ref.get("kind") or ""
    gv = _parse_group_version(api_version)
    group, version = gv if gv is not None else ("", "")
    if not version:
        errs.append(invalid(path.child("apiVersion"), api_version, "version must not be empty"))
    if not kind:
        errs.append(invalid(path.child("kind"), kind, "must not be empty"))
    name = ref.get("name") or ""
    if not name:
        errs.append(invalid(path.child("name"), name, "must not be empty"))
    uid = ref.get("uid") or ""
    if not uid:
        errs.append(invalid(path.child("uid"), uid, "must not be empty"))
    if (group, version, kind) in BANNED_OWNERS:
        gvk = f"{group}/{version}, Kind={kind}"
        errs.append(invalid(path, _owner_struct(ref), f"{gvk} is disallowed from being an owner"))
    return errs


def validate_owner_references(
    refs: Sequence[Mapping[str, Any]] | None, path: Path
) -> list[FieldError]:
    """Each reference needs apiVersion/kind/name/uid; at most one may be the controller."""
    errs: list[FieldError] = []
    if not refs:
        return errs
    first_controller = ""
    for ref in refs:
        errs.extend(_validate_owner_reference(ref, path))
        if ref.get("controller") is True:
            current = f"{ref.get('kind') or ''}/{ref.get('name') or ''}"
            if first_controller:
                errs.append(
                    invalid(
                        path,
                        [_owner_struct(r) for r in refs],
                        "Only one reference can have Controller set to true. "
                        f'Found "true" in references for {first_controller} and {current}',
                    )
                )
            else:
                first_controller = current
    return errs


# --- finalizers -----------------------------------------------------------------------------

FINALIZER_ORPHAN_DEPENDENTS: Final = "orphan"
FINALIZER_DELETE_DEPENDENTS: Final = "foregroundDeletion"
FINALIZER_KUBERNETES: Final = "kubernetes"
STANDARD_FINALIZERS: Final = frozenset(
    {FINALIZER_KUBERNETES, FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS}
)


def validate_finalizer_name(name: str, path: Path) -> list[FieldError]:
    return [invalid(path, name, m) for m in is_qualified_name(name)]


def validate_finalizers(finalizers: Sequence[str] | None, path: Path) -> list[FieldError]:
    """Names are qualified names (errors at the list's path, not indexed, as upstream)."""
    errs: list[FieldError] = []
    if not finalizers:
        return errs
    for f in finalizers:
        errs.extend(validate_finalizer_name(f, path))
    if FINALIZER_ORPHAN_DEPENDENTS in finalizers and FINALIZER_DELETE_DEPENDENTS in finalizers:
        errs.append(
            invalid(
                path,
                list(finalizers),
                f"finalizer {FINALIZER_ORPHAN_DEPENDENTS} and {FINALIZER_DELETE_DEPENDENTS} "
                "cannot be both set",
            )
        )
    return errs


def validate_no_new_finalizers(
    new: Sequence[str] | None, old: Sequence[str] | None, path: Path
) -> list[FieldError]:
    extra = sorted(set(new or ()) - set(old or ()))
    if not extra:
        return []
    return [
        forbidden(
            path,
            "no new finalizers can be added if the object is being deleted, "
            f"found new finalizers {go_sharp_v_strings(extra)}",
        )
    ]


def validate_kube_finalizer_names(finalizers: Sequence[str] | None, path: Path) -> list[FieldError]:
    """Extra rule of built-in (k8s.io/kubernetes core) kinds, indexed per finalizer.

    Unprefixed names must be one of the standard finalizers.
    """
    errs: list[FieldError] = []
    for i, f in enumerate(finalizers or ()):
        if "/" not in f and f not in STANDARD_FINALIZERS:
            errs.append(
                invalid(
                    path.index(i),
                    f,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return errs


def custom_resource_finalizer_warnings(
    new: Sequence[str] | None, old: Sequence[str] | None = None
) -> list[str]:
    """Warnings a custom resource gets for newly added, non-qualified finalizers.

    Mirrors apiextensions-apiserver's ``generateWarningsFromObj`` and its
    ``validateKubeFinalizerName``, which the custom resource strategy's
    ``WarningsOnCreate`` and ``WarningsOnUpdate`` return.
    """
    path = "metadata.finalizers"
    added = sorted(set(new or ()) - set(old or ()))
    warnings: list[str] = []
    for f in added:
        q = go_quote(f)
        warnings.extend(f"{path}: {q}: {m}" for m in is_qualified_name(f))
        if "/" not in f and f not in STANDARD_FINALIZERS:
            if "." in f:
                warnings.append(
                    f"{path}: {q}: prefer a domain-qualified finalizer name including a path "
                    "(/) to avoid accidental conflicts with other finalizer writers"
                )
            else:
                warnings.append(
                    f"{path}: {q}: prefer a domain-qualified finalizer name to avoid "
                    "accidental conflicts with other finalizer writers"
                )
    return warnings


# --- managed fields -------------------------------------------------------------------------

FIELD_MANAGER_MAX_LENGTH: Final = 128
MAX_SUBRESOURCE_NAME_LENGTH: Final = 256


def validate_field_manager(manager: str, path: Path) -> list[FieldError]:
    """At most 128 bytes, printable characters only."""
    errs: list[FieldError] = []
    if go_len(manager) > FIELD_MANAGER_MAX_LENGTH:
        errs.append(too_long(path, "", FIELD_MANAGER_MAX_LENGTH))
    if not manager.isprintable():
        pos = 0
        for ch in manager:
            if not ch.isprintable():
                msg = f"invalid character U+{ord(ch):04X} (at position {pos})"
                errs.append(invalid(path, manager, msg))
            pos += go_len(ch)
    return errs


def validate_managed_fields(
    entries: Sequence[Mapping[str, Any]] | None, path: Path
) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, entry in enumerate(entries or ()):
        p = path.index(i)
        op = entry.get("operation") or ""
        if op not in ("Apply", "Update"):
            errs.append(invalid(p.child("operation"), op, "must be `Apply` or `Update`"))
        fields_type = entry.get("fieldsType") or ""
        if fields_type and fields_type != "FieldsV1":
            errs.append(invalid(p.child("fieldsType"), fields_type, "must be `FieldsV1`"))
        errs.extend(validate_field_manager(entry.get("manager") or "", p.child("manager")))
        if go_len(entry.get("subresource") or "") > MAX_SUBRESOURCE_NAME_LENGTH:
            errs.append(too_long(p.child("subresource"), "", MAX_SUBRESOURCE_NAME_LENGTH))
    return errs


# --- ObjectMeta -----------------------------------------------------------------------------

_METADATA: Final = Path("metadata")


def _common_object_meta(meta: Mapping[str, Any], namespaced: bool, path: Path) -> list[FieldError]:
    """``validateObjectMetaAccessorWithOptsCommon``: everything after the name.

    Runs on every write: each check is skipped when its field is absent, and
    paths are only built for checks that run.
    """
    errs: list[FieldError] = []
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            errs.append(required(path.child("namespace"), ""))
        else:
            messages = validate_namespace_name(namespace, False)
            errs.extend(invalid(path.child("namespace"), namespace, m) for m in messages)
    elif namespace:
        errs.append(forbidden(path.child("namespace"), "not allowed on this type"))
    if generation := meta.get("generation"):
        errs.extend(validate_nonnegative_field(generation, path.child("generation")))
    for name, check in _OPTIONAL_META_CHECKS:
        if value := meta.get(name):
            errs.extend(check(value, path.child(name)))
    return errs


_OPTIONAL_META_CHECKS: Final = (
    ("labels", validate_labels),
    ("annotations", validate_annotations),
    ("ownerReferences", validate_owner_references),
    ("finalizers", validate_finalizers),
    ("managedFields", validate_managed_fields),
)


def validate_object_meta(
    meta: Mapping[str, Any],
    *,
    namespaced: bool,
    name_validator: NameValidator,
    path: Path = _METADATA,
) -> list[FieldError]:
    """``ValidateObjectMetaAccessor``: metadata of a new object, after name generation."""
    errs: list[FieldError] = []
    generate_name = meta.get("generateName") or ""
    if generate_name:
        gn_path = path.child("generateName")
        errs.extend(invalid(gn_path, generate_name, m) for m in name_validator(generate_name, True))
    name = meta.get("name") or ""
    if not name:
        errs.append(required(path.child("name"), "name or generateName is required"))
    else:
        name_path = path.child("name")
        errs.extend(invalid(name_path, name, m) for m in name_validator(name, False))
    errs.extend(_common_object_meta(meta, namespaced, path))
    return errs


def validate_immutable_field(new: Any, old: Any, path: Path) -> list[FieldError]:
    if new != old:
        return [invalid(path, new, FIELD_IMMUTABLE_ERROR_MSG)]
    return []


def validate_object_meta_update(
    new_meta: Mapping[str, Any], old_meta: Mapping[str, Any], path: Path = _METADATA
) -> list[FieldError]:
    """``ValidateObjectMetaAccessorUpdate``: what an update may not change.

    Like upstream, finalizer *names* are not re-validated here (see
    ``validate_finalizers`` / ``validate_kube_finalizer_names``); only adding
    finalizers to an object that is being deleted is rejected.
    """
    errs: list[FieldError] = []
    if old_meta.get("deletionTimestamp") is not None:
        errs.extend(
            validate_no_new_finalizers(
                new_meta.get("finalizers"), old_meta.get("finalizers"), path.child("finalizers")
            )
        )
    rv = new_meta.get("resourceVersion") or ""
    if not rv:
        errs.append(invalid(path.child("resourceVersion"), rv, "must be specified for an update"))
    new_gen = new_meta.get("generation") or 0
    if new_gen < (old_meta.get("generation") or 0):
        errs.append(invalid(path.child("generation"), new_gen, "must not be decremented"))
    for key, default in (
        ("name", ""),
        ("namespace", ""),
        ("uid", ""),
        ("creationTimestamp", None),
        ("deletionTimestamp", None),
        ("deletionGracePeriodSeconds", None),
    ):
        new_v = new_meta.get(key)
        old_v = old_meta.get(key)
        errs.extend(
            validate_immutable_field(
                default if new_v is None else new_v,
                default if old_v is None else old_v,
                path.child(key),
            )
        )
    errs.extend(validate_labels(new_meta.get("labels"), path.child("labels")))
    errs.extend(validate_annotations(new_meta.get("annotations"), path.child("annotations")))
    errs.extend(
        validate_owner_references(new_meta.get("ownerReferences"), path.child("ownerReferences"))
    )
    errs.extend(validate_managed_fields(new_meta.get("managedFields"), path.child("managedFields")))
    return errs


# --- label selectors (meta/v1/validation) ---------------------------------------------------


def validate_label_selector(
    selector: Mapping[str, Any] | None,
    path: Path,
    *,
    allow_invalid_label_value: bool = False,
    allow_unknown_operator: bool = False,
) -> list[FieldError]:
    """``ValidateLabelSelector`` for a ``metav1.LabelSelector`` dict."""
    errs: list[FieldError] = []
    if selector is None:
        return errs
    errs.extend(validate_labels(selector.get("matchLabels"), path.child("matchLabels")))
    exprs_path = path.child("matchExpressions")
    for i, expr in enumerate(selector.get("matchExpressions") or ()):
        errs.extend(
            validate_label_selector_requirement(
                expr,
                exprs_path.index(i),
                allow_invalid_label_value=allow_invalid_label_value,
                allow_unknown_operator=allow_unknown_operator,
            )
        )
    return errs


def validate_label_selector_requirement(
    requirement: Mapping[str, Any],
    path: Path,
    *,
    allow_invalid_label_value: bool = False,
    allow_unknown_operator: bool = False,
) -> list[FieldError]:
    errs: list[FieldError] = []
    op = requirement.get("operator") or ""
    values = requirement.get("values") or []
    if op in ("In", "NotIn"):
        if not values:
            errs.append(
                required(
                    path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                forbidden(
                    path.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    elif not allow_unknown_operator:
        errs.append(invalid(path.child("operator"), op, "not a valid selector operator"))
    errs.extend(validate_label_name(requirement.get("key") or "", path.child("key")))
    if not allow_invalid_label_value:
        values_path = path.child("values")
        for i, v in enumerate(values):
            errs.extend(invalid(values_path.index(i), v, m) for m in is_valid_label_value(v))
    return errs


# --- ports and wildcard hosts (util/validation) --------------------------------------------

WILDCARD_DNS1123_SUBDOMAIN_FMT: Final = r"\*\." + DNS1123_SUBDOMAIN_FMT
_WILDCARD_DNS1123_SUBDOMAIN_RE: Final = re.compile(WILDCARD_DNS1123_SUBDOMAIN_FMT)
_WILDCARD_DNS1123_SUBDOMAIN_MSG: Final = regex_error(
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, "
    "which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
    "alphanumeric character",
    WILDCARD_DNS1123_SUBDOMAIN_FMT,
    "*.example.com",
)
_PORT_NAME_CHARSET_RE: Final = re.compile("[-a-z0-9]+")
_PORT_NAME_LETTER_RE: Final = re.compile("[a-z]")
IANA_SVC_NAME_MAX_LENGTH: Final = 15


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """``IsWildcardDNS1123Subdomain``: ``*.`` followed by a subdomain (Ingress hosts)."""
    errs: list[str] = []
    if go_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _WILDCARD_DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_WILDCARD_DNS1123_SUBDOMAIN_MSG)
    return errs


def is_valid_port_num(port: int) -> list[str]:
    """``IsValidPortNum``: 1 to 65535."""
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


def is_valid_port_name(name: str) -> list[str]:
    """``IsValidPortName``: an IANA_SVC_NAME (RFC 6335)."""
    errs: list[str] = []
    if go_len(name) > IANA_SVC_NAME_MAX_LENGTH:
        errs.append(max_len_error(IANA_SVC_NAME_MAX_LENGTH))
    if not _PORT_NAME_CHARSET_RE.fullmatch(name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _PORT_NAME_LETTER_RE.search(name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs
