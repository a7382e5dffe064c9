"""A server that compacts its history often (``--compaction-interval``), and waiting for it.

The fixtures ``compacting_server`` and ``compacting`` (tests/integration/conftest.py)
start one per module.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.objects import configmap, create, unique
from tests.helpers.wait import eventually
from tests.integration.paths import cm_path


def serve_compacting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """A server compacting history every half second."""
    yield from serve_with_flags(tmp_path_factory, "compacting", "--compaction-interval", "0.5")


def wait_until_compacted(http: httpx.Client, namespace: str, revision: str) -> httpx.Response:
    """Write past ``revision`` until a list at it is refused; that refusal."""

    def refused() -> httpx.Response | None:
        create(http, namespace, configmap(unique("later")))
        response = http.get(
            cm_path(namespace),
            params={"resourceVersion": revision, "resourceVersionMatch": "Exact"},
        )
        return response if response.status_code != 200 else None

    return eventually(refused, what=f"revision {revision} to be compacted", interval=0.2)
