"""What a deprecation warning costs: the same GET on a deprecated and on a current version.

KEP-1693 adds work to every request for a deprecated API: the ``Warning``
header, the ``apiserver_requested_deprecated_apis`` gauge, the audit
annotations.  Clients that have not migrated yet must not be slowed down for
it, so the target is that a deprecated GET costs at most 5% more than the same
GET on the replacement version.

One ``kapi serve --emulated-version 1.24`` (where ``policy/v1beta1`` is served
and deprecated) and three pairs of GETs, back to back in interleaved rounds
(odd rounds in reverse order):

- one PodDisruptionBudget through ``policy/v1beta1`` (with the warning) and
  ``policy/v1``: the built-in case, which also pays for the v1beta1 conversion;
- one custom resource through a deprecated ``v1beta1`` and the current ``v1``
  of a CRD with conversion strategy ``None``: the same object on both
  versions; the ``v1beta1`` GET also rewrites the stored ``apiVersion``;
- the control, not held to the target: the same through a second CRD whose
  ``v1beta1`` is not deprecated.  It shows what reading a version other
  than the stored one costs, so that the widget pair's gap beyond it is the
  deprecation's own.

Server start, pinning, load generation and CPU accounting are ``run.py``'s.

    python benchmarks/warnings_bench.py            # 5 rounds x 2 s, about 1 minute
    python benchmarks/warnings_bench.py --quick    # 2 rounds x 1 s
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import run as bench

EMULATED_VERSION = "1.24"
NAMESPACE = "bench"
PDB_NAME = "x"
#: The most the deprecated GET may cost over the current one (ratio of rates at 16 clients).
TARGET = 0.95
WARNING = (
    b'299 - "policy/v1beta1 PodDisruptionBudget is deprecated in v1.21+, unavailable in v1.25+; '
    b'use policy/v1 PodDisruptionBudget"'
)


def pdb_path(version: str) -> str:
    return f"/apis/policy/{version}/namespaces/{NAMESPACE}/poddisruptionbudgets/{PDB_NAME}"


CR_GROUP = "bench.kapi.dev"
CR_WARNING = b'299 - "bench.kapi.dev/v1beta1 Widget is deprecated; use bench.kapi.dev/v1 Widget"'


def widget_path(version: str) -> str:
    return f"/apis/{CR_GROUP}/{version}/namespaces/{NAMESPACE}/widgets/{PDB_NAME}"


CURRENT = bench.Scenario("pdb_v1", "GET policy/v1", "kapi", "get", pdb_path("v1"))
DEPRECATED = bench.Scenario("pdb_v1beta1", "GET policy/v1beta1", "kapi", "get", pdb_path("v1beta1"))
CR_CURRENT = bench.Scenario("cr_v1", "GET widget v1", "kapi", "get", widget_path("v1"))
CR_DEPRECATED = bench.Scenario(
    "cr_v1beta1", "GET widget v1beta1", "kapi", "get", widget_path("v1beta1")
)
#: (current, deprecated) pairs; each deprecated GET must cost at most 5% more.
PAIRS = ((CURRENT, DEPRECATED), (CR_CURRENT, CR_DEPRECATED))


def gadget_path(version: str) -> str:
    return f"/apis/{CR_GROUP}/{version}/namespaces/{NAMESPACE}/gadgets/{PDB_NAME}"


#: The control: the widget pair's twin with neither version deprecated, so the gap
#: between its ratio and the widget pair's is the deprecation's share of the cost.
CONTROL = (
    bench.Scenario("gadget_v1", "GET gadget v1", "kapi", "get", gadget_path("v1")),
    bench.Scenario("gadget_v1beta1", "GET gadget v1beta1", "kapi", "get", gadget_path("v1beta1")),
)
SCENARIOS = tuple(sc for pair in (*PAIRS, CONTROL) for sc in pair)


def widget_crd(
    plural: str = "widgets", kind: str = "Widget", deprecated: bool = True
) -> dict[str, Any]:
    """A CRD with a ``v1`` (storage) and a ``v1beta1`` (deprecated, unless told not).

    Conversion strategy ``None``: both versions read the same stored object.
    """
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    versions = [
        {
            "name": name,
            "served": True,
            "storage": name == "v1",
            "schema": {"openAPIV3Schema": schema},
        }
        for name in ("v1", "v1beta1")
    ]
    if deprecated:
        versions[1]["deprecated"] = True
    return bench.crd_manifest(CR_GROUP, plural, kind, versions)


def prepare(port: int) -> None:
    """The namespace and the PDB, then a check that only the deprecated GET warns."""
    client = bench.Client(port)
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    client.call("POST", "/api/v1/namespaces", namespace, 201)
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": PDB_NAME},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }
    client.call("POST", f"/apis/policy/v1/namespaces/{NAMESPACE}/poddisruptionbudgets", pdb, 201)
    crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    for plural, kind, deprecated in (("widgets", "Widget", True), ("gadgets", "Gadget", False)):
        client.call("POST", crd_path, widget_crd(plural, kind, deprecated), 201)
        create_when_served(client, plural, kind)
    expectations = (
        (CURRENT, []),
        (DEPRECATED, [WARNING]),
        (CR_CURRENT, []),
        (CR_DEPRECATED, [CR_WARNING]),
        (CONTROL[0], []),
        (CONTROL[1], []),
    )
    for scenario, expected in expectations:
        client.conn.request("GET", scenario.path)
        response = client.conn.getresponse()
        response.read()
        warnings = [v.encode() for k, v in response.getheaders() if k.lower() == "warning"]
        if (response.status, warnings) != (200, expected):
            raise RuntimeError(f"{scenario.path}: {response.status} {warnings}")
    client.conn.close()


def create_when_served(client: bench.Client, plural: str, kind: str) -> None:
    """The benchmark's custom resource, once the CRD controller has established its CRD."""
    body = {"apiVersion": f"{CR_GROUP}/v1", "kind": kind, "metadata": {"name": PDB_NAME}}
    client.until("POST", f"/apis/{CR_GROUP}/v1/namespaces/{NAMESPACE}/{plural}", 201, body)


def measure(
    loadgen: bench.LoadGenerator, server: bench.Server, rounds: int, duration: int
) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Every round: both scenarios at every client count, in alternating order."""
    plan = [(sc, clients) for clients in bench.CLIENTS for sc in SCENARIOS]
    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for round_no in range(rounds):
        line = []
        for sc, clients in plan if round_no % 2 == 0 else plan[::-1]:
            cpu_before, wall_before = bench.cpu_seconds(server.proc.pid), time.monotonic()
            result = loadgen.run(sc, server.port, clients, duration, f"r{round_no}")
            cpu = bench.cpu_seconds(server.proc.pid) - cpu_before
            result["server_cpu"] = cpu / (time.monotonic() - wall_before)
            result["us_per_req"] = cpu / result["requests"] * 1e6 if result["requests"] else 0.0
            results.setdefault((sc.key, clients), []).append(result)
            line.append(f"{sc.key}@{clients}={result['rps']:.0f}")
        print(f"round {round_no + 1}/{rounds}: " + " ".join(line), flush=True)
    return results


def render(results: dict[tuple[str, int], list[dict[str, Any]]], rounds: int) -> str:
    out = [
        "",
        f"{'workload':<22}{'clients':>8}{'req/s':>10}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'srv CPU':>9}{'CPU us/req':>12}{'errors':>8}",
    ]
    for sc in SCENARIOS:
        for clients in bench.CLIENTS:
            out.append(bench.workload_row(sc.label, 22, clients, results[(sc.key, clients)], 10))
    out += [
        "",
        f"{'v1beta1 / v1 (median of rounds)':<34}{'clients':>8}{'req/s':>7}  "
        f"{'rounds':<14}{'CPU-norm':>9}  verdict",
    ]
    for current, deprecated in (*PAIRS, CONTROL):
        for clients in bench.CLIENTS:
            new, old = results[(current.key, clients)], results[(deprecated.key, clients)]
            rate = [old[r]["rps"] / new[r]["rps"] for r in range(rounds)]
            cpu = [new[r]["us_per_req"] / old[r]["us_per_req"] for r in range(rounds)]
            value = statistics.median(rate)
            if clients == bench.TARGET_CLIENTS and (current, deprecated) in PAIRS:
                verdict = f"{'PASS' if value >= TARGET else 'FAIL'} (target >= {TARGET})"
            else:
                verdict = "info"
            spread = f"{min(rate):.3f}..{max(rate):.3f}"
            out.append(
                f"{deprecated.label + ' / v1':<34}{clients:>8}{value:>7.3f}  {spread:<14}"
                f"{statistics.median(cpu):>9.3f}  {verdict}"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    args = bench.paired_options(__doc__.splitlines()[0], argv)
    duration, rounds, split = args.duration, args.rounds, args.split
    server_cpus, loadgen_cpus = args.server_cpus, args.loadgen_cpus
    loadgen = bench.LoadGenerator("wrk", loadgen_cpus)
    with tempfile.TemporaryDirectory(prefix="kapi-warnings-bench-") as tmp_name:
        tmp = Path(tmp_name)
        cmd = [sys.executable, "-m", "kapi", "serve", "--data-dir", str(tmp / "data")]
        cmd.append(f"--emulated-version={EMULATED_VERSION}")
        server = bench.start_server("kapi", cmd, tmp, server_cpus)
        try:
            server.wait_ready("/readyz")
            prepare(server.port)
            print(
                f"kapi at --emulated-version {EMULATED_VERSION}, {bench.wrk_version()}, "
                f"pin: {'server on CPU 0, wrk on CPU 1' if split else 'none'}, "
                f"{rounds} rounds x {duration}s",
                flush=True,
            )
            if not args.quick:
                for sc in SCENARIOS:
                    loadgen.run(sc, server.port, 16, 1, "warm")
            results = measure(loadgen, server, rounds, duration)
        finally:
            server.stop()
    print(render(results, rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
