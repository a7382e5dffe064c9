"""networking.k8s.io NetworkPolicies and IngressClasses, and their deprecated versions.

On real servers: CRUD, upstream's defaults (a port's protocol, ``policyTypes``
from the rules, a parameters reference's scope), upstream's validation messages
(422 Invalid with causes, storage unchanged), the immutable controller, table
columns, protobuf, the CIDR warnings, kubectl, and the versions upstream
served before: extensions/v1beta1 NetworkPolicies (until 1.16) and Ingresses
(until 1.22), sharing networking.k8s.io's storage, and networking.k8s.io/v1beta1
IngressClasses (until 1.22).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kapi.runtime import protobuf
from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kubectl import make_kubectl
from tests.helpers.objects import unique
from tests.helpers.protobuf_requests import PROTOBUF, post
from tests.helpers.status import assert_status

GROUP = "networking.k8s.io"
V1 = f"/apis/{GROUP}/v1"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
CLASSES = f"{V1}/ingressclasses"
CIDR_DETAIL = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"

Object = dict[str, Any]


def policies(namespace: str, api: str = V1) -> str:
    return f"{api}/namespaces/{namespace}/networkpolicies"


def policy(name: str, **spec: Any) -> Object:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name},
        "spec": {"podSelector": {}, **spec},
    }


def ingress_class(name: str, **spec: Any) -> Object:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "IngressClass",
        "metadata": {"name": name},
        "spec": {"controller": "example.com/ingress", **spec},
    }


def stored(http: httpx.Client, path: str) -> list[Object]:
    response = http.get(path)
    assert response.status_code == 200, response.text
    return response.json()["items"]


def assert_invalid(response: httpx.Response, kind: str, name: str, errors: list[str]) -> None:
    """422 Invalid naming ``errors`` (``field: message``) in order, one cause each."""
    summary = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    status = assert_status(
        response, 422, "Invalid", f'{kind}.{GROUP} "{name}" is invalid: {summary}'
    )
    causes = status["details"]["causes"]
    assert [f"{c['field']}: {c['message']}" for c in causes] == errors


# --- NetworkPolicy ------------------------------------------------------------------------------


def test_network_policy_crud_defaults_and_generation(http: httpx.Client, namespace: str) -> None:
    body = policy(
        "web",
        podSelector={"matchLabels": {"app": "web"}},
        ingress=[{"ports": [{"port": 80}, {"port": "https", "protocol": "UDP"}]}],
        egress=[{"ports": [{"port": 53, "endPort": 60}], "to": [{"namespaceSelector": {}}]}],
    )
    created = http.post(policies(namespace), json=body)
    assert created.status_code == 201, created.text
    obj = created.json()
    spec = obj["spec"]
    assert spec["ingress"][0]["ports"] == [
        {"protocol": "TCP", "port": 80},
        {"protocol": "UDP", "port": "https"},
    ]
    assert spec["egress"][0]["ports"] == [{"protocol": "TCP", "port": 53, "endPort": 60}]
    assert spec["policyTypes"] == ["Ingress", "Egress"]  # egress rules make it an egress policy
    assert obj["metadata"]["generation"] == 1
    assert "status" not in obj

    path = f"{policies(namespace)}/web"
    assert http.get(path).json()["spec"] == spec
    assert [p["metadata"]["name"] for p in stored(http, policies(namespace))] == ["web"]

    obj["spec"]["podSelector"] = {"matchLabels": {"app": "api"}}
    updated = http.put(path, json=obj)
    assert updated.status_code == 200, updated.text
    assert updated.json()["metadata"]["generation"] == 2
    labelled = http.patch(
        path,
        json={"metadata": {"labels": {"team": "a"}}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert labelled.status_code == 200, labelled.text
    assert labelled.json()["metadata"]["generation"] == 2  # metadata is not the spec

    deleted = http.delete(path)
    assert deleted.status_code == 200, deleted.text
    assert_status(http.get(path), 404, "NotFound", f'networkpolicies.{GROUP} "web" not found')


def test_policy_types_default_to_ingress_and_are_kept_when_given(
    http: httpx.Client, namespace: str
) -> None:
    bare = policy("deny-all")
    del bare["spec"]
    plain = http.post(policies(namespace), json=bare)
    assert plain.status_code == 201, plain.text
    assert plain.json()["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}
    egress_only = http.post(policies(namespace), json=policy("egress", policyTypes=["Egress"]))
    assert egress_only.status_code == 201, egress_only.text
    assert egress_only.json()["spec"]["policyTypes"] == ["Egress"]


def test_network_policy_validation_messages(http: httpx.Client, namespace: str) -> None:
    before = stored(http, policies(namespace))
    body = policy(
        "bad",
        ingress=[
            {
                "ports": [
                    {"protocol": "ICMP", "port": 80, "endPort": 70},
                    {"port": "http", "endPort": 90},
                    {"endPort": 100},
                ],
                "from": [
                    {},
                    {"ipBlock": {"cidr": "10.0.0.0/33"}, "podSelector": {}},
                    {"ipBlock": {}},
                ],
            }
        ],
        egress=[
            {"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16", "10.0.0.0/8"]}}]}
        ],
        policyTypes=["Ingress", "Sideways"],
    )
    ingress = "spec.ingress[0]"
    assert_invalid(
        http.post(policies(namespace), json=body),
        "NetworkPolicy",
        "bad",
        [
            f'{ingress}.ports[0].protocol: Unsupported value: "ICMP": supported values: '
            '"TCP", "UDP", "SCTP"',
            f"{ingress}.ports[0].endPort: Invalid value: 70: must be greater than or equal to "
            "`port`",
            f"{ingress}.ports[1].endPort: Invalid value: 90: may not be specified when `port` "
            "is non-numeric",
            f"{ingress}.ports[2].endPort: Invalid value: 100: may not be specified when `port` "
            "is not specified",
            f"{ingress}.from[0]: Required value: must specify a peer",
            f'{ingress}.from[1].ipBlock.cidr: Invalid value: "10.0.0.0/33": {CIDR_DETAIL}',
            f"{ingress}.from[1]: Forbidden: may not specify both ipBlock and another peer",
            f"{ingress}.from[2].ipBlock.cidr: Required value",
            'spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "11.0.0.0/16": must be a '
            "strict subset of `cidr`",
            'spec.egress[0].to[0].ipBlock.except[1]: Invalid value: "10.0.0.0/8": must be a '
            "strict subset of `cidr`",
            'spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", '
            '"Egress"',
        ],
    )
    too_many = policy("many", policyTypes=["Ingress", "Egress", "Ingress"])
    assert_invalid(
        http.post(policies(namespace), json=too_many),
        "NetworkPolicy",
        "many",
        [
            'spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", '
            '"Ingress"}: may not specify more than two policyTypes'
        ],
    )
    assert stored(http, policies(namespace)) == before


def test_network_policy_update_is_validated_and_refusal_changes_nothing(
    http: httpx.Client, namespace: str
) -> None:
    created = http.post(policies(namespace), json=policy("keep"))
    assert created.status_code == 201, created.text
    path = f"{policies(namespace)}/keep"
    before = http.get(path).json()
    bad = dict(before, spec={**before["spec"], "ingress": [{"ports": [{"port": 70000}]}]})
    assert_invalid(
        http.put(path, json=bad),
        "NetworkPolicy",
        "keep",
        [
            "spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, "
            "inclusive"
        ],
    )
    assert http.get(path).json() == before


def test_ambiguous_cidrs_warn(http: httpx.Client, namespace: str) -> None:
    body = policy(
        "warned",
        ingress=[{"from": [{"ipBlock": {"cidr": "10.0.0.1/8", "except": ["10.1.0.0/16"]}}]}],
    )
    created = http.post(policies(namespace), json=body)
    assert created.status_code == 201, created.text
    assert created.headers.get_list("warning") == [
        '299 - "spec.ingress[0].from[0].ipBlock.cidr: CIDR value \\"10.0.0.1/8\\" is ambiguous '
        'in this context (should be \\"10.0.0.0/8\\" or \\"10.0.0.1/32\\"?)"'
    ]
    assert created.json()["spec"]["ingress"][0]["from"][0]["ipBlock"]["cidr"] == "10.0.0.1/8"


def test_network_policy_table(http: httpx.Client, namespace: str) -> None:
    for body in (
        policy("a", podSelector={"matchLabels": {"app": "web"}}),
        policy("b"),
    ):
        assert http.post(policies(namespace), json=body).status_code == 201
    response = http.get(policies(namespace), headers={"accept": TABLE})
    assert response.status_code == 200, response.text
    document = response.json()
    assert [c["name"] for c in document["columnDefinitions"]] == ["Name", "Pod-Selector", "Age"]
    assert [row["cells"][:2] for row in document["rows"]] == [["a", "app=web"], ["b", "<none>"]]


def test_network_policy_protobuf_round_trip(http: httpx.Client, namespace: str) -> None:
    body = policy(
        "pb",
        podSelector={"matchLabels": {"app": "db"}},
        ingress=[
            {
                "from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}],
                "ports": [{"protocol": "TCP", "port": 5432, "endPort": 5440}],
            }
        ],
    )
    created = post(http, policies(namespace), protobuf.encode(body), accept=PROTOBUF)
    assert created.status_code == 201, created.text
    assert created.headers["content-type"] == PROTOBUF
    decoded = protobuf.decode(created.content)
    assert decoded["kind"] == "NetworkPolicy"
    assert decoded["spec"] == {**body["spec"], "policyTypes": ["Ingress"]}
    assert http.get(f"{policies(namespace)}/pb").json()["spec"] == decoded["spec"]


# --- IngressClass -------------------------------------------------------------------------------


def test_ingress_class_crud_defaults_and_immutable_controller(http: httpx.Client) -> None:
    name = unique("nginx")
    params = {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "cfg"}
    created = http.post(CLASSES, json=ingress_class(name, parameters=params))
    assert created.status_code == 201, created.text
    obj = created.json()
    assert "namespace" not in obj["metadata"]
    assert obj["spec"]["parameters"] == {**params, "scope": "Cluster"}
    assert obj["metadata"]["generation"] == 1
    path = f"{CLASSES}/{name}"
    assert http.get(path).json()["spec"] == obj["spec"]

    changed = dict(obj, spec={**obj["spec"], "controller": "example.com/other"})
    assert_invalid(
        http.put(path, json=changed),
        "IngressClass",
        name,
        ['spec.controller: Invalid value: "example.com/other": field is immutable'],
    )
    assert http.get(path).json() == obj

    moved = dict(obj, spec={**obj["spec"], "parameters": {**params, "name": "other"}})
    updated = http.put(path, json=moved)
    assert updated.status_code == 200, updated.text
    assert updated.json()["metadata"]["generation"] == 2
    assert http.delete(path).status_code == 200
    assert http.get(path).status_code == 404


def test_ingress_class_validation_messages(http: httpx.Client) -> None:
    before = stored(http, CLASSES)
    name = unique("bad")
    no_controller = ingress_class(name)
    no_controller["spec"] = {}
    assert_invalid(
        http.post(CLASSES, json=no_controller),
        "IngressClass",
        name,
        ["spec.controller: Required value"],
    )
    undomained = ingress_class(name, controller="nginx")
    assert_invalid(
        http.post(CLASSES, json=undomained),
        "IngressClass",
        name,
        [
            'spec.controller: Invalid value: "nginx": must be a domain-prefixed path '
            '(such as "acme.io/foo")'
        ],
    )
    parameters = "spec.parameters"
    cases = [
        (
            {"kind": "P", "name": "p", "scope": "Namespace"},
            [f"{parameters}.namespace: Required value: `parameters.scope` is set to 'Namespace'"],
        ),
        (
            {"kind": "P", "name": "p", "scope": "Cluster", "namespace": "ns"},
            [f"{parameters}.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"],
        ),
        (
            {"name": "a/b", "scope": "Galaxy"},
            [
                f"{parameters}.kind: Required value",
                f"{parameters}.name: Invalid value: \"a/b\": may not contain '/'",
                f'{parameters}.scope: Unsupported value: "Galaxy": supported values: '
                '"Cluster", "Namespace"',
            ],
        ),
    ]
    for params, errors in cases:
        response = http.post(CLASSES, json=ingress_class(name, parameters=params))
        assert_invalid(response, "IngressClass", name, errors)
    assert stored(http, CLASSES) == before


def test_ingress_class_table(http: httpx.Client) -> None:
    plain, configured = unique("plain"), unique("configured")
    params = {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "nginx-config"}
    for body in (ingress_class(plain), ingress_class(configured, parameters=params)):
        assert http.post(CLASSES, json=body).status_code == 201
    response = http.get(CLASSES, headers={"accept": TABLE})
    assert response.status_code == 200, response.text
    document = response.json()
    names = [c["name"] for c in document["columnDefinitions"]]
    assert names == ["Name", "Controller", "Parameters", "Age"]
    rows = {row["cells"][0]: row["cells"][1:3] for row in document["rows"]}
    assert rows[plain] == ["example.com/ingress", "<none>"]
    assert rows[configured] == [
        "example.com/ingress",
        "IngressParameters.k8s.example.com/nginx-config",
    ]
    for name in (plain, configured):
        assert http.delete(f"{CLASSES}/{name}").status_code == 200


# --- kubectl ------------------------------------------------------------------------------------


@pytest.mark.kubectl
def test_kubectl_apply_and_get(kapi_server: KapiServer, namespace: str, tmp_path: Path) -> None:
    kubectl = make_kubectl(kapi_server, tmp_path)
    class_name = unique("kc")
    manifest = tmp_path / "net.yaml"
    manifest.write_text(
        yaml.safe_dump_all(
            [
                policy("db", podSelector={"matchLabels": {"app": "db"}}),
                ingress_class(class_name),
            ]
        )
    )
    applied = kubectl.ok("-n", namespace, "apply", "-f", str(manifest))
    assert applied.out_lines == [
        "networkpolicy.networking.k8s.io/db created",
        f"ingressclass.networking.k8s.io/{class_name} created",
    ]
    got = kubectl.ok("-n", namespace, "get", "netpol", "db", "--no-headers")
    assert got.out_lines[0].split()[:2] == ["db", "app=db"]
    listed = kubectl.ok("get", "ingressclass", class_name)
    assert listed.out_lines[0].split() == ["NAME", "CONTROLLER", "PARAMETERS", "AGE"]
    assert listed.out_lines[1].split()[:3] == [class_name, "example.com/ingress", "<none>"]
    spec = kubectl.json("-n", namespace, "get", "networkpolicy", "db", "-o", "json")["spec"]
    assert spec["policyTypes"] == ["Ingress"]
    assert kubectl.ok("delete", "ingressclass", class_name).out_lines == [
        f'ingressclass.networking.k8s.io "{class_name}" deleted'
    ]


# --- deprecated versions ------------------------------------------------------------------------

EXTENSIONS = "/apis/extensions/v1beta1"


@pytest.fixture(scope="module")
def server_1_15(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "net-1-15", "--emulated-version=1.15")


@pytest.fixture(scope="module")
def server_1_21(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "net-1-21", "--emulated-version=1.21")


def _namespace(http: httpx.Client) -> str:
    name = unique("net")
    response = http.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


def warning(text: str) -> list[str]:
    return [f'299 - "{text}"']


def test_extensions_network_policy_shares_storage(server_1_15: KapiServer) -> None:
    with server_1_15.client() as http:
        ns = _namespace(http)
        old = policy("old", egress=[{"ports": [{"port": 53}]}])
        old["apiVersion"] = "extensions/v1beta1"
        created = http.post(policies(ns, EXTENSIONS), json=old)
        assert created.status_code == 201, created.text
        assert created.headers.get_list("warning") == warning(
            "extensions/v1beta1 NetworkPolicy is deprecated in v1.9+, unavailable in v1.16+; "
            "use networking.k8s.io/v1 NetworkPolicy"
        )
        assert created.json()["apiVersion"] == "extensions/v1beta1"
        assert created.json()["spec"]["policyTypes"] == ["Ingress", "Egress"]
        assert created.json()["spec"]["egress"][0]["ports"] == [{"protocol": "TCP", "port": 53}]

        v1 = http.get(f"{policies(ns)}/old")
        assert v1.status_code == 200, v1.text
        assert v1.headers.get_list("warning") == []
        assert v1.json()["apiVersion"] == f"{GROUP}/v1"
        assert v1.json()["spec"] == created.json()["spec"]

        assert http.post(policies(ns), json=policy("new")).status_code == 201
        names = [p["metadata"]["name"] for p in stored(http, policies(ns, EXTENSIONS))]
        assert names == ["new", "old"]
        bad = policy("bad", policyTypes=["Sideways"])
        bad["apiVersion"] = "extensions/v1beta1"
        response = http.post(policies(ns, EXTENSIONS), json=bad)
        assert_status(
            response,
            422,
            "Invalid",
            'NetworkPolicy.extensions "bad" is invalid: spec.policyTypes[0]: Unsupported value: '
            '"Sideways": supported values: "Ingress", "Egress"',
        )
        assert len(stored(http, policies(ns))) == 2


def test_extensions_ingress_converts_to_networking_v1(server_1_21: KapiServer) -> None:
    with server_1_21.client() as http:
        ns = _namespace(http)
        body = {
            "apiVersion": "extensions/v1beta1",
            "kind": "Ingress",
            "metadata": {"name": "web"},
            "spec": {
                "backend": {"serviceName": "default", "servicePort": 80},
                "rules": [
                    {
                        "host": "example.com",
                        "http": {
                            "paths": [
                                {
                                    "path": "/",
                                    "backend": {"serviceName": "web", "servicePort": "http"},
                                }
                            ]
                        },
                    }
                ],
            },
        }
        ingresses = f"{EXTENSIONS}/namespaces/{ns}/ingresses"
        created = http.post(ingresses, json=body)
        assert created.status_code == 201, created.text
        assert created.headers.get_list("warning") == warning(
            "extensions/v1beta1 Ingress is deprecated in v1.14+, unavailable in v1.22+; "
            "use networking.k8s.io/v1 Ingress"
        )
        path = created.json()["spec"]["rules"][0]["http"]["paths"][0]
        assert path["pathType"] == "ImplementationSpecific"

        v1 = http.get(f"{V1}/namespaces/{ns}/ingresses/web")
        assert v1.status_code == 200, v1.text
        spec = v1.json()["spec"]
        assert spec["defaultBackend"] == {"service": {"name": "default", "port": {"number": 80}}}
        assert spec["rules"][0]["http"]["paths"][0]["backend"] == {
            "service": {"name": "web", "port": {"name": "http"}}
        }
        back = http.get(f"{ingresses}/web")
        assert back.json()["spec"] == created.json()["spec"]
        assert back.json()["apiVersion"] == "extensions/v1beta1"
        in_protobuf = http.get(f"{ingresses}/web", headers={"accept": PROTOBUF})
        assert in_protobuf.headers["content-type"] == PROTOBUF
        decoded = protobuf.decode(in_protobuf.content)
        assert (decoded["apiVersion"], decoded["kind"]) == ("extensions/v1beta1", "Ingress")
        assert decoded["spec"] == created.json()["spec"]


def test_ingress_class_v1beta1_warns_with_upstreams_replacement(server_1_21: KapiServer) -> None:
    with server_1_21.client() as http:
        name = unique("beta")
        body = ingress_class(name, parameters={"kind": "P", "name": "p"})
        body["apiVersion"] = f"{GROUP}/v1beta1"
        created = http.post(f"/apis/{GROUP}/v1beta1/ingressclasses", json=body)
        assert created.status_code == 201, created.text
        # Upstream's lifecycle tag names the list kind as the replacement.
        assert created.headers.get_list("warning") == warning(
            "networking.k8s.io/v1beta1 IngressClass is deprecated in v1.19+, unavailable in "
            "v1.22+; use networking.k8s.io/v1 IngressClassList"
        )
        assert created.json()["spec"]["parameters"]["scope"] == "Cluster"
        v1 = http.get(f"{CLASSES}/{name}")
        assert v1.status_code == 200, v1.text
        assert v1.json()["apiVersion"] == f"{GROUP}/v1"
        assert v1.json()["spec"] == created.json()["spec"]


def test_old_versions_are_gone_at_the_modelled_release(http: httpx.Client, namespace: str) -> None:
    assert http.get(policies(namespace, EXTENSIONS)).status_code == 404
    assert http.get(f"{EXTENSIONS}/namespaces/{namespace}/ingresses").status_code == 404
    assert http.get(f"/apis/{GROUP}/v1beta1/ingressclasses").status_code == 404


# --- the DefaultIngressClass admission plugin ---------------------------------------------------

DEFAULT_CLASS = "ingressclass.kubernetes.io/is-default-class"


def _ingress(name: str, **metadata: Any) -> Object:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Ingress",
        "metadata": {"name": name, **metadata},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
    }


def test_ingresses_without_a_class_get_the_default_one(fresh_server: KapiServer) -> None:
    with fresh_server.client() as http:
        ns = _namespace(http)
        ingresses = f"{V1}/namespaces/{ns}/ingresses"
        before = http.post(ingresses, json=_ingress("before"))
        assert before.status_code == 201, before.text
        assert "ingressClassName" not in before.json()["spec"]  # no default class yet

        assert http.post(CLASSES, json=ingress_class("plain")).status_code == 201
        marked = ingress_class("nginx")
        marked["metadata"]["annotations"] = {DEFAULT_CLASS: "true"}
        assert http.post(CLASSES, json=marked).status_code == 201

        defaulted = http.post(ingresses, json=_ingress("defaulted"))
        assert defaulted.status_code == 201, defaulted.text
        assert defaulted.json()["spec"]["ingressClassName"] == "nginx"
        explicit = http.post(
            ingresses,
            json={
                **_ingress("explicit"),
                "spec": {**_ingress("explicit")["spec"], "ingressClassName": "plain"},
            },
        )
        assert explicit.json()["spec"]["ingressClassName"] == "plain"
        legacy = http.post(
            ingresses,
            json=_ingress("legacy", annotations={"kubernetes.io/ingress.class": "other"}),
        )
        assert legacy.status_code == 201, legacy.text
        assert "ingressClassName" not in legacy.json()["spec"]

        # An update keeps what it sends: only creates are defaulted.
        current = http.get(f"{ingresses}/before").json()
        current["metadata"]["labels"] = {"touched": "yes"}
        updated = http.put(f"{ingresses}/before", json=current)
        assert updated.status_code == 200, updated.text
        assert "ingressClassName" not in updated.json()["spec"]


def test_several_default_classes_pick_the_newest_then_the_lowest_name(
    fresh_server: KapiServer,
) -> None:
    with fresh_server.client() as http:
        ns = _namespace(http)
        stamps = {}
        for name in ("b-default", "a-default"):
            body = ingress_class(name)
            body["metadata"]["annotations"] = {DEFAULT_CLASS: "true"}
            created = http.post(CLASSES, json=body)
            assert created.status_code == 201, created.text
            stamps[name] = created.json()["metadata"]["creationTimestamp"]
        newest = max(stamps.values())
        expected = min(name for name, stamp in stamps.items() if stamp == newest)
        created = http.post(f"{V1}/namespaces/{ns}/ingresses", json=_ingress("web"))
        assert created.status_code == 201, created.text
        assert created.json()["spec"]["ingressClassName"] == expected
