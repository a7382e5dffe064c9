"""Resource types from discovery, and the names users give them on the command line.

kubectl resolves ``cm``, ``configmap``, ``configmaps``, ``ConfigMap``,
``leases.coordination.k8s.io`` and ``poddisruptionbudgets.v1beta1.policy``
through the server's discovery documents (``/api``, ``/apis``, then each
group/version), never through a built-in table: that is how custom resources
get the same treatment.  Without an explicit version a group's preferred
version wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kapi.client import Client, NotFoundError
from kapi.client.request import ResourceType


@dataclass(frozen=True)
class ResourceInfo:
    """One resource of one group/version, as an ``APIResource`` in discovery describes it."""

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    preferred: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def type(self) -> ResourceType:
        return ResourceType(self.api_version, self.plural, self.namespaced)

    @property
    def qualified_plural(self) -> str:
        """``configmaps``, ``leases.coordination.k8s.io``: how messages name the resource."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def qualified_kind(self) -> str:
        """``configmap``, ``poddisruptionbudget.policy``: the prefix of ``-o name`` lines."""
        kind = self.kind.lower()
        return f"{kind}.{self.group}" if self.group else kind

    def names(self) -> set[str]:
        """Every name that selects this resource within its group."""
        return {self.plural, self.singular, self.kind.lower(), *self.short_names} - {""}


class UnknownResourceError(Exception):
    """A type name or manifest kind no discovered resource answers to (kubectl's wording)."""


@dataclass
class Discovery:
    """The server's resources, fetched once per invocation (kubectl caches them on disk)."""

    client: Client
    _resources: list[ResourceInfo] | None = field(default=None, init=False)

    def group_versions(self) -> list[str]:
        """Every served group/version, ``api-versions`` order (sorted, as kubectl prints)."""
        versions = {*self._core_versions(), *(gv for _, gv, _ in self._group_versions())}
        return sorted(versions)

    def resources(self, *, all_versions: bool = False) -> list[ResourceInfo]:
        """Top-level resources (no subresources), preferred versions only unless asked."""
        if self._resources is None:
            self._resources = self._discover()
        if all_versions:
            return list(self._resources)
        return [r for r in self._resources if r.preferred]

    def resolve(self, name: str) -> ResourceInfo:
        """The resource ``name`` designates: ``plural[.version].group``, short name or kind."""
        lowered = name.lower()
        candidates = self.resources(all_versions=True)
        # plural.version.group, then plural.group, as kubectl tries them.
        for match in (_by_version_and_group, _by_group):
            for resource in candidates:
                if match(resource, lowered):
                    return resource
        for resource in self.resources():
            if lowered in resource.names() or name == resource.kind:
                return resource
        raise UnknownResourceError(f'the server doesn\'t have a resource type "{name}"')

    def for_object(self, obj: dict[str, Any]) -> ResourceInfo:
        """The resource of a manifest, from its ``apiVersion`` and ``kind``."""
        api_version = str(obj.get("apiVersion", ""))
        kind = str(obj.get("kind", ""))
        group, _, version = api_version.rpartition("/")
        for resource in self.resources(all_versions=True):
            if (resource.group, resource.version, resource.kind) == (group, version, kind):
                return resource
        raise UnknownResourceError(f'no matches for kind "{kind}" in version "{api_version}"')

    def _core_versions(self) -> list[str]:
        return list(self.client.request("GET", "/api").body.get("versions") or [])

    def _group_versions(self) -> list[tuple[str, str, bool]]:
        """(group, group/version, preferred) for each version of each group in ``/apis``."""
        out = []
        for group in self.client.request("GET", "/apis").body.get("groups") or []:
            preferred = (group.get("preferredVersion") or {}).get("groupVersion")
            for version in group.get("versions") or []:
                gv = version["groupVersion"]
                out.append((group["name"], gv, gv == preferred))
        return out

    def _discover(self) -> list[ResourceInfo]:
        listed = [("", f"/api/{v}", v, True) for v in self._core_versions()[:1]]
        for group, gv, preferred in self._group_versions():
            listed.append((group, f"/apis/{gv}", gv.rpartition("/")[2], preferred))
        resources = []
        for group, path, version, preferred in listed:
            try:
                document = self.client.request("GET", path).body
            except NotFoundError:
                # A group/version removed between the two reads: skip it, as kubectl does.
                continue
            for entry in document.get("resources") or []:
                if "/" in entry["name"]:
                    continue
                resources.append(_resource_info(group, version, preferred, entry))
        return resources


def _resource_info(
    group: str, version: str, preferred: bool, entry: dict[str, Any]
) -> ResourceInfo:
    return ResourceInfo(
        group=group,
        version=version,
        plural=entry["name"],
        singular=entry.get("singularName") or entry.get("kind", "").lower(),
        kind=entry.get("kind", ""),
        namespaced=bool(entry.get("namespaced")),
        short_names=tuple(entry.get("shortNames") or ()),
        verbs=tuple(entry.get("verbs") or ()),
        categories=tuple(entry.get("categories") or ()),
        preferred=preferred,
    )


def _by_version_and_group(resource: ResourceInfo, name: str) -> bool:
    return bool(resource.group) and name in {
        f"{n}.{resource.version}.{resource.group}" for n in resource.names()
    }


def _by_group(resource: ResourceInfo, name: str) -> bool:
    return (
        resource.preferred
        and bool(resource.group)
        and name in {f"{n}.{resource.group}" for n in resource.names()}
    )
