"""core/v1 ``PersistentVolume`` and ``PersistentVolumeClaim``: defaults, validation, strategy.

Defaulting follows ``SetDefaults_PersistentVolume``/``..._PersistentVolumeClaim(Spec)``
(``pkg/apis/core/v1``), validation ``ValidatePersistentVolume(Update)`` and
``ValidatePersistentVolumeClaim(Update)`` (``pkg/apis/core/validation``) for the
mistakes users make, and the registry's strategies (``pkg/registry/core/persistentvolume``
and ``.../persistentvolumeclaim``): status is the ``/status`` subresource's, a new
volume starts ``Pending`` with its phase transition time, and a claim's spec is fixed
once created but for a larger storage request.

kube-apiserver's StorageObjectInUseProtection admission plugin (on by default) gives
every new volume the ``kubernetes.io/pv-protection`` finalizer and every new claim
``kubernetes.io/pvc-protection``; kapi adds them on create as well.  Upstream's
protection controllers (in kube-controller-manager) remove them once the object is
no longer in use; kapi has no controller manager, so :mod:`kapi.controllers.storage_protection`
does that part: a deleted claim no pod uses, or a deleted volume not bound, goes.
kapi runs no volume binder or provisioner: claims stay ``Pending`` until a client
binds them by writing ``spec.volumeName`` and the statuses.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    GoSyntax,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kapi.apimachinery.quantity import Quantity, QuantityError, unmarshal_json
from kapi.apimachinery.unstructured import Object
from kapi.apis import core_v1_pod_validation as pod_validation
from kapi.apis.core_v1 import core_resource
from kapi.apis.core_v1_pod_defaults import round_up_to_milli
from kapi.apis.generated.core_v1 import PersistentVolume, PersistentVolumeClaim
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.objects import now_rfc3339
from kapi.runtime.scheme import Resource

PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"
PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
#: ``core.BetaStorageClassAnnotation``.
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
STORAGE = "storage"

#: Sorted, as upstream's ``sets.List`` reports them.
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
VOLUME_MODES = ("Block", "Filesystem")

RWOP_WITH_OTHERS = "may not use ReadWriteOncePod with other access modes"
MUST_SPECIFY_VOLUME_TYPE = "must specify a volume type"
NOT_POSITIVE = "must be greater than zero"
PV_SOURCE_IMMUTABLE = "spec.persistentvolumesource is immutable after creation"
PVC_SPEC_IMMUTABLE = (
    "spec is immutable after creation except resources.requests and "
    "volumeAttributesClassName for bound claims"
)
LESS_THAN_STATUS = "field can not be less than status.capacity"
DEPRECATED_STORAGE_CLASS_ANNOTATION = (
    'deprecated since v1.8; use "storageClassName" attribute instead'
)
RECYCLE_DEPRECATED = (
    "The Recycle reclaim policy is deprecated. Instead, the recommended approach is to use "
    "dynamic provisioning."
)

#: ``PersistentVolumeSource``'s members in the order ``ValidatePersistentVolumeSpec`` checks
#: them, each with the path its "more than 1" error names (upstream names ``cephFS`` there).
PV_SOURCES: tuple[tuple[str, str], ...] = (
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephFS"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", ""),  # counted, never refused as a second source (upstream's quirk)
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
)


def _dict(value: Any) -> Object:
    return value if isinstance(value, dict) else {}


def _spec(obj: Object) -> Object:
    return _dict(obj.get("spec"))


def _status(obj: Object) -> Object:
    return _dict(obj.get("status"))


# --- defaulting -----------------------------------------------------------------------------


def _round_resources(resources: Any) -> None:
    """``SetDefaults_ResourceList``: quantities finer than a thousandth round up to one."""
    if isinstance(resources, dict):
        for name, value in resources.items():
            resources[name] = round_up_to_milli(value)


def _set_if_empty(obj: Object, key: str, value: Any) -> None:
    if not obj.get(key):
        obj[key] = value


def _default_pv_source(spec: Object) -> None:
    """The defaults of the volume sources a PersistentVolume may hold."""
    host_path = spec.get("hostPath")
    if isinstance(host_path, dict) and "type" not in host_path:
        host_path["type"] = ""
    iscsi = spec.get("iscsi")
    if isinstance(iscsi, dict):
        _set_if_empty(iscsi, "iscsiInterface", "default")
    rbd = spec.get("rbd")
    if isinstance(rbd, dict):
        _set_if_empty(rbd, "pool", "rbd")
        _set_if_empty(rbd, "user", "admin")
        _set_if_empty(rbd, "keyring", "/etc/ceph/keyring")
    azure_disk = spec.get("azureDisk")
    if isinstance(azure_disk, dict):
        for key, value in (
            ("cachingMode", "ReadWrite"),
            ("fsType", "ext4"),
            ("readOnly", False),
            ("kind", "Shared"),
        ):
            if azure_disk.get(key) is None:
                azure_disk[key] = value
    scale_io = spec.get("scaleIO")
    if isinstance(scale_io, dict):
        _set_if_empty(scale_io, "storageMode", "ThinProvisioned")
        _set_if_empty(scale_io, "fsType", "xfs")


def default_persistent_volume(obj: Object) -> None:
    """``SetDefaults_PersistentVolume``: phase Pending, reclaim policy Retain, Filesystem mode."""
    status = obj.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    _set_if_empty(spec, "persistentVolumeReclaimPolicy", "Retain")
    if spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    _round_resources(spec.get("capacity"))
    _default_pv_source(spec)


def default_persistent_volume_claim(obj: Object) -> None:
    """``SetDefaults_PersistentVolumeClaim(Spec)``: phase Pending, Filesystem mode."""
    status = obj.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    if spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"
    resources = spec.get("resources")
    if isinstance(resources, dict):
        _round_resources(resources.get("limits"))
        _round_resources(resources.get("requests"))
    if isinstance(status, dict):
        _round_resources(status.get("capacity"))


# --- validation -----------------------------------------------------------------------------


def _quantity(value: Any) -> Quantity | None:
    try:
        return unmarshal_json(value)
    except QuantityError:
        return None


def _validate_access_modes(modes: Any, path: Path, required_detail: str) -> list[FieldError]:
    """The access modes: at least one, each supported, ReadWriteOncePod alone."""
    errs: list[FieldError] = []
    modes = modes if isinstance(modes, list) else []
    if not modes:
        errs.append(required(path, required_detail))
    rwop = other = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(not_supported(path, mode, ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            rwop = True
        else:
            other = True
    if rwop and other:
        errs.append(forbidden(path, RWOP_WITH_OTHERS))
    return errs


def _go_resource_list(resources: Any) -> GoSyntax:
    """A ``core.ResourceList`` as ``%#v`` prints it: only the empty one is practical to spell
    (Go prints each quantity's internal fields); others show their names and values."""
    if not resources:
        return GoSyntax("core.ResourceList(nil)")
    items = ", ".join(f'"{k}":"{v}"' for k, v in sorted(_dict(resources).items()))
    return GoSyntax(f"core.ResourceList{{{items}}}")


def _validate_positive_quantity(value: Any, path: Path) -> list[FieldError]:
    """``validateBasicResource`` and ``ValidatePositiveQuantityValue``."""
    q = _quantity(value)
    if q is None:
        return [invalid(path, value, "must be a valid resource quantity")]
    if q.amount <= 0:
        return [invalid(path, str(q), NOT_POSITIVE)]
    return []


def _validate_class_name(name: Any, path: Path) -> list[FieldError]:
    """``ValidateClassName``: a DNS subdomain."""
    if not isinstance(name, str) or not name:
        return []
    return [invalid(path, name, m) for m in validation.name_is_dns_subdomain(name, False)]


def _validate_pv_source(key: str, source: Object, path: Path) -> list[FieldError]:
    """The rules of the common sources (the rarer ones are accepted as sent)."""
    errs: list[FieldError] = []
    if key == "hostPath":
        host_path = source.get("path") or ""
        if not host_path:
            return [required(path.child("path"), "")]
        if ".." in str(host_path).replace("\\", "/").split("/"):
            errs.append(invalid(path.child("path"), host_path, "must not contain '..'"))
        kind = source.get("type")
        if kind is not None and kind not in pod_validation.SUPPORTED_HOST_PATH_TYPES:
            errs.append(
                not_supported(path.child("type"), kind, pod_validation.SUPPORTED_HOST_PATH_TYPES)
            )
    elif key == "nfs":
        nfs_path = source.get("path") or ""
        if not source.get("server"):
            errs.append(required(path.child("server"), ""))
        if not nfs_path:
            errs.append(required(path.child("path"), ""))
        if not str(nfs_path).startswith("/"):
            errs.append(invalid(path.child("path"), nfs_path, "must be an absolute path"))
    elif key == "local":
        if not source.get("path"):
            errs.append(required(path.child("path"), ""))
    elif key == "csi":
        if not source.get("driver"):
            errs.append(required(path.child("driver"), ""))
        if not source.get("volumeHandle"):
            errs.append(required(path.child("volumeHandle"), ""))
    return errs


def validate_persistent_volume_spec(spec: Object) -> list[FieldError]:
    """``ValidatePersistentVolumeSpec`` for a PersistentVolume (not an inline volume)."""
    path = Path("spec")
    errs = _validate_access_modes(spec.get("accessModes"), path.child("accessModes"), "")
    capacity = spec.get("capacity")
    capacity_path = path.child("capacity")
    if not capacity:
        errs.append(required(capacity_path, ""))
    if not isinstance(capacity, dict) or STORAGE not in capacity or len(capacity) > 1:
        errs.append(not_supported(capacity_path, _go_resource_list(capacity), (STORAGE,)))
    for name, value in sorted(_dict(capacity).items()):
        errs += _validate_positive_quantity(value, capacity_path.key(name))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(
            not_supported(path.child("persistentVolumeReclaimPolicy"), policy, RECLAIM_POLICIES)
        )
    node_affinity = _dict(spec.get("nodeAffinity"))
    count = 0
    for key, forbidden_name in PV_SOURCES:
        if spec.get(key) is None:
            continue
        if count and forbidden_name:
            errs.append(
                forbidden(path.child(forbidden_name), pod_validation.MORE_THAN_ONE_VOLUME_TYPE)
            )
            continue
        count += 1
        errs += _validate_pv_source(key, _dict(spec.get(key)), path.child(key))
        if key == "local" and not node_affinity.get("required"):
            errs.append(required(path.child("nodeAffinity"), "Local volume requires node affinity"))
    if not count:
        errs.append(required(path, MUST_SPECIFY_VOLUME_TYPE))
    host_path = _dict(spec.get("hostPath"))
    if host_path and policy == "Recycle":
        cleaned = "/" + "/".join(p for p in str(host_path.get("path") or "").split("/") if p)
        if cleaned == "/":
            errs.append(
                forbidden(
                    path.child("persistentVolumeReclaimPolicy"),
                    "may not be 'recycle' for a hostPath mount of '/'",
                )
            )
    errs += _validate_class_name(spec.get("storageClassName"), path.child("storageClassName"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(not_supported(path.child("volumeMode"), mode, VOLUME_MODES))
    return errs


def _semantic(value: Any) -> Any:
    """``value`` as upstream's semantic equality compares it: null and empty are absent."""
    if isinstance(value, dict):
        return {k: _semantic(v) for k, v in value.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _diff(old: Object, new: Object, type_name: str) -> str:
    """A readable difference of two structs (upstream prints go-cmp's, unstable by design)."""
    lines: list[str] = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            lines.append(f"  {key}:")
            if key in old:
                lines.append(f"-   {json.dumps(old[key], sort_keys=True)}")
            if key in new:
                lines.append(f"+   {json.dumps(new[key], sort_keys=True)}")
    return f"  {type_name}{{\n" + "\n".join(lines) + "\n  }\n"


def _pv_source(spec: Object) -> Object:
    return {key: spec[key] for key, _ in PV_SOURCES if spec.get(key) is not None}


def validate_persistent_volume_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidatePersistentVolumeUpdate``: the volume source and mode are fixed."""
    spec, old_spec = _spec(new), _spec(old)
    errs = validate_persistent_volume_spec(spec)
    source, old_source = _pv_source(spec), _pv_source(old_spec)
    csi, old_csi = _dict(source.get("csi")), _dict(old_source.get("csi"))
    if csi and old_csi and old_csi.get("controllerExpandSecretRef") is None:
        # A controller expansion secret may be added to a volume that had none.
        source = {
            **source,
            "csi": {k: v for k, v in csi.items() if k != "controllerExpandSecretRef"},
        }
    if _semantic(source) != _semantic(old_source):
        diff = _diff(_semantic(old_source), _semantic(source), "core.PersistentVolumeSource")
        errs.append(
            forbidden(Path("spec", "persistentvolumesource"), f"{PV_SOURCE_IMMUTABLE}\n{diff}")
        )
    errs += validation.validate_immutable_field(
        spec.get("volumeMode"), old_spec.get("volumeMode"), Path("volumeMode")
    )
    return errs


def validate_persistent_volume_claim_spec(spec: Object, path: Path) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimSpec``."""
    modes = spec.get("accessModes")
    errs: list[FieldError] = []
    if not modes:
        errs.append(required(path.child("accessModes"), "at least 1 access mode is required"))
    if spec.get("selector") is not None:
        errs += validation.validate_label_selector(
            _dict(spec.get("selector")), path.child("selector")
        )
    errs += _validate_access_modes(modes or ["ReadWriteOnce"], path.child("accessModes"), "")
    requests = _dict(_dict(spec.get("resources")).get("requests"))
    storage_path = path.child("resources").key(STORAGE)
    if STORAGE not in requests:
        errs.append(required(storage_path, ""))
    else:
        errs += _validate_positive_quantity(requests[STORAGE], storage_path)
    errs += _validate_class_name(spec.get("storageClassName"), path.child("storageClassName"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(not_supported(path.child("volumeMode"), mode, VOLUME_MODES))
    for key in ("dataSource", "dataSourceRef"):
        source = spec.get(key)
        if source is None:
            continue
        source = _dict(source)
        source_path = path.child(key)
        if not source.get("name"):
            errs.append(required(source_path.child("name"), ""))
        if not source.get("kind"):
            errs.append(required(source_path.child("kind"), ""))
        group = source.get("apiGroup") or ""
        if not group and source.get("kind") != "PersistentVolumeClaim":
            errs.append(
                invalid(
                    source_path,
                    source.get("kind") or "",
                    "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
                )
            )
        if group:
            errs += [
                invalid(source_path.child("apiGroup"), group, m)
                for m in validation.is_dns1123_subdomain(group)
            ]
    errs += _validate_class_name(
        spec.get("volumeAttributesClassName"), path.child("volumeAttributesClassName")
    )
    return errs


def _storage(obj: Any) -> Quantity | None:
    value = _dict(obj).get(STORAGE)
    return None if value is None else _quantity(value)


def validate_persistent_volume_claim_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimUpdate``: only a bound claim's storage request (and
    volume attributes class) may change, the volume name may be set once, and a storage
    class may be set where there was none."""
    spec, old_spec = _spec(new), _spec(old)
    errs = validate_persistent_volume_claim_spec(spec, Path("spec"))
    new_clone, old_clone = copy.deepcopy(spec), copy.deepcopy(old_spec)
    if not old_spec.get("volumeName"):
        old_clone.pop("volumeName", None)
        if "volumeName" in new_clone:
            old_clone["volumeName"] = new_clone["volumeName"]
    annotations = _dict(_dict(new.get("metadata")).get("annotations"))
    old_annotations = _dict(_dict(old.get("metadata")).get("annotations"))
    old_class = old_spec.get("storageClassName")
    new_class = spec.get("storageClassName")
    from_annotation = (
        BETA_STORAGE_CLASS_ANNOTATION in old_annotations
        and old_class is None
        and new_class is not None
        and new_class == old_annotations[BETA_STORAGE_CLASS_ANNOTATION]
        and (
            BETA_STORAGE_CLASS_ANNOTATION not in annotations
            or annotations[BETA_STORAGE_CLASS_ANNOTATION]
            == old_annotations[BETA_STORAGE_CLASS_ANNOTATION]
        )
    )
    if from_annotation:
        new_clone.pop("storageClassName", None)
    else:
        new_value = annotations.get(BETA_STORAGE_CLASS_ANNOTATION, "")
        old_value = old_annotations.get(BETA_STORAGE_CLASS_ANNOTATION, "")
        if new_value != old_value:
            annotation_path = (
                Path("metadata").child("annotations").key(BETA_STORAGE_CLASS_ANNOTATION)
            )
            errs.append(invalid(annotation_path, new_value, validation.FIELD_IMMUTABLE_ERROR_MSG))
        from_nil = (
            new_class is not None
            and old_class is None
            and (
                BETA_STORAGE_CLASS_ANNOTATION not in old_annotations
                or new_class == old_annotations[BETA_STORAGE_CLASS_ANNOTATION]
            )
        )
        if from_nil:
            new_clone.pop("storageClassName", None)
    bound = _status(new).get("phase") == "Bound"
    new_requests = _dict(new_clone.get("resources")).get("requests")
    if bound and isinstance(new_requests, dict):
        old_storage = _dict(_dict(old_spec.get("resources")).get("requests")).get(STORAGE)
        if old_storage is None:
            new_requests.pop(STORAGE, None)
        else:
            new_requests[STORAGE] = old_storage
    new_clone.pop("volumeAttributesClassName", None)
    if "volumeAttributesClassName" in old_clone:
        new_clone["volumeAttributesClassName"] = old_clone["volumeAttributesClassName"]
    if _semantic(new_clone) != _semantic(old_clone):
        diff = _diff(_semantic(old_clone), _semantic(new_clone), "core.PersistentVolumeClaimSpec")
        errs.append(forbidden(Path("spec"), f"{PVC_SPEC_IMMUTABLE}\n{diff}"))
    new_size = _storage(_dict(spec.get("resources")).get("requests"))
    old_size = _storage(_dict(old_spec.get("resources")).get("requests"))
    status_size = _storage(_status(old).get("capacity"))
    if new_size is not None and old_size is not None and new_size.amount < old_size.amount:
        # RecoverVolumeExpansionFailure (beta, on): a request may shrink back towards, but
        # not to or below, what the volume was given.
        status_amount = status_size.amount if status_size is not None else 0
        if new_size.amount <= status_amount:
            storage_path = Path("spec", "resources", "requests", STORAGE)
            errs.append(forbidden(storage_path, LESS_THAN_STATUS))
    errs += validation.validate_immutable_field(
        spec.get("volumeMode"), old_spec.get("volumeMode"), Path("volumeMode")
    )
    return errs


def validate_persistent_volume_claim_status_update(new: Object) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimStatusUpdate``: access modes kept, capacities valid."""
    errs: list[FieldError] = []
    if not _spec(new).get("accessModes"):
        errs.append(required(Path("Spec", "accessModes"), ""))
    capacity_path = Path("status", "capacity")
    for name, value in sorted(_dict(_status(new).get("capacity")).items()):
        q = _quantity(value)
        if q is None or q.amount < 0:
            errs.append(
                invalid(capacity_path.key(name), value, "must be a valid resource quantity")
            )
    return errs


def _storage_class_warning(obj: Object) -> list[str]:
    annotations = _dict(_dict(obj.get("metadata")).get("annotations"))
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        path = Path("metadata").child("annotations").key(BETA_STORAGE_CLASS_ANNOTATION)
        return [f"{path}: {DEPRECATED_STORAGE_CLASS_ANNOTATION}"]
    return []


def persistent_volume_warnings(obj: Object) -> list[str]:
    """``GetWarningsForPersistentVolume``: the beta class annotation, the Recycle policy."""
    warnings = _storage_class_warning(obj)
    if _spec(obj).get("persistentVolumeReclaimPolicy") == "Recycle":
        warnings.append(f"spec.persistentVolumeReclaimPolicy: {RECYCLE_DEPRECATED}")
    return warnings


# --- strategies -----------------------------------------------------------------------------


def _add_finalizer(obj: Object, finalizer: str) -> None:
    """StorageObjectInUseProtection's mutation: the protection finalizer, once."""
    metadata = obj.setdefault("metadata", {})
    finalizers = metadata.get("finalizers") or []
    if finalizer not in finalizers:
        metadata["finalizers"] = [*finalizers, finalizer]


class PersistentVolumeStrategy(Strategy):
    """Upstream ``persistentvolumeStrategy`` and its status strategy."""

    has_status = True

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": now_rfc3339()}
        _add_finalizer(obj, PV_PROTECTION_FINALIZER)

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_persistent_volume_spec(_spec(obj))

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_persistent_volume_update(new, old)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        # Upstream's status PrepareForUpdate keeps the phase transition time while the
        # phase stays, and stamps a new one when the phase changes and the client did
        # not give its own; the store has no status-specific prepare hook, so it is here.
        status, old_status = new.setdefault("status", {}), _status(old)
        given = status.get("lastPhaseTransitionTime")
        if status.get("phase") == old_status.get("phase"):
            if given is None and "lastPhaseTransitionTime" in old_status:
                status["lastPhaseTransitionTime"] = old_status["lastPhaseTransitionTime"]
        elif given is None or given == old_status.get("lastPhaseTransitionTime"):
            status["lastPhaseTransitionTime"] = now_rfc3339()
        return []

    def warnings_on_create(self, obj: Object) -> list[str]:
        return persistent_volume_warnings(obj)

    def warnings_on_update(self, new: Object, old: Object) -> list[str]:
        return persistent_volume_warnings(new)


def normalize_data_sources(spec: Object) -> None:
    """``NormalizeDataSources``: ``dataSource`` and ``dataSourceRef`` fill each other in
    (a reference to another namespace has no ``dataSource`` twin)."""
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if source is not None and ref is None:
        spec["dataSourceRef"] = copy.deepcopy(source)
    elif ref is not None and source is None and not _dict(ref).get("namespace"):
        spec["dataSource"] = {k: v for k, v in _dict(ref).items() if k != "namespace"}


class PersistentVolumeClaimStrategy(Strategy):
    """Upstream ``persistentvolumeclaimStrategy`` and its status strategy."""

    has_status = True

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"phase": "Pending"}
        normalize_data_sources(obj.setdefault("spec", {}))
        _add_finalizer(obj, PVC_PROTECTION_FINALIZER)

    def prepare_for_update(self, new: Object, old: Object) -> None:
        super().prepare_for_update(new, old)
        normalize_data_sources(new.setdefault("spec", {}))

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_persistent_volume_claim_spec(_spec(obj), Path("spec"))

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_persistent_volume_claim_update(new, old)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return validate_persistent_volume_claim_status_update(new)

    def warnings_on_create(self, obj: Object) -> list[str]:
        return _storage_class_warning(obj)

    def warnings_on_update(self, new: Object, old: Object) -> list[str]:
        return _storage_class_warning(new)


# --- tables (upstream's printPersistentVolume, printPersistentVolumeClaim) -------------------

#: ``GetAccessModesAsString``: short names, in this order, each once.
_SHORT_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def access_modes_cell(modes: Any) -> str:
    present = set(modes) if isinstance(modes, list) else set()
    return ",".join(short for mode, short in _SHORT_MODES if mode in present)


def _class_cell(obj: Object) -> str:
    """``GetPersistentVolume(Claim)Class``: the beta annotation, else ``storageClassName``."""
    annotations = _dict(_dict(obj.get("metadata")).get("annotations"))
    if BETA_STORAGE_CLASS_ANNOTATION in annotations:
        return str(annotations[BETA_STORAGE_CLASS_ANNOTATION])
    return str(_spec(obj).get("storageClassName") or "")


def _quantity_cell(resources: Any) -> str:
    """``Quantity.String()`` of the ``storage`` entry; a missing one is zero."""
    q = _storage(resources)
    return str(q) if q is not None else "0"


def _phase_cell(obj: Object) -> str:
    if _dict(obj.get("metadata")).get("deletionTimestamp"):
        return "Terminating"
    return str(_status(obj).get("phase") or "")


def _unset(value: Any) -> str:
    return "<unset>" if value is None else str(value)


def _claim_cell(obj: Object) -> str:
    ref = _spec(obj).get("claimRef")
    if ref is None:
        return ""
    ref = _dict(ref)
    return f"{ref.get('namespace') or ''}/{ref.get('name') or ''}"


def _pvc_capacity_cell(obj: Object) -> str:
    if not _spec(obj).get("volumeName"):
        return ""
    return _quantity_cell(_status(obj).get("capacity"))


def _pvc_access_modes_cell(obj: Object) -> str:
    if not _spec(obj).get("volumeName"):
        return ""
    return access_modes_cell(_status(obj).get("accessModes"))


PV_COLUMNS = (
    NAME,
    Column(
        "Capacity",
        "string",
        "How much storage the volume holds.",
        lambda o: _quantity_cell(_spec(o).get("capacity")),
    ),
    Column(
        "Access Modes",
        "string",
        "How the volume may be mounted.",
        lambda o: access_modes_cell(_spec(o).get("accessModes")),
    ),
    Column(
        "Reclaim Policy",
        "string",
        "What happens to the volume once its claim is gone.",
        lambda o: str(_spec(o).get("persistentVolumeReclaimPolicy") or ""),
    ),
    Column("Status", "string", "The phase of the volume.", _phase_cell),
    Column("Claim", "string", "The claim bound to the volume.", _claim_cell),
    Column("StorageClass", "string", "StorageClass of the pv", _class_cell),
    Column(
        "VolumeAttributesClass",
        "string",
        "VolumeAttributesClass of the pv",
        lambda o: _unset(_spec(o).get("volumeAttributesClassName")),
    ),
    Column(
        "Reason",
        "string",
        "Why the volume is in its phase.",
        lambda o: str(_status(o).get("reason") or ""),
    ),
    AGE,
    Column(
        "VolumeMode",
        "string",
        "Whether the volume is a filesystem or a raw block device.",
        lambda o: _unset(_spec(o).get("volumeMode")),
        priority=1,
    ),
)

PVC_COLUMNS = (
    NAME,
    Column("Status", "string", "The phase of the claim.", _phase_cell),
    Column(
        "Volume",
        "string",
        "The volume bound to the claim.",
        lambda o: str(_spec(o).get("volumeName") or ""),
    ),
    Column("Capacity", "string", "How much storage the bound volume holds.", _pvc_capacity_cell),
    Column(
        "Access Modes", "string", "How the bound volume may be mounted.", _pvc_access_modes_cell
    ),
    Column("StorageClass", "string", "StorageClass of the pvc", _class_cell),
    Column(
        "VolumeAttributesClass",
        "string",
        "VolumeAttributesClass of the pvc",
        lambda o: _unset(_spec(o).get("volumeAttributesClassName")),
    ),
    AGE,
    Column(
        "VolumeMode",
        "string",
        "Whether the claim asks for a filesystem or a raw block device.",
        lambda o: _unset(_spec(o).get("volumeMode")),
        priority=1,
    ),
)


def resources() -> list[Resource]:
    """The core/v1 PersistentVolume and PersistentVolumeClaim resources."""
    return [
        core_resource(
            "PersistentVolume",
            "persistentvolumes",
            PersistentVolume,
            PersistentVolumeStrategy(),
            default_persistent_volume,
            namespaced=False,
            short_names=("pv",),
            subresources=("status",),
            columns=PV_COLUMNS,
        ),
        core_resource(
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            PersistentVolumeClaim,
            PersistentVolumeClaimStrategy(),
            default_persistent_volume_claim,
            short_names=("pvc",),
            subresources=("status",),
            columns=PVC_COLUMNS,
        ),
    ]
