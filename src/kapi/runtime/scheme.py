"""The scheme: which resources exist, in which versions, and how versions convert.

Each resource has one *hub* version that every other version converts to and
from (the role upstream's internal version plays), and one *storage* version
that objects are encoded in.  Registry code works on hub objects; the
endpoints convert between the hub and the version a request names.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from kapi.apimachinery.unstructured import Object
from kapi.runtime.columns import Column
from kapi.runtime.cooperative import CHUNK, pause
from kapi.runtime.scale import BuiltinScale
from kapi.runtime.schema import Struct
from kapi.runtime.strategy import ObjectReader, ResourceStrategy, SubresourceCreator
from kapi.version import Version

Converter = Callable[[Object], Object]
Defaulter = Callable[[Object], None]
#: Drops fields a version does not know; returns their paths for ``fieldValidation``.
Pruner = Callable[[Object], list[str]]


class ObjectConverter(Protocol):
    """Converts objects of one kind between versions, possibly with I/O.

    Custom resources convert through one of these (strategy ``None``, or a
    conversion webhook); built-in kinds use per-version functions instead.
    """

    #: The object is the same in every version but for ``apiVersion`` (strategy
    #: ``None``), so readers may rewrite that alone (``Store.json_response``).
    identity: bool

    async def convert(self, objects: list[Object], api_version: str) -> list[Object]:
        """``objects`` (of any served version) in ``api_version``, in the same order.

        This is upstream's list conversion: failures name the list
        (``<api_version>, Kind=<Kind>List``).
        """
        ...

    async def convert_object(self, obj: Object, api_version: str) -> Object:
        """One object (a get, a write, a watch event) in ``api_version``.

        Upstream converts these one by one, so failures name the object's own
        version and kind (``<its apiVersion>, Kind=<Kind>``), not a list.
        """
        ...


class GroupVersion(NamedTuple):
    group: str
    version: str

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` string: ``v1`` for the core group, else ``group/version``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @classmethod
    def parse(cls, api_version: str) -> GroupVersion:
        group, _, version = api_version.rpartition("/")
        return cls(group, version)


class GroupVersionKind(NamedTuple):
    group: str
    version: str
    kind: str

    def __str__(self) -> str:
        return f"{GroupVersion(self.group, self.version).api_version} {self.kind}"


@dataclass(frozen=True)
class Lifecycle:
    """When a group/version of a kind appeared, was deprecated and removed.

    Versions are Kubernetes minor releases; ``replacement`` names the kind
    users should move to.  The emulated version decides what is served.
    """

    introduced: Version
    deprecated: Version | None = None
    removed: Version | None = None
    replacement: GroupVersionKind | None = None

    def served_at(self, at: Version) -> bool:
        return self.introduced <= at and (self.removed is None or at < self.removed)

    def deprecated_at(self, at: Version) -> bool:
        return self.deprecated is not None and self.deprecated <= at

    def warning(self, gvk: GroupVersionKind) -> str:
        """Upstream's deprecation warning text for ``gvk`` (KEP-1693).

        Built once per kind and version: every request to a deprecated API asks.
        """
        return _deprecation_warning(self, gvk)


@functools.cache
def _deprecation_warning(lifecycle: Lifecycle, gvk: GroupVersionKind) -> str:
    """The text of :meth:`Lifecycle.warning`; lifecycles and kinds are few and immutable."""
    text = f"{gvk} is deprecated in v{lifecycle.deprecated}+"
    if lifecycle.removed is not None:
        text += f", unavailable in v{lifecycle.removed}+"
    if lifecycle.replacement is not None:
        text += f"; use {lifecycle.replacement}"
    return text


def renamed_hub(value: bytes) -> bool:
    """``reads_as_hub`` of a version that is the hub's fields under another apiVersion."""
    return True


@dataclass
class ResourceVersion:
    """One version of a resource: its schema, defaulting and conversion to the hub."""

    version: str
    #: The declaration of a built-in version (``None`` for custom resources).
    schema: Struct | None
    lifecycle: Lifecycle | None = None
    defaulter: Defaulter | None = None
    #: Convert an object of this version to the hub version (not for the hub).
    to_hub: Converter | None = None
    #: Convert a hub object to this version (not for the hub).
    from_hub: Converter | None = None
    #: Whether ``from_hub`` would change nothing but ``apiVersion`` in a stored
    #: hub value (its JSON bytes), so a read may answer those bytes
    #: (``Store.json_response``); ``None``: reads always convert.
    reads_as_hub: Callable[[bytes], bool] | None = None
    #: Pruning of unknown fields (built-in versions prune by their declaration).
    pruner: Pruner | None = None
    #: The OpenAPI v3 schema of a custom resource version (built-ins derive theirs).
    openapi_schema: dict[str, Any] | None = None
    #: A custom resource version kept only to store in (``served: false``).
    served: bool = True
    #: A custom resource version's deprecation warning (built-ins derive theirs).
    deprecation_warning: str | None = None
    #: A custom resource version's subresources and table columns (else the resource's).
    subresources: tuple[str, ...] | None = None
    columns: tuple[Column, ...] | None = None
    #: A custom resource version's field labels besides ``metadata.name`` (and
    #: ``metadata.namespace`` when namespaced): its ``selectableFields`` paths, in order.
    #: Set, even empty, the version has upstream's ``crConverter.ConvertFieldLabel``;
    #: ``None``: the resource's ``field_labels`` apply.
    field_labels: tuple[str, ...] | None = None


def renamed_version(
    version: str, schema: Struct, lifecycle: Lifecycle, defaulter: Defaulter | None = None
) -> ResourceVersion:
    """A version whose objects are the hub's fields under another apiVersion (the betas
    of most groups): converted by a copy, and read straight from the hub's bytes."""
    return ResourceVersion(
        version,
        schema,
        lifecycle,
        defaulter,
        to_hub=dict,
        from_hub=dict,
        reads_as_hub=renamed_hub,
    )


@dataclass
class Resource:
    """A REST resource and everything the server needs to serve it."""

    group: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    versions: dict[str, ResourceVersion]
    hub_version: str
    storage_version: str
    strategy: ResourceStrategy
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    #: Subresources that take a POST of another kind (``pods/binding``), by name; each
    #: is listed in ``subresources`` too.
    creators: Mapping[str, SubresourceCreator] = field(default_factory=dict)
    #: Field labels usable in field selectors besides metadata.name/namespace.
    field_labels: tuple[str, ...] = ()
    #: Field labels that stand for another label of the hub (upstream's field label
    #: conversion: events.k8s.io's ``regarding.kind`` is ``involvedObject.kind``).
    field_label_renames: Mapping[str, str] = field(default_factory=dict)
    #: The values field selectors match on a hub object (upstream ``GetAttrs``);
    #: ``None`` reads each selected label at its dotted path.
    selectable_fields: Callable[[Object], Mapping[str, str]] | None = None
    #: Table columns for ``kubectl get`` (empty: upstream's default Name / Created At).
    columns: tuple[Column, ...] = ()
    #: Sort key of a listed Table's rows where upstream's printer sorts them (FlowSchemas
    #: by precedence); ``None``: storage order.
    table_row_order: Callable[[Object], Any] | None = None
    #: Batch conversion for kinds whose conversion may do I/O (custom resources).
    converter: ObjectConverter | None = None
    #: Apply the version's defaults to objects read from storage (custom resources).
    default_on_read: bool = False
    list_kind: str = ""
    #: The storage key segment where upstream's storage factory differs from the plural
    #: (``ingress`` for ingresses, ``services/endpoints`` for endpoints).
    storage_resource: str = ""
    #: The ``apiVersion`` of hub objects; another group's when this resource shares that
    #: group's storage (events.k8s.io Events are core/v1 Events, as upstream cohabits them).
    hub_api_version: str = ""
    #: A built-in kind's ``/scale`` (custom resources declare theirs on their strategy);
    #: the versions listing ``scale`` in their subresources serve it.
    scale: BuiltinScale | None = None
    #: The verbs a resource answers when not every one (discovery lists these); empty:
    #: all of them.
    verbs: tuple[str, ...] = ()
    #: Objects computed on each read instead of stored (get and list only).
    reader: ObjectReader | None = None

    def __post_init__(self) -> None:
        self.list_kind = self.list_kind or self.kind + "List"
        self.hub_api_version = (
            self.hub_api_version or GroupVersion(self.group, self.hub_version).api_version
        )

    @property
    def storage_api_version(self) -> str:
        """The ``apiVersion`` objects are stored in (discovery hashes it)."""
        if self.storage_version == self.hub_version:
            return self.hub_api_version
        return GroupVersion(self.group, self.storage_version).api_version

    def storage_prefix(self) -> str:
        """Where this resource's objects live in storage (upstream's etcd layout).

        kube-apiserver keys built-in kinds by resource alone, whatever their group
        (``/registry/deployments/``, ``/registry/mutatingwebhookconfigurations/``);
        custom resources live under their group (``/registry/<group>/<plural>/``).
        """
        if self.versions[self.storage_version].schema is None:  # a custom resource
            return f"/registry/{self.group}/{self.plural}/"
        return f"/registry/{self.storage_resource or self.plural}/"

    def key(self, namespace: str | None, name: str) -> str:
        prefix = self.storage_prefix()
        return f"{prefix}{namespace}/{name}" if self.namespaced else f"{prefix}{name}"

    def gvk(self, version: str) -> GroupVersionKind:
        return GroupVersionKind(self.group, version, self.kind)

    def subresources_of(self, version: str) -> tuple[str, ...]:
        own = self.versions[version].subresources
        return self.subresources if own is None else own

    def columns_of(self, version: str) -> tuple[Column, ...]:
        own = self.versions[version].columns
        return self.columns if own is None else own


class Deprecation(NamedTuple):
    """What every request to a deprecated version gets (KEP-1693)."""

    #: The ``Warning`` text; empty when deprecated but silent.
    warning: str
    #: Upstream's ``RemovedRelease``: ``"1.25"``, or empty.
    removed_release: str


class Scheme:
    """Registered resources, looked up by group/version/resource or by kind."""

    def __init__(self, emulated_version: Version) -> None:
        self.emulated_version = emulated_version
        self._resources: dict[tuple[str, str], Resource] = {}
        self._by_kind: dict[tuple[str, str], Resource] = {}
        self._deprecations: dict[tuple[str, str], dict[str, Deprecation]] = {}

    def add(self, resource: Resource) -> None:
        self._resources[(resource.group, resource.plural)] = resource
        self._by_kind[(resource.group, resource.kind)] = resource
        self._deprecations[(resource.group, resource.plural)] = {
            version: Deprecation(warning, self.removed_release(resource, version))
            for version in resource.versions
            if (warning := self.deprecation_warning(resource, version)) is not None
        }

    def remove(self, group: str, plural: str) -> None:
        resource = self._resources.pop((group, plural), None)
        self._deprecations.pop((group, plural), None)
        if resource is not None:
            self._by_kind.pop((group, resource.kind), None)

    def resources(self) -> Iterator[Resource]:
        return iter(self._resources.values())

    def served(self, resource: Resource, version: str) -> bool:
        """Whether ``version`` of ``resource`` is served at the emulated version."""
        rv = resource.versions.get(version)
        if rv is None or not rv.served:
            return False
        return rv.lifecycle is None or rv.lifecycle.served_at(self.emulated_version)

    def deprecation(self, resource: Resource, version: str) -> Deprecation | None:
        """A registered version's deprecation, or ``None``; worked out when it was added.

        Every request asks, so this is one look-up rather than
        :meth:`deprecation_warning` and :meth:`removed_release` each time.
        """
        versions = self._deprecations.get((resource.group, resource.plural))
        return versions.get(version) if versions else None

    def deprecation_warning(self, resource: Resource, version: str) -> str | None:
        """The warning for a request to a deprecated version, or ``None`` if it is not.

        An empty string means deprecated but silent (a CRD's ``deprecationWarning: ""``).
        """
        rv = resource.versions[version]
        if rv.deprecation_warning is not None:
            return rv.deprecation_warning
        lifecycle = rv.lifecycle
        if lifecycle is None or not lifecycle.deprecated_at(self.emulated_version):
            return None
        return lifecycle.warning(resource.gvk(version))

    def removed_release(self, resource: Resource, version: str) -> str:
        """Upstream's ``RemovedRelease``: ``"1.25"``, or empty when no removal is planned."""
        lifecycle = resource.versions[version].lifecycle
        return "" if lifecycle is None or lifecycle.removed is None else str(lifecycle.removed)

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        """The resource served at ``/group/version/plural``, or ``None``."""
        resource = self._resources.get((group, plural))
        if resource is None or not self.served(resource, version):
            return None
        return resource

    def by_kind(self, group: str, kind: str) -> Resource | None:
        return self._by_kind.get((group, kind))

    def group_versions(self) -> dict[str, list[str]]:
        """Served versions per group, newest-preferred first (upstream priority order)."""
        groups: dict[str, set[str]] = {}
        for resource in self._resources.values():
            for version in resource.versions:
                if self.served(resource, version):
                    groups.setdefault(resource.group, set()).add(version)
        return {g: sorted(vs, key=version_priority_key) for g, vs in groups.items()}

    # -- conversion ------------------------------------------------------------------
    #
    # Conversion is async because a custom resource may convert through a webhook;
    # built-in kinds convert in-process and never suspend.

    async def to_hub(self, resource: Resource, obj: Object, version: str) -> Object:
        if version == resource.hub_version:
            return obj
        if resource.converter is not None:
            hub = GroupVersion(resource.group, resource.hub_version).api_version
            return await resource.converter.convert_object(obj, hub)
        converter = resource.versions[version].to_hub
        assert converter is not None, f"{resource.kind} {version} has no conversion to the hub"
        out = converter(obj)
        out["apiVersion"] = resource.hub_api_version
        return out

    async def from_hub(self, resource: Resource, obj: Object, version: str) -> Object:
        if version == resource.hub_version:
            return obj
        if resource.converter is not None:
            api_version = GroupVersion(resource.group, version).api_version
            return await resource.converter.convert_object(obj, api_version)
        return (await self.from_hub_many(resource, [obj], version))[0]

    async def from_hub_many(
        self, resource: Resource, objs: list[Object], version: str
    ) -> list[Object]:
        """Hub objects in ``version``; a conversion webhook gets them in one review."""
        if version == resource.hub_version or not objs:
            return objs
        api_version = GroupVersion(resource.group, version).api_version
        if resource.converter is not None:
            return await resource.converter.convert(objs, api_version)
        converter = resource.versions[version].from_hub
        assert converter is not None, f"{resource.kind} {version} has no conversion from the hub"
        out: list[Object] = []
        for i, obj in enumerate(objs):
            if i and not i % CHUNK:
                await pause()
            converted = converter(obj)
            converted["apiVersion"] = api_version
            out.append(converted)
        return out

    def default(self, resource: Resource, obj: Object, version: str) -> None:
        defaulter = resource.versions[version].defaulter
        if defaulter is not None:
            defaulter(obj)


_KUBE_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")


def version_priority_key(version: str) -> tuple[int, int, int, str]:
    """Sort key for Kubernetes version names, highest priority first.

    Upstream order: GA before beta before alpha, higher major first, higher
    minor level first; names that are not kube-like sort last, alphabetically.
    """
    match = _KUBE_VERSION.fullmatch(version)
    if not match:
        return (3, 0, 0, version)
    major, stage, level = match.groups()
    stage_rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (stage_rank, -int(major), -int(level or 0), "")
