"""A server writing an audit log (``--audit-log-path``) under a policy, and reading the log.

The fixture ``audited`` (tests/integration/conftest.py) starts one per module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.wait import eventually

#: Health checks unlogged, configmaps with bodies, secrets with requests, the rest metadata.
POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["configmaps"]
- level: Request
  resources:
  - group: ""
    resources: ["secrets"]
  omitStages: ["RequestReceived"]
- level: Metadata
"""
#: How long an event may take to reach the log (events are written in batches).
DEADLINE = 15.0


def serve_audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KapiServer, Path]]:
    """A server emulating 1.24, logging under POLICY; it and its log's path."""
    directory = tmp_path_factory.mktemp("audit")
    policy = directory / "policy.yaml"
    policy.write_text(POLICY)
    log = directory / "audit.log"
    for server in serve_with_flags(
        tmp_path_factory,
        "audited",
        "--emulated-version=1.24",
        f"--audit-log-path={log}",
        f"--audit-policy-file={policy}",
    ):
        yield server, log


def read_events(log: Path) -> list[dict[str, Any]]:
    """Every event written so far."""
    if not log.exists():
        return []
    return [orjson.loads(line) for line in log.read_bytes().splitlines()]


def events_of(log: Path, audit_id: str, last_stage: str = "ResponseComplete") -> list[dict]:
    """The events of one request, once its ``last_stage`` event has been written."""

    def written() -> list[dict] | None:
        events = [e for e in read_events(log) if e["auditID"] == audit_id]
        return events if any(e["stage"] == last_stage for e in events) else None

    return eventually(
        written, what=f"the {last_stage} event of {audit_id}", timeout=DEADLINE, interval=0.02
    )
