"""The audit log backend: JSON lines to a file (rotated as upstream's lumberjack) or stdout.

Upstream's log backend writes every event before the request goes on
("blocking" mode).  kapi serves all requests from one event loop, where a
blocking file write would stall every other request, so events are kept in
a bounded in-memory buffer and a writer thread flushes it in batches, every
``flush_interval`` seconds (0.1 by default) and at :meth:`AuditLogBackend.close`.
When the buffer fills (``buffer_size`` events, upstream's default batch
buffer of 10000) the request that fills it writes the batch itself: under
overload kapi slows down, as upstream's blocking mode does, rather than drop
events.  Closing drains everything, so a clean shutdown loses no event.
"""

from __future__ import annotations

import collections
import logging
import os
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import BinaryIO, Protocol

log = logging.getLogger(__name__)

MEGABYTE = 1024 * 1024
#: lumberjack's size limit when ``--audit-log-maxsize`` is 0 (the flag's default).
DEFAULT_MAX_SIZE_MB = 100
#: lumberjack's backup time stamp: UTC, milliseconds, ``-`` instead of ``:``.
BACKUP_TIME_FORMAT = "%Y-%m-%dT%H-%M-%S"
DEFAULT_FLUSH_INTERVAL = 0.1
DEFAULT_BUFFER_SIZE = 10_000


class LineWriter(Protocol):
    def write_lines(self, lines: list[bytes]) -> None: ...

    def close(self) -> None: ...


class StdoutWriter:
    """``--audit-log-path=-``: standard output, never rotated."""

    def __init__(self, stream: BinaryIO | None = None) -> None:
        self.stream = stream or sys.stdout.buffer

    def write_lines(self, lines: list[bytes]) -> None:
        self.stream.write(b"".join(lines))
        self.stream.flush()

    def close(self) -> None:
        self.stream.flush()


class RotatingFileWriter:
    """A log file rotated by size, with upstream's (lumberjack's) rules and names.

    Before a write that would take the file over ``max_bytes``, the file is
    renamed to ``<name>-<UTC time>.<ext>`` (``audit-2024-05-01T10-00-00.000.log``)
    and a new one started; then backups beyond ``max_backups`` (0: keep all)
    and older than ``max_age_days`` (0: keep all), judged by the time in their
    names, are deleted.  A batch is split at line boundaries so an event never
    straddles two files; one event larger than the limit is dropped with an
    error, as lumberjack refuses the write.
    """

    def __init__(
        self,
        path: str | Path,
        max_size_mb: int = 0,
        max_backups: int = 0,
        max_age_days: int = 0,
        *,
        max_bytes: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes or (max_size_mb or DEFAULT_MAX_SIZE_MB) * MEGABYTE
        self.max_backups = max_backups
        self.max_age_days = max_age_days
        self._file: BinaryIO | None = None
        self._size = 0
        self._last_backup = ""

    def write_lines(self, lines: list[bytes]) -> None:
        pending: list[bytes] = []
        pending_size = 0
        for line in lines:
            n = len(line)
            if n > self.max_bytes:
                log.error(
                    "Error in audit plugin 'log' affecting 1 audit events: "
                    "write length %d exceeds maximum file size %d",
                    n,
                    self.max_bytes,
                )
                continue
            if self._file is None:
                self._open_existing_or_new(pending_size + n)
            if self._size + pending_size + n > self.max_bytes:
                self._write(pending)
                pending, pending_size = [], 0
                self._rotate()
            pending.append(line)
            pending_size += n
        self._write(pending)

    def _write(self, chunk: list[bytes]) -> None:
        if not chunk or self._file is None:
            return
        data = b"".join(chunk)
        self._file.write(data)
        self._file.flush()
        self._size += len(data)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    # -- lumberjack's rules ----------------------------------------------------------------

    def _open_existing_or_new(self, write_len: int) -> None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            self._open_new()
            return
        if size + write_len >= self.max_bytes:
            self._rotate()
            return
        self._file = open(self.path, "ab")  # noqa: SIM115 - kept open across writes
        self._size = size

    def _rotate(self) -> None:
        self.close()
        self._open_new()
        self._mill()

    def _open_new(self) -> None:
        self.path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        mode = 0o600
        if self.path.exists():
            mode = self.path.stat().st_mode & 0o777
            os.replace(self.path, self._backup_name())
        fd = os.open(self.path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, mode)
        self._file = os.fdopen(fd, "wb")
        self._size = 0

    def _backup_name(self) -> Path:
        """``<stem>-<UTC time with ms><ext>``; a later millisecond if that name is taken.

        lumberjack would overwrite a backup made in the same millisecond;
        kapi moves the time on instead, so no event is lost to a fast rotation.
        """
        now = datetime.now(UTC)
        while True:
            stamp = now.strftime(BACKUP_TIME_FORMAT) + f".{now.microsecond // 1000:03d}"
            candidate = self.path.with_name(f"{self._prefix()}{stamp}{self.path.suffix}")
            if stamp > self._last_backup and not candidate.exists():
                self._last_backup = stamp
                return candidate
            now += timedelta(milliseconds=1)

    def _prefix(self) -> str:
        return self.path.name[: len(self.path.name) - len(self.path.suffix)] + "-"

    def backups(self) -> list[tuple[datetime, Path]]:
        """This log's backups, newest first (files whose names carry no valid time are not)."""
        prefix, ext = self._prefix(), self.path.suffix
        found = []
        try:
            entries = list(self.path.parent.iterdir())
        except FileNotFoundError:
            return []
        for entry in entries:
            name = entry.name
            for suffix in (ext, ext + ".gz"):
                if name.startswith(prefix) and name.endswith(suffix) and len(name) > len(suffix):
                    stamp = name[len(prefix) : len(name) - len(suffix)]
                    try:
                        when = datetime.strptime(stamp, BACKUP_TIME_FORMAT + ".%f")
                    except ValueError:
                        continue
                    found.append((when.replace(tzinfo=UTC), entry))
                    break
        found.sort(key=lambda item: item[0], reverse=True)
        return found

    def _mill(self) -> None:
        backups = self.backups()
        remove: list[Path] = []
        if self.max_backups > 0 and len(backups) > self.max_backups:
            remove += [path for _, path in backups[self.max_backups :]]
            backups = backups[: self.max_backups]
        if self.max_age_days > 0:
            cutoff = datetime.now(UTC) - timedelta(days=self.max_age_days)
            remove += [path for when, path in backups if when < cutoff]
        for path in remove:
            try:
                path.unlink()
            except OSError as exc:
                log.error("failed to remove old audit log %s: %s", path, exc)


class AuditLogBackend:
    """Buffers encoded events and writes them in batches from a thread of its own."""

    def __init__(
        self,
        writer: LineWriter,
        *,
        flush_interval: float = DEFAULT_FLUSH_INTERVAL,
        buffer_size: int = DEFAULT_BUFFER_SIZE,
    ) -> None:
        self.writer = writer
        self.flush_interval = flush_interval
        self.buffer_size = buffer_size
        #: deque append/popleft are atomic, so the request path takes no lock.
        self._buffer: collections.deque[bytes] = collections.deque()
        #: Serializes writes: the writer thread, an overflowing request, close().
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="audit-log", daemon=True)
            self._thread.start()

    def process(self, line: bytes) -> None:
        """Queue one encoded event; cheap unless the buffer is full (then write now)."""
        buffer = self._buffer
        buffer.append(line)
        if len(buffer) >= self.buffer_size or self._thread is None:
            self.flush()

    def flush(self) -> None:
        """Write everything buffered so far."""
        with self._write_lock:
            buffer = self._buffer
            lines = [buffer.popleft() for _ in range(len(buffer))]
            if not lines:
                return
            try:
                self.writer.write_lines(lines)
            except OSError as exc:
                log.error(
                    "Error in audit plugin 'log' affecting %d audit events: %s", len(lines), exc
                )

    def _run(self) -> None:
        while not self._stop.wait(self.flush_interval):
            self.flush()

    def close(self) -> None:
        """Stop the writer thread, write what is left, close the file."""
        thread, self._thread = self._thread, None
        self._stop.set()
        if thread is not None:
            thread.join()
        self.flush()
        with self._write_lock:
            self.writer.close()


def new_writer(
    path: str, max_size_mb: int = 0, max_backups: int = 0, max_age_days: int = 0
) -> LineWriter:
    """The writer ``--audit-log-path`` asks for (``-`` is standard output)."""
    if path == "-":
        return StdoutWriter()
    return RotatingFileWriter(path, max_size_mb, max_backups, max_age_days)
