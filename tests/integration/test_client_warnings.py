"""KEP-1693 end to end: a real server's warnings reach kapi's client and the official one."""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from kapi.client import (
    Client,
    NoWarnings,
    WarningHeader,
    WarningWriter,
    get_default_warning_handler,
    set_default_warning_handler,
)
from kapi.client import kubernetes_interop as interop
from tests.conftest import KapiServer, serve_with_flags
from tests.integration.paths import cm_path, pdb_path

DEPRECATED = (
    "policy/v1beta1 PodDisruptionBudget is deprecated in v1.21+, unavailable in v1.25+; "
    "use policy/v1 PodDisruptionBudget"
)


class Recording:
    def __init__(self) -> None:
        self.seen: list[tuple[int, str, str]] = []

    def handle_warning(self, code: int, agent: str, text: str) -> None:
        self.seen.append((code, agent, text))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "warnings", "--emulated-version=1.24")


@pytest.fixture(autouse=True)
def restore_default_handler() -> Iterator[None]:
    before = get_default_warning_handler()
    yield
    set_default_warning_handler(before)
    interop.uninstall()


@pytest.fixture
def namespace(server: KapiServer) -> str:
    name = f"warn-{uuid.uuid4().hex[:8]}"
    with Client.from_kubeconfig(str(server.kubeconfig)) as c:
        c.resource("v1", "namespaces", namespaced=False).create({"metadata": {"name": name}})
    return name


@pytest.fixture
def official(server: KapiServer) -> Iterator[k8s.ApiClient]:
    api = k8s_config.new_client_from_config(config_file=str(server.kubeconfig))
    try:
        yield api
    finally:
        api.close()


def test_kapi_client_gets_the_deprecation_warning(server: KapiServer, namespace: str) -> None:
    recording = Recording()
    with Client.from_kubeconfig(str(server.kubeconfig), warning_handler=recording) as c:
        pdbs = c.resource("policy/v1beta1", "poddisruptionbudgets")
        assert pdbs.list(namespace)["items"] == []
        assert c.last_warnings == [WarningHeader(299, "-", DEPRECATED)]
        response = c.request("GET", pdb_path(namespace, version="v1beta1"))
        assert response.warnings == [WarningHeader(299, "-", DEPRECATED)]
        assert c.request("GET", pdb_path(namespace)).warnings == []
    assert recording.seen == [(299, "-", DEPRECATED)] * 2


def test_process_default_writer_prints_as_kubectl(server: KapiServer, namespace: str) -> None:
    out = io.StringIO()
    writer = WarningWriter(out, deduplicate=True)
    set_default_warning_handler(writer)
    with Client.from_kubeconfig(str(server.kubeconfig)) as c:
        for _ in range(2):
            c.resource("policy/v1beta1", "poddisruptionbudgets").list(namespace)
    assert out.getvalue() == f"Warning: {DEPRECATED}\n"
    assert writer.count == 1


def test_field_validation_warn_reports_unknown_and_duplicate_fields(
    server: KapiServer, namespace: str
) -> None:
    body = (
        b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "name": "cm"},'
        b' "data": {"k": "v"}, "foo": 1, "caf\xc3\xa9": true}'
    )
    with Client.from_kubeconfig(str(server.kubeconfig), warning_handler=NoWarnings()) as c:
        response = c.request(
            "POST",
            cm_path(namespace),
            params={"fieldValidation": "Warn"},
            body=body,
            content_type="application/json",
        )
    assert response.status == 201
    texts = [w.text for w in response.warnings]
    assert 'unknown field "foo"' in texts
    assert 'unknown field "café"' in texts  # non-ASCII travels as UTF-8 and reads back
    assert 'duplicate field "metadata.name"' in texts
    assert {w.code for w in response.warnings} == {299}


def test_official_client_call_api_through_the_adapter(
    official: k8s.ApiClient, namespace: str
) -> None:
    recording = Recording()
    interop.enable_warnings(official, recording)
    url = official.configuration.host + pdb_path(namespace, version="v1beta1")
    response = official.call_api("GET", url, header_params={"Accept": "application/json"})
    assert response.status == 200
    assert response.warnings == [WarningHeader(299, "-", DEPRECATED)]
    assert recording.seen == [(299, "-", DEPRECATED)]


def test_official_client_generated_methods_through_the_adapter(
    official: k8s.ApiClient, namespace: str
) -> None:
    recording = Recording()
    interop.enable_warnings(official, recording)
    custom = k8s.CustomObjectsApi(official)
    listed: Any = custom.list_namespaced_custom_object(
        "policy", "v1beta1", namespace, "poddisruptionbudgets"
    )
    assert listed["items"] == []
    assert interop.last_warnings(official) == [WarningHeader(299, "-", DEPRECATED)]
    k8s.CoreV1Api(official).list_namespaced_config_map(namespace)
    assert interop.last_warnings(official) == []
    assert recording.seen == [(299, "-", DEPRECATED)]


def test_official_client_global_install_follows_the_process_default(
    server: KapiServer, official: k8s.ApiClient, namespace: str
) -> None:
    process, own = Recording(), Recording()
    set_default_warning_handler(process)
    interop.install()
    interop.install()  # idempotent
    custom = k8s.CustomObjectsApi(official)
    custom.list_namespaced_custom_object("policy", "v1beta1", namespace, "poddisruptionbudgets")
    assert process.seen == [(299, "-", DEPRECATED)]

    interop.enable_warnings(official, own)  # a per-client handler wins, and is called once
    custom.list_namespaced_custom_object("policy", "v1beta1", namespace, "poddisruptionbudgets")
    assert own.seen == [(299, "-", DEPRECATED)]
    assert len(process.seen) == 1

    interop.uninstall()  # clients without a handler of their own stop handling warnings
    fresh = k8s_config.new_client_from_config(config_file=str(server.kubeconfig))
    try:
        k8s.CustomObjectsApi(fresh).list_namespaced_custom_object(
            "policy", "v1beta1", namespace, "poddisruptionbudgets"
        )
    finally:
        fresh.close()
    assert len(process.seen) == 1


def test_official_client_errors_still_carry_warnings(
    official: k8s.ApiClient, namespace: str
) -> None:
    recording = Recording()
    interop.enable_warnings(official, recording)
    custom = k8s.CustomObjectsApi(official)
    with pytest.raises(k8s.ApiException) as failure:
        custom.get_namespaced_custom_object(
            "policy", "v1beta1", namespace, "poddisruptionbudgets", "missing"
        )
    assert failure.value.status == 404
    assert recording.seen == [(299, "-", DEPRECATED)]
