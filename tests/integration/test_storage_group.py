"""storage.k8s.io on a real server: StorageClass, VolumeAttachment (+status), CSIDriver,
CSINode and CSIStorageCapacity in v1, and v1beta1 at an emulated 1.21.

Defaults, validation with upstream's messages (422 Invalid with causes, storage
unchanged after a refusal), immutable fields, tables as kubectl prints them, a
protobuf round trip, and kubectl apply / get."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kapi.runtime import protobuf
from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kubectl import Kubectl
from tests.helpers.objects import unique
from tests.helpers.protobuf_requests import PROTOBUF, post
from tests.helpers.status import assert_status

GROUP = "storage.k8s.io"
V1 = f"/apis/{GROUP}/v1"
V1BETA1 = f"/apis/{GROUP}/v1beta1"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def storage_class(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "example.com/fast",
        **fields,
    }


def attachment(name: str, **spec: Any) -> dict[str, Any]:
    body = {"attacher": "csi.example.com", "nodeName": "node-1"}
    body["source"] = {"persistentVolumeName": "pv-1"}
    body.update(spec)
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "VolumeAttachment",
        "metadata": {"name": name},
        "spec": body,
    }


def csi_driver(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "CSIDriver",
        "metadata": {"name": name},
        "spec": spec,
    }


def csi_node(name: str, *drivers: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": list(drivers)},
    }


def capacity(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "CSIStorageCapacity",
        "metadata": {"name": name},
        "storageClassName": "fast",
        **fields,
    }


def _invalid(kind: str, name: str, summary: str, *causes: tuple[str, str, str]) -> dict[str, Any]:
    return {
        "message": f'{kind}.{GROUP} "{name}" is invalid: {summary}',
        "details": {
            "name": name,
            "group": GROUP,
            "kind": kind,
            "causes": [{"reason": r, "message": m, "field": f} for r, m, f in causes],
        },
    }


def assert_invalid(response: httpx.Response, expected: dict[str, Any]) -> None:
    assert_status(response, 422, "Invalid", expected["message"], expected["details"])


def _cells(http: httpx.Client, path: str) -> tuple[list[str], list[Any]]:
    table = http.get(path, headers={"accept": TABLE}).json()
    assert table["kind"] == "Table", table
    names = [c["name"] for c in table["columnDefinitions"]]
    return names, table["rows"][0]["cells"]


# --- StorageClass -------------------------------------------------------------------------------


def test_storage_class_defaults_and_crud(http: httpx.Client) -> None:
    name = unique("sc")
    created = http.post(f"{V1}/storageclasses", json=storage_class(name, parameters={"a": "b"}))
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["reclaimPolicy"], body["volumeBindingMode"]) == ("Delete", "Immediate")
    assert "generation" not in body["metadata"]
    listed = http.get(f"{V1}/storageclasses").json()
    assert name in [i["metadata"]["name"] for i in listed["items"]]
    patched = http.patch(
        f"{V1}/storageclasses/{name}",
        json={"allowVolumeExpansion": True, "mountOptions": ["ro"]},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["allowVolumeExpansion"] is True
    assert http.delete(f"{V1}/storageclasses/{name}").status_code == 200
    assert_status(http.get(f"{V1}/storageclasses/{name}"), 404, "NotFound")


def test_storage_class_validation_messages(http: httpx.Client) -> None:
    name = unique("sc")
    response = http.post(
        f"{V1}/storageclasses",
        json=storage_class(
            name,
            provisioner="",
            reclaimPolicy="Recycle",
            volumeBindingMode="Later",
            allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": []}]}],
        ),
    )
    assert_invalid(
        response,
        _invalid(
            "StorageClass",
            name,
            "[provisioner: Required value, "
            'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain", '
            'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
            '"WaitForFirstConsumer", '
            "allowedTopologies[0].matchLabelExpressions[0].values: Required value]",
            ("FieldValueRequired", "Required value", "provisioner"),
            (
                "FieldValueNotSupported",
                'Unsupported value: "Recycle": supported values: "Delete", "Retain"',
                "reclaimPolicy",
            ),
            (
                "FieldValueNotSupported",
                'Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
                "volumeBindingMode",
            ),
            (
                "FieldValueRequired",
                "Required value",
                "allowedTopologies[0].matchLabelExpressions[0].values",
            ),
        ),
    )
    assert_status(http.get(f"{V1}/storageclasses/{name}"), 404, "NotFound")
    bad = http.post(f"{V1}/storageclasses", json=storage_class(name, provisioner="a/b/c"))
    assert_status(bad, 422, "Invalid")
    cause = bad.json()["details"]["causes"][0]
    assert cause["field"] == "provisioner"
    assert cause["message"].startswith('Invalid value: "a/b/c": a valid label key must consist')


def test_storage_class_immutable_fields(http: httpx.Client) -> None:
    name = unique("sc")
    assert http.post(f"{V1}/storageclasses", json=storage_class(name)).status_code == 201
    before = http.get(f"{V1}/storageclasses/{name}").json()
    changed = dict(
        before,
        provisioner="example.com/slow",
        parameters={"x": "y"},
        reclaimPolicy="Retain",
        volumeBindingMode="WaitForFirstConsumer",
    )
    response = http.put(f"{V1}/storageclasses/{name}", json=changed)
    assert_invalid(
        response,
        _invalid(
            "StorageClass",
            name,
            "[parameters: Forbidden: updates to parameters are forbidden., "
            "provisioner: Forbidden: updates to provisioner are forbidden., "
            "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden., "
            'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable]',
            (
                "FieldValueForbidden",
                "Forbidden: updates to parameters are forbidden.",
                "parameters",
            ),
            (
                "FieldValueForbidden",
                "Forbidden: updates to provisioner are forbidden.",
                "provisioner",
            ),
            (
                "FieldValueForbidden",
                "Forbidden: updates to reclaimPolicy are forbidden.",
                "reclaimPolicy",
            ),
            (
                "FieldValueInvalid",
                'Invalid value: "WaitForFirstConsumer": field is immutable',
                "volumeBindingMode",
            ),
        ),
    )
    assert http.get(f"{V1}/storageclasses/{name}").json() == before


def test_storage_class_table_marks_the_default(http: httpx.Client) -> None:
    name = unique("sc")
    body = storage_class(name)
    body["metadata"]["annotations"] = {DEFAULT_CLASS: "true"}
    assert http.post(f"{V1}/storageclasses", json=body).status_code == 201
    names, cells = _cells(http, f"{V1}/storageclasses/{name}")
    assert names == [
        "Name",
        "Provisioner",
        "ReclaimPolicy",
        "VolumeBindingMode",
        "AllowVolumeExpansion",
        "Age",
    ]
    assert cells[:5] == [f"{name} (default)", "example.com/fast", "Delete", "Immediate", False]


def test_storage_class_protobuf_round_trip(http: httpx.Client) -> None:
    name = unique("sc")
    body = protobuf.encode(storage_class(name, parameters={"type": "ssd"}, mountOptions=["ro"]))
    created = post(http, f"{V1}/storageclasses", body, accept=PROTOBUF)
    assert created.status_code == 201, created.text
    assert created.headers["content-type"] == PROTOBUF
    decoded = protobuf.decode(created.content)
    assert decoded["kind"] == "StorageClass"
    assert decoded["parameters"] == {"type": "ssd"}
    assert decoded["reclaimPolicy"] == "Delete"
    got = http.get(f"{V1}/storageclasses/{name}", headers={"accept": PROTOBUF})
    assert protobuf.decode(got.content) == http.get(f"{V1}/storageclasses/{name}").json()


# --- VolumeAttachment ---------------------------------------------------------------------------


def test_volume_attachment_status_subresource(http: httpx.Client) -> None:
    name = unique("va")
    body = attachment(name)
    body["status"] = {"attached": True}
    created = http.post(f"{V1}/volumeattachments", json=body)
    assert created.status_code == 201, created.text
    assert created.json()["status"] == {"attached": False}
    current = created.json()
    current["status"] = {"attached": True, "attachmentMetadata": {"dev": "/dev/sdb"}}
    updated = http.put(f"{V1}/volumeattachments/{name}/status", json=current)
    assert updated.status_code == 200, updated.text
    assert updated.json()["status"]["attached"] is True
    # The main resource ignores status.
    main = dict(updated.json(), status={"attached": False})
    assert http.put(f"{V1}/volumeattachments/{name}", json=main).json()["status"]["attached"]
    names, cells = _cells(http, f"{V1}/volumeattachments/{name}")
    assert names == ["Name", "Attacher", "PV", "Node", "Attached", "Age"]
    assert cells[:5] == [name, "csi.example.com", "pv-1", "node-1", True]


def test_volume_attachment_source_exactly_one(http: httpx.Client) -> None:
    name = unique("va")
    response = http.post(f"{V1}/volumeattachments", json=attachment(name, source={}))
    message = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"
    assert_invalid(
        response,
        _invalid(
            "VolumeAttachment",
            name,
            f"spec.source: Required value: {message}",
            ("FieldValueRequired", f"Required value: {message}", "spec.source"),
        ),
    )
    both = attachment(name, source={"persistentVolumeName": "pv", "inlineVolumeSpec": {}})
    response = http.post(f"{V1}/volumeattachments", json=both)
    assert_status(
        response,
        422,
        "Invalid",
        f'VolumeAttachment.{GROUP} "{name}" is invalid: spec.source: Forbidden: {message}',
    )
    assert_status(http.get(f"{V1}/volumeattachments/{name}"), 404, "NotFound")


def test_volume_attachment_attacher_and_node(http: httpx.Client) -> None:
    name = unique("va")
    response = http.post(
        f"{V1}/volumeattachments", json=attachment(name, attacher="", nodeName="Node_1")
    )
    assert_invalid(
        response,
        _invalid(
            "VolumeAttachment",
            name,
            f'[spec.attacher: Required value, spec.nodeName: Invalid value: "Node_1": '
            f'{SUBDOMAIN_MSG}, spec.attacher: Invalid value: "": {SUBDOMAIN_MSG}]',
            ("FieldValueRequired", "Required value", "spec.attacher"),
            ("FieldValueInvalid", f'Invalid value: "Node_1": {SUBDOMAIN_MSG}', "spec.nodeName"),
            ("FieldValueInvalid", f'Invalid value: "": {SUBDOMAIN_MSG}', "spec.attacher"),
        ),
    )


def test_volume_attachment_spec_is_immutable(http: httpx.Client) -> None:
    name = unique("va")
    created = http.post(f"{V1}/volumeattachments", json=attachment(name)).json()
    changed = dict(created, spec=dict(created["spec"], nodeName="node-2"))
    response = http.put(f"{V1}/volumeattachments/{name}", json=changed)
    assert_status(response, 422, "Invalid")
    causes = response.json()["details"]["causes"]
    assert [(c["field"], c["reason"]) for c in causes] == [("spec", "FieldValueInvalid")]
    assert causes[0]["message"].startswith("Invalid value: storage.VolumeAttachmentSpec{")
    assert causes[0]["message"].endswith('NodeName:"node-2"}: field is immutable')
    assert http.get(f"{V1}/volumeattachments/{name}").json() == created


def test_volume_attachment_needs_a_resource_version(http: httpx.Client) -> None:
    name = unique("va")
    created = http.post(f"{V1}/volumeattachments", json=attachment(name)).json()
    del created["metadata"]["resourceVersion"]
    response = http.put(f"{V1}/volumeattachments/{name}", json=created)
    assert_status(response, 422, "Invalid")
    assert response.json()["details"]["causes"][0]["field"] == "metadata.resourceVersion"


# --- CSIDriver ----------------------------------------------------------------------------------


def test_csi_driver_defaults_and_table(http: httpx.Client) -> None:
    name = unique("drv") + ".example.com"
    created = http.post(f"{V1}/csidrivers", json=csi_driver(name))
    assert created.status_code == 201, created.text
    assert created.json()["spec"] == {
        "attachRequired": True,
        "podInfoOnMount": False,
        "storageCapacity": False,
        "fsGroupPolicy": "ReadWriteOnceWithFSType",
        "volumeLifecycleModes": ["Persistent"],
        "requiresRepublish": False,
        "seLinuxMount": False,
    }
    names, cells = _cells(http, f"{V1}/csidrivers/{name}")
    assert names == [
        "Name",
        "AttachRequired",
        "PodInfoOnMount",
        "StorageCapacity",
        "TokenRequests",
        "RequiresRepublish",
        "Modes",
        "Age",
    ]
    assert cells[:7] == [name, True, False, False, "<unset>", False, "Persistent"]


def test_csi_driver_validation_messages(http: httpx.Client) -> None:
    name = unique("drv")
    response = http.post(
        f"{V1}/csidrivers",
        json=csi_driver(
            name,
            fsGroupPolicy="Sometimes",
            volumeLifecycleModes=["Forever"],
            tokenRequests=[{"audience": "a", "expirationSeconds": 60}, {"audience": "a"}],
        ),
    )
    assert_invalid(
        response,
        _invalid(
            "CSIDriver",
            name,
            '[spec.fsGroupPolicy: Unsupported value: "Sometimes": supported values: "File", '
            '"None", "ReadWriteOnceWithFSType", spec.tokenRequests[0].expirationSeconds: '
            "Invalid value: 60: may not specify a duration less than 10 minutes, "
            'spec.tokenRequests[1].audience: Duplicate value: "a", '
            'spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: '
            '"Persistent", "Ephemeral"]',
            (
                "FieldValueNotSupported",
                'Unsupported value: "Sometimes": supported values: "File", "None", '
                '"ReadWriteOnceWithFSType"',
                "spec.fsGroupPolicy",
            ),
            (
                "FieldValueInvalid",
                "Invalid value: 60: may not specify a duration less than 10 minutes",
                "spec.tokenRequests[0].expirationSeconds",
            ),
            ("FieldValueDuplicate", 'Duplicate value: "a"', "spec.tokenRequests[1].audience"),
            (
                "FieldValueNotSupported",
                'Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"',
                "spec.volumeLifecycleModes",
            ),
        ),
    )
    assert_status(http.get(f"{V1}/csidrivers/{name}"), 404, "NotFound")


def test_csi_driver_immutable_fields_and_generation(http: httpx.Client) -> None:
    name = unique("drv")
    created = http.post(f"{V1}/csidrivers", json=csi_driver(name)).json()
    changed = dict(
        created,
        spec=dict(
            created["spec"], attachRequired=False, volumeLifecycleModes=["Persistent", "Ephemeral"]
        ),
    )
    response = http.put(f"{V1}/csidrivers/{name}", json=changed)
    modes = '[]storage.VolumeLifecycleMode{"Persistent", "Ephemeral"}'
    assert_invalid(
        response,
        _invalid(
            "CSIDriver",
            name,
            "[spec.attachedRequired: Invalid value: false: field is immutable, "
            f"spec.volumeLifecycleModes: Invalid value: {modes}: field is immutable]",
            (
                "FieldValueInvalid",
                "Invalid value: false: field is immutable",
                "spec.attachedRequired",
            ),
            (
                "FieldValueInvalid",
                f"Invalid value: {modes}: field is immutable",
                "spec.volumeLifecycleModes",
            ),
        ),
    )
    assert http.get(f"{V1}/csidrivers/{name}").json() == created
    mutable = dict(created, spec=dict(created["spec"], podInfoOnMount=True))
    updated = http.put(f"{V1}/csidrivers/{name}", json=mutable)
    assert updated.status_code == 200, updated.text
    assert updated.json()["metadata"]["generation"] == created["metadata"]["generation"] + 1


# --- CSINode ------------------------------------------------------------------------------------


def test_csi_node_drivers(http: httpx.Client) -> None:
    name = unique("node")
    driver = {"name": "csi.example.com", "nodeID": "n1", "topologyKeys": ["zone"]}
    created = http.post(f"{V1}/csinodes", json=csi_node(name, driver))
    assert created.status_code == 201, created.text
    names, cells = _cells(http, f"{V1}/csinodes/{name}")
    assert (names, cells[:2]) == (["Name", "Drivers", "Age"], [name, 1])
    changed = created.json()
    changed["spec"]["drivers"][0]["nodeID"] = "n2"
    response = http.put(f"{V1}/csinodes/{name}", json=changed)
    go = (
        'storage.CSINodeDriver{Name:"csi.example.com", NodeID:"n2", '
        'TopologyKeys:[]string{"zone"}, Allocatable:(*storage.VolumeNodeResources)(nil)}'
    )
    assert_invalid(
        response,
        _invalid(
            "CSINode",
            name,
            f"spec.drivers: Invalid value: {go}: field is immutable",
            ("FieldValueInvalid", f"Invalid value: {go}: field is immutable", "spec.drivers"),
        ),
    )
    assert http.get(f"{V1}/csinodes/{name}").json() == created.json()


def test_csi_node_validation_messages(http: httpx.Client) -> None:
    name = unique("node")
    drivers = [
        {"name": "csi.example.com", "nodeID": ""},
        {"name": "csi.example.com", "nodeID": "n", "allocatable": {"count": -1}},
    ]
    response = http.post(f"{V1}/csinodes", json=csi_node(name, *drivers))
    assert_invalid(
        response,
        _invalid(
            "CSINode",
            name,
            "[spec.drivers[0].nodeID: Required value, "
            "spec.drivers[1].allocatable.count: Invalid value: -1: must be greater than or "
            'equal to 0, spec.drivers[1].name: Duplicate value: "csi.example.com"]',
            ("FieldValueRequired", "Required value", "spec.drivers[0].nodeID"),
            (
                "FieldValueInvalid",
                "Invalid value: -1: must be greater than or equal to 0",
                "spec.drivers[1].allocatable.count",
            ),
            (
                "FieldValueDuplicate",
                'Duplicate value: "csi.example.com"',
                "spec.drivers[1].name",
            ),
        ),
    )


# --- CSIStorageCapacity -------------------------------------------------------------------------


def test_csi_storage_capacity(http: httpx.Client, namespace: str) -> None:
    base = f"{V1}/namespaces/{namespace}/csistoragecapacities"
    name = unique("cap")
    created = http.post(base, json=capacity(name, capacity="10Gi"))
    assert created.status_code == 201, created.text
    names, cells = _cells(http, f"{base}/{name}")
    assert (names, cells) == (["Name", "StorageClassName", "Capacity"], [name, "fast", "10Gi"])
    changed = dict(created.json(), storageClassName="slow")
    response = http.put(f"{base}/{name}", json=changed)
    assert_invalid(
        response,
        _invalid(
            "CSIStorageCapacity",
            name,
            'storageClassName: Invalid value: "slow": field is immutable',
            ("FieldValueInvalid", 'Invalid value: "slow": field is immutable', "storageClassName"),
        ),
    )
    assert http.get(f"{base}/{name}").json() == created.json()
    bad = http.post(base, json=capacity(unique("cap"), storageClassName="", capacity="-1"))
    assert_status(bad, 422, "Invalid")
    assert [(c["field"], c["message"]) for c in bad.json()["details"]["causes"]] == [
        ("storageClassName", f'Invalid value: "": {SUBDOMAIN_MSG}'),
        ("capacity", 'Invalid value: "-1": must be greater than or equal to 0'),
    ]


# --- kubectl ------------------------------------------------------------------------------------


@pytest.mark.kubectl
def test_kubectl_apply_and_get(kubectl: Kubectl, tmp_path: Path) -> None:
    sc, drv = unique("sc"), unique("drv")
    manifest = tmp_path / "storage.yaml"
    manifest.write_text(
        textwrap.dedent(
            f"""\
            apiVersion: storage.k8s.io/v1
            kind: StorageClass
            metadata:
              name: {sc}
              annotations:
                {DEFAULT_CLASS}: "true"
            provisioner: example.com/fast
            volumeBindingMode: WaitForFirstConsumer
            ---
            apiVersion: storage.k8s.io/v1
            kind: CSIDriver
            metadata:
              name: {drv}
            spec:
              attachRequired: false
            """
        )
    )
    assert kubectl.ok("apply", "-f", str(manifest)).out_lines == [
        f"storageclass.storage.k8s.io/{sc} created",
        f"csidriver.storage.k8s.io/{drv} created",
    ]
    lines = kubectl.ok("get", "sc", sc).out_lines
    assert lines[0].split() == [
        "NAME",
        "PROVISIONER",
        "RECLAIMPOLICY",
        "VOLUMEBINDINGMODE",
        "ALLOWVOLUMEEXPANSION",
        "AGE",
    ]
    assert lines[1].split()[:6] == [
        sc,
        "(default)",
        "example.com/fast",
        "Delete",
        "WaitForFirstConsumer",
        "false",
    ]
    lines = kubectl.ok("get", "csidriver", drv).out_lines
    assert lines[0].split()[:7] == [
        "NAME",
        "ATTACHREQUIRED",
        "PODINFOONMOUNT",
        "STORAGECAPACITY",
        "TOKENREQUESTS",
        "REQUIRESREPUBLISH",
        "MODES",
    ]
    row = [drv, "false", "false", "false", "<unset>", "false", "Persistent"]
    assert lines[1].split()[:7] == row
    # Applying again changes nothing.
    assert kubectl.ok("apply", "-f", str(manifest)).out_lines == [
        f"storageclass.storage.k8s.io/{sc} unchanged",
        f"csidriver.storage.k8s.io/{drv} unchanged",
    ]


# --- v1beta1 at 1.21 ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_1_21(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "storage-1-21", "--emulated-version=1.21")


def _warning(kind: str, deprecated: str, removed: str) -> list[str]:
    return [
        f'299 - "{GROUP}/v1beta1 {kind} is deprecated in v{deprecated}+, unavailable in '
        f'v{removed}+; use {GROUP}/v1 {kind}"'
    ]


def test_v1beta1_and_v1_read_each_other_at_1_21(server_1_21: KapiServer) -> None:
    with server_1_21.client() as http:
        group = http.get(f"/apis/{GROUP}").json()
        assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
        beta = storage_class("beta", apiVersion=f"{GROUP}/v1beta1")
        created = http.post(f"{V1BETA1}/storageclasses", json=beta)
        assert created.status_code == 201, created.text
        assert created.headers.get_list("warning") == _warning("StorageClass", "1.19", "1.22")
        assert created.json()["apiVersion"] == f"{GROUP}/v1beta1"
        assert created.json()["reclaimPolicy"] == "Delete"
        as_v1 = http.get(f"{V1}/storageclasses/beta")
        assert as_v1.headers.get_list("warning") == []
        assert as_v1.json()["apiVersion"] == f"{GROUP}/v1"
        assert as_v1.json()["volumeBindingMode"] == "Immediate"

        driver = http.post(f"{V1}/csidrivers", json=csi_driver("v1.example.com")).json()
        as_beta = http.get(f"{V1BETA1}/csidrivers/v1.example.com")
        assert as_beta.headers.get_list("warning") == _warning("CSIDriver", "1.19", "1.22")
        # SELinuxMountReadWriteOncePod was alpha in 1.21: no seLinuxMount default.
        assert as_beta.json()["spec"] == driver["spec"]
        assert "seLinuxMount" not in driver["spec"]
        assert dict(as_beta.json(), apiVersion=f"{GROUP}/v1") == driver

        ns = "default"
        beta_cap = capacity("cap", apiVersion=f"{GROUP}/v1beta1", capacity="1Gi")
        made = http.post(f"{V1BETA1}/namespaces/{ns}/csistoragecapacities", json=beta_cap)
        assert made.status_code == 201, made.text
        assert made.headers.get_list("warning") == []  # deprecated only from 1.24
        v1_cap = http.get(f"{V1}/namespaces/{ns}/csistoragecapacities/cap")
        assert v1_cap.status_code == 404  # v1 CSIStorageCapacity came in 1.24


def test_v1beta1_absent_at_the_default_version(http: httpx.Client) -> None:
    group = http.get(f"/apis/{GROUP}").json()
    assert [v["version"] for v in group["versions"]] == ["v1"]
    assert_status(http.get(f"{V1BETA1}/storageclasses"), 404, "NotFound")
    resources = {r["name"] for r in http.get(V1).json()["resources"]}
    assert {
        "storageclasses",
        "volumeattachments",
        "volumeattachments/status",
        "csidrivers",
        "csinodes",
        "csistoragecapacities",
    } <= resources
    sc = next(r for r in http.get(V1).json()["resources"] if r["name"] == "storageclasses")
    assert (sc["namespaced"], sc["shortNames"]) == (False, ["sc"])


# --- gated fields -------------------------------------------------------------------------------


def test_alpha_fields_are_dropped_with_a_warning(http: httpx.Client) -> None:
    """MutableCSINodeAllocatableCount is alpha (off) in 1.33: its fields are not stored."""
    name = unique("drv")
    created = http.post(
        f"{V1}/csidrivers", json=csi_driver(name, nodeAllocatableUpdatePeriodSeconds=30)
    )
    assert created.status_code == 201, created.text
    assert "nodeAllocatableUpdatePeriodSeconds" not in created.json()["spec"]
    assert [w.split('"')[1] for w in created.headers.get_list("warning")] == [
        "spec.nodeAllocatableUpdatePeriodSeconds: dropped because the "
        "MutableCSINodeAllocatableCount feature gate is disabled"
    ]
    va = unique("va")
    current = http.post(f"{V1}/volumeattachments", json=attachment(va)).json()
    current["status"] = {"attached": False, "attachError": {"message": "busy", "errorCode": 5}}
    updated = http.put(f"{V1}/volumeattachments/{va}/status", json=current)
    assert updated.status_code == 200, updated.text
    assert updated.json()["status"]["attachError"] == {"message": "busy"}
    assert http.get(f"{V1}/volumeattachments/{va}").json()["status"] == updated.json()["status"]


def test_deprecated_node_labels_warn(http: httpx.Client, namespace: str) -> None:
    zone = "failure-domain.beta.kubernetes.io/zone"
    name = unique("sc")
    terms = [{"matchLabelExpressions": [{"key": zone, "values": ["a"]}]}]
    created = http.post(f"{V1}/storageclasses", json=storage_class(name, allowedTopologies=terms))
    assert created.status_code == 201, created.text
    assert [w.split('"', 1)[1][:-1] for w in created.headers.get_list("warning")] == [
        "allowedTopologies[0].matchLabelExpressions[0].key: deprecated since v1.17; "
        'use \\"topology.kubernetes.io/zone\\" instead'
    ]
    topology = {"matchExpressions": [{"key": zone, "operator": "Exists"}]}
    made = http.post(
        f"{V1}/namespaces/{namespace}/csistoragecapacities",
        json=capacity(unique("cap"), nodeTopology=topology),
    )
    assert made.status_code == 201, made.text
    assert [w.split('"', 1)[1][:-1] for w in made.headers.get_list("warning")] == [
        f"nodeTopology.matchExpressions[0].key: {zone} is deprecated since v1.17; "
        'use \\"topology.kubernetes.io/zone\\" instead'
    ]
