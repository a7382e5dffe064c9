"""``kapi serve --etcd-servers``: a real kapi on a real etcd, driven by kubectl.

The objects must be in etcd, under the configured prefix, at upstream's keys;
the ``etcd`` health check must follow etcd going away and coming back; an etcd
that never answers makes ``kapi serve`` give up and exit 1, saying why.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kapi.controllers.identity import apiserver_id
from kapi.server import free_port
from tests.conftest import KapiServer, start_server
from tests.helpers.etcd import EtcdServer
from tests.helpers.kubectl import Kubectl, configmap, make_kubectl
from tests.helpers.wait import eventually


@pytest.fixture(scope="module")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EtcdServer]:
    server = EtcdServer.launch(tmp_path_factory.mktemp("etcd"))
    yield server
    server.close()


@pytest.fixture(scope="module")
def on_etcd(etcd: EtcdServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    server = start_server(
        tmp_path_factory.mktemp("on-etcd") / "data",
        "--etcd-servers",
        etcd.client_url,
        "--etcd-prefix",
        "/kapi-test",
        "--identity-hostname",
        "etcd-test-host",
    )
    yield server
    server.stop()


@pytest.fixture
def kubectl(on_etcd: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(on_etcd, tmp_path)


def _etcd_value(etcd: EtcdServer, key: str) -> dict[str, object] | None:
    out = etcd.etcdctl("get", key, "--print-value-only")
    return json.loads(out) if out.strip() else None


def test_objects_live_in_etcd_under_the_prefix(
    etcd: EtcdServer, on_etcd: KapiServer, kubectl: Kubectl, tmp_path: Path
) -> None:
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(configmap("in-etcd", {"k": "v"}))
    kubectl.ok("create", "-n", "default", "-f", str(manifest))
    got = kubectl.json("get", "-n", "default", "cm", "in-etcd", "-o", "json")
    assert got["data"] == {"k": "v"}

    stored = _etcd_value(etcd, "/kapi-test/configmaps/default/in-etcd")
    assert stored is not None
    assert stored["data"] == {"k": "v"}
    # The logical /registry root is mapped to the prefix: nothing under /registry itself.
    assert etcd.etcdctl("get", "/registry/", "--prefix", "--keys-only").strip() == ""
    # The resourceVersion is etcd's revision of the key.
    revision = json.loads(
        etcd.etcdctl("get", "/kapi-test/configmaps/default/in-etcd", "-w", "json")
    )["kvs"][0]["mod_revision"]
    assert got["metadata"]["resourceVersion"] == str(revision)
    # The SQLite store was not opened.
    assert not (on_etcd.data_dir / "kapi.db").exists()
    kubectl.ok("delete", "-n", "default", "cm", "in-etcd")
    assert _etcd_value(etcd, "/kapi-test/configmaps/default/in-etcd") is None


def test_kubectl_watch_on_etcd(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(configmap("watched"))
    kubectl.ok("create", "-n", "default", "-f", str(manifest))
    args = ("-n", "default", "get", "cm", "watched", "-w", "--output-watch-events", "-o", "json")
    with kubectl.watch(*args) as watch:
        watch.wait_for(lambda _: len(watch.objects()) >= 1, "the ADDED event")
        kubectl.ok(
            "-n", "default", "patch", "cm", "watched", "--type=merge", "-p", '{"data":{"a":"2"}}'
        )
        watch.wait_for(lambda _: len(watch.objects()) >= 2, "the MODIFIED event")
        kubectl.ok("-n", "default", "delete", "cm", "watched")
        watch.wait_for(lambda _: len(watch.objects()) >= 3, "the DELETED event")
        events = watch.objects()
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    assert [e["object"]["data"]["a"] for e in events] == ["1", "2", "2"]


def test_identity_lease_is_in_etcd(etcd: EtcdServer, on_etcd: KapiServer) -> None:
    name = apiserver_id("etcd-test-host")
    stored = eventually(
        lambda: _etcd_value(etcd, f"/kapi-test/leases/kube-system/{name}"),
        what="the identity lease in etcd",
    )
    assert stored["metadata"]["labels"] == {  # type: ignore[index]
        "apiserver.kubernetes.io/identity": "kube-apiserver",
        "kubernetes.io/hostname": "etcd-test-host",
    }


def test_health_follows_etcd(tmp_path: Path) -> None:
    """A server of its own (stopping etcd must not disturb the module's server)."""
    etcd = EtcdServer.launch(tmp_path / "etcd")
    server = start_server(tmp_path / "data", "--etcd-servers", etcd.client_url)
    try:
        with server.client() as client:
            assert client.get("/readyz").status_code == 200
            etcd.stop()

            def failing() -> str | None:
                response = client.get("/readyz", params={"verbose": ""})
                return response.text if response.status_code == 500 else None

            body = eventually(failing, what="/readyz to fail while etcd is down")
            lines = body.splitlines()
            assert "[-]etcd failed: reason withheld" in lines
            assert "[+]ping ok" in lines
            assert lines[-1] == "readyz check failed"
            livez = client.get("/livez/etcd")
            assert (livez.status_code, livez.text) == (
                500,
                "[-]etcd failed: reason withheld\nlivez check failed\n",
            )

            etcd.start()
            etcd.wait_healthy()
            eventually(
                lambda: client.get("/readyz").status_code == 200,
                what="/readyz to pass again once etcd is back",
            )
    finally:
        server.stop()
        etcd.close()


def test_unreachable_etcd_at_start_up_exits_1(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kapi",
            "serve",
            "--port",
            "0",
            "--data-dir",
            str(tmp_path / "data"),
            "--etcd-servers",
            url,
            "--etcd-startup-timeout",
            "1s",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"Error: unable to reach etcd at {url} within 1s: "), result.stderr
    assert "Traceback" not in result.stderr
