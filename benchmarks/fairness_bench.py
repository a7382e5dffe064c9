"""Does one pathological request stall everyone else? Small GETs, alone and beside it.

Starts a real ``kapi serve`` (fresh temp data dir, as ``run.py`` does), creates
``--objects`` ConfigMaps, then measures the latency of small GETs (one
ConfigMap each, from ``--clients`` concurrent keep-alive clients) in two
kinds of phase, interleaved over ``--rounds``:

* **quiet**: the GETs alone, for ``--duration`` seconds;
* **loaded**: the same GETs while a LIST of every ConfigMap with a label
  selector of ``--terms`` ``!=`` terms (``k0!=x,k1!=x,...``, about 48 KB for
  5,500 terms) runs; the LIST is repeated until ``--duration`` has passed.

It prints p50/p99/max of the GETs in each phase, the loaded/quiet ratios and
how long each LIST took.  The ratios, not the absolute milliseconds, are what
carries across machines: on an event loop that never yields, the loaded p99 is
about the LIST's own duration.

    python benchmarks/fairness_bench.py                    # about a minute
    python benchmarks/fairness_bench.py --src /tmp/base/src  # another checkout's kapi
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
NAMESPACE = "fair"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def request(
    conn: http.client.HTTPConnection, method: str, path: str, body: Any = None
) -> tuple[int, bytes]:
    payload = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if payload else {}
    conn.request(method, path, payload, headers)
    response = conn.getresponse()
    return response.status, response.read()


def start_kapi(src: Path, tmp: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(src))
    log = (tmp / "kapi.log").open("wb")
    cmd = [sys.executable, "-m", "kapi", "serve", "--data-dir", str(tmp / "data")]
    proc = subprocess.Popen(
        [*cmd, "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=tmp,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError((tmp / "kapi.log").read_text()[-2000:])
        with contextlib.suppress(OSError, http.client.HTTPException):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            if request(conn, "GET", "/readyz")[0] == 200:
                conn.close()
                return proc, port
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("kapi not ready after 60s")


def create_objects(port: int, count: int, workers: int = 4) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    status, body = request(conn, "POST", "/api/v1/namespaces", ns)
    assert status == 201, body

    def create_range(first: int) -> None:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for i in range(first, count, workers):
            cm = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "labels": {"app": "fair", "idx": str(i)}},
                "data": {"key": f"value-{i}"},
            }
            status, body = request(c, "POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps", cm)
            assert status == 201, body

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        list(pool.map(create_range, range(workers)))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def run_phase(
    port: int, clients: int, duration: float, selector: str | None, objects: int
) -> tuple[list[float], list[float]]:
    """GET latencies (s) of ``clients`` loops, and the LIST durations (s) when ``selector``."""
    stop = threading.Event()
    latencies: list[list[float]] = [[] for _ in range(clients)]
    list_times: list[float] = []

    def getter(slot: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        path = f"/api/v1/namespaces/{NAMESPACE}/configmaps/cm-{slot}"
        while not stop.is_set():
            started = time.perf_counter()
            status, _ = request(conn, "GET", path)
            latencies[slot].append(time.perf_counter() - started)
            assert status == 200, status

    def lister() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        path = f"/api/v1/namespaces/{NAMESPACE}/configmaps?labelSelector={selector}"
        deadline = time.monotonic() + duration
        while time.monotonic() < deadline:
            started = time.perf_counter()
            status, body = request(conn, "GET", path)
            list_times.append(time.perf_counter() - started)
            assert status == 200, body[:300]
            if len(list_times) == 1:  # once: parsing the body holds this process's GIL
                assert len(json.loads(body)["items"]) == objects
        stop.set()

    threads = [threading.Thread(target=getter, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    if selector is None:
        time.sleep(duration)
        stop.set()
    else:
        lister()
    for t in threads:
        t.join()
    return [x for xs in latencies for x in xs], list_times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=REPO / "src", help="kapi source tree")
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--terms", type=int, default=5500)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per phase")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--server-log", type=Path, help="keep kapi's output in this file")
    args = parser.parse_args()
    selector = ",".join(f"k{i}!=x" for i in range(args.terms))
    with tempfile.TemporaryDirectory(prefix="kapi-fair-") as tmp_name:
        proc, port = start_kapi(args.src, Path(tmp_name))
        try:
            started = time.monotonic()
            create_objects(port, args.objects)
            print(
                f"kapi from {args.src}; {args.objects} ConfigMaps created in "
                f"{time.monotonic() - started:.1f}s; selector of {args.terms} terms, "
                f"{len(selector)} bytes; {args.clients} GET clients; "
                f"{args.rounds} rounds x {args.duration:.0f}s per phase"
            )
            quiet: list[float] = []
            loaded: list[float] = []
            lists: list[float] = []
            for r in range(args.rounds):
                order = (None, selector) if r % 2 == 0 else (selector, None)
                for sel in order:
                    lat, lt = run_phase(port, args.clients, args.duration, sel, args.objects)
                    (quiet if sel is None else loaded).extend(lat)
                    lists.extend(lt)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if args.server_log is not None:
                shutil.copyfile(Path(tmp_name) / "kapi.log", args.server_log)
    rows = [("quiet", quiet), ("loaded", loaded)]
    print(f"\n{'phase':<8} {'GETs':>7} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9}")
    for name, lat in rows:
        print(
            f"{name:<8} {len(lat):>7} {percentile(lat, 50) * 1e3:>9.2f} "
            f"{percentile(lat, 99) * 1e3:>9.2f} {max(lat) * 1e3:>9.2f}"
        )
    for p in (50, 99):
        ratio = percentile(loaded, p) / percentile(quiet, p)
        print(f"loaded/quiet p{p}: {ratio:.1f}x")
    print(
        f"pathological LIST: {len(lists)} runs, median {statistics.median(lists):.2f}s, "
        f"max {max(lists):.2f}s; GETs served per second quiet "
        f"{len(quiet) / (args.rounds * args.duration):.0f}, loaded "
        f"{len(loaded) / sum(lists):.0f}"
    )


if __name__ == "__main__":
    main()
