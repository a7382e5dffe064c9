"""Several ``kapi serve`` processes on one real etcd, for the HA end-to-end tests.

Each server is started by :func:`tests.conftest.start_server` with
``--etcd-servers`` and an identity host name of its own, exactly as an
operator would start several API servers on one etcd.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import KapiServer, start_server
from tests.helpers.etcd import EtcdServer


@dataclass
class Cluster:
    """One etcd and the kapi servers on it (``servers[0]`` is "A", and so on)."""

    workdir: Path
    etcd: EtcdServer
    servers: list[KapiServer] = field(default_factory=list)

    def start(self, name: str, *flags: str, ready: str = "/readyz") -> KapiServer:
        """Start one more server on this etcd (data dir and log under ``workdir``);
        ``ready`` is the path awaited, as :func:`~tests.conftest.start_server`'s."""
        server = start_server(
            self.workdir / name,
            f"--etcd-servers={self.etcd.client_url}",
            f"--identity-hostname=kapi-{name}",
            *flags,
            ready=ready,
        )
        self.servers.append(server)
        return server

    def etcd_get(self, key: str) -> Any:
        """The JSON value etcd holds at ``key``, or ``None`` when there is none."""
        out = self.etcd.etcdctl("get", key, "--print-value-only")
        return json.loads(out) if out.strip() else None

    def etcd_keys(self, prefix: str) -> list[str]:
        """The keys etcd holds under ``prefix``."""
        out = self.etcd.etcdctl("get", prefix, "--prefix", "--keys-only")
        return [line for line in out.splitlines() if line]

    def close(self) -> None:
        for server in self.servers:
            server.stop()
        self.etcd.close()


@contextmanager
def cluster(workdir: Path, *names: str) -> Iterator[Cluster]:
    """etcd and one server per name, all stopped when the block exits."""
    result = Cluster(workdir, EtcdServer.launch(workdir))
    try:
        for name in names:
            result.start(name)
        yield result
    finally:
        result.close()


def namespace_body(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    if spec:
        body["spec"] = spec
    return body


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def create_namespace(http: httpx.Client, name: str, **spec: Any) -> None:
    response = http.post("/api/v1/namespaces", json=namespace_body(name, **spec))
    assert response.status_code == 201, response.text


def raw_connection(url: str) -> socket.socket:
    """A kept-alive connection to ``url`` that has been answered once (so it is accepted).

    Any complete answer will do: a worker still registering its storage versions
    fails ``/healthz`` (a post-start hook), and the connection is no less accepted.
    """
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    answer = b""
    while not _answered(answer):
        chunk = sock.recv(4096)
        assert chunk, f"the connection closed before /healthz answered: {answer!r}"
        answer += chunk
    return sock


def _answered(answer: bytes) -> bool:
    """Whether ``answer`` holds a whole response to GET /healthz (its body is short)."""
    head, sep, body = answer.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return bool(body)


#: /proc/net/tcp's states.
ESTABLISHED, LISTEN = "01", "0A"


def sockets(pid: int, port: int, state: str = ESTABLISHED) -> int:
    """How many TCP sockets on local ``port`` in ``state`` process ``pid`` holds."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, found, inode = fields[1], fields[3], fields[9]
            if found == state and int(local.rsplit(":", 1)[1], 16) == port:
                inodes.add(inode)
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = str(fd.readlink())
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            count += 1
    return count


def children(pid: int) -> list[int]:
    """The pids of ``pid``'s child processes (from /proc)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
