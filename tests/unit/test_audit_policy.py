"""The audit policy: upstream's file format, validation messages and rule matching."""

from __future__ import annotations

from pathlib import Path

import pytest

from kapi.audit.policy import (
    LEVEL_METADATA,
    LEVEL_NONE,
    LEVEL_REQUEST,
    LEVEL_REQUEST_RESPONSE,
    PolicyError,
    load_policy,
    load_policy_file,
)
from kapi.endpoints.requestinfo import parse_request_info

ANON = ("system:anonymous", ("system:unauthenticated",))


def _policy(rules: str, extra: str = "") -> str:
    return f"apiVersion: audit.k8s.io/v1\nkind: Policy\n{extra}rules:\n{rules}"


def _level(policy_text: str, method: str, path: str, user=ANON, watch=False) -> str:
    policy = load_policy(policy_text)
    return policy.evaluate(parse_request_info(method, path, watch), *user).level


def test_first_matching_rule_wins_and_no_match_is_none() -> None:
    text = _policy(
        "- level: RequestResponse\n  resources: [{group: '', resources: [configmaps]}]\n"
        "- level: Metadata\n  verbs: [get]\n"
    )
    assert _level(text, "POST", "/api/v1/namespaces/a/configmaps") == LEVEL_REQUEST_RESPONSE
    assert _level(text, "GET", "/api/v1/namespaces/a/configmaps/x") == LEVEL_REQUEST_RESPONSE
    assert _level(text, "GET", "/api/v1/namespaces/a/pods/x") == LEVEL_METADATA
    assert _level(text, "DELETE", "/api/v1/namespaces/a/pods/x") == LEVEL_NONE


def test_users_and_groups() -> None:
    text = _policy(
        "- level: None\n  users: [alice]\n"
        "- level: Request\n  userGroups: [system:unauthenticated]\n"
        "- level: Metadata\n"
    )
    assert _level(text, "GET", "/version", ("alice", ())) == LEVEL_NONE
    assert _level(text, "GET", "/version") == LEVEL_REQUEST
    assert _level(text, "GET", "/version", ("bob", ("system:authenticated",))) == LEVEL_METADATA


def test_resource_wildcards_and_subresources() -> None:
    text = _policy(
        "- level: Request\n  resources: [{group: '', resources: ['pods/*']}]\n"
        "- level: RequestResponse\n  resources: [{group: '', resources: ['*/status']}]\n"
        "- level: Metadata\n  resources: [{group: apps}]\n"
    )
    # "pods/*" covers pods itself and every subresource of pods.
    assert _level(text, "GET", "/api/v1/namespaces/a/pods/p") == LEVEL_REQUEST
    assert _level(text, "GET", "/api/v1/namespaces/a/pods/p/log") == LEVEL_REQUEST
    assert _level(text, "PUT", "/api/v1/namespaces/a/pods/p/status") == LEVEL_REQUEST
    assert _level(text, "PUT", "/api/v1/namespaces/a/services/s/status") == LEVEL_REQUEST_RESPONSE
    assert _level(text, "GET", "/api/v1/namespaces/a/services/s") == LEVEL_NONE
    # A group with no resources listed matches all of the group's resources.
    assert _level(text, "GET", "/apis/apps/v1/namespaces/a/deployments/d") == LEVEL_METADATA
    assert _level(text, "GET", "/apis/batch/v1/namespaces/a/jobs/j") == LEVEL_NONE


def test_subresource_needs_resource_slash_subresource() -> None:
    text = _policy("- level: Metadata\n  resources: [{group: '', resources: [pods]}]\n")
    assert _level(text, "GET", "/api/v1/namespaces/a/pods/p") == LEVEL_METADATA
    assert _level(text, "GET", "/api/v1/namespaces/a/pods/p/log") == LEVEL_NONE


def test_resource_names_and_namespaces() -> None:
    text = _policy(
        "- level: Request\n  resources: [{group: '', resources: [configmaps], "
        "resourceNames: [special]}]\n"
        "- level: Metadata\n  namespaces: ['', kube-system]\n"
    )
    assert _level(text, "GET", "/api/v1/namespaces/x/configmaps/special") == LEVEL_REQUEST
    assert _level(text, "GET", "/api/v1/namespaces/x/configmaps/other") == LEVEL_NONE
    # A list has no name, so a rule naming resources does not match it.
    assert _level(text, "GET", "/api/v1/namespaces/x/configmaps") == LEVEL_NONE
    assert _level(text, "GET", "/api/v1/namespaces/kube-system/pods") == LEVEL_METADATA
    # "" names cluster-scoped resources.
    assert _level(text, "GET", "/api/v1/nodes/n") == LEVEL_METADATA
    # Resource rules never match non-resource requests.
    assert _level(text, "GET", "/version") == LEVEL_NONE


def test_non_resource_urls() -> None:
    text = _policy(
        "- level: None\n  nonResourceURLs: ['/healthz*', /version]\n"
        "- level: Request\n  nonResourceURLs: ['*']\n"
        "- level: Metadata\n"
    )
    assert _level(text, "GET", "/healthz") == LEVEL_NONE
    assert _level(text, "GET", "/healthz/etcd") == LEVEL_NONE
    assert _level(text, "GET", "/version") == LEVEL_NONE
    assert _level(text, "GET", "/versions") == LEVEL_REQUEST
    assert _level(text, "GET", "/metrics") == LEVEL_REQUEST
    assert _level(text, "GET", "/api/v1/namespaces") == LEVEL_METADATA


def test_omit_stages_are_united_with_the_policys() -> None:
    text = _policy(
        "- level: Metadata\n  verbs: [watch]\n  omitStages: [ResponseStarted]\n- level: Metadata\n",
        extra="omitStages: [RequestReceived]\n",
    )
    policy = load_policy(text)
    watch = policy.evaluate(parse_request_info("GET", "/api/v1/pods", True), *ANON)
    assert watch.omit_stages == {"RequestReceived", "ResponseStarted"}
    get = policy.evaluate(parse_request_info("GET", "/api/v1/pods", False), *ANON)
    assert get.omit_stages == {"RequestReceived"}
    unmatched = load_policy(_policy("- level: None\n  verbs: [get]\n", "omitStages: [Panic]\n"))
    config = unmatched.evaluate(parse_request_info("POST", "/api/v1/pods", False), *ANON)
    assert (config.level, config.omit_stages) == (LEVEL_NONE, {"Panic"})


def test_omit_managed_fields_rule_overrides_policy() -> None:
    text = _policy(
        "- level: Request\n  verbs: [create]\n  omitManagedFields: false\n- level: Request\n",
        extra="omitManagedFields: true\n",
    )
    policy = load_policy(text)
    create = policy.evaluate(parse_request_info("POST", "/api/v1/namespaces", False), *ANON)
    other = policy.evaluate(parse_request_info("GET", "/api/v1/namespaces", False), *ANON)
    assert (create.omit_managed_fields, other.omit_managed_fields) == (False, True)


def test_json_policy_is_accepted() -> None:
    text = '{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Metadata"}]}'
    assert load_policy(text).rules[0].level == LEVEL_METADATA


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            _policy("- level: Foo\n"),
            'rules[0].level: Unsupported value: "Foo": supported values: '
            '"None", "Metadata", "Request", "RequestResponse"',
        ),
        (_policy("- verbs: [get]\n"), "rules[0].level: Required value"),
        (
            _policy("- level: None\n  nonResourceURLs: [healthz]\n"),
            'rules[0].nonResourceURLs[0]: Invalid value: "healthz": '
            "non-resource URL rules must begin with a '/' character",
        ),
        (
            _policy("- level: None\n  nonResourceURLs: ['/a*b']\n"),
            'rules[0].nonResourceURLs[0]: Invalid value: "/a*b": '
            "non-resource URL wildcards '*' must be the final character of the rule",
        ),
        (
            _policy("- level: None\n  nonResourceURLs: [/x]\n  namespaces: [a]\n"),
            'rules[0].nonResourceURLs: Invalid value: ["/x"]: '
            "rules cannot apply to both regular resources and non-resource URLs",
        ),
        (
            _policy("- level: None\n  omitStages: [Done]\n"),
            'rules[0].omitStages[0]: Invalid value: "Done": allowed stages are '
            "RequestReceived,ResponseStarted,ResponseComplete,Panic",
        ),
        (
            _policy("- level: None\n", extra="omitStages: [Later]\n"),
            'omitStages[0]: Invalid value: "Later": allowed stages are '
            "RequestReceived,ResponseStarted,ResponseComplete,Panic",
        ),
        (
            _policy("- level: None\n  resources: [{resourceNames: [x]}]\n"),
            'rules[0].resources.resourceNames: Invalid value: ["x"]: '
            "using resourceNames requires at least one resource",
        ),
        (
            _policy("- level: Foo\n- level: None\n  nonResourceURLs: [x]\n"),
            '[rules[0].level: Unsupported value: "Foo": supported values: '
            '"None", "Metadata", "Request", "RequestResponse", '
            'rules[1].nonResourceURLs[0]: Invalid value: "x": '
            "non-resource URL rules must begin with a '/' character]",
        ),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n",
            "loaded illegal policy with 0 rules",
        ),
        ("apiVersion: audit.k8s.io/v1\nkind: Policy\n", "loaded illegal policy with 0 rules"),
        (
            "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]\n",
            'failed decoding: no kind "Policy" is registered for version "audit.k8s.io/v1beta1"',
        ),
        ("rules: [{level: None}]\n", "failed decoding: Object 'Kind' is missing in policy"),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: everything\n",
            "failed decoding: json: cannot unmarshal string into Go struct field Policy.rules "
            "of type []audit.PolicyRule",
        ),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: {level: None}\n",
            "failed decoding: json: cannot unmarshal object into Go struct field Policy.rules "
            "of type []audit.PolicyRule",
        ),
    ],
)
def test_invalid_policies_are_rejected_with_upstreams_message(text: str, message: str) -> None:
    with pytest.raises(PolicyError) as caught:
        load_policy(text)
    assert str(caught.value) == message


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(_policy("- level: Foo\n"))
    with pytest.raises(PolicyError) as caught:
        load_policy_file(path)
    assert str(caught.value) == (
        'loading audit policy file: rules[0].level: Unsupported value: "Foo": supported values: '
        f'"None", "Metadata", "Request", "RequestResponse": from file {path}'
    )
    missing = tmp_path / "missing.yaml"
    with pytest.raises(PolicyError) as caught:
        load_policy_file(missing)
    assert str(caught.value).startswith(
        f'loading audit policy file: failed to read file path "{missing}": '
    )


def test_unknown_fields_warn_and_decode_leniently(caplog: pytest.LogCaptureFixture) -> None:
    policy = load_policy(_policy("- level: Metadata\n  verb: [get]\n"))
    assert policy.rules[0].level == LEVEL_METADATA
    assert policy.rules[0].verbs == ()
    assert 'unknown field "rules[0].verb"' in caplog.text
