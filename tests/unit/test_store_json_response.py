"""GET's spliced JSON: the stored bytes with the resourceVersion, equal to the decoded path."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson

from kapi.server import APIServer, ServerConfig
from kapi.version import Version


def _scenario(tmp_path: Path, body: Any, config: ServerConfig | None = None) -> Any:
    async def run() -> Any:
        server = APIServer(config or ServerConfig(data_dir=tmp_path))
        await server.start()
        try:
            return await body(server)
        finally:
            await server.stop()

    return asyncio.run(run())


def test_spliced_response_equals_the_decoded_object(tmp_path: Path) -> None:
    async def body(server: APIServer) -> tuple[Any, Any, bytes]:
        store = server.store("", "configmaps")
        # Keys in the order `kubectl create -f` sends them (sorted), not the response's.
        await store.create(
            {
                "apiVersion": "v1",
                "data": {"k": "v", "quote": '"metadata":{"'},
                "kind": "ConfigMap",
                "metadata": {"name": "x", "namespace": "default", "labels": {"a": "b"}},
            }
        )
        kv = await store.read("default", "x")
        spliced = store.json_response(kv)
        assert spliced is not None
        return orjson.loads(spliced), await store.decode(kv), spliced

    spliced, decoded, raw = _scenario(tmp_path, body)
    assert spliced == decoded
    assert list(spliced)[:3] == ["kind", "apiVersion", "metadata"]
    assert spliced["metadata"]["resourceVersion"] == decoded["metadata"]["resourceVersion"]
    assert raw.count(b'"resourceVersion"') == 1


def test_values_in_another_shape_are_left_to_the_decoder(tmp_path: Path) -> None:
    async def body(server: APIServer) -> tuple[Any, Any, int]:
        store = server.store("", "configmaps")
        assert server.storage is not None
        # As written before encode put the head first: no splice, the decoder answers.
        legacy = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "old"}}
        kv = await server.storage.create("/registry/configmaps/default/old", orjson.dumps(legacy))
        return store.json_response(kv), await store.decode(kv), kv.mod_revision

    spliced, decoded, revision = _scenario(tmp_path, body)
    assert spliced is None
    assert decoded["metadata"] == {"name": "old", "resourceVersion": str(revision)}


WIDGETS = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "listKind": "WidgetList",
        },
        "versions": [
            {
                "name": name,
                "served": True,
                "storage": name == "v1",
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
            for name in ("v1beta1", "v1")
        ],
    },
    "status": {
        "acceptedNames": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "listKind": "WidgetList",
        }
    },
}


def test_strategy_none_reads_splice_in_every_served_version(tmp_path: Path) -> None:
    async def body(server: APIServer) -> list[tuple[Any, Any]]:
        server.custom_resources.install(WIDGETS)
        resource = server.scheme.by_kind("example.com", "Widget")
        assert resource is not None
        stores = server.custom_resources
        v1, v1beta1 = stores.store_for(resource, "v1"), stores.store_for(resource, "v1beta1")
        widget = {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default"},
        }
        await v1.create({**widget, "spec": {"size": 1}})
        kv = await v1.read("default", "w")
        out = []
        for store in (v1, v1beta1):
            spliced = store.json_response(kv)
            assert spliced is not None
            out.append((orjson.loads(spliced), await store.decode(kv)))
        return out

    results = _scenario(tmp_path, body)
    for spliced, decoded in results:
        assert spliced == decoded
    assert [spliced["apiVersion"] for spliced, _ in results] == [
        "example.com/v1",
        "example.com/v1beta1",
    ]


def test_lists_as_stored_equal_decoded_lists_page_by_page(tmp_path: Path) -> None:
    from kapi.registry.predicate import EVERYTHING

    async def body(server: APIServer) -> list[tuple[Any, Any]]:
        store = server.store("", "configmaps")
        for i in range(5):
            metadata = {"name": f"c{i}", "namespace": "default"}
            await store.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": metadata,
                    "data": {"i": str(i)},
                }
            )
        pages = []
        token = ""
        while True:
            raw = await store.list(
                "default", EVERYTHING, limit=2, continue_token=token, json_items="v1"
            )
            decoded = await store.list("default", EVERYTHING, limit=2, continue_token=token)
            assert raw.json_items is not None and raw.items == []
            pages.append(
                (
                    (
                        [orjson.loads(b) for b in raw.json_items],
                        raw.resource_version,
                        raw.remaining,
                    ),
                    (decoded.items, decoded.resource_version, decoded.remaining),
                )
            )
            assert raw.continue_token == decoded.continue_token
            token = raw.continue_token
            if not token:
                return pages

    pages = _scenario(tmp_path, body)
    assert len(pages) == 3
    for raw, decoded in pages:
        assert raw == decoded
    assert [item["data"]["i"] for raw, _ in pages for item in raw[0]] == list("01234")


def test_other_versions_splice_only_what_their_conversion_leaves_alone(tmp_path: Path) -> None:
    selectors = {
        "labels": {"matchLabels": {"app": "web"}},
        "requirements": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
        "everything": {},  # v1beta1 spells it with the reserved label: a real conversion
    }

    async def body(server: APIServer) -> dict[str, tuple[Any, Any]]:
        resource = server.scheme.lookup("policy", "v1beta1", "poddisruptionbudgets")
        assert resource is not None
        store = server.custom_resources.store_for(resource, "v1beta1")
        out = {}
        for name, selector in selectors.items():
            await store.create(
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": name, "namespace": "default"},
                    "spec": {"minAvailable": 1, "selector": selector},
                }
            )
            kv = await store.read("default", name)
            spliced = store.json_response(kv, "v1beta1")
            decoded = await server.scheme.from_hub(resource, await store.decode(kv), "v1beta1")
            out[name] = (spliced and orjson.loads(spliced), decoded)
        return out

    config = ServerConfig(data_dir=tmp_path, emulated_version=Version(1, 24))
    results = _scenario(tmp_path, body, config)
    for name in ("labels", "requirements"):
        spliced, decoded = results[name]
        assert spliced == {"kind": "PodDisruptionBudget", **decoded}
        assert spliced["apiVersion"] == "policy/v1beta1"
    spliced, decoded = results["everything"]
    assert spliced is None
    assert decoded["spec"]["selector"]["matchExpressions"][0]["operator"] == "DoesNotExist"
