"""``format: byte`` fields take base64 wrapped over several lines, as kube-apiserver does.

Go's base64 decoder skips CR and LF, so PEM-style wrapped text (what
``base64`` prints, and what the TLS Secret example on kubernetes.io holds)
is accepted, and the server answers the decoded bytes as one unbroken line.
Offsets in the errors for bad text count the line breaks, as Go's do.
"""

from __future__ import annotations

import base64
import textwrap
from pathlib import Path

import httpx
import pytest

from tests.helpers.kubectl import Kubectl
from tests.helpers.status import assert_status, storage_unchanged
from tests.tls import self_signed_pair


def _tls_pair() -> tuple[bytes, bytes]:
    """A throwaway self-signed certificate and its key, both PEM."""
    return self_signed_pair("example.com")


def _secrets(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/secrets"


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["lf", "crlf"])
def test_wrapped_base64_is_accepted_and_answered_unwrapped(
    http: httpx.Client, namespace: str, newline: str
) -> None:
    cert, key = _tls_pair()
    wrapped = {
        "tls.crt": base64.encodebytes(cert).decode().replace("\n", newline),
        "tls.key": base64.encodebytes(key).decode().replace("\n", newline),
    }
    assert all(newline in value for value in wrapped.values())  # more than one 76-char line
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "tls"},
        "type": "kubernetes.io/tls",
        "data": wrapped,
    }
    created = http.post(_secrets(namespace), json=body)
    assert created.status_code == 201, created.text
    expected = {
        "tls.crt": base64.b64encode(cert).decode(),
        "tls.key": base64.b64encode(key).decode(),
    }
    assert created.json()["data"] == expected
    assert http.get(f"{_secrets(namespace)}/tls").json()["data"] == expected


def test_bad_wrapped_base64_names_the_offset_in_the_text_sent(
    http: httpx.Client, namespace: str
) -> None:
    # "!" is the sixth character of the text, the seventh byte counting the line break.
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "bad"},
        "data": {"k": "QUJD\nR!=="},
    }
    with storage_unchanged(http, namespace):
        response = http.post(_secrets(namespace), json=body)
        assert_status(
            response,
            400,
            "BadRequest",
            'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at '
            "input byte 6",
        )


def test_webhook_ca_bundle_may_be_wrapped(http: httpx.Client, namespace: str) -> None:
    cert, _ = _tls_pair()
    name = f"wrapped-ca-{namespace}"
    body = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": "wrapped.example.com",
                "clientConfig": {
                    "url": "https://127.0.0.1:1/validate",
                    "caBundle": base64.encodebytes(cert).decode(),
                },
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["nothing-matches-this"],
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }
        ],
    }
    path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
    created = http.post(path, json=body)
    try:
        assert created.status_code == 201, created.text
        ca_bundle = created.json()["webhooks"][0]["clientConfig"]["caBundle"]
        assert ca_bundle == base64.b64encode(cert).decode()
    finally:
        http.delete(f"{path}/{name}")


def test_kubectl_applies_the_tls_secret_example(
    kubectl: Kubectl, http: httpx.Client, namespace: str, tmp_path: Path
) -> None:
    """The shape of the kubernetes.io TLS Secret example: block scalars of wrapped base64."""
    cert, key = _tls_pair()
    crt_lines = textwrap.indent(base64.encodebytes(cert).decode(), "    ")
    key_lines = textwrap.indent(base64.encodebytes(key).decode(), "    ")
    manifest = tmp_path / "secret-tls.yaml"
    manifest.write_text(
        "apiVersion: v1\n"
        "kind: Secret\n"
        "metadata:\n"
        "  name: secret-tls\n"
        "type: kubernetes.io/tls\n"
        "data:\n"
        f"  tls.crt: |\n{crt_lines}"
        f"  tls.key: |\n{key_lines}"
    )
    result = kubectl.ok("apply", "-n", namespace, "-f", str(manifest))
    assert result.stdout == "secret/secret-tls created\n"
    stored = http.get(f"{_secrets(namespace)}/secret-tls").json()
    assert base64.b64decode(stored["data"]["tls.crt"]) == cert
    assert "\n" not in stored["data"]["tls.crt"]
