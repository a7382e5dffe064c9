"""``kapi storage-versions`` against a real server, on StorageVersion objects and identity
leases the test writes itself through the API (as three servers mid-upgrade would).

The server may register its own StorageVersions too; the tests read only the rows and
columns they wrote, so they hold with or without that registration.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from kapi.cli.commands.storage_versions import API_OFF_MESSAGE
from tests.conftest import KapiServer, serve_with_flags, start_server
from tests.helpers.kapi_cli import COMMAND_TIMEOUT, Kapi, make_kapi

COLLECTION = "/apis/internal.apiserver.k8s.io/v1alpha1/storageversions"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
#: Three servers mid-upgrade: the first still writes PodDisruptionBudgets as v1beta1.
SERVERS = {"apiserver-svcli-1": "svcli-h1", "apiserver-svcli-2": "svcli-h2"}
UNNAMED = "apiserver-svcli-3"  # its lease carries no hostname label


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "svcli")


@pytest.fixture(scope="module")
def upgrade(server: KapiServer) -> dict[str, Any]:
    """The leases and StorageVersions of the upgrade; returns what was stored."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    with server.client() as http:
        for name, hostname in [*SERVERS.items(), (UNNAMED, None)]:
            labels = {"apiserver.kubernetes.io/identity": "kube-apiserver"}
            if hostname:
                labels["kubernetes.io/hostname"] = hostname
            lease = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": name, "labels": labels},
                "spec": {"holderIdentity": name, "leaseDurationSeconds": 3600, "renewTime": now},
            }
            response = http.post(LEASES, json=lease)
            assert response.status_code == 201, response.text
        stored = {
            "svcli.widgets": _status(
                ("apiserver-svcli-1", "svcli/v1beta1", ["svcli/v1beta1", "svcli/v1"]),
                ("apiserver-svcli-2", "svcli/v1", ["svcli/v1", "svcli/v1beta1"]),
                (UNNAMED, "svcli/v1", ["svcli/v1"]),
            ),
            "svcli.gadgets": _status(
                ("apiserver-svcli-1", "svcli/v1", ["svcli/v1"]),
                ("apiserver-svcli-2", "svcli/v1", ["svcli/v1"]),
            ),
        }
        for name, status in stored.items():
            created = http.post(
                COLLECTION,
                json={
                    "apiVersion": "internal.apiserver.k8s.io/v1alpha1",
                    "kind": "StorageVersion",
                    "metadata": {"name": name},
                },
            )
            assert created.status_code == 201, created.text
            obj = created.json()
            obj["status"] = status
            updated = http.put(f"{COLLECTION}/{name}/status", json=obj)
            assert updated.status_code == 200, updated.text
    return stored


def _status(*entries: tuple[str, str, list[str]]) -> dict[str, Any]:
    status: dict[str, Any] = {
        "storageVersions": [
            {
                "apiServerID": sid,
                "encodingVersion": encoding,
                "decodableVersions": decodable,
                "servedVersions": decodable,
            }
            for sid, encoding, decodable in entries
        ]
    }
    encodings = {encoding for _, encoding, _ in entries}
    if len(encodings) == 1:
        status["commonEncodingVersion"] = encodings.pop()
    return status


@pytest.fixture
def kapi(server: KapiServer, upgrade: dict[str, Any]) -> Kapi:
    return make_kapi(server)


def _cells(lines: list[str]) -> dict[str, dict[str, str]]:
    """Each row by its RESOURCE, as header -> cell (no cell holds a space)."""
    header = lines[0].split()
    return {row.split()[0]: dict(zip(header, row.split(), strict=True)) for row in lines[1:]}


def test_table_shows_each_server_by_hostname_and_whether_they_agree(kapi: Kapi) -> None:
    rows = _cells(kapi.ok("storage-versions").out_lines)
    assert {k: rows["svcli.widgets"][k] for k in _MINE} == {
        "RESOURCE": "svcli.widgets",
        "COMMON": "<none>",
        "AGREE": "NO",
        "svcli-h1": "svcli/v1beta1",
        "svcli-h2": "svcli/v1",
        UNNAMED: "svcli/v1",
    }
    assert {k: rows["svcli.gadgets"][k] for k in _MINE} == {
        "RESOURCE": "svcli.gadgets",
        "COMMON": "svcli/v1",
        "AGREE": "yes",
        "svcli-h1": "svcli/v1",
        "svcli-h2": "svcli/v1",
        UNNAMED: "-",
    }


_MINE = ("RESOURCE", "COMMON", "AGREE", "svcli-h1", "svcli-h2", UNNAMED)


def test_only_disagreeing(kapi: Kapi) -> None:
    result = kapi.ok("storage-versions", "--only-disagreeing")
    rows = _cells(result.out_lines)
    assert "svcli.widgets" in rows
    assert "svcli.gadgets" not in rows
    assert {row["AGREE"] for row in rows.values()} == {"NO"}


def test_wide_names_ids_and_what_all_decode(kapi: Kapi) -> None:
    lines = kapi.ok("storage-versions", "-o", "wide").out_lines
    header = lines[0]
    assert "svcli-h1/apiserver-svcli-1" in header.split()
    assert header.endswith("DECODABLE BY ALL")
    widgets = next(line for line in lines if line.startswith("svcli.widgets "))
    assert widgets.endswith(" svcli/v1")


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_data_output(kapi: Kapi, output: str) -> None:
    text = kapi.ok("storage-versions", "-o", output).stdout
    data = json.loads(text) if output == "json" else yaml.safe_load(text)
    servers = {s["apiServerID"]: s["name"] for s in data["servers"]}
    assert {sid: servers[sid] for sid in [*SERVERS, UNNAMED]} == {**SERVERS, UNNAMED: UNNAMED}
    resources = {r["name"]: r for r in data["resources"]}
    assert resources["svcli.widgets"] == {
        "name": "svcli.widgets",
        "commonEncodingVersion": None,
        "agree": False,
        "encodingVersions": {
            "svcli-h1": "svcli/v1beta1",
            "svcli-h2": "svcli/v1",
            UNNAMED: "svcli/v1",
        },
        "decodableByAll": ["svcli/v1"],
    }
    assert resources["svcli.gadgets"]["agree"] is True
    assert resources["svcli.gadgets"]["commonEncodingVersion"] == "svcli/v1"


def test_colours_disagreement_on_a_terminal_only(kapi: Kapi) -> None:
    on_terminal = _stdout_on_terminal(kapi, "storage-versions", "--only-disagreeing")
    assert b"\x1b[31;1mNO\x1b[0m" in on_terminal
    assert b"\x1b[33msvcli/v1beta1\x1b[0m" in on_terminal
    assert b"\x1b[" not in _stdout_on_terminal(
        kapi, "storage-versions", "--only-disagreeing", NO_COLOR="1"
    )
    assert "\x1b[" not in kapi.ok("storage-versions").stdout


def _stdout_on_terminal(kapi: Kapi, *args: str, **env: str) -> bytes:
    """Run with stdout on a pseudo-terminal and return what the terminal received."""
    main, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "kapi", *args],
        env={**kapi.env, "TERM": "xterm", **env},
        stdout=terminal,
        stderr=subprocess.DEVNULL,
    )
    os.close(terminal)
    received = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # EIO: the child has exited and everything it wrote is read
            break
        if not chunk:
            break
        received += chunk
    os.close(main)
    assert process.wait(timeout=COMMAND_TIMEOUT) == 0
    return received


def test_the_objects_are_unchanged_by_the_command(
    kapi: Kapi, server: KapiServer, upgrade: dict[str, Any]
) -> None:
    kapi.ok("storage-versions")
    with server.client() as http:
        for name, status in upgrade.items():
            assert http.get(f"{COLLECTION}/{name}").json()["status"] == status


def test_api_off_is_an_error(tmp_path: Path) -> None:
    off = start_server(tmp_path / "data", "--feature-gates", "StorageVersionAPI=false")
    try:
        with off.client() as http:
            assert http.get(COLLECTION).status_code == 404
        result = make_kapi(off).run("storage-versions")
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr == f"error: {API_OFF_MESSAGE}\n"
    finally:
        off.stop()


def test_nothing_disagreeing_says_so(tmp_path: Path) -> None:
    # One server alone always agrees with itself, registered or not.
    server = start_server(tmp_path / "data")
    try:
        result = make_kapi(server).run("storage-versions", "--only-disagreeing")
        assert (result.returncode, result.stdout) == (0, "")
        assert result.stderr == "No disagreeing storage versions found\n"
    finally:
        server.stop()
