"""coordination.k8s.io/v1 Lease: upstream ValidateLease messages, MicroTime, columns, OpenAPI."""

from __future__ import annotations

import pytest

from kapi.apimachinery import validation
from kapi.apis import builtin_resources
from kapi.apis.coordination_v1 import Lease, LeaseStrategy, canonical_micro_time
from kapi.runtime.pruning import prune
from kapi.runtime.schema import components
from kapi.version import Version


def validate(**spec: object) -> list[str]:
    obj = {"metadata": {"name": "l", "namespace": "n"}, "spec": spec}
    return [e.error_message() for e in LeaseStrategy().validate(obj)]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"holderIdentity": "a", "leaseDurationSeconds": 15, "leaseTransitions": 0}, []),
        (
            {"leaseDurationSeconds": 0},
            ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"],
        ),
        (
            {"leaseTransitions": -1},
            ["spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"],
        ),
        ({"strategy": "OldestEmulationVersion", "preferredHolder": "b"}, []),
        ({"strategy": "example.com/custom"}, []),
        (
            {"strategy": "Newest"},
            [
                # The doubled segment is upstream's.
                'spec.strategy.strategy: Unsupported value: "Newest": '
                'supported values: "OldestEmulationVersion"'
            ],
        ),
        (
            {"preferredHolder": "b"},
            ["spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"],
        ),
        ({"preferredHolder": ""}, []),
    ],
)
def test_validate_lease(spec: dict, expected: list[str]) -> None:
    assert validate(**spec) == expected


def test_prefixed_strategy_must_be_a_qualified_name() -> None:
    expected = [
        f'spec.strategy.strategy: Invalid value: "a/b/c": {msg}'
        for msg in validation.is_qualified_name("a/b/c")
    ]
    assert expected and validate(strategy="a/b/c") == expected
    assert LeaseStrategy().validate({"metadata": {}}) == []


def test_update_validates_the_spec_too() -> None:
    bad = {"spec": {"leaseDurationSeconds": -5}}
    assert [e.error_message() for e in LeaseStrategy().validate_update(bad, {"spec": {}})] == [
        "spec.leaseDurationSeconds: Invalid value: -5: must be greater than 0"
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01T10:00:00.123456Z", "2024-05-01T10:00:00.123456Z"),
        ("2024-05-01T12:00:00.000001+02:00", "2024-05-01T10:00:00.000001Z"),
        ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00.000000Z"),
        ("not a time", "not a time"),
        ("2024-05-01T10:00:00", "2024-05-01T10:00:00"),
    ],
)
def test_micro_time_is_stored_in_utc_with_microseconds(value: str, expected: str) -> None:
    assert canonical_micro_time(value) == expected


def test_canonicalize_normalizes_lease_times() -> None:
    obj = {"spec": {"renewTime": "2024-05-01T12:00:00.5+02:00", "holderIdentity": "x"}}
    LeaseStrategy().canonicalize(obj)
    assert obj["spec"] == {"renewTime": "2024-05-01T10:00:00.500000Z", "holderIdentity": "x"}


def test_resource_and_columns() -> None:
    lease = next(r for r in builtin_resources() if r.kind == "Lease")
    assert (lease.group, lease.plural, lease.singular, lease.namespaced) == (
        "coordination.k8s.io",
        "leases",
        "lease",
        True,
    )
    assert (lease.short_names, lease.categories, lease.subresources) == ((), (), ())
    assert lease.storage_prefix() == "/registry/leases/"
    lifecycle = lease.versions["v1"].lifecycle
    assert lifecycle is not None and lifecycle.introduced == Version(1, 14)
    assert not lease.strategy.has_status and not lease.strategy.has_generation
    assert [(c.name, c.type) for c in lease.columns] == [
        ("Name", "string"),
        ("Holder", "string"),
        ("Age", "string"),
    ]
    holder = lease.columns[1].cell
    assert holder({"spec": {"holderIdentity": "node-1"}}) == "node-1"
    assert holder({"metadata": {"name": "l"}}) == ""


def test_openapi() -> None:
    schemas = components([Lease])
    assert schemas["io.k8s.api.coordination.v1.Lease"]["x-kubernetes-group-version-kind"] == [
        {"group": "coordination.k8s.io", "version": "v1", "kind": "Lease"}
    ]
    spec = schemas["io.k8s.api.coordination.v1.LeaseSpec"]
    assert "required" not in spec
    props = spec["properties"]
    assert set(props) == {
        "holderIdentity",
        "leaseDurationSeconds",
        "acquireTime",
        "renewTime",
        "leaseTransitions",
        "strategy",
        "preferredHolder",
    }
    assert props["leaseDurationSeconds"]["format"] == "int32"
    assert props["leaseTransitions"]["format"] == "int32"
    assert props["renewTime"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"}
    ]
    assert "default" not in props["renewTime"]
    assert schemas["io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"] == {
        "description": "An RFC 3339 timestamp in UTC with six fractional digits.",
        "format": "date-time",
        "type": "string",
    }


def test_decoding_checks_micro_time_is_a_string() -> None:
    obj = {"spec": {"renewTime": "2024-05-01T10:00:00.000000Z", "bogus": 1}}
    assert prune(obj, Lease) == ["spec.bogus"]
    with pytest.raises(ValueError, match=r"of type metav1\.MicroTime"):
        prune({"spec": {"renewTime": 5}}, Lease)
