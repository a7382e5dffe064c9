"""``--event-ttl`` on a real server: Events disappear that long after their last write.

Expiry is waited for with a watch and a bounded timeout; no test asserts how
long it took.  Objects of other kinds never expire.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags, start_server
from tests.integration.paths import cm_path

TTL_FLAG = "--event-ttl=2s"
#: Far beyond a 2s TTL, so a loaded machine does not fail the tests.
EXPIRY_TIMEOUT = 30


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "event-ttl", TTL_FLAG)


def new_namespace(http: httpx.Client, name: str) -> str:
    response = http.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


def core_event(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "ConfigMap", "name": "cm", "namespace": namespace},
        "reason": "Tested",
        "message": "old style",
        "type": "Normal",
    }


def events_v1_event(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name},
        "regarding": {"kind": "ConfigMap", "name": "cm", "namespace": namespace},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "example.com/tester",
        "reportingInstance": "tester-1",
        "action": "Test",
        "reason": "Tested",
        "type": "Normal",
    }


def watch_until_deleted(
    server: KapiServer, path: str, resource_version: str, names: set[str]
) -> list[tuple[str, str, str]]:
    """Watch ``path`` from ``resource_version`` until every one of ``names`` is DELETED.

    Returns (type, name, resourceVersion) of every event seen.
    """
    seen: list[tuple[str, str, str]] = []
    pending = set(names)
    deadline = time.monotonic() + EXPIRY_TIMEOUT
    params = {"watch": "1", "resourceVersion": resource_version, "timeoutSeconds": "60"}
    with (
        httpx.Client(base_url=server.url, timeout=EXPIRY_TIMEOUT) as http,
        http.stream("GET", path, params=params) as response,
    ):
        assert response.status_code == 200
        for line in response.iter_lines():
            if not line:
                continue
            event = json.loads(line)
            metadata = event["object"]["metadata"]
            seen.append((event["type"], metadata["name"], metadata["resourceVersion"]))
            if event["type"] == "DELETED":
                pending.discard(metadata["name"])
            if not pending or time.monotonic() > deadline:
                break
    assert not pending, f"never deleted: {pending}; watch saw {seen}"
    return seen


def test_events_of_both_groups_expire_and_watchers_see_them_go(server: KapiServer) -> None:
    with server.client() as http:
        ns = new_namespace(http, "ttl-both")
        kept = http.post(cm_path(ns), json={"metadata": {"name": "cm"}})
        assert kept.status_code == 201, kept.text
        listed = http.get(f"/api/v1/namespaces/{ns}/events")
        start = listed.json()["metadata"]["resourceVersion"]
        old = http.post(f"/api/v1/namespaces/{ns}/events", json=core_event("old", ns))
        assert old.status_code == 201, old.text
        new = http.post(
            f"/apis/events.k8s.io/v1/namespaces/{ns}/events", json=events_v1_event("new", ns)
        )
        assert new.status_code == 201, new.text

    seen = watch_until_deleted(server, f"/api/v1/namespaces/{ns}/events", start, {"old", "new"})
    assert [kind for kind, _, _ in seen] == ["ADDED", "ADDED", "DELETED", "DELETED"]
    revisions = [int(rv) for _, _, rv in seen]
    assert revisions == sorted(revisions)
    with server.client() as http:
        assert http.get(f"/api/v1/namespaces/{ns}/events/old").status_code == 404
        assert http.get(f"/apis/events.k8s.io/v1/namespaces/{ns}/events/new").status_code == 404
        assert http.get(f"/api/v1/namespaces/{ns}/events").json()["items"] == []
        assert http.get(f"{cm_path(ns)}/cm").status_code == 200


def test_an_update_renews_the_lease(server: KapiServer) -> None:
    """Of two events created together, the one updated a second later goes last."""
    with server.client() as http:
        ns = new_namespace(http, "ttl-renew")
        base = f"/api/v1/namespaces/{ns}/events"
        renewed = http.post(base, json=core_event("renewed", ns))
        assert renewed.status_code == 201, renewed.text
        companion = http.post(base, json=core_event("companion", ns))
        assert companion.status_code == 201, companion.text
        time.sleep(1)
        patched = http.patch(
            f"{base}/renewed",
            json={"count": 2},
            headers={"content-type": "application/merge-patch+json"},
        )
        assert patched.status_code == 200, patched.text

    start = renewed.json()["metadata"]["resourceVersion"]
    seen = watch_until_deleted(server, base, start, {"companion", "renewed"})
    assert [name for kind, name, _ in seen if kind == "DELETED"] == ["companion", "renewed"]


def test_expiry_survives_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = start_server(data, TTL_FLAG)
    try:
        with first.client() as http:
            ns = new_namespace(http, "ttl-restart")
            created = http.post(f"/api/v1/namespaces/{ns}/events", json=core_event("e", ns))
            assert created.status_code == 201, created.text
    finally:
        assert first.stop() == 0
    second = start_server(data, TTL_FLAG)
    try:
        start = created.json()["metadata"]["resourceVersion"]
        watch_until_deleted(second, f"/api/v1/namespaces/{ns}/events", start, {"e"})
    finally:
        second.stop()


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("abc", 'invalid argument "abc" for "--event-ttl" flag: time: invalid duration "abc"'),
        ("10", 'invalid argument "10" for "--event-ttl" flag: time: missing unit in duration "10"'),
        ("1d", 'invalid argument "1d" for "--event-ttl" flag: time: unknown unit "d" in duration'),
    ],
)
def test_a_bad_event_ttl_is_refused(tmp_path: Path, value: str, error: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kapi", "serve", "--data-dir", str(tmp_path), "--event-ttl", value],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert error in result.stderr, result.stderr
    assert "kapi serving" not in result.stdout
