"""The interface of a resource's strategy, as a :class:`~kapi.runtime.scheme.Resource` holds it.

Upstream's ``rest.RESTCreateStrategy``, ``RESTUpdateStrategy`` and
``RESTDeleteStrategy`` are interfaces the generic store calls; here they are
one :class:`ResourceStrategy` protocol, defined below the registry so that the
scheme can carry a resource's strategy without importing the registry.
:class:`kapi.registry.strategy.Strategy` implements it with upstream's
defaults, and every kind's strategy derives from that.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any, Protocol

from kapi.apimachinery.field_errors import FieldError
from kapi.apimachinery.unstructured import Object
from kapi.runtime.schema import Struct


class GarbageCollectionPolicy(Enum):
    """What a delete naming no propagation does to dependents (``rest.GarbageCollectionPolicy``)."""

    DELETE_DEPENDENTS = "DeleteDependents"
    ORPHAN_DEPENDENTS = "OrphanDependents"
    #: The kind takes no part in garbage collection (Events): no finalizer is ever added.
    UNSUPPORTED = "Unsupported"


class ScaleSubresource(Protocol):
    """Where a kind's ``/scale`` subresource finds the replicas and the selector.

    Paths are simple JSON paths (``.spec.replicas``); ``get`` and ``set`` read
    and write them on an object.
    """

    @property
    def spec_replicas(self) -> str: ...

    @property
    def status_replicas(self) -> str: ...

    @property
    def label_selector(self) -> str | None: ...

    def get(self, obj: Object, path: str) -> Any: ...

    def set(self, obj: Object, path: str, value: Any) -> None: ...


class ResourceStrategy(Protocol):
    """Per-kind behaviour of the generic store; see :class:`kapi.registry.strategy.Strategy`."""

    has_generation: bool
    has_status: bool
    subresource_fields: dict[str, tuple[str, ...]]
    spec_subresources: frozenset[str]
    allow_unconditional_update: bool
    allow_create_on_update: bool
    expires_after_event_ttl: bool
    scale: ScaleSubresource | None

    def validate_name(self, name: str, prefix: bool) -> list[str]: ...

    def prepare_for_create(self, obj: Object) -> None: ...

    def prepare_for_update(self, new: Object, old: Object) -> None: ...

    def spec_changed(self, new: Object, old: Object) -> bool: ...

    def has_pending_finalizers(self, obj: Object) -> bool: ...

    def prepare_for_graceful_delete(self, obj: Object) -> None: ...

    def default_garbage_collection_policy(self) -> GarbageCollectionPolicy: ...

    def warnings_on_delete(self, propagation_given: bool) -> list[str]: ...
    def refuse_delete(self, name: str) -> str | None: ...

    def validate(self, obj: Object) -> list[FieldError]: ...

    def validate_update(self, new: Object, old: Object) -> list[FieldError]: ...

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]: ...

    def warnings_on_create(self, obj: Object) -> list[str]: ...

    def warnings_on_update(self, new: Object, old: Object) -> list[str]: ...

    def canonicalize(self, obj: Object) -> None: ...


class ObjectReader(Protocol):
    """The objects of a resource that kapi computes rather than stores (upstream's
    ``componentstatuses``: a ``rest.Getter`` and ``rest.Lister`` with no storage).

    ``not_found_resource`` is the resource name a missing object's 404 names.
    """

    @property
    def not_found_resource(self) -> str: ...

    async def read_all(self) -> list[Object]:
        """Every object, as hub objects, computed now."""
        ...


#: A store of another resource, looked up by group and plural (the registry's ``Store``).
StoreLookup = Callable[[str, str], Any]


class SubresourceCreator(Protocol):
    """A subresource that only takes a POST of its own kind (upstream's ``rest.NamedCreater``
    storage behind ``pods/binding`` and ``pods/eviction``).

    ``kind`` is what discovery names: ``(group, version, kind)``, empty group
    and version meaning the resource's own.
    """

    @property
    def kind(self) -> tuple[str, str, str]: ...

    def body_schema(self, api_version: str, kind: str) -> Struct | None:
        """The declaration a body of ``api_version``/``kind`` is decoded by; None: not accepted."""
        ...

    async def create(
        self, stores: StoreLookup, namespace: str | None, name: str, body: Object, *, dry_run: bool
    ) -> Object:
        """Carry out the POST of ``body`` to object ``name``; the answer, a ``Status`` when
        upstream answers one."""
        ...
