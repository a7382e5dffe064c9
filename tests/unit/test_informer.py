"""The informer: an in-memory copy of a resource that follows its watch."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from kapi.registry.informer import Informer
from kapi.server import APIServer, ServerConfig


def _configmap(name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"k": value},
    }


async def _settle() -> None:
    """Let the informer's task take the events already handed to its watch."""
    for _ in range(5):
        await asyncio.sleep(0)


def test_informer_follows_creates_updates_and_deletes(tmp_path: Path) -> None:
    async def scenario() -> list[Any]:
        server = APIServer(ServerConfig(data_dir=tmp_path))
        await server.start()
        store = server.store("", "configmaps")
        await store.create(_configmap("before", "1"))
        changes: list[list[str]] = []
        informer = Informer(lambda objs: changes.append(sorted(objs)))
        task = asyncio.create_task(informer.run(store))
        seen: list[Any] = []
        try:
            await _settle()
            seen.append(informer.get("default", "before")["data"])  # from the initial list
            await store.create(_configmap("after", "2"))
            await _settle()
            seen.append(informer.get("default", "after")["data"])

            async def bump(obj: dict[str, Any]) -> dict[str, Any]:
                obj["data"]["k"] = "3"
                return obj

            await store.update("default", "after", bump)
            await _settle()
            seen.append(informer.get("default", "after")["data"])
            await store.delete("default", "before")
            await _settle()
            seen.append(informer.get("default", "before"))
            seen.append(informer.get(None, "after"))  # cluster-scoped key: not the same object
            seen.append(changes[-1])
        finally:
            task.cancel()
            await server.stop()
        return seen

    assert asyncio.run(scenario()) == [
        {"k": "1"},
        {"k": "2"},
        {"k": "3"},
        None,
        None,
        ["default/after"],
    ]


def test_server_namespace_informer_sees_system_namespaces(tmp_path: Path) -> None:
    async def scenario() -> tuple[Any, Any]:
        server = APIServer(ServerConfig(data_dir=tmp_path))
        await server.start()
        try:
            await _settle()
            default = server.namespace_informer.get(None, "default")
            missing = server.namespace_informer.get(None, "nope")
        finally:
            await server.stop()
        return default, missing

    default, missing = asyncio.run(scenario())
    assert default["metadata"]["name"] == "default"
    assert missing is None
