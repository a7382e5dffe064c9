"""apps/v1 Deployments on a real server: defaults, validation, status, generation, /scale.

Refusals are checked with upstream's status, reason and message, and the
stored object is read back to show it did not change.
"""

from __future__ import annotations

import copy
from typing import Any

import httpx

MERGE_PATCH = {"content-type": "application/merge-patch+json"}
STRATEGIC = {"content-type": "application/strategic-merge-patch+json"}
MISMATCH = "`selector` does not match template `labels`"


def deployment(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}
                    ]
                },
            },
        },
    }
    body["spec"].update(spec)
    return body


def base(namespace: str) -> str:
    return f"/apis/apps/v1/namespaces/{namespace}/deployments"


def create(http: httpx.Client, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    response = http.post(base(namespace), json=body)
    assert response.status_code == 201, response.text
    return response.json()


def assert_invalid(response: httpx.Response, name: str, message: str) -> None:
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["reason"] == "Invalid"
    assert status["details"]["kind"] == "Deployment"
    assert status["details"]["group"] == "apps"
    assert status["message"] == f'Deployment.apps "{name}" is invalid: {message}'


def test_create_defaults_spec_and_pod_template(http: httpx.Client, namespace: str) -> None:
    created = create(http, namespace, deployment("web"))
    spec = created["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    pod = spec["template"]["spec"]
    assert pod["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert pod["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert (pod["restartPolicy"], pod["dnsPolicy"]) == ("Always", "ClusterFirst")
    assert created["metadata"]["generation"] == 1
    assert created["status"] == {}
    got = http.get(f"{base(namespace)}/web")
    assert got.status_code == 200
    assert got.json()["spec"] == spec
    listed = http.get(base(namespace)).json()
    assert listed["kind"] == "DeploymentList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["web"]


def test_status_sent_on_create_is_dropped(http: httpx.Client, namespace: str) -> None:
    body = deployment("st")
    body["status"] = {"replicas": 4, "readyReplicas": 4}
    assert create(http, namespace, body)["status"] == {}


def test_selector_not_matching_template_is_refused(http: httpx.Client, namespace: str) -> None:
    body = deployment("bad", selector={"matchLabels": {"app": "other"}})
    response = http.post(base(namespace), json=body)
    assert_invalid(
        response,
        "bad",
        f'spec.template.metadata.labels: Invalid value: {{"app":"bad"}}: {MISMATCH}',
    )
    assert http.get(f"{base(namespace)}/bad").status_code == 404


def test_missing_selector_and_containers(http: httpx.Client, namespace: str) -> None:
    body = deployment("nosel")
    del body["spec"]["selector"]
    body["spec"]["template"]["spec"]["containers"] = []
    response = http.post(base(namespace), json=body)
    assert_invalid(
        response,
        "nosel",
        "[spec.selector: Required value, "
        f'spec.template.metadata.labels: Invalid value: {{"app":"nosel"}}: {MISMATCH}, '
        "spec.template.spec.containers: Required value]",
    )
    assert http.get(base(namespace)).json()["items"] == []


def test_negative_replicas_and_restart_policy(http: httpx.Client, namespace: str) -> None:
    body = deployment("neg", replicas=-1)
    body["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    response = http.post(base(namespace), json=body)
    assert_invalid(
        response,
        "neg",
        "[spec.replicas: Invalid value: -1: must be greater than or equal to 0, "
        'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": '
        'supported values: "Always"]',
    )


def test_strategy_rules(http: httpx.Client, namespace: str) -> None:
    body = deployment(
        "strat",
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}},
    )
    response = http.post(base(namespace), json=body)
    assert_invalid(
        response,
        "strat",
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: "
        "may not be 0 when `maxSurge` is 0",
    )
    body["spec"]["strategy"] = {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}
    response = http.post(base(namespace), json=body)
    assert_invalid(
        response,
        "strat",
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` "
        "is 'Recreate'",
    )


def test_selector_is_immutable(http: httpx.Client, namespace: str) -> None:
    created = create(http, namespace, deployment("imm"))
    changed = copy.deepcopy(created)
    changed["spec"]["selector"] = {"matchLabels": {"app": "imm", "tier": "x"}}
    changed["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    response = http.put(f"{base(namespace)}/imm", json=changed)
    assert_invalid(
        response,
        "imm",
        'spec.selector: Invalid value: {"matchLabels":{"app":"imm","tier":"x"}}: '
        "field is immutable",
    )
    stored = http.get(f"{base(namespace)}/imm").json()
    assert stored["spec"]["selector"] == {"matchLabels": {"app": "imm"}}
    assert stored["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_strategic_merge_patch_merges_containers_by_name(
    http: httpx.Client, namespace: str
) -> None:
    create(http, namespace, deployment("smp"))
    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "sidecar", "image": "busybox"}]},
            }
        }
    }
    response = http.patch(f"{base(namespace)}/smp", json=patch, headers=STRATEGIC)
    assert response.status_code == 200, response.text
    containers = response.json()["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["sidecar", "web"]
    assert containers[0]["imagePullPolicy"] == "Always"  # the new container is defaulted
    assert response.json()["metadata"]["generation"] == 2


def test_generation_follows_spec_and_annotations_not_labels(
    http: httpx.Client, namespace: str
) -> None:
    create(http, namespace, deployment("gen"))
    url = f"{base(namespace)}/gen"

    def patched(body: dict[str, Any]) -> int:
        response = http.patch(url, json=body, headers=MERGE_PATCH)
        assert response.status_code == 200, response.text
        return int(response.json()["metadata"]["generation"])

    assert patched({"metadata": {"labels": {"team": "a"}}}) == 1
    assert patched({"metadata": {"annotations": {"note": "x"}}}) == 2
    assert patched({"spec": {"paused": True}}) == 3
    assert patched({"status": {"replicas": 3}}) == 3  # status is the subresource's
    assert http.get(url).json()["status"] == {}


def test_status_subresource(http: httpx.Client, namespace: str) -> None:
    create(http, namespace, deployment("stat"))
    url = f"{base(namespace)}/stat/status"
    status = {"replicas": 2, "readyReplicas": 2, "availableReplicas": 1, "updatedReplicas": 2}
    response = http.patch(
        url, json={"status": status, "spec": {"replicas": 9}}, headers=MERGE_PATCH
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == status
    assert body["spec"]["replicas"] == 1  # spec changes through /status are ignored
    assert body["metadata"]["generation"] == 1
    bad = {"status": {"readyReplicas": 5}}
    refused = http.patch(url, json=bad, headers=MERGE_PATCH)
    assert_invalid(
        refused,
        "stat",
        "status.readyReplicas: Invalid value: 5: cannot be greater than status.replicas",
    )
    assert http.get(f"{base(namespace)}/stat").json()["status"] == status


def test_scale_get_and_update(http: httpx.Client, namespace: str) -> None:
    create(http, namespace, deployment("sc", replicas=2))
    url = f"{base(namespace)}/sc/scale"
    scale = http.get(url)
    assert scale.status_code == 200, scale.text
    body = scale.json()
    assert (body["apiVersion"], body["kind"]) == ("autoscaling/v1", "Scale")
    assert body["spec"] == {"replicas": 2}
    assert body["status"] == {"replicas": 0, "selector": "app=sc"}
    body["spec"]["replicas"] = 4
    updated = http.put(url, json=body)
    assert updated.status_code == 200, updated.text
    assert updated.json()["spec"] == {"replicas": 4}
    stored = http.get(f"{base(namespace)}/sc").json()
    assert (stored["spec"]["replicas"], stored["metadata"]["generation"]) == (4, 2)
    patched = http.patch(url, json={"spec": {"replicas": 1}}, headers=MERGE_PATCH)
    assert patched.status_code == 200, patched.text
    assert http.get(f"{base(namespace)}/sc").json()["spec"]["replicas"] == 1
    negative = http.patch(url, json={"spec": {"replicas": -3}}, headers=MERGE_PATCH)
    assert negative.status_code == 422, negative.text
    assert negative.json()["message"] == (
        'Scale.autoscaling "sc" is invalid: spec.replicas: Invalid value: -3: '
        "must be greater than or equal to 0"
    )
    assert http.get(f"{base(namespace)}/sc").json()["spec"]["replicas"] == 1


def test_scale_selector_with_expressions(http: httpx.Client, namespace: str) -> None:
    body = deployment(
        "expr",
        selector={
            "matchLabels": {"app": "expr"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
        },
    )
    body["spec"]["template"]["metadata"]["labels"]["tier"] = "a"
    create(http, namespace, body)
    scale = http.get(f"{base(namespace)}/expr/scale").json()
    assert scale["status"]["selector"] == "app=expr,tier in (a,b)"


def test_delete(http: httpx.Client, namespace: str) -> None:
    create(http, namespace, deployment("gone"))
    response = http.delete(f"{base(namespace)}/gone")
    assert response.status_code == 200, response.text
    missing = http.get(f"{base(namespace)}/gone")
    assert missing.status_code == 404
    assert missing.json()["message"] == 'deployments.apps "gone" not found'


def test_discovery_lists_apps_resources(http: httpx.Client) -> None:
    listed = http.get("/apis/apps/v1").json()
    by_name = {r["name"]: r for r in listed["resources"]}
    assert by_name["deployments"]["shortNames"] == ["deploy"]
    assert by_name["deployments"]["categories"] == ["all"]
    assert by_name["deployments/scale"]["group"] == "autoscaling"
    assert by_name["deployments/scale"]["kind"] == "Scale"
    assert by_name["statefulsets"]["shortNames"] == ["sts"]
    assert by_name["daemonsets"]["shortNames"] == ["ds"]
    assert by_name["replicasets"]["shortNames"] == ["rs"]
    assert "controllerrevisions/status" not in by_name
    assert "daemonsets/scale" not in by_name
    assert http.get("/apis/apps/v1beta1").status_code == 404
    assert http.get("/apis/extensions/v1beta1").status_code == 404
