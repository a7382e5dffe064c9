"""Long list work done in chunks (``kapi.runtime.cooperative``) gives the same answers."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest

from kapi.endpoints import tables
from kapi.endpoints.negotiation import Output
from kapi.runtime import protobuf
from kapi.runtime.columns import Column
from kapi.runtime.cooperative import CHUNK, run_steps

Object = dict[str, Any]


def _config_maps(count: int) -> list[Object]:
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": f"cm-{i}",
                "namespace": "ns",
                "resourceVersion": str(i + 1),
                "labels": {"i": str(i)},
            },
            "data": {"k": "v" * (i % 5)},
        }
        for i in range(count)
    ]


def _run(steps: Generator[None, None, bytes]) -> tuple[bytes, int]:
    """The generator's result and how many times it paused."""
    pauses = 0
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value, pauses
        pauses += 1


@pytest.mark.parametrize("count", [0, 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7])
def test_protobuf_encode_steps_writes_the_bytes_encode_writes(count: int) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMapList",
        "metadata": {"resourceVersion": "9", "continue": "abc", "remainingItemCount": 3},
        "items": _config_maps(count),
    }
    written, pauses = _run(protobuf.encode_steps(body))
    assert written == protobuf.encode(body)
    assert pauses == max(0, (count - 1) // CHUNK)


def test_protobuf_encode_steps_of_one_object() -> None:
    obj = _config_maps(1)[0]
    assert _run(protobuf.encode_steps(obj)) == (protobuf.encode(obj), 0)
    with pytest.raises(ValueError, match="no protobuf form"):
        _run(protobuf.encode_steps({"apiVersion": "x/v1", "kind": "Nothing"}))


def test_run_steps_lets_other_tasks_run_between_chunks() -> None:
    order: list[str] = []

    def steps() -> Generator[None, None, str]:
        for i in range(3):
            order.append(f"chunk {i}")
            if i < 2:
                yield
        return "done"

    async def other() -> None:
        order.append("other")

    async def main() -> str:
        task = asyncio.ensure_future(other())
        result = await run_steps(steps())
        await task
        return result

    assert asyncio.run(main()) == "done"
    assert order == ["chunk 0", "other", "chunk 1", "chunk 2"]


def test_table_for_many_is_table_for() -> None:
    items = _config_maps(2 * CHUNK + 3)
    columns = (Column("Name", "string", "the name", lambda o: o["metadata"]["name"], "name"),)
    output = Output("application/json", "Table", "meta.k8s.io/v1")
    many = asyncio.run(tables.table_for_many(columns, items, output, "7"))
    assert many == tables.table_for(columns, items, output, "7")
    assert [row["cells"] for row in many["rows"]] == [[o["metadata"]["name"]] for o in items]
