"""The official ``kubernetes`` client's typed batch, autoscaling and rbac APIs against kapi.

Create, list, patch and watch through the generated client classes, which
deserialize kapi's answers into their models: a missing or misnamed field
that the model needs would fail here.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client, config, watch

from tests.conftest import KapiServer


@pytest.fixture
def api(kapi_server: KapiServer) -> Iterator[client.ApiClient]:
    api_client = config.new_client_from_config(config_file=str(kapi_server.kubeconfig))
    try:
        yield api_client
    finally:
        api_client.close()


def _names(events: Iterator[dict]) -> list[tuple[str, str]]:
    return [(e["type"], e["object"].metadata.name) for e in events]


def _pod_template(restart_policy: str) -> client.V1PodTemplateSpec:
    return client.V1PodTemplateSpec(
        spec=client.V1PodSpec(
            restart_policy=restart_policy,
            containers=[client.V1Container(name="work", image="busybox:1.36")],
        )
    )


def test_batch_jobs_and_cronjobs(api: client.ApiClient, namespace: str) -> None:
    batch = client.BatchV1Api(api)
    job = client.V1Job(
        metadata=client.V1ObjectMeta(name="once"),
        spec=client.V1JobSpec(template=_pod_template("Never")),
    )
    made = batch.create_namespaced_job(namespace, job)
    assert made.spec.backoff_limit == 6
    assert made.spec.completions == 1 and made.spec.parallelism == 1
    assert made.spec.selector.match_labels["batch.kubernetes.io/controller-uid"] == (
        made.metadata.uid
    )
    patched = batch.patch_namespaced_job("once", namespace, {"metadata": {"labels": {"x": "y"}}})
    assert patched.metadata.labels["x"] == "y"
    assert [j.metadata.name for j in batch.list_namespaced_job(namespace).items] == ["once"]
    events = watch.Watch().stream(batch.list_namespaced_job, namespace, timeout_seconds=1)
    assert _names(events) == [("ADDED", "once")]

    cronjob = client.V1CronJob(
        metadata=client.V1ObjectMeta(name="nightly"),
        spec=client.V1CronJobSpec(
            schedule="0 3 * * *",
            job_template=client.V1JobTemplateSpec(
                spec=client.V1JobSpec(template=_pod_template("OnFailure"))
            ),
        ),
    )
    made_cron = batch.create_namespaced_cron_job(namespace, cronjob)
    container = made_cron.spec.job_template.spec.template.spec.containers[0]
    assert container.image_pull_policy == "IfNotPresent"
    patched_cron = batch.patch_namespaced_cron_job(
        "nightly", namespace, {"spec": {"suspend": True}}
    )
    assert patched_cron.spec.suspend is True


def test_autoscaling_v2_and_v1(api: client.ApiClient, namespace: str) -> None:
    v2 = client.AutoscalingV2Api(api)
    hpa = client.V2HorizontalPodAutoscaler(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V2HorizontalPodAutoscalerSpec(
            scale_target_ref=client.V2CrossVersionObjectReference(
                api_version="apps/v1", kind="Deployment", name="web"
            ),
            max_replicas=5,
            metrics=[
                client.V2MetricSpec(
                    type="Resource",
                    resource=client.V2ResourceMetricSource(
                        name="cpu",
                        target=client.V2MetricTarget(type="Utilization", average_utilization=60),
                    ),
                )
            ],
        ),
    )
    made = v2.create_namespaced_horizontal_pod_autoscaler(namespace, hpa)
    assert made.spec.min_replicas == 1
    patched = v2.patch_namespaced_horizontal_pod_autoscaler(
        "web", namespace, {"spec": {"maxReplicas": 7}}
    )
    assert patched.spec.max_replicas == 7
    events = watch.Watch().stream(
        v2.list_namespaced_horizontal_pod_autoscaler, namespace, timeout_seconds=1
    )
    assert _names(events) == [("ADDED", "web")]

    v1 = client.AutoscalingV1Api(api)
    (as_v1,) = v1.list_namespaced_horizontal_pod_autoscaler(namespace).items
    assert as_v1.spec.target_cpu_utilization_percentage == 60
    assert as_v1.spec.max_replicas == 7


def test_rbac_watch(api: client.ApiClient, namespace: str) -> None:
    rbac = client.RbacAuthorizationV1Api(api)
    role = client.V1Role(
        metadata=client.V1ObjectMeta(name="reader"),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["configmaps"], verbs=["get"])],
    )
    rbac.create_namespaced_role(namespace, role)
    patched = rbac.patch_namespaced_role(
        "reader",
        namespace,
        {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]},
    )
    assert patched.rules[0].resources == ["pods"]
    events = watch.Watch().stream(rbac.list_namespaced_role, namespace, timeout_seconds=1)
    assert _names(events) == [("ADDED", "reader")]
