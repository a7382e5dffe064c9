"""A pod template inside another kind reads back with kube-apiserver's pod-spec defaults.

Issue 21's defect: a CronJob's ``jobTemplate.spec.template`` came back exactly as
sent, without the defaults kube-apiserver gives every pod template (the same
``SetDefaults_PodSpec`` walk as a Pod's, minus the Pod-only rules).
"""

from __future__ import annotations

import copy
from typing import Any

import httpx

from tests.helpers.objects import cronjob

Object = dict[str, Any]

SPEC_DEFAULTS = {
    "dnsPolicy": "ClusterFirst",
    "schedulerName": "default-scheduler",
    "securityContext": {},
    "terminationGracePeriodSeconds": 30,
}


def path(namespace: str, name: str = "") -> str:
    base = f"/apis/batch/v1/namespaces/{namespace}/cronjobs"
    return f"{base}/{name}" if name else base


def pod_spec_of(obj: Object) -> Object:
    spec: Object = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return spec


def sent_pod() -> Object:
    return {
        "restartPolicy": "OnFailure",
        "containers": [
            {
                "name": "report",
                "image": "registry.example.com/tools/report:2.1",
                "command": ["report", "--daily"],
                "ports": [{"name": "metrics", "containerPort": 9090}],
                "env": [
                    {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
                ],
                "livenessProbe": {"httpGet": {"port": "metrics"}},
                "resources": {"limits": {"cpu": "1"}},
                "volumeMounts": [{"name": "scratch", "mountPath": "/tmp"}],
            },
            {"name": "sidecar", "image": "busybox"},
        ],
        "volumes": [
            {"name": "scratch"},
            {"name": "settings", "configMap": {"name": "report-settings"}},
        ],
    }


#: What kube-apiserver answers for :func:`sent_pod` (the pod-spec defaults only:
#: limits are not copied into ``requests`` in a template, nor is
#: ``enableServiceLinks`` set; both are a Pod's alone).  A container without
#: ``resources`` reads back ``{}``, as upstream encodes the struct.
EXPECTED_POD = {
    **SPEC_DEFAULTS,
    "restartPolicy": "OnFailure",
    "containers": [
        {
            "name": "report",
            "image": "registry.example.com/tools/report:2.1",
            "command": ["report", "--daily"],
            "ports": [{"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
            "env": [
                {
                    "name": "NODE",
                    "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
                }
            ],
            "livenessProbe": {
                "httpGet": {"port": "metrics", "path": "/", "scheme": "HTTP"},
                "timeoutSeconds": 1,
                "periodSeconds": 10,
                "successThreshold": 1,
                "failureThreshold": 3,
            },
            "resources": {"limits": {"cpu": "1"}},
            "volumeMounts": [{"name": "scratch", "mountPath": "/tmp"}],
            "imagePullPolicy": "IfNotPresent",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        },
        {
            "name": "sidecar",
            "image": "busybox",
            "resources": {},
            "imagePullPolicy": "Always",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        },
    ],
    "volumes": [
        {"name": "scratch", "emptyDir": {}},
        {"name": "settings", "configMap": {"name": "report-settings", "defaultMode": 420}},
    ],
}


def test_created_cronjob_has_pod_template_defaults(http: httpx.Client, namespace: str) -> None:
    created = http.post(path(namespace), json=cronjob("daily", sent_pod()))
    assert created.status_code == 201, created.text
    assert pod_spec_of(created.json()) == EXPECTED_POD

    stored = http.get(path(namespace, "daily"))
    assert stored.status_code == 200, stored.text
    assert pod_spec_of(stored.json()) == EXPECTED_POD
    # the CronJob's own defaults are still there
    assert stored.json()["spec"]["concurrencyPolicy"] == "Allow"


def test_values_sent_are_kept(http: httpx.Client, namespace: str) -> None:
    pod = {
        "restartPolicy": "Never",
        "dnsPolicy": "Default",
        "schedulerName": "batch-scheduler",
        "securityContext": {"runAsNonRoot": True},
        "terminationGracePeriodSeconds": 5,
        "containers": [
            {
                "name": "c",
                "image": "busybox:latest",
                "imagePullPolicy": "Never",
                "terminationMessagePolicy": "FallbackToLogsOnError",
                "ports": [{"containerPort": 53, "protocol": "UDP"}],
            }
        ],
    }
    created = http.post(path(namespace), json=cronjob("explicit", copy.deepcopy(pod)))
    assert created.status_code == 201, created.text
    spec = pod_spec_of(created.json())
    assert spec == {
        **pod,
        "containers": [
            {
                **pod["containers"][0],
                "terminationMessagePath": "/dev/termination-log",
                "resources": {},
            }
        ],
    }


def test_update_defaults_what_it_adds(http: httpx.Client, namespace: str) -> None:
    created = http.post(path(namespace), json=cronjob("grows"))
    assert created.status_code == 201, created.text
    obj = created.json()
    assert pod_spec_of(obj) == {
        **SPEC_DEFAULTS,
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "resources": {},
                "imagePullPolicy": "Always",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
    }
    pod_spec_of(obj)["containers"].append(
        {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}
    )
    del pod_spec_of(obj)["dnsPolicy"]
    updated = http.put(path(namespace, "grows"), json=obj)
    assert updated.status_code == 200, updated.text
    spec = pod_spec_of(updated.json())
    assert spec["dnsPolicy"] == "ClusterFirst"
    assert spec["containers"][1] == {
        "name": "web",
        "image": "nginx:1.27",
        "ports": [{"containerPort": 80, "protocol": "TCP"}],
        "resources": {},
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    assert pod_spec_of(http.get(path(namespace, "grows")).json()) == spec


def test_dry_run_answers_the_defaults_and_stores_nothing(
    http: httpx.Client, namespace: str
) -> None:
    response = http.post(f"{path(namespace)}?dryRun=All", json=cronjob("dry", sent_pod()))
    assert response.status_code == 201, response.text
    assert pod_spec_of(response.json()) == EXPECTED_POD
    missing = http.get(path(namespace, "dry"))
    assert missing.status_code == 404, missing.text
    assert missing.json()["reason"] == "NotFound"
