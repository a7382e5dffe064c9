"""rbac.authorization.k8s.io: validation messages, defaulting, v1alpha1 subjects, printer
cells, the bootstrap policy and the aggregation computation."""

from __future__ import annotations

import copy

from kapi.apimachinery.field_errors import FieldError, aggregate_message
from kapi.apis.rbac_bootstrap import (
    AUTOUPDATE_ANNOTATION,
    aggregated_rules,
    cluster_role_bindings,
    cluster_roles,
    reconcile,
    same_rules,
)
from kapi.apis.rbac_validation import (
    GROUP,
    ClusterRoleBindingStrategy,
    ClusterRoleStrategy,
    RoleBindingStrategy,
    RoleStrategy,
    alpha_binding_to_hub,
    default_alpha_binding,
    default_binding,
    hub_binding_to_alpha,
    role_ref_cell,
    subjects_strings,
)


def messages(errs: list[FieldError]) -> list[str]:
    return [e.error_message() for e in errs]


def role(*rules: dict) -> dict:
    return {"metadata": {"name": "r", "namespace": "n"}, "rules": list(rules)}


def binding(kind: str = "Role", name: str = "reader", *subjects: dict) -> dict:
    return {
        "metadata": {"name": "b", "namespace": "n"},
        "roleRef": {"apiGroup": GROUP, "kind": kind, "name": name},
        "subjects": list(subjects),
    }


USER = {"kind": "User", "apiGroup": GROUP, "name": "jane"}
SA = {"kind": "ServiceAccount", "name": "builder", "namespace": "ci"}

# --- rules ----------------------------------------------------------------------------------


def test_rule_without_verbs_is_required():
    errs = RoleStrategy().validate(role({"apiGroups": [""], "resources": ["pods"]}))
    assert messages(errs) == [
        "rules[0].verbs: Required value: verbs must contain at least one value"
    ]


def test_resource_rule_needs_groups_and_resources():
    errs = RoleStrategy().validate(role({"verbs": ["get"]}))
    assert messages(errs) == [
        "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
        "rules[0].resources: Required value: resource rules must supply at least one resource",
    ]


def test_empty_group_counts_as_a_group():
    assert (
        RoleStrategy().validate(role({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}))
        == []
    )


def test_namespaced_role_cannot_name_urls_and_mixing_is_refused():
    rule = {"verbs": ["get"], "nonResourceURLs": ["/healthz"], "resources": ["pods"]}
    assert messages(RoleStrategy().validate(role(rule))) == [
        'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot '
        "apply to non-resource URLs",
        'rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: rules cannot apply to '
        "both regular resources and non-resource URLs",
    ]
    cluster = {"metadata": {"name": "c"}, "rules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]}
    assert ClusterRoleStrategy().validate(cluster) == []


def test_update_reports_rule_errors_twice_among_causes_once_in_message():
    bad = role({"apiGroups": [""], "resources": ["pods"]})
    errs = RoleStrategy().validate_update(bad, role())
    assert len(errs) == 2
    assert aggregate_message(errs) == (
        "rules[0].verbs: Required value: verbs must contain at least one value"
    )


def test_aggregation_rule_needs_a_selector_and_valid_ones():
    strategy = ClusterRoleStrategy()
    empty = {"metadata": {"name": "c"}, "aggregationRule": {}}
    assert messages(strategy.validate(empty)) == [
        "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector "
        "required if aggregationRule is non-nil"
    ]
    bad = {
        "metadata": {"name": "c"},
        "aggregationRule": {
            "clusterRoleSelectors": [{"matchExpressions": [{"key": "a", "operator": "In"}]}]
        },
    }
    msgs = messages(strategy.validate(bad))
    assert msgs[-1] == (
        'aggregationRule.clusterRoleSelectors[0]: Invalid value: "null": invalid label selector.'
    )
    assert msgs[0].startswith("aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values")


# --- bindings -------------------------------------------------------------------------------


def test_binding_role_ref_rules():
    obj = binding("Pod", "")
    obj["roleRef"]["apiGroup"] = "example.com"
    assert messages(RoleBindingStrategy().validate(obj)) == [
        'roleRef.apiGroup: Unsupported value: "example.com": supported values: '
        '"rbac.authorization.k8s.io"',
        'roleRef.kind: Unsupported value: "Pod": supported values: "Role", "ClusterRole"',
        "roleRef.name: Required value",
    ]
    crb = binding("Role", "x")
    assert messages(ClusterRoleBindingStrategy().validate(crb)) == [
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"'
    ]


def test_role_ref_name_is_a_path_segment():
    assert messages(RoleBindingStrategy().validate(binding("Role", "a/b"))) == [
        "roleRef.name: Invalid value: \"a/b\": may not contain '/'"
    ]


def test_subjects():
    subjects = [
        {"kind": "User", "name": "jane"},
        {"kind": "Group", "apiGroup": GROUP, "name": ""},
        {"kind": "ServiceAccount", "apiGroup": "v1", "name": "Bad_Name"},
        {"kind": "Robot", "name": "r2"},
    ]
    errs = messages(RoleBindingStrategy().validate(binding("Role", "x", *subjects)))
    assert errs[0] == (
        'subjects[0].apiGroup: Unsupported value: "": supported values: "rbac.authorization.k8s.io"'
    )
    assert errs[1] == "subjects[1].name: Required value"
    assert errs[2].startswith('subjects[2].name: Invalid value: "Bad_Name": a lowercase RFC 1123')
    assert errs[3] == 'subjects[2].apiGroup: Unsupported value: "v1": supported values: ""'
    assert errs[4] == (
        'subjects[3].kind: Unsupported value: "Robot": supported values: "ServiceAccount", '
        '"User", "Group"'
    )


def test_service_account_subject_needs_a_namespace_in_cluster_bindings_only():
    sa = {"kind": "ServiceAccount", "name": "builder"}
    assert RoleBindingStrategy().validate(binding("Role", "x", sa)) == []
    crb = binding("ClusterRole", "x", sa)
    assert messages(ClusterRoleBindingStrategy().validate(crb)) == [
        "subjects[0].namespace: Required value"
    ]


def test_role_ref_is_immutable():
    old = binding("Role", "reader")
    new = binding("ClusterRole", "view")
    assert messages(RoleBindingStrategy().validate_update(new, old)) == [
        'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", '
        'Kind:"ClusterRole", Name:"view"}: cannot change roleRef'
    ]
    assert RoleBindingStrategy().validate_update(copy.deepcopy(old), old) == []


# --- defaulting and v1alpha1 ------------------------------------------------------------------


def test_defaults_fill_groups():
    obj = {
        "roleRef": {"kind": "Role", "name": "r"},
        "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "s"}],
    }
    default_binding(obj)
    assert obj["roleRef"]["apiGroup"] == GROUP
    assert obj["subjects"] == [
        {"kind": "User", "name": "u", "apiGroup": GROUP},
        {"kind": "ServiceAccount", "name": "s"},
    ]


def test_v1alpha1_subjects_round_trip():
    alpha = {
        "roleRef": {"kind": "Role", "name": "r"},
        "subjects": [
            {"kind": "User", "name": "u"},
            {"kind": "ServiceAccount", "name": "s", "namespace": "n"},
            {"kind": "Robot", "apiVersion": "robots.example.com/v1", "name": "r2"},
        ],
    }
    default_alpha_binding(alpha)
    assert [s.get("apiVersion") for s in alpha["subjects"]] == [
        f"{GROUP}/v1alpha1",
        "v1",
        "robots.example.com/v1",
    ]
    hub = alpha_binding_to_hub(alpha)
    assert [s.get("apiGroup") for s in hub["subjects"]] == [GROUP, None, "robots.example.com"]
    back = hub_binding_to_alpha(hub)
    assert [s.get("apiVersion") for s in back["subjects"]] == [
        f"{GROUP}/v1alpha1",
        "v1",
        "robots.example.com/",
    ]


# --- printers -------------------------------------------------------------------------------


def test_subject_cells():
    obj = binding("ClusterRole", "view", USER, SA, {"kind": "Group", "name": "devs"})
    assert subjects_strings(obj) == (["jane"], ["devs"], ["ci/builder"], [])
    assert role_ref_cell(obj) == "ClusterRole/view"


# --- bootstrap policy and aggregation ---------------------------------------------------------


def test_bootstrap_objects_are_valid_and_marked():
    for obj in cluster_roles():
        assert ClusterRoleStrategy().validate(obj) == [], obj["metadata"]["name"]
        assert obj["metadata"]["annotations"] == {AUTOUPDATE_ANNOTATION: "true"}
        assert obj["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
    for obj in cluster_role_bindings():
        assert ClusterRoleBindingStrategy().validate(obj) == [], obj["metadata"]["name"]
    names = {o["metadata"]["name"] for o in cluster_roles()}
    assert {o["roleRef"]["name"] for o in cluster_role_bindings()} <= names


def _by_name(roles: list[dict]) -> dict[str, dict]:
    return {r["metadata"]["name"]: r for r in roles}


def _aggregate_until_stable(roles: list[dict]) -> dict[str, dict]:
    current = _by_name(roles)
    for _ in range(5):
        changed = False
        for r in list(current.values()):
            if r.get("aggregationRule") is None:
                continue
            rules = aggregated_rules(r, list(current.values()))
            if not same_rules(rules, r.get("rules")):
                current[r["metadata"]["name"]] = {**r, "rules": rules}
                changed = True
        if not changed:
            return current
    raise AssertionError("aggregation did not settle")


def test_admin_edit_view_aggregate_in_chain():
    roles = _aggregate_until_stable(cluster_roles())
    view, edit, admin = roles["view"]["rules"], roles["edit"]["rules"], roles["admin"]["rules"]
    assert view == roles["system:aggregate-to-view"]["rules"]
    # edit = aggregate-to-edit, then view's (edit selects view by its aggregate-to-edit label)
    assert edit == roles["system:aggregate-to-edit"]["rules"] + view
    # by name, "edit" sorts before "system:aggregate-to-admin"
    assert admin == edit + roles["system:aggregate-to-admin"]["rules"]


def test_aggregation_takes_each_rule_once_and_skips_itself():
    rule = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}
    labelled = {"metadata": {"name": "b", "labels": {"x": "y"}}, "rules": [rule, rule]}
    other = {"metadata": {"name": "a", "labels": {"x": "y"}}, "rules": [dict(rule)]}
    me = {
        "metadata": {"name": "me", "labels": {"x": "y"}},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]},
        "rules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    }
    assert aggregated_rules(me, [labelled, other, me]) == [rule]


def test_reconcile_adds_what_is_missing_and_respects_opt_out():
    wanted = _by_name(cluster_roles())["system:discovery"]
    current = copy.deepcopy(wanted)
    current["rules"] = []
    current["metadata"]["labels"] = {"mine": "1"}
    updated = reconcile(current, wanted)
    assert updated is not None
    assert updated["rules"] == wanted["rules"]
    assert updated["metadata"]["labels"] == {
        "mine": "1",
        "kubernetes.io/bootstrapping": "rbac-defaults",
    }
    assert reconcile(updated, wanted) is None
    current["metadata"]["annotations"] = {AUTOUPDATE_ANNOTATION: "false"}
    assert reconcile(current, wanted) is None
