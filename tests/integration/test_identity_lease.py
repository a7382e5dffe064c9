"""APIServerIdentity on a real ``kapi serve``: the identity lease, its renewal, and the
collection of other servers' expired identity leases."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from kapi.controllers.identity import apiserver_id, micro_time
from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.wait import eventually

HOSTNAME = "kapi-identity-test"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
SELECTOR = "apiserver.kubernetes.io/identity=kube-apiserver"


@pytest.fixture(scope="module")
def identity_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """Renewing every second; a lease lasts 3 s, so expired leases are collected every 3 s."""
    yield from serve_with_flags(
        tmp_path_factory,
        "identity",
        "--identity-hostname",
        HOSTNAME,
        "--identity-lease-renew-interval-seconds",
        "1",
        "--identity-lease-duration-seconds",
        "3",
    )


@pytest.fixture
def client(identity_server: KapiServer) -> Iterator[httpx.Client]:
    with identity_server.client() as c:
        yield c


def _own_lease(client: httpx.Client) -> dict[str, Any]:
    response = eventually(
        lambda: (r := client.get(f"{LEASES}/{apiserver_id(HOSTNAME)}")).status_code == 200 and r,
        what="the server's identity lease",
    )
    return response.json()


def test_identity_lease_is_named_and_labelled_as_upstreams(client: httpx.Client) -> None:
    lease = _own_lease(client)
    name = apiserver_id(HOSTNAME)
    assert lease["metadata"]["name"] == name
    assert lease["metadata"]["namespace"] == "kube-system"
    assert lease["metadata"]["labels"] == {
        "apiserver.kubernetes.io/identity": "kube-apiserver",
        "kubernetes.io/hostname": HOSTNAME,
    }
    spec = lease["spec"]
    assert spec["leaseDurationSeconds"] == 3
    holder, _, suffix = spec["holderIdentity"].partition("_")
    assert holder == name and len(suffix) == 36
    renewed = datetime.fromisoformat(spec["renewTime"])
    assert spec["renewTime"] == micro_time(renewed)
    # The label selector upstream's collector lists with finds it.
    listed = client.get(LEASES, params={"labelSelector": SELECTOR}).json()
    assert name in [item["metadata"]["name"] for item in listed["items"]]


def test_identity_lease_is_renewed(client: httpx.Client) -> None:
    first = _own_lease(client)["spec"]

    def renewed() -> dict[str, Any] | None:
        spec = client.get(f"{LEASES}/{apiserver_id(HOSTNAME)}").json()["spec"]
        return spec if spec["renewTime"] > first["renewTime"] else None

    later = eventually(renewed, what="a later renewTime")
    assert later["holderIdentity"] == first["holderIdentity"]
    assert datetime.fromisoformat(later["renewTime"]) > datetime.fromisoformat(first["renewTime"])


def test_renewals_are_seen_by_watches(client: httpx.Client) -> None:
    name = apiserver_id(HOSTNAME)
    rv = client.get(LEASES).json()["metadata"]["resourceVersion"]
    params = {
        "watch": "1",
        "resourceVersion": rv,
        "labelSelector": SELECTOR,
        "timeoutSeconds": "20",
    }
    with client.stream("GET", LEASES, params=params, timeout=30) as stream:
        for line in stream.iter_lines():
            event = json.loads(line)
            if event["type"] == "MODIFIED" and event["object"]["metadata"]["name"] == name:
                assert event["object"]["spec"]["renewTime"]
                break
        else:
            pytest.fail("the watch ended without a renewal of the identity lease")


def _foreign_lease(name: str, renewed: datetime, duration: int) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "labels": {
                "apiserver.kubernetes.io/identity": "kube-apiserver",
                "kubernetes.io/hostname": name,
            },
        },
        "spec": {
            "holderIdentity": f"{name}_00000000-0000-0000-0000-000000000000",
            "leaseDurationSeconds": duration,
            "renewTime": micro_time(renewed),
        },
    }


def test_expired_identity_leases_of_other_servers_are_collected(client: httpx.Client) -> None:
    now = datetime.now(UTC)
    live = apiserver_id("live-peer")
    expired = apiserver_id("gone-peer")
    # The live one first: once the expired one is gone, a collection saw both.
    created = client.post(LEASES, json=_foreign_lease(live, now, 3600))
    assert created.status_code == 201, created.text
    created = client.post(LEASES, json=_foreign_lease(expired, now - timedelta(hours=2), 10))
    assert created.status_code == 201, created.text

    eventually(
        lambda: client.get(f"{LEASES}/{expired}").status_code == 404,
        what="the expired identity lease to be deleted",
    )
    gone = client.get(f"{LEASES}/{expired}").json()
    assert (gone["reason"], gone["message"]) == (
        "NotFound",
        f'leases.coordination.k8s.io "{expired}" not found',
    )
    assert client.get(f"{LEASES}/{live}").status_code == 200
    assert client.get(f"{LEASES}/{apiserver_id(HOSTNAME)}").status_code == 200
    names = [item["metadata"]["name"] for item in client.get(LEASES).json()["items"]]
    assert expired not in names and live in names
    assert client.delete(f"{LEASES}/{live}").status_code == 200
