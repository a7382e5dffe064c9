"""core/v1 and events.k8s.io/v1 Events on a real server: one storage, two shapes.

kubectl creates, lists and prints them (``get events``, ``events``, and the
``Events:`` section of ``describe``), field selectors find them by the
involved object in either group's names, and events.k8s.io/v1 writes get
upstream's strict validation while core/v1 writes get the lenient one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import KapiServer
from tests.helpers.events import ago, old_style, reference
from tests.helpers.kubectl import make_kubectl, table
from tests.integration.paths import cm_path

CORE = "/api/v1"
EVENTS_V1 = "/apis/events.k8s.io/v1"


def events_path(namespace: str, name: str = "", prefix: str = CORE) -> str:
    path = f"{prefix}/namespaces/{namespace}/events"
    return f"{path}/{name}" if name else path


def configmap(http: httpx.Client, namespace: str, name: str = "cm") -> dict[str, Any]:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    response = http.post(cm_path(namespace), json=body)
    assert response.status_code == 201, response.text
    return response.json()


def new_style(name: str, about: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """An events.k8s.io/v1 event as client-go's events package writes them."""
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name},
        "regarding": reference(about),
        "eventTime": ago(3 * 3600 + 30 * 60 + 10, micro=True),
        "reportingController": "example.com/syncer",
        "reportingInstance": "syncer-1",
        "action": "Sync",
        "reason": "Synced",
        "note": "synced",
        "type": "Normal",
        **fields,
    }


def names(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["metadata"]["name"] for item in response.json()["items"]]


# --- kubectl ----------------------------------------------------------------------------------


@pytest.mark.kubectl
def test_kubectl_creates_gets_and_describes_events(
    kapi_server: KapiServer,
    http: httpx.Client,
    namespace: str,
    tmp_path: Path,
) -> None:
    cm = configmap(http, namespace)
    kubectl = make_kubectl(kapi_server, tmp_path, "1.33")
    ns = ("-n", namespace)
    old, new = tmp_path / "old.yaml", tmp_path / "new.yaml"
    old.write_text(yaml.safe_dump(old_style("old", cm)))
    new.write_text(yaml.safe_dump(new_style("new", cm)))
    assert kubectl.ok(*ns, "create", "-f", str(old)).out_lines == ["event/old created"]
    assert kubectl.ok(*ns, "create", "-f", str(new)).out_lines == [
        "event.events.k8s.io/new created"
    ]

    listed = table(
        [
            ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
            ["3h30m", "Normal", "Synced", "configmap/cm", "synced"],
            ["20m", "Warning", "BackOff", "configmap/cm", "back-off restarting"],
        ]
    )
    assert kubectl.ok(*ns, "get", "events").out_lines == listed
    assert kubectl.ok(*ns, "get", "events.events.k8s.io").out_lines == listed
    # Both groups list the short name "ev", as upstream's (shared) event storage does, so
    # kubectl warns that it picked core/v1 over events.k8s.io.
    wide = kubectl.run(*ns, "get", "ev", "-o", "wide")
    assert wide.err_lines == [
        'Warning: short name "ev" could also match lower priority resource events.events.k8s.io'
    ]
    assert wide.out_lines == table(
        [
            [
                "LAST SEEN",
                "TYPE",
                "REASON",
                "OBJECT",
                "SUBOBJECT",
                "SOURCE",
                "MESSAGE",
                "FIRST SEEN",
                "COUNT",
                "NAME",
            ],
            [
                "3h30m",
                "Normal",
                "Synced",
                "configmap/cm",
                "",
                "example.com/syncer, syncer-1",
                "synced",
                "3h30m",
                "1",
                "new",
            ],
            [
                "20m",
                "Warning",
                "BackOff",
                "configmap/cm",
                "",
                "kubelet, node-1",
                "back-off restarting",
                "60m",
                "2",
                "old",
            ],
        ]
    )

    # describe finds the configmap's events by involvedObject fields (name, namespace,
    # kind and uid): an event about another object does not show.
    other = configmap(http, namespace, "other")
    response = http.post(events_path(namespace), json=old_style("elsewhere", other))
    assert response.status_code == 201, response.text
    described = kubectl.ok(*ns, "describe", "configmap", "cm").out_lines
    events = described[described.index("Events:") + 1 :]
    assert re.fullmatch(r"\s+Type\s+Reason\s+Age\s+From\s+Message", events[0]), events
    rows = [line.split(None, 3) for line in events[2:]]
    assert [row[:2] for row in rows] == [["Normal", "Synced"], ["Warning", "BackOff"]], events
    assert events[2].endswith("example.com/syncer  synced")
    assert events[3].endswith("kubelet             back-off restarting")


@pytest.mark.kubectl
@pytest.mark.parametrize("version", ["1.27", "1.33"])
def test_kubectl_events_lists_an_objects_events(
    kapi_server: KapiServer, http: httpx.Client, namespace: str, tmp_path: Path, version: str
) -> None:
    cm, other = configmap(http, namespace), configmap(http, namespace, "other")
    for event, path in (
        (old_style("old", cm), events_path(namespace)),
        (new_style("new", cm), events_path(namespace, prefix=EVENTS_V1)),
        (old_style("elsewhere", other, reason="Other"), events_path(namespace)),
    ):
        assert http.post(path, json=event).status_code == 201
    kubectl = make_kubectl(kapi_server, tmp_path, version)
    lines = kubectl.ok("-n", namespace, "events", "--for", "configmap/cm").out_lines
    assert re.fullmatch(r"LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE", lines[0]), lines
    # Oldest first; repeated events say how often they happened.
    assert re.fullmatch(r"3h30m\s+Normal\s+Synced\s+ConfigMap/cm\s+synced", lines[1]), lines
    assert re.fullmatch(
        r"20m \(x2 over 60m\)\s+Warning\s+BackOff\s+ConfigMap/cm\s+back-off restarting",
        lines[2],
    ), lines
    assert len(lines) == 3


# --- one storage, two shapes ------------------------------------------------------------------


def test_each_group_reads_the_others_events_in_its_own_shape(
    http: httpx.Client, namespace: str
) -> None:
    cm = configmap(http, namespace)
    created = http.post(events_path(namespace, prefix=EVENTS_V1), json=new_style("new", cm))
    assert created.status_code == 201, created.text
    core = http.get(events_path(namespace, "new")).json()
    assert core["apiVersion"] == "v1"
    assert core["involvedObject"] == reference(cm)
    assert core["message"] == "synced"
    assert core["reportingComponent"] == "example.com/syncer"
    # Go encodes the zero values of core/v1 Event's non-omitempty fields.
    assert (core["firstTimestamp"], core["lastTimestamp"], core["source"]) == (None, None, {})
    assert core["metadata"]["resourceVersion"] == created.json()["metadata"]["resourceVersion"]

    assert http.post(events_path(namespace), json=old_style("old", cm)).status_code == 201
    v1 = http.get(events_path(namespace, "old", EVENTS_V1)).json()
    assert v1["apiVersion"] == "events.k8s.io/v1"
    assert v1["regarding"] == reference(cm)
    assert v1["note"] == "back-off restarting"
    assert v1["deprecatedSource"] == {"component": "kubelet", "host": "node-1"}
    assert v1["deprecatedCount"] == 2
    assert v1["eventTime"] is None
    assert not {"involvedObject", "message", "source", "count"} & v1.keys()

    listed = http.get(events_path(namespace, prefix=EVENTS_V1))
    assert names(listed) == ["new", "old"]
    assert listed.json()["kind"] == "EventList"

    deleted = http.delete(events_path(namespace, "old", EVENTS_V1))
    assert deleted.status_code == 200, deleted.text
    assert http.get(events_path(namespace, "old")).status_code == 404


def test_discovery_names_the_same_storage_for_both_groups(http: httpx.Client) -> None:
    def entry(path: str) -> dict[str, Any]:
        resources = http.get(path).json()["resources"]
        return next(r for r in resources if r["name"] == "events")

    core, v1 = entry(CORE), entry(EVENTS_V1)
    assert core["storageVersionHash"] == v1["storageVersionHash"]
    assert core["shortNames"] == v1["shortNames"] == ["ev"]
    groups = http.get("/apis").json()["groups"]
    assert any(g["name"] == "events.k8s.io" for g in groups)


# --- field selectors --------------------------------------------------------------------------


def test_field_selectors_find_events_in_either_groups_names(
    http: httpx.Client, namespace: str
) -> None:
    cm, other = configmap(http, namespace), configmap(http, namespace, "other")
    for event, prefix in (
        (old_style("old", cm), CORE),
        (new_style("new", cm), EVENTS_V1),
        (old_style("elsewhere", other, reason="Other", type="Normal"), CORE),
    ):
        assert http.post(events_path(namespace, prefix=prefix), json=event).status_code == 201

    def core(selector: str) -> list[str]:
        return names(http.get(events_path(namespace), params={"fieldSelector": selector}))

    def v1(selector: str) -> list[str]:
        return names(
            http.get(events_path(namespace, prefix=EVENTS_V1), params={"fieldSelector": selector})
        )

    uid = cm["metadata"]["uid"]
    assert core(f"involvedObject.uid={uid}") == ["new", "old"]
    assert core("involvedObject.name=cm,involvedObject.kind=ConfigMap,type=Warning") == ["old"]
    assert core("reason!=BackOff") == ["elsewhere", "new"]
    # ``source`` falls back to the reporting controller of new-style events.
    assert core("source=example.com/syncer") == ["new"]
    assert core("source=kubelet") == ["elsewhere", "old"]
    assert core("reportingComponent=example.com/syncer") == ["new"]
    assert core("metadata.name=old") == ["old"]
    assert v1(f"regarding.uid={uid},reportingController=example.com/syncer") == ["new"]
    assert v1("regarding.name=other") == ["elsewhere"]
    assert v1("source=kubelet,type=Warning") == ["old"]

    selector = f"involvedObject.name=other,involvedObject.namespace={namespace}"
    everywhere = http.get("/api/v1/events", params={"fieldSelector": selector})
    assert names(everywhere) == ["elsewhere"]

    for prefix, label in ((CORE, "regarding.name"), (EVENTS_V1, "involvedObject.name")):
        response = http.get(
            events_path(namespace, prefix=prefix), params={"fieldSelector": f"{label}=cm"}
        )
        assert response.status_code == 400
        assert response.json()["message"] == f"field label not supported: {label}"


def test_watch_with_an_involved_object_selector(http: httpx.Client, namespace: str) -> None:
    cm, other = configmap(http, namespace), configmap(http, namespace, "other")
    start = http.get(events_path(namespace)).json()["metadata"]["resourceVersion"]
    assert http.post(events_path(namespace), json=old_style("a", other)).status_code == 201
    assert http.post(events_path(namespace), json=old_style("b", cm)).status_code == 201
    params = {
        "watch": "1",
        "resourceVersion": start,
        "fieldSelector": "regarding.name=cm",
        "timeoutSeconds": "1",
    }
    with http.stream("GET", events_path(namespace, prefix=EVENTS_V1), params=params) as stream:
        seen = [yaml.safe_load(line) for line in stream.iter_lines() if line]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in seen] == [("ADDED", "b")]
    assert seen[0]["object"]["regarding"]["name"] == "cm"
    # A field label the group does not know fails the request itself, as for a list.
    params["fieldSelector"] = "involvedObject.name=cm"
    refused = http.get(events_path(namespace, prefix=EVENTS_V1), params=params)
    assert refused.status_code == 400
    assert refused.json()["message"] == "field label not supported: involvedObject.name"


# --- validation -------------------------------------------------------------------------------


def test_events_k8s_io_validates_strictly_and_core_v1_leniently(
    http: httpx.Client, namespace: str
) -> None:
    cm = configmap(http, namespace)
    bad = new_style("bad", cm, type="Odd", deprecatedCount=3)
    response = http.post(events_path(namespace, prefix=EVENTS_V1), json=bad)
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["details"] == {
        "name": "bad",
        "group": "events.k8s.io",
        "kind": "Event",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "": has invalid value: Odd',
                "field": "type",
            },
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "": needs to be unset',
                "field": "count",
            },
        ],
    }
    assert status["message"] == (
        'Event.events.k8s.io "bad" is invalid: [type: Invalid value: "": has invalid value: Odd, '
        'count: Invalid value: "": needs to be unset]'
    )

    # The same event through core/v1 gets only the legacy checks.
    lenient = {**bad, "apiVersion": "v1", "involvedObject": bad["regarding"], "count": 3}
    for key in ("regarding", "deprecatedCount", "note", "reportingController"):
        lenient.pop(key)
    lenient["reportingComponent"] = "example.com/syncer"
    created = http.post(events_path(namespace), json=lenient)
    assert created.status_code == 201, created.text

    # Legacy checks apply in every group: new-style events need their reporting fields.
    missing = old_style("missing", cm, eventTime=ago(1, micro=True))
    response = http.post(events_path(namespace), json=missing)
    assert response.status_code == 422
    assert response.json()["message"].startswith(
        'Event "missing" is invalid: [reportingController: Required value, '
    )


def test_updates_through_events_k8s_io_may_not_change_the_event(
    http: httpx.Client, namespace: str
) -> None:
    cm = configmap(http, namespace)
    path = events_path(namespace, "new", EVENTS_V1)
    assert http.post(events_path(namespace, prefix=EVENTS_V1), json=new_style("new", cm)).is_success
    series = {"count": 2, "lastObservedTime": ago(0, micro=True)}
    patched = http.patch(
        path, json={"series": series}, headers={"content-type": "application/merge-patch+json"}
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["series"]["count"] == 2
    changed = http.patch(
        path,
        json={"note": "changed"},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert changed.status_code == 422, changed.text
    assert changed.json()["message"] == (
        'Event.events.k8s.io "new" is invalid: message: Invalid value: "changed": '
        "field is immutable"
    )
    # core/v1 updates are not held to that.
    again = http.patch(
        events_path(namespace, "new"),
        json={"message": "changed"},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert again.status_code == 200, again.text
    assert http.get(path).json()["note"] == "changed"
