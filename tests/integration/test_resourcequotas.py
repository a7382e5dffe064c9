"""core/v1 ResourceQuotas and LimitRanges on a real server: validation, defaults, tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import KapiServer
from tests.helpers.kubectl import make_kubectl
from tests.helpers.status import assert_status

Object = dict[str, Any]
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
MERGE = {"content-type": "application/merge-patch+json"}


def _quotas(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/resourcequotas"


def _limits(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/limitranges"


def _quota(name: str, **spec: Any) -> Object:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": spec}


def _limit_range(name: str, *limits: Object) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": name},
        "spec": {"limits": list(limits)},
    }


# --- ResourceQuota -----------------------------------------------------------------------------


def test_quota_create_clears_status(http: httpx.Client, namespace: str) -> None:
    body = _quota("compute", hard={"requests.cpu": "1", "pods": "10"})
    body["status"] = {"hard": {"pods": "10"}, "used": {"pods": "3"}}
    response = http.post(_quotas(namespace), json=body)
    assert response.status_code == 201, response.text
    quota = response.json()
    assert quota["spec"] == {"hard": {"requests.cpu": "1", "pods": "10"}}
    assert quota["status"] == {}
    assert "generation" not in quota["metadata"]


def test_quota_bad_resource_names_and_quantities(http: httpx.Client, namespace: str) -> None:
    hard = {"cpus": "1", "pods": "1500m", "services": "-1", "example.com/gpu": "2"}
    status = assert_status(
        http.post(_quotas(namespace), json=_quota("bad", hard=hard)),
        422,
        "Invalid",
        'ResourceQuota "bad" is invalid: [spec.hard[cpus]: Invalid value: cpus: must be a '
        "standard resource type or fully qualified, spec.hard[cpus]: Invalid value: cpus: must "
        "be a standard resource for quota, spec.hard[pods]: Invalid value: "
        "resource.Quantity{i:resource.int64Amount{value:1500, scale:-3}, d:resource.infDecAmount"
        '{Dec:(*inf.Dec)(nil)}, s:"1500m", Format:"DecimalSI"}: must be an integer, '
        'spec.hard[services]: Invalid value: "-1": must be greater than or equal to 0]',
    )
    assert {c["field"] for c in status["details"]["causes"]} == {
        "spec.hard[cpus]",
        "spec.hard[pods]",
        "spec.hard[services]",
    }
    assert http.get(_quotas(namespace)).json()["items"] == []


def test_quota_scope_rules(http: httpx.Client, namespace: str) -> None:
    conflicting = _quota("s", hard={"pods": "1"}, scopes=["BestEffort", "NotBestEffort"])
    assert_status(
        http.post(_quotas(namespace), json=conflicting),
        422,
        "Invalid",
        'ResourceQuota "s" is invalid: spec.scopes: Invalid value: '
        '[]core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: conflicting scopes',
    )
    wrong_resource = _quota("s", hard={"requests.cpu": "1"}, scopes=["BestEffort"])
    assert_status(
        http.post(_quotas(namespace), json=wrong_resource),
        422,
        "Invalid",
        'ResourceQuota "s" is invalid: spec.scopes: Invalid value: '
        '[]core.ResourceQuotaScope{"BestEffort"}: unsupported scope applied to resource',
    )
    unknown = _quota("s", hard={"pods": "1"}, scopes=["Sometimes"])
    assert_status(
        http.post(_quotas(namespace), json=unknown),
        422,
        "Invalid",
        'ResourceQuota "s" is invalid: spec.scopes: Invalid value: '
        '[]core.ResourceQuotaScope{"Sometimes"}: unsupported scope',
    )
    selector = {
        "matchExpressions": [
            {"scopeName": "Terminating", "operator": "In", "values": ["x"]},
            {"scopeName": "PriorityClass", "operator": "In"},
        ]
    }
    assert_status(
        http.post(_quotas(namespace), json=_quota("s", hard={"pods": "1"}, scopeSelector=selector)),
        422,
        "Invalid",
        'ResourceQuota "s" is invalid: [spec.scopeSelector.matchExpressions.operator: Invalid '
        "value: \"In\": must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
        "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
        "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity, "
        "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value "
        "when `operator` is 'In' or 'NotIn' for scope selector]",
    )
    assert http.get(_quotas(namespace)).json()["items"] == []


def test_quota_scopes_are_immutable(http: httpx.Client, namespace: str) -> None:
    body = _quota("q", hard={"pods": "5"}, scopes=["NotTerminating"])
    assert http.post(_quotas(namespace), json=body).status_code == 201
    before = http.get(f"{_quotas(namespace)}/q").json()
    assert_status(
        http.patch(
            f"{_quotas(namespace)}/q", json={"spec": {"scopes": ["Terminating"]}}, headers=MERGE
        ),
        422,
        "Invalid",
        'ResourceQuota "q" is invalid: spec.scopes: Invalid value: '
        '[]core.ResourceQuotaScope{"Terminating"}: field is immutable',
    )
    assert http.get(f"{_quotas(namespace)}/q").json() == before
    raised = http.patch(
        f"{_quotas(namespace)}/q", json={"spec": {"hard": {"pods": "9"}}}, headers=MERGE
    )
    assert raised.status_code == 200, raised.text
    assert raised.json()["spec"]["hard"] == {"pods": "9"}


def test_quota_status_subresource(http: httpx.Client, namespace: str) -> None:
    assert http.post(_quotas(namespace), json=_quota("q", hard={"pods": "5"})).status_code == 201
    status = {"status": {"hard": {"pods": "5"}, "used": {"pods": "2"}}}
    # The main resource ignores status; /status ignores the spec.
    main = http.patch(f"{_quotas(namespace)}/q", json=status, headers=MERGE).json()
    assert main["status"] == {}
    body = {**status, "spec": {"hard": {"pods": "100"}}}
    updated = http.patch(f"{_quotas(namespace)}/q/status", json=body, headers=MERGE)
    assert updated.status_code == 200, updated.text
    assert updated.json()["status"] == status["status"]
    assert updated.json()["spec"] == {"hard": {"pods": "5"}}
    bad = {"status": {"used": {"pods": "-2"}}}
    assert_status(
        http.patch(f"{_quotas(namespace)}/q/status", json=bad, headers=MERGE),
        422,
        "Invalid",
        'ResourceQuota "q" is invalid: status.used[pods]: Invalid value: "-2": must be greater '
        "than or equal to 0",
    )
    assert http.get(f"{_quotas(namespace)}/q").json()["status"] == status["status"]


def test_quota_request_above_limit_warns(http: httpx.Client, namespace: str) -> None:
    body = _quota("q", hard={"requests.memory": "2Gi", "limits.memory": "1Gi"})
    response = http.post(_quotas(namespace), json=body)
    assert response.status_code == 201, response.text
    assert response.headers["warning"] == (
        '299 - "ResourceQuota requests.memory (2Gi) should be less than limits.memory (1Gi)"'
    )


def test_quota_table(http: httpx.Client, namespace: str) -> None:
    hard = {"requests.cpu": "1", "limits.cpu": "2", "pods": "10"}
    assert http.post(_quotas(namespace), json=_quota("q", hard=hard)).status_code == 201
    status = {"status": {"hard": hard, "used": {"requests.cpu": "500m", "pods": "1"}}}
    patched = http.patch(f"{_quotas(namespace)}/q/status", json=status, headers=MERGE)
    assert patched.status_code == 200, patched.text
    table = http.get(_quotas(namespace), headers={"accept": TABLE}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age", "Request", "Limit"]
    [row] = table["rows"]
    assert row["cells"][0] == "q"
    assert row["cells"][2:] == ["pods: 1/10, requests.cpu: 500m/1", "limits.cpu: 0/2"]


# --- LimitRange --------------------------------------------------------------------------------


def test_limit_range_container_defaults(http: httpx.Client, namespace: str) -> None:
    item = {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "100m"}}
    response = http.post(_limits(namespace), json=_limit_range("lr", item))
    assert response.status_code == 201, response.text
    [limit] = response.json()["spec"]["limits"]
    assert limit["default"] == {"cpu": "2", "memory": "1Gi"}
    assert limit["defaultRequest"] == {"cpu": "2", "memory": "1Gi"}
    pod_item = {"type": "Pod", "max": {"cpu": "4"}}
    response = http.post(_limits(namespace), json=_limit_range("pods", pod_item))
    assert response.json()["spec"]["limits"] == [pod_item]


def _go_quantity(value: int, text: str, fmt: str = "DecimalSI") -> str:
    return (
        f"resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:0}}, "
        f'd:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:"{text}", Format:"{fmt}"}}'
    )


def test_limit_range_min_above_max(http: httpx.Client, namespace: str) -> None:
    # The defaults copy max into default and defaultRequest, which min then exceeds too.
    item = {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}
    status = assert_status(
        http.post(_limits(namespace), json=_limit_range("lr", item)),
        422,
        "Invalid",
        f'LimitRange "lr" is invalid: [spec.limits[0].min[cpu]: Invalid value: '
        f"{_go_quantity(2, '2')}: min value 2 is greater than max value 1, "
        f"spec.limits[0].defaultRequest[cpu]: Invalid value: {_go_quantity(1, '1')}: min value "
        f"2 is greater than default request value 1, spec.limits[0].default[cpu]: Invalid "
        f"value: {_go_quantity(2, '2')}: min value 2 is greater than default value 1]",
    )
    assert [c["reason"] for c in status["details"]["causes"]] == ["FieldValueInvalid"] * 3
    assert http.get(_limits(namespace)).json()["items"] == []


def test_limit_range_default_above_max(http: httpx.Client, namespace: str) -> None:
    item = {"type": "Container", "max": {"memory": "1Gi"}, "default": {"memory": "2Gi"}}
    gi = _go_quantity(1073741824, "1Gi", "BinarySI")
    assert_status(
        http.post(_limits(namespace), json=_limit_range("lr", item)),
        422,
        "Invalid",
        'LimitRange "lr" is invalid: [spec.limits[0].defaultRequest[memory]: Invalid value: '
        f"{_go_quantity(2147483648, '2Gi', 'BinarySI')}: default request value 2Gi is greater "
        f"than max value 1Gi, spec.limits[0].default[memory]: Invalid value: {gi}: default "
        "value 2Gi is greater than max value 1Gi]",
    )
    assert http.get(_limits(namespace)).json()["items"] == []


def test_limit_range_bad_types_and_pod_defaults(http: httpx.Client, namespace: str) -> None:
    items = (
        {"type": "Node", "max": {"cpu": "1"}},
        {"type": "Pod", "max": {"cpu": "1"}, "default": {"cpu": "1"}},
        {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}},
    )
    assert_status(
        http.post(_limits(namespace), json=_limit_range("lr", *items)),
        422,
        "Invalid",
        'LimitRange "lr" is invalid: [spec.limits[0].type: Invalid value: "Node": must be a '
        "standard limit type or fully qualified, spec.limits[1].default: Forbidden: may not be "
        "specified when `type` is 'Pod', spec.limits[2].limits: Required value: either minimum "
        "or maximum storage value is required, but neither was provided]",
    )
    assert http.get(_limits(namespace)).json()["items"] == []


def test_limit_range_put_creates_and_name_defaults(http: httpx.Client, namespace: str) -> None:
    item = {"type": "Container", "max": {"cpu": "1"}}
    response = http.put(f"{_limits(namespace)}/made", json=_limit_range("made", item))
    assert response.status_code == 201, response.text
    body = _limit_range("", item)
    del body["metadata"]["name"]
    response = http.post(_limits(namespace), json=body)
    assert response.status_code == 201, response.text
    assert len(response.json()["metadata"]["name"]) == 36  # a UUID


def test_limit_range_table_and_discovery(http: httpx.Client, namespace: str) -> None:
    item = {"type": "Container", "max": {"cpu": "1"}}
    assert http.post(_limits(namespace), json=_limit_range("lr", item)).status_code == 201
    table = http.get(_limits(namespace), headers={"accept": TABLE}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Created At"]
    resources = {r["name"]: r for r in http.get("/api/v1").json()["resources"]}
    assert resources["limitranges"]["shortNames"] == ["limits"]
    assert resources["resourcequotas"]["shortNames"] == ["quota"]
    assert "resourcequotas/status" in resources
    assert "limitranges/status" not in resources


def test_kubectl_apply_get_describe(
    kapi_server: KapiServer, tmp_path: Path, namespace: str
) -> None:
    kubectl = make_kubectl(kapi_server, tmp_path, "1.33")
    manifest = tmp_path / "quota.json"
    quota = _quota("compute", hard={"requests.cpu": "1", "limits.cpu": "2", "pods": "4"})
    limits = _limit_range(
        "defaults", {"type": "Container", "default": {"cpu": "500m"}, "max": {"cpu": "1"}}
    )
    manifest.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [quota, limits]}))
    assert kubectl.ok("-n", namespace, "apply", "-f", str(manifest)).stdout == (
        "resourcequota/compute created\nlimitrange/defaults created\n"
    )
    lines = kubectl.ok("-n", namespace, "get", "quota").out_lines
    assert lines[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert lines[1].split()[0] == "compute"
    lines = kubectl.ok("-n", namespace, "get", "limits").out_lines
    assert lines[0].split() == ["NAME", "CREATED", "AT"]
    assert lines[1].split()[0] == "defaults"
    described = kubectl.ok("-n", namespace, "describe", "quota", "compute").stdout
    # No quota controller fills status.hard and status.used, which describe lists.
    assert described == (
        f"Name:       compute\nNamespace:  {namespace}\nResource    Used  Hard\n"
        "--------    ----  ----\n"
    )
    described = kubectl.ok("-n", namespace, "describe", "limitrange", "defaults").stdout
    assert "Container" in described and "500m" in described
    # limits is an atomic list and the server defaulted defaultRequest into it, so kubectl's
    # patch replaces the list again, as against kube-apiserver.
    assert kubectl.ok("-n", namespace, "apply", "-f", str(manifest)).stdout == (
        "resourcequota/compute unchanged\nlimitrange/defaults configured\n"
    )


# --- LimitRanger admission (defaulting half) -------------------------------------------------


def _pod(name: str, *containers: Object, init: tuple[Object, ...] = ()) -> Object:
    spec: Object = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_limit_ranger_defaults_pod_resources(http: httpx.Client, namespace: str) -> None:
    item = {
        "type": "Container",
        "default": {"cpu": "500m", "memory": "256Mi"},
        "defaultRequest": {"cpu": "100m"},
    }
    assert http.post(_limits(namespace), json=_limit_range("lr", item)).status_code == 201
    pods = f"/api/v1/namespaces/{namespace}/pods"
    bare = {"name": "app", "image": "nginx"}
    # Limits without requests: the pod defaults copy them to requests before admission.
    sized = {"name": "sized", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}
    init = {"name": "setup", "image": "busybox", "resources": {"requests": {"memory": "128Mi"}}}
    response = http.post(pods, json=_pod("p", bare, sized, init=(init,)))
    assert response.status_code == 201, response.text
    pod = response.json()
    app, big = pod["spec"]["containers"]
    assert app["resources"] == {
        "limits": {"cpu": "500m", "memory": "256Mi"},
        "requests": {"cpu": "100m", "memory": "256Mi"},
    }
    assert big["resources"] == {
        "limits": {"cpu": "1", "memory": "256Mi"},
        "requests": {"cpu": "1", "memory": "256Mi"},
    }
    [setup] = pod["spec"]["initContainers"]
    assert setup["resources"] == {
        "limits": {"cpu": "500m", "memory": "256Mi"},
        "requests": {"cpu": "100m", "memory": "128Mi"},
    }
    assert pod["metadata"]["annotations"] == {
        "kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu, memory request for "
        "container app; cpu, memory limit for container app; memory request for container "
        "sized; memory limit for container sized; cpu request for init container setup; cpu, "
        "memory limit for init container setup"
    }


def test_limit_ranger_leaves_pods_alone_without_container_defaults(
    http: httpx.Client, namespace: str
) -> None:
    pods = f"/api/v1/namespaces/{namespace}/pods"
    bare = {"name": "app", "image": "nginx"}
    pod = http.post(pods, json=_pod("before", bare)).json()
    assert "annotations" not in pod["metadata"]
    item = {"type": "Pod", "max": {"cpu": "4"}}
    assert http.post(_limits(namespace), json=_limit_range("lr", item)).status_code == 201
    # A Pod item sets no container defaults, and a pod without a cpu limit exceeds its max.
    assert_status(
        http.post(pods, json=_pod("after", bare)),
        403,
        "Forbidden",
        'pods "after" is forbidden: maximum cpu usage per Pod is 4.  No limit is specified',
    )
    sized = {**bare, "resources": {"limits": {"cpu": "1"}}}
    pod = http.post(pods, json=_pod("after", sized)).json()
    assert "annotations" not in pod["metadata"]
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "1"},
        "requests": {"cpu": "1"},
    }


def test_limit_ranger_refuses_pods_outside_the_bounds(http: httpx.Client, namespace: str) -> None:
    container_item = {
        "type": "Container",
        "max": {"cpu": "500m"},
        "min": {"memory": "64Mi"},
        "default": {"cpu": "200m"},
    }
    pod_item = {"type": "Pod", "max": {"cpu": "1"}}
    body = _limit_range("lr", container_item, pod_item)
    assert http.post(_limits(namespace), json=body).status_code == 201
    pods = f"/api/v1/namespaces/{namespace}/pods"
    big = {
        "name": "big",
        "image": "nginx",
        "resources": {"limits": {"cpu": "2"}, "requests": {"memory": "128Mi"}},
    }
    assert_status(
        http.post(pods, json=_pod("p", big)),
        403,
        "Forbidden",
        'pods "p" is forbidden: [maximum cpu usage per Container is 500m, but limit is 2, '
        "maximum cpu usage per Pod is 1, but limit is 2]",
        {"name": "p", "kind": "pods"},
    )
    small = {"name": "small", "image": "nginx", "resources": {"requests": {"memory": "32Mi"}}}
    assert_status(
        http.post(pods, json=_pod("q", small)),
        403,
        "Forbidden",
        'pods "q" is forbidden: minimum memory usage per Container is 64Mi, but request is 32Mi',
    )
    assert http.get(pods).json()["items"] == []
    fits = {"name": "ok", "image": "nginx", "resources": {"requests": {"memory": "64Mi"}}}
    created = http.post(pods, json=_pod("r", fits))
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "200m"}
