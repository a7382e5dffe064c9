"""core/v1 ``Namespace``, ``ConfigMap`` and ``Secret``.

Schemas follow ``k8s.io/api/core/v1``; validation follows
``pkg/apis/core/validation`` (``ValidateNamespace``, ``ValidateConfigMap``,
``ValidateSecret`` and their ``*Update`` forms) and the registry strategies of
``pkg/registry/core/{namespace,configmap,secret}``, so clients see upstream's
defaults and error strings.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    Path,
    forbidden,
    invalid,
    required,
    too_long,
)
from kapi.apimachinery.gojson import unmarshal_map_error
from kapi.apimachinery.unstructured import Object
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.meta import kind_struct
from kapi.runtime.objects import meta
from kapi.runtime.schema import BOOLEAN, BYTES, STRING, Field, List, Map, Scalar, Struct, Time
from kapi.runtime.scheme import Defaulter, Lifecycle, Resource, ResourceVersion
from kapi.version import Version

_CORE = "io.k8s.api.core.v1"
_GA = Lifecycle(introduced=Version(1, 0))

# --- Namespace ------------------------------------------------------------------------------

ACTIVE = "Active"
TERMINATING = "Terminating"
#: Label the server keeps equal to a namespace's name (``v1.LabelMetadataName``).
LABEL_METADATA_NAME = "kubernetes.io/metadata.name"
#: Namespaces that may never be deleted (``metav1.NamespaceDefault``, ``NamespaceSystem``,
#: ``NamespacePublic``).
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
#: Namespaces the server creates at start (``kube-node-lease`` may be deleted).
SYSTEM_NAMESPACES = (*IMMORTAL_NAMESPACES, "kube-node-lease")
_DELETING = "`deletionTimestamp`"
_FINALIZERS_DOC = (
    "Names that block the namespace's removal: it stays in storage until every one of them "
    "has been taken off."
)

NamespaceCondition = Struct(
    f"{_CORE}.NamespaceCondition",
    (
        Field(
            "type", STRING, "Which condition of the namespace this entry reports.", required=True
        ),
        Field(
            "status", STRING, "Whether the condition holds: True, False or Unknown.", required=True
        ),
        Field(
            "lastTransitionTime",
            Time(),
            "When the condition last changed its status.",
        ),
        Field(
            "reason",
            STRING,
            "One CamelCase word that names why the status last changed.",
        ),
        Field("message", STRING, "Details, for people, of why the status last changed."),
    ),
    "One observed condition of a namespace.",
)

NamespaceSpec = Struct(
    f"{_CORE}.NamespaceSpec",
    (Field("finalizers", List(STRING), _FINALIZERS_DOC),),
    "What the user asks of a namespace.",
)

NamespaceStatus = Struct(
    f"{_CORE}.NamespaceStatus",
    (
        Field(
            "phase",
            Scalar("string", enum=(ACTIVE, TERMINATING)),
            "Where the namespace is in its lifecycle.\n\n"
            "Possible enum values:\n"
            ' - `"Active"`: objects may be created in the namespace\n'
            ' - `"Terminating"`: the namespace is being deleted, with its content',
        ),
        Field(
            "conditions",
            List(
                NamespaceCondition,
                list_type="map",
                map_keys=("type",),
                patch_strategy="merge",
                patch_merge_key="type",
            ),
            "The conditions last observed on the namespace, one entry per type.",
        ),
    ),
    "What the server last observed of a namespace.",
)

Namespace = kind_struct(
    f"{_CORE}.Namespace",
    (("", "v1", "Namespace"),),
    (
        Field(
            "spec",
            NamespaceSpec,
            "What the namespace should be.",
        ),
        Field(
            "status",
            NamespaceStatus,
            "What the namespace is, as last observed.",
        ),
    ),
    "A scope in which the names of namespaced objects are unique.",
)


def _struct(obj: Object, key: str) -> Object:
    """``obj[key]``, created empty when absent: Go always serialises struct-valued fields."""
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


def _copy_from(new: Object, old: Object, key: str) -> None:
    """Make ``new[key]`` what it is in ``old`` (absent stays absent)."""
    if key in old:
        new[key] = old[key]
    else:
        new.pop(key, None)


def _set_name_label(obj: Object) -> None:
    """Keep ``kubernetes.io/metadata.name`` equal to the name, as upstream does for namespaces."""
    metadata = meta(obj)
    if metadata.get("name"):
        _struct(metadata, "labels")[LABEL_METADATA_NAME] = metadata["name"]


def default_namespace(obj: Object) -> None:
    """``SetDefaults_Namespace`` and ``SetDefaults_NamespaceStatus`` of core/v1."""
    _set_name_label(obj)
    status = _struct(obj, "status")
    if not status.get("phase"):
        status["phase"] = ACTIVE


def _validate_finalizer_name(name: str, path: Path) -> list[FieldError]:
    """``validateFinalizerName`` of core validation: a qualified name, and unqualified names
    must be standard ones. (``validation.validate_kube_finalizer_names`` indexes the path,
    which ``ValidateNamespace`` does not.)"""
    errs = validation.validate_finalizer_name(name, path)
    if "/" not in name and name not in validation.STANDARD_FINALIZERS:
        detail = "name is neither a standard finalizer name nor is it fully qualified"
        errs.append(invalid(path, name, detail))
    return errs


def _finalizers(obj: Object) -> list[str]:
    return (obj.get("spec") or {}).get("finalizers") or []


class NamespaceStrategy(Strategy):
    """Upstream ``namespaceStrategy``: DNS-label names, the ``kubernetes`` finalizer on
    create, ``spec.finalizers`` only changeable through ``/finalize``, and deletion that
    waits (in phase Terminating) until ``spec.finalizers`` is empty."""

    has_status = True
    subresource_fields = {"status": ("status",), "finalize": ("spec", "finalizers")}

    @staticmethod
    def validate_name(name: str, prefix: bool) -> list[str]:
        return validation.validate_namespace_name(name, prefix)

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"phase": ACTIVE}
        spec = _struct(obj, "spec")
        finalizers = list(spec.get("finalizers") or ())
        if validation.FINALIZER_KUBERNETES not in finalizers:
            finalizers.append(validation.FINALIZER_KUBERNETES)
        spec["finalizers"] = finalizers

    def prepare_for_update(self, new: Object, old: Object) -> None:
        super().prepare_for_update(new, old)
        _copy_from(_struct(new, "spec"), old.get("spec") or {}, "finalizers")

    def validate(self, obj: Object) -> list[FieldError]:
        path = Path("spec", "finalizers")
        return [e for f in _finalizers(obj) for e in _validate_finalizer_name(f, path)]

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        # ValidateNamespaceUpdate checks metadata only; spec.finalizers was reset from old.
        return []

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        if subresource == "finalize":  # ValidateNamespaceFinalizeUpdate indexes the path
            path = Path("spec", "finalizers")
            finalizers = enumerate(_finalizers(new))
            return [e for i, f in finalizers for e in _validate_finalizer_name(f, path.index(i))]
        # ValidateNamespaceStatusUpdate
        phase = (new.get("status") or {}).get("phase") or ""
        path = Path("status", "Phase")  # sic: upstream's path has a capital P
        if new.get("metadata", {}).get("deletionTimestamp") is None:
            if phase != ACTIVE:
                return [invalid(path, phase, f"may only be '{ACTIVE}' if {_DELETING} is empty")]
        elif phase != TERMINATING:
            return [
                invalid(path, phase, f"may only be '{TERMINATING}' if {_DELETING} is not empty")
            ]
        return []

    def has_pending_finalizers(self, obj: Object) -> bool:
        return super().has_pending_finalizers(obj) or bool(_finalizers(obj))

    def prepare_for_graceful_delete(self, obj: Object) -> None:
        _struct(obj, "status")["phase"] = TERMINATING

    def canonicalize(self, obj: Object) -> None:
        # The defaulter cannot label a generateName namespace; its name is known by now.
        _set_name_label(obj)


# --- ConfigMap and Secret: shared rules -----------------------------------------------------

#: ``core.MaxSecretSize``: the cap on a Secret's data and on a ConfigMap's data + binaryData.
MAX_SECRET_SIZE = 1024 * 1024
_IMMUTABLE_DETAIL = "field is immutable when `immutable` is set"

CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_MAP_KEY_RE = re.compile(CONFIG_MAP_KEY_FMT)
_CONFIG_MAP_KEY_MSG = validation.regex_error(
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    CONFIG_MAP_KEY_FMT,
    "key.name",
    "KEY_NAME",
    "key-name",
)


def is_config_map_key(value: str) -> list[str]:
    """``validation.IsConfigMapKey``: the rule for ConfigMap and Secret keys."""
    errs: list[str] = []
    if len(value.encode()) > validation.DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(validation.max_len_error(validation.DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _CONFIG_MAP_KEY_RE.fullmatch(value):
        errs.append(_CONFIG_MAP_KEY_MSG)
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def _key_errors(parent: Path, key: str) -> list[FieldError]:
    """Key rule errors at ``parent[key]``; the path is built only when there is one."""
    messages = is_config_map_key(key)
    return [invalid(parent.key(key), key, msg) for msg in messages] if messages else []


def _decoded(value: str | None) -> bytes:
    """A ``BYTES`` value: base64 in the object (the decoder has already checked it)."""
    return base64.b64decode(value or "")


def _size_errors(total: int, path: Path) -> list[FieldError]:
    return [too_long(path, "", MAX_SECRET_SIZE)] if total > MAX_SECRET_SIZE else []


def _immutable_errors(new: Object, old: Object, fields: Iterable[str]) -> list[FieldError]:
    """Once ``immutable`` is true it cannot be unset and ``fields`` cannot change."""
    if old.get("immutable") is not True:
        return []
    errs = [] if new.get("immutable") is True else [forbidden(Path("immutable"), _IMMUTABLE_DETAIL)]
    errs += [forbidden(Path(f), _IMMUTABLE_DETAIL) for f in fields if new.get(f) != old.get(f)]
    return errs


# --- ConfigMap ------------------------------------------------------------------------------

CONFIG_MAP_DATA_DOC = (
    "Configuration values as UTF-8 text, by key. Keys are made of letters, digits, '-', '_' "
    "and '.'; a key may not also appear in binaryData, and bytes that are not UTF-8 belong "
    "there instead."
)

ConfigMap = kind_struct(
    f"{_CORE}.ConfigMap",
    (("", "v1", "ConfigMap"),),
    (
        Field(
            "binaryData",
            Map(BYTES),
            "Configuration values as arbitrary bytes (base64 in JSON), by key. Keys follow the "
            "rules of data, and a key may not appear in both.",
        ),
        Field("data", Map(STRING), CONFIG_MAP_DATA_DOC),
        Field(
            "immutable",
            BOOLEAN,
            "Once true, data and binaryData can no longer change (metadata still can), and "
            "immutable cannot be set back. Unset by default.",
        ),
    ),
    "Non-secret configuration, as key-value pairs, for workloads to read.",
)


_DATA, _BINARY_DATA, _WHOLE_OBJECT = Path("data"), Path("binaryData"), Path("")


def validate_config_map(cm: Object) -> list[FieldError]:
    """``ValidateConfigMap`` without ObjectMeta (the store validates that)."""
    data: Mapping[str, str | None] = cm.get("data") or {}
    binary: Mapping[str, str | None] = cm.get("binaryData") or {}
    errs: list[FieldError] = []
    for key in data:
        errs += _key_errors(_DATA, key)
        if key in binary:
            errs.append(invalid(_DATA.key(key), key, "duplicate of key present in binaryData"))
    for key in binary:
        errs += _key_errors(_BINARY_DATA, key)
    total = sum(len((v or "").encode()) for v in data.values())
    total += sum(len(_decoded(v)) for v in binary.values())
    # Path "" (rendered "[]"): upstream reports the size against the whole object.
    return errs + _size_errors(total, _WHOLE_OBJECT)


class ConfigMapStrategy(Strategy):
    """Upstream ``configmap`` strategy: key and size rules, and ``immutable``."""

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_config_map(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return _immutable_errors(new, old, ("data", "binaryData")) + validate_config_map(new)


# --- Secret ---------------------------------------------------------------------------------

SECRET_TYPE_OPAQUE = "Opaque"
SECRET_TYPE_SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
SECRET_TYPE_DOCKERCFG = "kubernetes.io/dockercfg"
SECRET_TYPE_DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"
SECRET_TYPE_BASIC_AUTH = "kubernetes.io/basic-auth"
SECRET_TYPE_SSH_AUTH = "kubernetes.io/ssh-auth"
SECRET_TYPE_TLS = "kubernetes.io/tls"
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"
#: The key each docker config secret type requires, holding a JSON object.
_DOCKER_KEYS = {
    SECRET_TYPE_DOCKERCFG: ".dockercfg",
    SECRET_TYPE_DOCKER_CONFIG_JSON: ".dockerconfigjson",
}

SECRET_TYPE_DOC = (
    "What kind of secret this is, which decides the keys it must hold; Opaque when unset."
)
SECRET_DATA_DOC = (
    "Secret values as arbitrary bytes, written in JSON as standard base64, by key. Keys are "
    "made of letters, digits, '-', '_' and '.'."
)

Secret = kind_struct(
    f"{_CORE}.Secret",
    (("", "v1", "Secret"),),
    (
        Field("data", Map(BYTES), SECRET_DATA_DOC),
        Field(
            "immutable",
            BOOLEAN,
            "Once true, data can no longer change (metadata still can), and immutable cannot "
            "be set back. Unset by default.",
        ),
        Field(
            "stringData",
            Map(STRING),
            "Secret values as plain text, for writing only: on each write they are copied into "
            "data (replacing a value under the same key), and reads never return this field.",
        ),
        Field("type", STRING, SECRET_TYPE_DOC),
    ),
    "Sensitive values of a given type (credentials, keys, tokens), whose data together may "
    "hold at most 1 MiB.",
)


def default_secret(obj: Object) -> None:
    """``SetDefaults_Secret``: the type defaults to Opaque."""
    if not obj.get("type"):
        obj["type"] = SECRET_TYPE_OPAQUE


def merge_string_data(secret: Object) -> None:
    """stringData overwrites data keys and is then dropped.

    Upstream does this converting v1 to the internal version; here the hub is v1,
    so the strategy does it before anything validates or stores the object.
    """
    string_data = secret.pop("stringData", None)
    if string_data:
        data = secret.get("data") or {}
        for key, value in string_data.items():
            data[key] = base64.b64encode((value or "").encode()).decode("ascii")
        secret["data"] = data


def _validate_secret_type(secret: Object, data: Mapping[str, str | None]) -> list[FieldError]:
    """The per-type rules of ``ValidateSecret``; Opaque and unknown types have none."""
    path = Path("data")
    secret_type = secret.get("type") or ""
    if secret_type == SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
        annotations = secret.get("metadata", {}).get("annotations") or {}
        if not annotations.get(SERVICE_ACCOUNT_NAME_KEY):
            return [required(Path("metadata", "annotations").key(SERVICE_ACCOUNT_NAME_KEY), "")]
    elif key := _DOCKER_KEYS.get(secret_type):
        if key not in data:
            return [required(path.key(key), "")]
        if msg := unmarshal_map_error(_decoded(data[key])):
            return [invalid(path.key(key), "<secret contents redacted>", msg)]
    elif secret_type == SECRET_TYPE_BASIC_AUTH:
        # Either may be empty, but one of them must be present.
        if "username" not in data and "password" not in data:
            return [required(path.key("username"), ""), required(path.key("password"), "")]
    elif secret_type == SECRET_TYPE_SSH_AUTH:
        if not data.get("ssh-privatekey"):
            return [required(path.key("ssh-privatekey"), "")]
    elif secret_type == SECRET_TYPE_TLS:
        return [required(path.key(k), "") for k in ("tls.crt", "tls.key") if k not in data]
    return []


def validate_secret(secret: Object) -> list[FieldError]:
    """``ValidateSecret`` without ObjectMeta (the store validates that)."""
    data: Mapping[str, str | None] = secret.get("data") or {}
    path = _DATA
    errs = [e for key in data for e in _key_errors(path, key)]
    errs += _size_errors(sum(len(_decoded(v)) for v in data.values()), path)
    return errs + _validate_secret_type(secret, data)


class SecretStrategy(Strategy):
    """Upstream ``secret`` strategy: stringData merged on write, per-type rules, the type
    fixed after create, and ``immutable``."""

    def prepare_for_create(self, obj: Object) -> None:
        merge_string_data(obj)

    def prepare_for_update(self, new: Object, old: Object) -> None:
        merge_string_data(new)
        if not new.get("type"):  # upstream keeps this for callers that skip defaulting
            new["type"] = old.get("type")

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_secret(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        errs = validation.validate_immutable_field(
            new.get("type") or "", old.get("type") or "", Path("type")
        )
        return errs + _immutable_errors(new, old, ("data",)) + validate_secret(new)


# --- resources ------------------------------------------------------------------------------


def _data_count(*fields: str) -> Callable[[Object], int]:
    """The DATA cell: how many keys the given maps hold together."""
    return lambda obj: sum(len(obj.get(f) or {}) for f in fields)


def core_resource(
    kind: str,
    plural: str,
    schema: Struct,
    strategy: Strategy,
    defaulter: Defaulter | None = None,
    *,
    namespaced: bool = True,
    **extra: Any,
) -> Resource:
    """A core/v1 kind: one version, GA since the API began, stored as itself.

    ``extra`` are the :class:`Resource` fields the kind sets beyond these
    (short names, subresources, columns, field labels, its storage key).
    """
    return Resource(
        group="",
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        versions={"v1": ResourceVersion("v1", schema, _GA, defaulter)},
        hub_version="v1",
        storage_version="v1",
        strategy=strategy,
        **extra,
    )


def resources() -> list[Resource]:
    """The core/v1 resources this module defines."""
    return [
        Resource(
            group="",
            kind="Namespace",
            plural="namespaces",
            singular="namespace",
            namespaced=False,
            versions={"v1": ResourceVersion("v1", Namespace, _GA, default_namespace)},
            hub_version="v1",
            storage_version="v1",
            strategy=NamespaceStrategy(),
            short_names=("ns",),
            subresources=("status", "finalize"),
            field_labels=("status.phase",),
            columns=(
                NAME,
                Column(
                    "Status",
                    "string",
                    "The namespace's phase: Active or Terminating.",
                    lambda obj: (obj.get("status") or {}).get("phase", ""),
                ),
                AGE,
            ),
        ),
        Resource(
            group="",
            kind="ConfigMap",
            plural="configmaps",
            singular="configmap",
            namespaced=True,
            versions={"v1": ResourceVersion("v1", ConfigMap, _GA)},
            hub_version="v1",
            storage_version="v1",
            strategy=ConfigMapStrategy(),
            short_names=("cm",),
            columns=(
                NAME,
                Column("Data", "string", CONFIG_MAP_DATA_DOC, _data_count("data", "binaryData")),
                AGE,
            ),
        ),
        Resource(
            group="",
            kind="Secret",
            plural="secrets",
            singular="secret",
            namespaced=True,
            versions={"v1": ResourceVersion("v1", Secret, _GA, default_secret)},
            hub_version="v1",
            storage_version="v1",
            strategy=SecretStrategy(),
            field_labels=("type",),
            columns=(
                NAME,
                Column("Type", "string", SECRET_TYPE_DOC, lambda obj: obj.get("type", "")),
                Column("Data", "string", SECRET_DATA_DOC, _data_count("data")),
                AGE,
            ),
        ),
    ]
