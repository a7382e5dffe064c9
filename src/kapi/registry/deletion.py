"""What a DELETE asks of the garbage collector: the finalizers that hold the object.

A delete's ``propagationPolicy`` (or the deprecated ``orphanDependents``)
decides what happens to the object's dependents, the objects whose
``ownerReferences`` name it:

- ``Background``: the object goes now; the collector deletes the dependents after.
- ``Foreground``: the object stays, marked with the ``foregroundDeletion``
  finalizer, until the collector has deleted the dependents that block it.
- ``Orphan``: the object stays, marked with ``orphan``, until the collector
  has removed it from its dependents' owner references.

With neither option, a finalizer the object already carries decides, then
the kind's default (``Strategy.default_garbage_collection_policy``): a few
kinds orphan by default in the versions that did before the collector existed.
This is upstream's ``deletionFinalizersForGarbageCollection``; with the
collector disabled (``--enable-garbage-collector=false``) no finalizer is added.
"""

from __future__ import annotations

from dataclasses import dataclass

from kapi.apimachinery.validation import FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS
from kapi.runtime.strategy import GarbageCollectionPolicy

ORPHAN = FINALIZER_ORPHAN_DEPENDENTS
FOREGROUND = FINALIZER_DELETE_DEPENDENTS


@dataclass(frozen=True)
class Propagation:
    """The two options of a ``DeleteOptions`` that choose the policy (``None``: not given)."""

    policy: str | None = None
    orphan_dependents: bool | None = None

    @property
    def explicit(self) -> bool:
        return self.policy is not None or self.orphan_dependents is not None


#: A delete that names no propagation: the object's finalizers, then its kind, decide.
UNSPECIFIED = Propagation()


def _should_orphan(
    finalizers: list[str], propagation: Propagation, default: GarbageCollectionPolicy
) -> bool:
    if default is GarbageCollectionPolicy.UNSUPPORTED:
        return False
    if propagation.orphan_dependents is not None:
        return propagation.orphan_dependents
    if propagation.policy is not None:
        return propagation.policy == "Orphan"
    for finalizer in finalizers:
        if finalizer in (ORPHAN, FOREGROUND):
            return finalizer == ORPHAN
    return default is GarbageCollectionPolicy.ORPHAN_DEPENDENTS


def _should_delete_dependents(
    finalizers: list[str], propagation: Propagation, default: GarbageCollectionPolicy
) -> bool:
    if default is GarbageCollectionPolicy.UNSUPPORTED or propagation.orphan_dependents is not None:
        return False
    if propagation.policy is not None:
        return propagation.policy == "Foreground"
    for finalizer in finalizers:
        if finalizer in (ORPHAN, FOREGROUND):
            return finalizer == FOREGROUND
    return False


def deletion_finalizers(
    finalizers: list[str], propagation: Propagation, default: GarbageCollectionPolicy
) -> list[str] | None:
    """The object's finalizers as this delete leaves them; ``None`` when they do not change.

    Both collector finalizers are taken out, then the one the delete asks
    for is appended, so a second delete may switch an object from orphaning
    to foreground deletion (or back) while it waits.
    """
    kept = [f for f in finalizers if f not in (ORPHAN, FOREGROUND)]
    if _should_orphan(finalizers, propagation, default):
        kept.append(ORPHAN)
    if _should_delete_dependents(finalizers, propagation, default):
        kept.append(FOREGROUND)
    return None if set(kept) == set(finalizers) else kept
