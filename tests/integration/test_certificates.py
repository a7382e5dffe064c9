"""certificates.k8s.io CertificateSigningRequests on a real server: the requestor filled from
the requesting user, status cleared on create, upstream's validation messages, the /approval
and /status subresources, ``kubectl certificate approve|deny``, tables, protobuf, and v1beta1's
defaults at an emulated 1.21."""

from __future__ import annotations

import base64
import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kapi.runtime import protobuf
from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kubectl import Kubectl, make_kubectl
from tests.helpers.objects import unique
from tests.helpers.protobuf_requests import PROTOBUF, post
from tests.helpers.status import assert_status

GROUP = "certificates.k8s.io"
CSRS = f"/apis/{GROUP}/v1/certificatesigningrequests"
CSRS_V1BETA1 = f"/apis/{GROUP}/v1beta1/certificatesigningrequests"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
MERGE = {"content-type": "application/merge-patch+json"}
SIGNER = "example.com/my-signer"
_KEY = ec.generate_private_key(ec.SECP256R1())


def csr_pem(common_name: str = "jane", organization: str | None = None) -> bytes:
    names = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        names.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names))
    return builder.sign(_KEY, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def certificate_pem() -> bytes:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "jane")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(_KEY.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(_KEY, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def csr(name: str, request: bytes | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"request": b64(request if request is not None else csr_pem())}
    body.update({"signerName": SIGNER, "usages": ["client auth"]})
    body.update(spec)
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


def condition(kind: str, reason: str = "ByTest") -> dict[str, Any]:
    return {"type": kind, "status": "True", "reason": reason, "message": "from the test"}


def _stored(http: httpx.Client) -> dict[str, str]:
    response = http.get(CSRS)
    assert response.status_code == 200, response.text
    return {
        o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in response.json()["items"]
    }


def invalid(name: str, *causes: tuple[str, str, str]) -> tuple[str, Any]:
    messages = [f"{field}: {message}" for _, field, message in causes]
    tail = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    details = {
        "name": name,
        "group": GROUP,
        "kind": "CertificateSigningRequest",
        "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes],
    }
    return f'CertificateSigningRequest.{GROUP} "{name}" is invalid: {tail}', details


def go_bytes(data: bytes) -> str:
    return "[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}"


def test_create_fills_the_requestor_and_clears_status(http: httpx.Client) -> None:
    name = unique("csr")
    body = csr(name, username="admin", groups=["system:masters"], uid="1", expirationSeconds=3600)
    body["status"] = {"conditions": [condition("Approved")]}
    created = http.post(CSRS, json=body)
    assert created.status_code == 201, created.text
    spec = created.json()["spec"]
    assert spec["username"] == "system:anonymous"
    assert spec["groups"] == ["system:unauthenticated"]
    assert "uid" not in spec
    assert spec["expirationSeconds"] == 3600
    assert created.json()["status"] == {}
    assert "generation" not in created.json()["metadata"]

    # The main resource changes metadata only.
    updated = http.patch(
        f"{CSRS}/{name}",
        json={"metadata": {"labels": {"a": "b"}}, "spec": {"usages": ["server auth"]}},
        headers=MERGE,
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["spec"] == spec
    assert updated.json()["metadata"]["labels"] == {"a": "b"}
    by_signer = http.get(CSRS, params={"fieldSelector": f"spec.signerName={SIGNER}"}).json()
    assert name in [o["metadata"]["name"] for o in by_signer["items"]]
    assert http.delete(f"{CSRS}/{name}").status_code == 200


def test_validation_messages(http: httpx.Client) -> None:
    before = _stored(http)
    not_pem = b"not a pem"
    cases = [
        (
            csr("bad-request", not_pem),
            [
                (
                    "FieldValueInvalid",
                    "spec.request",
                    f"Invalid value: {go_bytes(not_pem)}: "
                    "PEM block type must be CERTIFICATE REQUEST",
                )
            ],
        ),
        (
            csr("no-signer", signerName=None, usages=None),
            [
                ("FieldValueRequired", "spec.usages", "Required value"),
                ("FieldValueRequired", "spec.signerName", "Required value"),
            ],
        ),
        (
            csr("legacy", signerName="kubernetes.io/legacy-unknown", expirationSeconds=599),
            [
                (
                    "FieldValueInvalid",
                    "spec.signerName",
                    'Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not '
                    "allowed via this API version",
                ),
                (
                    "FieldValueInvalid",
                    "spec.expirationSeconds",
                    "Invalid value: 599: may not specify a duration less than 600 seconds "
                    "(10 minutes)",
                ),
            ],
        ),
        (
            csr("odd", signerName="my-signer", usages=["client auth", "client auth", "flying"]),
            [
                ("FieldValueDuplicate", "spec.usages[1]", 'Duplicate value: "client auth"'),
                (
                    "FieldValueNotSupported",
                    "spec.usages[2]",
                    'Unsupported value: "flying": supported values: "any", "cert sign", '
                    '"client auth", "code signing", "content commitment", "crl sign", '
                    '"data encipherment", "decipher only", "digital signature", '
                    '"email protection", "encipher only", "ipsec end system", "ipsec tunnel", '
                    '"ipsec user", "key agreement", "key encipherment", "microsoft sgc", '
                    '"netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", '
                    '"timestamping"',
                ),
                (
                    "FieldValueInvalid",
                    "spec.signerName",
                    'Invalid value: "my-signer": must be a fully qualified domain and path of '
                    "the form 'example.com/signer-name'",
                ),
            ],
        ),
    ]
    for body, causes in cases:
        name = body["metadata"]["name"]
        response = http.post(CSRS, json=body)
        status = assert_status(response, 422, "Invalid")
        got = {(c["reason"], c["field"], c["message"]) for c in status["details"]["causes"]}
        assert got == set(causes), status
        if len(causes) == 1:
            message, details = invalid(name, *causes)
            assert status["message"] == message
            assert status["details"] == details
    assert _stored(http) == before


def test_approval_and_status_subresources(http: httpx.Client) -> None:
    name = unique("csr")
    assert http.post(CSRS, json=csr(name)).status_code == 201
    path = f"{CSRS}/{name}"

    # The main resource cannot approve.
    current = http.get(path).json()
    current["status"] = {"conditions": [condition("Approved")]}
    assert http.put(path, json=current).json()["status"] == {}

    # /status may not add an approval condition.
    current = http.get(path).json()
    current["status"] = {"conditions": [condition("Approved")]}
    response = http.put(f"{path}/status", json=current)
    message, details = invalid(
        name,
        (
            "FieldValueForbidden",
            "status.conditions",
            'Forbidden: updates may not add a condition of type "Approved"',
        ),
    )
    assert_status(response, 422, "Invalid", message, details)

    # /approval does, with timestamps filled in.
    approved = http.put(f"{path}/approval", json=current)
    assert approved.status_code == 200, approved.text
    (cond,) = approved.json()["status"]["conditions"]
    assert cond["type"] == "Approved"
    assert cond["lastUpdateTime"] and cond["lastTransitionTime"]
    before = http.get(path).json()

    both = http.get(path).json()
    both["status"]["conditions"].append(condition("Denied"))
    message, details = invalid(
        name,
        (
            "FieldValueInvalid",
            "status.conditions[1].type",
            'Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
        ),
    )
    assert_status(http.put(f"{path}/approval", json=both), 422, "Invalid", message, details)

    removed = http.get(path).json()
    removed["status"]["conditions"] = []
    message, details = invalid(
        name,
        (
            "FieldValueForbidden",
            "status.conditions",
            'Forbidden: updates may not remove a condition of type "Approved"',
        ),
    )
    assert_status(http.put(f"{path}/approval", json=removed), 422, "Invalid", message, details)

    garbage = http.get(path).json()
    garbage["status"]["certificate"] = b64(b"not a certificate")
    message, details = invalid(
        name,
        (
            "FieldValueInvalid",
            "status.certificate",
            'Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block',
        ),
    )
    assert_status(http.put(f"{path}/status", json=garbage), 422, "Invalid", message, details)
    assert http.get(path).json() == before

    issued = http.get(path).json()
    issued["status"]["certificate"] = b64(certificate_pem())
    response = http.put(f"{path}/status", json=issued)
    assert response.status_code == 200, response.text
    table = http.get(path, headers={"accept": TABLE}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Age",
        "SignerName",
        "Requestor",
        "RequestedDuration",
        "Condition",
    ]
    cells = table["rows"][0]["cells"]
    assert cells[0] == name
    assert cells[2:] == [SIGNER, "system:anonymous", "<none>", "Approved,Issued"]

    again = http.get(path).json()
    again["status"]["certificate"] = b64(certificate_pem())
    message, details = invalid(
        name,
        (
            "FieldValueForbidden",
            "status.certificate",
            "Forbidden: updates may not modify existing certificate content",
        ),
    )
    assert_status(http.put(f"{path}/status", json=again), 422, "Invalid", message, details)


def test_discovery_lists_the_subresources(http: httpx.Client) -> None:
    resources = {r["name"]: r for r in http.get(f"/apis/{GROUP}/v1").json()["resources"]}
    assert resources["certificatesigningrequests"]["shortNames"] == ["csr"]
    assert resources["certificatesigningrequests/approval"]["verbs"] == ["get", "patch", "update"]
    assert resources["certificatesigningrequests/status"]["verbs"] == ["get", "patch", "update"]


def test_protobuf_round_trip(http: httpx.Client) -> None:
    name, pem = unique("pb"), csr_pem()
    response = post(http, CSRS, protobuf.encode(csr(name, pem, expirationSeconds=7200)), PROTOBUF)
    assert response.status_code == 201, response.text
    decoded = protobuf.decode(response.content)
    assert decoded["kind"] == "CertificateSigningRequest"
    assert decoded["spec"]["signerName"] == SIGNER
    assert decoded["spec"]["expirationSeconds"] == 7200
    assert base64.b64decode(decoded["spec"]["request"]) == pem


@pytest.fixture(params=["1.27", "1.33"])
def any_kubectl(request: pytest.FixtureRequest, kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(kapi_server, tmp_path, request.param)


@pytest.mark.kubectl
def test_kubectl_apply_approve_and_deny(any_kubectl: Kubectl, tmp_path: Path) -> None:
    k = any_kubectl
    ok, denied = unique("ok"), unique("no")
    manifest = tmp_path / "csrs.yaml"
    documents = []
    for name in (ok, denied):
        documents.append(
            f"""apiVersion: {GROUP}/v1
kind: CertificateSigningRequest
metadata:
  name: {name}
spec:
  request: {b64(csr_pem(name))}
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 86400
  usages: [client auth]
"""
        )
    manifest.write_text("---\n".join(documents))
    assert k.ok("apply", "-f", str(manifest)).out_lines == [
        f"certificatesigningrequest.{GROUP}/{ok} created",
        f"certificatesigningrequest.{GROUP}/{denied} created",
    ]
    lines = k.ok("get", "csr", ok).out_lines
    assert lines[0].split() == [
        "NAME",
        "AGE",
        "SIGNERNAME",
        "REQUESTOR",
        "REQUESTEDDURATION",
        "CONDITION",
    ]
    row = lines[1].split()
    assert [row[0], *row[2:]] == [
        ok,
        "kubernetes.io/kube-apiserver-client",
        "system:anonymous",
        "24h",
        "Pending",
    ]
    assert k.ok("certificate", "approve", ok).out_lines == [
        f"certificatesigningrequest.{GROUP}/{ok} approved"
    ]
    assert k.ok("certificate", "deny", denied).out_lines == [
        f"certificatesigningrequest.{GROUP}/{denied} denied"
    ]
    assert k.ok("get", "csr", ok).out_lines[1].split()[-1] == "Approved"
    assert k.ok("get", "csr", denied).out_lines[1].split()[-1] == "Denied"
    reasons = k.ok("get", "csr", ok, "-o", "jsonpath={.status.conditions[*].reason}").stdout
    assert reasons == "KubectlApprove"


# --- v1beta1 ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_1_21(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "csr-1-21", "--emulated-version=1.21")


def beta(name: str, request: bytes, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1beta1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {"request": b64(request), **spec},
    }


def test_v1beta1_defaults_and_converts_at_1_21(server_1_21: KapiServer) -> None:
    with server_1_21.client() as http:
        created = http.post(CSRS_V1BETA1, json=beta("plain", csr_pem()))
        assert created.status_code == 201, created.text
        assert created.headers.get_list("warning") == [
            f'299 - "{GROUP}/v1beta1 CertificateSigningRequest is deprecated in v1.19+, '
            f'unavailable in v1.22+; use {GROUP}/v1 CertificateSigningRequest"'
        ]
        spec = created.json()["spec"]
        assert spec["signerName"] == "kubernetes.io/legacy-unknown"
        assert spec["usages"] == ["digital signature", "key encipherment"]
        as_v1 = http.get(f"{CSRS}/plain").json()
        assert as_v1["apiVersion"] == f"{GROUP}/v1"
        assert as_v1["spec"]["signerName"] == "kubernetes.io/legacy-unknown"

        kubelet = beta(
            "node-client",
            csr_pem("system:node:n1", "system:nodes"),
            usages=["digital signature", "key encipherment", "client auth"],
        )
        created = http.post(CSRS_V1BETA1, json=kubelet)
        assert created.status_code == 201, created.text
        signer = created.json()["spec"]["signerName"]
        assert signer == "kubernetes.io/kube-apiserver-client-kubelet"

        # A condition's status defaults to True in v1beta1.
        current = http.get(f"{CSRS_V1BETA1}/plain").json()
        current["status"] = {"conditions": [{"type": "Approved", "reason": "R"}]}
        approved = http.put(f"{CSRS_V1BETA1}/plain/approval", json=current)
        assert approved.status_code == 200, approved.text
        assert approved.json()["status"]["conditions"][0]["status"] == "True"

        # v1 refuses the legacy signer that v1beta1 defaults to.
        response = http.post(CSRS, json=csr("v1-legacy", signerName="kubernetes.io/legacy-unknown"))
        assert_status(response, 422, "Invalid")
