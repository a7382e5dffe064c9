"""``kapi serve --workers``: each worker's command line is the parent's, with its own settings."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from kapi.cli.main import _serve_parser, main
from kapi.cli.workers import worker_argv


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="kapi")
    _serve_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


def test_a_workers_flags_override_the_parents() -> None:
    parent = [
        "serve",
        "--port=0",
        "--workers",
        "3",
        "--etcd-servers=http://127.0.0.1:2379",
        "--identity-hostname",
        "node",
    ]
    argv = worker_argv(parent, 6443, 2, "node")
    assert argv[:3] == [sys.executable, "-m", "kapi"]
    args = _parse(argv[3:])
    assert (args.port, args.workers, args.worker_index, args.identity_hostname) == (
        6443,
        1,
        2,
        "node-2",
    )
    assert args.etcd_servers == ["http://127.0.0.1:2379"]  # given once, not repeated


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--workers", "0"], "--workers must be at least 1, got 0"),
        (
            ["--workers", "2", "--etcd-servers=http://e:2379", "--audit-log-path=/tmp/a.log"],
            "--workers > 1 cannot write one --audit-log-path file from several processes (its "
            "rotation is per process); use '-' or one worker",
        ),
    ],
)
def test_workers_refused(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--port", "0", "--data-dir", str(tmp_path), *flags])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"kapi: error: {message}"
