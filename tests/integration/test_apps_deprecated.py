"""The deprecated apps versions (apps/v1beta1, apps/v1beta2, extensions/v1beta1) on real servers.

At ``--emulated-version 1.15`` they are served, each request warning with
upstream's KEP-1693 text, with their own defaults and conversions (rollbackTo
and templateGeneration, kept as annotations of the v1 object) and their own
Scale, and the old Deployment versions' ``/rollback``; at the default release
they are gone (404, not in discovery).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags

MERGE_PATCH = {"content-type": "application/merge-patch+json"}


def warning(api_version: str, kind: str, deprecated: str) -> list[str]:
    text = (
        f"{api_version} {kind} is deprecated in v{deprecated}+, unavailable in v1.16+; "
        f"use apps/v1 {kind}"
    )
    return [f'299 - "{text}"']


@pytest.fixture(scope="module")
def server_1_15(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "emulated-1-15", "--emulated-version=1.15")


@pytest.fixture
def client(server_1_15: KapiServer) -> Iterator[httpx.Client]:
    with server_1_15.client() as http:
        yield http


@pytest.fixture
def ns(client: httpx.Client) -> str:
    name = f"apps-{uuid.uuid4().hex[:8]}"
    response = client.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


def template(app: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def test_extensions_deployment_defaults_convert_and_warn(client: httpx.Client, ns: str) -> None:
    url = f"/apis/extensions/v1beta1/namespaces/{ns}/deployments"
    body = {
        "apiVersion": "extensions/v1beta1",
        "kind": "Deployment",
        "metadata": {"name": "old"},
        "spec": {"rollbackTo": {"revision": 2}, "template": template("old")},
    }
    created = client.post(url, json=body)
    assert created.status_code == 201, created.text
    expected = warning("extensions/v1beta1", "Deployment", "1.8")
    assert created.headers.get_list("warning") == expected
    spec = created.json()["spec"]
    assert spec["selector"] == {"matchLabels": {"app": "old"}}  # defaulted from the template
    assert created.json()["metadata"]["labels"] == {"app": "old"}
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (2**31 - 1,) * 2
    assert spec["strategy"]["rollingUpdate"] == {"maxUnavailable": 1, "maxSurge": 1}
    assert spec["rollbackTo"] == {"revision": 2}
    assert "annotations" not in created.json()["metadata"]

    # The same object through apps/v1 (shared storage): rollbackTo is an annotation.
    v1 = client.get(f"/apis/apps/v1/namespaces/{ns}/deployments/old")
    assert v1.status_code == 200, v1.text
    assert v1.headers.get_list("warning") == []
    assert v1.json()["apiVersion"] == "apps/v1"
    assert v1.json()["metadata"]["annotations"] == {"deprecated.deployment.rollback.to": "2"}
    assert "rollbackTo" not in v1.json()["spec"]

    # ... and through apps/v1beta1, which has the field again.
    beta = client.get(f"/apis/apps/v1beta1/namespaces/{ns}/deployments/old")
    assert beta.headers.get_list("warning") == warning("apps/v1beta1", "Deployment", "1.8")
    assert beta.json()["spec"]["rollbackTo"] == {"revision": 2}

    listed = client.get(url)
    assert (listed.status_code, listed.headers.get_list("warning")) == (200, expected)
    assert [i["apiVersion"] for i in listed.json()["items"]] == ["extensions/v1beta1"]


def test_extensions_selector_may_change_but_apps_v1beta2_not(client: httpx.Client, ns: str) -> None:
    ext = f"/apis/extensions/v1beta1/namespaces/{ns}/deployments/mut"
    body = {
        "apiVersion": "extensions/v1beta1",
        "kind": "Deployment",
        "metadata": {"name": "mut"},
        "spec": {"template": template("mut")},
    }
    assert client.post(ext.rsplit("/", 1)[0], json=body).status_code == 201
    patch = {
        "spec": {
            "selector": {"matchLabels": {"app": "mut", "v": "2"}},
            "template": {"metadata": {"labels": {"app": "mut", "v": "2"}}},
        }
    }
    changed = client.patch(ext, json=patch, headers=MERGE_PATCH)
    assert changed.status_code == 200, changed.text
    beta2 = f"/apis/apps/v1beta2/namespaces/{ns}/deployments/mut"
    back = {"spec": {"selector": {"matchLabels": {"v": None}}}}
    refused = client.patch(beta2, json=back, headers=MERGE_PATCH)
    assert refused.status_code == 422, refused.text
    assert refused.json()["message"] == (
        'Deployment.apps "mut" is invalid: spec.selector: Invalid value: '
        '{"matchLabels":{"app":"mut"}}: field is immutable'
    )
    stored = client.get(f"/apis/apps/v1/namespaces/{ns}/deployments/mut").json()
    assert stored["spec"]["selector"] == {"matchLabels": {"app": "mut", "v": "2"}}


def test_beta_scale_kinds(client: httpx.Client, ns: str) -> None:
    url = f"/apis/apps/v1beta2/namespaces/{ns}/deployments"
    body = {
        "apiVersion": "apps/v1beta2",
        "kind": "Deployment",
        "metadata": {"name": "sc"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "sc"}},
            "template": template("sc"),
        },
    }
    created = client.post(url, json=body)
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["revisionHistoryLimit"] == 10  # v1beta2 defaults as v1
    for api_version in ("apps/v1beta2", "apps/v1beta1", "extensions/v1beta1"):
        scale = client.get(f"/apis/{api_version}/namespaces/{ns}/deployments/sc/scale")
        assert scale.status_code == 200, scale.text
        assert scale.json()["apiVersion"] == api_version
        assert scale.json()["status"] == {
            "replicas": 0,
            "selector": {"app": "sc"},
            "targetSelector": "app=sc",
        }
    scaled = client.patch(
        f"/apis/apps/v1beta1/namespaces/{ns}/deployments/sc/scale",
        json={"spec": {"replicas": 6}},
        headers=MERGE_PATCH,
    )
    assert scaled.status_code == 200, scaled.text
    assert scaled.json()["spec"] == {"replicas": 6}
    stored = client.get(f"/apis/apps/v1/namespaces/{ns}/deployments/sc").json()
    assert stored["spec"]["replicas"] == 6
    v1_scale = client.get(f"/apis/apps/v1/namespaces/{ns}/deployments/sc/scale").json()
    assert v1_scale["apiVersion"] == "autoscaling/v1"


def test_extensions_daemonset_template_generation(client: httpx.Client, ns: str) -> None:
    url = f"/apis/extensions/v1beta1/namespaces/{ns}/daemonsets"
    body = {
        "apiVersion": "extensions/v1beta1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {"template": template("agent")},
    }
    created = client.post(url, json=body)
    assert created.status_code == 201, created.text
    assert created.headers.get_list("warning") == warning("extensions/v1beta1", "DaemonSet", "1.8")
    spec = created.json()["spec"]
    assert spec["templateGeneration"] == 1
    assert spec["updateStrategy"] == {"type": "OnDelete"}
    v1 = client.get(f"/apis/apps/v1/namespaces/{ns}/daemonsets/agent").json()
    assert v1["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "1"}
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}
    updated = client.patch(f"{url}/agent", json=patch, headers=MERGE_PATCH)
    assert updated.status_code == 200, updated.text
    assert updated.json()["spec"]["templateGeneration"] == 2
    assert updated.json()["metadata"]["generation"] == 2


def test_apps_v1beta1_statefulset_and_controllerrevision(client: httpx.Client, ns: str) -> None:
    url = f"/apis/apps/v1beta1/namespaces/{ns}/statefulsets"
    body = {
        "apiVersion": "apps/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {"serviceName": "db", "template": template("db")},
    }
    created = client.post(url, json=body)
    assert created.status_code == 201, created.text
    assert created.headers.get_list("warning") == warning("apps/v1beta1", "StatefulSet", "1.8")
    assert created.json()["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert created.json()["spec"]["selector"] == {"matchLabels": {"app": "db"}}
    revisions = f"/apis/apps/v1beta2/namespaces/{ns}/controllerrevisions"
    revision = {
        "apiVersion": "apps/v1beta2",
        "kind": "ControllerRevision",
        "metadata": {"name": "db-1"},
        "data": {"spec": {}},
        "revision": 1,
    }
    made = client.post(revisions, json=revision)
    assert made.status_code == 201, made.text
    assert made.headers.get_list("warning") == warning("apps/v1beta2", "ControllerRevision", "1.9")


def test_discovery_at_1_15(client: httpx.Client) -> None:
    groups = {g["name"]: g for g in client.get("/apis").json()["groups"]}
    assert [v["version"] for v in groups["apps"]["versions"]] == ["v1", "v1beta2", "v1beta1"]
    assert [v["version"] for v in groups["extensions"]["versions"]] == ["v1beta1"]
    ext = {r["name"]: r for r in client.get("/apis/extensions/v1beta1").json()["resources"]}
    assert {"deployments", "deployments/scale", "daemonsets", "replicasets"} <= set(ext)
    assert ext["deployments/scale"]["group"] == "extensions"
    assert ext["deployments/scale"]["version"] == "v1beta1"
    beta1 = {r["name"] for r in client.get("/apis/apps/v1beta1").json()["resources"]}
    assert beta1 >= {"deployments", "statefulsets", "controllerrevisions"}
    assert "daemonsets" not in beta1


def test_gone_at_the_default_release(http: httpx.Client, namespace: str) -> None:
    for path in (
        f"/apis/apps/v1beta1/namespaces/{namespace}/deployments",
        f"/apis/apps/v1beta2/namespaces/{namespace}/daemonsets",
        f"/apis/extensions/v1beta1/namespaces/{namespace}/deployments",
    ):
        response = http.get(path)
        assert response.status_code == 404, path
    names = [g["name"] for g in http.get("/apis").json()["groups"]]
    assert "extensions" not in names
    apps = next(g for g in http.get("/apis").json()["groups"] if g["name"] == "apps")
    assert [v["version"] for v in apps["versions"]] == ["v1"]


def test_requested_deprecated_apis_metric(client: httpx.Client, ns: str) -> None:
    """What ``kapi deprecations --metrics`` reads: one gauge per deprecated resource called."""
    assert client.get(f"/apis/apps/v1beta2/namespaces/{ns}/replicasets").status_code == 200
    assert client.get(f"/apis/extensions/v1beta1/namespaces/{ns}/daemonsets").status_code == 200
    lines = client.get("/metrics").text.splitlines()
    for group, version, resource in (
        ("apps", "v1beta2", "replicasets"),
        ("extensions", "v1beta1", "daemonsets"),
    ):
        sample = (
            f'apiserver_requested_deprecated_apis{{group="{group}",removed_release="1.16",'
            f'resource="{resource}",subresource="",version="{version}"}} 1.0'
        )
        assert sample in lines


# --- deployments/rollback (apps/v1beta1, extensions/v1beta1) ---------------------------------

ROLLBACK_ANNOTATION = "deprecated.deployment.rollback.to"


def rollback_deployment(api_version: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": template(name),
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
    created = client.post(base, json=rollback_deployment(api_version, "web"))
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
    assert client.post(base, json=rollback_deployment(api_version, "web")).status_code == 201
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
    assert client.post(base, json=rollback_deployment("apps/v1", "web")).status_code == 201
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
    assert client.post(base, json=rollback_deployment("apps/v1beta1", "web")).status_code == 201
    before = client.get(f"{base}/web").json()
    response = client.post(
        f"{base}/web/rollback", params={"dryRun": "All"}, json=rollback("apps/v1beta1", "web", 3)
    )
    assert response.status_code == 200, response.text
    assert client.get(f"{base}/web").json() == before
