"""Where a built-in group/version/resource stands in its lifecycle, looked up by its coordinates.

Metrics and audit events name an API by group, version and resource (the
plural); the lifecycle that says when it goes away and what replaces it is
declared per kind in :mod:`kapi.apis`.  Tools that report deprecated API use
from traffic (``kapi deprecations``) join the two here, from the same
declarations the server serves, so a report never disagrees with the warnings.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from kapi.apis import builtin_resources
from kapi.runtime.scheme import GroupVersionKind, Lifecycle


class VersionLifecycle(NamedTuple):
    """One version of a built-in kind and its lifecycle."""

    gvk: GroupVersionKind
    lifecycle: Lifecycle


@functools.cache
def _index() -> dict[tuple[str, str, str], VersionLifecycle]:
    """Every built-in version that declares a lifecycle, by (group, version, plural)."""
    return {
        (resource.group, version, resource.plural): VersionLifecycle(
            resource.gvk(version), rv.lifecycle
        )
        for resource in builtin_resources()
        for version, rv in resource.versions.items()
        if rv.lifecycle is not None
    }


def lifecycle_of(group: str, version: str, resource: str) -> VersionLifecycle | None:
    """The kind and lifecycle of ``group/version`` ``resource``, or None if kapi does not know it.

    ``resource`` is the plural, as metrics and audit ``objectRef``s carry it; a
    subresource shares its resource's lifecycle, so pass the resource alone.
    Custom resources and versions kapi does not model give None.
    """
    return _index().get((group, version, resource))
