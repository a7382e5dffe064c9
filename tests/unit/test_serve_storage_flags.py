"""``kapi serve``'s storage and identity flags, and the ``etcd`` health check."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kapi.cli import main as cli
from kapi.server import APIServer, ServerConfig
from kapi.storage.interface import StorageUnavailableError


def _config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *flags: str
) -> tuple[int, ServerConfig | None]:
    seen: list[ServerConfig] = []

    def fake_serve(config: ServerConfig) -> int:
        seen.append(config)
        return 0

    monkeypatch.setattr(cli, "serve", fake_serve)
    code = cli.main(["serve", "--port", "1", "--data-dir", str(tmp_path / "d"), *flags])
    return code, (seen[0] if seen else None)


def test_defaults_keep_sqlite_and_upstreams_values(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    code, config = _config(monkeypatch, tmp_path)
    assert code == 0 and config is not None
    assert config.etcd_servers == ()
    assert config.etcd_prefix == "/registry"
    assert config.compaction_interval == 300.0
    assert config.etcd_healthcheck_timeout == 2.0
    assert config.identity_hostname == ""
    assert config.identity_lease_duration_seconds == 3600
    assert config.identity_lease_renew_interval_seconds == 10


def test_etcd_flags(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    code, config = _config(
        monkeypatch,
        tmp_path,
        "--etcd-servers",
        "http://127.0.0.1:2379,http://127.0.0.2:2379",
        "--etcd-servers=http://127.0.0.3:2379",
        "--etcd-prefix",
        "/kapi-a",
        "--etcd-compaction-interval",
        "1m30s",
        "--etcd-healthcheck-timeout",
        "500ms",
        "--etcd-startup-timeout",
        "5s",
        "--identity-hostname",
        "node-a",
        "--identity-lease-duration-seconds",
        "30",
        "--identity-lease-renew-interval-seconds",
        "1",
    )
    assert code == 0 and config is not None
    assert config.etcd_servers == (
        "http://127.0.0.1:2379",
        "http://127.0.0.2:2379",
        "http://127.0.0.3:2379",
    )
    assert config.etcd_prefix == "/kapi-a"
    assert config.compaction_interval == 90.0
    assert config.etcd_healthcheck_timeout == 0.5
    assert config.etcd_startup_timeout == 5.0
    assert config.identity_hostname == "node-a"
    assert config.identity_lease_duration_seconds == 30
    assert config.identity_lease_renew_interval_seconds == 1


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (("--etcd-compaction-interval", "0"), 0.0),
        (("--compaction-interval", "0.5"), 0.5),
        (("--compaction-interval=2",), 2.0),
    ],
)
def test_compaction_interval_spellings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flags: tuple[str, ...], expected: float
) -> None:
    code, config = _config(monkeypatch, tmp_path, *flags)
    assert code == 0 and config is not None
    assert config.compaction_interval == expected


def test_a_bad_compaction_interval_is_pflags_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _config(monkeypatch, tmp_path, "--etcd-compaction-interval", "5q")
    assert exit_info.value.code == 2
    assert 'invalid argument "5q" for "--etcd-compaction-interval" flag' in capsys.readouterr().err


def test_identity_lease_flags_must_be_positive(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, config = _config(monkeypatch, tmp_path, "--identity-lease-duration-seconds", "0")
    assert (code, config) == (1, None)
    assert capsys.readouterr().err == (
        "Error: --identity-lease-duration-seconds should be a positive number, "
        "but value '0' provided\n"
    )
    code, config = _config(
        monkeypatch,
        tmp_path,
        "--identity-lease-duration-seconds=-1",
        "--identity-lease-renew-interval-seconds=0",
    )
    assert (code, config) == (1, None)
    assert capsys.readouterr().err == (
        "Error: [--identity-lease-duration-seconds should be a positive number, but value "
        "'-1' provided, --identity-lease-renew-interval-seconds should be a positive number, "
        "but value '0' provided]\n"
    )


def test_etcd_check_reads_storage_and_withholds_the_reason(tmp_path: Path) -> None:
    async def scenario() -> dict[str, tuple[int, str]]:
        server = APIServer(ServerConfig(data_dir=tmp_path, etcd_healthcheck_timeout=0.05))
        await server.start()
        try:
            assert server.storage is not None

            async def unreachable() -> int:
                raise StorageUnavailableError("etcd at http://127.0.0.1:1 does not answer")

            server.storage.current_revision = unreachable  # type: ignore[method-assign]
            answers = {kind: await server.health[kind].run({"verbose": ""}) for kind in ("readyz",)}
            answers["livez/etcd"] = await server.health["livez"].run({}, "etcd")

            async def hangs() -> int:
                await asyncio.sleep(30)
                return 0

            server.storage.current_revision = hangs  # type: ignore[method-assign]
            await asyncio.sleep(0.05)  # past the check's rate limit (half its timeout)
            answers["healthz"] = await server.health["healthz"].run({})
            del server.storage.current_revision
        finally:
            await server.stop()
        return answers

    answers = asyncio.run(scenario())
    code, body = answers["readyz"]
    assert code == 500
    lines = body.splitlines()
    assert "[-]etcd failed: reason withheld" in lines
    assert "[-]etcd-readiness failed: reason withheld" in lines
    assert "[+]ping ok" in lines
    assert lines[-1] == "readyz check failed"
    assert "does not answer" not in body
    assert answers["livez/etcd"] == (500, "[-]etcd failed: reason withheld\nlivez check failed\n")
    code, body = answers["healthz"]
    assert code == 500 and "[-]etcd failed: reason withheld" in body.splitlines()


def test_healthy_storage_passes(tmp_path: Path) -> None:
    async def scenario() -> Any:
        server = APIServer(ServerConfig(data_dir=tmp_path))
        await server.start()
        try:
            return await server.health["readyz"].run({"verbose": ""})
        finally:
            await server.stop()

    code, body = asyncio.run(scenario())
    assert code == 200
    assert "[+]etcd ok" in body.splitlines() and "[+]etcd-readiness ok" in body.splitlines()


def test_compaction_survives_a_failed_round(tmp_path: Path) -> None:
    """Storage unreachable at one compaction must not end compaction for good."""

    async def scenario() -> list[int]:
        server = APIServer(ServerConfig(data_dir=tmp_path, compaction_interval=0.01))
        await server.start()
        calls: list[int] = []
        try:
            assert server.storage is not None
            real = server.storage.compact

            async def flaky(revision: int) -> None:
                calls.append(revision)
                if len(calls) == 1:
                    raise StorageUnavailableError("etcd does not answer")
                await real(revision)

            server.storage.compact = flaky  # type: ignore[method-assign]
            for _ in range(500):
                if len(calls) >= 3:
                    break
                await asyncio.sleep(0.01)
        finally:
            await server.stop()
        return calls

    calls = asyncio.run(scenario())
    assert len(calls) >= 3
    assert all(revision > 0 for revision in calls)


def test_compaction_interval_zero_never_compacts(tmp_path: Path) -> None:
    async def scenario() -> list[int]:
        server = APIServer(ServerConfig(data_dir=tmp_path, compaction_interval=0))
        await server.start()
        calls: list[int] = []
        try:
            assert server.storage is not None

            async def record(revision: int) -> None:
                calls.append(revision)

            server.storage.compact = record  # type: ignore[method-assign]
            for _ in range(5):
                await asyncio.sleep(0.01)
        finally:
            await server.stop()
        return calls

    assert asyncio.run(scenario()) == []


def test_identity_hostname_must_be_a_label_value(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, config = _config(monkeypatch, tmp_path, "--identity-hostname", "bad host")
    assert (code, config) == (1, None)
    err = capsys.readouterr().err
    assert err.startswith('Error: --identity-hostname "bad host" is not a valid label value: ')
    assert "a valid label must be an empty string or consist of alphanumeric characters" in err
