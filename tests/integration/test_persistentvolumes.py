"""core/v1 PersistentVolumes and PersistentVolumeClaims on a real server: defaults,
upstream's validation messages, the status subresource, immutability, the protection
finalizers and their release, tables, protobuf, and kubectl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from kapi.runtime import protobuf
from tests.conftest import KapiServer
from tests.helpers.kubectl import TIMESTAMP, make_kubectl
from tests.helpers.objects import unique
from tests.helpers.protobuf_requests import PROTOBUF, post
from tests.helpers.status import assert_status
from tests.helpers.wait import eventually

Object = dict[str, Any]
PVS = "/api/v1/persistentvolumes"
TABLE = {"accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def _pv(name: str, **spec: Any) -> Object:
    body: Object = {
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/data/pv"},
    }
    body.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


def _pvc(name: str, **spec: Any) -> Object:
    body: Object = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
    }
    body.update(spec)
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


def _pvcs(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/persistentvolumeclaims"


def _created(response: httpx.Response) -> Object:
    assert response.status_code == 201, response.text
    return response.json()


def _gone(http: httpx.Client, path: str) -> bool:
    return http.get(path).status_code == 404


# --- PersistentVolume ---------------------------------------------------------------------------


def test_pv_defaults_status_and_protection_finalizer(http: httpx.Client) -> None:
    name = unique("pv")
    pv = _created(http.post(PVS, json=_pv(name, persistentVolumeReclaimPolicy=None)))
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert pv["spec"]["volumeMode"] == "Filesystem"
    assert pv["spec"]["hostPath"] == {"path": "/data/pv", "type": ""}
    assert pv["status"]["phase"] == "Pending"
    assert TIMESTAMP.fullmatch(pv["status"]["lastPhaseTransitionTime"])
    assert pv["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    assert "namespace" not in pv["metadata"]
    assert http.get(f"{PVS}/{name}").json()["spec"] == pv["spec"]


def test_pv_status_sent_on_create_is_reset(http: httpx.Client) -> None:
    body = _pv(unique("pv"))
    body["status"] = {"phase": "Bound", "reason": "mine"}
    assert set(_created(http.post(PVS, json=body))["status"]) == {
        "phase",
        "lastPhaseTransitionTime",
    }


def test_pv_common_mistakes_get_upstream_messages(http: httpx.Client) -> None:
    name = unique("pv")
    body = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}}
    status = assert_status(
        http.post(PVS, json=body),
        422,
        "Invalid",
        f'PersistentVolume "{name}" is invalid: [spec.accessModes: Required value, '
        "spec.capacity: Required value, spec.capacity: Unsupported value: "
        'core.ResourceList(nil): supported values: "storage", '
        "spec: Required value: must specify a volume type]",
    )
    assert status["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.accessModes"},
        {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.capacity"},
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: core.ResourceList(nil): supported values: "storage"',
            "field": "spec.capacity",
        },
        {
            "reason": "FieldValueRequired",
            "message": "Required value: must specify a volume type",
            "field": "spec",
        },
    ]
    cases = [
        (
            _pv(name, nfs={"server": "nfs.example", "path": "/export"}),
            "spec.nfs: Forbidden: may not specify more than 1 volume type",
        ),
        (
            _pv(name, persistentVolumeReclaimPolicy="Keep"),
            'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: '
            '"Delete", "Recycle", "Retain"',
        ),
        (
            _pv(name, capacity={"storage": "0"}),
            'spec.capacity[storage]: Invalid value: "0": must be greater than zero',
        ),
        (
            _pv(name, accessModes=["ReadWriteOncePod", "ReadWriteOnce"]),
            "spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
        ),
        (
            _pv(name, accessModes=["WriteSometimes"]),
            'spec.accessModes: Unsupported value: "WriteSometimes": supported values: '
            '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
        ),
        (
            _pv(name, hostPath=None, local={"path": "/mnt/disk"}),
            "spec.nodeAffinity: Required value: Local volume requires node affinity",
        ),
        (
            _pv(name, volumeMode="Raw"),
            'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
        ),
    ]
    for body, detail in cases:
        assert_status(
            http.post(PVS, json=body),
            422,
            "Invalid",
            f'PersistentVolume "{name}" is invalid: {detail}',
        )
    assert _gone(http, f"{PVS}/{name}")


def test_pv_source_and_mode_are_immutable_status_is_the_subresource(http: httpx.Client) -> None:
    name = unique("pv")
    pv = _created(http.post(PVS, json=_pv(name)))
    pv["spec"]["hostPath"]["path"] = "/elsewhere"
    status = assert_status(http.put(f"{PVS}/{name}", json=pv), 422, "Invalid")
    assert status["message"].startswith(
        f'PersistentVolume "{name}" is invalid: spec.persistentvolumesource: Forbidden: '
        "spec.persistentvolumesource is immutable after creation\n"
    )
    assert http.get(f"{PVS}/{name}").json()["spec"]["hostPath"]["path"] == "/data/pv"

    pv = http.get(f"{PVS}/{name}").json()
    pv["spec"]["volumeMode"] = "Block"
    assert_status(
        http.put(f"{PVS}/{name}", json=pv),
        422,
        "Invalid",
        f'PersistentVolume "{name}" is invalid: volumeMode: Invalid value: "Block": '
        "field is immutable",
    )

    # The main resource keeps the status; capacity and the claim reference may change.
    pv = http.get(f"{PVS}/{name}").json()
    before = pv["status"]
    pv["status"] = {"phase": "Bound"}
    pv["spec"]["capacity"] = {"storage": "2Gi"}
    updated = http.put(f"{PVS}/{name}", json=pv)
    assert updated.status_code == 200, updated.text
    assert updated.json()["status"] == before
    assert updated.json()["spec"]["capacity"] == {"storage": "2Gi"}

    pv = updated.json()
    pv["status"] = {"phase": "Available"}
    pv["spec"]["capacity"] = {"storage": "5Gi"}
    available = http.put(f"{PVS}/{name}/status", json=pv)
    assert available.status_code == 200, available.text
    assert available.json()["status"]["phase"] == "Available"
    assert TIMESTAMP.fullmatch(available.json()["status"]["lastPhaseTransitionTime"])
    assert available.json()["spec"]["capacity"] == {"storage": "2Gi"}


def test_pv_recycle_policy_warns(http: httpx.Client) -> None:
    response = http.post(PVS, json=_pv(unique("pv"), persistentVolumeReclaimPolicy="Recycle"))
    assert response.status_code == 201, response.text
    assert response.headers.get_list("warning") == [
        '299 - "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. '
        'Instead, the recommended approach is to use dynamic provisioning."'
    ]


def test_bound_pv_waits_for_release_before_deletion(http: httpx.Client) -> None:
    name = unique("pv")
    pv = _created(http.post(PVS, json=_pv(name)))
    pv["status"] = {"phase": "Bound"}
    assert http.put(f"{PVS}/{name}/status", json=pv).status_code == 200
    deleted = http.delete(f"{PVS}/{name}")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["metadata"]["deletionTimestamp"]
    table = http.get(f"{PVS}/{name}", headers=TABLE).json()
    assert table["rows"][0]["cells"][4] == "Terminating"
    marked = http.get(f"{PVS}/{name}").json()
    assert marked["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    marked["status"] = {"phase": "Released"}
    assert http.put(f"{PVS}/{name}/status", json=marked).status_code == 200
    eventually(lambda: _gone(http, f"{PVS}/{name}"), what="the released volume to go")


def test_unbound_pv_is_deleted(http: httpx.Client) -> None:
    name = unique("pv")
    _created(http.post(PVS, json=_pv(name)))
    assert http.delete(f"{PVS}/{name}").status_code == 200
    eventually(lambda: _gone(http, f"{PVS}/{name}"), what="the unbound volume to go")


def test_pv_table_columns(http: httpx.Client) -> None:
    name = unique("pv")
    body = _pv(
        name,
        accessModes=["ReadWriteOnce", "ReadOnlyMany"],
        storageClassName="fast",
        claimRef={"namespace": "ns1", "name": "data"},
    )
    _created(http.post(PVS, json=body))
    table = http.get(f"{PVS}/{name}", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Capacity",
        "Access Modes",
        "Reclaim Policy",
        "Status",
        "Claim",
        "StorageClass",
        "VolumeAttributesClass",
        "Reason",
        "Age",
        "VolumeMode",
    ]
    [row] = table["rows"]
    cells = row["cells"]
    assert cells[:9] == [
        name,
        "1Gi",
        "RWO,ROX",
        "Retain",
        "Pending",
        "ns1/data",
        "fast",
        "<unset>",
        "",
    ]
    assert cells[10] == "Filesystem"


def test_pv_protobuf_round_trip(http: httpx.Client) -> None:
    name = unique("pv")
    created = post(http, PVS, protobuf.encode(_pv(name)), accept=PROTOBUF)
    assert created.status_code == 201, created.text
    assert created.headers["content-type"] == PROTOBUF
    pv = protobuf.decode(created.content)
    assert pv["spec"]["capacity"] == {"storage": "1Gi"}
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert pv["status"]["phase"] == "Pending"
    as_json = http.get(f"{PVS}/{name}").json()
    assert protobuf.decode(http.get(f"{PVS}/{name}", headers={"accept": PROTOBUF}).content) == (
        as_json
    )


# --- PersistentVolumeClaim ----------------------------------------------------------------------


def test_pvc_defaults_and_finalizer(http: httpx.Client, namespace: str) -> None:
    claim = _created(http.post(_pvcs(namespace), json=_pvc("data")))
    assert claim["spec"]["volumeMode"] == "Filesystem"
    assert claim["status"] == {"phase": "Pending"}
    assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    source = {"kind": "PersistentVolumeClaim", "name": "data"}
    clone = _created(http.post(_pvcs(namespace), json=_pvc("clone", dataSource=source)))
    assert clone["spec"]["dataSourceRef"] == source


def test_pvc_common_mistakes_get_upstream_messages(http: httpx.Client, namespace: str) -> None:
    body = _pvc("data", accessModes=None, resources={})
    status = assert_status(
        http.post(_pvcs(namespace), json=body),
        422,
        "Invalid",
        'PersistentVolumeClaim "data" is invalid: [spec.accessModes: Required value: at least 1 '
        "access mode is required, spec.resources[storage]: Required value]",
    )
    assert [c["field"] for c in status["details"]["causes"]] == [
        "spec.accessModes",
        "spec.resources[storage]",
    ]
    assert_status(
        http.post(_pvcs(namespace), json=_pvc("data", resources={"requests": {"storage": "0"}})),
        422,
        "Invalid",
        'PersistentVolumeClaim "data" is invalid: spec.resources[storage]: Invalid value: "0": '
        "must be greater than zero",
    )
    assert_status(
        http.post(_pvcs(namespace), json=_pvc("data", storageClassName="Fast_Disks")),
        422,
        "Invalid",
        'PersistentVolumeClaim "data" is invalid: spec.storageClassName: Invalid value: '
        '"Fast_Disks": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
        "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is "
        r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    )
    assert http.get(_pvcs(namespace)).json()["items"] == []


def test_pvc_spec_is_immutable_but_for_bound_expansion(http: httpx.Client, namespace: str) -> None:
    path = f"{_pvcs(namespace)}/data"
    claim = _created(http.post(_pvcs(namespace), json=_pvc("data")))
    claim["spec"]["accessModes"] = ["ReadWriteMany"]
    status = assert_status(http.put(path, json=claim), 422, "Invalid")
    assert status["message"].startswith(
        'PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after '
        "creation except resources.requests and volumeAttributesClassName for bound claims\n"
    )
    assert status["details"]["causes"][0]["field"] == "spec"
    # An unbound claim's request is fixed too.
    claim = http.get(path).json()
    claim["spec"]["resources"]["requests"]["storage"] = "2Gi"
    assert_status(http.put(path, json=claim), 422, "Invalid")
    assert http.get(path).json()["spec"]["resources"]["requests"]["storage"] == "1Gi"

    # The volume name may be set once (the binder's write), then the claim is bound.
    claim = http.get(path).json()
    claim["spec"]["volumeName"] = "pv-data"
    bound = http.put(path, json=claim)
    assert bound.status_code == 200, bound.text
    claim = bound.json()
    claim["status"] = {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "1Gi"},
    }
    assert http.put(f"{path}/status", json=claim).status_code == 200
    claim = http.get(path).json()
    claim["spec"]["volumeName"] = "pv-other"
    assert_status(http.put(path, json=claim), 422, "Invalid")

    claim = http.get(path).json()
    claim["spec"]["resources"]["requests"]["storage"] = "3Gi"
    expanded = http.put(path, json=claim)
    assert expanded.status_code == 200, expanded.text
    assert expanded.json()["spec"]["resources"]["requests"]["storage"] == "3Gi"
    assert expanded.json()["status"]["phase"] == "Bound"

    claim = expanded.json()
    claim["spec"]["resources"]["requests"]["storage"] = "1Gi"
    assert_status(
        http.put(path, json=claim),
        422,
        "Invalid",
        'PersistentVolumeClaim "data" is invalid: spec.resources.requests.storage: Forbidden: '
        "field can not be less than status.capacity",
    )
    assert http.get(path).json()["spec"]["resources"]["requests"]["storage"] == "3Gi"

    table = http.get(path, headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Status",
        "Volume",
        "Capacity",
        "Access Modes",
        "StorageClass",
        "VolumeAttributesClass",
        "Age",
        "VolumeMode",
    ]
    cells = table["rows"][0]["cells"]
    assert cells[:7] == ["data", "Bound", "pv-data", "1Gi", "RWO", "", "<unset>"]
    assert cells[8] == "Filesystem"


def test_pvc_in_use_by_a_pod_waits_for_it(http: httpx.Client, namespace: str) -> None:
    path = f"{_pvcs(namespace)}/data"
    _created(http.post(_pvcs(namespace), json=_pvc("data")))
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "user"},
        "spec": {
            "containers": [{"name": "main", "image": "busybox"}],
            "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}],
        },
    }
    _created(http.post(f"/api/v1/namespaces/{namespace}/pods", json=pod))
    assert http.delete(path).status_code == 200
    table = http.get(path, headers=TABLE).json()
    assert table["rows"][0]["cells"][1] == "Terminating"
    assert http.get(path).json()["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert http.delete(f"/api/v1/namespaces/{namespace}/pods/user").status_code == 200
    eventually(lambda: _gone(http, path), what="the claim no pod uses to go")


def test_namespace_with_claims_is_deleted(http: httpx.Client, namespace: str) -> None:
    _created(http.post(_pvcs(namespace), json=_pvc("data")))
    assert http.delete(f"/api/v1/namespaces/{namespace}").status_code == 200
    eventually(lambda: _gone(http, f"/api/v1/namespaces/{namespace}"), what="the namespace to go")


@pytest.mark.kubectl
def test_kubectl_apply_and_get(kapi_server: KapiServer, tmp_path: Path, namespace: str) -> None:
    kubectl = make_kubectl(kapi_server, tmp_path, "1.33")
    name = unique("pv")
    manifest = tmp_path / "storage.json"
    documents = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [_pv(name, storageClassName="manual"), _pvc("data", storageClassName="manual")],
    }
    manifest.write_text(json.dumps(documents))
    assert kubectl.ok("-n", namespace, "apply", "-f", str(manifest)).out_lines == [
        f"persistentvolume/{name} created",
        "persistentvolumeclaim/data created",
    ]
    lines = kubectl.ok("get", "pv", name, "-o", "wide").out_lines
    assert lines[0].split() == [
        "NAME",
        "CAPACITY",
        "ACCESS",
        "MODES",
        "RECLAIM",
        "POLICY",
        "STATUS",
        "CLAIM",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "REASON",
        "AGE",
        "VOLUMEMODE",
    ]
    cells = lines[1].split()
    assert cells[:6] == [name, "1Gi", "RWO", "Retain", "Pending", "manual"]
    assert cells[-1] == "Filesystem"
    lines = kubectl.ok("-n", namespace, "get", "pvc").out_lines
    assert lines[0].split() == [
        "NAME",
        "STATUS",
        "VOLUME",
        "CAPACITY",
        "ACCESS",
        "MODES",
        "STORAGECLASS",
        "VOLUMEATTRIBUTESCLASS",
        "AGE",
    ]
    assert lines[1].split()[:4] == ["data", "Pending", "manual", "<unset>"]
    # Applying the same manifest again changes nothing.
    assert kubectl.ok("-n", namespace, "apply", "-f", str(manifest)).out_lines == [
        f"persistentvolume/{name} unchanged",
        "persistentvolumeclaim/data unchanged",
    ]
