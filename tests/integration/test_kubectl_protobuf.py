"""kubectl's generator commands, which send protobuf from 1.32, and protobuf over HTTP.

``kubectl create configmap|secret|namespace|pdb|ingress`` build the object in
kubectl and POST it as ``application/vnd.kubernetes.protobuf``, asking for
protobuf back (``Accept: application/vnd.kubernetes.protobuf,application/json``).
kubectl 1.27 sends the same commands as JSON and must keep working.  The HTTP
tests check the wire: upstream's ``Status`` for malformed bodies (and nothing
stored), content negotiation, and custom resources, which have no protobuf form.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kapi.runtime import protobuf
from kapi.runtime.protowire import MessageWriter
from tests.conftest import KapiServer
from tests.helpers.crds import GROUP
from tests.helpers.kubectl import INVALID_NAME_MESSAGE, TIMESTAMP, UID, Kubectl, make_kubectl
from tests.helpers.objects import unique
from tests.helpers.protobuf_requests import (
    CONTENT_TYPE,
    PROTOBUF,
    PROTOBUF_VERSIONS,
    configmap_body,
    post,
)
from tests.helpers.status import assert_status, storage_unchanged
from tests.integration.paths import cm_path, pdb_path

#: kubectl >= 1.32 sends protobuf (PROTOBUF_VERSIONS); 1.27 sends JSON for the same commands.
VERSIONS = ["1.27", "1.32", "1.33"]


@pytest.fixture(params=VERSIONS)
def any_kubectl(request: pytest.FixtureRequest, kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(kapi_server, tmp_path, request.param)


@pytest.fixture(params=PROTOBUF_VERSIONS)
def pb_kubectl(request: pytest.FixtureRequest, kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(kapi_server, tmp_path, request.param)


# -- kubectl ---------------------------------------------------------------------------------


@pytest.mark.kubectl
def test_generators_create_objects(any_kubectl: Kubectl, namespace: str) -> None:
    k, ns = any_kubectl, ("-n", namespace)
    assert k.ok(*ns, "create", "configmap", "cm", "--from-literal=a=b").out_lines == [
        "configmap/cm created"
    ]
    assert k.ok(*ns, "create", "secret", "generic", "s", "--from-literal=user=admin").out_lines == [
        "secret/s created"
    ]
    name = unique("gen")
    assert k.ok("create", "namespace", name).out_lines == [f"namespace/{name} created"]

    assert k.json(*ns, "get", "configmap", "cm")["data"] == {"a": "b"}
    secret = k.json(*ns, "get", "secret", "s")
    assert (secret["type"], secret["data"]) == ("Opaque", {"user": "YWRtaW4="})
    created = k.json("get", "namespace", name)
    assert created["spec"] == {"finalizers": ["kubernetes"]}
    assert created["status"] == {"phase": "Active"}
    assert created["metadata"]["labels"] == {"kubernetes.io/metadata.name": name}


@pytest.mark.kubectl
def test_generators_travel_as_protobuf(
    kapi_server: KapiServer, namespace: str, tmp_path: Path
) -> None:
    """kubectl's own request log shows protobuf both ways from 1.32, and JSON from 1.27."""
    for version, media in (("1.32", PROTOBUF), ("1.33", PROTOBUF), ("1.27", "application/json")):
        k = make_kubectl(kapi_server, tmp_path, version)
        result = k.run(
            "-n", namespace, "create", "configmap", unique("wire"), "--from-literal=a=b", "-v=8"
        )
        assert result.returncode == 0, str(result)
        # The request's header, then the response's (1.33 logs them on lines of their own).
        assert CONTENT_TYPE.findall(result.stderr) == [media, media], str(result)


@pytest.mark.kubectl
def test_generators_print_yaml(pb_kubectl: Kubectl, namespace: str) -> None:
    k, ns = pb_kubectl, ("-n", namespace)
    printed = [
        yaml.safe_load(
            k.ok(*ns, "create", "configmap", "y", "--from-literal=a=b", "-o", "yaml").stdout
        ),
        yaml.safe_load(
            k.ok(*ns, "create", "secret", "generic", "t", "--from-literal=k=v", "-o", "yaml").stdout
        ),
    ]
    name = unique("yaml")
    printed.append(yaml.safe_load(k.ok("create", "namespace", name, "-o", "yaml").stdout))
    stored = [
        yaml.safe_load(k.ok(*ns, "get", "configmap", "y", "-o", "yaml").stdout),
        yaml.safe_load(k.ok(*ns, "get", "secret", "t", "-o", "yaml").stdout),
        yaml.safe_load(k.ok("get", "namespace", name, "-o", "yaml").stdout),
    ]
    assert printed == stored
    configmap, secret, ns_obj = printed
    assert configmap["data"] == {"a": "b"}
    assert secret["data"] == {"k": "dg=="}
    assert ns_obj["status"] == {"phase": "Active"}
    for obj in printed:
        assert UID.fullmatch(obj["metadata"]["uid"]), obj
        assert TIMESTAMP.fullmatch(obj["metadata"]["creationTimestamp"]), obj
        assert obj["metadata"]["resourceVersion"].isdigit(), obj


@pytest.mark.kubectl
def test_generators_server_dry_run(pb_kubectl: Kubectl, namespace: str) -> None:
    k, ns = pb_kubectl, ("-n", namespace)
    result = k.ok(*ns, "create", "configmap", "dry", "--from-literal=a=b", "--dry-run=server")
    assert result.out_lines == ["configmap/dry created (server dry run)"]
    printed = yaml.safe_load(
        k.ok(
            *ns,
            "create",
            "secret",
            "generic",
            "dry",
            "--from-literal=a=b",
            "--dry-run=server",
            "-o",
            "yaml",
        ).stdout
    )
    assert printed["data"] == {"a": "Yg=="}
    assert UID.fullmatch(printed["metadata"]["uid"])
    for kind in ("configmap", "secret"):
        missing = k.fails(*ns, "get", kind, "dry")
        assert missing.err_lines == [f'Error from server (NotFound): {kind}s "dry" not found']


@pytest.mark.kubectl
def test_generators_already_exists_and_invalid(any_kubectl: Kubectl, namespace: str) -> None:
    k, ns = any_kubectl, ("-n", namespace)
    k.ok(*ns, "create", "configmap", "dup", "--from-literal=a=b")
    again = k.fails(*ns, "create", "configmap", "dup", "--from-literal=a=c")
    assert again.err_lines == ['error: failed to create configmap: configmaps "dup" already exists']
    assert k.json(*ns, "get", "configmap", "dup")["data"] == {"a": "b"}

    bad = k.fails(*ns, "create", "configmap", "Bad_Name", "--from-literal=a=b")
    # kubectl prints the Status message after its own prefix (no "The" before the kind).
    message = INVALID_NAME_MESSAGE.removeprefix("The ")
    assert bad.err_lines == [f"error: failed to create configmap: {message}"]


@pytest.mark.kubectl
def test_pdb_and_ingress_generators(pb_kubectl: Kubectl, namespace: str) -> None:
    k, ns = pb_kubectl, ("-n", namespace)
    created = k.ok(*ns, "create", "pdb", "p", "--selector=app=web", "--max-unavailable=50%")
    assert created.out_lines == ["poddisruptionbudget.policy/p created"]
    spec = k.json(*ns, "get", "pdb", "p")["spec"]
    assert spec == {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}}

    created = k.ok(*ns, "create", "ingress", "ing", "--rule=foo.com/bar=svc:8080")
    assert created.out_lines == ["ingress.networking.k8s.io/ing created"]
    assert k.json(*ns, "get", "ingress", "ing")["spec"]["rules"] == [
        {
            "host": "foo.com",
            "http": {
                "paths": [
                    {
                        "path": "/bar",
                        "pathType": "Exact",
                        "backend": {"service": {"name": "svc", "port": {"number": 8080}}},
                    }
                ]
            },
        }
    ]


# -- HTTP ------------------------------------------------------------------------------------


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = MessageWriter().string(1, api_version).string(2, kind)
    return b"k8s\x00" + MessageWriter().message(1, type_meta).bytes(2, raw).getvalue()


_UNRECOGNIZED = "the object provided is unrecognized (must be of type ConfigMap): "


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", _UNRECOGNIZED + "empty data (<empty>)"),
        (
            b'{"kind":"ConfigMap"}',
            _UNRECOGNIZED + "provided data does not appear to be a protobuf message, "
            'expected prefix [107 56 115 0] ({"kind":"ConfigMap"})',
        ),
        (b"k8s\x00", _UNRECOGNIZED + "empty body (6b387300)"),
        (
            configmap_body("cut")[:40],
            _UNRECOGNIZED + "unexpected EOF (" + configmap_body("cut")[:30].hex() + " ...)",
        ),
        (
            envelope("v1", "ConfigMap", b"\n\x05\n\x01"),
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: unexpected EOF',
        ),
        (
            envelope("v1", "Secret", b"\n\x03\n\x01x"),
            'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to '
            "(core.ConfigMap): unknown conversion",
        ),
        (
            envelope("v1", "Widget", b""),
            'Widget in version "v1" cannot be handled as a ConfigMap: no kind "Widget" is '
            'registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"',
        ),
    ],
    ids=["empty", "json", "prefix-only", "truncated", "truncated-object", "secret", "unregistered"],
)
def test_malformed_bodies(http: httpx.Client, namespace: str, body: bytes, message: str) -> None:
    with storage_unchanged(http, namespace):
        assert_status(post(http, cm_path(namespace), body), 400, "BadRequest", message)


def test_version_in_the_envelope_must_match_the_url(http: httpx.Client, namespace: str) -> None:
    raw = MessageWriter().message(1, MessageWriter().string(1, "p")).getvalue()
    with storage_unchanged(http, namespace):
        response = post(
            http, pdb_path(namespace), envelope("policy/v1beta1", "PodDisruptionBudget", raw)
        )
        assert_status(
            response,
            400,
            "BadRequest",
            "the API version in the data (policy/v1beta1) does not match the expected API version "
            "(policy/v1)",
        )


def test_invalid_object_is_validated_as_json_is(http: httpx.Client, namespace: str) -> None:
    with storage_unchanged(http, namespace):
        response = post(http, cm_path(namespace), configmap_body("x", **{"bad key": "v"}))
        status = assert_status(response, 422, "Invalid")
        assert status["details"]["causes"][0]["field"] == "data[bad key]"


def test_protobuf_responses_when_asked_first(http: httpx.Client, namespace: str) -> None:
    response = post(
        http, cm_path(namespace), configmap_body("neg", a="b"), f"{PROTOBUF},application/json"
    )
    assert response.status_code == 201, response.text
    assert response.headers["content-type"] == PROTOBUF
    created = protobuf.decode(response.content)
    as_json = http.get(cm_path(namespace, "neg")).json()
    assert created == as_json

    got = http.get(cm_path(namespace, "neg"), headers={"accept": PROTOBUF})
    assert got.headers["content-type"] == PROTOBUF
    assert protobuf.decode(got.content) == as_json
    listed = protobuf.decode(http.get(cm_path(namespace), headers={"accept": PROTOBUF}).content)
    assert listed["kind"] == "ConfigMapList"
    # List items carry no apiVersion and kind in protobuf: their messages have no TypeMeta.
    items = http.get(cm_path(namespace)).json()["items"]
    assert listed["items"] == [
        {k: v for k, v in item.items() if k not in ("apiVersion", "kind")} for item in items
    ]

    json_first = http.get(
        cm_path(namespace, "neg"), headers={"accept": f"application/json,{PROTOBUF}"}
    )
    assert json_first.headers["content-type"] == "application/json"


def test_update_and_delete_options_in_protobuf(http: httpx.Client, namespace: str) -> None:
    assert post(http, cm_path(namespace), configmap_body("upd", a="1")).status_code == 201
    current = protobuf.decode(
        http.get(cm_path(namespace, "upd"), headers={"accept": PROTOBUF}).content
    )
    current["data"] = {"a": "2"}
    replaced = http.put(
        cm_path(namespace, "upd"),
        content=protobuf.encode(current),
        headers={"content-type": PROTOBUF, "accept": PROTOBUF},
    )
    assert replaced.status_code == 200, replaced.text
    assert protobuf.decode(replaced.content)["data"] == {"a": "2"}

    options = protobuf.encode({"apiVersion": "v1", "kind": "DeleteOptions", "dryRun": ["All"]})
    dry = http.request(
        "DELETE", cm_path(namespace, "upd"), content=options, headers={"content-type": PROTOBUF}
    )
    assert dry.status_code == 200, dry.text
    assert http.get(cm_path(namespace, "upd")).json()["data"] == {"a": "2"}


@pytest.mark.kubectl
def test_custom_resources_have_no_protobuf(http: httpx.Client, custom_resources: str) -> None:
    body: dict[str, Any] = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "PbCronTab",
        "metadata": {"name": "c"},
        "spec": {"cronSpec": "* * * * *"},
    }
    refused = post(http, custom_resources, envelope(f"{GROUP}/v1", "PbCronTab", b""))
    assert_status(
        refused,
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml",
    )
    assert http.get(custom_resources).json()["items"] == []

    created = http.post(
        custom_resources, json=body, headers={"accept": f"{PROTOBUF},application/json"}
    )
    assert created.status_code == 201, created.text
    assert created.headers["content-type"] == "application/json"
    only_protobuf = http.get(f"{custom_resources}/c", headers={"accept": PROTOBUF})
    assert_status(
        only_protobuf,
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json, application/yaml",
    )
