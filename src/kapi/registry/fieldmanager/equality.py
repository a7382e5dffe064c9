"""A write that changes nothing but managedFields timestamps is no write at all.

Upstream's ``IgnoreManagedFieldsTimestampsTransformer`` runs in the store after
the strategy prepared the object: when the new object equals the stored one
except for the ``time`` of its managedFields entries, the stored times are
kept, so the store sees an unchanged object and neither its resourceVersion
nor its timestamps move.
"""

from __future__ import annotations

from kapi.apimachinery.unstructured import Object


def keep_unchanged_timestamps(new: Object, old: Object) -> None:
    """Give ``new`` the stored entry times when only those times differ from ``old``."""
    new_meta, old_meta = new.get("metadata"), old.get("metadata")
    if not isinstance(new_meta, dict) or not isinstance(old_meta, dict):
        return
    entries, stored = new_meta.get("managedFields"), old_meta.get("managedFields")
    if not entries or entries is stored or entries == stored:
        return
    if not isinstance(stored, list) or len(entries) != len(stored):
        return
    for entry, before in zip(entries, stored, strict=True):
        if entry != before and {**entry, "time": None} != {**before, "time": None}:
            return  # more than a time changed
    new_meta["managedFields"] = stored
    if new != old:
        new_meta["managedFields"] = entries
