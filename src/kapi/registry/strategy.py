"""Per-kind behaviour of the generic store, as upstream's ``rest.RESTCreateStrategy`` et al.

A :class:`Strategy` works on hub-version objects (plain dicts).  The generic
store (:mod:`kapi.registry.store`) calls its hooks in upstream's order:
prepare, validate, then the common ObjectMeta validation, warnings, and
canonicalize.
"""

from __future__ import annotations

from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError, Path
from kapi.apimachinery.unstructured import Object
from kapi.request import current as current_request
from kapi.runtime.objects import deep_copy
from kapi.runtime.strategy import GarbageCollectionPolicy, ResourceStrategy, ScaleSubresource

METADATA = Path("metadata")


class Strategy:
    """Defaults that suit a plain namespaced kind; kinds override what differs.

    It implements :class:`~kapi.runtime.strategy.ResourceStrategy`, the interface
    a :class:`~kapi.runtime.scheme.Resource` holds its strategy by.
    """

    #: Whether ``metadata.generation`` is kept (set to 1 on create, bumped on spec changes).
    has_generation: bool = False
    #: Whether the kind has a ``/status`` subresource: the main resource then
    #: ignores status changes and ``/status`` ignores everything else.
    has_status: bool = False
    #: Subresources that update one field of the object, and that field's path (empty:
    #: the server itself writes the whole object, as upstream's binding does).
    subresource_fields: dict[str, tuple[str, ...]] = {"status": ("status",)}
    #: Subresources whose writes change the spec, and so the generation, as the main
    #: resource's do (pods/ephemeralcontainers); other subresource writes keep it.
    spec_subresources: frozenset[str] = frozenset()
    #: PUT without ``metadata.resourceVersion`` is an unconditional update.
    allow_unconditional_update: bool = True
    #: PUT of a missing object creates it.
    allow_create_on_update: bool = False
    #: Objects are deleted ``--event-ttl`` after their last create or update
    #: (upstream sets ``TTLFunc`` on the event registry alone).
    expires_after_event_ttl: bool = False
    #: The ``/scale`` subresource's replica paths (custom resources declaring one).
    scale: ScaleSubresource | None = None

    @staticmethod
    def validate_name(name: str, prefix: bool) -> list[str]:
        """Name rule (upstream ``ValidateNameFunc``); most kinds take DNS-1123 subdomains."""
        return validation.name_is_dns_subdomain(name, prefix)

    def prepare_for_create(self, obj: Object) -> None:
        """Clear what a client may not set on create (for example status)."""
        if self.has_status:
            obj.pop("status", None)

    def prepare_for_update(self, new: Object, old: Object) -> None:
        """Carry over what a client may not change on update of the main resource."""
        if self.has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)

    def spec_changed(self, new: Object, old: Object) -> bool:
        """Whether a change bumps ``metadata.generation``: anything beyond metadata and status."""
        keys = (new.keys() | old.keys()) - _NOT_SPEC
        return any(new.get(k) != old.get(k) for k in keys)

    def has_pending_finalizers(self, obj: Object) -> bool:
        """Whether deletion must wait: the object is then only marked with a deletionTimestamp."""
        return bool(obj.get("metadata", {}).get("finalizers"))

    def prepare_for_graceful_delete(self, obj: Object) -> None:
        """Adjust an object being marked for deletion (Namespace moves to Terminating)."""

    #: The group versions whose deletes orphan dependents unless told otherwise: those
    #: that did so before the garbage collector existed (upstream's strategies name them).
    orphans_by_default_in: frozenset[tuple[str, str]] = frozenset()

    def default_garbage_collection_policy(self) -> GarbageCollectionPolicy:
        """The policy of a delete that names none, for the group version of the request."""
        info = current_request().info
        if (info.api_group, info.api_version) in self.orphans_by_default_in:
            return GarbageCollectionPolicy.ORPHAN_DEPENDENTS
        return GarbageCollectionPolicy.DELETE_DEPENDENTS

    def warnings_on_delete(self, propagation_given: bool) -> list[str]:
        """Warnings for a delete (Jobs warn that their pods stay when no policy is given)."""
        return []

    def refuse_delete(self, name: str) -> str | None:
        """Why a DELETE of the object ``name`` is forbidden before it is even read, or None.

        Upstream kinds whose REST storage overrides ``Delete`` (the system
        PriorityClasses); a collection delete does not ask, as upstream's does not.
        """
        return None

    def validate(self, obj: Object) -> list[FieldError]:
        return []

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return self.validate(new)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        """Validation of an update through ``subresource`` (for example status fields)."""
        return []

    def warnings_on_create(self, obj: Object) -> list[str]:
        return []

    def warnings_on_update(self, new: Object, old: Object) -> list[str]:
        return []

    def canonicalize(self, obj: Object) -> None:
        """Normalise a validated object before it is stored."""


class SubresourceStrategy:
    """Updates through a subresource (``/status``, ``/finalize``) change one field only.

    Everything else, metadata included, is taken from the stored object, as
    upstream's status strategies do; managed fields follow the request.
    """

    def __init__(self, main: ResourceStrategy, name: str, path: tuple[str, ...]) -> None:
        self.main = main
        self.name = name
        self.path = path

    def prepare_for_update(self, new: Object, old: Object) -> None:
        if not self.path:
            # The whole object, as its caller built it from the stored one: a write
            # straight to storage, past the kind's strategy (upstream's pods/binding).
            return
        value = _get_path(new, self.path)
        metadata = new.get("metadata", {})
        managed = metadata.get("managedFields")
        resource_version = metadata.get("resourceVersion")
        new.clear()
        new.update(deep_copy(old))
        _set_path(new, self.path, value)
        if managed is not None:
            new["metadata"]["managedFields"] = managed
        if resource_version is not None:
            new["metadata"]["resourceVersion"] = resource_version

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return self.main.validate_subresource_update(self.name, new, old)


_MISSING = object()


def _get_path(obj: Object, path: tuple[str, ...]) -> Any:
    node: Any = obj
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return _MISSING
        node = node[key]
    return node


def _set_path(obj: Object, path: tuple[str, ...], value: Any) -> None:
    parent = obj
    for key in path[:-1]:
        parent = parent.setdefault(key, {})
    if value is _MISSING:
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = value


_NOT_SPEC = frozenset({"metadata", "status", "apiVersion", "kind"})
