"""Atomic structs and ``/scale`` ownership in server-side apply, against ``kapi serve``.

Real kubectl (the newest and an older release), the official Python client and
raw HTTP.  A PodDisruptionBudget's ``spec.selector`` is a LabelSelector,
which upstream makes atomic: it is owned, replaced and conflicted on whole.
Scaling through ``/scale`` makes the scaler the owner of the replicas field of
the object, as kube-apiserver's ScaleHandler does; the sequence of
``TestScaleAllResources`` (k8s.io/kubernetes test/integration/apiserver/apply)
is replayed on a custom resource.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from kubernetes import client, config
from kubernetes.client import ApiException

from tests.conftest import KapiServer
from tests.helpers.crds import established
from tests.helpers.kubectl import TIMESTAMP, Kubectl, make_kubectl
from tests.helpers.wait import eventually

pytestmark = pytest.mark.kubectl

Object = dict[str, Any]
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
GROUP, VERSION, PLURAL = "ssa.example.com", "v1", "scalables"
API_VERSION = f"{GROUP}/{VERSION}"
#: Where an entry's time was (a timestamp, checked); entries from /scale have none upstream.
STAMPED = "<time>"


# -- fixtures ---------------------------------------------------------------------------


@pytest.fixture(params=["1.33", "1.29"])
def kubectl(request: pytest.FixtureRequest, kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(kapi_server, tmp_path, request.param)


@pytest.fixture(scope="module")
def scalables(kapi_server: KapiServer) -> Iterator[str]:
    """A CRD with a scale subresource, established; deleted afterwards."""
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": "scalable", "kind": "Scalable"},
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "replicas": {"type": "integer"},
                                        "image": {"type": "string"},
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {"replicas": {"type": "integer"}},
                                },
                            },
                        }
                    },
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                        },
                    },
                }
            ],
        },
    }
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    with kapi_server.client() as http:
        created = http.post(path, json=crd)
        assert created.status_code == 201, created.text
        name = crd["metadata"]["name"]
        eventually(lambda: established(http, name), what=f"{name} established")
        yield name
        http.delete(f"{path}/{name}")


@pytest.fixture
def http(kapi_server: KapiServer) -> Iterator[httpx.Client]:
    with kapi_server.client() as http:
        yield http


@pytest.fixture
def api_client(kapi_server: KapiServer) -> Iterator[client.ApiClient]:
    api = config.new_client_from_config(config_file=str(kapi_server.kubeconfig))
    try:
        yield api
    finally:
        api.close()


# -- helpers ----------------------------------------------------------------------------


def manifest(tmp_path: Path, name: str, doc: Object) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def entry(manager: str, operation: str, api_version: str, fields: Object, **extra: str) -> Object:
    return {
        "apiVersion": api_version,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": operation,
        **extra,
    }


def stamped(entries: list[Object]) -> list[Object]:
    """``entries`` with each time checked and replaced by :data:`STAMPED`."""
    out = []
    for e in entries:
        if "time" in e:
            assert TIMESTAMP.fullmatch(e["time"]), e
            e = {**e, "time": STAMPED}
        out.append(e)
    return out


def kubectl_managed_fields(kubectl: Kubectl, *target: str) -> list[Object]:
    obj = kubectl.json("get", *target, "--show-managed-fields")
    return stamped(obj["metadata"]["managedFields"])


def pdb(namespace: str, *, min_available: int | None = None, **match: str) -> Object:
    spec: Object = {"selector": {"matchLabels": match}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "budget", "namespace": namespace},
        "spec": spec,
    }


def scalable(namespace: str, **spec: Any) -> Object:
    return {
        "apiVersion": API_VERSION,
        "kind": "Scalable",
        "metadata": {"name": "test", "namespace": namespace},
        "spec": spec,
    }


def conflict_lines(result: Any) -> list[str]:
    """kubectl's first line for a failed apply (the advice that follows is kubectl's own)."""
    assert result.returncode == 1, str(result)
    return result.err_lines[:1]


# -- atomic structs with kubectl --------------------------------------------------------


def test_kubectl_apply_owns_and_conflicts_on_the_selector_whole(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    target = ("pdb", "budget", "-n", namespace)
    first = manifest(tmp_path, "a.yaml", pdb(namespace, min_available=1, a="1", b="2"))
    kubectl.ok("apply", "--server-side", "--field-manager=alice", "-f", first)
    assert kubectl_managed_fields(kubectl, *target) == [
        entry(
            "alice",
            "Apply",
            "policy/v1",
            {"f:spec": {"f:minAvailable": {}, "f:selector": {}}},
            time=STAMPED,
        )
    ]
    other = manifest(tmp_path, "b.yaml", pdb(namespace, c="3"))
    refused = kubectl.run("apply", "--server-side", "--field-manager=bob", "-f", other)
    assert conflict_lines(refused) == [
        'error: Apply failed with 1 conflict: conflict with "alice": .spec.selector'
    ]
    # alice drops a label: the selector is replaced, not merged into.
    fewer = manifest(tmp_path, "a2.yaml", pdb(namespace, min_available=1, a="1"))
    kubectl.ok("apply", "--server-side", "--field-manager=alice", "-f", fewer)
    assert kubectl.json("get", *target)["spec"]["selector"] == {"matchLabels": {"a": "1"}}
    # Forced, bob takes the whole selector.
    kubectl.ok("apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-f", other)
    obj = kubectl.json("get", *target, "--show-managed-fields")
    assert obj["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"c": "3"}}}
    assert [(e["manager"], e["fieldsV1"]) for e in obj["metadata"]["managedFields"]] == [
        ("alice", {"f:spec": {"f:minAvailable": {}}}),
        ("bob", {"f:spec": {"f:selector": {}}}),
    ]


def test_strategic_patch_still_replaces_the_v1_selector(
    kubectl: Kubectl, namespace: str, tmp_path: Path
) -> None:
    target = ("pdb", "budget", "-n", namespace)
    path = manifest(tmp_path, "a.yaml", pdb(namespace, min_available=1, a="1"))
    kubectl.ok("apply", "--server-side", "--field-manager=alice", "-f", path)
    kubectl.ok("patch", *target, "-p", '{"spec":{"selector":{"matchLabels":{"z":"9"}}}}')
    assert kubectl.json("get", *target)["spec"]["selector"] == {"matchLabels": {"z": "9"}}
    assert kubectl_managed_fields(kubectl, *target) == [
        entry("alice", "Apply", "policy/v1", {"f:spec": {"f:minAvailable": {}}}, time=STAMPED),
        entry("kubectl-patch", "Update", "policy/v1", {"f:spec": {"f:selector": {}}}, time=STAMPED),
    ]
    refused = kubectl.run("apply", "--server-side", "--field-manager=alice", "-f", path)
    assert conflict_lines(refused) == [
        'error: Apply failed with 1 conflict: conflict with "kubectl-patch" using policy/v1: '
        ".spec.selector"
    ]


# -- /scale with kubectl ----------------------------------------------------------------


def test_kubectl_scale_owns_the_replicas_until_an_apply_forces_them_back(
    kubectl: Kubectl, scalables: str, namespace: str, tmp_path: Path
) -> None:
    target = ("scalable", "test", "-n", namespace)
    path = manifest(tmp_path, "s.yaml", scalable(namespace, replicas=1, image="nginx"))
    kubectl.ok("apply", "--server-side", "-f", path)
    kubectl.ok("scale", *target[:2], "-n", namespace, "--replicas=3")
    # kubectl scale names no manager: it is its User-Agent's product, the binary's name.
    scaler = Path(kubectl.binary).name
    assert kubectl.json("get", *target)["spec"] == {"image": "nginx", "replicas": 3}
    assert kubectl_managed_fields(kubectl, *target) == [
        entry("kubectl", "Apply", API_VERSION, {"f:spec": {"f:image": {}}}, time=STAMPED),
        entry(scaler, "Update", API_VERSION, {"f:spec": {"f:replicas": {}}}, subresource="scale"),
    ]
    other = manifest(tmp_path, "o.yaml", scalable(namespace, replicas=1))
    refused = kubectl.run("apply", "--server-side", "--field-manager=other", "-f", other)
    assert conflict_lines(refused) == [
        f'error: Apply failed with 1 conflict: conflict with "{scaler}" with subresource '
        f'"scale" using {API_VERSION}: .spec.replicas'
    ]
    kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", path)
    assert kubectl.json("get", *target)["spec"] == {"image": "nginx", "replicas": 1}
    assert kubectl_managed_fields(kubectl, *target) == [
        entry(
            "kubectl",
            "Apply",
            API_VERSION,
            {"f:spec": {"f:image": {}, "f:replicas": {}}},
            time=STAMPED,
        )
    ]


# -- /scale over HTTP: upstream's TestScaleAllResources ---------------------------------


def _object_path(namespace: str) -> str:
    return f"/apis/{API_VERSION}/namespaces/{namespace}/{PLURAL}/test"


def _write(
    http: httpx.Client, method: str, path: str, body: Object, media: str, **query: str
) -> httpx.Response:
    return http.request(method, path, params=query, json=body, headers={"content-type": media})


def _replicas_owners(http: httpx.Client, namespace: str) -> tuple[int, list[str]]:
    obj = http.get(_object_path(namespace)).json()
    owners = [
        e["manager"]
        for e in obj["metadata"]["managedFields"]
        if "f:replicas" in e["fieldsV1"].get("f:spec", {})
    ]
    return obj["spec"]["replicas"], sorted(owners)


def test_scale_subresource_ownership_as_upstream(
    http: httpx.Client, scalables: str, namespace: str
) -> None:
    path = _object_path(namespace)
    scale_path = path + "/scale"
    valid = scalable(namespace, replicas=1)

    def scale(replicas: int) -> Object:
        return {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {"name": "test", "namespace": namespace},
            "spec": {"replicas": replicas},
        }

    created = _write(http, "PATCH", path, valid, APPLY, fieldManager="apply_test")
    assert created.status_code == 201, created.text
    assert _replicas_owners(http, namespace) == (1, ["apply_test"])

    scaled = _write(
        http, "PATCH", scale_path, {"spec": {"replicas": 5}}, MERGE, fieldManager="scale_test"
    )
    assert scaled.status_code == 200, scaled.text
    assert scaled.json()["spec"] == {"replicas": 5}
    assert "managedFields" not in scaled.json()["metadata"]
    assert _replicas_owners(http, namespace) == (5, ["scale_test"])

    refused = _write(http, "PATCH", path, valid, APPLY, fieldManager="apply_test")
    assert refused.status_code == 409, refused.text
    message = f'conflict with "scale_test" with subresource "scale" using {API_VERSION}'
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"Apply failed with 1 conflict: {message}: .spec.replicas",
        "reason": "Conflict",
        "details": {
            "causes": [
                {"reason": "FieldManagerConflict", "message": message, "field": ".spec.replicas"}
            ]
        },
        "code": 409,
    }

    forced = _write(http, "PATCH", path, valid, APPLY, fieldManager="apply_test", force="true")
    assert forced.status_code == 200, forced.text
    assert _replicas_owners(http, namespace) == (1, ["apply_test"])

    # An apply of the Scale conflicts with the object's applier, named in the Scale's terms.
    refused = _write(http, "PATCH", scale_path, scale(17), APPLY, fieldManager="apply_scale")
    assert refused.status_code == 409, refused.text
    assert refused.json()["message"] == (
        'Apply failed with 1 conflict: conflict with "apply_test": .spec.replicas'
    )
    forced = _write(
        http, "PATCH", scale_path, scale(17), APPLY, fieldManager="apply_scale", force="true"
    )
    assert forced.status_code == 200, forced.text
    assert _replicas_owners(http, namespace) == (17, ["apply_scale"])

    replaced = _write(
        http, "PUT", scale_path, scale(7), "application/json", fieldManager="replace_test"
    )
    assert replaced.status_code == 200, replaced.text
    assert _replicas_owners(http, namespace) == (7, ["replace_test"])

    # Applying the value already there shares the field.
    shared = _write(http, "PATCH", scale_path, scale(7), APPLY, fieldManager="co_owning_test")
    assert shared.status_code == 200, shared.text
    assert _replicas_owners(http, namespace) == (7, ["co_owning_test", "replace_test"])

    scaled = _write(
        http, "PATCH", scale_path, {"spec": {"replicas": 5}}, MERGE, fieldManager="scale_test"
    )
    assert scaled.status_code == 200, scaled.text
    assert _replicas_owners(http, namespace) == (5, ["scale_test"])
    # apply_test owned nothing else: its entry is gone.
    assert http.get(path).json()["metadata"]["managedFields"] == [
        entry(
            "scale_test", "Update", API_VERSION, {"f:spec": {"f:replicas": {}}}, subresource="scale"
        )
    ]


def test_scaling_only_the_status_changes_no_ownership(
    http: httpx.Client, scalables: str, namespace: str
) -> None:
    path = _object_path(namespace)
    created = _write(
        http, "PATCH", path, scalable(namespace, replicas=1), APPLY, fieldManager="apply_test"
    )
    assert created.status_code == 201, created.text
    before = http.get(path).json()
    patched = _write(
        http,
        "PATCH",
        path + "/scale",
        {"status": {"replicas": 42}},
        MERGE,
        fieldManager="scale_test",
    )
    assert patched.status_code == 200, patched.text
    after = http.get(path).json()
    assert after["metadata"]["managedFields"] == before["metadata"]["managedFields"]
    assert _replicas_owners(http, namespace) == (1, ["apply_test"])


def test_a_scale_to_zero_leaves_the_replicas_unowned(
    http: httpx.Client, scalables: str, namespace: str
) -> None:
    """A Scale's replicas are ``omitempty``: 0 reads as no value, so nobody takes it."""
    path = _object_path(namespace)
    config = scalable(namespace, replicas=2, image="nginx")
    created = _write(http, "PATCH", path, config, APPLY, fieldManager="apply_test")
    assert created.status_code == 201, created.text
    scaled = _write(
        http, "PATCH", path + "/scale", {"spec": {"replicas": 0}}, MERGE, fieldManager="zero"
    )
    assert scaled.status_code == 200, scaled.text
    assert _replicas_owners(http, namespace) == (0, [])


# -- the official client ----------------------------------------------------------------


def test_official_client_scale_and_selector_conflict(
    api_client: client.ApiClient, scalables: str, namespace: str
) -> None:
    custom = client.CustomObjectsApi(api_client)
    custom.create_namespaced_custom_object(
        GROUP, VERSION, namespace, PLURAL, scalable(namespace, replicas=1), field_manager="maker"
    )
    custom.patch_namespaced_custom_object_scale(
        GROUP, VERSION, namespace, PLURAL, "test", {"spec": {"replicas": 4}}, field_manager="hpa"
    )
    obj = custom.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "test")
    assert stamped(obj["metadata"]["managedFields"]) == [
        # Without a time, the scaler's entry sorts first among the updates.
        entry("hpa", "Update", API_VERSION, {"f:spec": {"f:replicas": {}}}, subresource="scale"),
        entry("maker", "Update", API_VERSION, {"f:spec": {}}, time=STAMPED),
    ]

    policy = client.PolicyV1Api(api_client)
    policy.patch_namespaced_pod_disruption_budget(
        "budget",
        namespace,
        pdb(namespace, min_available=1, a="1"),
        field_manager="alice",
        _content_type=APPLY,
    )
    with pytest.raises(ApiException) as caught:
        policy.patch_namespaced_pod_disruption_budget(
            "budget",
            namespace,
            pdb(namespace, a="2"),
            field_manager="bob",
            _content_type=APPLY,
        )
    assert caught.value.status == 409
    assert yaml.safe_load(caught.value.body)["details"] == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "alice"',
                "field": ".spec.selector",
            }
        ]
    }
    budget = policy.read_namespaced_pod_disruption_budget("budget", namespace)
    assert budget.spec.selector.match_labels == {"a": "1"}
    [owned] = budget.metadata.managed_fields
    assert (owned.manager, owned.fields_v1) == (
        "alice",
        {"f:spec": {"f:minAvailable": {}, "f:selector": {}}},
    )


# -- OpenAPI ----------------------------------------------------------------------------


def test_openapi_publishes_the_atomic_label_selector(http: httpx.Client) -> None:
    name = "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"
    v3 = http.get("/openapi/v3/apis/policy/v1").json()["components"]["schemas"][name]
    v2 = http.get("/openapi/v2").json()["definitions"][name]
    assert v3["x-kubernetes-map-type"] == "atomic"
    assert v2["x-kubernetes-map-type"] == "atomic"
