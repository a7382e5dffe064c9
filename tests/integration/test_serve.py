"""``kapi serve`` and ``kapi kubeconfig`` as a user runs them."""

from __future__ import annotations

import email.utils
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import KapiServer, start_server
from tests.helpers.kubectl import kubectl_binary


def _kapi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kapi", *args], capture_output=True, text=True, timeout=30
    )


def test_serve_writes_a_kubeconfig_that_kubectl_uses(tmp_path: Path) -> None:
    kubectl = kubectl_binary()
    server = start_server(tmp_path / "data")
    try:
        printed = _kapi("kubeconfig", "--data-dir", str(server.data_dir))
        assert printed.returncode == 0
        config = yaml.safe_load(printed.stdout)
        assert config["clusters"][0]["cluster"]["server"] == server.url
        assert printed.stdout == server.kubeconfig.read_text()
        result = subprocess.run(
            [kubectl, "get", "ns", "-o", "name"],
            env={
                "KUBECONFIG": str(server.kubeconfig),
                "KUBECACHEDIR": str(tmp_path / "cache"),
                "HOME": str(tmp_path),
            },
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == [
            "namespace/default",
            "namespace/kube-node-lease",
            "namespace/kube-public",
            "namespace/kube-system",
        ]
    finally:
        server.stop()


def test_kubeconfig_without_a_server_is_an_error(tmp_path: Path) -> None:
    result = _kapi("kubeconfig", "--data-dir", str(tmp_path / "nothing"))
    assert result.returncode == 1
    assert "start `kapi serve` first" in result.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_clean_shutdown_keeps_every_write(tmp_path: Path, sig: signal.Signals) -> None:
    data_dir = tmp_path / "data"
    server = start_server(data_dir)
    with server.client() as client:
        versions = []
        for i in range(20):
            response = client.post(
                "/api/v1/namespaces/default/configmaps",
                json={"metadata": {"name": f"cm-{i}"}, "data": {"i": str(i)}},
            )
            assert response.status_code == 201, response.text
            versions.append(response.json()["metadata"]["resourceVersion"])
    assert server.stop(sig) == 0
    restarted = start_server(data_dir)
    try:
        with restarted.client() as client:
            listed = client.get("/api/v1/namespaces/default/configmaps").json()
        by_name = {item["metadata"]["name"]: item for item in listed["items"]}
        assert len(by_name) == 20
        for i, rv in enumerate(versions):
            assert by_name[f"cm-{i}"]["metadata"]["resourceVersion"] == rv
            assert by_name[f"cm-{i}"]["data"] == {"i": str(i)}
    finally:
        restarted.stop()


def test_response_headers_are_kube_apiservers(kapi_server: KapiServer) -> None:
    """``Date`` as Go's net/http writes it, and no ``Server`` header (uvicorn adds one)."""
    with kapi_server.client() as client:
        for path in ("/api/v1/namespaces/default", "/version", "/api/v1/namespaces/no/pods/x"):
            response = client.get(path)
            assert "server" not in response.headers, path
            assert email.utils.parsedate_to_datetime(response.headers["date"]).tzinfo, path


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--feature-gates=NoSuchGate=true", "unrecognized feature gate: NoSuchGate"),
        (
            "--feature-gates=WarningHeaders=false",
            "cannot set feature gate WarningHeaders to false, feature is locked to true",
        ),
        (
            "--emulated-version=1.29 --feature-gates=CustomResourceFieldSelectors=true",
            "cannot set feature gate CustomResourceFieldSelectors to true, "
            "feature is PreAlpha at emulated version 1.29",
        ),
        ("--emulated-version=one", "invalid Kubernetes version 'one'"),
        ("--emulated-version=1.99", "emulated version 1.99 is newer than kapi's"),
    ],
)
def test_bad_flags_are_rejected(tmp_path: Path, flag: str, message: str) -> None:
    result = _kapi("serve", "--port", "0", "--data-dir", str(tmp_path), *flag.split())
    assert result.returncode == 2
    assert message in result.stderr
