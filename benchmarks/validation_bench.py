"""Schema validation throughput: kapi's SchemaValidator vs jsonschema and fastjsonschema.

One realistic custom-resource schema (about fifty fields: nested objects,
lists of objects, string maps, enums, patterns, numeric bounds) and one valid
document of it. Each validator is compiled once, then timed in interleaved
rounds (kapi, jsonschema, fastjsonschema, kapi, ...) so that machine noise
hits all three alike; the median rate per validator and the ratios are
printed. The valid document is what nearly every request carries, so it is
the path that matters; an invalid one is timed for kapi alone, for scale.

Run: ``python benchmarks/validation_bench.py [--rounds N] [--seconds S]``.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections.abc import Callable
from typing import Any

import fastjsonschema
import jsonschema

from kapi.apimachinery.field_errors import Path
from kapi.validation.cel import CELValidator
from kapi.validation.schema_validator import SchemaValidator


def _str(**kw: Any) -> dict[str, Any]:
    return {"type": "string", **kw}


def _int(**kw: Any) -> dict[str, Any]:
    return {"type": "integer", **kw}


def _obj(props: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, **kw}


_NAME = _str(maxLength=63, pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_RESOURCES = _obj(
    {
        "cpu": _str(pattern="^[0-9]+m?$"),
        "memory": _str(pattern="^[0-9]+(Ki|Mi|Gi)?$"),
    }
)
_CONTAINER = _obj(
    {
        "name": _NAME,
        "image": _str(minLength=1),
        "imagePullPolicy": _str(enum=["Always", "IfNotPresent", "Never"]),
        "args": {"type": "array", "items": _str()},
        "env": {
            "type": "array",
            "items": _obj({"name": _str(minLength=1), "value": _str()}, required=["name"]),
        },
        "ports": {
            "type": "array",
            "items": _obj(
                {
                    "name": _NAME,
                    "containerPort": _int(minimum=1, maximum=65535),
                    "protocol": _str(enum=["TCP", "UDP", "SCTP"]),
                },
                required=["containerPort"],
            ),
        },
        "resources": _obj({"limits": _RESOURCES, "requests": _RESOURCES}),
    },
    required=["name", "image"],
)
SCHEMA: dict[str, Any] = _obj(
    {
        "apiVersion": _str(),
        "kind": _str(),
        "metadata": {"type": "object"},
        "spec": _obj(
            {
                "replicas": _int(minimum=0, maximum=1000),
                "paused": {"type": "boolean"},
                "version": _str(pattern="^v[0-9]+\\.[0-9]+\\.[0-9]+$"),
                "tier": _str(enum=["frontend", "backend", "cache"]),
                "labels": {"type": "object", "additionalProperties": _str(maxLength=63)},
                "annotations": {"type": "object", "additionalProperties": _str()},
                "containers": {"type": "array", "minItems": 1, "items": _CONTAINER},
                "storage": _obj(
                    {
                        "size": _str(pattern="^[0-9]+Gi$"),
                        "class": _str(),
                        "retain": {"type": "boolean"},
                        "iops": _int(minimum=100, multipleOf=100),
                    }
                ),
                "strategy": _obj(
                    {
                        "type": _str(enum=["RollingUpdate", "Recreate"]),
                        "maxSurge": _int(minimum=0),
                        "maxUnavailable": _int(minimum=0),
                    }
                ),
                "ratio": {"type": "number", "minimum": 0, "maximum": 1},
                "tolerations": {
                    "type": "array",
                    "maxItems": 10,
                    "items": _obj(
                        {
                            "key": _str(),
                            "operator": _str(enum=["Exists", "Equal"]),
                            "value": _str(),
                            "effect": _str(enum=["NoSchedule", "NoExecute"]),
                        }
                    ),
                },
            },
            required=["replicas", "containers"],
        ),
        "status": _obj(
            {
                "phase": _str(enum=["Pending", "Running", "Failed"]),
                "readyReplicas": _int(minimum=0),
                "observedGeneration": _int(),
                "conditions": {
                    "type": "array",
                    "items": _obj(
                        {
                            "type": _str(),
                            "status": _str(enum=["True", "False", "Unknown"]),
                            "reason": _str(),
                            "message": _str(),
                        },
                        required=["type", "status"],
                    ),
                },
            }
        ),
    }
)


def _container(i: int) -> dict[str, Any]:
    return {
        "name": f"app-{i}",
        "image": f"registry.example.com/app:{i}.0",
        "imagePullPolicy": "IfNotPresent",
        "args": ["--port=8080", "--verbose"],
        "env": [{"name": "MODE", "value": "prod"}, {"name": "LEVEL", "value": str(i)}],
        "ports": [
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
        ],
        "resources": {
            "limits": {"cpu": "500m", "memory": "256Mi"},
            "requests": {"cpu": "100m", "memory": "128Mi"},
        },
    }


DOCUMENT: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "App",
    "metadata": {"name": "demo", "namespace": "default"},
    "spec": {
        "replicas": 3,
        "paused": False,
        "version": "v1.2.3",
        "tier": "backend",
        "labels": {"app": "demo", "team": "platform", "env": "prod"},
        "annotations": {"owner": "someone@example.com"},
        "containers": [_container(0), _container(1)],
        "storage": {"size": "10Gi", "class": "fast", "retain": True, "iops": 3000},
        "strategy": {"type": "RollingUpdate", "maxSurge": 1, "maxUnavailable": 0},
        "ratio": 0.5,
        "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
    },
    "status": {
        "phase": "Running",
        "readyReplicas": 3,
        "observedGeneration": 7,
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "AllGood", "message": "ok"},
            {"type": "Progressing", "status": "False"},
        ],
    },
}


#: A few rules of the kinds CRD authors write, on top of the same schema (kapi only).
CEL_RULES: dict[str, list[dict[str, str]]] = {
    "spec": [
        {"rule": "self.replicas <= 100 || self.tier == 'backend'", "message": "too many"},
        {"rule": "self.containers.all(c, c.image.contains(':'))", "message": "pin images"},
        {"rule": "!has(self.strategy) || self.strategy.maxSurge <= self.replicas"},
    ],
}


def _with_cel_rules(schema: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(schema)
    # Bounds, as upstream's cost estimator asks of lists and strings that rules walk.
    containers = out["properties"]["spec"]["properties"]["containers"]
    containers["maxItems"] = 16
    containers["items"]["properties"]["image"]["maxLength"] = 256
    for name, rules in CEL_RULES.items():
        out["properties"][name]["x-kubernetes-validations"] = rules
    return out


def _kapi_with_cel() -> Callable[[Any], object]:
    """Schema validation plus the CEL rules, as a create of a custom resource runs them."""
    schema = _with_cel_rules(SCHEMA)
    validator = SchemaValidator(schema)
    cel, errors = CELValidator.compile(schema, Path("openAPIV3Schema"))
    assert cel is not None and not errors, errors

    def validate(doc: Any) -> object:
        return validator.validate(doc) + cel.validate(doc)

    return validate


def _invalid_document() -> dict[str, Any]:
    doc = copy.deepcopy(DOCUMENT)
    doc["spec"]["replicas"] = -1
    doc["spec"]["tier"] = "edge"
    doc["spec"]["containers"][1]["ports"][0]["containerPort"] = 70000
    return doc


def _validators() -> dict[str, Callable[[Any], object]]:
    kapi = SchemaValidator(SCHEMA)
    draft7 = jsonschema.Draft7Validator
    draft7.check_schema(SCHEMA)  # checked once, as a server would at CRD creation
    reference = draft7(SCHEMA)
    fast = fastjsonschema.compile(SCHEMA)
    return {
        "kapi": kapi.validate,
        "jsonschema": reference.is_valid,
        "fastjsonschema": fast,
    }


def _rate(fn: Callable[[Any], object], doc: Any, seconds: float) -> float:
    """Validations per second over about ``seconds`` (batches of 200 calls)."""
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(200):
            fn(doc)
        n += 200
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.5, help="per validator per round")
    args = parser.parse_args()

    validators = _validators()
    assert validators["kapi"](DOCUMENT) == [], "the benchmark document must be valid"
    rates: dict[str, list[float]] = {name: [] for name in validators}
    for _ in range(args.rounds):
        for name, fn in validators.items():
            rates[name].append(_rate(fn, DOCUMENT, args.seconds))
    invalid = _invalid_document()
    kapi_invalid = _rate(validators["kapi"], invalid, args.seconds)
    with_cel = _kapi_with_cel()
    assert with_cel(DOCUMENT) == [], "the benchmark document must pass the CEL rules"
    kapi_cel = _rate(with_cel, DOCUMENT, args.seconds)

    median = {name: statistics.median(r) for name, r in rates.items()}
    print(f"valid document, {args.rounds} interleaved rounds of {args.seconds}s each")
    for name, rate in median.items():
        print(f"  {name:15s} {rate:12,.0f} validations/s")
    print(f"  kapi / jsonschema      = {median['kapi'] / median['jsonschema']:.2f}x")
    print(f"  kapi / fastjsonschema  = {median['kapi'] / median['fastjsonschema']:.2f}x")
    errors = len(validators["kapi"](invalid))  # type: ignore[arg-type]
    print(f"invalid document ({errors} errors): kapi {kapi_invalid:,.0f} validations/s")
    print(
        f"valid document with {sum(map(len, CEL_RULES.values()))} CEL rules (not compared): "
        f"kapi {kapi_cel:,.0f} validations/s"
    )


if __name__ == "__main__":
    main()
