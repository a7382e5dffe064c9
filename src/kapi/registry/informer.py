"""In-memory copies of resources, kept current by list and watch.

The counterpart of client-go's reflector, shared informer and lister:
admission reads namespaces (and webhook configurations) on every request,
and upstream reads them from informer caches rather than storage.  Several
servers may share one storage, so a cache (and every controller) must follow
storage's watch, never this process's own writes.

:func:`reflect` is the loop: list, hand the whole set over, then apply each
watch event; when the watch cannot go on (its revision was compacted: 410
Expired) or storage is unavailable, list again and watch from there, with a
bounded backoff between failed attempts.  The previous set stays in place
until a new list has succeeded, so a cache is stale for the length of an
outage but never empty because of one.

The copy is eventually consistent, as upstream's.  Readers that must not act
on a miss (an object created a moment ago, possibly through another server)
look it up in storage then, as upstream's NamespaceLifecycle does.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Generic, Protocol, TypeVar

from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.registry.predicate import EVERYTHING
from kapi.registry.store import Store, WatchEvent
from kapi.storage.interface import ExpiredError

log = logging.getLogger(__name__)

T = TypeVar("T")


class Backoff:
    """Delays between the attempts of a loop that keeps failing.

    The first retry is immediate (a compacted watch only needs a new list),
    then the delay doubles from ``initial`` up to ``cap`` seconds, so an
    unreachable storage is polled a few times a second at first and every
    ``cap`` seconds after that.  :meth:`reset` after a success.
    """

    def __init__(self, initial: float = 0.1, cap: float = 5.0) -> None:
        self.initial = initial
        self.cap = cap
        self._next = 0.0

    def next(self) -> float:
        delay = self._next
        self._next = min(max(delay * 2, self.initial), self.cap)
        return delay

    def reset(self) -> None:
        self._next = 0.0


class ItemBackoff(Generic[T]):
    """Per-item delays for a work queue's retries, as client-go's default controller
    rate limiter sets them: ``initial`` doubled for each failure in a row of the
    same item, up to ``cap``, and forgotten once the item succeeds."""

    def __init__(self, initial: float = 0.005, cap: float = 1000.0) -> None:
        self.initial = initial
        self.cap = cap
        self._failures: dict[T, int] = {}

    def failed(self, item: T) -> float:
        """How long ``item`` waits before it is tried again, after one more failure."""
        failures = self._failures.get(item, 0)
        self._failures[item] = failures + 1
        # Past 2**64 the float would overflow: the cap is long reached by then.
        return min(self.initial * 2 ** min(failures, 64), self.cap)

    def forget(self, item: T) -> None:
        """``item`` succeeded (or is gone): its next failure starts from ``initial``."""
        self._failures.pop(item, None)


class Reflection(Protocol):
    """What :func:`reflect` feeds: the whole set after each list, then each change."""

    async def replace(self, objects: list[Object]) -> None: ...

    async def apply(self, event: WatchEvent) -> None: ...


async def reflect(store: Store, target: Reflection, *, backoff: Backoff | None = None) -> None:
    """Follow every object of ``store`` into ``target`` until cancelled.

    ``target.replace`` gets the listed objects, then ``target.apply`` every
    ADDED, MODIFIED and DELETED event after the list's revision.  Whatever
    interrupts that (410 Expired from the watch, storage unavailable, an
    error of the target's own) starts over from a new list after
    ``backoff``'s next delay; a list and a watch that delivered events, or
    an attempt that lasted ``backoff.cap`` seconds, resets it.
    """
    backoff = backoff or Backoff()
    what = store.resource.plural
    while True:
        started = time.monotonic()
        try:
            listed = await store.list(None, EVERYTHING)
            await target.replace(listed.items)
            events = await store.watch(
                None, EVERYTHING, resource_version=str(listed.resource_version)
            )
            async for event in events:
                if event.type == "ERROR":  # a Status: 410 when the watch's revision is compacted
                    log.info("watch of %s failed: %s", what, event.object.get("message"))
                    break
                backoff.reset()
                if event.type != "BOOKMARK":
                    await target.apply(event)
            log.info("watch of %s ended; listing again", what)
        except asyncio.CancelledError:
            raise
        except ExpiredError as exc:
            log.info("watch of %s expired (%s); listing again", what, exc)
        except errors.StatusError as exc:
            if exc.code == 410:
                log.info("watch of %s expired (%s); listing again", what, exc)
            else:
                log.warning("following %s failed: %s; retrying", what, exc)
        except Exception as exc:
            log.warning("following %s failed: %r; retrying", what, exc)
        if time.monotonic() - started >= backoff.cap:
            backoff.reset()
        await asyncio.sleep(backoff.next())


class Informer:
    """The current objects of one resource, by ``namespace/name`` (``name`` when cluster-scoped).

    ``on_change`` is called with every object after each change (once per
    list), for owners that derive something from the whole set (compiled
    webhooks).
    """

    def __init__(self, on_change: Callable[[Mapping[str, Object]], None] | None = None) -> None:
        self._objects: dict[str, Object] = {}
        self._on_change = on_change
        #: Whether a first list has arrived: until then an empty cache says nothing.
        self.synced = False

    @property
    def objects(self) -> Mapping[str, Object]:
        """The cached objects, by ``namespace/name`` (``name`` when cluster-scoped)."""
        return self._objects

    def get(self, namespace: str | None, name: str) -> Object | None:
        """The cached object, or ``None`` when the cache does not (yet) hold it."""
        return self._objects.get(f"{namespace}/{name}" if namespace else name)

    async def run(self, store: Store) -> None:
        """Follow ``store`` until cancelled (see :func:`reflect`)."""
        await reflect(store, self)

    async def replace(self, objects: list[Object]) -> None:
        self._objects = {_key(obj): obj for obj in objects}
        self.synced = True
        self._changed()

    async def apply(self, event: WatchEvent) -> None:
        key = _key(event.object)
        if event.type == "DELETED":
            self._objects.pop(key, None)
        else:
            self._objects[key] = event.object
        self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self._objects)


def _key(obj: Object) -> str:
    metadata = obj["metadata"]
    namespace, name = metadata.get("namespace"), metadata["name"]
    return f"{namespace}/{name}" if namespace else name
