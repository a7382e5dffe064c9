"""``kapi deprecations`` against a real server emulating 1.24, called by real clients.

kubectl 1.32 and kapi's own client call deprecated APIs (and a current one);
the command then reads the server's ``/metrics`` through the kubeconfig and
must list exactly those APIs, with their removal release and replacement.
Also here: a strategy's field warning (upstream's Ingress class annotation
text) reaches the client as a ``Warning`` header.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kapi.client import Client, load_kubeconfig
from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kapi_cli import make_kapi
from tests.helpers.kubectl import make_kubectl

PDB = {
    "apiVersion": "policy/v1beta1",
    "kind": "PodDisruptionBudget",
    "metadata": {"name": "web", "namespace": "team"},
    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "deprecations-1-24", "--emulated-version=1.24")


def test_deprecations_lists_what_kubectl_and_the_client_called(
    server: KapiServer, tmp_path: Path
) -> None:
    kubectl = make_kubectl(server, tmp_path, "1.32")
    manifest = tmp_path / "pdb.json"
    manifest.write_text(json.dumps(PDB))
    with Client(load_kubeconfig(str(server.kubeconfig))) as client:
        client.request("POST", "/api/v1/namespaces", body={"metadata": {"name": "team"}})
        created = kubectl.run("create", "-f", str(manifest))  # 1 POST, deprecated
        assert (created.returncode, created.stdout) == (
            0,
            "poddisruptionbudget.policy/web created\n",
        )
        kubectl.run("get", "poddisruptionbudgets.v1beta1.policy", "web", "-n", "team")  # 1 GET
        pdbs = client.resource("policy/v1beta1", "poddisruptionbudgets")
        pdbs.get("web", namespace="team")  # 1 GET
        client.request("GET", "/apis/batch/v1beta1/namespaces/team/cronjobs")  # 1 LIST
        client.request("GET", "/apis/policy/v1/namespaces/team/poddisruptionbudgets/web")

    kapi = make_kapi(server)
    table = kapi.ok("deprecations")
    assert table.out_lines == [
        "API              RESOURCE               REMOVED IN   REPLACEMENT"
        "                     REQUESTS",
        "batch/v1beta1    cronjobs               1.25         batch/v1 CronJob                1",
        "policy/v1beta1   poddisruptionbudgets   1.25         policy/v1 PodDisruptionBudget   3",
    ]
    document = json.loads(kapi.ok("deprecations", "-o", "json").stdout)
    assert [
        (i["group"], i["version"], i["resource"], i["kind"], i["removedIn"], i["replacement"])
        for i in document["items"]
    ] == [
        ("batch", "v1beta1", "cronjobs", "CronJob", "1.25", "batch/v1 CronJob"),
        (
            "policy",
            "v1beta1",
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            "1.25",
            "policy/v1 PodDisruptionBudget",
        ),
    ]
    assert kapi.run("deprecations", "--removed-in", "1.26").stderr == (
        "No deprecated API requests found\n"
    )


def test_ingress_class_annotation_warning_arrives_as_a_header(server: KapiServer) -> None:
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "legacy", "annotations": {"kubernetes.io/ingress.class": "nginx"}},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
    }
    with server.client() as http:
        http.post("/api/v1/namespaces", json={"metadata": {"name": "ingresses"}})
        created = http.post(
            "/apis/networking.k8s.io/v1/namespaces/ingresses/ingresses", json=ingress
        )
    assert created.status_code == 201, created.text
    assert created.headers.get_list("warning") == [
        '299 - "annotation \\"kubernetes.io/ingress.class\\" is deprecated, please use '
        "'spec.ingressClassName' instead\""
    ]
