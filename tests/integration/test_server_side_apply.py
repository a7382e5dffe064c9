"""Server-side apply and managedFields: the real kubectl and raw HTTP against ``kapi serve``.

kubectl's lines, exit codes and the Status bodies are kube-apiserver's; the
managedFields shown by ``--show-managed-fields`` are compared whole, with only
their times matched by pattern.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import KapiServer
from tests.helpers.crds import crd_of, named_ports
from tests.helpers.kubectl import TIMESTAMP, Kubectl, make_kubectl

pytestmark = pytest.mark.kubectl

APPLY = "application/apply-patch+yaml"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
CONFLICT_ADVICE = [
    "Please review the fields above--they currently have other managers. Here",
    "are the ways you can resolve this warning:",
    "* If you intend to manage all of these fields, please re-run the apply",
    "  command with the `--force-conflicts` flag.",
    "* If you do not intend to manage all of the fields, please edit your",
    "  manifest to remove references to the fields that should keep their",
    "  current managers.",
    "* You may co-own fields by updating your manifest to match the existing",
    "  value; in this case, you'll become the manager if the other manager(s)",
    "  stop managing the field (remove it from their configuration).",
    "See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts",
]


def manifest(tmp_path: Path, name: str, doc: dict[str, Any]) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def configmap(name: str, namespace: str, data: dict[str, str], **labels: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


def managed_fields(kubectl: Kubectl, *target: str) -> list[dict[str, Any]]:
    """``get -o yaml --show-managed-fields``, with each time checked and dropped."""
    out = yaml.safe_load(kubectl.ok("get", *target, "-o", "yaml", "--show-managed-fields").stdout)
    entries = out["metadata"]["managedFields"]
    for entry in entries:
        if "time" in entry:
            assert TIMESTAMP.fullmatch(entry.pop("time")), entry
    return entries


def entry(manager: str, operation: str, fields: dict[str, Any], **extra: str) -> dict[str, Any]:
    return {
        "apiVersion": extra.pop("apiVersion", "v1"),
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": operation,
        **extra,
    }


def resource_version(kubectl: Kubectl, *target: str) -> str:
    return kubectl.json("get", *target)["metadata"]["resourceVersion"]


# -- kubectl apply --server-side ----------------------------------------------------------


def test_apply_creates_then_reapplying_changes_nothing(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    path = manifest(tmp_path, "cm.yaml", configmap("cfg", namespace, {"a": "1"}, app="demo"))
    result = kubectl.ok("apply", "--server-side", "-f", path)
    assert result.out_lines == ["configmap/cfg serverside-applied"]
    target = ("configmap", "cfg", "-n", namespace)
    assert managed_fields(kubectl, *target) == [
        entry(
            "kubectl", "Apply", {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}}
        )
    ]
    before = kubectl.json("get", *target, "--show-managed-fields")
    assert kubectl.ok("apply", "--server-side", "-f", path).out_lines == [
        "configmap/cfg serverside-applied"
    ]
    after = kubectl.json("get", *target, "--show-managed-fields")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert after["metadata"]["managedFields"] == before["metadata"]["managedFields"]


def test_apply_after_an_edit_conflicts_until_forced(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    path = manifest(tmp_path, "cm.yaml", configmap("cfg", namespace, {"a": "1", "b": "1"}))
    kubectl.ok("apply", "--server-side", "-f", path)
    target = ("configmap", "cfg", "-n", namespace)
    kubectl.ok("patch", *target, "-p", '{"data":{"b":"edited","c":"new"}}')
    assert managed_fields(kubectl, *target) == [
        entry("kubectl", "Apply", {"f:data": {"f:a": {}}}),
        entry("kubectl-patch", "Update", {"f:data": {"f:b": {}, "f:c": {}}}),
    ]
    # Changing a field only kubectl owns is fine; one the patch took is a conflict.
    path = manifest(tmp_path, "cm.yaml", configmap("cfg", namespace, {"a": "2", "b": "1"}))
    result = kubectl.fails("apply", "--server-side", "-f", path)
    assert result.err_lines == [
        'error: Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .data.b',
        *CONFLICT_ADVICE,
    ]
    assert kubectl.json("get", *target)["data"] == {"a": "1", "b": "edited", "c": "new"}
    kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", path)
    assert kubectl.json("get", *target)["data"] == {"a": "2", "b": "1", "c": "new"}
    assert managed_fields(kubectl, *target) == [
        entry("kubectl", "Apply", {"f:data": {"f:a": {}, "f:b": {}}}),
        entry("kubectl-patch", "Update", {"f:data": {"f:c": {}}}),
    ]


def test_fields_dropped_from_the_manifest_are_removed(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    doc = configmap("cfg", namespace, {"a": "1", "b": "2"}, app="demo", tier="web")
    kubectl.ok("apply", "--server-side", "-f", manifest(tmp_path, "cm.yaml", doc))
    doc = configmap("cfg", namespace, {"a": "1"}, app="demo")
    kubectl.ok("apply", "--server-side", "-f", manifest(tmp_path, "cm.yaml", doc))
    got = kubectl.json("get", "configmap", "cfg", "-n", namespace)
    assert got["data"] == {"a": "1"}
    assert got["metadata"]["labels"] == {"app": "demo"}


def test_server_dry_run_changes_nothing(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    path = manifest(tmp_path, "cm.yaml", configmap("cfg", namespace, {"a": "1"}))
    result = kubectl.ok("apply", "--server-side", "--dry-run=server", "-f", path)
    assert result.out_lines == ["configmap/cfg serverside-applied (server dry run)"]
    assert kubectl.run("get", "configmap", "cfg", "-n", namespace).returncode == 1
    kubectl.ok("apply", "--server-side", "-f", path)
    rv = resource_version(kubectl, "configmap", "cfg", "-n", namespace)
    path = manifest(tmp_path, "cm.yaml", configmap("cfg", namespace, {"a": "2"}))
    shown = kubectl.json("apply", "--server-side", "--dry-run=server", "-f", path)
    assert shown["data"] == {"a": "2"}
    got = kubectl.json("get", "configmap", "cfg", "-n", namespace)
    assert (got["data"], got["metadata"]["resourceVersion"]) == ({"a": "1"}, rv)


def test_client_side_apply_moves_to_server_side(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    path = manifest(tmp_path, "cm.yaml", configmap("cfg", namespace, {"a": "1", "b": "2"}))
    kubectl.ok("apply", "-f", path)
    target = ("configmap", "cfg", "-n", namespace)
    assert managed_fields(kubectl, *target) == [
        entry(
            "kubectl-client-side-apply",
            "Update",
            {
                "f:data": {".": {}, "f:a": {}, "f:b": {}},
                "f:metadata": {"f:annotations": {".": {}, f"f:{LAST_APPLIED}": {}}},
            },
        )
    ]
    # Changing a field client-side apply set is no conflict for kubectl's first apply.
    path = manifest(tmp_path, "cm.yaml", configmap("cfg", namespace, {"a": "9", "b": "2"}))
    assert kubectl.ok("apply", "--server-side", "-f", path).out_lines == [
        "configmap/cfg serverside-applied"
    ]
    assert managed_fields(kubectl, *target) == [
        entry(
            "kubectl-last-applied",
            "Apply",
            {"f:metadata": {"f:annotations": {f"f:{LAST_APPLIED}": {}}}},
        ),
        entry("kubectl", "Apply", {"f:data": {"f:a": {}, "f:b": {}}}),
    ]
    got = kubectl.json("get", *target)
    assert got["data"] == {"a": "9", "b": "2"}
    assert json.loads(got["metadata"]["annotations"][LAST_APPLIED])["data"] == {"a": "9", "b": "2"}


def test_another_manager_conflicts_with_client_side_apply(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    kubectl.ok("apply", "-f", manifest(tmp_path, "a.yaml", configmap("cfg", namespace, {"a": "1"})))
    path = manifest(tmp_path, "b.yaml", configmap("cfg", namespace, {"a": "2"}))
    result = kubectl.fails("apply", "--server-side", "--field-manager=tool", "-f", path)
    assert result.err_lines[0] == (
        'error: Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" '
        "using v1: .data.a"
    )


@pytest.mark.parametrize("version", ["1.27", "1.33"])
def test_other_kubectl_releases(
    kapi_server: KapiServer, namespace: str, tmp_path: Path, version: str
) -> None:
    k = make_kubectl(kapi_server, tmp_path, version)
    path = manifest(tmp_path, "cm.yaml", configmap("cfg", namespace, {"a": "1"}))
    assert k.ok("apply", "--server-side", "-f", path).out_lines == [
        "configmap/cfg serverside-applied"
    ]
    k.ok("patch", "configmap", "cfg", "-n", namespace, "-p", '{"data":{"a":"x"}}')
    path = manifest(tmp_path, "cm.yaml", configmap("cfg", namespace, {"a": "2"}))
    result = k.fails("apply", "--server-side", "-f", path)
    assert result.err_lines == [
        'error: Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .data.a',
        *CONFLICT_ADVICE,
    ]
    k.ok("apply", "--server-side", "--force-conflicts", "-f", path)
    assert k.json("get", "configmap", "cfg", "-n", namespace)["data"] == {"a": "2"}


# -- custom resources --------------------------------------------------------------------

GROUP = "ssa.example.com"


def widget_crd() -> dict[str, Any]:
    spec = {
        "type": "object",
        "properties": {
            "ports": named_ports(),
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        },
    }
    status = {"type": "object", "properties": {"phase": {"type": "string"}}}
    return crd_of(GROUP, "widgets", "Widget", spec, status)


@pytest.fixture
def widgets(kubectl: Kubectl, tmp_path: Path) -> Iterator[None]:
    crd = widget_crd()
    kubectl.ok("apply", "--server-side", "-f", manifest(tmp_path, "crd.yaml", crd))
    kubectl.ok("wait", "--for=condition=Established", f"crd/widgets.{GROUP}", "--timeout=20s")
    yield
    kubectl.run("delete", "crd", f"widgets.{GROUP}", "--wait=true")


def widget(namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": namespace},
        "spec": spec,
    }


def test_list_map_items_have_their_own_managers(
    kubectl: Kubectl, widgets: None, namespace: str, tmp_path: Path
) -> None:
    first = widget(namespace, ports=[{"name": "http", "port": 80}], tags=["a"])
    kubectl.ok("apply", "--server-side", "-f", manifest(tmp_path, "w.yaml", first))
    second = widget(namespace, ports=[{"name": "https", "port": 443}], tags=["b"])
    kubectl.ok(
        "apply",
        "--server-side",
        "--field-manager=other",
        "-f",
        manifest(tmp_path, "o.yaml", second),
    )
    target = ("widgets", "w", "-n", namespace)
    got = kubectl.json("get", *target)
    assert got["spec"]["ports"] == [{"name": "http", "port": 80}, {"name": "https", "port": 443}]
    assert got["spec"]["tags"] == ["a", "b"]
    item = {".": {}, "f:name": {}, "f:port": {}}
    assert managed_fields(kubectl, *target) == [
        entry(
            "kubectl",
            "Apply",
            {"f:spec": {"f:ports": {'k:{"name":"http"}': item}, "f:tags": {'v:"a"': {}}}},
            apiVersion=f"{GROUP}/v1",
        ),
        entry(
            "other",
            "Apply",
            {"f:spec": {"f:ports": {'k:{"name":"https"}': item}, "f:tags": {'v:"b"': {}}}},
            apiVersion=f"{GROUP}/v1",
        ),
    ]
    clash = widget(namespace, ports=[{"name": "https", "port": 8443}])
    result = kubectl.fails("apply", "--server-side", "-f", manifest(tmp_path, "w.yaml", clash))
    assert result.err_lines[0] == (
        'error: Apply failed with 1 conflict: conflict with "other": .spec.ports[name="https"].port'
    )
    # kubectl drops its own item and tag; the other manager's stay.
    kubectl.ok("apply", "--server-side", "-f", manifest(tmp_path, "w.yaml", widget(namespace)))
    got = kubectl.json("get", *target)
    assert got["spec"] == {"ports": [{"name": "https", "port": 443}], "tags": ["b"]}


def test_apply_to_status(kubectl: Kubectl, widgets: None, namespace: str, tmp_path: Path) -> None:
    kubectl.ok(
        "apply", "--server-side", "-f", manifest(tmp_path, "w.yaml", widget(namespace, tags=["a"]))
    )
    status = {**widget(namespace), "status": {"phase": "Ready"}}
    del status["spec"]
    path = manifest(tmp_path, "s.yaml", status)
    kubectl.ok("apply", "--server-side", "--subresource=status", "--field-manager=ctrl", "-f", path)
    target = ("widgets", "w", "-n", namespace)
    assert kubectl.json("get", *target)["status"] == {"phase": "Ready"}
    by_manager = {e["manager"]: e for e in managed_fields(kubectl, *target)}
    assert by_manager["ctrl"] == entry(
        "ctrl",
        "Apply",
        {"f:status": {"f:phase": {}}},
        apiVersion=f"{GROUP}/v1",
        subresource="status",
    )
    # Through the main resource, status is neither changed nor owned.
    rv = resource_version(kubectl, *target)
    status["status"] = {"phase": "Other"}
    kubectl.ok(
        "apply", "--server-side", "--field-manager=x", "-f", manifest(tmp_path, "s.yaml", status)
    )
    got = kubectl.json("get", *target, "--show-managed-fields")
    assert got["status"] == {"phase": "Ready"}
    assert got["metadata"]["resourceVersion"] == rv
    assert "x" not in [e["manager"] for e in got["metadata"]["managedFields"]]


# -- the wire ----------------------------------------------------------------------------


@pytest.fixture
def http(kapi_server: KapiServer) -> Iterator[httpx.Client]:
    with kapi_server.client() as client:
        yield client


def cm_url(namespace: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps" + (f"/{name}" if name else "")


def apply(
    http: httpx.Client, url: str, body: Any, manager: str | None = "tool", **params: str
) -> httpx.Response:
    if manager is not None:
        params["fieldManager"] = manager
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return http.patch(url, params=params, content=content, headers={"content-type": APPLY})


def test_apply_creates_with_201_and_yaml_bodies(http: httpx.Client, namespace: str) -> None:
    body = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n  namespace: {namespace}\n"
    body += "data:\n  a: '1'\n"
    created = apply(http, cm_url(namespace, "y"), body.encode())
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["managedFields"][0]["manager"] == "tool"
    again = apply(http, cm_url(namespace, "y"), body.encode())
    assert again.status_code == 200
    assert (
        again.json()["metadata"]["resourceVersion"] == created.json()["metadata"]["resourceVersion"]
    )


def status(code: int, message: str, reason: str = "", **details: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
    }
    if reason:
        body["reason"] = reason
    if details:
        body["details"] = details
    body["code"] = code
    return body


def test_apply_requires_a_field_manager(http: httpx.Client, namespace: str) -> None:
    response = apply(http, cm_url(namespace, "x"), configmap("x", namespace, {}), manager=None)
    assert response.status_code == 422
    assert response.json() == status(
        422,
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
        "is required for apply patch",
        "Invalid",
        group="meta.k8s.io",
        kind="PatchOptions",
        causes=[
            {
                "reason": "FieldValueRequired",
                "message": "Required value: is required for apply patch",
                "field": "fieldManager",
            }
        ],
    )


def test_force_is_only_for_apply(http: httpx.Client, namespace: str) -> None:
    http.post(cm_url(namespace), json=configmap("x", namespace, {"a": "1"}))
    response = http.patch(
        cm_url(namespace, "x"),
        params={"force": "true"},
        content=b'{"data":{"a":"2"}}',
        headers={"content-type": "application/merge-patch+json"},
    )
    assert response.status_code == 422
    assert response.json()["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: '
        "may not be specified for non-apply patch"
    )


def test_conflict_status_body(http: httpx.Client, namespace: str) -> None:
    created = http.post(
        cm_url(namespace),
        params={"fieldManager": "editor"},
        json=configmap("x", namespace, {"a": "1"}),
    )
    assert created.status_code == 201
    response = apply(http, cm_url(namespace, "x"), configmap("x", namespace, {"a": "2"}))
    assert response.status_code == 409
    assert response.json() == status(
        409,
        'Apply failed with 1 conflict: conflict with "editor" using v1: .data.a',
        "Conflict",
        causes=[
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "editor" using v1',
                "field": ".data.a",
            }
        ],
    )
    forced = apply(
        http, cm_url(namespace, "x"), configmap("x", namespace, {"a": "2"}), force="true"
    )
    assert forced.status_code == 200
    assert forced.json()["data"] == {"a": "2"}


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}},
            400,
            "invalid object type: /v1, Kind=Secret",
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "x", "managedFields": []},
            },
            400,
            "metadata.managedFields must be nil",
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "bogus": 1},
            500,
            "failed to create typed patch object (/x; /v1, Kind=ConfigMap): "
            ".bogus: field not declared in schema",
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other"}},
            400,
            "the name of the object (other) does not match the name on the URL (x)",
        ),
        (b"a: [", 400, "error decoding YAML: error converting YAML to JSON: yaml: "),
    ],
)
def test_bad_apply_requests(
    http: httpx.Client, namespace: str, body: Any, code: int, message: str
) -> None:
    response = apply(http, cm_url(namespace, "x"), body)
    assert response.status_code == code, response.text
    assert response.json()["message"].startswith(message)
    assert http.get(cm_url(namespace, "x")).status_code == 404


def test_user_agent_names_the_manager(http: httpx.Client, namespace: str) -> None:
    created = http.post(
        cm_url(namespace),
        json=configmap("x", namespace, {"a": "1"}),
        headers={"user-agent": "my-controller/v1.2 (linux)"},
    )
    assert [e["manager"] for e in created.json()["metadata"]["managedFields"]] == ["my-controller"]


def test_managed_fields_sent_with_an_update(http: httpx.Client, namespace: str) -> None:
    created = http.post(
        cm_url(namespace),
        params={"fieldManager": "creator"},
        json=configmap("x", namespace, {"a": "1"}),
    )
    obj = created.json()
    # Sent back unchanged: kept, and the update joins the creator's entry time-wise only.
    obj["data"]["a"] = "2"
    updated = http.put(cm_url(namespace, "x"), params={"fieldManager": "creator"}, json=obj)
    assert [e["manager"] for e in updated.json()["metadata"]["managedFields"]] == ["creator"]
    # An empty list resets them; later updates of the untracked object are not tracked.
    obj = updated.json()
    obj["metadata"]["managedFields"] = []
    reset = http.put(cm_url(namespace, "x"), json=obj)
    assert "managedFields" not in reset.json()["metadata"]
    obj = reset.json()
    obj["data"]["a"] = "3"
    assert "managedFields" not in http.put(cm_url(namespace, "x"), json=obj).json()["metadata"]


def test_no_op_patch_keeps_version_and_times(http: httpx.Client, namespace: str) -> None:
    created = http.post(cm_url(namespace), json=configmap("x", namespace, {"a": "1"})).json()
    patched = http.patch(
        cm_url(namespace, "x"),
        content=b'{"data":{"a":"1"}}',
        headers={"content-type": "application/merge-patch+json"},
    ).json()
    assert patched["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert patched["metadata"]["managedFields"] == created["metadata"]["managedFields"]


def test_apply_to_status_of_a_missing_object_is_not_found(
    http: httpx.Client, namespace: str
) -> None:
    url = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/none/status"
    body = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "none"}}
    response = apply(http, url, body)
    assert response.status_code == 404
    assert re.match(r'poddisruptionbudgets.policy "none" not found', response.json()["message"])
