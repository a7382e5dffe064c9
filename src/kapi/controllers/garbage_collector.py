"""The garbage collector: dependents follow their owners out.

An object whose ``metadata.ownerReferences`` name other objects is their
dependent.  Upstream's kube-controller-manager runs the collector; kapi runs
it in the server (``--enable-garbage-collector``, on by default), since
operators and their tests expect owned objects to go with their owner.

The collector follows the metadata of every object in storage (one list,
then one watch of the whole registry, without decoding or converting the
objects) into a graph of owner and dependent uids, and acts on three things:

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
expire through ``--event-ttl``.  An object is acted on through the store
whose storage prefix holds its key, looked up when the action runs, so the
objects of a CRD installed later are collected once it is.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.registry.deletion import FOREGROUND, ORPHAN, Propagation
from kapi.registry.informer import Backoff, ItemBackoff
from kapi.registry.store import Preconditions, Store
from kapi.storage.interface import EventType, ExpiredError, KeyValue, Storage

log = logging.getLogger(__name__)

#: Finds the store serving ``(apiVersion, kind)`` of an owner reference, if any.
StoreFinder = Callable[[str, str], Store | None]
#: Where every object lives in storage, and the part of it the collector leaves alone.
REGISTRY = "/registry/"
EVENTS = "/registry/events/"


@dataclass
class Node:
    """What the collector knows of one object: its key and the metadata it acts on."""

    key: str
    namespace: str | None
    name: str
    uid: str
    owners: list[dict[str, Any]] = field(default_factory=list)
    finalizers: list[str] = field(default_factory=list)
    deleting: bool = False

    @classmethod
    def parse(cls, kv: KeyValue) -> Node | None:
        """The node of a stored object; ``None`` for a value that is not one (internal keys)."""
        try:
            metadata = orjson.loads(kv.value).get("metadata")
        except (orjson.JSONDecodeError, AttributeError):
            return None
        if not isinstance(metadata, dict) or not metadata.get("uid") or not metadata.get("name"):
            return None
        return cls(
            kv.key,
            metadata.get("namespace") or None,
            metadata["name"],
            metadata["uid"],
            [r for r in metadata.get("ownerReferences") or () if isinstance(r, dict)],
            list(metadata.get("finalizers") or ()),
            bool(metadata.get("deletionTimestamp")),
        )

    def waits_for_dependents(self) -> bool:
        return self.deleting and FOREGROUND in self.finalizers

    def blocks(self, owner_uid: str) -> bool:
        return any(r.get("uid") == owner_uid and r.get("blockOwnerDeletion") for r in self.owners)


class GarbageCollector:
    """Given the storage, the stores of everything (``stores()``, read again as CRDs come
    and go) and a way to find the store of an owner reference's kind."""

    #: How long a failed action waits before it is tried again: from 5 ms, doubled
    #: for each failure in a row of the same action, up to 1000 s (client-go's defaults).
    retry_initial = 0.005
    retry_cap = 1000.0

    def __init__(
        self, storage: Storage, stores: Callable[[], Iterable[Store]], find: StoreFinder
    ) -> None:
        self._storage = storage
        self._stores = stores
        self._find = find
        self.nodes: dict[str, Node] = {}
        self._by_key: dict[str, str] = {}
        #: Owner uid to the uids of the objects whose references name it.
        self.dependents: dict[str, set[str]] = {}
        self._queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._queued: set[tuple[str, str]] = set()
        self._retries: ItemBackoff[tuple[str, str]] = ItemBackoff(
            self.retry_initial, self.retry_cap
        )

    # -- the graph ---------------------------------------------------------------------------

    def replace(self, kvs: list[KeyValue]) -> None:
        """Everything in storage after a list: what is missing from it has been deleted."""
        listed = [n for n in map(Node.parse, kvs) if n is not None]
        present = {n.uid for n in listed}
        for uid in [u for u in self.nodes if u not in present]:
            self.forget(uid)
        for node in listed:
            self.observe(node)

    def observe(self, node: Node) -> None:
        """An object as it now is: index its references and queue what it calls for."""
        old = self.nodes.get(node.uid)
        if old is not None:
            self._unlink(old)
        self.nodes[node.uid] = node
        self._by_key[node.key] = node.uid
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
        if self._by_key.get(node.key) == uid:
            del self._by_key[node.key]
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
        """Follow storage and act on the graph until cancelled."""
        worker = asyncio.create_task(self._work())
        try:
            await self._follow()
        finally:
            worker.cancel()

    async def _follow(self) -> None:
        """List, then watch from there; start over from a new list when the watch ends."""
        backoff = Backoff()
        while True:
            try:
                listed = await self._storage.list(REGISTRY)
                self.replace([kv for kv in listed.kvs if not kv.key.startswith(EVENTS)])
                watch = await self._storage.watch(REGISTRY, listed.revision)
                try:
                    async for event in watch:
                        backoff.reset()
                        kv = event.kv
                        if kv is None or kv.key.startswith(EVENTS):
                            continue
                        if event.type is EventType.DELETED:
                            uid = self._by_key.get(kv.key)
                            if uid is not None:
                                self.forget(uid)
                        elif (node := Node.parse(kv)) is not None:
                            self.observe(node)
                finally:
                    await watch.close()
            except asyncio.CancelledError:
                raise
            except ExpiredError as exc:
                log.info("garbage collector: watch expired (%s); listing again", exc)
            except Exception as exc:
                log.warning("garbage collector: following storage failed: %r; retrying", exc)
            await asyncio.sleep(backoff.next())

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
                delay = self._retries.failed(item)
                log.warning(
                    "garbage collector: %s of %s failed: %r; retrying in %.3gs",
                    action,
                    uid,
                    exc,
                    delay,
                )
                asyncio.get_running_loop().call_later(delay, self._enqueue, action, uid)
            else:
                self._retries.forget(item)

    def _store_of(self, node: Node) -> Store:
        """The store holding ``node``'s key (the longest storage prefix that does)."""
        holding = [s for s in self._stores() if node.key.startswith(s.resource.storage_prefix())]
        if not holding:
            raise LookupError(f"no store serves {node.key} (yet)")
        return max(holding, key=lambda s: len(s.resource.storage_prefix()))

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
        log.info("garbage collector: deleting %s (%s)", node.key, policy)
        try:
            await self._store_of(node).delete(
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
        await self._remove(node, "ownerReferences", lambda ref: ref.get("uid") in owner_uids)

    async def _drop_finalizer(self, node: Node, finalizer: str) -> None:
        await self._remove(node, "finalizers", lambda name: name == finalizer)

    async def _remove(self, node: Node, key: str, unwanted: Callable[[Any], bool]) -> None:
        """Take the ``unwanted`` entries out of the list ``metadata[key]`` of ``node``'s object.

        The object is read again and changed only while it is still the same
        object (its uid), without a resourceVersion precondition: another
        writer in between is not a reason to give up.
        """
        store = self._store_of(node)

        async def remove(obj: Object) -> Object:
            metadata = obj["metadata"]
            if metadata.get("uid") != node.uid:
                raise errors.not_found(store.resource.plural, store.resource.group, node.name)
            kept = [entry for entry in metadata.get(key) or () if not unwanted(entry)]
            if kept:
                metadata[key] = kept
            else:
                metadata.pop(key, None)
            metadata.pop("resourceVersion", None)
            return obj

        try:
            await store.update(node.namespace, node.name, remove)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise


_ACTIONS = {
    "dependent": GarbageCollector._collect_dependent,
    "orphan": GarbageCollector._orphan_dependents,
    "foreground": GarbageCollector._finish_foreground,
}
