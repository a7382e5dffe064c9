"""Fixtures more than one integration module uses (helpers are in :mod:`tests.helpers`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import KapiServer
from tests.helpers.audit import serve_audited
from tests.helpers.compaction import serve_compacting
from tests.helpers.crds import GROUP, crontab_crd, wait_established, write_manifest
from tests.helpers.kubectl import DEFAULT_VERSION, Kubectl, make_kubectl
from tests.helpers.objects import unique


@pytest.fixture
def kubectl(kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    """kubectl DEFAULT_VERSION on the shared server (modules about other releases override it)."""
    return make_kubectl(kapi_server, tmp_path, DEFAULT_VERSION)


@pytest.fixture(scope="module")
def compacting_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """A server compacting history every half second (``--compaction-interval``)."""
    yield from serve_compacting(tmp_path_factory)


@pytest.fixture
def compacting(compacting_server: KapiServer) -> Iterator[tuple[httpx.Client, str]]:
    """A client of ``compacting_server`` and a new namespace there."""
    with compacting_server.client() as client:
        name = unique("compact")
        response = client.post("/api/v1/namespaces", json={"metadata": {"name": name}})
        assert response.status_code == 201, response.text
        yield client, name


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KapiServer, Path]]:
    """A server writing an audit log (see :mod:`tests.helpers.audit`), and the log's path."""
    yield from serve_audited(tmp_path_factory)


@pytest.fixture
def custom_resources(kapi_server: KapiServer, tmp_path: Path) -> Iterator[str]:
    """An established CRD of its own; yields the collection path in the default namespace."""
    crd = crontab_crd("pbcrontabs", "PbCronTab")
    k = make_kubectl(kapi_server, tmp_path, "1.32")
    k.ok("apply", "-f", write_manifest(tmp_path, "crd.yaml", crd))
    wait_established(k, crd["metadata"]["name"])
    yield f"/apis/{GROUP}/v1/namespaces/default/pbcrontabs"
    k.run("delete", "crd", crd["metadata"]["name"], "--wait=true")
