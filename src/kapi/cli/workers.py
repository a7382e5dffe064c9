"""``kapi serve --workers N``: N server processes behind one port, on one etcd.

One Python process serves on one core.  With ``--workers N`` the ``kapi
serve`` process only supervises: it starts N workers, each a ``kapi serve``
with the same flags plus the resolved port and a worker index; every worker
listens with ``SO_REUSEPORT``, so the kernel spreads connections over them,
and they share state only through etcd, as separate API servers do.

Worker ``i`` takes the identity hostname ``<hostname>-<i>``: its identity
lease is derived from the hostname, and N workers on one host are N API
servers, each with its own lease; the index (not the pid) keeps the names
stable when the whole group restarts, so the same leases are renewed rather
than new ones left to expire.

The parent forwards SIGINT and SIGTERM to every worker and exits when all
have exited: 0 when each exited cleanly, else 1.  A worker that dies on its
own is logged and not restarted; the others keep serving the port.  Workers
run in their own process group, so a terminal's Ctrl-C reaches them once
(through the parent), and each stops when its parent is gone (SIGKILLed).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from types import FrameType

log = logging.getLogger(__name__)

#: How often a worker checks that its supervising parent is still there (seconds).
PARENT_CHECK_INTERVAL = 1.0


def worker_argv(serve_argv: Sequence[str], port: int, index: int, hostname: str) -> list[str]:
    """The command line of worker ``index``: the parent's, with the later flags winning."""
    return [
        sys.executable,
        "-m",
        "kapi",
        *serve_argv,
        "--port",
        str(port),
        "--workers",
        "1",
        "--worker-index",
        str(index),
        "--identity-hostname",
        f"{hostname}-{index}",
    ]


def run_workers(serve_argv: Sequence[str], count: int, port: int, hostname: str) -> int:
    """Start ``count`` workers and supervise them until every one has exited."""
    workers: dict[int, subprocess.Popen[bytes]] = {}
    exited: dict[int, int] = {}

    def forward(signum: int, frame: FrameType | None) -> None:
        for pid, process in workers.items():
            if pid not in exited:
                process.send_signal(signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, forward)
    for index in range(count):
        process = subprocess.Popen(worker_argv(serve_argv, port, index, hostname), process_group=0)
        workers[process.pid] = process
        log.info("started worker %d (pid %d)", index, process.pid)
    indexes = {process.pid: i for i, process in enumerate(workers.values())}
    while len(exited) < len(workers):
        pid, status = os.wait()  # a signal runs ``forward`` and the wait goes on
        if pid not in workers:
            continue
        code = os.waitstatus_to_exitcode(status)
        exited[pid] = code
        workers[pid].returncode = code  # reaped here: Popen must not wait for it again
        log.log(
            logging.INFO if code == 0 else logging.WARNING,
            "worker %d (pid %d) exited with %d; %d still serving",
            indexes[pid],
            pid,
            code,
            len(workers) - len(exited),
        )
    return 0 if all(code == 0 for code in exited.values()) else 1


def stop_with_parent() -> None:
    """In a worker: shut down (SIGTERM to itself) once the supervising parent is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_INTERVAL)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="kapi-parent-watch", daemon=True).start()
