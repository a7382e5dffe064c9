"""Quantities read back canonical, and invalid ones refused, through kubectl 1.33.

kube-apiserver decodes every ``resource.Quantity`` of a built-in kind into Go's
type and writes it back with ``Quantity.String()``.  kapi serves no Pod; a
CronJob's pod template is where its built-in kinds hold quantities.  ``create -f``
sends the manifest's JSON as written, so the server alone canonicalizes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KapiServer
from tests.helpers.kubectl import Kubectl, make_kubectl

pytestmark = pytest.mark.kubectl

KUBECTL_VERSION = "1.33"
FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


@pytest.fixture
def kubectl(kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(kapi_server, tmp_path, KUBECTL_VERSION)


def cronjob_manifest(tmp_path: Path, name: str, resources: dict[str, Any], **pod_spec: Any) -> str:
    """A CronJob whose one container has ``resources``; returns the manifest's path."""
    container = {"name": "c", "image": "busybox", "resources": resources}
    document = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {"containers": [container], "restartPolicy": "Never", **pod_spec}
                    }
                }
            },
        },
    }
    # JSON, so that ``"1e3"`` stays a string (YAML 1.1 readers such as kubectl's take a number).
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(document))
    return str(path)


def pod_spec(cronjob: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return spec


def test_quantities_read_back_canonical(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    ns = ("-n", namespace)
    manifest = cronjob_manifest(
        tmp_path,
        "canonical",
        {
            "limits": {"cpu": "1000m", "memory": "1.5Gi", "ephemeral-storage": "100M"},
            "requests": {"cpu": 0.5, "memory": "1e3"},
        },
        volumes=[{"name": "scratch", "emptyDir": {"sizeLimit": "0.0001"}}],
    )
    assert kubectl.ok(*ns, "create", "-f", manifest).out_lines == [
        "cronjob.batch/canonical created"
    ]
    spec = pod_spec(kubectl.json(*ns, "get", "cronjob", "canonical"))
    assert spec["containers"][0]["resources"] == {
        "limits": {"cpu": "1", "memory": "1536Mi", "ephemeral-storage": "100M"},
        "requests": {"cpu": "500m", "memory": "1e3"},
    }
    assert spec["volumes"] == [{"name": "scratch", "emptyDir": {"sizeLimit": "100u"}}]

    patch = '{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"2000m"}}}]}}}}}}'  # noqa: E501
    kubectl.ok(*ns, "patch", "cronjob", "canonical", "-p", patch)
    patched = pod_spec(kubectl.json(*ns, "get", "cronjob", "canonical"))
    assert patched["containers"][0]["resources"]["limits"]["cpu"] == "2"


@pytest.mark.parametrize(
    ("resources", "why"),
    [
        ({"limits": {"cpu": "2 cores"}}, FORMAT_WRONG),
        ({"requests": {"memory": "32MMi"}}, "unable to parse quantity's suffix"),
    ],
)
def test_invalid_quantity_is_refused(
    kubectl: Kubectl, namespace: str, tmp_path: Path, resources: dict[str, Any], why: str
) -> None:
    ns = ("-n", namespace)
    manifest = cronjob_manifest(tmp_path, "invalid", resources)
    assert kubectl.fails(*ns, "create", "-f", manifest).err_lines == [
        f'Error from server (BadRequest): error when creating "{manifest}": CronJob in version '
        f'"v1" cannot be handled as a CronJob: {why}'
    ]
    assert kubectl.fails(*ns, "get", "cronjob", "invalid").err_lines == [
        'Error from server (NotFound): cronjobs.batch "invalid" not found'
    ]
