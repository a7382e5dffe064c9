"""Hostile request bodies: nulls in lists and maps, lone surrogates, odd YAML keys, deep nesting.

Each is decoded as upstream's Go decoder does, or refused with a 4xx Status
before anything is stored; whatever is stored reads back in every format.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer
from tests.helpers.audit import events_of
from tests.helpers.crds import serve_widgets
from tests.helpers.objects import configmap, unique
from tests.helpers.status import assert_status, storage_unchanged
from tests.integration.paths import cm_path

Object = dict[str, Any]

JSON = {"content-type": "application/json"}
YAML = {"content-type": "application/yaml"}
PROTOBUF = "application/vnd.kubernetes.protobuf"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
READ_FORMATS = ("application/json", "application/yaml", PROTOBUF, TABLE)

GROUP = "hostile.example.com"
KIND = "HostileWidget"
PLURAL = KIND.lower() + "s"


def post(http: httpx.Client, path: str, body: str | bytes, headers: dict[str, str] = JSON) -> Any:
    return http.post(path, content=body, headers=headers)


def assert_readable(
    http: httpx.Client, collection: str, name: str, formats: tuple[str, ...]
) -> None:
    """The object and its collection read back in each format: never a 5xx."""
    for accept in formats:
        for path in (f"{collection}/{name}", collection):
            response = http.get(path, headers={"accept": accept})
            assert response.status_code == 200, (accept, path, response.text)
            assert response.headers["content-type"].startswith(accept.split(";")[0])


def same_answer(first: httpx.Response, second: httpx.Response, name: str, other: str) -> None:
    """Both requests got the same status and message (names aside)."""
    assert first.status_code == second.status_code, (first.text, second.text)
    one, two = first.json(), second.json()
    if one.get("kind") == "Status":
        assert one["reason"] == two["reason"]
        assert one["message"] == two["message"].replace(other, name)
    else:
        assert {k: v for k, v in one.items() if k != "metadata"} == {
            k: v for k, v in two.items() if k != "metadata"
        }


# -- a custom resource ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def widgets(kapi_server: KapiServer) -> Iterator[str]:
    """The CRD of this module; its plural's path prefix, before the namespace."""
    yield from serve_widgets(kapi_server, GROUP, KIND)


def widget(name: str, **spec: Any) -> Object:
    return {"apiVersion": f"{GROUP}/v1", "kind": KIND, "metadata": {"name": name}, "spec": spec}


def with_meta(obj: Object, **metadata: Any) -> Object:
    return {**obj, "metadata": {**obj["metadata"], **metadata}}


# -- null in lists and maps -----------------------------------------------------------------


def test_null_finalizer_is_an_empty_one(http: httpx.Client, namespace: str) -> None:
    with storage_unchanged(http, namespace):
        null = post(http, cm_path(namespace), '{"metadata":{"name":"a","finalizers":[null]}}')
        empty = http.post(cm_path(namespace), json={"metadata": {"name": "a", "finalizers": [""]}})
    assert_status(null, 422, "Invalid", empty.json()["message"])
    assert null.json()["message"].startswith(
        'ConfigMap "a" is invalid: [metadata.finalizers: Invalid value: "": '
        "name part must be non-empty"
    )


def test_null_owner_reference_is_a_zero_one(http: httpx.Client, namespace: str) -> None:
    with storage_unchanged(http, namespace):
        null = post(http, cm_path(namespace), '{"metadata":{"name":"a","ownerReferences":[null]}}')
        zero = http.post(
            cm_path(namespace), json={"metadata": {"name": "a", "ownerReferences": [{}]}}
        )
    assert_status(null, 422, "Invalid", zero.json()["message"])
    assert (
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty'
        in (null.json()["message"])
    )


def test_null_map_values_are_stored_as_empty_strings(http: httpx.Client, namespace: str) -> None:
    body = '{"metadata":{"name":"nulls","labels":{"a":null},"annotations":{"b":null}},'
    body += '"data":{"c":null},"binaryData":{"d":null}}'
    created = post(http, cm_path(namespace), body)
    assert created.status_code == 201, created.text
    stored = http.get(cm_path(namespace, "nulls")).json()
    assert stored["metadata"]["labels"] == {"a": ""}
    assert stored["metadata"]["annotations"] == {"b": ""}
    assert stored["data"] == {"c": ""}
    assert stored["binaryData"] == {"d": ""}
    assert_readable(http, cm_path(namespace), "nulls", READ_FORMATS)
    # Every namespace's protobuf LIST, which informers use, still answers.
    everywhere = http.get("/api/v1/configmaps", headers={"accept": PROTOBUF})
    assert everywhere.status_code == 200, everywhere.text


def test_null_namespace_finalizer(http: httpx.Client) -> None:
    name = unique("nsnull")
    null = post(
        http,
        "/api/v1/namespaces",
        json.dumps({"metadata": {"name": name}, "spec": {"finalizers": [None]}}),
    )
    empty = http.post(
        "/api/v1/namespaces", json={"metadata": {"name": name}, "spec": {"finalizers": [""]}}
    )
    assert_status(null, 422, "Invalid", empty.json()["message"])
    assert http.get(f"/api/v1/namespaces/{name}").status_code == 404


NULL_ITEMS = [
    (
        "/api/v1/namespaces/{ns}/endpoints",
        '{"metadata":{"name":"%s"},"subsets":[null,{"addresses":[null],"ports":[null]}]}',
        {"subsets": [{}, {"addresses": [{}], "ports": [{}]}]},
    ),
    (
        "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
        '{"metadata":{"name":"%s"},"addressType":"IPv4","endpoints":[null],"ports":[null]}',
        {"addressType": "IPv4", "endpoints": [{}], "ports": [{}]},
    ),
    (
        "/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses",
        '{"metadata":{"name":"%s"},"spec":{"rules":[null],"tls":[null]}}',
        {"spec": {"rules": [{}], "tls": [{}]}},
    ),
    (
        "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
        '{"metadata":{"name":"%s"},"spec":{"minAvailable":1,"selector":{"matchExpressions":[null]}}}',
        {"spec": {"minAvailable": 1, "selector": {"matchExpressions": [{}]}}},
    ),
    (
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        '{"metadata":{"name":"%s"},"webhooks":[null]}',
        {"webhooks": [{}]},
    ),
    (
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
        '{"metadata":{"name":"%s"},"webhooks":[{"name":"a.b.c","clientConfig":{"url":"https://x"},'
        '"sideEffects":"None","admissionReviewVersions":[null]}]}',
        {
            "webhooks": [
                {
                    "name": "a.b.c",
                    "clientConfig": {"url": "https://x"},
                    "sideEffects": "None",
                    "admissionReviewVersions": [""],
                }
            ]
        },
    ),
]


@pytest.mark.parametrize(("collection", "with_null", "with_zero"), NULL_ITEMS)
def test_null_items_are_zero_values(
    http: httpx.Client, namespace: str, collection: str, with_null: str, with_zero: Object
) -> None:
    path = collection.format(ns=namespace)
    null_name, zero_name = unique("null"), unique("zero")
    null = post(http, path, with_null % null_name)
    zero = http.post(path, json={"metadata": {"name": zero_name}, **with_zero})
    assert null.status_code < 500, null.text
    same_answer(null, zero, null_name, zero_name)
    if null.status_code == 201:
        assert_readable(http, path, null_name, READ_FORMATS)
    else:
        assert http.get(f"{path}/{null_name}").status_code == 404


def test_cronjob_null_container_reads_back(http: httpx.Client, namespace: str) -> None:
    path = f"/apis/batch/v1/namespaces/{namespace}/cronjobs"
    body = {
        "metadata": {"name": "cj"},
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {
                "spec": {"template": {"spec": {"containers": [None], "restartPolicy": "Never"}}}
            },
        },
    }
    created = post(http, path, json.dumps(body))
    # A null item decodes as an empty container (defaulted, then validated as kube-apiserver
    # validates a job template): what it lacks is named, nothing else, and nothing is stored.
    assert created.status_code == 422, created.text
    assert [(c["field"], c["message"]) for c in created.json()["details"]["causes"]] == [
        ("spec.jobTemplate.spec.template.spec.containers[0].name", "Required value"),
        ("spec.jobTemplate.spec.template.spec.containers[0].image", "Required value"),
    ]
    assert http.get(f"{path}/cj").status_code == 404
    # With a name and an image filled in by the client, the same shape is accepted.
    body["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"] = [
        {"name": "c", "image": "busybox"}
    ]
    created = post(http, path, json.dumps(body))
    assert created.status_code == 201, created.text
    assert_readable(http, path, "cj", READ_FORMATS)


def test_json_patch_adding_null_items(http: httpx.Client, namespace: str) -> None:
    post(http, cm_path(namespace), json.dumps(configmap("p", data={"a": "b"})))
    patch = [
        {"op": "add", "path": "/data/n", "value": None},
        {"op": "add", "path": "/metadata/labels", "value": {"l": None}},
    ]
    response = http.patch(
        cm_path(namespace, "p"),
        content=json.dumps(patch),
        headers={"content-type": "application/json-patch+json"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {"a": "b", "n": ""}
    assert response.json()["metadata"]["labels"] == {"l": ""}
    assert_readable(http, cm_path(namespace), "p", READ_FORMATS)


def test_custom_resource_nulls(http: httpx.Client, namespace: str, widgets: str) -> None:
    path = f"{widgets}/{namespace}/{PLURAL}"
    # Root metadata is read into ObjectMeta, as a built-in's.
    null = post(http, path, json.dumps(with_meta(widget("w"), finalizers=[None])))
    empty = http.post(path, json=with_meta(widget("w"), finalizers=[""]))
    assert_status(null, 422, "Invalid", empty.json()["message"])
    labels = post(http, path, json.dumps(with_meta(widget("l"), labels={"a": None})))
    assert labels.status_code == 201, labels.text
    assert labels.json()["metadata"]["labels"] == {"a": ""}
    # In the spec, the schema decides: a null string item is invalid, unless nullable.
    typed = post(http, path, json.dumps(widget("t", list=[None])))
    assert_status(
        typed,
        422,
        "Invalid",
        f'{KIND}.{GROUP} "t" is invalid: spec.list[0]: Invalid value: "null": '
        'spec.list[0] in body must be of type string: "null"',
    )
    kept = post(http, path, json.dumps(widget("k", nullableList=[None], free={"x": [None]})))
    assert kept.status_code == 201, kept.text
    assert kept.json()["spec"] == {"nullableList": [None], "free": {"x": [None]}}
    assert_readable(http, path, "k", ("application/json", "application/yaml", TABLE))


# -- lone surrogates and invalid UTF-8 ------------------------------------------------------


def test_lone_surrogates_read_as_replacement_characters(http: httpx.Client, namespace: str) -> None:
    body = (
        r'{"metadata":{"name":"sur","annotations":{"a":"\ud800"}},'
        r'"data":{"lone":"x\udc00y","pair":"\ud83d\ude00","escaped":"\\ud800",'
        r'"twice":"\ud800\ud800\udc00"}}'
    )
    created = post(http, cm_path(namespace), body)
    assert created.status_code == 201, created.text
    stored = http.get(cm_path(namespace, "sur")).json()
    assert stored["metadata"]["annotations"] == {"a": "\ufffd"}
    assert stored["data"] == {
        "lone": "x\ufffdy",
        "pair": "\U0001f600",
        "escaped": "\\ud800",
        "twice": "\ufffd\U00010000",
    }
    assert_readable(http, cm_path(namespace), "sur", READ_FORMATS)


def test_lone_surrogate_in_kind_and_api_version(http: httpx.Client, namespace: str) -> None:
    with storage_unchanged(http, namespace):
        kind = post(http, cm_path(namespace), r'{"kind":"\ud800","metadata":{"name":"k"}}')
        version = post(http, cm_path(namespace), r'{"apiVersion":"\ud800","metadata":{"name":"k"}}')
        generated = post(http, cm_path(namespace), r'{"metadata":{"generateName":"\ud800"}}')
    assert_status(
        kind,
        400,
        "BadRequest",
        '\ufffd in version "v1" cannot be handled as a ConfigMap: no kind "\ufffd" is registered '
        'for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"',
    )
    assert_status(
        version,
        400,
        "BadRequest",
        'ConfigMap in version "\ufffd" cannot be handled as a ConfigMap: no kind "ConfigMap" is '
        'registered for version "\ufffd" in scheme "pkg/api/legacyscheme/scheme.go:30"',
    )
    status = assert_status(generated, 422, "Invalid")
    assert 'metadata.generateName: Invalid value: "\ufffd"' in status["message"]


@pytest.mark.parametrize(
    ("media", "body"),
    [
        ("application/json-patch+json", r'[{"op":"add","path":"/data/v","value":"\ud800"}]'),
        ("application/merge-patch+json", r'{"data":{"v":"\ud800"}}'),
        ("application/strategic-merge-patch+json", r'{"data":{"v":"\ud800"}}'),
    ],
)
def test_lone_surrogates_in_patches(
    http: httpx.Client, namespace: str, media: str, body: str
) -> None:
    post(http, cm_path(namespace), json.dumps(configmap("p", data={"a": "b"})))
    response = http.patch(cm_path(namespace, "p"), content=body, headers={"content-type": media})
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {"a": "b", "v": "\ufffd"}
    assert_readable(http, cm_path(namespace), "p", READ_FORMATS)


def test_lone_surrogate_in_apply_is_a_yaml_error(http: httpx.Client, namespace: str) -> None:
    # Apply bodies are YAML upstream, whose scanner refuses a surrogate escape.
    body = r'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ap"},"data":{"v":"\ud800"}}'
    with storage_unchanged(http, namespace):
        response = http.patch(
            cm_path(namespace, "ap") + "?fieldManager=m",
            content=body,
            headers={"content-type": "application/apply-patch+yaml"},
        )
    status = assert_status(response, 400, "BadRequest")
    assert status["message"].endswith("found invalid Unicode character escape code")


def test_invalid_utf8_reads_as_replacement_characters(http: httpx.Client, namespace: str) -> None:
    # One U+FFFD per byte that does not start or continue a valid sequence, as Go reads them.
    body = b'{"metadata":{"name":"utf"},"data":{"a":"x\xffy","b":"\xe2\x82z","c":"\xed\xa0\x80"}}'
    created = post(http, cm_path(namespace), body)
    assert created.status_code == 201, created.text
    assert created.json()["data"] == {
        "a": "x\ufffdy",
        "b": "\ufffd\ufffdz",
        "c": "\ufffd\ufffd\ufffd",
    }
    assert_readable(http, cm_path(namespace), "utf", READ_FORMATS)


def test_invalid_utf8_outside_strings_is_a_syntax_error(http: httpx.Client, namespace: str) -> None:
    with storage_unchanged(http, namespace):
        response = post(http, cm_path(namespace), b'{"metadata":\xff}')
    status = assert_status(response, 400, "BadRequest")
    assert status["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: invalid character '\u00ff' looking for beginning of value"
    )


# -- YAML keys ------------------------------------------------------------------------------


def test_yaml_keys_become_strings(http: httpx.Client, namespace: str) -> None:
    body = "metadata: {name: keys}\n"
    body += "data: {1: a, 1.5: b, false: c, 2020-01-02: e, f: 2020-01-02}\n"
    created = post(http, cm_path(namespace), body, YAML)
    assert created.status_code == 201, created.text
    assert created.json()["data"] == {
        "1": "a",
        "1.5": "b",
        "false": "c",
        "2020-01-02": "e",
        "f": "2020-01-02",
    }
    assert_readable(http, cm_path(namespace), "keys", READ_FORMATS)


def test_yaml_null_key_is_refused(http: httpx.Client, namespace: str) -> None:
    with storage_unchanged(http, namespace):
        response = post(http, cm_path(namespace), "metadata: {name: nk}\ndata: {null: a}\n", YAML)
    status = assert_status(response, 400, "BadRequest")
    assert status["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): error converting YAML "
        'to JSON: unsupported map key of type: %!s(<nil>), key: <nil>, value: "a"'
    )


# -- deep nesting ---------------------------------------------------------------------------


def nested(depth: int) -> str:
    """JSON text of ``depth`` nested objects."""
    return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)


DEPTH_ERROR = (
    "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
    "version/kind; json parse error: invalid character '{' exceeded max depth"
)


@pytest.mark.parametrize("depth", [201, 500, 1100, 10_000, 10_001, 20_000])
def test_deep_bodies_are_refused(http: httpx.Client, namespace: str, depth: int) -> None:
    body = '{"metadata":{"name":"deep"},"unknown":' + nested(depth - 1) + "}"
    with storage_unchanged(http, namespace):
        response = post(http, cm_path(namespace), body)
    status = assert_status(response, 400, "BadRequest")
    assert status["message"].startswith(DEPTH_ERROR), status["message"]


def test_deep_yaml_is_refused(http: httpx.Client, namespace: str) -> None:
    body = "metadata: {name: deep}\nunknown: " + "[" * 2000 + "]" * 2000 + "\n"
    with storage_unchanged(http, namespace):
        response = post(http, cm_path(namespace), body, YAML)
    status = assert_status(response, 400, "BadRequest")
    assert status["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): error converting YAML "
        "to JSON: yaml: exceeded max depth of 200"
    )


def test_yaml_that_would_crash_the_parser_is_refused(
    http: httpx.Client, namespace: str, widgets: str
) -> None:
    # 100,000 levels overflowed PyYAML's composer and killed the server; an alias bomb
    # of a few hundred bytes expanded to billions of nodes.
    deep = "metadata: {name: deep}\nunknown: " + "[" * 100_000 + "]" * 100_000 + "\n"
    bomb = "metadata: {name: bomb}\ndata:\n  x0: &a0 [x, x, x, x, x, x, x, x, x]\n"
    bomb += "".join(f"  x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 9))
    with storage_unchanged(http, namespace):
        too_deep = post(http, cm_path(namespace), deep, YAML)
        aliased = post(http, cm_path(namespace), bomb, YAML)
    status = assert_status(too_deep, 400, "BadRequest")
    assert status["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): error converting YAML "
        "to JSON: yaml: exceeded max depth of 200"
    )
    status = assert_status(aliased, 400, "BadRequest")
    assert status["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): error converting YAML "
        "to JSON: yaml: document contains excessive aliasing"
    )
    # Into a preserve-unknown-fields custom resource, where nothing prunes it, likewise.
    cr = f"apiVersion: {GROUP}/v1\nkind: {KIND}\nmetadata: {{name: bomb}}\nspec:\n  free:\n"
    cr += bomb.split("data:\n", 1)[1].replace("  x", "    x")
    response = post(http, f"{widgets}/{namespace}/{PLURAL}", cr, YAML)
    assert_status(response, 400, "BadRequest")
    assert http.get("/readyz").status_code == 200


def test_deepest_accepted_custom_resource_works_everywhere(
    http: httpx.Client, namespace: str, widgets: str
) -> None:
    path = f"{widgets}/{namespace}/{PLURAL}"
    # root, spec, free: the body nests exactly 200 deep.
    body = json.dumps(widget("deep")).replace('"spec": {}', '"spec": {"free": ' + nested(198) + "}")
    created = post(http, path, body)
    assert created.status_code == 201, created.text
    assert_readable(http, path, "deep", ("application/json", "application/yaml", TABLE))
    stored = http.get(f"{path}/deep").json()
    replaced = http.put(f"{path}/deep", json=stored)  # managedFields nest deeper: still taken
    assert replaced.status_code == 200, replaced.text
    with http.stream("GET", f"{path}?watch=true&timeoutSeconds=1") as stream:
        assert stream.status_code == 200
        assert sum(1 for line in stream.iter_lines() if line) == 1
    rv = http.get(f"{path}/deep").json()["metadata"]["resourceVersion"]
    # A shallow JSON patch that adds one level under the deepest object.
    innermost = "/spec/free" + "/a" * 197
    deeper = http.patch(
        f"{path}/deep",
        json=[{"op": "add", "path": innermost + "/x", "value": {}}],
        headers={"content-type": "application/json-patch+json"},
    )
    assert_status(
        deeper,
        400,
        "BadRequest",
        "couldn't get version/kind; json parse error: invalid character '{' exceeded max depth",
    )
    assert http.get(f"{path}/deep").json()["metadata"]["resourceVersion"] == rv
    too_deep = post(http, path, body.replace('"deep"', '"deeper"').replace("{}", '{"a":{}}', 1))
    assert_status(too_deep, 400, "BadRequest")
    assert http.get(f"{path}/deeper").status_code == 404


# -- the audit log records what was decoded -------------------------------------------------


def test_audit_log_records_hostile_bodies(audited: tuple[KapiServer, Path]) -> None:
    server, log = audited
    path = cm_path("default")
    with server.client() as http:
        deep = post(http, path, '{"metadata":{"name":"deep"},"x":' + nested(300) + "}")
        assert_status(deep, 400, "BadRequest")
        surrogate = post(http, path, r'{"metadata":{"name":"sur"},"data":{"a":"\ud800"}}')
        assert surrogate.status_code == 201, surrogate.text
        keys = post(http, path, "metadata: {name: keys}\ndata: {1: a}\n", YAML)
        assert keys.status_code == 201, keys.text
        # The server still answers: writing those events did not fail the requests.
        assert http.get(f"{path}/keys").json()["data"] == {"1": "a"}
    [*_, complete] = events_of(log, deep.headers["audit-id"])
    assert "requestObject" not in complete  # too deep to log, as to store
    assert complete["responseStatus"]["code"] == 400
    [*_, complete] = events_of(log, surrogate.headers["audit-id"])
    assert complete["requestObject"]["data"] == {"a": "\ufffd"}
    [*_, complete] = events_of(log, keys.headers["audit-id"])
    assert complete["requestObject"]["data"] == {"1": "a"}


LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"


@pytest.mark.parametrize(
    ("field", "value", "go_type"),
    [
        ("leaseDurationSeconds", 2**31, "int32"),
        ("leaseDurationSeconds", -(2**31) - 1, "int32"),
        ("leaseTransitions", 2**31, "int32"),
    ],
)
def test_integers_out_of_their_go_type_are_refused(
    http: httpx.Client, namespace: str, field: str, value: int, go_type: str
) -> None:
    """An int32 field takes no number past 2^31-1: upstream's decoder refuses it (it used to
    be stored, and written to protobuf wrapped round to -2^31)."""
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"}
    path = LEASES.format(ns=namespace)
    with storage_unchanged(http, namespace):
        refused = http.post(path, json={**lease, "metadata": {"name": "l"}, "spec": {field: value}})
    assert_status(
        refused,
        400,
        "BadRequest",
        'Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number '
        f"{value} into Go struct field LeaseSpec.spec.{field} of type {go_type}",
    )
    largest = http.post(path, json={**lease, "metadata": {"name": "l"}, "spec": {field: 2**31 - 1}})
    assert largest.status_code == 201, largest.text
    assert http.get(f"{path}/l").json()["spec"][field] == 2**31 - 1
    assert_readable(http, path, "l", READ_FORMATS)
