"""Optimistic concurrency and watch ordering under load and across a restart."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, start_server
from tests.helpers.wait import eventually
from tests.integration.paths import cm_path

Object = dict[str, Any]
Event = tuple[str, str, int]  # (type, name, resourceVersion)


def make_namespace(client: httpx.Client, name: str) -> None:
    response = client.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text


def list_rv(client: httpx.Client, namespace: str) -> int:
    response = client.get(cm_path(namespace))
    assert response.status_code == 200, response.text
    return int(response.json()["metadata"]["resourceVersion"])


def read_watch(
    url: str,
    namespace: str,
    resource_version: int,
    done: Callable[[list[Object]], bool],
    seconds: float = 20,
    sink: list[Object] | None = None,
) -> list[Object]:
    """Events of a watch from ``resource_version`` until ``done`` says so or time runs out.

    Events are also appended to ``sink`` as they arrive, for a reader in another thread.
    A dropped connection ends the reading without raising: the caller checks what came.
    """
    events: list[Object] = [] if sink is None else sink
    params = {
        "watch": "1",
        "resourceVersion": str(resource_version),
        "timeoutSeconds": str(int(seconds)),
    }
    timeout = httpx.Timeout(10, read=seconds + 5)
    try:
        with httpx.stream(
            "GET", url + cm_path(namespace), params=params, timeout=timeout
        ) as response:
            assert response.status_code == 200, response.read()
            for line in response.iter_lines():
                if line.strip():
                    events.append(json.loads(line))
                    if done(events):
                        break
    except (httpx.RemoteProtocolError, httpx.ReadError):
        pass  # the server went away mid-stream (the restart test stops it)
    return events


def triples(events: list[Object]) -> list[Event]:
    return [
        (
            e["type"],
            e["object"]["metadata"]["name"],
            int(e["object"]["metadata"]["resourceVersion"]),
        )
        for e in events
    ]


def assert_strictly_increasing(revisions: list[int]) -> None:
    assert all(a < b for a, b in itertools.pairwise(revisions)), revisions


# -- (a) no lost update ---------------------------------------------------------------


def test_concurrent_read_modify_write_loses_nothing(
    kapi_server: KapiServer, namespace: str
) -> None:
    writers = 50
    with kapi_server.client() as http:
        created = http.post(
            cm_path(namespace),
            json={"metadata": {"name": "counter"}, "data": {"count": "0"}},
        )
        assert created.status_code == 201, created.text
        start = int(created.json()["metadata"]["resourceVersion"])

    def all_increments_seen(events: list[Object]) -> bool:
        return sum(e["type"] == "MODIFIED" for e in events) >= writers

    watched: list[Object] = []
    watcher = threading.Thread(
        target=read_watch,
        args=(kapi_server.url, namespace, start, all_increments_seen, 60, watched),
    )
    watcher.start()

    barrier = threading.Barrier(writers)
    deadline = time.monotonic() + 60

    def increment(_: int) -> tuple[int, int, int]:
        """One GET → +1 → PUT-with-resourceVersion, retried on 409; (rv, count, conflicts)."""
        conflicts = 0
        with kapi_server.client() as http:
            barrier.wait(timeout=30)
            while time.monotonic() < deadline:
                current = http.get(cm_path(namespace, "counter"))
                assert current.status_code == 200, current.text
                obj = current.json()
                count = int(obj["data"]["count"]) + 1
                obj["data"]["count"] = str(count)
                written = http.put(cm_path(namespace, "counter"), json=obj)
                if written.status_code == 409:
                    assert written.json()["reason"] == "Conflict", written.text
                    conflicts += 1
                    continue
                assert written.status_code == 200, written.text
                assert written.json()["data"]["count"] == str(count)
                return int(written.json()["metadata"]["resourceVersion"]), count, conflicts
        raise AssertionError("gave up retrying before the deadline")

    with ThreadPoolExecutor(max_workers=writers) as pool:
        results = list(pool.map(increment, range(writers)))
    watcher.join(timeout=max(1.0, deadline - time.monotonic()))
    assert not watcher.is_alive(), "the watch did not deliver every update in time"

    with kapi_server.client() as http:
        final = http.get(cm_path(namespace, "counter")).json()
    assert final["data"]["count"] == str(writers), "a write was lost"

    revisions = [rv for rv, _, _ in results]
    assert len(set(revisions)) == writers, "two successful writes share a resourceVersion"
    # each success wrote a distinct count: exactly one writer won each step
    assert sorted(count for _, count, _ in results) == list(range(1, writers + 1))

    # commit order, as the watch reports it: resourceVersions strictly increase with the count
    modified = [e for e in watched if e["type"] == "MODIFIED"]
    assert [e["type"] for e in watched] == ["MODIFIED"] * writers
    watch_revisions = [int(e["object"]["metadata"]["resourceVersion"]) for e in modified]
    assert_strictly_increasing(watch_revisions)
    assert [e["object"]["data"]["count"] for e in modified] == [
        str(n) for n in range(1, writers + 1)
    ]
    assert watch_revisions == sorted(revisions)
    by_revision = {rv: count for rv, count, _ in results}
    assert [by_revision[rv] for rv in watch_revisions] == list(range(1, writers + 1))
    assert str(watch_revisions[-1]) == final["metadata"]["resourceVersion"]


# -- (b) watch from R across a restart ------------------------------------------------


@pytest.fixture
def restartable(tmp_path: Path) -> Iterator[list[KapiServer]]:
    """Servers started on one data dir; the test appends restarts, all are stopped after."""
    servers = [start_server(tmp_path / "data")]
    yield servers
    for server in servers:
        server.stop()


class Writer:
    """Writes through one server and records what a watch must report for each write."""

    def __init__(self, client: httpx.Client, namespace: str) -> None:
        self.http = client
        self.namespace = namespace
        #: (type, name, resourceVersion or None for deletes, which return a Status)
        self.expected: list[tuple[str, str, int | None]] = []

    def create(self, name: str, value: str) -> None:
        response = self.http.post(
            cm_path(self.namespace), json={"metadata": {"name": name}, "data": {"v": value}}
        )
        assert response.status_code == 201, response.text
        self.expected.append(("ADDED", name, int(response.json()["metadata"]["resourceVersion"])))

    def update(self, name: str, value: str) -> None:
        current = self.http.get(cm_path(self.namespace, name)).json()
        current["data"] = {"v": value}
        response = self.http.put(cm_path(self.namespace, name), json=current)
        assert response.status_code == 200, response.text
        rv = int(response.json()["metadata"]["resourceVersion"])
        self.expected.append(("MODIFIED", name, rv))

    def delete(self, name: str) -> None:
        response = self.http.delete(cm_path(self.namespace, name))
        assert response.status_code == 200, response.text
        self.expected.append(("DELETED", name, None))


def assert_matches(seen: list[Event], expected: list[tuple[str, str, int | None]]) -> None:
    """Same events in the same order, each once; deletes' revisions fall in their slot."""
    assert [(t, n) for t, n, _ in seen] == [(t, n) for t, n, _ in expected]
    for (_, _, got), (_, _, want) in zip(seen, expected, strict=True):
        if want is not None:
            assert got == want
    assert_strictly_increasing([rv for _, _, rv in seen])


def test_watch_from_revision_spans_a_restart(restartable: list[KapiServer]) -> None:
    first = restartable[0]
    namespace = "restart"
    with first.client() as http:
        make_namespace(http, namespace)
        start = list_rv(http, namespace)
        writer = Writer(http, namespace)

        # A watcher that is live when the server stops; it resumes after the restart.
        live: list[Object] = []
        before_count = 16
        live_reader = threading.Thread(
            target=read_watch,
            args=(first.url, namespace, start, lambda _: False, 60, live),
        )
        live_reader.start()

        for i in range(8):
            writer.create(f"c{i}", "0")
        for i in range(4):
            writer.update(f"c{i}", "1")
        for i in range(4, 8):
            writer.delete(f"c{i}")
        assert len(writer.expected) == before_count

        eventually(
            lambda: len(live) >= before_count,
            what=f"{before_count} events on the live watch",
            timeout=15,
            details=lambda: str(triples(live)),
        )
        assert len(live) == before_count, triples(live)

    assert first.stop() == 0, "kapi serve should exit cleanly on SIGTERM"
    live_reader.join(timeout=15)
    assert not live_reader.is_alive(), "the watch outlived its server"
    last_seen = int(live[-1]["object"]["metadata"]["resourceVersion"])

    second = start_server(first.data_dir)
    restartable.append(second)
    with second.client() as http:
        assert list_rv(http, namespace) >= last_seen, "the restart lost revisions"
        writer.http = http
        resumed: list[Object] = []
        after_count = 9
        resumed_reader = threading.Thread(
            target=read_watch,
            args=(second.url, namespace, last_seen, lambda e: len(e) >= after_count, 30, resumed),
        )
        resumed_reader.start()
        time.sleep(0.2)  # let the resumed watch open; it would replay anything it missed anyway

        for i in range(4):
            writer.create(f"d{i}", "0")
        writer.update("c0", "2")
        writer.delete("c1")
        writer.create("c4", "again")  # a name deleted before the restart comes back
        writer.update("d0", "1")
        writer.delete("d1")
        assert len(writer.expected) == before_count + after_count
        resumed_reader.join(timeout=30)
        assert not resumed_reader.is_alive()

        total = len(writer.expected)
        from_start = read_watch(second.url, namespace, start, lambda e: len(e) >= total)

    assert_matches(triples(from_start), writer.expected)
    assert_matches(triples(live) + triples(resumed), writer.expected)
    restart_boundary = writer.expected[before_count][2]
    assert restart_boundary is not None and restart_boundary > last_seen


# -- (c) concurrent creates ------------------------------------------------------------


def test_concurrent_creates_get_unique_revisions(kapi_server: KapiServer, namespace: str) -> None:
    clients, per_client = 16, 8
    with kapi_server.client() as http:
        start = list_rv(http, namespace)
    barrier = threading.Barrier(clients)

    def create_many(index: int) -> list[tuple[str, int]]:
        made = []
        with kapi_server.client() as http:
            barrier.wait(timeout=30)
            for j in range(per_client):
                name = f"c{index:02d}-{j}"
                response = http.post(cm_path(namespace), json={"metadata": {"name": name}})
                assert response.status_code == 201, response.text
                made.append((name, int(response.json()["metadata"]["resourceVersion"])))
        return made

    with ThreadPoolExecutor(max_workers=clients) as pool:
        created = [item for batch in pool.map(create_many, range(clients)) for item in batch]

    total = clients * per_client
    revisions = [rv for _, rv in created]
    assert len(set(revisions)) == total, "two creates share a resourceVersion"
    assert min(revisions) > start

    with kapi_server.client() as http:
        listed = http.get(cm_path(namespace)).json()
    stored = {i["metadata"]["name"]: int(i["metadata"]["resourceVersion"]) for i in listed["items"]}
    assert stored == dict(created)
    assert int(listed["metadata"]["resourceVersion"]) >= max(revisions)

    events = read_watch(kapi_server.url, namespace, start, lambda e: len(e) >= total)
    seen = triples(events)
    assert [t for t, _, _ in seen] == ["ADDED"] * total
    assert_strictly_increasing([rv for _, _, rv in seen])
    assert {(n, rv) for _, n, rv in seen} == set(created)
