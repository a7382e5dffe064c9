"""Faults on real etcd: retryable Status, recovery without a restart, no acknowledged write lost.

Each test starts its own etcd (tests/helpers/etcd.py) and ``kapi serve
--etcd-servers`` processes on it, whatever ``--storage-backend`` the session
runs.  A writer thread creates ConfigMaps one after another and records every
answer; a write acknowledged with 2xx must be readable afterwards, with the
resourceVersion and data it was acknowledged with.  Every wait is bounded
(tests/helpers/wait.py, and an HTTP timeout no answer may reach: a request
that gets no answer within it counts as a hang and fails the test).
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, start_server
from tests.helpers.etcd import EtcdCluster, EtcdServer
from tests.helpers.tcp_proxy import TcpProxy
from tests.helpers.wait import eventually
from tests.integration.paths import cm_path

Object = dict[str, Any]

NS = "faults"
#: No answer may take this long: etcd calls give up after a few seconds (ServerTimeout).
ANSWER_BOUND = 30.0
#: The Status reasons upstream answers when its storage does not answer: all retryable.
RETRYABLE = {"ServerTimeout", "Timeout", "InternalError"}
TOO_OLD = "The resourceVersion for the provided watch is too old."


@dataclass
class Outcome:
    name: str
    #: The HTTP status; None when no answer came within ANSWER_BOUND (a hang, or the
    #: connection failed: then ``body`` says how).
    code: int | None
    body: Object | None
    retry_after: str | None


@dataclass
class Writer:
    """Creates ConfigMaps through one server until stopped; every answer is kept.

    With ``retry``, a 5xx answer carrying ``Retry-After`` is retried as client-go's
    rest client does (a create answered 409 on a retry whose first try may have
    been applied counts as acknowledged when the stored object is the one sent).
    """

    url: str
    prefix: str
    retry: bool = False
    outcomes: list[Outcome] = field(default_factory=list)
    #: name -> (resourceVersion, data) of every create acknowledged with 2xx.
    acked: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    stopping: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def start(self) -> Writer:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        assert self.thread is not None
        self.thread.join(timeout=ANSWER_BOUND * 2)
        assert not self.thread.is_alive(), "the writer is stuck"

    def failures(self) -> list[Outcome]:
        return [o for o in list(self.outcomes) if o.code is None or o.code >= 300]

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=ANSWER_BOUND) as http:
            i = 0
            while not self.stopping.is_set():
                name, data = f"{self.prefix}-{i}", {"i": str(i)}
                i += 1
                self._create(http, name, data)

    def _create(self, http: httpx.Client, name: str, data: dict[str, str]) -> None:
        body = {"metadata": {"name": name}, "data": data}
        retried = False
        while True:
            outcome = self._post(http, name, body)
            self.outcomes.append(outcome)
            if outcome.code is not None and outcome.code < 300:
                assert outcome.body is not None
                self.acked[name] = (outcome.body["metadata"]["resourceVersion"], data)
                return
            if retried and outcome.code == 409:
                stored = http.get(cm_path(NS, name))
                if stored.status_code == 200 and stored.json().get("data") == data:
                    self.acked[name] = (stored.json()["metadata"]["resourceVersion"], data)
                return
            if not (self.retry and outcome.retry_after) or self.stopping.is_set():
                return
            retried = True
            self.stopping.wait(min(float(outcome.retry_after), 1.0))

    def _post(self, http: httpx.Client, name: str, body: Object) -> Outcome:
        try:
            response = http.post(cm_path(NS), json=body)
        except httpx.TimeoutException:
            return Outcome(name, None, None, None)
        except httpx.TransportError as exc:  # the server is gone (SIGKILL)
            return Outcome(name, None, {"transport": repr(exc)}, None)
        try:
            decoded = response.json()
        except ValueError:
            decoded = {"unparsed": response.text}
        return Outcome(name, response.status_code, decoded, response.headers.get("retry-after"))


class WatchReader:
    """One watch of the namespace's ConfigMaps from a resourceVersion, read in a thread."""

    def __init__(self, url: str, resource_version: str) -> None:
        self.url, self.resource_version = url, resource_version
        self.events: list[Object] = []
        #: The answer when the watch was not opened (not a 200).
        self.refused = ""
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        params = {"watch": "1", "resourceVersion": self.resource_version, "timeoutSeconds": "600"}
        try:
            with httpx.stream(
                "GET",
                self.url + cm_path(NS),
                params=params,
                timeout=httpx.Timeout(10, read=None),
            ) as response:
                if response.status_code != 200:
                    self.refused = f"{response.status_code} {response.read()!r}"
                    return
                for line in response.iter_lines():
                    if line.strip():
                        self.events.append(json.loads(line))
        except httpx.HTTPError:
            pass
        finally:
            self.ended.set()

    def added(self) -> dict[str, str]:
        return {
            e["object"]["metadata"]["name"]: e["object"]["metadata"]["resourceVersion"]
            for e in list(self.events)
            if e["type"] == "ADDED"
        }

    def errors(self) -> list[Object]:
        return [e["object"] for e in list(self.events) if e["type"] == "ERROR"]


def make_namespace(server: KapiServer) -> str:
    """The test namespace; the resourceVersion of a list of it, empty."""
    with server.client() as http:
        response = http.post("/api/v1/namespaces", json={"metadata": {"name": NS}})
        assert response.status_code == 201, response.text
        listed = http.get(cm_path(NS))
        assert listed.status_code == 200, listed.text
        return str(listed.json()["metadata"]["resourceVersion"])


def stored(server: KapiServer) -> dict[str, tuple[str, dict[str, str]]]:
    with server.client() as http:
        response = http.get(cm_path(NS))
    assert response.status_code == 200, response.text
    return {
        item["metadata"]["name"]: (item["metadata"]["resourceVersion"], item.get("data", {}))
        for item in response.json()["items"]
    }


def assert_every_acknowledged_write_is_stored(
    server: KapiServer, acked: dict[str, tuple[str, dict[str, str]]]
) -> None:
    held = stored(server)
    lost = {name: want for name, want in acked.items() if held.get(name) != want}
    assert not lost, f"acknowledged writes lost or changed: {lost}"


def assert_retryable_status(outcome: Outcome) -> None:
    """A failure is upstream's Status, retryable, answered in time (not a hang)."""
    assert outcome.code is not None, f"no answer within {ANSWER_BOUND}s: {outcome}"
    assert outcome.code >= 500, outcome
    body = outcome.body or {}
    assert body.get("kind") == "Status", body
    assert body.get("reason") in RETRYABLE, body
    assert body.get("code") == outcome.code, body
    if body["reason"] == "ServerTimeout":
        assert body["message"] == (
            "The create operation against configmaps could not be completed at this time, "
            "please try again."
        ), body
        assert body["details"]["retryAfterSeconds"] == 2, body
        assert outcome.retry_after == "2", outcome


def serve_on_etcd(data_dir: Path, endpoints: list[str], *flags: str) -> KapiServer:
    return start_server(
        data_dir,
        "--etcd-servers",
        ",".join(endpoints),
        # kapi's own compaction would make what a watch sees depend on timing.
        "--etcd-compaction-interval",
        "0",
        *flags,
    )


@pytest.fixture
def etcd(tmp_path: Path) -> Iterator[EtcdServer]:
    member = EtcdServer.launch(tmp_path / "etcd")
    yield member
    member.close()


@pytest.fixture
def servers() -> Iterator[list[KapiServer]]:
    """kapi servers a test starts; each is stopped afterwards."""
    started: list[KapiServer] = []
    yield started
    for server in started:
        server.stop(signal.SIGKILL)


def test_etcd_stopped_under_load_answers_retryable_status_and_kapi_recovers_alone(
    tmp_path: Path, etcd: EtcdServer, servers: list[KapiServer]
) -> None:
    server = serve_on_etcd(tmp_path / "data", etcd.endpoints)
    servers.append(server)
    start = make_namespace(server)
    watch = WatchReader(server.url, start)
    writer = Writer(server.url, "w").start()
    try:
        # The watch must be open (it streams the first writes) before etcd goes.
        eventually(
            lambda: len(writer.acked) >= 5 and "w-0" in watch.added(),
            what="writes before the outage, seen by the watch",
            details=lambda: watch.refused or repr(list(watch.events)[-3:]),
        )
        etcd.stop()
        before_outage = dict(writer.acked)
        eventually(
            lambda: len(writer.failures()) >= 3,
            what="writes refused while etcd is down",
            timeout=120,
            details=lambda: repr(writer.outcomes[-3:]),
        )
        with server.client() as http:
            read = http.get(cm_path(NS, "w-0"), timeout=ANSWER_BOUND)
        assert read.status_code >= 500, read.text
        assert read.json()["kind"] == "Status"
        assert read.json()["reason"] in RETRYABLE, read.text

        etcd.start()
        etcd.wait_healthy()
        recovered = len(writer.acked)
        eventually(
            lambda: len(writer.acked) >= recovered + 5,
            what="writes acknowledged again once etcd is back (no kapi restart)",
            timeout=120,
            details=lambda: repr(writer.outcomes[-3:]),
        )
    finally:
        writer.stop()

    for failure in writer.failures():
        assert_retryable_status(failure)
    assert len(writer.acked) > len(before_outage)
    assert_every_acknowledged_write_is_stored(server, writer.acked)

    # The watch opened before the outage either carried on (every acknowledged
    # create, with its resourceVersion) or ended with upstream's 410, after
    # which a relist (above) has everything.
    def watched_everything() -> bool:
        added = watch.added()
        return all(added.get(name) == rv for name, (rv, _) in writer.acked.items())

    eventually(
        lambda: watched_everything() or watch.errors(),
        what="the open watch to resume, or to end with 410",
        details=lambda: repr(list(watch.events)[-3:]),
    )
    for error in watch.errors():
        assert (error["code"], error["reason"], error["message"]) == (410, "Expired", TOO_OLD)


def test_a_watch_that_lost_its_place_to_compaction_ends_with_410_and_a_relist_has_it_all(
    tmp_path: Path, etcd: EtcdServer, servers: list[KapiServer]
) -> None:
    """Server A reaches etcd through a proxy; while it is cut off, B writes and etcd is
    compacted.  A's open watch comes back to a compacted revision: upstream's etcd3
    watcher ends it with an ERROR event, 410 Expired, which clients relist on."""
    proxy = TcpProxy.start(etcd.client_port)
    try:
        prefix = "/faults/registry"
        a = serve_on_etcd(tmp_path / "a", [proxy.url], "--etcd-prefix", prefix)
        servers.append(a)
        b = serve_on_etcd(tmp_path / "b", etcd.endpoints, "--etcd-prefix", prefix)
        servers.append(b)
        start = make_namespace(a)
        watch = WatchReader(a.url, start)
        with a.client() as http:
            response = http.post(cm_path(NS), json={"metadata": {"name": "before"}})
            assert response.status_code == 201, response.text
        eventually(lambda: "before" in watch.added(), what="the watch to see the first write")

        proxy.cut()
        last = ""
        with b.client() as http:
            for i in range(3):
                response = http.post(cm_path(NS), json={"metadata": {"name": f"during-{i}"}})
                assert response.status_code == 201, response.text
                last = response.json()["metadata"]["resourceVersion"]
        etcd.etcdctl("compact", last)
        proxy.restore()

        eventually(watch.ended.is_set, what="the watch to end", timeout=60)
        assert [e["type"] for e in watch.events] == ["ADDED", "ERROR"]
        error = watch.events[-1]["object"]
        assert error == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": TOO_OLD,
            "reason": "Expired",
            "code": 410,
        }
        # The relist a client does then (on A, once it reaches etcd again) has everything.
        eventually(
            lambda: {"before", "during-0", "during-1", "during-2"} <= set(stored(a)),
            what="a relist on A to show B's writes",
        )
    finally:
        proxy.close()


def test_one_of_three_etcd_members_stopped_leaves_service_uninterrupted(
    tmp_path: Path, servers: list[KapiServer]
) -> None:
    cluster = EtcdCluster.launch(tmp_path / "etcd")
    try:
        # The member stopped is a follower kapi is connected to (first in its list):
        # kapi fails over to the others, and the two left keep quorum.
        leader = _leader(cluster)
        victim = next(m for m in cluster.members if m is not leader)
        others = [m.client_url for m in cluster.members if m is not victim]
        server = serve_on_etcd(tmp_path / "data", [victim.client_url, *others])
        servers.append(server)
        make_namespace(server)
        # A client-go client retries a 5xx that carries Retry-After: the one write in
        # flight on the member as it stops may be answered so (its outcome unknown).
        writer = Writer(server.url, "w", retry=True).start()
        reads: list[int] = []
        try:
            eventually(lambda: len(writer.acked) >= 5, what="writes before the stop")
            victim.stop()
            at_stop = len(writer.acked)

            def writes_and_reads_go_on() -> bool:
                with server.client() as http:
                    reads.append(http.get(cm_path(NS), timeout=ANSWER_BOUND).status_code)
                return len(writer.acked) >= at_stop + 20

            eventually(
                writes_and_reads_go_on,
                what="writes and reads with one member down",
                timeout=120,
                interval=0.1,
                details=lambda: repr(writer.outcomes[-3:]),
            )
        finally:
            writer.stop()
        assert reads and set(reads) == {200}, reads
        unanswered = [o for o in writer.failures() if not o.retry_after and o.code != 409]
        assert not unanswered, unanswered
        names = [f"w-{i}" for i in range(len(writer.acked))]
        assert set(names) <= set(writer.acked), "a create was given up"
        assert_every_acknowledged_write_is_stored(server, writer.acked)
    finally:
        cluster.close()


def test_a_sigkilled_kapi_leaves_the_other_serving_everything(
    tmp_path: Path, etcd: EtcdServer, servers: list[KapiServer]
) -> None:
    prefix = "/faults/registry"
    a = serve_on_etcd(tmp_path / "a", etcd.endpoints, "--etcd-prefix", prefix)
    b = serve_on_etcd(tmp_path / "b", etcd.endpoints, "--etcd-prefix", prefix)
    servers.extend((a, b))
    start = make_namespace(a)
    watch = WatchReader(b.url, start)
    on_a = Writer(a.url, "a").start()
    on_b = Writer(b.url, "b").start()
    try:
        eventually(lambda: len(on_a.acked) >= 10 and len(on_b.acked) >= 10, what="writes")
        a.stop(signal.SIGKILL)
        at_kill = len(on_b.acked)
        eventually(lambda: len(on_b.acked) >= at_kill + 10, what="B to go on writing")
    finally:
        on_a.stop()
        on_b.stop()
    assert a.process.returncode == -signal.SIGKILL
    assert not on_b.failures(), on_b.failures()[:3]
    acked = {**on_a.acked, **on_b.acked}
    assert_every_acknowledged_write_is_stored(b, acked)
    eventually(
        lambda: all(watch.added().get(n) == rv for n, (rv, _) in acked.items()),
        what="B's watch to show every acknowledged write, A's included",
        details=lambda: repr(list(watch.events)[-3:]),
    )


def _leader(cluster: EtcdCluster) -> EtcdServer:
    status = json.loads(cluster.etcdctl("endpoint", "status", "-w", "json"))
    leader_id = status[0]["Status"]["leader"]
    for entry in status:
        if entry["Status"]["header"]["member_id"] == leader_id:
            return next(m for m in cluster.members if m.client_url == entry["Endpoint"])
    raise AssertionError(f"no leader in {status}")
