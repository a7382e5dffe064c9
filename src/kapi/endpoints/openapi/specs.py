"""What the OpenAPI service builds: one document per group version, and their index.

The v3 service builds these and the v2 document is derived from them; both
import the shapes from here, so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from kapi.apimachinery.unstructured import Object
from kapi.endpoints.openapi.routes import Route


@dataclass(frozen=True)
class GroupVersionSpec:
    """One group version's OAS 3.0 document, its routes and its encoding."""

    document: Object
    routes: tuple[Route, ...]
    #: Definitions made from CRD schemas (converted by upstream's CRD rules for v2).
    custom_definitions: frozenset[str]
    body: bytes
    etag: str
    last_modified: float


@dataclass(frozen=True)
class Specs:
    """Every group version's document and the ``/openapi/v3`` index of them."""

    by_path: dict[str, GroupVersionSpec]
    index: bytes
