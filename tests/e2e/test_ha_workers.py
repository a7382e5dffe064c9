"""``kapi serve --workers 2``: two server processes behind one port, on one store.

The parent supervises; each worker is a full API server with an identity of
its own, listening on the same port with SO_REUSEPORT.  Every test runs with
the workers on a real etcd and on the embedded SQLite file, which they then
open shared.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import KapiServer, start_server
from tests.helpers.ha import (
    LISTEN,
    Cluster,
    alive,
    children,
    cluster,
    configmap,
    raw_connection,
    sockets,
)
from tests.helpers.kubectl import make_kubectl
from tests.helpers.wait import eventually

IDENTITY_LABEL = "apiserver.kubernetes.io/identity=kube-apiserver"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"


@pytest.fixture(params=["etcd", "sqlite"])
def workers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KapiServer]:
    """``kapi serve --workers 2`` on its own etcd, or on a SQLite file of its own."""
    if request.param == "etcd":
        ha: Cluster
        with cluster(tmp_path) as ha:
            yield ha.start("w", "--workers", "2")
        return
    server = start_server(tmp_path / "w", "--workers", "2", "--identity-hostname=kapi-w")
    try:
        yield server
    finally:
        server.stop()


def port_of(server: KapiServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


def two_workers(server: KapiServer) -> list[int]:
    """The pids of the parent's two workers, once both listen on the port (serve)."""
    port = port_of(server)

    def serving() -> list[int]:
        pids = children(server.process.pid)
        ready = len(pids) == 2 and all(sockets(pid, port, LISTEN) for pid in pids)
        return pids if ready else []

    return eventually(serving, what="two workers listening")


def test_both_workers_serve_one_port(workers: KapiServer, tmp_path: Path) -> None:
    pids = two_workers(workers)
    # Each worker is an API server of its own: one identity lease each, named after
    # its host name (kapi-w-0, kapi-w-1).
    kubectl = make_kubectl(workers, tmp_path)

    def hostnames() -> list[str]:
        leases = kubectl.json("get", "leases", "-n", "kube-system", "-l", IDENTITY_LABEL)
        return sorted(i["metadata"]["labels"]["kubernetes.io/hostname"] for i in leases["items"])

    eventually(
        lambda: hostnames() == ["kapi-w-0", "kapi-w-1"],
        what="both identity leases",
        details=lambda: repr(hostnames()),
    )
    # The kernel spreads connections over both: keep opening them until each worker
    # holds at least one (2^-n odds of any n landing on one worker alone).
    port = port_of(workers)
    held: list[socket.socket] = []
    try:

        def both_hold_one() -> bool:
            held.append(raw_connection(workers.url))
            return all(sockets(pid, port) > 0 for pid in pids) or len(held) >= 200

        eventually(both_hold_one, what="connections on both workers", interval=0)
        counts = {pid: sockets(pid, port) for pid in pids}
        assert all(counts.values()), counts
    finally:
        for sock in held:
            sock.close()
    # They share storage: what one answered, the other reads.
    kubectl.ok("create", "configmap", "shared", "--from-literal=k=v")
    for _ in range(10):
        assert kubectl.json("get", "configmap", "shared")["data"] == {"k": "v"}


def test_sigterm_to_the_parent_stops_both_workers(workers: KapiServer) -> None:
    pids = two_workers(workers)
    with workers.client() as http:
        assert (
            http.post("/api/v1/namespaces/default/configmaps", json=configmap("x")).status_code
            == 201
        )
    assert workers.stop(signal.SIGTERM) == 0
    for pid in pids:
        eventually(lambda pid=pid: not alive(pid), what=f"worker {pid} gone")


def test_a_dead_worker_leaves_the_other_serving(workers: KapiServer) -> None:
    pids = two_workers(workers)
    os.kill(pids[0], signal.SIGKILL)
    eventually(lambda: children(workers.process.pid) == [pids[1]], what="one worker left")
    assert workers.process.poll() is None
    for _ in range(20):  # new connections: all reach the one left
        with workers.client() as fresh:
            assert fresh.get("/readyz").status_code == 200
    with workers.client() as http:
        created = http.post("/api/v1/namespaces/default/configmaps", json=configmap("y"))
        assert created.status_code == 201, created.text
    # The parent ends when the last worker does, and says one failed.
    assert workers.stop(signal.SIGTERM) == 1


def test_a_watch_on_one_worker_sees_a_write_made_on_the_other(workers: KapiServer) -> None:
    pids = two_workers(workers)
    port = port_of(workers)
    path = "/api/v1/namespaces/default/configmaps"
    with (
        httpx.Client(base_url=workers.url, timeout=30) as http,
        http.stream("GET", path, params={"watch": "true"}) as watch,
    ):
        # The worker holding the watch's connection, then a connection to the other one.
        def watching() -> list[int]:
            return [pid for pid in pids if sockets(pid, port) == 1]

        (watcher,) = eventually(watching, what="the watch connection on one worker")
        (other,) = (pid for pid in pids if pid != watcher)
        held: list[socket.socket] = []
        try:

            def on_the_other() -> socket.socket | None:
                held.append(raw_connection(workers.url))
                return held[-1] if sockets(other, port) else None

            sock = eventually(on_the_other, what="a connection on the other worker", interval=0)
            assert sock is not None  # for the type checker: eventually returns a truthy value
            body = json.dumps(configmap("from-the-other", k="v")).encode()
            head = (
                f"POST {path} HTTP/1.1\r\nHost: kapi\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            )
            sock.sendall(head.encode() + body)
            assert sock.recv(4096).startswith(b"HTTP/1.1 201 "), "create on the other worker"
        finally:
            for held_sock in held:
                held_sock.close()
        for line in watch.iter_lines():
            event = json.loads(line)
            if event["object"]["metadata"]["name"] == "from-the-other":
                assert event["type"] == "ADDED"
                assert event["object"]["data"] == {"k": "v"}
                break


def test_one_worker_collects_garbage_for_both(workers: KapiServer) -> None:
    """The workers elect one garbage collector, as kube-controller-manager runs one."""
    two_workers(workers)
    base = "/api/v1/namespaces/default/configmaps"
    with workers.client() as http:
        owner = http.post(base, json=configmap("owner"))
        assert owner.status_code == 201, owner.text
        dependent = configmap("dependent")
        dependent["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "name": "owner",
                "uid": owner.json()["metadata"]["uid"],
            }
        ]
        assert http.post(base, json=dependent).status_code == 201

        def holder() -> str:
            lease = http.get(f"{LEASES}/kapi-garbage-collector")
            return lease.json()["spec"]["holderIdentity"] if lease.status_code == 200 else ""

        # Held by one worker, named by its identity (apiserver-<hash>_<uuid>).
        elected = eventually(holder, what="the garbage collector's lease")
        assert elected.startswith("apiserver-")
        assert http.delete(f"{base}/owner").status_code == 200
        eventually(
            lambda: http.get(f"{base}/dependent").status_code == 404,
            what="the dependent collected",
        )
        assert holder() == elected


def test_workers_stop_when_the_parent_is_sigkilled(workers: KapiServer) -> None:
    """No orphans: a worker whose supervisor vanished shuts itself down."""
    pids = two_workers(workers)
    assert workers.stop(signal.SIGKILL) == -signal.SIGKILL
    for pid in pids:
        eventually(lambda pid=pid: not alive(pid), what=f"worker {pid} gone")
