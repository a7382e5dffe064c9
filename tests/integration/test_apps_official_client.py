"""The official ``kubernetes`` Python client's typed AppsV1Api against kapi."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client, config, watch
from kubernetes.client import ApiException

from tests.conftest import KapiServer


@pytest.fixture
def apps(kapi_server: KapiServer) -> Iterator[client.AppsV1Api]:
    api = config.new_client_from_config(config_file=str(kapi_server.kubeconfig))
    try:
        yield client.AppsV1Api(api)
    finally:
        api.close()


def _deployment(name: str, replicas: int = 1) -> client.V1Deployment:
    labels = {"app": name}
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1DeploymentSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(
                    containers=[client.V1Container(name="web", image="nginx:1.25")]
                ),
            ),
        ),
    )


def test_create_list_patch_scale_watch_delete(apps: client.AppsV1Api, namespace: str) -> None:
    made = apps.create_namespaced_deployment(namespace, _deployment("typed", 2))
    assert made.spec.replicas == 2
    assert made.spec.strategy.rolling_update.max_surge == "25%"
    assert made.spec.template.spec.containers[0].termination_message_path == (
        "/dev/termination-log"
    )
    listed = apps.list_namespaced_deployment(namespace)
    assert [d.metadata.name for d in listed.items] == ["typed"]

    patched = apps.patch_namespaced_deployment(
        "typed", namespace, {"spec": {"template": {"metadata": {"labels": {"tier": "a"}}}}}
    )
    assert patched.spec.template.metadata.labels == {"app": "typed", "tier": "a"}
    assert patched.metadata.generation == 2

    scale = apps.read_namespaced_deployment_scale("typed", namespace)
    assert (scale.spec.replicas, scale.status.selector) == (2, "app=typed")
    apps.patch_namespaced_deployment_scale("typed", namespace, {"spec": {"replicas": 4}})
    assert apps.read_namespaced_deployment("typed", namespace).spec.replicas == 4

    events = watch.Watch().stream(apps.list_namespaced_deployment, namespace, timeout_seconds=1)
    seen = [(e["type"], e["object"].metadata.name) for e in events]
    assert seen == [("ADDED", "typed")]

    apps.delete_namespaced_deployment("typed", namespace)
    with pytest.raises(ApiException) as missing:
        apps.read_namespaced_deployment("typed", namespace)
    assert missing.value.status == 404


def test_validation_error_reaches_the_client(apps: client.AppsV1Api, namespace: str) -> None:
    body = _deployment("bad")
    body.spec.selector = client.V1LabelSelector(match_labels={"app": "other"})
    with pytest.raises(ApiException) as refused:
        apps.create_namespaced_deployment(namespace, body)
    assert refused.value.status == 422
    assert "`selector` does not match template `labels`" in refused.value.body
    assert apps.list_namespaced_deployment(namespace).items == []
