"""The store and storage versions: values written in another version are read back
(and converted), and an unchanged update re-encodes them, as upstream's
GuaranteedUpdate writes whenever the encoded bytes differ; a true no-op writes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson

from kapi.features import FeatureGate
from kapi.server import APIServer, ServerConfig

KEY = "/registry/poddisruptionbudgets/default/p"
PDB = {
    "apiVersion": "policy/v1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}},
}


def _config(tmp_path: Path, **kwargs: Any) -> ServerConfig:
    gates = FeatureGate.parse("APIServerIdentity=false")
    return ServerConfig(data_dir=tmp_path, feature_gates=gates, **kwargs)


async def _stored(server: APIServer) -> dict[str, Any]:
    assert server.storage is not None
    kv = await server.storage.get(KEY)
    assert kv is not None
    return dict(orjson.loads(kv.value))


async def _unchanged(obj: dict[str, Any]) -> dict[str, Any]:
    return obj


def test_an_unchanged_update_re_encodes_a_value_stored_in_another_version(tmp_path: Path) -> None:
    async def scenario() -> None:
        old = APIServer(
            _config(tmp_path, storage_versions=(("policy", "poddisruptionbudgets", "v1beta1"),))
        )
        await old.start()
        try:
            await old.store("policy", "poddisruptionbudgets").create(
                orjson.loads(orjson.dumps(PDB))
            )
            assert (await _stored(old))["apiVersion"] == "policy/v1beta1"
        finally:
            await old.stop()

        new = APIServer(_config(tmp_path))
        await new.start()
        try:
            pdbs = new.store("policy", "poddisruptionbudgets")
            before = await pdbs.get("default", "p")
            assert before["apiVersion"] == "policy/v1"  # read back as the hub
            assert before["spec"]["minAvailable"] == 1
            rewritten = await pdbs.update("default", "p", _unchanged)
            rv = rewritten["metadata"]["resourceVersion"]
            assert rv != before["metadata"]["resourceVersion"]
            stored = await _stored(new)
            assert stored["apiVersion"] == "policy/v1"
            assert stored["spec"]["minAvailable"] == 1
            again = await pdbs.update("default", "p", _unchanged)
            assert again["metadata"]["resourceVersion"] == rv
            assert (await pdbs.get("default", "p"))["metadata"]["resourceVersion"] == rv
        finally:
            await new.stop()

    asyncio.run(scenario())
