"""ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions (apps/v1) on a real server."""

from __future__ import annotations

import copy
from typing import Any

import httpx

MERGE_PATCH = {"content-type": "application/merge-patch+json"}
TABLE = {"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def url(namespace: str, plural: str, name: str = "") -> str:
    path = f"/apis/apps/v1/namespaces/{namespace}/{plural}"
    return f"{path}/{name}" if name else path


def template(app: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }


def workload(kind: str, name: str, **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": template(name), **spec},
    }
    return body


def created(http: httpx.Client, namespace: str, plural: str, body: dict[str, Any]) -> Any:
    response = http.post(url(namespace, plural), json=body)
    assert response.status_code == 201, response.text
    return response.json()


def test_replicaset_defaults_and_immutable_selector(http: httpx.Client, namespace: str) -> None:
    rs = created(http, namespace, "replicasets", workload("ReplicaSet", "rs1"))
    assert rs["spec"]["replicas"] == 1
    assert rs["status"] == {"replicas": 0}  # Go writes the non-omitempty count
    assert rs["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    changed = copy.deepcopy(rs)
    changed["spec"]["selector"]["matchLabels"]["x"] = "y"
    changed["spec"]["template"]["metadata"]["labels"]["x"] = "y"
    response = http.put(url(namespace, "replicasets", "rs1"), json=changed)
    assert response.status_code == 422, response.text
    assert response.json()["message"] == (
        'ReplicaSet.apps "rs1" is invalid: spec.selector: Invalid value: '
        '{"matchLabels":{"app":"rs1","x":"y"}}: field is immutable'
    )
    stored = http.get(url(namespace, "replicasets", "rs1")).json()
    assert stored["spec"]["selector"] == {"matchLabels": {"app": "rs1"}}


def test_replicaset_empty_selector_message_is_upstreams(http: httpx.Client, namespace: str) -> None:
    response = http.post(
        url(namespace, "replicasets"), json=workload("ReplicaSet", "rs2", selector={})
    )
    assert response.status_code == 422, response.text
    assert response.json()["message"] == (
        'ReplicaSet.apps "rs2" is invalid: spec.selector: Invalid value: {}: '
        "empty selector is invalid for deployment"
    )


def test_statefulset_defaults_name_and_scale(http: httpx.Client, namespace: str) -> None:
    body = workload("StatefulSet", "db", serviceName="db")
    body["spec"]["volumeClaimTemplates"] = [
        {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    ]
    sts = created(http, namespace, "statefulsets", body)
    spec = sts["spec"]
    assert sts["status"] == {"replicas": 0, "availableReplicas": 0}
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Retain",
        "whenScaled": "Retain",
    }
    claim = spec["volumeClaimTemplates"][0]
    assert claim["spec"]["volumeMode"] == "Filesystem"
    assert claim["status"] == {"phase": "Pending"}
    scale = http.get(url(namespace, "statefulsets", "db") + "/scale").json()
    assert scale["status"] == {"replicas": 0, "selector": "app=db"}

    dotted = workload("StatefulSet", "db.v1", serviceName="db")
    response = http.post(url(namespace, "statefulsets"), json=dotted)
    assert response.status_code == 422, response.text
    assert response.json()["message"] == (
        'StatefulSet.apps "db.v1" is invalid: metadata.name: Invalid value: "db.v1": '
        "must not contain dots"
    )


def test_statefulset_update_of_fixed_fields(http: httpx.Client, namespace: str) -> None:
    created(http, namespace, "statefulsets", workload("StatefulSet", "web", serviceName="web"))
    ok = http.patch(
        url(namespace, "statefulsets", "web"),
        json={"spec": {"replicas": 4, "minReadySeconds": 5}},
        headers=MERGE_PATCH,
    )
    assert ok.status_code == 200, ok.text
    refused = http.patch(
        url(namespace, "statefulsets", "web"),
        json={"spec": {"podManagementPolicy": "Parallel"}},
        headers=MERGE_PATCH,
    )
    assert refused.status_code == 422, refused.text
    assert refused.json()["message"] == (
        'StatefulSet.apps "web" is invalid: spec: Forbidden: updates to statefulset spec for '
        "fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    )
    stored = http.get(url(namespace, "statefulsets", "web")).json()
    assert stored["spec"]["podManagementPolicy"] == "OrderedReady"
    assert stored["metadata"]["generation"] == 2


def test_daemonset_template_generation_annotation(http: httpx.Client, namespace: str) -> None:
    ds = created(http, namespace, "daemonsets", workload("DaemonSet", "agent"))
    assert ds["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "1"}
    assert ds["status"] == {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    }
    assert ds["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    patch = {"spec": {"template": {"metadata": {"labels": {"app": "agent", "v": "2"}}}}}
    updated = http.patch(url(namespace, "daemonsets", "agent"), json=patch, headers=MERGE_PATCH)
    assert updated.status_code == 200, updated.text
    meta = updated.json()["metadata"]
    assert meta["annotations"] == {"deprecated.daemonset.template.generation": "2"}
    assert meta["generation"] == 2
    assert http.get(url(namespace, "daemonsets", "agent") + "/scale").status_code == 404


def test_daemonset_selector_mismatch(http: httpx.Client, namespace: str) -> None:
    body = workload("DaemonSet", "bad", selector={"matchLabels": {"app": "nope"}})
    response = http.post(url(namespace, "daemonsets"), json=body)
    assert response.status_code == 422, response.text
    assert response.json()["message"] == (
        'DaemonSet.apps "bad" is invalid: spec.template.metadata.labels: Invalid value: '
        '{"app":"bad"}: `selector` does not match template `labels`'
    )
    assert http.get(url(namespace, "daemonsets")).json()["items"] == []


def test_controller_revision(http: httpx.Client, namespace: str) -> None:
    # A real owner: the garbage collector deletes a revision whose owner is gone.
    agent = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    daemonset = http.post(url(namespace, "daemonsets"), json=agent)
    assert daemonset.status_code == 201, daemonset.text
    owner_uid = daemonset.json()["metadata"]["uid"]
    body = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": "agent-1",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": "agent",
                    "uid": owner_uid,
                    "controller": True,
                }
            ],
        },
        "data": {"spec": {"template": {}}},
        "revision": 3,
    }
    made = http.post(url(namespace, "controllerrevisions"), json=body)
    assert made.status_code == 201, made.text
    assert "generation" not in made.json()["metadata"]
    table = http.get(url(namespace, "controllerrevisions"), headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Controller",
        "Revision",
        "Age",
    ]
    assert table["rows"][0]["cells"][:3] == ["agent-1", "daemonset.apps/agent", 3]
    changed = made.json()
    changed["data"] = {"spec": {"template": {"x": 1}}}
    refused = http.put(url(namespace, "controllerrevisions", "agent-1"), json=changed)
    assert refused.status_code == 422, refused.text
    assert refused.json()["message"] == (
        'ControllerRevision.apps "agent-1" is invalid: data: Invalid value: '
        '{"spec":{"template":{"x":1}}}: field is immutable'
    )
    missing = dict(body, metadata={"name": "nodata"})
    del missing["data"]
    response = http.post(url(namespace, "controllerrevisions"), json=missing)
    assert response.status_code == 422, response.text
    assert response.json()["message"] == (
        'ControllerRevision.apps "nodata" is invalid: data: Required value: data is mandatory'
    )
