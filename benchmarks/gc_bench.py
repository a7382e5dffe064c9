"""What the garbage collector costs a write: ConfigMap CREATE with it and without it.

The collector follows every write (one watch of the whole registry, each
value's metadata parsed) in the server's own process, so every create pays
for it.  Two ``kapi serve`` run side by side, one with the default
``--enable-garbage-collector`` and one with ``=false``, and ``run.py``'s
CREATE scenario (a new ConfigMap per request) is measured on both in
interleaved rounds (odd rounds reversed) at 1 and 16 clients.

Reported: req/s and server CPU per request of each, and per round the ratio
collector / none of the rates and of the CPU per request (1.0: free).

    python benchmarks/gc_bench.py            # 5 rounds x 2 s, about 1 minute
    python benchmarks/gc_bench.py --quick    # 2 rounds x 1 s
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import run as bench

CREATE = next(s for s in bench.SCENARIOS if s.key == "kapi_create")
SERVERS = {"collector": (), "none": ("--enable-garbage-collector=false",)}


def main(argv: list[str] | None = None) -> int:
    args = bench.paired_options(__doc__.splitlines()[0], argv)
    loadgen = bench.LoadGenerator("wrk", args.loadgen_cpus)
    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="kapi-gc-bench-") as tmp_name:
        tmp = Path(tmp_name)
        servers: dict[str, bench.Server] = {}
        try:
            for name, flags in SERVERS.items():
                data = str(tmp / name)
                cmd = [sys.executable, "-m", "kapi", "serve", "--data-dir", data, *flags]
                servers[name] = bench.start_server(name, cmd, tmp, args.server_cpus)
                servers[name].wait_ready("/readyz")
                bench.prepare_kapi(servers[name].port)
            plan = [(name, clients) for clients in bench.CLIENTS for name in SERVERS]
            for round_no in range(args.rounds):
                for name, clients in plan if round_no % 2 == 0 else plan[::-1]:
                    server = servers[name]
                    cmd = loadgen.command(
                        CREATE, server.port, clients, args.duration, f"r{round_no}"
                    )
                    results.setdefault((name, clients), []).append(
                        bench.measure_load(cmd, server, args.duration)
                    )
                print(f"round {round_no + 1}/{args.rounds} done", flush=True)
        finally:
            for server in servers.values():
                server.stop()
    print(
        f"\n{'server':<12}{'clients':>8}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'srv CPU':>9}{'CPU us/req':>12}{'errors':>8}"
    )
    for name in SERVERS:
        for clients in bench.CLIENTS:
            print(bench.workload_row(name, 12, clients, results[(name, clients)], 10))
    print(f"\n{'collector / none':<20}{'clients':>8}{'req/s':>8}{'CPU/req':>9}  per round (req/s)")
    for clients in bench.CLIENTS:
        on, off = results[("collector", clients)], results[("none", clients)]
        rate = [a["rps"] / b["rps"] for a, b in zip(on, off, strict=True)]
        cpu = [a["us_per_req"] / b["us_per_req"] for a, b in zip(on, off, strict=True)]
        per_round = " ".join(f"{v:.3f}" for v in rate)
        print(
            f"{'':<20}{clients:>8}{statistics.median(rate):>8.3f}"
            f"{statistics.median(cpu):>9.3f}  {per_round}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
