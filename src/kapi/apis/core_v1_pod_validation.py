"""Validation of a pod spec, wherever one appears, with kube-apiserver's messages.

Follows ``ValidatePodSpec``, ``ValidatePodTemplateSpec``, ``ValidatePodCreate``
and ``ValidatePodUpdate`` of ``k8s.io/kubernetes/pkg/apis/core/validation``
for the rules users meet: containers (names, images, ports, env, resources,
volume mounts, probes, lifecycle hooks, pull and termination-message
policies), volumes (names, exactly one source, the common sources' own
fields), the pod's restart and DNS policies, grace period, node selector,
service account and host names, and what a pod update may change.  Field
paths, bad values and texts are upstream's, since clients and tests match on
them; where upstream walks a Go map, kapi walks the JSON object in order.

The spec is a JSON dict as decoded (and, for typed kinds, pruned and
defaulted); values of the wrong JSON type are treated as absent.  Rules not
covered here (security contexts in depth, affinity, topology spread,
tolerations, DNS config, resource claims, the rarer volume sources' fields,
OS-specific rules) accept what they are given.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING
from typing import Any, Final

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    ErrorType,
    FieldError,
    GoSyntax,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kapi.apimachinery.gotext import OrderedStruct
from kapi.apimachinery.quantity import Quantity, QuantityError, unmarshal_json
from kapi.apimachinery.unstructured import Object
from kapi.apis.core_v1_resource_names import (
    HUGEPAGES_PREFIX,
    is_huge_page_resource_name,
    is_integer_resource_name,
    is_overcommit_allowed,
    validate_container_resource_name,
)

# --- options ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodValidationOptions:
    """The few switches of upstream's ``PodValidationOptions`` kapi honours."""

    #: ``RelaxedEnvironmentVariableValidation`` (GA): any printable ASCII but '='.
    allow_relaxed_environment_variable_validation: bool = True
    #: The spec is a Pod's (not a template's): under ``hostNetwork`` a host port must be set.
    resource_is_pod: bool = False


DEFAULT_OPTIONS: Final = PodValidationOptions()

# --- messages ----------------------------------------------------------------------------------

FILE_MODE_ERROR_MSG: Final = "must be a number between 0 and 0777 (octal), both inclusive"
IS_NOT_INTEGER_ERROR_MSG: Final = "must be an integer"
MORE_THAN_ONE_VOLUME_TYPE: Final = "may not specify more than 1 volume type"
MORE_THAN_ONE_HANDLER_TYPE: Final = "may not specify more than 1 handler type"
INIT_CONTAINER_FORBIDDEN: Final = "may not be set for init containers without restartPolicy=Always"
UPDATABLE_POD_SPEC_FIELDS: Final = (
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
)
POD_UPDATE_FORBIDDEN_PREFIX: Final = "pod updates may not change fields other than " + ",".join(
    UPDATABLE_POD_SPEC_FIELDS
)

SUPPORTED_PORT_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")  # sets.List: sorted
SUPPORTED_PULL_POLICIES: Final = ("Always", "IfNotPresent", "Never")
RESTART_POLICIES: Final = ("Always", "OnFailure", "Never")
DNS_POLICIES: Final = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
TERMINATION_MESSAGE_POLICIES: Final = ("File", "FallbackToLogsOnError")
SUPPORTED_HTTP_SCHEMES: Final = ("HTTP", "HTTPS")
SUPPORTED_HOST_PATH_TYPES: Final = (
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
)
SUPPORTED_MOUNT_PROPAGATIONS: Final = ("Bidirectional", "HostToContainer", "None")
ENV_FIELD_PATHS: Final = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)
VOLUME_FIELD_PATHS: Final = (
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
)
CONTAINER_RESOURCE_FIELD_PATHS: Final = (
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
)

#: ``validateVolumeSource`` checks the sources in this order, and names the path of a
#: second source as written here (upstream's own spellings, ``downwarAPI`` included).
_VOLUME_SOURCE_ORDER: Final = (
    ("emptyDir", "emptyDir"),
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("quobyte", "quobyte"),
    ("downwardAPI", "downwarAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
)

# --- JSON helpers ------------------------------------------------------------------------------


def _obj(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def _objs(value: Any) -> list[Object]:
    if not isinstance(value, list):
        return []
    return [item if isinstance(item, dict) else {} for item in value]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    """A Go integer field: absent (or not a number) is 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value)


def _int_or_none(value: Any) -> int | None:
    """A Go ``*int`` field."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


# --- resource names and quantities (pkg/apis/core/helper) --------------------------------------

_QOS_COMPUTE_RESOURCES: Final = frozenset({"cpu", "memory"})


def _quantity(value: Any, path: Path, errs: list[FieldError]) -> Quantity | None:
    """A quantity as upstream decodes it; text that is none is reported (a decoding error
    upstream, met here only in the free-form templates kapi does not decode)."""
    try:
        return unmarshal_json(value)
    except QuantityError as exc:
        errs.append(invalid(path, value, str(exc)))
        return None


def _validate_resource_quantity(name: str, q: Quantity, path: Path, errs: list[FieldError]) -> None:
    """``ValidateResourceQuantityValue``: not negative; whole for integer resources."""
    if q.amount < 0:
        errs.append(invalid(path, str(q), validation.IS_NEGATIVE_ERROR_MSG))
    is_integer = is_integer_resource_name(name)
    milli = (q.amount * 1000).to_integral_value(rounding=ROUND_CEILING)  # MilliValue rounds up
    if is_integer and milli % 1000 != 0:
        # A Quantity prints with its String(): unquoted.
        errs.append(invalid(path, GoSyntax(str(q)), IS_NOT_INTEGER_ERROR_MSG))


def _huge_page_value_error(name: str, q: Quantity) -> str | None:
    """``IsHugePageResourceValueDivisible``: a positive multiple of the page size."""
    try:
        page = unmarshal_json(name[len(HUGEPAGES_PREFIX) :])
    except QuantityError:
        page = None
    if page is not None and page.amount > 0 and q.amount >= 0:
        page_size = page.amount.to_integral_value(rounding=ROUND_CEILING)
        value = q.amount.to_integral_value(rounding=ROUND_CEILING)
        if page_size and value % page_size == 0:
            return None
    return f"{q} is not positive integer multiple of {name}"


def validate_resource_requirements(
    requirements: Any, path: Path, *, pod_claim_names: Iterable[str] = ()
) -> list[FieldError]:
    """``ValidateContainerResourceRequirements`` (``validateResourceRequirements``)."""
    req = _obj(requirements)
    errs: list[FieldError] = []
    lim_path = path.child("limits")
    req_path = path.child("requests")
    limits: dict[str, Quantity] = {}
    lim_has_huge_pages = lim_has_compute = req_has_huge_pages = req_has_compute = False
    for name, value in _obj(req.get("limits")).items():
        key_path = lim_path.key(name)
        errs += validate_container_resource_name(name, key_path)
        q = _quantity(value, key_path, errs)
        if q is None:
            continue
        limits[name] = q
        _validate_resource_quantity(name, q, key_path, errs)
        if is_huge_page_resource_name(name):
            lim_has_huge_pages = True
        if name in _QOS_COMPUTE_RESOURCES:
            lim_has_compute = True
    for name, value in _obj(req.get("requests")).items():
        key_path = req_path.key(name)
        errs += validate_container_resource_name(name, key_path)
        q = _quantity(value, key_path, errs)
        if q is None:
            continue
        _validate_resource_quantity(name, q, key_path, errs)
        limit = limits.get(name)
        if limit is not None:
            if q.amount != limit.amount and not is_overcommit_allowed(name):
                detail = f"must be equal to {name} limit of {limit}"
                errs.append(invalid(req_path, str(q), detail))
            elif q.amount > limit.amount:
                detail = f"must be less than or equal to {name} limit of {limit}"
                errs.append(invalid(req_path, str(q), detail))
        elif name not in _obj(req.get("limits")) and not is_overcommit_allowed(name):
            errs.append(required(lim_path, "Limit must be set for non overcommitable resources"))
        if is_huge_page_resource_name(name):
            req_has_huge_pages = True
            message = _huge_page_value_error(name, q)
            if message is not None:
                errs.append(invalid(key_path, str(q), message))
        if name in _QOS_COMPUTE_RESOURCES:
            req_has_compute = True
    if not lim_has_compute and not req_has_compute and (req_has_huge_pages or lim_has_huge_pages):
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    claim_names = set(pod_claim_names)
    seen: set[str] = set()
    claims_path = path.child("claims")
    for i, claim in enumerate(_objs(req.get("claims"))):
        claim_name = _str(claim.get("name"))
        name_path = claims_path.index(i).child("name")
        if not claim_name:
            errs.append(required(name_path, ""))
        elif claim_name in seen:
            errs.append(duplicate(name_path, claim_name))
        elif claim_name not in claim_names:
            errs.append(
                FieldError(
                    ErrorType.NOT_FOUND,
                    str(name_path),
                    claim_name,
                    "must be one of the names in pod.spec.resourceClaims",
                )
            )
        seen.add(claim_name)
    return errs


# --- paths -------------------------------------------------------------------------------------


def _path_no_backsteps(target: str, path: Path) -> list[FieldError]:
    if ".." in target.replace("\\", "/").split("/"):
        return [invalid(path, target, "must not contain '..'")]
    return []


def _local_descending_path(target: str, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if target.startswith("/"):
        errs.append(invalid(path, target, "must be a relative path"))
    return errs + _path_no_backsteps(target, path)


def _local_non_reserved_path(target: str, path: Path) -> list[FieldError]:
    errs = _local_descending_path(target, path)
    if target.startswith("..") and not target.startswith("../"):
        errs.append(invalid(path, target, "must not start with '..'"))
    return errs


def _file_mode(value: Any, path: Path) -> list[FieldError]:
    mode = _int_or_none(value)
    if mode is not None and (mode > 0o777 or mode < 0):
        return [invalid(path, mode, FILE_MODE_ERROR_MSG)]
    return []


def _key_to_path(item: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if not _str(item.get("key")):
        errs.append(required(path.child("key"), ""))
    target = _str(item.get("path"))
    if not target:
        errs.append(required(path.child("path"), ""))
    errs += _local_non_reserved_path(target, path.child("path"))
    errs += _file_mode(item.get("mode"), path.child("mode"))
    return errs


# --- volumes -----------------------------------------------------------------------------------


#: The labels ``ConvertDownwardAPIFieldLabel`` accepts for ``v1`` (``spec.host`` is an old
#: spelling of ``spec.nodeName``).
_DOWNWARD_API_LABELS: Final = frozenset(
    {
        "metadata.annotations",
        "metadata.labels",
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.serviceAccountName",
        "spec.schedulerName",
        "status.phase",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    }
)


def _split_subscripted(field_path: str) -> tuple[str, str] | None:
    """``fieldpath.SplitMaybeSubscriptedPath``: ``path['key']`` as (path, key)."""
    if not field_path.endswith("']"):
        return None
    head, sep, subscript = field_path[:-2].partition("['")
    if not sep or not head:
        return None
    return head, subscript


def _object_field_selector(
    ref: Object, expressions: tuple[str, ...], path: Path
) -> list[FieldError]:
    """``validateObjectFieldSelector``, converting the path as ``ConvertDownwardAPIFieldLabel``."""
    api_version = _str(ref.get("apiVersion"))
    if not api_version:
        return [required(path.child("apiVersion"), "")]
    field_path = _str(ref.get("fieldPath"))
    if not field_path:
        return [required(path.child("fieldPath"), "")]
    subscripted = _split_subscripted(field_path)
    if api_version != "v1":
        problem = f"unsupported pod version: {api_version}"
    elif subscripted is not None and subscripted[0] not in (
        "metadata.annotations",
        "metadata.labels",
    ):
        problem = f"field label does not support subscript: {field_path}"
    elif subscripted is None and field_path not in _DOWNWARD_API_LABELS | {"spec.host"}:
        problem = f"field label not supported: {field_path}"
    else:
        problem = ""
    if problem:
        detail = f"error converting fieldPath: {problem}"
        return [invalid(path.child("fieldPath"), field_path, detail)]
    if subscripted is not None:
        head, key = subscripted
        name = key.lower() if head == "metadata.annotations" else key
        return [invalid(path, name, msg) for msg in validation.is_qualified_name(name)]
    converted = "spec.nodeName" if field_path == "spec.host" else field_path
    if converted not in expressions:
        return [not_supported(path.child("fieldPath"), converted, sorted(expressions))]
    return []


def _resource_field_selector(ref: Object, path: Path, *, volume: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    resource = _str(ref.get("resource"))
    if volume and not _str(ref.get("containerName")):
        errs.append(required(path.child("containerName"), ""))
    elif not resource:
        errs.append(required(path.child("resource"), ""))
    elif resource not in CONTAINER_RESOURCE_FIELD_PATHS and not resource.startswith(
        ("limits.hugepages-", "requests.hugepages-")
    ):
        errs.append(not_supported(path.child("resource"), resource, CONTAINER_RESOURCE_FIELD_PATHS))
    return errs


def _downward_api_file(item: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    target = _str(item.get("path"))
    if not target:
        errs.append(required(path.child("path"), ""))
    errs += _local_non_reserved_path(target, path.child("path"))
    field_ref = item.get("fieldRef")
    resource_ref = item.get("resourceFieldRef")
    if field_ref is not None:
        errs += _object_field_selector(_obj(field_ref), VOLUME_FIELD_PATHS, path.child("fieldRef"))
        if resource_ref is not None:
            detail = "fieldRef and resourceFieldRef can not be specified simultaneously"
            errs.append(invalid(path, "resource", detail))
    elif resource_ref is not None:
        errs += _resource_field_selector(
            _obj(resource_ref), path.child("resourceFieldRef"), volume=True
        )
    else:
        errs.append(required(path, "one of fieldRef and resourceFieldRef is required"))
    errs += _file_mode(item.get("mode"), path.child("mode"))
    return errs


def _validate_one_source(key: str, source: Object, path: Path) -> list[FieldError]:
    """The fields of the common volume sources (the rarer ones are accepted as sent)."""
    errs: list[FieldError] = []
    if key == "emptyDir":
        size = source.get("sizeLimit")
        if size is not None:
            q = _quantity(size, path.child("sizeLimit"), errs)
            if q is not None and q.amount < 0:
                detail = "SizeLimit field must be a valid resource quantity"
                errs.append(forbidden(path.child("sizeLimit"), detail))
    elif key == "hostPath":
        host_path = _str(source.get("path"))
        if not host_path:
            return [required(path.child("path"), "")]
        errs += _path_no_backsteps(host_path, path.child("path"))
        type_ = source.get("type")
        if type_ is not None and type_ not in SUPPORTED_HOST_PATH_TYPES:
            errs.append(not_supported(path.child("type"), type_, SUPPORTED_HOST_PATH_TYPES))
    elif key == "secret":
        if not _str(source.get("secretName")):
            errs.append(required(path.child("secretName"), ""))
        errs += _file_mode(source.get("defaultMode"), path.child("defaultMode"))
        for i, item in enumerate(_objs(source.get("items"))):
            errs += _key_to_path(item, path.child("items").index(i))
    elif key == "configMap":
        if not _str(source.get("name")):
            errs.append(required(path.child("name"), ""))
        errs += _file_mode(source.get("defaultMode"), path.child("defaultMode"))
        for i, item in enumerate(_objs(source.get("items"))):
            errs += _key_to_path(item, path.child("items").index(i))
    elif key == "persistentVolumeClaim":
        if not _str(source.get("claimName")):
            errs.append(required(path.child("claimName"), ""))
    elif key == "nfs":
        nfs_path = _str(source.get("path"))
        if not _str(source.get("server")):
            errs.append(required(path.child("server"), ""))
        if not nfs_path:
            errs.append(required(path.child("path"), ""))
        if not nfs_path.startswith("/"):
            errs.append(invalid(path.child("path"), nfs_path, "must be an absolute path"))
    elif key == "gitRepo":
        if not _str(source.get("repository")):
            errs.append(required(path.child("repository"), ""))
        errs += _local_descending_path(_str(source.get("directory")), path.child("directory"))
    elif key == "downwardAPI":
        errs += _file_mode(source.get("defaultMode"), path.child("defaultMode"))
        for item in _objs(source.get("items")):
            errs += _downward_api_file(item, path)
    elif key == "projected":
        errs += _file_mode(source.get("defaultMode"), path.child("defaultMode"))
        errs += _projection_sources(source, path)
    return errs


def _projection_sources(projection: Object, path: Path) -> list[FieldError]:
    """``validateProjectionSources`` for secrets, config maps, the downward API and tokens."""
    errs: list[FieldError] = []
    all_paths: set[str] = set()
    for i, source in enumerate(_objs(projection.get("sources"))):
        count = 0
        src_path = path.child("sources").index(i)
        for kind in ("secret", "configMap"):
            if source.get(kind) is None:
                continue
            count += 1
            inner = _obj(source.get(kind))
            kind_path = src_path.child(kind)
            if not _str(inner.get("name")):
                errs.append(required(kind_path.child("name"), ""))
            for j, item in enumerate(_objs(inner.get("items"))):
                errs += _key_to_path(item, kind_path.child("items").index(j))
                target = _str(item.get("path"))
                if target:
                    if target in all_paths:
                        name = _str(inner.get("name"))
                        errs.append(invalid(path, name, "conflicting duplicate paths"))
                    all_paths.add(target)
        if source.get("downwardAPI") is not None:
            count += 1
            kind_path = src_path.child("downwardAPI")
            for item in _objs(_obj(source.get("downwardAPI")).get("items")):
                errs += _downward_api_file(item, kind_path)
                target = _str(item.get("path"))
                if target:
                    if target in all_paths:
                        errs.append(invalid(path, target, "conflicting duplicate paths"))
                    all_paths.add(target)
        if source.get("serviceAccountToken") is not None:
            count += 1
            token = _obj(source.get("serviceAccountToken"))
            kind_path = src_path.child("serviceAccountToken")
            seconds = _int(token.get("expirationSeconds"))
            if seconds < 10 * 60:
                detail = "may not specify a duration less than 10 minutes"
                errs.append(invalid(kind_path.child("expirationSeconds"), seconds, detail))
            if seconds > 1 << 32:
                detail = "may not specify a duration larger than 2^32 seconds"
                errs.append(invalid(kind_path.child("expirationSeconds"), seconds, detail))
            target = _str(token.get("path"))
            if not target:
                errs.append(required(path.child("path"), ""))
            else:
                errs += _local_non_reserved_path(target, path.child("path"))
        if source.get("clusterTrustBundle") is not None:
            count += 1
        if source.get("podCertificate") is not None:
            count += 1
        if count > 1:
            errs.append(forbidden(src_path, "may not specify more than 1 volume type per source"))
    return errs


def _volume_source(volume: Object, path: Path) -> list[FieldError]:
    """``validateVolumeSource``: exactly one source, and that source's own rules."""
    errs: list[FieldError] = []
    count = 0
    for key, forbidden_name in _VOLUME_SOURCE_ORDER:
        if volume.get(key) is None:
            continue
        if count > 0:
            errs.append(forbidden(path.child(forbidden_name), MORE_THAN_ONE_VOLUME_TYPE))
            continue
        count += 1
        errs += _validate_one_source(key, _obj(volume.get(key)), path.child(key))
    if count == 0:
        errs.append(required(path, "must specify a volume type"))
    return errs


def validate_volumes(volumes: Any, path: Path) -> tuple[dict[str, Object], list[FieldError]]:
    """``ValidateVolumes``: the valid volumes by name (what mounts may refer to), and errors."""
    errs: list[FieldError] = []
    valid: dict[str, Object] = {}
    names: set[str] = set()
    for i, volume in enumerate(_objs(volumes)):
        idx_path = path.index(i)
        name_path = idx_path.child("name")
        name = _str(volume.get("name"))
        el = _volume_source(volume, idx_path)
        if not name:
            el.append(required(name_path, ""))
        else:
            el += [invalid(name_path, name, m) for m in validation.is_dns1123_label(name)]
        if name in names:
            el.append(duplicate(name_path, name))
        if el:
            errs += el
        else:
            names.add(name)
            valid[name] = volume
    return valid, errs


def _validate_volume_mounts(
    container: Object, volumes: Mapping[str, Object], path: Path
) -> list[FieldError]:
    errs: list[FieldError] = []
    mount_points: set[str] = set()
    devices = {
        _str(d.get("name")): _str(d.get("devicePath"))
        for d in _objs(container.get("volumeDevices"))
    }
    privileged = _obj(container.get("securityContext")).get("privileged") is True
    for i, mount in enumerate(_objs(container.get("volumeMounts"))):
        idx_path = path.index(i)
        name = _str(mount.get("name"))
        mount_path = _str(mount.get("mountPath"))
        sub_path = _str(mount.get("subPath"))
        sub_path_expr = _str(mount.get("subPathExpr"))
        if not name:
            errs.append(required(idx_path.child("name"), ""))
        if name not in volumes:
            errs.append(FieldError(ErrorType.NOT_FOUND, str(idx_path.child("name")), name))
        if not mount_path:
            errs.append(required(idx_path.child("mountPath"), ""))
        if mount_path in mount_points:
            errs.append(invalid(idx_path.child("mountPath"), mount_path, "must be unique"))
        mount_points.add(mount_path)
        if name in devices:
            detail = "must not already exist in volumeDevices"
            errs.append(invalid(idx_path.child("name"), name, detail))
        if mount_path in devices.values():
            detail = "must not already exist as a path in volumeDevices"
            errs.append(invalid(idx_path.child("mountPath"), mount_path, detail))
        if name in volumes and volumes[name].get("image") is not None:
            detail = "not allowed in image volume sources"
            if sub_path:
                errs.append(invalid(idx_path.child("subPath"), sub_path, detail))
            if sub_path_expr:
                errs.append(invalid(idx_path.child("subPathExpr"), sub_path_expr, detail))
        # Upstream names these two paths under the list, not the item.
        if sub_path:
            errs += _local_descending_path(sub_path, path.child("subPath"))
        if sub_path_expr:
            if sub_path:
                detail = "subPathExpr and subPath are mutually exclusive"
                errs.append(invalid(idx_path.child("subPathExpr"), sub_path_expr, detail))
            errs += _local_descending_path(sub_path_expr, path.child("subPathExpr"))
        propagation = mount.get("mountPropagation")
        if propagation is not None:
            prop_path = path.child("mountPropagation")
            if propagation not in SUPPORTED_MOUNT_PROPAGATIONS:
                errs.append(not_supported(prop_path, propagation, SUPPORTED_MOUNT_PROPAGATIONS))
            if propagation == "Bidirectional" and not privileged:
                detail = (
                    "Bidirectional mount propagation is available only to privileged containers"
                )
                errs.append(forbidden(prop_path, detail))
        rro = mount.get("recursiveReadOnly")
        if rro is not None:
            rro_path = path.child("recursiveReadOnly")
            if rro in ("Enabled", "IfPossible"):
                if mount.get("readOnly") is not True:
                    errs.append(forbidden(rro_path, "may only be specified when readOnly is true"))
                if propagation is not None and propagation != "None":
                    detail = "may only be specified when mountPropagation is None or not specified"
                    errs.append(forbidden(rro_path, detail))
            elif rro != "Disabled":
                errs.append(not_supported(rro_path, rro, ("Disabled", "Enabled", "IfPossible")))
    return errs


# --- containers --------------------------------------------------------------------------------

_ENV_VAR_NAME_FMT: Final = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_VAR_NAME_RE: Final = re.compile(_ENV_VAR_NAME_FMT)
_ENV_VAR_NAME_MSG: Final = validation.regex_error(
    "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', "
    "or '.', and must not start with a digit",
    _ENV_VAR_NAME_FMT,
    "my.env-name",
    "MY_ENV.NAME",
    "MyEnvName1",
)
RELAXED_ENV_VAR_NAME_MSG: Final = (
    "a valid environment variable name must consist only of printable ASCII characters other "
    "than '='"
)


def is_env_var_name(value: str) -> list[str]:
    """``IsEnvVarName`` (the strict rule)."""
    errs: list[str] = []
    if not _ENV_VAR_NAME_RE.fullmatch(value):
        errs.append(_ENV_VAR_NAME_MSG)
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


#: A character a relaxed environment variable name may not hold: not printable ASCII, or '='.
_NOT_RELAXED_ENV_VAR_CHAR_RE: Final = re.compile("[^ -~]|=")


def is_relaxed_env_var_name(value: str) -> list[str]:
    """``IsRelaxedEnvVarName``: printable ASCII other than '='."""
    errs: list[str] = []
    if not value:
        errs.append("environment variable name " + validation.empty_error())
    if _NOT_RELAXED_ENV_VAR_CHAR_RE.search(value):
        errs.append(RELAXED_ENV_VAR_NAME_MSG)
    return errs


def _env_name_errors(name: str, opts: PodValidationOptions) -> list[str]:
    if opts.allow_relaxed_environment_variable_validation:
        return is_relaxed_env_var_name(name)
    return is_env_var_name(name)


def _key_selector(ref: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    name = _str(ref.get("name"))
    errs += [
        invalid(path.child("name"), name, m) for m in validation.name_is_dns_subdomain(name, False)
    ]
    key = _str(ref.get("key"))
    if not key:
        errs.append(required(path.child("key"), ""))
    else:
        errs += [invalid(path.child("key"), key, m) for m in _config_map_key_errors(key)]
    return errs


_CONFIG_MAP_KEY_FMT: Final = "[-._a-zA-Z0-9]+"
_CONFIG_MAP_KEY_RE: Final = re.compile(_CONFIG_MAP_KEY_FMT)


def _config_map_key_errors(key: str) -> list[str]:
    errs: list[str] = []
    if len(key) > validation.DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(validation.max_len_error(validation.DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _CONFIG_MAP_KEY_RE.fullmatch(key):
        errs.append(
            validation.regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                _CONFIG_MAP_KEY_FMT,
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    if key == ".":
        errs.append("must not be '.'")
    elif key == "..":
        errs.append("must not be '..'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def _validate_env(env: Any, path: Path, opts: PodValidationOptions) -> list[FieldError]:
    """``ValidateEnv`` and ``validateEnvVarValueFrom``."""
    errs: list[FieldError] = []
    for i, var in enumerate(_objs(env)):
        idx_path = path.index(i)
        name = _str(var.get("name"))
        if not name:
            errs.append(required(idx_path.child("name"), ""))
        else:
            errs += [invalid(idx_path.child("name"), name, m) for m in _env_name_errors(name, opts)]
        value_from = var.get("valueFrom")
        if value_from is None:
            continue
        vf = _obj(value_from)
        vf_path = idx_path.child("valueFrom")
        count = 0
        if vf.get("fieldRef") is not None:
            count += 1
            errs += _object_field_selector(
                _obj(vf.get("fieldRef")), ENV_FIELD_PATHS, vf_path.child("fieldRef")
            )
        if vf.get("resourceFieldRef") is not None:
            count += 1
            errs += _resource_field_selector(
                _obj(vf.get("resourceFieldRef")), vf_path.child("resourceFieldRef"), volume=False
            )
        if vf.get("configMapKeyRef") is not None:
            count += 1
            errs += _key_selector(_obj(vf.get("configMapKeyRef")), vf_path.child("configMapKeyRef"))
        if vf.get("secretKeyRef") is not None:
            count += 1
            errs += _key_selector(_obj(vf.get("secretKeyRef")), vf_path.child("secretKeyRef"))
        if count == 0:
            detail = (
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
                "`secretKeyRef`"
            )
            errs.append(invalid(vf_path, "", detail))
        elif _str(var.get("value")):
            errs.append(invalid(vf_path, "", "may not be specified when `value` is not empty"))
        elif count > 1:
            detail = "may not have more than one field specified at a time"
            errs.append(invalid(vf_path, "", detail))
    return errs


def _validate_env_from(env_from: Any, path: Path, opts: PodValidationOptions) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, source in enumerate(_objs(env_from)):
        idx_path = path.index(i)
        prefix = _str(source.get("prefix"))
        if prefix:
            errs += [
                invalid(idx_path.child("prefix"), prefix, m) for m in _env_name_errors(prefix, opts)
            ]
        count = 0
        for key in ("configMapRef", "secretRef"):
            if source.get(key) is None:
                continue
            count += 1
            ref_path = idx_path.child(key)
            name = _str(_obj(source.get(key)).get("name"))
            if not name:
                errs.append(required(ref_path.child("name"), ""))
            else:
                errs += [
                    invalid(ref_path.child("name"), name, m)
                    for m in validation.name_is_dns_subdomain(name, True)
                ]
        if count == 0:
            errs.append(invalid(path, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif count > 1:
            detail = "may not have more than one field specified at a time"
            errs.append(invalid(path, "", detail))
    return errs


def _validate_ports(ports: Any, path: Path) -> list[FieldError]:
    """``validateContainerPorts``."""
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(_objs(ports)):
        idx_path = path.index(i)
        name = _str(port.get("name"))
        if name:
            msgs = validation.is_valid_port_name(name)
            if msgs:
                errs += [invalid(idx_path.child("name"), name, m) for m in msgs]
            elif name in names:
                errs.append(duplicate(idx_path.child("name"), name))
            else:
                names.add(name)
        container_port = _int(port.get("containerPort"))
        if container_port == 0:
            errs.append(required(idx_path.child("containerPort"), ""))
        else:
            errs += [
                invalid(idx_path.child("containerPort"), container_port, m)
                for m in validation.is_valid_port_num(container_port)
            ]
        host_port = _int(port.get("hostPort"))
        if host_port != 0:
            errs += [
                invalid(idx_path.child("hostPort"), host_port, m)
                for m in validation.is_valid_port_num(host_port)
            ]
        protocol = _str(port.get("protocol"))
        if not protocol:
            errs.append(required(idx_path.child("protocol"), ""))
        elif protocol not in SUPPORTED_PORT_PROTOCOLS:
            errs.append(
                not_supported(idx_path.child("protocol"), protocol, SUPPORTED_PORT_PROTOCOLS)
            )
    return errs


def _host_port_conflicts(
    containers: list[Object], path: Path, seen: set[str] | None = None
) -> list[FieldError]:
    """``AccumulateUniqueHostPorts``: one protocol/IP/port per pod."""
    errs: list[FieldError] = []
    seen = set() if seen is None else seen
    for ci, container in enumerate(containers):
        ports_path = path.index(ci).child("ports")
        for pi, port in enumerate(_objs(container.get("ports"))):
            host_port = _int(port.get("hostPort"))
            if host_port == 0:
                continue
            key = f"{_str(port.get('protocol'))}/{_str(port.get('hostIP'))}/{host_port}"
            if key in seen:
                errs.append(duplicate(ports_path.index(pi).child("hostPort"), key))
            else:
                seen.add(key)
    return errs


def _port_num_or_name(port: Any, path: Path) -> list[FieldError]:
    """``ValidatePortNumOrName`` for an int-or-string."""
    if isinstance(port, str):
        return [invalid(path, port, m) for m in validation.is_valid_port_name(port)]
    number = _int(port)
    return [invalid(path, number, m) for m in validation.is_valid_port_num(number)]


_HTTP_HEADER_NAME_FMT: Final = "[-A-Za-z0-9]+"
_HTTP_HEADER_NAME_RE: Final = re.compile(_HTTP_HEADER_NAME_FMT)


def _validate_handler(
    handler: Object, grace_period: int | None, path: Path, *, probe: bool
) -> list[FieldError]:
    """``validateHandler``: exactly one action, and its own rules."""
    errs: list[FieldError] = []
    actions = (
        ("exec", "httpGet", "tcpSocket", "grpc")
        if probe
        else ("exec", "httpGet", "tcpSocket", "sleep")
    )
    count = 0
    for action in actions:
        if handler.get(action) is None:
            continue
        action_path = path.child(action)
        if count > 0:
            errs.append(forbidden(action_path, MORE_THAN_ONE_HANDLER_TYPE))
            continue
        count += 1
        body = _obj(handler.get(action))
        if action == "exec":
            command = body.get("command")
            if not isinstance(command, list) or not command:
                errs.append(required(action_path.child("command"), ""))
        elif action == "httpGet":
            if not _str(body.get("path")):
                errs.append(required(action_path.child("path"), ""))
            errs += _port_num_or_name(body.get("port"), action_path.child("port"))
            scheme = _str(body.get("scheme"))
            if scheme not in SUPPORTED_HTTP_SCHEMES:
                errs.append(
                    not_supported(action_path.child("scheme"), scheme, SUPPORTED_HTTP_SCHEMES)
                )
            for header in _objs(body.get("httpHeaders")):
                header_name = _str(header.get("name"))
                if not _HTTP_HEADER_NAME_RE.fullmatch(header_name):
                    detail = validation.regex_error(
                        "a valid HTTP header must consist of alphanumeric characters or '-'",
                        _HTTP_HEADER_NAME_FMT,
                        "X-Header-Name",
                    )
                    errs.append(invalid(action_path.child("httpHeaders"), header_name, detail))
        elif action == "tcpSocket":
            errs += _port_num_or_name(body.get("port"), action_path.child("port"))
        elif action == "grpc":
            errs += _port_num_or_name(_int(body.get("port")), action_path.child("port"))
        elif action == "sleep":
            seconds = _int(body.get("seconds"))
            if grace_period is not None and (seconds < 0 or seconds > grace_period):
                detail = (
                    "must be non-negative and less than terminationGracePeriodSeconds "
                    f"({grace_period})"
                )
                errs.append(invalid(action_path, seconds, detail))
    if count == 0:
        errs.append(required(path, "must specify a handler type"))
    return errs


#: A probe's counts and durations, none of which may be negative.
_PROBE_COUNTS: Final = (
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
)


def _validate_probe(
    probe_value: Any, grace_period: int | None, path: Path, kind: str
) -> list[FieldError]:
    if probe_value is None:
        return []
    probe = _obj(probe_value)
    errs = _validate_handler(probe, grace_period, path, probe=True)
    for key in _PROBE_COUNTS:
        value = _int(probe.get(key))
        if value < 0:  # a path only for an error: every probe of every template comes here
            errs += validation.validate_nonnegative_field(value, path.child(key))
    probe_grace = _int_or_none(probe.get("terminationGracePeriodSeconds"))
    if probe_grace is not None and probe_grace <= 0:
        errs.append(
            invalid(
                path.child("terminationGracePeriodSeconds"), probe_grace, "must be greater than 0"
            )
        )
    if kind in ("liveness", "startup"):
        threshold = _int(probe.get("successThreshold"))
        if threshold != 1:
            errs.append(invalid(path.child("successThreshold"), threshold, "must be 1"))
    elif probe_grace is not None:
        detail = "must not be set for readinessProbes"
        errs.append(invalid(path.child("terminationGracePeriodSeconds"), probe_grace, detail))
    return errs


def _validate_lifecycle(
    lifecycle: Object, grace_period: int | None, path: Path
) -> list[FieldError]:
    errs: list[FieldError] = []
    for hook in ("postStart", "preStop"):
        if lifecycle.get(hook) is not None:
            errs += _validate_handler(
                _obj(lifecycle.get(hook)), grace_period, path.child(hook), probe=False
            )
    return errs


def _validate_probes_and_lifecycle(
    container: Object, grace_period: int | None, path: Path
) -> list[FieldError]:
    errs: list[FieldError] = []
    if container.get("lifecycle") is not None:
        errs += _validate_lifecycle(
            _obj(container.get("lifecycle")), grace_period, path.child("lifecycle")
        )
    errs += _validate_probe(
        container.get("livenessProbe"), grace_period, path.child("livenessProbe"), "liveness"
    )
    errs += _validate_probe(
        container.get("readinessProbe"), grace_period, path.child("readinessProbe"), "readiness"
    )
    errs += _validate_probe(
        container.get("startupProbe"), grace_period, path.child("startupProbe"), "startup"
    )
    return errs


def _validate_container_common(
    container: Object,
    volumes: Mapping[str, Object],
    claim_names: Iterable[str],
    path: Path,
    opts: PodValidationOptions,
) -> list[FieldError]:
    """``validateContainerCommon``: what every kind of container must satisfy."""
    errs: list[FieldError] = []
    name = _str(container.get("name"))
    name_path = path.child("name")
    if not name:
        errs.append(required(name_path, ""))
    else:
        errs += [invalid(name_path, name, m) for m in validation.is_dns1123_label(name)]
    if not _str(container.get("image")):
        errs.append(required(path.child("image"), ""))
    policy = _str(container.get("terminationMessagePolicy"))
    if not policy:
        errs.append(required(path.child("terminationMessagePolicy"), ""))
    elif policy not in TERMINATION_MESSAGE_POLICIES:
        errs.append(
            not_supported(
                path.child("terminationMessagePolicy"), policy, TERMINATION_MESSAGE_POLICIES
            )
        )
    errs += _validate_ports(container.get("ports"), path.child("ports"))
    errs += _validate_env(container.get("env"), path.child("env"), opts)
    errs += _validate_env_from(container.get("envFrom"), path.child("envFrom"), opts)
    errs += _validate_volume_mounts(container, volumes, path.child("volumeMounts"))
    errs += _validate_volume_devices(container, volumes, path.child("volumeDevices"))
    pull_policy = _str(container.get("imagePullPolicy"))
    if not pull_policy:
        errs.append(required(path.child("imagePullPolicy"), ""))
    elif pull_policy not in SUPPORTED_PULL_POLICIES:
        errs.append(
            not_supported(path.child("imagePullPolicy"), pull_policy, SUPPORTED_PULL_POLICIES)
        )
    errs += validate_resource_requirements(
        container.get("resources"), path.child("resources"), pod_claim_names=claim_names
    )
    errs += _id_errors(_obj(container.get("securityContext")), path.child("securityContext"))
    return errs


def _validate_volume_devices(
    container: Object, volumes: Mapping[str, Object], path: Path
) -> list[FieldError]:
    errs: list[FieldError] = []
    mounts = {
        _str(m.get("name")): _str(m.get("mountPath")) for m in _objs(container.get("volumeMounts"))
    }
    device_paths: set[str] = set()
    device_names: set[str] = set()
    for i, device in enumerate(_objs(container.get("volumeDevices"))):
        idx_path = path.index(i)
        name = _str(device.get("name"))
        device_path = _str(device.get("devicePath"))
        volume = volumes.get(name)
        is_pvc = volume is not None and (
            volume.get("persistentVolumeClaim") is not None or volume.get("ephemeral") is not None
        )
        if not name:
            errs.append(required(idx_path.child("name"), ""))
        if name in device_names:
            errs.append(invalid(idx_path.child("name"), name, "must be unique"))
        if volume is not None and not is_pvc:
            detail = (
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for "
                "block mode"
            )
            errs.append(invalid(idx_path.child("name"), name, detail))
        if volume is None:
            errs.append(FieldError(ErrorType.NOT_FOUND, str(idx_path.child("name")), name))
        if not device_path:
            errs.append(required(idx_path.child("devicePath"), ""))
        if device_path in device_paths:
            errs.append(invalid(idx_path.child("devicePath"), device_path, "must be unique"))
        if device_path and _path_no_backsteps(device_path, path):
            detail = "can not contain backsteps ('..')"
            errs.append(invalid(idx_path.child("devicePath"), device_path, detail))
        else:
            device_paths.add(device_path)
        if name in mounts:
            errs.append(
                invalid(idx_path.child("name"), name, "must not already exist in volumeMounts")
            )
        if device_path in mounts.values():
            detail = "must not already exist as a path in volumeMounts"
            errs.append(invalid(idx_path.child("devicePath"), device_path, detail))
        if name:
            device_names.add(name)
    return errs


def _validate_containers(
    containers: list[Object],
    volumes: Mapping[str, Object],
    claim_names: Iterable[str],
    grace_period: int | None,
    path: Path,
    opts: PodValidationOptions,
) -> list[FieldError]:
    """``validateContainers``: at least one; unique names; probes; host ports."""
    if not containers:
        return [required(path, "")]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, container in enumerate(containers):
        idx_path = path.index(i)
        errs += _validate_container_common(container, volumes, claim_names, idx_path, opts)
        name = _str(container.get("name"))
        if name in names:
            errs.append(duplicate(idx_path.child("name"), name))
        else:
            names.add(name)
        errs += _validate_probes_and_lifecycle(container, grace_period, idx_path)
        if container.get("restartPolicy") is not None:
            errs.append(
                forbidden(idx_path.child("restartPolicy"), "may not be set for non-init containers")
            )
    errs += _host_port_conflicts(containers, path)
    return errs


def _validate_init_containers(
    init_containers: list[Object],
    containers: list[Object],
    volumes: Mapping[str, Object],
    claim_names: Iterable[str],
    grace_period: int | None,
    path: Path,
    opts: PodValidationOptions,
) -> list[FieldError]:
    """``validateInitContainers``: sidecars (``restartPolicy: Always``) may have probes."""
    errs: list[FieldError] = []
    names = {_str(c.get("name")) for c in containers}
    for i, container in enumerate(init_containers):
        idx_path = path.index(i)
        errs += _validate_container_common(container, volumes, claim_names, idx_path, opts)
        restart_always = False
        policy = container.get("restartPolicy")
        if policy is not None:
            if policy != "Always":
                errs.append(not_supported(idx_path.child("restartPolicy"), policy, ("Always",)))
            restart_always = policy == "Always"
        name = _str(container.get("name"))
        if name in names:
            errs.append(duplicate(idx_path.child("name"), name))
        elif name:
            names.add(name)
        errs += _host_port_conflicts([container], path)
        if restart_always:
            errs += _validate_probes_and_lifecycle(container, grace_period, idx_path)
        else:
            for key in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if container.get(key) is not None:
                    errs.append(forbidden(idx_path.child(key), INIT_CONTAINER_FORBIDDEN))
    return errs


_EPHEMERAL_FORBIDDEN_FIELDS: Final = (
    "ports",
    "resources",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "resizePolicy",
    "restartPolicy",
)


def _validate_ephemeral_containers(
    ephemeral: list[Object],
    containers: list[Object],
    init_containers: list[Object],
    volumes: Mapping[str, Object],
    claim_names: Iterable[str],
    path: Path,
    opts: PodValidationOptions,
) -> list[FieldError]:
    errs: list[FieldError] = []
    other_names = {_str(c.get("name")) for c in containers + init_containers}
    all_names = set(other_names)
    for i, container in enumerate(ephemeral):
        idx_path = path.index(i)
        errs += _validate_container_common(container, volumes, claim_names, idx_path, opts)
        errs += _container_only_for_pod(container, idx_path)
        name = _str(container.get("name"))
        if name in all_names:
            errs.append(duplicate(idx_path.child("name"), name))
        else:
            all_names.add(name)
        target = _str(container.get("targetContainerName"))
        if target and target not in other_names:
            errs.append(
                FieldError(ErrorType.NOT_FOUND, str(idx_path.child("targetContainerName")), target)
            )
        for key in _EPHEMERAL_FORBIDDEN_FIELDS:
            if container.get(key) not in (None, {}, []):
                errs.append(
                    forbidden(idx_path.child(key), "cannot be set for an Ephemeral Container")
                )
        for j, mount in enumerate(_objs(container.get("volumeMounts"))):
            for key in ("subPath", "subPathExpr"):
                if _str(mount.get(key)):
                    mount_path = idx_path.child("volumeMounts").index(j).child(key)
                    errs.append(forbidden(mount_path, "cannot be set for an Ephemeral Container"))
    return errs


def _container_only_for_pod(container: Object, path: Path) -> list[FieldError]:
    image = _str(container.get("image"))
    if len(image) != len(image.strip(" \t\n\v\f\r\x85\xa0")):
        return [invalid(path.child("image"), image, "must not have leading or trailing whitespace")]
    return []


# --- the pod spec ------------------------------------------------------------------------------


def _enum(value: Any, path: Path, allowed: tuple[str, ...]) -> list[FieldError]:
    text = _str(value)
    if not text:
        return [required(path, "")]
    if text not in allowed:
        return [not_supported(path, text, allowed)]
    return []


_MAX_ID: Final = 2**31 - 1


def _id_errors(context: Object, path: Path) -> list[FieldError]:
    """``IsValidUserID`` / ``IsValidGroupID`` of ``runAsUser`` and ``runAsGroup``."""
    errs: list[FieldError] = []
    for key in ("runAsUser", "runAsGroup"):
        value = _int_or_none(context.get(key))
        if value is not None and not 0 <= value <= _MAX_ID:
            errs.append(
                invalid(path.child(key), value, validation.inclusive_range_error(0, _MAX_ID))
            )
    return errs


def _pod_security_context(spec: Object, path: Path) -> list[FieldError]:
    """The IDs of ``validatePodSpecSecurityContext`` and its process-namespace rule."""
    context = _obj(spec.get("securityContext"))
    errs: list[FieldError] = []
    range_msg = validation.inclusive_range_error(0, _MAX_ID)
    fs_group = _int_or_none(context.get("fsGroup"))
    if fs_group is not None and not 0 <= fs_group <= _MAX_ID:
        errs.append(invalid(path.child("fsGroup"), fs_group, range_msg))
    errs += _id_errors(context, path)
    groups = context.get("supplementalGroups")
    for i, gid in enumerate(groups if isinstance(groups, list) else ()):
        value = _int(gid)
        if not 0 <= value <= _MAX_ID:
            errs.append(invalid(path.child("supplementalGroups").index(i), value, range_msg))
    share = spec.get("shareProcessNamespace")
    if share is True and spec.get("hostPID") is True:
        detail = "ShareProcessNamespace and HostPID cannot both be enabled"
        errs.append(invalid(path.child("shareProcessNamespace"), True, detail))
    return errs


def _node_selector_requirement(requirement: Object, path: Path) -> list[FieldError]:
    """``ValidateNodeSelectorRequirement`` (invalid label values allowed, as upstream
    does for required node affinity)."""
    errs: list[FieldError] = []
    operator = _str(requirement.get("operator"))
    values = requirement.get("values")
    count = len(values) if isinstance(values, list) else 0
    if operator in ("In", "NotIn"):
        if count == 0:
            detail = "must be specified when `operator` is 'In' or 'NotIn'"
            errs.append(required(path.child("values"), detail))
    elif operator in ("Exists", "DoesNotExist"):
        if count > 0:
            detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            errs.append(forbidden(path.child("values"), detail))
    elif operator in ("Gt", "Lt"):
        if count != 1:
            detail = "must be specified single value when `operator` is 'Lt' or 'Gt'"
            errs.append(required(path.child("values"), detail))
    else:
        errs.append(invalid(path.child("operator"), operator, "not a valid selector operator"))
    errs += validation.validate_label_name(_str(requirement.get("key")), path.child("key"))
    return errs


def _node_selector_term(term: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for j, requirement in enumerate(_objs(term.get("matchExpressions"))):
        errs += _node_selector_requirement(requirement, path.child("matchExpressions").index(j))
    for j, requirement in enumerate(_objs(term.get("matchFields"))):
        field_path = path.child("matchFields").index(j)
        operator = _str(requirement.get("operator"))
        values = requirement.get("values")
        value_list = values if isinstance(values, list) else []
        if operator in ("In", "NotIn"):
            if len(value_list) != 1:
                detail = (
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field "
                    "selector"
                )
                errs.append(required(field_path.child("values"), detail))
        else:
            detail = "not a valid selector operator"
            errs.append(invalid(field_path.child("operator"), operator, detail))
        key = _str(requirement.get("key"))
        if key != "metadata.name":
            errs.append(invalid(field_path.child("key"), key, "not a valid field selector key"))
        else:
            for k, value in enumerate(value_list):
                text = _str(value)
                errs += [
                    invalid(field_path.child("values").index(k), text, m)
                    for m in validation.name_is_dns_subdomain(text, False)
                ]
    return errs


def _pod_affinity_term(term: Object, path: Path) -> list[FieldError]:
    """``validatePodAffinityTerm``."""
    errs: list[FieldError] = []
    for key in ("labelSelector", "namespaceSelector"):
        selector = term.get(key)
        if isinstance(selector, dict):
            errs += validation.validate_label_selector(selector, path.child(key))
    namespaces = term.get("namespaces")
    for name in namespaces if isinstance(namespaces, list) else ():
        text = _str(name)
        errs += [
            invalid(path.child("namespace"), text, m)
            for m in validation.validate_namespace_name(text, False)
        ]
    topology_key = _str(term.get("topologyKey"))
    if not topology_key:
        errs.append(required(path.child("topologyKey"), "can not be empty"))
    errs += validation.validate_label_name(topology_key, path.child("topologyKey"))
    return errs


def validate_affinity(affinity: Any, path: Path) -> list[FieldError]:
    """``validateAffinity``: node affinity terms, and pod (anti-)affinity terms."""
    aff = _obj(affinity)
    errs: list[FieldError] = []
    required_key = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred_key = "preferredDuringSchedulingIgnoredDuringExecution"
    node = aff.get("nodeAffinity")
    if node is not None:
        node_path = path.child("nodeAffinity")
        selector = _obj(node).get(required_key)
        if selector is not None:
            terms_path = node_path.child(required_key, "nodeSelectorTerms")
            terms = _objs(_obj(selector).get("nodeSelectorTerms"))
            if not terms:
                errs.append(required(terms_path, "must have at least one node selector term"))
            for i, term in enumerate(terms):
                errs += _node_selector_term(term, terms_path.index(i))
        for i, weighted in enumerate(_objs(_obj(node).get(preferred_key))):
            idx_path = node_path.child(preferred_key).index(i)
            weight = _int(weighted.get("weight"))
            if weight <= 0 or weight > 100:
                errs.append(invalid(idx_path.child("weight"), weight, "must be in the range 1-100"))
            errs += _node_selector_term(
                _obj(weighted.get("preference")), idx_path.child("preference")
            )
    for kind in ("podAffinity", "podAntiAffinity"):
        value = aff.get(kind)
        if value is None:
            continue
        kind_path = path.child(kind)
        for i, term in enumerate(_objs(_obj(value).get(required_key))):
            errs += _pod_affinity_term(term, kind_path.child(required_key).index(i))
        for i, weighted in enumerate(_objs(_obj(value).get(preferred_key))):
            idx_path = kind_path.child(preferred_key).index(i)
            weight = _int(weighted.get("weight"))
            if weight <= 0 or weight > 100:
                errs.append(invalid(idx_path.child("weight"), weight, "must be in the range 1-100"))
            errs += _pod_affinity_term(
                _obj(weighted.get("podAffinityTerm")), idx_path.child("podAffinityTerm")
            )
    return errs


INVALID_IP_MSG: Final = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
MAX_DNS_NAMESERVERS: Final = 3
MAX_DNS_SEARCH_PATHS: Final = 32
MAX_DNS_SEARCH_LIST_CHARS: Final = 2048


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def validate_pod_dns_config(spec: Object, path: Path) -> list[FieldError]:
    """``validatePodDNSConfig``."""
    dns_config = spec.get("dnsConfig")
    if _str(spec.get("dnsPolicy")) == "None":
        if dns_config is None:
            detail = "must provide `dnsConfig` when `dnsPolicy` is None"
            return [required(path, detail)]
        if not _obj(dns_config).get("nameservers"):
            detail = "must provide at least one DNS nameserver when `dnsPolicy` is None"
            return [required(path.child("nameservers"), detail)]
    if dns_config is None:
        return []
    config = _obj(dns_config)
    errs: list[FieldError] = []
    nameservers = [_str(n) for n in _list(config.get("nameservers"))]
    if len(nameservers) > MAX_DNS_NAMESERVERS:
        detail = f"must not have more than {MAX_DNS_NAMESERVERS} nameservers"
        errs.append(invalid(path.child("nameservers"), nameservers, detail))
    for i, server in enumerate(nameservers):
        if not _is_ip(server):
            errs.append(invalid(path.child("nameservers").index(i), server, INVALID_IP_MSG))
    searches = [_str(n) for n in _list(config.get("searches"))]
    if len(searches) > MAX_DNS_SEARCH_PATHS:
        detail = f"must not have more than {MAX_DNS_SEARCH_PATHS} search paths"
        errs.append(invalid(path.child("searches"), searches, detail))
    if len(" ".join(searches)) > MAX_DNS_SEARCH_LIST_CHARS:
        detail = (
            f"must not have more than {MAX_DNS_SEARCH_LIST_CHARS} characters (including spaces) "
            "in the search list"
        )
        errs.append(invalid(path.child("searches"), searches, detail))
    for i, search in enumerate(searches):
        trimmed = search.removesuffix(".")
        errs += [
            invalid(path.child("searches").index(i), trimmed, m)
            for m in validation.is_dns1123_subdomain(trimmed)
        ]
    for i, option in enumerate(_objs(config.get("options"))):
        if not _str(option.get("name")):
            errs.append(required(path.child("options").index(i), "must not be empty"))
    return errs


def _gates(spec: Object, path: Path) -> list[FieldError]:
    """``validateReadinessGates`` and ``validateSchedulingGates``."""
    errs: list[FieldError] = []
    for i, gate in enumerate(_objs(spec.get("readinessGates"))):
        condition = _str(gate.get("conditionType"))
        gate_path = path.child("readinessGates").index(i).child("conditionType")
        errs += [invalid(gate_path, condition, m) for m in validation.is_qualified_name(condition)]
    seen: set[str] = set()
    for i, gate in enumerate(_objs(spec.get("schedulingGates"))):
        name = _str(gate.get("name"))
        gate_path = path.child("schedulingGates").index(i)
        errs += [invalid(gate_path, name, m) for m in validation.is_qualified_name(name)]
        if name in seen:
            errs.append(duplicate(gate_path, name))
        seen.add(name)
    return errs


IS_NOT_POSITIVE_ERROR_MSG: Final = "must be greater than zero"
SCHEDULE_ACTIONS: Final = ("DoNotSchedule", "ScheduleAnyway")
NODE_INCLUSION_POLICIES: Final = ("Honor", "Ignore")


def validate_topology_spread_constraints(constraints: Any, path: Path) -> list[FieldError]:
    """``validateTopologySpreadConstraints``."""
    errs: list[FieldError] = []
    items = _objs(constraints)
    for i, constraint in enumerate(items):
        idx_path = path.index(i)
        max_skew = _int(constraint.get("maxSkew"))
        if max_skew <= 0:
            errs.append(invalid(idx_path.child("maxSkew"), max_skew, IS_NOT_POSITIVE_ERROR_MSG))
        topology_key = _str(constraint.get("topologyKey"))
        if not topology_key:
            errs.append(required(idx_path.child("topologyKey"), "can not be empty"))
        action = _str(constraint.get("whenUnsatisfiable"))
        if action not in SCHEDULE_ACTIONS:
            errs.append(
                not_supported(idx_path.child("whenUnsatisfiable"), action, SCHEDULE_ACTIONS)
            )
        for later in items[i + 1 :]:
            if (_str(later.get("topologyKey")), _str(later.get("whenUnsatisfiable"))) == (
                topology_key,
                action,
            ):
                pair_path = idx_path.child("{topologyKey, whenUnsatisfiable}")
                errs.append(duplicate(pair_path, f"{{{topology_key}, {action}}}"))
                break
        min_domains = _int_or_none(constraint.get("minDomains"))
        if min_domains is not None:
            domains_path = idx_path.child("minDomains")
            if min_domains <= 0:
                errs.append(invalid(domains_path, min_domains, IS_NOT_POSITIVE_ERROR_MSG))
            if action != "DoNotSchedule":
                detail = f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                errs.append(invalid(domains_path, min_domains, detail))
        for key in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = constraint.get(key)
            if policy is not None and policy not in NODE_INCLUSION_POLICIES:
                errs.append(not_supported(idx_path.child(key), policy, NODE_INCLUSION_POLICIES))
        selector = constraint.get("labelSelector")
        if isinstance(selector, dict):
            errs += validation.validate_label_selector(selector, idx_path.child("labelSelector"))
    return errs


TOLERATION_OPERATORS: Final = ("Equal", "Exists")
TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _internal_toleration(toleration: Object) -> OrderedStruct:
    """An internal ``core.Toleration`` as ``ErrorBody`` prints it: JSON with the Go field
    names (the internal type has no JSON tags), in declaration order."""
    seconds = toleration.get("tolerationSeconds")
    return OrderedStruct(
        Key=_str(toleration.get("key")),
        Operator=_str(toleration.get("operator")),
        Value=_str(toleration.get("value")),
        Effect=_str(toleration.get("effect")),
        TolerationSeconds=None if seconds is None else _int(seconds),
    )


def validate_tolerations(tolerations: Any, path: Path) -> list[FieldError]:
    """``ValidateTolerations``."""
    errs: list[FieldError] = []
    for i, toleration in enumerate(_objs(tolerations)):
        idx_path = path.index(i)
        key = _str(toleration.get("key"))
        operator = _str(toleration.get("operator"))
        value = _str(toleration.get("value"))
        effect = _str(toleration.get("effect"))
        if key:
            errs += validation.validate_label_name(key, idx_path.child("key"))
        if not key and operator != "Exists":
            detail = (
                'operator must be Exists when `key` is empty, which means "match all values and '
                'all keys"'
            )
            errs.append(invalid(idx_path.child("operator"), operator, detail))
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            detail = "effect must be 'NoExecute' when `tolerationSeconds` is set"
            errs.append(invalid(idx_path.child("effect"), effect, detail))
        if operator in ("Equal", ""):
            messages = validation.is_valid_label_value(value)
            if messages:
                errs.append(invalid(idx_path.child("operator"), value, ";".join(messages)))
        elif operator == "Exists":
            if value:
                detail = "value must be empty when `operator` is 'Exists'"
                errs.append(
                    invalid(idx_path.child("operator"), _internal_toleration(toleration), detail)
                )
        else:
            errs.append(not_supported(idx_path.child("operator"), operator, TOLERATION_OPERATORS))
        if effect and effect not in TAINT_EFFECTS:
            errs.append(not_supported(idx_path.child("effect"), effect, TAINT_EFFECTS))
    return errs


POD_DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"


def validate_pod_specific_annotations(annotations: Any, path: Path) -> list[FieldError]:
    """``ValidatePodSpecificAnnotations``: the deletion cost is a 32-bit integer."""
    if not isinstance(annotations, dict) or POD_DELETION_COST not in annotations:
        return []
    value = annotations[POD_DELETION_COST]
    text = _str(value)
    # No sign but '-', no leading zeros, as upstream's parser wants.
    valid_start = bool(text) and (text[0] == "-" or text == "0" or "1" <= text[0] <= "9")
    if valid_start and re.fullmatch(r"-?[0-9]+", text) and -(2**31) <= int(text) < 2**31:
        return []
    return [invalid(path.key(POD_DELETION_COST), text, "must be a 32bit integer")]


def _host_network_ports(
    spec: Object, containers: list[Object], path: Path, opts: PodValidationOptions
) -> list[FieldError]:
    """``validatePodHostNetworkDeps``: a host port equals its container port.

    A template may leave it 0: the Pod made from it gets it defaulted.
    """
    if spec.get("hostNetwork") is not True:
        return []
    errs: list[FieldError] = []
    detail = "must match `containerPort` when `hostNetwork` is true"
    for i, container in enumerate(containers):
        ports_path = path.child("containers").index(i).child("ports")
        for j, port in enumerate(_objs(container.get("ports"))):
            host_port, container_port = _int(port.get("hostPort")), _int(port.get("containerPort"))
            if (opts.resource_is_pod or host_port != 0) and host_port != container_port:
                errs.append(invalid(ports_path.index(j).child("hostPort"), host_port, detail))
    return errs


def validate_pod_spec(
    spec: Object, path: Path, *, opts: PodValidationOptions | None = None
) -> list[FieldError]:
    """``ValidatePodSpec`` for the rules kapi covers (see the module docstring)."""
    opts = opts or DEFAULT_OPTIONS
    spec = _obj(spec)
    errs: list[FieldError] = []
    grace_value = spec.get("terminationGracePeriodSeconds")
    if grace_value is None:
        errs.append(required(path.child("terminationGracePeriodSeconds"), ""))
    grace_period = _int_or_none(grace_value)
    volumes, volume_errs = validate_volumes(spec.get("volumes"), path.child("volumes"))
    errs += volume_errs
    claim_names = [
        _str(c.get("name")) for c in _objs(spec.get("resourceClaims")) if _str(c.get("name"))
    ]
    containers = _objs(spec.get("containers"))
    init_containers = _objs(spec.get("initContainers"))
    errs += _validate_containers(
        containers, volumes, claim_names, grace_period, path.child("containers"), opts
    )
    errs += _validate_init_containers(
        init_containers,
        containers,
        volumes,
        claim_names,
        grace_period,
        path.child("initContainers"),
        opts,
    )
    errs += _validate_ephemeral_containers(
        _objs(spec.get("ephemeralContainers")),
        containers,
        init_containers,
        volumes,
        claim_names,
        path.child("ephemeralContainers"),
        opts,
    )
    errs += _host_network_ports(spec, containers, path, opts)
    errs += _enum(spec.get("restartPolicy"), path.child("restartPolicy"), RESTART_POLICIES)
    errs += _enum(spec.get("dnsPolicy"), path.child("dnsPolicy"), DNS_POLICIES)
    node_selector = spec.get("nodeSelector")
    if isinstance(node_selector, dict):
        errs += validation.validate_labels(node_selector, path.child("nodeSelector"))
    errs += _pod_security_context(spec, path.child("securityContext"))
    if spec.get("affinity") is not None:
        errs += validate_affinity(spec.get("affinity"), path.child("affinity"))
    errs += validate_pod_dns_config(spec, path.child("dnsConfig"))
    errs += _gates(spec, path)
    errs += validate_topology_spread_constraints(
        spec.get("topologySpreadConstraints"), path.child("topologySpreadConstraints")
    )
    for key in ("serviceAccountName",):
        value = _str(spec.get(key))
        if value:
            errs += [
                invalid(path.child(key), value, m)
                for m in validation.name_is_dns_subdomain(value, False)
            ]
    node_name = _str(spec.get("nodeName"))
    if node_name:
        errs += [
            invalid(path.child("nodeName"), node_name, m)
            for m in validation.name_is_dns_subdomain(node_name, False)
        ]
    deadline = _int_or_none(spec.get("activeDeadlineSeconds"))
    if deadline is not None and not 1 <= deadline <= 2**31 - 1:
        errs.append(
            invalid(
                path.child("activeDeadlineSeconds"),
                deadline,
                validation.inclusive_range_error(1, 2**31 - 1),
            )
        )
    for key in ("hostname", "subdomain"):
        value = _str(spec.get(key))
        if value:
            errs += [invalid(path.child(key), value, m) for m in validation.is_dns1123_label(value)]
    if _objs(spec.get("tolerations")):
        errs += validate_tolerations(spec.get("tolerations"), path.child("tolerations"))
    priority_class = _str(spec.get("priorityClassName"))
    if priority_class:
        errs += [
            invalid(path.child("priorityClassName"), priority_class, m)
            for m in validation.name_is_dns_subdomain(priority_class, False)
        ]
    runtime_class = spec.get("runtimeClassName")
    if isinstance(runtime_class, str):
        errs += [
            invalid(path.child("runtimeClassName"), runtime_class, m)
            for m in validation.name_is_dns_subdomain(runtime_class, False)
        ]
    preemption = spec.get("preemptionPolicy")
    if preemption is not None:
        errs += _enum(preemption, path.child("preemptionPolicy"), ("PreemptLowerPriority", "Never"))
    if spec.get("overhead") is not None:
        errs += validate_resource_requirements(
            {"limits": spec.get("overhead")}, path.child("overhead")
        )
    return errs


def validate_pod_template_spec(
    template: Object, path: Path, *, opts: PodValidationOptions | None = None
) -> list[FieldError]:
    """``ValidatePodTemplateSpec``: the template's labels and annotations, then its spec.

    The labels' path is ``<path>.labels`` (upstream validates the embedded
    ObjectMeta's fields under the template's own path).
    """
    template = _obj(template)
    meta = _obj(template.get("metadata"))
    errs: list[FieldError] = []
    labels = meta.get("labels")
    if isinstance(labels, dict):
        errs += validation.validate_labels(labels, path.child("labels"))
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        errs += validation.validate_annotations(annotations, path.child("annotations"))
    errs += validate_pod_specific_annotations(annotations, path.child("annotations"))
    spec = _obj(template.get("spec"))
    errs += validate_pod_spec(spec, path.child("spec"), opts=opts)
    if _objs(spec.get("ephemeralContainers")):
        detail = "ephemeral containers not allowed in pod template"
        errs.append(forbidden(path.child("spec", "ephemeralContainers"), detail))
    return errs


def validate_pod_template_spec_update(new: Object, old: Object, path: Path) -> list[FieldError]:
    """Templates may change freely; the new one must be valid."""
    return validate_pod_template_spec(new, path)


# --- pods --------------------------------------------------------------------------------------

_SPEC: Final = Path("spec")


def _pod_only(pod: Object) -> list[FieldError]:
    """What ``validatePodMetadataAndSpec`` checks beyond the spec, for pods only."""
    spec = _obj(pod.get("spec"))
    annotations = _obj(pod.get("metadata")).get("annotations")
    errs = validate_pod_specific_annotations(annotations, Path("metadata", "annotations"))
    if not _str(spec.get("serviceAccountName")):
        for vi, volume in enumerate(_objs(spec.get("volumes"))):
            projected = volume.get("projected")
            if projected is None:
                continue
            sources_path = _SPEC.child("volumes").index(vi).child("projected", "sources")
            for si, source in enumerate(_objs(_obj(projected).get("sources"))):
                if source.get("serviceAccountToken") is not None:
                    errs.append(
                        forbidden(
                            sources_path.index(si).child("serviceAccountToken"),
                            "must not be specified when serviceAccountName is not set",
                        )
                    )
    for key in ("containers", "initContainers"):
        for i, container in enumerate(_objs(spec.get(key))):
            errs += _container_only_for_pod(container, _SPEC.child(key).index(i))
    return errs


def _for_pod(opts: PodValidationOptions | None) -> PodValidationOptions:
    return dataclasses.replace(opts or DEFAULT_OPTIONS, resource_is_pod=True)


def validate_pod_create(
    pod: Object, *, opts: PodValidationOptions | None = None
) -> list[FieldError]:
    """``ValidatePodCreate`` without the metadata (the generic store checks that)."""
    spec = _obj(pod.get("spec"))
    errs = validate_pod_spec(spec, _SPEC, opts=_for_pod(opts)) + _pod_only(pod)
    if _objs(spec.get("ephemeralContainers")):
        errs.append(forbidden(_SPEC.child("ephemeralContainers"), "cannot be set on create"))
    if _str(spec.get("nodeName")) and _objs(spec.get("schedulingGates")):
        detail = "cannot be set until all schedulingGates have been cleared"
        errs.append(forbidden(_SPEC.child("nodeName"), detail))
    return errs


def _container_updates(
    new: list[Object], old: list[Object], path: Path
) -> tuple[list[FieldError], bool]:
    if len(new) != len(old):
        return [forbidden(path, "pod updates may not add or remove containers")], True
    errs: list[FieldError] = []
    for i, container in enumerate(new):
        image = _str(container.get("image"))
        if not image:
            errs.append(required(path.index(i).child("image"), ""))
        if len(image.strip(" \t\n\v\f\r\x85\xa0")) != len(image):
            detail = "must not have leading or trailing whitespace"
            errs.append(invalid(path.index(i).child("image"), image, detail))
    return errs, False


def _spec_diff(old: Object, new: Object) -> str:
    """A readable difference of two specs (upstream prints go-cmp's, unstable by design)."""
    lines: list[str] = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            lines.append(f"  {key}:")
            if key in old:
                lines.append(f"-   {json.dumps(old[key], sort_keys=True)}")
            if key in new:
                lines.append(f"+   {json.dumps(new[key], sort_keys=True)}")
    return "  core.PodSpec{\n" + "\n".join(lines) + "\n  }\n"


def validate_pod_update(
    new: Object, old: Object, *, opts: PodValidationOptions | None = None
) -> list[FieldError]:
    """``ValidatePodUpdate`` without the metadata: the new spec must be valid, and only
    images, a shorter ``activeDeadlineSeconds``, added tolerations, removed scheduling
    gates (and a negative grace period turned into 1) may change."""
    new_spec = _obj(new.get("spec"))
    old_spec = _obj(old.get("spec"))
    errs = validate_pod_spec(new_spec, _SPEC, opts=_for_pod(opts)) + _pod_only(new)
    for key in ("containers", "initContainers"):
        container_errs, stop = _container_updates(
            _objs(new_spec.get(key)), _objs(old_spec.get(key)), _SPEC.child(key)
        )
        errs += container_errs
        if stop:
            return errs
    deadline_path = _SPEC.child("activeDeadlineSeconds")
    new_deadline = _int_or_none(new_spec.get("activeDeadlineSeconds"))
    old_deadline = _int_or_none(old_spec.get("activeDeadlineSeconds"))
    if new_deadline is not None:
        if not 0 <= new_deadline <= 2**31 - 1:
            errs.append(
                invalid(deadline_path, new_deadline, validation.inclusive_range_error(0, 2**31 - 1))
            )
            return errs
        if old_deadline is not None and old_deadline < new_deadline:
            errs.append(
                invalid(deadline_path, new_deadline, "must be less than or equal to previous value")
            )
            return errs
    elif old_deadline is not None:
        errs.append(
            invalid(deadline_path, None, "must not update from a positive integer to nil value")
        )
    old_tolerations = _objs(old_spec.get("tolerations"))
    tolerations_path = _SPEC.child("tolerations")
    for old_toleration in old_tolerations:
        if not any(_same_toleration(old_toleration, t) for t in _objs(new_spec.get("tolerations"))):
            errs.append(
                forbidden(
                    tolerations_path,
                    "existing toleration can not be modified except its tolerationSeconds",
                )
            )
            break
    old_gates = {_str(g.get("name")) for g in _objs(old_spec.get("schedulingGates"))}
    for i, gate in enumerate(_objs(new_spec.get("schedulingGates"))):
        gate_name = _str(gate.get("name"))
        if gate_name not in old_gates:
            detail = f"only deletion is allowed, but found new scheduling gate '{gate_name}'"
            errs.append(forbidden(_SPEC.child("schedulingGates").index(i).child("name"), detail))
    if _semantic(new_spec) == _semantic(old_spec):
        return errs
    munged = dict(new_spec)
    for key in ("containers", "initContainers"):
        if key in munged:
            munged[key] = [
                _with_image_of(c, o)
                for c, o in zip(_objs(munged[key]), _objs(old_spec.get(key)), strict=True)
            ]
    for key in ("activeDeadlineSeconds", "schedulingGates", "tolerations"):
        if key in old_spec:
            munged[key] = old_spec[key]
        else:
            munged.pop(key, None)
    old_grace = _int_or_none(old_spec.get("terminationGracePeriodSeconds"))
    if (
        old_grace is not None
        and old_grace < 0
        and _int_or_none(munged.get("terminationGracePeriodSeconds")) == 1
    ):
        munged["terminationGracePeriodSeconds"] = old_spec["terminationGracePeriodSeconds"]
    if _semantic(munged) != _semantic(old_spec):
        errs.append(
            forbidden(_SPEC, f"{POD_UPDATE_FORBIDDEN_PREFIX}\n{_spec_diff(old_spec, munged)}")
        )
    return errs


def _semantic(value: Any) -> Any:
    """``value`` as upstream's semantic equality compares it: a null or empty list is
    the same as an absent one."""
    if isinstance(value, dict):
        return {k: _semantic(v) for k, v in value.items() if v is not None and v != []}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _with_image_of(container: Object, old: Object) -> Object:
    """``container`` with ``old``'s image: an image is the one container field that may change."""
    munged = {k: v for k, v in container.items() if k != "image"}
    if "image" in old:
        munged["image"] = old["image"]
    return munged


def _same_toleration(old: Object, new: Object) -> bool:
    """Equal but for ``tolerationSeconds``, which an update may change."""
    return {k: v for k, v in old.items() if k != "tolerationSeconds"} == {
        k: v for k, v in new.items() if k != "tolerationSeconds"
    }


__all__ = [
    "DEFAULT_OPTIONS",
    "PodValidationOptions",
    "validate_affinity",
    "validate_pod_create",
    "validate_pod_dns_config",
    "validate_pod_spec",
    "validate_pod_specific_annotations",
    "validate_pod_template_spec",
    "validate_pod_template_spec_update",
    "validate_pod_update",
    "validate_resource_requirements",
    "validate_tolerations",
    "validate_topology_spread_constraints",
    "validate_volumes",
]
