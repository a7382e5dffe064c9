"""The garbage collector: dependents follow their owners out.

An object whose ``metadata.ownerReferences`` name other objects is their
dependent.  Upstream's kube-controller-manager runs the collector; kapi runs
it in the server (``--enable-garbage-collector``, on by default), since
operators and their tests expect owned objects to go with their owner.

The collector follows every resource's objects (list, then watch, as
:func:`~kapi.registry.informer.reflect` does) into a graph of owner and
dependent uids, and acts on three things:

- a dependent none of whose owners exists any more is deleted (in the
  background; in the foreground when an owner waits on it);
- an owner deleted with ``propagationPolicy: Orphan`` (its ``orphan``
  finalizer) is taken out of its dependents' owner references, then the
  finalizer is removed;
- an owner deleted with ``Foreground`` (its ``foregroundDeletion``
  finalizer) has its dependents deleted, and keeps the finalizer until no
  dependent that sets ``blockOwnerDeletion`` is left.

The graph is eventually consistent: an owner missing from it is looked up
in storage before its dependent is deleted, so a dependent created a moment
after its owner (possibly through another server) is never collected by
mistake.  Several servers on one storage each run a collector; their
actions are idempotent (a delete preconditioned on the uid, finalizer and
reference removals that re-read the object).  Events are not followed: they
expire through ``--event-ttl``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.registry.deletion import FOREGROUND, ORPHAN, Propagation
from kapi.registry.informer import reflect
from kapi.registry.store import Preconditions, Store, WatchEvent
from kapi.runtime.strategy import GarbageCollectionPolicy

log = logging.getLogger(__name__)

#: Finds the store serving ``(apiVersion, kind)`` of an owner reference, if any.
StoreFinder = Callable[[str, str], Store | None]


@dataclass
class Node:
    """What the collector knows of one object."""

    store: Store
    namespace: str | None
    name: str
    uid: str
    owners: list[dict[str, Any]] = field(default_factory=list)
    finalizers: list[str] = field(default_factory=list)
    deleting: bool = False

    @classmethod
    def of(cls, store: Store, obj: Object) -> Node:
        metadata = obj["metadata"]
        return cls(
            store,
            metadata.get("namespace") or None,
            metadata["name"],
            metadata.get("uid", ""),
            [r for r in metadata.get("ownerReferences") or () if isinstance(r, dict)],
            list(metadata.get("finalizers") or ()),
            bool(metadata.get("deletionTimestamp")),
        )

    def waits_for_dependents(self) -> bool:
        return self.deleting and FOREGROUND in self.finalizers

    def blocks(self, owner_uid: str) -> bool:
        return any(r.get("uid") == owner_uid and r.get("blockOwnerDeletion") for r in self.owners)


class _Follower:
    """Feeds one store's objects into the collector's graph (a :func:`reflect` target)."""

    def __init__(self, collector: GarbageCollector, store: Store) -> None:
        self.collector = collector
        self.store = store

    async def replace(self, objects: list[Object]) -> None:
        self.collector.replace(self.store, objects)

    async def apply(self, event: WatchEvent) -> None:
        if event.type == "DELETED":
            self.collector.forget(event.object["metadata"].get("uid", ""))
        elif event.type in ("ADDED", "MODIFIED"):
            self.collector.observe(self.store, event.object)


class GarbageCollector:
    """Given the stores of everything (``stores()``, read again as CRDs come and go) and a
    way to find the store of an owner reference's kind."""

    #: How often new stores (custom resources installed since) are looked for.
    rescan_interval = 1.0
    #: How long a failed action waits before it is tried again.
    retry_interval = 1.0

    def __init__(self, stores: Callable[[], Iterable[Store]], find: StoreFinder) -> None:
        self._stores = stores
        self._find = find
        self.nodes: dict[str, Node] = {}
        #: Owner uid to the uids of the objects whose references name it.
        self.dependents: dict[str, set[str]] = {}
        self._queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._queued: set[tuple[str, str]] = set()
        self._followers: dict[str, asyncio.Task[None]] = {}

    # -- the graph ---------------------------------------------------------------------------

    def replace(self, store: Store, objects: list[Object]) -> None:
        """A store's whole set after a list: what is missing from it has been deleted."""
        listed = {o["metadata"].get("uid", "") for o in objects}
        prefix = store.resource.storage_prefix()
        for uid in [u for u, n in self.nodes.items() if _prefix(n) == prefix and u not in listed]:
            self.forget(uid)
        for obj in objects:
            self.observe(store, obj)

    def observe(self, store: Store, obj: Object) -> None:
        """An object as it now is: index its references and queue what it calls for."""
        node = Node.of(store, obj)
        old = self.nodes.get(node.uid)
        if old is not None:
            self._unlink(old)
        self.nodes[node.uid] = node
        for ref in node.owners:
            self.dependents.setdefault(str(ref.get("uid", "")), set()).add(node.uid)
        if node.owners and not node.deleting:
            self._enqueue("dependent", node.uid)
        if node.deleting and ORPHAN in node.finalizers:
            self._enqueue("orphan", node.uid)
        if node.waits_for_dependents():
            self._enqueue("foreground", node.uid)

    def forget(self, uid: str) -> None:
        """An object is gone: its dependents may be dangling, its owners may stop waiting."""
        node = self.nodes.pop(uid, None)
        if node is None:
            return
        self._unlink(node)
        for dependent in self.dependents.get(uid, ()):
            self._enqueue("dependent", dependent)
        for ref in node.owners:
            owner = self.nodes.get(str(ref.get("uid", "")))
            if owner is not None and owner.waits_for_dependents():
                self._enqueue("foreground", owner.uid)

    def _unlink(self, node: Node) -> None:
        for ref in node.owners:
            owner_uid = str(ref.get("uid", ""))
            linked = self.dependents.get(owner_uid)
            if linked is not None:
                linked.discard(node.uid)
                if not linked and owner_uid not in self.nodes:
                    del self.dependents[owner_uid]

    def _enqueue(self, action: str, uid: str) -> None:
        item = (action, uid)
        if item not in self._queued:
            self._queued.add(item)
            self._queue.put_nowait(item)

    # -- the loops ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Follow every store and act on the graph until cancelled."""
        worker = asyncio.create_task(self._work())
        try:
            while True:
                self._follow_new_stores()
                await asyncio.sleep(self.rescan_interval)
        finally:
            worker.cancel()
            for task in self._followers.values():
                task.cancel()

    def _follow_new_stores(self) -> None:
        for store in self._stores():
            policy = store.strategy.default_garbage_collection_policy()
            if policy is GarbageCollectionPolicy.UNSUPPORTED:
                continue  # Events
            # Stores that share storage (extensions/v1beta1 beside apps) are followed once.
            prefix = store.resource.storage_prefix()
            if prefix not in self._followers:
                follower = _Follower(self, store)
                self._followers[prefix] = asyncio.create_task(reflect(store, follower))

    async def _work(self) -> None:
        while True:
            item = await self._queue.get()
            self._queued.discard(item)
            action, uid = item
            try:
                await _ACTIONS[action](self, uid)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("garbage collector: %s of %s failed: %r; retrying", action, uid, exc)
                asyncio.get_running_loop().call_later(
                    self.retry_interval, self._enqueue, action, uid
                )

    # -- the actions -------------------------------------------------------------------------

    async def _collect_dependent(self, uid: str) -> None:
        """Delete ``uid`` if none of its owners is left; drop references to owners that are gone.

        Upstream's ``attemptToDeleteItem``: owners are "solid" (present),
        "dangling" (absent, or another object of the same name) or waiting for
        their dependents (deleted in the foreground).
        """
        node = self.nodes.get(uid)
        if node is None or node.deleting or not node.owners:
            return
        states: dict[str, list[dict[str, Any]]] = {"solid": [], "dangling": [], "waiting": []}
        for ref in node.owners:
            states[await self._owner_state(ref, node)].append(ref)
        solid, dangling, waiting = states["solid"], states["dangling"], states["waiting"]
        if solid:
            if dangling or waiting:
                gone = {str(r.get("uid", "")) for r in dangling + waiting}
                await self._drop_owner_references(node, gone)
            return
        if ORPHAN in node.finalizers:
            policy = "Orphan"
        elif FOREGROUND in node.finalizers or waiting:
            policy = "Foreground"
        else:
            policy = "Background"
        plural = node.store.resource.plural
        log.info("garbage collector: deleting %s %s (%s)", plural, node.name, policy)
        try:
            await node.store.delete(
                node.namespace,
                node.name,
                preconditions=Preconditions(uid=node.uid),
                propagation=Propagation(policy),
            )
        except errors.StatusError as exc:
            if exc.code not in (404, 409):  # gone already, or another object now has the name
                raise

    async def _owner_state(self, ref: dict[str, Any], dependent: Node) -> str:
        owner_uid = str(ref.get("uid", ""))
        owner = self.nodes.get(owner_uid)
        if owner is not None:
            return "waiting" if owner.waits_for_dependents() else "solid"
        # Not in the graph (yet): storage decides, as upstream's collector asks the server.
        store = self._find(str(ref.get("apiVersion", "")), str(ref.get("kind", "")))
        if store is None:
            return "solid"  # a kind no store serves here: never collect on a guess
        namespace = dependent.namespace if store.resource.namespaced else None
        try:
            found = await store.get(namespace, str(ref.get("name", "")))
        except errors.StatusError as exc:
            if exc.code == 404:
                return "dangling"
            raise
        metadata = found["metadata"]
        if metadata.get("uid") != owner_uid:
            return "dangling"
        finalizers = metadata.get("finalizers") or ()
        waits = metadata.get("deletionTimestamp") and FOREGROUND in finalizers
        return "waiting" if waits else "solid"

    async def _orphan_dependents(self, uid: str) -> None:
        """Take the owner out of its dependents' references, then drop its ``orphan`` finalizer."""
        owner = self.nodes.get(uid)
        if owner is None or not owner.deleting or ORPHAN not in owner.finalizers:
            return
        for dependent_uid in list(self.dependents.get(uid, ())):
            dependent = self.nodes.get(dependent_uid)
            if dependent is not None:
                await self._drop_owner_references(dependent, {uid})
        await self._drop_finalizer(owner, ORPHAN)

    async def _finish_foreground(self, uid: str) -> None:
        """Delete the owner's dependents; once none blocks it, drop ``foregroundDeletion``."""
        owner = self.nodes.get(uid)
        if owner is None or not owner.waits_for_dependents():
            return
        dependents = [self.nodes[d] for d in self.dependents.get(uid, ()) if d in self.nodes]
        if not any(d.blocks(uid) for d in dependents):
            await self._drop_finalizer(owner, FOREGROUND)
            return
        for dependent in dependents:
            if not dependent.deleting:
                self._enqueue("dependent", dependent.uid)

    async def _drop_owner_references(self, node: Node, owner_uids: set[str]) -> None:
        async def drop(obj: Object) -> Object:
            metadata = obj["metadata"]
            refs = metadata.get("ownerReferences") or ()
            kept = [r for r in refs if r.get("uid") not in owner_uids]
            if kept:
                metadata["ownerReferences"] = kept
            else:
                metadata.pop("ownerReferences", None)
            metadata.pop("resourceVersion", None)
            return obj

        await self._update(node, drop)

    async def _drop_finalizer(self, node: Node, finalizer: str) -> None:
        async def drop(obj: Object) -> Object:
            metadata = obj["metadata"]
            kept = [f for f in metadata.get("finalizers") or () if f != finalizer]
            if kept:
                metadata["finalizers"] = kept
            else:
                metadata.pop("finalizers", None)
            metadata.pop("resourceVersion", None)
            return obj

        await self._update(node, drop)

    async def _update(self, node: Node, change: Callable[[Object], Any]) -> None:
        async def change_same_object(obj: Object) -> Object:
            if obj["metadata"].get("uid") != node.uid:
                resource = node.store.resource
                raise errors.not_found(resource.plural, resource.group, node.name)
            return await change(obj)

        try:
            await node.store.update(node.namespace, node.name, change_same_object)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise


def _prefix(node: Node) -> str:
    return node.store.resource.storage_prefix()


_ACTIONS = {
    "dependent": GarbageCollector._collect_dependent,
    "orphan": GarbageCollector._orphan_dependents,
    "foreground": GarbageCollector._finish_foreground,
}
