"""Discovery: which groups, versions and resources the server serves, in upstream's order.

The legacy documents (``/api``, ``/apis``, ``/api/v1``, ``/apis/<g>/<v>``) are
rendered here; :mod:`kapi.endpoints.aggregated_discovery` renders the same
:class:`DiscoveredResource` model as ``apidiscovery.k8s.io`` lists.  Both are
built from the scheme, so resources that appear or go (CRDs, a different
emulated version) show at once.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from dataclasses import dataclass

from kapi.apimachinery.unstructured import Object
from kapi.runtime.scheme import GroupVersion, Resource, Scheme, version_priority_key

#: kube-aggregator's APIService priorities of built-in group versions:
#: (group priority minimum, version priority).  Groups sort by the first, highest
#: first; versions inside a group by the second, then by kube-aware version order.
_BUILTIN_PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("events.k8s.io", "v1beta1"): (17750, 5),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("autoscaling", "v1"): (17500, 15),
    ("batch", "v1"): (17400, 15),
    ("batch", "v1beta1"): (17400, 9),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("networking.k8s.io", "v1beta1"): (17200, 9),
    ("policy", "v1"): (17100, 15),
    ("policy", "v1beta1"): (17100, 9),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("discovery.k8s.io", "v1beta1"): (16200, 12),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
    ("flowcontrol.apiserver.k8s.io", "v1beta3"): (16100, 18),
    ("flowcontrol.apiserver.k8s.io", "v1beta2"): (16100, 15),
    ("flowcontrol.apiserver.k8s.io", "v1beta1"): (16100, 12),
    ("internal.apiserver.k8s.io", "v1alpha1"): (16000, 9),
    ("storagemigration.k8s.io", "v1beta1"): (15800, 9),
}
#: What the CRD registration controller gives every custom resource group version.
_CUSTOM_PRIORITY = (1000, 100)
#: What the aggregated discovery manager assumes for a group version it has no priority for.
_DEFAULT_PRIORITY = (1000, 15)

_ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
#: Namespaces have no collection delete upstream (their storage is no CollectionDeleter).
_NO_DELETE_COLLECTION = frozenset({("", "namespaces")})
#: The CRD discovery controller lists its verbs in this (unsorted) order.
_CUSTOM_RESOURCE_VERBS = (
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
)
_SUBRESOURCE_VERBS = {
    "status": ("get", "patch", "update"),
    "scale": ("get", "patch", "update"),
    "finalize": ("update",),
    "ephemeralcontainers": ("get", "patch", "update"),
    "token": ("create",),
    "approval": ("get", "patch", "update"),
}


@dataclass(frozen=True)
class Kind:
    """A response kind; group and version are empty when they are the resource's own."""

    group: str
    version: str
    kind: str

    def as_dict(self) -> Object:
        return {"group": self.group, "version": self.version, "kind": self.kind}


@dataclass(frozen=True)
class DiscoveredSubresource:
    name: str
    verbs: tuple[str, ...]
    #: As the legacy list states it (group and version only for another group's kind).
    kind: Kind
    #: As aggregated discovery states it (custom resources name their own group version).
    response_kind: Kind


@dataclass(frozen=True)
class DiscoveredResource:
    """One resource of one group version, with what both discovery forms say of it."""

    resource: Resource
    verbs: tuple[str, ...]
    response_kind: Kind
    subresources: tuple[DiscoveredSubresource, ...]
    custom: bool


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """Upstream's ``StorageVersionHash``: 8 bytes of sha256 over ``group/version/kind``."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def is_custom(resource: Resource) -> bool:
    """Whether ``resource`` comes from a CRD (its versions carry no Python declaration)."""
    return all(rv.schema is None for rv in resource.versions.values())


def priority(scheme: Scheme, group: str, version: str) -> tuple[int, int]:
    """The APIService priority of a served group version."""
    found = _BUILTIN_PRIORITIES.get((group, version))
    if found is not None:
        return found
    if any(r.group == group and is_custom(r) for r in scheme.resources()):
        return _CUSTOM_PRIORITY
    return _DEFAULT_PRIORITY


def ordered_groups(scheme: Scheme, *, legacy: bool = False) -> list[tuple[str, list[str]]]:
    """Served groups with their versions, preferred first, in upstream's order.

    Versions sort by version priority, then GA before beta before alpha
    (kube-aware order).  Groups sort by their group priority, highest first;
    aggregated discovery breaks ties by group name, the aggregator's legacy
    ``/apis`` by the name of the first APIService (``<version>.<group>``).
    """
    groups: dict[str, list[str]] = {}
    services: list[tuple[int, str, str]] = []
    for group, versions in scheme.group_versions().items():
        priorities = {v: priority(scheme, group, v) for v in versions}
        groups[group] = sorted(versions, key=lambda v: (-priorities[v][1], version_priority_key(v)))
        for version, (group_priority, _) in priorities.items():
            services.append((-group_priority, f"{version}.{group}" if legacy else group, group))
    order = list(dict.fromkeys(group for *_, group in sorted(services)))
    return [(group, groups[group]) for group in order]


def discovered_resources(scheme: Scheme, group: str, version: str) -> list[DiscoveredResource]:
    """The resources served at ``group/version``, sorted by name as upstream installs them."""
    resources = sorted(
        (r for r in scheme.resources() if r.group == group and scheme.served(r, version)),
        key=lambda r: r.plural,
    )
    return [_discovered(resource, version) for resource in resources]


def resource_verbs(resource: Resource) -> tuple[str, ...]:
    """The verbs discovery lists for a resource, in the order upstream lists them."""
    if is_custom(resource):
        return _CUSTOM_RESOURCE_VERBS
    if resource.verbs:
        return resource.verbs
    if (resource.group, resource.plural) in _NO_DELETE_COLLECTION:
        return tuple(v for v in _ALL_VERBS if v != "deletecollection")
    return _ALL_VERBS


def _discovered(resource: Resource, version: str) -> DiscoveredResource:
    custom = is_custom(resource)
    # Aggregated discovery names a custom resource's own group version; built-ins leave it out.
    response_kind = (
        Kind(resource.group, version, resource.kind) if custom else Kind("", "", resource.kind)
    )
    served = resource.subresources_of(version)
    # The installer registers paths sorted; the CRD discovery controller appends status, scale.
    names = [s for s in ("status", "scale") if s in served] if custom else sorted(served)
    subresources = tuple(
        _creator_subresource(sub, creator.kind)
        if (creator := resource.creators.get(sub)) is not None
        else _subresource(resource.kind, sub, response_kind, _scale_kind(resource, version))
        for sub in names
    )
    return DiscoveredResource(
        resource, resource_verbs(resource), response_kind, subresources, custom
    )


def _creator_subresource(name: str, kind: tuple[str, str, str]) -> DiscoveredSubresource:
    """A subresource taking POSTs of its own kind: ``create`` only, that kind in both places."""
    own = Kind(*kind)
    return DiscoveredSubresource(name, ("create",), own, own)


def _scale_kind(resource: Resource, version: str) -> Kind:
    """The Scale a version's ``/scale`` answers: ``autoscaling/v1`` but in deprecated
    apps and extensions versions, which answer their own group's."""
    api_version = resource.scale.scale_api_version(version) if resource.scale else "autoscaling/v1"
    group, _, scale_version = api_version.rpartition("/")
    return Kind(group, scale_version, "Scale")


def _subresource(kind: str, name: str, own: Kind, scale: Kind) -> DiscoveredSubresource:
    if name == "scale":
        return DiscoveredSubresource(name, _SUBRESOURCE_VERBS[name], scale, scale)
    if name == "token":
        request = Kind("authentication.k8s.io", "v1", "TokenRequest")
        return DiscoveredSubresource(name, _SUBRESOURCE_VERBS[name], request, request)
    verbs = _SUBRESOURCE_VERBS.get(name, ("get",))
    return DiscoveredSubresource(name, verbs, Kind("", "", kind), own)


# --- the legacy documents ---------------------------------------------------------------


def api_versions(server_address: str) -> Object:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def api_group(scheme: Scheme, group: str) -> Object | None:
    versions = dict(ordered_groups(scheme)).get(group)
    return None if not versions else _group_entry(group, versions)


def _group_entry(group: str, versions: list[str]) -> Object:
    entries = [{"groupVersion": GroupVersion(group, v).api_version, "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(scheme: Scheme) -> Object:
    groups = [_group_entry(g, versions) for g, versions in ordered_groups(scheme, legacy=True) if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_resource_list(scheme: Scheme, group: str, version: str) -> Object | None:
    discovered = discovered_resources(scheme, group, version)
    if not discovered:
        return None
    entries: list[Object] = []
    for found in discovered:
        entries.append(_resource_entry(found))
        entries += [_subresource_entry(found, sub) for sub in found.subresources]
    if not any(found.custom for found in discovered):
        entries.sort(key=lambda e: e["name"])  # the installer's sorted paths
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": GroupVersion(group, version).api_version,
        "resources": entries,
    }


def _resource_entry(found: DiscoveredResource) -> Object:
    resource = found.resource
    entry: Object = {
        "name": resource.plural,
        "singularName": resource.singular,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": list(found.verbs),
    }
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource.categories:
        entry["categories"] = list(resource.categories)
    if resource.reader is None:  # nothing stored, no hash (upstream: no StorageVersionProvider)
        entry["storageVersionHash"] = _storage_version_hash(
            resource.storage_api_version, resource.kind
        )
    return entry


@functools.cache
def _storage_version_hash(storage_api_version: str, kind: str) -> str:
    """The hash of the version kapi really stores.

    For CustomResourceDefinitions that differs from kube-apiserver, which
    still stores them as v1beta1 and publishes ``jfWCUB31mvA=``: kapi stores
    v1, and the hash exists to tell storage migrators what is stored.
    """
    storage = GroupVersion.parse(storage_api_version)
    return storage_version_hash(storage.group, storage.version, kind)


def _subresource_entry(found: DiscoveredResource, sub: DiscoveredSubresource) -> Object:
    entry: Object = {
        "name": f"{found.resource.plural}/{sub.name}",
        "singularName": "",
        "namespaced": found.resource.namespaced,
    }
    if sub.kind.group or sub.kind.version:
        entry.update(group=sub.kind.group, version=sub.kind.version)
    entry.update(kind=sub.kind.kind, verbs=list(sub.verbs))
    return entry
