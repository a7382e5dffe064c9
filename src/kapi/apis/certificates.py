"""certificates.k8s.io ``CertificateSigningRequest`` in ``v1`` (hub and storage) and ``v1beta1``.

``v1beta1`` (served from 1.6, deprecated in 1.19, removed in 1.22) has v1's
fields; only its defaults differ (``pkg/apis/certificates/v1beta1/defaults.go``):
``usages`` default to digital signature and key encipherment, ``signerName`` is
derived from the request (the kubelet's client and serving signers, else
``kubernetes.io/legacy-unknown``), and a condition's ``status`` to True.
Requests made through v1beta1 are also validated leniently, as 1.19 to 1.21
did for that version's compatibility.

The strategy follows ``pkg/registry/certificates/certificates``: the requestor
(``spec.username``, ``uid``, ``groups``, ``extra``) is the requesting user, not
what the client sent; status is cleared on create; the main resource changes
metadata only; ``/status`` sets the certificate and conditions other than
Approved and Denied; ``/approval`` sets the conditions (``kubectl certificate
approve`` and ``deny``).  Validation follows
``pkg/apis/certificates/validation``.  kapi signs nothing: no signer controller
runs, so an approved request is issued only by a client writing
``status.certificate``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.x509.oid import NameOID

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
from kapi.apimachinery.unstructured import Object
from kapi.apis.generated import certificates_v1, certificates_v1beta1
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column, short_duration
from kapi.request import current as current_request
from kapi.runtime.objects import deep_copy, now_rfc3339
from kapi.runtime.scheme import (
    GroupVersionKind,
    Lifecycle,
    Resource,
    ResourceVersion,
    renamed_version,
)
from kapi.version import Version

GROUP = "certificates.k8s.io"
HUB = "v1"

LEGACY_UNKNOWN_SIGNER = "kubernetes.io/legacy-unknown"
KUBELET_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client-kubelet"
KUBELET_SERVING_SIGNER = "kubernetes.io/kubelet-serving"

APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
#: The usages upstream accepts, sorted as its NotSupported message lists them.
VALID_USAGES = tuple(sorted(certificates_v1.KeyUsage.enum or ()))
_ALL_STATUSES = ("False", "True", "Unknown")
_TRUE_ONLY = ("True",)

# --- PEM and X.509 --------------------------------------------------------------------------

_PEM_BLOCK = re.compile(rb"-----BEGIN ([^\r\n-]*)-----\r?\n(.*?)-----END \1-----", re.DOTALL)


class PemBlock:
    """One decoded PEM block: its type, whether it had headers, and its bytes."""

    def __init__(self, kind: str, has_headers: bool, data: bytes) -> None:
        self.kind = kind
        self.has_headers = has_headers
        self.data = data


def pem_blocks(data: bytes) -> Iterator[PemBlock]:
    """The well-formed PEM blocks in ``data``, in order, skipping what is between them
    (Go's ``pem.Decode`` in a loop)."""
    for match in _PEM_BLOCK.finditer(data):
        body = match.group(2)
        headers = False
        if b":" in body.split(b"\n", 1)[0]:
            head, _, body = body.partition(b"\n\n") if b"\n\n" in body else (b"", b"", body)
            headers = bool(head)
        try:
            decoded = base64.b64decode(b"".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            continue
        yield PemBlock(match.group(1).decode("latin-1"), headers, decoded)


def _request_bytes(spec: Object) -> bytes | None:
    """``spec.request`` decoded; None when absent (Go's nil slice)."""
    request = spec.get("request")
    if request is None:
        return None
    try:
        return base64.b64decode(request)
    except (binascii.Error, ValueError):
        return b""


def go_bytes(data: bytes | None) -> GoSyntax:
    """A ``[]byte`` as field errors print it (``%#v``)."""
    if data is None:
        return GoSyntax("[]byte(nil)")
    return GoSyntax("[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}")


def parse_csr(data: bytes | None) -> x509.CertificateSigningRequest:
    """``certificates.ParseCSR``: the first PEM block must be a CERTIFICATE REQUEST.

    Raises ValueError with upstream's text (parse failures of the DER itself
    are worded by kapi: Go's ASN.1 messages are not reproduced).
    """
    block = next(pem_blocks(data or b""), None)
    if block is None or block.kind != "CERTIFICATE REQUEST":
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    try:
        return x509.load_der_x509_csr(block.data)
    except ValueError:
        raise ValueError("x509: malformed certificate request") from None


def check_csr(data: bytes | None) -> str | None:
    """``validateCSR``: why the request is not a signed PKCS#10 request, or None."""
    try:
        csr = parse_csr(data)
    except ValueError as exc:
        return str(exc)
    try:
        if csr.is_signature_valid:
            return None
        key: Any = csr.public_key()
    except Exception:
        return "x509: cannot verify signature: algorithm unimplemented"
    if isinstance(key, rsa.RSAPublicKey):
        return "crypto/rsa: verification error"
    if isinstance(key, ec.EllipticCurvePublicKey):
        return "x509: ECDSA verification failure"
    if isinstance(key, ed25519.Ed25519PublicKey):
        return "x509: Ed25519 verification failure"
    return "x509: cannot verify signature: algorithm unimplemented"


def check_certificate(data: bytes) -> str | None:
    """``validateCertificate`` of ``status.certificate``: CERTIFICATE blocks only."""
    if not data:
        return None
    blocks = 0
    for block in pem_blocks(data):
        if block.kind != "CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{block.kind}"'
        if block.has_headers:
            return "no PEM block headers are permitted"
        blocks += 1
        try:
            x509.load_der_x509_certificate(block.data)
        except ValueError:
            return "x509: malformed certificate"
    if blocks == 0:
        return "must contain at least one CERTIFICATE PEM block"
    return None


# --- v1beta1 defaults -----------------------------------------------------------------------

_KUBELET_SERVING_USAGES = (
    {"digital signature", "key encipherment", "server auth"},
    {"digital signature", "server auth"},
)
_KUBELET_CLIENT_USAGES = (
    {"digital signature", "key encipherment", "client auth"},
    {"digital signature", "client auth"},
)


def _sans(csr: x509.CertificateSigningRequest) -> x509.SubjectAlternativeName | None:
    try:
        ext = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return None
    return ext.value


def _kubelet_csr(csr: x509.CertificateSigningRequest, usages: set[str], serving: bool) -> bool:
    """``IsKubeletServingCSR`` / ``IsKubeletClientCSR``: the node's subject, SANs, usages."""
    subject = csr.subject
    organizations = [a.value for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    if organizations != ["system:nodes"]:
        return False
    sans = _sans(csr)
    dns = sans.get_values_for_type(x509.DNSName) if sans else []
    ips = sans.get_values_for_type(x509.IPAddress) if sans else []
    emails = sans.get_values_for_type(x509.RFC822Name) if sans else []
    uris = sans.get_values_for_type(x509.UniformResourceIdentifier) if sans else []
    if serving:
        if not dns and not ips:
            return False
    elif dns or ips:
        return False
    if emails or uris:
        return False
    if usages not in (_KUBELET_SERVING_USAGES if serving else _KUBELET_CLIENT_USAGES):
        return False
    names = subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    common_name = str(names[0].value) if names else ""
    return common_name.startswith("system:node:")


def default_signer_name(spec: Object) -> str:
    """``DefaultSignerNameFromSpec``: the kubelet's signers for its requests, else legacy."""
    try:
        csr = parse_csr(_request_bytes(spec))
    except ValueError:
        return LEGACY_UNKNOWN_SIGNER
    usages = set(spec.get("usages") or ())
    if _kubelet_csr(csr, usages, serving=False):
        return KUBELET_CLIENT_SIGNER
    if _kubelet_csr(csr, usages, serving=True):
        return KUBELET_SERVING_SIGNER
    return LEGACY_UNKNOWN_SIGNER


def default_v1beta1(obj: Object) -> None:
    """v1beta1's ``SetDefaults_CertificateSigningRequestSpec`` and ``...Condition``."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        if spec.get("usages") is None:
            spec["usages"] = ["digital signature", "key encipherment"]
        if spec.get("signerName") is None:
            spec["signerName"] = default_signer_name(spec)
    status = obj.get("status")
    if isinstance(status, dict):
        for condition in status.get("conditions") or ():
            if isinstance(condition, dict) and not condition.get("status"):
                condition["status"] = "True"


# --- validation -----------------------------------------------------------------------------

_DNS1123_SUBDOMAIN_MAX = 253
_DNS1123_LABEL_MAX = 63


def validate_signer_name(path: Path, signer_name: str) -> list[FieldError]:
    """``ValidateSignerName`` (core validation): ``example.com/signer-name``."""
    if not signer_name:
        return [required(path, "")]
    segments = signer_name.split("/")
    if len(segments) != 2:
        detail = "must be a fully qualified domain and path of the form 'example.com/signer-name'"
        return [invalid(path, signer_name, detail)]
    domain, name = segments
    errs: list[FieldError] = []
    if len(domain) > _DNS1123_SUBDOMAIN_MAX:
        errs.append(too_long(path, "", _DNS1123_SUBDOMAIN_MAX))
    labels = domain.split(".")
    for label in labels:
        messages = validation.is_dns1123_label(label)
        if messages:
            errs += [invalid(path, domain, f'validating label "{label}": {m}') for m in messages]
            break
    if len(labels) < 2:
        detail = "should be a domain with at least two segments separated by dots"
        errs.append(invalid(path, domain, detail))
    for label in name.split("."):
        messages = validation.is_dns1123_subdomain(label)
        if messages:
            errs += [invalid(path, name, f'validating label "{label}": {m}') for m in messages]
            break
    max_length = _DNS1123_SUBDOMAIN_MAX + (_DNS1123_SUBDOMAIN_MAX + _DNS1123_LABEL_MAX + 1) + 1
    if len(signer_name) > max_length:
        errs.append(too_long(path, "", max_length))
    return errs


class Options:
    """``certificateValidationOptions``: what a write may do, and what it is forgiven."""

    def __init__(self, new: Object, old: Object | None) -> None:
        lenient = _via_v1beta1()
        old_spec = _spec(old) if old is not None else {}
        old_conditions = _conditions(old) if old is not None else []
        old_types = [c.get("type") or "" for c in old_conditions]
        old_usages = list(old_spec.get("usages") or ())
        self.allow_setting_approval_conditions = False
        self.allow_setting_certificate = False
        self.allow_both_approved_and_denied = APPROVED in old_types and DENIED in old_types
        self.allow_resetting_certificate = lenient
        self.allow_legacy_signer_name = lenient or (
            old is not None and old_spec.get("signerName") == LEGACY_UNKNOWN_SIGNER
        )
        self.allow_duplicate_condition_types = lenient or len(set(old_types)) < len(old_types)
        self.allow_empty_condition_type = lenient or "" in old_types
        self.allow_arbitrary_certificate = lenient or (
            old is not None
            and (
                _certificate(new) == _certificate(old)
                or check_certificate(_certificate(old)) is not None
            )
        )
        self.allow_unknown_usages = lenient or any(u not in VALID_USAGES for u in old_usages)
        self.allow_duplicate_usages = lenient or len(set(old_usages)) < len(old_usages)


def _via_v1beta1() -> bool:
    """Whether the request names v1beta1 (1.19 to 1.21 kept that version's leniency)."""
    info = current_request().info
    return info.api_group == GROUP and info.api_version == "v1beta1"


def _spec(obj: Object) -> Object:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _status(obj: Object) -> Object:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def _conditions(obj: Object) -> list[Object]:
    return [c for c in _status(obj).get("conditions") or () if isinstance(c, dict)]


def _certificate(obj: Object) -> bytes:
    value = _status(obj).get("certificate")
    if not value:
        return b""
    try:
        return base64.b64decode(value)
    except (binascii.Error, ValueError):
        return b""


def validate_csr(obj: Object, opts: Options) -> list[FieldError]:
    """``validateCertificateSigningRequest``."""
    spec = _spec(obj)
    path = Path("spec")
    errs: list[FieldError] = []
    request = _request_bytes(spec)
    why = check_csr(request)
    if why is not None:
        errs.append(invalid(path.child("request"), go_bytes(request), why))
    usages = list(spec.get("usages") or ())
    if not usages:
        errs.append(required(path.child("usages"), ""))
    if not opts.allow_unknown_usages:
        for i, usage in enumerate(usages):
            if usage not in VALID_USAGES:
                errs.append(not_supported(path.child("usages").index(i), usage, VALID_USAGES))
    if not opts.allow_duplicate_usages:
        seen: set[str] = set()
        for i, usage in enumerate(usages):
            if usage in seen:
                errs.append(duplicate(path.child("usages").index(i), usage))
            seen.add(usage)
    signer_name = spec.get("signerName") or ""
    if not opts.allow_legacy_signer_name and signer_name == LEGACY_UNKNOWN_SIGNER:
        detail = "the legacy signerName is not allowed via this API version"
        errs.append(invalid(path.child("signerName"), signer_name, detail))
    else:
        errs += validate_signer_name(path.child("signerName"), signer_name)
    expiration = spec.get("expirationSeconds")
    if expiration is not None and expiration < 600:
        detail = "may not specify a duration less than 600 seconds (10 minutes)"
        errs.append(invalid(path.child("expirationSeconds"), expiration, detail))
    errs += _validate_conditions(obj, opts)
    if not opts.allow_arbitrary_certificate:
        why = check_certificate(_certificate(obj))
        if why is not None:
            errs.append(invalid(Path("status", "certificate"), "<certificate data>", why))
    return errs


def _validate_conditions(obj: Object, opts: Options) -> list[FieldError]:
    path = Path("status", "conditions")
    errs: list[FieldError] = []
    seen: set[str] = set()
    approved = denied = False
    for i, condition in enumerate(_conditions(obj)):
        at = path.index(i)
        kind = condition.get("type") or ""
        if not opts.allow_empty_condition_type and not kind:
            errs.append(required(at.child("type"), ""))
        allowed = _TRUE_ONLY if kind in (APPROVED, DENIED, FAILED) else _ALL_STATUSES
        status = condition.get("status") or ""
        if not status:
            errs.append(required(at.child("status"), ""))
        elif status not in allowed:
            errs.append(not_supported(at.child("status"), status, allowed))
        if not opts.allow_both_approved_and_denied:
            exclusive = "Approved and Denied conditions are mutually exclusive"
            if kind == APPROVED:
                approved = True
                if denied:
                    errs.append(invalid(at.child("type"), kind, exclusive))
            elif kind == DENIED:
                denied = True
                if approved:
                    errs.append(invalid(at.child("type"), kind, exclusive))
        if not opts.allow_duplicate_condition_types:
            if kind in seen:
                errs.append(duplicate(at.child("type"), kind))
            seen.add(kind)
    return errs


def _of_type(obj: Object, kind: str) -> list[Object]:
    return [c for c in _conditions(obj) if c.get("type") == kind]


def _semantic(conditions: list[Object]) -> list[tuple[Any, ...]]:
    keys = ("type", "status", "reason", "message", "lastUpdateTime", "lastTransitionTime")
    return [tuple(c.get(k) or None for k in keys) for c in conditions]


def validate_csr_update(new: Object, old: Object, opts: Options) -> list[FieldError]:
    """``validateCertificateSigningRequestUpdate`` (ObjectMeta's update rules are the store's)."""
    errs = validate_csr(new, opts)
    path = Path("status", "conditions")
    for kind in (APPROVED, DENIED, FAILED):
        if len(_of_type(new, kind)) < len(_of_type(old, kind)):
            errs.append(forbidden(path, f'updates may not remove a condition of type "{kind}"'))
    if not opts.allow_setting_approval_conditions:
        for kind in (APPROVED, DENIED):
            old_of, new_of = _of_type(old, kind), _of_type(new, kind)
            if len(new_of) < len(old_of):
                continue  # refused above
            if len(new_of) > len(old_of):
                errs.append(forbidden(path, f'updates may not add a condition of type "{kind}"'))
            elif _semantic(new_of) != _semantic(old_of):
                # Upstream appends a go-cmp diff of the two lists; kapi says which type only.
                errs.append(forbidden(path, f'updates may not modify a condition of type "{kind}"'))
    if _certificate(new) != _certificate(old):
        certificate = Path("status", "certificate")
        if not opts.allow_setting_certificate:
            errs.append(forbidden(certificate, "updates may not set certificate content"))
        elif not opts.allow_resetting_certificate and _certificate(old):
            errs.append(
                forbidden(certificate, "updates may not modify existing certificate content")
            )
    return errs


# --- strategy -------------------------------------------------------------------------------


def _populate_condition_timestamps(new: Object, old: Object) -> None:
    """``populateConditionTimestamps``: missing update times are now; a missing transition
    time is the old condition's of the same type and status, else now."""
    now = now_rfc3339()
    old_conditions = _conditions(old)
    for condition in _conditions(new):
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            transition = now
            for previous in old_conditions:
                if (
                    previous.get("type") == condition.get("type")
                    and previous.get("status") == condition.get("status")
                    and previous.get("lastTransitionTime")
                ):
                    transition = previous["lastTransitionTime"]
                    break
            condition["lastTransitionTime"] = transition


def _preserve_condition_instances(new: Object, old: Object, kind: str) -> None:
    """``preserveConditionInstances``: /status keeps the stored conditions of ``kind``
    when it has as many of them (adding or removing one is then refused)."""
    new_conditions = _status(new).get("conditions") or []
    new_at = [i for i, c in enumerate(new_conditions) if c.get("type") == kind]
    old_of = _of_type(old, kind)
    if len(new_at) != len(old_of):
        return
    for index, previous in zip(new_at, old_of, strict=True):
        new_conditions[index] = deep_copy(previous)


class CertificateSigningRequestStrategy(Strategy):
    """Upstream ``csrStrategy``, ``csrStatusStrategy`` and ``csrApprovalStrategy``."""

    has_status = True
    subresource_fields = {"status": ("status",), "approval": ("status", "conditions")}

    @staticmethod
    def validate_name(name: str, prefix: bool) -> list[str]:
        """``ValidateCertificateRequestName``: any name (the path rules still apply)."""
        return []

    def prepare_for_create(self, obj: Object) -> None:
        spec = obj.setdefault("spec", {})
        for key in ("username", "uid", "groups", "extra"):
            spec.pop(key, None)
        request = current_request()
        if request.user:
            spec["username"] = request.user
        if request.groups:
            spec["groups"] = list(request.groups)
        # No pre-approved requests: status starts empty.
        obj["status"] = {}

    def prepare_for_update(self, new: Object, old: Object) -> None:
        super().prepare_for_update(new, old)
        if "spec" in old:
            new["spec"] = deep_copy(old["spec"])
        else:
            new.pop("spec", None)

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_csr(obj, Options(obj, None))

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_csr_update(new, old, Options(new, old))

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        if subresource == "status":
            _preserve_condition_instances(new, old, APPROVED)
            _preserve_condition_instances(new, old, DENIED)
            _populate_condition_timestamps(new, old)
            opts = Options(new, old)
            opts.allow_setting_certificate = True
            return validate_csr_update(new, old, opts)
        if subresource == "approval":
            _populate_condition_timestamps(new, old)
            opts = Options(new, old)
            opts.allow_setting_approval_conditions = True
            return validate_csr_update(new, old, opts)
        return []


# --- resource -------------------------------------------------------------------------------


def condition_cell(obj: Object) -> str:
    """``extractCSRStatus``: Denied, Approved or Pending, then ,Failed and ,Issued."""
    types = {c.get("type") for c in _conditions(obj)}
    text = DENIED if DENIED in types else APPROVED if APPROVED in types else "Pending"
    if FAILED in types:
        text += ",Failed"
    if _status(obj).get("certificate"):
        text += ",Issued"
    return text


def _requested_duration(obj: Object) -> str:
    seconds = _spec(obj).get("expirationSeconds")
    return "<none>" if seconds is None else short_duration(seconds)


COLUMNS = (
    NAME,
    AGE,
    Column(
        "SignerName",
        "string",
        "The signer asked to sign the request.",
        lambda obj: _spec(obj).get("signerName") or "<none>",
    ),
    Column(
        "Requestor",
        "string",
        "The user who created the request.",
        lambda obj: _spec(obj).get("username") or "",
    ),
    Column(
        "RequestedDuration",
        "string",
        "How long the requested certificate should be valid for.",
        _requested_duration,
    ),
    Column(
        "Condition", "string", "Whether the request is approved, denied, issued.", condition_cell
    ),
)


def resources() -> list[Resource]:
    """The certificates.k8s.io resources (a fresh strategy for a new scheme)."""
    return [
        Resource(
            group=GROUP,
            kind="CertificateSigningRequest",
            plural="certificatesigningrequests",
            singular="certificatesigningrequest",
            namespaced=False,
            versions={
                HUB: ResourceVersion(
                    HUB,
                    certificates_v1.CertificateSigningRequest,
                    Lifecycle(introduced=Version(1, 19)),
                ),
                "v1beta1": renamed_version(
                    "v1beta1",
                    certificates_v1beta1.CertificateSigningRequest,
                    Lifecycle(
                        introduced=Version(1, 6),
                        deprecated=Version(1, 19),
                        removed=Version(1, 22),
                        replacement=GroupVersionKind(GROUP, HUB, "CertificateSigningRequest"),
                    ),
                    default_v1beta1,
                ),
            },
            hub_version=HUB,
            storage_version=HUB,
            strategy=CertificateSigningRequestStrategy(),
            short_names=("csr",),
            subresources=("status", "approval"),
            field_labels=("spec.signerName",),
            columns=COLUMNS,
        )
    ]
