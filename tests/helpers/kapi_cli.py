"""``python -m kapi``, the kubectl-like commands, run as a user runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

from tests.conftest import KapiServer

COMMAND_TIMEOUT = 30


@dataclass
class Run:
    """One finished ``kapi`` command."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def out_lines(self) -> list[str]:
        return self.stdout.splitlines()

    @property
    def err_lines(self) -> list[str]:
        return self.stderr.splitlines()


@dataclass
class Kapi:
    """``python -m kapi`` pointed at one server through its kubeconfig."""

    env: dict[str, str]

    def run(self, *args: str, stdin: str | None = None) -> Run:
        done = subprocess.run(
            [sys.executable, "-m", "kapi", *args],
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        return Run(done.returncode, done.stdout, done.stderr)

    def ok(self, *args: str, stdin: str | None = None) -> Run:
        result = self.run(*args, stdin=stdin)
        assert (result.returncode, result.stderr) == (0, ""), result
        return result


def make_kapi(server: KapiServer) -> Kapi:
    """``kapi`` pointed at ``server`` through its kubeconfig."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("KUBE")}
    env.pop("NO_COLOR", None)
    env["KUBECONFIG"] = str(server.kubeconfig)
    return Kapi(env)
