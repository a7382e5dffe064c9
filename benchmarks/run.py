"""kapi's reproducible benchmark: kapi next to its own ceilings, measured in one run.

Absolute req/s depend on the machine; what carries across machines is how
close kapi comes to what its stack allows.  So one run starts, side by side:

* ``kapi serve`` (fresh temp data dir, default settings: SQLite WAL,
  ``synchronous=NORMAL``) as a subprocess;
* ``bare_app.py``: an ASGI app on the very same uvicorn/uvloop/httptools stack
  and flags that answers a fixed body of the same size as kapi's ConfigMap
  GET: the most any Python app on this stack can do;
* raw SQLite writes with kapi's schema and pragmas, in-process: the most
  kapi's storage can commit;

and measures them in interleaved rounds (alternating order, so that the
drift of a noisy 2-core machine hits both sides of every ratio alike),
reporting the median of the rounds.  Each ratio is computed round by round
from two measurements taken back to back, then the median is taken.

    python benchmarks/run.py              # full run, about 2 minutes
    python benchmarks/run.py --quick      # about 40 seconds, 2 short rounds
    python benchmarks/run.py --record     # also write results/<date>.json

See README.md beside this file for how to read the output.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import http.client
import json
import os
import platform
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
WRK_DIR = BENCH_DIR / "wrk"
RESULTS_DIR = BENCH_DIR / "results"

sys.path.insert(0, str(BENCH_DIR))
import sqlite_bench  # noqa: E402  (a sibling module, not an installed package)

NAMESPACE = "bench"
LIST_NAMESPACE = "bench-list"
LIST_SIZE = 1000
UPDATE_POOL = 100
CLIENTS = (1, 16)
#: ConfigMap data of every object the benchmark writes: about 400 bytes, so a
#: GET response is about 630 bytes, a typical small ConfigMap.
DATA: dict[str, str] = {f"key-{i}": f"value-{i}-" + "v" * 32 for i in range(8)}
DATA_JSON = json.dumps(DATA, separators=(",", ":"))

#: (name, numerator scenario, denominator scenario, target) ; None: information only.
RATIOS: tuple[tuple[str, str, str, float | None], ...] = (
    ("kapi GET / bare GET", "kapi_get", "bare_get", 0.35),
    ("kapi CREATE / bare POST", "kapi_create", "bare_post", 0.25),
    ("kapi CREATE / raw SQLite insert", "kapi_create", "sqlite_insert", None),
    ("kapi CREATE / raw SQLite kine write", "kapi_create", "sqlite_kine_write", None),
)
#: The client count the targets apply to: the server saturated (see README).
TARGET_CLIENTS = 16


@dataclass(frozen=True)
class Scenario:
    """One HTTP workload: which server, which Lua script, which path."""

    key: str
    label: str
    server: str  # "kapi" or "bare"
    kind: str  # "get", "create" or "update" (the wrk/<kind>.lua script)
    path: str


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("bare_get", "bare GET", "bare", "get", f"/api/v1/namespaces/{NAMESPACE}/configmaps/x"),
    Scenario("kapi_get", "kapi GET", "kapi", "get", f"/api/v1/namespaces/{NAMESPACE}/configmaps/x"),
    Scenario(
        "bare_post", "bare POST", "bare", "create", f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    ),
    Scenario(
        "kapi_create", "kapi CREATE", "kapi", "create", f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    ),
    Scenario(
        "kapi_update", "kapi UPDATE", "kapi", "update", f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    ),
    Scenario(
        "kapi_list",
        f"kapi LIST {LIST_SIZE}",
        "kapi",
        "get",
        f"/api/v1/namespaces/{LIST_NAMESPACE}/configmaps",
    ),
)


# -- processes -------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pinned(cmd: list[str], cpus: str | None) -> list[str]:
    """``cmd`` run on ``cpus`` through taskset (which execs it: same pid), or as is."""
    return ["taskset", "-c", cpus, *cmd] if cpus is not None else cmd


@dataclass
class Server:
    """A server subprocess that this script started, and stops, by its own pid."""

    name: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    def wait_ready(self, path: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited early:\n{self.log.read_text()[-2000:]}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", path)
                if conn.getresponse().status < 500:
                    conn.close()
                    return
            time.sleep(0.1)
        raise RuntimeError(
            f"{self.name} not ready after {timeout}s:\n{self.log.read_text()[-2000:]}"
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    # utime and stime are fields 14 and 15 of stat(5); fields[0] here is field 3.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(name: str, cmd: list[str], tmp: Path, cpus: str | None) -> Server:
    port = free_port()
    log = tmp / f"{name}.log"
    env = dict(os.environ)
    # kapi need not be pip-installed: the source tree is enough.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            pinned([*cmd, "--port", str(port)], cpus),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=tmp,
        )
    return Server(name, port, proc, log)


# -- setup over HTTP -------------------------------------------------------------------


class Client:
    """A keep-alive JSON client for setting the stage (not for measuring)."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def call(self, method: str, path: str, body: Any = None, expect: int = 200) -> bytes:
        payload = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if payload else {}
        self.conn.request(method, path, payload, headers)
        response = self.conn.getresponse()
        data = response.read()
        if response.status != expect:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
        return data

    def until(self, method: str, path: str, expect: int, body: Any = None) -> None:
        """Send the request until it answers ``expect`` (for a CRD just created or changed,
        which its controller serves a moment later); give up after 10 seconds."""
        payload = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if payload else {}
        deadline = time.monotonic() + 10
        while True:
            self.conn.request(method, path, payload, headers)
            response = self.conn.getresponse()
            response.read()
            if response.status == expect:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{method} {path}: {response.status}, not {expect}")
            time.sleep(0.05)


def configmap(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "data": DATA,
    }


def prepare_kapi(port: int) -> dict[str, int]:
    """Create the objects every scenario needs; return the response sizes seen."""
    client = Client(port)
    for ns in (NAMESPACE, LIST_NAMESPACE):
        client.call(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
            201,
        )
    base = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
    created = client.call("POST", base, configmap("x"), 201)
    for i in range(UPDATE_POOL):
        client.call("POST", base, configmap(f"u-{i}"), 201)
    list_base = f"/api/v1/namespaces/{LIST_NAMESPACE}/configmaps"
    for i in range(LIST_SIZE):
        client.call("POST", list_base, configmap(f"l-{i:04d}"), 201)
    get = client.call("GET", f"{base}/x")
    listed = client.call("GET", list_base)
    items = json.loads(listed)["items"]
    if len(items) != LIST_SIZE:
        raise RuntimeError(f"LIST returned {len(items)} items, expected {LIST_SIZE}")
    client.conn.close()
    return {"get_response": len(get), "create_response": len(created), "list_response": len(listed)}


def get_body(port: int) -> bytes:
    client = Client(port)
    body = client.call("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps/x")
    client.conn.close()
    return body


# -- load generation -------------------------------------------------------------------


@dataclass
class LoadGenerator:
    """wrk when installed, else the Python fallback; both print a WRK_RESULT JSON line."""

    tool: str  # "wrk" or "python"
    cpus: str | None

    def command(self, sc: Scenario, port: int, clients: int, duration: int, tag: str) -> list[str]:
        prefix = f"{tag}-c{clients}"
        if self.tool == "wrk":
            args: list[str] = []
            if sc.kind == "create":
                args = [sc.path, prefix, DATA_JSON]
            elif sc.kind == "update":
                args = [sc.path, "u", str(UPDATE_POOL), DATA_JSON]
            url = f"http://127.0.0.1:{port}" + (sc.path if sc.kind == "get" else "")
            cmd = wrk_command(f"{sc.kind}.lua", url, clients, duration, args)
        else:
            cmd = [
                sys.executable,
                str(BENCH_DIR / "loadgen.py"),
                "--port",
                str(port),
                "--connections",
                str(clients),
                "--duration",
                str(duration),
                "--kind",
                sc.kind,
                "--path",
                sc.path,
                "--prefix",
                "u" if sc.kind == "update" else prefix,
                "--pool",
                str(UPDATE_POOL),
                "--data",
                DATA_JSON,
            ]
        return pinned(cmd, self.cpus)

    def run(self, sc: Scenario, port: int, clients: int, duration: int, tag: str) -> dict[str, Any]:
        return run_load(self.command(sc, port, clients, duration, tag), duration)


def wrk_threads(clients: int) -> int:
    return min(clients, 2)


def wrk_command(
    script: str, url: str, clients: int, duration: int, args: list[str] | None = None
) -> list[str]:
    """wrk running ``script`` (in wrk/) against ``url``; ``args`` are the script's own."""
    cmd = [
        "wrk",
        f"-t{wrk_threads(clients)}",
        f"-c{clients}",
        f"-d{duration}s",
        "--latency",
        "--timeout",
        "10s",
        "-s",
        str(WRK_DIR / script),
        url,
    ]
    return [*cmd, "--", *args] if args else cmd


def run_load(cmd: list[str], duration: int) -> dict[str, Any]:
    """Run a load generator printing a WRK_RESULT JSON line; its rate, latency and errors."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 60)
    for line in proc.stdout.splitlines():
        if line.startswith("WRK_RESULT "):
            raw = json.loads(line[len("WRK_RESULT ") :])
            break
    else:
        raise RuntimeError(f"no result from {cmd}:\n{proc.stdout}\n{proc.stderr}")
    lat = raw["latency_us"]
    return {
        "rps": raw["requests"] / (raw["duration_us"] / 1e6),
        "requests": raw["requests"],
        "p50_ms": lat["p50"] / 1e3,
        "p99_ms": lat["p99"] / 1e3,
        "errors": sum(raw["errors"].values()),
    }


@dataclass
class PairedOptions:
    """The options of a benchmark comparing two setups with wrk (as ``warnings_bench.py``)."""

    quick: bool
    duration: int
    rounds: int
    split: bool  # servers on CPU 0, wrk on CPU 1
    server_cpus: str | None
    loadgen_cpus: str | None


def paired_options(description: str, argv: list[str] | None) -> PairedOptions:
    """Parse --duration/--rounds/--quick/--pin; exit when wrk is not installed."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--duration", type=int, default=None, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 5; quick 2)")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 1s, no warm-up")
    parser.add_argument("--pin", choices=("split", "none"), default="split", help="as run.py")
    args = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        sys.exit("wrk not found: apt-get install -y wrk")
    split = bool(args.pin == "split" and shutil.which("taskset") and (os.cpu_count() or 1) > 1)
    return PairedOptions(
        quick=args.quick,
        duration=args.duration or (1 if args.quick else 2),
        rounds=args.rounds or (2 if args.quick else 5),
        split=split,
        server_cpus="0" if split else None,
        loadgen_cpus="1" if split else None,
    )


def wrk_version() -> str | None:
    if shutil.which("wrk") is None:
        return None
    proc = subprocess.run(["wrk", "-v"], capture_output=True, text=True)
    first = (proc.stdout or proc.stderr).splitlines()
    return first[0].split(" [")[0] if first else "wrk"


# -- the run ---------------------------------------------------------------------------


@contextlib.contextmanager
def affinity(cpus: set[int] | None) -> Iterator[None]:
    """Run this process on ``cpus`` for a while (the in-process SQLite benchmark)."""
    if cpus is None or not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


@dataclass
class Measurements:
    """Per-round values of every measurement, in the order they were taken."""

    http: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    sqlite: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def rate(self, key: str, clients: int, round_no: int) -> float:
        """Requests (or rows) per second of wall-clock time."""
        if key.startswith("sqlite_"):
            return float(self.sqlite[key.removeprefix("sqlite_")][round_no]["rate"])
        return float(self.http[(key, clients)][round_no]["rps"])

    def cpu_rate(self, key: str, clients: int, round_no: int) -> float:
        """Requests (or rows) per second of the server's CPU time."""
        if key.startswith("sqlite_"):
            # In-process and CPU-bound (no fsync per commit with synchronous=NORMAL).
            return self.rate(key, clients, round_no)
        us = float(self.http[(key, clients)][round_no]["us_per_req"])
        return 1e6 / us if us > 0 else float("nan")


def machine_info() -> dict[str, Any]:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    versions = {}
    for package in ("uvicorn", "uvloop", "httptools", "orjson"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[package] = metadata.version(package)
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "packages": versions,
        "loadavg_start": os.getloadavg(),
    }


def git_revision() -> str | None:
    """The commit measured, with "+dirty" when src/ has uncommitted changes."""
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--", "src"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if not head and not dirty:
        return None
    return (head or "no-commit") + ("+dirty" if dirty else "")


def run(args: argparse.Namespace) -> dict[str, Any]:
    tool = args.loadgen
    version = wrk_version()
    if tool == "auto":
        tool = "wrk" if version else "python"
    if tool == "wrk" and version is None:
        sys.exit("wrk not found: apt-get install -y wrk (or --loadgen python)")
    if tool == "python":
        print(
            "NOTE: wrk not found (install: apt-get update && apt-get install -y wrk); using the\n"
            "      Python asyncio load generator (benchmarks/loadgen.py). It spends more CPU per\n"
            "      request than wrk: if the bare app's 'srv CPU' at 16 clients is well below\n"
            "      100%, the generator capped it and kapi's ratios are flattered.",
            flush=True,
        )
    split = (
        args.pin == "split" and shutil.which("taskset") is not None and (os.cpu_count() or 1) > 1
    )
    server_cpus, loadgen_cpus = ("0", "1") if split else (None, None)
    loadgen = LoadGenerator(tool, loadgen_cpus)
    info: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git_revision": git_revision(),
        "machine": machine_info(),
        "settings": {
            "duration_s": args.duration,
            "rounds": args.rounds,
            "loadgen": version if tool == "wrk" else "python loadgen.py (fallback)",
            "pin": "servers on CPU 0, load generator on CPU 1" if split else "none",
            "clients": list(CLIENTS),
            "list_size": LIST_SIZE,
            "update": "unconditional PUT (no resourceVersion), pool of "
            f"{UPDATE_POOL} objects, every body different",
            "sqlite": "locking_mode=EXCLUSIVE, journal_mode=WAL, synchronous=NORMAL, "
            "one transaction per write, in a database created by kapi's SQLiteStorage",
        },
    }
    with tempfile.TemporaryDirectory(prefix="kapi-bench-") as tmp_name:
        tmp = Path(tmp_name)
        servers: dict[str, Server] = {}
        try:
            kapi_cmd = [sys.executable, "-m", "kapi", "serve", "--data-dir", str(tmp / "data")]
            servers["kapi"] = start_server("kapi", kapi_cmd, tmp, server_cpus)
            servers["kapi"].wait_ready("/readyz")
            setup_started = time.monotonic()
            sizes = prepare_kapi(servers["kapi"].port)
            body_file = tmp / "body.json"
            body_file.write_bytes(get_body(servers["kapi"].port))
            bare_cmd = [
                sys.executable,
                str(BENCH_DIR / "bare_app.py"),
                "--body-file",
                str(body_file),
            ]
            servers["bare"] = start_server("bare", bare_cmd, tmp, server_cpus)
            servers["bare"].wait_ready("/")
            sizes["bare_response"] = len(get_body(servers["bare"].port))
            info["sizes_bytes"] = sizes
            print(
                f"setup: {LIST_SIZE + UPDATE_POOL + 1} objects in "
                f"{time.monotonic() - setup_started:.1f}s; GET body {sizes['get_response']} B "
                f"(bare {sizes['bare_response']} B), LIST body {sizes['list_response']} B; "
                f"load generator: {info['settings']['loadgen']}; pin: {info['settings']['pin']}",
                flush=True,
            )
            measurements = measure(args, loadgen, servers, tmp, server_cpus)
        finally:
            for server in servers.values():
                server.stop()
    info["machine"]["loadavg_end"] = os.getloadavg()
    return summarize(info, measurements)


def measure(
    args: argparse.Namespace,
    loadgen: LoadGenerator,
    servers: dict[str, Server],
    tmp: Path,
    server_cpus: str | None,
) -> Measurements:
    """All rounds: every scenario at every client count, then the SQLite writes."""
    if not args.quick:
        # Warm both servers up (imports, SQLite page cache, allocator) off the record.
        for key in ("bare_get", "kapi_get", "kapi_create"):
            sc = next(s for s in SCENARIOS if s.key == key)
            loadgen.run(sc, servers[sc.server].port, 16, 1, "warm")
    value = sqlite_value()
    plan = [(sc, clients) for clients in CLIENTS for sc in SCENARIOS]
    m = Measurements()
    sqlite_cpus = {int(server_cpus)} if server_cpus is not None else None
    for round_no in range(args.rounds):
        # Alternate the order so slow drift (other load, a growing database)
        # does not always favour the scenarios measured first.
        order = plan if round_no % 2 == 0 else plan[::-1]
        started = time.monotonic()
        line = []
        for sc, clients in order:
            server = servers[sc.server]
            cmd = loadgen.command(sc, server.port, clients, args.duration, f"r{round_no}")
            result = measure_load(cmd, server, args.duration)
            m.http.setdefault((sc.key, clients), []).append(result)
            line.append(f"{sc.key}@{clients}={result['rps']:.0f}")
        with affinity(sqlite_cpus):
            for variant, kine in (("insert", False), ("kine_write", True)):
                m.sqlite.setdefault(variant, []).append(
                    sqlite_bench.bench_writes(tmp, value, args.sqlite_duration, kine_write=kine)
                )
        line.append(f"sqlite_insert={m.sqlite['insert'][-1]['rate']:.0f}")
        print(
            f"round {round_no + 1}/{args.rounds} ({time.monotonic() - started:.0f}s): "
            + " ".join(line),
            flush=True,
        )
    return m


def measure_load(cmd: list[str], server: Server, duration: int) -> dict[str, Any]:
    """Run the load generator ``cmd`` against ``server``: its result, with the server's
    CPU share (``server_cpu``) and CPU time per request (``us_per_req``) added."""
    cpu_before, wall_before = cpu_seconds(server.proc.pid), time.monotonic()
    result = run_load(cmd, duration)
    cpu = cpu_seconds(server.proc.pid) - cpu_before
    # CPU the server burnt per request: unlike req/s, little moved by other
    # processes taking turns on the CPUs (see README).  The window includes the
    # load generator's start and exit, so the share is a slight underestimate;
    # the CPU per request is not.
    result["server_cpu"] = cpu / (time.monotonic() - wall_before)
    result["us_per_req"] = cpu / result["requests"] * 1e6 if result["requests"] else 0.0
    return result


def sqlite_value() -> bytes:
    """A value the size kapi stores for the benchmark's ConfigMaps (no resourceVersion)."""
    obj = configmap("raw-000000")
    obj["metadata"].update(
        namespace=NAMESPACE,
        uid="00000000-0000-0000-0000-000000000000",
        creationTimestamp="2025-01-01T00:00:00Z",
    )
    return json.dumps(obj, separators=(",", ":")).encode()


# -- reporting -------------------------------------------------------------------------


def median(rounds: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in rounds))


def workload_row(
    label: str, width: int, clients: int, rounds: list[dict[str, Any]], rps: int, extra: str = ""
) -> str:
    """A line of a benchmark's per-workload table: the medians of ``rounds`` (req/s in a
    column ``rps`` wide), ``extra`` columns, and the failed requests of all rounds."""
    return (
        f"{label:<{width}}{clients:>8}{median(rounds, 'rps'):>{rps},.0f}"
        f"{median(rounds, 'p50_ms'):>9.2f}{median(rounds, 'p99_ms'):>9.2f}"
        f"{median(rounds, 'server_cpu'):>9.0%}{median(rounds, 'us_per_req'):>12,.0f}"
        f"{extra}{sum(r['errors'] for r in rounds):>8}"
    )


def crd_manifest(group: str, plural: str, kind: str, versions: list[Any]) -> dict[str, Any]:
    """A namespaced CustomResourceDefinition of ``versions``."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": versions,
        },
    }


def summarize(info: dict[str, Any], m: Measurements) -> dict[str, Any]:
    """Medians of the rounds, and every ratio as the median of its per-round ratios."""
    http_results: dict[str, dict[str, Any]] = {}
    for (key, clients), rounds in m.http.items():
        http_results.setdefault(key, {})[str(clients)] = {
            "rps": median(rounds, "rps"),
            "p50_ms": median(rounds, "p50_ms"),
            "p99_ms": median(rounds, "p99_ms"),
            "server_cpu": median(rounds, "server_cpu"),
            "us_per_req": median(rounds, "us_per_req"),
            "errors": sum(r["errors"] for r in rounds),
            "rounds": [
                {k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}
                for r in rounds
            ],
        }
    sqlite_results = {
        variant: {
            "rate": median(rounds, "rate"),
            "p50_ms": median(rounds, "p50_ms"),
            "p99_ms": median(rounds, "p99_ms"),
            "rounds": [{k: round(v, 4) for k, v in r.items()} for r in rounds],
        }
        for variant, rounds in m.sqlite.items()
    }
    n_rounds = len(next(iter(m.sqlite.values())))
    ratios = []
    for name, num, den, target in RATIOS:
        for clients in CLIENTS:
            per_round = [m.rate(num, clients, r) / m.rate(den, clients, r) for r in range(n_rounds)]
            per_round_cpu = [
                m.cpu_rate(num, clients, r) / m.cpu_rate(den, clients, r) for r in range(n_rounds)
            ]
            value = float(statistics.median(per_round))
            gated = target is not None and clients == TARGET_CLIENTS
            ratios.append(
                {
                    "name": name,
                    "clients": clients,
                    "value": round(value, 4),
                    "per_round": [round(v, 4) for v in per_round],
                    "cpu_normalized": round(float(statistics.median(per_round_cpu)), 4),
                    "target": target if gated else None,
                    "pass": (value >= target) if gated and target is not None else None,
                }
            )
    return {**info, "http": http_results, "sqlite": sqlite_results, "ratios": ratios}


def render(result: dict[str, Any]) -> str:
    """The human-readable report: one table of workloads, one of ratios."""
    s = result["settings"]
    out = [
        "",
        f"kapi benchmark, {result['date']}, {result['machine']['cpus']} CPUs "
        f"({result['machine']['cpu']}), {s['rounds']} rounds x {s['duration_s']}s, "
        f"median of rounds",
        f"load generator: {s['loadgen']}; pin: {s['pin']}",
        "",
        f"{'workload':<22}{'clients':>8}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'srv CPU':>9}{'CPU us/req':>12}{'errors':>8}",
    ]
    for sc in SCENARIOS:
        for clients in CLIENTS:
            r = result["http"][sc.key][str(clients)]
            out.append(
                f"{sc.label:<22}{clients:>8}{r['rps']:>10,.0f}{r['p50_ms']:>9.2f}"
                f"{r['p99_ms']:>9.2f}{r['server_cpu']:>9.0%}{r['us_per_req']:>12,.0f}"
                f"{r['errors']:>8}"
            )
    for variant, label in (
        ("insert", "raw SQLite insert"),
        ("kine_write", "raw SQLite kine write"),
    ):
        r = result["sqlite"][variant]
        out.append(
            f"{label:<22}{'1':>8}{r['rate']:>10,.0f}{r['p50_ms']:>9.3f}{r['p99_ms']:>9.3f}"
            f"{'100%':>9}{1e6 / r['rate']:>12,.0f}{'-':>8}"
        )
    out += [
        "",
        f"{'ratio of rates (median of rounds)':<37}{'clients':>8}{'req/s':>7}  "
        f"{'rounds':<14}{'CPU-norm':>9}  verdict",
    ]
    for ratio in result["ratios"]:
        if ratio["target"] is not None:
            verdict = f"{'PASS' if ratio['pass'] else 'FAIL'} (target >= {ratio['target']})"
        else:
            verdict = "info"
        spread = f"{min(ratio['per_round']):.3f}..{max(ratio['per_round']):.3f}"
        out.append(
            f"{ratio['name']:<37}{ratio['clients']:>8}{ratio['value']:>7.3f}  {spread:<14}"
            f"{ratio['cpu_normalized']:>9.3f}  {verdict}"
        )
    errors = sum(r["errors"] for per in result["http"].values() for r in per.values())
    if errors:
        out += ["", f"WARNING: {errors} failed requests (non-2xx, timeouts): see the JSON."]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--duration", type=int, default=None, help="seconds per measurement (default 2; quick 1)"
    )
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 5; quick 2)")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 1s, no warm-up")
    parser.add_argument(
        "--loadgen",
        choices=("auto", "wrk", "python"),
        default="auto",
        help="auto: wrk if installed, else the Python fallback",
    )
    parser.add_argument(
        "--pin",
        choices=("split", "none"),
        default="split",
        help="split: servers on CPU 0, load generator on CPU 1 (default); none: no taskset",
    )
    parser.add_argument(
        "--output", type=Path, default=RESULTS_DIR / "latest.json", help="where to write JSON"
    )
    parser.add_argument(
        "--record", action="store_true", help="also write results/<date>.json (to commit)"
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when a ratio misses its target"
    )
    args = parser.parse_args(argv)
    args.duration = args.duration or (1 if args.quick else 2)
    args.rounds = args.rounds or (2 if args.quick else 5)
    if args.duration < 1 or args.rounds < 1:
        parser.error("--duration and --rounds must be at least 1")
    args.sqlite_duration = 0.5 if args.quick else 0.75

    result = run(args)
    print(render(result))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result, indent=1) + "\n"
    args.output.write_text(text)
    print(f"\nresults written to {args.output}")
    if args.record:
        dated = RESULTS_DIR / f"{result['date'][:10]}.json"
        dated.write_text(text)
        print(f"recorded as {dated}")
    failed = any(r["pass"] is False for r in result["ratios"])
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
