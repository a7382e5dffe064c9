"""internal.apiserver.k8s.io/v1alpha1 StorageVersion: upstream's validation messages,
the strategy's status handling, the gate, the storage key and the columns."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.apis import builtin_resources
from kapi.apis.apiserverinternal_v1alpha1 import (
    StorageVersionStrategy,
    api_version_errors,
    validate_storage_version_name,
)
from kapi.features import FeatureGate
from kapi.registry.strategy import SubresourceStrategy

DNS1123_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1035_LABEL = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def status_errors(status: dict[str, Any]) -> list[str]:
    obj = {"metadata": {"name": "apps.deployments"}, "spec": {}, "status": status}
    new = {**obj}
    return [
        e.error_message()
        for e in StorageVersionStrategy().validate_subresource_update("status", new, obj)
    ]


def entry(**fields: Any) -> dict[str, Any]:
    return {
        "apiServerID": "kube-apiserver-a",
        "encodingVersion": "v1",
        "decodableVersions": ["v1"],
        **fields,
    }


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("apps.deployments", []),
        (".configmaps", ["the group segment " + DNS1123_SUBDOMAIN]),
        ("core.configmaps", []),
        ("deployments", ["name must be in the form of <group>.<resource>"]),
        ("apps.Deployments", ["the resource segment " + DNS1035_LABEL]),
        ("Apps.deployments", ["the group segment " + DNS1123_SUBDOMAIN]),
        ("example.com.1widgets", ["the resource segment " + DNS1035_LABEL]),
    ],
)
def test_name(name: str, expected: list[str]) -> None:
    assert validate_storage_version_name(name, False) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("v1", []),
        ("apps/v1", []),
        ("/v1", ["group part: must be non-empty"]),
        ("apps/", ["version part: must be non-empty"]),
        ("apps/V1", ["version part: " + DNS1035_LABEL]),
        (
            "a/b/c",
            [
                "an apiVersion is a DNS-1035 label, which must consist of lower case "
                "alphanumeric characters or '-', start with an alphabetic character, and end "
                "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
                "validation is '[a-z]([-a-z0-9]*[a-z0-9])?') with an optional DNS subdomain "
                "prefix and '/' (e.g. 'example.com/MyVersion')"
            ],
        ),
    ],
)
def test_api_version(value: str, expected: list[str]) -> None:
    assert api_version_errors(value) == expected


def test_valid_status() -> None:
    status = {
        "storageVersions": [entry(servedVersions=["v1"]), entry(apiServerID="kube-apiserver-b")],
        "commonEncodingVersion": "v1",
        "conditions": [
            {
                "type": "AllEncodingVersionsEqual",
                "status": "True",
                "reason": "CommonEncodingVersionSet",
                "message": "all agree",
            }
        ],
    }
    assert status_errors(status) == []


def test_entry_errors() -> None:
    status = {
        "storageVersions": [
            entry(
                apiServerID="Bad_ID",
                encodingVersion="V2",
                decodableVersions=["v1"],
                servedVersions=["v3"],
            ),
            entry(),
            entry(),
        ],
    }
    assert status_errors(status) == [
        'status.storageVersions[0].apiServerID: Invalid value: "Bad_ID": ' + DNS1123_SUBDOMAIN,
        'status.storageVersions[0].encodingVersion: Invalid value: "V2": version part: '
        + DNS1035_LABEL,
        'status.storageVersions[0].decodableVersions: Invalid value: []string{"v1"}: '
        "decodableVersions must include encodingVersion V2",
        'status.storageVersions[0].servedVersions[0]: Invalid value: "v3": '
        "individual served version : v3 must be included in decodableVersions : [v1]",
        'status.storageVersions[2].apiServerID: Duplicate value: "kube-apiserver-a"',
    ]


@pytest.mark.parametrize(
    ("entries", "common", "expected"),
    [
        ([], None, []),
        (
            [],
            "v1",
            'status.commonEncodingVersion: Invalid value: "v1": should be nil if servers do not '
            "agree on the same encoding version, or if there is no server reporting the "
            "supported versions yet",
        ),
        (
            [entry()],
            None,
            'status.commonEncodingVersion: Invalid value: "null": '
            "the common encoding version is v1",
        ),
        (
            [entry(), entry(apiServerID="b", encodingVersion="v2", decodableVersions=["v2"])],
            "v1",
            'status.commonEncodingVersion: Invalid value: "v1": should be nil if servers do not '
            "agree on the same encoding version, or if there is no server reporting the "
            "supported versions yet",
        ),
        (
            [entry()],
            "v2",
            'status.commonEncodingVersion: Invalid value: "v2": the actual common encoding '
            "version is v1",
        ),
    ],
)
def test_common_version(entries: list[Any], common: str | None, expected: Any) -> None:
    status: dict[str, Any] = {"storageVersions": entries}
    if common is not None:
        status["commonEncodingVersion"] = common
    assert status_errors(status) == ([expected] if expected else [])


def test_condition_errors() -> None:
    conditions = [
        {"type": "A", "status": "True", "reason": "R", "message": "m"},
        {"type": "A", "status": "not valid", "reason": "", "message": ""},
    ]
    # Upstream indexes status itself, hence status[1] rather than status.conditions[1].
    assert status_errors({"conditions": conditions}) == [
        'status[1].type: Invalid value: "A": the type of the condition is not unique, it also '
        "appears in conditions[0]",
        'status[1].status: Invalid value: "not valid": name part must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        "status[1].reason: Required value: reason cannot be empty",
        "status[1].message: Required value: message cannot be empty",
    ]


def test_strategy_resets_and_keeps_status() -> None:
    strategy = StorageVersionStrategy()
    obj: dict[str, Any] = {
        "metadata": {"name": "apps.deployments"},
        "status": {"commonEncodingVersion": "v1"},
    }
    strategy.prepare_for_create(obj)
    assert obj["status"] == {}
    old = {
        "metadata": {"name": "apps.deployments"},
        "spec": {},
        "status": {"commonEncodingVersion": "v1"},
    }
    new: dict[str, Any] = {"metadata": {"name": "apps.deployments"}, "spec": {}, "status": {}}
    strategy.prepare_for_update(new, old)
    assert new["status"] == {"commonEncodingVersion": "v1"}
    status_update: dict[str, Any] = {
        "metadata": {"name": "apps.deployments", "labels": {"x": "y"}},
        "spec": {"anything": 1},
        "status": {"commonEncodingVersion": "v2"},
    }
    SubresourceStrategy(strategy, "status", ("status",)).prepare_for_update(status_update, old)
    assert status_update == {**old, "status": {"commonEncodingVersion": "v2"}}


def test_served_only_behind_the_gate_with_upstream_key() -> None:
    def served(gates: FeatureGate) -> list[Any]:
        return [r for r in builtin_resources(gates) if r.group == "internal.apiserver.k8s.io"]

    assert FeatureGate().enabled("StorageVersionAPI")
    (resource,) = served(FeatureGate())
    assert not resource.namespaced
    assert resource.subresources == ("status",)
    assert resource.key(None, "apps.deployments") == "/registry/storageversions/apps.deployments"
    assert served(FeatureGate.parse("StorageVersionAPI=false")) == []


def test_columns() -> None:
    (resource,) = [r for r in builtin_resources() if r.plural == "storageversions"]
    cells = {c.name: c for c in resource.columns}
    entries = [entry(apiServerID=f"s{i}", encodingVersion=f"v{i}") for i in range(5)]
    obj = {"metadata": {"name": "apps.deployments"}, "status": {"storageVersions": entries}}
    assert cells["StorageVersions"].cell(obj) == "s0=v0,s1=v1,s2=v2 + 2 more..."
    assert cells["CommonEncodingVersion"].cell(obj) == "<unset>"
    assert cells["StorageVersions"].cell({"status": {}}) == "<unset>"
