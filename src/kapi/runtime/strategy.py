"""The interface of a resource's strategy, as a :class:`~kapi.runtime.scheme.Resource` holds it.

Upstream's ``rest.RESTCreateStrategy``, ``RESTUpdateStrategy`` and
``RESTDeleteStrategy`` are interfaces the generic store calls; here they are
one :class:`ResourceStrategy` protocol, defined below the registry so that the
scheme can carry a resource's strategy without importing the registry.
:class:`kapi.registry.strategy.Strategy` implements it with upstream's
defaults, and every kind's strategy derives from that.
"""

from __future__ import annotations

from typing import Any, Protocol

from kapi.apimachinery.field_errors import FieldError
from kapi.apimachinery.unstructured import Object


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

    def validate(self, obj: Object) -> list[FieldError]: ...

    def validate_update(self, new: Object, old: Object) -> list[FieldError]: ...

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]: ...

    def warnings_on_create(self, obj: Object) -> list[str]: ...

    def warnings_on_update(self, new: Object, old: Object) -> list[str]: ...

    def canonicalize(self, obj: Object) -> None: ...
