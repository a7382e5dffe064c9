"""Which admission webhooks a request calls: rules, scopes, selectors and matchPolicy."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kapi.admission.interface import Attributes, Operation
from kapi.admission.webhook.dispatcher import Dispatcher, Invocation
from kapi.admission.webhook.review import (
    InvalidResponse,
    ReviewRequest,
    new_review,
    verify_response,
)
from kapi.admission.webhook.rules import RequestTarget, matched_version, rule_matches
from kapi.admission.webhook.selectors import (
    namespace_selector_applies,
    object_selector_matches,
    own_namespace_labels,
)
from kapi.admission.webhook.source import compile_webhooks
from kapi.apimachinery.errors import StatusError
from kapi.apimachinery.labels import label_selector_as_selector
from kapi.apis.core_v1 import resources


def rule(**fields: Any) -> dict[str, Any]:
    base = {
        "operations": ["CREATE"],
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "resources": ["pods"],
        "scope": "*",
    }
    return {**base, **fields}


def target(
    operation: str = "CREATE",
    group: str = "",
    version: str = "v1",
    resource: str = "pods",
    subresource: str = "",
    namespace: str = "default",
) -> RequestTarget:
    return RequestTarget(operation, group, version, resource, subresource, namespace)


@pytest.mark.parametrize(
    ("fields", "request_target", "expected"),
    [
        ({}, target(), True),
        ({}, target(operation="UPDATE"), False),
        ({"operations": ["*"]}, target(operation="DELETE"), True),
        ({"apiGroups": ["*"]}, target(group="apps"), True),
        ({}, target(group="apps"), False),
        ({"apiVersions": ["*"]}, target(version="v2"), True),
        ({}, target(subresource="status"), False),
        ({"resources": ["pods/status"]}, target(subresource="status"), True),
        ({"resources": ["pods/status"]}, target(), False),
        ({"resources": ["pods/*"]}, target(subresource="log"), True),
        ({"resources": ["pods/*"]}, target(), True),  # as upstream: "*" also matches ""
        ({"resources": ["*"]}, target(resource="configmaps"), True),
        ({"resources": ["*"]}, target(subresource="status"), False),
        ({"resources": ["*/status"]}, target(resource="nodes", subresource="status"), True),
        ({"resources": ["*/*"]}, target(resource="nodes", subresource="proxy"), True),
        ({"resources": ["*/*"]}, target(resource="nodes"), True),
    ],
)
def test_rule_fields(fields: dict[str, Any], request_target: RequestTarget, expected: bool) -> None:
    assert rule_matches(rule(**fields), request_target) is expected


@pytest.mark.parametrize(
    ("scope", "request_target", "expected"),
    [
        ("Namespaced", target(), True),
        ("Namespaced", target(namespace=""), False),
        ("Cluster", target(namespace=""), True),
        ("Cluster", target(), False),
        # A request to a namespace names one, but a namespace is cluster-scoped.
        ("Cluster", target(resource="namespaces", namespace="team-a"), True),
        ("Namespaced", target(resource="namespaces", namespace="team-a"), False),
        ("*", target(namespace=""), True),
        (None, target(), True),
        ("Elsewhere", target(), False),
    ],
)
def test_scope(scope: str | None, request_target: RequestTarget, expected: bool) -> None:
    fields = {"resources": ["*"], "scope": scope}
    assert rule_matches(rule(**fields), request_target) is expected


PDB_V1 = rule(apiGroups=["policy"], apiVersions=["v1"], resources=["poddisruptionbudgets"])
PDB_REQUEST = target(group="policy", version="v1beta1", resource="poddisruptionbudgets")


def test_equivalent_match_names_the_rule_version() -> None:
    assert matched_version([PDB_V1], "Equivalent", PDB_REQUEST, ["v1", "v1beta1"]) == "v1"


def test_exact_match_ignores_other_versions() -> None:
    assert matched_version([PDB_V1], "Exact", PDB_REQUEST, ["v1", "v1beta1"]) is None


def test_the_requested_version_wins_over_an_equivalent() -> None:
    both = rule(
        apiGroups=["policy"], apiVersions=["v1beta1", "v1"], resources=["poddisruptionbudgets"]
    )
    assert matched_version([both], "Equivalent", PDB_REQUEST, ["v1", "v1beta1"]) == "v1beta1"


def test_equivalent_needs_the_version_to_be_served() -> None:
    assert matched_version([PDB_V1], "Equivalent", PDB_REQUEST, ["v1beta1"]) is None


def test_earlier_rules_are_honoured_first() -> None:
    v2 = rule(apiGroups=["policy"], apiVersions=["v2"], resources=["poddisruptionbudgets"])
    got = matched_version([v2, PDB_V1], "Equivalent", PDB_REQUEST, ["v1", "v1beta1", "v2"])
    assert got == "v2"


def selector(**match_labels: str) -> Any:
    return label_selector_as_selector({"matchLabels": match_labels})


def obj(**labels: str) -> dict[str, Any]:
    return {"metadata": {"labels": labels}}


def test_object_selector_matches_new_or_old_object() -> None:
    wanted = selector(app="web")
    assert object_selector_matches(wanted, obj(app="web"), None)
    assert object_selector_matches(wanted, obj(), obj(app="web"))  # labels being removed
    assert not object_selector_matches(wanted, obj(app="db"), obj(app="db"))
    assert not object_selector_matches(wanted, None, None)
    assert object_selector_matches(selector(), None, None)


def test_namespace_selector_ignores_cluster_scoped_objects() -> None:
    assert not namespace_selector_applies(target(resource="nodes", namespace=""))
    assert namespace_selector_applies(target())
    assert namespace_selector_applies(target(resource="namespaces", namespace=""))


def test_a_namespace_is_matched_on_its_own_labels_when_written() -> None:
    ns = target(resource="namespaces", namespace="team-a")
    assert own_namespace_labels(ns, obj(env="prod")) == {"env": "prod"}
    assert own_namespace_labels(target(operation="UPDATE", resource="namespaces"), obj()) == {}
    # A deleted namespace, and any other object, is matched on the stored namespace.
    assert own_namespace_labels(target(operation="DELETE", resource="namespaces"), None) is None
    assert own_namespace_labels(target(), obj(env="prod")) is None


def test_webhooks_are_ordered_by_configuration_name_then_position() -> None:
    def config(name: str, *hooks: str) -> dict[str, Any]:
        return {"metadata": {"name": name}, "webhooks": [{"name": h} for h in hooks]}

    hooks = compile_webhooks([config("b", "b1.x.io", "b0.x.io"), config("a", "a.x.io")])
    assert [(h.configuration, h.name) for h in hooks] == [
        ("a", "a.x.io"),
        ("b", "b1.x.io"),
        ("b", "b0.x.io"),
    ]


def test_an_unparsable_selector_is_kept_as_an_error() -> None:
    bad = {
        "name": "x.y.io",
        "objectSelector": {"matchExpressions": [{"key": "a", "operator": "Is"}]},
    }
    [hook] = compile_webhooks([{"metadata": {"name": "c"}, "webhooks": [bad]}])
    assert hook.object_selector is None
    assert hook.selector_error == '"Is" is not a valid label selector operator'


@pytest.mark.parametrize("side_effects", ["Some", "Unknown"])
def test_dry_run_is_refused_by_webhooks_with_side_effects(side_effects: str) -> None:
    """Only v1beta1 could store these classes; a configuration kept from then still refuses."""
    [hook] = compile_webhooks(
        [
            {
                "metadata": {"name": "c"},
                "webhooks": [{"name": "se.x.io", "sideEffects": side_effects}],
            }
        ]
    )
    configmaps = next(r for r in resources() if r.plural == "configmaps")
    attributes = Attributes(Operation.CREATE, configmaps, "", "default", "a", {}, None, True)
    dispatcher = Dispatcher(None, None, None)  # type: ignore[arg-type]
    call = dispatcher.call(Invocation(hook, "v1"), attributes, target())
    with pytest.raises(StatusError) as raised:
        asyncio.run(call)
    assert (raised.value.code, raised.value.reason, raised.value.message) == (
        400,
        "BadRequest",
        'admission webhook "se.x.io" does not support dry run',
    )


def test_review_carries_the_users_groups() -> None:
    request = ReviewRequest(
        kind={"group": "", "version": "v1", "kind": "Pod"},
        resource={"group": "", "version": "v1", "resource": "pods"},
        subresource="",
        request_kind={"group": "", "version": "v1", "kind": "Pod"},
        request_resource={"group": "", "version": "v1", "resource": "pods"},
        request_subresource="",
        name="p",
        namespace="default",
        operation="CREATE",
        user="system:anonymous",
        groups=("system:unauthenticated",),
        object={},
        old_object=None,
        dry_run=False,
    )
    _, review = new_review("v1", request)
    assert review["request"]["userInfo"] == {
        "username": "system:anonymous",
        "groups": ["system:unauthenticated"],
    }


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            {"apiVersion": "v1", "kind": "AdmissionReview", "response": {"uid": "u"}},
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, "
            "got /v1, Kind=AdmissionReview",
        ),
        (
            {"response": {"uid": 'a"b'}},
            'expected response.uid="u", got "a\\"b"',
        ),
    ],
)
def test_invalid_review_answers_are_named_as_upstream(answer: dict, message: str) -> None:
    with pytest.raises(InvalidResponse) as raised:
        verify_response("v1", "u", answer, mutating=False)
    assert str(raised.value) == message
