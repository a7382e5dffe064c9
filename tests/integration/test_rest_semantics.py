"""REST semantics of kube-apiserver: lists, selectors, dry run, generation, subresources,
finalizers, preconditions, watch features, namespaces, version emulation, health, metrics."""

from __future__ import annotations

import itertools
import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.wait import eventually
from tests.integration.paths import cm_path, pdb_path

Object = dict[str, Any]


def create_cm(
    http: httpx.Client,
    namespace: str,
    name: str,
    data: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    **metadata: Any,
) -> Object:
    meta: Object = {"name": name, **metadata}
    if labels:
        meta["labels"] = labels
    body: Object = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    if data is not None:
        body["data"] = data
    response = http.post(cm_path(namespace), json=body)
    assert response.status_code == 201, response.text
    return response.json()


def names(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [item["metadata"]["name"] for item in response.json()["items"]]


def make_namespace(http: httpx.Client, prefix: str = "ns") -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    response = http.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


def merge_patch(http: httpx.Client, path: str, patch: Object, **params: str) -> httpx.Response:
    return http.patch(
        path,
        params=params,
        content=json.dumps(patch),
        headers={"content-type": "application/merge-patch+json"},
    )


def watch_events(
    url: str,
    path: str,
    params: dict[str, str],
    until: Callable[[list[Object]], bool] = lambda _: False,
    seconds: float = 10,
) -> list[Object]:
    """Read a watch until ``until`` holds or the server ends it (``timeoutSeconds``)."""
    params = {"watch": "1", "timeoutSeconds": str(int(seconds)), **params}
    events: list[Object] = []
    timeout = httpx.Timeout(10, read=seconds + 10)
    with httpx.stream("GET", url + path, params=params, timeout=timeout) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.strip():
                events.append(json.loads(line))
                if until(events):
                    break
    return events


def assert_invalid_list_options(response: httpx.Response, field: str, detail: str) -> None:
    """422 on ``ListOptions.meta.k8s.io`` with one cause, as ``ValidateListOptions`` gives."""
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["kind"] == "Status"
    assert status["reason"] == "Invalid"
    assert status["message"] == f'ListOptions.meta.k8s.io "" is invalid: {field}: {detail}'
    assert status["details"]["group"] == "meta.k8s.io"
    assert status["details"]["kind"] == "ListOptions"
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == [(field, detail)]


# -- lists -----------------------------------------------------------------------------


def test_pagination_is_a_consistent_snapshot(http: httpx.Client, namespace: str) -> None:
    for i in range(5):
        create_cm(http, namespace, f"c{i}", {"v": "original"})

    first = http.get(cm_path(namespace), params={"limit": 2})
    assert names(first) == ["c0", "c1"]
    meta = first.json()["metadata"]
    snapshot_rv = meta["resourceVersion"]
    assert meta["remainingItemCount"] == 3
    token = meta["continue"]
    assert token

    # changes after the first page must not show in the following ones
    create_cm(http, namespace, "c25")
    assert merge_patch(http, cm_path(namespace, "c3"), {"data": {"v": "changed"}}).is_success
    assert http.delete(cm_path(namespace, "c4")).status_code == 200

    second = http.get(cm_path(namespace), params={"limit": 2, "continue": token})
    assert names(second) == ["c2", "c3"]
    meta = second.json()["metadata"]
    assert meta["resourceVersion"] == snapshot_rv
    assert meta["remainingItemCount"] == 1
    assert second.json()["items"][1]["data"] == {"v": "original"}

    third = http.get(cm_path(namespace), params={"limit": 2, "continue": meta["continue"]})
    assert names(third) == ["c4"]
    meta = third.json()["metadata"]
    assert meta["resourceVersion"] == snapshot_rv
    assert "continue" not in meta or not meta["continue"]
    assert "remainingItemCount" not in meta

    assert names(http.get(cm_path(namespace))) == ["c0", "c1", "c2", "c25", "c3"]


def test_list_exact_at_an_old_revision_shows_the_old_state(
    http: httpx.Client, namespace: str
) -> None:
    old = create_cm(http, namespace, "x", {"v": "1"})
    old_rv = old["metadata"]["resourceVersion"]
    assert merge_patch(http, cm_path(namespace, "x"), {"data": {"v": "2"}}).is_success
    create_cm(http, namespace, "y")

    exact = http.get(
        cm_path(namespace), params={"resourceVersion": old_rv, "resourceVersionMatch": "Exact"}
    )
    assert names(exact) == ["x"]
    assert exact.json()["items"][0] == old
    assert exact.json()["metadata"]["resourceVersion"] == old_rv

    newer = http.get(
        cm_path(namespace),
        params={"resourceVersion": old_rv, "resourceVersionMatch": "NotOlderThan"},
    )
    assert names(newer) == ["x", "y"]
    assert newer.json()["items"][0]["data"] == {"v": "2"}
    assert int(newer.json()["metadata"]["resourceVersion"]) > int(old_rv)


def test_resource_version_match_requires_resource_version(
    http: httpx.Client, namespace: str
) -> None:
    response = http.get(cm_path(namespace), params={"resourceVersionMatch": "Exact"})
    assert_invalid_list_options(
        response,
        "resourceVersionMatch",
        "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
    )


@pytest.mark.parametrize(
    ("params", "field", "detail"),
    [
        (
            {"resourceVersion": "1", "resourceVersionMatch": "Foo"},
            "resourceVersionMatch",
            'Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""',
        ),
        (
            {"resourceVersion": "0", "resourceVersionMatch": "Exact"},
            "resourceVersionMatch",
            'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
        (
            {"sendInitialEvents": "true"},
            "sendInitialEvents",
            "Forbidden: sendInitialEvents is forbidden for list",
        ),
        (
            {"watch": "1", "sendInitialEvents": "true"},
            "resourceVersionMatch",
            "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            {"watch": "1", "resourceVersionMatch": "NotOlderThan", "resourceVersion": "1"},
            "resourceVersionMatch",
            "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
            "provided",
        ),
    ],
    ids=["unsupported-match", "exact-at-0", "initial-events-on-list", "watch-no-match", "watch"],
)
def test_list_and_watch_options_validation(
    http: httpx.Client, namespace: str, params: dict[str, str], field: str, detail: str
) -> None:
    response = http.get(cm_path(namespace), params={"timeoutSeconds": "1", **params})
    assert_invalid_list_options(response, field, detail)


def test_limit_takes_any_int64(http: httpx.Client, namespace: str) -> None:
    """2^63-1 is a page as large as can be (it overflowed SQLite's LIMIT once); 2^63 is no
    int64, and upstream answers the strconv error of decoding the query."""
    create_cm(http, namespace, "a")
    create_cm(http, namespace, "b")
    largest = http.get(cm_path(namespace), params={"limit": str(2**63 - 1)})
    assert largest.status_code == 200, largest.text
    assert names(largest) == ["a", "b"]
    assert "continue" not in largest.json()["metadata"]
    for value, why in ((str(2**63), "value out of range"), ("1e3", "invalid syntax")):
        refused = http.get(cm_path(namespace), params={"limit": value})
        assert refused.status_code == 400
        assert refused.json()["reason"] == "BadRequest"
        assert refused.json()["message"] == f'strconv.ParseInt: parsing "{value}": {why}'
    assert names(http.get(cm_path(namespace))) == ["a", "b"]


_SELECTOR_CASES = {
    "env=prod": ["a", "c"],
    "env==prod": ["a", "c"],
    "env!=prod": ["b", "d"],
    "env in (prod,dev)": ["a", "b", "c"],
    "env notin (prod)": ["b", "d"],
    "tier": ["a", "b"],
    "!tier": ["c", "d"],
    "env=prod,tier=web": ["a"],
    "env in (prod),!tier": ["c"],
    "tier=web,env!=prod": ["b"],
}


def test_label_selectors(http: httpx.Client, namespace: str) -> None:
    create_cm(http, namespace, "a", labels={"env": "prod", "tier": "web"})
    create_cm(http, namespace, "b", labels={"env": "dev", "tier": "web"})
    create_cm(http, namespace, "c", labels={"env": "prod"})
    create_cm(http, namespace, "d")
    for selector, expected in _SELECTOR_CASES.items():
        response = http.get(cm_path(namespace), params={"labelSelector": selector})
        assert names(response) == expected, selector


def test_field_selectors_and_all_namespaces(http: httpx.Client, namespace: str) -> None:
    other = make_namespace(http, "other")
    create_cm(http, namespace, "a", labels={"k": "1"})
    create_cm(http, namespace, "b")
    create_cm(http, other, "a", labels={"k": "1"})

    assert names(http.get(cm_path(namespace), params={"fieldSelector": "metadata.name=a"})) == ["a"]
    assert names(http.get(cm_path(namespace), params={"fieldSelector": "metadata.name!=a"})) == [
        "b"
    ]

    everywhere = http.get("/api/v1/configmaps")
    assert everywhere.status_code == 200, everywhere.text
    assert everywhere.json()["kind"] == "ConfigMapList"
    found = {
        (i["metadata"]["namespace"], i["metadata"]["name"]) for i in everywhere.json()["items"]
    }
    assert {(namespace, "a"), (namespace, "b"), (other, "a")} <= found

    def pairs(response: httpx.Response) -> set[tuple[str, str]]:
        assert response.status_code == 200, response.text
        return {
            (i["metadata"]["namespace"], i["metadata"]["name"]) for i in response.json()["items"]
        }

    in_ns = http.get(
        "/api/v1/configmaps", params={"fieldSelector": f"metadata.namespace={namespace}"}
    )
    assert pairs(in_ns) == {(namespace, "a"), (namespace, "b")}
    named_a = http.get("/api/v1/configmaps", params={"fieldSelector": "metadata.name=a"})
    assert {(namespace, "a"), (other, "a")} <= pairs(named_a)
    assert all(n == "a" for _, n in pairs(named_a))
    both = http.get(
        "/api/v1/configmaps",
        params={"fieldSelector": f"metadata.namespace!={namespace}", "labelSelector": "k=1"},
    )
    assert (other, "a") in pairs(both)
    assert all(ns != namespace for ns, _ in pairs(both))


# -- writes ----------------------------------------------------------------------------


def test_dry_run_changes_nothing(http: httpx.Client, namespace: str) -> None:
    stored = create_cm(http, namespace, "x", {"v": "1"})
    before = http.get(cm_path(namespace)).json()["items"]

    created = http.post(
        cm_path(namespace),
        params={"dryRun": "All"},
        json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y"}},
    )
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["name"] == "y"
    assert http.get(cm_path(namespace, "y")).status_code == 404

    updated = http.put(
        cm_path(namespace, "x"), params={"dryRun": "All"}, json={**stored, "data": {"v": "2"}}
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["data"] == {"v": "2"}

    patched = merge_patch(http, cm_path(namespace, "x"), {"data": {"v": "3"}}, dryRun="All")
    assert patched.status_code == 200, patched.text
    assert patched.json()["data"] == {"v": "3"}

    deleted = http.delete(cm_path(namespace, "x"), params={"dryRun": "All"})
    assert deleted.status_code == 200, deleted.text

    collection = http.delete(cm_path(namespace), params={"dryRun": "All"})
    assert collection.status_code == 200, collection.text

    assert http.get(cm_path(namespace)).json()["items"] == before
    assert http.get(cm_path(namespace, "x")).json() == stored


def test_generate_name(http: httpx.Client, namespace: str) -> None:
    made = set()
    for _ in range(3):
        response = http.post(
            cm_path(namespace),
            json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}},
        )
        assert response.status_code == 201, response.text
        metadata = response.json()["metadata"]
        assert metadata["generateName"] == "gen-"
        assert re.fullmatch(r"gen-[bcdfghjklmnpqrstvwxz2456789]{5}", metadata["name"]), metadata
        made.add(metadata["name"])
        assert http.get(cm_path(namespace, metadata["name"])).status_code == 200
    assert len(made) == 3


def _pdb(name: str, min_available: int = 1) -> Object:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
    }


def _status(current: int) -> Object:
    return {
        "disruptionsAllowed": 0,
        "currentHealthy": current,
        "desiredHealthy": 1,
        "expectedPods": 2,
        "observedGeneration": 1,
    }


def test_pdb_generation_tracks_spec_changes_only(http: httpx.Client, namespace: str) -> None:
    created = http.post(pdb_path(namespace), json=_pdb("p"))
    assert created.status_code == 201, created.text
    obj = created.json()
    assert obj["metadata"]["generation"] == 1

    obj["metadata"]["labels"] = {"x": "y"}
    obj["metadata"]["annotations"] = {"note": "metadata only"}
    labelled = http.put(pdb_path(namespace, "p"), json=obj)
    assert labelled.status_code == 200, labelled.text
    assert labelled.json()["metadata"]["generation"] == 1
    assert labelled.json()["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"]

    obj = labelled.json()
    obj["status"] = _status(1)
    status_write = http.put(pdb_path(namespace, "p", "v1") + "/status", json=obj)
    assert status_write.status_code == 200, status_write.text
    assert status_write.json()["metadata"]["generation"] == 1
    assert status_write.json()["status"]["currentHealthy"] == 1

    obj = status_write.json()
    obj["spec"]["minAvailable"] = 2
    respecced = http.put(pdb_path(namespace, "p"), json=obj)
    assert respecced.status_code == 200, respecced.text
    assert respecced.json()["metadata"]["generation"] == 2

    patched = merge_patch(http, pdb_path(namespace, "p"), {"spec": {"minAvailable": "50%"}})
    assert patched.status_code == 200, patched.text
    assert patched.json()["metadata"]["generation"] == 3
    assert patched.json()["spec"]["minAvailable"] == "50%"


def test_pdb_status_subresource(http: httpx.Client, namespace: str) -> None:
    created = http.post(pdb_path(namespace), json=_pdb("p"))
    assert created.status_code == 201, created.text
    obj = created.json()

    # /status takes the status and ignores spec changes
    obj["spec"]["minAvailable"] = 5
    obj["status"] = _status(2)
    via_status = http.put(pdb_path(namespace, "p") + "/status", json=obj)
    assert via_status.status_code == 200, via_status.text
    assert via_status.json()["spec"]["minAvailable"] == 1
    assert via_status.json()["status"]["currentHealthy"] == 2
    assert via_status.json()["metadata"]["generation"] == 1

    read_status = http.get(pdb_path(namespace, "p") + "/status")
    assert read_status.status_code == 200, read_status.text
    assert read_status.json() == via_status.json()

    # the main resource takes the spec and ignores status changes
    obj = via_status.json()
    obj["status"]["currentHealthy"] = 7
    obj["spec"]["minAvailable"] = 3
    via_main = http.put(pdb_path(namespace, "p"), json=obj)
    assert via_main.status_code == 200, via_main.text
    assert via_main.json()["spec"]["minAvailable"] == 3
    assert via_main.json()["status"]["currentHealthy"] == 2

    patched = merge_patch(
        http, pdb_path(namespace, "p") + "/status", {"status": {"expectedPods": 9}}
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["status"]["expectedPods"] == 9
    assert patched.json()["spec"]["minAvailable"] == 3


def test_finalizers_defer_deletion(
    http: httpx.Client, kapi_server: KapiServer, namespace: str
) -> None:
    created = create_cm(http, namespace, "held", finalizers=["example.com/hold"])
    start = created["metadata"]["resourceVersion"]

    deleted = http.delete(cm_path(namespace, "held"))
    assert deleted.status_code == 200, deleted.text
    marked = deleted.json()
    assert marked["kind"] == "ConfigMap"
    assert marked["metadata"]["deletionTimestamp"]
    assert marked["metadata"]["finalizers"] == ["example.com/hold"]

    still = http.get(cm_path(namespace, "held"))
    assert still.status_code == 200, still.text
    assert still.json()["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]

    # a second delete changes nothing
    again = http.delete(cm_path(namespace, "held"))
    assert again.status_code == 200, again.text
    assert http.get(cm_path(namespace, "held")).json() == still.json()

    released = merge_patch(http, cm_path(namespace, "held"), {"metadata": {"finalizers": None}})
    assert released.status_code == 200, released.text
    assert http.get(cm_path(namespace, "held")).status_code == 404

    events = watch_events(
        kapi_server.url,
        cm_path(namespace),
        {"resourceVersion": start},
        until=lambda e: e[-1]["type"] == "DELETED",
    )
    assert [e["type"] for e in events] == ["MODIFIED", "DELETED"]
    assert events[0]["object"]["metadata"]["deletionTimestamp"]


def test_delete_preconditions(http: httpx.Client, namespace: str) -> None:
    stored = create_cm(http, namespace, "x")
    uid, rv = stored["metadata"]["uid"], stored["metadata"]["resourceVersion"]
    prefix = 'Operation cannot be fulfilled on configmaps "x": Precondition failed: '

    wrong_uid = http.request(
        "DELETE", cm_path(namespace, "x"), json={"preconditions": {"uid": "not-the-uid"}}
    )
    assert wrong_uid.status_code == 409, wrong_uid.text
    status = wrong_uid.json()
    assert status["reason"] == "Conflict"
    assert (
        status["message"] == f"{prefix}UID in precondition: not-the-uid, UID in object meta: {uid}"
    )
    assert status["details"] == {"name": "x", "kind": "configmaps"}

    wrong_rv = http.request(
        "DELETE", cm_path(namespace, "x"), json={"preconditions": {"resourceVersion": "1"}}
    )
    assert wrong_rv.status_code == 409, wrong_rv.text
    assert wrong_rv.json()["message"] == (
        f"{prefix}ResourceVersion in precondition: 1, ResourceVersion in object meta: {rv}"
    )
    assert http.get(cm_path(namespace, "x")).json() == stored

    matching = http.request(
        "DELETE",
        cm_path(namespace, "x"),
        json={
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": {"uid": uid, "resourceVersion": rv},
        },
    )
    assert matching.status_code == 200, matching.text
    assert matching.json()["status"] == "Success"
    assert http.get(cm_path(namespace, "x")).status_code == 404


def test_delete_collection_with_label_selector(http: httpx.Client, namespace: str) -> None:
    create_cm(http, namespace, "a", labels={"batch": "old"})
    create_cm(http, namespace, "b", labels={"batch": "old"})
    create_cm(http, namespace, "c", labels={"batch": "new"})
    create_cm(http, namespace, "d")

    response = http.delete(cm_path(namespace), params={"labelSelector": "batch=old"})
    assert response.status_code == 200, response.text
    assert response.json()["kind"] == "ConfigMapList"
    assert sorted(i["metadata"]["name"] for i in response.json()["items"]) == ["a", "b"]
    assert names(http.get(cm_path(namespace))) == ["c", "d"]


# -- watch -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bookmarking_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "bookmarks", "--watch-bookmark-interval", "0.5")


def test_watch_bookmarks(bookmarking_server: KapiServer) -> None:
    with bookmarking_server.client() as http:
        namespace = make_namespace(http)
        created = create_cm(http, namespace, "x")
    rv = int(created["metadata"]["resourceVersion"])

    events = watch_events(
        bookmarking_server.url,
        cm_path(namespace),
        {"resourceVersion": str(rv), "allowWatchBookmarks": "true"},
        until=lambda e: sum(x["type"] == "BOOKMARK" for x in e) >= 2,
        seconds=10,
    )
    bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
    assert len(bookmarks) >= 2, events
    for event in bookmarks:
        obj = event["object"]
        assert obj["kind"] == "ConfigMap"
        assert obj["apiVersion"] == "v1"
        assert int(obj["metadata"]["resourceVersion"]) >= rv
    assert [e["type"] for e in events if e["type"] != "BOOKMARK"] == []


def test_watch_without_bookmarks_gets_none(bookmarking_server: KapiServer) -> None:
    with bookmarking_server.client() as http:
        namespace = make_namespace(http)
        created = create_cm(http, namespace, "x")
    events = watch_events(
        bookmarking_server.url,
        cm_path(namespace),
        {"resourceVersion": created["metadata"]["resourceVersion"]},
        seconds=2,
    )
    assert events == []


def test_watch_timeout_ends_the_stream(
    http: httpx.Client, kapi_server: KapiServer, namespace: str
) -> None:
    create_cm(http, namespace, "x")
    events = watch_events(kapi_server.url, cm_path(namespace), {}, seconds=1)
    # the stream ended on its own (watch_events returned) after the initial state
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "x")]


def test_watch_with_initial_events(
    http: httpx.Client, kapi_server: KapiServer, namespace: str
) -> None:
    create_cm(http, namespace, "a")
    create_cm(http, namespace, "b")
    list_rv = int(http.get(cm_path(namespace)).json()["metadata"]["resourceVersion"])

    def initial_done(events: list[Object]) -> bool:
        return events[-1]["type"] == "BOOKMARK"

    params = {
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
    }
    events = watch_events(kapi_server.url, cm_path(namespace), params, until=initial_done)
    assert sorted((e["type"], e["object"]["metadata"]["name"]) for e in events[:-1]) == [
        ("ADDED", "a"),
        ("ADDED", "b"),
    ]
    bookmark = events[-1]
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(bookmark["object"]["metadata"]["resourceVersion"]) >= list_rv


def test_watch_reports_each_change(
    http: httpx.Client, kapi_server: KapiServer, namespace: str
) -> None:
    start = http.get(cm_path(namespace)).json()["metadata"]["resourceVersion"]
    a = create_cm(http, namespace, "a", labels={"keep": "yes"})
    patched = merge_patch(http, cm_path(namespace, "a"), {"data": {"k": "v"}}).json()
    create_cm(http, namespace, "b")
    assert http.delete(cm_path(namespace, "a")).status_code == 200

    events = watch_events(
        kapi_server.url, cm_path(namespace), {"resourceVersion": start}, until=lambda e: len(e) >= 4
    )
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"),
        ("MODIFIED", "a"),
        ("ADDED", "b"),
        ("DELETED", "a"),
    ]
    assert events[0]["object"] == a
    assert events[1]["object"] == patched
    revisions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert all(x < y for x, y in itertools.pairwise(revisions))

    # with a label selector, an object leaving the selection is reported as DELETED
    selected = watch_events(
        kapi_server.url,
        cm_path(namespace),
        {"resourceVersion": start, "labelSelector": "keep=yes"},
        until=lambda e: len(e) >= 3,
    )
    assert [e["type"] for e in selected] == ["ADDED", "MODIFIED", "DELETED"]


# -- namespaces --------------------------------------------------------------------------


def test_namespace_deletion_removes_its_contents(http: httpx.Client) -> None:
    namespace = make_namespace(http, "doomed")
    create_cm(http, namespace, "a")
    create_cm(http, namespace, "b")
    assert http.post(pdb_path(namespace), json=_pdb("p")).status_code == 201

    deleted = http.delete(f"/api/v1/namespaces/{namespace}")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["status"]["phase"] == "Terminating"
    assert deleted.json()["metadata"]["deletionTimestamp"]

    eventually(
        lambda: http.get(f"/api/v1/namespaces/{namespace}").status_code == 404,
        what="the namespace to be removed",
        timeout=15,
    )
    selector = {"fieldSelector": f"metadata.namespace={namespace}"}
    assert names(http.get("/api/v1/configmaps", params=selector)) == []
    assert names(http.get("/apis/policy/v1/poddisruptionbudgets", params=selector)) == []


def test_namespace_waits_for_content_finalizers(http: httpx.Client) -> None:
    """The namespace controller finalizes a namespace only once it is empty."""
    namespace = make_namespace(http, "waiting")
    create_cm(http, namespace, "held", finalizers=["example.com/hold"])
    create_cm(http, namespace, "plain")
    assert http.delete(f"/api/v1/namespaces/{namespace}").status_code == 200
    try:
        eventually(
            lambda: http.get(cm_path(namespace, "plain")).status_code == 404,
            what="the namespace controller to delete the content",
            timeout=15,
        )
        held = http.get(cm_path(namespace, "held"))
        assert held.status_code == 200, held.text
        assert held.json()["metadata"]["deletionTimestamp"]
        # while "held" waits on its finalizer, its namespace must stay, Terminating
        time.sleep(0.5)
        still = http.get(f"/api/v1/namespaces/{namespace}")
        assert still.status_code == 200, "namespace removed while content remains"
        assert still.json()["status"]["phase"] == "Terminating"
    finally:
        merge_patch(http, cm_path(namespace, "held"), {"metadata": {"finalizers": None}})
    eventually(
        lambda: http.get(f"/api/v1/namespaces/{namespace}").status_code == 404,
        what="the namespace to be removed once empty",
        timeout=15,
    )


# -- version emulation: policy/v1beta1 -------------------------------------------------


def test_policy_v1beta1_is_not_served_by_default(http: httpx.Client, namespace: str) -> None:
    response = http.get(pdb_path(namespace, version="v1beta1"))
    assert response.status_code == 404, response.text
    assert response.json()["reason"] == "NotFound"
    assert http.get("/apis/policy/v1beta1").status_code == 404
    group = http.get("/apis/policy").json()
    assert [v["version"] for v in group["versions"]] == ["v1"]


@pytest.fixture(scope="module")
def server_1_24(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "emulated", "--emulated-version=1.24")


_RESERVED = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"


def test_policy_v1beta1_empty_selector_conversion(server_1_24: KapiServer) -> None:
    with server_1_24.client() as http:
        namespace = make_namespace(http)
        beta = {
            "apiVersion": "policy/v1beta1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "none"},
            "spec": {"minAvailable": 1, "selector": {}},
        }
        created = http.post(pdb_path(namespace, version="v1beta1"), json=beta)
        assert created.status_code == 201, created.text
        assert created.json()["apiVersion"] == "policy/v1beta1"
        assert created.json()["spec"]["selector"] == {}

        # v1beta1's {} selects no pod; v1 spells that with the reserved label
        as_v1 = http.get(pdb_path(namespace, "none"))
        assert as_v1.status_code == 200, as_v1.text
        assert as_v1.json()["apiVersion"] == "policy/v1"
        assert as_v1.json()["spec"]["selector"] == {
            "matchExpressions": [{"key": _RESERVED, "operator": "Exists"}]
        }

        # v1's {} selects every pod; v1beta1 spells that with the reserved label
        assert http.post(
            pdb_path(namespace), json={**_pdb("all"), "spec": {"selector": {}}}
        ).is_success
        as_beta = http.get(pdb_path(namespace, "all", "v1beta1"))
        assert as_beta.status_code == 200, as_beta.text
        assert as_beta.json()["spec"]["selector"] == {
            "matchExpressions": [{"key": _RESERVED, "operator": "DoesNotExist"}]
        }
        listed = http.get(pdb_path(namespace, version="v1beta1"))
        assert listed.json()["kind"] == "PodDisruptionBudgetList"
        assert listed.json()["apiVersion"] == "policy/v1beta1"
        assert names(listed) == ["all", "none"]
        version = http.get("/version").json()
        assert (version["major"], version["minor"]) == ("1", "24")


def test_policy_v1beta1_requests_carry_the_deprecation_warning(server_1_24: KapiServer) -> None:
    with server_1_24.client() as http:
        namespace = make_namespace(http)
        response = http.get(pdb_path(namespace, version="v1beta1"))
        assert response.status_code == 200, response.text
        assert response.headers.get_list("warning") == [
            '299 - "policy/v1beta1 PodDisruptionBudget is deprecated in v1.21+, unavailable '
            'in v1.25+; use policy/v1 PodDisruptionBudget"'
        ]
        assert "warning" not in http.get(pdb_path(namespace)).headers


# -- health, version, metrics ----------------------------------------------------------


def test_health_endpoints(http: httpx.Client) -> None:
    for path in ("/healthz", "/livez", "/readyz", "/readyz/etcd", "/livez/ping"):
        response = http.get(path)
        assert response.status_code == 200, (path, response.text)
        assert response.text == "ok", path
        assert response.headers["content-type"].startswith("text/plain"), path

    verbose = http.get("/readyz", params={"verbose": ""})
    assert verbose.status_code == 200, verbose.text
    lines = verbose.text.splitlines()
    assert lines[-1] == "readyz check passed"
    for check in ("ping", "log", "etcd"):
        assert f"[+]{check} ok" in lines, lines
    assert all(line.startswith("[+]") for line in lines[:-1]), lines

    excluded = http.get("/readyz", params={"verbose": "", "exclude": "etcd"})
    assert "[+]etcd ok" not in excluded.text.splitlines()


def test_version(http: httpx.Client) -> None:
    response = http.get("/version")
    assert response.status_code == 200, response.text
    info = response.json()
    assert info["major"] == "1"
    assert info["minor"] == "33"
    assert info["gitVersion"].startswith("v1.33.")
    for key in ("gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"):
        assert key in info, key


_METRIC_LABELS = {
    "code",
    "component",
    "dry_run",
    "group",
    "resource",
    "scope",
    "subresource",
    "verb",
    "version",
}


def _samples(text: str, metric: str) -> list[tuple[dict[str, str], float]]:
    samples = []
    for line in text.splitlines():
        if line.startswith(metric + "{"):
            labels_text, value = line[len(metric) + 1 :].rsplit("} ", 1)
            labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', labels_text))
            samples.append((labels, float(value)))
    return samples


def test_metrics(http: httpx.Client, namespace: str) -> None:
    create_cm(http, namespace, "metered")
    dry = http.post(
        cm_path(namespace),
        params={"dryRun": "All"},
        json={"metadata": {"name": "dry"}},
    )
    assert dry.status_code == 201, dry.text
    http.get(f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/nope")
    assert http.get("/readyz").status_code == 200

    response = http.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert "# TYPE apiserver_request_total counter" in text

    requests = _samples(text, "apiserver_request_total")
    assert requests
    for labels, _ in requests:
        assert set(labels) == _METRIC_LABELS, labels

    def count(**want: str) -> float:
        return sum(v for labels, v in requests if all(labels[k] == w for k, w in want.items()))

    common = {"component": "apiserver", "group": "", "version": "v1", "resource": "configmaps"}
    assert count(verb="POST", code="201", scope="namespace", dry_run="", subresource="", **common)
    assert count(verb="POST", code="201", dry_run="All", **common)
    assert count(
        verb="GET",
        code="404",
        group="policy",
        version="v1",
        resource="poddisruptionbudgets",
        scope="resource",
    )

    assert "apiserver_request_duration_seconds_bucket{" in text
    health = _samples(text, "kubernetes_healthcheck")
    assert ({"name": "etcd", "type": "readyz"}, 1.0) in health


def test_put_creates_kinds_whose_strategy_allows_it(http: httpx.Client, namespace: str) -> None:
    """Endpoints (and Events) are created by a PUT, as upstream; ConfigMaps are not."""
    url = f"/api/v1/namespaces/{namespace}/endpoints/put-made"
    body = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "put-made"}}
    created = http.put(url, json=body)
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["uid"]
    again = http.put(url, json={**body, "metadata": {"name": "put-made", "labels": {"a": "b"}}})
    assert again.status_code == 200, again.text
    assert again.json()["metadata"]["uid"] == created.json()["metadata"]["uid"]
    assert http.get(url).json()["metadata"]["labels"] == {"a": "b"}

    missing = http.put(
        cm_path(namespace, "put-missing"),
        json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "put-missing"}},
    )
    assert missing.status_code == 404, missing.text
    assert http.get(cm_path(namespace, "put-missing")).status_code == 404
