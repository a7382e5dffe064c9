"""Name, label and ObjectMeta validation against upstream (k8s.io/apimachinery v0.36) texts."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kapi.apimachinery import validation as v
from kapi.apimachinery.field_errors import Path

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
TOO_MANY_SLASHES_MSG = (
    "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
    "subdomain prefix and '/' (e.g. 'example.com/MyName')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

META = Path("metadata")


# --- DNS names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "ab", "a-b", "0", "a.b", "example.com", "a" * 253, "1-2.3"])
def test_dns1123_subdomain_valid(name: str) -> None:
    assert v.is_dns1123_subdomain(name) == []


@pytest.mark.parametrize("name", ["", "A", "a_b", "-a", "a-", "a..b", ".a", "a.", "a\n", "é"])
def test_dns1123_subdomain_invalid(name: str) -> None:
    assert v.is_dns1123_subdomain(name) == [SUBDOMAIN_MSG]


def test_dns1123_subdomain_too_long() -> None:
    assert v.is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert v.is_dns1123_subdomain("A" * 254) == [
        "must be no more than 253 characters",
        SUBDOMAIN_MSG,
    ]


def test_dns1123_label() -> None:
    assert v.is_dns1123_label("my-name") == []
    assert v.is_dns1123_label("a" * 63) == []
    assert v.is_dns1123_label("a" * 64) == ["must be no more than 63 characters"]
    assert v.is_dns1123_label("a.b") == ["must not contain dots"]
    assert v.is_dns1123_label("Bad_NS") == [LABEL_MSG]
    assert v.is_dns1123_label("") == [LABEL_MSG]


def test_dns1035_label() -> None:
    assert v.is_dns1035_label("my-name") == []
    assert v.is_dns1035_label("1abc") == [DNS1035_MSG]
    assert v.is_dns1035_label("a" * 64) == ["must be no more than 63 characters"]


_LABEL_CHARS = "abcz09-"


def _ref_label_shape(s: str) -> bool:
    """Reference: non-empty, [a-z0-9-], alphanumeric at both ends (no regex)."""
    ok_chars = all(c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in s)
    return bool(s) and ok_chars and s[0] != "-" and s[-1] != "-"


def _ref_subdomain_shape(s: str) -> bool:
    return all(_ref_label_shape(p) for p in s.split("."))


def _ref_subdomain(s: str) -> list[str]:
    errs = []
    if len(s.encode()) > 253:
        errs.append("must be no more than 253 characters")
    if not _ref_subdomain_shape(s):
        errs.append(SUBDOMAIN_MSG)
    return errs


def _ref_label(s: str) -> list[str]:
    errs = []
    if len(s.encode()) > 63:
        errs.append("must be no more than 63 characters")
    if not _ref_label_shape(s):
        # A well-formed subdomain that is not a label must contain dots.
        errs.append("must not contain dots" if _ref_subdomain_shape(s) else LABEL_MSG)
    return errs


_dns_text = st.one_of(
    st.text(alphabet=_LABEL_CHARS + ".", max_size=300),
    st.text(alphabet=_LABEL_CHARS + ".A_\n é", max_size=70),
    st.lists(
        st.from_regex(r"[a-z0-9]([-a-z0-9]{0,70}[a-z0-9])?", fullmatch=True),
        min_size=1,
        max_size=5,
    ).map(".".join),
)


@given(_dns_text)
def test_dns1123_subdomain_matches_reference(s: str) -> None:
    assert v.is_dns1123_subdomain(s) == _ref_subdomain(s)


@given(_dns_text)
def test_dns1123_label_matches_reference(s: str) -> None:
    assert v.is_dns1123_label(s) == _ref_label(s)


@given(
    st.from_regex(
        r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", fullmatch=True
    )
)
def test_generated_subdomains_are_valid_when_short(s: str) -> None:
    assert (v.is_dns1123_subdomain(s) == []) == (len(s) <= 253)


# --- label keys and values -------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "simple",
        "now-with-dashes",
        "1-starts-with-num",
        "1234",
        "simple/simple",
        "a/b",
        "example.com/MyName",
        "my.name",
        "a" * 63,
        "a" * 253 + "/" + "b" * 63,
        "a_b",
    ],
)
def test_qualified_name_valid(key: str) -> None:
    assert v.is_qualified_name(key) == []


def test_qualified_name_errors() -> None:
    assert v.is_qualified_name("a/b/c") == [TOO_MANY_SLASHES_MSG]
    assert v.is_qualified_name("/simple") == ["prefix part must be non-empty"]
    assert v.is_qualified_name("simple/") == ["name part must be non-empty", NAME_PART_MSG]
    assert v.is_qualified_name("") == ["name part must be non-empty", NAME_PART_MSG]
    assert v.is_qualified_name("-a") == [NAME_PART_MSG]
    assert v.is_qualified_name("a" * 64) == ["name part must be no more than 63 bytes"]
    assert v.is_qualified_name("Example.com/a") == ["prefix part " + SUBDOMAIN_MSG]
    assert v.is_qualified_name("a" * 254 + "/b") == ["prefix part must be no more than 253 bytes"]
    # Lengths are bytes, as Go's len().
    assert v.is_qualified_name("é" * 32) == [
        "name part must be no more than 63 bytes",
        NAME_PART_MSG,
    ]


def test_label_value() -> None:
    assert v.is_valid_label_value("") == []
    assert v.is_valid_label_value("my_value.1-x") == []
    assert v.is_valid_label_value("a" * 63) == []
    assert v.is_valid_label_value("a" * 64) == ["must be no more than 63 bytes"]
    assert v.is_valid_label_value("x y") == [LABEL_VALUE_MSG]
    assert v.is_valid_label_value("-a") == [LABEL_VALUE_MSG]
    assert v.is_valid_label_value("a\n") == [LABEL_VALUE_MSG]


# --- name validators ---------------------------------------------------------------------------


def test_name_validators_with_prefix() -> None:
    # A generateName may end in '-' (upstream masks the tail before validating).
    assert v.name_is_dns_subdomain("foo-", True) == []
    assert v.name_is_dns_label("foo-", True) == []
    assert v.name_is_dns1035_label("foo-", True) == []
    assert v.name_is_dns_subdomain("foo-", False) == [SUBDOMAIN_MSG]
    assert v.name_is_dns_subdomain("-", True) == [SUBDOMAIN_MSG]
    # Upstream replaces the last *two* characters with 'a'.
    assert v.name_is_dns_subdomain("a.-", True) == []
    assert v.validate_namespace_name("a.b", False) == ["must not contain dots"]


# --- ObjectMeta ---------------------------------------------------------------------------------


def _msgs(errs: list) -> list[str]:
    return [str(e) for e in errs]


def _create(meta: dict, namespaced: bool = True, fn=v.name_is_dns_subdomain) -> list[str]:
    return _msgs(v.validate_object_meta(meta, namespaced=namespaced, name_validator=fn, path=META))


def test_object_meta_valid() -> None:
    meta = {
        "name": "web",
        "namespace": "default",
        "labels": {"app": "web", "example.com/tier": ""},
        "annotations": {"Example.com/Note": "anything at all"},
        "finalizers": ["example.com/cleanup", "orphan"],
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "rs",
                "uid": "1",
                "controller": True,
            }
        ],
        "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1"}],
        "generation": 3,
    }
    assert _create(meta) == []


def test_object_meta_name_required() -> None:
    assert _create({"namespace": "default"}) == [
        "metadata.name: Required value: name or generateName is required"
    ]


def test_object_meta_invalid_name() -> None:
    assert _create({"name": "Foo", "namespace": "default"}) == [
        f'metadata.name: Invalid value: "Foo": {SUBDOMAIN_MSG}'
    ]


def test_object_meta_generate_name() -> None:
    assert _create({"name": "foo-abcde", "generateName": "foo-", "namespace": "ns"}) == []
    assert _create({"name": "x", "generateName": "Foo-", "namespace": "ns"}) == [
        f'metadata.generateName: Invalid value: "Foo-": {SUBDOMAIN_MSG}'
    ]


def test_object_meta_namespace_rules() -> None:
    assert _create({"name": "a"}) == ["metadata.namespace: Required value"]
    assert _create({"name": "a", "namespace": "a.b"}) == [
        'metadata.namespace: Invalid value: "a.b": must not contain dots'
    ]
    assert _create({"name": "a", "namespace": "ns"}, namespaced=False) == [
        "metadata.namespace: Forbidden: not allowed on this type"
    ]
    assert _create({"name": "a"}, namespaced=False) == []


def test_object_meta_labels_annotations() -> None:
    errs = _create(
        {"name": "a", "namespace": "n", "labels": {"a/b/c": "ok", "k": "x y"}},
    )
    assert errs == [
        f'metadata.labels: Invalid value: "a/b/c": {TOO_MANY_SLASHES_MSG}',
        f'metadata.labels: Invalid value: "x y": {LABEL_VALUE_MSG}',
    ]
    errs = _create({"name": "a", "namespace": "n", "annotations": {"Bad Key": "v"}})
    assert errs == [f'metadata.annotations: Invalid value: "Bad Key": {NAME_PART_MSG}']


def test_annotations_size_limit() -> None:
    limit = 256 * 1024
    ok = {"a": "x" * (limit - 1)}
    assert _create({"name": "a", "namespace": "n", "annotations": ok}) == []
    big = {"a": "x" * limit}
    assert _create({"name": "a", "namespace": "n", "annotations": big}) == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]
    # Bytes, not characters.
    assert v.annotations_size({"k": "é"}) == 3


def test_generation_nonnegative() -> None:
    assert _create({"name": "a", "namespace": "n", "generation": -1}) == [
        "metadata.generation: Invalid value: -1: must be greater than or equal to 0"
    ]


def test_owner_references() -> None:
    errs = _create(
        {
            "name": "a",
            "namespace": "n",
            "ownerReferences": [
                {"apiVersion": "apps/", "kind": "", "name": "", "uid": ""},
                {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"},
            ],
        }
    )
    assert errs == [
        'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
        'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e",'
        '"uid":"u"}: /v1, Kind=Event is disallowed from being an owner',
    ]


def test_owner_references_single_controller() -> None:
    refs = [
        {
            "apiVersion": "example.com/v1",
            "kind": "customresourceKind2",
            "name": "name",
            "uid": "1",
            "controller": True,
        },
        {
            "apiVersion": "example.com/v1",
            "kind": "customresourceKind3",
            "name": "name",
            "uid": "2",
            "controller": True,
        },
    ]
    errs = v.validate_owner_references(refs, META.child("ownerReferences"))
    assert len(errs) == 1
    assert errs[0].detail == (
        'Only one reference can have Controller set to true. Found "true" in references for '
        "customresourceKind2/name and customresourceKind3/name"
    )
    assert str(errs[0]).startswith(
        'metadata.ownerReferences: Invalid value: [{"apiVersion":"example.com/v1",'
        '"kind":"customresourceKind2","name":"name","uid":"1","controller":true},'
    )


def test_finalizers() -> None:
    errs = _create(
        {"name": "a", "namespace": "n", "finalizers": ["a/b/c", "orphan", "foregroundDeletion"]}
    )
    assert errs == [
        f'metadata.finalizers: Invalid value: "a/b/c": {TOO_MANY_SLASHES_MSG}',
        'metadata.finalizers: Invalid value: ["a/b/c","orphan","foregroundDeletion"]: '
        "finalizer orphan and foregroundDeletion cannot be both set",
    ]


def test_kube_finalizer_names_and_cr_warnings() -> None:
    errs = v.validate_kube_finalizer_names(
        ["kubernetes", "example.com/x", "custom"], META.child("finalizers")
    )
    assert _msgs(errs) == [
        'metadata.finalizers[2]: Invalid value: "custom": '
        "name is neither a standard finalizer name nor is it fully qualified"
    ]
    assert v.custom_resource_finalizer_warnings(["foo", "foo.com", "x/y"], ["x/y"]) == [
        'metadata.finalizers: "foo": prefer a domain-qualified finalizer name to avoid accidental '
        "conflicts with other finalizer writers",
        'metadata.finalizers: "foo.com": prefer a domain-qualified finalizer name including a path '
        "(/) to avoid accidental conflicts with other finalizer writers",
    ]


def test_managed_fields() -> None:
    errs = _create(
        {
            "name": "a",
            "namespace": "n",
            "managedFields": [
                {"manager": "m\x07", "operation": "Patch", "fieldsType": "FieldsV2"},
                {"manager": "x" * 129, "operation": "Update", "subresource": "s" * 257},
            ],
        }
    )
    assert errs == [
        'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
        'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
        'metadata.managedFields[0].manager: Invalid value: "m\\a": '
        "invalid character U+0007 (at position 1)",
        "metadata.managedFields[1].manager: Too long: may not be more than 128 bytes",
        "metadata.managedFields[1].subresource: Too long: may not be more than 256 bytes",
    ]


def test_object_meta_errors_in_upstream_order() -> None:
    errs = _create(
        {
            "generateName": "X_x-",
            "name": "Y",
            "namespace": "N",
            "generation": -1,
            "labels": {"-": "v"},
            "annotations": {"-": "v"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n"}],
            "finalizers": ["/x"],
            "managedFields": [{"operation": "Apply", "fieldsType": "x"}],
        }
    )
    fields = [e.split(":")[0] for e in errs]
    assert fields == [
        "metadata.generateName",
        "metadata.name",
        "metadata.namespace",
        "metadata.generation",
        "metadata.labels",
        "metadata.annotations",
        "metadata.ownerReferences.uid",
        "metadata.finalizers",
        "metadata.managedFields[0].fieldsType",
    ]


def test_custom_name_validator_and_path() -> None:
    def any_name(name: str, prefix: bool) -> list[str]:
        return [] if name != "reserved" else ["is reserved"]

    errs = v.validate_object_meta(
        {"name": "reserved"}, namespaced=False, name_validator=any_name, path=Path("meta")
    )
    assert _msgs(errs) == ['meta.name: Invalid value: "reserved": is reserved']


# --- ObjectMeta update --------------------------------------------------------------------------


def _update(new: dict, old: dict) -> list[str]:
    return _msgs(v.validate_object_meta_update(new, old, Path("field")))


def test_update_valid() -> None:
    old = {
        "name": "a",
        "namespace": "n",
        "uid": "u",
        "resourceVersion": "1",
        "generation": 1,
        "creationTimestamp": "2024-01-01T00:00:00Z",
    }
    new = dict(old, resourceVersion="1", generation=2, labels={"a": "b"})
    assert _update(new, old) == []


def test_update_immutable_fields() -> None:
    old = {
        "name": "a",
        "namespace": "n",
        "uid": "u",
        "resourceVersion": "1",
        "creationTimestamp": "2024-01-01T00:00:00Z",
    }
    new = {
        "name": "b",
        "namespace": "m",
        "uid": "v",
        "resourceVersion": "1",
        "creationTimestamp": "2025-01-01T00:00:00Z",
    }
    assert _update(new, old) == [
        'field.name: Invalid value: "b": field is immutable',
        'field.namespace: Invalid value: "m": field is immutable',
        'field.uid: Invalid value: "v": field is immutable',
        'field.creationTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable',
    ]


def test_update_deletion_fields() -> None:
    now = "1970-01-01T00:16:40Z"
    base = {"name": "test", "resourceVersion": "1"}
    assert _update(dict(base, deletionTimestamp=now), base) == [
        'field.deletionTimestamp: Invalid value: "1970-01-01T00:16:40Z": field is immutable'
    ]
    assert _update(base, dict(base, deletionTimestamp=now)) == [
        "field.deletionTimestamp: Invalid value: null: field is immutable"
    ]
    assert _update(dict(base, deletionGracePeriodSeconds=30), base) == [
        "field.deletionGracePeriodSeconds: Invalid value: 30: field is immutable"
    ]
    assert _update(base, dict(base, deletionGracePeriodSeconds=30)) == [
        "field.deletionGracePeriodSeconds: Invalid value: null: field is immutable"
    ]


def test_update_generation_and_resource_version() -> None:
    old = {"name": "test", "resourceVersion": "1", "generation": 5}
    assert _update(dict(old, generation=4), old) == [
        "field.generation: Invalid value: 4: must not be decremented"
    ]
    assert _update({"name": "test", "generation": 5}, old) == [
        'field.resourceVersion: Invalid value: "": must be specified for an update'
    ]


def test_update_finalizers_while_deleting() -> None:
    old = {
        "name": "test",
        "resourceVersion": "1",
        "deletionTimestamp": "2024-01-01T00:00:00Z",
        "finalizers": ["x/a"],
    }
    assert _update(dict(old, finalizers=["x/a", "y/b", "c/d"]), old) == [
        "field.finalizers: Forbidden: no new finalizers can be added if the object is being "
        'deleted, found new finalizers []string{"c/d", "y/b"}'
    ]
    assert _update(dict(old, finalizers=[]), old) == []
    # Not being deleted: adding is fine.
    alive = {"name": "test", "resourceVersion": "1", "finalizers": ["x/a"]}
    assert _update(dict(alive, finalizers=["x/a", "y/b"]), alive) == []


def test_update_validates_new_labels_annotations_owners() -> None:
    old = {"name": "test", "resourceVersion": "1"}
    new = dict(
        old,
        labels={"k": "x y"},
        annotations={"a/b/c": ""},
        ownerReferences=[{"apiVersion": "v1", "kind": "K", "name": "n"}],
    )
    assert _update(new, old) == [
        f'field.labels: Invalid value: "x y": {LABEL_VALUE_MSG}',
        f'field.annotations: Invalid value: "a/b/c": {TOO_MANY_SLASHES_MSG}',
        'field.ownerReferences.uid: Invalid value: "": must not be empty',
    ]


# --- label selector validation -------------------------------------------------------------------


def test_validate_label_selector() -> None:
    sel = {
        "matchLabels": {"ok": "x y"},
        "matchExpressions": [
            {"key": "a", "operator": "In"},
            {"key": "b", "operator": "Exists", "values": ["v"]},
            {"key": "-c", "operator": "Bogus", "values": ["bad value"]},
        ],
    }
    errs = _msgs(v.validate_label_selector(sel, Path("spec", "selector")))
    assert errs == [
        f'spec.selector.matchLabels: Invalid value: "x y": {LABEL_VALUE_MSG}',
        "spec.selector.matchExpressions[0].values: Required value: must be specified when "
        "`operator` is 'In' or 'NotIn'",
        "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when "
        "`operator` is 'Exists' or 'DoesNotExist'",
        'spec.selector.matchExpressions[2].operator: Invalid value: "Bogus": '
        "not a valid selector operator",
        f'spec.selector.matchExpressions[2].key: Invalid value: "-c": {NAME_PART_MSG}',
        'spec.selector.matchExpressions[2].values[0]: Invalid value: "bad value": '
        + LABEL_VALUE_MSG,
    ]
    assert v.validate_label_selector(None, Path("s")) == []


def test_regex_error_format() -> None:
    assert v.regex_error("msg", "re") == "msg (regex used for validation is 're')"
    assert v.regex_error("msg", "re", "a") == "msg (e.g. 'a', regex used for validation is 're')"
    assert re.search(r"'a',  or 'b'", v.regex_error("m", "r", "a", "b"))
