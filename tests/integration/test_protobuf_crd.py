"""CustomResourceDefinitions and events.k8s.io/v1beta1 Events in protobuf, on a real server.

A client-go client built with ``application/vnd.kubernetes.protobuf`` (the
apiextensions clientset of a controller, for one) writes and reads CRDs in
protobuf, lists them and watches them; events.k8s.io/v1beta1 (served up to
1.24) likewise.  Each protobuf answer must be the object the JSON answer is.
kubectl reads CRDs in JSON, which must not change.
"""

from __future__ import annotations

import base64
import copy
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kapi.runtime import protobuf
from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.crds import established
from tests.helpers.kubectl import WATCH_TIMEOUT, make_kubectl
from tests.helpers.wait import eventually
from tests.integration import protobuf_reader as pb

Object = dict[str, Any]

PROTOBUF = "application/vnd.kubernetes.protobuf"
PROTOBUF_WATCH = f"{PROTOBUF};stream=watch"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CRD = ("apiextensions.k8s.io/v1", "CustomResourceDefinition")
GROUP = "pb.example.com"
CA_BUNDLE = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def widget_crd(plural: str) -> Object:
    """A definition using most of what a CRD can say, all of it valid."""
    spec_schema = {
        "type": "object",
        "required": ["size"],
        "properties": {
            "size": {"type": "string", "enum": ["small", "large"], "default": "small"},
            "replicas": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 100},
            "ratio": {"type": "number", "maximum": 2.5, "multipleOf": 0.5},
            "labels": {
                "type": "object",
                "additionalProperties": {"type": "string", "maxLength": 63},
            },
            "ports": {
                "type": "array",
                "maxItems": 8,
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                },
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
            },
            "port": {
                "x-kubernetes-int-or-string": True,
                "anyOf": [{"type": "integer"}, {"type": "string"}],
            },
            "template": {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            },
            "settings": {
                "type": "object",
                "x-kubernetes-map-type": "atomic",
                "additionalProperties": {"type": "string"},
                "nullable": True,
            },
        },
        "allOf": [{"required": ["size"]}],
        "example": {"size": "small"},
        "x-kubernetes-validations": [
            {
                "rule": "!has(self.replicas) || self.replicas <= 100",
                "message": "too many",
                "reason": "FieldValueInvalid",
                "fieldPath": ".replicas",
            },
            {
                "rule": "self.size == oldSelf.size",
                "messageExpression": "'size is immutable'",
                "optionalOldSelf": True,
            },
        ],
    }
    schema = {
        "type": "object",
        "description": "A widget.",
        "properties": {
            "spec": spec_schema,
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    loose = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": CRD[0],
        "kind": CRD[1],
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "names": {
                "plural": plural,
                "singular": plural[:-1],
                "kind": plural[:-1].capitalize(),
                "listKind": plural[:-1].capitalize() + "List",
                "shortNames": [plural[:3]],
                "categories": ["all"],
            },
            "scope": "Namespaced",
            "versions": [
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
                        },
                    },
                    "additionalPrinterColumns": [
                        {"name": "Size", "type": "string", "jsonPath": ".spec.size"},
                        {
                            "name": "Replicas",
                            "type": "integer",
                            "jsonPath": ".spec.replicas",
                            "priority": 1,
                            "description": "Desired replicas",
                        },
                    ],
                    "selectableFields": [{"jsonPath": ".spec.size"}],
                },
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": False,
                    "deprecated": True,
                    "deprecationWarning": f"{GROUP}/v1beta1 is going away",
                    # Not v1's schema: identical ones would be hoisted to the spec, where
                    # selectableFields are refused.
                    "schema": {"openAPIV3Schema": loose},
                },
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {
                        "service": {"namespace": "default", "name": "conv", "path": "/convert"},
                        "caBundle": CA_BUNDLE.decode(),
                    },
                    "conversionReviewVersions": ["v1"],
                },
            },
        },
    }


def without_type_meta(obj: Object) -> Object:
    """A list item: list items carry no apiVersion and kind in protobuf."""
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


def without_nulls(obj: Object) -> Object:
    """A zero ``metav1.Time`` is ``null`` in JSON and nothing in a decoded protobuf body."""
    return {k: v for k, v in obj.items() if v is not None}


def get_protobuf(http: httpx.Client, path: str, **params: str) -> Object:
    response = http.get(path, params=params, headers={"accept": PROTOBUF})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == PROTOBUF
    return protobuf.decode(response.content)


def protobuf_watch(url: str, path: str, params: dict[str, str], count: int) -> list[Object]:
    """The first ``count`` events of a protobuf watch, each as ``{type, object}``."""
    params = {"watch": "1", "timeoutSeconds": str(WATCH_TIMEOUT), **params}
    timeout = httpx.Timeout(10, read=WATCH_TIMEOUT + 10)
    events: list[tuple[str, bytes]] = []
    pending = b""
    with httpx.stream(
        "GET", url + path, params=params, headers={"accept": PROTOBUF}, timeout=timeout
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"] == PROTOBUF_WATCH
        for chunk in response.iter_bytes():
            complete, pending = pb.watch_events(pending + chunk)
            events += complete
            if len(events) >= count:
                break
    assert len(events) >= count, events
    return [{"type": kind, "object": protobuf.decode(body)} for kind, body in events[:count]]


def json_watch(http: httpx.Client, path: str, params: dict[str, str]) -> list[Object]:
    """A JSON watch's events up to its (short) timeout."""
    response = http.get(path, params={"watch": "1", "timeoutSeconds": "1", **params})
    return [json.loads(line) for line in response.text.splitlines()]


# -- CustomResourceDefinition ----------------------------------------------------------------


@pytest.fixture
def created_crd(http: httpx.Client) -> Iterator[tuple[Object, Object]]:
    """A CRD POSTed in protobuf: what was sent, and the protobuf answer, decoded."""
    sent = widget_crd(unique("widgets"))
    name = sent["metadata"]["name"]
    response = http.post(
        CRDS,
        content=protobuf.encode(sent),
        headers={"content-type": PROTOBUF, "accept": f"{PROTOBUF},application/json"},
    )
    assert response.status_code == 201, response.text
    assert response.headers["content-type"] == PROTOBUF
    assert pb.envelope(response.content)[:2] == CRD
    yield sent, protobuf.decode(response.content)
    http.delete(f"{CRDS}/{name}")


def test_crd_created_in_protobuf_reads_back_in_both_forms(
    http: httpx.Client, created_crd: tuple[Object, Object]
) -> None:
    sent, created = created_crd
    name = sent["metadata"]["name"]
    # Everything the client said survives, the schema's own JSON forms included; defaulting
    # adds the webhook's port.
    expected_spec = copy.deepcopy(sent["spec"])
    expected_spec["conversion"]["webhook"]["clientConfig"]["service"]["port"] = 443
    assert created["spec"] == expected_spec
    assert created["metadata"]["name"] == name

    as_json = http.get(f"{CRDS}/{name}").json()
    assert as_json["spec"] == expected_spec
    assert get_protobuf(http, f"{CRDS}/{name}") == as_json

    # The controller's status (conditions, accepted names, stored versions) reads the same.
    eventually(lambda: established(http, name), what=f"{name} established", timeout=WATCH_TIMEOUT)
    as_json = http.get(f"{CRDS}/{name}").json()
    assert {c["type"] for c in as_json["status"]["conditions"]} >= {"Established"}
    assert as_json["status"]["storedVersions"] == ["v1"]
    assert get_protobuf(http, f"{CRDS}/{name}") == as_json


def test_crd_updated_in_protobuf(http: httpx.Client, created_crd: tuple[Object, Object]) -> None:
    sent, _ = created_crd
    name = sent["metadata"]["name"]
    # The CRD controller writes the status once after the create; read after it has.
    eventually(lambda: established(http, name), what=f"{name} established", timeout=WATCH_TIMEOUT)
    current = get_protobuf(http, f"{CRDS}/{name}")
    schema = current["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["color"] = {"type": "string", "default": "red"}
    replaced = http.put(
        f"{CRDS}/{name}",
        content=protobuf.encode(current),
        headers={"content-type": PROTOBUF, "accept": PROTOBUF},
    )
    assert replaced.status_code == 200, replaced.text
    updated = protobuf.decode(replaced.content)
    assert updated["metadata"]["generation"] == current["metadata"]["generation"] + 1
    assert updated["spec"] == current["spec"]
    assert http.get(f"{CRDS}/{name}").json()["spec"] == current["spec"]


def test_crds_list_in_protobuf(http: httpx.Client, created_crd: tuple[Object, Object]) -> None:
    name = created_crd[0]["metadata"]["name"]
    selector = {"fieldSelector": f"metadata.name={name}"}
    listed = get_protobuf(http, CRDS, **selector)
    as_json = http.get(CRDS, params=selector).json()
    assert (listed["apiVersion"], listed["kind"]) == (CRD[0], "CustomResourceDefinitionList")
    assert listed["metadata"] == as_json["metadata"]
    assert [item["metadata"]["name"] for item in listed["items"]] == [name]
    assert listed["items"] == [without_type_meta(item) for item in as_json["items"]]


def test_crds_watch_in_protobuf(http: httpx.Client, kapi_server: KapiServer) -> None:
    crd = widget_crd(unique("gadgets"))
    name = crd["metadata"]["name"]
    selector = {"fieldSelector": f"metadata.name={name}"}
    start = http.get(CRDS).json()["metadata"]["resourceVersion"]
    created = http.post(CRDS, json=crd)
    assert created.status_code == 201, created.text
    eventually(lambda: established(http, name), what=f"{name} established", timeout=WATCH_TIMEOUT)
    assert http.delete(f"{CRDS}/{name}").status_code == 200
    eventually(
        lambda: http.get(f"{CRDS}/{name}").status_code == 404,
        what=f"{name} deleted",
        timeout=WATCH_TIMEOUT,
    )

    params = {"resourceVersion": start, **selector}
    as_json = json_watch(http, CRDS, params)
    assert as_json[0]["type"] == "ADDED"
    assert as_json[-1]["type"] == "DELETED"
    events = protobuf_watch(kapi_server.url, CRDS, params, len(as_json))
    assert events == as_json


# -- events.k8s.io/v1beta1 -------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_1_24(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """events.k8s.io/v1beta1 is served up to 1.24."""
    yield from serve_with_flags(tmp_path_factory, "pb-events-1-24", "--emulated-version=1.24")


def beta_event(name: str, namespace: str) -> Object:
    return {
        "apiVersion": "events.k8s.io/v1beta1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "eventTime": "2024-05-06T07:08:09.123456Z",
        "series": {"count": 2, "lastObservedTime": "2024-05-06T07:09:09.000000Z"},
        "reportingController": "example.com/syncer",
        "reportingInstance": "syncer-1",
        "action": "Sync",
        "reason": "Synced",
        "regarding": {"kind": "ConfigMap", "name": "cm", "namespace": namespace},
        "note": "synced once",
        "type": "Normal",
    }


def test_v1beta1_events_in_protobuf(server_1_24: KapiServer) -> None:
    with server_1_24.client() as http:
        namespace = unique("ev-")
        assert http.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).is_success
        events = f"/apis/events.k8s.io/v1beta1/namespaces/{namespace}/events"
        start = http.get(events).json()["metadata"]["resourceVersion"]

        sent = beta_event("e", namespace)
        response = http.post(
            events,
            content=protobuf.encode(sent),
            headers={"content-type": PROTOBUF, "accept": f"{PROTOBUF},application/json"},
        )
        assert response.status_code == 201, response.text
        assert pb.envelope(response.content)[:2] == ("events.k8s.io/v1beta1", "Event")
        created = protobuf.decode(response.content)
        assert {k: created[k] for k in sent if k != "metadata"} == {
            k: v for k, v in sent.items() if k != "metadata"
        }

        as_json = without_nulls(http.get(f"{events}/e").json())
        assert get_protobuf(http, f"{events}/e") == as_json
        # The same stored event, in events.k8s.io/v1.
        v1 = get_protobuf(http, f"/apis/events.k8s.io/v1/namespaces/{namespace}/events/e")
        assert v1 == {**as_json, "apiVersion": "events.k8s.io/v1"}

        listed = get_protobuf(http, events)
        assert listed["kind"] == "EventList"
        items = http.get(events).json()["items"]
        assert listed["items"] == [without_type_meta(without_nulls(e)) for e in items]

        [watched] = protobuf_watch(server_1_24.url, events, {"resourceVersion": start}, 1)
        [as_json_event] = json_watch(http, events, {"resourceVersion": start})
        assert watched["type"] == as_json_event["type"] == "ADDED"
        assert watched["object"] == without_nulls(as_json_event["object"])


# -- kubectl ---------------------------------------------------------------------------------


@pytest.mark.kubectl
def test_kubectl_gets_a_protobuf_created_crd_as_yaml(
    kapi_server: KapiServer, tmp_path: Path, http: httpx.Client, created_crd: tuple[Object, Object]
) -> None:
    name = created_crd[0]["metadata"]["name"]
    eventually(lambda: established(http, name), what=f"{name} established", timeout=WATCH_TIMEOUT)
    kubectl = make_kubectl(kapi_server, tmp_path, "1.33")
    printed = yaml.safe_load(kubectl.ok("get", "crd", name, "-o", "yaml").stdout)
    as_json = http.get(f"{CRDS}/{name}").json()
    del as_json["metadata"]["managedFields"]  # kubectl hides them unless asked
    assert printed == as_json
    assert printed["spec"]["versions"] == created_crd[1]["spec"]["versions"]
