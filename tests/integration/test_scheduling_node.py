"""scheduling.k8s.io PriorityClasses and node.k8s.io RuntimeClasses on a real server: the
system classes created at start, defaults, upstream's validation messages, immutable fields,
the single global default, tables, protobuf, kubectl, and v1beta1 at an emulated 1.21."""

from __future__ import annotations

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

PCS = "/apis/scheduling.k8s.io/v1/priorityclasses"
PCS_V1BETA1 = "/apis/scheduling.k8s.io/v1beta1/priorityclasses"
RCS = "/apis/node.k8s.io/v1/runtimeclasses"
RCS_V1BETA1 = "/apis/node.k8s.io/v1beta1/runtimeclasses"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
MERGE = {"content-type": "application/merge-patch+json"}


def priority_class(name: str, value: int = 100, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **fields,
    }


def runtime_class(name: str, handler: str = "runc", **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": name},
        "handler": handler,
        **fields,
    }


def _names(http: httpx.Client, path: str) -> dict[str, str]:
    """Every stored object of a cluster-scoped resource: name -> resourceVersion."""
    response = http.get(path)
    assert response.status_code == 200, response.text
    return {
        o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in response.json()["items"]
    }


def invalid(kind: str, name: str, group: str, *causes: tuple[str, str, str]) -> tuple[str, Any]:
    """An Invalid Status's message and details from (reason, field, message) causes."""
    messages = [f"{field}: {message}" for _, field, message in causes]
    tail = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    details = {
        "name": name,
        "group": group,
        "kind": kind,
        "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes],
    }
    return f'{kind}.{group} "{name}" is invalid: {tail}', details


def pc_invalid(name: str, *causes: tuple[str, str, str]) -> tuple[str, Any]:
    return invalid("PriorityClass", name, "scheduling.k8s.io", *causes)


def rc_invalid(name: str, *causes: tuple[str, str, str]) -> tuple[str, Any]:
    return invalid("RuntimeClass", name, "node.k8s.io", *causes)


# --- PriorityClass ---------------------------------------------------------------------------


def test_system_classes_exist_and_cannot_be_deleted(http: httpx.Client) -> None:
    for name, value in (
        ("system-node-critical", 2000001000),
        ("system-cluster-critical", 2000000000),
    ):
        stored = http.get(f"{PCS}/{name}").json()
        assert stored["value"] == value
        assert stored["preemptionPolicy"] == "PreemptLowerPriority"
        assert stored["metadata"]["generation"] == 1
        assert "globalDefault" not in stored
        response = http.delete(f"{PCS}/{name}")
        assert_status(
            response,
            403,
            "Forbidden",
            f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: this is a system '
            "priority class and cannot be deleted",
            {"name": name, "group": "scheduling.k8s.io", "kind": "priorityclasses"},
        )
        assert http.get(f"{PCS}/{name}").json()["metadata"]["uid"] == stored["metadata"]["uid"]
    ready = http.get("/readyz/poststarthook/scheduling/bootstrap-system-priority-classes")
    assert ready.status_code == 200, ready.text


def test_crud_defaults_and_immutable_fields(http: httpx.Client) -> None:
    name = unique("pc")
    created = http.post(PCS, json=priority_class(name, 1000, description="batch"))
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["preemptionPolicy"] == "PreemptLowerPriority"
    assert body["metadata"]["generation"] == 1
    assert name in _names(http, PCS)

    patched = http.patch(f"{PCS}/{name}", json={"description": "nightly"}, headers=MERGE)
    assert patched.status_code == 200, patched.text
    assert patched.json()["description"] == "nightly"
    assert patched.json()["metadata"]["generation"] == 1  # upstream never bumps it

    before = http.get(f"{PCS}/{name}").json()
    response = http.patch(f"{PCS}/{name}", json={"value": 5}, headers=MERGE)
    message, details = pc_invalid(
        name, ("FieldValueForbidden", "value", "Forbidden: may not be changed in an update.")
    )
    assert_status(response, 422, "Invalid", message, details)
    response = http.patch(f"{PCS}/{name}", json={"preemptionPolicy": "Never"}, headers=MERGE)
    message, details = pc_invalid(
        name,
        (
            "FieldValueInvalid",
            "preemptionPolicy",
            'Invalid value: "Never": field is immutable',
        ),
    )
    assert_status(response, 422, "Invalid", message, details)
    assert http.get(f"{PCS}/{name}").json() == before

    deleted = http.delete(f"{PCS}/{name}")
    assert deleted.status_code == 200, deleted.text
    assert http.get(f"{PCS}/{name}").status_code == 404


def test_validation_messages(http: httpx.Client) -> None:
    before = _names(http, PCS)
    cases = [
        (
            priority_class("system-mine", 10),
            "system-mine",
            [
                (
                    "FieldValueForbidden",
                    "metadata.name",
                    "Forbidden: priority class names with 'system-' prefix are reserved for "
                    "system use only. error: system-mine is not a known system priority class",
                )
            ],
        ),
        (
            priority_class("too-high", 1000000001, preemptionPolicy="Sometimes"),
            "too-high",
            [
                (
                    "FieldValueForbidden",
                    "value",
                    "Forbidden: maximum allowed value of a user defined priority is 1000000000",
                ),
                (
                    "FieldValueNotSupported",
                    "preemptionPolicy",
                    'Unsupported value: "Sometimes": supported values: '
                    '"PreemptLowerPriority", "Never"',
                ),
            ],
        ),
    ]
    for body, name, causes in cases:
        message, details = pc_invalid(name, *causes)
        assert_status(http.post(PCS, json=body), 422, "Invalid", message, details)
    assert _names(http, PCS) == before


def test_system_class_rules_on_update(http: httpx.Client) -> None:
    """Upstream's update checks immutability only: a system class's description may change."""
    path = f"{PCS}/system-cluster-critical"
    original = http.get(path).json()["description"]
    response = http.patch(path, json={"value": 7}, headers=MERGE)
    message, details = pc_invalid(
        "system-cluster-critical",
        ("FieldValueForbidden", "value", "Forbidden: may not be changed in an update."),
    )
    assert_status(response, 422, "Invalid", message, details)
    changed = http.patch(path, json={"description": "mine"}, headers=MERGE)
    assert changed.status_code == 200, changed.text
    restored = http.patch(path, json={"description": original}, headers=MERGE)
    assert restored.status_code == 200, restored.text


def test_only_one_global_default(fresh_server: KapiServer) -> None:
    with fresh_server.client() as http:
        first = http.post(PCS, json=priority_class("first", 10, globalDefault=True))
        assert first.status_code == 201, first.text
        before = _names(http, PCS)
        refused = http.post(PCS, json=priority_class("second", 20, globalDefault=True))
        message = (
            'priorityclasses.scheduling.k8s.io "second" is forbidden: PriorityClass first is '
            "already marked as default. Only one default can exist"
        )
        details = {"name": "second", "group": "scheduling.k8s.io", "kind": "priorityclasses"}
        assert_status(refused, 403, "Forbidden", message, details)
        assert _names(http, PCS) == before
        assert http.post(PCS, json=priority_class("second", 20)).status_code == 201
        marked = http.patch(f"{PCS}/second", json={"globalDefault": True}, headers=MERGE)
        assert_status(marked, 403, "Forbidden", message, details)
        assert "globalDefault" not in http.get(f"{PCS}/second").json()
        again = http.patch(f"{PCS}/first", json={"description": "d"}, headers=MERGE)
        assert again.status_code == 200, again.text


def test_priority_class_table(http: httpx.Client) -> None:
    table = http.get(f"{PCS}/system-node-critical", headers={"accept": TABLE}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Value",
        "Global-Default",
        "Age",
        "PreemptionPolicy",
    ]
    assert [c["type"] for c in table["columnDefinitions"]] == [
        "string",
        "integer",
        "boolean",
        "string",
        "string",
    ]
    cells = table["rows"][0]["cells"]
    assert cells[:3] == ["system-node-critical", 2000001000, False]
    assert cells[4] == "PreemptLowerPriority"


def test_priority_class_protobuf_round_trip(http: httpx.Client) -> None:
    name = unique("pb")
    body = protobuf.encode(priority_class(name, 42, description="from protobuf"))
    response = post(http, PCS, body, accept=PROTOBUF)
    assert response.status_code == 201, response.text
    assert response.headers["content-type"] == PROTOBUF
    decoded = protobuf.decode(response.content)
    assert decoded["kind"] == "PriorityClass"
    assert decoded["value"] == 42
    assert decoded["description"] == "from protobuf"
    assert decoded["preemptionPolicy"] == "PreemptLowerPriority"
    assert http.get(f"{PCS}/{name}").json()["value"] == 42


# --- RuntimeClass ----------------------------------------------------------------------------


def test_runtime_class_crud_and_immutable_handler(http: httpx.Client) -> None:
    name = unique("rc")
    body = runtime_class(
        name,
        overhead={"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        scheduling={
            "nodeSelector": {"runtime": "gvisor"},
            "tolerations": [{"key": "runtime", "operator": "Exists", "effect": "NoSchedule"}],
        },
    )
    created = http.post(RCS, json=body)
    assert created.status_code == 201, created.text
    stored = http.get(f"{RCS}/{name}").json()
    assert stored["overhead"] == {"podFixed": {"cpu": "250m", "memory": "120Mi"}}
    assert "generation" not in stored["metadata"]

    response = http.patch(f"{RCS}/{name}", json={"handler": "kata"}, headers=MERGE)
    message, details = rc_invalid(
        name, ("FieldValueInvalid", "handler", 'Invalid value: "kata": field is immutable')
    )
    assert_status(response, 422, "Invalid", message, details)
    assert http.get(f"{RCS}/{name}").json() == stored

    labelled = http.patch(f"{RCS}/{name}", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert labelled.status_code == 200, labelled.text
    assert http.delete(f"{RCS}/{name}").status_code == 200
    assert http.get(f"{RCS}/{name}").status_code == 404


def test_runtime_class_put_creates_and_needs_a_resource_version(http: httpx.Client) -> None:
    name = unique("rc")
    created = http.put(f"{RCS}/{name}", json=runtime_class(name))
    assert created.status_code == 201, created.text
    before = http.get(f"{RCS}/{name}").json()
    response = http.put(f"{RCS}/{name}", json=runtime_class(name))
    # Upstream's generic store names the resource, not the kind, in this one.
    message, details = invalid(
        "runtimeclasses",
        name,
        "node.k8s.io",
        (
            "FieldValueInvalid",
            "metadata.resourceVersion",
            "Invalid value: 0x0: must be specified for an update",
        ),
    )
    assert_status(response, 422, "Invalid", message, details)
    assert http.get(f"{RCS}/{name}").json() == before


def test_runtime_class_validation_messages(http: httpx.Client) -> None:
    before = _names(http, RCS)
    body = runtime_class(
        "bad",
        "Not_A_Label",
        overhead={"podFixed": {"cpu": "-1"}},
        scheduling={"nodeSelector": {"bad key!": "v"}},
    )
    response = http.post(RCS, json=body)
    assert_status(response, 422, "Invalid")
    causes = {(c["field"], c["reason"]) for c in response.json()["details"]["causes"]}
    assert ("handler", "FieldValueInvalid") in causes
    assert ("overhead.limits[cpu]", "FieldValueInvalid") in causes
    assert ("scheduling.nodeSelector", "FieldValueInvalid") in causes
    handler = next(c for c in response.json()["details"]["causes"] if c["field"] == "handler")
    assert handler["message"] == (
        'Invalid value: "Not_A_Label": a lowercase RFC 1123 label must consist of lower case '
        "alphanumeric characters or '-', and must start and end with an alphanumeric character "
        "(e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    )
    assert _names(http, RCS) == before


def test_runtime_class_table_and_protobuf(http: httpx.Client) -> None:
    name = unique("rc")
    response = post(http, RCS, protobuf.encode(runtime_class(name, "kata")), accept=PROTOBUF)
    assert response.status_code == 201, response.text
    assert protobuf.decode(response.content)["handler"] == "kata"
    table = http.get(f"{RCS}/{name}", headers={"accept": TABLE}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Handler", "Age"]
    assert table["rows"][0]["cells"][:2] == [name, "kata"]


# --- kubectl ---------------------------------------------------------------------------------


@pytest.mark.kubectl
def test_kubectl_apply_and_get(kubectl: Kubectl, tmp_path: Path) -> None:
    pc, rc = unique("k-pc"), unique("k-rc")
    manifest = tmp_path / "classes.yaml"
    manifest.write_text(
        f"""apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: {pc}
value: 1000
preemptionPolicy: Never
description: low
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: {rc}
handler: gvisor
"""
    )
    assert kubectl.ok("apply", "-f", str(manifest)).out_lines == [
        f"priorityclass.scheduling.k8s.io/{pc} created",
        f"runtimeclass.node.k8s.io/{rc} created",
    ]
    lines = kubectl.ok("get", "pc", pc).out_lines
    assert lines[0].split() == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert lines[1].split()[:3] == [pc, "1000", "false"]
    assert lines[1].split()[-1] == "Never"
    lines = kubectl.ok("get", "runtimeclass", rc).out_lines
    assert lines[0].split() == ["NAME", "HANDLER", "AGE"]
    assert lines[1].split()[:2] == [rc, "gvisor"]
    assert kubectl.ok("apply", "-f", str(manifest)).out_lines == [
        f"priorityclass.scheduling.k8s.io/{pc} unchanged",
        f"runtimeclass.node.k8s.io/{rc} unchanged",
    ]


# --- v1beta1 ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_1_21(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "sched-1-21", "--emulated-version=1.21")


def test_v1beta1_converts_at_1_21(server_1_21: KapiServer) -> None:
    with server_1_21.client() as http:
        body = {**priority_class("beta", 7), "apiVersion": "scheduling.k8s.io/v1beta1"}
        created = http.post(PCS_V1BETA1, json=body)
        assert created.status_code == 201, created.text
        assert created.json()["apiVersion"] == "scheduling.k8s.io/v1beta1"
        assert created.json()["preemptionPolicy"] == "PreemptLowerPriority"
        assert created.headers.get_list("warning") == [
            '299 - "scheduling.k8s.io/v1beta1 PriorityClass is deprecated in v1.14+, '
            'unavailable in v1.22+; use scheduling.k8s.io/v1 PriorityClass"'
        ]
        as_v1 = http.get(f"{PCS}/beta").json()
        assert as_v1["apiVersion"] == "scheduling.k8s.io/v1"
        assert as_v1["value"] == 7
        system = http.get(f"{PCS_V1BETA1}/system-node-critical").json()
        assert system["apiVersion"] == "scheduling.k8s.io/v1beta1"

        rc = {**runtime_class("beta-rc", "kata"), "apiVersion": "node.k8s.io/v1beta1"}
        created = http.post(RCS_V1BETA1, json=rc)
        assert created.status_code == 201, created.text
        # Deprecated only from 1.22: served without a warning here.
        assert created.headers.get_list("warning") == []
        assert http.get(f"{RCS}/beta-rc").json()["handler"] == "kata"
        as_beta = http.get(f"{RCS_V1BETA1}/beta-rc").json()
        assert as_beta["apiVersion"] == "node.k8s.io/v1beta1"
        assert as_beta["handler"] == "kata"


def test_collection_delete_does_not_spare_system_classes(fresh_server: KapiServer) -> None:
    """Upstream guards only its REST ``Delete``; its collection delete calls the generic
    store's, so the system classes go (until the next start creates them again)."""
    with fresh_server.client() as http:
        assert {"system-node-critical", "system-cluster-critical"} <= set(_names(http, PCS))
        response = http.delete(PCS)
        assert response.status_code == 200, response.text
        assert _names(http, PCS) == {}
