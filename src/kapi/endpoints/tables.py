"""``meta.k8s.io`` ``Table`` responses from a resource's declared columns."""

from __future__ import annotations

from kapi.apimachinery.unstructured import Object
from kapi.endpoints.negotiation import Output
from kapi.registry.tables import DEFAULT_COLUMNS, Column


def table_for(columns: tuple[Column, ...], items: list[Object], output: Output, rv: str) -> Object:
    """A Table of ``items`` (already in the requested version) with metadata objects."""
    columns = columns or DEFAULT_COLUMNS
    return {
        "kind": "Table",
        "apiVersion": output.as_version,
        "metadata": {"resourceVersion": rv},
        "columnDefinitions": [
            {
                "name": c.name,
                "type": c.type,
                "format": c.format,
                "description": c.description,
                "priority": c.priority,
            }
            for c in columns
        ],
        "rows": [
            {
                "cells": [c.cell(item) for c in columns],
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": item.get("metadata", {}),
                },
            }
            for item in items
        ],
    }
