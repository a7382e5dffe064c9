"""The defaults kube-apiserver gives a pod spec, wherever one appears.

One defaulter serves Pods and every pod template (PodTemplate,
ReplicationController, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
CronJob), as upstream's generated ``SetObjectDefaults_*`` functions all walk
the same ``PodSpec`` with the hand-written ``SetDefaults_*`` functions of
``pkg/apis/core/v1/defaults.go`` and the ``+default`` markers of
``k8s.io/api/core/v1``.  Objects are plain JSON dicts, defaulted in place.

What only a Pod gets (upstream's ``SetDefaults_Pod``): requests copied from
limits, ``enableServiceLinks: true`` and host ports under host networking.
Upstream keeps them out of templates on purpose, so a template read back
from kapi carries exactly what kube-apiserver's does.

A value of the wrong JSON type (a string where a list belongs, say) is left
for validation to report: the defaulter never raises.
"""

from __future__ import annotations

import re
from decimal import ROUND_UP, Decimal
from functools import lru_cache
from typing import Any, Final

from kapi.apimachinery.quantity import Quantity, QuantityError, parse_quantity
from kapi.apimachinery.unstructured import Object

DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: Final = 30
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
TERMINATION_MESSAGE_PATH_DEFAULT: Final = "/dev/termination-log"
#: 0644, the mode of files projected from Secrets, ConfigMaps, the downward API.
DEFAULT_FILE_MODE: Final = 0o644
#: A projected service account token lives an hour unless asked otherwise.
DEFAULT_TOKEN_EXPIRATION_SECONDS: Final = 3600


def _dict(value: Any) -> Object | None:
    return value if isinstance(value, dict) else None


def _dicts(value: Any) -> list[Object]:
    """The objects of a JSON list (anything else is validation's to refuse)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def _set_if_empty(obj: Object, key: str, value: Any) -> None:
    """A Go string field: empty and absent are the same zero value."""
    if not obj.get(key):
        obj[key] = value


def _set_if_missing(obj: Object, key: str, value: Any) -> None:
    """A Go pointer field: only ``nil`` (absent or ``null``) is defaulted."""
    if obj.get(key) is None:
        obj[key] = value


def _set_if_zero(obj: Object, key: str, value: int) -> None:
    """A Go number field without a pointer: 0 and absent are the same."""
    if not obj.get(key):
        obj[key] = value


# --- image names (``k8s.io/kubernetes/pkg/util/parsers.ParseImageName``) --------------------

# The grammar of ``github.com/distribution/reference``.
_ALNUM = "[a-z0-9]+"
_SEPARATOR = "(?:[._]|__|[-]+)"
_PATH_COMPONENT = f"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*"
_IPV6 = r"\[(?:[a-fA-F0-9:]+)\]"
_DOMAIN = f"(?:{_DOMAIN_NAME}|{_IPV6})(?::[0-9]+)?"
_NAME = f"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}"
_REFERENCE_RE: Final = re.compile(f"({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?")
_IDENTIFIER_RE: Final = re.compile("[a-f0-9]{64}")
_DIGEST_HEX_LENGTHS: Final = {"sha256": 64, "sha384": 96, "sha512": 128}
_NAME_TOTAL_LENGTH_MAX: Final = 255


def _valid_digest(digest: str) -> bool:
    algorithm, _, hex_part = digest.partition(":")
    length = _DIGEST_HEX_LENGTHS.get(algorithm)
    return length is not None and len(hex_part) == length and hex_part == hex_part.lower()


@lru_cache(maxsize=1024)
def image_tag(image: str) -> str:
    """The tag ``ParseImageName`` finds: ``latest`` when there is neither tag nor digest,
    and ``""`` for a digest alone or for text that is not an image reference.

    Remembered per image: every write of a pod template defaults each container's
    pull policy from it, and a cluster runs few distinct images."""
    if not image or _IDENTIFIER_RE.fullmatch(image):
        return ""
    m = _REFERENCE_RE.fullmatch(image)
    if m is None:
        return ""  # includes upper case in the repository path
    name, tag, digest = m.group(1), m.group(2) or "", m.group(3) or ""
    if len(name) > _NAME_TOTAL_LENGTH_MAX or (digest and not _valid_digest(digest)):
        return ""
    if not tag and not digest:
        return "latest"
    return tag


def default_pull_policy(image: str) -> str:
    """``Always`` for ``:latest`` (or no tag at all), else ``IfNotPresent``."""
    return "Always" if image_tag(image) == "latest" else "IfNotPresent"


# --- resource lists (``SetDefaults_ResourceList``) -------------------------------------------

_MILLI: Final = Decimal("0.001")


def round_up_to_milli(value: Any) -> Any:
    """A quantity with more precision than a thousandth, rounded up to one.

    Values that need no rounding keep their text; text that is no quantity is
    returned as is, for validation (or decoding) to refuse.
    """
    if not isinstance(value, str):
        return value
    rounded = _rounded_to_milli(value)
    return value if rounded is None else rounded


@lru_cache(maxsize=4096)
def _rounded_to_milli(value: str) -> str | None:
    """The rounded text of quantity ``value``; ``None`` where it stays as sent.

    Remembered per text: every write of a pod template rounds each of its
    quantities, and clients send the same few (``100m``, ``128Mi``)."""
    try:
        q = parse_quantity(value)
    except QuantityError:
        return None
    exponent = q.amount.as_tuple().exponent
    if not isinstance(exponent, int) or exponent >= -3:
        return None
    rounded = q.amount.quantize(_MILLI, rounding=ROUND_UP)
    if rounded == q.amount:
        return None
    return str(Quantity(rounded, q.format))


def _default_resource_list(resources: Any) -> None:
    if isinstance(resources, dict):
        for name, value in resources.items():
            resources[name] = round_up_to_milli(value)


def _default_resource_requirements(requirements: Any) -> None:
    req = _dict(requirements)
    if req is not None:
        _default_resource_list(req.get("limits"))
        _default_resource_list(req.get("requests"))


# --- containers ------------------------------------------------------------------------------


def _default_http_get(action: Any) -> None:
    http = _dict(action)
    if http is not None:
        _set_if_empty(http, "path", "/")
        _set_if_empty(http, "scheme", "HTTP")


def _default_probe(value: Any) -> None:
    probe = _dict(value)
    if probe is None:
        return
    _set_if_zero(probe, "timeoutSeconds", 1)
    _set_if_zero(probe, "periodSeconds", 10)
    _set_if_zero(probe, "successThreshold", 1)
    _set_if_zero(probe, "failureThreshold", 3)
    _default_http_get(probe.get("httpGet"))
    grpc = _dict(probe.get("grpc"))
    if grpc is not None:
        _set_if_missing(grpc, "service", "")  # ``+default=""`` on a *string


def _default_field_ref(value: Any) -> None:
    ref = _dict(value)
    if ref is not None:
        _set_if_empty(ref, "apiVersion", "v1")


def default_container(container: Object) -> None:
    """``SetDefaults_Container`` and what the generated walk adds below it."""
    if not container.get("imagePullPolicy"):
        image = container.get("image")
        container["imagePullPolicy"] = default_pull_policy(image if isinstance(image, str) else "")
    _set_if_empty(container, "terminationMessagePath", TERMINATION_MESSAGE_PATH_DEFAULT)
    _set_if_empty(container, "terminationMessagePolicy", "File")
    for port in _dicts(container.get("ports")):
        _set_if_empty(port, "protocol", "TCP")
    for env in _dicts(container.get("env")):
        value_from = _dict(env.get("valueFrom"))
        if value_from is not None:
            _default_field_ref(value_from.get("fieldRef"))
    # Not a default but what upstream's encoding always writes: ``resources`` is a struct,
    # not a pointer, so an absent one reads back as ``{}``.
    _set_if_missing(container, "resources", {})
    _default_resource_requirements(container.get("resources"))
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(container.get(probe))
    lifecycle = _dict(container.get("lifecycle"))
    if lifecycle is not None:
        for hook in ("postStart", "preStop"):
            handler = _dict(lifecycle.get(hook))
            if handler is not None:
                _default_http_get(handler.get("httpGet"))


# --- volumes ---------------------------------------------------------------------------------

#: Every source a ``VolumeSource`` may carry; a volume with none becomes an emptyDir.
VOLUME_SOURCES: Final = (
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
)


def _default_downward_api_items(items: Any) -> None:
    for item in _dicts(items):
        _default_field_ref(item.get("fieldRef"))


def _default_pvc_spec(value: Any) -> None:
    spec = _dict(value)
    if spec is None:
        return
    _set_if_missing(spec, "volumeMode", "Filesystem")
    _default_resource_requirements(spec.get("resources"))


def default_volume(volume: Object) -> None:
    """``SetDefaults_Volume`` and the defaults of each source it may hold."""
    if all(volume.get(source) is None for source in VOLUME_SOURCES):
        volume["emptyDir"] = {}
    host_path = _dict(volume.get("hostPath"))
    if host_path is not None:
        _set_if_missing(host_path, "type", "")
    for source in ("secret", "configMap", "downwardAPI", "projected"):
        s = _dict(volume.get(source))
        if s is not None:
            _set_if_missing(s, "defaultMode", DEFAULT_FILE_MODE)
    iscsi = _dict(volume.get("iscsi"))
    if iscsi is not None:
        _set_if_empty(iscsi, "iscsiInterface", "default")
    rbd = _dict(volume.get("rbd"))
    if rbd is not None:
        _set_if_empty(rbd, "pool", "rbd")
        _set_if_empty(rbd, "user", "admin")
        _set_if_empty(rbd, "keyring", "/etc/ceph/keyring")
    downward = _dict(volume.get("downwardAPI"))
    if downward is not None:
        _default_downward_api_items(downward.get("items"))
    azure_disk = _dict(volume.get("azureDisk"))
    if azure_disk is not None:
        _set_if_missing(azure_disk, "cachingMode", "ReadWrite")
        _set_if_missing(azure_disk, "fsType", "ext4")
        _set_if_missing(azure_disk, "readOnly", False)
        _set_if_missing(azure_disk, "kind", "Shared")
    projected = _dict(volume.get("projected"))
    if projected is not None:
        for projection in _dicts(projected.get("sources")):
            inner = _dict(projection.get("downwardAPI"))
            if inner is not None:
                _default_downward_api_items(inner.get("items"))
            token = _dict(projection.get("serviceAccountToken"))
            if token is not None:
                _set_if_missing(token, "expirationSeconds", DEFAULT_TOKEN_EXPIRATION_SECONDS)
    scale_io = _dict(volume.get("scaleIO"))
    if scale_io is not None:
        _set_if_empty(scale_io, "storageMode", "ThinProvisioned")
        _set_if_empty(scale_io, "fsType", "xfs")
    ephemeral = _dict(volume.get("ephemeral"))
    if ephemeral is not None:
        claim_template = _dict(ephemeral.get("volumeClaimTemplate"))
        if claim_template is not None:
            _default_pvc_spec(claim_template.get("spec"))
    image = _dict(volume.get("image"))
    if image is not None and not image.get("pullPolicy"):
        reference = image.get("reference")
        image["pullPolicy"] = default_pull_policy(reference if isinstance(reference, str) else "")


# --- the pod spec ----------------------------------------------------------------------------


def default_pod_spec(spec: Object) -> None:
    """``SetDefaults_PodSpec`` and everything below it, in place.

    This is all a pod template gets; a Pod also gets :func:`default_pod`'s.
    """
    _set_if_empty(spec, "dnsPolicy", "ClusterFirst")
    _set_if_empty(spec, "restartPolicy", "Always")
    _set_if_missing(spec, "securityContext", {})
    _set_if_missing(spec, "terminationGracePeriodSeconds", DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS)
    _set_if_empty(spec, "schedulerName", DEFAULT_SCHEDULER_NAME)
    for volume in _dicts(spec.get("volumes")):
        default_volume(volume)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in _dicts(spec.get(key)):
            default_container(container)
    _default_resource_list(spec.get("overhead"))
    _default_resource_requirements(spec.get("resources"))


def default_pod_template(template: Object) -> None:
    """Defaults ``template.spec`` (a ``PodTemplateSpec``, whose spec is never nil upstream).

    Every kind embeds its template as a struct, so callers default it even when
    absent, except ReplicationController, whose ``spec.template`` is a pointer:
    default it only when present.
    """
    spec = template.get("spec")
    if not isinstance(spec, dict):
        if spec is not None:
            return  # not an object: validation refuses it
        spec = template["spec"] = {}
    default_pod_spec(spec)


def _default_requests_from_limits(containers: Any) -> None:
    for container in _dicts(containers):
        resources = _dict(container.get("resources"))
        if resources is None:
            continue
        limits = _dict(resources.get("limits"))
        if not limits:
            continue
        requests = resources.get("requests")
        if requests is None:
            requests = resources["requests"] = {}
        if isinstance(requests, dict):
            for name, value in limits.items():
                requests.setdefault(name, value)


def default_pod(obj: Object) -> None:
    """``SetObjectDefaults_Pod``: upstream's pod-only rules, then the spec's.

    Requests default to limits for containers and init containers (not
    ephemeral ones), ``enableServiceLinks`` to true, and under
    ``hostNetwork`` every container port without a host port gets its
    container port as one.
    """
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if not isinstance(spec, dict):
        return
    _default_requests_from_limits(spec.get("containers"))
    _default_requests_from_limits(spec.get("initContainers"))
    _set_if_missing(spec, "enableServiceLinks", True)
    if spec.get("hostNetwork") is True:
        for key in ("containers", "initContainers"):
            for container in _dicts(spec.get(key)):
                for port in _dicts(container.get("ports")):
                    if not port.get("hostPort") and port.get("containerPort"):
                        port["hostPort"] = port["containerPort"]
    default_pod_spec(spec)
