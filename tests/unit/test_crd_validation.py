"""CRD object validation: upstream paths, messages and order (``validation.go``)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kapi.apimachinery.field_errors import Path
from kapi.apis.crd_validation import validate_crd, validate_crd_status, validate_crd_update

Obj = dict[str, Any]
DNS1035 = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def _crd() -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "listKind": "WidgetList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
            "conversion": {"strategy": "None"},
        },
        "status": {"storedVersions": ["v1"]},
    }


def _errors(mutate: Callable[[Obj], None]) -> list[str]:
    crd = _crd()
    mutate(crd)
    return [str(e) for e in validate_crd(crd)]


def _spec(crd: Obj) -> Obj:
    return crd["spec"]


def _v0(crd: Obj) -> Obj:
    return crd["spec"]["versions"][0]


def test_valid_crd_has_no_errors() -> None:
    assert validate_crd(_crd()) == []


def test_valid_multi_version_crd_with_everything() -> None:
    crd = _crd()
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
            "status": {
                "type": "object",
                "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}},
            },
        },
    }
    crd["spec"]["versions"] = [
        {
            "name": "v1",
            "served": True,
            "storage": True,
            "schema": {"openAPIV3Schema": schema},
            "subresources": {
                "status": {},
                "scale": {
                    "specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas",
                    "labelSelectorPath": ".status.selector",
                },
            },
            "additionalPrinterColumns": [
                {"name": "Replicas", "type": "integer", "format": "int32", "jsonPath": ".spec.x"}
            ],
            "selectableFields": [{"jsonPath": ".spec.replicas"}],
        },
        {
            "name": "v1beta1",
            "served": True,
            "storage": False,
            "deprecated": True,
            "deprecationWarning": "use v1 — thanks",
            "schema": {"openAPIV3Schema": {"type": "object"}},
        },
    ]
    crd["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {"service": {"namespace": "ns", "name": "conv", "path": "/convert"}},
            "conversionReviewVersions": ["v1"],
        },
    }
    crd["status"]["storedVersions"] = ["v1beta1", "v1"]
    assert validate_crd(crd) == []


# --- metadata, group, scope, names ---------------------------------------------------------


def test_name_must_be_plural_dot_group() -> None:
    assert _errors(lambda c: c["metadata"].update(name="gadgets.example.com")) == [
        'metadata.name: Invalid value: "gadgets.example.com": '
        'must be spec.names.plural+"."+spec.group'
    ]


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        ("", ["spec.group: Required value"]),
        (
            "example",
            ['spec.group: Invalid value: "example": should be a domain with at least one dot'],
        ),
        (
            "Example.com",
            [
                'spec.group: Invalid value: "Example.com": a lowercase RFC 1123 subdomain must '
                "consist of lower case alphanumeric characters, '-' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ],
        ),
    ],
)
def test_group(group: str, expected: list[str]) -> None:
    def mutate(c: Obj) -> None:
        c["spec"]["group"] = group
        c["metadata"]["name"] = "widgets." + group

    # "widgets." (empty group) is itself an invalid name; only the spec errors matter here.
    assert [e for e in _errors(mutate) if not e.startswith("metadata.")] == expected


def test_scope() -> None:
    assert _errors(lambda c: _spec(c).update(scope="Global")) == [
        'spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'
    ]
    assert _errors(lambda c: _spec(c).pop("scope")) == ["spec.scope: Required value"]


def test_names_required_in_spec_order() -> None:
    def mutate(c: Obj) -> None:
        c["spec"]["names"] = {}
        c["metadata"]["name"] = ".example.com"

    assert _errors(mutate)[-4:] == [
        "spec.names.plural: Required value",
        "spec.names.singular: Required value",
        "spec.names.kind: Required value",
        "spec.names.listKind: Required value",
    ]


def test_names_format() -> None:
    def mutate(c: Obj) -> None:
        c["spec"]["names"].update(
            singular="Widget",
            kind="Wid_get",
            listKind="Wid_get",
            shortNames=["wg", "W"],
            categories=["all", "9x"],
        )

    assert _errors(mutate) == [
        f'spec.names.singular: Invalid value: "Widget": {DNS1035}',
        'spec.names.kind: Invalid value: "Wid_get": may have mixed case, but should otherwise '
        f"match: {DNS1035}",
        'spec.names.listKind: Invalid value: "Wid_get": may have mixed case, but should '
        f"otherwise match: {DNS1035}",
        f'spec.names.shortNames[1]: Invalid value: "W": {DNS1035}',
        'spec.names.listKind: Invalid value: "Wid_get": kind and listKind may not be the same',
        f'spec.names.categories[1]: Invalid value: "9x": {DNS1035}',
    ]


def test_accepted_names_are_validated_in_status() -> None:
    assert _errors(lambda c: c["status"].update(acceptedNames={"plural": "Widgets"})) == [
        f'status.acceptedNames.plural: Invalid value: "Widgets": {DNS1035}'
    ]


# --- versions ------------------------------------------------------------------------------

_V1_GO = (
    '{"Name":"v1","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,'
    '"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}'
)


def test_exactly_one_storage_version() -> None:
    errs = _errors(lambda c: _v0(c).update(storage=False))
    assert errs == [
        f"spec.versions: Invalid value: [{_V1_GO}]: "
        "must have exactly one version marked as storage version"
    ]


def test_no_versions() -> None:
    def mutate(c: Obj) -> None:
        c["spec"]["versions"] = []
        c["status"]["storedVersions"] = ["v1"]

    assert _errors(mutate) == [
        "spec.versions: Invalid value: []: must have exactly one version marked as storage version",
        'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was '
        "previously a storage version, and must remain in spec.versions until a storage "
        "migration ensures no data remains persisted in v1 and removes v1 from "
        "status.storedVersions",
    ]


def test_duplicate_version_names_render_internal_versions() -> None:
    def mutate(c: Obj) -> None:
        c["spec"]["versions"].append(copy.deepcopy(_v0(c)) | {"storage": False})

    go = _V1_GO.replace('"Storage":false', '"Storage":true') + "," + _V1_GO
    assert _errors(mutate) == [
        f"spec.versions: Invalid value: [{go}]: must contain unique version names"
    ]


def test_version_name_must_be_dns1035_and_is_copied_to_spec_version() -> None:
    def mutate(c: Obj) -> None:
        _v0(c)["name"] = "V1"
        c["status"]["storedVersions"] = ["V1"]

    assert _errors(mutate) == [
        f'spec.versions[0].name: Invalid value: "V1": {DNS1035}',
        f'spec.version: Invalid value: "V1": {DNS1035}',
    ]


def test_schema_required_per_version() -> None:
    assert _errors(lambda c: _v0(c).pop("schema")) == [
        "spec.versions[0].schema.openAPIV3Schema: Required value"
    ]


@pytest.mark.parametrize(
    ("deprecated", "warning", "expected"),
    [
        (False, "old", ['"old": can only be set for deprecated versions']),
        (True, "", ['"": must not be an empty string']),
        (True, "x" * 257, [f'"{"x" * 257}": must be <= 256 characters long']),
        (
            True,
            "é\tx",
            [
                '"é\\tx": must only contain printable UTF-8 characters; '
                "non-printable character found at index 2"
            ],
        ),
    ],
)
def test_deprecation_warning(deprecated: bool, warning: str, expected: list[str]) -> None:
    errs = _errors(lambda c: _v0(c).update(deprecated=deprecated, deprecationWarning=warning))
    assert errs == [f"spec.versions[0].deprecationWarning: Invalid value: {e}" for e in expected]


def test_preserve_unknown_fields_true_is_forbidden_in_v1() -> None:
    assert _errors(
        lambda c: _spec(c).update(preserveUnknownFields=True, conversion={"strategy": "Webhook"})
    )[0] == (
        'spec.conversion.strategy: Invalid value: "Webhook": must be None if '
        "spec.preserveUnknownFields is true"
    )
    assert _errors(lambda c: _spec(c).update(preserveUnknownFields=True)) == [
        "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set "
        "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
    ]


# --- status root, subresources, printer columns, selectable fields --------------------------


def test_status_subresource_restricts_the_root_schema_type() -> None:
    def mutate(c: Obj) -> None:
        _v0(c)["subresources"] = {"status": {}}
        _v0(c)["schema"]["openAPIV3Schema"]["type"] = "array"

    assert _errors(mutate)[0] == (
        'spec.validation.openAPIV3Schema.type: Invalid value: "array": only "object" is allowed '
        "as the type at the root of the schema if the status subresource is enabled"
    )


def test_status_subresource_restricts_root_fields() -> None:
    def mutate(c: Obj) -> None:
        _v0(c)["subresources"] = {"status": {}}
        _v0(c)["schema"]["openAPIV3Schema"]["minProperties"] = 1

    errs = _errors(mutate)
    assert errs[0].startswith('spec.validation.openAPIV3Schema: Invalid value: {"ID":"","Schema"')
    assert '"MinProperties":1,' in errs[0]
    assert errs[0].endswith(
        ": only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum "
        "MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items "
        "Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed "
        "at the root of the schema if the status subresource is enabled"
    )


def test_scale_paths_hoisted_for_a_single_version() -> None:
    scale = {
        "specReplicasPath": "spec.r",
        "statusReplicasPath": ".spec.r",
        "labelSelectorPath": ".x",
    }
    assert _errors(lambda c: _v0(c).update(subresources={"scale": scale})) == [
        'spec.subresources.scale.specReplicasPath: Invalid value: "spec.r": must be a simple '
        "json path starting with .",
        'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.r": should be a json '
        "path under .status",
        'spec.subresources.scale.labelSelectorPath: Invalid value: ".x": should be a json path '
        "under either .spec or .status",
    ]
    assert _errors(lambda c: _v0(c).update(subresources={"scale": {}})) == [
        "spec.subresources.scale.specReplicasPath: Required value",
        "spec.subresources.scale.statusReplicasPath: Required value",
    ]


def test_differing_subresources_stay_per_version() -> None:
    def mutate(c: Obj) -> None:
        other = copy.deepcopy(_v0(c)) | {"name": "v2", "storage": False}
        _v0(c)["subresources"] = {
            "scale": {"specReplicasPath": ".status.r", "statusReplicasPath": ".status.r"}
        }
        c["spec"]["versions"].append(other)

    assert _errors(mutate) == [
        'spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".status.r": '
        "should be a json path under .spec"
    ]


def test_printer_columns() -> None:
    columns = [{"type": "float", "format": "uuid", "jsonPath": "spec"}, {"name": "A"}]
    assert _errors(lambda c: _v0(c).update(additionalPrinterColumns=columns)) == [
        "spec.additionalPrinterColumns[0].name: Required value",
        'spec.additionalPrinterColumns[0].type: Invalid value: "float": must be one of '
        "boolean,date,integer,number,string",
        'spec.additionalPrinterColumns[0].format: Invalid value: "uuid": must be one of '
        "byte,date,date-time,double,float,int32,int64,password",
        'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec": must be a simple '
        "json path starting with .",
        "spec.additionalPrinterColumns[1].type: Required value: must be one of "
        "boolean,date,integer,number,string",
        "spec.additionalPrinterColumns[1].JSONPath: Required value",
    ]


def test_selectable_fields() -> None:
    def mutate(c: Obj) -> None:
        _v0(c)["schema"]["openAPIV3Schema"]["properties"] = {
            "metadata": {"type": "object", "properties": {"name": {"type": "string"}}},
            "spec": {
                "type": "object",
                "properties": {"n": {"type": "number"}, "s": {"type": "string"}},
            },
        }
        _v0(c)["selectableFields"] = [
            {"jsonPath": ".spec.s"},
            {"jsonPath": ".spec.s"},
            {"jsonPath": ".spec.n"},
            {"jsonPath": ".metadata.name"},
            {"jsonPath": ".spec.x"},
            {"jsonPath": ".spec[0]"},
            {"jsonPath": "spec"},
            {"jsonPath": ".spec."},
            {},
        ]

    p = "spec.selectableFields"
    assert _errors(mutate) == [
        f'{p}[1].jsonPath: Duplicate value: ".spec.s"',
        f'{p}[2].jsonPath: Invalid value: ".spec.n": must point to a field of type string, '
        "boolean or integer. Enum string fields and strings with formats are allowed.",
        f'{p}[3].jsonPath: Invalid value: ".metadata.name": must not point to fields in metadata',
        f'{p}[4].jsonPath: Invalid value: ".spec.x": is an invalid path: does not refer to a '
        "valid field",
        f'{p}[5].jsonPath: Invalid value: ".spec[0]": is an invalid path: array notation is '
        "not allowed",
        f'{p}[6].jsonPath: Invalid value: "spec": is an invalid path: expected [ or . but got: '
        "spec",
        f'{p}[7].jsonPath: Invalid value: ".spec.": is an invalid path: unexpected end of JSON '
        "path",
        f"{p}[8].jsonPath: Required value",
    ]


def test_too_many_selectable_fields() -> None:
    props = {f"f{i}": {"type": "string"} for i in range(9)}

    def mutate(c: Obj) -> None:
        _v0(c)["schema"]["openAPIV3Schema"]["properties"] = props
        _v0(c)["selectableFields"] = [{"jsonPath": f".f{i}"} for i in range(9)]

    assert _errors(mutate) == ["spec.selectableFields: Too many: 9: must have at most 8 items"]


# --- conversion ----------------------------------------------------------------------------


def _conversion(conversion: Obj) -> list[str]:
    return _errors(lambda c: _spec(c).update(conversion=conversion))


def test_conversion_strategy() -> None:
    assert _conversion({"strategy": "Magic"}) == [
        'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"'
    ]


def test_none_strategy_forbids_webhook_settings() -> None:
    webhook = {"clientConfig": {"url": "https://x"}, "conversionReviewVersions": ["v1"]}
    assert _conversion({"strategy": "None", "webhook": webhook}) == [
        "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not "
        "set to Webhook",
        "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy "
        "is not set to Webhook",
    ]


def test_webhook_strategy_requirements() -> None:
    assert _conversion({"strategy": "Webhook"}) == [
        "spec.conversion.webhookClientConfig: Required value: required when strategy is set to "
        "Webhook",
        "spec.conversion.conversionReviewVersions: Required value",
    ]
    webhook = {"clientConfig": {}, "conversionReviewVersions": ["v2", "v2", "V3"]}
    assert _conversion({"strategy": "Webhook", "webhook": webhook}) == [
        "spec.conversion.webhookClientConfig: Required value: exactly one of url or service is "
        "required",
        'spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version',
        f'spec.conversion.conversionReviewVersions[2]: Invalid value: "V3": {DNS1035}',
        'spec.conversion.conversionReviewVersions: Invalid value: ["v2","v2","V3"]: must '
        "include at least one of v1, v1beta1",
    ]


def test_webhook_url() -> None:
    webhook = {
        "clientConfig": {"url": "http://user:pw@/p?q=1#frag"},
        "conversionReviewVersions": ["v1"],
    }
    u = "spec.conversion.webhookClientConfig.url"
    form = "; desired format: https://host[/path]"
    assert _conversion({"strategy": "Webhook", "webhook": webhook}) == [
        f"{u}: Invalid value: \"http\": 'https' is the only allowed URL scheme{form}",
        f'{u}: Invalid value: "": host must be specified{form}',
        f'{u}: Invalid value: "user:pw": user information is not permitted in the URL',
        f'{u}: Invalid value: "frag": fragments are not permitted in the URL',
        f'{u}: Invalid value: "q=1": query parameters are not permitted in the URL',
    ]


def test_webhook_service() -> None:
    service = {"port": 0, "path": "convert//Bad/"}
    webhook = {"clientConfig": {"service": service}, "conversionReviewVersions": ["v1"]}
    s = "spec.conversion.webhookClientConfig.service"
    # Upstream drops the first character even when it is not "/": segments "onvert", "", "Bad".
    assert _conversion({"strategy": "Webhook", "webhook": webhook}) == [
        f"{s}.name: Required value",
        f"{s}.namespace: Required value",
        f"{s}.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
        f"{s}.path: Invalid value: \"convert//Bad/\": must start with a '/'",
        f'{s}.path: Invalid value: "convert//Bad/": segment[1] may not be empty',
        f'{s}.path: Invalid value: "convert//Bad/": segment[2]: a lowercase RFC 1123 subdomain '
        "must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
        "with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]


# --- API approval --------------------------------------------------------------------------


def _protected(annotation: str | None) -> list[str]:
    def mutate(c: Obj) -> None:
        c["spec"]["group"] = "widgets.k8s.io"
        c["metadata"]["name"] = "widgets.widgets.k8s.io"
        if annotation is not None:
            c["metadata"]["annotations"] = {"api-approved.kubernetes.io": annotation}

    return _errors(mutate)


def test_protected_groups_need_api_approval() -> None:
    key = "metadata.annotations[api-approved.kubernetes.io]"
    see = "see https://github.com/kubernetes/enhancements/pull/1111"
    assert _protected(None) == [
        f"{key}: Required value: protected groups must have approval annotation "
        f'"api-approved.kubernetes.io", {see}'
    ]
    assert _protected("yes") == [
        f'{key}: Invalid value: "yes": protected groups must have approval annotation '
        f'"api-approved.kubernetes.io" with either a URL or a reason starting with '
        f'"unapproved", {see}'
    ]
    assert _protected("https://github.com/kubernetes/kubernetes/pull/1") == []
    assert _protected("unapproved, experimental") == []


# --- status / storedVersions ---------------------------------------------------------------


def test_stored_versions() -> None:
    spec = _crd()["spec"]
    path = Path("status")
    assert [str(e) for e in validate_crd_status({"storedVersions": []}, spec, path)] == [
        "status.storedVersions: Invalid value: []: must have at least one stored version"
    ]
    assert [str(e) for e in validate_crd_status({}, spec, path)] == [
        "status.storedVersions: Invalid value: null: must have at least one stored version"
    ]
    errs = validate_crd_status({"storedVersions": ["v0"]}, spec, path)
    assert [str(e) for e in errs] == [
        'status.storedVersions: Invalid value: ["v0"]: must have the storage version v1',
        'status.storedVersions[0]: Invalid value: "v0": missing from spec.versions; v0 was '
        "previously a storage version, and must remain in spec.versions until a storage "
        "migration ensures no data remains persisted in v0 and removes v0 from "
        "status.storedVersions",
    ]
    assert validate_crd_status({"storedVersions": ["v0"]}, spec, path, stored_versions=False) == []


# --- update --------------------------------------------------------------------------------


def _established(crd: Obj) -> Obj:
    crd["status"]["conditions"] = [{"type": "Established", "status": "True"}]
    return crd


def _update_errors(mutate: Callable[[Obj], None], old: Obj | None = None) -> list[str]:
    old = old if old is not None else _crd()
    new = copy.deepcopy(old)
    mutate(new)
    return [str(e) for e in validate_crd_update(new, old)]


def test_unchanged_update_is_valid() -> None:
    assert _update_errors(lambda c: None, _established(_crd())) == []


def test_group_and_plural_are_immutable() -> None:
    def mutate(c: Obj) -> None:
        c["spec"]["group"] = "example.org"
        c["spec"]["names"]["plural"] = "gadgets"

    assert _update_errors(mutate) == [
        'spec.group: Invalid value: "example.org": field is immutable',
        'spec.names.plural: Invalid value: "gadgets": field is immutable',
    ]


def test_scope_and_kind_are_immutable_once_established() -> None:
    def mutate(c: Obj) -> None:
        c["spec"]["scope"] = "Cluster"
        c["spec"]["names"].update(kind="Gadget", listKind="GadgetList")

    assert _update_errors(mutate) == []
    assert _update_errors(mutate, _established(_crd())) == [
        'spec.scope: Invalid value: "Cluster": field is immutable',
        'spec.names.kind: Invalid value: "Gadget": field is immutable',
    ]


def test_removing_a_stored_version_is_rejected() -> None:
    old = _crd()
    old["spec"]["versions"].append(
        {"name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": {}}}
    )
    old["status"]["storedVersions"] = ["v1", "v2"]
    assert _update_errors(lambda c: c["spec"]["versions"].pop(), old) == [
        'status.storedVersions[1]: Invalid value: "v2": missing from spec.versions; v2 was '
        "previously a storage version, and must remain in spec.versions until a storage "
        "migration ensures no data remains persisted in v2 and removes v2 from "
        "status.storedVersions"
    ]


def test_update_keeps_legacy_preserve_unknown_fields_and_missing_schemas() -> None:
    old = _crd()
    old["spec"]["preserveUnknownFields"] = True
    old["spec"]["versions"][0].pop("schema")
    assert _update_errors(lambda c: None, old) == []


def test_update_without_schema_requires_it_for_served_versions_once_pruning() -> None:
    old = _crd()
    old["spec"]["versions"][0].pop("schema")
    old["spec"]["preserveUnknownFields"] = True

    def mutate(c: Obj) -> None:
        c["spec"]["preserveUnknownFields"] = False

    assert _update_errors(mutate, old) == [
        "spec.versions[0].schema.openAPIV3Schema: Required value: because otherwise all fields "
        "are pruned"
    ]


def test_unrecognized_review_versions_are_kept_on_update() -> None:
    old = _crd()
    old["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {"clientConfig": {"url": "https://c"}, "conversionReviewVersions": ["v9"]},
    }
    assert _update_errors(lambda c: None, old) == []
