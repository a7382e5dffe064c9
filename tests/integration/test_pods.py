"""core/v1 Pods on a real server: create, status, binding, ephemeral containers, eviction.

Messages are kube-apiserver's (``pkg/registry/core/pod``); kapi runs no kubelet,
so the tests play its part by writing ``/status``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client, config, watch
from kubernetes.client import ApiException

from kapi.runtime import protobuf
from tests.conftest import KapiServer
from tests.helpers.kubectl import make_kubectl
from tests.helpers.protobuf_requests import PROTOBUF, post
from tests.helpers.status import assert_status

Object = dict[str, Any]


def _pod(name: str, labels: dict[str, str] | None = None, **spec: Any) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {"app": "web"}},
        "spec": {"containers": [{"name": "main", "image": "nginx"}], **spec},
    }


def _create(http: httpx.Client, namespace: str, body: Object) -> Object:
    response = http.post(f"/api/v1/namespaces/{namespace}/pods", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def _get(http: httpx.Client, namespace: str, name: str) -> Object:
    response = http.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
    assert response.status_code == 200, response.text
    return response.json()


def test_create_starts_pending_with_qos_class_and_generation(
    http: httpx.Client, namespace: str
) -> None:
    pod = _create(http, namespace, _pod("p1"))
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert pod["metadata"]["generation"] == 1
    guaranteed = _pod("p2")
    guaranteed["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1", "memory": "1Gi"}}
    assert _create(http, namespace, guaranteed)["status"]["qosClass"] == "Guaranteed"
    burstable = _pod("p3")
    burstable["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    assert _create(http, namespace, burstable)["status"]["qosClass"] == "Burstable"


def test_status_written_by_the_client_is_dropped_on_create(
    http: httpx.Client, namespace: str
) -> None:
    body = _pod("p1")
    body["status"] = {"phase": "Running", "podIP": "10.0.0.1"}
    assert _create(http, namespace, body)["status"] == {
        "phase": "Pending",
        "qosClass": "BestEffort",
    }


def test_status_subresource_keeps_spec_and_backfills_qos(
    http: httpx.Client, namespace: str
) -> None:
    pod = _create(http, namespace, _pod("p1"))
    pod["status"] = {"phase": "Running", "podIP": "10.0.0.7", "podIPs": [{"ip": "10.0.0.7"}]}
    pod["spec"]["nodeName"] = "ignored"
    response = http.put(f"/api/v1/namespaces/{namespace}/pods/p1/status", json=pod)
    assert response.status_code == 200, response.text
    updated = response.json()
    assert updated["status"]["phase"] == "Running"
    assert updated["status"]["qosClass"] == "BestEffort"
    assert "nodeName" not in updated["spec"]
    assert updated["metadata"]["generation"] == 1
    found = http.get(
        f"/api/v1/namespaces/{namespace}/pods", params={"fieldSelector": "status.podIP=10.0.0.7"}
    ).json()["items"]
    assert [p["metadata"]["name"] for p in found] == ["p1"]


def test_spec_change_bumps_generation(http: httpx.Client, namespace: str) -> None:
    _create(http, namespace, _pod("p1"))
    response = http.patch(
        f"/api/v1/namespaces/{namespace}/pods/p1",
        json={"spec": {"activeDeadlineSeconds": 30}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["metadata"]["generation"] == 2


def test_binding_sets_node_once(http: httpx.Client, namespace: str) -> None:
    _create(http, namespace, _pod("p1"))
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p1", "annotations": {"bound-by": "test"}},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "node-a"},
    }
    path = f"/api/v1/namespaces/{namespace}/pods/p1/binding"
    response = http.post(path, json=binding)
    assert response.status_code == 201, response.text
    assert response.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }
    pod = _get(http, namespace, "p1")
    assert pod["spec"]["nodeName"] == "node-a"
    assert pod["metadata"]["annotations"] == {"bound-by": "test"}
    [scheduled] = pod["status"]["conditions"]
    assert (scheduled["type"], scheduled["status"]) == ("PodScheduled", "True")
    found = http.get(
        f"/api/v1/namespaces/{namespace}/pods", params={"fieldSelector": "spec.nodeName=node-a"}
    ).json()["items"]
    assert [p["metadata"]["name"] for p in found] == ["p1"]

    binding["target"]["name"] = "node-b"
    assert_status(
        http.post(path, json=binding),
        409,
        "Conflict",
        'Operation cannot be fulfilled on pods/binding "p1": pod p1 is already assigned to '
        'node "node-a"',
        {"name": "p1", "kind": "pods/binding"},
    )
    assert _get(http, namespace, "p1") == pod


def test_binding_refusals(http: httpx.Client, namespace: str) -> None:
    _create(http, namespace, _pod("p1"))
    path = f"/api/v1/namespaces/{namespace}/pods/p1/binding"
    other = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p2"}, "target": {}}
    assert_status(
        http.post(path, json=other),
        400,
        "BadRequest",
        "name in URL does not match name in Binding object",
    )
    to_pod = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p1"},
        "target": {"kind": "Pod"},
    }
    assert_status(
        http.post(path, json=to_pod),
        500,
        "",
        '[target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", '
        "target.name: Required value]",
    )
    assert_status(http.get(path), 405, "MethodNotAllowed")
    assert "nodeName" not in _get(http, namespace, "p1")["spec"]


def _running(http: httpx.Client, namespace: str, name: str, *, ready: bool) -> None:
    pod = _get(http, namespace, name)
    pod["status"]["phase"] = "Running"
    pod["status"]["conditions"] = [
        {"type": "Ready", "status": "True" if ready else "False"},
    ]
    response = http.put(f"/api/v1/namespaces/{namespace}/pods/{name}/status", json=pod)
    assert response.status_code == 200, response.text


def _pdb(http: httpx.Client, namespace: str, allowed: int) -> Object:
    body = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "budget"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    base = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets"
    response = http.post(base, json=body)
    assert response.status_code == 201, response.text
    pdb = response.json()
    pdb["status"] = {
        "observedGeneration": 1,
        "disruptionsAllowed": allowed,
        "currentHealthy": 1 + allowed,
        "desiredHealthy": 1,
        "expectedPods": 1 + allowed,
    }
    response = http.put(f"{base}/budget/status", json=pdb)
    assert response.status_code == 200, response.text
    return response.json()


def _evict(http: httpx.Client, namespace: str, name: str, version: str = "v1") -> httpx.Response:
    return http.post(
        f"/api/v1/namespaces/{namespace}/pods/{name}/eviction",
        json={"apiVersion": f"policy/{version}", "kind": "Eviction", "metadata": {"name": name}},
    )


def test_eviction_refused_by_budget_then_allowed(http: httpx.Client, namespace: str) -> None:
    _create(http, namespace, _pod("p1"))
    _running(http, namespace, "p1", ready=True)
    _pdb(http, namespace, allowed=0)
    refused = assert_status(
        _evict(http, namespace, "p1"),
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
    )
    assert refused["details"] == {
        "causes": [
            {
                "reason": "DisruptionBudget",
                "message": "The disruption budget budget needs 1 healthy pods and has 1 currently",
            }
        ]
    }
    assert _get(http, namespace, "p1")["status"]["phase"] == "Running"

    base = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/budget"
    pdb = http.get(base).json()
    pdb["status"].update(disruptionsAllowed=1, currentHealthy=2, expectedPods=2)
    assert http.put(f"{base}/status", json=pdb).status_code == 200
    response = _evict(http, namespace, "p1", "v1beta1")
    assert response.status_code == 201, response.text
    assert response.json()["status"] == "Success"
    assert http.get(f"/api/v1/namespaces/{namespace}/pods/p1").status_code == 404
    status = http.get(base).json()["status"]
    assert status["disruptionsAllowed"] == 0
    assert list(status["disruptedPods"]) == ["p1"]
    [condition] = status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "DisruptionAllowed",
        "False",
        "InsufficientPods",
    )


def test_pending_pod_evicts_without_budget_check(http: httpx.Client, namespace: str) -> None:
    created = _create(http, namespace, _pod("p1"))
    _pdb(http, namespace, allowed=0)
    assert _evict(http, namespace, "p1").status_code == 201
    assert http.get(f"/api/v1/namespaces/{namespace}/pods/p1").status_code == 404
    # Watchers see the pod marked as a disruption target, then deleted.
    response = http.get(
        f"/api/v1/namespaces/{namespace}/pods",
        params={
            "watch": "1",
            "resourceVersion": created["metadata"]["resourceVersion"],
            "timeoutSeconds": "1",
        },
    )
    events = [json.loads(line) for line in response.text.splitlines()]
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    [condition] = events[0]["object"]["status"]["conditions"]
    assert {k: condition[k] for k in ("type", "status", "reason", "message")} == {
        "type": "DisruptionTarget",
        "status": "True",
        "reason": "EvictionByEvictionAPI",
        "message": "Eviction API: evicting",
    }


def test_budget_not_yet_observed_is_still_processing(http: httpx.Client, namespace: str) -> None:
    _create(http, namespace, _pod("p1"))
    _running(http, namespace, "p1", ready=True)
    body = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "fresh"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    assert (
        http.post(
            f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets", json=body
        ).status_code
        == 201
    )
    refused = assert_status(
        _evict(http, namespace, "p1"),
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
    )
    assert refused["details"]["retryAfterSeconds"] == 10
    assert refused["details"]["causes"][0]["message"] == (
        "The disruption budget fresh is still being processed by the server."
    )
    assert _get(http, namespace, "p1")["metadata"]["name"] == "p1"


def test_ephemeral_containers_subresource(http: httpx.Client, namespace: str) -> None:
    _create(http, namespace, _pod("p1"))
    path = f"/api/v1/namespaces/{namespace}/pods/p1/ephemeralcontainers"
    pod = http.get(path).json()
    debugger = {"name": "debugger", "image": "busybox", "stdin": True, "tty": True}
    pod["spec"]["ephemeralContainers"] = [debugger]
    pod["spec"]["containers"][0]["image"] = "ignored"
    response = http.put(path, json=pod)
    assert response.status_code == 200, response.text
    updated = response.json()
    assert [c["name"] for c in updated["spec"]["ephemeralContainers"]] == ["debugger"]
    assert updated["spec"]["containers"][0]["image"] == "nginx"
    assert updated["metadata"]["generation"] == 2  # the spec changed, as upstream counts it

    updated["spec"]["ephemeralContainers"] = []
    assert_status(
        http.put(path, json=updated),
        422,
        "Invalid",
        'Pod "p1" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral '
        'containers "debugger" may not be removed\n',
    )
    assert [c["name"] for c in _get(http, namespace, "p1")["spec"]["ephemeralContainers"]] == [
        "debugger"
    ]


def test_ephemeral_containers_refused_on_create(http: httpx.Client, namespace: str) -> None:
    body = _pod("p1", ephemeralContainers=[{"name": "debugger", "image": "busybox"}])
    assert_status(
        http.post(f"/api/v1/namespaces/{namespace}/pods", json=body),
        422,
        "Invalid",
        'Pod "p1" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create',
    )
    assert http.get(f"/api/v1/namespaces/{namespace}/pods/p1").status_code == 404


def test_discovery_lists_pod_subresources(http: httpx.Client) -> None:
    resources = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}
    assert resources["pods"]["shortNames"] == ["po"]
    assert resources["pods"]["categories"] == ["all"]
    assert resources["pods/binding"]["kind"] == "Binding"
    assert resources["pods/binding"]["verbs"] == ["create"]
    eviction = resources["pods/eviction"]
    assert (eviction["group"], eviction["version"], eviction["kind"]) == (
        "policy",
        "v1",
        "Eviction",
    )
    assert eviction["verbs"] == ["create"]
    assert resources["pods/ephemeralcontainers"]["verbs"] == ["get", "patch", "update"]
    assert resources["pods/status"]["kind"] == "Pod"


#: kube-apiserver's refusal of a pod update that changes more than it allows.
POD_UPDATE_FORBIDDEN = (
    'Pod "p1" is invalid: spec: Forbidden: pod updates may not change fields other than '
    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
    "`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
    "negative)\n"
)


def test_pod_spec_is_immutable_but_images(http: httpx.Client, namespace: str) -> None:
    pod = _create(http, namespace, _pod("p1"))
    path = f"/api/v1/namespaces/{namespace}/pods/p1"
    changed = {**pod, "spec": {**pod["spec"], "restartPolicy": "Never"}}
    refused = assert_status(http.put(path, json=changed), 422, "Invalid")
    assert refused["message"].startswith(POD_UPDATE_FORBIDDEN), refused["message"]
    assert refused["details"]["causes"][0]["field"] == "spec"
    assert _get(http, namespace, "p1") == pod
    containers = [{**pod["spec"]["containers"][0], "image": "nginx:1.27"}]
    response = http.put(path, json={**pod, "spec": {**pod["spec"], "containers": containers}})
    assert response.status_code == 200, response.text
    assert response.json()["spec"]["containers"][0]["image"] == "nginx:1.27"
    extra = [*containers, {"name": "two", "image": "busybox"}]
    assert_status(
        http.put(path, json={**response.json(), "spec": {**pod["spec"], "containers": extra}}),
        422,
        "Invalid",
        'Pod "p1" is invalid: spec.containers: Forbidden: pod updates may not add or remove '
        "containers",
    )


def test_kubectl_run_get_and_describe(
    kapi_server: KapiServer, tmp_path: Path, namespace: str
) -> None:
    kubectl = make_kubectl(kapi_server, tmp_path, "1.33")
    assert kubectl.ok("-n", namespace, "run", "nginx", "--image=nginx").stdout == (
        "pod/nginx created\n"
    )
    wide = kubectl.ok("-n", namespace, "get", "pods", "-o", "wide").out_lines
    assert wide[0].split() == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED",
        "NODE",
        "READINESS",
        "GATES",
    ]
    cells = wide[1].split()
    assert cells[:4] == ["nginx", "0/1", "Pending", "0"]
    assert cells[5:] == ["<none>"] * 4
    described = kubectl.ok("-n", namespace, "describe", "pod", "nginx").stdout
    assert "Labels:       run=nginx" in described
    assert "Status:       Pending" in described
    assert "QoS Class:        BestEffort" in described
    pod = kubectl.json("-n", namespace, "get", "pod", "nginx")
    container = pod["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "Always"
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert pod["spec"]["dnsPolicy"] == "ClusterFirst"
    assert kubectl.ok("-n", namespace, "get", "po", "-o", "name").stdout == "pod/nginx\n"
    all_kinds = kubectl.ok("-n", namespace, "get", "all", "-o", "name").stdout
    assert "pod/nginx" in all_kinds
    selected = kubectl.ok(
        "-n", namespace, "get", "pods", "--field-selector=status.phase=Pending", "-o", "name"
    )
    assert selected.stdout == "pod/nginx\n"


def test_kubectl_debug_adds_an_ephemeral_container(
    kapi_server: KapiServer, tmp_path: Path, namespace: str
) -> None:
    kubectl = make_kubectl(kapi_server, tmp_path, "1.33")
    kubectl.ok("-n", namespace, "run", "nginx", "--image=nginx")
    result = kubectl.run(
        "-n", namespace, "debug", "nginx", "--image=busybox", "--attach=false", "-c", "dbg"
    )
    assert result.returncode == 0, str(result)
    pod = kubectl.json("-n", namespace, "get", "pod", "nginx")
    [debugger] = pod["spec"]["ephemeralContainers"]
    assert (debugger["name"], debugger["image"]) == ("dbg", "busybox")


def test_official_client_eviction(kapi_server: KapiServer, namespace: str) -> None:
    api = config.new_client_from_config(config_file=str(kapi_server.kubeconfig))
    try:
        core = client.CoreV1Api(api)
        policy = client.PolicyV1Api(api)
        container = client.V1Container(name="main", image="nginx")
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(name="p1", labels={"app": "web"}),
            spec=client.V1PodSpec(containers=[container]),
        )
        core.create_namespaced_pod(namespace, pod)
        live = core.read_namespaced_pod("p1", namespace)
        live.status.phase = "Running"
        live.status.conditions = [client.V1PodCondition(type="Ready", status="True")]
        core.replace_namespaced_pod_status("p1", namespace, live)
        budget = client.V1PodDisruptionBudget(
            metadata=client.V1ObjectMeta(name="budget"),
            spec=client.V1PodDisruptionBudgetSpec(
                min_available=1, selector=client.V1LabelSelector(match_labels={"app": "web"})
            ),
        )
        policy.create_namespaced_pod_disruption_budget(namespace, budget)
        stored = policy.read_namespaced_pod_disruption_budget("budget", namespace)
        stored.status = client.V1PodDisruptionBudgetStatus(
            observed_generation=1,
            disruptions_allowed=0,
            current_healthy=1,
            desired_healthy=1,
            expected_pods=1,
        )
        policy.replace_namespaced_pod_disruption_budget_status("budget", namespace, stored)
        eviction = client.V1Eviction(metadata=client.V1ObjectMeta(name="p1", namespace=namespace))
        with pytest.raises(ApiException) as refused:
            core.create_namespaced_pod_eviction("p1", namespace, eviction)
        assert refused.value.status == 429
        body = json.loads(refused.value.body)
        assert body["message"] == (
            "Cannot evict pod as it would violate the pod's disruption budget."
        )
        assert body["details"]["causes"][0]["reason"] == "DisruptionBudget"
        assert core.read_namespaced_pod("p1", namespace).status.phase == "Running"

        stored = policy.read_namespaced_pod_disruption_budget("budget", namespace)
        stored.status.disruptions_allowed = 1
        stored.status.current_healthy = 2
        policy.replace_namespaced_pod_disruption_budget_status("budget", namespace, stored)
        core.create_namespaced_pod_eviction("p1", namespace, eviction)
        with pytest.raises(ApiException) as gone:
            core.read_namespaced_pod("p1", namespace)
        assert gone.value.status == 404
        after = policy.read_namespaced_pod_disruption_budget("budget", namespace)
        assert after.status.disruptions_allowed == 0
        assert list(after.status.disrupted_pods) == ["p1"]
    finally:
        api.close()


def test_terminated_container_of_a_never_restarting_pod_stays_terminated(
    http: httpx.Client, namespace: str
) -> None:
    pod = _create(http, namespace, _pod("p1", restartPolicy="Never"))
    path = f"/api/v1/namespaces/{namespace}/pods/p1/status"
    done = {"terminated": {"exitCode": 0}}
    pod["status"]["containerStatuses"] = [
        {
            "name": "main",
            "image": "nginx",
            "imageID": "",
            "ready": False,
            "restartCount": 0,
            "state": done,
        }
    ]
    response = http.put(path, json=pod)
    assert response.status_code == 200, response.text
    revived = response.json()
    revived["status"]["containerStatuses"][0]["state"] = {"running": {}}
    assert_status(
        http.put(path, json=revived),
        422,
        "Invalid",
        'Pod "p1" is invalid: status.containerStatuses[0].state: Forbidden: may not be '
        "transitioned to non-terminated state",
    )
    assert _get(http, namespace, "p1")["status"]["containerStatuses"][0]["state"] == done


def test_protobuf_pod_binding_and_eviction(http: httpx.Client, namespace: str) -> None:

    base = f"/api/v1/namespaces/{namespace}/pods"
    body = protobuf.encode(_pod("p1"))
    created = post(http, base, body, accept=PROTOBUF)
    assert created.status_code == 201, created.text
    assert created.headers["content-type"] == PROTOBUF
    pod = protobuf.decode(created.content)
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert pod["spec"]["containers"][0]["terminationMessagePath"] == "/dev/termination-log"

    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p1"},
        "target": {"kind": "Node", "name": "node-a"},
    }
    bound = post(http, f"{base}/p1/binding", protobuf.encode(binding))
    assert bound.status_code == 201, bound.text
    assert _get(http, namespace, "p1")["spec"]["nodeName"] == "node-a"

    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p1"}}
    evicted = post(http, f"{base}/p1/eviction", protobuf.encode(eviction))
    assert evicted.status_code == 201, evicted.text
    assert http.get(f"{base}/p1").status_code == 404


def test_official_client_create_list_patch_watch(kapi_server: KapiServer, namespace: str) -> None:
    api = config.new_client_from_config(config_file=str(kapi_server.kubeconfig))
    try:
        core = client.CoreV1Api(api)
        for name in ("a", "b"):
            pod = client.V1Pod(
                metadata=client.V1ObjectMeta(name=name, labels={"app": name}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]),
            )
            created = core.create_namespaced_pod(namespace, pod)
            assert created.status.qos_class == "BestEffort"
        listed = core.list_namespaced_pod(namespace, label_selector="app=b")
        assert [p.metadata.name for p in listed.items] == ["b"]
        patched = core.patch_namespaced_pod(
            "a", namespace, {"spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}
        )
        assert patched.spec.containers[0].image == "nginx:1.27"
        assert patched.metadata.generation == 2
        events = list(
            watch.Watch().stream(
                core.list_namespaced_pod,
                namespace,
                field_selector="metadata.name=a",
                timeout_seconds=1,
            )
        )
        assert [(e["type"], e["object"].metadata.name) for e in events] == [("ADDED", "a")]
        assert events[0]["object"].spec.containers[0].image == "nginx:1.27"
    finally:
        api.close()
