"""storagemigration.k8s.io/v1beta1 StorageVersionMigration: upstream's validation
messages, the strategy's status handling, the gate, the lifecycle and the storage key."""

from __future__ import annotations

from typing import Any

from kapi.apis import builtin_resources
from kapi.apis.storagemigration_v1beta1 import StorageVersionMigrationStrategy
from kapi.features import FeatureGate
from kapi.version import Version

DNS1035_LABEL = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)

STRATEGY = StorageVersionMigrationStrategy()


def svm(group: str = "apps", resource: str = "deployments", **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "m", "resourceVersion": "3"},
        "spec": {"resource": {"group": group, "resource": resource}},
        "status": status,
    }


def condition(condition_type: str, status: str = "True", **extra: Any) -> dict[str, Any]:
    return {
        "type": condition_type,
        "status": status,
        "reason": "Because",
        "message": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
        **extra,
    }


def messages(errs: list[Any]) -> list[str]:
    return [e.error_message() for e in errs]


def status_errors(new: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return messages(STRATEGY.validate_subresource_update("status", new, old or svm()))


def test_spec_resource_required_and_well_formed() -> None:
    assert messages(STRATEGY.validate(svm(resource=""))) == [
        "spec.resource.resource: Required value: resource is required to be set"
    ]
    assert messages(STRATEGY.validate(svm(group="Bad_", resource="Deployments"))) == [
        f'spec.resource.resource: Invalid value: "Deployments": {DNS1035_LABEL}',
        f'spec.resource.group: Invalid value: "Bad_": {DNS1123_SUBDOMAIN}',
    ]
    # The core group is the empty group.
    assert STRATEGY.validate(svm(group="", resource="configmaps")) == []


def test_spec_is_immutable() -> None:
    errs = STRATEGY.validate_update(svm(resource="replicasets"), svm())
    assert messages(errs) == [
        "spec: Invalid value: storagemigration.StorageVersionMigrationSpec{Resource:"
        'v1.GroupResource{Group:"apps", Resource:"replicasets"}}: field is immutable'
    ]
    assert STRATEGY.validate_update(svm(), svm()) == []


def test_status_resource_version_well_formed_and_immutable() -> None:
    assert status_errors(svm()) == [
        'status.resourceVersion: Invalid value: "": resource version is not well formed: '
    ]
    assert status_errors(svm(resourceVersion="012")) == [
        'status.resourceVersion: Invalid value: "012": resource version is not well formed: 012'
    ]
    assert status_errors(svm(resourceVersion="12")) == []
    assert status_errors(svm(resourceVersion="13"), svm(resourceVersion="12")) == [
        'status.resourceVersion: Invalid value: "13": field is immutable'
    ]


def test_status_conditions_rules() -> None:
    both = svm(resourceVersion="5", conditions=[condition("Succeeded"), condition("Failed")])
    assert [m.split(": ", 1)[0] + ": " + m.rsplit(": ", 1)[1] for m in status_errors(both)] == [
        "status.conditions: Both success and failed conditions cannot be true at the same time"
    ]
    running = svm(resourceVersion="5", conditions=[condition("Running"), condition("Failed")])
    assert status_errors(running)[0].endswith(
        "Running condition cannot be true when failed condition is true"
    )
    done = svm(resourceVersion="5", conditions=[condition("Succeeded")])
    undone = svm(resourceVersion="5", conditions=[condition("Succeeded", "False")])
    assert status_errors(undone, done)[0].endswith(
        "Success condition cannot be set to false once it is true"
    )
    dup = svm(resourceVersion="5", conditions=[condition("Running"), condition("Running")])
    assert status_errors(dup) == ['status.conditions[1].type: Duplicate value: "Running"']


def test_status_reset_on_create_and_kept_by_the_main_resource() -> None:
    obj = svm(resourceVersion="5")
    STRATEGY.prepare_for_create(obj)
    assert obj["status"] == {}
    new, old = svm(resourceVersion="9"), svm(resourceVersion="5")
    STRATEGY.prepare_for_update(new, old)
    assert new["status"] == {"resourceVersion": "5"}
    assert STRATEGY.allow_unconditional_update is False


def test_canonical_form_always_shows_spec_resource_and_status() -> None:
    obj: dict[str, Any] = {"metadata": {"name": "m"}, "spec": {"resource": {"resource": "pods"}}}
    STRATEGY.canonicalize(obj)
    assert obj["spec"] == {"resource": {"group": "", "resource": "pods"}}
    assert obj["status"] == {}


def test_served_from_1_30_behind_the_gate_with_upstream_key() -> None:
    def served(gates: FeatureGate) -> list[Any]:
        return [r for r in builtin_resources(gates) if r.group == "storagemigration.k8s.io"]

    assert FeatureGate().enabled("StorageVersionMigrator")
    (resource,) = served(FeatureGate())
    assert (resource.plural, resource.namespaced, resource.subresources) == (
        "storageversionmigrations",
        False,
        ("status",),
    )
    assert resource.key(None, "m") == "/registry/storageversionmigrations/m"
    lifecycle = resource.versions["v1beta1"].lifecycle
    assert lifecycle.served_at(Version(1, 30)) and not lifecycle.served_at(Version(1, 29))
    assert served(FeatureGate.parse("StorageVersionMigrator=false")) == []
