"""The ClusterRoles and ClusterRoleBindings kube-apiserver's RBAC post-start hook creates.

A subset of upstream's bootstrap policy
(``plugin/pkg/auth/authorizer/rbac/bootstrappolicy``): the user-facing roles
(``cluster-admin``, and ``admin``/``edit``/``view``, which are aggregated from
the ``system:aggregate-to-*`` roles by their labels), the discovery roles every
client relies on, and their bindings.  Rules are data, as upstream's test
fixture lists them; the controller roles of kube-controller-manager, nodes and
the scheduler are left out, as kapi runs none of those components.

Every object carries ``kubernetes.io/bootstrapping: rbac-defaults`` and
``rbac.authorization.kubernetes.io/autoupdate: "true"``; the hook keeps objects
with the annotation up to date and leaves those a user turned it off on alone.
"""

from __future__ import annotations

from kapi.apimachinery.labels import label_selector_as_selector
from kapi.apimachinery.unstructured import Object
from kapi.apis.rbac_validation import GROUP

API_VERSION = f"{GROUP}/v1"
BOOTSTRAP_LABEL = ("kubernetes.io/bootstrapping", "rbac-defaults")
AUTOUPDATE_ANNOTATION = "rbac.authorization.kubernetes.io/autoupdate"
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"

READ = ("get", "list", "watch")
WRITE = ("create", "delete", "deletecollection", "patch", "update")
READ_WRITE = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

Rule = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
"""(verbs, API groups, resources) of a resource rule."""

#: ``system:aggregate-to-view``: read access to the namespaced, non-secret user kinds.
_VIEW: tuple[Rule, ...] = (
    (
        READ,
        ("",),
        (
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "pods",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
            "services/status",
        ),
    ),
    (
        READ,
        ("",),
        (
            "bindings",
            "events",
            "limitranges",
            "namespaces/status",
            "pods/log",
            "pods/status",
            "replicationcontrollers/status",
            "resourcequotas",
            "resourcequotas/status",
        ),
    ),
    (READ, ("",), ("namespaces",)),
    (READ, ("discovery.k8s.io",), ("endpointslices",)),
    (
        READ,
        ("apps",),
        (
            "controllerrevisions",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "statefulsets",
            "statefulsets/scale",
            "statefulsets/status",
        ),
    ),
    (READ, ("autoscaling",), ("horizontalpodautoscalers", "horizontalpodautoscalers/status")),
    (READ, ("batch",), ("cronjobs", "cronjobs/status", "jobs", "jobs/status")),
    (
        READ,
        ("extensions",),
        (
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "ingresses",
            "ingresses/status",
            "networkpolicies",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "replicationcontrollers/scale",
        ),
    ),
    (READ, ("policy",), ("poddisruptionbudgets", "poddisruptionbudgets/status")),
    (READ, ("networking.k8s.io",), ("ingresses", "ingresses/status", "networkpolicies")),
)

#: ``system:aggregate-to-edit``: writes to the same kinds, secrets, and acting as pods do.
_EDIT: tuple[Rule, ...] = (
    (
        READ,
        ("",),
        (
            "pods/attach",
            "pods/exec",
            "pods/portforward",
            "pods/proxy",
            "secrets",
            "services/proxy",
        ),
    ),
    (("impersonate",), ("",), ("serviceaccounts",)),
    (WRITE, ("",), ("pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy")),
    (("create",), ("",), ("pods/eviction",)),
    (
        WRITE,
        ("",),
        (
            "configmaps",
            "events",
            "persistentvolumeclaims",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "secrets",
            "serviceaccounts",
            "services",
            "services/proxy",
        ),
    ),
    (("create",), ("",), ("serviceaccounts/token",)),
    (
        WRITE,
        ("apps",),
        (
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "replicasets",
            "replicasets/scale",
            "statefulsets",
            "statefulsets/scale",
        ),
    ),
    (WRITE, ("autoscaling",), ("horizontalpodautoscalers",)),
    (WRITE, ("batch",), ("cronjobs", "jobs")),
    (
        WRITE,
        ("extensions",),
        (
            "daemonsets",
            "deployments",
            "deployments/rollback",
            "deployments/scale",
            "ingresses",
            "networkpolicies",
            "replicasets",
            "replicasets/scale",
            "replicationcontrollers/scale",
        ),
    ),
    (WRITE, ("policy",), ("poddisruptionbudgets",)),
    (WRITE, ("networking.k8s.io",), ("ingresses", "networkpolicies")),
    (READ_WRITE, ("coordination.k8s.io",), ("leases",)),
)

#: ``system:aggregate-to-admin``: what edit lacks to run a namespace: granting access in it.
_ADMIN: tuple[Rule, ...] = (
    (("create",), ("authorization.k8s.io",), ("localsubjectaccessreviews",)),
    (READ_WRITE, (GROUP,), ("rolebindings", "roles")),
)


def _rule(rule: Rule) -> Object:
    verbs, groups, resources = rule
    return {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}


def _url_rule(verbs: tuple[str, ...], urls: tuple[str, ...]) -> Object:
    return {"nonResourceURLs": list(urls), "verbs": list(verbs)}


def _metadata(name: str, extra_labels: dict[str, str] | None = None) -> Object:
    labels = {BOOTSTRAP_LABEL[0]: BOOTSTRAP_LABEL[1], **(extra_labels or {})}
    return {"name": name, "labels": labels, "annotations": {AUTOUPDATE_ANNOTATION: "true"}}


def _aggregate_label(*targets: str) -> dict[str, str]:
    return {AGGREGATE_TO + target: "true" for target in targets}


def _cluster_role(
    name: str,
    rules: list[Object] | None,
    labels: dict[str, str] | None = None,
    aggregate_from: str = "",
) -> Object:
    role: Object = {
        "apiVersion": API_VERSION,
        "kind": "ClusterRole",
        "metadata": _metadata(name, labels),
    }
    if rules is not None:  # an aggregated role starts with none; its controller fills them
        role["rules"] = rules
    if aggregate_from:
        role["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": _aggregate_label(aggregate_from)}]
        }
    return role


def cluster_roles() -> list[Object]:
    """Fresh copies of the bootstrap ClusterRoles, in name order as upstream lists them."""
    return [
        _cluster_role("admin", None, aggregate_from="admin"),
        _cluster_role(
            "cluster-admin",
            [_rule((("*",), ("*",), ("*",))), _url_rule(("*",), ("*",))],
        ),
        _cluster_role("edit", None, _aggregate_label("admin"), aggregate_from="edit"),
        _cluster_role(
            "system:aggregate-to-admin", [_rule(r) for r in _ADMIN], _aggregate_label("admin")
        ),
        _cluster_role(
            "system:aggregate-to-edit", [_rule(r) for r in _EDIT], _aggregate_label("edit")
        ),
        _cluster_role(
            "system:aggregate-to-view", [_rule(r) for r in _VIEW], _aggregate_label("view")
        ),
        _cluster_role(
            "system:basic-user",
            [
                _rule(
                    (
                        ("create",),
                        ("authorization.k8s.io",),
                        ("selfsubjectaccessreviews", "selfsubjectrulesreviews"),
                    )
                ),
                _rule((("create",), ("authentication.k8s.io",), ("selfsubjectreviews",))),
            ],
        ),
        _cluster_role(
            "system:discovery",
            [
                _url_rule(
                    ("get",),
                    (
                        "/api",
                        "/api/*",
                        "/apis",
                        "/apis/*",
                        "/healthz",
                        "/livez",
                        "/openapi",
                        "/openapi/*",
                        "/readyz",
                        "/version",
                        "/version/",
                    ),
                )
            ],
        ),
        _cluster_role(
            "system:monitoring",
            [
                _url_rule(
                    ("get",),
                    (
                        "/healthz",
                        "/healthz/*",
                        "/livez",
                        "/livez/*",
                        "/metrics",
                        "/metrics/slis",
                        "/readyz",
                        "/readyz/*",
                    ),
                )
            ],
        ),
        _cluster_role(
            "system:public-info-viewer",
            [_url_rule(("get",), ("/healthz", "/livez", "/readyz", "/version", "/version/"))],
        ),
        _cluster_role("view", None, _aggregate_label("edit"), aggregate_from="view"),
    ]


def _binding(name: str, *groups: str) -> Object:
    return {
        "apiVersion": API_VERSION,
        "kind": "ClusterRoleBinding",
        "metadata": _metadata(name),
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": group} for group in groups],
    }


def cluster_role_bindings() -> list[Object]:
    """Fresh copies of the bootstrap ClusterRoleBindings (each binds the role of its name)."""
    return [
        _binding("cluster-admin", "system:masters"),
        _binding("system:basic-user", "system:authenticated"),
        _binding("system:discovery", "system:authenticated"),
        _binding("system:monitoring", "system:monitoring"),
        _binding("system:public-info-viewer", "system:authenticated", "system:unauthenticated"),
    ]


def reconcile(current: Object, wanted: Object) -> Object | None:
    """The update that brings an existing bootstrap object up to date, or None if none is due.

    Only objects whose autoupdate annotation is ``"true"`` are touched (a user
    opts out by setting it to ``"false"``).  Labels and annotations the
    bootstrap object has are added; rules it has that the stored object lacks
    are appended; an aggregating role gains missing selectors and keeps the
    rules the aggregation controller wrote.  A binding gains missing subjects;
    its roleRef cannot change.  Nothing is ever taken away.
    """
    meta = current.get("metadata") or {}
    if (meta.get("annotations") or {}).get(AUTOUPDATE_ANNOTATION) != "true":
        return None
    updated = {**current, "metadata": dict(meta)}
    changed = False
    for key in ("labels", "annotations"):
        have = dict(meta.get(key) or {})
        for k, v in (wanted["metadata"].get(key) or {}).items():
            if k not in have:
                have[k] = v
                changed = True
        updated["metadata"][key] = have
    if wanted["kind"] == "ClusterRole":
        if "aggregationRule" in wanted:
            rule = dict(current.get("aggregationRule") or {})
            selectors = list(rule.get("clusterRoleSelectors") or [])
            for selector in wanted["aggregationRule"]["clusterRoleSelectors"]:
                if selector not in selectors:
                    selectors.append(selector)
                    changed = True
            rule["clusterRoleSelectors"] = selectors
            updated["aggregationRule"] = rule
        else:
            rules = list(current.get("rules") or [])
            for rule in wanted.get("rules") or ():
                if not any(_same_rule(rule, have) for have in rules):
                    rules.append(rule)
                    changed = True
            updated["rules"] = rules
    else:
        subjects = list(current.get("subjects") or [])
        for subject in wanted["subjects"]:
            if subject not in subjects:
                subjects.append(subject)
                changed = True
        updated["subjects"] = subjects
    return updated if changed else None


_RULE_FIELDS = ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs")


def _same_rule(a: Object, b: Object) -> bool:
    """Rules equal field by field, a missing list counting as empty (Go's semantic equality)."""
    return all((a.get(f) or []) == (b.get(f) or []) for f in _RULE_FIELDS)


def same_rules(a: list[Object] | None, b: list[Object] | None) -> bool:
    """Two rule lists equal in order, as ``equality.Semantic.DeepEqual`` compares them."""
    a, b = a or [], b or []
    return len(a) == len(b) and all(_same_rule(x, y) for x, y in zip(a, b, strict=True))


def aggregated_rules(role: Object, roles: list[Object]) -> list[Object]:
    """The rules an aggregating ClusterRole should hold, given every ClusterRole.

    Per selector in order, the matching roles by name (the role itself
    excluded), each rule once, in the order first met: upstream's
    clusterrole-aggregation controller's computation.
    """
    name = role["metadata"]["name"]
    rules: list[Object] = []
    for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ():
        matcher = label_selector_as_selector(selector)  # validation let only good ones in
        matching = sorted(
            (r for r in roles if matcher.matches(r["metadata"].get("labels") or {})),
            key=lambda r: r["metadata"]["name"],
        )
        for other in matching:
            if other["metadata"]["name"] == name:
                continue
            for rule in other.get("rules") or ():
                if not any(_same_rule(rule, have) for have in rules):
                    rules.append(rule)
    return rules
