"""The audit log backend: JSON lines, buffered writes, lumberjack's rotation and names."""

from __future__ import annotations

import io
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

from kapi.audit.backend import (
    DEFAULT_MAX_SIZE_MB,
    MEGABYTE,
    AuditLogBackend,
    RotatingFileWriter,
    StdoutWriter,
)
from kapi.audit.event import AuditEvent, micro_time, source_ips, without_managed_fields

BACKUP_NAME = re.compile(r"^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$")


def _line(i: int, width: int = 100) -> bytes:
    """An event of a fixed size whatever its number, so sizes can be counted in lines."""
    body = orjson.dumps({"n": i, "pad": "x" * (width - len(str(i)))})
    return body + b"\n"


def _read_all(directory: Path) -> list[int]:
    """Every event number written, across the live file and its backups."""
    numbers = []
    for path in sorted(directory.iterdir()):
        numbers += [orjson.loads(line)["n"] for line in path.read_bytes().splitlines()]
    return sorted(numbers)


def test_event_is_one_json_line_with_upstreams_fields() -> None:
    event = AuditEvent(
        level="Metadata",
        audit_id="0b7c9c2e-1111-2222-3333-444455556666",
        request_uri="/api/v1/namespaces/a/pods?limit=1",
        verb="list",
        username="system:anonymous",
        groups=("system:unauthenticated",),
        source_ips=["127.0.0.1"],
        user_agent="kubectl/v1.32.0",
        object_ref={"resource": "pods", "namespace": "a", "apiVersion": "v1"},
        received=1700000000.25,
    )
    event.response_status = {"metadata": {}, "code": 200}
    event.annotations = {"k8s.io/deprecated": "true"}
    line = event.encode("ResponseComplete", 1700000000.5)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert list(orjson.loads(line).items()) == [
        ("kind", "Event"),
        ("apiVersion", "audit.k8s.io/v1"),
        ("level", "Metadata"),
        ("auditID", "0b7c9c2e-1111-2222-3333-444455556666"),
        ("stage", "ResponseComplete"),
        ("requestURI", "/api/v1/namespaces/a/pods?limit=1"),
        ("verb", "list"),
        ("user", {"username": "system:anonymous", "groups": ["system:unauthenticated"]}),
        ("sourceIPs", ["127.0.0.1"]),
        ("userAgent", "kubectl/v1.32.0"),
        ("objectRef", {"resource": "pods", "namespace": "a", "apiVersion": "v1"}),
        ("responseStatus", {"metadata": {}, "code": 200}),
        ("requestReceivedTimestamp", "2023-11-14T22:13:20.250000Z"),
        ("stageTimestamp", "2023-11-14T22:13:20.500000Z"),
        ("annotations", {"k8s.io/deprecated": "true"}),
    ]


def test_micro_time_has_six_digits() -> None:
    assert micro_time(0.000001) == "1970-01-01T00:00:00.000001Z"


def test_source_ips_follow_upstream() -> None:
    headers = {"x-forwarded-for": "10.0.0.1, bogus, 10.0.0.2", "x-real-ip": "10.0.0.1"}
    assert source_ips(headers, ("127.0.0.1", 5555)) == ["10.0.0.1", "10.0.0.2", "127.0.0.1"]
    # The peer is not repeated when a proxy already named it last.
    assert source_ips({"x-real-ip": "127.0.0.1"}, ("127.0.0.1", 1)) == ["127.0.0.1"]
    assert source_ips({}, ("::1", 1)) == ["::1"]


def test_backend_writes_lines_in_order_and_close_drains(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    backend = AuditLogBackend(RotatingFileWriter(path), flush_interval=60)
    backend.start()
    for i in range(500):
        backend.process(_line(i))
    backend.close()
    lines = path.read_bytes().splitlines()
    assert [orjson.loads(line)["n"] for line in lines] == list(range(500))


def test_a_full_buffer_is_written_by_the_request_path(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    backend = AuditLogBackend(RotatingFileWriter(path), flush_interval=60, buffer_size=10)
    backend.start()
    for i in range(25):
        backend.process(_line(i))
    # Two full buffers were written without waiting for the writer thread.
    assert len(path.read_bytes().splitlines()) == 20
    backend.close()
    assert len(path.read_bytes().splitlines()) == 25


def test_events_after_close_are_written_at_once(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    backend = AuditLogBackend(RotatingFileWriter(path))
    backend.start()
    backend.close()
    backend.process(_line(1))
    assert [orjson.loads(line)["n"] for line in path.read_bytes().splitlines()] == [1]


def test_new_file_mode_is_0600(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "audit.log"
    writer = RotatingFileWriter(path)
    writer.write_lines([_line(0)])
    writer.close()
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_rotation_by_size_keeps_every_event_and_names_backups_as_lumberjack(
    tmp_path: Path,
) -> None:
    path = tmp_path / "audit.log"
    line_size = len(_line(0))
    writer = RotatingFileWriter(path, max_bytes=line_size * 10)
    for batch in range(5):
        writer.write_lines([_line(batch * 7 + i) for i in range(7)])
    writer.close()
    names = sorted(p.name for p in tmp_path.iterdir())
    backups = [n for n in names if n != "audit.log"]
    # 35 events of which 10 fit a file: three full backups and 5 in the live file.
    assert len(backups) == 3
    assert all(BACKUP_NAME.match(n) for n in backups)
    assert all(p.stat().st_size <= line_size * 10 for p in tmp_path.iterdir())
    assert len(path.read_bytes().splitlines()) == 5
    assert _read_all(tmp_path) == list(range(35))


def test_existing_file_is_appended_to_or_rotated_when_full(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    line_size = len(_line(0))
    path.write_bytes(_line(0))
    writer = RotatingFileWriter(path, max_bytes=line_size * 3)
    writer.write_lines([_line(1)])
    writer.close()
    assert len(path.read_bytes().splitlines()) == 2
    writer = RotatingFileWriter(path, max_bytes=line_size * 3)
    writer.write_lines([_line(2)])  # 3 lines would reach the limit: upstream rotates first
    writer.close()
    assert len(path.read_bytes().splitlines()) == 1
    assert _read_all(tmp_path) == [0, 1, 2]


def test_max_backups_deletes_the_oldest(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    line_size = len(_line(0))
    writer = RotatingFileWriter(path, max_backups=2, max_bytes=line_size)
    for i in range(6):
        writer.write_lines([_line(i)])
    writer.close()
    backups = writer.backups()
    assert len(backups) == 2
    # The live file has the newest event, the two backups the two before it.
    assert _read_all(tmp_path) == [3, 4, 5]
    # Other files in the directory are not touched.
    assert not any(p.name.startswith("other") for p in tmp_path.iterdir())


def test_max_age_deletes_backups_older_than_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    old = datetime.now(UTC) - timedelta(days=3)
    stale = tmp_path / f"audit-{old.strftime('%Y-%m-%dT%H-%M-%S')}.000.log"
    stale.write_bytes(_line(100))
    unrelated = tmp_path / "audit-notatime.log"
    unrelated.write_bytes(b"")
    line_size = len(_line(0))
    writer = RotatingFileWriter(path, max_age_days=2, max_bytes=line_size)
    writer.write_lines([_line(0), _line(1)])
    writer.close()
    assert not stale.exists()
    assert unrelated.exists()
    assert len(writer.backups()) == 1


def test_an_event_larger_than_the_file_limit_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    writer = RotatingFileWriter(path, max_bytes=200)
    writer.write_lines([_line(0, 10), _line(1, 500), _line(2, 10)])
    writer.close()
    assert _read_all(tmp_path) == [0, 2]


def test_max_size_is_in_megabytes_and_zero_means_100() -> None:
    assert RotatingFileWriter("x.log", 0).max_bytes == DEFAULT_MAX_SIZE_MB * MEGABYTE
    assert RotatingFileWriter("x.log", 3).max_bytes == 3 * MEGABYTE


def test_stdout_writer() -> None:
    stream = io.BytesIO()
    backend = AuditLogBackend(StdoutWriter(stream))
    backend.start()
    backend.process(_line(1))
    backend.close()
    assert stream.getvalue() == _line(1)


def test_without_managed_fields_copies_objects_lists_and_tables() -> None:
    managed = [{"manager": "kubectl", "operation": "Apply"}]
    obj = {"kind": "ConfigMap", "metadata": {"name": "a", "managedFields": managed}}
    listed = {"kind": "ConfigMapList", "metadata": {}, "items": [obj]}
    table = {"kind": "Table", "rows": [{"cells": ["a"], "object": obj}]}
    stripped = {"kind": "ConfigMap", "metadata": {"name": "a"}}
    assert without_managed_fields(obj) == stripped
    assert without_managed_fields(listed)["items"] == [stripped]
    assert without_managed_fields(table)["rows"] == [{"cells": ["a"], "object": stripped}]
    # The object being written to the client is left as it was.
    assert obj["metadata"]["managedFields"] == managed


class _Lines:
    """A writer keeping what it is given."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def write_lines(self, lines: list[bytes]) -> None:
        self.lines += lines

    def close(self) -> None:
        pass


def _serve_with_auditor(method: str, path: str, fail: bool) -> list[dict]:
    """One request through the audit filter, the handler failing unexpectedly if ``fail``."""
    import asyncio

    from kapi.audit import Auditor, load_policy
    from kapi.endpoints.http import Request, Response
    from kapi.endpoints.requestinfo import parse_request_info
    from kapi.request import RequestContext

    policy = load_policy("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n")
    writer = _Lines()
    auditor = Auditor(policy, AuditLogBackend(writer))
    scope = {"method": method, "path": path, "headers": [], "client": ("10.1.2.3", 1)}
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    async def send(message: dict) -> None:
        sent.append(message)

    async def run() -> None:
        request = Request(scope, receive)
        info = parse_request_info(method, path, False)
        audit = auditor.begin(request, info, RequestContext(info))
        if fail:
            audit.panic(RuntimeError("boom"))
        await audit.respond(send, Response(500 if fail else 200, b"{}"), [], receive)

    asyncio.run(run())
    auditor.close()
    assert (b"audit-id", orjson.loads(writer.lines[0])["auditID"].encode()) in sent[0]["headers"]
    return [orjson.loads(line) for line in writer.lines]


def test_an_unexpected_error_is_recorded_as_panic_without_response_complete() -> None:
    events = _serve_with_auditor("GET", "/api/v1/namespaces/a/configmaps/b", fail=True)
    assert [e["stage"] for e in events] == ["RequestReceived", "Panic"]
    assert events[1]["responseStatus"] == {
        "metadata": {},
        "status": "Failure",
        "message": "APIServer panic'd: boom",
        "reason": "InternalError",
        "code": 500,
    }
    assert events[1]["sourceIPs"] == ["10.1.2.3"]


def test_a_normal_request_gets_received_and_complete() -> None:
    events = _serve_with_auditor("GET", "/version", fail=False)
    assert [e["stage"] for e in events] == ["RequestReceived", "ResponseComplete"]
    assert events[1]["responseStatus"] == {"metadata": {}, "code": 200}
