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


def test_names_refused_for_a_conflict_are_accepted_once_the_holder_is_deleted(
    tmp_path: Path,
) -> None:
    """Conflicts are judged on the names CRDs accepted in storage (every server sees the
    same), and a deleted CRD's names go to the CRD of its group that was refused them."""

    async def scenario() -> list[Any]:
        server = APIServer(ServerConfig(data_dir=tmp_path))
        await server.start()
        crds = server.store("apiextensions.k8s.io", "customresourcedefinitions")

        async def conditions(name: str) -> dict[str, Any]:
            crd = await crds.get(None, name)
            return {
                c["type"]: (c["status"], c["reason"], c["message"])
                for c in (crd.get("status") or {}).get("conditions") or []
            }

        async def wait_for(name: str, type_: str, status: str) -> Any:
            for _ in range(400):
                found = await conditions(name)
                if found.get(type_, ("",))[0] == status:
                    return found[type_]
                await asyncio.sleep(0.01)
            raise AssertionError(f"{name} {type_} never {status}: {found}")

        try:
            await crds.create(_gadgets())
            await wait_for("gadgets.unit.example.com", "Established", "True")
            rival = _gadgets()  # another plural, the same kind
            rival["metadata"]["name"] = f"rivals.{GROUP}"
            rival["spec"]["names"].update(plural="rivals", singular="rival")
            await crds.create(rival)
            refused = await wait_for(f"rivals.{GROUP}", "NamesAccepted", "False")
            await crds.delete(None, "gadgets.unit.example.com")
            accepted = await wait_for(f"rivals.{GROUP}", "NamesAccepted", "True")
            await _until(lambda: (GROUP, "rivals") in server.stores)
            return [refused, accepted]
        finally:
            await server.stop()

    assert asyncio.run(scenario()) == [
        ("False", "KindConflict", '"Gadget" is already in use'),
        ("True", "NoConflicts", "no conflicts found"),
    ]
