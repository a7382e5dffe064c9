"""A Deployment next to the benchmark ConfigMap: GET and CREATE, each against its own ceiling.

``run.py`` measures kapi with a small ConfigMap.  A Deployment is what most
clients actually write: a pod template that kapi defaults (about twenty
fields) and validates (containers, ports, env, resources, probes) on every
create, and a body three to four times larger.  This benchmark holds it to
the same targets as the ConfigMap, measured the same way and in the same
rounds:

* one ``kapi serve`` (fresh temp data dir, default settings) holding the
  ConfigMap ``bench/x`` of ``run.py`` and a Deployment ``bench/x``;
* two bare apps (``bare_app.py``, kapi's stack and flags), one answering
  kapi's GET response of the ConfigMap, the other kapi's GET response of the
  Deployment, so each kind's ceiling writes as many bytes as kapi does;
* per kind: bare GET, kapi GET, bare POST, kapi CREATE, at 1 and 16
  clients, in interleaved rounds (odd rounds reversed); a POST sends the
  same bytes to the bare app and to kapi (``wrk/create_named.lua``: the
  manifest with a new name every request).

Reported per round and as the median of per-round ratios: kapi / bare for
each kind (targets at 16 clients: GET >= 0.35, CREATE >= 0.25, as in
``run.py``), Deployment / ConfigMap of kapi's rates, and the server CPU per
request of every workload.  Server start, pinning, wrk and CPU accounting
are ``run.py``'s.

    python benchmarks/workload_bench.py             # 5 rounds x 2 s, about 3.5 minutes
    python benchmarks/workload_bench.py --rounds 3  # about 2 minutes
    python benchmarks/workload_bench.py --quick     # 2 rounds x 1 s, no warm-up
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import run as bench

NAMESPACE = bench.NAMESPACE
#: Stands for metadata.name in a manifest, where create_named.lua puts a new name.
NAME_MARK = "__NAME__"
#: (name, numerator, denominator, target at 16 clients); None: information only.
TARGETS = (("GET", "get", "bare_get", 0.35), ("CREATE", "create", "bare_post", 0.25))


def deployment(name: str) -> dict[str, Any]:
    """A typical Deployment: what ``kubectl create deployment web --image=... --port=8080
    --replicas=3`` sends, plus what a hand-written manifest usually adds (env, resources,
    probes, a rolling-update strategy)."""
    labels = {"app": "web"}
    probe = {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": labels},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0},
            },
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "registry.example.com/team/web:1.4.2",
                            "ports": [{"name": "http", "containerPort": 8080}],
                            "env": [
                                {"name": "LOG_LEVEL", "value": "info"},
                                {"name": "PORT", "value": "8080"},
                                {
                                    "name": "POD_NAME",
                                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                                },
                            ],
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "128Mi"},
                                "limits": {"cpu": "500m", "memory": "256Mi"},
                            },
                            "livenessProbe": {**probe, "initialDelaySeconds": 10},
                            "readinessProbe": probe,
                        }
                    ]
                },
            },
        },
    }


@dataclass(frozen=True)
class Kind:
    """One kind measured: where it lives and the manifest its creates send."""

    key: str  # "cm" or "deploy"
    label: str
    collection: str
    manifest: dict[str, Any]  # metadata.name is NAME_MARK

    def body(self, name: str) -> dict[str, Any]:
        return json.loads(json.dumps(self.manifest).replace(NAME_MARK, name))

    def halves(self) -> tuple[str, str]:
        """The compact JSON manifest split at its name, for create_named.lua."""
        head, tail = json.dumps(self.manifest, separators=(",", ":")).split(NAME_MARK)
        return head, tail


CONFIGMAP = Kind(
    "cm", "ConfigMap", f"/api/v1/namespaces/{NAMESPACE}/configmaps", bench.configmap(NAME_MARK)
)
DEPLOYMENT = Kind(
    "deploy",
    "Deployment",
    f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments",
    deployment(NAME_MARK),
)
KINDS = (CONFIGMAP, DEPLOYMENT)


@dataclass(frozen=True)
class Workload:
    kind: Kind
    op: str  # "bare_get", "get", "bare_post" or "create"

    @property
    def key(self) -> str:
        return f"{self.kind.key}_{self.op}"

    @property
    def server(self) -> str:
        return f"bare_{self.kind.key}" if self.op.startswith("bare") else "kapi"

    @property
    def label(self) -> str:
        names = {"bare_get": "bare GET", "get": "kapi GET", "bare_post": "bare POST"}
        return f"{self.kind.label} {names.get(self.op, 'kapi CREATE')}"

    def command(self, port: int, clients: int, duration: int, tag: str) -> list[str]:
        url = f"http://127.0.0.1:{port}"
        if self.op.endswith("get"):
            return bench.wrk_command("get.lua", f"{url}{self.kind.collection}/x", clients, duration)
        prefix = f"{tag}-c{clients}"
        args = [self.kind.collection, prefix, *self.kind.halves()]
        return bench.wrk_command("create_named.lua", url, clients, duration, args)


WORKLOADS = tuple(
    Workload(k, op) for k in KINDS for op in ("bare_get", "get", "bare_post", "create")
)

Results = dict[tuple[str, int], list[dict[str, Any]]]


def prepare(port: int, tmp: Path) -> dict[str, Path]:
    """Namespace and one object of each kind; their GET responses, as the bare apps' bodies."""
    client = bench.Client(port)
    client.call(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        201,
    )
    bodies = {}
    for kind in KINDS:
        bodies[kind.key] = tmp / f"{kind.key}.json"
        bodies[kind.key].write_bytes(create_objects(client, kind))
    client.conn.close()
    return bodies


def create_objects(client: bench.Client, kind: Kind) -> bytes:
    """``x`` of ``kind`` in the benchmark namespace; kapi's GET response of it."""
    client.call("POST", kind.collection, kind.body("x"), 201)
    # The benchmark's create must be a real one: checked once, off the record.
    client.call("POST", kind.collection, kind.body("check"), 201)
    return client.call("GET", f"{kind.collection}/x")


def measure(
    servers: dict[str, bench.Server], cpus: str | None, rounds: int, duration: int
) -> Results:
    plan = [(w, clients) for clients in bench.CLIENTS for w in WORKLOADS]
    results: Results = {}
    for round_no in range(rounds):
        for w, clients in plan if round_no % 2 == 0 else plan[::-1]:
            server = servers[w.server]
            cmd = bench.pinned(w.command(server.port, clients, duration, f"r{round_no}"), cpus)
            results.setdefault((w.key, clients), []).append(
                bench.measure_load(cmd, server, duration)
            )
        print(f"round {round_no + 1}/{rounds}: " + round_line(results, round_no), flush=True)
    return results


def ratios(results: Results, num: str, den: str, clients: int) -> tuple[list[float], list[float]]:
    """Per round: the rate ratio num / den, and the same from CPU time per request."""
    a, b = results[(num, clients)], results[(den, clients)]
    rate = [x["rps"] / y["rps"] for x, y in zip(a, b, strict=True)]
    cpu = [y["us_per_req"] / x["us_per_req"] for x, y in zip(a, b, strict=True)]
    return rate, cpu


def round_line(results: Results, r: int) -> str:
    parts = []
    for clients in bench.CLIENTS:
        for kind in KINDS:
            for name, op, bare, _ in TARGETS:
                rate, _cpu = ratios(results, f"{kind.key}_{op}", f"{kind.key}_{bare}", clients)
                parts.append(f"{kind.key} {name}@{clients} {rate[r]:.3f}")
        for name, op, _, _ in TARGETS:
            rate, _cpu = ratios(results, f"deploy_{op}", f"cm_{op}", clients)
            parts.append(f"deploy/cm {name}@{clients} {rate[r]:.3f}")
    return ", ".join(parts)


def render(results: Results) -> str:
    out = [
        "",
        f"{'workload':<26}{'clients':>8}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'srv CPU':>9}{'CPU us/req':>12}{'errors':>8}",
    ]
    for w in WORKLOADS:
        for clients in bench.CLIENTS:
            out.append(bench.workload_row(w.label, 26, clients, results[(w.key, clients)], 10))
    out += [
        "",
        f"{'ratio of rates (median of rounds)':<40}{'clients':>8}{'req/s':>7}  "
        f"{'per round':<22}{'CPU-norm':>9}  verdict",
    ]
    rows = [
        (f"{k.label} kapi {name} / bare", f"{k.key}_{op}", f"{k.key}_{bare}", target)
        for k in KINDS
        for name, op, bare, target in TARGETS
    ]
    rows += [
        (f"kapi {name}: Deployment / ConfigMap", f"deploy_{op}", f"cm_{op}", None)
        for name, op, _, _ in TARGETS
    ]
    rows += [
        (f"bare {name}: Deployment / ConfigMap", f"deploy_{bare}", f"cm_{bare}", None)
        for name, _, bare, _ in TARGETS
    ]
    for label, num, den, target in rows:
        for clients in bench.CLIENTS:
            rate, cpu = ratios(results, num, den, clients)
            value = statistics.median(rate)
            if target is not None and clients == bench.TARGET_CLIENTS:
                verdict = f"{'PASS' if value >= target else 'FAIL'} (target >= {target})"
            else:
                verdict = "info"
            per_round = " ".join(f"{v:.3f}" for v in rate)
            out.append(
                f"{label:<40}{clients:>8}{value:>7.3f}  {per_round:<22}"
                f"{statistics.median(cpu):>9.3f}  {verdict}"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    args = bench.paired_options(__doc__.splitlines()[0], argv)
    with tempfile.TemporaryDirectory(prefix="kapi-workload-bench-") as tmp_name:
        tmp = Path(tmp_name)
        servers: dict[str, bench.Server] = {}
        try:
            cmd = [sys.executable, "-m", "kapi", "serve", "--data-dir", str(tmp / "data")]
            servers["kapi"] = bench.start_server("kapi", cmd, tmp, args.server_cpus)
            servers["kapi"].wait_ready("/readyz")
            bodies = prepare(servers["kapi"].port, tmp)
            for key, path in bodies.items():
                bare = [sys.executable, str(bench.BENCH_DIR / "bare_app.py"), "--body-file"]
                servers[f"bare_{key}"] = bench.start_server(
                    f"bare_{key}", [*bare, str(path)], tmp, args.server_cpus
                )
                servers[f"bare_{key}"].wait_ready("/")
            sizes = ", ".join(
                f"{k.label} GET {bodies[k.key].stat().st_size} B, "
                f"POST {sum(map(len, k.halves())) + len('r0-c16-0-1')} B"
                for k in KINDS
            )
            print(
                f"{bench.wrk_version()}, pin: "
                f"{'servers on CPU 0, wrk on CPU 1' if args.split else 'none'}, "
                f"{args.rounds} rounds x {args.duration}s; {sizes}; "
                f"loadavg {' '.join(f'{v:.2f}' for v in os.getloadavg())}",
                flush=True,
            )
            if not args.quick:
                for w in WORKLOADS:
                    server = servers[w.server]
                    warm = bench.pinned(w.command(server.port, 16, 1, "warm"), args.loadgen_cpus)
                    bench.run_load(warm, 1)
            results = measure(servers, args.loadgen_cpus, args.rounds, args.duration)
        finally:
            for server in servers.values():
                server.stop()
    print(render(results))
    print(f"\nloadavg at the end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
