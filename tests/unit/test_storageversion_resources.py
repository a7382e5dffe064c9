"""Which built-in resources register, with which versions, and the storage version a
server chooses for its emulated release or from ``--storage-versions``."""

from __future__ import annotations

import pytest

from kapi.apis import builtin_resources
from kapi.runtime.scheme import Resource, Scheme
from kapi.storageversion.manager import ResourceInfo
from kapi.storageversion.resources import (
    default_storage_version,
    parse_storage_versions,
    resource_infos,
)
from kapi.version import DEFAULT_VERSION, Version


def _scheme(at: Version = DEFAULT_VERSION) -> Scheme:
    scheme = Scheme(at)
    for resource in builtin_resources():
        scheme.add(resource)
    return scheme


def _resource(group: str, plural: str) -> Resource:
    return next(r for r in builtin_resources() if (r.group, r.plural) == (group, plural))


def _infos(scheme: Scheme) -> dict[tuple[str, str], ResourceInfo]:
    return {(i.group, i.resource): i for i in resource_infos(scheme)}


def test_every_persisted_builtin_registers_once_sorted() -> None:
    infos = resource_infos(_scheme())
    keys = [(i.group, i.resource) for i in infos]
    assert keys == sorted(keys)
    assert set(keys) == {
        ("", "configmaps"),
        ("", "endpoints"),
        ("", "events"),
        ("", "namespaces"),
        ("", "secrets"),
        ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
        ("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        ("batch", "cronjobs"),
        ("coordination.k8s.io", "leases"),
        ("discovery.k8s.io", "endpointslices"),
        ("internal.apiserver.k8s.io", "storageversions"),
        ("networking.k8s.io", "ingresses"),
        ("policy", "poddisruptionbudgets"),
        ("storagemigration.k8s.io", "storageversionmigrations"),
    }


def test_events_k8s_io_events_register_under_core_events() -> None:
    events = _infos(_scheme())[("", "events")]
    assert events.encoding_version == "v1"
    assert events.decodable_versions == ("v1", "events.k8s.io/v1", "events.k8s.io/v1beta1")
    assert events.served_versions == ("v1",)
    assert events.equivalent_resources == (("events.k8s.io", "events"),)


def test_versions_are_group_version_strings_and_served_follows_the_emulated_version() -> None:
    pdb = _infos(_scheme())[("policy", "poddisruptionbudgets")]
    assert pdb.encoding_version == "policy/v1"
    assert pdb.decodable_versions == ("policy/v1", "policy/v1beta1")
    assert pdb.served_versions == ("policy/v1",)  # v1beta1 removed in 1.25
    old = _infos(_scheme(Version(1, 22)))[("policy", "poddisruptionbudgets")]
    assert old.served_versions == ("policy/v1", "policy/v1beta1")
    assert _infos(_scheme())[("", "configmaps")].decodable_versions == ("v1",)


@pytest.mark.parametrize(
    ("emulated", "expected"),
    [
        (Version(1, 21), "v1beta1"),  # 1.20 cannot read policy/v1 yet
        (Version(1, 22), "v1"),
        (DEFAULT_VERSION, "v1"),
    ],
)
def test_default_storage_version_is_readable_by_the_previous_release(
    emulated: Version, expected: str
) -> None:
    assert (
        default_storage_version(_resource("policy", "poddisruptionbudgets"), emulated) == expected
    )


def test_default_storage_version_keeps_what_the_previous_release_already_had() -> None:
    assert default_storage_version(_resource("", "configmaps"), Version(1, 21)) == "v1"
    assert default_storage_version(_resource("batch", "cronjobs"), Version(1, 21)) == "v1beta1"
    assert default_storage_version(_resource("batch", "cronjobs"), Version(1, 22)) == "v1"
    # events.k8s.io Events are stored as core Events: never re-chosen.
    events = _resource("events.k8s.io", "events")
    assert default_storage_version(events, Version(1, 21)) == events.storage_version


def test_parse_storage_versions() -> None:
    scheme = _scheme()
    assert parse_storage_versions("policy/v1beta1/poddisruptionbudgets, v1/configmaps", scheme) == {
        ("policy", "poddisruptionbudgets"): "v1beta1",
        ("", "configmaps"): "v1",
    }
    assert parse_storage_versions("", scheme) == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "policy/v2/poddisruptionbudgets",
            "invalid storage version 'policy/v2/poddisruptionbudgets': poddisruptionbudgets "
            "cannot be stored in version 'v2' (known: v1, v1beta1)",
        ),
        (
            "policy/v1/widgets",
            "invalid storage version 'policy/v1/widgets': unknown resource",
        ),
        (
            "poddisruptionbudgets",
            "invalid storage version 'poddisruptionbudgets': expected group/version/resource "
            "(version/resource for the core group)",
        ),
    ],
)
def test_parse_storage_versions_names_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_storage_versions(text, _scheme())
    assert str(err.value) == message
