"""Two kapi servers on one real etcd allocate Service IPs and node ports as one server,
and sign service account tokens with one key."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.ha import Cluster, cluster

RANGE = "10.96.0.0/28"  # 14 usable addresses, the first the kubernetes Service's


@pytest.fixture(scope="module")
def ha(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(tmp_path_factory.mktemp("ha-svc")) as started:
        for name in ("a", "b"):
            started.start(
                name,
                "--service-cluster-ip-range",
                RANGE,
                "--service-node-port-range",
                "30000-30019",
            )
        yield started


def service(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"ports": [{"port": 80}], **spec},
    }


def test_concurrent_creates_on_two_servers_never_share_a_value(ha: Cluster, tmp_path: Path) -> None:
    path = "/api/v1/namespaces/default/services"

    def create(i: int) -> Any:
        with ha.servers[i % 2].client() as client:
            return client.post(path, json=service(f"s{i}", type="NodePort"))

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(create, range(13)))
    assert [a.status_code for a in answers] == [201] * 13, [a.text for a in answers]
    ips = {a.json()["spec"]["clusterIP"] for a in answers}
    ports = {a.json()["spec"]["ports"][0]["nodePort"] for a in answers}
    assert len(ips) == 13 and "10.96.0.1" not in ips  # the kubernetes Service holds .1
    assert len(ports) == 13
    keys = ha.etcd_keys("/registry/kapi.io/serviceips/")
    assert sorted(k.rsplit("/", 1)[1] for k in keys) == sorted(ips | {"10.96.0.1"})
    with ha.servers[1].client() as b:
        full = b.post(path, json=service("one-too-many"))
        assert (full.status_code, full.json()["message"]) == (
            500,
            "Internal error occurred: failed to allocate a serviceIP: range is full",
        )
        assert b.delete(f"{path}/s0").status_code == 200
    with ha.servers[0].client() as a:
        freed = answers[0].json()["spec"]["clusterIP"]
        again = a.post(path, json=service("reuse", clusterIP=freed))
        assert again.status_code == 201, again.text


def test_tokens_from_either_server_carry_one_key(ha: Cluster) -> None:
    kids = []
    for server in ha.servers:
        with server.client() as client:
            body = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "bot"}}
            client.post("/api/v1/namespaces/default/serviceaccounts", json=body)
            answer = client.post(
                "/api/v1/namespaces/default/serviceaccounts/bot/token",
                json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"},
            )
            assert answer.status_code == 201, answer.text
            header = answer.json()["status"]["token"].split(".")[0]
            kids.append(json.loads(base64.urlsafe_b64decode(header + "=="))["kid"])
    assert kids[0] == kids[1]
    assert ha.etcd_keys("/registry/kapi.io/serviceaccount-signing-key") == [
        "/registry/kapi.io/serviceaccount-signing-key"
    ]
