"""Which resources this server registers, with which versions, and in which
version it stores each one.

Upstream builds a ``ResourceInfo`` while installing each group's REST
storage; here they are derived from the scheme: every built-in resource that
is persisted registers once per storage location (resources sharing one, as
events.k8s.io Events share core Events', register under the first by group
then resource, as upstream's equivalent-resource dedup does).
"""

from __future__ import annotations

from kapi.runtime.scheme import GroupVersion, Resource, Scheme, version_priority_key
from kapi.storageversion.manager import ResourceInfo
from kapi.version import Version


def _declared(resource: Resource) -> list[str]:
    """The resource's API versions, newest first; a hub kept only for conversion
    (an unserved version without a lifecycle) is no API version."""
    versions = [v for v, rv in resource.versions.items() if rv.lifecycle is not None or rv.served]
    return sorted(versions, key=version_priority_key)


def _builtin(resource: Resource) -> bool:
    """A stored built-in resource (not a custom one, nor one computed on reads)."""
    return (
        resource.converter is None
        and resource.reader is None
        and all(rv.schema is not None for rv in resource.versions.values())
    )


def _owns_storage(resource: Resource) -> bool:
    """Whether the resource's hub objects are its own group's (not another group's kind)."""
    return (
        resource.hub_api_version == GroupVersion(resource.group, resource.hub_version).api_version
    )


def resource_infos(scheme: Scheme) -> list[ResourceInfo]:
    """A :class:`ResourceInfo` for every built-in resource the scheme persists.

    encoding: the resource's storage version; decodable: every declared version
    (of the resource and of those sharing its storage); served: the versions
    served at the scheme's emulated version.
    """
    by_location: dict[str, list[Resource]] = {}
    for resource in scheme.resources():
        if _builtin(resource):
            by_location.setdefault(resource.storage_prefix(), []).append(resource)
    infos: list[ResourceInfo] = []
    for sharing in by_location.values():
        if not any(scheme.served(r, v) for r in sharing for v in r.versions):
            continue  # a kind the release no longer has (PodSecurityPolicy after 1.24)
        sharing.sort(key=lambda r: (r.group, r.plural))
        owners = [r for r in sharing if _owns_storage(r)] or sharing
        owner = owners[0]
        others = [r for r in sharing if r is not owner]
        decodable = [GroupVersion(owner.group, v).api_version for v in _declared(owner)]
        for other in others:
            for version in _declared(other):
                api_version = GroupVersion(other.group, version).api_version
                if api_version not in decodable:
                    decodable.append(api_version)
        served = [
            GroupVersion(owner.group, v).api_version
            for v in _declared(owner)
            if scheme.served(owner, v)
        ]
        infos.append(
            ResourceInfo(
                group=owner.group,
                resource=owner.plural,
                encoding_version=owner.storage_api_version,
                decodable_versions=tuple(decodable),
                served_versions=tuple(served),
                equivalent_resources=tuple((r.group, r.plural) for r in others),
            )
        )
    infos.sort(key=lambda i: (i.group, i.resource))
    return infos


def _can_store_in(resource: Resource, version: str) -> bool:
    rv = resource.versions.get(version)
    if rv is None:
        return False
    return version == resource.hub_version or (rv.to_hub is not None and rv.from_hub is not None)


def default_storage_version(resource: Resource, emulated: Version) -> str:
    """The version a server emulating ``emulated`` stores ``resource`` in.

    A server must write what the release before it can read (a rollback, or
    the other servers of an upgrade in progress): the declared storage version
    when that release already had it, else the newest version it had.
    Resources without such a version keep their declared one.
    """
    declared = resource.storage_version
    if not _owns_storage(resource):
        return declared
    previous = Version(emulated.major, emulated.minor - 1)

    def known_before(version: str) -> bool:
        lifecycle = resource.versions[version].lifecycle
        return lifecycle is not None and lifecycle.introduced <= previous

    if declared not in resource.versions or known_before(declared):
        return declared
    candidates = [v for v in _declared(resource) if known_before(v) and _can_store_in(resource, v)]
    return candidates[0] if candidates else declared


def parse_storage_versions(text: str, scheme: Scheme) -> dict[tuple[str, str], str]:
    """``--storage-versions``: comma-separated ``group/version/resource`` (``v1/configmaps``
    for the core group) to (group, resource) -> version; ``ValueError`` naming the
    entry that is malformed or that the scheme cannot store."""
    chosen: dict[tuple[str, str], str] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        parts = entry.split("/")
        if len(parts) == 2:
            group, version, plural = "", parts[0], parts[1]
        elif len(parts) == 3:
            group, version, plural = parts
        else:
            raise ValueError(
                f"invalid storage version {entry!r}: expected group/version/resource "
                "(version/resource for the core group)"
            )
        resource = next(
            (
                r
                for r in scheme.resources()
                if r.group == group and r.plural == plural and _builtin(r)
            ),
            None,
        )
        if resource is None:
            raise ValueError(f"invalid storage version {entry!r}: unknown resource")
        if version not in _declared(resource) or not _can_store_in(resource, version):
            raise ValueError(
                f"invalid storage version {entry!r}: {plural} cannot be stored in version "
                f"{version!r} (known: {', '.join(_declared(resource))})"
            )
        chosen[(group, plural)] = version
    return chosen
