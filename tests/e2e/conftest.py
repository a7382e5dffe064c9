"""One ``kapi serve`` and one kubectl (with a cache of its own) per kubectl release.

A test class parametrizes ``version`` indirectly at class scope, so pytest
runs a release's tests together against one server; each test works in a
namespace of its own, named after the test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kubectl import Kubectl, make_kubectl


@pytest.fixture(scope="class")
def version(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="class")
def server(version: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, f"kapi-{version}")


@pytest.fixture(scope="class")
def k(server: KapiServer, version: str, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    """The release's kubectl with a fresh ``KUBECACHEDIR`` (discovery and OpenAPI caches)."""
    return make_kubectl(server, tmp_path_factory.mktemp(f"kubectl-{version}"), version)


@pytest.fixture
def ns(server: KapiServer, request: pytest.FixtureRequest) -> str:
    """A namespace for this test alone."""
    name = request.node.originalname.removeprefix("test_").replace("_", "-")[:50]
    with server.client() as client:
        response = client.post(
            "/api/v1/namespaces",
            json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
    assert response.status_code == 201, response.text
    return name


@pytest.fixture
def write(tmp_path: Path) -> Callable[[str, str], str]:
    """Write a manifest into the test's directory and return its path."""

    def write(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write
