"""internal.apiserver.k8s.io/v1alpha1 ``StorageVersion`` (KEP-2339).

One object per resource, named ``<group>.<resource>``, in which every API
server records the version it writes that resource in and the versions it
can read; a storage migrator trusts ``status.commonEncodingVersion`` only
when all servers agree.  Schema after ``k8s.io/api/apiserverinternal/v1alpha1``;
validation after upstream ``pkg/apis/apiserverinternal/validation``; strategy
after ``pkg/registry/apiserverinternal/storageversion``.  Served only while
the ``StorageVersionAPI`` gate is on.
"""

from __future__ import annotations

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    GoSyntax,
    Path,
    duplicate,
    invalid,
    required,
)
from kapi.apimachinery.gotext import go_sharp_v_strings
from kapi.apimachinery.unstructured import Object
from kapi.features import FeatureGate
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.meta import kind_struct
from kapi.runtime.schema import INT64, STRING, Field, List, Struct, Time
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.version import Version

GROUP = "internal.apiserver.k8s.io"
VERSION = "v1alpha1"
_PREFIX = "io.k8s.api.apiserverinternal.v1alpha1"

ServerStorageVersion = Struct(
    f"{_PREFIX}.ServerStorageVersion",
    (
        Field("apiServerID", STRING, "The identity of the API server making this report."),
        Field(
            "decodableVersions",
            List(STRING, list_type="set"),
            "Versions of the resource this server can read back from storage; "
            "encodingVersion is always one of them.",
        ),
        Field(
            "encodingVersion",
            STRING,
            "The version this server writes the resource in when it persists it (for "
            "example to etcd).",
        ),
        Field(
            "servedVersions",
            List(STRING, list_type="set"),
            "Versions of the resource this server serves; each is also decodable.",
        ),
    ),
    "What one API server reports for a resource: the version it writes to storage and "
    "the versions it can read and serve.",
)

StorageVersionCondition = Struct(
    f"{_PREFIX}.StorageVersionCondition",
    (
        Field("lastTransitionTime", Time(), "When the condition last changed status."),
        Field("message", STRING, "Readable details of the last transition.", required=True),
        Field(
            "observedGeneration",
            INT64,
            "The metadata.generation this condition was computed from, when set.",
        ),
        Field("reason", STRING, "Why the condition last changed, as one word.", required=True),
        Field("status", STRING, "True, False or Unknown.", required=True),
        Field("type", STRING, "The aspect this condition describes.", required=True),
    ),
    "One observation about the state of a StorageVersion.",
)

StorageVersionSpec = Struct(
    f"{_PREFIX}.StorageVersionSpec",
    (),
    "Intentionally empty: a StorageVersion carries everything in its status.",
)

StorageVersionStatus = Struct(
    f"{_PREFIX}.StorageVersionStatus",
    (
        Field(
            "commonEncodingVersion",
            STRING,
            "The encoding version every reporting server shares; empty while they differ or "
            "before any server has reported. Servers update their own entry before they "
            "accept writes, so this stays current.",
        ),
        Field(
            "conditions",
            List(StorageVersionCondition, list_type="map", map_keys=("type",)),
            "The newest observations of this StorageVersion's state.",
        ),
        Field(
            "storageVersions",
            List(ServerStorageVersion, list_type="map", map_keys=("apiServerID",)),
            "One entry per API server, with the versions it reported.",
        ),
    ),
    "The storage versions reported by the API servers for one resource.",
)

StorageVersion = kind_struct(
    f"{_PREFIX}.StorageVersion",
    ((GROUP, VERSION, "StorageVersion"),),
    (
        Field("spec", StorageVersionSpec, "Empty; present to follow the API conventions."),
        Field(
            "status",
            StorageVersionStatus,
            "The versions each API server reads and writes this resource in.",
        ),
    ),
    "The storage versions of one resource across the API servers that share a store.",
)


# --- validation -----------------------------------------------------------------------------

NAME_FORM_MSG = "name must be in the form of <group>.<resource>"


def validate_storage_version_name(name: str, prefix: bool) -> list[str]:
    """``ValidateStorageVersionName``: split at the last dot into group and resource."""
    group, dot, resource = name.rpartition(".")
    if not dot:
        return [NAME_FORM_MSG]
    msgs = ["the group segment " + m for m in validation.is_dns1123_subdomain(group)]
    msgs += ["the resource segment " + m for m in validation.is_dns1035_label(resource)]
    return msgs


_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label, which must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character"
)
_TOO_MANY_SLASHES_MSG = (
    "an apiVersion is "
    + validation.regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123")
    + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyVersion')"
)


def api_version_errors(api_version: str) -> list[str]:
    """Upstream's ``isValidAPIVersion``: ``[group/]version``, group a DNS subdomain,
    version a DNS-1035 label."""
    parts = api_version.split("/")
    if len(parts) > 2:
        return [_TOO_MANY_SLASHES_MSG]
    errs: list[str] = []
    if len(parts) == 2:
        group = parts[0]
        if not group:
            errs.append("group part: " + validation.empty_error())
        else:
            errs += ["group part: " + m for m in validation.is_dns1123_subdomain(group)]
    version = parts[-1]
    if not version:
        errs.append("version part: " + validation.empty_error())
    else:
        errs += ["version part: " + m for m in validation.is_dns1035_label(version)]
    return errs


def _go_print_strings(values: list[str]) -> str:
    """``%s`` of a ``[]string``: ``[a b]``."""
    return "[" + " ".join(values) + "]"


def validate_server_storage_version(entry: Object, path: Path) -> list[FieldError]:
    """``validateServerStorageVersion``."""
    server_id = entry.get("apiServerID") or ""
    errs = [
        invalid(path.child("apiServerID"), server_id, m)
        for m in validation.name_is_dns_subdomain(server_id, False)
    ]
    encoding = entry.get("encodingVersion") or ""
    msgs = api_version_errors(encoding)
    if msgs:
        errs.append(invalid(path.child("encodingVersion"), encoding, ",".join(msgs)))
    decodable: list[str] = entry.get("decodableVersions") or []
    for i, version in enumerate(decodable):
        msgs = api_version_errors(version)
        if msgs:
            errs.append(invalid(path.child("decodableVersions").index(i), version, ",".join(msgs)))
    if encoding not in decodable:
        errs.append(
            invalid(
                path.child("decodableVersions"),
                GoSyntax(go_sharp_v_strings(decodable)),
                f"decodableVersions must include encodingVersion {encoding}",
            )
        )
    for i, version in enumerate(entry.get("servedVersions") or []):
        at = path.child("servedVersions").index(i)
        msgs = api_version_errors(version)
        if msgs:
            errs.append(invalid(at, version, ",".join(msgs)))
        if version not in decodable:
            detail = (
                f"individual served version : {version} must be included in "
                f"decodableVersions : {_go_print_strings(decodable)}"
            )
            errs.append(invalid(at, version, detail))
    return errs


def _validate_common_version(status: Object, path: Path) -> list[FieldError]:
    """``validateCommonVersion``: the field must state what the entries agree on."""
    entries = status.get("storageVersions") or []
    encodings = {entry.get("encodingVersion") or "" for entry in entries}
    actual = next(iter(encodings)) if len(encodings) == 1 else None
    stated = status.get("commonEncodingVersion")
    at = path.child("commonEncodingVersion")
    if actual is None and stated is not None:
        detail = (
            "should be nil if servers do not agree on the same encoding version, or if there "
            "is no server reporting the supported versions yet"
        )
        return [invalid(at, stated, detail)]
    if actual is not None and stated is None:
        # Upstream passes the nil pointer itself, which prints as "null".
        return [invalid(at, "null", f"the common encoding version is {actual}")]
    if actual is not None and stated != actual:
        return [invalid(at, stated, f"the actual common encoding version is {actual}")]
    return []


def _validate_conditions(conditions: list[Object], path: Path) -> list[FieldError]:
    """``validateStorageVersionCondition``; upstream indexes ``status`` itself, not
    ``status.conditions``, so the paths read ``status[i].type``."""
    errs: list[FieldError] = []
    seen: dict[str, int] = {}
    for i, condition in enumerate(conditions):
        at = path.index(i)
        condition_type = condition.get("type") or ""
        if condition_type in seen:
            detail = (
                "the type of the condition is not unique, it also appears in "
                f"conditions[{seen[condition_type]}]"
            )
            errs.append(invalid(at.child("type"), condition_type, detail))
        seen[condition_type] = i
        errs += validation.validate_label_name(condition_type, at.child("type"))
        errs += validation.validate_label_name(condition.get("status") or "", at.child("status"))
        if not condition.get("reason"):
            errs.append(required(at.child("reason"), "reason cannot be empty"))
        if not condition.get("message"):
            errs.append(required(at.child("message"), "message cannot be empty"))
    return errs


def validate_storage_version_status(status: Object, path: Path) -> list[FieldError]:
    """``validateStorageVersionStatus``: entries (server IDs unique), the common
    version, then the conditions."""
    errs: list[FieldError] = []
    ids: set[str] = set()
    for i, entry in enumerate(status.get("storageVersions") or []):
        at = path.child("storageVersions").index(i)
        server_id = entry.get("apiServerID") or ""
        if server_id in ids:
            errs.append(duplicate(at.child("apiServerID"), server_id))
        ids.add(server_id)
        errs += validate_server_storage_version(entry, at)
    errs += _validate_common_version(status, path)
    errs += _validate_conditions(status.get("conditions") or [], path)
    return errs


# --- strategy -------------------------------------------------------------------------------


class StorageVersionStrategy(Strategy):
    """Upstream ``storageVersionStrategy``: the main resource never writes status
    (reset on create, kept on update); ``/status`` writes status alone."""

    has_status = True

    @staticmethod
    def validate_name(name: str, prefix: bool) -> list[str]:
        return validate_storage_version_name(name, prefix)

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {}

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_storage_version_status(obj.get("status") or {}, Path("status"))

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return validate_storage_version_status(new.get("status") or {}, Path("status"))

    def canonicalize(self, obj: Object) -> None:
        # Neither struct is a pointer upstream: both always serialise, empty as {}.
        obj["spec"] = {}
        obj.setdefault("status", {})


# --- resource -------------------------------------------------------------------------------

_MAX_LISTED_SERVERS = 3


def _common_encoding_cell(obj: Object) -> str:
    version = (obj.get("status") or {}).get("commonEncodingVersion")
    return "<unset>" if version is None else str(version)


def _storage_versions_cell(obj: Object) -> str:
    """``server=encodingVersion`` for the first three servers, then how many more."""
    entries = (obj.get("status") or {}).get("storageVersions") or []
    shown = ",".join(
        f"{entry.get('apiServerID') or ''}={entry.get('encodingVersion') or ''}"
        for entry in entries[:_MAX_LISTED_SERVERS]
    )
    if len(entries) > _MAX_LISTED_SERVERS:
        return f"{shown} + {len(entries) - _MAX_LISTED_SERVERS} more..."
    return shown or "<unset>"


def resources(gates: FeatureGate) -> list[Resource]:
    """The internal.apiserver.k8s.io resources, while ``StorageVersionAPI`` is on."""
    if not gates.enabled("StorageVersionAPI"):
        return []
    return [
        Resource(
            group=GROUP,
            kind="StorageVersion",
            plural="storageversions",
            singular="storageversion",
            namespaced=False,
            versions={
                VERSION: ResourceVersion(
                    VERSION, StorageVersion, Lifecycle(introduced=Version(1, 20))
                )
            },
            hub_version=VERSION,
            storage_version=VERSION,
            strategy=StorageVersionStrategy(),
            subresources=("status",),
            columns=(
                NAME,
                Column(
                    "CommonEncodingVersion",
                    "string",
                    StorageVersionStatus.by_name["commonEncodingVersion"].description,
                    _common_encoding_cell,
                ),
                Column(
                    "StorageVersions",
                    "string",
                    StorageVersionStatus.by_name["storageVersions"].description,
                    _storage_versions_cell,
                ),
                AGE,
            ),
        )
    ]
