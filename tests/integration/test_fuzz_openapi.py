"""Schemathesis against kapi's own OpenAPI v3: no generated request may get a 5xx.

The documents kapi publishes for the core group and for a custom resource's
group are loaded as they are served; schemathesis generates, for every
operation, its coverage cases and a few requests that fit the schema
(positive) and that break it (negative), sends them to a server of this
module's own (fuzzing deletes things) and applies its ``not_a_server_error``
check.  kube-apiserver answers every one of them with a 2xx or a 4xx Status,
but one kind: a DELETE whose ``DeleteOptions`` body does not decode, which its
delete handler hands on as a plain error, a 500 without a reason carrying Go's
decoder text. kapi answers that as upstream does, and the check lets it pass.

The run is bounded and deterministic (coverage cases are, and hypothesis runs
``derandomize``d): about 11,000 requests, a minute or two.  Requests that would
stream forever are left out: the deprecated ``/watch/`` paths and the
``watch`` query parameter (a GET with ``watch=true`` never ends), plus the
streaming subresources (proxy, attach, exec, portforward, log) should a
document list them.  docs/fuzzing.md records a longer run.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.crds import CRDS, crd_of

GROUP = "example.com"
CRD_NAME = f"widgets.{GROUP}"
NAMESPACE = "fuzz"
#: Cases generated per operation and generation mode.
MAX_EXAMPLES = 5
#: No request may take longer; a hung answer fails the test instead of stalling it.
REQUEST_TIMEOUT = 10
#: Path fragments of operations that stream (or would, on a kube-apiserver).
STREAMING = ("/watch/", "/proxy", "/attach", "/exec", "/portforward", "/log")
#: Query parameters that turn a request into a stream.
STREAMING_PARAMS = {"watch", "follow"}
#: The core resources fuzzed in this bounded run.  The workload kinds (pods, services,
#: replication controllers, ...) are left out: generating their pod-spec bodies makes a run
#: many times longer than CI can afford, and filling the service IP range would make the
#: server answer upstream's own 500 ("range is full").
FUZZED_CORE = {"namespaces", "configmaps", "secrets", "events", "endpoints"}


def widget_crd() -> dict[str, Any]:
    """A namespaced CRD with a small structural schema, a status subresource and scale."""
    spec = {
        "type": "object",
        "properties": {
            "size": {"type": "integer", "minimum": 0, "maximum": 100},
            "color": {"type": "string", "enum": ["red", "green", "blue"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["size"],
    }
    status = {"type": "object", "properties": {"size": {"type": "integer"}}}
    crd = crd_of(GROUP, "widgets", "Widget", spec, status)
    crd["spec"]["versions"][0]["subresources"]["scale"] = {
        "specReplicasPath": ".spec.size",
        "statusReplicasPath": ".status.size",
    }
    return crd


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """A server of this module's own, with the Widget CRD Established and a namespace."""
    for server in serve_with_flags(tmp_path_factory, "fuzz"):
        with server.client() as client:
            assert client.post(CRDS, json=widget_crd()).status_code == 201
            deadline = time.monotonic() + 20
            while not _established(client):
                assert time.monotonic() < deadline, "the Widget CRD never became Established"
                time.sleep(0.05)
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
            assert client.post("/api/v1/namespaces", json=namespace).status_code == 201
        yield server


def _established(client: httpx.Client) -> bool:
    conditions = (client.get(f"{CRDS}/{CRD_NAME}").json().get("status") or {}).get("conditions")
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions or [])


def without_streaming(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` without streaming operations and without the parameters that stream."""
    document = copy.deepcopy(document)
    paths = document["paths"]
    for path in list(paths):
        if any(fragment in path for fragment in STREAMING) or not _fuzzed(path):
            del paths[path]
            continue
        item = paths[path]
        for key, value in item.items():
            if key == "parameters":
                item[key] = _without_streaming_params(value)
            elif isinstance(value, dict) and "parameters" in value:
                value["parameters"] = _without_streaming_params(value["parameters"])
    return document


def _fuzzed(path: str) -> bool:
    """Whether a core path is about one of ``FUZZED_CORE`` (other groups' paths all are)."""
    if not path.startswith("/api/v1/"):
        return True
    parts = path.removeprefix("/api/v1/").split("/")
    if parts[:2] == ["namespaces", "{namespace}"] and len(parts) > 2:
        parts = parts[2:]  # namespaces/{namespace}/<resource>/...
    return parts[0] in FUZZED_CORE or parts[0] == ""


def _without_streaming_params(parameters: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in parameters if p.get("name") not in STREAMING_PARAMS]


def load_schema(server: KapiServer, path: str) -> Any:
    with server.client() as client:
        response = client.get(path)
    assert response.status_code == 200, response.text
    schema = schemathesis.openapi.from_dict(without_streaming(response.json()))
    return schema


_DECODER_ERRORS = ("json: cannot unmarshal ", "couldn't get version/kind; json parse error: ")


def not_a_server_error_but_upstreams(ctx: Any, response: Any, case: Any) -> bool | None:
    """``not_a_server_error``, except for the 500 kube-apiserver itself answers to a DELETE
    whose options body does not decode (a Status without a reason, Go's decoder text)."""
    if case.method.upper() == "DELETE" and response.status_code == 500:
        status = response.json()
        if (
            status.get("kind") == "Status"
            and "reason" not in status
            and status.get("message", "").startswith(_DECODER_ERRORS)
        ):
            return True
    return not_a_server_error(ctx, response, case)  # type: ignore[no-any-return]


class Fuzzer:
    """Sends cases and collects every failure, not only the first; a timeout is one."""

    def __init__(self, server: KapiServer) -> None:
        self.server = server
        self.session = requests.Session()
        self.cases = 0
        self.failures: list[str] = []

    def send(self, case: Any) -> None:
        self.cases += 1
        try:
            case.call_and_validate(
                base_url=self.server.url,
                session=self.session,
                checks=[not_a_server_error_but_upstreams],
                timeout=REQUEST_TIMEOUT,
            )
        except (FailureGroup, requests.RequestException) as error:
            self.failures.append(f"{case.operation.label}: {case.as_curl_command()}\n{error}")


def server_errors(server: KapiServer, document_path: str) -> tuple[int, int, list[str]]:
    """Fuzz every operation of the document at ``document_path``: (operations, cases, failures).

    Each operation gets schemathesis' coverage cases (boundary values, missing and
    unexpected properties, wrong types: deterministic by construction), then a few
    hypothesis-generated cases, positive and negative.
    """
    schema = load_schema(server, document_path)
    fuzzer = Fuzzer(server)
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        for case in schema.iter_coverage_cases(
            operation,
            generation_modes=list(GenerationMode),
            generation_config=schema.config.generation_for(operation=operation),
        ):
            path = case.meta.components.get("path") if case.meta else None
            if (
                path
                and path.mode == GenerationMode.POSITIVE
                and "namespace" in case.path_parameters
            ):
                # A namespace that exists, so bodies get past the lookup into decoding.
                case.path_parameters["namespace"] = NAMESPACE
            fuzzer.send(case)
        strategies = [operation.as_strategy(generation_mode=mode) for mode in GenerationMode]
        if "{namespace}" in operation.path:
            # A third of the cases address a namespace that exists, so bodies get past the lookup.
            strategies.append(operation.as_strategy(path_parameters={"namespace": NAMESPACE}))

        @settings(
            max_examples=MAX_EXAMPLES * len(strategies),
            derandomize=True,
            deadline=None,
            database=None,
            print_blob=False,
            suppress_health_check=[
                HealthCheck.too_slow,
                HealthCheck.filter_too_much,
                HealthCheck.data_too_large,
                HealthCheck.large_base_example,
            ],
        )
        @given(case=st.one_of(strategies))
        def fuzz(case: Any) -> None:
            fuzzer.send(case)

        fuzz()
    return operations, fuzzer.cases, fuzzer.failures


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "document", ["/openapi/v3/api/v1", f"/openapi/v3/apis/{GROUP}/v1"], ids=["core", "crd"]
)
def test_no_server_error(fuzz_server: KapiServer, document: str) -> None:
    operations, cases, failures = server_errors(fuzz_server, document)
    # A document that lost its operations, or a run that sent nothing, would pass vacuously.
    assert operations >= 10
    assert cases >= operations * MAX_EXAMPLES
    assert not failures, "\n\n".join(failures)
    assert fuzz_server.process.poll() is None
