"""``deployments/rollback`` of apps/v1beta1 and extensions/v1beta1, at ``--emulated-version 1.15``.

The request is recorded on the Deployment (its annotations, and the revision
as ``spec.rollbackTo``, kept by the v1 hub as an annotation) without moving
the generation, and answered with upstream's success ``Status``; bad
requests are refused as upstream's ``RollbackREST`` refuses them, and leave
the Deployment as it was.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags

ROLLBACK_ANNOTATION = "deprecated.deployment.rollback.to"


@pytest.fixture(scope="module")
def server_1_15(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "rollback-1-15", "--emulated-version=1.15")


@pytest.fixture
def client(server_1_15: KapiServer) -> Iterator[httpx.Client]:
    with server_1_15.client() as http:
        yield http


@pytest.fixture
def ns(client: httpx.Client) -> str:
    name = f"rollback-{uuid.uuid4().hex[:8]}"
    response = client.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


def deployment(api_version: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def rollback(api_version: str, name: str, revision: int, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "DeploymentRollback",
        "name": name,
        "rollbackTo": {"revision": revision},
        **extra,
    }


@pytest.mark.parametrize("api_version", ["apps/v1beta1", "extensions/v1beta1"])
def test_rollback_is_recorded_and_answered_with_success(
    client: httpx.Client, ns: str, api_version: str
) -> None:
    base = f"/apis/{api_version}/namespaces/{ns}/deployments"
    created = client.post(base, json=deployment(api_version, "web"))
    assert created.status_code == 201, created.text
    generation = created.json()["metadata"]["generation"]

    body = rollback(api_version, "web", 2, updatedAnnotations={"reason": "bad image"})
    response = client.post(f"{base}/web/rollback", json=body)
    assert response.status_code == 200, response.text
    status = response.json()
    assert status["kind"] == "Status"
    assert status["status"] == "Success"
    assert status["message"] == 'rollback request for deployment "web" succeeded'
    assert status["code"] == 200

    beta = client.get(f"{base}/web").json()
    assert beta["spec"]["rollbackTo"] == {"revision": 2}
    assert beta["metadata"]["annotations"]["reason"] == "bad image"
    assert beta["metadata"]["generation"] == generation
    v1 = client.get(f"/apis/apps/v1/namespaces/{ns}/deployments/web").json()
    assert v1["metadata"]["annotations"][ROLLBACK_ANNOTATION] == "2"
    assert "rollbackTo" not in v1["spec"]


@pytest.mark.parametrize("api_version", ["apps/v1beta1", "extensions/v1beta1"])
def test_bad_rollbacks_are_refused_and_change_nothing(
    client: httpx.Client, ns: str, api_version: str
) -> None:
    base = f"/apis/{api_version}/namespaces/{ns}/deployments"
    assert client.post(base, json=deployment(api_version, "web")).status_code == 201
    before = client.get(f"{base}/web").json()

    negative = client.post(f"{base}/web/rollback", json=rollback(api_version, "web", -1))
    assert negative.status_code == 422, negative.text
    status = negative.json()
    assert status["reason"] == "Invalid"
    assert status["details"]["kind"] == "DeploymentRollback"
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: -1: must be greater than or equal to 0",
            "field": "rollback.version",
        }
    ]

    unnamed = client.post(f"{base}/web/rollback", json=rollback(api_version, "", 1))
    assert unnamed.status_code == 422, unnamed.text
    assert unnamed.json()["details"]["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: name is required",
            "field": "name",
        }
    ]

    other = client.post(f"{base}/web/rollback", json=rollback(api_version, "db", 1))
    assert other.status_code == 400, other.text
    assert other.json()["message"] == "name in URL does not match name in DeploymentRollback object"

    missing = client.post(f"{base}/db/rollback", json=rollback(api_version, "db", 1))
    assert missing.status_code == 404, missing.text
    assert missing.json()["message"] == 'deployments.apps "db" not found'

    assert client.get(f"{base}/web").json() == before


def test_only_the_old_versions_serve_rollback(client: httpx.Client, ns: str) -> None:
    base = f"/apis/apps/v1/namespaces/{ns}/deployments"
    assert client.post(base, json=deployment("apps/v1", "web")).status_code == 201
    response = client.post(f"{base}/web/rollback", json=rollback("apps/v1beta1", "web", 1))
    assert response.status_code == 404, response.text

    def rollback_entry(group_version: str) -> dict[str, Any] | None:
        listed = client.get(f"/apis/{group_version}").json()["resources"]
        return next((r for r in listed if r["name"] == "deployments/rollback"), None)

    assert rollback_entry("apps/v1") is None
    assert rollback_entry("apps/v1beta2") is None
    for group_version in ("apps/v1beta1", "extensions/v1beta1"):
        entry = rollback_entry(group_version)
        assert entry is not None, group_version
        assert entry["kind"] == "DeploymentRollback"
        assert entry["verbs"] == ["create"]


def test_a_dry_run_rollback_changes_nothing(client: httpx.Client, ns: str) -> None:
    base = f"/apis/apps/v1beta1/namespaces/{ns}/deployments"
    assert client.post(base, json=deployment("apps/v1beta1", "web")).status_code == 201
    before = client.get(f"{base}/web").json()
    response = client.post(
        f"{base}/web/rollback", params={"dryRun": "All"}, json=rollback("apps/v1beta1", "web", 3)
    )
    assert response.status_code == 200, response.text
    assert client.get(f"{base}/web").json() == before
