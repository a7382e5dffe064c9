"""CRD conversion through a real HTTPS webhook, and storage-version changes, with the real kubectl.

One CRD serves ``v1`` (``spec.cronSpec``) and ``v2`` (``spec.schedule``); a
webhook started by the test renames the field both ways.  kubectl creates,
reads and lists in either version, and sees the webhook's failures as it sees
them from kube-apiserver.
"""

from __future__ import annotations

import base64
import copy
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kapi.server import free_port
from tests.conftest import KapiServer
from tests.helpers.crds import wait_established, write_manifest
from tests.helpers.kubectl import Kubectl, Result, make_kubectl
from tests.helpers.wait import eventually
from tests.tls import ServingCertificate, make_ca, make_serving_cert
from tests.webhook_server import WebhookServer, serve_webhook

pytestmark = pytest.mark.kubectl

GROUP = "conversion.example.com"
CRD_NAME = f"crontabs.{GROUP}"
V1 = f"{GROUP}/v1"
V2 = f"{GROUP}/v2"
#: What the webhook answers with when it fails, and how kapi reports it.
BOOM = 'an error on the server ("boom") has prevented the request from succeeding'

#: Field names per version: the only difference between v1 and v2.
SCHEDULE = {V1: "cronSpec", V2: "schedule"}


class Converter:
    """The conversion webhook: renames the schedule field, or fails when told to."""

    def __init__(self) -> None:
        self.failing = False
        self.lock = threading.Lock()

    def __call__(self, path: str, review: dict[str, Any]) -> tuple[Any, ...]:
        if self.failing:
            return 500, b"boom\n", "text/plain"
        request = review["request"]
        desired = request["desiredAPIVersion"]
        converted = []
        for obj in request["objects"]:
            out = copy.deepcopy(obj)
            spec = out.get("spec") or {}
            value = spec.pop(SCHEDULE[obj["apiVersion"]], None)
            if value is not None:
                spec[SCHEDULE[desired]] = value
            out["apiVersion"] = desired
            converted.append(out)
        return 200, {
            "apiVersion": review["apiVersion"],
            "kind": "ConversionReview",
            "response": {
                "uid": request["uid"],
                "result": {"status": "Success"},
                "convertedObjects": converted,
            },
        }


def version_schema(schedule: str) -> dict[str, Any]:
    return {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        schedule: {"type": "string"},
                        "replicas": {"type": "integer"},
                    },
                }
            },
        }
    }


def conversion_crd(url: str, ca_bundle: bytes, storage: str = "v1") -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": storage == "v1",
                    "schema": version_schema("cronSpec"),
                    "selectableFields": [{"jsonPath": ".spec.cronSpec"}],
                },
                {
                    "name": "v2",
                    "served": True,
                    "storage": storage == "v2",
                    "schema": version_schema("schedule"),
                    "selectableFields": [{"jsonPath": ".spec.schedule"}],
                },
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {
                        "url": url,
                        "caBundle": base64.b64encode(ca_bundle).decode(),
                    },
                    "conversionReviewVersions": ["v1"],
                },
            },
        },
    }


def crontab(name: str, api_version: str, schedule: str, replicas: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {SCHEDULE[api_version]: schedule, "replicas": replicas},
    }


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("crd-conversion")


@pytest.fixture(scope="module")
def kubectl(kapi_server: KapiServer, workdir: Path) -> Kubectl:
    return make_kubectl(kapi_server, workdir, "1.32")


@pytest.fixture(scope="module")
def tls(workdir: Path) -> tuple[bytes, ServingCertificate]:
    ca = make_ca()
    return ca.cert_pem, make_serving_cert(ca, workdir / "tls")


@pytest.fixture(scope="module")
def converter() -> Converter:
    return Converter()


@pytest.fixture(scope="module")
def webhook(tls: tuple[bytes, ServingCertificate], converter: Converter) -> Iterator[WebhookServer]:
    with serve_webhook(tls[1], converter) as server:
        yield server


@pytest.fixture(scope="module")
def crd(
    kubectl: Kubectl, workdir: Path, webhook: WebhookServer, tls: tuple[bytes, ServingCertificate]
) -> Iterator[dict[str, Any]]:
    definition = conversion_crd(webhook.url("/convert"), tls[0])
    kubectl.ok("apply", "-f", write_manifest(workdir, "crd.yaml", definition))
    wait_established(kubectl, CRD_NAME)
    yield definition
    kubectl.run("delete", "crd", CRD_NAME, "--wait=true")


@pytest.fixture
def ns(crd: dict[str, Any], namespace: str, converter: Converter) -> Iterator[str]:
    """A fresh namespace with the CRD installed and the webhook healthy at the start."""
    converter.failing = False
    yield namespace
    converter.failing = False


def test_create_in_v2_reads_back_in_both_versions(
    kubectl: Kubectl, ns: str, tmp_path: Path, webhook: WebhookServer
) -> None:
    webhook.requests.clear()
    created = kubectl.ok(
        "-n",
        ns,
        "create",
        "-f",
        write_manifest(tmp_path, "a.yaml", crontab("a", V2, "*/1 * * * *")),
    )
    assert created.out_lines == ["crontab.conversion.example.com/a created"]
    # The object is converted to v1, the storage version, in a v1 ConversionReview.
    first = webhook.requests[0]
    assert first.path == "/convert?timeout=30s"
    assert first.body["apiVersion"] == "apiextensions.k8s.io/v1"
    assert first.body["kind"] == "ConversionReview"
    assert first.body["request"]["desiredAPIVersion"] == V1
    (sent,) = first.body["request"]["objects"]
    assert (sent["apiVersion"], sent["spec"]) == (V2, {"schedule": "*/1 * * * *", "replicas": 1})

    as_v1 = kubectl.json("-n", ns, "get", f"crontabs.v1.{GROUP}", "a")
    assert as_v1["apiVersion"] == V1
    assert as_v1["spec"] == {"cronSpec": "*/1 * * * *", "replicas": 1}
    as_v2 = kubectl.json("-n", ns, "get", f"crontabs.v2.{GROUP}", "a")
    assert as_v2["apiVersion"] == V2
    assert as_v2["spec"] == {"schedule": "*/1 * * * *", "replicas": 1}
    assert as_v2["metadata"]["uid"] == as_v1["metadata"]["uid"]
    assert as_v2["metadata"]["resourceVersion"] == as_v1["metadata"]["resourceVersion"]


def test_list_in_v2_sends_one_batched_review(
    kubectl: Kubectl, ns: str, tmp_path: Path, webhook: WebhookServer
) -> None:
    for name in ("l1", "l2", "l3"):
        path = write_manifest(tmp_path, f"{name}.yaml", crontab(name, V1, f"{name[-1]} * * * *"))
        kubectl.ok("-n", ns, "create", "-f", path)
    webhook.requests.clear()
    listed = kubectl.json("-n", ns, "get", f"crontabs.v2.{GROUP}")
    assert [r.body["request"]["desiredAPIVersion"] for r in webhook.requests] == [V2]
    (review,) = webhook.requests
    assert [o["metadata"]["name"] for o in review.body["request"]["objects"]] == [
        "l1",
        "l2",
        "l3",
    ]
    assert {o["apiVersion"] for o in review.body["request"]["objects"]} == {V1}
    assert [(o["apiVersion"], o["metadata"]["name"], o["spec"]) for o in listed["items"]] == [
        (V2, "l1", {"schedule": "1 * * * *", "replicas": 1}),
        (V2, "l2", {"schedule": "2 * * * *", "replicas": 1}),
        (V2, "l3", {"schedule": "3 * * * *", "replicas": 1}),
    ]
    table = kubectl.ok("-n", ns, "get", f"crontabs.v2.{GROUP}", "-o", "name").out_lines
    assert table == [f"crontab.{GROUP}/l1", f"crontab.{GROUP}/l2", f"crontab.{GROUP}/l3"]


def test_field_selectors_read_the_requested_version(
    kubectl: Kubectl, ns: str, tmp_path: Path, webhook: WebhookServer
) -> None:
    """v2's selectable ``spec.schedule`` is ``spec.cronSpec`` in storage (v1): the webhook
    converts before the selector reads, as upstream's per-version storage decodes into v2."""
    for name, schedule in (("s1", "1 1 * * *"), ("s2", "2 2 * * *")):
        kubectl.ok(
            "-n",
            ns,
            "create",
            "-f",
            write_manifest(tmp_path, f"{name}.yaml", crontab(name, V1, schedule)),
        )
    v1, v2 = f"crontabs.v1.{GROUP}", f"crontabs.v2.{GROUP}"

    def selected(resource: str, selector: str) -> list[str]:
        names = kubectl.ok("-n", ns, "get", resource, "--field-selector", selector, "-o", "name")
        return [line.rpartition("/")[2] for line in names.out_lines]

    assert selected(v2, "spec.schedule=2 2 * * *") == ["s2"]
    assert selected(v2, "spec.schedule!=2 2 * * *") == ["s1"]
    assert selected(v1, "spec.cronSpec=1 1 * * *") == ["s1"]
    # Each version accepts its own field only.
    wrong = kubectl.fails("-n", ns, "get", v2, "--field-selector", "spec.cronSpec=1 1 * * *")
    assert wrong.err_lines == [
        f'Error from server (BadRequest): Unable to find "{GROUP}/v2, Resource=crontabs" that '
        'match label selector "", field selector "spec.cronSpec=1 1 * * *": '
        "field label not supported: spec.cronSpec"
    ]

    args = ("-n", ns, "get", v2, "--watch", "--output-watch-events", "-o", "json")
    with kubectl.watch(*args, "--field-selector", "spec.schedule=2 2 * * *") as watch:
        watch.wait_for(lambda _: len(watch.objects()) >= 1, "s2 added")
        moved = json.dumps({"spec": {"cronSpec": "2 2 * * *"}})
        kubectl.ok("-n", ns, "patch", f"{v1}/s1", "--type=merge", "-p", moved)
        watch.wait_for(lambda _: len(watch.objects()) >= 2, "s1 entering the selection")
    events = [
        (e["type"], e["object"]["apiVersion"], e["object"]["metadata"]["name"])
        for e in watch.objects()
    ]
    assert events == [("ADDED", V2, "s2"), ("ADDED", V2, "s1")]
    assert watch.objects()[1]["object"]["spec"]["schedule"] == "2 2 * * *"


def test_failing_webhook_is_reported_and_storage_unchanged(
    kubectl: Kubectl, ns: str, tmp_path: Path, converter: Converter
) -> None:
    kubectl.ok(
        "-n", ns, "create", "-f", write_manifest(tmp_path, "f.yaml", crontab("f", V1, "0 * * * *"))
    )
    converter.failing = True
    read = kubectl.fails("-n", ns, "get", f"crontabs.v2.{GROUP}", "f")
    assert read.err_lines == [
        f"Error from server: conversion webhook for {V1}, Kind=CronTab failed: {BOOM}"
    ]
    listed = kubectl.fails("-n", ns, "get", f"crontabs.v2.{GROUP}")
    assert listed.err_lines == [
        f"Error from server: conversion webhook for {V2}, Kind=CronTabList failed: {BOOM}"
    ]
    path = write_manifest(tmp_path, "f2.yaml", crontab("f", V2, "5 5 * * *", replicas=4))
    replaced = kubectl.fails("-n", ns, "replace", "-f", path)
    # An update reads the stored object in the request's version first.
    assert replaced.err_lines == [
        f"Error from server: error when replacing {json.dumps(path)}: "
        f"conversion webhook for {V1}, Kind=CronTab failed: {BOOM}"
    ]
    new = write_manifest(tmp_path, "g.yaml", crontab("g", V2, "5 5 * * *"))
    created = kubectl.fails("-n", ns, "create", "-f", new)
    # A create converts the new object to the storage version.
    assert created.err_lines == [
        f"Error from server: error when creating {json.dumps(new)}: "
        f"conversion webhook for {V2}, Kind=CronTab failed: {BOOM}"
    ]
    # The storage version needs no webhook: what is stored is what was there before.
    stored = kubectl.json("-n", ns, "get", f"crontabs.v1.{GROUP}")
    assert [(o["metadata"]["name"], o["spec"]) for o in stored["items"]] == [
        ("f", {"cronSpec": "0 * * * *", "replicas": 1})
    ]
    converter.failing = False
    assert kubectl.json("-n", ns, "get", f"crontabs.v2.{GROUP}", "f")["spec"] == {
        "schedule": "0 * * * *",
        "replicas": 1,
    }


def test_unreachable_webhook_is_reported(
    kubectl: Kubectl,
    ns: str,
    tmp_path: Path,
    crd: dict[str, Any],
    webhook: WebhookServer,
) -> None:
    kubectl.ok(
        "-n", ns, "create", "-f", write_manifest(tmp_path, "u.yaml", crontab("u", V1, "0 1 * * *"))
    )
    port = free_port()
    unreachable = f"https://127.0.0.1:{port}/convert"
    moved = copy.deepcopy(crd)
    moved["spec"]["conversion"]["webhook"]["clientConfig"]["url"] = unreachable
    try:
        kubectl.ok("apply", "-f", write_manifest(tmp_path, "moved.yaml", moved))
        # The CRD's new clientConfig is served once the controller reinstalls the resource.
        read = until_exit(kubectl, 1, "-n", ns, "get", f"crontabs.v2.{GROUP}", "u")
        assert read.returncode == 1, str(read)
        assert read.err_lines == [
            f"Error from server: conversion webhook for {V1}, Kind=CronTab failed: "
            f'Post "{unreachable}?timeout=30s": '
            f"dial tcp 127.0.0.1:{port}: connect: connection refused"
        ]
    finally:
        kubectl.ok("apply", "-f", write_manifest(tmp_path, "back.yaml", crd))
    read_back = until_exit(kubectl, 0, "-n", ns, "get", f"crontabs.v2.{GROUP}", "u")
    assert read_back.returncode == 0, str(read_back)


def until_exit(kubectl: Kubectl, code: int, *args: str) -> Result:
    """Run ``args`` until kubectl exits with ``code``, and return that run.

    A CRD update reaches the served resource through the controller's watch,
    a moment after ``kubectl apply`` returns.
    """

    def run() -> Result | None:
        result = kubectl.run(*args)
        return result if result.returncode == code else None

    return eventually(run, what=f"kubectl {' '.join(args)} to exit with {code}", interval=0.1)


@pytest.mark.parametrize("version", ["1.27", "1.33"])
def test_conversion_flow_with_other_kubectl_versions(
    kapi_server: KapiServer,
    ns: str,
    tmp_path: Path,
    converter: Converter,
    version: str,
) -> None:
    other = make_kubectl(kapi_server, tmp_path, version)
    # kubectl < 1.29 validates against /openapi/v2 (the CRD's schema included) first.
    path = write_manifest(tmp_path, "k.yaml", crontab("k", V2, "7 * * * *"))
    created = other.ok("-n", ns, "create", "-f", path)
    assert created.out_lines == [f"crontab.{GROUP}/k created"]
    as_v1 = other.json("-n", ns, "get", f"crontabs.v1.{GROUP}", "k")
    assert (as_v1["apiVersion"], as_v1["spec"]) == (V1, {"cronSpec": "7 * * * *", "replicas": 1})
    listed = other.json("-n", ns, "get", f"crontabs.v2.{GROUP}")
    assert [(o["apiVersion"], o["spec"]) for o in listed["items"]] == [
        (V2, {"schedule": "7 * * * *", "replicas": 1})
    ]
    converter.failing = True
    read = other.fails("-n", ns, "get", f"crontabs.v2.{GROUP}", "k")
    assert read.err_lines == [
        f"Error from server: conversion webhook for {V1}, Kind=CronTab failed: {BOOM}"
    ]


def test_storage_version_change_keeps_old_objects_readable(
    kubectl: Kubectl,
    namespace: str,
    tmp_path: Path,
    webhook: WebhookServer,
    tls: tuple[bytes, ServingCertificate],
) -> None:
    """Switching storage from v1 to v2: old objects stay in v1 until rewritten (upstream)."""
    definition = conversion_crd(webhook.url("/convert"), tls[0])
    definition["metadata"]["name"] = f"storagetabs.{GROUP}"
    definition["spec"]["names"] = {
        "plural": "storagetabs",
        "singular": "storagetab",
        "kind": "StorageTab",
    }
    name = definition["metadata"]["name"]
    kubectl.ok("apply", "-f", write_manifest(tmp_path, "crd.yaml", definition))
    try:
        wait_established(kubectl, name)
        ns = ("-n", namespace)
        old = crontab("old", V1, "1 1 * * *") | {"kind": "StorageTab"}
        kubectl.ok(*ns, "create", "-f", write_manifest(tmp_path, "old.yaml", old))

        moved = conversion_crd(webhook.url("/convert"), tls[0], storage="v2")
        moved["metadata"] = definition["metadata"]
        moved["spec"]["names"] = definition["spec"]["names"]
        kubectl.ok("apply", "-f", write_manifest(tmp_path, "moved.yaml", moved))
        status = kubectl.json("get", "crd", name)["status"]
        assert status["storedVersions"] == ["v1", "v2"]

        # Writes reach the v2 store once the controller reinstalls the resource: a v2
        # create then needs no conversion at all.
        new = crontab("new", V2, "2 2 * * *") | {"kind": "StorageTab"}
        new_path = write_manifest(tmp_path, "new.yaml", new)

        def created_unconverted() -> bool:
            webhook.requests.clear()
            kubectl.ok(*ns, "create", "-f", new_path)
            if not webhook.requests:
                return True
            kubectl.ok(*ns, "delete", "-f", new_path)
            return False

        eventually(
            created_unconverted,
            what="a v2 create stored without conversion to v1",
            interval=0.1,
        )
        assert webhook.requests == []

        # Reading in v2: only the object still stored in v1 goes to the webhook.
        webhook.requests.clear()
        listed = kubectl.json(*ns, "get", f"storagetabs.v2.{GROUP}")
        assert [(o["metadata"]["name"], o["spec"]) for o in listed["items"]] == [
            ("new", {"schedule": "2 2 * * *", "replicas": 1}),
            ("old", {"schedule": "1 1 * * *", "replicas": 1}),
        ]
        (review,) = [r.body["request"] for r in webhook.requests]
        assert [(o["metadata"]["name"], o["apiVersion"]) for o in review["objects"]] == [
            ("old", V1)
        ]
        # Reading in v1: now only the new object, stored in v2, needs converting.
        webhook.requests.clear()
        listed = kubectl.json(*ns, "get", f"storagetabs.v1.{GROUP}")
        assert [(o["metadata"]["name"], o["spec"]) for o in listed["items"]] == [
            ("new", {"cronSpec": "2 2 * * *", "replicas": 1}),
            ("old", {"cronSpec": "1 1 * * *", "replicas": 1}),
        ]
        (review,) = [r.body["request"] for r in webhook.requests]
        assert [(o["metadata"]["name"], o["apiVersion"]) for o in review["objects"]] == [
            ("new", V2)
        ]

        # Rewriting the old object stores it in v2: v2 reads no longer convert anything.
        kubectl.ok(*ns, "label", f"storagetabs.v2.{GROUP}/old", "rewritten=yes")
        webhook.requests.clear()
        listed = kubectl.json(*ns, "get", f"storagetabs.v2.{GROUP}")
        assert [o["metadata"]["name"] for o in listed["items"]] == ["new", "old"]
        assert listed["items"][1]["metadata"]["labels"] == {"rewritten": "yes"}
        assert webhook.requests == []
    finally:
        kubectl.run("delete", "crd", name, "--wait=true")
