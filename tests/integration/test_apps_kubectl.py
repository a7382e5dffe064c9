"""The apps kinds through the real kubectl: apply, get tables, scale, get all, describe."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KapiServer
from tests.helpers.kubectl import Kubectl, make_kubectl
from tests.helpers.protobuf_requests import CONTENT_TYPE, PROTOBUF, PROTOBUF_VERSIONS

AGE = r"\d+s"

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
        ports:
        - containerPort: 80
      - name: log
        image: busybox
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: pg
        image: postgres:16
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      nodeSelector: {disk: ssd, zone: a}
      containers:
      - name: agent
        image: agent:1
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: front
spec:
  replicas: 3
  selector:
    matchLabels: {app: front}
  template:
    metadata:
      labels: {app: front}
    spec:
      containers:
      - name: nginx
        image: nginx
"""


def without_null_timestamps(value: Any) -> Any:
    """``value`` less the ``creationTimestamp: null`` kubectl 1.32 and 1.33 print in nested
    metadata (their ObjectMeta writes a zero time as null; kapi leaves it out)."""
    if isinstance(value, dict):
        return {
            key: without_null_timestamps(item)
            for key, item in value.items()
            if not (key == "creationTimestamp" and item is None)
        }
    if isinstance(value, list):
        return [without_null_timestamps(item) for item in value]
    return value


def assert_table(lines: list[str], expected: list[list[str]]) -> None:
    """Table rows have ``expected``'s cells (kubectl pads columns with at least 3 spaces);
    ``<age>`` stands for an AGE cell."""
    assert len(lines) == len(expected), "\n".join(lines)
    for line, want in zip(lines, expected, strict=True):
        cells = re.split(r" {3,}", line)
        assert len(cells) == len(want), f"{line!r} is not {want!r}"
        for cell, wanted in zip(cells, want, strict=True):
            if wanted == "<age>":
                assert re.fullmatch(AGE, cell), f"{line!r} is not {want!r}"
            else:
                assert cell == wanted, f"{line!r} is not {want!r}"


@pytest.fixture
def applied(kubectl: Kubectl, namespace: str, tmp_path: Path) -> tuple[str, ...]:
    path = tmp_path / "apps.yaml"
    path.write_text(MANIFEST)
    ns = ("-n", namespace)
    assert kubectl.ok(*ns, "apply", "-f", str(path)).out_lines == [
        "deployment.apps/web created",
        "statefulset.apps/db created",
        "daemonset.apps/agent created",
        "replicaset.apps/front created",
    ]
    return ns


def test_get_tables(kubectl: Kubectl, applied: tuple[str, ...]) -> None:
    ns = applied
    assert_table(
        kubectl.ok(*ns, "get", "deploy").out_lines,
        [
            ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
            ["web", "0/2", "0", "0", "<age>"],
        ],
    )
    assert_table(
        kubectl.ok(*ns, "get", "deploy", "-o", "wide").out_lines,
        [
            ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
            ["web", "0/2", "0", "0", "<age>", "nginx,log", "nginx:1.25,busybox", "app=web"],
        ],
    )
    assert_table(
        kubectl.ok(*ns, "get", "rs", "-o", "wide").out_lines,
        [
            ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"],
            ["front", "3", "0", "0", "<age>", "nginx", "nginx", "app=front"],
        ],
    )
    assert_table(
        kubectl.ok(*ns, "get", "sts").out_lines,
        [["NAME", "READY", "AGE"], ["db", "0/1", "<age>"]],
    )
    assert_table(
        kubectl.ok(*ns, "get", "ds").out_lines,
        [
            [
                "NAME",
                "DESIRED",
                "CURRENT",
                "READY",
                "UP-TO-DATE",
                "AVAILABLE",
                "NODE SELECTOR",
                "AGE",
            ],
            ["agent", "0", "0", "0", "0", "0", "disk=ssd,zone=a", "<age>"],
        ],
    )


def test_get_all_lists_the_workloads(kubectl: Kubectl, applied: tuple[str, ...]) -> None:
    names = kubectl.ok(*applied, "get", "all", "-o", "name").out_lines
    assert {
        "deployment.apps/web",
        "statefulset.apps/db",
        "daemonset.apps/agent",
        "replicaset.apps/front",
    } <= set(names)


def test_kubectl_scale(kubectl: Kubectl, applied: tuple[str, ...]) -> None:
    ns = applied
    assert kubectl.ok(*ns, "scale", "deployment", "web", "--replicas=5").out_lines == [
        "deployment.apps/web scaled"
    ]
    assert kubectl.ok(*ns, "scale", "sts", "db", "--replicas=3").out_lines == [
        "statefulset.apps/db scaled"
    ]
    assert kubectl.ok(*ns, "scale", "rs", "front", "--replicas=0").out_lines == [
        "replicaset.apps/front scaled"
    ]
    deploy = kubectl.json(*ns, "get", "deploy", "web")
    assert (deploy["spec"]["replicas"], deploy["metadata"]["generation"]) == (5, 2)
    assert kubectl.json(*ns, "get", "sts", "db")["spec"]["replicas"] == 3
    assert kubectl.json(*ns, "get", "rs", "front")["spec"]["replicas"] == 0
    # --current-replicas is a precondition kubectl checks on the Scale it reads.
    refused = kubectl.run(*ns, "scale", "deploy", "web", "--current-replicas=2", "--replicas=1")
    assert refused.returncode == 1, str(refused)
    assert refused.stderr == "error: Expected replicas to be 2, was 5\n"
    assert kubectl.json(*ns, "get", "deploy", "web")["spec"]["replicas"] == 5


def test_statefulset_update_restrictions(kubectl: Kubectl, applied: tuple[str, ...]) -> None:
    ns = applied
    result = kubectl.run(
        *ns, "patch", "sts", "db", "--type=merge", "-p", '{"spec":{"serviceName":"other"}}'
    )
    assert result.returncode == 1, str(result)
    assert result.stderr.strip() == (
        'The StatefulSet "db" is invalid: spec: Forbidden: updates to statefulset spec for '
        "fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
        "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    )
    assert kubectl.json(*ns, "get", "sts", "db")["spec"]["serviceName"] == "db"


def test_rollout_history_reads_only_the_api(
    kapi_server: KapiServer, namespace: str, tmp_path: Path
) -> None:
    """``kubectl rollout history`` lists the Deployment's ReplicaSets: none, as no
    controller rolls it out."""
    k = make_kubectl(kapi_server, tmp_path, "1.33")
    path = tmp_path / "apps.yaml"
    path.write_text(MANIFEST.split("---")[0])
    k.ok("-n", namespace, "apply", "-f", str(path))
    result = k.ok("-n", namespace, "rollout", "history", "deployment/web")
    assert result.out_lines[0] == "deployment.apps/web "


# --- protobuf: kubectl 1.32+ builds the Deployment and POSTs it as protobuf ------------------


@pytest.mark.kubectl
@pytest.mark.parametrize("version", PROTOBUF_VERSIONS)
def test_create_deployment_travels_as_protobuf(
    kapi_server: KapiServer, namespace: str, tmp_path: Path, version: str
) -> None:
    k = make_kubectl(kapi_server, tmp_path, version)
    name = f"pb-{version[2:]}"
    result = k.run(
        "-n", namespace, "create", "deployment", name, "--image=nginx", "--replicas=2", "-v=8"
    )
    assert result.returncode == 0, str(result)
    assert f"deployment.apps/{name} created" in result.out_lines
    # The request's header, then the response's.
    assert CONTENT_TYPE.findall(result.stderr) == [PROTOBUF, PROTOBUF], str(result)
    stored = k.json("-n", namespace, "get", "deployment", name)
    assert stored["spec"]["replicas"] == 2
    assert stored["spec"]["selector"] == {"matchLabels": {"app": name}}
    container = stored["spec"]["template"]["spec"]["containers"][0]
    assert (container["name"], container["image"]) == ("nginx", "nginx")
    assert container["imagePullPolicy"] == "Always"
    assert stored["spec"]["strategy"]["rollingUpdate"] == {
        "maxUnavailable": "25%",
        "maxSurge": "25%",
    }


@pytest.mark.kubectl
def test_printed_deployment_is_the_stored_one(
    kapi_server: KapiServer, namespace: str, tmp_path: Path
) -> None:
    """kubectl decodes kapi's protobuf answer with upstream's code to print it."""
    k = make_kubectl(kapi_server, tmp_path, "1.33")
    ns = ("-n", namespace)
    printed = json.loads(
        k.ok(
            *ns, "create", "deployment", "p", "--image=nginx:1.25", "--port=80", "-o", "json"
        ).stdout
    )
    stored = k.json(*ns, "get", "deployment", "p")
    assert without_null_timestamps(printed) == stored
    assert stored["spec"]["template"]["spec"]["containers"][0]["ports"] == [
        {"containerPort": 80, "protocol": "TCP"}
    ]


def test_api_resources(kubectl: Kubectl) -> None:
    lines = kubectl.ok("api-resources", "--api-group=apps", "-o", "wide").out_lines
    verbs = "create,delete,deletecollection,get,list,patch,update,watch"
    assert_table(
        lines,
        [
            ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES"],
            # no short names or categories: blank cells (the trailing one leaves its padding)
            ["controllerrevisions", "apps/v1", "true", "ControllerRevision", verbs, ""],
            ["daemonsets", "ds", "apps/v1", "true", "DaemonSet", verbs, "all"],
            ["deployments", "deploy", "apps/v1", "true", "Deployment", verbs, "all"],
            ["replicasets", "rs", "apps/v1", "true", "ReplicaSet", verbs, "all"],
            ["statefulsets", "sts", "apps/v1", "true", "StatefulSet", verbs, "all"],
        ],
    )
