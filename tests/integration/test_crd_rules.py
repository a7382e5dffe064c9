"""CEL validation rules (``x-kubernetes-validations``) of a CRD, through the real kubectl.

One CRD carries a rule with ``message``, one with ``messageExpression``, one
without either, one with ``fieldPath`` and ``reason``, and a transition rule
on ``oldSelf``; kubectl prints the errors as it prints kube-apiserver's.  The
same CRD has descriptions and a short name, for ``kubectl explain``,
``kubectl api-resources`` and ``kubectl get <shortname>``.
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

GROUP = "rules.example.com"
CRD_NAME = f"ruletabs.{GROUP}"


def rules_crd(name: str = CRD_NAME) -> dict[str, Any]:
    plural = name.split(".", 1)[0]
    spec_schema = {
        "type": "object",
        "description": "The desired state of the RuleTab.",
        "required": ["image", "replicas", "minReplicas", "maxReplicas"],
        "properties": {
            "image": {
                "type": "string",
                "description": "The container image; it cannot change.",
                "x-kubernetes-validations": [
                    {"rule": "self == oldSelf", "message": "image is immutable"},
                    {"rule": "self.startsWith('registry.example.com/')"},
                ],
            },
            "replicas": {"type": "integer", "description": "How many copies run."},
            "minReplicas": {"type": "integer"},
            "maxReplicas": {"type": "integer"},
        },
        "x-kubernetes-validations": [
            {
                "rule": "self.minReplicas <= self.replicas",
                "message": "replicas must be at least minReplicas",
            },
            {
                "rule": "self.replicas <= self.maxReplicas",
                # Not 'replicas ' + string(self.replicas) + ...: a string() conversion has no
                # size the estimate can know, and kube-apiserver refuses the concatenation.
                "messageExpression": "'replicas %d exceeds maxReplicas %d'"
                ".format([self.replicas, self.maxReplicas])",
            },
            {
                "rule": "self.maxReplicas <= 100",
                "message": "at most 100",
                "fieldPath": ".maxReplicas",
                "reason": "FieldValueForbidden",
            },
        ],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "plural": plural,
                "singular": plural[:-1],
                "kind": "RuleTab",
                "shortNames": [plural[:2]],
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": "RuleTab runs an image within replica bounds.",
                            "properties": {"spec": spec_schema},
                        }
                    },
                }
            ],
        },
    }


def ruletab(name: str, **spec: Any) -> dict[str, Any]:
    defaults = {
        "image": "registry.example.com/app:1",
        "replicas": 2,
        "minReplicas": 1,
        "maxReplicas": 10,
    }
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "RuleTab",
        "metadata": {"name": name},
        "spec": defaults | spec,
    }


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("crd-rules")


@pytest.fixture(scope="module")
def kubectl(kapi_server: KapiServer, workdir: Path) -> Kubectl:
    return make_kubectl(kapi_server, workdir, "1.32")


@pytest.fixture(scope="module")
def crd(kubectl: Kubectl, workdir: Path) -> Iterator[dict[str, Any]]:
    definition = rules_crd()
    kubectl.ok("apply", "-f", write_manifest(workdir, "crd.yaml", definition))
    wait_established(kubectl, CRD_NAME)
    yield definition
    kubectl.run("delete", "crd", CRD_NAME, "--wait=true")


@pytest.fixture
def ns(crd: dict[str, Any], namespace: str) -> str:
    return namespace


def test_passing_rules_admit_the_object(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    created = kubectl.ok(
        "-n", ns, "create", "-f", write_manifest(tmp_path, "ok.yaml", ruletab("ok"))
    )
    assert created.out_lines == [f"ruletab.{GROUP}/ok created"]
    stored = kubectl.json("-n", ns, "get", "ruletabs", "ok")
    assert stored["spec"]["replicas"] == 2


def test_failing_rule_with_message(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    path = write_manifest(tmp_path, "low.yaml", ruletab("low", replicas=1, minReplicas=3))
    result = kubectl.fails("-n", ns, "create", "-f", path)
    assert result.err_lines == [
        'The RuleTab "low" is invalid: spec: Invalid value: replicas must be at least minReplicas'
    ]
    assert_absent(kubectl, ns, "low")


def test_failing_rule_with_message_expression(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    path = write_manifest(tmp_path, "high.yaml", ruletab("high", replicas=12))
    result = kubectl.fails("-n", ns, "create", "-f", path)
    assert result.err_lines == [
        'The RuleTab "high" is invalid: spec: Invalid value: replicas 12 exceeds maxReplicas 10'
    ]
    assert_absent(kubectl, ns, "high")


def test_rule_without_message_and_several_failures(
    kubectl: Kubectl, ns: str, tmp_path: Path
) -> None:
    bad = ruletab("many", image="docker.io/app", replicas=0, maxReplicas=200)
    result = kubectl.fails("-n", ns, "create", "-f", write_manifest(tmp_path, "many.yaml", bad))
    # A node's own rules run before its properties' rules, as upstream's CEL validator walks.
    assert result.err_lines == [
        'The RuleTab "many" is invalid: ',
        "* spec: Invalid value: replicas must be at least minReplicas",
        "* spec.maxReplicas: Forbidden: at most 100",
        '* spec.image: Invalid value: "docker.io/app": failed rule: '
        "self.startsWith('registry.example.com/')",
    ]
    assert_absent(kubectl, ns, "many")


def test_transition_rule_fires_only_on_update(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    created = kubectl.ok("-n", ns, "create", "-f", write_manifest(tmp_path, "t.yaml", ruletab("t")))
    assert created.out_lines == [f"ruletab.{GROUP}/t created"]
    # Other changes pass: the image rule compares the image only.
    patched = kubectl.ok("-n", ns, "patch", "ruletab", "t", "--type=merge", "-p", SCALE_TO_3)
    assert patched.out_lines == [f"ruletab.{GROUP}/t patched"]
    result = kubectl.fails(
        "-n",
        ns,
        "patch",
        "ruletab",
        "t",
        "--type=merge",
        "-p",
        '{"spec":{"image":"registry.example.com/app:2"}}',
    )
    assert result.err_lines == [
        'The RuleTab "t" is invalid: spec.image: Invalid value: "registry.example.com/app:2": '
        "image is immutable"
    ]
    replaced = ruletab("t", image="registry.example.com/other", replicas=3)
    result = kubectl.fails("-n", ns, "replace", "-f", write_manifest(tmp_path, "t2.yaml", replaced))
    assert result.err_lines == [
        'The RuleTab "t" is invalid: spec.image: Invalid value: "registry.example.com/other": '
        "image is immutable"
    ]
    stored = kubectl.json("-n", ns, "get", "ruletab", "t")
    assert stored["spec"]["image"] == "registry.example.com/app:1"
    assert stored["spec"]["replicas"] == 3


SCALE_TO_3 = '{"spec":{"replicas":3}}'


def test_crd_with_a_rule_that_does_not_compile_is_rejected(
    kubectl: Kubectl, tmp_path: Path
) -> None:
    name = f"brokentabs.{GROUP}"
    broken = rules_crd(name)
    spec_schema = broken["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["x-kubernetes-validations"] = [{"rule": "self.nope > 1"}]
    result = kubectl.fails("create", "-f", write_manifest(tmp_path, "broken.yaml", broken))
    assert result.err_lines == [
        f'The CustomResourceDefinition "{name}" is invalid: '
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: "
        'Invalid value: apiextensions.ValidationRule{Rule:"self.nope > 1", Message:"", '
        'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
        'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: '
        "undefined field 'nope'",
        " | self.nope > 1",
        " | ....^",
    ]
    missing = kubectl.fails("get", "crd", name)
    assert missing.err_lines == [
        "Error from server (NotFound): customresourcedefinitions.apiextensions.k8s.io "
        f'"{name}" not found'
    ]


def test_crd_with_a_bad_message_expression_is_rejected(kubectl: Kubectl, tmp_path: Path) -> None:
    name = f"badmessagetabs.{GROUP}"
    broken = rules_crd(name)
    spec_schema = broken["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["x-kubernetes-validations"] = [
        {"rule": "self.replicas > 0", "messageExpression": "self.replicas"}
    ]
    result = kubectl.fails("create", "-f", write_manifest(tmp_path, "broken.yaml", broken))
    assert result.err_lines == [
        f'The CustomResourceDefinition "{name}" is invalid: '
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]"
        '.messageExpression: Invalid value: apiextensions.ValidationRule{Rule:"self.replicas > 0", '
        'Message:"", MessageExpression:"self.replicas", '
        'Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", '
        "OptionalOldSelf:(*bool)(nil)}: messageExpression must evaluate to a string"
    ]
    assert kubectl.run("get", "crd", name).returncode == 1


def assert_absent(kubectl: Kubectl, ns: str, name: str) -> None:
    missing = kubectl.fails("-n", ns, "get", "ruletab", name)
    assert missing.err_lines == [
        f'Error from server (NotFound): ruletabs.{GROUP} "{name}" not found'
    ]


def test_explain_shows_the_crd_descriptions(kubectl: Kubectl, crd: dict[str, Any]) -> None:
    # apiVersion, kind and metadata descriptions are kapi's own (see report); the rest is the CRD.
    assert kubectl.ok("explain", "ruletabs").out_lines == [
        "GROUP:      rules.example.com",
        "KIND:       RuleTab",
        "VERSION:    v1",
        "",
        "DESCRIPTION:",
        "    RuleTab runs an image within replica bounds.",
        "    ",
        "FIELDS:",
        "  apiVersion\t<string>",
        "    The group and version this object is written in, such as apps/v1.",
        "",
        "  kind\t<string>",
        "    The object's type, in CamelCase, such as ConfigMap.",
        "",
        "  metadata\t<ObjectMeta>",
        "    Name, namespace, labels and the other metadata of the object.",
        "",
        "  spec\t<Object>",
        "    The desired state of the RuleTab.",
        "",
        "",
    ]
    assert kubectl.ok("explain", "ruletabs.spec").out_lines == [
        "GROUP:      rules.example.com",
        "KIND:       RuleTab",
        "VERSION:    v1",
        "",
        "FIELD: spec <Object>",
        "",
        "",
        "DESCRIPTION:",
        "    The desired state of the RuleTab.",
        "    ",
        "FIELDS:",
        "  image\t<string> -required-",
        "    The container image; it cannot change.",
        "",
        "  maxReplicas\t<integer> -required-",
        "    <no description>",
        "",
        "  minReplicas\t<integer> -required-",
        "    <no description>",
        "",
        "  replicas\t<integer> -required-",
        "    How many copies run.",
        "",
        "",
    ]


def test_api_resources_and_short_name(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    listed = kubectl.ok("api-resources", f"--api-group={GROUP}").out_lines
    assert [line.split() for line in listed] == [
        ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"],
        ["ruletabs", "ru", f"{GROUP}/v1", "true", "RuleTab"],
    ]
    kubectl.ok("-n", ns, "create", "-f", write_manifest(tmp_path, "s.yaml", ruletab("short")))
    by_short_name = kubectl.ok("-n", ns, "get", "ru", "-o", "name").out_lines
    assert by_short_name == [f"ruletab.{GROUP}/short"]
