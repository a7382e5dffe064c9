"""kapi on etcd next to kapi on SQLite, and one worker next to two, in one run.

The embedded SQLite store answers from the server's own process; etcd adds a
gRPC round trip to another process for every read and a replicated, fsynced
log for every write.  This benchmark shows what that costs, and what several
server processes on one store (``kapi serve --workers``) give back, measured
side by side in interleaved rounds (odd rounds in reverse order, so that the
drift of a noisy 2-core machine hits every setup alike):

- ``sqlite``: ``kapi serve`` on its embedded default;
- ``sqlite x2``: ``kapi serve --workers 2``, the two workers sharing one
  SQLite file;
- ``etcd``: ``kapi serve --etcd-servers=<one local etcd member>``;
- ``etcd x2``: ``kapi serve --workers 2`` on the same etcd (its own
  ``--etcd-prefix``, so the two etcd servers never see each other's objects).

Workloads, with wrk at 16 connections (run.py's scripts): GET of one
ConfigMap, CREATE of ConfigMaps, DEPLOY (CREATE of workload_bench.py's
Deployment, whose create costs about three times a ConfigMap's), LIST of
1000 ConfigMaps.  Then watch
delivery: one watcher (a process of its own) on a namespace while one client
creates ConfigMaps in it at a steady 100 per second, well below what every
setup can write, so that the figure is the delivery's and not a queue's;
reported as the time from sending a create to receiving its ADDED event
(p50/p99), every event accounted for.

Beside each rate, the CPU kapi's processes and etcd burnt during it (100% is
one core): where one of them is near a core, or the two together near the
machine's two, that is what bounds the rate.

Nothing is pinned: the workers need both cores, and etcd, the servers and
wrk share them, which is also what limits the figures.  The etcd member runs
with its defaults (an fsync per write).  docs/storage-etcd.md has a run's
figures and what bounds each.

    python benchmarks/ha_bench.py            # 3 rounds x 2 s, about 3 minutes
    python benchmarks/ha_bench.py --quick    # 2 rounds x 1 s
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import run as bench
import workload_bench

sys.path.insert(0, str(bench.REPO))
from tests.helpers.etcd import EtcdServer  # the tests' real etcd launcher

CLIENTS = 16
JSON = {"Content-Type": "application/json"}
#: Creates per second while a watch follows them.
WATCH_RATE = 100
WATCH_NAMESPACE = "bench-watch"
SETUPS: dict[str, tuple[str, ...]] = {
    "sqlite": (),
    "sqlite x2": ("--workers", "2"),
    "etcd": ("--etcd-prefix", "/bench-one"),
    "etcd x2": ("--etcd-prefix", "/bench-two", "--workers", "2"),
}
#: The ratios printed: (numerator, denominator) setups.
RATIOS = (("etcd", "sqlite"), ("sqlite x2", "sqlite"), ("etcd x2", "etcd"))


@dataclass(frozen=True)
class Workload:
    key: str
    kind: str  # run.py's wrk script (get or create), or "deploy": workload_bench's creates
    path: str

    def run(
        self, loadgen: bench.LoadGenerator, setup: str, port: int, duration: int, tag: str
    ) -> dict[str, Any]:
        if self.kind == "deploy":
            deploy = workload_bench.DEPLOYMENT
            args = [deploy.collection, f"{tag}-d", *deploy.halves()]
            url = f"http://127.0.0.1:{port}"
            cmd = bench.wrk_command("create_named.lua", url, CLIENTS, duration, args)
            return bench.run_load(cmd, duration)
        sc = bench.Scenario(self.key, self.key, setup, self.kind, self.path)
        return loadgen.run(sc, port, CLIENTS, duration, tag)


WORKLOADS = (
    Workload("GET", "get", f"/api/v1/namespaces/{bench.NAMESPACE}/configmaps/x"),
    Workload("CREATE", "create", f"/api/v1/namespaces/{bench.NAMESPACE}/configmaps"),
    Workload("DEPLOY", "deploy", workload_bench.DEPLOYMENT.collection),
    Workload(
        f"LIST {bench.LIST_SIZE}", "get", f"/api/v1/namespaces/{bench.LIST_NAMESPACE}/configmaps"
    ),
)


# -- watch delivery ----------------------------------------------------------------------


def follow(port: int, path: str, last: str, out: Connection) -> None:
    """The watcher, in a process of its own so that it never waits for the writer's GIL:
    sends back when (``time.monotonic``, shared by processes) each ADDED event arrived."""
    watcher = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    watcher.request("GET", path)
    stream = watcher.getresponse()
    out.send("ready")
    received: dict[str, float] = {}
    while line := stream.readline():
        name = json.loads(line)["object"]["metadata"]["name"]
        received[name] = time.monotonic()
        if name == last:
            break
    out.send(received)


def watch_delivery(port: int, duration: float, tag: str) -> dict[str, float]:
    """Create ConfigMaps at ``WATCH_RATE`` for ``duration`` seconds while a watch follows them."""
    base = f"/api/v1/namespaces/{WATCH_NAMESPACE}/configmaps"
    writer = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    writer.request("GET", base)
    start_rv = json.loads(writer.getresponse().read())["metadata"]["resourceVersion"]
    last = f"{tag}-end"
    ours, theirs = multiprocessing.Pipe()
    watch_path = f"{base}?watch=1&resourceVersion={start_rv}"
    watcher = multiprocessing.Process(target=follow, args=(port, watch_path, last, theirs))
    watcher.start()
    if not ours.poll(30):
        raise RuntimeError("the watcher did not start")
    ours.recv()
    sent: dict[str, float] = {}
    deadline = time.monotonic() + duration
    seq = 0
    while (now := time.monotonic()) < deadline:
        slot = deadline - duration + seq / WATCH_RATE
        if slot > now:
            time.sleep(slot - now)
        name = f"{tag}-{seq}"
        seq += 1
        sent[name] = time.monotonic()
        writer.request("POST", base, json.dumps(bench.configmap(name)), JSON)
        writer.getresponse().read()
    writer.request("POST", base, json.dumps(bench.configmap(last)), JSON)
    writer.getresponse().read()
    writer.close()
    if not ours.poll(30):
        raise RuntimeError("the watcher did not see the last event")
    received: dict[str, float] = ours.recv()
    watcher.join(10)
    delays = sorted((received[n] - t) * 1e3 for n, t in sent.items() if n in received)
    if len(delays) != len(sent):
        raise RuntimeError(f"watch delivered {len(delays)} of {len(sent)} events")
    return {
        "events_per_s": len(delays) / duration,
        "p50_ms": delays[len(delays) // 2],
        "p99_ms": delays[min(len(delays) - 1, int(len(delays) * 0.99))],
    }


def etcd_version() -> str:
    out = subprocess.run(["etcd", "--version"], capture_output=True, text=True).stdout
    return out.splitlines()[0] if out else "etcd"


# -- the run -----------------------------------------------------------------------------


def prepare(port: int) -> None:
    bench.prepare_kapi(port)
    bench.Client(port).call(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": WATCH_NAMESPACE}},
        201,
    )


def process_tree(pid: int) -> list[int]:
    """``pid`` and its children (a ``--workers`` parent's workers)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [pid, *(int(child) for child in children.read_text().split())]
    except OSError:
        return [pid]


def cpu_of(pids: list[int]) -> float:
    return sum(bench.cpu_seconds(pid) for pid in pids)


def measure(
    loadgen: bench.LoadGenerator,
    servers: dict[str, bench.Server],
    etcd_pid: int,
    rounds: int,
    duration: int,
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Every workload on every setup, then watch delivery on each, round after round; each
    load's result carries the CPU kapi's processes and etcd used, in cores."""
    plan = [(setup, w) for w in WORKLOADS for setup in servers]
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for round_no in range(rounds):
        order = plan if round_no % 2 == 0 else plan[::-1]
        for setup, w in order:
            server = servers[setup]
            kapi = process_tree(server.proc.pid)
            before, etcd_before, started = cpu_of(kapi), cpu_of([etcd_pid]), time.monotonic()
            result = w.run(loadgen, setup, server.port, duration, f"r{round_no}")
            wall = time.monotonic() - started
            result["kapi_cpu"] = (cpu_of(kapi) - before) / wall
            result["etcd_cpu"] = (cpu_of([etcd_pid]) - etcd_before) / wall
            results.setdefault((setup, w.key), []).append(result)
        for setup in servers if round_no % 2 == 0 else list(servers)[::-1]:
            delivery = watch_delivery(servers[setup].port, duration, f"w{round_no}")
            results.setdefault((setup, "watch"), []).append(delivery)
        print(f"round {round_no + 1}/{rounds} done", flush=True)
    return results


def render(results: dict[tuple[str, str], list[dict[str, Any]]], setups: list[str]) -> str:
    def med(setup: str, key: str, field: str) -> float:
        return float(statistics.median(r[field] for r in results[(setup, key)]))

    lines = [
        f"{'workload':<12}{'setup':<10}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'kapi cpu':>10}{'etcd cpu':>10}{'errors':>8}"
    ]
    for w in WORKLOADS:
        for setup in setups:
            errors = sum(r["errors"] for r in results[(setup, w.key)])
            lines.append(
                f"{w.key:<12}{setup:<10}{med(setup, w.key, 'rps'):>10,.0f}"
                f"{med(setup, w.key, 'p50_ms'):>9.2f}{med(setup, w.key, 'p99_ms'):>9.2f}"
                f"{med(setup, w.key, 'kapi_cpu'):>10.0%}{med(setup, w.key, 'etcd_cpu'):>10.0%}"
                f"{errors:>8}"
            )
    lines.append("")
    lines.append(f"{'watch':<12}{'setup':<10}{'events/s':>10}{'p50 ms':>9}{'p99 ms':>9}")
    for setup in setups:
        lines.append(
            f"{'delivery':<12}{setup:<10}{med(setup, 'watch', 'events_per_s'):>10,.0f}"
            f"{med(setup, 'watch', 'p50_ms'):>9.2f}{med(setup, 'watch', 'p99_ms'):>9.2f}"
        )
    lines.append("")
    lines.append("ratios (medians of req/s):")
    for w in WORKLOADS:
        ratios = (
            f"{top} / {bottom} {med(top, w.key, 'rps') / med(bottom, w.key, 'rps'):5.2f}"
            for top, bottom in RATIOS
        )
        lines.append(f"  {w.key:<10} " + "    ".join(ratios))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = bench.paired_options(__doc__.splitlines()[0], argv)
    rounds = args.rounds if argv and "--rounds" in argv else (2 if args.quick else 3)
    loadgen = bench.LoadGenerator("wrk", None)
    with tempfile.TemporaryDirectory(prefix="kapi-ha-bench-") as tmp_name:
        tmp = Path(tmp_name)
        etcd = EtcdServer.launch(tmp / "etcd")
        servers: dict[str, bench.Server] = {}
        try:
            for setup, flags in SETUPS.items():
                data_dir = tmp / setup.replace(" ", "-")
                cmd = [sys.executable, "-m", "kapi", "serve", "--data-dir", str(data_dir), *flags]
                if setup.startswith("etcd"):
                    cmd += ["--etcd-servers", ",".join(etcd.endpoints)]
                servers[setup] = bench.start_server(setup.replace(" ", "-"), cmd, tmp, None)
            for server in servers.values():
                server.wait_ready("/readyz")
                prepare(server.port)
            print(
                f"{bench.wrk_version()}, {CLIENTS} connections, nothing pinned, "
                f"{rounds} rounds x {args.duration}s; {etcd_version()}",
                flush=True,
            )
            assert etcd.process is not None
            results = measure(loadgen, servers, etcd.process.pid, rounds, args.duration)
        finally:
            for server in servers.values():
                server.stop()
            etcd.close()
    print(render(results, list(SETUPS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
