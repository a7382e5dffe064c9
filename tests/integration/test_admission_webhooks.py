"""Admission webhooks end to end: a real HTTPS webhook, the kapi server, and kubectl."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kapi.server import free_port
from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.admission import ADMISSION, PROPAGATION, configure, review_answer, webhook
from tests.helpers.kubectl import make_kubectl
from tests.helpers.wait import eventually
from tests.tls import CertificateAuthority, ServingCertificate, make_ca, make_serving_cert
from tests.webhook_server import WebhookServer, serve_webhook

WARNING = "configmap data was defaulted by the webhook"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """A server of this module's own: webhooks apply cluster-wide."""
    yield from serve_with_flags(tmp_path_factory, "kapi-admission")


@pytest.fixture(scope="module")
def ca() -> CertificateAuthority:
    return make_ca()


@pytest.fixture(scope="module")
def cert(ca: CertificateAuthority, tmp_path_factory: pytest.TempPathFactory) -> ServingCertificate:
    return make_serving_cert(ca, tmp_path_factory.mktemp("certs"))


@pytest.fixture
def http(server: KapiServer) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def mutate(path: str, review: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Adds ``data.injected`` with a JSONPatch and warns about it."""
    obj = review["request"]["object"]
    ops = [{"op": "add", "path": "/data/injected", "value": "yes"}]
    if "data" not in obj:
        ops.insert(0, {"op": "add", "path": "/data", "value": {}})
    patch = base64.b64encode(json.dumps(ops).encode()).decode()
    return review_answer(
        review, allowed=True, patchType="JSONPatch", patch=patch, warnings=[WARNING]
    )


def deny(path: str, review: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    status = {"code": 403, "reason": "Forbidden", "message": "configmaps named deny-* are refused"}
    if review["request"]["name"].startswith("deny-"):
        return review_answer(review, allowed=False, status=status)
    return review_answer(review, allowed=True)


def allow(path: str, review: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return review_answer(review, allowed=True)


_names = iter(range(1, 1_000_000))


@pytest.fixture
def namespace(http: httpx.Client) -> str:
    name = f"adm-{next(_names)}"
    response = http.post(
        "/api/v1/namespaces",
        json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )
    assert response.status_code == 201, response.text
    return name


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def dry_run_create(http: httpx.Client, namespace: str, name: str = "probe") -> httpx.Response:
    return http.post(f"/api/v1/namespaces/{namespace}/configmaps?dryRun=All", json=configmap(name))


def wait_called(http: httpx.Client, namespace: str, hook: WebhookServer) -> None:
    eventually(
        lambda: dry_run_create(http, namespace).status_code != 201 or bool(hook.requests),
        what="the webhook called",
        timeout=PROPAGATION,
    )
    hook.requests.clear()


# --- configuration API -------------------------------------------------------------------------


def test_configuration_is_defaulted(http: httpx.Client, ca: CertificateAuthority) -> None:
    hook = webhook("d.example.com", "https://127.0.0.1:1/", ca, "nowhere")
    del hook["namespaceSelector"]
    created = configure(http, "mutatingwebhookconfigurations", "defaults", [hook])
    got = created["webhooks"][0]
    assert {
        k: got[k]
        for k in (
            "failurePolicy",
            "matchPolicy",
            "namespaceSelector",
            "objectSelector",
            "timeoutSeconds",
            "reinvocationPolicy",
        )
    } == {
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "namespaceSelector": {},
        "objectSelector": {},
        "timeoutSeconds": 10,
        "reinvocationPolicy": "Never",
    }
    assert got["rules"][0]["scope"] == "*"
    http.delete(f"{ADMISSION}/mutatingwebhookconfigurations/defaults")


def test_invalid_configuration_is_rejected_as_upstream(
    http: httpx.Client, ca: CertificateAuthority
) -> None:
    bad = webhook(
        "bad",
        "http://127.0.0.1:1/",
        ca,
        "nowhere",
        sideEffects="Some",
        timeoutSeconds=31,
        admissionReviewVersions=["v2"],
    )
    response = http.post(
        f"{ADMISSION}/validatingwebhookconfigurations",
        json={
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "bad"},
            "webhooks": [bad, dict(bad)],
        },
    )
    assert response.status_code == 422
    assert response.json()["message"] == (
        'ValidatingWebhookConfiguration.admissionregistration.k8s.io "bad" is invalid: ['
        'webhooks[0].name: Invalid value: "bad": should be a domain with at least three segments '
        "separated by dots, "
        'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", '
        '"NoneOnDryRun", '
        "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and "
        "30 seconds, "
        "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL "
        "scheme; desired format: https://host[/path], "
        'webhooks[0].admissionReviewVersions: Invalid value: ["v2"]: must include at '
        "least one of v1, v1beta1, "
        'webhooks[1].name: Invalid value: "bad": should be a domain with at least three segments '
        "separated by dots, "
        'webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", '
        '"NoneOnDryRun", '
        "webhooks[1].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and "
        "30 seconds, "
        "webhooks[1].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL "
        "scheme; desired format: https://host[/path], "
        'webhooks[1].admissionReviewVersions: Invalid value: ["v2"]: must include at '
        "least one of v1, v1beta1, "
        'webhooks[1].name: Duplicate value: "bad"]'
    )


# --- mutating ----------------------------------------------------------------------------------


def test_mutating_patch_and_warning_reach_the_client_and_kubectl(
    server: KapiServer,
    http: httpx.Client,
    namespace: str,
    cert: ServingCertificate,
    ca: CertificateAuthority,
    tmp_path: Path,
) -> None:
    with serve_webhook(cert, mutate) as hook:
        configure(
            http,
            "mutatingwebhookconfigurations",
            f"mutate-{namespace}",
            [webhook("mutate.example.com", hook.url("/mutate"), ca, namespace)],
        )
        wait_called(http, namespace, hook)

        response = http.post(f"/api/v1/namespaces/{namespace}/configmaps", json=configmap("a"))
        assert response.status_code == 201, response.text
        assert response.json()["data"] == {"injected": "yes"}
        assert response.headers.get_list("Warning") == [f'299 - "{WARNING}"']
        stored = http.get(f"/api/v1/namespaces/{namespace}/configmaps/a").json()
        assert stored["data"] == {"injected": "yes"}

        [call] = hook.requests
        request = call.body["request"]
        assert call.path == "/mutate?timeout=10s"
        # Mutating admission runs before the strategy fills in system fields (upstream order).
        assert "uid" not in request["object"]["metadata"]
        assert "creationTimestamp" not in request["object"]["metadata"]
        assert (request["kind"], request["resource"], request["operation"], request["dryRun"]) == (
            {"group": "", "version": "v1", "kind": "ConfigMap"},
            {"group": "", "version": "v1", "resource": "configmaps"},
            "CREATE",
            False,
        )

        kubectl = make_kubectl(server, tmp_path, "1.32")
        manifest = tmp_path / "b.json"
        manifest.write_text(json.dumps(configmap("b", given="x")))
        result = kubectl.run("create", "-n", namespace, "-f", str(manifest), "-o", "json")
        assert result.returncode == 0, str(result)
        assert result.stderr == f"Warning: {WARNING}\n"
        assert json.loads(result.stdout)["data"] == {"given": "x", "injected": "yes"}


def break_key(path: str, review: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Adds a data key that ConfigMap validation refuses."""
    ops = [{"op": "add", "path": "/data", "value": {"bad key": "x"}}]
    patch = base64.b64encode(json.dumps(ops).encode()).decode()
    return review_answer(review, allowed=True, patchType="JSONPatch", patch=patch)


def test_mutated_object_is_validated_like_the_request(
    http: httpx.Client, namespace: str, cert: ServingCertificate, ca: CertificateAuthority
) -> None:
    """What a mutating webhook changes goes through the strategy's validation after it."""
    with serve_webhook(cert, break_key) as hook:
        configure(
            http,
            "mutatingwebhookconfigurations",
            f"break-{namespace}",
            [webhook("break.example.com", hook.url("/break"), ca, namespace)],
        )
        wait_called(http, namespace, hook)
        response = http.post(f"/api/v1/namespaces/{namespace}/configmaps", json=configmap("c"))
        assert response.status_code == 422, response.text
        assert response.json()["message"].startswith(
            'ConfigMap "c" is invalid: data[bad key]: Invalid value: "bad key": '
        )
        missing = http.get(f"/api/v1/namespaces/{namespace}/configmaps/c")
        assert missing.status_code == 404


def test_dry_run_calls_side_effect_free_webhooks_with_dry_run(
    http: httpx.Client, namespace: str, cert: ServingCertificate, ca: CertificateAuthority
) -> None:
    with serve_webhook(cert, mutate) as hook:
        configure(
            http,
            "mutatingwebhookconfigurations",
            f"dry-{namespace}",
            [webhook("dry.example.com", hook.url("/"), ca, namespace, sideEffects="NoneOnDryRun")],
        )
        wait_called(http, namespace, hook)
        response = dry_run_create(http, namespace, "c")
        assert response.status_code == 201
        assert response.json()["data"] == {"injected": "yes"}
        assert [r.body["request"]["dryRun"] for r in hook.requests] == [True]
        assert hook.requests[0].body["request"]["options"] == {
            "kind": "CreateOptions",
            "apiVersion": "meta.k8s.io/v1",
            "dryRun": ["All"],
        }
        assert http.get(f"/api/v1/namespaces/{namespace}/configmaps/c").status_code == 404


# --- validating --------------------------------------------------------------------------------


def test_validating_denial_as_kubectl_prints_it(
    server: KapiServer,
    http: httpx.Client,
    namespace: str,
    cert: ServingCertificate,
    ca: CertificateAuthority,
    tmp_path: Path,
) -> None:
    with serve_webhook(cert, deny) as hook:
        configure(
            http,
            "validatingwebhookconfigurations",
            f"deny-{namespace}",
            [webhook("deny.example.com", hook.url("/"), ca, namespace)],
        )
        eventually(
            lambda: dry_run_create(http, namespace, "deny-probe").status_code == 403,
            what="the denial",
            timeout=PROPAGATION,
        )
        response = http.post(f"/api/v1/namespaces/{namespace}/configmaps", json=configmap("deny-1"))
        assert response.status_code == 403
        assert response.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'admission webhook "deny.example.com" denied the request: '
            "configmaps named deny-* are refused",
            "reason": "Forbidden",
            "code": 403,
        }
        kubectl = make_kubectl(server, tmp_path, "1.32")
        manifest = tmp_path / "deny-2.json"
        manifest.write_text(json.dumps(configmap("deny-2")))
        result = kubectl.run("create", "-n", namespace, "-f", str(manifest))
        assert result.returncode == 1
        assert result.stderr == (
            f'Error from server (Forbidden): error when creating "{manifest}": admission webhook '
            '"deny.example.com" denied the request: configmaps named deny-* are refused\n'
        )
        allowed = http.post(f"/api/v1/namespaces/{namespace}/configmaps", json=configmap("ok"))
        assert allowed.status_code == 201


# --- failures and failurePolicy ----------------------------------------------------------------


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_slow_webhook_times_out(
    http: httpx.Client,
    namespace: str,
    cert: ServingCertificate,
    ca: CertificateAuthority,
    policy: str,
) -> None:
    with serve_webhook(cert, allow) as hook:
        hook.delay = 3
        configure(
            http,
            "validatingwebhookconfigurations",
            f"slow-{namespace}",
            [
                webhook(
                    "slow.example.com",
                    hook.url("/"),
                    ca,
                    namespace,
                    timeoutSeconds=1,
                    failurePolicy=policy,
                )
            ],
        )
        eventually(
            lambda: bool(hook.requests) or dry_run_create(http, namespace).status_code != 201,
            what="the webhook called",
            timeout=PROPAGATION,
        )
        response = http.post(f"/api/v1/namespaces/{namespace}/configmaps", json=configmap("s"))
        got = http.get(f"/api/v1/namespaces/{namespace}/configmaps/s")
        if policy == "Ignore":
            assert response.status_code == 201, response.text
            assert got.status_code == 200
            return
        message = (
            'Internal error occurred: failed calling webhook "slow.example.com": failed to call '
            f'webhook: Post "https://127.0.0.1:{hook.port}/?timeout=1s": context deadline exceeded'
        )
        assert response.status_code == 500
        assert response.json() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": "InternalError",
            "details": {"causes": [{"message": message.removeprefix("Internal error occurred: ")}]},
            "code": 500,
        }
        assert got.status_code == 404


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
def test_unreachable_webhook(
    http: httpx.Client, namespace: str, ca: CertificateAuthority, policy: str
) -> None:
    port = free_port()
    configure(
        http,
        "mutatingwebhookconfigurations",
        f"gone-{namespace}",
        [
            webhook(
                "gone.example.com",
                f"https://127.0.0.1:{port}/",
                ca,
                namespace,
                failurePolicy=policy,
            )
        ],
    )
    if policy == "Fail":
        eventually(
            lambda: dry_run_create(http, namespace).status_code == 500,
            what="the failure",
            timeout=PROPAGATION,
        )
        response = http.post(f"/api/v1/namespaces/{namespace}/configmaps", json=configmap("u"))
        assert response.status_code == 500
        assert response.json()["message"] == (
            'Internal error occurred: failed calling webhook "gone.example.com": failed to call '
            f'webhook: Post "https://127.0.0.1:{port}/?timeout=10s": dial tcp 127.0.0.1:{port}: '
            "connect: connection refused"
        )
        assert http.get(f"/api/v1/namespaces/{namespace}/configmaps/u").status_code == 404
    else:
        response = http.post(f"/api/v1/namespaces/{namespace}/configmaps", json=configmap("u"))
        assert response.status_code == 201, response.text


def test_webhook_configurations_are_not_sent_to_webhooks(
    http: httpx.Client, namespace: str, ca: CertificateAuthority
) -> None:
    """A failing catch-all webhook cannot lock its own configuration."""
    port = free_port()
    hook = webhook("all.example.com", f"https://127.0.0.1:{port}/", ca, namespace)
    hook["rules"] = [
        {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}
    ]
    del hook["namespaceSelector"]
    hook["objectSelector"] = {"matchLabels": {"lock": namespace}}
    configure(http, "validatingwebhookconfigurations", f"all-{namespace}", [hook])
    labelled = configmap("locked")
    labelled["metadata"]["labels"] = {"lock": namespace}
    eventually(
        lambda: (
            http.post(
                f"/api/v1/namespaces/{namespace}/configmaps?dryRun=All", json=labelled
            ).status_code
            == 500
        ),
        what="the catch-all webhook",
        timeout=PROPAGATION,
    )
    response = http.delete(f"{ADMISSION}/validatingwebhookconfigurations/all-{namespace}")
    assert response.status_code == 200, response.text
