"""Job's defaulting, generated selector, validation and table cells, on plain dicts."""

from __future__ import annotations

from typing import Any

from kapi.apis import batch_jobs as jobs
from kapi.apis.core_v1_pod_defaults import default_pod_template


def job(**spec: Any) -> dict[str, Any]:
    """A job whose pod template has the pod defaults (as decoding gives it)."""
    obj: dict[str, Any] = {
        "metadata": {"name": "pi", "uid": "u-1"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            },
            **spec,
        },
    }
    default_pod_template(obj["spec"]["template"])
    return obj


def messages(errs: list) -> list[str]:
    return [e.error_message() for e in errs]


def test_defaults_of_a_plain_job() -> None:
    obj = job()
    jobs.default_job(obj)
    spec = obj["spec"]
    assert {k: v for k, v in spec.items() if k != "template"} == {
        "completions": 1,
        "parallelism": 1,
        "backoffLimit": 6,
        "completionMode": "NonIndexed",
        "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed",
        "manualSelector": False,
    }


def test_defaults_keep_what_is_set() -> None:
    obj = job(completions=4, backoffLimitPerIndex=2, podFailurePolicy={"rules": []})
    jobs.default_job(obj)
    spec = obj["spec"]
    assert spec["completions"] == 4
    assert spec["parallelism"] == 1
    assert spec["backoffLimit"] == 2**31 - 1
    assert spec["podReplacementPolicy"] == "Failed"


def test_template_labels_default_the_job_labels() -> None:
    obj = job()
    obj["spec"]["template"]["metadata"] = {"labels": {"app": "a"}}
    jobs.default_job(obj)
    assert obj["metadata"]["labels"] == {"app": "a"}
    obj = job()
    obj["metadata"]["labels"] = {"own": "x"}
    obj["spec"]["template"]["metadata"] = {"labels": {"app": "a"}}
    jobs.default_job(obj)
    assert obj["metadata"]["labels"] == {"own": "x"}


def test_generated_selector_validates() -> None:
    obj = job()
    jobs.default_job(obj)
    jobs.generate_selector(obj)
    assert obj["spec"]["selector"] == {"matchLabels": {jobs.CONTROLLER_UID_LABEL: "u-1"}}
    assert jobs.validate_job(obj) == []


def test_conflicting_template_label_is_refused() -> None:
    obj = job()
    obj["spec"]["template"]["metadata"] = {"labels": {"job-name": "other"}}
    jobs.default_job(obj)
    jobs.generate_selector(obj)
    assert messages(jobs.validate_job(obj)) == [
        "spec.template.metadata.labels[job-name]: Invalid value: "
        '{"batch.kubernetes.io/controller-uid":"u-1","batch.kubernetes.io/job-name":"pi",'
        '"controller-uid":"u-1","job-name":"other"}: must be \'pi\'',
    ]


def test_missing_selector_with_manual_selector() -> None:
    obj = job(manualSelector=True)
    # A nil selector selects nothing, so upstream also reports the template as unmatched.
    assert messages(jobs.validate_job(obj)) == [
        "spec.selector: Required value",
        "spec.template.metadata.labels: Invalid value: null: "
        "`selector` does not match template `labels`",
    ]


def test_restart_policy_rules() -> None:
    obj = job(selector={"matchLabels": {"a": "b"}}, manualSelector=True)
    obj["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    assert messages(jobs.validate_job(obj)) == [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    ]
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Sometimes"
    # The pod spec's own rule reports first, then the job's narrower one.
    assert messages(jobs.validate_job(obj)) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": '
        'supported values: "Always", "OnFailure", "Never"',
        'spec.template.spec.restartPolicy: Unsupported value: "Sometimes": '
        'supported values: "OnFailure", "Never"',
    ]


def test_indexed_job_name_must_leave_room_for_the_index() -> None:
    obj = job(completionMode="Indexed", completions=10, manualSelector=True)
    obj["metadata"]["name"] = "x" * 62
    obj["spec"]["selector"] = {"matchLabels": {"a": "b"}}
    obj["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
    assert messages(jobs.validate_job(obj)) == [
        f'metadata.name: Invalid value: "{"x" * 62}": will not able to create pod with '
        f"invalid DNS label: {'x' * 62}-9"
    ]


def test_pod_failure_policy_messages() -> None:
    rules = [
        {"action": ""},
        {"action": "FailIndex", "onPodConditions": [{"type": "Ready", "status": "Maybe"}]},
        {
            "action": "Count",
            "onExitCodes": {"operator": "In", "values": [1, 1], "containerName": "z"},
        },
    ]
    errs = jobs.validate_job_spec_fields(
        {**job()["spec"], "podFailurePolicy": {"rules": rules}}, jobs.Path("spec")
    )
    base = "spec.podFailurePolicy.rules"
    assert messages(errs) == [
        f'{base}[0].action: Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]',
        f"{base}[0]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
        f'{base}[1].action: Invalid value: "FailIndex": '
        "requires the backoffLimitPerIndex to be set",
        f'{base}[1].onPodConditions[0].status: Unsupported value: "Maybe": '
        'supported values: "False", "True", "Unknown"',
        f'{base}[2].onExitCodes.containerName: Invalid value: "z": '
        "must be one of the container or initContainer names in the pod template",
        f"{base}[2].onExitCodes.values[1]: Duplicate value: 1",
    ]


def test_update_immutability_and_elastic_indexed_jobs() -> None:
    old = job(completions=2, parallelism=2, completionMode="Indexed")["spec"]
    new = {**old, "completions": 3, "parallelism": 3}
    assert jobs.validate_job_spec_update(new, old, mutable_scheduling=False) == []
    new = {**old, "completions": 3}
    assert messages(jobs.validate_job_spec_update(new, old, mutable_scheduling=False)) == [
        "spec.completions: Invalid value: 3: can only be modified in tandem with spec.parallelism"
    ]
    plain = job(completions=2)["spec"]
    assert messages(
        jobs.validate_job_spec_update({**plain, "completions": 3}, plain, mutable_scheduling=False)
    ) == ["spec.completions: Invalid value: 3: field is immutable"]


def test_suspended_job_may_change_scheduling_directives() -> None:
    old = job()["spec"]
    template = {**old["template"], "spec": {**old["template"]["spec"], "nodeSelector": {"a": "b"}}}
    new = {**old, "template": template}
    assert jobs.validate_job_spec_update(new, old, mutable_scheduling=True) == []
    [err] = jobs.validate_job_spec_update(new, old, mutable_scheduling=False)
    assert err.field == "spec.template"
    assert err.detail == "field is immutable"


def test_success_policy_index_parsing() -> None:
    assert jobs.parse_indexes("0-2,5", 6) == (4, None)
    assert jobs.parse_indexes("3-1", 6) == (0, "non-increasing order, previous: 3, current: 1")
    assert jobs.parse_indexes("7", 6) == (0, "too large index: 7")


def test_table_cells() -> None:
    obj = job(completions=3)
    obj["status"] = {
        "succeeded": 2,
        "startTime": "2024-01-01T00:00:00Z",
        "completionTime": "2024-01-01T00:02:05Z",
        "conditions": [{"type": "Complete", "status": "True"}],
    }
    assert jobs.job_status_cell(obj) == "Complete"
    assert jobs.job_completions_cell(obj) == "2/3"
    assert jobs.job_duration_cell(obj) == "2m5s"
    running = job(parallelism=4)
    assert jobs.job_status_cell(running) == "Running"
    assert jobs.job_completions_cell(running) == "0/1 of 4"
    assert jobs.job_duration_cell(running) == ""
    suspended = job()
    suspended["status"] = {"conditions": [{"type": "Suspended", "status": "True"}]}
    assert jobs.job_status_cell(suspended) == "Suspended"
