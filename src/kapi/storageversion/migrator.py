"""The in-server storage migrator (``kapi serve --enable-storage-migrator``).

:class:`StorageMigrator` follows two resources through the Stores:

* ``storageversionmigrations``: each migration that has neither succeeded nor
  failed is queued and carried out by :func:`~kapi.storageversion.migration.run_migration`,
  one at a time, over :class:`StoreBackend`;
* ``storageversions``: when a StorageVersion has a ``commonEncodingVersion``,
  the raw values under the resource's storage prefix are read (only their
  ``apiVersion``) and, when some object is stored in another version, a
  StorageVersionMigration for the resource is created.  Its name is derived
  from the StorageVersion's resourceVersion, so servers that share the storage
  create the same one (the others get AlreadyExists).

It is handed what it needs (a store getter and the storage), not the server.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Protocol

import orjson

from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.registry.informer import reflect
from kapi.registry.predicate import EVERYTHING
from kapi.registry.store import Store, WatchEvent
from kapi.storage.interface import Storage
from kapi.storageversion.migration import (
    RUN_BY_CLIENT,
    RUN_BY_LABEL,
    ConflictRetry,
    ContinueExpired,
    MigrationError,
    Outcome,
    Page,
    Progress,
    finished,
    group_resource_string,
    run_migration,
)

log = logging.getLogger(__name__)

SVM_GROUP = "storagemigration.k8s.io"
SVM_PLURAL = "storageversionmigrations"
SVM_API_VERSION = "storagemigration.k8s.io/v1beta1"
SV_GROUP = "internal.apiserver.k8s.io"
SV_PLURAL = "storageversions"
CRD_GROUP = "apiextensions.k8s.io"
CRD_PLURAL = "customresourcedefinitions"

#: Label on migrations the migrator created itself.
AUTO_LABEL = "storagemigration.kapi.dev/auto"

StoreGetter = Callable[[str, str], Store | None]


def _replace_with(obj: Object) -> Callable[[Object], Any]:
    async def update(_current: Object) -> Object:
        return obj

    return update


class StoreBackend:
    """:class:`~kapi.storageversion.migration.MigrationBackend` over this server's Stores."""

    def __init__(self, stores: StoreGetter) -> None:
        self._stores = stores

    def _store(self, group: str, plural: str) -> Store:
        store = self._stores(group, plural)
        if store is None:
            raise errors.StatusError(
                404, "NotFound", f"the server could not find the requested resource ({plural})"
            )
        return store

    async def get_migration(self, name: str) -> Object:
        return await self._store(SVM_GROUP, SVM_PLURAL).get(None, name)

    async def update_migration(self, migration: Object) -> Object:
        name = migration["metadata"]["name"]
        return await self._store(SVM_GROUP, SVM_PLURAL).update(None, name, _replace_with(migration))

    async def update_migration_status(self, migration: Object) -> Object:
        name = migration["metadata"]["name"]
        return await self._store(SVM_GROUP, SVM_PLURAL).update(
            None, name, _replace_with(migration), subresource="status"
        )

    async def get_storage_version(self, name: str) -> Object | None:
        try:
            return await self._store(SV_GROUP, SV_PLURAL).get(None, name)
        except errors.StatusError as err:
            if err.code == 404:
                return None
            raise

    async def list_page(self, group: str, resource: str, limit: int, continue_token: str) -> Page:
        try:
            listed = await self._store(group, resource).list(
                None, EVERYTHING, limit=limit, continue_token=continue_token
            )
        except errors.StatusError as err:
            if err.code == 410:
                raise ContinueExpired(err.message) from err
            raise
        return Page(
            listed.items, listed.continue_token, str(listed.resource_version), listed.remaining
        )

    async def rewrite(self, group: str, resource: str, obj: Object) -> Outcome:
        meta = obj["metadata"]
        try:
            await self._store(group, resource).update(
                meta.get("namespace"), meta["name"], _replace_with(obj)
            )
        except errors.StatusError as err:
            if err.code == 409:
                return "conflict"
            if err.code == 404:
                return "gone"
            raise
        return "rewritten"

    async def get_crd(self, name: str) -> Object | None:
        try:
            return await self._store(CRD_GROUP, CRD_PLURAL).get(None, name)
        except errors.StatusError as err:
            if err.code == 404:
                return None
            raise

    async def update_crd_status(self, crd: Object) -> Object:
        try:
            return await self._store(CRD_GROUP, CRD_PLURAL).update(
                None, crd["metadata"]["name"], _replace_with(crd), subresource="status"
            )
        except errors.StatusError as err:
            if err.code == 409:
                raise ConflictRetry(err.message) from err
            raise


def split_storage_version_name(name: str) -> tuple[str, str]:
    """``<group>.<resource>`` back to (group, resource); ``core`` is the core group."""
    group, _, resource = name.rpartition(".")
    return ("" if group == "core" else group), resource


async def stale_objects(store: Store, storage: Storage, api_version: str, limit: int = 500) -> int:
    """How many stored values of ``store``'s resource are not in ``api_version``.

    Reads the raw values page by page and looks only at their ``apiVersion``.
    """
    prefix = store.resource.storage_prefix()
    stale = 0
    start: str | None = None
    while True:
        result = await storage.list(prefix, start_key=start, limit=limit)
        for kv in result.kvs:
            try:
                stored = orjson.loads(kv.value).get("apiVersion")
            except orjson.JSONDecodeError:
                stored = None
            if stored != api_version:
                stale += 1
        if not result.more or not result.kvs:
            return stale
        start = result.kvs[-1].key + "\x00"


class MigrationMetrics(Protocol):
    """Where the migrator reports the out-of-tree migrator's series
    (``storage_migrator_core_migrator_*``); the server hands its metrics."""

    def observe_objects_migrated(self, resource: str, count: int) -> None: ...

    def observe_objects_remaining(self, resource: str, count: int) -> None: ...

    def observe_migration(self, resource: str, succeeded: bool) -> None: ...


class _ProgressMetrics:
    """Turns one run's cumulative :class:`Progress` reports into metric updates."""

    def __init__(self, metrics: MigrationMetrics, resource: str) -> None:
        self._metrics = metrics
        self._resource = resource
        self._reported = 0
        self.done = False

    def __call__(self, progress: Progress) -> None:
        if progress.migrated < self._reported:
            # The run started over (its continue token expired): count from there.
            self._reported = 0
        self._metrics.observe_objects_migrated(self._resource, progress.migrated - self._reported)
        self._reported = progress.migrated
        if progress.done:
            remaining = 0
        elif progress.about is None:
            return
        else:
            handled = progress.migrated + progress.conflicts + progress.gone
            remaining = max(progress.about - handled, 0)
        self._metrics.observe_objects_remaining(self._resource, remaining)
        self.done = progress.done


class StorageMigrator:
    """Runs StorageVersionMigrations one at a time, and creates them when needed."""

    def __init__(
        self,
        stores: StoreGetter,
        storage: Storage,
        *,
        page_size: int = 500,
        metrics: MigrationMetrics | None = None,
    ) -> None:
        self._stores = stores
        self._storage = storage
        self._page_size = page_size
        self._metrics = metrics
        #: The ``<resource>.<group>`` of each queued migration, for the metrics' label.
        self._resources: dict[str, str] = {}
        self._backend = StoreBackend(stores)
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._queued: set[str] = set()

    async def run(self) -> None:
        """Follow migrations and storage versions until cancelled."""
        svms = self._stores(SVM_GROUP, SVM_PLURAL)
        svs = self._stores(SV_GROUP, SV_PLURAL)
        tasks = [asyncio.create_task(self._work())]
        if svms is not None:
            tasks.append(asyncio.create_task(reflect(svms, _Follow(self._migration_seen))))
        if svs is not None and svms is not None:
            tasks.append(asyncio.create_task(reflect(svs, _Follow(self._storage_version_seen))))
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()

    async def _migration_seen(self, migration: Object) -> None:
        name = migration["metadata"]["name"]
        labels = migration["metadata"].get("labels") or {}
        if labels.get(RUN_BY_LABEL) == RUN_BY_CLIENT:
            return
        if not finished(migration) and name not in self._queued:
            target = (migration.get("spec") or {}).get("resource") or {}
            self._resources[name] = group_resource_string(
                target.get("group") or "", target.get("resource") or ""
            )
            self._queued.add(name)
            self._queue.put_nowait(name)

    async def _work(self) -> None:
        while True:
            name = await self._queue.get()
            resource = self._resources.get(name, "")
            report = _ProgressMetrics(self._metrics, resource) if self._metrics else None
            try:
                await run_migration(
                    self._backend, name, page_size=self._page_size, on_progress=report
                )
                if report is not None and report.done and self._metrics is not None:
                    self._metrics.observe_migration(resource, succeeded=True)
            except MigrationError as err:
                log.info("storage version migration %s failed: %s", name, err.message)
                if self._metrics is not None:
                    self._metrics.observe_migration(resource, succeeded=False)
            except errors.StatusError as err:
                log.info("storage version migration %s stopped: %s", name, err.message)
            except Exception:
                log.exception("storage version migration %s", name)
            finally:
                self._queued.discard(name)
                self._resources.pop(name, None)

    async def _storage_version_seen(self, storage_version: Object) -> None:
        common = (storage_version.get("status") or {}).get("commonEncodingVersion")
        if not common:
            return
        sv_name = storage_version["metadata"]["name"]
        group, resource = split_storage_version_name(sv_name)
        store = self._stores(group, resource)
        if store is None:
            return
        if not await stale_objects(store, self._storage, common):
            return
        name = f"{sv_name}-{storage_version['metadata']['resourceVersion']}"
        migration = {
            "apiVersion": SVM_API_VERSION,
            "kind": "StorageVersionMigration",
            "metadata": {"name": name, "labels": {AUTO_LABEL: "true"}},
            "spec": {"resource": {"group": group, "resource": resource}},
        }
        svms = self._stores(SVM_GROUP, SVM_PLURAL)
        assert svms is not None
        try:
            await svms.create(migration)
            log.info("created storage version migration %s", name)
        except errors.StatusError as err:
            if err.code != 409:
                raise


class _Follow:
    """A :func:`reflect` target that hands every listed or changed object to ``seen``."""

    def __init__(self, seen: Callable[[Object], Any]) -> None:
        self._seen = seen

    async def replace(self, objects: list[Object]) -> None:
        for obj in objects:
            await self._seen(obj)

    async def apply(self, event: WatchEvent) -> None:
        if event.type in ("ADDED", "MODIFIED"):
            await self._seen(event.object)
