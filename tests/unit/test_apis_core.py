"""core/v1 Namespace, ConfigMap and Secret: defaults, strategies and upstream messages."""

from __future__ import annotations

import base64

import pytest

from kapi.apimachinery.field_errors import FieldError
from kapi.apimachinery.gojson import unmarshal_map_error
from kapi.apis import builtin_resources, core_v1
from kapi.apis.core_v1 import (
    ConfigMap,
    ConfigMapStrategy,
    Namespace,
    NamespaceStrategy,
    Secret,
    SecretStrategy,
)
from kapi.registry.strategy import SubresourceStrategy
from kapi.runtime.schema import components
from kapi.version import Version

CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
    "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', "
    "regex used for validation is '[-._a-zA-Z0-9]+')"
)
IMMUTABLE = "Forbidden: field is immutable when `immutable` is set"


def messages(errs: list[FieldError]) -> list[str]:
    return [e.error_message() for e in errs]


def b64(text: str | bytes) -> str:
    raw = text.encode() if isinstance(text, str) else text
    return base64.b64encode(raw).decode()


def resource(kind: str):
    return next(r for r in builtin_resources() if r.kind == kind)


# --- resources ------------------------------------------------------------------------------


def test_builtin_resources_declare_upstream_shape() -> None:
    # Kinds of the extension machinery (CRDs, webhook configurations) have their own tests,
    # as the apps kinds (and their extensions/v1beta1 versions) do.
    extension_groups = (
        "apiextensions.k8s.io",
        "admissionregistration.k8s.io",
        "apps",
        "extensions",
        "storage.k8s.io",  # tests/integration/test_storage_group.py
        "flowcontrol.apiserver.k8s.io",
    )
    by_kind = {r.kind: r for r in builtin_resources() if r.group not in extension_groups}
    assert set(by_kind) == {
        "Namespace",
        "ConfigMap",
        "Secret",
        "Service",
        "ServiceAccount",
        "Endpoints",
        "Event",
        "CronJob",
        "Job",
        "HorizontalPodAutoscaler",
        "Lease",
        "EndpointSlice",
        "Ingress",
        "IngressClass",
        "NetworkPolicy",
        "PodDisruptionBudget",
        "PodSecurityPolicy",
        "Pod",
        "PodTemplate",
        "ReplicationController",
        "Node",
        "ResourceQuota",
        "LimitRange",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "ComponentStatus",
        "StorageVersion",
        "StorageVersionMigration",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
        "PriorityClass",
        "RuntimeClass",
        "CertificateSigningRequest",
    }
    ns, cm, secret = by_kind["Namespace"], by_kind["ConfigMap"], by_kind["Secret"]
    assert (ns.plural, ns.namespaced, ns.short_names) == ("namespaces", False, ("ns",))
    assert ns.subresources == ("status", "finalize")
    assert (cm.plural, cm.namespaced, cm.short_names, cm.subresources) == (
        "configmaps",
        True,
        ("cm",),
        (),
    )
    assert (secret.plural, secret.short_names, secret.field_labels) == ("secrets", (), ("type",))
    assert ns.field_labels == ("status.phase",)
    for r in by_kind.values():
        # Of these kinds CronJob, Job, HPA, Pod, ReplicationController and Service are in
        # "all" upstream.
        in_all = ("CronJob", "Job", "HorizontalPodAutoscaler", "Pod", "ReplicationController")
        assert r.categories == (("all",) if r.kind in (*in_all, "Service") else ())
    for r in (ns, cm, secret):
        lifecycle = r.versions["v1"].lifecycle
        assert lifecycle is not None and lifecycle.introduced == Version(1, 0)
        assert r.storage_prefix() == f"/registry/{r.plural}/"
    assert [c.name for c in ns.columns] == ["Name", "Status", "Age"]
    assert [c.name for c in cm.columns] == ["Name", "Data", "Age"]
    assert [c.name for c in secret.columns] == ["Name", "Type", "Data", "Age"]
    # Each call gives fresh objects, so servers never share mutable state.
    assert builtin_resources()[0] is not builtin_resources()[0]


def test_columns_cells() -> None:
    ns = {"metadata": {"name": "a"}, "status": {"phase": "Terminating"}}
    assert [c.cell(ns) for c in resource("Namespace").columns[:2]] == ["a", "Terminating"]
    cm = {"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": ""}}
    assert resource("ConfigMap").columns[1].cell(cm) == 3
    secret = {"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": ""}}
    assert [c.cell(secret) for c in resource("Secret").columns[1:3]] == ["Opaque", 1]
    assert resource("ConfigMap").columns[1].cell({"metadata": {"name": "e"}}) == 0


# --- Namespace ------------------------------------------------------------------------------


def test_namespace_create_adds_kubernetes_finalizer_and_active_phase() -> None:
    s = NamespaceStrategy()
    obj = {"metadata": {"name": "a"}, "status": {"phase": "Terminating"}}
    s.prepare_for_create(obj)
    assert obj["spec"] == {"finalizers": ["kubernetes"]}
    assert obj["status"] == {"phase": "Active"}
    obj = {"metadata": {"name": "a"}, "spec": {"finalizers": ["example.com/x"]}}
    s.prepare_for_create(obj)
    assert obj["spec"]["finalizers"] == ["example.com/x", "kubernetes"]
    obj = {"metadata": {"name": "a"}, "spec": {"finalizers": ["kubernetes"]}}
    s.prepare_for_create(obj)
    assert obj["spec"]["finalizers"] == ["kubernetes"]


def test_namespace_update_keeps_finalizers_and_status() -> None:
    s = NamespaceStrategy()
    old = {"spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    new = {"spec": {"finalizers": []}, "status": {"phase": "Terminating"}}
    s.prepare_for_update(new, old)
    assert new == old
    new = {"spec": {"finalizers": ["x/y"]}}
    s.prepare_for_update(new, {"status": {"phase": "Active"}})
    assert new == {"spec": {}, "status": {"phase": "Active"}}
    assert s.validate_update(new, old) == []


def test_namespace_defaulter_and_canonicalize_set_the_name_label() -> None:
    obj = {"metadata": {"name": "team-a", "labels": {"x": "y"}}}
    core_v1.default_namespace(obj)
    assert obj["metadata"]["labels"] == {"x": "y", "kubernetes.io/metadata.name": "team-a"}
    assert obj["status"] == {"phase": "Active"}
    nameless = {"metadata": {"generateName": "team-"}, "status": {"phase": "Terminating"}}
    core_v1.default_namespace(nameless)
    assert "labels" not in nameless["metadata"]
    assert nameless["status"] == {"phase": "Terminating"}
    nameless["metadata"]["name"] = "team-x1"
    NamespaceStrategy().canonicalize(nameless)
    assert nameless["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-x1"}


def test_namespace_names_are_dns_labels() -> None:
    s = NamespaceStrategy()
    assert s.validate_name("a.b", False) == ["must not contain dots"]
    assert s.validate_name("ns-", True) == []
    assert resource("ConfigMap").strategy.validate_name("a.b", False) == []


def test_namespace_finalizer_names() -> None:
    s = NamespaceStrategy()
    obj = {"spec": {"finalizers": ["kubernetes", "foo", "example.com/bar"]}}
    assert messages(s.validate(obj)) == [
        'spec.finalizers: Invalid value: "foo": '
        "name is neither a standard finalizer name nor is it fully qualified"
    ]
    # /finalize indexes the path, as ValidateNamespaceFinalizeUpdate does.
    assert messages(s.validate_subresource_update("finalize", obj, obj)) == [
        'spec.finalizers[1]: Invalid value: "foo": '
        "name is neither a standard finalizer name nor is it fully qualified"
    ]


def test_namespace_finalize_changes_finalizers_only() -> None:
    old = {"metadata": {"name": "a"}, "spec": {"finalizers": ["kubernetes"]}}
    old["status"] = {"phase": "Terminating"}
    new = {"metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"finalizers": []}}
    new["status"] = {"phase": "Active"}
    sub = SubresourceStrategy(NamespaceStrategy(), "finalize", ("spec", "finalizers"))
    sub.prepare_for_update(new, old)
    assert new == {**old, "spec": {"finalizers": []}}
    assert NamespaceStrategy.subresource_fields == {
        "status": ("status",),
        "finalize": ("spec", "finalizers"),
    }


def test_namespace_status_phase_follows_deletion() -> None:
    s = NamespaceStrategy()
    live = {"metadata": {}, "status": {"phase": "Terminating"}}
    assert messages(s.validate_subresource_update("status", live, live)) == [
        'status.Phase: Invalid value: "Terminating": '
        "may only be 'Active' if `deletionTimestamp` is empty"
    ]
    deleting = {"metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"}, "status": {}}
    assert messages(s.validate_subresource_update("status", deleting, deleting)) == [
        "status.Phase: Invalid value: \"\": may only be 'Terminating' if `deletionTimestamp` "
        "is not empty"
    ]
    assert (
        s.validate_subresource_update(
            "status", {"metadata": {}, "status": {"phase": "Active"}}, live
        )
        == []
    )


def test_namespace_deletion_waits_for_spec_finalizers() -> None:
    s = NamespaceStrategy()
    assert s.has_pending_finalizers({"metadata": {}, "spec": {"finalizers": ["kubernetes"]}})
    assert s.has_pending_finalizers({"metadata": {"finalizers": ["x/y"]}, "spec": {}})
    assert not s.has_pending_finalizers({"metadata": {}, "spec": {"finalizers": []}})
    obj = {"metadata": {}, "status": {"phase": "Active"}}
    s.prepare_for_graceful_delete(obj)
    assert obj["status"]["phase"] == "Terminating"


# --- ConfigMap ------------------------------------------------------------------------------


def test_config_map_keys() -> None:
    cm = {"data": {"a b": "", ".": "", "..x": "", "ok.key_1-A": ""}, "binaryData": {"..": ""}}
    assert messages(ConfigMapStrategy().validate(cm)) == [
        f'data[a b]: Invalid value: "a b": {CONFIG_KEY_MSG}',
        "data[.]: Invalid value: \".\": must not be '.'",
        "data[..x]: Invalid value: \"..x\": must not start with '..'",
        "binaryData[..]: Invalid value: \"..\": must not be '..'",
    ]
    long_key = "k" * 254
    assert messages(ConfigMapStrategy().validate({"data": {long_key: ""}})) == [
        f'data[{long_key}]: Invalid value: "{long_key}": must be no more than 253 characters'
    ]


def test_config_map_duplicate_key_between_data_and_binary_data() -> None:
    cm = {"data": {"k": "v"}, "binaryData": {"k": b64("v")}}
    assert messages(ConfigMapStrategy().validate(cm)) == [
        'data[k]: Invalid value: "k": duplicate of key present in binaryData'
    ]


def test_config_map_size_counts_data_bytes_and_decoded_binary_data() -> None:
    limit = core_v1.MAX_SECRET_SIZE
    at_limit = {"data": {"a": "é" * (limit // 4)}, "binaryData": {"b": b64(b"\0" * (limit // 2))}}
    assert ConfigMapStrategy().validate(at_limit) == []
    over = {"data": {"a": "x" * limit}, "binaryData": {"b": b64(b"\0")}}
    assert messages(ConfigMapStrategy().validate(over)) == [
        "[]: Too long: may not be more than 1048576 bytes"
    ]


def test_config_map_immutable() -> None:
    s = ConfigMapStrategy()
    old = {"immutable": True, "data": {"a": "1"}}
    assert s.validate_update(dict(old), old) == []
    changed = {"data": {"a": "2"}, "binaryData": {"b": ""}}
    assert messages(s.validate_update(changed, old)) == [
        f"immutable: {IMMUTABLE}",
        f"data: {IMMUTABLE}",
        f"binaryData: {IMMUTABLE}",
    ]
    assert messages(s.validate_update({"immutable": False, "data": {"a": "1"}}, old)) == [
        f"immutable: {IMMUTABLE}"
    ]
    # Until it is immutable, everything may change, including making it immutable.
    assert s.validate_update({"immutable": True, "data": {}}, {"data": {"a": "1"}}) == []


# --- Secret ---------------------------------------------------------------------------------


def test_secret_type_defaults_to_opaque() -> None:
    obj: dict = {"metadata": {"name": "s"}}
    core_v1.default_secret(obj)
    assert obj["type"] == "Opaque"
    tls = {"type": "kubernetes.io/tls"}
    core_v1.default_secret(tls)
    assert tls["type"] == "kubernetes.io/tls"


def test_string_data_overwrites_data_and_is_dropped() -> None:
    s = SecretStrategy()
    obj = {"data": {"a": b64("old"), "b": b64("keep")}, "stringData": {"a": "new", "c": "ü"}}
    s.prepare_for_create(obj)
    assert obj == {"data": {"a": b64("new"), "b": b64("keep"), "c": b64("ü")}}
    new = {"stringData": {"x": "1"}}
    s.prepare_for_update(new, {"type": "Opaque", "data": {}})
    assert new == {"data": {"x": b64("1")}, "type": "Opaque"}
    empty = {"stringData": {}}
    s.prepare_for_create(empty)
    assert empty == {}


def test_secret_keys_and_size() -> None:
    s = SecretStrategy()
    assert messages(s.validate({"type": "Opaque", "data": {"a b": ""}})) == [
        f'data[a b]: Invalid value: "a b": {CONFIG_KEY_MSG}'
    ]
    big = {"type": "Opaque", "data": {"a": b64(b"\0" * core_v1.MAX_SECRET_SIZE)}}
    assert s.validate(big) == []
    big["data"]["b"] = b64(b"\0")
    assert messages(s.validate(big)) == ["data: Too long: may not be more than 1048576 bytes"]


@pytest.mark.parametrize(
    ("secret", "expected"),
    [
        ({"type": "Opaque"}, []),
        ({"type": "example.com/custom"}, []),
        (
            {"type": "kubernetes.io/tls", "data": {"tls.key": ""}},
            ["data[tls.crt]: Required value"],
        ),
        (
            {"type": "kubernetes.io/tls"},
            ["data[tls.crt]: Required value", "data[tls.key]: Required value"],
        ),
        ({"type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}}, []),
        (
            {"type": "kubernetes.io/basic-auth", "data": {}},
            ["data[username]: Required value", "data[password]: Required value"],
        ),
        ({"type": "kubernetes.io/basic-auth", "data": {"password": ""}}, []),
        (
            {"type": "kubernetes.io/ssh-auth", "data": {"ssh-privatekey": ""}},
            ["data[ssh-privatekey]: Required value"],
        ),
        ({"type": "kubernetes.io/ssh-auth", "data": {"ssh-privatekey": b64("k")}}, []),
        (
            {"type": "kubernetes.io/dockerconfigjson"},
            ["data[.dockerconfigjson]: Required value"],
        ),
        (
            {"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": b64("x")}},
            [
                'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": '
                "invalid character 'x' looking for beginning of value"
            ],
        ),
        (
            {"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": b64("{}")}},
            [],
        ),
        (
            {"type": "kubernetes.io/dockercfg", "data": {".dockercfg": b64("[]")}},
            [
                'data[.dockercfg]: Invalid value: "<secret contents redacted>": '
                "json: cannot unmarshal array into Go value of type map[string]interface {}"
            ],
        ),
        (
            {"type": "kubernetes.io/service-account-token", "metadata": {"annotations": {}}},
            ["metadata.annotations[kubernetes.io/service-account.name]: Required value"],
        ),
        (
            {
                "type": "kubernetes.io/service-account-token",
                "metadata": {"annotations": {"kubernetes.io/service-account.name": "default"}},
            },
            [],
        ),
    ],
)
def test_secret_type_rules(secret: dict, expected: list[str]) -> None:
    assert messages(SecretStrategy().validate(secret)) == expected


def test_secret_update_type_and_immutability() -> None:
    s = SecretStrategy()
    old = {"type": "Opaque", "immutable": True, "data": {"a": b64("1")}}
    new = {"type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}}
    assert messages(s.validate_update(new, old)) == [
        'type: Invalid value: "kubernetes.io/tls": field is immutable',
        f"immutable: {IMMUTABLE}",
        f"data: {IMMUTABLE}",
    ]
    # stringData is merged before validation, so it cannot sneak past immutability.
    sneaky = {
        "type": "Opaque",
        "immutable": True,
        "data": {"a": b64("1")},
        "stringData": {"a": "2"},
    }
    s.prepare_for_update(sneaky, old)
    assert messages(s.validate_update(sneaky, old)) == [f"data: {IMMUTABLE}"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"auths": {"r": {"auth": "eA=="}}}', None),
        (b" null ", None),
        (b"", "unexpected end of JSON input"),
        (b"{", "unexpected end of JSON input"),
        (b'{"a": "b', "unexpected end of JSON input"),
        (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
        (b"{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
        (b'{"a" 1}', "invalid character '1' after object key"),
        (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
        (b"[1 2]", "invalid character '2' after array element"),
        (b"[1,]", "invalid character ']' looking for beginning of value"),
        (b"{}x", "invalid character 'x' after top-level value"),
        (b"01", "invalid character '1' after top-level value"),
        (b"nul", "invalid character ' ' in literal null (expecting 'l')"),
        (b"trUe", "invalid character 'U' in literal true (expecting 'u')"),
        (b"-", "invalid character ' ' in numeric literal"),
        (b"1.", "invalid character ' ' after decimal point in numeric literal"),
        (b"1e+", "invalid character ' ' in exponent of numeric literal"),
        (b'"\\x"', "invalid character 'x' in string escape code"),
        (b'"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"),
        (b'"\x01"', "invalid character '\\x01' in string literal"),
        (b"[]", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
        (b'"s"', "json: cannot unmarshal string into Go value of type map[string]interface {}"),
        (b"true", "json: cannot unmarshal bool into Go value of type map[string]interface {}"),
        (b"-1.5e3", "json: cannot unmarshal number into Go value of type map[string]interface {}"),
    ],
)
def test_go_json_errors(data: bytes, expected: str | None) -> None:
    assert unmarshal_map_error(data) == expected


# --- OpenAPI --------------------------------------------------------------------------------


def test_config_map_and_secret_openapi() -> None:
    schemas = components([ConfigMap, Secret])
    cm = schemas["io.k8s.api.core.v1.ConfigMap"]
    assert cm["x-kubernetes-group-version-kind"] == [
        {"group": "", "version": "v1", "kind": "ConfigMap"}
    ]
    assert cm["type"] == "object" and "required" not in cm
    props = cm["properties"]
    assert set(props) == {"apiVersion", "binaryData", "data", "immutable", "kind", "metadata"}
    assert props["binaryData"]["additionalProperties"] == {"type": "string", "format": "byte"}
    assert props["data"]["additionalProperties"] == {"type": "string"}
    assert props["immutable"]["type"] == "boolean"
    assert props["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    secret = schemas["io.k8s.api.core.v1.Secret"]["properties"]
    assert secret["data"]["additionalProperties"] == {"type": "string", "format": "byte"}
    assert secret["stringData"]["additionalProperties"] == {"type": "string"}
    assert secret["type"]["type"] == "string"


def test_namespace_openapi() -> None:
    schemas = components([Namespace])
    assert schemas["io.k8s.api.core.v1.Namespace"]["x-kubernetes-group-version-kind"] == [
        {"group": "", "version": "v1", "kind": "Namespace"}
    ]
    status = schemas["io.k8s.api.core.v1.NamespaceStatus"]["properties"]
    assert status["phase"]["enum"] == ["Active", "Terminating"]
    conditions = status["conditions"]
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]
    assert conditions["x-kubernetes-patch-merge-key"] == "type"
    assert conditions["x-kubernetes-patch-strategy"] == "merge"
    assert schemas["io.k8s.api.core.v1.NamespaceCondition"]["required"] == ["type", "status"]
    spec = schemas["io.k8s.api.core.v1.NamespaceSpec"]["properties"]
    assert spec["finalizers"]["items"] == {"type": "string"}
