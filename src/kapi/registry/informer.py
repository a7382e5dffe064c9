"""An in-memory copy of one resource, kept current by its watch.

The counterpart of client-go's shared informer and lister: admission reads
namespaces (and webhook configurations) on every request, and upstream reads
them from informer caches rather than storage.  The copy is eventually
consistent, as upstream's.  With the embedded store the lag is nil in
practice: storage hands an event to watchers at commit, and the informer's
task runs before the server reads the next request.  Readers that must not
act on a miss (an object created a moment ago) look it up in storage then,
as upstream's NamespaceLifecycle does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping

from kapi.apimachinery.unstructured import Object
from kapi.registry.predicate import EVERYTHING
from kapi.registry.store import Store

log = logging.getLogger(__name__)


class Informer:
    """The current objects of one resource, by ``namespace/name`` (``name`` when cluster-scoped).

    ``on_change`` is called with every object after each change, for owners
    that derive something from the whole set (compiled webhooks).
    """

    def __init__(self, on_change: Callable[[Mapping[str, Object]], None] | None = None) -> None:
        self._objects: dict[str, Object] = {}
        self._on_change = on_change

    def get(self, namespace: str | None, name: str) -> Object | None:
        """The cached object, or ``None`` when the cache does not (yet) hold it."""
        return self._objects.get(f"{namespace}/{name}" if namespace else name)

    async def run(self, store: Store) -> None:
        """Follow ``store`` until cancelled; a failed watch starts over from a fresh list."""
        while True:
            self._objects.clear()
            try:
                async for event in await store.watch(None, EVERYTHING):
                    if event.type == "BOOKMARK":
                        continue
                    metadata = event.object["metadata"]
                    namespace, name = metadata.get("namespace"), metadata["name"]
                    key = f"{namespace}/{name}" if namespace else name
                    if event.type == "DELETED":
                        self._objects.pop(key, None)
                    else:
                        self._objects[key] = event.object
                    if self._on_change is not None:
                        self._on_change(self._objects)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("watching %s failed; restarting", store.resource.plural)
                await asyncio.sleep(1)
