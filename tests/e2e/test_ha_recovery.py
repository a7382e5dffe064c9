"""A server whose watches broke catches up: it lists again and serves what changed meanwhile.

Server B is frozen (SIGSTOP) while etcd restarts, A deletes one CRD, creates
another and deletes a namespace, and the history is compacted: when B runs
again its watches cannot resume (connection gone, revision compacted), and
every cache and controller must list afresh, dropping what was deleted and
adding what was created in the gap, without waiting for a further change.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers.crds import CRDS, crd_of, established
from tests.helpers.ha import Cluster, cluster, configmap, create_namespace
from tests.helpers.status import assert_status
from tests.helpers.wait import eventually

#: How long a server may take to reach etcd again after etcd restarted (its client's
#: reconnection backoff; a request meanwhile waits out the backend's 5 s budget).
RECONNECT = 60.0
SPEC = {"type": "object", "properties": {"size": {"type": "integer"}}}


@pytest.fixture
def ha(tmp_path: Path) -> Iterator[Cluster]:
    with cluster(tmp_path, "a", "b") as started:
        yield started


def served(http: httpx.Client, group: str) -> bool:
    return http.get(f"/apis/{group}/v1").status_code == 200


def status_of(request: Callable[[], httpx.Response]) -> int:
    """The request's status code, or 0 when it timed out (the server still reconnecting)."""
    try:
        return request().status_code
    except httpx.TimeoutException:
        return 0


def test_frozen_server_relists_after_compaction_and_etcd_restart(ha: Cluster) -> None:
    a, b = (server.client() for server in ha.servers)
    with a, b:
        old = crd_of("old.example.com", "olds", "Old", SPEC)
        assert a.post(CRDS, json=old).status_code == 201
        eventually(lambda: served(b, "old.example.com"), what="old served by B")
        create_namespace(a, "held", finalizers=["example.com/hold"])
        eventually(lambda: b.get("/api/v1/namespaces/held").status_code == 200, what="held on B")

        # B frozen, etcd restarted: B's watches are cut before anything below is written,
        # so no event of it can reach B through them.
        os.kill(ha.servers[1].process.pid, signal.SIGSTOP)
        try:
            ha.etcd.stop()
            ha.etcd.start()
            ha.etcd.wait_healthy()
            eventually(
                # 404: an attempt that timed out here went through.
                lambda: (
                    status_of(lambda: a.delete(f"{CRDS}/{old['metadata']['name']}")) in (200, 404)
                ),
                what="A to reach etcd again",
                timeout=RECONNECT,
            )
            eventually(
                lambda: a.get(f"{CRDS}/{old['metadata']['name']}").status_code == 404,
                what="old deleted",
            )
            new = crd_of("new.example.com", "news", "New", SPEC)
            assert a.post(CRDS, json=new).status_code == 201
            eventually(lambda: established(a, new["metadata"]["name"]), what="new established")
            assert a.delete("/api/v1/namespaces/held").status_code == 200
            revision = a.get("/api/v1/namespaces").json()["metadata"]["resourceVersion"]
            ha.etcd.etcdctl("compact", revision)
        finally:
            os.kill(ha.servers[1].process.pid, signal.SIGCONT)

        # B catches up without any further write.
        eventually(lambda: served(b, "new.example.com"), what="new served by B", timeout=RECONNECT)
        eventually(lambda: not served(b, "old.example.com"), what="old no longer served by B")
        eventually(
            lambda: (
                b.post(
                    "/api/v1/namespaces/held/configmaps",
                    params={"dryRun": "All"},
                    json=configmap("probe"),
                ).status_code
                == 403
            ),
            what="B to see held terminating",
        )
        assert_status(
            b.get("/apis/old.example.com/v1/namespaces/default/olds"),
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        created = b.post(
            "/apis/new.example.com/v1/namespaces/default/news",
            json={"apiVersion": "new.example.com/v1", "kind": "New", "metadata": {"name": "n"}},
        )
        assert created.status_code == 201, created.text
        assert a.get("/apis/new.example.com/v1/namespaces/default/news/n").json() == created.json()
