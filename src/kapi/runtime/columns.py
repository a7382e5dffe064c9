"""A table column of a resource, for ``meta.k8s.io/v1`` ``Table`` responses.

Defined beside the :class:`~kapi.runtime.scheme.Resource` that carries its
columns; the common cells and default columns are in :mod:`kapi.registry.tables`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kapi.apimachinery.unstructured import Object


@dataclass(frozen=True)
class Column:
    """One ``TableColumnDefinition`` and how to compute its cell."""

    name: str
    type: str
    description: str
    cell: Callable[[Object], Any]
    format: str = ""
    #: 0 for the default view, 1 for ``-o wide``.
    priority: int = 0
