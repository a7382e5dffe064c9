"""The ComponentStatus kapi computes: its storage as ``etcd-0``, healthy or not."""

from __future__ import annotations

import asyncio

from kapi.apis.core_v1_componentstatuses import COLUMNS, ComponentStatusReader


async def _fails() -> None:
    raise RuntimeError("storage did not answer within 2s")


async def _answers() -> None:
    return None


def _cells(reader: ComponentStatusReader) -> list[list[str]]:
    return [[c.cell(o) for c in COLUMNS] for o in asyncio.run(reader.read_all())]


def test_storage_that_answers_is_healthy() -> None:
    assert _cells(ComponentStatusReader(_answers)) == [["etcd-0", "Healthy", "ok", ""]]


def test_storage_that_fails_is_unhealthy_with_the_reason() -> None:
    [status] = asyncio.run(ComponentStatusReader(_fails).read_all())
    assert status["conditions"] == [
        {"type": "Healthy", "status": "False", "error": "storage did not answer within 2s"}
    ]
    assert _cells(ComponentStatusReader(_fails)) == [
        ["etcd-0", "Unhealthy", "", "storage did not answer within 2s"]
    ]


def test_no_storage_yet_is_unhealthy() -> None:
    assert _cells(ComponentStatusReader()) == [["etcd-0", "Unhealthy", "", "storage not open"]]
