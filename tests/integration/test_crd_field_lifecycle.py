"""KEP-2558 beyond the KEP: ``x-kubernetes-api-lifecycle`` on a CRD's fields, end to end.

The CRD's tags are checked like built-in ones, published in OpenAPI (and in
the description, for kubectl explain), and writes of its custom resources
that set an alpha or deprecated field are warned; deprecated fields are
counted for ``kapi deprecations``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.crds import CRDS, crd_of, install
from tests.helpers.kapi_cli import make_kapi
from tests.helpers.kubectl import make_kubectl
from tests.helpers.status import assert_status

GROUP = "lifecycle.example.com"
EXTENSION = "x-kubernetes-api-lifecycle"
ALPHA = {"example.com": {"minVersion": "v1.4.0", "status": "alpha", "featureGate": "Frobbing"}}
DEPRECATED = {"example.com": {"minVersion": "v1.0", "status": "deprecated"}}
WIDGETS = f"/apis/{GROUP}/v1/namespaces/default/widgets"
ALPHA_WARNING = (
    "spec.frobber: alpha field (feature gate Frobbing); it may change or be removed in a "
    "future release"
)


def spec_schema(frobber: dict[str, Any], legacy: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "size": {"type": "integer"},
            "frobber": {"type": "string", "description": "How to frob.", EXTENSION: frobber},
            "ports": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "port": {"type": "integer"},
                        "legacy": {"type": "string", EXTENSION: legacy},
                    },
                },
            },
        },
    }


def widgets_crd(
    frobber: dict[str, Any] = ALPHA, legacy: dict[str, Any] = DEPRECATED
) -> dict[str, Any]:
    return crd_of(GROUP, "widgets", "Widget", spec_schema(frobber, legacy))


def warnings(response: httpx.Response) -> list[str]:
    return [value.split('"')[1] for value in response.headers.get_list("warning")]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """A server of its own, so the deprecated-field counts are this module's."""
    yield from serve_with_flags(tmp_path_factory, "crd-lifecycle")


@pytest.fixture(scope="module")
def http(server: KapiServer) -> Iterator[httpx.Client]:
    with server.client() as client:
        install(client, widgets_crd())
        yield client


def test_bad_tags_are_refused_with_their_paths(http: httpx.Client) -> None:
    bad = widgets_crd(
        frobber={"example.com": {"minVersion": "1.4", "status": "gamma", "since": "x"}},
        legacy={"Example": {"minVersion": "v1.0"}},
    )
    bad["metadata"]["name"] = bad["metadata"]["name"].replace("widgets", "gadgets")
    bad["spec"]["names"] = {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"}
    root = "spec.validation.openAPIV3Schema.properties[spec]"
    frobber = f"{root}.properties[frobber].{EXTENSION}[example.com]"
    legacy = f"{root}.properties[ports].items.properties[legacy].{EXTENSION}[Example]"
    response = http.post(CRDS, json=bad)
    assert_status(
        response,
        422,
        "Invalid",
        'CustomResourceDefinition.apiextensions.k8s.io "gadgets.lifecycle.example.com" is '
        f'invalid: [{frobber}.since: Unsupported value: "since": supported values: '
        f'"minVersion", "status", "featureGate", {frobber}.minVersion: Invalid value: "1.4": '
        r"must match v(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)){1,2}, "
        f'{frobber}.status: Unsupported value: "gamma": supported values: "alpha", "beta", '
        f'"deprecated", {legacy}: Invalid value: "Example": must be a lowercase component '
        "name such as kubernetes or example.com]",
    )
    assert http.get(f"{CRDS}/gadgets.{GROUP}").status_code == 404


def test_openapi_publishes_the_tags_and_says_them_in_descriptions(http: httpx.Client) -> None:
    v3 = http.get(f"/openapi/v3/apis/{GROUP}/v1").json()
    spec = v3["components"]["schemas"]["com.example.lifecycle.v1.Widget"]["properties"]["spec"]
    frobber = spec["properties"]["frobber"]
    assert frobber[EXTENSION] == ALPHA
    assert frobber["description"] == (
        "How to frob. Lifecycle (example.com): alpha, feature gate Frobbing, field since v1.4.0."
    )
    legacy = spec["properties"]["ports"]["items"]["properties"]["legacy"]
    assert legacy[EXTENSION] == DEPRECATED
    assert "size" in spec["properties"] and EXTENSION not in spec["properties"]["size"]
    v2 = http.get("/openapi/v2", headers={"Accept": "application/json"}).json()
    v2_spec = v2["definitions"]["com.example.lifecycle.v1.Widget"]["properties"]["spec"]
    assert v2_spec["properties"]["frobber"][EXTENSION] == ALPHA


def test_writes_that_set_alpha_or_deprecated_fields_are_warned(http: httpx.Client) -> None:
    body = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": "w1"},
        "spec": {
            "size": 1,
            "frobber": "fast",
            "ports": [{"port": 80}, {"port": 81, "legacy": "x"}],
        },
    }
    created = http.post(WIDGETS, json=body)
    assert created.status_code == 201, created.text
    assert warnings(created) == [
        ALPHA_WARNING,
        "spec.ports[1].legacy: deprecated field; it may be removed in a future release",
    ]
    # Project gates are names only: nothing is dropped.
    assert created.json()["spec"]["frobber"] == "fast"
    unchanged = copy.deepcopy(created.json())
    unchanged["spec"]["size"] = 2
    updated = http.put(f"{WIDGETS}/w1", json=unchanged)
    assert updated.status_code == 200, updated.text
    assert warnings(updated) == []


def test_kubectl_shows_the_warning_and_explain_shows_the_lifecycle(
    server: KapiServer, http: httpx.Client, tmp_path: Path
) -> None:
    kubectl = make_kubectl(server, tmp_path)
    manifest = tmp_path / "widget.yaml"
    manifest.write_text(
        f"apiVersion: {GROUP}/v1\nkind: Widget\nmetadata:\n  name: w2\n  namespace: default\n"
        "spec:\n  frobber: slow\n"
    )
    result = kubectl.run("apply", "-f", str(manifest))
    assert result.returncode == 0, str(result)
    assert result.stdout == f"widget.{GROUP}/w2 created\n"
    assert result.stderr == f"Warning: {ALPHA_WARNING}\n"
    explain = kubectl.ok("explain", "widgets.spec.frobber")
    assert "Lifecycle (example.com): alpha, feature gate Frobbing, field since v1.4.0." in (
        " ".join(explain.stdout.split())
    )


def test_kapi_deprecations_lists_deprecated_fields_set(
    server: KapiServer, http: httpx.Client
) -> None:
    body = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": "w3"},
        "spec": {"ports": [{"port": 1, "legacy": "a"}, {"port": 2, "legacy": "b"}]},
    }
    assert http.post(WIDGETS, json=body).status_code == 201
    metrics = http.get("/metrics").text
    series = (
        f'kapi_requested_deprecated_fields_total{{field="spec.ports[*].legacy",group="{GROUP}",'
        'resource="widgets",version="v1"}'
    )
    line = next(line for line in metrics.splitlines() if line.startswith(series))
    writes = int(float(line.split()[-1]))
    assert writes >= 1  # this write, and the earlier test's when it ran first
    report = make_kapi(server).ok("deprecations")
    assert [line.split() for line in report.stdout.splitlines()[-2:]] == [
        ["API", "RESOURCE", "DEPRECATED", "FIELD", "WRITES"],
        [f"{GROUP}/v1", "widgets", "spec.ports[*].legacy", str(writes)],
    ]
