"""CRD rules using the Kubernetes ``format`` library and the strings extension, through kubectl.

The CRD validates ``spec.name`` with ``format.dns1123Label()`` (the error comes from the
format's own validation, read in a messageExpression: joining the list would exceed the
estimated cost limit, as upstream, since its items have no size the estimate can know) and
``spec.image`` with ``split`` and cel-go's ``format`` string formatting; kubectl 1.33 prints
kube-apiserver's error lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KapiServer
from tests.helpers.crds import wait_established, write_manifest
from tests.helpers.kubectl import Kubectl, make_kubectl

pytestmark = pytest.mark.kubectl

GROUP = "formatrules.example.com"
CRD_NAME = f"formattabs.{GROUP}"

LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def format_crd() -> dict[str, Any]:
    spec_schema = {
        "type": "object",
        "required": ["name", "image"],
        "properties": {
            "name": {
                "type": "string",
                "maxLength": 63,
                "x-kubernetes-validations": [
                    {
                        "rule": "!format.dns1123Label().validate(self).hasValue()",
                        "messageExpression": "format.dns1123Label().validate(self).value()[0]",
                    }
                ],
            },
            "image": {"type": "string", "maxLength": 200},
        },
        "x-kubernetes-validations": [
            {
                "rule": "self.image.split(':').size() == 2",
                "messageExpression": "'image %s has no tag'.format([self.image])",
            }
        ],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "formattabs", "singular": "formattab", "kind": "FormatTab"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}
                    },
                }
            ],
        },
    }


def formattab(object_name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "FormatTab",
        "metadata": {"name": object_name},
        "spec": {"name": "web-1", "image": "registry.example.com/app:1"} | spec,
    }


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("crd-rules-ext")


@pytest.fixture(scope="module")
def kubectl(kapi_server: KapiServer, workdir: Path) -> Kubectl:
    return make_kubectl(kapi_server, workdir, "1.33")


@pytest.fixture(scope="module")
def crd(kubectl: Kubectl, workdir: Path) -> Iterator[None]:
    kubectl.ok("apply", "-f", write_manifest(workdir, "crd.yaml", format_crd()))
    wait_established(kubectl, CRD_NAME)
    yield
    kubectl.run("delete", "crd", CRD_NAME, "--wait=true")


@pytest.fixture
def ns(crd: None, namespace: str) -> str:
    return namespace


def test_valid_object_is_admitted(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    created = kubectl.ok(
        "-n", ns, "create", "-f", write_manifest(tmp_path, "ok.yaml", formattab("ok"))
    )
    assert created.out_lines == [f"formattab.{GROUP}/ok created"]


def test_format_library_error(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    bad = formattab("badname", name="Web_1")
    result = kubectl.fails("-n", ns, "create", "-f", write_manifest(tmp_path, "bad.yaml", bad))
    assert result.err_lines == [
        f'The FormatTab "badname" is invalid: spec.name: Invalid value: "Web_1": {LABEL_ERROR}'
    ]


def test_strings_extension_error(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    bad = formattab("badimage", image="docker.io/app")
    result = kubectl.fails("-n", ns, "create", "-f", write_manifest(tmp_path, "bad.yaml", bad))
    assert result.err_lines == [
        'The FormatTab "badimage" is invalid: spec: Invalid value: image docker.io/app has no tag'
    ]


def test_both_errors(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    bad = formattab("both", name="-web", image="app")
    result = kubectl.fails("-n", ns, "create", "-f", write_manifest(tmp_path, "bad.yaml", bad))
    assert result.err_lines == [
        'The FormatTab "both" is invalid: ',
        "* spec: Invalid value: image app has no tag",
        f'* spec.name: Invalid value: "-web": {LABEL_ERROR}',
    ]
    missing = kubectl.fails("-n", ns, "get", "formattab", "both")
    assert missing.err_lines == [
        f'Error from server (NotFound): formattabs.{GROUP} "both" not found'
    ]
