"""The official ``kubernetes`` Python client drives kapi as it drives kube-apiserver."""

from __future__ import annotations

import datetime
import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client, config, watch
from kubernetes.client import ApiException
from kubernetes.client import rest as k8s_rest
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import NotFoundError, UnprocessibleEntityError

from tests.conftest import KapiServer
from tests.helpers.crds import GROUP as CRD_GROUP
from tests.helpers.crds import crontab_crd, established
from tests.helpers.wait import eventually


@pytest.fixture
def api_client(kapi_server: KapiServer) -> Iterator[client.ApiClient]:
    api = config.new_client_from_config(config_file=str(kapi_server.kubeconfig))
    try:
        yield api
    finally:
        api.close()


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict[str, str]]]:
    """(method, url, headers) of every request the official client sends, as sent."""
    sent: list[tuple[str, str, dict[str, str]]] = []
    original = k8s_rest.RESTClientObject.request

    def request(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        response = original(self, method, url, *args, **kwargs)
        # the REST layer adjusts Content-Type in place before sending
        sent.append((method, url, dict(kwargs.get("headers") or {})))
        return response

    monkeypatch.setattr(k8s_rest.RESTClientObject, "request", request)
    return sent


def _configmap(name: str, data: dict[str, str], labels: dict[str, str] | None = None) -> Any:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels), data=data)


def _body(error: ApiException) -> dict[str, Any]:
    return json.loads(error.body)


def test_configmap_lifecycle(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(
        namespace, _configmap("cm", {"k": "v"}, {"app": "demo"})
    )
    assert created.metadata.name == "cm"
    assert created.metadata.namespace == namespace
    assert created.metadata.uid
    assert created.metadata.resource_version
    assert created.data == {"k": "v"}

    read = core.read_namespaced_config_map("cm", namespace)
    assert read.metadata.uid == created.metadata.uid
    assert read.metadata.resource_version == created.metadata.resource_version
    assert read.data == {"k": "v"}

    read.data["k"] = "replaced"
    replaced = core.replace_namespaced_config_map("cm", namespace, read)
    assert replaced.data == {"k": "replaced"}
    assert int(replaced.metadata.resource_version) > int(read.metadata.resource_version)

    core.delete_namespaced_config_map("cm", namespace)
    with pytest.raises(ApiException) as info:
        core.read_namespaced_config_map("cm", namespace)
    assert info.value.status == 404


def test_list_with_label_selector(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, _configmap("a", {}, {"tier": "web"}))
    core.create_namespaced_config_map(namespace, _configmap("b", {}, {"tier": "db"}))
    core.create_namespaced_config_map(namespace, _configmap("c", {}, {"tier": "web"}))

    everything = core.list_namespaced_config_map(namespace)
    assert [i.metadata.name for i in everything.items] == ["a", "b", "c"]
    assert everything.metadata.resource_version

    web = core.list_namespaced_config_map(namespace, label_selector="tier=web")
    assert [i.metadata.name for i in web.items] == ["a", "c"]
    not_web = core.list_namespaced_config_map(namespace, label_selector="tier notin (web)")
    assert [i.metadata.name for i in not_web.items] == ["b"]
    by_name = core.list_namespaced_config_map(namespace, field_selector="metadata.name=b")
    assert [i.metadata.name for i in by_name.items] == ["b"]

    across = core.list_config_map_for_all_namespaces(label_selector="tier=db")
    assert (namespace, "b") in {(i.metadata.namespace, i.metadata.name) for i in across.items}


def test_patch_content_types(
    core: client.CoreV1Api,
    namespace: str,
    wire: list[tuple[str, str, dict[str, str]]],
) -> None:
    """A dict body goes out as a strategic merge patch, a list as a JSON patch."""
    core.create_namespaced_config_map(namespace, _configmap("p", {"a": "1"}))

    patched = core.patch_namespaced_config_map("p", namespace, {"data": {"b": "2"}})
    assert patched.data == {"a": "1", "b": "2"}
    assert wire[-1][0] == "PATCH"
    assert wire[-1][2]["Content-Type"] == "application/strategic-merge-patch+json"

    patched = core.patch_namespaced_config_map(
        "p", namespace, [{"op": "replace", "path": "/data/a", "value": "one"}]
    )
    assert patched.data == {"a": "one", "b": "2"}
    assert wire[-1][2]["Content-Type"] == "application/json-patch+json"

    patched = core.patch_namespaced_config_map(
        "p",
        namespace,
        {"data": {"b": None, "c": "3"}},
        _content_type="application/merge-patch+json",
    )
    assert patched.data == {"a": "one", "c": "3"}
    assert wire[-1][2]["Content-Type"] == "application/merge-patch+json"

    assert core.read_namespaced_config_map("p", namespace).data == {"a": "one", "c": "3"}


def test_watch_sees_changes_made_meanwhile(core: client.CoreV1Api, namespace: str) -> None:
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    writes: dict[str, str] = {}
    failures: list[BaseException] = []

    def writer() -> None:
        try:
            time.sleep(0.2)
            created = core.create_namespaced_config_map(namespace, _configmap("w", {"n": "0"}))
            writes["ADDED"] = created.metadata.resource_version
            patched = core.patch_namespaced_config_map("w", namespace, {"data": {"n": "1"}})
            writes["MODIFIED"] = patched.metadata.resource_version
            core.delete_namespaced_config_map("w", namespace)
        except BaseException as exc:  # surfaced by the main thread
            failures.append(exc)

    events: list[tuple[str, str, str, dict[str, str] | None]] = []
    thread = threading.Thread(target=writer)
    watcher = watch.Watch()
    deadline = time.monotonic() + 15
    thread.start()
    try:
        for event in watcher.stream(
            core.list_namespaced_config_map,
            namespace,
            resource_version=start,
            timeout_seconds=10,
        ):
            obj = event["object"]
            events.append(
                (event["type"], obj.metadata.name, obj.metadata.resource_version, obj.data)
            )
            if event["type"] == "DELETED" or time.monotonic() > deadline:
                break
    finally:
        watcher.stop()
        thread.join(10)
    assert not failures, failures
    assert [(t, n) for t, n, _, _ in events] == [
        ("ADDED", "w"),
        ("MODIFIED", "w"),
        ("DELETED", "w"),
    ]
    assert events[0][2] == writes["ADDED"]
    assert events[0][3] == {"n": "0"}
    assert events[1][2] == writes["MODIFIED"]
    assert events[1][3] == {"n": "1"}
    assert int(events[2][2]) > int(writes["MODIFIED"])


def test_watch_ends_at_timeout(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, _configmap("existing", {}))
    started = time.monotonic()
    seen = [
        (e["type"], e["object"].metadata.name)
        for e in watch.Watch().stream(core.list_namespaced_config_map, namespace, timeout_seconds=1)
    ]
    assert seen == [("ADDED", "existing")]
    assert time.monotonic() - started < 30  # the stream ended on its own


def test_not_found_exception(core: client.CoreV1Api, namespace: str) -> None:
    with pytest.raises(ApiException) as info:
        core.read_namespaced_config_map("absent", namespace)
    error = info.value
    assert error.status == 404
    assert error.reason == "Not Found"
    body = _body(error)
    assert body["kind"] == "Status"
    assert body["reason"] == "NotFound"
    assert body["message"] == 'configmaps "absent" not found'
    assert body["details"] == {"name": "absent", "kind": "configmaps"}


def test_conflict_exception(core: client.CoreV1Api, namespace: str) -> None:
    stale = core.create_namespaced_config_map(namespace, _configmap("c", {"v": "1"}))
    core.patch_namespaced_config_map("c", namespace, {"data": {"v": "2"}})

    stale.data = {"v": "stale"}
    with pytest.raises(ApiException) as info:
        core.replace_namespaced_config_map("c", namespace, stale)
    error = info.value
    assert error.status == 409
    assert error.reason == "Conflict"
    body = _body(error)
    assert body["reason"] == "Conflict"
    assert body["message"] == (
        'Operation cannot be fulfilled on configmaps "c": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert core.read_namespaced_config_map("c", namespace).data == {"v": "2"}


def test_already_exists_exception(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, _configmap("dup", {}))
    with pytest.raises(ApiException) as info:
        core.create_namespaced_config_map(namespace, _configmap("dup", {}))
    assert info.value.status == 409
    assert _body(info.value)["reason"] == "AlreadyExists"


def test_leases(api_client: client.ApiClient, kapi_server: KapiServer, namespace: str) -> None:
    leases = client.CoordinationV1Api(api_client)
    acquired = datetime.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=datetime.UTC)
    created = leases.create_namespaced_lease(
        namespace,
        client.V1Lease(
            metadata=client.V1ObjectMeta(name="leader"),
            spec=client.V1LeaseSpec(
                holder_identity="node-a", lease_duration_seconds=15, acquire_time=acquired
            ),
        ),
    )
    assert created.spec.holder_identity == "node-a"

    read = leases.read_namespaced_lease("leader", namespace)
    assert read.spec.holder_identity == "node-a"
    assert read.spec.lease_duration_seconds == 15
    assert read.spec.acquire_time == acquired
    # on the wire a MicroTime is RFC 3339 with six fractional digits, in UTC
    raw = httpx.get(
        f"{kapi_server.url}/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/leader"
    ).json()
    assert raw["spec"]["acquireTime"] == "2024-01-02T03:04:05.123456Z"

    renewed = leases.patch_namespaced_lease(
        "leader", namespace, {"spec": {"holderIdentity": "node-b", "leaseTransitions": 1}}
    )
    assert renewed.spec.holder_identity == "node-b"
    assert renewed.spec.lease_transitions == 1
    listed = leases.list_namespaced_lease(namespace)
    assert [lease.metadata.name for lease in listed.items] == ["leader"]


def test_pod_disruption_budgets(api_client: client.ApiClient, namespace: str) -> None:
    policy = client.PolicyV1Api(api_client)
    created = policy.create_namespaced_pod_disruption_budget(
        namespace,
        client.V1PodDisruptionBudget(
            metadata=client.V1ObjectMeta(name="pdb"),
            spec=client.V1PodDisruptionBudgetSpec(
                min_available=1,
                selector=client.V1LabelSelector(match_labels={"app": "web"}),
            ),
        ),
    )
    assert created.metadata.generation == 1
    assert created.spec.min_available == 1

    read = policy.read_namespaced_pod_disruption_budget("pdb", namespace)
    assert read.spec.selector.match_labels == {"app": "web"}
    assert read.spec.min_available == 1
    assert read.status.disruptions_allowed == 0
    assert read.status.expected_pods == 0

    with pytest.raises(ApiException) as info:
        policy.create_namespaced_pod_disruption_budget(
            namespace,
            client.V1PodDisruptionBudget(
                metadata=client.V1ObjectMeta(name="both"),
                spec=client.V1PodDisruptionBudgetSpec(min_available=1, max_unavailable=1),
            ),
        )
    assert info.value.status == 422
    body = _body(info.value)
    assert body["reason"] == "Invalid"
    assert body["details"]["kind"] == "PodDisruptionBudget"
    assert body["details"]["group"] == "policy"


# --- DynamicClient: resources found through discovery ----------------------------------------


@pytest.fixture
def dynamic(api_client: client.ApiClient, tmp_path: Path) -> DynamicClient:
    """A DynamicClient with a discovery cache of its own (it would share one per host)."""
    return DynamicClient(api_client, cache_file=str(tmp_path / "discovery.json"))


def _lowercase_id() -> str:
    return "".join(chr(ord("a") + int(c, 16)) for c in uuid.uuid4().hex[:10])


def _watch_until_deleted(resource: Any, namespace: str, since: str) -> list[tuple[str, Any]]:
    """Replay the events after ``since`` through ``kubernetes.watch.Watch``, up to DELETED."""
    watcher = watch.Watch()
    events: list[tuple[str, Any]] = []
    try:
        for event in resource.watch(
            namespace=namespace, resource_version=since, timeout=10, watcher=watcher
        ):
            events.append((event["type"], event["raw_object"]))
            if event["type"] == "DELETED":
                break
    finally:
        watcher.stop()
    return events


def test_dynamic_client_configmaps(dynamic: DynamicClient, namespace: str) -> None:
    configmaps = dynamic.resources.get(api_version="v1", kind="ConfigMap")
    assert (configmaps.name, configmaps.namespaced, configmaps.group) == ("configmaps", True, "")
    since = configmaps.get(namespace=namespace).metadata.resourceVersion

    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dyn"}}
    created = configmaps.create(body={**body, "data": {"a": "1"}}, namespace=namespace)
    assert (created.metadata.name, created.metadata.namespace) == ("dyn", namespace)
    assert configmaps.get(name="dyn", namespace=namespace).data.to_dict() == {"a": "1"}
    listed = configmaps.get(namespace=namespace, field_selector="metadata.name=dyn")
    assert [item.metadata.name for item in listed.items] == ["dyn"]

    strategic = configmaps.patch(name="dyn", namespace=namespace, body={"data": {"b": "2"}})
    assert strategic.data.to_dict() == {"a": "1", "b": "2"}
    merged = configmaps.patch(
        name="dyn",
        namespace=namespace,
        body={"data": {"a": None}},
        content_type="application/merge-patch+json",
    )
    assert merged.data.to_dict() == {"b": "2"}

    deleted = configmaps.delete(name="dyn", namespace=namespace)
    assert (deleted.kind, deleted.status) == ("Status", "Success")
    assert deleted.details.name == "dyn"
    with pytest.raises(NotFoundError) as info:
        configmaps.get(name="dyn", namespace=namespace)
    assert info.value.status == 404

    events = _watch_until_deleted(configmaps, namespace, since)
    assert [(kind, obj["metadata"]["name"]) for kind, obj in events] == [
        ("ADDED", "dyn"),
        ("MODIFIED", "dyn"),
        ("MODIFIED", "dyn"),
        ("DELETED", "dyn"),
    ]
    assert [obj.get("data") for _, obj in events] == [
        {"a": "1"},
        {"a": "1", "b": "2"},
        {"b": "2"},
        {"b": "2"},
    ]
    assert events[0][1]["metadata"]["uid"] == created.metadata.uid


def test_dynamic_client_custom_resources(
    dynamic: DynamicClient, kapi_server: KapiServer, namespace: str
) -> None:
    plural = f"dyn{_lowercase_id()}s"
    kind = plural[:-1].capitalize()
    crd = crontab_crd(plural=plural, kind=kind)
    with kapi_server.client() as http:
        response = http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
        assert response.status_code == 201, response.text
        try:
            name = crd["metadata"]["name"]
            eventually(lambda: established(http, name), what=f"{name} established")
            _custom_resource_round_trip(dynamic, namespace, kind)
        finally:
            http.delete(
                f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
            )


def _custom_resource_round_trip(dynamic: DynamicClient, namespace: str, kind: str) -> None:
    # The CRD is new since the client started: discovery is refreshed on the miss.
    resources = dynamic.resources.get(api_version=f"{CRD_GROUP}/v1", kind=kind)
    assert (resources.group_version, resources.namespaced) == (f"{CRD_GROUP}/v1", True)
    since = resources.get(namespace=namespace).metadata.resourceVersion

    body = {
        "apiVersion": f"{CRD_GROUP}/v1",
        "kind": kind,
        "metadata": {"name": "one"},
        "spec": {"cronSpec": "*/5 * * * *", "replicas": 1},
    }
    created = resources.create(body=body, namespace=namespace)
    assert created.spec.replicas == 1
    assert resources.get(name="one", namespace=namespace).spec.cronSpec == "*/5 * * * *"
    assert [i.metadata.name for i in resources.get(namespace=namespace).items] == ["one"]

    # Custom resources take merge and JSON patches (no strategic merge patch).
    merged = resources.patch(
        name="one",
        namespace=namespace,
        body={"spec": {"replicas": 3}},
        content_type="application/merge-patch+json",
    )
    assert merged.spec.replicas == 3
    ops = [{"op": "add", "path": "/spec/image", "value": "busybox"}]
    patched = resources.patch(
        name="one", namespace=namespace, body=ops, content_type="application/json-patch+json"
    )
    assert (patched.spec.image, patched.spec.replicas) == ("busybox", 3)
    with pytest.raises(UnprocessibleEntityError) as invalid:
        resources.patch(
            name="one",
            namespace=namespace,
            body={"spec": {"replicas": 11}},
            content_type="application/merge-patch+json",
        )
    assert json.loads(invalid.value.body)["reason"] == "Invalid"

    resources.delete(name="one", namespace=namespace)
    with pytest.raises(NotFoundError):
        resources.get(name="one", namespace=namespace)

    events = _watch_until_deleted(resources, namespace, since)
    assert [kind for kind, _ in events] == ["ADDED", "MODIFIED", "MODIFIED", "DELETED"]
    assert [obj["spec"].get("replicas") for _, obj in events] == [1, 3, 3, 3]
