"""rbac.authorization.k8s.io on a real server: kubectl's create commands (protobuf bodies on
1.32+), tables, validation with upstream's messages, roleRef immutability, the bootstrap
policy, ClusterRole aggregation, v1beta1 at an emulated 1.21, and the official client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client, config

from tests.conftest import KapiServer, serve_with_flags, start_server
from tests.helpers.kubectl import Kubectl, make_kubectl
from tests.helpers.objects import unique
from tests.helpers.protobuf_requests import PROTOBUF_VERSIONS
from tests.helpers.status import assert_status
from tests.helpers.wait import eventually

GROUP = "rbac.authorization.k8s.io"
V1 = f"/apis/{GROUP}/v1"
V1BETA1 = f"/apis/{GROUP}/v1beta1"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
BOOTSTRAPPING = "kubernetes.io/bootstrapping"


def roles(namespace: str) -> str:
    return f"{V1}/namespaces/{namespace}/roles"


def rolebindings(namespace: str) -> str:
    return f"{V1}/namespaces/{namespace}/rolebindings"


def role(name: str, *rules: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Role",
        "metadata": {"name": name},
        "rules": list(rules),
    }


def binding(
    name: str,
    kind: str = "RoleBinding",
    ref_kind: str = "Role",
    ref: str = "reader",
    *subjects: dict[str, Any],
) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": kind,
        "metadata": {"name": name},
        "roleRef": {"apiGroup": GROUP, "kind": ref_kind, "name": ref},
        "subjects": list(subjects),
    }


def cluster_role(name: str, labels: dict[str, str] | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "labels": labels or {}},
        **fields,
    }


def get_rules(rule_resource: str) -> dict[str, Any]:
    return {"apiGroups": ["example.com"], "resources": [rule_resource], "verbs": ["get"]}


@pytest.fixture(params=PROTOBUF_VERSIONS)
def pb_kubectl(request: pytest.FixtureRequest, kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    """kubectl 1.32 and 1.33, which send ``kubectl create`` bodies as protobuf."""
    return make_kubectl(kapi_server, tmp_path, request.param)


# --- kubectl ---------------------------------------------------------------------------------


def test_kubectl_create_role_and_rolebinding(
    pb_kubectl: Kubectl, http: httpx.Client, namespace: str
) -> None:
    pb_kubectl.ok(
        "create",
        "role",
        "cm-reader",
        "--verb=get",
        "--verb=list",
        "--resource=configmaps",
        "-n",
        namespace,
    )
    pb_kubectl.ok(
        "create",
        "rolebinding",
        "read-cms",
        "--role=cm-reader",
        "--user=jane",
        "--group=devs",
        "--serviceaccount=ci:builder",
        "-n",
        namespace,
    )
    stored = http.get(f"{roles(namespace)}/cm-reader").json()
    assert stored["rules"] == [
        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}
    ]
    bound = http.get(f"{rolebindings(namespace)}/read-cms").json()
    assert bound["roleRef"] == {"apiGroup": GROUP, "kind": "Role", "name": "cm-reader"}
    assert sorted(bound["subjects"], key=lambda s: s["kind"]) == [
        {"kind": "Group", "apiGroup": GROUP, "name": "devs"},
        {"kind": "ServiceAccount", "name": "builder", "namespace": "ci"},
        {"kind": "User", "apiGroup": GROUP, "name": "jane"},
    ]
    wide = pb_kubectl.ok("get", "rolebinding", "read-cms", "-n", namespace, "-o", "wide").out_lines
    assert wide[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    cells = wide[1].split()
    assert cells[:2] == ["read-cms", "Role/cm-reader"]
    assert cells[3:] == ["jane", "devs", "ci/builder"]
    listed = pb_kubectl.ok("get", "roles", "-n", namespace).out_lines
    assert listed[0].split() == ["NAME", "CREATED", "AT"]
    assert listed[1].split()[0] == "cm-reader"


def test_kubectl_create_clusterrole_and_binding(pb_kubectl: Kubectl, http: httpx.Client) -> None:
    name = unique("log-reader")
    pb_kubectl.ok("create", "clusterrole", name, "--verb=get", "--non-resource-url=/logs/*")
    pb_kubectl.ok("create", "clusterrolebinding", name, f"--clusterrole={name}", "--user=bob")
    try:
        stored = http.get(f"{V1}/clusterroles/{name}").json()
        assert stored["rules"] == [{"verbs": ["get"], "nonResourceURLs": ["/logs/*"]}]
        table = http.get(f"{V1}/clusterrolebindings/{name}", headers={"Accept": TABLE}).json()
        columns = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
        assert columns == [
            ("Name", 0),
            ("Role", 0),
            ("Age", 0),
            ("Users", 1),
            ("Groups", 1),
            ("ServiceAccounts", 1),
        ]
        cells = table["rows"][0]["cells"]
        assert cells[:2] == [name, f"ClusterRole/{name}"]
        assert cells[3:] == ["bob", "", ""]
    finally:
        http.delete(f"{V1}/clusterrolebindings/{name}")
        http.delete(f"{V1}/clusterroles/{name}")


def test_kubectl_shows_the_bootstrap_roles(kubectl: Kubectl) -> None:
    names = [line.split()[0] for line in kubectl.ok("get", "clusterroles").out_lines[1:]]
    for expected in (
        "admin",
        "cluster-admin",
        "edit",
        "view",
        "system:discovery",
        "system:basic-user",
        "system:public-info-viewer",
    ):
        assert expected in names

    def aggregated() -> str | None:
        out = kubectl.ok("describe", "clusterrole", "admin").stdout
        return out if "roles.rbac.authorization.k8s.io" in out else None

    described = eventually(aggregated, what="admin to aggregate its rules")
    assert "Labels:       kubernetes.io/bootstrapping=rbac-defaults" in described
    assert "Annotations:  rbac.authorization.kubernetes.io/autoupdate: true" in described
    # admin holds edit's rules, which hold view's: configmaps appear with write and read verbs
    assert any(
        line.split()[0] == "configmaps" and "create" in line and "watch" in line
        for line in described.splitlines()[4:]
        if line.strip()
    ), described


def test_bootstrap_bindings(http: httpx.Client) -> None:
    admin = http.get(f"{V1}/clusterrolebindings/cluster-admin").json()
    assert admin["roleRef"] == {"apiGroup": GROUP, "kind": "ClusterRole", "name": "cluster-admin"}
    assert admin["subjects"] == [{"apiGroup": GROUP, "kind": "Group", "name": "system:masters"}]
    assert admin["metadata"]["labels"] == {BOOTSTRAPPING: "rbac-defaults"}
    assert admin["metadata"]["annotations"] == {AUTOUPDATE: "true"}
    public = http.get(f"{V1}/clusterrolebindings/system:public-info-viewer").json()
    assert [s["name"] for s in public["subjects"]] == [
        "system:authenticated",
        "system:unauthenticated",
    ]
    viewer = http.get(f"{V1}/clusterroles/system:public-info-viewer").json()
    assert viewer["rules"] == [
        {
            "verbs": ["get"],
            "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
        }
    ]


# --- validation ------------------------------------------------------------------------------


def test_rule_validation_messages(http: httpx.Client, namespace: str) -> None:
    bad = role(
        "bad",
        {"apiGroups": [""], "resources": ["pods"]},
        {"verbs": ["get"], "nonResourceURLs": ["/x"]},
    )
    status = assert_status(
        http.post(roles(namespace), json=bad),
        422,
        "Invalid",
        'Role.rbac.authorization.k8s.io "bad" is invalid: [rules[0].verbs: Required value: verbs '
        'must contain at least one value, rules[1].nonResourceURLs: Invalid value: []string{"/x"}: '
        "namespaced rules cannot apply to non-resource URLs]",
    )
    assert [c["field"] for c in status["details"]["causes"]] == [
        "rules[0].verbs",
        "rules[1].nonResourceURLs",
    ]
    no_groups = role("bad", {"verbs": ["get"], "resources": ["pods"]})
    assert_status(
        http.post(roles(namespace), json=no_groups),
        422,
        "Invalid",
        'Role.rbac.authorization.k8s.io "bad" is invalid: rules[0].apiGroups: Required value: '
        "resource rules must supply at least one api group",
    )
    assert_status(http.get(f"{roles(namespace)}/bad"), 404, "NotFound")


def test_cluster_role_mixing_rules_and_urls(http: httpx.Client) -> None:
    name = unique("mixed")
    body = cluster_role(
        name, rules=[{"verbs": ["get"], "resources": ["pods"], "nonResourceURLs": ["/x"]}]
    )
    assert_status(
        http.post(f"{V1}/clusterroles", json=body),
        422,
        "Invalid",
        f'ClusterRole.rbac.authorization.k8s.io "{name}" is invalid: rules[0].nonResourceURLs: '
        'Invalid value: []string{"/x"}: rules cannot apply to both regular resources and '
        "non-resource URLs",
    )
    assert_status(http.get(f"{V1}/clusterroles/{name}"), 404, "NotFound")


def test_binding_validation_messages(http: httpx.Client, namespace: str) -> None:
    bad = binding(
        "bad",
        "RoleBinding",
        "Pod",
        "x",
        {"kind": "Robot", "name": "r2"},
        {"kind": "User", "name": "u", "apiGroup": "example.com"},
    )
    assert_status(
        http.post(rolebindings(namespace), json=bad),
        422,
        "Invalid",
        'RoleBinding.rbac.authorization.k8s.io "bad" is invalid: [roleRef.kind: Unsupported '
        'value: "Pod": supported values: "Role", "ClusterRole", subjects[0].kind: Unsupported '
        'value: "Robot": supported values: "ServiceAccount", "User", "Group", '
        'subjects[1].apiGroup: Unsupported value: "example.com": supported values: '
        '"rbac.authorization.k8s.io"]',
    )
    assert_status(http.get(f"{rolebindings(namespace)}/bad"), 404, "NotFound")


def test_cluster_binding_needs_service_account_namespace(http: httpx.Client) -> None:
    name = unique("sa-binding")
    body = binding(
        name,
        "ClusterRoleBinding",
        "ClusterRole",
        "view",
        {"kind": "ServiceAccount", "name": "builder"},
    )
    assert_status(
        http.post(f"{V1}/clusterrolebindings", json=body),
        422,
        "Invalid",
        f'ClusterRoleBinding.rbac.authorization.k8s.io "{name}" is invalid: '
        "subjects[0].namespace: Required value",
    )
    body["roleRef"]["kind"] = "Role"
    body["subjects"][0]["namespace"] = "ci"
    assert_status(
        http.post(f"{V1}/clusterrolebindings", json=body),
        422,
        "Invalid",
        f'ClusterRoleBinding.rbac.authorization.k8s.io "{name}" is invalid: roleRef.kind: '
        'Unsupported value: "Role": supported values: "ClusterRole"',
    )
    assert_status(http.get(f"{V1}/clusterrolebindings/{name}"), 404, "NotFound")


def test_role_ref_cannot_change(http: httpx.Client, namespace: str) -> None:
    created = http.post(rolebindings(namespace), json=binding("b", "RoleBinding", "Role", "reader"))
    assert created.status_code == 201, created.text
    changed = created.json()
    changed["roleRef"] = {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"}
    assert_status(
        http.put(f"{rolebindings(namespace)}/b", json=changed),
        422,
        "Invalid",
        'RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef: Invalid value: '
        'rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"view"}: '
        "cannot change roleRef",
    )
    after = http.get(f"{rolebindings(namespace)}/b").json()
    assert after == created.json()
    # subjects may change
    patched = http.patch(
        f"{rolebindings(namespace)}/b",
        json={"subjects": [{"kind": "User", "name": "jane"}]},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["subjects"] == [{"kind": "User", "name": "jane", "apiGroup": GROUP}]


def test_put_creates_a_missing_role(http: httpx.Client, namespace: str) -> None:
    response = http.put(
        f"{roles(namespace)}/made-by-put", json=role("made-by-put", get_rules("widgets"))
    )
    assert response.status_code == 201, response.text
    assert http.get(f"{roles(namespace)}/made-by-put").json()["rules"] == [get_rules("widgets")]


# --- aggregation -----------------------------------------------------------------------------


def _rules_of(http: httpx.Client, name: str) -> list[dict[str, Any]]:
    return http.get(f"{V1}/clusterroles/{name}").json().get("rules") or []


def test_view_edit_admin_pick_up_a_labelled_role(http: httpx.Client) -> None:
    name = unique("widgets-viewer")
    rule = get_rules(name)
    body = cluster_role(name, {f"{GROUP}/aggregate-to-view": "true"}, rules=[rule])
    assert http.post(f"{V1}/clusterroles", json=body).status_code == 201
    try:
        for aggregated in ("view", "edit", "admin"):
            eventually(
                lambda a=aggregated: rule in _rules_of(http, a),
                what=f"{aggregated} to hold the new role's rule",
            )
    finally:
        http.delete(f"{V1}/clusterroles/{name}")
    for aggregated in ("view", "edit", "admin"):
        eventually(
            lambda a=aggregated: rule not in _rules_of(http, a),
            what=f"{aggregated} to drop the deleted role's rule",
        )


def test_a_new_aggregating_role(http: httpx.Client, kubectl: Kubectl) -> None:
    label = unique("team")
    parts = [unique("part-a"), unique("part-b")]
    for part in parts:
        body = cluster_role(part, {"example.com/team": label}, rules=[get_rules(part)])
        assert http.post(f"{V1}/clusterroles", json=body).status_code == 201
    combined = unique("combined")
    kubectl.ok("create", "clusterrole", combined, f"--aggregation-rule=example.com/team={label}")
    try:
        selectors = http.get(f"{V1}/clusterroles/{combined}").json()["aggregationRule"]
        assert selectors == {"clusterRoleSelectors": [{"matchLabels": {"example.com/team": label}}]}
        expected = [get_rules(p) for p in sorted(parts)]
        eventually(lambda: _rules_of(http, combined) == expected, what="the aggregated rules")
    finally:
        for name in (*parts, combined):
            http.delete(f"{V1}/clusterroles/{name}")


def test_aggregation_selectors_are_validated(http: httpx.Client) -> None:
    name = unique("no-selectors")
    assert_status(
        http.post(f"{V1}/clusterroles", json=cluster_role(name, aggregationRule={})),
        422,
        "Invalid",
        f'ClusterRole.rbac.authorization.k8s.io "{name}" is invalid: '
        "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector "
        "required if aggregationRule is non-nil",
    )


# --- bootstrap on restart --------------------------------------------------------------------


def test_bootstrap_recreates_and_respects_opt_out(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start_server(data)
    try:
        with server.client() as http:
            assert http.delete(f"{V1}/clusterroles/system:discovery").status_code == 200
            opted_out = http.get(f"{V1}/clusterroles/system:public-info-viewer").json()
            opted_out["metadata"]["annotations"][AUTOUPDATE] = "false"
            opted_out["rules"] = []
            assert (
                http.put(f"{V1}/clusterroles/system:public-info-viewer", json=opted_out).status_code
                == 200
            )
    finally:
        server.stop()
    server = start_server(data)
    try:
        with server.client() as http:
            assert http.get(f"{V1}/clusterroles/system:discovery").status_code == 200
            kept = http.get(f"{V1}/clusterroles/system:public-info-viewer").json()
            assert kept["metadata"]["annotations"][AUTOUPDATE] == "false"
            assert kept.get("rules") in (None, [])
    finally:
        server.stop()


# --- deprecated versions ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_1_21(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "rbac-1-21", "--emulated-version=1.21")


def _warning(kind: str) -> list[str]:
    return [
        f'299 - "{GROUP}/v1beta1 {kind} is deprecated in v1.17+, unavailable in v1.22+; '
        f'use {GROUP}/v1 {kind}"'
    ]


def test_v1beta1_served_with_warnings_at_1_21(server_1_21: KapiServer) -> None:
    with server_1_21.client() as http:
        group = http.get(f"/apis/{GROUP}").json()
        assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
        listed = http.get(f"{V1BETA1}/clusterroles")
        assert listed.status_code == 200
        assert listed.headers.get_list("warning") == _warning("ClusterRole")
        assert "admin" in [i["metadata"]["name"] for i in listed.json()["items"]]
        created = http.post(
            f"{V1BETA1}/namespaces/default/rolebindings",
            json={
                "apiVersion": f"{GROUP}/v1beta1",
                "kind": "RoleBinding",
                "metadata": {"name": "beta"},
                "roleRef": {"kind": "ClusterRole", "name": "view"},
                "subjects": [{"kind": "User", "name": "u"}],
            },
        )
        assert created.status_code == 201, created.text
        assert created.headers.get_list("warning") == _warning("RoleBinding")
        assert created.json()["apiVersion"] == f"{GROUP}/v1beta1"
        assert created.json()["roleRef"]["apiGroup"] == GROUP
        stored = http.get(f"{V1}/namespaces/default/rolebindings/beta")
        assert stored.headers.get_list("warning") == []
        assert stored.json()["subjects"] == [{"kind": "User", "name": "u", "apiGroup": GROUP}]


def test_v1beta1_and_v1alpha1_absent_at_the_default_version(http: httpx.Client) -> None:
    group = http.get(f"/apis/{GROUP}").json()
    assert [v["version"] for v in group["versions"]] == ["v1"]
    assert_status(http.get(f"{V1BETA1}/clusterroles"), 404, "NotFound")
    assert_status(http.get(f"/apis/{GROUP}/v1alpha1/clusterroles"), 404, "NotFound")


# --- the official Python client --------------------------------------------------------------


@pytest.fixture
def rbac_api(kapi_server: KapiServer) -> Iterator[client.RbacAuthorizationV1Api]:
    api = config.new_client_from_config(config_file=str(kapi_server.kubeconfig))
    try:
        yield client.RbacAuthorizationV1Api(api)
    finally:
        api.close()


def test_official_client(rbac_api: client.RbacAuthorizationV1Api, namespace: str) -> None:
    rule = client.V1PolicyRule(api_groups=[""], resources=["configmaps"], verbs=["get"])
    rbac_api.create_namespaced_role(
        namespace, client.V1Role(metadata=client.V1ObjectMeta(name="reader"), rules=[rule])
    )
    subject = client.RbacV1Subject(kind="User", name="jane", api_group=GROUP)
    rbac_api.create_namespaced_role_binding(
        namespace,
        client.V1RoleBinding(
            metadata=client.V1ObjectMeta(name="read"),
            role_ref=client.V1RoleRef(api_group=GROUP, kind="Role", name="reader"),
            subjects=[subject],
        ),
    )
    listed = rbac_api.list_namespaced_role(namespace)
    assert [r.metadata.name for r in listed.items] == ["reader"]
    patched = rbac_api.patch_namespaced_role(
        "reader",
        namespace,
        {"rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]},
    )
    assert patched.rules[0].resources == ["secrets"]
    bindings = rbac_api.list_namespaced_role_binding(namespace)
    assert bindings.items[0].subjects[0].name == "jane"
    roles_listed = rbac_api.list_cluster_role(
        label_selector="kubernetes.io/bootstrapping=rbac-defaults"
    )
    assert "cluster-admin" in [r.metadata.name for r in roles_listed.items]
    with pytest.raises(client.ApiException) as refused:
        rbac_api.patch_namespaced_role_binding(
            "read",
            namespace,
            {"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"}},
        )
    assert refused.value.status == 422
