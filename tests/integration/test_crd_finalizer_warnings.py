"""Custom resources warn about finalizer names that are not domain-qualified, on a real server.

apiextensions-apiserver's custom resource strategy returns these from
``WarningsOnCreate`` and ``WarningsOnUpdate`` (for the finalizers an update
adds); they reach the client as ``Warning: 299 - "..."`` headers, quoted as
Go's ``strconv.Quote`` quotes them.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "finalizer-warnings.kapi.example"
MERGE_PATCH = {"Content-Type": "application/merge-patch+json"}


def unqualified(name: str) -> str:
    """The Warning header kube-apiserver sends for an unqualified finalizer without a dot."""
    return (
        f'299 - "metadata.finalizers: \\"{name}\\": prefer a domain-qualified finalizer name '
        'to avoid accidental conflicts with other finalizer writers"'
    )


@pytest.fixture(scope="module")
def gadgets(kapi_server: KapiServer) -> Iterator[None]:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }
    with kapi_server.client() as http:
        created = http.post(CRDS, json=crd)
        assert created.status_code == 201, created.text
        deadline = time.monotonic() + 20
        while http.get(f"/apis/{GROUP}/v1/gadgets").status_code != 200:
            assert time.monotonic() < deadline, "the CRD was not served in time"
            time.sleep(0.05)
        yield
        http.delete(f"{CRDS}/gadgets.{GROUP}")


def gadget(name: str, finalizers: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Gadget",
        "metadata": {"name": name, "finalizers": finalizers},
    }


def release(http: httpx.Client, path: str) -> None:
    """Clear the finalizers, so that the namespace and the CRD can go."""
    response = http.patch(path, json={"metadata": {"finalizers": None}}, headers=MERGE_PATCH)
    assert response.status_code == 200, response.text


@pytest.mark.usefixtures("gadgets")
def test_create_warns_about_an_unqualified_finalizer(http: httpx.Client, namespace: str) -> None:
    base = f"/apis/{GROUP}/v1/namespaces/{namespace}/gadgets"
    created = http.post(base, json=gadget("bare", ["foo"]))
    assert created.status_code == 201, created.text
    assert created.headers.get_list("warning") == [unqualified("foo")]
    release(http, f"{base}/bare")

    qualified = http.post(base, json=gadget("qualified", ["example.com/foo"]))
    assert qualified.status_code == 201, qualified.text
    assert "warning" not in qualified.headers
    release(http, f"{base}/qualified")


@pytest.mark.usefixtures("gadgets")
def test_update_warns_only_about_the_finalizers_it_adds(http: httpx.Client, namespace: str) -> None:
    base = f"/apis/{GROUP}/v1/namespaces/{namespace}/gadgets"
    created = http.post(base, json=gadget("held", ["foo"]))
    assert created.status_code == 201, created.text

    added = http.patch(
        f"{base}/held",
        json={"metadata": {"finalizers": ["foo", "bar", "example.com/baz"]}},
        headers=MERGE_PATCH,
    )
    assert added.status_code == 200, added.text
    assert added.headers.get_list("warning") == [unqualified("bar")]

    relabelled = http.patch(
        f"{base}/held", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE_PATCH
    )
    assert relabelled.status_code == 200, relabelled.text
    assert "warning" not in relabelled.headers
    release(http, f"{base}/held")
