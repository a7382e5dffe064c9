"""The field managers of one resource: one per version and subresource, built on first use.

Upstream installs a field manager on every endpoint that writes; its types come
from the OpenAPI of built-in kinds or of the CRD, its reset fields from the
strategy (``status`` is not owned through the main resource, ``spec`` not
through ``/status``), and its converter is the resource's own conversion.
"""

from __future__ import annotations

from kapi.apimachinery.unstructured import Object
from kapi.registry.fieldmanager.fieldpath import FieldSet, field_element
from kapi.registry.fieldmanager.manager import FieldManager, FieldManagerError
from kapi.registry.fieldmanager.schema import Atom, declared_atom, openapi_atom
from kapi.registry.fieldmanager.updater import Converter
from kapi.runtime.meta import ObjectMeta
from kapi.runtime.objects import deep_copy
from kapi.runtime.schema import Struct
from kapi.runtime.scheme import GroupVersion, Resource, Scheme

#: Fields a write through the main resource or a subresource never owns.
_RESET_PATHS = {"": "status", "status": "spec"}


class ResourceFieldManagers:
    """Field managers for the versions and subresources of ``resource``."""

    def __init__(self, resource: Resource, scheme: Scheme) -> None:
        self._resource = resource
        self._scheme = scheme
        self._atoms: dict[str, Atom | None] = {}
        self._managers: dict[tuple[str, str], FieldManager | None] = {}
        self._converter = Converter(self.atom, self._convert)

    def get(self, version: str, subresource: str = "") -> FieldManager | None:
        """The manager of writes to ``version`` (through ``subresource``).

        ``None`` where fields are not tracked in this way: ``/scale`` writes go through
        the Scale's own field manager (:mod:`kapi.endpoints.scale`).
        """
        key = (version, subresource)
        if key not in self._managers:
            self._managers[key] = self._build(version, subresource)
        return self._managers[key]

    def _build(self, version: str, subresource: str) -> FieldManager | None:
        resource = self._resource
        strategy = resource.strategy
        if subresource and subresource not in strategy.subresource_fields:
            return None
        api_version = GroupVersion(resource.group, version).api_version
        atom = self.atom(api_version)
        if atom is None:
            return None
        reset: dict[str, FieldSet] = {}
        path = _RESET_PATHS.get(subresource)
        if path is not None and (subresource or strategy.has_status):
            fields = FieldSet.of((field_element(path),))
            reset = {GroupVersion(resource.group, v).api_version: fields for v in resource.versions}
        declared = resource.versions[version].schema
        held = (
            tuple(
                name
                for name in ("spec", "status")
                if isinstance(getattr(declared.by_name.get(name), "schema", None), Struct)
            )
            if declared is not None
            else ()
        )
        return FieldManager(
            kind=resource.kind,
            api_version=api_version,
            atom=atom,
            converter=self._converter,
            reset_fields=reset,
            subresource=subresource,
            # kapi's declarations do not say which structs Go holds by value; a kind's
            # spec and status always are.
            held_by_value=held,
        )

    def atom(self, api_version: str) -> Atom | None:
        """The type of ``api_version`` of the resource; ``None`` when it is not served."""
        if api_version not in self._atoms:
            self._atoms[api_version] = self._atom(api_version)
        return self._atoms[api_version]

    def _atom(self, api_version: str) -> Atom | None:
        resource = self._resource
        gv = GroupVersion.parse(api_version)
        served = resource.versions.get(gv.version)
        if gv.group != resource.group or served is None:
            return None
        if not self._scheme.served(resource, gv.version):
            return None
        if served.schema is not None:
            return declared_atom(served.schema)
        if served.openapi_schema is not None:
            return openapi_atom(served.openapi_schema, ObjectMeta)
        return None

    async def _convert(self, obj: Object, api_version: str) -> Object:
        """``obj`` (in any served version) in ``api_version``, as the resource converts."""
        resource = self._resource
        target = GroupVersion.parse(api_version).version
        try:
            if resource.converter is not None:
                return await resource.converter.convert_object(deep_copy(obj), api_version)
            source = GroupVersion.parse(str(obj.get("apiVersion", ""))).version
            hub = await self._scheme.to_hub(resource, deep_copy(obj), source)
            return await self._scheme.from_hub(resource, hub, target)
        except Exception as exc:
            raise FieldManagerError(f"failed to convert object to {api_version}: {exc}") from exc
