"""Shared fixtures: a real ``kapi serve`` process on a free loopback port.

The storage backend of the servers :func:`start_server` starts is the session's
choice: ``--storage-backend=sqlite`` (the default) or ``--storage-backend=etcd``,
also settable as ``KAPI_TEST_STORAGE_BACKEND``.  On etcd, one real etcd member
(tests/helpers/etcd.py) is started for the session on first use, and each
server gets an ``--etcd-prefix`` of its own, derived from its data directory:
servers never see each other's objects, and a restart on the same data
directory finds its objects again, as on SQLite.  Tests that are SQLite's alone
(they open ``kapi.db``) are marked ``sqlite_only`` and deselected on etcd.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"

#: The environment variable that chooses the backend when ``--storage-backend`` is not given.
BACKEND_ENV = "KAPI_TEST_STORAGE_BACKEND"
BACKENDS = ("sqlite", "etcd")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--storage-backend",
        choices=BACKENDS,
        default=os.environ.get(BACKEND_ENV) or "sqlite",
        help=f"storage of the kapi servers tests start (default: ${BACKEND_ENV} or sqlite)",
    )


class _Session:
    """The session's backend, and its etcd once a server needed one."""

    backend = "sqlite"
    etcd: Any = None  # tests.helpers.etcd.EtcdServer (imported late: it imports this module)
    workdir: Path | None = None


def pytest_configure(config: pytest.Config) -> None:
    backend = config.getoption("--storage-backend")
    if backend not in BACKENDS:  # the env var is not checked by argparse's choices
        raise pytest.UsageError(f"{BACKEND_ENV}={backend!r}: choose one of {', '.join(BACKENDS)}")
    _Session.backend = backend


def pytest_report_header(config: pytest.Config) -> str:
    return f"kapi storage backend: {_Session.backend}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On etcd, leave out the tests that are about the SQLite file itself."""
    if _Session.backend == "sqlite":
        return
    kept = [item for item in items if item.get_closest_marker("sqlite_only") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


def pytest_sessionfinish(session: pytest.Session) -> None:
    _stop_etcd()


def _stop_etcd() -> None:
    if _Session.etcd is not None:
        _Session.etcd.close()
        _Session.etcd = None
    if _Session.workdir is not None:
        shutil.rmtree(_Session.workdir, ignore_errors=True)
        _Session.workdir = None


def storage_backend() -> str:
    """``"sqlite"`` or ``"etcd"``: what :func:`start_server` runs on in this session."""
    return _Session.backend


def session_etcd() -> Any:
    """The session's etcd member (an ``EtcdServer``), started on first use."""
    if _Session.etcd is None:
        import tempfile

        from tests.helpers.etcd import EtcdServer

        workdir = Path(tempfile.mkdtemp(prefix="kapi-test-etcd-"))
        _Session.workdir = workdir
        _Session.etcd = EtcdServer.launch(workdir)
        atexit.register(_stop_etcd)
    return _Session.etcd


def etcd_prefix_for(data_dir: Path) -> str:
    """The ``--etcd-prefix`` of a server on the session's etcd: one per data directory."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return f"/kapi-test/{digest}/registry"


def backend_flags(data_dir: Path, extra: tuple[str, ...] = ()) -> list[str]:
    """The ``kapi serve`` flags that put a server on the session's backend.

    None on SQLite, and none when the caller chose its own etcd (``--etcd-servers``
    in ``extra``); a caller that gives only ``--etcd-prefix`` shares that prefix.
    """
    if _Session.backend != "etcd" or any(a.startswith("--etcd-servers") for a in extra):
        return []
    flags = ["--etcd-servers", ",".join(session_etcd().endpoints)]
    if not any(a.startswith("--etcd-prefix") for a in extra):
        flags += ["--etcd-prefix", etcd_prefix_for(data_dir)]
    return flags


def require_binary(name: str, path: str | None = None) -> str:
    """A binary the test needs: in CI its absence fails the test instead of skipping it.

    With ``path`` (a versioned kubectl), only that file will do: falling back to
    whatever ``name`` is on PATH would quietly test another version.
    """
    wanted = path or name
    found = (path if os.access(path, os.X_OK) else None) if path else shutil.which(name)
    if found:
        return found
    if IN_CI:
        pytest.fail(f"{wanted} is required in CI but is not installed")
    pytest.skip(f"{wanted} is not installed")
    raise AssertionError("unreachable")


@dataclass
class KapiServer:
    """A running server and how to reach it."""

    url: str
    data_dir: Path
    kubeconfig: Path
    process: subprocess.Popen[bytes]
    args: list[str]

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=10)

    @property
    def log_path(self) -> Path:
        """Where :func:`start_server` sends the server's output."""
        port = self.url.rsplit(":", 1)[1]
        return self.data_dir.parent / f"{self.data_dir.name}-{port}.log"

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def start_server(data_dir: Path, *extra: str, ready: str = "/readyz") -> KapiServer:
    """Start ``kapi serve`` on the session's backend and wait until ``ready`` answers ok
    (``/readyz/ping`` for a server that serves but is held back from being ready)."""
    from kapi.server import free_port

    backend = backend_flags(data_dir, extra)
    port = free_port()
    args = [
        sys.executable,
        "-m",
        "kapi",
        "serve",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        *backend,
        *extra,
    ]
    log = open(data_dir.parent / f"{data_dir.name}-{port}.log", "wb")  # noqa: SIM115
    process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    with httpx.Client(base_url=url, timeout=1) as probe:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"kapi serve exited with {process.returncode}: {log.name}")
            try:
                if probe.get(ready).status_code == 200:
                    return KapiServer(url, data_dir, data_dir / "kubeconfig", process, args)
            except httpx.TransportError:
                pass
            time.sleep(0.02)
    process.kill()
    raise RuntimeError("kapi serve did not become ready in 20s")


def serve_with_flags(
    tmp_path_factory: pytest.TempPathFactory, name: str, *flags: str
) -> Iterator[KapiServer]:
    """Body of a fixture for a server started with extra ``kapi serve`` flags."""
    server = start_server(tmp_path_factory.mktemp(name) / "data", *flags)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def kapi_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """One server shared by a session's read-mostly tests (each test uses its own namespace)."""
    server = start_server(tmp_path_factory.mktemp("kapi") / "data")
    yield server
    server.stop()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[KapiServer]:
    """A server of the test's own, for tests that restart it or need an empty store."""
    server = start_server(tmp_path / "data")
    yield server
    server.stop()


@pytest.fixture
def http(kapi_server: KapiServer) -> Iterator[httpx.Client]:
    """A plain HTTP client on the shared server, for wire-level assertions."""
    with kapi_server.client() as client:
        yield client


_counter = iter(range(1, 1_000_000))


@pytest.fixture
def namespace(kapi_server: KapiServer) -> str:
    """A new namespace in the shared server."""
    name = f"test-{os.getpid()}-{next(_counter)}"
    with kapi_server.client() as client:
        response = client.post(
            "/api/v1/namespaces",
            json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
        assert response.status_code == 201, response.text
    return name
