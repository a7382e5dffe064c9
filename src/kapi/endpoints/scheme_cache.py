"""A value derived from the scheme, rebuilt whenever the served resources change.

Discovery and OpenAPI documents are costly to build and change only when a
CRD is installed, updated or removed.  Installing a CRD replaces its
:class:`~kapi.runtime.scheme.Resource` with a new object, so comparing the
scheme's resources by identity tells whether a cached value is stale.  The
cache keeps the resources it was built from alive, so an identity can never
be reused by a later object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from kapi.runtime.scheme import Resource, Scheme

T = TypeVar("T")


class SchemeCache(Generic[T]):
    def __init__(self, scheme: Scheme, build: Callable[[], T]) -> None:
        self.scheme = scheme
        self._build = build
        self._resources: tuple[Resource, ...] | None = None
        self._value: T | None = None

    def get(self) -> T:
        resources = tuple(self.scheme.resources())
        cached = self._resources
        if (
            cached is None
            or len(cached) != len(resources)
            or any(a is not b for a, b in zip(cached, resources, strict=True))
        ):
            self._value = self._build()
            self._resources = resources
        assert self._value is not None
        return self._value
