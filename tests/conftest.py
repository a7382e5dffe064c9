"""Shared fixtures: a real ``kapi serve`` process on a free loopback port."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"


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

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def start_server(data_dir: Path, *extra: str) -> KapiServer:
    """Start ``kapi serve`` and wait until ``/readyz`` answers ok."""
    from kapi.server import free_port

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
                if probe.get("/readyz").status_code == 200:
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
