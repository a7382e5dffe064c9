"""The declarations generated from upstream's facts (tools/apigen).

Regenerating from the committed facts and descriptions gives exactly the
committed modules (no k8s.io/api checkout needed), objects with many fields
round-trip through the generated protobuf tables, and the OpenAPI of a
generated kind carries upstream's list types and merge keys.
"""

from __future__ import annotations

import copy
import importlib.util
import pathlib
import sys
from types import ModuleType
from typing import Any

import pytest

from kapi.apis.generated import apps_v1, batch_v1, core_v1, gated, rbac_v1
from kapi.runtime import protobuf
from kapi.runtime.lifecycle import FieldLifecycle
from kapi.runtime.protobuf_messages import KINDS, MESSAGES, Label
from kapi.runtime.schema import components

ROOT = pathlib.Path(__file__).parents[2]
GENERATED = ROOT / "src" / "kapi" / "apis" / "generated"

Object = dict[str, Any]


def _generator() -> ModuleType:
    path = ROOT / "tools" / "apigen" / "generate.py"
    spec = importlib.util.spec_from_file_location("apigen_generate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_regenerating_from_the_committed_inputs_gives_the_committed_modules(
    tmp_path: pathlib.Path,
) -> None:
    generate = _generator()
    modules, _ = generate.render()
    written = []
    for name, text in modules.items():
        (tmp_path / name).write_text(text)
        written.append(tmp_path / name)
    (tmp_path / "__init__.py").write_text(generate.INIT)
    written.append(tmp_path / "__init__.py")
    generate.ruff_format(written)
    expected = sorted(p.name for p in GENERATED.glob("*.py"))
    assert sorted(p.name for p in written) == expected
    for path in written:
        assert path.read_text() == (GENERATED / path.name).read_text(), (
            f"{path.name} differs: run python tools/apigen/generate.py"
        )


# -- protobuf round trips -------------------------------------------------------------------

POD: Object = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
        "volumes": [
            {"name": "config", "configMap": {"name": "cfg", "defaultMode": 420, "optional": False}},
            {"name": "scratch", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
            {
                "name": "all",
                "projected": {
                    "sources": [
                        {
                            "secret": {
                                "name": "s",
                                "items": [{"key": "k", "path": "p", "mode": 256}],
                            }
                        },
                        {"serviceAccountToken": {"expirationSeconds": 3600, "path": "token"}},
                        {
                            "downwardAPI": {
                                "items": [
                                    {
                                        "path": "cpu",
                                        "resourceFieldRef": {
                                            "containerName": "app",
                                            "resource": "limits.cpu",
                                            "divisor": "1m",
                                        },
                                    }
                                ]
                            }
                        },
                    ]
                },
            },
        ],
        "initContainers": [
            {
                "name": "init",
                "image": "busybox",
                "command": ["true"],
                "resources": {},  # not a pointer: always written, as {} when empty
                "restartPolicy": "Always",
            }
        ],
        "containers": [
            {
                "name": "app",
                "image": "nginx:1.27",
                "args": ["-g", "daemon off;"],
                "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"}],
                "env": [
                    {"name": "A", "value": "1"},
                    {
                        "name": "B",
                        "valueFrom": {"secretKeyRef": {"name": "s", "key": "b", "optional": True}},
                    },
                    {
                        "name": "C",
                        "valueFrom": {
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}
                        },
                    },
                ],
                "resources": {
                    "limits": {"cpu": "500m", "memory": "128Mi"},
                    "requests": {"cpu": "250m"},
                },
                "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": True}],
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": 80, "scheme": "HTTP"},
                    "initialDelaySeconds": 3,
                    "periodSeconds": 10,
                },
                "readinessProbe": {"tcpSocket": {"port": "http"}, "failureThreshold": 3},
                "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 0,
                    "capabilities": {"drop": ["ALL"]},
                    "allowPrivilegeEscalation": False,
                },
                "imagePullPolicy": "IfNotPresent",
            }
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "nodeSelector": {"disk": "ssd"},
        "serviceAccountName": "web",
        "securityContext": {"fsGroup": 2000, "supplementalGroups": [1, 2]},
        "imagePullSecrets": [{"name": "registry"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "zone", "operator": "In", "values": ["a", "b"]}
                            ]
                        }
                    ]
                }
            }
        },
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        "priority": 0,
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ],
    },
    "status": {
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}
        ],
        "podIP": "10.0.0.5",
        "podIPs": [{"ip": "10.0.0.5"}],
        "startTime": "2025-01-01T00:00:00Z",
        "containerStatuses": [
            {
                "name": "app",
                "state": {"running": {"startedAt": "2025-01-01T00:00:01Z"}},
                "lastState": {},
                "ready": True,
                "restartCount": 0,
                "image": "nginx:1.27",
                "imageID": "",
            }
        ],
        "qosClass": "Burstable",
    },
}

DEPLOYMENT: Object = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "generation": 3},
    "spec": {
        "replicas": 0,
        "selector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
        },
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx", "resources": {}}]},
        },
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1},
        },
        "minReadySeconds": 5,
        "revisionHistoryLimit": 10,
        "paused": True,
        "progressDeadlineSeconds": 600,
    },
    "status": {
        "observedGeneration": 3,
        "replicas": 2,
        "updatedReplicas": 2,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "unavailableReplicas": 1,
        "conditions": [
            {
                "type": "Available",
                "status": "False",
                "lastUpdateTime": "2025-01-01T00:00:00Z",
                "lastTransitionTime": "2025-01-01T00:00:00Z",
                "reason": "MinimumReplicasUnavailable",
                "message": "Deployment does not have minimum availability.",
            }
        ],
        "collisionCount": 0,
    },
}

CLUSTER_ROLE: Object = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "reader"},
    "rules": [
        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]},
        {"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
    ],
    "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "true"}}]},
}


@pytest.mark.parametrize("obj", [POD, DEPLOYMENT, CLUSTER_ROLE], ids=lambda o: o["kind"])
def test_objects_round_trip_through_the_generated_tables(obj: Object) -> None:
    body = protobuf.encode(copy.deepcopy(obj))
    assert protobuf.decode(body) == obj
    assert protobuf.encode(protobuf.decode(body)) == body


def test_kinds_are_registered_with_their_lists() -> None:
    assert KINDS["apps/v1", "Deployment"] == apps_v1.DEPLOYMENT
    assert KINDS["batch/v1", "Job"] == batch_v1.JOB
    assert KINDS["v1", "Pod"] == core_v1.POD
    list_message = MESSAGES[KINDS["rbac.authorization.k8s.io/v1", "RoleList"]]
    assert [(f.number, f.name, f.label) for f in list_message.fields] == [
        (1, "metadata", Label.SINGLE),
        (2, "items", Label.REPEATED),
    ]
    assert list_message.fields[1].type == rbac_v1.ROLE


def test_upstream_numbers_and_shapes() -> None:
    spec = MESSAGES[core_v1.POD_SPEC].by_number
    assert (spec[2].name, spec[2].type, spec[2].label) == (
        "containers",
        core_v1.CONTAINER,
        Label.REPEATED,
    )
    assert spec[4].name == "terminationGracePeriodSeconds" and spec[4].optional
    volume = MESSAGES[core_v1.VOLUME].by_number
    assert volume[2].inline and volume[2].type == core_v1.VOLUME_SOURCE
    deployment_spec = MESSAGES[apps_v1.DEPLOYMENT_SPEC].by_number
    assert deployment_spec[3].name == "template" and not deployment_spec[3].omitempty


# -- OpenAPI ----------------------------------------------------------------------------------


def test_openapi_has_upstreams_list_types_and_merge_keys() -> None:
    schemas = components([core_v1.Pod])
    pod_spec = schemas["io.k8s.api.core.v1.PodSpec"]
    assert pod_spec["required"] == ["containers"]
    containers = pod_spec["properties"]["containers"]
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["items"] == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}],
        "default": {},
    }
    volumes = pod_spec["properties"]["volumes"]
    assert volumes["x-kubernetes-patch-strategy"] == "merge,retainKeys"
    ports = schemas["io.k8s.api.core.v1.Container"]["properties"]["ports"]
    assert ports["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert ports["x-kubernetes-patch-merge-key"] == "containerPort"
    assert schemas["io.k8s.api.core.v1.Container"]["required"] == ["name"]
    restart = pod_spec["properties"]["restartPolicy"]
    assert (restart["type"], restart["enum"]) == ("string", ["Always", "Never", "OnFailure"])
    assert schemas["io.k8s.api.core.v1.LocalObjectReference"]["x-kubernetes-map-type"] == "atomic"
    # Volume flattens its embedded VolumeSource, as openapi-gen does.
    assert "configMap" in schemas["io.k8s.api.core.v1.Volume"]["properties"]
    assert schemas["io.k8s.api.core.v1.Pod"]["x-kubernetes-group-version-kind"] == [
        {"group": "", "version": "v1", "kind": "Pod"}
    ]
    service_spec = components([core_v1.Service])["io.k8s.api.core.v1.ServiceSpec"]["properties"]
    assert service_spec["selector"]["x-kubernetes-map-type"] == "atomic"  # +mapType=atomic
    quantity = schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]
    assert quantity["oneOf"] == [{"type": "string"}, {"type": "number"}]


# -- feature-gate markers ---------------------------------------------------------------------


def test_gated_fields_follow_the_gates_versioned_spec() -> None:
    # Alpha in 1.31, beta in 1.33 (the release kapi models).
    assert gated("CoordinatedLeaderElection") == (
        FieldLifecycle("v1.31", "beta", "CoordinatedLeaderElection"),
    )
    assert gated("CustomResourceFieldSelectors") == ()  # GA: a GA field carries no tag
    assert gated("NoSuchGateYet") == ()  # not in kapi.features: listed in tools/apigen/README.md
