"""storage.k8s.io: defaulting, validation, strategies and printer columns.

Pure functions over plain hub (v1) dicts, shared by v1 and the deprecated
v1beta1 (same fields, same defaults).  Defaults follow upstream's
``pkg/apis/storage/v1/defaults.go``; validation ``pkg/apis/storage/validation``
with its messages; the strategies ``pkg/registry/storage/*/strategy.go``;
the columns ``pkg/printers/internalversion/printers.go`` (all at 1.33).

Two fields depend on feature gates the server may have off at an emulated
release: ``CSIDriver.spec.seLinuxMount`` (SELinuxMountReadWriteOncePod) is
neither defaulted nor required then, and ``CSIDriver.spec.storageCapacity``
likewise before CSIStorageCapacity was on.  Dropping gated fields on writes is
the generic field-lifecycle policy's job; the ``/status`` of a VolumeAttachment
drops ``errorCode`` here, as upstream's status strategy does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    GoSyntax,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from kapi.apimachinery.gotext import go_quote
from kapi.apimachinery.quantity import QuantityError, parse_quantity
from kapi.apimachinery.unstructured import Object
from kapi.features import FeatureGate
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.meta import NAME_DOC

GROUP = "storage.k8s.io"
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
BETA_DEFAULT_CLASS_ANNOTATION = "storageclass.beta.kubernetes.io/is-default-class"

RECLAIM_DELETE, RECLAIM_RETAIN = "Delete", "Retain"
BINDING_IMMEDIATE, BINDING_WAIT = "Immediate", "WaitForFirstConsumer"
#: ``sets.NewString(...).List()``: sorted.
SUPPORTED_RECLAIM_POLICIES = (RECLAIM_DELETE, RECLAIM_RETAIN)
SUPPORTED_BINDING_MODES = (BINDING_IMMEDIATE, BINDING_WAIT)
SUPPORTED_FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_PERSISTENT, LIFECYCLE_EPHEMERAL = "Persistent", "Ephemeral"
LIFECYCLE_MODES = (LIFECYCLE_PERSISTENT, LIFECYCLE_EPHEMERAL)

MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * 1024
MAX_ATTACHMENT_METADATA_SIZE = 256 * 1024
MAX_VOLUME_ERROR_MESSAGE = 1024
#: The CSINode strategy always allows the longer node IDs (``AllowLongNodeID``).
MAX_NODE_ID_LENGTH = 256
MAX_CSI_DRIVER_NAME = 63
MIN_TOKEN_SECONDS = 10 * 60
MAX_TOKEN_SECONDS = 1 << 32
EXACTLY_ONE_SOURCE = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"

SELINUX_GATE = "SELinuxMountReadWriteOncePod"
CAPACITY_GATE = "CSIStorageCapacity"
ALLOCATABLE_GATE = "MutableCSINodeAllocatableCount"


def _spec(obj: Object) -> Object:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


# --- defaulting (SetDefaults_* of storage/v1 and storage/v1beta1) ----------------------------


def default_storage_class(obj: Object) -> None:
    if obj.get("reclaimPolicy") is None:
        obj["reclaimPolicy"] = RECLAIM_DELETE
    if obj.get("volumeBindingMode") is None:
        obj["volumeBindingMode"] = BINDING_IMMEDIATE


def csi_driver_defaulter(gates: FeatureGate) -> Callable[[Object], None]:
    """``SetDefaults_CSIDriver``; the gated fields only while their gate is on."""
    selinux = gates.enabled(SELINUX_GATE)
    capacity = gates.enabled(CAPACITY_GATE)

    def default(obj: Object) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            spec = obj["spec"] = {}
        if spec.get("attachRequired") is None:
            spec["attachRequired"] = True
        if spec.get("podInfoOnMount") is None:
            spec["podInfoOnMount"] = False
        if capacity and spec.get("storageCapacity") is None:
            spec["storageCapacity"] = False
        if spec.get("fsGroupPolicy") is None:
            spec["fsGroupPolicy"] = "ReadWriteOnceWithFSType"
        if not spec.get("volumeLifecycleModes"):
            spec["volumeLifecycleModes"] = [LIFECYCLE_PERSISTENT]
        if spec.get("requiresRepublish") is None:
            spec["requiresRepublish"] = False
        if selinux and spec.get("seLinuxMount") is None:
            spec["seLinuxMount"] = False

    return default


# --- shared checks ---------------------------------------------------------------------------


def _go_lower(text: str) -> str:
    return "".join(c.lower() if "A" <= c <= "Z" else c for c in text)


def validate_csi_driver_name(name: str, path: Path) -> list[FieldError]:
    """Core ``ValidateCSIDriverName``: required, at most 63 bytes, a DNS subdomain."""
    errs: list[FieldError] = []
    if not name:
        errs.append(required(path))
    if len(name.encode()) > MAX_CSI_DRIVER_NAME:
        errs.append(too_long(path, name, MAX_CSI_DRIVER_NAME))
    errs += [invalid(path, name, m) for m in validation.is_dns1123_subdomain(_go_lower(name))]
    return errs


def _subdomain_errors(value: str, path: Path) -> list[FieldError]:
    return [invalid(path, value, m) for m in validation.name_is_dns_subdomain(value, False)]


#: Upstream's ``pkg/api/node`` table of deprecated node labels and what replaces them.
DEPRECATED_NODE_LABELS = {
    "beta.kubernetes.io/arch": 'deprecated since v1.14; use "kubernetes.io/arch" instead',
    "beta.kubernetes.io/os": 'deprecated since v1.14; use "kubernetes.io/os" instead',
    "failure-domain.beta.kubernetes.io/region": (
        'deprecated since v1.17; use "topology.kubernetes.io/region" instead'
    ),
    "failure-domain.beta.kubernetes.io/zone": (
        'deprecated since v1.17; use "topology.kubernetes.io/zone" instead'
    ),
    "beta.kubernetes.io/instance-type": (
        'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead'
    ),
}


def storage_class_warnings(obj: Object) -> list[str]:
    """``GetWarningsForStorageClass``: deprecated node labels in ``allowedTopologies``."""
    warnings: list[str] = []
    for i, term in enumerate(obj.get("allowedTopologies") or ()):
        for j, req in enumerate((term or {}).get("matchLabelExpressions") or ()):
            message = DEPRECATED_NODE_LABELS.get((req or {}).get("key") or "")
            if message is not None:
                at = Path("allowedTopologies").index(i).child("matchLabelExpressions").index(j)
                warnings.append(f"{at.child('key')}: {message}")
    return warnings


def node_selector_warnings(selector: Any, path: Path) -> list[str]:
    """``GetWarningsForNodeSelector``: deprecated node labels in a label selector."""
    if not isinstance(selector, Mapping):
        return []
    warnings: list[str] = []
    for i, expr in enumerate(selector.get("matchExpressions") or ()):
        key = (expr or {}).get("key") or ""
        message = DEPRECATED_NODE_LABELS.get(key)
        if message is not None:
            at = path.child("matchExpressions").index(i).child("key")
            warnings.append(f"{at}: {key} is {message}")
    for label in selector.get("matchLabels") or {}:
        message = DEPRECATED_NODE_LABELS.get(label)
        if message is not None:
            warnings.append(f"{path.child('matchLabels').child(label)}: {message}")
    return warnings


# --- StorageClass ------------------------------------------------------------------------------


def _validate_parameters(params: Any, path: Path) -> list[FieldError]:
    """``validateParameters`` (empty maps allowed for StorageClass)."""
    if not isinstance(params, dict) or not params:
        return []
    if len(params) > MAX_PARAMETERS:
        return [too_long(path, "", MAX_PARAMETERS)]
    errs: list[FieldError] = []
    total = 0
    for key, value in params.items():
        if not key:
            errs.append(invalid(path, key, "field can not be empty."))
        total += len(key.encode()) + len(str(value).encode())
    if total > MAX_PARAMETERS_SIZE:
        errs.append(too_long(path, "", MAX_PARAMETERS_SIZE))
    return errs


def _topology_term(term: Object, path: Path) -> tuple[dict[str, frozenset[str]], list[FieldError]]:
    """Core ``ValidateTopologySelectorTerm``: each requirement's values and key."""
    errs: list[FieldError] = []
    keys: dict[str, frozenset[str]] = {}
    exprs_path = path.child("matchLabelExpressions")
    for i, req in enumerate(term.get("matchLabelExpressions") or ()):
        at = exprs_path.index(i)
        req = req if isinstance(req, dict) else {}
        values = req.get("values") or []
        values_path = at.child("values")
        if not values:
            errs.append(required(values_path))
        seen: set[str] = set()
        for j, value in enumerate(values):
            if value in seen:
                errs.append(duplicate(values_path.index(j), value))
            seen.add(value)
        key = req.get("key") or ""
        errs += validation.validate_label_name(key, at.child("key"))
        if key in keys:
            errs.append(duplicate(at.child("key"), key))
        keys[key] = frozenset(seen)
    return keys, errs


def _validate_allowed_topologies(terms: Any, path: Path) -> list[FieldError]:
    """``validateAllowedTopologies``.

    Upstream compares each term's requirements with every earlier term's and,
    through a slice it pre-sizes with empty entries, with as many empty sets as
    there are terms: a term without requirements counts as a duplicate.
    """
    if not isinstance(terms, list) or not terms:
        return []
    errs: list[FieldError] = []
    seen: list[dict[str, frozenset[str]]] = [{} for _ in terms]
    for i, term in enumerate(terms):
        at = path.index(i)
        keys, term_errs = _topology_term(term if isinstance(term, dict) else {}, at)
        errs += term_errs
        errs += [duplicate(at.child("matchLabelExpressions"), "") for t in seen if t == keys]
        seen.append(keys)
    return errs


def validate_storage_class(obj: Object) -> list[FieldError]:
    """``ValidateStorageClass`` without ObjectMeta (the store checks that)."""
    errs: list[FieldError] = []
    provisioner = obj.get("provisioner") or ""
    if not provisioner:
        errs.append(required(Path("provisioner")))
    else:
        errs += [
            invalid(Path("provisioner"), _go_lower(provisioner), m)
            for m in validation.is_qualified_name(_go_lower(provisioner))
        ]
    errs += _validate_parameters(obj.get("parameters"), Path("parameters"))
    reclaim = obj.get("reclaimPolicy")
    if reclaim and reclaim not in SUPPORTED_RECLAIM_POLICIES:
        errs.append(not_supported(Path("reclaimPolicy"), reclaim, SUPPORTED_RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        errs.append(required(Path("volumeBindingMode")))
    elif mode not in SUPPORTED_BINDING_MODES:
        errs.append(not_supported(Path("volumeBindingMode"), mode, SUPPORTED_BINDING_MODES))
    errs += _validate_allowed_topologies(obj.get("allowedTopologies"), Path("allowedTopologies"))
    return errs


def validate_storage_class_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateStorageClassUpdate``: parameters, provisioner, policies are immutable.

    ``parameters`` are compared as ``reflect.DeepEqual`` does: no map and an
    empty one differ.
    """
    errs: list[FieldError] = []
    if new.get("parameters") != old.get("parameters"):
        errs.append(forbidden(Path("parameters"), "updates to parameters are forbidden."))
    if (new.get("provisioner") or "") != (old.get("provisioner") or ""):
        errs.append(forbidden(Path("provisioner"), "updates to provisioner are forbidden."))
    if (new.get("reclaimPolicy") or "") != (old.get("reclaimPolicy") or ""):
        errs.append(forbidden(Path("reclaimPolicy"), "updates to reclaimPolicy are forbidden."))
    errs += validation.validate_immutable_field(
        new.get("volumeBindingMode"), old.get("volumeBindingMode"), Path("volumeBindingMode")
    )
    return errs


class StorageClassStrategy(Strategy):
    """Upstream ``storageClassStrategy``: no status, no generation."""

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_storage_class(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_storage_class(new) + validate_storage_class_update(new, old)

    def warnings_on_create(self, obj: Object) -> list[str]:
        return storage_class_warnings(obj)

    def warnings_on_update(self, new: Object, old: Object) -> list[str]:
        return storage_class_warnings(new)


def is_default_class(obj: Object) -> bool:
    """``storageutil.IsDefaultAnnotation``: the GA or the beta annotation says "true"."""
    annotations = obj.get("metadata", {}).get("annotations") or {}
    return (
        annotations.get(DEFAULT_CLASS_ANNOTATION) == "true"
        or annotations.get(BETA_DEFAULT_CLASS_ANNOTATION) == "true"
    )


def _class_name_cell(obj: Object) -> str:
    name: str = obj.get("metadata", {}).get("name", "")
    return name + " (default)" if is_default_class(obj) else name


STORAGE_CLASS_COLUMNS = (
    Column("Name", "string", NAME_DOC, _class_name_cell, format="name"),
    Column(
        "Provisioner",
        "string",
        "The volume plugin or CSI driver that provisions volumes of this class.",
        lambda o: o.get("provisioner", ""),
    ),
    Column(
        "ReclaimPolicy",
        "string",
        "What happens to a provisioned volume once its claim is gone.",
        lambda o: o.get("reclaimPolicy") or RECLAIM_DELETE,
    ),
    Column(
        "VolumeBindingMode",
        "string",
        "When claims of this class are bound and provisioned.",
        lambda o: o.get("volumeBindingMode") or BINDING_IMMEDIATE,
    ),
    Column(
        "AllowVolumeExpansion",
        "string",
        "Whether claims of this class may grow.",
        lambda o: bool(o.get("allowVolumeExpansion")),
    ),
    AGE,
)


# --- VolumeAttachment --------------------------------------------------------------------------


def _go_string_ptr(value: Any) -> str:
    return "(*string)(nil)" if value is None else "(*string)(0xc000000000)"


def _attachment_spec_go(spec: Object) -> GoSyntax:
    """The internal ``VolumeAttachmentSpec`` as ``%#v`` prints it (pointers as addresses)."""
    source = spec.get("source") or {}
    inline = source.get("inlineVolumeSpec")
    inline_text = (
        "(*core.PersistentVolumeSpec)(nil)"
        if inline is None
        else "(*core.PersistentVolumeSpec)(0xc000000000)"
    )
    return GoSyntax(
        f"storage.VolumeAttachmentSpec{{Attacher:{go_quote(spec.get('attacher') or '')}, "
        "Source:storage.VolumeAttachmentSource{PersistentVolumeName:"
        f"{_go_string_ptr(source.get('persistentVolumeName'))}, InlineVolumeSpec:{inline_text}}}, "
        f"NodeName:{go_quote(spec.get('nodeName') or '')}}}"
    )


def _validate_attachment_source(source: Object, path: Path) -> list[FieldError]:
    inline, pv_name = source.get("inlineVolumeSpec"), source.get("persistentVolumeName")
    if inline is None and pv_name is None:
        return [required(path, EXACTLY_ONE_SOURCE)]
    if inline is not None and pv_name is not None:
        return [forbidden(path, EXACTLY_ONE_SOURCE)]
    if pv_name is not None and not pv_name:
        detail = "must specify non empty persistentVolumeName"
        return [required(path.child("persistentVolumeName"), detail)]
    # An inline spec is a PersistentVolumeSpec, whose rules kapi does not check yet.
    return []


def _validate_volume_error(error: Any, path: Path) -> list[FieldError]:
    if not isinstance(error, dict):
        return []
    errs: list[FieldError] = []
    if len((error.get("message") or "").encode()) > MAX_VOLUME_ERROR_MESSAGE:
        # Upstream states the metadata's limit here, not the message's.
        errs.append(too_long(path.child("message"), "", MAX_ATTACHMENT_METADATA_SIZE))
    code = error.get("errorCode")
    if isinstance(code, int) and code < 0:
        detail = validation.inclusive_range_error(0, 2**31 - 1)
        errs.append(invalid(path.child("errorCode"), code, detail))
    return errs


def validate_volume_attachment(obj: Object) -> list[FieldError]:
    """``ValidateVolumeAttachment`` without ObjectMeta: spec and status."""
    spec, status = _spec(obj), obj.get("status") or {}
    path = Path("spec")
    errs: list[FieldError] = []
    if not spec.get("attacher"):
        errs.append(required(path.child("attacher")))
    errs += _validate_attachment_source(spec.get("source") or {}, path.child("source"))
    node = spec.get("nodeName") or ""
    errs += _subdomain_errors(node, path.child("nodeName"))
    metadata = status.get("attachmentMetadata") or {}
    size = sum(len(k.encode()) + len(str(v).encode()) for k, v in metadata.items())
    if size > MAX_ATTACHMENT_METADATA_SIZE:
        errs.append(
            too_long(Path("status", "attachmentMetadata"), "", MAX_ATTACHMENT_METADATA_SIZE)
        )
    for name in ("attachError", "detachError"):
        errs += _validate_volume_error(status.get(name), Path("status", name))
    return errs


def validate_volume_attachment_v1(obj: Object) -> list[FieldError]:
    """``ValidateVolumeAttachmentV1``: the stricter checks of new v1 attachments."""
    spec = _spec(obj)
    errs = validate_csi_driver_name(spec.get("attacher") or "", Path("spec.attacher"))
    pv_name = (spec.get("source") or {}).get("persistentVolumeName")
    if pv_name is not None:
        errs += _subdomain_errors(pv_name, Path("spec.source.persistentVolumeName"))
    return errs


def validate_volume_attachment_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateVolumeAttachmentUpdate``: the spec is read-only.

    The strategy's update also runs ``ValidateVolumeAttachment`` before this one
    does; the repeats are dropped here as the message of a 422 drops them.
    """
    errs = validate_volume_attachment(new)
    if _spec(new) != _spec(old):
        errs.append(invalid(Path("spec"), _attachment_spec_go(_spec(new)), "field is immutable"))
    return errs


def _drop_new_error_codes(new: Object, old: Object) -> None:
    """The status strategy keeps ``errorCode`` only where the old status had one."""
    status, old_status = new.get("status") or {}, old.get("status") or {}
    for name in ("attachError", "detachError"):
        error = status.get(name)
        old_error = old_status.get(name)
        if isinstance(error, dict) and (
            not isinstance(old_error, dict) or old_error.get("errorCode") is None
        ):
            error.pop("errorCode", None)


class VolumeAttachmentStrategy(Strategy):
    """Upstream ``volumeAttachmentStrategy`` and its status strategy."""

    has_status = True
    allow_unconditional_update = False

    def __init__(self, gates: FeatureGate) -> None:
        self._error_codes = gates.enabled(ALLOCATABLE_GATE)

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"attached": False}  # the zero VolumeAttachmentStatus

    def validate(self, obj: Object) -> list[FieldError]:
        return _unique(validate_volume_attachment(obj) + validate_volume_attachment_v1(obj))

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return _unique(validate_volume_attachment_update(new, old))

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        if subresource == "status" and not self._error_codes:
            _drop_new_error_codes(new, old)
        return self.validate_update(new, old)


def _unique(errs: list[FieldError]) -> list[FieldError]:
    """One of each repeated error, as ``ErrorList.ToAggregate`` keeps one of each message."""
    out: list[FieldError] = []
    seen: set[str] = set()
    for err in errs:
        message = err.error_message()
        if message not in seen:
            seen.add(message)
            out.append(err)
    return out


VOLUME_ATTACHMENT_COLUMNS = (
    NAME,
    Column(
        "Attacher",
        "string",
        "The CSI driver that attaches the volume.",
        lambda o: _spec(o).get("attacher", ""),
        format="name",
    ),
    Column(
        "PV",
        "string",
        "The PersistentVolume attached.",
        lambda o: (_spec(o).get("source") or {}).get("persistentVolumeName") or "",
    ),
    Column("Node", "string", "The node attached to.", lambda o: _spec(o).get("nodeName", "")),
    Column(
        "Attached",
        "boolean",
        "Whether the attach operation succeeded.",
        lambda o: bool((o.get("status") or {}).get("attached")),
    ),
    AGE,
)


# --- CSIDriver ---------------------------------------------------------------------------------


def _go_modes(modes: Any) -> GoSyntax:
    if modes is None:
        return GoSyntax("[]storage.VolumeLifecycleMode(nil)")
    return GoSyntax("[]storage.VolumeLifecycleMode{" + ", ".join(map(go_quote, modes)) + "}")


def validate_csi_driver_spec(spec: Object, gates: FeatureGate) -> list[FieldError]:
    """``validateCSIDriverSpec`` (upstream spells the first path ``attachedRequired``)."""
    path = Path("spec")
    errs: list[FieldError] = []
    if spec.get("attachRequired") is None:
        errs.append(required(path.child("attachedRequired")))
    if spec.get("podInfoOnMount") is None:
        errs.append(required(path.child("podInfoOnMount")))
    if spec.get("storageCapacity") is None and gates.enabled(CAPACITY_GATE):
        errs.append(required(path.child("storageCapacity")))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in SUPPORTED_FS_GROUP_POLICIES:
        errs.append(not_supported(path.child("fsGroupPolicy"), policy, SUPPORTED_FS_GROUP_POLICIES))
    audiences: set[str] = set()
    for i, request in enumerate(spec.get("tokenRequests") or ()):
        at = path.child("tokenRequests").index(i)
        request = request if isinstance(request, dict) else {}
        audience = request.get("audience") or ""
        if audience in audiences:
            errs.append(duplicate(at.child("audience"), audience))
            continue
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if seconds is None:
            continue
        if seconds < MIN_TOKEN_SECONDS:
            detail = "may not specify a duration less than 10 minutes"
            errs.append(invalid(at.child("expirationSeconds"), seconds, detail))
        if seconds > MAX_TOKEN_SECONDS:
            detail = "may not specify a duration larger than 2^32 seconds"
            errs.append(invalid(at.child("expirationSeconds"), seconds, detail))
    for mode in spec.get("volumeLifecycleModes") or ():
        if mode not in LIFECYCLE_MODES:
            errs.append(not_supported(path.child("volumeLifecycleModes"), mode, LIFECYCLE_MODES))
    if spec.get("seLinuxMount") is None and gates.enabled(SELINUX_GATE):
        errs.append(required(path.child("seLinuxMount")))
    period = spec.get("nodeAllocatableUpdatePeriodSeconds")
    if isinstance(period, int) and period < 10:
        detail = "must be greater than or equal to 10 seconds"
        errs.append(invalid(path.child("nodeAllocatableUpdatePeriodSeconds"), period, detail))
    return errs


class CSIDriverStrategy(Strategy):
    """Upstream ``csiDriverStrategy``: spec changes bump the generation; attachRequired and
    volumeLifecycleModes are immutable."""

    has_generation = True
    allow_unconditional_update = False

    def __init__(self, gates: FeatureGate) -> None:
        self._gates = gates

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_csi_driver_spec(_spec(obj), self._gates)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        spec, old_spec = _spec(new), _spec(old)
        errs = validate_csi_driver_spec(spec, self._gates)
        errs += validation.validate_immutable_field(
            spec.get("attachRequired"),
            old_spec.get("attachRequired"),
            Path("spec", "attachedRequired"),
        )
        modes, old_modes = spec.get("volumeLifecycleModes"), old_spec.get("volumeLifecycleModes")
        if (modes or None) != (old_modes or None):
            errs.append(
                invalid(
                    Path("spec", "volumeLifecycleModes"),
                    _go_modes(modes),
                    validation.FIELD_IMMUTABLE_ERROR_MSG,
                )
            )
        return errs


def _bool_cell(name: str, unset: bool) -> Callable[[Object], bool]:
    def cell(obj: Object) -> bool:
        value = _spec(obj).get(name)
        return unset if value is None else bool(value)

    return cell


def _token_requests_cell(obj: Object) -> str:
    requests = _spec(obj).get("tokenRequests")
    if requests is None:
        return "<unset>"
    return ",".join((r or {}).get("audience") or "" for r in requests)


def _modes_cell(obj: Object) -> str:
    return ",".join(_spec(obj).get("volumeLifecycleModes") or ()) or "<none>"


CSI_DRIVER_COLUMNS = (
    NAME,
    Column(
        "AttachRequired",
        "boolean",
        "Whether volumes of this driver need attaching before they are mounted.",
        _bool_cell("attachRequired", True),
    ),
    Column(
        "PodInfoOnMount",
        "boolean",
        "Whether the driver is told about the pod when mounting.",
        _bool_cell("podInfoOnMount", False),
    ),
    Column(
        "StorageCapacity",
        "boolean",
        "Whether the scheduler considers the driver's published capacity.",
        _bool_cell("storageCapacity", False),
    ),
    Column(
        "TokenRequests",
        "string",
        "Audiences of the service account tokens passed to the driver.",
        _token_requests_cell,
    ),
    Column(
        "RequiresRepublish",
        "boolean",
        "Whether volumes are mounted again periodically.",
        _bool_cell("requiresRepublish", False),
    ),
    Column("Modes", "string", "The volume lifecycle modes the driver supports.", _modes_cell),
    AGE,
)


# --- CSINode -----------------------------------------------------------------------------------


def _go_driver(driver: Object) -> GoSyntax:
    keys = driver.get("topologyKeys")
    keys_text = (
        "[]string(nil)" if keys is None else "[]string{" + ", ".join(map(go_quote, keys)) + "}"
    )
    allocatable = (
        "(*storage.VolumeNodeResources)(nil)"
        if driver.get("allocatable") is None
        else "(*storage.VolumeNodeResources)(0xc000000000)"
    )
    return GoSyntax(
        f"storage.CSINodeDriver{{Name:{go_quote(driver.get('name') or '')}, "
        f"NodeID:{go_quote(driver.get('nodeID') or '')}, TopologyKeys:{keys_text}, "
        f"Allocatable:{allocatable}}}"
    )


def _validate_csi_node_driver(driver: Object, names: set[str], path: Path) -> list[FieldError]:
    name = driver.get("name") or ""
    errs = validate_csi_driver_name(name, path.child("name"))
    node_id = driver.get("nodeID") or ""
    if not node_id:
        errs.append(required(path.child("nodeID")))
    if len(node_id.encode()) > MAX_NODE_ID_LENGTH:
        detail = f"must be {MAX_NODE_ID_LENGTH} characters or less"
        errs.append(invalid(path.child("nodeID"), node_id, detail))
    count = (driver.get("allocatable") or {}).get("count")
    if isinstance(count, int):
        errs += validation.validate_nonnegative_field(count, path.child("allocatable", "count"))
    if name in names:
        errs.append(duplicate(path.child("name"), name))
    names.add(name)
    keys: set[str] = set()
    for key in driver.get("topologyKeys") or ():
        # Upstream reports these at the driver's own path.
        if not key:
            errs.append(required(path))
        if key in keys:
            errs.append(duplicate(path, key))
        keys.add(key)
        errs += [invalid(path, key, m) for m in validation.is_qualified_name(key)]
    return errs


def validate_csi_node(obj: Object) -> list[FieldError]:
    """``ValidateCSINode`` without ObjectMeta (``AllowLongNodeID``, as the strategy sets)."""
    errs: list[FieldError] = []
    names: set[str] = set()
    drivers_path = Path("spec", "drivers")
    for i, driver in enumerate(_spec(obj).get("drivers") or ()):
        errs += _validate_csi_node_driver(
            driver if isinstance(driver, dict) else {}, names, drivers_path.index(i)
        )
    return errs


class CSINodeStrategy(Strategy):
    """Upstream ``csiNodeStrategy``: a driver entry may not change once registered
    (but for its allocatable count while MutableCSINodeAllocatableCount is on)."""

    allow_unconditional_update = False

    def __init__(self, gates: FeatureGate) -> None:
        self._mutable_allocatable = gates.enabled(ALLOCATABLE_GATE)

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_csi_node(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        errs = validate_csi_node(new)
        for old_driver in _spec(old).get("drivers") or ():
            for new_driver in _spec(new).get("drivers") or ():
                if (old_driver or {}).get("name") != (new_driver or {}).get("name"):
                    continue
                a, b = dict(new_driver or {}), dict(old_driver or {})
                if self._mutable_allocatable:
                    a.pop("allocatable", None)
                    b.pop("allocatable", None)
                if a != b:
                    errs.append(
                        invalid(
                            Path("spec", "drivers"),
                            _go_driver(a),
                            validation.FIELD_IMMUTABLE_ERROR_MSG,
                        )
                    )
        return _unique(errs)


CSI_NODE_COLUMNS = (
    NAME,
    Column(
        "Drivers",
        "integer",
        "Drivers indicates the number of CSI drivers registered on the node",
        lambda o: len(_spec(o).get("drivers") or ()),
    ),
    AGE,
)


# --- CSIStorageCapacity ------------------------------------------------------------------------


def _negative(text: Any) -> bool:
    try:
        return parse_quantity(str(text)).amount < Decimal(0)
    except QuantityError:
        return False


def validate_csi_storage_capacity(
    obj: Object, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """``ValidateCSIStorageCapacity`` without ObjectMeta."""
    errs = validation.validate_label_selector(
        obj.get("nodeTopology"),
        Path("nodeTopology"),
        allow_invalid_label_value=allow_invalid_label_value,
    )
    errs += _subdomain_errors(obj.get("storageClassName") or "", Path("storageClassName"))
    capacity = obj.get("capacity")
    if capacity is not None and _negative(capacity):
        errs.append(invalid(Path("capacity"), str(capacity), validation.IS_NEGATIVE_ERROR_MSG))
    return errs


def _go_selector(selector: Any) -> GoSyntax:
    if not isinstance(selector, Mapping):
        return GoSyntax("(*v1.LabelSelector)(nil)")
    labels = selector.get("matchLabels")
    labels_text = (
        "map[string]string(nil)"
        if not labels
        else "map[string]string{"
        + ", ".join(f"{go_quote(k)}:{go_quote(v)}" for k, v in sorted(labels.items()))
        + "}"
    )
    exprs = selector.get("matchExpressions")
    exprs_text = (
        "[]v1.LabelSelectorRequirement(nil)"
        if not exprs
        else "[]v1.LabelSelectorRequirement{"
        + ", ".join(
            f"v1.LabelSelectorRequirement{{Key:{go_quote(e.get('key') or '')}, "
            f"Operator:{go_quote(e.get('operator') or '')}, Values:"
            + (
                "[]string{" + ", ".join(map(go_quote, e["values"])) + "}"
                if e.get("values")
                else "[]string(nil)"
            )
            + "}"
            for e in exprs
        )
        + "}"
    )
    return GoSyntax(f"v1.LabelSelector{{MatchLabels:{labels_text}, MatchExpressions:{exprs_text}}}")


class CSIStorageCapacityStrategy(Strategy):
    """Upstream ``csiStorageCapacityStrategy``: nodeTopology and storageClassName are
    immutable; selector label values already invalid may stay so."""

    allow_unconditional_update = False

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_csi_storage_capacity(obj)

    def warnings_on_create(self, obj: Object) -> list[str]:
        return node_selector_warnings(obj.get("nodeTopology"), Path("nodeTopology"))

    def warnings_on_update(self, new: Object, old: Object) -> list[str]:
        return node_selector_warnings(new.get("nodeTopology"), Path("nodeTopology"))

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        old_selector = old.get("nodeTopology")
        grandfathered = bool(validation.validate_label_selector(old_selector, Path("selector")))
        errs = validate_csi_storage_capacity(new, allow_invalid_label_value=grandfathered)
        if _semantic_selector(new.get("nodeTopology")) != _semantic_selector(old_selector):
            errs.append(
                invalid(
                    Path("nodeTopology"),
                    _go_selector(new.get("nodeTopology")),
                    validation.FIELD_IMMUTABLE_ERROR_MSG,
                )
            )
        class_name = new.get("storageClassName") or ""
        if class_name != (old.get("storageClassName") or ""):
            errs.append(
                invalid(Path("storageClassName"), class_name, validation.FIELD_IMMUTABLE_ERROR_MSG)
            )
        return errs


def _semantic_selector(selector: Any) -> Any:
    """``apiequality.Semantic.DeepEqual``: empty and missing lists and maps are alike."""
    if not isinstance(selector, Mapping):
        return None
    return (
        dict(selector.get("matchLabels") or {}),
        [
            (e.get("key") or "", e.get("operator") or "", list(e.get("values") or ()))
            for e in selector.get("matchExpressions") or ()
        ],
    )


CSI_STORAGE_CAPACITY_COLUMNS = (
    NAME,
    Column(
        "StorageClassName",
        "string",
        "The StorageClass the capacity was reported for.",
        lambda o: o.get("storageClassName", ""),
    ),
    Column(
        "Capacity",
        "string",
        "The capacity reported, or <unset>.",
        lambda o: "<unset>" if o.get("capacity") is None else str(o["capacity"]),
    ),
)
