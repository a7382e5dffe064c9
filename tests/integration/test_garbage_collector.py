"""The garbage collector on a real server: dependents follow their owners out.

Each propagation policy is driven over HTTP (and with kubectl's ``--cascade``),
and the outcome awaited: Background deletes the owner now and its dependents
after; Orphan and Foreground hold the owner with their finalizer until the
collector has orphaned or deleted the dependents.  batch/v1 Jobs orphan by
default and warn as upstream does.  With ``--enable-garbage-collector=false``
no finalizer is added and nothing is collected.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.crds import GROUP, crontab, crontab_crd, install
from tests.helpers.kubectl import Kubectl
from tests.helpers.wait import eventually

JOB_WARNING = (
    "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background "
    "to remove them or set propagationPolicy=Orphan to suppress this warning"
)


def configmap(name: str, *owners: dict[str, Any], block: bool = False) -> dict[str, Any]:
    refs = [
        {
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
            **({"blockOwnerDeletion": True} if block else {}),
        }
        for owner in owners
    ]
    metadata: dict[str, Any] = {"name": name}
    if refs:
        metadata["ownerReferences"] = refs
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}


def create(http: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = http.post(path, json=body)
    assert response.status_code == 201, response.text
    return response.json()


def delete(http: httpx.Client, path: str, options: dict[str, Any]) -> httpx.Response:
    """A DELETE with ``DeleteOptions`` in its body, as kubectl and the clients send them."""
    return http.request("DELETE", path, json={"kind": "DeleteOptions", **options})


def gone(http: httpx.Client, path: str) -> bool:
    return http.get(path).status_code == 404


def test_background_deletes_the_dependents_after_the_owner(
    http: httpx.Client, namespace: str
) -> None:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    owner = create(http, base, configmap("owner"))
    create(http, base, configmap("child", owner))
    create(http, base, configmap("grandchild", create(http, base, configmap("middle", owner))))

    response = http.delete(f"{base}/owner", params={"propagationPolicy": "Background"})
    assert response.status_code == 200, response.text
    assert response.json()["kind"] == "Status"  # gone now: nothing held it
    for name in ("child", "middle", "grandchild"):
        eventually(lambda n=name: gone(http, f"{base}/{n}"), what=f"{name} collected")


def test_a_dependent_of_an_owner_that_never_existed_is_collected(
    http: httpx.Client, namespace: str
) -> None:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    ghost = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "ghost", "uid": str(uuid.uuid4())},
    }
    create(http, base, configmap("orphaned", ghost))
    # A namesake of the owner with another uid is not the owner either.
    create(http, base, configmap("ghost"))
    eventually(lambda: gone(http, f"{base}/orphaned"), what="the dangling dependent collected")
    assert http.get(f"{base}/ghost").status_code == 200


def test_a_dependent_with_an_owner_left_loses_only_the_gone_reference(
    http: httpx.Client, namespace: str
) -> None:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    first, second = create(http, base, configmap("first")), create(http, base, configmap("second"))
    create(http, base, configmap("shared", first, second))
    assert http.delete(f"{base}/first").status_code == 200

    def references() -> list[str] | None:
        refs = http.get(f"{base}/shared").json()["metadata"].get("ownerReferences") or []
        names = [r["name"] for r in refs]
        return names if names == ["second"] else None

    assert eventually(references, what="the reference to the deleted owner dropped") == ["second"]


def test_orphan_keeps_the_dependents_and_takes_the_owner_out_of_them(
    http: httpx.Client, namespace: str
) -> None:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    owner = create(http, base, configmap("owner"))
    create(http, base, configmap("child", owner))

    response = delete(http, f"{base}/owner", {"propagationPolicy": "Orphan"})
    assert response.status_code == 200, response.text
    held = response.json()
    assert held["kind"] == "ConfigMap"
    assert held["metadata"]["finalizers"] == ["orphan"]
    assert held["metadata"]["deletionTimestamp"]
    assert held["metadata"]["deletionGracePeriodSeconds"] == 0

    eventually(lambda: gone(http, f"{base}/owner"), what="the owner released by the collector")
    child = http.get(f"{base}/child")
    assert child.status_code == 200, child.text
    assert "ownerReferences" not in child.json()["metadata"]


def test_foreground_deletes_the_dependents_before_the_owner(
    http: httpx.Client, namespace: str
) -> None:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    owner = create(http, base, configmap("owner"))
    create(http, base, configmap("blocking", owner, block=True))
    create(http, base, configmap("loose", owner))

    response = delete(http, f"{base}/owner", {"propagationPolicy": "Foreground"})
    assert response.status_code == 200, response.text
    assert response.json()["metadata"]["finalizers"] == ["foregroundDeletion"]

    eventually(lambda: gone(http, f"{base}/owner"), what="the owner deleted after its dependents")
    assert gone(http, f"{base}/blocking")
    eventually(lambda: gone(http, f"{base}/loose"), what="the non-blocking dependent collected")


def job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            }
        },
    }


def pod_of(owner: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{owner['metadata']['name']}-pod",
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }


def warnings_of(response: httpx.Response) -> list[str]:
    return [w.split('"')[1] for w in response.headers.get_list("warning")]


def test_batch_v1_jobs_orphan_their_pods_by_default_and_warn(
    http: httpx.Client, namespace: str
) -> None:
    jobs, pods = (
        f"/apis/batch/v1/namespaces/{namespace}/jobs",
        f"/api/v1/namespaces/{namespace}/pods",
    )
    kept = create(http, jobs, job("kept"))
    create(http, pods, pod_of(kept))
    response = http.delete(f"{jobs}/kept")
    assert response.status_code == 200, response.text
    assert warnings_of(response) == [JOB_WARNING]
    assert response.json()["metadata"]["finalizers"] == ["orphan"]
    eventually(lambda: gone(http, f"{jobs}/kept"), what="the job released")
    assert "ownerReferences" not in http.get(f"{pods}/kept-pod").json()["metadata"]

    swept = create(http, jobs, job("swept"))
    create(http, pods, pod_of(swept))
    response = http.delete(f"{jobs}/swept", params={"propagationPolicy": "Background"})
    assert response.status_code == 200, response.text
    assert warnings_of(response) == []
    assert response.json()["kind"] == "Status"
    eventually(lambda: gone(http, f"{pods}/swept-pod"), what="the job's pod collected")


def test_bad_propagation_options_are_refused_and_delete_nothing(
    http: httpx.Client, namespace: str
) -> None:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    create(http, base, configmap("kept"))
    policy = http.delete(f"{base}/kept", params={"propagationPolicy": "Sideways"})
    assert policy.status_code == 422, policy.text
    assert policy.json()["details"]["causes"] == [
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: "Sideways": supported values: "Foreground", '
            '"Background", "Orphan", "nil"',
            "field": "propagationPolicy",
        }
    ]
    orphan = http.delete(f"{base}/kept", params={"orphanDependents": "maybe"})
    assert orphan.status_code == 400, orphan.text
    assert http.get(f"{base}/kept").status_code == 200


def test_kubectl_cascade_foreground_and_orphan(
    kubectl: Kubectl, http: httpx.Client, namespace: str
) -> None:
    """``kubectl delete`` waits until the object is gone: the collector must finish."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    n = ("-n", namespace)
    kubectl.ok(*n, "create", "configmap", "parent")
    create(
        http, base, configmap("child", kubectl.json(*n, "get", "configmap", "parent"), block=True)
    )
    kubectl.ok(*n, "delete", "configmap", "parent", "--cascade=foreground")
    assert gone(http, f"{base}/child")

    kubectl.ok(*n, "create", "configmap", "parent")
    create(http, base, configmap("child", kubectl.json(*n, "get", "configmap", "parent")))
    kubectl.ok(*n, "delete", "configmap", "parent", "--cascade=orphan")
    kept = kubectl.json(*n, "get", "configmap", "child")
    assert "ownerReferences" not in kept["metadata"]


@pytest.fixture(scope="module")
def no_collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "no-gc", "--enable-garbage-collector=false")


def test_without_the_collector_deletes_leave_no_finalizer(no_collector: KapiServer) -> None:
    with no_collector.client() as http:
        ns = create(http, "/api/v1/namespaces", {"metadata": {"name": "no-gc"}})["metadata"]["name"]
        jobs = f"/apis/batch/v1/namespaces/{ns}/jobs"
        owner = create(http, jobs, job("plain"))
        response = delete(http, f"{jobs}/plain", {"propagationPolicy": "Orphan"})
        assert response.status_code == 200, response.text
        assert response.json()["kind"] == "Status"
        assert gone(http, f"{jobs}/plain")
        base = f"/api/v1/namespaces/{ns}/configmaps"
        create(http, base, configmap("dangling", owner))
        assert http.get(f"{base}/dangling").json()["metadata"]["ownerReferences"]


def test_a_custom_resource_owner_takes_its_children_along(
    http: httpx.Client, namespace: str
) -> None:
    """The operator pattern: a controller's children name its custom resource as owner."""
    crd = crontab_crd("gcowners", "GcOwner")
    install(http, crd)
    owners = f"/apis/{GROUP}/v1/namespaces/{namespace}/gcowners"
    owner = create(http, owners, {**crontab("tab"), "kind": "GcOwner"})
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    create(http, base, configmap("child", owner))
    assert http.delete(f"{owners}/tab").status_code == 200
    eventually(lambda: gone(http, f"{base}/child"), what="the custom resource's child collected")
