"""What CRD validation ratcheting costs: custom-resource updates with the gate on and off.

KEP-4008 makes every update of a custom resource pair the new object with the
old one, so that errors on unchanged values can be forgiven.  Objects that
are valid (nearly all of them) must not pay much for it: the target is at
most 2% fewer updates per second with ratcheting on than with it off.

Two ``kapi serve`` processes, measured in alternation within every round (odd
rounds in reverse order, so drift hits both sides alike):

- ``on``: the default server (emulating 1.33, where ``CRDValidationRatcheting``
  is GA and locked on);
- ``off``: ``--emulated-version 1.32 --feature-gates CRDValidationRatcheting=false``.

Both serve the same CRD, a realistic one: 50 fields under ``spec`` (strings
with ``maxLength``, ``pattern`` or ``enum``, bounded integers, a list-type map
of 10 ports, a set, an atomic list, a string map, nested objects, two CEL
rules).  Every update is a conditional PUT of the whole object (the script
tracks resourceVersions), of one of 100 objects:

- (a) ``one field``: only ``spec.description`` changes;
- (b) ``all fields``: every one of the 50 fields changes (the objects switch
  between two valid variants);
- (c) ``ratcheted``: the objects were stored under a looser CRD, which was then
  tightened (``spec.legacyCode``: ``maxLength`` 16 -> 4 and a CEL rule), so
  every stored object violates it; the update changes only
  ``spec.description``.  With ratcheting on, the update goes through (the CEL
  failure comes back as a ``Warning``); with it off, it is refused with 422,
  so (c) has no ratio: it is reported next to (a) on the same server, with
  the time spent comparing old and new values taken from
  ``apiextensions_apiserver_validation_ratcheting_seconds``.

Server start, pinning, wrk and CPU accounting are ``run.py``'s.

    python benchmarks/ratcheting_bench.py            # 5 rounds x 2 s, about 2 minutes
    python benchmarks/ratcheting_bench.py --quick    # 2 rounds x 1 s
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import run as bench

# The in-process part imports this checkout's kapi (run.py's servers get it through PYTHONPATH).
sys.path.insert(0, str(bench.REPO / "src"))
from kapi.apiextensions.strategy import CustomResourceStrategy, Ratcheting
from kapi.apimachinery.field_errors import Path as FieldPath
from kapi.endpoints.metrics import APIServerMetrics
from kapi.validation.cel import CELValidator
from kapi.validation.schema_validator import SchemaValidator

GROUP = "bench.kapi.dev"
NAMESPACE = "bench"
POOL = 100
#: The most ratcheting may cost: updates/s with it on over updates/s with it off, at 16 clients.
TARGET = 0.98
OFF_FLAGS = ("--emulated-version", "1.32", "--feature-gates", "CRDValidationRatcheting=false")
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#: The holes of a body template, filled by wrk/cr_update.lua on every request.
NAME, RV, SEQ = "@@NAME@@", "@@RV@@", "@@SEQ@@"
LEGACY_CODE = "legacy-07"
LEGACY_MESSAGE = "must be lowercase letters only"


# -- the custom resource -----------------------------------------------------------------


def _str(**kw: Any) -> dict[str, Any]:
    return {"type": "string", **kw}


def _int(lo: int, hi: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": lo, "maximum": hi}


def _bool() -> dict[str, Any]:
    return {"type": "boolean"}


def _obj(props: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **kw}


_DNS_LABEL = _str(maxLength=63, pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_QUANTITY = _str(maxLength=16, pattern="^[0-9]+(m|Mi|Gi)?$")


def spec_schema(tightened: bool = False) -> dict[str, Any]:
    """The CRD's ``spec``: 50 fields; ``tightened`` narrows ``legacyCode`` (scenario c)."""
    legacy = _str(maxLength=16)
    if tightened:
        legacy = _str(
            maxLength=4,
            **{
                "x-kubernetes-validations": [
                    {"rule": "self.matches('^[a-z]+$')", "message": LEGACY_MESSAGE}
                ]
            },
        )
    port = _obj(
        {
            "name": _DNS_LABEL,
            "containerPort": _int(1, 65535),
            "protocol": _str(enum=["TCP", "UDP", "SCTP"]),
        },
        required=["name", "containerPort"],
    )
    return _obj(
        {
            # strings (14)
            "displayName": _str(maxLength=63),
            "description": _str(maxLength=256),
            "owner": _str(maxLength=254, pattern="^[^@ ]+@[^@ ]+$"),
            "team": _DNS_LABEL,
            "tier": _str(enum=["bronze", "silver", "gold"]),
            "region": _str(enum=["eu-west-1", "us-east-1", "ap-south-1"]),
            "environment": _str(enum=["dev", "staging", "prod"]),
            "image": _str(maxLength=255, pattern="^[a-z0-9./:-]+$"),
            "imagePullPolicy": _str(enum=["Always", "IfNotPresent", "Never"]),
            "schedule": _str(maxLength=64),
            "logLevel": _str(enum=["debug", "info", "warn", "error"]),
            "serviceAccountName": _DNS_LABEL,
            "priorityClassName": _str(maxLength=253),
            "legacyCode": legacy,
            # integers, booleans, a number (13)
            "replicas": _int(0, 100),
            "minReplicas": _int(0, 100),
            "maxReplicas": _int(1, 1000),
            "port": _int(1, 65535),
            "timeoutSeconds": _int(1, 3600),
            "retries": _int(0, 10),
            "memoryMiB": _int(64, 65536),
            "cpuMillis": _int(10, 64000),
            "priority": _int(-100, 100),
            "weight": _int(0, 1000),
            "suspend": _bool(),
            "debug": _bool(),
            "ratio": {"type": "number", "minimum": 0, "maximum": 1},
            # lists and maps (5)
            "ports": {
                "type": "array",
                "maxItems": 16,
                "items": port,
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-validations": [
                    {
                        "rule": "self.all(p, p.containerPort >= 1024 || p.protocol == 'TCP')",
                        "message": "ports below 1024 must be TCP",
                    }
                ],
            },
            "tags": {
                "type": "array",
                "maxItems": 32,
                "items": _str(maxLength=32),
                "x-kubernetes-list-type": "set",
            },
            "args": {
                "type": "array",
                "maxItems": 32,
                "items": _str(maxLength=128),
                "x-kubernetes-list-type": "atomic",
            },
            "selector": {"type": "object", "additionalProperties": _str(maxLength=63)},
            "config": {"type": "object", "additionalProperties": _str(maxLength=256)},
            # nested objects (18 fields)
            "resources": _obj(
                {
                    "requests": _obj({"cpu": _QUANTITY, "memory": _QUANTITY}),
                    "limits": _obj({"cpu": _QUANTITY, "memory": _QUANTITY}),
                }
            ),
            "probe": _obj(
                {
                    "path": _str(maxLength=256, pattern="^/"),
                    "port": _int(1, 65535),
                    "initialDelaySeconds": _int(0, 600),
                    "periodSeconds": _int(1, 600),
                    "failureThreshold": _int(1, 100),
                }
            ),
            "storage": _obj(
                {
                    "className": _DNS_LABEL,
                    "sizeGi": _int(1, 1024),
                    "accessMode": _str(enum=["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"]),
                    "retainOnDelete": _bool(),
                }
            ),
            "network": _obj(
                {
                    "hostNetwork": _bool(),
                    "dnsPolicy": _str(enum=["ClusterFirst", "Default", "None"]),
                    "mtu": _int(576, 9000),
                }
            ),
            "maintenanceWindow": _obj(
                {
                    "day": _str(enum=["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]),
                    "hour": _int(0, 23),
                }
            ),
        },
        required=["image", "replicas", "ports"],
        **{
            "x-kubernetes-validations": [
                {
                    "rule": "self.minReplicas <= self.maxReplicas",
                    "message": "minReplicas must not exceed maxReplicas",
                }
            ]
        },
    )


def spec_fields(schema: dict[str, Any]) -> int:
    """Fields of ``spec``: leaves, counting a list or a map as one (as the docstring does)."""
    count = 0
    for prop in schema["properties"].values():
        if prop["type"] == "object" and "properties" in prop:
            count += spec_fields(prop)
        else:
            count += 1
    return count


def spec_values(variant: int) -> dict[str, Any]:
    """A valid ``spec``; variants 0 and 1 differ in every field (scenario b)."""
    v = variant
    return {
        "displayName": ["Checkout service", "Checkout service (v2)"][v],
        "description": SEQ,
        "owner": ["payments@example.com", "checkout@example.com"][v],
        "team": ["payments", "checkout"][v],
        "tier": ["gold", "silver"][v],
        "region": ["eu-west-1", "us-east-1"][v],
        "environment": ["prod", "staging"][v],
        "image": ["registry.example.com/checkout:1.4.2", "registry.example.com/checkout:1.5.0"][v],
        "imagePullPolicy": ["IfNotPresent", "Always"][v],
        "schedule": ["*/5 * * * *", "0 * * * *"][v],
        "logLevel": ["info", "debug"][v],
        "serviceAccountName": ["checkout", "checkout-v2"][v],
        "priorityClassName": ["high", "medium"][v],
        "legacyCode": [LEGACY_CODE, "legacy-08"][v],
        "replicas": [3, 4][v],
        "minReplicas": [2, 3][v],
        "maxReplicas": [10, 12][v],
        "port": [8080, 8081][v],
        "timeoutSeconds": [30, 45][v],
        "retries": [3, 5][v],
        "memoryMiB": [512, 1024][v],
        "cpuMillis": [500, 750][v],
        "priority": [10, -10][v],
        "weight": [100, 200][v],
        "suspend": [False, True][v],
        "debug": [False, True][v],
        "ratio": [0.25, 0.5][v],
        "ports": [
            {
                "name": f"port-{i}",
                "containerPort": 8000 + i + 100 * v,
                "protocol": ["TCP", "UDP"][(i + v) % 2],
            }
            for i in range(10)
        ],
        "tags": [["web", "payments", "pci"], ["web", "checkout", "canary", "eu"]][v],
        "args": [["--verbose", "--port=8080"], ["--port=8081"]][v],
        "selector": {"app": ["checkout", "checkout-v2"][v], "tier": ["gold", "silver"][v]},
        "config": {
            "currency": ["EUR", "USD"][v],
            "featureFlags": ["fast-path", "fast-path,new-ui"][v],
            "endpoint": ["https://pay.example.com", "https://pay2.example.com"][v],
        },
        "resources": {
            "requests": {"cpu": ["250m", "300m"][v], "memory": ["256Mi", "320Mi"][v]},
            "limits": {"cpu": ["1", "2"][v], "memory": ["512Mi", "1Gi"][v]},
        },
        "probe": {
            "path": ["/healthz", "/readyz"][v],
            "port": [8080, 8081][v],
            "initialDelaySeconds": [5, 10][v],
            "periodSeconds": [10, 15][v],
            "failureThreshold": [3, 4][v],
        },
        "storage": {
            "className": ["fast", "standard"][v],
            "sizeGi": [20, 40][v],
            "accessMode": ["ReadWriteOnce", "ReadWriteMany"][v],
            "retainOnDelete": [True, False][v],
        },
        "network": {
            "hostNetwork": [False, True][v],
            "dnsPolicy": ["ClusterFirst", "Default"][v],
            "mtu": [1500, 9000][v],
        },
        "maintenanceWindow": {"day": ["Sun", "Sat"][v], "hour": [3, 4][v]},
    }


@dataclass(frozen=True)
class Kind:
    plural: str
    kind: str


WIDGETS = Kind("widgets", "Widget")
#: Scenario (c)'s kind: same schema, created loose, then tightened.
LEGACY = Kind("legacywidgets", "LegacyWidget")


def crd(kind: Kind, tightened: bool = False) -> dict[str, Any]:
    schema = _obj(
        {
            "apiVersion": _str(),
            "kind": _str(),
            "metadata": {"type": "object"},
            "spec": spec_schema(tightened),
        }
    )
    version = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    return bench.crd_manifest(GROUP, kind.plural, kind.kind, [version])


def collection(kind: Kind) -> str:
    return f"/apis/{GROUP}/v1/namespaces/{NAMESPACE}/{kind.plural}"


def document(kind: Kind, name: str, variant: int, rv: str | None, seq: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": {"app": "checkout"}}
    if rv is not None:
        metadata["resourceVersion"] = rv
    spec = spec_values(variant)
    spec["description"] = seq
    return {"apiVersion": f"{GROUP}/v1", "kind": kind.kind, "metadata": metadata, "spec": spec}


def template(kind: Kind, variant: int) -> str:
    """A body with its three holes cut out by tabs, in the order wrk/cr_update.lua fills them."""
    text = json.dumps(document(kind, NAME, variant, RV, SEQ), separators=(",", ":"))
    holes = sorted((text.index(h), h) for h in (NAME, RV, SEQ))
    if [h for _, h in holes] != [NAME, RV, SEQ] or any(text.count(h) != 1 for h in (NAME, RV, SEQ)):
        raise RuntimeError("body template: holes missing or out of order")
    return text.replace(NAME, "\t").replace(RV, "\t").replace(SEQ, "\t")


# -- scenarios -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    server: str  # "on" or "off"
    kind: Kind
    prefix: str  # the pool's object names: <prefix>-0 .. <prefix>-99
    variants: int  # 1: only the description changes; 2: every field changes


SCENARIOS = (
    Scenario("a_on", "(a) one field, on", "on", WIDGETS, "a", 1),
    Scenario("a_off", "(a) one field, off", "off", WIDGETS, "a", 1),
    Scenario("b_on", "(b) all fields, on", "on", WIDGETS, "b", 2),
    Scenario("b_off", "(b) all fields, off", "off", WIDGETS, "b", 2),
    Scenario("c_on", "(c) ratcheted, on", "on", LEGACY, "c", 1),
)
PAIRS = (("a_on", "a_off"), ("b_on", "b_off"))


def prepare(port: int) -> None:
    """The namespace, both CRDs, 100 objects per scenario; then the legacy CRD is tightened."""
    client = bench.Client(port)
    client.call(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        201,
    )
    for kind in (WIDGETS, LEGACY):
        client.call("POST", CRD_PATH, crd(kind), 201)
    wait_served(client, WIDGETS)
    wait_served(client, LEGACY)
    for prefix, kind in (("a", WIDGETS), ("b", WIDGETS), ("c", LEGACY)):
        for i in range(POOL):
            client.call(
                "POST", collection(kind), document(kind, f"{prefix}-{i}", 0, None, "created"), 201
            )
    current = json.loads(client.call("GET", f"{CRD_PATH}/{LEGACY.plural}.{GROUP}"))
    tightened = crd(LEGACY, tightened=True)
    tightened["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    client.call("PUT", f"{CRD_PATH}/{LEGACY.plural}.{GROUP}", tightened)
    client.conn.close()


def wait_served(client: bench.Client, kind: Kind) -> None:
    client.until("GET", collection(kind), 200)


def check_legacy(port: int, server: str) -> str:
    """One update of scenario (c) by hand: 200 with a Warning (on), 422 (off). Returns what it saw.

    The tightened CRD reaches the server's stores asynchronously, so this
    waits until the tightened rule shows (a warning or a refusal).
    """
    client = bench.Client(port)
    name = f"{collection(LEGACY)}/c-0"
    deadline = time.monotonic() + 10
    while True:
        stored = json.loads(client.call("GET", name))
        body = document(LEGACY, "c-0", 0, stored["metadata"]["resourceVersion"], "check")
        body["spec"]["description"] = f"check-{time.monotonic_ns()}"
        client.conn.request(
            "PUT", name, json.dumps(body), headers={"Content-Type": "application/json"}
        )
        response = client.conn.getresponse()
        data = response.read()
        warnings = [v for k, v in response.getheaders() if k.lower() == "warning"]
        if server == "on" and response.status == 200 and warnings:
            client.conn.close()
            return f"200, Warning: {warnings[0]}"
        if server == "off" and response.status == 422:
            client.conn.close()
            return f"422, {json.loads(data)['message']}"
        if time.monotonic() > deadline:
            raise RuntimeError(f"(c) on {server}: {response.status} {warnings} {data[:300]!r}")
        time.sleep(0.1)


def write_objects(port: int, sc: Scenario, path: Path) -> None:
    """The pool's names, resourceVersions and variants as stored now (for cr_update.lua)."""
    client = bench.Client(port)
    items = json.loads(client.call("GET", collection(sc.kind)))["items"]
    lines = []
    for i in range(POOL):
        name = f"{sc.prefix}-{i}"
        obj = next(o for o in items if o["metadata"]["name"] == name)
        variant = 0 if obj["spec"]["tier"] == spec_values(0)["tier"] else 1
        lines.append(f"{name} {obj['metadata']['resourceVersion']} {variant}\n")
    path.write_text("".join(lines))
    client.conn.close()


# -- measuring -----------------------------------------------------------------------------


def scrape(port: int) -> dict[str, float]:
    """The ratcheting histogram's sum and count, and the ratcheted errors, from /metrics."""
    client = bench.Client(port)
    text = client.call("GET", "/metrics").decode()
    client.conn.close()
    out = {"sum": 0.0, "count": 0.0, "ratcheted": 0.0}
    for line in text.splitlines():
        if line.startswith("apiextensions_apiserver_validation_ratcheting_seconds_sum"):
            out["sum"] = float(line.rsplit(" ", 1)[1])
        elif line.startswith("apiextensions_apiserver_validation_ratcheting_seconds_count"):
            out["count"] = float(line.rsplit(" ", 1)[1])
        elif line.startswith("kapi_validation_ratcheted_errors_total{"):
            out["ratcheted"] += float(line.rsplit(" ", 1)[1])
    return out


def run_wrk(
    sc: Scenario,
    port: int,
    clients: int,
    duration: int,
    tag: str,
    tmp: Path,
    cpus: str | None,
) -> dict[str, Any]:
    threads = bench.wrk_threads(clients)
    objects = tmp / f"objects-{sc.key}.txt"
    write_objects(port, sc, objects)
    url = f"http://127.0.0.1:{port}"
    bodies = str(tmp / f"bodies-{sc.key}.txt")
    args = [collection(sc.kind), bodies, str(objects), str(threads), tag]
    cmd = bench.wrk_command("cr_update.lua", url, clients, duration, args)
    return bench.run_load(bench.pinned(cmd, cpus), duration)


Results = dict[tuple[str, int], list[dict[str, Any]]]


def measure(
    servers: dict[str, bench.Server],
    rounds: int,
    duration: int,
    tmp: Path,
    cpus: str | None,
) -> Results:
    """Every round: every scenario at every client count, on and off back to back."""
    plan = [(sc, clients) for clients in bench.CLIENTS for sc in SCENARIOS]
    results: Results = {}
    for round_no in range(rounds):
        line = []
        for sc, clients in plan if round_no % 2 == 0 else plan[::-1]:
            server = servers[sc.server]
            metrics_before = scrape(server.port) if sc.server == "on" else None
            cpu_before, wall_before = bench.cpu_seconds(server.proc.pid), time.monotonic()
            result = run_wrk(
                sc, server.port, clients, duration, f"r{round_no}c{clients}", tmp, cpus
            )
            cpu = bench.cpu_seconds(server.proc.pid) - cpu_before
            result["server_cpu"] = cpu / (time.monotonic() - wall_before)
            result["us_per_req"] = cpu / result["requests"] * 1e6 if result["requests"] else 0.0
            if metrics_before is not None:
                after = scrape(server.port)
                updates = after["count"] - metrics_before["count"]
                result["compare_us"] = (
                    (after["sum"] - metrics_before["sum"]) / updates * 1e6 if updates else 0.0
                )
                result["ratcheted_per_update"] = (
                    (after["ratcheted"] - metrics_before["ratcheted"]) / updates if updates else 0.0
                )
            results.setdefault((sc.key, clients), []).append(result)
            line.append(f"{sc.key}@{clients}={result['rps']:.0f}")
        print(f"round {round_no + 1}/{rounds}: " + " ".join(line), flush=True)
    return results


# -- in process: the strategy alone ----------------------------------------------------------


def strategy(kind: Kind, tightened: bool, ratcheting: bool) -> CustomResourceStrategy:
    """The strategy kapi builds for the CRD's version (as ``custom_resource`` does)."""
    schema = crd(kind, tightened)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    cel, errors = CELValidator.compile(schema, FieldPath("openAPIV3Schema"))
    if errors:
        raise RuntimeError(f"CEL: {errors}")
    return CustomResourceStrategy(
        SchemaValidator(schema),
        cel,
        status=False,
        scale=None,
        # The server's own metrics: observing the histogram is part of the cost.
        ratcheting=Ratcheting(APIServerMetrics(), GROUP, kind.plural) if ratcheting else None,
    )


def in_process(rounds: int, seconds: float) -> dict[str, list[float]]:
    """CPU microseconds of ``validate_update`` per update, per scenario, one value per round.

    The only code that the gate changes on an update is this call, so the
    difference between on and off here is ratcheting's whole cost, without
    the noise of the HTTP path around it.  Each round times the on and off
    strategies of a scenario back to back (odd rounds in reverse order).
    """

    def stored(kind: Kind, variant: int, seq: str) -> dict[str, Any]:
        obj = document(kind, "a-0", variant, "1", seq)
        obj["metadata"].update(namespace=NAMESPACE, uid="0" * 36, generation=1)
        return obj

    cases = {
        "a": (WIDGETS, False, stored(WIDGETS, 0, "new"), stored(WIDGETS, 0, "old")),
        "b": (WIDGETS, False, stored(WIDGETS, 1, "new"), stored(WIDGETS, 0, "old")),
        "c": (LEGACY, True, stored(LEGACY, 0, "new"), stored(LEGACY, 0, "old")),
    }
    plan = []
    # (c) with the gate off too: refused, but its cost is the yardstick of (c) with it on.
    for key in ("a_on", "a_off", "b_on", "b_off", "c_on", "c_off"):
        kind, tightened, new, old = cases[key[0]]
        plan.append((key, strategy(kind, tightened, key.endswith("_on")), new, old))
    for key, s, new, old in plan:
        errors = s.validate_update(new, old)
        if bool(errors) != (key == "c_off"):
            raise RuntimeError(f"{key}: {[str(e) for e in errors]}")
    samples: dict[str, list[float]] = {}
    for round_no in range(rounds):
        for key, s, new, old in plan if round_no % 2 == 0 else plan[::-1]:
            calls, started = 0, time.process_time()
            while (spent := time.process_time() - started) < seconds:
                for _ in range(20):
                    s.validate_update(new, old)
                calls += 20
            samples.setdefault(key, []).append(spent / calls * 1e6)
    return samples


def render_in_process(samples: dict[str, list[float]], results: Results) -> str:
    """Medians, and the on - off difference as the median of the per-round differences."""
    rounds = len(samples["a_on"])
    out = [
        "",
        f"in process, CustomResourceStrategy.validate_update alone, {rounds} rounds "
        "(CPU us per update):",
        f"{'scenario':<10}{'on':>9}{'off':>9}{'on - off':>10}  {'rounds':<16}"
        f"{'share of an update (HTTP, off, 16 clients)':>44}",
    ]
    for key in ("a", "b", "c"):
        on, off = samples[f"{key}_on"], samples[f"{key}_off"]
        diff = [on[r] - off[r] for r in range(rounds)]
        extra = statistics.median(diff)
        spread = f"{min(diff):+.1f}..{max(diff):+.1f}"
        if key == "c":
            share = f"{'(off refuses the update)':>44}"
        else:
            http = results[(f"{key}_off", bench.TARGET_CLIENTS)]
            share = f"{extra / statistics.median(r['us_per_req'] for r in http):>+44.2%}"
        out.append(
            f"({key}){'':<7}{statistics.median(on):>9.1f}{statistics.median(off):>9.1f}"
            f"{extra:>+10.1f}  {spread:<16}{share}"
        )
    return "\n".join(out)


# -- reporting -----------------------------------------------------------------------------


def render(results: Results, rounds: int) -> str:
    by_key = {sc.key: sc for sc in SCENARIOS}
    out = [
        "",
        f"{'workload':<24}{'clients':>8}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'srv CPU':>9}{'CPU us/req':>12}{'compare us':>12}{'errors':>8}",
    ]
    for sc in SCENARIOS:
        for clients in bench.CLIENTS:
            rs = results[(sc.key, clients)]
            compare = (
                f"{bench.median(rs, 'compare_us'):>12.1f}"
                if "compare_us" in rs[0]
                else f"{'-':>12}"
            )
            out.append(bench.workload_row(sc.label, 24, clients, rs, 9, compare))
    out += [
        "",
        f"{'on / off (median of rounds)':<30}{'clients':>8}{'req/s':>7}  {'rounds':<14}"
        f"{'CPU-norm':>9}{'overhead':>10}  verdict",
    ]
    for on, off in PAIRS:
        for clients in bench.CLIENTS:
            a, b = results[(on, clients)], results[(off, clients)]
            rate = [a[r]["rps"] / b[r]["rps"] for r in range(rounds)]
            cpu = [b[r]["us_per_req"] / a[r]["us_per_req"] for r in range(rounds)]
            value = statistics.median(rate)
            if clients == bench.TARGET_CLIENTS:
                verdict = f"{'PASS' if value >= TARGET else 'FAIL'} (target >= {TARGET})"
            else:
                verdict = "info"
            spread = f"{min(rate):.3f}..{max(rate):.3f}"
            label = by_key[on].label.removesuffix(", on")
            out.append(
                f"{label:<30}{clients:>8}{value:>7.3f}  {spread:<14}{statistics.median(cpu):>9.3f}"
                f"{1 / value - 1:>+10.1%}  {verdict}"
            )
    out += [
        "",
        f"{'(c) / (a), both on':<30}{'clients':>8}{'req/s':>7}  {'rounds':<14}{'CPU-norm':>9}"
        f"{'compare us':>12}{'forgiven':>10}",
    ]
    for clients in bench.CLIENTS:
        c, a = results[("c_on", clients)], results[("a_on", clients)]
        rate = [c[r]["rps"] / a[r]["rps"] for r in range(rounds)]
        cpu = [a[r]["us_per_req"] / c[r]["us_per_req"] for r in range(rounds)]
        spread = f"{min(rate):.3f}..{max(rate):.3f}"
        compare = statistics.median(r["compare_us"] for r in c)
        forgiven = statistics.median(r["ratcheted_per_update"] for r in c)
        out.append(
            f"{'(c) ratcheted / (a) one field':<30}{clients:>8}{statistics.median(rate):>7.3f}  "
            f"{spread:<14}{statistics.median(cpu):>9.3f}{compare:>12.1f}{forgiven:>10.1f}"
        )
    out += [
        "",
        "compare us: apiextensions_apiserver_validation_ratcheting_seconds, sum / count over the",
        "measurement, in microseconds per update; forgiven: kapi_validation_ratcheted_errors_total",
        "per update (schema errors dropped + CEL failures turned into warnings).",
    ]
    errors = sum(r["errors"] for rs in results.values() for r in rs)
    if errors:
        out += ["", f"WARNING: {errors} failed requests (non-2xx, timeouts)."]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    args = bench.paired_options(__doc__.splitlines()[0], argv)
    duration, rounds, split = args.duration, args.rounds, args.split
    server_cpus, loadgen_cpus = args.server_cpus, args.loadgen_cpus
    fields = spec_fields(spec_schema())
    with tempfile.TemporaryDirectory(prefix="kapi-ratcheting-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for sc in SCENARIOS:
            lines = [template(sc.kind, v) + "\n" for v in range(sc.variants)]
            (tmp / f"bodies-{sc.key}.txt").write_text("".join(lines))
        servers: dict[str, bench.Server] = {}
        try:
            for name, flags in (("on", ()), ("off", OFF_FLAGS)):
                data = tmp / f"data-{name}"
                cmd = [sys.executable, "-m", "kapi", "serve", "--data-dir", str(data), *flags]
                servers[name] = bench.start_server(name, cmd, tmp, server_cpus)
            for server in servers.values():
                server.wait_ready("/readyz")
                prepare(server.port)
            seen = {name: check_legacy(server.port, name) for name, server in servers.items()}
            body = len(template(WIDGETS, 0)) + 20
            print(
                f"kapi on (default) and off ({' '.join(OFF_FLAGS)}); {fields} spec fields, "
                f"PUT body ~{body} B, {POOL} objects per scenario; {bench.wrk_version()}, "
                f"pin: {'servers on CPU 0, wrk on CPU 1' if split else 'none'}, "
                f"{rounds} rounds x {duration}s",
                flush=True,
            )
            for name, what in seen.items():
                print(f"(c) on the {name} server: {what}", flush=True)
            if not args.quick:
                for sc in SCENARIOS:
                    run_wrk(sc, servers[sc.server].port, 16, 1, "warm", tmp, loadgen_cpus)
            results = measure(servers, rounds, duration, tmp, loadgen_cpus)
        finally:
            for server in servers.values():
                server.stop()
    with bench.affinity({int(server_cpus)} if server_cpus is not None else None):
        validation = in_process(max(2 * rounds, 6), 0.05 if args.quick else 0.15)
    print(render(results, rounds))
    print(render_in_process(validation, results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
