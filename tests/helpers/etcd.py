"""Real etcd servers for tests: one member or a three-member cluster on free loopback ports.

Each member runs ``/usr/bin/etcd`` (Debian's etcd-server) in a directory of its
own under the given ``workdir``, with its log beside its data.  Typical use::

    server = EtcdServer.launch(tmp_path)          # started and healthy
    store = await EtcdStorage.connect(server.endpoints)
    server.stop(); server.start()                 # a restart keeps the data
    server.close()                                # stop for good

    cluster = EtcdCluster.launch(tmp_path)        # three members, quorum healthy
    cluster.members[0].stop()                     # the other two keep serving
    cluster.close()

``launch`` calls :func:`tests.conftest.require_binary`, so a missing etcd
skips the test on a developer machine and fails it in CI.  Member ports are
chosen once and kept across ``stop``/``start``, so endpoints stay valid.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from kapi.server import free_port
from tests.conftest import require_binary

#: How long a member (or a cluster's quorum) may take to answer /health after a start.
START_TIMEOUT = 30.0
#: Raft timing of a single member.  etcd raises every lease TTL to at least 1.5
#: election timeouts, 2 s with the default 1 s: tests of one-second TTLs need a
#: shorter one (heartbeats on loopback are cheap; one member never elects again).
SINGLE_MEMBER_ARGS = ("--heartbeat-interval", "50", "--election-timeout", "500")


@dataclass
class EtcdServer:
    """One etcd member; ``endpoints`` is its client URL as a one-element list."""

    name: str
    data_dir: Path
    client_port: int
    peer_port: int
    #: ``name=peer-url`` of every member of the cluster (just this one when alone).
    initial_cluster: str = ""
    #: Shared by every member of one cluster.
    cluster_token: str = ""
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    #: Extra ``etcd`` flags, e.g. ``["--auto-compaction-retention", "1"]``.
    extra_args: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, workdir: Path, name: str = "etcd0", *extra_args: str) -> EtcdServer:
        """A member not yet started, with its own data directory and free ports."""
        data_dir = workdir / name
        data_dir.mkdir(parents=True, exist_ok=True)
        member = cls(name, data_dir, free_port(), free_port(), extra_args=list(extra_args))
        member.initial_cluster = f"{name}={member.peer_url}"
        member.cluster_token = f"kapi-test-{os.getpid()}-{member.client_port}"
        return member

    @classmethod
    def launch(cls, workdir: Path, name: str = "etcd0", *extra_args: str) -> EtcdServer:
        """A single-member etcd, started and healthy (TTLs down to one second)."""
        member = cls.create(workdir, name, *SINGLE_MEMBER_ARGS, *extra_args)
        member.start()
        member.wait_healthy()
        return member

    @property
    def client_url(self) -> str:
        return f"http://127.0.0.1:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    @property
    def endpoints(self) -> list[str]:
        return [self.client_url]

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start the member (again); returns at once, see :meth:`wait_healthy`."""
        if self.running:
            return
        binary = require_binary("etcd")
        args = [
            binary,
            "--name",
            self.name,
            "--data-dir",
            str(self.data_dir / "data"),
            "--listen-client-urls",
            self.client_url,
            "--advertise-client-urls",
            self.client_url,
            "--listen-peer-urls",
            self.peer_url,
            "--initial-advertise-peer-urls",
            self.peer_url,
            "--initial-cluster",
            self.initial_cluster,
            "--initial-cluster-token",
            self.cluster_token,
            # Ignored by etcd when the data directory already holds a member.
            "--initial-cluster-state",
            "new",
            "--log-outputs",
            "stderr",
            *self.extra_args,
        ]
        log = open(self.data_dir / "etcd.log", "ab")  # noqa: SIM115
        try:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        finally:
            log.close()

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop the member and wait until it has exited (the data stays)."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGCONT)  # a paused member could not act on sig
        process.send_signal(sig)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def kill(self) -> None:
        """SIGKILL the member (no clean shutdown)."""
        self.stop(signal.SIGKILL)

    def pause(self) -> None:
        """SIGSTOP the member: its connections stay open but nothing answers."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT a paused member."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)

    def healthy(self) -> bool:
        """Whether ``/health`` answers that this member serves (it has a leader)."""
        try:
            response = httpx.get(self.client_url + "/health", timeout=1)
        except httpx.HTTPError:
            return False
        return response.status_code == 200 and '"health":"true"' in response.text.replace(" ", "")

    def wait_healthy(self, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"etcd {self.name} exited: see {self.data_dir / 'etcd.log'}")
            if self.healthy():
                return
            time.sleep(0.05)
        raise RuntimeError(f"etcd {self.name} not healthy after {timeout}s: {self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = (self.data_dir / "etcd.log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def etcdctl(self, *args: str) -> str:
        """Run ``etcdctl`` (API v3) against this member and return its output."""
        return etcdctl(self.endpoints, *args)

    def close(self) -> None:
        self.stop()


@dataclass
class EtcdCluster:
    """Three (or ``size``) members on loopback; ``endpoints`` lists every client URL."""

    members: list[EtcdServer]

    @classmethod
    def launch(cls, workdir: Path, size: int = 3, *extra_args: str) -> EtcdCluster:
        members = [EtcdServer.create(workdir, f"etcd{i}", *extra_args) for i in range(size)]
        initial = ",".join(f"{m.name}={m.peer_url}" for m in members)
        for member in members:
            member.initial_cluster = initial
            member.cluster_token = members[0].cluster_token
        cluster = cls(members)
        try:
            for member in members:
                member.start()
            for member in members:
                member.wait_healthy()
        except BaseException:
            cluster.close()
            raise
        return cluster

    @property
    def endpoints(self) -> list[str]:
        return [m.client_url for m in self.members]

    def etcdctl(self, *args: str) -> str:
        return etcdctl(self.endpoints, *args)

    def close(self) -> None:
        for member in self.members:
            member.stop()


def etcdctl(endpoints: list[str], *args: str) -> str:
    """``etcdctl --endpoints=... args`` (API v3); fails the call on a non-zero exit."""
    binary = require_binary("etcdctl")
    result = subprocess.run(
        [binary, "--endpoints", ",".join(endpoints), "--command-timeout=10s", *args],
        env={**os.environ, "ETCDCTL_API": "3"},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"etcdctl {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout
