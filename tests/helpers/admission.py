"""Admission webhook configurations, and a webhook's AdmissionReview answers."""

from __future__ import annotations

import base64
from typing import Any

import httpx

from tests.tls import CertificateAuthority

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
#: How long a configuration may take to reach the admission plugins: it arrives by watch,
#: as it reaches upstream's through their informers.
PROPAGATION = 10.0


def review_answer(review: dict[str, Any], **response: Any) -> tuple[int, dict[str, Any]]:
    """A webhook's 200 answer to ``review`` with ``response`` fields (``allowed=...``)."""
    return 200, {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": review["request"]["uid"], **response},
    }


def webhook(name: str, url: str, ca: CertificateAuthority, namespace: str, **extra: Any) -> Any:
    """A webhook for configmaps in one namespace (so tests do not see each other's)."""
    return {
        "name": name,
        "clientConfig": {"url": url, "caBundle": base64.b64encode(ca.cert_pem).decode()},
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
            }
        ],
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **extra,
    }


def configure(http: httpx.Client, plural: str, name: str, hooks: list[Any]) -> dict[str, Any]:
    """Create a Mutating- or ValidatingWebhookConfiguration (by ``plural``) of ``hooks``."""
    kind = (
        "MutatingWebhookConfiguration"
        if plural.startswith("mutating")
        else ("ValidatingWebhookConfiguration")
    )
    response = http.post(
        f"{ADMISSION}/{plural}",
        json={
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": hooks,
        },
    )
    assert response.status_code == 201, response.text
    return response.json()
