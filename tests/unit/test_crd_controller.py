"""The CRD controller follows storage, whichever server wrote it (several may share it)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kapi.apiextensions.controller import CRDController
from kapi.registry.predicate import EVERYTHING
from kapi.server import APIServer, ServerConfig
from tests.helpers.crds import crd_of

GROUP = "unit.example.com"


async def _until(condition: Callable[[], bool]) -> None:
    """Let the server's controllers run until ``condition`` holds (bounded)."""
    for _ in range(400):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the controllers did not get there")


def _gadgets() -> dict[str, Any]:
    """The CRD as the handler hands it to the store: defaulted."""
    crd = crd_of(GROUP, "gadgets", "Gadget", {"type": "object"})
    crd["spec"]["names"]["listKind"] = "GadgetList"
    crd["spec"]["conversion"] = {"strategy": "None"}
    return crd


def _gadget(name: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Gadget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {},
    }


def test_a_relist_uninstalls_crds_deleted_meanwhile(tmp_path: Path) -> None:
    async def scenario() -> tuple[list[str], bool]:
        server = APIServer(ServerConfig(data_dir=tmp_path))
        await server.start()
        try:
            crds = server.store("apiextensions.k8s.io", "customresourcedefinitions")
            await crds.create(_gadgets())
            await _until(lambda: bool(server.custom_resources.definitions()))
            # A list without it: its DELETED event was missed while the watch was down.
            await CRDController(crds, server.custom_resources).replace([])
            names = [c["metadata"]["name"] for c in server.custom_resources.definitions()]
            return names, (GROUP, "gadgets") in server.stores
        finally:
            await server.stop()

    assert asyncio.run(scenario()) == ([], False)


def test_a_terminating_crd_never_installed_here_still_loses_its_objects(tmp_path: Path) -> None:
    """Another server marked it deleted before this one served it: its objects must go first."""

    async def scenario() -> tuple[list[Any], int]:
        server = APIServer(ServerConfig(data_dir=tmp_path))
        await server.start()
        try:
            crds = server.store("apiextensions.k8s.io", "customresourcedefinitions")
            crd = await crds.create(_gadgets())
            await _until(lambda: (GROUP, "gadgets") in server.stores)
            await server.stores[(GROUP, "gadgets")].create(_gadget("g"))
            installed = server.custom_resources.definitions()[0]
            server.custom_resources.uninstall(installed)  # as if never installed here
            await crds.delete(None, crd["metadata"]["name"])
            name = crd["metadata"]["name"]

            async def gone() -> bool:
                return not (await crds.list(None, EVERYTHING)).items

            for _ in range(400):
                if await gone():
                    break
                await asyncio.sleep(0.01)
            left = (await crds.list(None, EVERYTHING)).items
            assert server.storage is not None
            objects = await server.storage.list(f"/registry/{GROUP}/gadgets/")
            return [c["metadata"]["name"] for c in left if c["metadata"]["name"] == name], len(
                objects.kvs
            )
        finally:
            await server.stop()

    assert asyncio.run(scenario()) == ([], 0)
