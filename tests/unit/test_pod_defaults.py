"""The pod-spec defaults kube-apiserver applies to Pods and to every pod template."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.apis.batch import default_cronjob
from kapi.apis.core_v1_pod_defaults import (
    default_pod,
    default_pod_spec,
    default_pod_template,
    default_pull_policy,
    image_tag,
    round_up_to_milli,
)

#: What upstream adds to a pod spec holding one bare container.
SPEC_DEFAULTS = {
    "dnsPolicy": "ClusterFirst",
    "restartPolicy": "Always",
    "securityContext": {},
    "terminationGracePeriodSeconds": 30,
    "schedulerName": "default-scheduler",
}
CONTAINER_DEFAULTS = {
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
    # what upstream's encoding writes for the (non-pointer) resources struct
    "resources": {},
}


def spec_of(*containers: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"containers": [dict(c) for c in containers], **fields}


def test_template_gets_the_pod_spec_defaults() -> None:
    template: dict[str, Any] = {
        "metadata": {"labels": {"app": "web"}},
        "spec": spec_of({"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}),
    }
    default_pod_template(template)
    assert template == {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "nginx:1.27",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "imagePullPolicy": "IfNotPresent",
                    **CONTAINER_DEFAULTS,
                }
            ],
            **SPEC_DEFAULTS,
        },
    }


def test_template_without_spec_gets_one() -> None:
    template: dict[str, Any] = {}
    default_pod_template(template)
    assert template == {"spec": SPEC_DEFAULTS}


def test_set_values_are_kept() -> None:
    spec = spec_of(
        {
            "name": "c",
            "image": "nginx",
            "imagePullPolicy": "Never",
            "terminationMessagePath": "/tmp/log",
            "terminationMessagePolicy": "FallbackToLogsOnError",
            "ports": [{"containerPort": 53, "protocol": "UDP"}],
            "resources": {"limits": {"cpu": "1"}},
        },
        dnsPolicy="Default",
        restartPolicy="Never",
        securityContext={"runAsUser": 1000},
        terminationGracePeriodSeconds=0,
        schedulerName="mine",
    )
    before = copy.deepcopy(spec)
    default_pod_spec(spec)
    assert spec == before


@pytest.mark.parametrize(
    ("image", "tag", "policy"),
    [
        ("nginx", "latest", "Always"),
        ("nginx:latest", "latest", "Always"),
        ("docker.io/library/nginx", "latest", "Always"),
        ("nginx:1.27", "1.27", "IfNotPresent"),
        ("localhost:5000/team/app:v2", "v2", "IfNotPresent"),
        ("localhost:5000/team/app", "latest", "Always"),
        ("nginx@sha256:" + "a" * 64, "", "IfNotPresent"),
        ("nginx:latest@sha256:" + "a" * 64, "latest", "Always"),
        # not a reference (upper case, empty): ParseImageName fails, no tag
        ("Nginx", "", "IfNotPresent"),
        ("", "", "IfNotPresent"),
    ],
)
def test_image_pull_policy_follows_the_tag(image: str, tag: str, policy: str) -> None:
    assert image_tag(image) == tag
    assert default_pull_policy(image) == policy
    spec = spec_of({"name": "c", "image": image})
    default_pod_spec(spec)
    assert spec["containers"][0]["imagePullPolicy"] == policy


def test_probes_and_handlers() -> None:
    container = {
        "name": "c",
        "image": "nginx",
        "livenessProbe": {"httpGet": {"port": 8080}},
        "readinessProbe": {"grpc": {"port": 9090}, "periodSeconds": 5},
        "startupProbe": {"exec": {"command": ["true"]}, "failureThreshold": 30},
        "lifecycle": {
            "preStop": {"httpGet": {"port": 80}},
            "postStart": {"exec": {"command": ["x"]}},
        },
    }
    spec = spec_of(container)
    default_pod_spec(spec)
    c = spec["containers"][0]
    probe_defaults = {
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert c["livenessProbe"] == {
        "httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
        **probe_defaults,
    }
    assert c["readinessProbe"] == {
        "grpc": {"port": 9090, "service": ""},
        **probe_defaults,
        "periodSeconds": 5,
    }
    assert c["startupProbe"] == {
        "exec": {"command": ["true"]},
        **probe_defaults,
        "failureThreshold": 30,
    }
    assert c["lifecycle"] == {
        "preStop": {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}},
        "postStart": {"exec": {"command": ["x"]}},
    }


def test_every_container_list_is_defaulted() -> None:
    spec: dict[str, Any] = {
        "initContainers": [{"name": "i", "image": "busybox:1", "ports": [{"containerPort": 1}]}],
        "containers": [{"name": "c", "image": "busybox:1"}],
        "ephemeralContainers": [{"name": "e", "image": "busybox"}],
    }
    default_pod_spec(spec)
    assert spec["initContainers"][0]["ports"] == [{"containerPort": 1, "protocol": "TCP"}]
    assert spec["initContainers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert spec["ephemeralContainers"][0]["imagePullPolicy"] == "Always"
    for key in ("initContainers", "containers", "ephemeralContainers"):
        assert spec[key][0]["terminationMessagePolicy"] == "File"


def test_env_field_ref_api_version() -> None:
    spec = spec_of(
        {
            "name": "c",
            "image": "x:1",
            "env": [
                {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                {"name": "PLAIN", "value": "v"},
            ],
        }
    )
    default_pod_spec(spec)
    assert spec["containers"][0]["env"] == [
        {
            "name": "NODE",
            "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName", "apiVersion": "v1"}},
        },
        {"name": "PLAIN", "value": "v"},
    ]


def test_volume_defaults() -> None:
    spec: dict[str, Any] = {
        "containers": [],
        "volumes": [
            {"name": "none"},
            {"name": "s", "secret": {"secretName": "s"}},
            {"name": "cm", "configMap": {"name": "cm", "defaultMode": 256}},
            {
                "name": "d",
                "downwardAPI": {
                    "items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]
                },
            },
            {
                "name": "p",
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"path": "token"}},
                        {
                            "downwardAPI": {
                                "items": [
                                    {"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}
                                ]
                            }
                        },
                    ]
                },
            },
            {"name": "h", "hostPath": {"path": "/var/log"}},
            {
                "name": "e",
                "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}},
            },
            {"name": "r", "rbd": {"monitors": ["m"], "image": "i"}},
            {
                "name": "i",
                "iscsi": {"targetPortal": "t", "iqn": "iqn.2001-04.com.example:x", "lun": 0},
            },
        ],
    }
    default_pod_spec(spec)
    v = {vol["name"]: vol for vol in spec["volumes"]}
    assert v["none"] == {"name": "none", "emptyDir": {}}
    assert v["s"]["secret"] == {"secretName": "s", "defaultMode": 420}
    assert v["cm"]["configMap"] == {"name": "cm", "defaultMode": 256}
    assert v["d"]["downwardAPI"] == {
        "items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}}],
        "defaultMode": 420,
    }
    assert v["p"]["projected"] == {
        "sources": [
            {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
            {
                "downwardAPI": {
                    "items": [
                        {
                            "path": "l",
                            "fieldRef": {"fieldPath": "metadata.labels", "apiVersion": "v1"},
                        }
                    ]
                }
            },
        ],
        "defaultMode": 420,
    }
    assert v["h"]["hostPath"] == {"path": "/var/log", "type": ""}
    assert v["e"]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"] == "Filesystem"
    assert v["r"]["rbd"] == {
        "monitors": ["m"],
        "image": "i",
        "pool": "rbd",
        "user": "admin",
        "keyring": "/etc/ceph/keyring",
    }
    assert v["i"]["iscsi"]["iscsiInterface"] == "default"


@pytest.mark.parametrize(
    ("value", "rounded"),
    [
        ("100u", "1m"),
        ("0.0001", "1m"),
        ("1n", "1m"),
        ("1500m", "1500m"),
        ("1.5", "1.5"),
        ("2Gi", "2Gi"),
        ("abc", "abc"),
    ],
)
def test_resource_lists_round_up_to_milli(value: str, rounded: str) -> None:
    assert round_up_to_milli(value) == rounded
    spec = spec_of(
        {
            "name": "c",
            "image": "x:1",
            "resources": {"limits": {"cpu": value}, "requests": {"cpu": value}},
        }
    )
    default_pod_spec(spec)
    assert spec["containers"][0]["resources"] == {
        "limits": {"cpu": rounded},
        "requests": {"cpu": rounded},
    }


def test_templates_do_not_default_requests_from_limits() -> None:
    """Upstream keeps this Pod-only so that templates are not changed on read."""
    spec = spec_of({"name": "c", "image": "x:1", "resources": {"limits": {"cpu": "1"}}})
    default_pod_spec(spec)
    assert spec["containers"][0]["resources"] == {"limits": {"cpu": "1"}}
    assert "enableServiceLinks" not in spec


def test_pod_only_defaults() -> None:
    pod: dict[str, Any] = {
        "spec": {
            "hostNetwork": True,
            "initContainers": [
                {"name": "i", "image": "x:1", "resources": {"limits": {"memory": "1Gi"}}}
            ],
            "containers": [
                {
                    "name": "c",
                    "image": "x:1",
                    "ports": [{"containerPort": 8080}, {"containerPort": 9090, "hostPort": 19090}],
                    "resources": {
                        "limits": {"cpu": "1", "memory": "1Gi"},
                        "requests": {"cpu": "500m"},
                    },
                }
            ],
            "ephemeralContainers": [
                {"name": "e", "image": "x:1", "resources": {"limits": {"cpu": "1"}}}
            ],
        }
    }
    default_pod(pod)
    spec = pod["spec"]
    assert spec["enableServiceLinks"] is True
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    assert spec["initContainers"][0]["resources"]["requests"] == {"memory": "1Gi"}
    assert "requests" not in spec["ephemeralContainers"][0]["resources"]
    assert spec["containers"][0]["ports"] == [
        {"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"},
        {"containerPort": 9090, "hostPort": 19090, "protocol": "TCP"},
    ]
    assert spec["dnsPolicy"] == "ClusterFirst"  # and the spec's defaults


def test_pod_keeps_enable_service_links_false() -> None:
    pod: dict[str, Any] = {"spec": {"enableServiceLinks": False, "containers": []}}
    default_pod(pod)
    assert pod["spec"]["enableServiceLinks"] is False


def test_wrong_types_are_left_for_validation() -> None:
    spec: dict[str, Any] = {
        "containers": "nope",
        "volumes": [1, {"name": "v"}],
        "securityContext": None,
    }
    default_pod_spec(spec)
    assert spec["containers"] == "nope"
    assert spec["volumes"] == [1, {"name": "v", "emptyDir": {}}]
    assert spec["securityContext"] == {}


def test_cronjob_job_template_gets_pod_defaults() -> None:
    cronjob: dict[str, Any] = {
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "containers": [
                                {"name": "c", "image": "busybox", "ports": [{"containerPort": 80}]}
                            ],
                        }
                    }
                }
            },
        }
    }
    default_cronjob(cronjob)
    pod_spec = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod_spec == {
        "restartPolicy": "OnFailure",
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "imagePullPolicy": "Always",
                **CONTAINER_DEFAULTS,
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "default-scheduler",
    }


def test_cronjob_without_job_template_is_left_for_validation() -> None:
    cronjob: dict[str, Any] = {"spec": {"schedule": "* * * * *"}}
    default_cronjob(cronjob)
    assert "jobTemplate" not in cronjob["spec"]
