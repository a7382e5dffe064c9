"""``kapi serve --workers 2``: two server processes behind one port, on one etcd.

The parent supervises; each worker is a full API server with an identity of
its own, listening on the same port with SO_REUSEPORT.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import KapiServer
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


@pytest.fixture
def ha(tmp_path: Path) -> Iterator[Cluster]:
    with cluster(tmp_path) as started:
        yield started


@pytest.fixture
def workers(ha: Cluster) -> KapiServer:
    return ha.start("w", "--workers", "2")


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


def test_both_workers_serve_one_port(ha: Cluster, workers: KapiServer, tmp_path: Path) -> None:
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


def test_workers_need_etcd(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kapi",
            "serve",
            "--workers",
            "2",
            "--port",
            "0",
            "--data-dir",
            str(tmp_path / "data"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "kapi: error: --workers > 1 requires --etcd-servers: the embedded SQLite store "
        "belongs to one process, the workers must share an etcd"
    )


def test_workers_stop_when_the_parent_is_sigkilled(workers: KapiServer) -> None:
    """No orphans: a worker whose supervisor vanished shuts itself down."""
    pids = two_workers(workers)
    assert workers.stop(signal.SIGKILL) == -signal.SIGKILL
    for pid in pids:
        eventually(lambda pid=pid: not alive(pid), what=f"worker {pid} gone")
