"""The namespace controller empties a namespace of every resource in storage, custom
ones included, whether or not this server serves their CRD yet."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kapi.apimachinery import errors
from kapi.server import APIServer, ServerConfig
from tests.helpers.crds import crd_of
from tests.helpers.etcd import EtcdServer

GROUP = "nsunit.example.com"


async def _until(condition: Callable[[], Awaitable[bool]]) -> None:
    """Let the server's controllers run until ``condition`` holds (bounded)."""
    for _ in range(1000):
        if await condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the controllers did not get there")


def _widgets() -> dict[str, Any]:
    crd = crd_of(GROUP, "widgets", "Widget", {"type": "object"})
    crd["spec"]["names"]["listKind"] = "WidgetList"
    crd["spec"]["conversion"] = {"strategy": "None"}
    return crd


def _widget(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {},
    }


@pytest.mark.parametrize("backend", ["sqlite", "etcd"])
def test_custom_resources_of_a_crd_not_installed_here_are_deleted_before_the_namespace(
    tmp_path: Path, backend: str
) -> None:
    """A CRD another server created a moment ago may not be served here yet: the
    namespace must not be finalized while its objects are still in storage."""
    etcd = EtcdServer.launch(tmp_path / "etcd") if backend == "etcd" else None
    config = ServerConfig(data_dir=tmp_path / "kapi")
    if etcd is not None:
        config.etcd_servers = (etcd.client_url,)

    async def scenario() -> tuple[int, int]:
        server = APIServer(config)
        await server.start()
        try:
            assert server.storage is not None
            storage = server.storage
            crds = server.store("apiextensions.k8s.io", "customresourcedefinitions")
            namespaces = server.store("", "namespaces")
            await crds.create(_widgets())

            async def installed() -> bool:
                return (GROUP, "widgets") in server.stores

            await _until(installed)
            await namespaces.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
            )
            await server.stores[(GROUP, "widgets")].create(_widget("w", "team"))
            prefix = f"/registry/{GROUP}/widgets/team/"
            before = len((await storage.list(prefix)).kvs)
            # As if this server had not installed the CRD yet (it is in storage).
            server.custom_resources.uninstall(server.custom_resources.definitions()[0])
            assert (GROUP, "widgets") not in server.stores
            await namespaces.delete(None, "team")

            async def namespace_gone() -> bool:
                try:
                    await namespaces.get(None, "team")
                except errors.StatusError as exc:
                    if exc.code == 404:
                        return True
                    raise
                return False

            await _until(namespace_gone)
            return before, len((await storage.list(prefix)).kvs)
        finally:
            await server.stop()

    try:
        assert asyncio.run(scenario()) == (1, 0)
    finally:
        if etcd is not None:
            etcd.close()
