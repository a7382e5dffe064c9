"""The apps kinds' defaulting, conversion and validation as pure functions on dicts."""

from __future__ import annotations

import copy

from kapi.apimachinery.field_errors import aggregate_message
from kapi.apis import apps_validation as v
from kapi.apis import apps_versions as d
from kapi.runtime.scale import BuiltinScale


def _deployment(**spec: object) -> dict:
    base: dict = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx"}]},
            },
        },
    }
    base["spec"].update(spec)
    return base


def _messages(errs: list) -> list[str]:
    return [str(e) for e in errs]


# --- defaulting -------------------------------------------------------------------------------


def test_v1_deployment_defaults_and_pod_template_defaults() -> None:
    obj = _deployment()
    d.default_deployment_v1(obj)
    spec = obj["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert spec["revisionHistoryLimit"] == 10
    assert spec["progressDeadlineSeconds"] == 600
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Always"
    assert pod["dnsPolicy"] == "ClusterFirst"
    assert pod["containers"][0]["imagePullPolicy"] == "Always"
    assert pod["containers"][0]["terminationMessagePath"] == "/dev/termination-log"


def test_recreate_strategy_gets_no_rolling_update() -> None:
    obj = _deployment(strategy={"type": "Recreate"})
    d.default_deployment_v1(obj)
    assert obj["spec"]["strategy"] == {"type": "Recreate"}


def test_apps_v1beta1_deployment_defaults_selector_labels_and_two_revisions() -> None:
    obj = _deployment()
    del obj["spec"]["selector"]
    d.default_deployment_apps_v1beta1(obj)
    assert obj["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert obj["spec"]["revisionHistoryLimit"] == 2
    assert obj["spec"]["progressDeadlineSeconds"] == 600


def test_extensions_deployment_defaults_keep_everything_and_surge_one() -> None:
    obj = _deployment(strategy={"type": "Recreate", "rollingUpdate": {}})
    d.default_deployment_extensions(obj)
    spec = obj["spec"]
    assert spec["revisionHistoryLimit"] == 2**31 - 1
    assert spec["progressDeadlineSeconds"] == 2**31 - 1
    # extensions fills a rollingUpdate that was given even with another type
    assert spec["strategy"]["rollingUpdate"] == {"maxUnavailable": 1, "maxSurge": 1}


def test_statefulset_defaults_per_version() -> None:
    obj = {"metadata": {"name": "db"}, "spec": {"template": {"metadata": {"labels": {"a": "b"}}}}}
    v1 = copy.deepcopy(obj)
    d.default_statefulset_v1(v1)
    assert v1["spec"]["podManagementPolicy"] == "OrderedReady"
    assert v1["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"partition": 0},
    }
    assert v1["spec"]["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Retain",
        "whenScaled": "Retain",
    }
    assert v1["spec"]["replicas"] == 1
    assert v1["spec"]["revisionHistoryLimit"] == 10
    assert "selector" not in v1["spec"]
    beta = copy.deepcopy(obj)
    d.default_statefulset_apps_v1beta1(beta)
    assert beta["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert beta["spec"]["selector"] == {"matchLabels": {"a": "b"}}


def test_statefulset_claim_templates_default_as_claims() -> None:
    obj = {"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}]}}
    d.default_statefulset_v1(obj)
    claim = obj["spec"]["volumeClaimTemplates"][0]
    assert claim["spec"]["volumeMode"] == "Filesystem"
    assert claim["status"] == {"phase": "Pending"}


def test_daemonset_defaults_v1_and_extensions() -> None:
    ds: dict = {"spec": {"template": {"metadata": {"labels": {"a": "b"}}}}}
    v1 = copy.deepcopy(ds)
    d.default_daemonset_v1(v1)
    assert v1["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    assert v1["spec"]["revisionHistoryLimit"] == 10
    ext = copy.deepcopy(ds)
    d.default_daemonset_extensions(ext)
    assert ext["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert ext["spec"]["selector"] == {"matchLabels": {"a": "b"}}


# --- conversion -------------------------------------------------------------------------------


def test_rollback_to_moves_between_field_and_annotation() -> None:
    beta = _deployment(rollbackTo={"revision": 3})
    hub = d.deployment_field_to_hub(beta)
    assert "rollbackTo" not in hub["spec"]
    assert hub["metadata"]["annotations"] == {v.ROLLBACK_TO_ANNOTATION: "3"}
    assert beta["spec"]["rollbackTo"] == {"revision": 3}  # the input is left alone
    back = d.deployment_field_from_hub(hub)
    assert back["spec"]["rollbackTo"] == {"revision": 3}
    assert "annotations" not in back["metadata"]


def test_no_rollback_to_drops_a_stale_annotation() -> None:
    beta = _deployment()
    beta["metadata"]["annotations"] = {v.ROLLBACK_TO_ANNOTATION: "2", "keep": "me"}
    hub = d.deployment_field_to_hub(beta)
    assert hub["metadata"]["annotations"] == {"keep": "me"}


def test_template_generation_moves_between_field_and_annotation() -> None:
    beta = {"metadata": {"name": "ds"}, "spec": {"templateGeneration": 4}}
    hub = d.daemonset_field_to_hub(beta)
    assert hub["metadata"]["annotations"] == {v.TEMPLATE_GENERATION_ANNOTATION: "4"}
    assert "templateGeneration" not in hub["spec"]
    back = d.daemonset_field_from_hub(hub)
    assert back["spec"]["templateGeneration"] == 4
    assert "annotations" not in back["metadata"]


# --- validation -------------------------------------------------------------------------------


def _defaulted(**spec: object) -> dict:
    obj = _deployment(**spec)
    d.default_deployment_v1(obj)
    return obj


def test_valid_deployment_has_no_errors() -> None:
    assert v.validate_deployment(_defaulted()) == []


def test_selector_not_matching_template_labels() -> None:
    obj = _defaulted(selector={"matchLabels": {"app": "other"}})
    assert _messages(v.validate_deployment(obj)) == [
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
        "`selector` does not match template `labels`"
    ]


def test_missing_selector_is_required_and_matches_nothing() -> None:
    obj = _defaulted()
    del obj["spec"]["selector"]
    assert _messages(v.validate_deployment(obj)) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: {"app":"web"}: '
        "`selector` does not match template `labels`",
    ]


def test_empty_selector_is_invalid() -> None:
    obj = _defaulted(selector={})
    assert _messages(v.validate_deployment(obj)) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment"
    ]


def test_negative_replicas_and_restart_policy() -> None:
    obj = _defaulted(replicas=-1)
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert _messages(v.validate_deployment(obj)) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ]


def test_rolling_update_bounds() -> None:
    obj = _defaulted(
        strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}
    )
    assert _messages(v.validate_deployment(obj)) == [
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: "
        "may not be 0 when `maxSurge` is 0"
    ]
    obj = _defaulted(
        strategy={
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": "150%", "maxSurge": "x"},
        }
    )
    assert _messages(v.validate_deployment(obj)) == [
        'spec.strategy.rollingUpdate.maxSurge: Invalid value: "x": a valid percent string must '
        "be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for "
        "validation is '[0-9]+%')",
        'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": '
        "must not be greater than 100%",
    ]


def test_recreate_with_rolling_update_and_unknown_type() -> None:
    obj = _defaulted()
    obj["spec"]["strategy"] = {"type": "Recreate", "rollingUpdate": {}}
    assert _messages(v.validate_deployment(obj)) == [
        "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is "
        "'Recreate'"
    ]
    obj["spec"]["strategy"] = {"type": "Canary"}
    assert _messages(v.validate_deployment(obj)) == [
        'spec.strategy: Unsupported value: {"Type":"Canary","RollingUpdate":null}: '
        'supported values: "Recreate", "RollingUpdate"'
    ]


def test_progress_deadline_must_exceed_min_ready() -> None:
    obj = _defaulted(minReadySeconds=600)
    assert _messages(v.validate_deployment(obj)) == [
        "spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"
    ]


def test_statefulset_update_of_a_fixed_field_is_forbidden() -> None:
    old = {
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        }
    }
    d.default_statefulset_v1(old)
    assert v.validate_statefulset(old) == []
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 5
    assert v.validate_statefulset_update(new, old) == []
    new["spec"]["serviceName"] = "other"
    assert aggregate_message(v.validate_statefulset_update(new, old)) == (
        f"spec: Forbidden: {v.STATEFULSET_SPEC_UPDATE_FORBIDDEN}"
    )


def test_daemonset_rolling_update_needs_exactly_one_bound() -> None:
    ds = {
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0},
            },
        }
    }
    d.default_daemonset_v1(ds)
    assert _messages(v.validate_daemonset(ds)) == [
        "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: "
        "cannot be 0 when maxSurge is 0"
    ]


def test_daemonset_template_generation_follows_template() -> None:
    old = {"metadata": {"annotations": {v.TEMPLATE_GENERATION_ANNOTATION: "2"}}, "spec": {}}
    new = copy.deepcopy(old)
    new["spec"]["template"] = {"metadata": {"labels": {"x": "y"}}}
    errs = _messages(v.validate_daemonset_update(new, old))
    assert errs[0] == (
        "spec.templateGeneration: Invalid value: 2: must be incremented upon template update"
    )


def test_controller_revision_rules() -> None:
    assert _messages(v.validate_controller_revision({"revision": -1})) == [
        "data: Required value: data is mandatory",
        "revision: Invalid value: -1: must be greater than or equal to 0",
    ]
    old = {"data": {"a": 1}, "revision": 1}
    new = {"data": {"a": 2}, "revision": 1}
    assert _messages(v.validate_controller_revision_update(new, old)) == [
        'data: Invalid value: {"a":2}: field is immutable'
    ]


def test_status_counts() -> None:
    status = {"replicas": 1, "readyReplicas": 2, "availableReplicas": 3, "updatedReplicas": 1}
    assert _messages(v.validate_deployment_status(status)) == [
        "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas",
        "status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas",
    ]


# --- /scale -----------------------------------------------------------------------------------


def test_builtin_scale_selector_string_and_labels() -> None:
    scale = BuiltinScale()
    obj = {
        "spec": {
            "replicas": 3,
            "selector": {
                "matchLabels": {"app": "web", "tier": "x"},
                "matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]}],
            },
        },
        "status": {"replicas": 2},
    }
    assert scale.get(obj, scale.spec_replicas) == 3
    assert scale.get(obj, scale.status_replicas) == 2
    assert scale.get(obj, ".spec.selector") == "app=web,env in (a,b),tier=x"
    assert scale.selector_labels(obj) is None
    del obj["spec"]["selector"]["matchExpressions"]
    assert scale.selector_labels(obj) == {"app": "web", "tier": "x"}
    scale.set(obj, scale.spec_replicas, 7)
    assert obj["spec"]["replicas"] == 7
