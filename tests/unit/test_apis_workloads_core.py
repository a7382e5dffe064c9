"""Pure rules of core/v1 pods, replication controllers and pod templates."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.apimachinery.errors import StatusError
from kapi.apis.core_v1_pods import (
    BEST_EFFORT,
    BURSTABLE,
    GUARANTEED,
    bind,
    can_ignore_pdb,
    check_and_decrement,
    matching_pdbs,
    pod_qos_class,
    pod_summary,
    readiness_gates_cell,
    selectable_fields,
    validate_binding,
    validate_ephemeral_containers_update,
)
from kapi.apis.core_v1_podtemplates import format_labels
from kapi.apis.core_v1_replicationcontrollers import (
    RC_SCALE,
    default_replication_controller,
    validate_replication_controller_status,
)

Object = dict[str, Any]


def _container(requests: Object | None = None, limits: Object | None = None) -> Object:
    return {"name": "c", "resources": {"requests": requests or {}, "limits": limits or {}}}


@pytest.mark.parametrize(
    ("containers", "init", "expected"),
    [
        ([_container()], [], BEST_EFFORT),
        ([_container({"cpu": "0"})], [], BEST_EFFORT),  # zero amounts do not count
        ([_container({"storage": "1Gi"})], [], BEST_EFFORT),  # only cpu and memory count
        ([_container({"cpu": "1"}, {"cpu": "1"})], [], BURSTABLE),  # memory not limited
        (
            [_container({"cpu": "1", "memory": "1Gi"}, {"cpu": "1000m", "memory": "1024Mi"})],
            [],
            GUARANTEED,
        ),
        (
            [_container({"cpu": "500m", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})],
            [],
            BURSTABLE,
        ),
        (
            [_container({"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})],
            [_container()],  # an init container without limits spoils Guaranteed
            BURSTABLE,
        ),
    ],
)
def test_qos_class(containers: list[Object], init: list[Object], expected: str) -> None:
    assert pod_qos_class({"containers": containers, "initContainers": init}) == expected


def _pod(status: Object, spec: Object | None = None, **metadata: Any) -> Object:
    return {
        "metadata": {"name": "p", "creationTimestamp": "2020-01-01T00:00:00Z", **metadata},
        "spec": spec or {"containers": [{"name": "a"}, {"name": "b"}]},
        "status": status,
    }


def test_pod_summary_running_and_waiting() -> None:
    running = {"running": {"startedAt": "2020-01-01T00:00:00Z"}}
    status = {
        "phase": "Running",
        "containerStatuses": [
            {"name": "a", "ready": True, "restartCount": 0, "state": running},
            {"name": "b", "ready": False, "restartCount": 2, "state": {"waiting": {"reason": "X"}}},
        ],
    }
    assert pod_summary(_pod(status)) == ("1/2", "X", "2")
    assert pod_summary(_pod({"phase": "Pending"})) == ("0/2", "Pending", "0")


def test_pod_summary_init_containers_and_deletion() -> None:
    spec = {"initContainers": [{"name": "i"}], "containers": [{"name": "a"}]}
    status = {
        "phase": "Pending",
        "initContainerStatuses": [{"name": "i", "state": {"terminated": {"exitCode": 3}}}],
    }
    assert pod_summary(_pod(status, spec))[1] == "Init:ExitCode:3"
    waiting = {"phase": "Pending", "initContainerStatuses": [{"name": "i", "state": {}}]}
    assert pod_summary(_pod(waiting, spec))[1] == "Init:0/1"
    deleting = _pod({"phase": "Running"}, deletionTimestamp="2020-01-01T00:00:00Z")
    assert pod_summary(deleting)[1] == "Terminating"
    gated = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "reason": "SchedulingGated"}],
    }
    assert pod_summary(_pod(gated))[1] == "SchedulingGated"


def test_readiness_gates_cell() -> None:
    spec = {"containers": [], "readinessGates": [{"conditionType": "a"}, {"conditionType": "b"}]}
    status = {"conditions": [{"type": "a", "status": "True"}, {"type": "b", "status": "False"}]}
    assert readiness_gates_cell(_pod(status, spec)) == "1/2"
    assert readiness_gates_cell(_pod({})) == "<none>"


def test_selectable_fields() -> None:
    pod = _pod({"phase": "Running", "podIPs": [{"ip": "10.1.1.1"}]}, {"nodeName": "n"})
    fields = selectable_fields({**pod, "metadata": {"name": "p", "namespace": "ns"}})
    assert fields["spec.nodeName"] == "n"
    assert fields["status.podIP"] == "10.1.1.1"
    assert fields["spec.hostNetwork"] == "false"
    assert fields["status.phase"] == "Running"
    assert fields["metadata.namespace"] == "ns"


def test_binding_validation_and_bind() -> None:
    assert [e.error_message() for e in validate_binding({"target": {"kind": "Pod"}})] == [
        'target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
        "target.name: Required value",
    ]
    pod = {"metadata": {"name": "p"}, "spec": {}, "status": {}}
    bound = bind(pod, {"metadata": {"annotations": {"a": "b"}}, "target": {"name": "n1"}})
    assert bound["spec"]["nodeName"] == "n1"
    assert bound["metadata"]["annotations"] == {"a": "b"}
    with pytest.raises(ValueError, match='pod p is already assigned to node "n1"'):
        bind(bound, {"target": {"name": "n2"}})
    gated = {"metadata": {"name": "g"}, "spec": {"schedulingGates": [{"name": "x"}]}}
    with pytest.raises(ValueError, match=r"pod g has non-empty .spec.schedulingGates"):
        bind(gated, {"target": {"name": "n"}})


def test_ephemeral_containers_may_be_added_only() -> None:
    old = {"metadata": {}, "spec": {"ephemeralContainers": [{"name": "d", "image": "busybox"}]}}
    grown = {"spec": {"ephemeralContainers": [*old["spec"]["ephemeralContainers"], {"name": "e"}]}}
    assert validate_ephemeral_containers_update(grown, old) == []
    changed = {"spec": {"ephemeralContainers": [{"name": "d", "image": "alpine"}]}}
    assert [e.error_message() for e in validate_ephemeral_containers_update(changed, old)] == [
        'spec.ephemeralContainers: Forbidden: existing ephemeral containers "d" may not be '
        "changed\n"
    ]
    static = {"metadata": {"annotations": {"kubernetes.io/config.mirror": "x"}}, "spec": {}}
    assert [e.error_message() for e in validate_ephemeral_containers_update(grown, static)] == [
        ": Forbidden: static pods do not support ephemeral containers"
    ]


def _pdb(**status: Any) -> Object:
    return {
        "metadata": {"name": "b", "generation": 1},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
        "status": {"observedGeneration": 1, **status},
    }


def test_check_and_decrement() -> None:
    with pytest.raises(StatusError) as refused:
        full = _pdb(disruptionsAllowed=0, desiredHealthy=2, currentHealthy=2)
        check_and_decrement(full, "p", dry_run=False)
    assert refused.value.code == 429
    assert refused.value.details == {
        "causes": [
            {
                "reason": "DisruptionBudget",
                "message": "The disruption budget b needs 2 healthy pods and has 2 currently",
            }
        ]
    }
    with pytest.raises(StatusError) as negative:
        check_and_decrement(_pdb(disruptionsAllowed=-1), "p", dry_run=False)
    assert (negative.value.code, negative.value.message) == (
        403,
        'poddisruptionbudget.policy "b" is forbidden: pdb disruptions allowed is negative',
    )
    used = check_and_decrement(_pdb(disruptionsAllowed=2), "p", dry_run=False)
    assert used["status"]["disruptionsAllowed"] == 1
    assert list(used["status"]["disruptedPods"]) == ["p"]
    assert "conditions" not in used["status"]
    dry = check_and_decrement(_pdb(disruptionsAllowed=1), "p", dry_run=True)
    assert "disruptedPods" not in dry["status"]
    assert dry["status"]["conditions"][0]["reason"] == "InsufficientPods"


def test_which_pods_and_budgets_matter() -> None:
    assert can_ignore_pdb({"status": {"phase": "Pending"}, "metadata": {}})
    assert not can_ignore_pdb({"status": {"phase": "Running"}, "metadata": {}})
    pod = {"metadata": {"labels": {"app": "web"}}}
    bad = {"metadata": {"name": "x"}, "spec": {"selector": {"matchLabels": {"a": "!"}}}}
    other = {"metadata": {"name": "y"}, "spec": {"selector": {"matchLabels": {"app": "db"}}}}
    assert [p["metadata"]["name"] for p in matching_pdbs(pod, [_pdb(), bad, other])] == ["b"]


def test_replication_controller_defaults() -> None:
    rc: Object = {"metadata": {}, "spec": {"template": {"metadata": {"labels": {"a": "b"}}}}}
    default_replication_controller(rc)
    assert rc["spec"]["selector"] == {"a": "b"}
    assert rc["spec"]["replicas"] == 1
    assert rc["metadata"]["labels"] == {"a": "b"}
    kept: Object = {
        "metadata": {"labels": {"x": "y"}},
        "spec": {"replicas": 0, "selector": {"a": "b"}, "template": {"metadata": {"labels": {}}}},
    }
    default_replication_controller(kept)
    assert kept["metadata"]["labels"] == {"x": "y"}
    assert kept["spec"]["replicas"] == 0


def test_replication_controller_status_rules() -> None:
    errs = validate_replication_controller_status(
        {"replicas": 1, "readyReplicas": 1, "availableReplicas": 2}
    )
    assert [e.error_message() for e in errs] == [
        "status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas",
    ]


def test_scale_selector_and_labels_text() -> None:
    rc = {"spec": {"selector": {"b": "2", "a": "1"}}}
    assert RC_SCALE.get(rc, ".spec.selector") == "a=1,b=2"
    assert format_labels({"b": "2", "a": "1"}) == "a=1,b=2"
    assert format_labels({}) == "<none>"


def test_binding_replaces_a_gated_scheduled_condition() -> None:
    gated = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates",
        "lastProbeTime": None,
        "lastTransitionTime": None,
    }
    pod = {"metadata": {"name": "p"}, "spec": {}, "status": {"conditions": [gated]}}
    [condition] = bind(pod, {"target": {"name": "n"}})["status"]["conditions"]
    assert (condition["type"], condition["status"]) == ("PodScheduled", "True")
    assert "reason" not in condition and "message" not in condition
    assert condition["lastTransitionTime"] is not None
