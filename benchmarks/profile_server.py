"""Where a kapi request spends its time: py-spy samples of ``kapi serve`` under wrk load.

``run.py`` says how far kapi is from its ceilings; this says why.  It starts
kapi exactly as ``run.py`` does (same setup, same objects), drives one
workload at 16 clients with wrk, attaches py-spy to the server for a few
seconds, and prints the functions with the largest share of samples, by
cumulative time (the function or anything it calls) and by self time.

py-spy samples from outside the process, so the server runs unmodified and
at full speed between samples (cProfile would slow every call and distort
the picture of a hot path made of many small calls).  Time inside uvloop
and httptools (C, no Python frame) is charged to the innermost Python frame
that is active, usually ``Runner.run`` for the event loop itself.

    pip install py-spy
    python benchmarks/profile_server.py get create [--duration 5] [--top 25]
    python benchmarks/profile_server.py deploy-create   # workload_bench.py's Deployment
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import run as bench
import workload_bench

_LINE = re.compile(r":\d+\)$")


def aggregate(raw: str) -> tuple[int, Counter[str], Counter[str]]:
    """Total samples, and samples per function: cumulative (in the stack) and self (on top)."""
    total = 0
    cumulative: Counter[str] = Counter()
    self_time: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        # Group by function, not by line: "f (file.py:12)" -> "f (file.py)".
        frames = [_LINE.sub(")", frame) for frame in stack.split(";")]
        total += count
        for frame in set(frames):
            cumulative[frame] += count
        self_time[frames[-1]] += count
    return total, cumulative, self_time


def load_command(name: str, port: int, duration: int) -> list[str]:
    """The wrk command of workload ``name`` at 16 clients: run.py's, or workload_bench.py's
    Deployment GET and CREATE (``deploy-get``, ``deploy-create``)."""
    if name.startswith("deploy-"):
        op = name.removeprefix("deploy-")
        workload = workload_bench.Workload(workload_bench.DEPLOYMENT, op)
        return workload.command(port, 16, duration, "prof")
    return bench.LoadGenerator("wrk", None).command(SCENARIOS[name], port, 16, duration, "prof")


def profile(name: str, port: int, pid: int, duration: int, out: Path, rate: int) -> str:
    """Drive workload ``name`` at 16 clients and sample the server meanwhile; the raw stacks."""
    cmd = load_command(name, port, duration + 2)
    with subprocess.Popen(cmd, stdout=subprocess.DEVNULL) as wrk:
        time.sleep(1)  # let the load settle before sampling
        subprocess.run(
            [
                "py-spy",
                "record",
                "--pid",
                str(pid),
                "--duration",
                str(duration),
                "--rate",
                str(rate),
                "--format",
                "raw",
                "--output",
                str(out),
            ],
            check=True,
            capture_output=True,
        )
        wrk.wait()
    return out.read_text()


def report(name: str, raw: str, top: int) -> str:
    total, cumulative, self_time = aggregate(raw)
    lines = [f"== {name}: {total} samples (idle time not sampled)", ""]
    lines.append(f"{'cumulative':>10}  function")
    for frame, count in cumulative.most_common(top):
        lines.append(f"{count / total:>10.1%}  {frame}")
    lines += ["", f"{'self':>10}  function"]
    for frame, count in self_time.most_common(top):
        lines.append(f"{count / total:>10.1%}  {frame}")
    return "\n".join(lines)


#: run.py's kapi workloads by short name (get, create, update, list).
SCENARIOS = {sc.key.removeprefix("kapi_"): sc for sc in bench.SCENARIOS if sc.server == "kapi"}
WORKLOADS = sorted([*SCENARIOS, "deploy-get", "deploy-create"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", choices=WORKLOADS, default=["get", "create"])
    parser.add_argument("--duration", type=int, default=5, help="seconds sampled per workload")
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=25, help="functions listed per table")
    parser.add_argument("--keep", type=Path, help="also keep the raw stacks in this directory")
    args = parser.parse_args(argv)
    for tool, hint in (("py-spy", "pip install py-spy"), ("wrk", "apt-get install -y wrk")):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found: {hint}")
    with tempfile.TemporaryDirectory(prefix="kapi-profile-") as tmp_name:
        tmp = Path(tmp_name)
        cmd = [sys.executable, "-m", "kapi", "serve", "--data-dir", str(tmp / "data")]
        server = bench.start_server("kapi", cmd, tmp, None)
        try:
            server.wait_ready("/readyz")
            bench.prepare_kapi(server.port)
            if any(name.startswith("deploy-") for name in args.workloads):
                client = bench.Client(server.port)
                workload_bench.create_objects(client, workload_bench.DEPLOYMENT)
                client.conn.close()
            for name in args.workloads:
                out = tmp / f"{name}.txt"
                raw = profile(name, server.port, server.proc.pid, args.duration, out, args.rate)
                if args.keep:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    shutil.copy(out, args.keep / f"{name}.txt")
                print(report(f"kapi {name.upper()} at 16 clients", raw, args.top), "\n", flush=True)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
