"""events.k8s.io/v1beta1 Event on real servers emulating 1.24 (served, deprecated) and 1.25 (gone).

v1beta1 is another view of the same stored Events as core/v1 and
events.k8s.io/v1, with v1's field names, upstream's lenient validation, and
the KEP-1693 warning of its lifecycle tags (deprecated 1.22, removed 1.25, no
replacement named).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kubectl import make_kubectl

WARNING = "events.k8s.io/v1beta1 Event is deprecated in v1.22+, unavailable in v1.25+"
V1BETA1 = "/apis/events.k8s.io/v1beta1"
V1 = "/apis/events.k8s.io/v1"
CORE = "/api/v1"
MERGE_PATCH = {"content-type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def server_1_24(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "events-1-24", "--emulated-version=1.24")


@pytest.fixture(scope="module")
def server_1_25(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "events-1-25", "--emulated-version=1.25")


def new_namespace(http: httpx.Client) -> str:
    name = f"ev-{uuid.uuid4().hex[:8]}"
    response = http.post(f"{CORE}/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


def events(prefix: str, namespace: str, name: str = "") -> str:
    path = f"{prefix}/namespaces/{namespace}/events"
    return f"{path}/{name}" if name else path


def v1beta1_event(name: str, namespace: str) -> dict[str, Any]:
    """An event as client-go's v1beta1 events package wrote them, with the deprecated fields."""
    return {
        "apiVersion": "events.k8s.io/v1beta1",
        "kind": "Event",
        "metadata": {"name": name},
        "eventTime": "2024-05-06T07:08:09.123456Z",
        "reportingController": "example.com/syncer",
        "reportingInstance": "syncer-1",
        "action": "Sync",
        "reason": "Synced",
        "regarding": {"kind": "ConfigMap", "name": "cm", "namespace": namespace},
        "note": "synced once",
        "type": "Normal",
        "deprecatedSource": {"component": "syncer"},
        "deprecatedCount": 3,
    }


def warnings(response: httpx.Response) -> list[str]:
    return response.headers.get_list("warning")


def test_v1beta1_events_convert_both_ways_and_warn(server_1_24: KapiServer) -> None:
    with server_1_24.client() as http:
        ns = new_namespace(http)
        created = http.post(events(V1BETA1, ns), json=v1beta1_event("e", ns))
        assert created.status_code == 201, created.text
        assert warnings(created) == [f'299 - "{WARNING}"']
        body = created.json()
        assert body["apiVersion"] == "events.k8s.io/v1beta1"
        assert (body["note"], body["deprecatedCount"]) == ("synced once", 3)

        core = http.get(events(CORE, ns, "e"))
        assert (core.status_code, warnings(core)) == (200, [])
        event = core.json()
        assert event["involvedObject"] == {"kind": "ConfigMap", "name": "cm", "namespace": ns}
        assert (event["message"], event["count"]) == ("synced once", 3)
        assert (event["reportingComponent"], event["source"]) == (
            "example.com/syncer",
            {"component": "syncer"},
        )
        assert "note" not in event and "regarding" not in event

        v1 = http.get(events(V1, ns, "e"))
        assert (v1.status_code, warnings(v1)) == (200, [])
        assert {**v1.json(), "apiVersion": "events.k8s.io/v1beta1"} == body

        # A change through core/v1 reads back through v1beta1 under v1beta1's names.
        patched = http.patch(events(CORE, ns, "e"), json={"count": 4}, headers=MERGE_PATCH)
        assert patched.status_code == 200, patched.text
        back = http.get(events(V1BETA1, ns, "e"))
        assert (back.status_code, warnings(back)) == (200, [f'299 - "{WARNING}"'])
        assert back.json()["deprecatedCount"] == 4
        assert (
            back.json()["metadata"]["resourceVersion"]
            == patched.json()["metadata"]["resourceVersion"]
        )

        listed = http.get(events(V1BETA1, ns))
        assert listed.json()["kind"] == "EventList"
        assert [item["apiVersion"] for item in listed.json()["items"]] == ["events.k8s.io/v1beta1"]


def test_v1beta1_gets_the_lenient_validation(server_1_24: KapiServer) -> None:
    """The deprecated core/v1 fields that events.k8s.io/v1 refuses are accepted in v1beta1."""
    with server_1_24.client() as http:
        ns = new_namespace(http)
        event = v1beta1_event("lenient", ns)
        strict = http.post(events(V1, ns), json={**event, "apiVersion": "events.k8s.io/v1"})
        assert strict.status_code == 422, strict.text
        causes = {cause["field"] for cause in strict.json()["details"]["causes"]}
        assert causes == {"count", "source"}
        assert http.post(events(V1BETA1, ns), json=event).status_code == 201


def test_discovery_and_openapi_at_1_24(server_1_24: KapiServer) -> None:
    with server_1_24.client() as http:
        group = http.get("/apis/events.k8s.io").json()
        assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
        assert group["preferredVersion"]["version"] == "v1"
        resources = http.get(V1BETA1).json()["resources"]
        assert [r["name"] for r in resources] == ["events"]
        spec = http.get("/openapi/v3/apis/events.k8s.io/v1beta1").json()
        schemas = spec["components"]["schemas"]
        event = schemas["io.k8s.api.events.v1beta1.Event"]
        assert event["x-kubernetes-group-version-kind"] == [
            {"group": "events.k8s.io", "version": "v1beta1", "kind": "Event"}
        ]
        # v1beta1's documentation, not v1's: action could be empty in v1beta1.
        assert event["properties"]["action"]["description"].endswith(
            "for programs; up to 128 characters."
        )
        assert "io.k8s.api.events.v1beta1.EventSeries" in schemas


def test_v1beta1_is_gone_in_1_25(server_1_25: KapiServer) -> None:
    with server_1_25.client() as http:
        ns = new_namespace(http)
        assert http.get(events(V1BETA1, ns)).status_code == 404
        assert http.post(events(V1BETA1, ns), json=v1beta1_event("e", ns)).status_code == 404
        assert http.get(V1BETA1).status_code == 404
        group = http.get("/apis/events.k8s.io").json()
        assert [v["version"] for v in group["versions"]] == ["v1"]
        served = http.get(events(V1, ns))
        assert (served.status_code, warnings(served)) == (200, [])


@pytest.mark.kubectl
def test_kubectl_warns_and_explains(server_1_24: KapiServer, tmp_path: Path) -> None:
    kubectl = make_kubectl(server_1_24, tmp_path, "1.27")
    with server_1_24.client() as http:
        ns = new_namespace(http)
        created = http.post(events(V1BETA1, ns), json=v1beta1_event("seen", ns))
        assert created.status_code == 201, created.text
    result = kubectl.run("-n", ns, "get", "events.v1beta1.events.k8s.io")
    assert result.returncode == 0, str(result)
    assert f"Warning: {WARNING}" in result.err_lines, str(result)
    assert "synced once" in result.stdout
    explained = kubectl.run("explain", "events.series", "--api-version=events.k8s.io/v1beta1")
    assert explained.returncode == 0, str(explained)
    assert "VERSION:    v1beta1" in explained.stdout
    assert "count\t<integer> -required-" in explained.stdout
