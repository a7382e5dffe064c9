"""kubectl: the released binaries, run against a server, and what they print.

``make_kubectl`` points one release at a server, with a discovery cache of its
own; ``Kubectl.ok``/``fails``/``json`` run a command and check its exit code
and streams; ``Kubectl.watch`` leaves ``kubectl get -w`` running and collects
its lines.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import KapiServer, require_binary
from tests.helpers.wait import eventually

#: Where the released kubectl binaries are, one a release: ``kubectl.<major>.<minor>``.
KUBECTL_DIR = "/usr/lib/google-cloud-sdk/bin"
#: The release a test runs unless it is about another.
DEFAULT_VERSION = "1.32"
COMMAND_TIMEOUT = 30
WATCH_TIMEOUT = 15

UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")

#: What kubectl prints when the server refuses a ConfigMap named ``Bad_Name``.
INVALID_NAME_MESSAGE = (
    'The ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@dataclass
class Result:
    """One finished kubectl command."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def out_lines(self) -> list[str]:
        return self.stdout.splitlines()

    @property
    def err_lines(self) -> list[str]:
        return self.stderr.splitlines()

    def __str__(self) -> str:
        return (
            f"kubectl {' '.join(self.args)} -> {self.returncode}\n"
            f"--- stdout\n{self.stdout}--- stderr\n{self.stderr}"
        )


@dataclass
class Kubectl:
    """One kubectl binary pointed at the server, with a cache dir of its own."""

    binary: str
    env: dict[str, str]

    def run(self, *args: str) -> Result:
        completed = subprocess.run(
            [self.binary, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        return Result(args, completed.returncode, completed.stdout, completed.stderr)

    def ok(self, *args: str) -> Result:
        """Run a command that must succeed without printing anything on stderr."""
        result = self.run(*args)
        assert result.returncode == 0, str(result)
        assert result.stderr == "", str(result)
        return result

    def fails(self, *args: str) -> Result:
        """Run a command that must fail with exit code 1 and print nothing on stdout."""
        result = self.run(*args)
        assert result.returncode == 1, str(result)
        assert result.stdout == "", str(result)
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "-o", "json").stdout)

    @contextmanager
    def watch(self, *args: str) -> Iterator[Watch]:
        process = subprocess.Popen(
            [self.binary, *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        watcher = Watch(process)
        try:
            yield watcher
        finally:
            watcher.stop()


class Watch:
    """A running ``kubectl get -w`` whose stdout is collected line by line."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, done: Callable[[list[str]], bool], what: str) -> list[str]:
        """Collect lines until ``done(lines)`` holds; fail after WATCH_TIMEOUT seconds."""

        def shown() -> bool:
            while not done(self.lines):
                try:
                    line = self._queue.get_nowait()
                except queue.Empty:
                    return False
                if line is None:
                    self.process.wait()
                    assert self.process.stderr is not None
                    pytest.fail(
                        f"watch exited with {self.process.returncode} before showing {what}; "
                        f"stdout:\n"
                        + "\n".join(self.lines)
                        + f"\nstderr:\n{self.process.stderr.read()}"
                    )
                self.lines.append(line)
            return True

        eventually(
            shown,
            what=f"the watch to show {what}",
            timeout=WATCH_TIMEOUT,
            details=lambda: "output so far:\n" + "\n".join(self.lines),
        )
        return self.lines

    def objects(self) -> list[Any]:
        """The complete JSON documents printed so far (pretty-printed or one a line)."""
        return json_documents("\n".join(self.lines))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)
        self._thread.join(timeout=10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def json_documents(text: str) -> list[Any]:
    """Decode concatenated JSON values, ignoring an incomplete one at the end."""
    decoder = json.JSONDecoder()
    documents = []
    index = 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            return documents
        try:
            document, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            return documents
        documents.append(document)


def kubectl_binary(version: str | None = None) -> str:
    """The path of kubectl ``version`` (DEFAULT_VERSION if None), the one way tests find it.

    Only that release will do, never whatever kubectl is on PATH.  A missing
    binary skips the test, or fails it under CI=true (``require_binary``).
    """
    return require_binary("kubectl", f"{KUBECTL_DIR}/kubectl.{version or DEFAULT_VERSION}")


def make_kubectl(server: KapiServer, tmp_path: Path, version: str = DEFAULT_VERSION) -> Kubectl:
    """kubectl ``version`` pointed at ``server``, with a cache (and HOME) in ``tmp_path``."""
    binary = kubectl_binary(version)
    env = {key: value for key, value in os.environ.items() if not key.startswith("KUBE")}
    cache = tmp_path / f"kubecache-{version}"
    cache.mkdir(exist_ok=True)
    env.update(KUBECONFIG=str(server.kubeconfig), KUBECACHEDIR=str(cache), HOME=str(tmp_path))
    return Kubectl(binary, env)


def configmap(name: str, data: dict[str, str] | None = None, **labels: str) -> str:
    """A ConfigMap manifest (YAML) for ``kubectl create -f``."""
    document: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": data if data is not None else {"a": "1"},
    }
    if labels:
        document["metadata"]["labels"] = labels
    return yaml.safe_dump(document)


def table(rows: list[list[str]]) -> list[str]:
    """Rows laid out as kubectl's tabwriter does (padding 3, the last column unpadded)."""
    widths = [max(len(row[i]) for row in rows) + 3 for i in range(len(rows[0]) - 1)]
    return [
        "".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + row[-1]
        for row in rows
    ]
