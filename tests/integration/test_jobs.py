"""batch/v1 Jobs against a real server: defaults, the generated selector, validation
messages, immutability, the status subresource, and ``kubectl create job`` / ``get jobs``
(kubectl 1.32+ send the Job as protobuf)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer
from tests.helpers.kubectl import Kubectl, make_kubectl
from tests.helpers.protobuf_requests import PROTOBUF_VERSIONS


def jobs(namespace: str) -> str:
    return f"/apis/batch/v1/namespaces/{namespace}/jobs"


def job(name: str, **spec: Any) -> dict[str, Any]:
    template: dict[str, Any] = {
        "spec": {
            "containers": [{"name": "c", "image": "busybox"}],
            "restartPolicy": "Never",
        }
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": template, **spec},
    }


def create(http: httpx.Client, namespace: str, body: dict[str, Any]) -> httpx.Response:
    return http.post(jobs(namespace), json=body)


def assert_invalid(response: httpx.Response, name: str, *causes: str) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    status = response.json()
    assert status["reason"] == "Invalid"
    assert status["details"]["kind"] == "Job"
    assert status["details"]["group"] == "batch"
    got = [f"{c['field']}: {c['message']}" for c in status["details"]["causes"]]
    assert got == list(causes)
    assert status["message"].startswith(f'Job.batch "{name}" is invalid: ')
    return status


def assert_absent(http: httpx.Client, namespace: str, name: str) -> None:
    assert http.get(f"{jobs(namespace)}/{name}").status_code == 404
    assert http.get(jobs(namespace)).json()["items"] == []


def test_create_defaults_and_generated_selector(http: httpx.Client, namespace: str) -> None:
    response = create(http, namespace, job("pi"))
    assert response.status_code == 201, response.text
    created = response.json()
    uid = created["metadata"]["uid"]
    spec = created["spec"]
    assert spec["completions"] == 1
    assert spec["parallelism"] == 1
    assert spec["backoffLimit"] == 6
    assert spec["completionMode"] == "NonIndexed"
    assert spec["suspend"] is False
    assert spec["manualSelector"] is False
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    expected_labels = {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": uid,
        "job-name": "pi",
    }
    assert spec["template"]["metadata"]["labels"] == expected_labels
    assert created["metadata"]["labels"] == expected_labels
    assert created["metadata"]["generation"] == 1
    assert created["status"] == {}
    stored = http.get(f"{jobs(namespace)}/pi").json()
    assert stored["spec"] == spec


def test_pod_failure_policy_defaults_replacement_policy(http: httpx.Client, namespace: str) -> None:
    policy = {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}
    response = create(http, namespace, job("pfp", podFailurePolicy=policy))
    assert response.status_code == 201, response.text
    spec = response.json()["spec"]
    assert spec["podReplacementPolicy"] == "Failed"
    assert spec["podFailurePolicy"]["rules"][0]["onPodConditions"] == [
        {"type": "DisruptionTarget", "status": "True"}
    ]


def test_backoff_limit_per_index_defaults_backoff_limit(http: httpx.Client, namespace: str) -> None:
    body = job("idx", completionMode="Indexed", completions=3, backoffLimitPerIndex=1)
    response = create(http, namespace, body)
    assert response.status_code == 201, response.text
    assert response.json()["spec"]["backoffLimit"] == 2147483647


def test_restart_policy_always_is_refused(http: httpx.Client, namespace: str) -> None:
    body = job("always")
    del body["spec"]["template"]["spec"]["restartPolicy"]
    assert_invalid(
        create(http, namespace, body),
        "always",
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    )
    assert_absent(http, namespace, "always")


def test_negative_counts_are_refused(http: httpx.Client, namespace: str) -> None:
    body = job("neg", completions=-1, parallelism=-2, backoffLimit=-3)
    assert_invalid(
        create(http, namespace, body),
        "neg",
        "spec.parallelism: Invalid value: -2: must be greater than or equal to 0",
        "spec.completions: Invalid value: -1: must be greater than or equal to 0",
        "spec.backoffLimit: Invalid value: -3: must be greater than or equal to 0",
    )
    assert_absent(http, namespace, "neg")


def test_indexed_rules(http: httpx.Client, namespace: str) -> None:
    body = job("ix", completionMode="Indexed", parallelism=1)
    assert_invalid(
        create(http, namespace, body),
        "ix",
        "spec.completions: Required value: when completion mode is Indexed",
    )
    body = job("nix", backoffLimitPerIndex=1)
    assert_invalid(
        create(http, namespace, body),
        "nix",
        "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
    )
    assert http.get(jobs(namespace)).json()["items"] == []


def test_pod_failure_policy_rules(http: httpx.Client, namespace: str) -> None:
    rule = {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0, 2, 1]}}
    body = job("pfr", podFailurePolicy={"rules": [rule]})
    path = "spec.podFailurePolicy.rules[0].onExitCodes.values"
    assert_invalid(
        create(http, namespace, body),
        "pfr",
        f"{path}[0]: Invalid value: 0: must not be 0 for the In operator",
        f"{path}: Invalid value: [0,2,1]: must be ordered",
    )
    body = job("pfr2", podFailurePolicy={"rules": [{"action": "Ignore"}]})
    body["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    assert_invalid(
        create(http, namespace, body),
        "pfr2",
        "spec.podFailurePolicy.rules[0]: Invalid value: "
        "specifying one of OnExitCodes and OnPodConditions is required",
        'spec.template.spec.restartPolicy: Invalid value: "OnFailure": '
        'only "Never" is supported when podFailurePolicy is specified',
    )
    assert http.get(jobs(namespace)).json()["items"] == []


def test_manual_selector_must_match_template(http: httpx.Client, namespace: str) -> None:
    body = job("manual", manualSelector=True, selector={"matchLabels": {"app": "x"}})
    body["spec"]["template"]["metadata"] = {"labels": {"app": "y"}}
    assert_invalid(
        create(http, namespace, body),
        "manual",
        'spec.template.metadata.labels: Invalid value: {"app":"y"}: '
        "`selector` does not match template `labels`",
    )
    body["spec"]["template"]["metadata"]["labels"]["app"] = "x"
    response = create(http, namespace, body)
    assert response.status_code == 201, response.text
    created = response.json()
    assert created["spec"]["selector"] == {"matchLabels": {"app": "x"}}
    assert created["spec"]["template"]["metadata"]["labels"] == {"app": "x"}


def test_selector_not_auto_generated(http: httpx.Client, namespace: str) -> None:
    body = job("gen", selector={"matchLabels": {"app": "x"}})
    body["spec"]["template"]["metadata"] = {"labels": {"app": "x"}}
    response = create(http, namespace, body)
    assert response.status_code == 422, response.text
    causes = response.json()["details"]["causes"]
    assert [(c["field"], c["reason"]) for c in causes] == [("spec.selector", "FieldValueInvalid")]
    # The generated uid label joins the user's selector, which still selects on app=x.
    message = causes[0]["message"]
    assert message.startswith('Invalid value: {"matchLabels":{"app":"x",')
    assert message.endswith("}}: `selector` not auto-generated")
    assert_absent(http, namespace, "gen")


def test_template_and_selector_are_immutable(http: httpx.Client, namespace: str) -> None:
    created = create(http, namespace, job("imm")).json()
    changed = {**created, "spec": {**created["spec"]}}
    template = changed["spec"]["template"]
    changed["spec"]["template"] = {
        **template,
        "spec": {**template["spec"], "containers": [{"name": "c", "image": "nginx"}]},
    }
    response = http.put(f"{jobs(namespace)}/imm", json=changed)
    assert response.status_code == 422, response.text
    causes = response.json()["details"]["causes"]
    assert [(c["field"], c["reason"]) for c in causes] == [("spec.template", "FieldValueInvalid")]
    assert causes[0]["message"].endswith(": field is immutable")
    stored = http.get(f"{jobs(namespace)}/imm").json()
    assert stored["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox"
    assert stored["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]

    changed = {**created, "spec": {**created["spec"], "completions": 5}}
    response = http.put(f"{jobs(namespace)}/imm", json=changed)
    assert response.status_code == 422, response.text
    assert [c["message"] for c in response.json()["details"]["causes"]] == [
        "Invalid value: 5: field is immutable"
    ]
    # Mutable fields still change, and bump the generation.
    changed = {**created, "spec": {**created["spec"], "parallelism": 3}}
    response = http.put(f"{jobs(namespace)}/imm", json=changed)
    assert response.status_code == 200, response.text
    assert response.json()["metadata"]["generation"] == 2


def test_status_subresource(http: httpx.Client, namespace: str) -> None:
    created = create(http, namespace, job("st")).json()
    status = {"active": 1, "startTime": "2024-01-01T00:00:00Z"}
    # The main resource ignores status.
    response = http.put(f"{jobs(namespace)}/st", json={**created, "status": status})
    assert response.status_code == 200, response.text
    assert response.json()["status"] == {}
    current = response.json()
    response = http.put(f"{jobs(namespace)}/st/status", json={**current, "status": status})
    assert response.status_code == 200, response.text
    assert response.json()["status"] == status
    assert response.json()["metadata"]["generation"] == 1
    response = http.put(
        f"{jobs(namespace)}/st/status", json={**response.json(), "status": {"failed": -1}}
    )
    assert response.status_code == 422, response.text
    assert response.json()["details"]["causes"][0]["message"] == (
        "Invalid value: -1: must be greater than or equal to 0"
    )
    assert http.get(f"{jobs(namespace)}/st").json()["status"] == status


def test_discovery_lists_jobs_in_category_all(http: httpx.Client) -> None:
    resources = http.get("/apis/batch/v1").json()["resources"]
    jobs_resource = next(r for r in resources if r["name"] == "jobs")
    assert jobs_resource["categories"] == ["all"]
    assert jobs_resource["kind"] == "Job"
    assert any(r["name"] == "jobs/status" for r in resources)


def test_cronjob_job_template_is_validated_as_a_job_spec(
    http: httpx.Client, namespace: str
) -> None:
    body = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "cj"},
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {
                "spec": {
                    "completions": -1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                }
            },
        },
    }
    url = f"/apis/batch/v1/namespaces/{namespace}/cronjobs"
    response = http.post(url, json=body)
    assert response.status_code == 422, response.text
    assert [f"{c['field']}: {c['message']}" for c in response.json()["details"]["causes"]] == [
        "spec.jobTemplate.spec.completions: Invalid value: -1: must be greater than or equal to 0",
        "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: "
        'valid values: "OnFailure", "Never"',
    ]
    assert http.get(f"{url}/cj").status_code == 404


@pytest.fixture(params=PROTOBUF_VERSIONS)
def pb_kubectl(request: pytest.FixtureRequest, kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(kapi_server, tmp_path, request.param)


@pytest.mark.kubectl
def test_kubectl_create_and_get_job(pb_kubectl: Kubectl, namespace: str) -> None:
    k, ns = pb_kubectl, ("-n", namespace)
    assert k.ok(*ns, "create", "job", "x", "--image=busybox", "--", "echo", "hi").out_lines == [
        "job.batch/x created"
    ]
    created = k.json(*ns, "get", "job", "x")
    assert created["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert created["spec"]["backoffLimit"] == 6
    uid = created["metadata"]["uid"]
    assert created["spec"]["selector"]["matchLabels"] == {"batch.kubernetes.io/controller-uid": uid}
    lines = k.ok(*ns, "get", "jobs").out_lines
    assert lines[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert lines[1].split()[:3] == ["x", "Running", "0/1"]
    wide = k.ok(*ns, "get", "jobs", "-o", "wide").out_lines
    assert wide[0].split() == [
        "NAME",
        "STATUS",
        "COMPLETIONS",
        "DURATION",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    assert wide[1].split()[-3:] == ["x", "busybox", f"batch.kubernetes.io/controller-uid={uid}"]
    assert "job.batch/x" in k.ok(*ns, "get", "all", "-o", "name").out_lines
