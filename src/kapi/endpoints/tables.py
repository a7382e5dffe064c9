"""``meta.k8s.io`` ``Table`` responses from a resource's declared columns."""

from __future__ import annotations

from kapi.apimachinery.unstructured import Object
from kapi.endpoints.negotiation import Output
from kapi.registry.tables import DEFAULT_COLUMNS, Column
from kapi.runtime.cooperative import CHUNK, pause


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
        "rows": table_rows(columns, items),
    }


async def table_for_many(
    columns: tuple[Column, ...], items: list[Object], output: Output, rv: str
) -> Object:
    """:func:`table_for` of a list, its rows made a chunk at a time (see ``cooperative``)."""
    table = table_for(columns, items[:CHUNK], output, rv)
    rows = table["rows"]
    for start in range(CHUNK, len(items), CHUNK):
        await pause()
        rows += table_rows(columns, items[start : start + CHUNK])
    return table


def table_rows(columns: tuple[Column, ...], items: list[Object]) -> list[Object]:
    columns = columns or DEFAULT_COLUMNS
    return [
        {
            "cells": [c.cell(item) for c in columns],
            "object": {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": item.get("metadata", {}),
            },
        }
        for item in items
    ]
