"""The finalizers a DELETE leaves for the garbage collector (upstream's decision table)."""

from __future__ import annotations

import pytest

from kapi.registry.deletion import UNSPECIFIED, Propagation, deletion_finalizers
from kapi.runtime.strategy import GarbageCollectionPolicy

DELETE = GarbageCollectionPolicy.DELETE_DEPENDENTS
ORPHAN = GarbageCollectionPolicy.ORPHAN_DEPENDENTS
UNSUPPORTED = GarbageCollectionPolicy.UNSUPPORTED


@pytest.mark.parametrize(
    ("finalizers", "propagation", "default", "expected"),
    [
        # Nothing asked, a kind that deletes dependents: no finalizer, the object goes now.
        ([], UNSPECIFIED, DELETE, None),
        # A kind that orphans by default (batch/v1 Jobs, v1 ReplicationControllers).
        ([], UNSPECIFIED, ORPHAN, ["orphan"]),
        ([], Propagation("Background"), ORPHAN, None),
        ([], Propagation("Orphan"), DELETE, ["orphan"]),
        ([], Propagation("Foreground"), DELETE, ["foregroundDeletion"]),
        # The deprecated option wins over the policy, and never asks for the foreground.
        ([], Propagation("Foreground", orphan_dependents=True), DELETE, ["orphan"]),
        ([], Propagation("Foreground", orphan_dependents=False), DELETE, None),
        # A second delete switches a waiting object's policy, keeping other finalizers.
        (
            ["example.com/hold", "orphan"],
            Propagation("Foreground"),
            DELETE,
            ["example.com/hold", "foregroundDeletion"],
        ),
        (["foregroundDeletion"], Propagation("Orphan"), DELETE, ["orphan"]),
        (["orphan"], Propagation("Background"), ORPHAN, []),
        # With no option, a finalizer already there decides over the kind's default.
        (["foregroundDeletion"], UNSPECIFIED, ORPHAN, None),
        (["orphan"], UNSPECIFIED, DELETE, None),
        # Kinds outside garbage collection (Events) never get one.
        ([], Propagation("Orphan"), UNSUPPORTED, None),
        (["orphan"], Propagation("Foreground"), UNSUPPORTED, []),
    ],
)
def test_deletion_finalizers(
    finalizers: list[str],
    propagation: Propagation,
    default: GarbageCollectionPolicy,
    expected: list[str] | None,
) -> None:
    assert deletion_finalizers(finalizers, propagation, default) == expected
