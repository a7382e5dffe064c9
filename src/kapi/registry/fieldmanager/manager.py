"""The field manager of one resource version: upstream's ``FieldManager`` and its chain.

Upstream stacks small managers around the structured merge; their jobs, in
the order a request meets them, are kept here as methods of
:class:`FieldManager`:

- version check: an applied object must be of the endpoint's kind and version;
- last-applied updater: ``kubectl``'s applies keep a client-side
  ``last-applied-configuration`` annotation up to date;
- last-applied manager: ``kubectl``'s first server-side apply over a
  client-side applied object takes over the fields of the annotation
  without conflicts;
- skip non-applied: objects without managedFields are not tracked by
  updates; a first apply gives their fields to ``before-first-apply``;
- cap managers: at most 10 ``Update`` entries, the oldest merged into
  ``ancient-changes``;
- manager info: the entry's identity (manager, operation, version, subresource);
- managed fields updater: an update's fields join the writer's entry, whose
  time changes only when it took fields;
- strip meta: nobody owns ``apiVersion``, ``kind`` or system metadata;
- structured merge: :class:`~kapi.registry.fieldmanager.updater.Updater`.

Objects here are in the manager's version (the request's), without conversion.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from kapi.apimachinery import errors
from kapi.apimachinery.gotext import go_json
from kapi.apimachinery.unstructured import Object
from kapi.apimachinery.validation import (
    FIELD_MANAGER_MAX_LENGTH,
    TOTAL_ANNOTATION_SIZE_LIMIT_B,
    annotations_size,
)
from kapi.registry.fieldmanager import managedfields, typed
from kapi.registry.fieldmanager.fieldpath import FieldSet, field_element
from kapi.registry.fieldmanager.managedfields import (
    APPLY,
    UPDATE,
    Conflicts,
    Managed,
    ManagedFieldsError,
    ManagerKey,
    VersionedSet,
)
from kapi.registry.fieldmanager.schema import Atom
from kapi.registry.fieldmanager.updater import (
    ApplyError,
    Converter,
    MissingVersionError,
    TypedValue,
    Updater,
)
from kapi.runtime.objects import now_rfc3339

log = logging.getLogger(__name__)

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
#: The manager ``kubectl apply --server-side`` uses unless told otherwise.
KUBECTL = "kubectl"
BEFORE_FIRST_APPLY = "before-first-apply"
ANCIENT_CHANGES = "ancient-changes"
MAX_UPDATE_MANAGERS = 10

#: The Update in progress, before it joins its manager's entry.
_CURRENT = ManagerKey("current-operation", UPDATE)


def _meta_path(*names: str) -> tuple[str, ...]:
    return tuple(field_element(n) for n in names)


#: What no manager owns (``stripMetaManager``): members only, not what lies below them.
_STRIPPED = FieldSet.of(
    _meta_path("apiVersion"),
    _meta_path("kind"),
    _meta_path("metadata"),
    *(
        _meta_path("metadata", name)
        for name in (
            "name",
            "namespace",
            "creationTimestamp",
            "selfLink",
            "uid",
            "clusterName",
            "generation",
            "managedFields",
            "resourceVersion",
        )
    ),
)


def manager_or_user_agent(manager: str, user_agent: str) -> str:
    """The ``fieldManager`` query parameter, else the User-Agent up to its first ``/``.

    Unprintable characters are dropped and the result cut at 128 bytes (upstream's
    ``prefixFromUserAgent``).
    """
    if manager:
        return manager
    out: list[str] = []
    size = 0
    for ch in user_agent.split("/", 1)[0]:
        if not ch.isprintable():
            continue
        size += len(ch.encode())
        if size > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(ch)
    return "".join(out)


class FieldManager:
    """Managed fields of one version (and subresource) of one resource."""

    def __init__(
        self,
        *,
        kind: str,
        api_version: str,
        atom: Atom,
        converter: Converter,
        reset_fields: dict[str, FieldSet] | None = None,
        subresource: str = "",
        held_by_value: tuple[str, ...] = (),
    ) -> None:
        """``held_by_value``: top-level fields a built-in kind's Go type holds by value
        (``spec``, ``status``), which even an empty object has, as ``{}``."""
        self.kind = kind
        self.api_version = api_version
        self.atom = atom
        self.subresource = subresource
        self.updater = Updater(converter, reset_fields)
        self._held_by_value = held_by_value
        self._held = FieldSet.of(*((field_element(name),) for name in held_by_value))

    # -- Update ---------------------------------------------------------------------------

    async def update(self, live: Object | None, new: Object, manager: str) -> list[Object] | None:
        """The managedFields to store with ``new``, written by ``manager`` over ``live``.

        ``live`` is ``None`` for a create.  Never fails: on an error the object
        is stored without managedFields, as 1.33's ``UpdateNoErrors`` does.
        """
        live_entries = _managed_fields(live)
        try:
            managed = self._decode_live_or_new(live_entries, new)
            if not managed.fields and live is not None and live.get("metadata", {}).get("uid"):
                # Objects without managedFields are not tracked by updates.
                return managedfields.encode(managed)
            key = ManagerKey(manager or "unknown", UPDATE, self.api_version, self.subresource)
            managed = await self._record_update(live, new, managed, key)
            return managedfields.encode(_capped(managed))
        except (ManagedFieldsError, typed.ValidationErrors, FieldManagerError) as exc:
            log.error("[SHOULD NOT HAPPEN] failed to update managedFields: %s", exc)
            return None

    def _decode_live_or_new(self, live_entries: Any, new: Object) -> Managed:
        """The request's managedFields when it sends valid ones (``[]`` resets), else the
        live object's; subresources always keep the live object's."""
        if not self.subresource:
            sent = new.get("metadata", {}).get("managedFields")
            if managedfields.is_reset(sent):
                return Managed.empty()
            try:
                managed = managedfields.decode(sent)
            except ManagedFieldsError:
                managed = Managed.empty()
            if managed.fields:
                return managed
        try:
            return managedfields.decode(live_entries)
        except ManagedFieldsError:
            return Managed.empty()

    async def _record_update(
        self, live: Object | None, new: Object, managed: Managed, key: ManagerKey
    ) -> Managed:
        """The structured merge of an Update, stripped, joined to ``key``'s entry.

        ``live`` is ``None`` for the empty object a create starts from.  Both objects keep
        their managedFields: nobody owns them, so their changes change no entry.
        """
        new_tv = TypedValue(self._typed(new), self.atom, self.api_version)
        current: VersionedSet | None
        if live is None and not managed.fields:
            # Nobody owns anything yet and everything is new: no comparison needed.
            fields: dict[ManagerKey, VersionedSet] = {}
            owned = self.updater.created(new_tv).difference(self._held)
            current = VersionedSet(owned, self.api_version, False)
        else:
            live_tv = TypedValue(self._typed(live or self._empty()), self.atom, self.api_version)
            try:
                fields = await self.updater.update(live_tv, new_tv, dict(managed.fields), _CURRENT)
            except MissingVersionError as exc:
                raise FieldManagerError(f"failed to update ManagedFields: {exc}") from None
            current = fields.pop(_CURRENT, None)
        times = dict(managed.times)
        if current is not None:
            owned = current.set.difference(_STRIPPED)
            if owned:
                previous = fields.get(key)
                if previous is not None:
                    owned = owned.union(previous.set)
                decoded = managed.fields.get(key)
                if decoded is not None and owned == decoded.set:
                    owned = decoded.set  # the usual re-update: keep the decoded set and its JSON
                fields[key] = VersionedSet(owned, current.api_version, current.applied)
                times[key] = now_rfc3339()
        return Managed(fields, times)

    def _empty(self) -> Object:
        return self._typed({"apiVersion": self.api_version, "kind": self.kind})

    def _typed(self, obj: Object) -> Object:
        """``obj`` as its Go type would hold it: fields held by value are never absent."""
        missing = [name for name in self._held_by_value if name not in obj]
        return {**obj, **{name: {} for name in missing}} if missing else obj

    # -- Apply ----------------------------------------------------------------------------

    async def apply(self, live: Object | None, config: Object, manager: str, force: bool) -> Object:
        """The object after ``manager`` applied ``config`` over ``live`` (``None``: create).

        The result carries its managedFields.  Conflicts answer 409 as upstream.
        """
        live_obj = live if live is not None else self._empty()
        try:
            managed = managedfields.decode(_managed_fields(live_obj))
        except ManagedFieldsError as exc:
            raise _plain_500(f"failed to decode managed fields: {exc}") from None
        self._check_kind(config)
        try:
            obj, managed = await self._apply_over_last_applied(
                live_obj, config, managed, manager, force
            )
        except Conflicts as conflicts:
            raise conflicts.status_error() from None
        except (ApplyError, FieldManagerError) as exc:
            raise _plain_500(str(exc)) from None
        entries = managedfields.encode(managed)
        metadata = dict(obj.get("metadata") or {})
        if entries is None:
            metadata.pop("managedFields", None)
        else:
            metadata["managedFields"] = entries
        return {**obj, "metadata": metadata}

    def _check_kind(self, config: Object) -> None:
        """``versionCheckManager``: the applied object names this endpoint's kind and version."""
        api_version = config.get("apiVersion")
        kind = config.get("kind")
        if api_version == self.api_version and kind == self.kind:
            return
        group, version = "", ""
        if isinstance(api_version, str) and api_version.count("/") <= 1:
            group, _, version = api_version.rpartition("/")
        kind_text = kind if isinstance(kind, str) else ""
        raise errors.bad_request(f"invalid object type: {group}/{version}, Kind={kind_text}")

    async def _apply_over_last_applied(
        self, live: Object, config: Object, managed: Managed, manager: str, force: bool
    ) -> tuple[Object, Managed]:
        """The last-applied manager and updater around the apply itself."""
        try:
            obj, result = await self._apply(live, config, managed, manager, force)
        except Conflicts as conflicts:
            if manager != KUBECTL:
                raise
            allowed = self._allowed_by_last_applied(live)
            if allowed is None:
                raise
            rest = conflicts.without(allowed)
            if rest.conflicts:
                raise rest from None
            obj, result = await self._apply(live, config, managed, manager, True)
        if manager == KUBECTL and _last_applied(obj):
            obj = _with_last_applied(obj, _build_last_applied(config))
        return obj, result

    def _allowed_by_last_applied(self, live: Object) -> FieldSet | None:
        """Fields of the last-applied annotation that still hold their applied values.

        ``None`` when there is no usable annotation (upstream then keeps the conflicts).
        """
        annotation = _last_applied(live)
        if not annotation:
            return None
        try:
            last = json.loads(annotation)
            if not isinstance(last, dict) or last.get("apiVersion") != self.api_version:
                return None
            current = _without_managed_fields(live)
            typed.validate(current, self.atom)
            typed.validate(last, self.atom)
            owned = typed.to_field_set(last, self.atom)
            changes = typed.compare(last, current, self.atom)
        except (ValueError, typed.ValidationErrors):
            return None
        return (
            owned.difference(changes.modified).difference(changes.added).difference(changes.removed)
        )

    async def _apply(
        self, live: Object, config: Object, managed: Managed, manager: str, force: bool
    ) -> tuple[Object, Managed]:
        """Skip-non-applied, manager info, the managed fields updater, strip meta and merge."""
        if not managed.fields:
            before = ManagerKey(BEFORE_FIRST_APPLY, UPDATE, self.api_version, self.subresource)
            try:
                managed = _capped(await self._record_update(None, live, managed, before))
            except FieldManagerError as exc:
                raise FieldManagerError(
                    f"failed to create manager for existing fields: {exc}"
                ) from None
        key = ManagerKey(manager or "unknown", APPLY, "", self.subresource)
        metadata = config.get("metadata")
        if isinstance(metadata, dict) and metadata.get("managedFields") is not None:
            raise errors.bad_request("metadata.managedFields must be nil")
        try:
            typed.validate(config, self.atom)
        except typed.ValidationErrors as exc:
            raise FieldManagerError(
                f"failed to create typed patch object ({_gvknn(config)}): {exc}"
            ) from None
        current = self._typed(_without_managed_fields(live))
        try:
            typed.validate(current, self.atom, allow_duplicates=True)
        except typed.ValidationErrors as exc:
            raise FieldManagerError(
                f"failed to create typed live object ({_gvknn(live)}): {exc}"
            ) from None
        try:
            new, fields = await self.updater.apply(
                TypedValue(current, self.atom, self.api_version),
                TypedValue(config, self.atom, self.api_version),
                dict(managed.fields),
                key,
                force,
            )
        except MissingVersionError as exc:
            raise FieldManagerError(f"failed to convert object: {exc}") from None
        applied = fields.get(key)
        if applied is not None:
            owned = applied.set.difference(_STRIPPED)
            if owned:
                fields[key] = applied._replace(set=owned)
            else:
                del fields[key]
        times = dict(managed.times)
        if new is None:
            return current, Managed(fields, times)
        times[key] = now_rfc3339()
        return new.value, Managed(fields, times)


class FieldManagerError(Exception):
    """A field manager failure other than conflicts."""


def _plain_500(message: str) -> errors.StatusError:
    """An error upstream returns as a bare Go error: code 500 and no reason."""
    return errors.untyped(message)


def _gvknn(obj: Object) -> str:
    """``objectGVKNN``: ``namespace/name; group/version, Kind=kind``."""
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    api_version = obj.get("apiVersion") if isinstance(obj.get("apiVersion"), str) else ""
    assert isinstance(api_version, str)
    group, _, version = api_version.rpartition("/")
    return (
        f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}; "
        f"{group}/{version}, Kind={obj.get('kind') or ''}"
    )


def _managed_fields(obj: Object | None) -> Any:
    if obj is None:
        return None
    metadata = obj.get("metadata")
    return metadata.get("managedFields") if isinstance(metadata, dict) else None


def _without_managed_fields(obj: Object) -> Object:
    """A shallow view of ``obj`` without ``metadata.managedFields``: nobody owns them."""
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and "managedFields" in metadata:
        return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}
    return obj


def _capped(managed: Managed) -> Managed:
    """``capManagersManager``: the oldest Update entries beyond ten merge per version."""
    updaters = [key for key, versioned in managed.fields.items() if not versioned.applied]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return managed
    fields, times = dict(managed.fields), dict(managed.times)
    updaters.sort(key=lambda k: (managedfields.unix_seconds(times.get(k)), k.identifier))
    first_by_version: dict[str, ManagerKey] = {}
    length = len(updaters)
    for key in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        versioned = fields[key]
        bucket = ManagerKey(ANCIENT_CHANGES, UPDATE, versioned.api_version)
        first = first_by_version.get(versioned.api_version)
        if first is None:
            first_by_version[versioned.api_version] = key
            continue
        if bucket not in fields:
            fields[bucket] = fields.pop(first)
        fields[bucket] = versioned._replace(set=versioned.set.union(fields[bucket].set))
        del fields[key]
        length -= 1
        times[bucket] = times.get(key)
    return Managed(fields, times)


def _last_applied(obj: Object) -> str:
    annotations = obj.get("metadata", {}).get("annotations")
    value = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
    return value if isinstance(value, str) else ""


def _build_last_applied(config: Object) -> str:
    """The applied configuration as the annotation stores it (without itself), as kubectl."""
    metadata = config.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("annotations"), dict):
        annotations = {k: v for k, v in metadata["annotations"].items() if k != LAST_APPLIED}
        config = {**config, "metadata": {**metadata, "annotations": annotations}}
    return go_json(config) + "\n"


def _with_last_applied(obj: Object, value: str) -> Object:
    metadata = dict(obj.get("metadata") or {})
    annotations = dict(metadata.get("annotations") or {})
    annotations[LAST_APPLIED] = value
    if annotations_size(annotations) > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        del annotations[LAST_APPLIED]
    metadata["annotations"] = annotations
    return {**obj, "metadata": metadata}
