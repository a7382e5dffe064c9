"""Two kapi servers on one etcd compact it once per interval between them.

Both run ``--compaction-interval`` short; they take turns through
kube-apiserver's ``compact_rev_key`` key, so etcd compacts once per claimed
round (its log names every compaction), never once per server, and a list at
a revision compacted away is refused alike by both.  Nothing here asserts how
long anything took; the waits are bounded.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import httpx

from tests.helpers.ha import cluster, configmap, create_namespace
from tests.helpers.status import assert_status
from tests.helpers.wait import eventually

#: Upstream's message for a list at a compacted resourceVersion.
LIST_TOO_OLD = "The resourceVersion for the provided list is too old."
NAMESPACE = "compaction"
#: The claimed rounds to wait for, at least.
ROUNDS = 5


def _compact_rev_key(etcd_json: str) -> tuple[int, int] | None:
    kvs = json.loads(etcd_json).get("kvs") or []
    if not kvs:
        return None
    return int(kvs[0]["version"]), int(base64.b64decode(kvs[0]["value"]))


def _list_at(http: httpx.Client, revision: str) -> httpx.Response:
    return http.get(
        f"/api/v1/namespaces/{NAMESPACE}/configmaps",
        params={"resourceVersion": revision, "resourceVersionMatch": "Exact"},
    )


def test_two_servers_compact_once_per_claimed_round(tmp_path: Path) -> None:
    with cluster(tmp_path) as ha:
        servers = [ha.start(name, "--compaction-interval", "0.5") for name in ("a", "b")]
        with servers[0].client() as a, servers[1].client() as b:
            create_namespace(a, NAMESPACE)
            created = a.post(f"/api/v1/namespaces/{NAMESPACE}/configmaps", json=configmap("first"))
            assert created.status_code == 201, created.text
            old = created.json()["metadata"]["resourceVersion"]
            at_old = _compact_rev_key(ha.etcd.etcdctl("get", "compact_rev_key", "-w", "json"))
            # The next round notes a revision past ``old``, the one after compacts to it.
            rounds = max(ROUNDS, (at_old[0] if at_old else 0) + 3)
            writes = iter(range(1_000_000))

            def enough_rounds() -> bool:
                http = a if next(writes) % 2 else b
                answer = http.post(
                    f"/api/v1/namespaces/{NAMESPACE}/configmaps",
                    json=configmap(f"later-{next(writes)}"),
                )
                assert answer.status_code == 201, answer.text
                key = _compact_rev_key(ha.etcd.etcdctl("get", "compact_rev_key", "-w", "json"))
                return key is not None and key[0] >= rounds

            eventually(enough_rounds, what=f"{rounds} compaction rounds", timeout=60, interval=0.2)
            for http in (a, b):
                assert_status(_list_at(http, old), 410, "Expired", LIST_TOO_OLD)
            # The object itself is still there, at its latest state.
            assert a.get(f"/api/v1/namespaces/{NAMESPACE}/configmaps/first").status_code == 200
        for server in servers:
            server.stop()
        key = _compact_rev_key(ha.etcd.etcdctl("get", "compact_rev_key", "-w", "json"))
        assert key is not None
        claimed, last = key
        log = (ha.etcd.data_dir / "etcd.log").read_text(errors="replace")
        compactions = [int(r) for r in re.findall(r"mvcc: store\.index: compact (\d+)", log)]
    # No revision compacted twice, and one compaction per claimed round but the
    # first (which only notes a revision); a server stopped between its claim and
    # its compaction leaves the last round without one.
    assert compactions == sorted(set(compactions))
    assert claimed - 2 <= len(compactions) <= claimed - 1
    if len(compactions) == claimed - 1:
        assert compactions[-1] == last  # the last claim's revision
    else:
        assert compactions[-1] < last
