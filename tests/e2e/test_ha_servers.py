"""Three kapi servers on one real etcd behave as one API server.

Servers A, B and C are separate ``kapi serve --etcd-servers=…`` processes on
ports of their own.  What one writes, the others read at once (storage is
etcd); what they derive from storage (served CRDs, webhook configurations,
namespaces' phases) follows etcd's watch, so it reaches the others shortly
after: those tests wait, boundedly, for the effect and then assert exactly
what upstream answers.
"""

from __future__ import annotations

import copy
import json
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer
from tests.helpers.admission import PROPAGATION, configure, review_answer, webhook
from tests.helpers.crds import CRDS, crd_of, crontab, crontab_crd, established, write_manifest
from tests.helpers.ha import Cluster, cluster, configmap, create_namespace
from tests.helpers.kubectl import make_kubectl
from tests.helpers.status import assert_status
from tests.helpers.wait import eventually
from tests.tls import make_ca, make_serving_cert
from tests.webhook_server import serve_webhook

_names = iter(range(1, 1_000_000))


def unique(prefix: str) -> str:
    return f"{prefix}-{next(_names)}"


@pytest.fixture(scope="module")
def ha(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with cluster(tmp_path_factory.mktemp("ha"), "a", "b", "c") as started:
        yield started


@pytest.fixture
def a(ha: Cluster) -> Iterator[httpx.Client]:
    with ha.servers[0].client() as client:
        yield client


@pytest.fixture
def b(ha: Cluster) -> Iterator[httpx.Client]:
    with ha.servers[1].client() as client:
        yield client


@pytest.fixture
def c(ha: Cluster) -> Iterator[httpx.Client]:
    with ha.servers[2].client() as client:
        yield client


@pytest.fixture
def ns(a: httpx.Client) -> str:
    name = unique("ha")
    create_namespace(a, name)
    return name


def cm_path(namespace: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps" + (f"/{name}" if name else "")


# -- storage is shared -------------------------------------------------------------------


def test_read_your_write_across_servers(
    a: httpx.Client, b: httpx.Client, c: httpx.Client, ns: str
) -> None:
    created = a.post(cm_path(ns), json=configmap("one", k="v1"))
    assert created.status_code == 201, created.text
    rv = created.json()["metadata"]["resourceVersion"]
    # At once, on another server: no waiting.
    got = b.get(cm_path(ns, "one"))
    assert got.status_code == 200, got.text
    assert got.json() == created.json()
    listed = c.get(cm_path(ns), params={"resourceVersion": rv})
    assert listed.status_code == 200, listed.text
    assert [i["metadata"]["name"] for i in listed.json()["items"]] == ["one"]
    assert int(listed.json()["metadata"]["resourceVersion"]) >= int(rv)

    updated = b.put(cm_path(ns, "one"), json={**got.json(), "data": {"k": "v2"}})
    assert updated.status_code == 200, updated.text
    again = a.get(cm_path(ns, "one")).json()
    assert again["data"] == {"k": "v2"}
    assert again["metadata"]["resourceVersion"] == updated.json()["metadata"]["resourceVersion"]

    deleted = c.delete(cm_path(ns, "one"))
    assert deleted.status_code == 200, deleted.text
    assert_status(a.get(cm_path(ns, "one")), 404, "NotFound", 'configmaps "one" not found')


def test_watch_on_b_from_a_write(ha: Cluster, a: httpx.Client, ns: str) -> None:
    created = a.post(cm_path(ns), json=configmap("watched", step="0"))
    assert created.status_code == 201, created.text
    rv = created.json()["metadata"]["resourceVersion"]
    params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "20"}
    events: list[dict[str, Any]] = []
    with (
        httpx.Client(base_url=ha.servers[1].url, timeout=30) as watcher,
        watcher.stream("GET", cm_path(ns), params=params) as stream,
    ):
        assert stream.status_code == 200
        first = a.patch(
            cm_path(ns, "watched"),
            json={"data": {"step": "1"}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert first.status_code == 200, first.text
        assert a.delete(cm_path(ns, "watched")).status_code == 200
        for line in stream.iter_lines():
            if line:
                events.append(json.loads(line))
            if len(events) == 2:
                break
    assert [(e["type"], e["object"]["data"]["step"]) for e in events] == [
        ("MODIFIED", "1"),
        ("DELETED", "1"),
    ]
    assert (
        events[0]["object"]["metadata"]["resourceVersion"]
        == (first.json()["metadata"]["resourceVersion"])
    )
    assert int(events[1]["object"]["metadata"]["resourceVersion"]) > int(
        events[0]["object"]["metadata"]["resourceVersion"]
    )


def test_conflicting_updates_from_two_servers(
    ha: Cluster, a: httpx.Client, b: httpx.Client, ns: str
) -> None:
    """Both write at the same resourceVersion at the same moment: etcd lets one through."""
    for round_ in range(5):
        name = f"contended-{round_}"
        created = a.post(cm_path(ns), json=configmap(name, writer="none"))
        assert created.status_code == 201, created.text
        answers = race_puts(
            {"a": ha.servers[0], "b": ha.servers[1]}, cm_path(ns, name), created.json()
        )
        codes = sorted(r.status_code for r in answers.values())
        assert codes == [200, 409], {w: r.text for w, r in answers.items()}
        winner = next(w for w, r in answers.items() if r.status_code == 200)
        loser = next(r for r in answers.values() if r.status_code == 409)
        assert_status(
            loser,
            409,
            "Conflict",
            f'Operation cannot be fulfilled on configmaps "{name}": the object has been '
            "modified; please apply your changes to the latest version and try again",
            {"name": name, "kind": "configmaps"},
        )
        for client in (a, b):
            stored = client.get(cm_path(ns, name)).json()
            assert stored["data"] == {"writer": winner}
            assert stored == answers[winner].json()


def race_puts(
    servers: dict[str, KapiServer], path: str, base: dict[str, Any]
) -> dict[str, httpx.Response]:
    """PUT ``base`` with ``data.writer`` set to each server's name, on every server at once."""
    answers: dict[str, httpx.Response] = {}
    start = threading.Barrier(len(servers))

    def put(writer: str, server: KapiServer) -> None:
        body = copy.deepcopy(base)
        body["data"] = {"writer": writer}
        with server.client() as client:
            start.wait(timeout=30)
            answers[writer] = client.put(path, json=body)

    threads = [threading.Thread(target=put, args=item) for item in servers.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return answers


# -- state derived from watches ----------------------------------------------------------


def served(http: httpx.Client, group: str, version: str, plural: str) -> bool:
    response = http.get(f"/apis/{group}/{version}")
    if response.status_code != 200:
        return False
    return plural in {r["name"] for r in response.json()["resources"]}


def test_crd_created_on_a_is_served_on_b_and_c_with_kubectl(
    ha: Cluster, a: httpx.Client, b: httpx.Client, c: httpx.Client, tmp_path: Path
) -> None:
    for directory in "abc":
        (tmp_path / directory).mkdir()
    kubectl = {
        name: make_kubectl(server, tmp_path / name)
        for name, server in zip("abc", ha.servers, strict=True)
    }
    crd = crontab_crd("hacrontabs", "HACronTab")
    name = crd["metadata"]["name"]
    kubectl["a"].ok("create", "-f", write_manifest(tmp_path, "crd.yaml", crd))
    kubectl["a"].ok("wait", "--for=condition=Established", f"crd/{name}", "--timeout=20s")
    for http in (a, b, c):
        eventually(
            lambda http=http: served(http, "stable.example.com", "v1", "hacrontabs"),
            what="the CRD served by every server",
        )
    ns = unique("crd")
    kubectl["a"].ok("create", "namespace", ns)
    # Discovery, as kubectl does it, on B and C.
    for server in "bc":
        lines = kubectl[server].ok("api-resources", "--api-group=stable.example.com").out_lines
        assert [line.split() for line in lines[1:]] == [
            ["hacrontabs", "hat", "stable.example.com/v1", "true", "HACronTab"]
        ], lines
    # CRUD across servers: create on B, read on C, patch on C, read and delete on A.
    body = crontab("tab", image="one")
    body["kind"] = "HACronTab"
    kubectl["b"].ok("create", "-n", ns, "-f", write_manifest(tmp_path, "cr.yaml", body))
    got = kubectl["c"].json("get", "hacrontabs", "tab", "-n", ns)
    assert got["spec"]["image"] == "one"
    kubectl["c"].ok(
        "patch", "hacrontabs", "tab", "-n", ns, "--type=merge", "-p", '{"spec":{"image":"two"}}'
    )
    assert kubectl["a"].json("get", "hat", "tab", "-n", ns)["spec"]["image"] == "two"
    kubectl["a"].ok("delete", "hacrontabs", "tab", "-n", ns)
    absent = kubectl["b"].fails("get", "hacrontabs", "tab", "-n", ns)
    assert absent.stderr == (
        'Error from server (NotFound): hacrontabs.stable.example.com "tab" not found\n'
    )


def test_crd_update_and_deletion_on_a_reach_b(
    ha: Cluster, a: httpx.Client, b: httpx.Client, c: httpx.Client, ns: str
) -> None:
    group = "ha.example.com"
    spec = {"type": "object", "properties": {"size": {"type": "integer"}}}
    crd = crd_of(group, "gadgets", "Gadget", spec)
    name = crd["metadata"]["name"]
    assert a.post(CRDS, json=crd).status_code == 201
    eventually(lambda: established(a, name), what="the CRD established")
    eventually(lambda: served(b, group, "v1", "gadgets"), what="gadgets served by B")
    path = f"/apis/{group}/v1/namespaces/{ns}/gadgets"
    created = b.post(
        path,
        json={"apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {}},
    )
    assert created.status_code == 201, created.text
    # Custom resources live where kube-apiserver keeps them in etcd.
    key = f"/registry/{group}/gadgets/{ns}/g"
    assert ha.etcd_keys(f"/registry/{group}/") == [key]
    stored = ha.etcd_get(key)
    assert stored["metadata"]["name"] == "g"
    assert stored["metadata"]["uid"] == created.json()["metadata"]["uid"]

    # A new served version, written on A, is served on B.
    versions = a.get(f"{CRDS}/{name}").json()["spec"]["versions"]
    versions.append({**copy.deepcopy(versions[0]), "name": "v2", "storage": False})
    updated = a.patch(
        f"{CRDS}/{name}",
        json={"spec": {"versions": versions}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert updated.status_code == 200, updated.text
    eventually(lambda: served(b, group, "v2", "gadgets"), what="v2 served by B")
    as_v2 = b.get(f"/apis/{group}/v2/namespaces/{ns}/gadgets/g")
    assert as_v2.status_code == 200, as_v2.text
    assert as_v2.json()["apiVersion"] == f"{group}/v2"

    # Deleted on A: its objects go, and B and C stop serving it.
    assert a.delete(f"{CRDS}/{name}").status_code == 200
    for http in (a, b, c):
        eventually(
            lambda http=http: http.get(f"{CRDS}/{name}").status_code == 404,
            what="the CRD gone",
        )
        eventually(
            lambda http=http: http.get(f"/apis/{group}/v1").status_code == 404,
            what="the group no longer served",
        )
        groups = http.get("/apis").json()["groups"]
        assert group not in {g["name"] for g in groups}
    assert_status(b.get(path), 404, "NotFound", "the server could not find the requested resource")
    assert ha.etcd_keys(f"/registry/{group}/") == []


def test_webhook_configured_on_a_is_enforced_on_b(
    a: httpx.Client, b: httpx.Client, ns: str, tmp_path: Path
) -> None:
    ca = make_ca()
    cert = make_serving_cert(ca, tmp_path)
    refused = {"code": 403, "reason": "Forbidden", "message": "configmaps named deny-* are refused"}

    def deny(path: str, review: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if review["request"]["name"].startswith("deny-"):
            return review_answer(review, allowed=False, status=refused)
        return review_answer(review, allowed=True)

    with serve_webhook(cert, deny) as hook:
        config = f"deny-{ns}"
        configure(
            a,
            "validatingwebhookconfigurations",
            config,
            [webhook("deny.example.com", hook.url("/"), ca, ns)],
        )
        try:
            eventually(
                lambda: (
                    b.post(
                        cm_path(ns), params={"dryRun": "All"}, json=configmap("deny-probe")
                    ).status_code
                    == 403
                ),
                what="B to enforce the webhook",
                timeout=PROPAGATION,
            )
            response = b.post(cm_path(ns), json=configmap("deny-1"))
            assert_status(
                response,
                403,
                "Forbidden",
                'admission webhook "deny.example.com" denied the request: '
                "configmaps named deny-* are refused",
            )
            assert b.get(cm_path(ns, "deny-1")).status_code == 404
            assert a.get(cm_path(ns, "deny-1")).status_code == 404
            assert b.post(cm_path(ns), json=configmap("fine")).status_code == 201
        finally:
            a.delete(
                f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{config}"
            )


def test_namespace_deleted_on_a_refuses_creates_on_b(
    a: httpx.Client, b: httpx.Client, c: httpx.Client
) -> None:
    name = unique("doomed")
    # A finalizer of its own holds the namespace in Terminating once it is emptied.
    create_namespace(a, name, finalizers=["example.com/hold"])
    assert a.post(cm_path(name), json=configmap("before")).status_code == 201
    deleted = a.delete(f"/api/v1/namespaces/{name}")
    assert deleted.status_code == 200, deleted.text
    eventually(
        lambda: (
            b.post(cm_path(name), params={"dryRun": "All"}, json=configmap("probe")).status_code
            == 403
        ),
        what="B to see the namespace terminating",
    )
    response = b.post(cm_path(name), json=configmap("late"))
    assert_status(
        response,
        403,
        "Forbidden",
        f'configmaps "late" is forbidden: unable to create new content in namespace {name} '
        "because it is being terminated",
        {
            "name": "late",
            "kind": "configmaps",
            "causes": [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {name} is being terminated",
                    "field": "metadata.namespace",
                }
            ],
        },
    )
    assert b.get(cm_path(name, "late")).status_code == 404
    # Every server's namespace controller empties it and drops its finalizer (they race;
    # that must not matter); the namespace's own finalizer holds it.
    eventually(
        lambda: (
            c.get(f"/api/v1/namespaces/{name}").json()["spec"]["finalizers"] == ["example.com/hold"]
        ),
        what=f"the controllers to finalize {name}",
    )
    assert a.get(cm_path(name)).json()["items"] == []
    # Released on C: the namespace goes, everywhere.
    namespace = c.get(f"/api/v1/namespaces/{name}").json()
    namespace["spec"]["finalizers"] = []
    assert c.put(f"/api/v1/namespaces/{name}/finalize", json=namespace).status_code == 200
    for http in (a, b, c):
        eventually(
            lambda http=http: http.get(f"/api/v1/namespaces/{name}").status_code == 404,
            what=f"{name} gone",
        )
    assert_status(
        b.post(cm_path(name), json=configmap("after")),
        404,
        "NotFound",
        f'namespaces "{name}" not found',
    )


def test_sigkilled_server_leaves_the_others_serving(
    ha: Cluster, a: httpx.Client, b: httpx.Client, ns: str
) -> None:
    doomed = ha.start(unique("d"))
    with doomed.client() as d:
        assert d.post(cm_path(ns), json=configmap("from-d")).status_code == 201
    doomed.stop(signal.SIGKILL)
    assert doomed.process.returncode == -signal.SIGKILL
    assert b.get(cm_path(ns, "from-d")).status_code == 200
    created = a.post(cm_path(ns), json=configmap("after-kill"))
    assert created.status_code == 201, created.text
    got = b.get(cm_path(ns, "after-kill"))
    assert got.status_code == 200, got.text
    assert got.json() == created.json()
    for http in (a, b):
        assert http.get("/readyz").status_code == 200
