"""The storage interface: a revisioned key-value store with watch.

Everything above this module (registry, controllers) talks to storage only
through :class:`Storage`.  The embedded SQLite store (:mod:`kapi.storage.sqlite`)
is the only backend today; the contract is etcd v3's, so that an etcd backend
(for the coming work on several servers sharing one store) can implement it
without changes above this layer:

* one global, strictly increasing revision, bumped by every write; an object's
  ``resourceVersion`` is the revision of its last write (``mod_revision``);
* writes are compare-and-swap on ``mod_revision``;
* a watch from revision ``R`` delivers every event with revision ``> R``,
  exactly once and in revision order;
* compaction at a revision drops the history before it (the state at that
  revision stays readable, as etcd keeps it); reading or watching from
  before it raises :class:`ExpiredError` (HTTP 410 Gone above this layer).
  Periodic compaction goes through :meth:`Storage.compact_round`, which a
  shared backend coordinates so that servers sharing it compact once per
  interval between them;
* a write may attach a time to live (etcd's lease): the key is deleted that
  many seconds after the write, through the ordinary delete, so watchers see a
  DELETED event in revision order; the lease is part of the stored state and
  survives a restart.  Each write sets the key's lease afresh: a write without
  a TTL detaches any earlier one, as an etcd put without a lease does.

Values are opaque bytes: encoding objects is the registry's business.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KeyValue:
    """One key at one revision."""

    key: str
    value: bytes
    #: Revision of the write that created the key (etcd ``create_revision``).
    create_revision: int
    #: Revision of the last write to the key: the object's resourceVersion.
    mod_revision: int


@dataclass(frozen=True, slots=True)
class ListResult:
    kvs: list[KeyValue]
    #: The revision the list was read at (the list's resourceVersion).
    revision: int
    #: True when ``limit`` cut the result and more keys follow the last one.
    more: bool
    #: How many keys follow the last one returned, when ``more`` (else 0).
    remaining: int


class EventType(enum.Enum):
    CREATED = "CREATED"
    UPDATED = "UPDATED"
    DELETED = "DELETED"
    #: No change: the watch has seen everything up to ``revision``.
    PROGRESS = "PROGRESS"


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: EventType
    #: The revision of the write (for PROGRESS, the revision reached).
    revision: int
    #: The key after the write; for DELETED, the last value before it.
    #: ``None`` only for PROGRESS.
    kv: KeyValue | None = None
    #: The key before the write (UPDATED and DELETED), when known.
    prev_kv: KeyValue | None = None


class StorageError(Exception):
    """Base of the errors a backend raises; the registry maps them to Status."""

    def __init__(self, key: str, message: str = "") -> None:
        super().__init__(message or key)
        self.key = key


class KeyExistsError(StorageError):
    """Create of a key that exists."""


class KeyNotFoundError(StorageError):
    """Update or delete of a key that does not exist."""


class ConflictError(StorageError):
    """A compare-and-swap precondition failed: the key was written since."""

    def __init__(self, key: str, current: KeyValue | None) -> None:
        super().__init__(key, f"revision precondition failed for {key}")
        #: The key as it is now, so callers can retry without another read.
        self.current = current


class ExpiredError(StorageError):
    """The requested revision has been compacted away."""

    def __init__(self, requested: int, compacted: int) -> None:
        super().__init__("", f"revision {requested} is compacted (compacted revision {compacted})")
        self.requested = requested
        self.compacted = compacted


class FutureRevisionError(StorageError):
    """The requested revision is newer than the store's current revision."""

    def __init__(self, requested: int, current: int) -> None:
        super().__init__("", f"revision {requested} is newer than current revision {current}")
        self.requested = requested
        self.current = current


class StorageUnavailableError(StorageError):
    """The backend could not be reached or did not answer in time (etcd down, no quorum).

    The write may or may not have happened; above this layer it becomes upstream's
    ``ServerTimeout`` Status, which clients retry.
    """

    def __init__(self, message: str) -> None:
        super().__init__("", message)


@dataclass(slots=True)
class CompactionRound:
    """Where one server's periodic compaction stands; kept by the server between rounds.

    ``claimed`` counts the rounds every server sharing the storage has claimed
    (on etcd, the version of the ``compact_rev_key`` key, as kube-apiserver's
    compactor keeps it); ``revision`` is the revision seen at this server's
    last round, the one its next claimed round compacts to; ``compacted`` is
    the latest compaction revision known (0 before any).
    """

    claimed: int = 0
    revision: int = 0
    compacted: int = 0


class Watch(abc.ABC):
    """An open watch; iterate it for events and close it when done."""

    @abc.abstractmethod
    def __aiter__(self) -> AsyncIterator[WatchEvent]:
        """Events in revision order.  Iteration raises :class:`ExpiredError` when the
        watch cannot go on from where it was (its next revision has been compacted,
        e.g. after the backend was unreachable for a while)."""

    @abc.abstractmethod
    async def close(self) -> None: ...


class Storage(abc.ABC):
    """A revisioned key-value store with watch (see the module docstring)."""

    @abc.abstractmethod
    async def get(self, key: str) -> KeyValue | None:
        """The key's latest value, or ``None`` when it does not exist."""

    @abc.abstractmethod
    async def list(
        self,
        prefix: str,
        *,
        revision: int = 0,
        start_key: str | None = None,
        limit: int = 0,
    ) -> ListResult:
        """Keys under ``prefix`` as of ``revision`` (0: latest), in key order.

        ``start_key`` (inclusive) resumes a paginated list; ``limit`` > 0 caps
        the number of keys returned.  Raises :class:`ExpiredError` when
        ``revision`` is compacted and :class:`FutureRevisionError` when it is
        newer than the current revision.
        """

    @abc.abstractmethod
    async def create(self, key: str, value: bytes, *, ttl: int = 0) -> KeyValue:
        """Create ``key``; raises :class:`KeyExistsError` if it exists.

        ``ttl`` > 0 deletes the key that many seconds later unless another
        write sets a new lease first (upstream's ``Create(..., ttl)``); 0 means
        the key never expires.
        """

    @abc.abstractmethod
    async def update(
        self, key: str, value: bytes, expected_revision: int, *, ttl: int = 0
    ) -> KeyValue:
        """Replace ``key`` if its ``mod_revision`` is ``expected_revision``.

        ``ttl`` is as for :meth:`create` and replaces the key's lease: the key
        expires ``ttl`` seconds after this write, or never with 0 (an earlier
        lease is detached).  Raises :class:`KeyNotFoundError` when the key does
        not exist and :class:`ConflictError` (carrying the current value) when
        it was written since.
        """

    @abc.abstractmethod
    async def delete(self, key: str, expected_revision: int | None = None) -> tuple[KeyValue, int]:
        """Delete ``key``, optionally only if its ``mod_revision`` matches.

        Returns the last value before the delete and the delete's revision;
        the key's lease, if any, goes with it.  Raises
        :class:`KeyNotFoundError` or :class:`ConflictError`.
        """

    @abc.abstractmethod
    async def watch(
        self, prefix: str, revision: int, *, progress_interval: float | None = None
    ) -> Watch:
        """Watch keys under ``prefix`` for writes with revision ``> revision``.

        ``revision`` 0 means "from now".  With ``progress_interval``, the watch
        yields a PROGRESS event when that many seconds pass without another
        event, carrying a revision that every earlier event is at or below.
        Raises :class:`ExpiredError` when ``revision`` is compacted.
        """

    @abc.abstractmethod
    async def current_revision(self) -> int:
        """The revision of the latest write (0 for an empty store)."""

    @abc.abstractmethod
    async def compact(self, revision: int) -> None:
        """Drop history before ``revision``: the state at ``revision`` and the latest
        values stay readable, older revisions raise :class:`ExpiredError`."""

    async def compact_round(self, state: CompactionRound) -> None:
        """One round of periodic compaction, run once per interval with the same ``state``.

        A round compacts to the revision seen one round earlier, then notes the
        current revision for the next one; the first round only notes it.
        ``state`` is updated as the round goes, so a compaction that fails
        still counts as this round's (the next one compacts to a later
        revision).  This default suits a store only one server uses; a shared
        backend claims each round for one server only (see the etcd backend).
        """
        await self._compact_claimed(state, await self.current_revision())

    async def _compact_claimed(self, state: CompactionRound, current: int) -> None:
        """The rest of a round this server claimed, ``current`` being the revision now:
        compact to the revision noted a round earlier, and note ``current`` instead."""
        revision = state.revision
        state.claimed += 1
        state.revision = current
        if revision:  # the first round only notes where history stands
            await self.compact(revision)
            state.compacted = revision

    @abc.abstractmethod
    async def close(self) -> None:
        """Flush and release the backend; open watches end and leases stop expiring
        until the store is opened again."""
