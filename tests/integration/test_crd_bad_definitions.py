"""Invalid CustomResourceDefinitions are refused with upstream's messages, and nothing is stored.

A single-version CRD reports its schema under ``spec.validation.openAPIV3Schema``
(upstream validates the internal form, where a lone version's schema is
hoisted to the top level).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.crds import crontab_crd, wait_established, write_manifest
from tests.helpers.kubectl import Kubectl

pytestmark = pytest.mark.kubectl

GROUP = "bad.example.com"
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123 = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    r"for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def single_version(plural: str = "badtabs", group: str = GROUP) -> dict[str, Any]:
    """The CronTab CRD of test_crds with one version (v1) and no subresources."""
    crd = crontab_crd(plural, "BadTab")
    crd["metadata"]["name"] = f"{plural}.{group}"
    crd["spec"]["group"] = group
    crd["spec"]["names"]["shortNames"] = []
    version = crd["spec"]["versions"][0]
    version.pop("subresources")
    version.pop("additionalPrinterColumns")
    crd["spec"]["versions"] = [version]
    return crd


def spec_schema(crd: dict[str, Any]) -> dict[str, Any]:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]


@pytest.fixture
def rejected(kubectl: Kubectl, tmp_path: Path) -> Callable[[dict[str, Any]], list[str]]:
    """Create a CRD that must be refused; return kubectl's error lines after checking no CRD."""

    def create(crd: dict[str, Any]) -> list[str]:
        name = crd["metadata"]["name"]
        result = kubectl.fails("create", "-f", write_manifest(tmp_path, "crd.yaml", crd))
        missing = kubectl.fails("get", "crd", name)
        assert missing.err_lines == [
            "Error from server (NotFound): customresourcedefinitions.apiextensions.k8s.io "
            f'"{name}" not found'
        ]
        return result.err_lines

    return create


def test_non_structural_schema_missing_type(rejected: Callable[..., list[str]]) -> None:
    crd = single_version()
    del spec_schema(crd)["properties"]["image"]["type"]
    assert rejected(crd) == [
        'The CustomResourceDefinition "badtabs.bad.example.com" is invalid: '
        "spec.validation.openAPIV3Schema.properties[spec].properties[image].type: "
        "Required value: must not be empty for specified object fields"
    ]


def test_multi_version_schema_paths_are_per_version(rejected: Callable[..., list[str]]) -> None:
    crd = crontab_crd("twotabs", "TwoTab")
    crd["metadata"]["name"] = f"twotabs.{GROUP}"
    crd["spec"]["group"] = GROUP
    schema = crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]
    del schema["properties"]["spec"]["properties"]["image"]["type"]
    assert rejected(crd) == [
        'The CustomResourceDefinition "twotabs.bad.example.com" is invalid: '
        "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[image].type: "
        "Required value: must not be empty for specified object fields"
    ]


def test_two_storage_versions(rejected: Callable[..., list[str]]) -> None:
    crd = crontab_crd("twotabs", "TwoTab")
    crd["metadata"]["name"] = f"twotabs.{GROUP}"
    crd["spec"]["group"] = GROUP
    for version in crd["spec"]["versions"]:
        version["storage"] = True
        version.pop("subresources")
        version.pop("additionalPrinterColumns", None)
        version["schema"] = {
            "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        }
    go_version = (
        '{{"Name":"{name}","Served":true,"Storage":true,"Deprecated":{deprecated},'
        '"DeprecationWarning":null,"Schema":null,"Subresources":null,'
        '"AdditionalPrinterColumns":null,"SelectableFields":null}}'
    )
    versions = ",".join(
        [
            go_version.format(name="v1", deprecated="false"),
            go_version.format(name="v1beta1", deprecated="true"),
        ]
    )
    assert rejected(crd) == [
        'The CustomResourceDefinition "twotabs.bad.example.com" is invalid: ',
        f"* spec.versions: Invalid value: [{versions}]: "
        "must have exactly one version marked as storage version",
        '* status.storedVersions: Invalid value: ["v1"]: must have the storage version v1beta1',
    ]


def test_name_must_be_plural_dot_group(rejected: Callable[..., list[str]]) -> None:
    crd = single_version()
    crd["metadata"]["name"] = f"other.{GROUP}"
    assert rejected(crd) == [
        'The CustomResourceDefinition "other.bad.example.com" is invalid: metadata.name: '
        'Invalid value: "other.bad.example.com": must be spec.names.plural+"."+spec.group'
    ]


def test_group_needs_a_dot(rejected: Callable[..., list[str]]) -> None:
    crd = single_version(group="example")
    assert rejected(crd) == [
        'The CustomResourceDefinition "badtabs.example" is invalid: spec.group: '
        'Invalid value: "example": should be a domain with at least one dot'
    ]


def test_bad_plural(rejected: Callable[..., list[str]]) -> None:
    crd = single_version(plural="bad_tabs")
    assert rejected(crd) == [
        'The CustomResourceDefinition "bad_tabs.bad.example.com" is invalid: ',
        f'* metadata.name: Invalid value: "bad_tabs.bad.example.com": {DNS1123}',
        f'* spec.names.plural: Invalid value: "bad_tabs": {DNS1035}',
    ]


def test_deprecation_warning_without_deprecated(rejected: Callable[..., list[str]]) -> None:
    crd = single_version()
    crd["spec"]["versions"][0]["deprecationWarning"] = "do not use"
    assert rejected(crd) == [
        'The CustomResourceDefinition "badtabs.bad.example.com" is invalid: '
        'spec.versions[0].deprecationWarning: Invalid value: "do not use": '
        "can only be set for deprecated versions"
    ]


def test_rule_that_is_not_a_bool(rejected: Callable[..., list[str]]) -> None:
    crd = single_version()
    spec_schema(crd)["x-kubernetes-validations"] = [{"rule": "self.replicas"}]
    assert rejected(crd) == [
        'The CustomResourceDefinition "badtabs.bad.example.com" is invalid: '
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: "
        'Invalid value: apiextensions.ValidationRule{Rule:"self.replicas", Message:"", '
        'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
        'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: cel expression must evaluate to a bool'
    ]


def test_rule_with_a_syntax_error(rejected: Callable[..., list[str]]) -> None:
    crd = single_version()
    spec_schema(crd)["x-kubernetes-validations"] = [{"rule": "self.replicas >"}]
    assert rejected(crd) == [
        'The CustomResourceDefinition "badtabs.bad.example.com" is invalid: '
        "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: "
        'Invalid value: apiextensions.ValidationRule{Rule:"self.replicas >", Message:"", '
        'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
        'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:16: '
        "Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', "
        "'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
        " | self.replicas >",
        " | ...............^",
    ]


def test_no_served_version_is_accepted_but_serves_nothing(kubectl: Kubectl, tmp_path: Path) -> None:
    """Upstream has no "at least one served version" rule: such a CRD is stored and
    established, and its resource is simply not served (kubectl does not know it)."""
    crd = single_version("unservedtabs")
    crd["spec"]["versions"][0]["served"] = False
    name = crd["metadata"]["name"]
    created = kubectl.ok("create", "-f", write_manifest(tmp_path, "crd.yaml", crd))
    try:
        assert created.out_lines == [
            f"customresourcedefinition.apiextensions.k8s.io/{name} created"
        ]
        wait_established(kubectl, name)
        missing = kubectl.fails("get", "unservedtabs")
        assert missing.err_lines == [
            'error: the server doesn\'t have a resource type "unservedtabs"'
        ]
    finally:
        kubectl.run("delete", "crd", name, "--wait=true")
