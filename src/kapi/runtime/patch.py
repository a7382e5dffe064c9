"""JSON merge patch (RFC 7386) and strategic merge patch for built-in kinds.

Strategic merge patch follows upstream's ``k8s.io/apimachinery/pkg/util/
strategicpatch`` as kube-apiserver applies it (``StrategicMergeMapPatch``:
parallel lists are merged, nulls that match nothing are dropped).  The kind's
schema stands in for the Go struct tags: a :class:`~kapi.runtime.schema.List`
carries ``patchStrategy`` and ``patchMergeKey``, a :class:`~kapi.runtime.schema.Field`
the strategy of a non-list field (``replace``).

The directives are upstream's: ``$patch`` (``replace`` / ``delete`` in maps,
also ``merge`` in list elements, which upstream rejects), ``$retainKeys``,
``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>``, with
its ordering rules: items named by ``$setElementOrder`` (or else by the
patch list) come in that order, server-only items keep their live order and
are interleaved where the live list had them.

Upstream's quirks are kept because clients see them: ``$patch: delete`` on an
existing map leaves ``{}``, items added to a merging list keep any nested
directives and nulls, and an unknown directive is a bare error.  Errors are
:class:`StrategicMergePatchError` with upstream's messages (Go's ``%v`` of
the decoded values); the subclasses mark the ones kube-apiserver answers with
400 and 422 instead of 500 (``interpretStrategicMergePatchError``).
"""

from __future__ import annotations

from typing import Any

from kapi.apimachinery.gotext import go_json_kind, go_quote, go_sprint, go_type
from kapi.runtime.objects import deep_copy
from kapi.runtime.schema import List, Map, Schema, Struct

_DIRECTIVE = "$patch"
_DELETE = "delete"
_REPLACE = "replace"
_MERGE = "merge"
_RETAIN_KEYS_STRATEGY = "retainKeys"
_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
_SET_ELEMENT_ORDER = "$setElementOrder"

#: mergepatch's sentinel errors, as their messages.
_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"
_NO_LIST_OF_LISTS = "lists of lists are not supported"


class StrategicMergePatchError(Exception):
    """A patch that cannot be applied; kube-apiserver answers a bare 500 with the message."""


class BadPatchFormatError(StrategicMergePatchError):
    """A malformed patch document or directive: upstream answers 400 BadRequest."""


class UnprocessablePatchError(StrategicMergePatchError):
    """``ErrNoListOfLists``: upstream answers 422 with a generic message."""


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


def strategic_merge_patch(target: dict[str, Any], patch: Any, schema: Struct) -> dict[str, Any]:
    """``patch`` applied to a copy of ``target``; neither argument is changed.

    The patch decodes into a Go ``map[string]interface{}`` upstream: ``null`` is
    an empty patch and any other non-object is the decoder's 400.
    """
    if patch is None:
        return deep_copy(target)
    if not isinstance(patch, dict):
        raise BadPatchFormatError(
            f"json: cannot unmarshal {go_json_kind(patch)} into Go value of type "
            "map[string]interface {}"
        )
    return _merge_map(deep_copy(target), deep_copy(patch), schema)


# --- maps -----------------------------------------------------------------------------------


def _merge_map(
    original: dict[str, Any], patch: dict[str, Any], schema: Schema | None
) -> dict[str, Any]:
    """``mergeMap``: ``original`` and ``patch`` are both consumed."""
    if _DIRECTIVE in patch:
        return _map_directive(patch)
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, schema)
    for key, value in patch.items():
        delete_list = key.startswith(_DELETE_FROM_PRIMITIVE_LIST)
        if delete_list:
            key = _directive_field(key, _DELETE_FROM_PRIMITIVE_LIST, _BAD_PRIMITIVE_LIST)
        if value is None:
            original.pop(key, None)
            continue
        if key not in original or type(original[key]) is not type(value):
            if not delete_list:
                _discard_nulls(value)
                _set_without_directives(original, key, value)
            continue
        if isinstance(value, dict):
            child, strategy, _ = _lookup(schema, key)
            if strategy != _REPLACE:
                value = _merge_map(original[key], value, child)
            original[key] = value
        elif isinstance(value, list):
            child, strategy, merge_key = _lookup_slice(schema, key)
            if strategy == _MERGE or delete_list:
                value = _merge_list(original[key], value, child, merge_key, delete_list)
            original[key] = value
        else:
            original[key] = value
    return original


def _map_directive(patch: dict[str, Any]) -> dict[str, Any]:
    """``$patch`` in a map: ``replace`` takes the rest as is, ``delete`` leaves ``{}``."""
    directive = patch[_DIRECTIVE]
    if directive == _REPLACE:
        del patch[_DIRECTIVE]
        return patch
    if directive == _DELETE:
        return {}
    raise _bad_patch_type(directive, patch)


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """``$retainKeys``: drop the live keys it does not list; the patch may set no other key."""
    if _RETAIN_KEYS not in patch:
        return
    retain = patch.pop(_RETAIN_KEYS)
    if not isinstance(retain, list):
        raise BadPatchFormatError(_BAD_RETAIN_KEYS)
    for key, value in patch.items():
        if value is None or key.startswith((_DELETE_FROM_PRIMITIVE_LIST, _SET_ELEMENT_ORDER)):
            continue
        if not _contains(retain, key):
            raise BadPatchFormatError(_BAD_RETAIN_KEYS)
    for key in [k for k in original if not _contains(retain, k)]:
        del original[key]


def _merge_ordered_lists(
    original: dict[str, Any], patch: dict[str, Any], schema: Schema | None
) -> None:
    """``mergePatchIntoOriginal``: merge each list named by a ``$setElementOrder``, in order.

    Both the directive and its list leave ``patch``, so the main loop skips them.
    """
    for directive in [k for k in patch if k.startswith(_SET_ELEMENT_ORDER)]:
        order = patch.pop(directive)
        if not isinstance(order, list):
            raise StrategicMergePatchError(_bad_arg_type([], order))
        key = _directive_field(directive, _SET_ELEMENT_ORDER, _BAD_SET_ELEMENT_ORDER)
        in_original, in_patch = key in original, key in patch
        live, patch_list = original.get(key), patch.get(key)
        for value, present in ((live, in_original), (patch_list, in_patch)):
            if present and not isinstance(value, list):
                raise StrategicMergePatchError(_bad_arg_type([], value))
        live, patch_list = live or [], patch_list or []
        child, strategy, merge_key = _lookup_slice(schema, key)
        _validate_element_order(patch_list, order, merge_key)
        if in_original and in_patch:
            merged = patch_list
            if strategy == _MERGE:
                merged, live = _merge_slice(live, patch_list, child, merge_key, False)
        elif in_original:
            merged = live
        elif in_patch:
            merged = _remove_directives(patch_list)[0]
        else:
            continue
        patch_items, server_only = _partition(merged, order, merge_key)
        maps = _element_is_map(live, patch_list)
        original[key] = _normalize_order(patch_items, server_only, order, live, merge_key, maps)
        patch.pop(key, None)


def _validate_element_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """``validatePatchWithSetOrderList``: the patch's items must follow the given order."""
    if not order or not patch_list:
        return
    items = patch_list
    if merge_key:
        for item in patch_list:
            if not isinstance(item, dict):
                raise StrategicMergePatchError(_bad_arg_type({}, item))
        items = [item for item in patch_list if item.get(_DIRECTIVE) != _DELETE]
    at_patch = at_order = 0
    while at_patch < len(items) and at_order < len(order):
        if isinstance(items[at_patch], dict) and _DIRECTIVE in items[at_patch]:
            at_patch += 1
            continue
        if _merge_key_equal(items[at_patch], order[at_order], merge_key):
            at_patch += 1
        at_order += 1
    if at_patch < len(items):
        raise StrategicMergePatchError(
            f"The order in patch list:\n{go_sprint(patch_list)}\n doesn't match "
            f"{_SET_ELEMENT_ORDER} list:\n{go_sprint(order)}\n"
        )


def _merge_key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _same(left, right)
    for item in (left, right):
        if not isinstance(item, dict):
            raise StrategicMergePatchError(_bad_arg_type({}, item))
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
    return _same(left[merge_key], right[merge_key])


# --- lists ----------------------------------------------------------------------------------


def _merge_list(
    original: list[Any],
    patch: list[Any],
    schema: Schema | None,
    merge_key: str,
    delete_list: bool,
) -> list[Any]:
    """``mergeSlice``: a set union of scalars, or maps merged on their merge key."""
    return _merge_slice(original, patch, schema, merge_key, delete_list)[0]


def _merge_slice(
    original: list[Any],
    patch: list[Any],
    schema: Schema | None,
    merge_key: str,
    delete_list: bool,
) -> tuple[list[Any], list[Any]]:
    """:func:`_merge_list`, and ``original`` as the caller's Go slice reads afterwards.

    Upstream deletes list items in place (``append(s[:i], s[i+1:]...)``) and
    appends new ones into the freed capacity, so the live list that
    ``$setElementOrder`` later interleaves by is the shifted one.  The live
    object is a deep copy (from the watch cache), whose slices have no spare
    capacity: appends past the original length do not show.
    """
    if not original and not patch:
        return original, original
    maps = _element_is_map(original, patch)
    if not maps:
        if delete_list:
            return [item for item in original if not _contains(patch, item)], original
        kept, seen = original, original
        merged = _deduplicate(original + patch)
    else:
        if not merge_key:
            raise StrategicMergePatchError("cannot merge lists without merge key for struct")
        kept, patch, seen, replaced = _list_directives(original, patch, merge_key)
        merged = _merge_by_key(kept, patch, merge_key, schema)
        if not replaced:  # the first appended items fill the capacity the deletions freed
            appended = merged[len(kept) :][: len(seen) - len(kept)]
            seen[len(kept) : len(kept) + len(appended)] = appended
    patch_items, server_only = _partition(merged, patch, merge_key)
    return _normalize_order(patch_items, server_only, patch, kept, merge_key, maps), seen


def _list_directives(
    original: list[Any], patch: list[Any], merge_key: str
) -> tuple[list[Any], list[Any], list[Any], bool]:
    """``mergeSliceWithSpecialElements``: apply the ``$patch`` items of a list of maps.

    ``delete`` drops every live item with that key; ``replace`` makes the other
    patch items the whole list.  Returns the live items to merge into, the
    plain patch items, the live list as its Go slice reads after the in-place
    deletions (see :func:`_merge_slice`), and whether the list was replaced.
    """
    rest: list[Any] = []
    seen = list(original)
    length = len(seen)
    replace = False
    for item in patch:
        if _DIRECTIVE not in item:
            rest.append(item)
            continue
        directive = item[_DIRECTIVE]
        if directive == _DELETE:
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            while (index := _find_by_key(seen[:length], merge_key, item[merge_key])) is not None:
                seen[index : length - 1] = seen[index + 1 : length]
                length -= 1
        elif directive == _REPLACE:
            replace = True
        elif directive == _MERGE:
            raise StrategicMergePatchError("merging lists cannot yet be specified in the patch")
        else:
            raise _bad_patch_type(directive, item)
    if replace:
        return rest, [], seen, True
    return seen[:length], rest, seen, False


def _merge_by_key(
    original: list[Any], patch: list[Any], merge_key: str, schema: Schema | None
) -> list[Any]:
    """``mergeSliceWithoutSpecialElements``: merge into the item with the same key, or append."""
    merged = list(original)
    for item in patch:
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        index = _find_by_key(merged, merge_key, item[merge_key])
        if index is None:
            merged.append(item)
        else:
            merged[index] = _merge_map(merged[index], item, schema)
    return merged


def _partition(
    merged: list[Any], present_in: list[Any], merge_key: str
) -> tuple[list[Any], list[Any]]:
    """Items of ``merged`` named by ``present_in`` (by merge key for maps), and the others."""
    named: list[Any] = []
    others: list[Any] = []
    for item in merged:
        if merge_key:
            if not isinstance(item, dict):
                raise StrategicMergePatchError(_bad_arg_type({}, item))
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
            found = _find_by_key(present_in, merge_key, item[merge_key]) is not None
        else:
            found = _contains(present_in, item)
        (named if found else others).append(item)
    return named, others


def _normalize_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
    maps: bool,
) -> list[Any]:
    """``normalizeElementOrder``: sort both parts, then interleave them by the live order.

    A server-only item goes before the next patch item only if the live list
    had it before that item; new items therefore lead the server-only ones.
    """
    patch_items = _sort_by(patch_items, patch_order, merge_key, maps)
    server_only = _sort_by(server_only, server_order, merge_key, maps)
    out: list[Any] = []
    left = right = 0
    while left < len(server_only) or right < len(patch_items):
        if left >= len(server_only):
            out.append(patch_items[right])
            right += 1
        elif right >= len(patch_items):
            out.append(server_only[left])
            left += 1
        else:
            at_left = _index(server_order, server_only[left], merge_key, maps)
            at_right = _index(server_order, patch_items[right], merge_key, maps)
            if 0 <= at_left < at_right:
                out.append(server_only[left])
                left += 1
            else:
                out.append(patch_items[right])
                right += 1
    return out


def _sort_by(items: list[Any], order: list[Any], merge_key: str, maps: bool) -> list[Any]:
    """``normalizeSliceOrder``: a stable sort by position in ``order``; deletions go last.

    Items missing from ``order`` (which the merge never passes; upstream's comparator
    is inconsistent for them) go after the others.
    """
    deletions: list[Any] = []
    if maps:
        for item in (*items, *order):
            if not isinstance(item, dict):
                raise StrategicMergePatchError(_bad_arg_type({}, item))
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
        deletions = [item for item in items if item.get(_DIRECTIVE) == _DELETE]
        items = [item for item in items if item.get(_DIRECTIVE) != _DELETE]

    def position(item: Any) -> int:
        index = _index(order, item, merge_key, maps)
        return index if index >= 0 else len(order)

    return sorted(items, key=position) + deletions


def _index(items: list[Any], value: Any, merge_key: str, maps: bool) -> int:
    """Where ``value`` is in ``items`` (by merge key for maps), or -1."""
    if maps:
        wanted = value.get(merge_key) if isinstance(value, dict) else None
        for i, item in enumerate(items):
            if _same(wanted, item.get(merge_key) if isinstance(item, dict) else None):
                return i
        return -1
    for i, item in enumerate(items):
        if _same(value, item):
            return i
    return -1


def _element_is_map(*lists: list[Any]) -> bool:
    """``sliceElementType``: whether the items (all of one type, not lists) are maps."""
    first: type | None = None
    for items in lists:
        for item in items:
            if first is None:
                first = type(item)
                if first is list:
                    raise UnprocessablePatchError(_NO_LIST_OF_LISTS)
            elif type(item) is not first:
                raise StrategicMergePatchError(
                    f"list element types are not identical: {go_sprint(list(lists))}"
                )
    if first is None:
        raise StrategicMergePatchError("no elements in any of the given slices")
    return first is dict


def _deduplicate(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if not _contains(out, item):
            out.append(item)
    return out


def _find_by_key(items: list[Any], merge_key: str, value: Any) -> int | None:
    """``findMapInSliceBasedOnKeyValue``: the first map whose merge key has ``value``."""
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise StrategicMergePatchError(f"value for key {i} is not a map")
        if _has_key_value(item, merge_key, value):
            return i
    return None


def _has_key_value(item: dict[str, Any], merge_key: str, value: Any) -> bool:
    return merge_key in item and _same(item[merge_key], value)


# --- values ---------------------------------------------------------------------------------


def _set_without_directives(original: dict[str, Any], key: str, value: Any) -> None:
    value, keep = _remove_directives(value)
    if keep:
        original[key] = value
    else:
        original.pop(key, None)


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """``removeDirectives``: drop maps carrying ``$patch``; whether ``value`` itself stays."""
    if isinstance(value, dict):
        if _DIRECTIVE in value:
            return None, False
        for key in list(value):
            child, keep = _remove_directives(value[key])
            if keep:
                value[key] = child
            else:
                del value[key]
        return value, True
    if isinstance(value, list):
        kept = (_remove_directives(item) for item in value)
        return [item for item, keep in kept if keep], True
    return value, True


def _discard_nulls(value: Any) -> None:
    """``discardNullValuesFromPatch``: a null that deletes nothing is not kept."""
    if isinstance(value, dict):
        for key in [k for k, v in value.items() if v is None]:
            del value[key]
        for child in value.values():
            _discard_nulls(child)
    elif isinstance(value, list):
        for child in value:
            _discard_nulls(child)


def _same(left: Any, right: Any) -> bool:
    """Go's ``==`` on decoded values: ``1``, ``1.0`` and ``true`` all differ."""
    return type(left) is type(right) and left == right


def _contains(items: list[Any], value: Any) -> bool:
    return any(_same(item, value) for item in items)


# --- patch metadata -------------------------------------------------------------------------


def _lookup(schema: Schema | None, key: str) -> tuple[Schema | None, str, str]:
    """``LookupPatchMetadataForStruct``: the field's schema, patch strategy and merge key.

    A free-form struct (kapi's stand-in for a Go type it does not declare) has
    no metadata: its lists are replaced and its maps merged.
    """
    if isinstance(schema, Map | List):
        kind = "map" if isinstance(schema, Map) else "slice"
        raise StrategicMergePatchError(
            f"merging an object in json but data type is not struct, instead is: {kind}"
        )
    if not isinstance(schema, Struct):
        return None, "", ""
    field = schema.by_name.get(key)
    if field is None:  # encoding/json falls back to a case-insensitive match
        folded = key.casefold()
        field = next((f for f in schema.fields if f.name.casefold() == folded), None)
    if field is None:
        if schema.preserve_unknown_fields:
            return None, "", ""
        raise StrategicMergePatchError(
            f"unable to find api field in struct {schema.type_name} for the json field "
            f"{go_quote(key)}"
        )
    strategies = field.patch_strategy
    merge_key = ""
    if isinstance(field.schema, List):
        strategies = strategies or field.schema.patch_strategy
        merge_key = field.schema.patch_merge_key or ""
    return field.schema, _strategy(strategies or ""), merge_key


def _lookup_slice(schema: Schema | None, key: str) -> tuple[Schema | None, str, str]:
    """``LookupPatchMetadataForSlice``: as :func:`_lookup`, with the list's item schema."""
    child, strategy, merge_key = _lookup(schema, key)
    if isinstance(child, List):
        return child.items, strategy, merge_key
    if child is None:
        return None, strategy, merge_key
    raise StrategicMergePatchError("expected slice or array type, but got: struct")


def _strategy(tag: str) -> str:
    """``extractRetainKeysPatchStrategy``: the strategy besides ``retainKeys``.

    Applying a patch needs no strategy for ``retainKeys``: the ``$retainKeys``
    directive a client computed from it carries the whole effect.
    """
    strategies = tag.split(",")
    if len(strategies) == 1:
        return "" if strategies[0] == _RETAIN_KEYS_STRATEGY else strategies[0]
    if len(strategies) == 2 and _RETAIN_KEYS_STRATEGY in strategies:
        return strategies[1] if strategies[0] == _RETAIN_KEYS_STRATEGY else strategies[0]
    raise StrategicMergePatchError(f"unexpected patch strategy: {go_sprint(strategies)}")


def _directive_field(key: str, prefix: str, error: str) -> str:
    """The field a ``<prefix>/<field>`` directive names (``extractKey``)."""
    head, slash, name = key.partition("/")
    if not slash or head != prefix:
        raise BadPatchFormatError(error)
    return name


# --- upstream's messages --------------------------------------------------------------------


def _bad_patch_type(directive: Any, patch: dict[str, Any]) -> StrategicMergePatchError:
    return StrategicMergePatchError(
        f"unknown patch type: {go_sprint(directive, 's')} in map: {go_sprint(patch)}"
    )


def _no_merge_key(item: dict[str, Any], merge_key: str) -> StrategicMergePatchError:
    return StrategicMergePatchError(
        f"map: {go_sprint(item)} does not contain declared merge key: {merge_key}"
    )


def _bad_arg_type(expected: Any, actual: Any) -> str:
    """``ErrBadArgType``: the Go types of the value wanted and the value found."""
    found = "%!s(<nil>)" if actual is None else go_type(actual)
    return f"expected a {go_type(expected)}, but received a {found}"
