"""The audit log of a real server: ``--audit-log-path`` with an ``audit.k8s.io/v1`` policy.

The server emulates 1.24, where policy/v1beta1 is still served and
deprecated, so a request to it carries KEP-1693's audit annotations.  Events
are written in batches; the tests wait for an event to appear (bounded by a
deadline), never for a time.
"""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.conftest import KapiServer, start_server
from tests.helpers.audit import DEADLINE, events_of, read_events
from tests.helpers.kubectl import make_kubectl
from tests.helpers.wait import eventually

ANONYMOUS = {"username": "system:anonymous", "groups": ["system:unauthenticated"]}
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
MICRO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
AGENT = {"user-agent": "audit-test/1.0"}


@pytest.fixture
def http(audited: tuple[KapiServer, Path]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=audited[0].url, timeout=10, headers=AGENT) as client:
        yield client


def without_times(event: dict[str, Any]) -> dict[str, Any]:
    """The event minus what differs run to run (checked by format instead)."""
    assert MICRO_TIME.match(event["requestReceivedTimestamp"]), event
    assert MICRO_TIME.match(event["stageTimestamp"]), event
    assert event["stageTimestamp"] >= event["requestReceivedTimestamp"]
    return {
        k: v
        for k, v in event.items()
        if k not in ("requestReceivedTimestamp", "stageTimestamp", "auditID")
    }


def new_namespace(http: httpx.Client) -> str:
    name = f"audit-{uuid.uuid4().hex[:8]}"
    response = http.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


def test_metadata_level_events(audited: tuple[KapiServer, Path], http: httpx.Client) -> None:
    _, log = audited
    namespace = new_namespace(http)
    response = http.get(f"/api/v1/namespaces/{namespace}/endpoints", params={"limit": "5"})
    assert response.status_code == 200
    audit_id = response.headers["audit-id"]
    assert UUID.match(audit_id)
    events = events_of(log, audit_id)
    assert [e["stage"] for e in events] == ["RequestReceived", "ResponseComplete"]
    common = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "requestURI": f"/api/v1/namespaces/{namespace}/endpoints?limit=5",
        "verb": "list",
        "user": ANONYMOUS,
        "sourceIPs": ["127.0.0.1"],
        "userAgent": "audit-test/1.0",
        "objectRef": {"resource": "endpoints", "namespace": namespace, "apiVersion": "v1"},
    }
    assert without_times(events[0]) == {**common, "stage": "RequestReceived"}
    assert without_times(events[1]) == {
        **common,
        "stage": "ResponseComplete",
        "responseStatus": {"metadata": {}, "code": 200},
    }
    # RequestReceived is stamped with the time the request arrived.
    assert events[0]["stageTimestamp"] == events[0]["requestReceivedTimestamp"]
    assert events[1]["requestReceivedTimestamp"] == events[0]["requestReceivedTimestamp"]


def test_request_response_level_has_both_bodies(
    audited: tuple[KapiServer, Path], http: httpx.Client
) -> None:
    _, log = audited
    namespace = new_namespace(http)
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "1"}}
    response = http.post(f"/api/v1/namespaces/{namespace}/configmaps", json=body)
    assert response.status_code == 201, response.text
    events = events_of(log, response.headers["audit-id"])
    assert [e["stage"] for e in events] == ["RequestReceived", "ResponseComplete"]
    complete = without_times(events[1])
    assert complete == {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "RequestResponse",
        "stage": "ResponseComplete",
        "requestURI": f"/api/v1/namespaces/{namespace}/configmaps",
        "verb": "create",
        "user": ANONYMOUS,
        "sourceIPs": ["127.0.0.1"],
        "userAgent": "audit-test/1.0",
        # The name comes from the body: a create's URL has none.
        "objectRef": {
            "resource": "configmaps",
            "namespace": namespace,
            "name": "cm",
            "apiVersion": "v1",
        },
        "responseStatus": {"metadata": {}, "code": 201},
        "requestObject": body,
        "responseObject": response.json(),
    }


def test_patch_logs_the_patch_and_errors_log_the_status(
    audited: tuple[KapiServer, Path], http: httpx.Client
) -> None:
    _, log = audited
    namespace = new_namespace(http)
    patch = {"data": {"b": "2"}}
    response = http.patch(
        f"/api/v1/namespaces/{namespace}/configmaps/missing",
        json=patch,
        headers={"content-type": "application/merge-patch+json"},
    )
    assert response.status_code == 404
    status = response.json()
    [_, complete] = events_of(log, response.headers["audit-id"])
    assert complete["requestObject"] == patch
    assert complete["responseObject"] == status
    assert complete["responseStatus"] == {
        "metadata": {},
        "status": "Failure",
        "message": status["message"],
        "reason": "NotFound",
        "details": status["details"],
        "code": 404,
    }


def test_request_level_and_rule_omit_stages(
    audited: tuple[KapiServer, Path], http: httpx.Client
) -> None:
    _, log = audited
    namespace = new_namespace(http)
    body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {}}
    response = http.post(f"/api/v1/namespaces/{namespace}/secrets", json=body)
    assert response.status_code == 201, response.text
    events = events_of(log, response.headers["audit-id"])
    assert [e["stage"] for e in events] == ["ResponseComplete"]
    assert events[0]["level"] == "Request"
    assert events[0]["requestObject"] == body
    assert "responseObject" not in events[0]


def test_level_none_is_not_logged_but_has_an_audit_id(
    audited: tuple[KapiServer, Path], http: httpx.Client
) -> None:
    _, log = audited
    health = http.get("/healthz")
    assert health.status_code == 200
    none_id = health.headers["audit-id"]
    assert UUID.match(none_id)
    # Events are written in order: once a later request is in the log, so would /healthz be.
    later = http.get("/version")
    assert [e["stage"] for e in events_of(log, later.headers["audit-id"])] == [
        "RequestReceived",
        "ResponseComplete",
    ]
    assert [e for e in read_events(log) if e["auditID"] == none_id] == []
    # Non-resource requests have no objectRef; their verb is the lower-cased method.
    version_event = events_of(log, later.headers["audit-id"])[1]
    assert "objectRef" not in version_event
    assert version_event["verb"] == "get"


def test_client_chosen_audit_id_is_kept(
    audited: tuple[KapiServer, Path], http: httpx.Client
) -> None:
    _, log = audited
    response = http.get("/api/v1/namespaces/default", headers={"Audit-ID": "my-own-id"})
    assert response.headers["audit-id"] == "my-own-id"
    assert len(events_of(log, "my-own-id")) == 2


def test_deprecated_api_request_is_annotated_with_kubectl_user_agent(
    audited: tuple[KapiServer, Path], http: httpx.Client, tmp_path: Path
) -> None:
    server, log = audited
    namespace = new_namespace(http)
    kubectl = make_kubectl(server, tmp_path, "1.32")
    version = orjson.loads(kubectl.ok("version", "--client", "-o", "json").stdout)
    result = kubectl.run("get", "poddisruptionbudgets.v1beta1.policy", "-n", namespace)
    assert result.returncode == 0, str(result)
    uri = f"/apis/policy/v1beta1/namespaces/{namespace}/poddisruptionbudgets"
    [event] = eventually(
        lambda: [
            e
            for e in read_events(log)
            if e["requestURI"].startswith(uri) and e["stage"] == "ResponseComplete"
        ],
        what=f"the ResponseComplete event of {uri}",
        timeout=DEADLINE,
        interval=0.02,
    )
    client = version["clientVersion"]
    assert event["userAgent"] == (
        f"kubectl.1.32/{client['gitVersion']} ({client['platform']}) "
        f"kubernetes/{client['gitCommit'][:7]}"
    )
    assert event["annotations"] == {
        "k8s.io/deprecated": "true",
        "k8s.io/removed-release": "1.25",
    }
    assert event["objectRef"] == {
        "resource": "poddisruptionbudgets",
        "namespace": namespace,
        "apiGroup": "policy",
        "apiVersion": "v1beta1",
    }
    assert event["verb"] == "list"
    assert event["level"] == "Metadata"
    # The annotations are added while the request is served, so RequestReceived has none.
    [received] = [
        e
        for e in read_events(log)
        if e["auditID"] == event["auditID"] and e["stage"] == "RequestReceived"
    ]
    assert "annotations" not in received


def test_watch_gets_response_started(audited: tuple[KapiServer, Path], http: httpx.Client) -> None:
    _, log = audited
    namespace = new_namespace(http)
    params = {"watch": "true", "timeoutSeconds": "1"}
    with http.stream("GET", f"/api/v1/namespaces/{namespace}/configmaps", params=params) as r:
        assert r.status_code == 200
        audit_id = r.headers["audit-id"]
        r.read()
    events = events_of(log, audit_id)
    assert [e["stage"] for e in events] == [
        "RequestReceived",
        "ResponseStarted",
        "ResponseComplete",
    ]
    for event in events[1:]:
        assert event["responseStatus"] == {"metadata": {}, "code": 200}
        assert event["verb"] == "watch"
        # Watches have no response object, even at RequestResponse.
        assert "responseObject" not in event
    assert events[1]["stageTimestamp"] <= events[2]["stageTimestamp"]


def test_events_before_sigterm_are_all_written(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n")
    log = tmp_path / "audit.log"
    server = start_server(
        tmp_path / "data", f"--audit-log-path={log}", f"--audit-policy-file={policy}"
    )
    ids = []
    try:
        with server.client() as client:
            for i in range(100):
                response = client.get("/api/v1/namespaces/default", params={"n": str(i)})
                assert response.status_code == 200
                ids.append(response.headers["audit-id"])
    finally:
        assert server.stop() == 0
    completed = {e["auditID"] for e in read_events(log) if e["stage"] == "ResponseComplete"}
    assert set(ids) <= completed


def test_invalid_policy_stops_the_server_at_start(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n")
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "kapi",
            "serve",
            "--port=0",
            f"--data-dir={tmp_path / 'data'}",
            f"--audit-log-path={tmp_path / 'audit.log'}",
            f"--audit-policy-file={policy}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 1
    assert completed.stderr == (
        'Error: loading audit policy file: rules[0].level: Unsupported value: "Everything": '
        'supported values: "None", "Metadata", "Request", "RequestResponse": '
        f"from file {policy}\n"
    )
