"""KEP-1693 for built-in kinds: real servers emulating different releases.

Each deprecated version warns on every verb with upstream's exact text, sets
``apiserver_requested_deprecated_apis`` and stops being served in its removal
release; the replacement version never warns.  The real kubectl prints the
warning and fails on it with ``--warnings-as-errors``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.kubectl import make_kubectl

CRONJOB_WARNING = (
    "batch/v1beta1 CronJob is deprecated in v1.21+, unavailable in v1.25+; use batch/v1 CronJob"
)
INGRESS_WARNING = (
    "networking.k8s.io/v1beta1 Ingress is deprecated in v1.19+, unavailable in v1.22+; "
    "use networking.k8s.io/v1 Ingress"
)
ENDPOINTS_WARNING = "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
PDB_WARNING = (
    "policy/v1beta1 PodDisruptionBudget is deprecated in v1.21+, unavailable in v1.25+; "
    "use policy/v1 PodDisruptionBudget"
)
MERGE_PATCH = {"content-type": "application/merge-patch+json"}


@pytest.fixture(scope="module")
def server_1_21(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "emulated-1-21", "--emulated-version=1.21")


@pytest.fixture(scope="module")
def server_1_24(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "emulated-1-24", "--emulated-version=1.24")


@pytest.fixture(scope="module")
def server_1_25(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "emulated-1-25", "--emulated-version=1.25")


def new_namespace(http: httpx.Client) -> str:
    name = f"dep-{uuid.uuid4().hex[:8]}"
    response = http.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    return name


def warnings(response: httpx.Response) -> list[str]:
    return response.headers.get_list("warning")


def header(text: str) -> list[str]:
    return [f'299 - "{text}"']


def cronjob(name: str, api_version: str = "batch/v1beta1") -> dict:
    return {
        "apiVersion": api_version,
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "c", "image": "busybox"}],
                        }
                    }
                }
            },
        },
    }


def metric_lines(http: httpx.Client) -> list[str]:
    text = http.get("/metrics").text
    return [line for line in text.splitlines() if "apiserver_requested_deprecated_apis" in line]


def gauge(group: str, version: str, resource: str, subresource: str, removed: str) -> str:
    """The sample line as ``/metrics`` renders it (labels sorted by name)."""
    return (
        f'apiserver_requested_deprecated_apis{{group="{group}",removed_release="{removed}",'
        f'resource="{resource}",subresource="{subresource}",version="{version}"}} 1.0'
    )


# --- every verb of a deprecated version warns -------------------------------------------------


def test_cronjob_v1beta1_warns_on_every_verb(server_1_21: KapiServer) -> None:
    expected = header(CRONJOB_WARNING)
    with server_1_21.client() as http:
        ns = new_namespace(http)
        base = f"/apis/batch/v1beta1/namespaces/{ns}/cronjobs"
        created = http.post(base, json=cronjob("nightly"))
        assert created.status_code == 201, created.text
        assert warnings(created) == expected
        assert created.json()["spec"]["concurrencyPolicy"] == "Allow"  # v1beta1 defaulting

        got = http.get(f"{base}/nightly")
        assert (got.status_code, warnings(got)) == (200, expected)
        assert got.json()["apiVersion"] == "batch/v1beta1"
        listed = http.get(base)
        assert (listed.status_code, warnings(listed)) == (200, expected)
        watched = http.get(base, params={"watch": "1", "timeoutSeconds": "1"})
        assert (watched.status_code, warnings(watched)) == (200, expected)
        assert '"ADDED"' in watched.text

        body = got.json()
        body["spec"]["suspend"] = True
        updated = http.put(f"{base}/nightly", json=body)
        assert (updated.status_code, warnings(updated)) == (200, expected)
        patched = http.patch(
            f"{base}/nightly", json={"spec": {"suspend": False}}, headers=MERGE_PATCH
        )
        assert (patched.status_code, warnings(patched)) == (200, expected)

        status = http.get(f"{base}/nightly/status")
        assert (status.status_code, warnings(status)) == (200, expected)
        status_body = status.json()
        status_body["status"] = {"lastScheduleTime": "2024-01-01T00:00:00Z"}
        put_status = http.put(f"{base}/nightly/status", json=status_body)
        assert (put_status.status_code, warnings(put_status)) == (200, expected)

        deleted = http.delete(f"{base}/nightly")
        assert (deleted.status_code, warnings(deleted)) == (200, expected)


def test_cronjob_v1_neither_warns_nor_counts(server_1_21: KapiServer) -> None:
    with server_1_21.client() as http:
        ns = new_namespace(http)
        base = f"/apis/batch/v1/namespaces/{ns}/cronjobs"
        created = http.post(base, json=cronjob("daily", "batch/v1"))
        assert (created.status_code, warnings(created)) == (201, [])
        assert warnings(http.get(f"{base}/daily/status")) == []
        # The same object read through the deprecated version converts and warns.
        beta = http.get(f"/apis/batch/v1beta1/namespaces/{ns}/cronjobs/daily")
        assert beta.json()["apiVersion"] == "batch/v1beta1"
        assert warnings(beta) == header(CRONJOB_WARNING)
        assert not [line for line in metric_lines(http) if 'version="v1"' in line]


def test_deprecated_requests_set_the_gauge(server_1_21: KapiServer) -> None:
    with server_1_21.client() as http:
        ns = new_namespace(http)
        http.get(f"/apis/batch/v1beta1/namespaces/{ns}/cronjobs")
        http.get(f"/apis/batch/v1beta1/namespaces/{ns}/cronjobs/missing/status")
        lines = metric_lines(http)
    assert (
        "# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have "
        "been requested, broken out by API group, version, resource, subresource, and "
        "removed_release."
    ) in lines
    assert "# TYPE apiserver_requested_deprecated_apis gauge" in lines
    assert gauge("batch", "v1beta1", "cronjobs", "", "1.25") in lines
    assert gauge("batch", "v1beta1", "cronjobs", "status", "1.25") in lines
    # Bounded labels: one series per API coordinates, whatever the names requested.
    assert all(re.search(r'name=|user=|namespace="', line) is None for line in lines)


def test_ingress_v1beta1_warns_and_converts(server_1_21: KapiServer) -> None:
    expected = header(INGRESS_WARNING)
    with server_1_21.client() as http:
        ns = new_namespace(http)
        beta = f"/apis/networking.k8s.io/v1beta1/namespaces/{ns}/ingresses"
        ingress = {
            "apiVersion": "networking.k8s.io/v1beta1",
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
        created = http.post(beta, json=ingress)
        assert (created.status_code, warnings(created)) == (201, expected), created.text
        path = created.json()["spec"]["rules"][0]["http"]["paths"][0]
        assert path["pathType"] == "ImplementationSpecific"  # v1beta1 defaulting

        v1 = http.get(f"/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses/web")
        assert warnings(v1) == []
        spec = v1.json()["spec"]
        assert spec["defaultBackend"] == {"service": {"name": "default", "port": {"number": 80}}}
        assert spec["rules"][0]["http"]["paths"][0]["backend"] == {
            "service": {"name": "web", "port": {"name": "http"}}
        }
        patched = http.patch(
            f"{beta}/web/status",
            json={"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}},
            headers=MERGE_PATCH,
        )
        assert (patched.status_code, warnings(patched)) == (200, expected), patched.text
        assert gauge("networking.k8s.io", "v1beta1", "ingresses", "status", "1.22") in (
            metric_lines(http)
        )


# --- removal ----------------------------------------------------------------------------------


def test_removed_versions_answer_404(server_1_24: KapiServer, server_1_25: KapiServer) -> None:
    with server_1_24.client() as http:
        ns = new_namespace(http)
        gone = http.get(f"/apis/networking.k8s.io/v1beta1/namespaces/{ns}/ingresses")
        assert gone.status_code == 404
        assert warnings(gone) == []
        still = http.get(f"/apis/batch/v1beta1/namespaces/{ns}/cronjobs")
        assert (still.status_code, warnings(still)) == (200, header(CRONJOB_WARNING))
    with server_1_25.client() as http:
        ns = new_namespace(http)
        assert http.get(f"/apis/batch/v1beta1/namespaces/{ns}/cronjobs").status_code == 404
        assert http.get("/apis/batch/v1beta1").status_code == 404
        served = http.get(f"/apis/batch/v1/namespaces/{ns}/cronjobs")
        assert (served.status_code, warnings(served)) == (200, [])
        assert metric_lines(http)[-1].startswith("# TYPE")  # no sample was ever set


# --- Endpoints: deprecated without a removal release ------------------------------------------


def test_endpoints_warn_without_removal(kapi_server: KapiServer) -> None:
    with kapi_server.client() as http:
        ns = new_namespace(http)
        base = f"/api/v1/namespaces/{ns}/endpoints"
        endpoints = {
            "metadata": {"name": "svc"},
            "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 8080}]}],
        }
        created = http.post(base, json=endpoints)
        assert (created.status_code, warnings(created)) == (201, header(ENDPOINTS_WARNING))
        assert created.json()["subsets"][0]["ports"][0]["protocol"] == "TCP"
        assert warnings(http.get(base)) == header(ENDPOINTS_WARNING)
        slices = http.get(f"/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices")
        assert (slices.status_code, warnings(slices)) == (200, [])
        assert gauge("", "v1", "endpoints", "", "") in metric_lines(http)
        # Everything removed by 1.33 is gone.
        assert http.get(f"/apis/batch/v1beta1/namespaces/{ns}/cronjobs").status_code == 404
        ingresses = f"/apis/networking.k8s.io/v1beta1/namespaces/{ns}/ingresses"
        assert http.get(ingresses).status_code == 404


# --- the real kubectl -------------------------------------------------------------------------


def test_kubectl_prints_the_warning_and_can_fail_on_it(
    server_1_24: KapiServer, tmp_path: Path
) -> None:
    kubectl = make_kubectl(server_1_24, tmp_path, "1.32")
    with server_1_24.client() as http:
        ns = new_namespace(http)
    args = ("-n", ns, "get", "poddisruptionbudgets.v1beta1.policy")
    result = kubectl.run(*args)
    assert result.returncode == 0, str(result)
    assert f"Warning: {PDB_WARNING}" in result.err_lines, str(result)
    strict = kubectl.run(*args, "--warnings-as-errors")
    assert strict.returncode != 0, str(strict)
    assert f"Warning: {PDB_WARNING}" in strict.err_lines, str(strict)
