"""Storage migration that trusts the StorageVersion API (issue 19 item 8).

:func:`run_migration` carries out one ``StorageVersionMigration``: it rewrites
every stored object of a resource, unchanged, so that the servers encode each
of them again in the version they now write.  That is only safe while every
server writes the same version, so the run:

* refuses to start unless the resource's StorageVersion has
  ``status.commonEncodingVersion``, and remembers the StorageVersion's
  ``resourceVersion``;
* lists the resource page by page (``limit`` and ``continue``) and writes each
  object back with its resourceVersion; a conflict or a not-found means someone
  else rewrote or deleted the object meanwhile, which is as good;
* after each page re-reads the StorageVersion and aborts (condition ``Failed``
  saying why) when the common version emptied or the object changed;
* records its progress in the ``Running`` condition and, in annotations of the
  migration object, the continue token, so a restarted run resumes there;
* on success sets ``Succeeded`` and, for a custom resource, trims the CRD's
  ``status.storedVersions`` to the version all servers write.

The code is plain async code against :class:`MigrationBackend`, so it runs in
the server over Stores (:mod:`kapi.storageversion.migrator`) and in
``kapi migrate`` over the HTTP client.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from kapi.apimachinery.unstructured import Object

RUNNING = "Running"
SUCCEEDED = "Succeeded"
FAILED = "Failed"

#: Annotations a run keeps its place in, on the StorageVersionMigration itself.
CONTINUE_ANNOTATION = "storagemigration.kapi.dev/continue"
STORAGE_VERSION_RV_ANNOTATION = "storagemigration.kapi.dev/storage-version-resource-version"
MIGRATED_ANNOTATION = "storagemigration.kapi.dev/migrated"

DEFAULT_PAGE_SIZE = 500

#: Label of a migration a client (``kapi migrate``) carries out itself: the in-server
#: migrator leaves it alone, so the two never rewrite the same resource at once.
RUN_BY_LABEL = "storagemigration.kapi.dev/run-by"
RUN_BY_CLIENT = "client"

#: Condition reasons, upstream's controller's (``pkg/controller/storageversionmigrator``).
REASON_MIGRATING = "StorageVersionMigrationInProgress"
REASON_COMPLETED = "StorageVersionMigrationSucceeded"
REASON_FAILED = "StorageVersionMigrationFailed"
#: Why a run was refused or aborted (:attr:`MigrationError.cause`); the Failed
#: condition's reason is upstream's one, its message says why.
REASON_NO_STORAGE_VERSION = "StorageVersionNotFound"
REASON_NO_COMMON_VERSION = "NoCommonEncodingVersion"
REASON_COMMON_VERSION_UNSET = "CommonEncodingVersionUnset"
REASON_STORAGE_VERSION_CHANGED = "StorageVersionChanged"

Outcome = Literal["rewritten", "conflict", "gone"]


class ContinueExpired(Exception):
    """The continue token is too old (410 Expired): the listing starts over."""


@dataclass
class Page:
    items: list[Object]
    continue_token: str
    #: The list's resourceVersion.
    resource_version: str
    #: ``metadata.remainingItemCount`` when the server gave one.
    remaining: int | None = None


class MigrationBackend(Protocol):
    """What a run needs from the API, in-server or over HTTP."""

    async def get_migration(self, name: str) -> Object: ...

    async def update_migration(self, migration: Object) -> Object:
        """Update the migration object (its annotations), conditional on its resourceVersion."""
        ...

    async def update_migration_status(self, migration: Object) -> Object: ...

    async def get_storage_version(self, name: str) -> Object | None:
        """The StorageVersion ``name``, or ``None`` when there is none."""
        ...

    async def list_page(self, group: str, resource: str, limit: int, continue_token: str) -> Page:
        """One page of the resource's objects, all namespaces; raises :class:`ContinueExpired`."""
        ...

    async def rewrite(self, group: str, resource: str, obj: Object) -> Outcome:
        """Write ``obj`` back unchanged, conditional on its resourceVersion."""
        ...

    async def get_crd(self, name: str) -> Object | None: ...

    async def update_crd_status(self, crd: Object) -> Object: ...


def storage_version_name(group: str, resource: str) -> str:
    """The StorageVersion of a resource: ``<group>.<resource>``, ``core`` for the core group."""
    return f"{group or 'core'}.{resource}"


def group_resource_string(group: str, resource: str) -> str:
    """``GroupResource.String()``: ``configmaps``, ``poddisruptionbudgets.policy``."""
    return f"{resource}.{group}" if group else resource


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def find_condition(obj: Object, condition_type: str) -> Object | None:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == condition_type:
            return condition
    return None


def is_true(obj: Object, condition_type: str) -> bool:
    condition = find_condition(obj, condition_type)
    return condition is not None and condition.get("status") == "True"


def finished(obj: Object) -> bool:
    return is_true(obj, SUCCEEDED) or is_true(obj, FAILED)


def set_condition(obj: Object, condition_type: str, status: str, reason: str, message: str) -> None:
    """``meta.SetStatusCondition``: lastTransitionTime changes only with the status."""
    conditions: list[Object] = obj.setdefault("status", {}).setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") == condition_type:
            if condition.get("status") != status:
                condition["lastTransitionTime"] = now_rfc3339()
            condition.update(status=status, reason=reason, message=message)
            return
    conditions.append(
        {
            "type": condition_type,
            "status": status,
            "lastTransitionTime": now_rfc3339(),
            "reason": reason,
            "message": message,
        }
    )


def progress_message(migrated: int, about: int | None) -> str:
    if about is None:
        return f"migrated {migrated} objects"
    return f"migrated {migrated} of about {about} objects"


@dataclass
class Progress:
    """What a run reports after each page (and at its end)."""

    migrated: int = 0
    conflicts: int = 0
    gone: int = 0
    about: int | None = None
    done: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class MigrationError(Exception):
    """A run ended with its ``Failed`` condition; ``message`` is that condition's."""

    def __init__(self, cause: str, message: str) -> None:
        super().__init__(message)
        self.cause = cause
        self.message = message


def _annotations(obj: Object) -> dict[str, str]:
    return obj.setdefault("metadata", {}).setdefault("annotations", {})


async def _fail(backend: MigrationBackend, migration: Object, cause: str, message: str) -> Object:
    updated = copy.deepcopy(migration)
    if find_condition(updated, RUNNING) is not None:
        set_condition(updated, RUNNING, "False", REASON_FAILED, message)
    set_condition(updated, FAILED, "True", REASON_FAILED, message)
    status = updated.setdefault("status", {})
    status.setdefault("resourceVersion", _rv_for_status(migration))
    return await backend.update_migration_status(updated)


def _rv_for_status(migration: Object) -> str:
    """status.resourceVersion must be a well-formed resourceVersion once written; before
    the first list answers, the migration's own is the nearest one known."""
    rv = (migration.get("status") or {}).get("resourceVersion")
    return str(rv or migration.get("metadata", {}).get("resourceVersion") or "")


def _refusal(group: str, resource: str, storage_version: Object | None) -> tuple[str, str] | None:
    gr = group_resource_string(group, resource)
    if storage_version is None:
        name = storage_version_name(group, resource)
        return (
            REASON_NO_STORAGE_VERSION,
            f"there is no StorageVersion {name}: no API server has reported how it stores {gr}",
        )
    if not (storage_version.get("status") or {}).get("commonEncodingVersion"):
        return (
            REASON_NO_COMMON_VERSION,
            f"the API servers do not agree on the version they store {gr} in: "
            f"StorageVersion {storage_version_name(group, resource)} has no "
            "commonEncodingVersion",
        )
    return None


async def run_migration(
    backend: MigrationBackend,
    name: str,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
    on_progress: Callable[[Progress], None] | None = None,
) -> Object:
    """Carry out the StorageVersionMigration ``name``; returns it as last written.

    A migration that already succeeded or failed is returned as it is.  Raises
    :class:`MigrationError` when the run is refused or aborted (after writing
    the ``Failed`` condition).
    """
    migration = await backend.get_migration(name)
    if finished(migration):
        return migration
    target = (migration.get("spec") or {}).get("resource") or {}
    group, resource = target.get("group") or "", target.get("resource") or ""
    gr = group_resource_string(group, resource)
    sv_name = storage_version_name(group, resource)

    storage_version = await backend.get_storage_version(sv_name)
    refusal = _refusal(group, resource, storage_version)
    if refusal is not None:
        await _fail(backend, migration, *refusal)
        raise MigrationError(*refusal)
    assert storage_version is not None
    common = storage_version["status"]["commonEncodingVersion"]

    annotations = _annotations(migration)
    current_sv_rv = str(storage_version.get("metadata", {}).get("resourceVersion") or "")
    sv_rv = annotations.get(STORAGE_VERSION_RV_ANNOTATION) or current_sv_rv
    token = annotations.get(CONTINUE_ANNOTATION, "")
    progress = Progress(migrated=int(annotations.get(MIGRATED_ANNOTATION) or 0))
    if sv_rv != current_sv_rv:
        # Resumed after the StorageVersion moved on: what was rewritten may be stale.
        reason, message = _changed(gr, sv_name, sv_rv, current_sv_rv)
        await _fail(backend, migration, reason, message)
        raise MigrationError(reason, message)

    while True:
        try:
            page = await backend.list_page(group, resource, page_size, token)
        except ContinueExpired:
            token, progress.migrated = "", 0
            page = await backend.list_page(group, resource, page_size, "")
        for obj in page.items:
            outcome = await backend.rewrite(group, resource, obj)
            if outcome == "rewritten":
                progress.migrated += 1
            elif outcome == "conflict":
                progress.conflicts += 1
            else:
                progress.gone += 1
        done_here = progress.migrated + progress.conflicts + progress.gone
        if page.remaining is not None:
            progress.about = done_here + page.remaining
        elif not page.continue_token:
            progress.about = done_here
        token = page.continue_token

        storage_version = await backend.get_storage_version(sv_name)
        now_rv = str((storage_version or {}).get("metadata", {}).get("resourceVersion") or "")
        if storage_version is None or not (storage_version.get("status") or {}).get(
            "commonEncodingVersion"
        ):
            reason = REASON_COMMON_VERSION_UNSET
            message = (
                f"aborted: the common encoding version of {gr} was unset while migrating "
                f"(StorageVersion {sv_name})"
            )
            await _fail(backend, migration, reason, message)
            raise MigrationError(reason, message)
        if now_rv != sv_rv:
            reason, message = _changed(gr, sv_name, sv_rv, now_rv)
            await _fail(backend, migration, reason, message)
            raise MigrationError(reason, message)

        # Remember where we are, then say so.
        migration = await backend.get_migration(name)
        annotations = _annotations(migration)
        annotations[STORAGE_VERSION_RV_ANNOTATION] = sv_rv
        annotations[MIGRATED_ANNOTATION] = str(progress.migrated)
        if token:
            annotations[CONTINUE_ANNOTATION] = token
        else:
            annotations.pop(CONTINUE_ANNOTATION, None)
        migration = await backend.update_migration(migration)
        status = migration.setdefault("status", {})
        if not status.get("resourceVersion"):
            status["resourceVersion"] = page.resource_version
        # As upstream's controller, Running is True from the first page on (with the
        # resourceVersion the run started at) and flipped to False at the end.
        if token or find_condition(migration, RUNNING) is None:
            set_condition(
                migration,
                RUNNING,
                "True",
                REASON_MIGRATING,
                progress_message(progress.migrated, progress.about),
            )
            migration = await backend.update_migration_status(migration)
        if token:
            if on_progress is not None:
                on_progress(progress)
            continue
        break

    if group:
        await _trim_stored_versions(backend, f"{resource}.{group}", common)
    message = (
        f"migrated {progress.migrated} objects of {gr} to {common}"
        f" ({progress.conflicts} changed and {progress.gone} deleted meanwhile)"
    )
    set_condition(migration, RUNNING, "False", REASON_COMPLETED, message)
    set_condition(migration, SUCCEEDED, "True", REASON_COMPLETED, message)
    migration = await backend.update_migration_status(migration)
    progress.done = True
    if on_progress is not None:
        on_progress(progress)
    return migration


def _changed(gr: str, sv_name: str, before: str, now: str) -> tuple[str, str]:
    return (
        REASON_STORAGE_VERSION_CHANGED,
        f"aborted: the storage version of {gr} changed while migrating "
        f"(StorageVersion {sv_name} resourceVersion {before}, now {now})",
    )


async def _trim_stored_versions(backend: MigrationBackend, crd_name: str, common: str) -> None:
    """Leave only the version every server writes in a CRD's ``status.storedVersions``."""
    version = common.rpartition("/")[2]
    for _ in range(5):
        crd = await backend.get_crd(crd_name)
        if crd is None:
            return
        stored = (crd.get("status") or {}).get("storedVersions") or []
        if stored == [version]:
            return
        crd.setdefault("status", {})["storedVersions"] = [version]
        try:
            await backend.update_crd_status(crd)
            return
        except ConflictRetry:
            continue


class ConflictRetry(Exception):
    """Raised by a backend's CRD status update on a conflict: read again and retry."""
