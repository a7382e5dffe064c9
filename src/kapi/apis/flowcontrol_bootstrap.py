"""The API Priority and Fairness objects kube-apiserver keeps in every cluster.

Two kinds of objects, as ``k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap`` (v1.33)
defines them, written here as v1 objects with every default applied:

* mandatory: the ``exempt`` and ``catch-all`` FlowSchemas and PriorityLevelConfigurations.
  The server puts back any change to their spec (``exempt``'s ``spec.exempt`` aside) and
  recreates them when deleted; validation refuses another spec under their names.
* suggested: the levels and schemas of a sensible default configuration
  (``system``, ``node-high``, ``leader-election``, ``workload-high``, ``workload-low``,
  ``global-default``, and the schemas routing to them).  Operators may edit them: the
  server updates one only while its ``apf.kubernetes.io/autoupdate-spec`` annotation is
  ``"true"``, but recreates any that is deleted.

:mod:`kapi.controllers.flowcontrol` keeps them in storage.
"""

from __future__ import annotations

from typing import Any

from kapi.apimachinery.unstructured import Object

GROUP = "flowcontrol.apiserver.k8s.io"
API_VERSION = f"{GROUP}/v1"
#: Whether the server may overwrite the object's spec with its built-in one.
AUTO_UPDATE_ANNOTATION = "apf.kubernetes.io/autoupdate-spec"

_ALL = ["*"]
_AUTHENTICATED, _UNAUTHENTICATED = "system:authenticated", "system:unauthenticated"
_CONTROLLER_MANAGER, _SCHEDULER = "system:kube-controller-manager", "system:kube-scheduler"


def _level(name: str, spec: Object) -> Object:
    return {
        "apiVersion": API_VERSION,
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}},
        "spec": spec,
    }


def _limited(shares: int, lendable: int, queues: int = 0, hand: int = 0) -> Object:
    """A Limited level; without queues it rejects what exceeds its share."""
    response: Object = {"type": "Reject"}
    if queues:
        response = {
            "type": "Queue",
            "queuing": {"queues": queues, "handSize": hand, "queueLengthLimit": 50},
        }
    return {
        "type": "Limited",
        "limited": {
            "nominalConcurrencyShares": shares,
            "limitResponse": response,
            "lendablePercent": lendable,
        },
    }


def _schema(name: str, level: str, precedence: int, method: str, **rules: Any) -> Object:
    spec: Object = {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence}
    if method:
        spec["distinguisherMethod"] = {"type": method}
    spec["rules"] = [{k: v for k, v in rules.items() if v}]
    return {
        "apiVersion": API_VERSION,
        "kind": "FlowSchema",
        "metadata": {"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}},
        "spec": spec,
    }


def _groups(*names: str) -> list[Object]:
    return [{"kind": "Group", "group": {"name": n}} for n in names]


def _users(*names: str) -> list[Object]:
    return [{"kind": "User", "user": {"name": n}} for n in names]


def _kube_system_accounts(*names: str) -> list[Object]:
    return [
        {"kind": "ServiceAccount", "serviceAccount": {"name": n, "namespace": "kube-system"}}
        for n in names
    ]


def _resource_rule(
    verbs: list[str], groups: list[str], resources: list[str], cluster_scope: bool
) -> Object:
    rule: Object = {"verbs": verbs, "apiGroups": groups, "resources": resources}
    if cluster_scope:
        rule["clusterScope"] = True
    rule["namespaces"] = _ALL
    return rule


_EVERYTHING = [_resource_rule(_ALL, _ALL, _ALL, True)]
_EVERY_URL = [{"verbs": _ALL, "nonResourceURLs": _ALL}]
_LEASES = _resource_rule(["get", "create", "update"], ["coordination.k8s.io"], ["leases"], False)


def _all_requests_of(subjects: list[Object]) -> Object:
    return {"subjects": subjects, "resourceRules": _EVERYTHING, "nonResourceRules": _EVERY_URL}


MANDATORY_PRIORITY_LEVELS: dict[str, Object] = {
    "catch-all": _level("catch-all", _limited(5, 0)),
    "exempt": _level(
        "exempt",
        {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}},
    ),
}

MANDATORY_FLOW_SCHEMAS: dict[str, Object] = {
    "exempt": _schema("exempt", "exempt", 1, "", **_all_requests_of(_groups("system:masters"))),
    "catch-all": _schema(
        "catch-all",
        "catch-all",
        10000,
        "ByUser",
        **_all_requests_of(_groups(_UNAUTHENTICATED, _AUTHENTICATED)),
    ),
}

SUGGESTED_PRIORITY_LEVELS: dict[str, Object] = {
    level["metadata"]["name"]: level
    for level in (
        _level("system", _limited(30, 33, 64, 6)),
        _level("node-high", _limited(40, 25, 64, 6)),
        _level("leader-election", _limited(10, 0, 16, 4)),
        _level("workload-high", _limited(40, 50, 128, 6)),
        _level("workload-low", _limited(100, 90, 128, 6)),
        _level("global-default", _limited(20, 50, 128, 6)),
    )
}

SUGGESTED_FLOW_SCHEMAS: dict[str, Object] = {
    schema["metadata"]["name"]: schema
    for schema in (
        _schema(
            "system-nodes",
            "system",
            500,
            "ByUser",
            **_all_requests_of(_groups("system:nodes")),
        ),
        _schema(
            "system-node-high",
            "node-high",
            400,
            "ByUser",
            subjects=_groups("system:nodes"),
            resourceRules=[
                _resource_rule(_ALL, [""], ["nodes", "nodes/status"], True),
                _resource_rule(_ALL, ["coordination.k8s.io"], ["leases"], False),
            ],
        ),
        _schema(
            "probes",
            "exempt",
            2,
            "",
            subjects=_groups(_UNAUTHENTICATED, _AUTHENTICATED),
            nonResourceRules=[
                {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}
            ],
        ),
        _schema(
            "system-leader-election",
            "leader-election",
            100,
            "ByUser",
            subjects=_users(_CONTROLLER_MANAGER, _SCHEDULER) + _kube_system_accounts("*"),
            resourceRules=[_LEASES],
        ),
        _schema(
            "workload-leader-election",
            "leader-election",
            200,
            "ByUser",
            subjects=_kube_system_accounts("*"),
            resourceRules=[
                _resource_rule(
                    ["get", "create", "update"], [""], ["endpoints", "configmaps"], False
                ),
                _LEASES,
            ],
        ),
        _schema(
            "endpoint-controller",
            "workload-high",
            150,
            "ByUser",
            subjects=_users(_CONTROLLER_MANAGER)
            + _kube_system_accounts("endpoint-controller", "endpointslicemirroring-controller"),
            resourceRules=[_resource_rule(["get", "create", "update"], [""], ["endpoints"], False)],
        ),
        _schema(
            "kube-controller-manager",
            "workload-high",
            800,
            "ByNamespace",
            **_all_requests_of(_users(_CONTROLLER_MANAGER)),
        ),
        _schema(
            "kube-scheduler",
            "workload-high",
            800,
            "ByNamespace",
            **_all_requests_of(_users(_SCHEDULER)),
        ),
        _schema(
            "kube-system-service-accounts",
            "workload-high",
            900,
            "ByNamespace",
            **_all_requests_of(_kube_system_accounts("*")),
        ),
        _schema(
            "service-accounts",
            "workload-low",
            9000,
            "ByUser",
            **_all_requests_of(_groups("system:serviceaccounts")),
        ),
        _schema(
            "global-default",
            "global-default",
            9900,
            "ByUser",
            **_all_requests_of(_groups(_UNAUTHENTICATED, _AUTHENTICATED)),
        ),
    )
}
