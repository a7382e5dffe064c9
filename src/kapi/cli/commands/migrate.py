"""``migrate RESOURCE``: rewrite every stored object of a resource in its storage version.

RESOURCE is resolved through discovery (``poddisruptionbudgets.policy``,
``pdb``, a custom resource's plural).  The command creates a
storagemigration.k8s.io StorageVersionMigration for it and carries it out
from here, over the API, with the same algorithm as the server's migrator
(``kapi serve --enable-storage-migrator``): it refuses to start unless the
resource's StorageVersion has a commonEncodingVersion, rewrites the objects
page by page, aborts when the StorageVersion changes meanwhile and, for a
custom resource, trims the CRD's status.storedVersions when done.  Progress
shows as a bar on a terminal and as plain lines otherwise.

Exit codes: 0 the migration succeeded; 1 it was refused or aborted (the
Failed condition's message is printed) or the API answered an error.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import TextIO

from kapi.apimachinery.unstructured import Object
from kapi.cli.commands.session import CommandError, Session
from kapi.client import ConflictError, ExpiredError, NotFoundError, SyncResource
from kapi.storageversion.migration import (
    DEFAULT_PAGE_SIZE,
    RUN_BY_CLIENT,
    RUN_BY_LABEL,
    ConflictRetry,
    ContinueExpired,
    MigrationError,
    Outcome,
    Page,
    Progress,
    find_condition,
    progress_message,
    run_migration,
    storage_version_name,
)

_SVM = ("storagemigration.k8s.io/v1beta1", "storageversionmigrations")
_SV = ("internal.apiserver.k8s.io/v1alpha1", "storageversions")
_CRD = ("apiextensions.k8s.io/v1", "customresourcedefinitions")
_BAR_WIDTH = 30


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "migrate",
        help="rewrite every stored object of a resource in its storage version",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
        epilog=__doc__.split("\n\n")[2] if __doc__ else None,
        parents=parents,
    )
    parser.add_argument("resource", metavar="RESOURCE", help="the resource to migrate")
    parser.add_argument(
        "--chunk-size",
        type=int,
        default=DEFAULT_PAGE_SIZE,
        help=f"objects listed per request (default {DEFAULT_PAGE_SIZE})",
    )
    parser.set_defaults(command_run=migrate)


class ClientBackend:
    """:class:`~kapi.storageversion.migration.MigrationBackend` over the HTTP client."""

    def __init__(self, s: Session, objects: SyncResource) -> None:
        self._svms = s.client.resource(*_SVM, namespaced=False)
        self._svs = s.client.resource(*_SV, namespaced=False)
        self._crds = s.client.resource(*_CRD, namespaced=False)
        self._objects = objects

    async def get_migration(self, name: str) -> Object:
        return dict(self._svms.get(name))

    async def update_migration(self, migration: Object) -> Object:
        return dict(self._svms.replace(migration))

    async def update_migration_status(self, migration: Object) -> Object:
        return dict(self._svms.replace(migration, subresource="status"))

    async def get_storage_version(self, name: str) -> Object | None:
        try:
            return dict(self._svs.get(name))
        except NotFoundError:
            return None

    async def list_page(self, group: str, resource: str, limit: int, continue_token: str) -> Page:
        try:
            listed = self._objects.list("", limit=limit, continue_=continue_token or None)
        except ExpiredError as err:
            raise ContinueExpired(str(err)) from err
        meta = listed.get("metadata") or {}
        return Page(
            list(listed.get("items") or []),
            meta.get("continue") or "",
            str(meta.get("resourceVersion") or ""),
            meta.get("remainingItemCount"),
        )

    async def rewrite(self, group: str, resource: str, obj: Object) -> Outcome:
        try:
            self._objects.replace(obj, obj["metadata"].get("namespace"))
        except ConflictError:
            return "conflict"
        except NotFoundError:
            return "gone"
        return "rewritten"

    async def get_crd(self, name: str) -> Object | None:
        try:
            return dict(self._crds.get(name))
        except NotFoundError:
            return None

    async def update_crd_status(self, crd: Object) -> Object:
        try:
            return dict(self._crds.replace(crd, subresource="status"))
        except ConflictError as err:
            raise ConflictRetry(str(err)) from err


class ProgressView:
    """A bar redrawn in place on a terminal; one line per report elsewhere."""

    def __init__(self, out: TextIO, prefix: str) -> None:
        self._out = out
        self._prefix = prefix
        self._tty = out.isatty()

    def __call__(self, progress: Progress) -> None:
        text = progress_message(progress.migrated, progress.about)
        if not self._tty:
            self._out.write(f"{self._prefix}: {text}\n")
            self._out.flush()
            return
        done = progress.migrated + progress.conflicts + progress.gone
        if progress.about:
            filled = min(_BAR_WIDTH, _BAR_WIDTH * done // progress.about)
            bar = "[" + "#" * filled + "-" * (_BAR_WIDTH - filled) + "] "
        else:
            bar = ""
        self._out.write(f"\r{self._prefix}: {bar}{text}\x1b[K")
        if progress.done:
            self._out.write("\n")
        self._out.flush()


def migrate(s: Session, args: argparse.Namespace) -> None:
    if args.chunk_size <= 0:
        raise CommandError("--chunk-size must be positive")
    info = s.discovery.resolve(args.resource)
    migration = {
        "apiVersion": _SVM[0],
        "kind": "StorageVersionMigration",
        "metadata": {
            "generateName": storage_version_name(info.group, info.plural) + "-",
            # Carried out here: a server's migrator leaves it alone.
            "labels": {RUN_BY_LABEL: RUN_BY_CLIENT},
        },
        "spec": {"resource": {"group": info.group, "resource": info.plural}},
    }
    created = s.client.resource(*_SVM, namespaced=False).create(migration)
    name = created["metadata"]["name"]
    s.out.write(f"storageversionmigration.storagemigration.k8s.io/{name} created\n")
    s.out.flush()
    backend = ClientBackend(s, s.resource(info))
    view = ProgressView(s.out, info.qualified_plural)
    try:
        final = asyncio.run(
            run_migration(backend, name, page_size=args.chunk_size, on_progress=view)
        )
    except MigrationError as err:
        raise CommandError(err.message) from err
    failed = find_condition(final, "Failed")
    if failed is not None and failed.get("status") == "True":
        raise CommandError(str(failed.get("message") or ""))
    succeeded = find_condition(final, "Succeeded") or {}
    s.out.write(f"{info.qualified_plural}: {succeeded.get('message') or 'migrated'}\n")
