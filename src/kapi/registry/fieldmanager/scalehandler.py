"""Managed fields through ``/scale``: apimachinery's ``ScaleHandler``.

A write to the scale subresource runs the field manager on the
``autoscaling/v1`` Scale, not on the object it scales.  So that whoever
scaled owns the object's replicas field, and a later apply of that field by
someone else conflicts with them, the object's managedFields are carried
over both ways:

- :meth:`ScaleHandler.to_subresource`: the entries that own the object's
  replicas path become Scale entries owning ``.spec.replicas``;
- :meth:`ScaleHandler.to_parent`: after the write, owners of the object's
  replicas path who no longer own ``.spec.replicas`` of the Scale lose it,
  and Scale entries owning it become entries of the object owning its
  replicas path.

Entries are matched by their identity, as upstream's are: an ``Update``
entry's identity includes its apiVersion, which differs between the object
and the Scale, so an updater of the object always loses the replicas path
to the Scale entry that took it over.  Entries that come from the Scale keep
the time of the object's entry of the same identity, if any.
"""

from __future__ import annotations

from typing import Any

from kapi.registry.fieldmanager import managedfields
from kapi.registry.fieldmanager.fieldpath import FieldSet, Path, field_element
from kapi.registry.fieldmanager.managedfields import Managed, ManagerKey, VersionedSet

SCALE_API_VERSION = "autoscaling/v1"
#: Where a Scale holds its replicas.
REPLICAS_IN_SCALE: Path = (field_element("spec"), field_element("replicas"))

#: The replicas path of each version of a resource (``ResourcePathMappings``); ``None``
#: for a version without a scale subresource.  Versions not listed are unknown.
ResourcePathMappings = dict[str, Path | None]


def replicas_path(json_path: str) -> Path:
    """A CRD's ``specReplicasPath`` (``.spec.replicas``) as a field path."""
    return tuple(field_element(name) for name in json_path.removeprefix(".").split("."))


class ScaleHandler:
    """Converts managed fields between an object (in ``api_version``) and its Scale.

    Raises :class:`~kapi.registry.fieldmanager.managedfields.ManagedFieldsError`
    when the object's managedFields do not decode.
    """

    def __init__(
        self, parent_entries: Any, api_version: str, mappings: ResourcePathMappings
    ) -> None:
        self._parent = managedfields.decode(parent_entries)
        self._api_version = api_version
        self._mappings = mappings

    def to_subresource(self) -> list[dict[str, Any]] | None:
        """The object's entries owning its replicas path, as Scale entries."""
        fields: dict[ManagerKey, VersionedSet] = {}
        times: dict[ManagerKey, str | None] = {}
        for key, versioned in self._parent.fields.items():
            path = self._mappings.get(versioned.api_version)
            if path is None or not versioned.set.has(path):
                continue
            fields[key] = VersionedSet(
                FieldSet.of(REPLICAS_IN_SCALE), SCALE_API_VERSION, versioned.applied
            )
            times[key] = self._parent.times.get(key)
        return managedfields.encode(Managed(fields, times))

    def to_parent(self, scale_entries: Any) -> list[dict[str, Any]] | None:
        """The object's managedFields after the Scale's became ``scale_entries``.

        Entries of versions the resource does not know are dropped.
        """
        parent = self._parent
        scale_fields = dict(managedfields.decode(scale_entries).fields)
        fields: dict[ManagerKey, VersionedSet] = {}
        times: dict[ManagerKey, str | None] = {}
        for key, versioned in parent.fields.items():
            if versioned.api_version not in self._mappings:
                continue
            path = self._mappings[versioned.api_version]
            if path is not None and versioned.set.has(path):
                if key in scale_fields:
                    del scale_fields[key]  # still an owner through the Scale: kept as it is
                else:
                    # The replicas changed hands through the Scale.
                    versioned = versioned._replace(set=versioned.set.difference(FieldSet.of(path)))
                    if not versioned.set:
                        continue
            fields[key] = versioned
            times[key] = parent.times.get(key)
        own_path = self._mappings[self._api_version]
        assert own_path is not None, "the scale subresource is served by a version with one"
        for key, versioned in scale_fields.items():
            if not versioned.set.has(REPLICAS_IN_SCALE):
                continue
            fields[key] = VersionedSet(FieldSet.of(own_path), self._api_version, versioned.applied)
            times[key] = parent.times.get(key)
        return managedfields.encode(Managed(fields, times))
