"""PodSecurityPolicies in policy/v1beta1 and extensions/v1beta1, served as upstream did.

At ``--emulated-version 1.15`` both groups serve the kind from one storage
(extensions/v1beta1 warning that it is deprecated for policy/v1beta1); at
1.24 policy/v1beta1 warns that it goes away in 1.25, with no replacement; at
the modelled release neither is served.  Defaults, upstream's validation
messages, the table columns of upstream's 1.24 printer, protobuf and kubectl.
kapi does not enforce the policies on pods.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kapi.runtime import protobuf
from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kubectl import make_kubectl
from tests.helpers.objects import unique
from tests.helpers.protobuf_requests import PROTOBUF, post
from tests.helpers.status import assert_status

POLICY = "/apis/policy/v1beta1/podsecuritypolicies"
EXTENSIONS = "/apis/extensions/v1beta1/podsecuritypolicies"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
POLICY_WARNING = (
    '299 - "policy/v1beta1 PodSecurityPolicy is deprecated in v1.21+, unavailable in v1.25+"'
)
EXTENSIONS_WARNING = (
    '299 - "extensions/v1beta1 PodSecurityPolicy is deprecated in v1.11+, unavailable in '
    'v1.16+; use policy/v1beta1 PodSecurityPolicy"'
)
RUN_AS_ANY = {"rule": "RunAsAny"}

Object = dict[str, Any]


def psp(name: str, api_version: str = "policy/v1beta1", **spec: Any) -> Object:
    return {
        "apiVersion": api_version,
        "kind": "PodSecurityPolicy",
        "metadata": {"name": name},
        "spec": {
            "seLinux": RUN_AS_ANY,
            "runAsUser": RUN_AS_ANY,
            "fsGroup": RUN_AS_ANY,
            "supplementalGroups": RUN_AS_ANY,
            **spec,
        },
    }


@pytest.fixture(scope="module")
def server_1_15(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "psp-1-15", "--emulated-version=1.15")


@pytest.fixture(scope="module")
def server_1_24(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "psp-1-24", "--emulated-version=1.24")


@pytest.fixture
def old(server_1_15: KapiServer) -> Iterator[httpx.Client]:
    with server_1_15.client() as http:
        yield http


@pytest.fixture
def recent(server_1_24: KapiServer) -> Iterator[httpx.Client]:
    with server_1_24.client() as http:
        yield http


def names(http: httpx.Client, path: str) -> list[str]:
    response = http.get(path)
    assert response.status_code == 200, response.text
    return [item["metadata"]["name"] for item in response.json()["items"]]


def test_crud_defaults_and_warning(recent: httpx.Client) -> None:
    name = unique("restricted")
    created = recent.post(POLICY, json=psp(name, volumes=["configMap", "secret"]))
    assert created.status_code == 201, created.text
    assert created.headers.get_list("warning") == [POLICY_WARNING]
    obj = created.json()
    assert obj["spec"]["allowPrivilegeEscalation"] is True  # as permissive as before the field
    assert "namespace" not in obj["metadata"]
    assert "generation" not in obj["metadata"]
    path = f"{POLICY}/{name}"
    assert recent.get(path).json() == obj
    assert name in names(recent, POLICY)

    obj["spec"]["allowPrivilegeEscalation"] = False
    obj["spec"]["readOnlyRootFilesystem"] = True
    updated = recent.put(path, json=obj)
    assert updated.status_code == 200, updated.text
    assert updated.json()["spec"]["allowPrivilegeEscalation"] is False
    assert recent.delete(path).status_code == 200
    assert_status(
        recent.get(path), 404, "NotFound", f'podsecuritypolicies.policy "{name}" not found'
    )


def test_validation_messages_and_storage_unchanged(recent: httpx.Client) -> None:
    before = names(recent, POLICY)
    name = unique("bad")
    body = psp(
        name,
        runAsUser={"rule": "Root", "ranges": [{"min": 10, "max": 5}]},
        volumes=["hostPath", "bogus"],
        requiredDropCapabilities=["NET_RAW"],
        allowedCapabilities=["*", "NET_RAW"],
        defaultAllowPrivilegeEscalation=True,
        allowPrivilegeEscalation=False,
        allowedHostPaths=[{"pathPrefix": "/var/../etc"}],
    )
    body["spec"].pop("fsGroup")
    response = recent.post(POLICY, json=body)
    errors = [
        'spec.runAsUser.rule: Unsupported value: "Root": supported values: "MustRunAs", '
        '"MustRunAsNonRoot", "RunAsAny"',
        "spec.runAsUser.ranges[0].min: Invalid value: 10: min cannot be greater than max",
        'spec.fsGroup.rule: Unsupported value: "": supported values: "MustRunAs", "RunAsAny"',
        'spec.volumes: Unsupported value: "bogus": supported values: "*", '
        '"awsElasticBlockStore", "azureDisk", "azureFile", "cephFS", "cinder", "configMap", '
        '"csi", "downwardAPI", "emptyDir", "ephemeral", "fc", "flexVolume", "flocker", '
        '"gcePersistentDisk", "gitRepo", "glusterfs", "hostPath", "iscsi", "nfs", '
        '"persistentVolumeClaim", "photonPersistentDisk", "portworxVolume", "projected", '
        '"quobyte", "rbd", "scaleIO", "secret", "storageos", "vsphereVolume"',
        'requiredDropCapabilities: Invalid value: []core.Capability{"NET_RAW"}: must be empty '
        "when all capabilities are allowed by a wildcard",
        'allowedCapabilities: Invalid value: "NET_RAW": capability is listed in '
        "allowedCapabilities and requiredDropCapabilities",
        "spec.defaultAllowPrivilegeEscalation: Invalid value: true: Cannot set "
        "DefaultAllowPrivilegeEscalation to true without also setting AllowPrivilegeEscalation "
        "to true",
        "spec.allowedHostPaths[0]: Invalid value: \"/var/../etc\": must not contain '..'",
    ]
    status = assert_status(
        response,
        422,
        "Invalid",
        f'PodSecurityPolicy.policy "{name}" is invalid: [' + ", ".join(errors) + "]",
    )
    causes = status["details"]["causes"]
    assert [f"{c['field']}: {c['message']}" for c in causes] == errors
    assert names(recent, POLICY) == before


def test_table_columns(recent: httpx.Client) -> None:
    name = unique("table")
    body = psp(
        name,
        privileged=True,
        allowedCapabilities=["NET_ADMIN", "SYS_TIME"],
        readOnlyRootFilesystem=True,
        volumes=["configMap", "secret"],
    )
    assert recent.post(POLICY, json=body).status_code == 201
    response = recent.get(f"{POLICY}/{name}", headers={"accept": TABLE})
    assert response.status_code == 200, response.text
    document = response.json()
    assert [c["name"] for c in document["columnDefinitions"]] == [
        "Name",
        "Priv",
        "Caps",
        "SELinux",
        "RunAsUser",
        "FsGroup",
        "SupGroup",
        "ReadOnlyRootFs",
        "Volumes",
    ]
    assert document["rows"][0]["cells"] == [
        name,
        "true",
        "NET_ADMIN,SYS_TIME",
        "RunAsAny",
        "RunAsAny",
        "RunAsAny",
        "RunAsAny",
        True,
        "configMap,secret",
    ]


def test_protobuf_round_trip(recent: httpx.Client) -> None:
    name = unique("pb")
    body = psp(name, hostPorts=[{"min": 8000, "max": 8080}], volumes=["*"])
    created = post(recent, POLICY, protobuf.encode(body), accept=PROTOBUF)
    assert created.status_code == 201, created.text
    assert created.headers["content-type"] == PROTOBUF
    decoded = protobuf.decode(created.content)
    assert decoded["spec"] == {**body["spec"], "allowPrivilegeEscalation": True}
    assert recent.get(f"{POLICY}/{name}").json()["spec"] == decoded["spec"]


def test_extensions_and_policy_share_storage(old: httpx.Client) -> None:
    name = unique("shared")
    created = old.post(EXTENSIONS, json=psp(name, "extensions/v1beta1", hostNetwork=True))
    assert created.status_code == 201, created.text
    assert created.headers.get_list("warning") == [EXTENSIONS_WARNING]
    assert created.json()["apiVersion"] == "extensions/v1beta1"
    assert created.json()["spec"]["allowPrivilegeEscalation"] is True

    through_policy = old.get(f"{POLICY}/{name}")
    assert through_policy.status_code == 200, through_policy.text
    assert through_policy.headers.get_list("warning") == []  # deprecated only from 1.21
    assert through_policy.json()["apiVersion"] == "policy/v1beta1"
    assert through_policy.json()["spec"] == created.json()["spec"]

    other = unique("other")
    assert old.post(POLICY, json=psp(other)).status_code == 201
    assert {name, other} <= set(names(old, EXTENSIONS))
    bad = psp(unique("bad"), "extensions/v1beta1", volumes=["nope"])
    response = old.post(EXTENSIONS, json=bad)
    assert response.status_code == 422, response.text
    assert response.json()["details"]["causes"][0]["field"] == "spec.volumes"
    assert bad["metadata"]["name"] not in names(old, POLICY)


def test_not_served_at_the_modelled_release(http: httpx.Client) -> None:
    assert_status(http.get(POLICY), 404, "NotFound")
    assert http.get(EXTENSIONS).status_code == 404


@pytest.mark.kubectl
def test_kubectl_apply_and_get(server_1_24: KapiServer, tmp_path: Path) -> None:
    kubectl = make_kubectl(server_1_24, tmp_path, "1.27")
    name = unique("kubectl")
    manifest = tmp_path / "psp.yaml"
    manifest.write_text(yaml.safe_dump(psp(name, volumes=["secret"])))
    kubectl_warning = (
        "Warning: policy/v1beta1 PodSecurityPolicy is deprecated in v1.21+, unavailable in v1.25+"
    )
    applied = kubectl.run("apply", "-f", str(manifest))
    assert applied.returncode == 0, str(applied)
    assert applied.out_lines == [f"podsecuritypolicy.policy/{name} created"]
    assert applied.err_lines == [kubectl_warning]
    got = kubectl.run("get", "psp", name)
    assert got.returncode == 0, str(got)
    assert got.err_lines == [kubectl_warning]
    assert got.out_lines[0].split() == [
        "NAME",
        "PRIV",
        "CAPS",
        "SELINUX",
        "RUNASUSER",
        "FSGROUP",
        "SUPGROUP",
        "READONLYROOTFS",
        "VOLUMES",
    ]
    assert got.out_lines[1].split() == [
        name,
        "false",
        "RunAsAny",
        "RunAsAny",
        "RunAsAny",
        "RunAsAny",
        "false",
        "secret",
    ]
