"""``storageVersionHash`` in legacy discovery, against values real kube-apiservers publish.

The expected hashes are upstream's ``GVRToStorageVersionHash`` test data
(kubernetes/kubernetes ``pkg/controlplane/storageversionhashdata``) and the
``/api/v1`` output of real clusters, e.g. ``qFsyl6wFWjQ=`` for configmaps.
"""

from __future__ import annotations

import pytest

from kapi.apis import builtin_resources
from kapi.endpoints import discovery
from kapi.runtime.scheme import Scheme
from kapi.version import DEFAULT_VERSION, Version

#: group/version/resource -> the hash a kube-apiserver publishes for it.
UPSTREAM = {
    "v1/configmaps": "qFsyl6wFWjQ=",
    "v1/endpoints": "fWeeMqaN/OA=",
    "v1/events": "r2yiGXH7wu8=",
    "v1/namespaces": "Q3oi5N2YM8M=",
    "v1/secrets": "S6u1pOWzb84=",
    "batch/v1/cronjobs": "sd5LIXh4Fjs=",
    "coordination.k8s.io/v1/leases": "gqkMMb/YqFM=",
    "discovery.k8s.io/v1/endpointslices": "qgS0xkrxYAI=",
    "events.k8s.io/v1/events": "r2yiGXH7wu8=",
    "networking.k8s.io/v1/ingresses": "39NQlfNR+bo=",
    "policy/v1/poddisruptionbudgets": "EVWiDmWqyJw=",
    "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations": "Sqi0GUgDaX0=",
    "admissionregistration.k8s.io/v1/validatingwebhookconfigurations": "B0wHjQmsGNk=",
}


def _scheme(emulated: Version = DEFAULT_VERSION) -> Scheme:
    scheme = Scheme(emulated)
    for resource in builtin_resources():
        scheme.add(resource)
    return scheme


def _published(scheme: Scheme) -> dict[str, str]:
    """Every resource's hash as the server's legacy discovery lists it."""
    hashes: dict[str, str] = {}
    for group, versions in discovery.ordered_groups(scheme):
        for version in versions:
            listed = discovery.api_resource_list(scheme, group, version)
            assert listed is not None
            for entry in listed["resources"]:
                if "storageVersionHash" in entry:
                    resource = f"{listed['groupVersion']}/{entry['name']}"
                    hashes[resource] = entry["storageVersionHash"]
    return hashes


def test_known_upstream_hash() -> None:
    assert discovery.storage_version_hash("", "v1", "ConfigMap") == "qFsyl6wFWjQ="
    assert discovery.storage_version_hash("apps", "v1", "Deployment") == "8aSe+NMegvE="


@pytest.mark.parametrize("resource", sorted(UPSTREAM))
def test_builtin_resources_publish_upstream_hashes(resource: str) -> None:
    published = _published(_scheme())
    if resource not in published:
        pytest.fail(f"{resource} is not served; served: {sorted(published)}")
    assert published[resource] == UPSTREAM[resource]


def test_every_stored_resource_has_a_hash_and_subresources_have_none() -> None:
    scheme = _scheme()
    for group, versions in discovery.ordered_groups(scheme):
        for version in versions:
            listed = discovery.api_resource_list(scheme, group, version)
            assert listed is not None
            for entry in listed["resources"]:
                found = scheme.lookup(group, version, entry["name"].split("/")[0])
                assert found is not None
                stored = "/" not in entry["name"] and found.reader is None  # not computed
                assert ("storageVersionHash" in entry) == stored, entry


def test_older_versions_hash_their_storage_version() -> None:
    """policy/v1beta1 PDBs are stored as policy/v1: both versions publish v1's hash."""
    published = _published(_scheme(Version(1, 24)))
    assert (
        published["policy/v1beta1/poddisruptionbudgets"]
        == UPSTREAM["policy/v1/poddisruptionbudgets"]
    )
    assert published["batch/v1beta1/cronjobs"] == UPSTREAM["batch/v1/cronjobs"]
