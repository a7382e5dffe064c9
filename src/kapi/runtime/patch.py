"""JSON merge patch (RFC 7386) and strategic merge patch for built-in kinds.

Strategic merge patch differs from merge patch only for lists: a list whose
schema declares ``x-kubernetes-patch-strategy: merge`` is merged element by
element on its patch merge key (or as a set, for lists of scalars) instead
of being replaced.  The ``$patch``, ``$retainKeys``, ``$setElementOrder`` and
``$deleteFromPrimitiveList`` directives are handled for the cases kubectl
sends; the complete directive set comes with server-side apply.
"""

from __future__ import annotations

from typing import Any

from kapi.runtime.schema import List, Map, Schema, Struct


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(target: Any, patch: Any, schema: Schema | None) -> Any:
    if not isinstance(patch, dict):
        return patch
    if patch.get("$patch") == "replace":
        return {k: v for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            if isinstance(result.get(name), list) and isinstance(value, list):
                result[name] = [item for item in result[name] if item not in value]
            continue
        child = _child_schema(schema, key)
        if value is None:
            result.pop(key, None)
        elif isinstance(child, List) and child.patch_strategy and "merge" in child.patch_strategy:
            result[key] = _merge_list(result.get(key), value, child)
        else:
            result[key] = strategic_merge_patch(result.get(key), value, child)
    if "$retainKeys" in patch:
        keep = set(patch["$retainKeys"])
        result = {k: v for k, v in result.items() if k in keep}
    return result


def _child_schema(schema: Schema | None, key: str) -> Schema | None:
    if isinstance(schema, Struct):
        field = schema.by_name.get(key)
        return field.schema if field else None
    if isinstance(schema, Map):
        return schema.values
    return None


def _merge_list(current: Any, patch: list[Any], schema: List) -> list[Any]:
    items = list(current) if isinstance(current, list) else []
    key = schema.patch_merge_key
    if key is None:
        return items + [v for v in patch if v not in items]
    for element in patch:
        if not isinstance(element, dict):
            continue
        index = next(
            (
                i
                for i, item in enumerate(items)
                if isinstance(item, dict) and item.get(key) == element.get(key)
            ),
            None,
        )
        if element.get("$patch") == "delete":
            if index is not None:
                del items[index]
        elif index is None:
            items.append({k: v for k, v in element.items() if k != "$patch"})
        else:
            items[index] = strategic_merge_patch(items[index], element, schema.items)
    return items
