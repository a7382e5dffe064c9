"""Declarative validation of built-in kinds in shadow mode, on a real ``kapi serve``.

Hand-written validation answers; the engine's verdict on the kind's declaration
is only compared, and ``/metrics`` counts where the two differ (KEP-5073, as
kube-apiserver 1.33 runs it with ``DeclarativeValidationTakeover`` off).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers import objects
from tests.helpers.kubectl import make_kubectl

MISMATCH = "apiserver_validation_declarative_validation_mismatch_total"


@pytest.fixture(scope="module")
def server_1_32(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """Before 1.33 there is no declarative validation (the gate is pre-alpha)."""
    yield from serve_with_flags(tmp_path_factory, "kapi-1-32", "--emulated-version=1.32")


def mismatches(http: httpx.Client) -> float:
    (line,) = [s for s in http.get("/metrics").text.splitlines() if s.startswith(MISMATCH + " ")]
    return float(line.split()[1])


def cronjob(policy: str) -> dict[str, Any]:
    obj = objects.cronjob("nightly", concurrencyPolicy=policy)
    obj["metadata"]["namespace"] = "default"
    return obj


def webhooks_with_one_name_twice() -> dict[str, Any]:
    hook = {
        "name": "check.example.com",
        "clientConfig": {"url": "https://example.com/check"},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "twice"},
        "webhooks": [hook, dict(hook)],
    }


WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


@pytest.mark.kubectl
def test_handwritten_errors_answer_and_agreement_is_not_counted(
    fresh_server: KapiServer, tmp_path: Path
) -> None:
    kubectl = make_kubectl(fresh_server, tmp_path, "1.33")
    manifest = tmp_path / "cronjob.yaml"
    manifest.write_text(yaml.safe_dump(cronjob("Sometimes")))
    result = kubectl.fails("create", "-f", str(manifest))
    assert result.err_lines == [
        'The CronJob "nightly" is invalid: spec.concurrencyPolicy: Unsupported value: '
        '"Sometimes": supported values: "Allow", "Forbid", "Replace"'
    ]
    manifest.write_text(yaml.safe_dump(cronjob("Forbid")))
    kubectl.ok("create", "-f", str(manifest))
    with fresh_server.client() as http:
        assert mismatches(http) == 0


def test_a_disagreement_is_counted_and_the_response_is_the_handwritten_one(
    fresh_server: KapiServer,
) -> None:
    with fresh_server.client() as http:
        response = http.post(WEBHOOKS, json=webhooks_with_one_name_twice())
        assert response.status_code == 422
        # Upstream's hand-written check names the key; the declaration's list-map
        # check would name the item (webhooks[1]): a discrepancy the metric shows.
        assert [c["field"] for c in response.json()["details"]["causes"]] == ["webhooks[1].name"]
        assert mismatches(http) == 1
        assert http.get(f"{WEBHOOKS}/twice").status_code == 404


def test_before_1_33_nothing_runs_in_shadow(server_1_32: KapiServer) -> None:
    with server_1_32.client() as http:
        assert http.post(WEBHOOKS, json=webhooks_with_one_name_twice()).status_code == 422
        assert mismatches(http) == 0
