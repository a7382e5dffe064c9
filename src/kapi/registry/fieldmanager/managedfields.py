"""``metadata.managedFields`` entries to and from field sets per manager.

The counterpart of upstream's ``managedfields.go`` and ``conflict.go``: an
entry is identified by its manager, operation, subresource and, for
``Update`` entries only, apiVersion (an applier keeps one entry whatever
version it applies in).  Entries are written sorted as upstream sorts them:
``Apply`` before ``Update``, then by time, manager, apiVersion, subresource.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from kapi.apimachinery import errors
from kapi.apimachinery.gotext import go_json, go_quote
from kapi.registry.fieldmanager.fieldpath import (
    FieldSet,
    FieldsV1Error,
    Path,
    from_fields_v1,
    path_string,
)

APPLY, UPDATE = "Apply", "Update"
FIELDS_V1 = "FieldsV1"


class ManagedFieldsError(ValueError):
    """managedFields that do not decode (upstream's ``DecodeManagedFields`` errors)."""


class ManagerKey(NamedTuple):
    """A manager's identity: one entry per key (``BuildManagerIdentifier``)."""

    manager: str
    operation: str
    #: Empty for ``Apply``: an applier's entry follows it across versions.
    api_version: str = ""
    subresource: str = ""

    @property
    def identifier(self) -> str:
        """The JSON upstream identifies managers by (and sorts conflicts by)."""
        return _identifier(self)

    def describe(self) -> str:
        """How conflicts name the manager (``printManager``)."""
        text = go_quote(self.manager)
        if self.subresource:
            text += f" with subresource {go_quote(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


@functools.lru_cache(maxsize=1024)
def _identifier(key: ManagerKey) -> str:
    parts = [
        (name, value)
        for name, value in (
            ("manager", key.manager),
            ("operation", key.operation),
            ("apiVersion", key.api_version),
            ("subresource", key.subresource),
        )
        if value
    ]
    return "{" + ",".join(f'"{name}":{go_json(value)}' for name, value in parts) + "}"


class VersionedSet(NamedTuple):
    """A manager's fields, the version they are expressed in, and whether it applied them."""

    set: FieldSet
    api_version: str
    applied: bool


@dataclass
class Managed:
    """Field sets and last-change times per manager (upstream's ``ManagedInterface``)."""

    fields: dict[ManagerKey, VersionedSet]
    times: dict[ManagerKey, str | None]

    @classmethod
    def empty(cls) -> Managed:
        return cls({}, {})


def is_reset(entries: Any) -> bool:
    """``[]`` or ``[{}]`` in a request clears managedFields (``isResetManagedFields``)."""
    if not isinstance(entries, list):
        return False
    if not entries:
        return True
    return (
        len(entries) == 1
        and isinstance(entries[0], dict)
        and all(value in ("", None) for value in entries[0].values())
    )


def decode(entries: Any) -> Managed:
    """``DecodeManagedFields``; raises :class:`ManagedFieldsError`."""
    managed = Managed.empty()
    if entries is None:
        return managed
    if not isinstance(entries, list):
        raise ManagedFieldsError("managedFields must be a list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ManagedFieldsError(f"managed fields entry {i} must be an object")
        operation = entry.get("operation") or ""
        if operation not in (APPLY, UPDATE):
            raise ManagedFieldsError("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion") or ""
        if not api_version:
            raise ManagedFieldsError("apiVersion must not be empty")
        fields_type = entry.get("fieldsType") or ""
        if not fields_type:
            raise ManagedFieldsError(f"missing fieldsType in managed fields entry {i}")
        if fields_type != FIELDS_V1:
            raise ManagedFieldsError(
                f'invalid fieldsType "{fields_type}" in managed fields entry {i}'
            )
        key = ManagerKey(
            entry.get("manager") or "",
            operation,
            api_version if operation == UPDATE else "",
            entry.get("subresource") or "",
        )
        try:
            found = from_fields_v1(entry.get("fieldsV1") or {})
        except FieldsV1Error as exc:
            raise ManagedFieldsError(
                f"error decoding versioned set from entry {i}: error decoding set: {exc}"
            ) from None
        managed.fields[key] = VersionedSet(found, api_version, operation == APPLY)
        managed.times[key] = _normalize_time(entry.get("time"))
    return managed


def encode(managed: Managed) -> list[dict[str, Any]] | None:
    """``encodeManagedFields``: ``None`` when no manager is left (the field is dropped)."""
    if not managed.fields:
        return None
    entries = []
    for key, versioned in managed.fields.items():
        entry: dict[str, Any] = {}
        if key.manager:
            entry["manager"] = key.manager
        entry["operation"] = APPLY if versioned.applied else key.operation
        entry["apiVersion"] = versioned.api_version
        time = managed.times.get(key)
        if time is not None:
            entry["time"] = time
        entry["fieldsType"] = FIELDS_V1
        entry["fieldsV1"] = versioned.set.to_fields_v1()
        if key.subresource:
            entry["subresource"] = key.subresource
        entries.append(entry)
    entries.sort(key=_entry_order)
    return entries


def _entry_order(entry: dict[str, Any]) -> tuple[str, int, str, str, str]:
    return (
        entry["operation"],
        unix_seconds(entry.get("time")),
        entry.get("manager", ""),
        entry["apiVersion"],
        entry.get("subresource", ""),
    )


@functools.lru_cache(maxsize=1024)
def unix_seconds(time: str | None) -> int:
    if not time:
        return 0
    try:
        return int(datetime.fromisoformat(time).timestamp())
    except ValueError:
        return 0


@functools.lru_cache(maxsize=1024)
def _normalize_time(time: Any) -> str | None:
    """A ``metav1.Time`` as upstream writes it back: seconds, UTC, ``Z``."""
    if not isinstance(time, str) or not time:
        return None
    if len(time) == 20 and time.endswith("Z"):
        return time
    try:
        parsed = datetime.fromisoformat(time)
    except ValueError:
        return time
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- conflicts ----------------------------------------------------------------------------


class Conflicts(Exception):
    """Fields an apply would take from other managers (``merge.Conflicts``)."""

    def __init__(self, conflicts: list[tuple[ManagerKey, Path]]) -> None:
        super().__init__(conflicts)
        self.conflicts = conflicts

    @classmethod
    def from_managers(cls, sets: dict[ManagerKey, FieldSet]) -> Conflicts:
        """One conflict per path, managers in identifier order (upstream's map order is random)."""
        ordered = sorted(sets.items(), key=lambda item: item[0].identifier)
        return cls([(key, path) for key, found in ordered for path in found.paths()])

    def without(self, allowed: FieldSet) -> Conflicts:
        return Conflicts([(key, path) for key, path in self.conflicts if not allowed.has(path)])

    def status_error(self) -> errors.StatusError:
        """The 409 an apply answers with (``NewConflictError``)."""
        causes = [
            {
                "reason": "FieldManagerConflict",
                "message": f"conflict with {key.describe()}",
                "field": path_string(path),
            }
            for key, path in self.conflicts
        ]
        return errors.StatusError(409, "Conflict", self.message(), {"causes": causes})

    def message(self) -> str:
        if len(self.conflicts) == 1:
            key, path = self.conflicts[0]
            return (
                f"Apply failed with 1 conflict: conflict with {key.describe()}: {path_string(path)}"
            )
        by_manager: dict[ManagerKey, list[Path]] = {}
        for key, path in self.conflicts:
            by_manager.setdefault(key, []).append(path)
        lines = []
        for key in sorted(by_manager, key=lambda k: k.identifier):
            lines.append(f"conflicts with {key.describe()}:")
            lines += [f"- {path_string(path)}" for path in by_manager[key]]
        return f"Apply failed with {len(self.conflicts)} conflicts: " + "\n".join(lines)
