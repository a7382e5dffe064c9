"""Who owns which fields after a write: structured-merge-diff's ``merge.Updater``.

:meth:`Updater.update` records an ``Update`` (create, update, patch): the
writer takes the fields it changed, and every other manager loses the fields
that changed under it.  :meth:`Updater.apply` merges an applied
configuration: the applier owns exactly the fields of its configuration,
changing a field another manager owns is a conflict unless forced, and fields
the applier applied last time but left out now are removed unless another
manager still owns them.

Managers may hold fields in other versions of the resource; their view is
compared in their own version, converted by a :class:`Converter`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from kapi.registry.fieldmanager import typed
from kapi.registry.fieldmanager.fieldpath import EMPTY, FIELD, FieldSet, Path, PathElement
from kapi.registry.fieldmanager.managedfields import Conflicts, ManagerKey, VersionedSet
from kapi.registry.fieldmanager.schema import UNTYPED, UNTYPED_ATOMIC, Atom, MapType

Managers = dict[ManagerKey, VersionedSet]


class TypedValue(NamedTuple):
    """A value, its type, and the apiVersion that type belongs to."""

    value: Any
    atom: Atom
    api_version: str


class MissingVersionError(Exception):
    """The resource is not served in that version any more: its managers are dropped."""


class Converter:
    """Values in other versions of the resource (upstream's ``versionConverter``).

    ``atoms`` gives the type of a version (``None``: not served);
    ``convert`` converts an object to a version, possibly through a webhook.
    """

    def __init__(
        self,
        atoms: Callable[[str], Atom | None],
        convert: Callable[[Any, str], Awaitable[Any]] | None = None,
    ) -> None:
        self.atoms = atoms
        self._convert = convert

    def atom(self, api_version: str) -> Atom:
        atom = self.atoms(api_version)
        if atom is None:
            raise MissingVersionError(api_version)
        return atom

    async def convert(self, tv: TypedValue, api_version: str) -> TypedValue:
        if tv.api_version == api_version:
            return tv
        atom = self.atom(api_version)
        if self._convert is None or not isinstance(tv.value, dict):
            raise MissingVersionError(api_version)
        return TypedValue(await self._convert(tv.value, api_version), atom, api_version)


class Updater:
    """Field ownership bookkeeping for one resource.

    ``reset_fields`` are the fields each version's writes never own (``status``
    on the main resource, ``spec`` on ``/status``): upstream's ignore filter.
    Stored sets are adapted to schema changes before every write, as upstream
    does: a CRD's schema may change, and so may a built-in's between releases
    (a struct that became atomic).
    """

    def __init__(
        self, converter: Converter, reset_fields: dict[str, FieldSet] | None = None
    ) -> None:
        self.converter = converter
        self.reset_fields = reset_fields or {}
        #: Reconciled sets by the identity of the stored set and its version: decoded
        #: sets are shared between requests (``from_fields_v1`` caches them), so most
        #: writes find theirs here.  Entries hold the set, so its id stays its own.
        self._reconciled_sets: dict[tuple[int, str], tuple[FieldSet, FieldSet | None]] = {}

    def _filter(self, found: FieldSet, api_version: str) -> FieldSet:
        reset = self.reset_fields.get(api_version)
        return found.recursive_difference(reset) if reset is not None else found

    def _compare(self, old: TypedValue, new: TypedValue) -> typed.Comparison:
        comparison = typed.compare(old.value, new.value, old.atom)
        reset = self.reset_fields.get(old.api_version)
        if reset is not None:
            comparison = typed.Comparison(
                comparison.removed.recursive_difference(reset),
                comparison.modified.recursive_difference(reset),
                comparison.added.recursive_difference(reset),
            )
        return comparison

    async def _update(
        self,
        old: TypedValue,
        new: TypedValue,
        managers: Managers,
        workflow: ManagerKey,
        force: bool,
    ) -> typed.Comparison:
        """Take changed fields away from every other manager; conflicts unless ``force``.

        Changes are compared once per version the managers hold fields in.
        """
        comparison = self._compare(old, new)
        changes = {old.api_version: _Changes(comparison)}
        conflicts: dict[ManagerKey, FieldSet] = {}
        for key, versioned in list(managers.items()):
            if key == workflow:
                continue
            version = versioned.api_version
            theirs = changes.get(version)
            if theirs is None:
                try:
                    old_v = await self.converter.convert(old, version)
                    new_v = await self.converter.convert(new, version)
                except MissingVersionError:
                    del managers[key]
                    continue
                theirs = changes[version] = _Changes(self._compare(old_v, new_v))
            if not force:
                conflict = versioned.set.intersection(theirs.changed)
                if conflict:
                    conflicts[key] = conflict
            # Without the conflicting fields: what changed under the manager is not its own.
            rest = versioned.set.difference(theirs.changed).difference(theirs.removed)
            if rest is versioned.set:
                continue
            if rest:
                managers[key] = versioned._replace(set=rest)
            else:
                del managers[key]
        if conflicts:
            raise Conflicts.from_managers(conflicts)
        return comparison

    def created(self, new: TypedValue) -> FieldSet:
        """What an Update from the empty object owns: every field of ``new`` (less the
        ``apiVersion`` and ``kind`` the empty object has, which nobody owns anyway)."""
        return self._filter(typed.all_fields(new.value, new.atom), new.api_version)

    async def update(
        self, live: TypedValue, new: TypedValue, managers: Managers, manager: ManagerKey
    ) -> Managers:
        """An Update by ``manager``: it owns what it changed, on top of what it owned."""
        managers = self._reconciled(managers)
        comparison = await self._update(live, new, managers, manager, force=True)
        owned = comparison.modified.union(comparison.added)
        previous = managers.get(manager)
        if previous is not None:
            owned = previous.set.difference(comparison.removed).union(owned)
        owned = self._filter(owned, new.api_version)
        if owned:
            managers[manager] = VersionedSet(owned, new.api_version, False)
        else:
            managers.pop(manager, None)
        return managers

    async def apply(
        self,
        live: TypedValue,
        config: TypedValue,
        managers: Managers,
        manager: ManagerKey,
        force: bool,
    ) -> tuple[TypedValue | None, Managers]:
        """Merge ``config``; ``None`` for the object when nothing changed."""
        managers = self._reconciled(managers)
        try:
            merged = typed.merge(live.value, config.value, live.atom)
        except typed.ValidationErrors as exc:
            raise ApplyError(f"failed to merge config: {exc}") from None
        if merged is typed.MISSING:
            merged = {}
        last = managers.get(manager)
        owned = self._filter(typed.to_field_set(config.value, config.atom), config.api_version)
        managers[manager] = VersionedSet(owned, config.api_version, True)
        new = await self._prune(
            TypedValue(merged, live.atom, live.api_version), managers, manager, last
        )
        await self._update(live, new, managers, manager, force)
        if new.value == live.value:
            return None, managers
        return new, managers

    # -- pruning of fields the applier dropped -------------------------------------------

    async def _prune(
        self,
        merged: TypedValue,
        managers: Managers,
        applier: ManagerKey,
        last: VersionedSet | None,
    ) -> TypedValue:
        """Remove what ``applier`` applied last time but not now, unless someone else owns it."""
        if last is None or not last.set:
            return merged
        try:
            converted = await self.converter.convert(merged, last.api_version)
        except MissingVersionError:
            return merged
        atom = converted.atom
        pruned = converted._replace(
            value=typed.remove_items(
                converted.value, atom, typed.ensure_named_fields_are_members(last.set, atom)
            )
        )
        pruned = await self._add_back_owned(converted, pruned, managers)
        pruned = await self._add_back_dangling(converted, pruned, last)
        return await self.converter.convert(pruned, managers[applier].api_version)

    async def _add_back_owned(
        self, merged: TypedValue, pruned: TypedValue, managers: Managers
    ) -> TypedValue:
        """Put back what any manager (the applier's new configuration included) owns."""
        by_version: dict[str, FieldSet] = {}
        for versioned in managers.values():
            found = by_version.get(versioned.api_version, EMPTY)
            by_version[versioned.api_version] = found.union(versioned.set)
        # The pruned version first: conversion may need the fields pruning removed.
        ordered = sorted(by_version.items(), key=lambda item: item[0] != pruned.api_version)
        for version, owned in ordered:
            try:
                merged = await self.converter.convert(merged, version)
                pruned = await self.converter.convert(pruned, version)
            except MissingVersionError:
                continue
            ensure = typed.ensure_named_fields_are_members
            atom = merged.atom
            merged_set = ensure(typed.to_field_set(merged.value, atom), atom)
            pruned_set = ensure(typed.to_field_set(pruned.value, atom), atom)
            keep = pruned_set.union(ensure(owned, atom))
            pruned = merged._replace(
                value=typed.remove_items(merged.value, atom, merged_set.difference(keep))
            )
        return pruned

    async def _add_back_dangling(
        self, merged: TypedValue, pruned: TypedValue, last: VersionedSet
    ) -> TypedValue:
        """Only remove what the applier owned before: unowned fields stay."""
        try:
            converted = await self.converter.convert(pruned, last.api_version)
        except MissingVersionError:
            return merged
        ensure = typed.ensure_named_fields_are_members
        atom = merged.atom
        pruned_set = ensure(typed.to_field_set(converted.value, converted.atom), atom)
        merged_set = ensure(typed.to_field_set(merged.value, atom), atom)
        dropped = merged_set.difference(pruned_set).intersection(ensure(last.set, atom))
        return merged._replace(value=typed.remove_items(merged.value, atom, dropped))

    # -- schema changes -----------------------------------------------------------------

    def _reconciled(self, managers: Managers) -> Managers:
        """``reconcileManagedFieldsWithSchemaChanges``; managers of unserved versions go.

        Callers hand over a copy they own.
        """
        out: Managers = {}
        for key, versioned in managers.items():
            reconciled = self._reconciled_set(versioned.set, versioned.api_version)
            if reconciled is _UNSERVED:
                continue
            out[key] = versioned if reconciled is None else versioned._replace(set=reconciled)
        return out

    def _reconciled_set(self, owned: FieldSet, api_version: str) -> FieldSet | None:
        """``owned`` reconciled with ``api_version``'s schema (``None``: unchanged;
        :data:`_UNSERVED`: the version is not served)."""
        key = (id(owned), api_version)
        found = self._reconciled_sets.get(key)
        if found is not None and found[0] is owned:
            return found[1]
        atom = self.converter.atoms(api_version)
        reconciled = _UNSERVED if atom is None else reconcile_with_schema(owned, atom)
        if len(self._reconciled_sets) >= _RECONCILED_SETS_CACHED:
            self._reconciled_sets.clear()
        self._reconciled_sets[key] = (owned, reconciled)
        return reconciled


#: What :meth:`Updater._reconciled_set` answers for a version that is not served.
_UNSERVED = FieldSet()
_RECONCILED_SETS_CACHED = 1024


class _Changes:
    """What changed in one version, as the other managers see it."""

    __slots__ = ("changed", "removed")

    def __init__(self, comparison: typed.Comparison) -> None:
        self.changed = comparison.modified.union(comparison.added)
        self.removed = comparison.removed


class ApplyError(Exception):
    """An apply that fails for a reason other than conflicts (answered 500, as upstream)."""


def reconcile_with_schema(owned: FieldSet, atom: Atom) -> FieldSet | None:
    """``ReconcileFieldSetWithSchema``: sets below fields that became atomic collapse to the
    field itself.  ``None`` when nothing changes."""
    remove: list[Path] = []
    _reconcile(owned, atom, (), False, remove)
    if not remove:
        return None
    changes = FieldSet.of(*remove)
    return owned.recursive_difference(changes).union(changes)


def _reconcile(
    node: FieldSet | None, atom: Atom, path: Path, is_atomic: bool, remove: list[Path]
) -> None:
    if atom.map is not None:
        t = atom.map
        if _untyped_deduced(t):
            return
        if not is_atomic and t.atomic:
            if node is not None and node:
                remove.append(path)
            return
        if node is not None:
            _reconcile_items(node, path, remove, lambda pe: _field_type(t.fields, t.element, pe))
    elif atom.scalar is not None:
        return
    elif atom.list is not None:
        t_list = atom.list
        if not is_atomic and not t_list.associative:
            remove.append(path)
            return
        if node is not None:
            _reconcile_items(node, path, remove, lambda pe: t_list.element)


def _untyped_deduced(t: MapType) -> bool:
    """A free-form map (``isUntypedDeducedMap``): no fields, untyped values."""
    element = t.element
    return (
        not t.fields
        and element is not None
        and element is not UNTYPED_ATOMIC
        and element.scalar == UNTYPED
    )


def _field_type(fields: dict[str, Atom], element: Atom | None, pe: PathElement) -> Atom | None:
    if pe.startswith(FIELD):
        return fields.get(pe[2:]) or element
    return element


def _reconcile_items(
    node: FieldSet,
    path: Path,
    remove: list[Path],
    type_of: Callable[[PathElement], Atom | None],
) -> None:
    for pe, child in node.children.items():
        if pe in node.members:
            continue
        child_type = type_of(pe)
        if child_type is not None:
            _reconcile(child, child_type, (*path, pe), False, remove)
    for pe in node.members:
        child_type = type_of(pe)
        if child_type is not None:
            below = node.children.get(pe)
            _reconcile(below, child_type, (*path, pe), below is None, remove)
