"""Error ``Status`` bodies and watch streams in protobuf, when the client negotiates it.

kubectl 1.32+ asks for ``application/vnd.kubernetes.protobuf,application/json``
in its typed calls: the generator commands (``kubectl create configmap ...``),
whose errors upstream answers in protobuf, and ``kubectl events -w``, a typed
watch that upstream streams as ``application/vnd.kubernetes.protobuf;stream=watch``.
kubectl's own output proves a real Go client decodes kapi's bytes; the HTTP
tests decode them with :mod:`tests.integration.protobuf_reader`, written from
upstream's ``.proto`` files apart from kapi, and compare with the JSON answer.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import KapiServer
from tests.helpers.audit import events_of
from tests.helpers.compaction import wait_until_compacted
from tests.helpers.crds import GROUP
from tests.helpers.kubectl import WATCH_TIMEOUT, Kubectl, make_kubectl
from tests.helpers.objects import configmap, create, unique
from tests.helpers.protobuf_requests import PROTOBUF, PROTOBUF_VERSIONS, configmap_body, post
from tests.helpers.wait import eventually
from tests.integration import protobuf_reader as pb
from tests.integration.paths import cm_path

Object = dict[str, Any]

PROTOBUF_FIRST = f"{PROTOBUF},application/json"
PROTOBUF_WATCH = f"{PROTOBUF};stream=watch"
#: What client-go's typed clients send when protobuf is preferred (kubectl's own is PROTOBUF_FIRST).
CLIENT_GO_ACCEPT = f"{PROTOBUF}, */*"
# The response's Content-Type in kubectl's -v=8 log, as 1.32 and 1.33 print it.
LOGGED_CONTENT_TYPE = re.compile(r"Content-Type: (\S+)$", re.MULTILINE)
LOGGED_ACCEPT = re.compile(r"Accept: (\S+)$", re.MULTILINE)


# -- kubectl ---------------------------------------------------------------------------------


@pytest.fixture(params=PROTOBUF_VERSIONS)
def pb_kubectl(request: pytest.FixtureRequest, kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(kapi_server, tmp_path, request.param)


@pytest.mark.kubectl
def test_kubectl_reads_protobuf_errors(pb_kubectl: Kubectl, namespace: str) -> None:
    k, ns = pb_kubectl, ("-n", namespace)
    k.ok(*ns, "create", "configmap", "dup", "--from-literal=a=b")
    again = k.run(*ns, "create", "configmap", "dup", "--from-literal=a=c", "-v=8")
    assert again.returncode == 1, str(again)
    # The request's body, then the 409's: both protobuf.
    assert LOGGED_CONTENT_TYPE.findall(again.stderr) == [PROTOBUF, PROTOBUF], str(again)
    assert again.err_lines[-1] == (
        'error: failed to create configmap: configmaps "dup" already exists'
    )

    invalid = k.run(*ns, "create", "configmap", "Bad_Name", "--from-literal=a=b", "-v=8")
    assert LOGGED_CONTENT_TYPE.findall(invalid.stderr) == [PROTOBUF, PROTOBUF], str(invalid)
    assert invalid.err_lines[-1].startswith(
        'error: failed to create configmap: ConfigMap "Bad_Name" is invalid: metadata.name: '
        'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of'
    ), str(invalid)


class Running:
    """A kubectl command left running, its output going to files.

    ``-v=8`` logs more than a pipe holds, so a pipe nobody reads would stall it.
    """

    def __init__(self, process: subprocess.Popen[bytes], out: Path, err: Path) -> None:
        self.process = process
        self.out = out
        self.err = err

    def wait_for(self, path: Path, wanted: str) -> str:
        """``path``'s text once it holds ``wanted``; fail after WATCH_TIMEOUT seconds."""

        def printed() -> str | None:
            text = path.read_text()
            if wanted in text:
                return text
            if self.process.poll() is not None:
                pytest.fail(f"kubectl exited before printing {wanted!r}\n{self.output()}")
            return None

        return eventually(
            printed,
            what=f"kubectl to print {wanted!r}",
            timeout=WATCH_TIMEOUT,
            details=self.output,
        )

    def output(self) -> str:
        return f"stdout:\n{self.out.read_text()}\nstderr:\n{self.err.read_text()[-4000:]}"


@contextmanager
def running(k: Kubectl, directory: Path, *args: str) -> Iterator[Running]:
    out, err = directory / "stdout", directory / "stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen([k.binary, *args], env=k.env, stdout=stdout, stderr=stderr)
    try:
        yield Running(process, out, err)
    finally:
        process.kill()
        process.wait(timeout=10)


def create_event(http: httpx.Client, namespace: str, name: str, message: str) -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "ConfigMap", "name": name, "namespace": namespace},
        "reason": "Testing",
        "message": message,
        "type": "Normal",
        "firstTimestamp": "2025-01-01T00:00:00Z",
        "lastTimestamp": "2025-01-01T00:00:00Z",
        "count": 1,
        "source": {"component": "tester"},
    }
    response = http.post(f"/api/v1/namespaces/{namespace}/events", json=event)
    assert response.status_code == 201, response.text


@pytest.mark.kubectl
def test_kubectl_events_watch_in_protobuf(
    pb_kubectl: Kubectl, http: httpx.Client, namespace: str, tmp_path: Path
) -> None:
    """``kubectl events -w`` watches (no list first): the state, then each new event."""
    create_event(http, namespace, "before", "there when the watch began")
    with running(pb_kubectl, tmp_path, "-n", namespace, "events", "-w", "-v=8") as events:
        log = events.wait_for(events.err, PROTOBUF_WATCH)
        events.wait_for(events.out, "there when the watch began")
        create_event(http, namespace, "after", "sent through the open watch")
        printed = events.wait_for(events.out, "sent through the open watch")
    # One request, the watch: asked for protobuf, answered with the protobuf stream.
    assert "watch=true" in log
    assert LOGGED_ACCEPT.findall(log) == [PROTOBUF_FIRST]
    assert LOGGED_CONTENT_TYPE.findall(log) == [PROTOBUF_WATCH]
    header, *rows = printed.splitlines()
    assert header.split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert [row.split(None, 4)[1:] for row in rows] == [
        ["Normal", "Testing", "ConfigMap/before", "there when the watch began"],
        ["Normal", "Testing", "ConfigMap/after", "sent through the open watch"],
    ]


# -- errors over HTTP ------------------------------------------------------------------------


def get(http: httpx.Client, path: str, accept: str) -> httpx.Response:
    return http.get(path, headers={"accept": accept})


@pytest.mark.parametrize("accept", [CLIENT_GO_ACCEPT, PROTOBUF_FIRST, PROTOBUF])
def test_not_found_in_protobuf_when_asked_first(
    http: httpx.Client, namespace: str, accept: str
) -> None:
    path = cm_path(namespace, "missing")
    response = get(http, path, accept)
    assert response.status_code == 404
    assert response.headers["content-type"] == PROTOBUF
    as_json = get(http, path, "application/json")
    assert as_json.headers["content-type"] == "application/json"
    assert pb.status(response.content) == as_json.json()
    assert as_json.json()["details"] == {"name": "missing", "kind": "configmaps"}


def test_errors_of_writes_in_protobuf(http: httpx.Client, namespace: str) -> None:
    created = post(http, cm_path(namespace), configmap_body("dup", a="b"), PROTOBUF_FIRST)
    assert created.status_code == 201, created.text
    again = post(http, cm_path(namespace), configmap_body("dup", a="c"), PROTOBUF_FIRST)
    assert again.status_code == 409
    assert again.headers["content-type"] == PROTOBUF
    assert pb.status(again.content) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'configmaps "dup" already exists',
        "reason": "AlreadyExists",
        "details": {"name": "dup", "kind": "configmaps"},
        "code": 409,
    }

    bad = configmap_body("x", **{"bad key": "v"})
    invalid = post(http, cm_path(namespace), bad, PROTOBUF_FIRST)
    assert invalid.status_code == 422
    assert invalid.headers["content-type"] == PROTOBUF
    as_json = post(http, cm_path(namespace), bad)
    assert as_json.headers["content-type"] == "application/json"
    decoded = pb.status(invalid.content)
    assert decoded == as_json.json()
    assert decoded["details"]["causes"][0]["field"] == "data[bad key]"


def test_error_media_type_follows_accept(http: httpx.Client, namespace: str) -> None:
    path = cm_path(namespace, "missing")
    as_json = get(http, path, "application/json").json()
    json_first = get(http, path, f"application/json, {PROTOBUF}")
    assert json_first.headers["content-type"] == "application/json"
    assert json_first.json() == as_json
    as_yaml = get(http, path, "application/yaml")
    assert as_yaml.headers["content-type"] == "application/yaml"
    assert yaml.safe_load(as_yaml.text) == as_json
    # A Table is no form for an error: its clause is passed over for the next one.
    table = f"application/json;as=Table;v=v1;g=meta.k8s.io,{PROTOBUF}"
    assert get(http, path, table).headers["content-type"] == PROTOBUF


def test_unacceptable_accept_is_answered_in_indented_json(
    http: httpx.Client, namespace: str
) -> None:
    """Upstream's ``WriteRawJSON``: the 406 itself is JSON, two-space indented."""
    response = get(http, cm_path(namespace, "missing"), "text/html")
    assert response.status_code == 406
    assert response.headers["content-type"] == "application/json"
    status = response.json()
    assert status["reason"] == "NotAcceptable"
    assert response.text == json.dumps(status, indent=2)


def test_unknown_resource_offers_protobuf(http: httpx.Client, namespace: str) -> None:
    """No resource, no kind: upstream's NotFound handler negotiates among every serializer."""
    response = get(http, f"/api/v1/namespaces/{namespace}/widgets/x", PROTOBUF)
    assert response.status_code == 404
    assert response.headers["content-type"] == PROTOBUF
    assert pb.status(response.content) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "the server could not find the requested resource",
        "reason": "NotFound",
        "code": 404,
    }


def test_bad_watch_request_is_a_protobuf_status(http: httpx.Client, namespace: str) -> None:
    response = http.get(
        cm_path(namespace),
        params={"watch": "1", "labelSelector": "a in (b"},
        headers={"accept": CLIENT_GO_ACCEPT},
    )
    assert response.status_code == 400
    assert response.headers["content-type"] == PROTOBUF
    as_json = http.get(cm_path(namespace), params={"watch": "1", "labelSelector": "a in (b"})
    assert pb.status(response.content) == as_json.json()


@pytest.mark.kubectl
def test_custom_resource_errors_stay_json(http: httpx.Client, custom_resources: str) -> None:
    response = get(http, f"{custom_resources}/missing", CLIENT_GO_ACCEPT)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.json()["reason"] == "NotFound"
    refused = get(http, f"{custom_resources}/missing", PROTOBUF)
    assert refused.status_code == 406
    assert refused.text == json.dumps(refused.json(), indent=2)


def test_audit_logs_statuses_in_every_form(audited: tuple[KapiServer, Path]) -> None:
    """``responseStatus`` copies the Status however it was encoded (upstream logs the object)."""
    server, log = audited
    with server.client() as http:
        namespace = unique("audit-pb")
        assert http.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).is_success
        body = configmap_body("dup", a="b")
        assert post(http, cm_path(namespace), body).status_code == 201
        responses = [
            post(http, cm_path(namespace), body, PROTOBUF_FIRST),
            get(http, cm_path(namespace, "missing"), "application/yaml"),
            get(http, cm_path(namespace, "missing"), "text/html"),
        ]
        as_json = [
            post(http, cm_path(namespace), body).json(),
            get(http, cm_path(namespace, "missing"), "application/json").json(),
            get(http, cm_path(namespace, "missing"), "text/html").json(),
        ]
    for response, status in zip(responses, as_json, strict=True):
        [*_, complete] = events_of(log, response.headers["audit-id"])
        assert complete["responseStatus"] == {
            key: value for key, value in status.items() if key not in ("kind", "apiVersion")
        }
        assert complete["responseObject"] == status  # configmaps are audited at RequestResponse
    [*_, created] = events_of(log, responses[0].headers["audit-id"])
    assert created["requestObject"]["data"] == {"a": "b"}


# -- watch over HTTP -------------------------------------------------------------------------


def protobuf_watch(
    url: str,
    path: str,
    params: dict[str, str],
    until: Callable[[list[tuple[str, bytes]]], bool],
    accept: str = PROTOBUF_FIRST,
) -> tuple[str, list[tuple[str, bytes]]]:
    """The content type and events of a watch, read until ``until`` holds or the server ends it."""
    params = {"watch": "1", "timeoutSeconds": str(WATCH_TIMEOUT), **params}
    timeout = httpx.Timeout(10, read=WATCH_TIMEOUT + 10)
    events: list[tuple[str, bytes]] = []
    pending = b""
    with httpx.stream(
        "GET", url + path, params=params, headers={"accept": accept}, timeout=timeout
    ) as response:
        assert response.status_code == 200, response.read()
        content_type = response.headers["content-type"]
        for chunk in response.iter_bytes():
            complete, pending = pb.watch_events(pending + chunk)
            events += complete
            if until(events):
                break
        else:
            assert pending == b"", "the stream ended inside an event"
    return content_type, events


def test_watch_streams_protobuf_events(
    http: httpx.Client, kapi_server: KapiServer, namespace: str
) -> None:
    start = http.get(cm_path(namespace)).json()["metadata"]["resourceVersion"]
    create(http, namespace, configmap("a", data={"k": "1"}))
    updated = http.put(cm_path(namespace, "a"), json=configmap("a", data={"k": "2"}))
    assert updated.status_code == 200, updated.text
    assert http.delete(cm_path(namespace, "a")).status_code == 200

    content_type, events = protobuf_watch(
        kapi_server.url, cm_path(namespace), {"resourceVersion": start}, lambda e: len(e) >= 3
    )
    assert content_type == PROTOBUF_WATCH
    decoded = [(kind, pb.config_map(body)) for kind, body in events]
    assert [(kind, obj["name"], obj["data"]) for kind, obj in decoded] == [
        ("ADDED", "a", {"k": "1"}),
        ("MODIFIED", "a", {"k": "2"}),
        ("DELETED", "a", {"k": "2"}),
    ]
    for _, obj in decoded:
        assert (obj["apiVersion"], obj["kind"], obj["namespace"]) == ("v1", "ConfigMap", namespace)
    json_events = [
        json.loads(line)
        for line in http.get(
            cm_path(namespace),
            params={"watch": "1", "resourceVersion": start, "timeoutSeconds": "1"},
        ).text.splitlines()
    ]
    assert [obj["resourceVersion"] for _, obj in decoded] == [
        e["object"]["metadata"]["resourceVersion"] for e in json_events
    ]


def test_watch_initial_events_end_bookmark_in_protobuf(
    http: httpx.Client, kapi_server: KapiServer, namespace: str
) -> None:
    create(http, namespace, configmap("a"))
    params = {
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
    }
    _, events = protobuf_watch(
        kapi_server.url, cm_path(namespace), params, lambda e: e[-1][0] == "BOOKMARK"
    )
    (added, first), (bookmark, marker) = events
    assert (added, pb.config_map(first)["name"]) == ("ADDED", "a")
    decoded = pb.config_map(marker)
    assert bookmark == "BOOKMARK"
    assert (decoded["apiVersion"], decoded["kind"], decoded["name"]) == ("v1", "ConfigMap", "")
    assert decoded["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(decoded["resourceVersion"]) >= int(pb.config_map(first)["resourceVersion"])


def test_watch_error_event_in_protobuf(
    compacting: tuple[httpx.Client, str],
    compacting_server: KapiServer,
) -> None:
    """A watch from a compacted revision: one ERROR event whose object is a Status."""
    http, namespace = compacting
    revision = create(http, namespace, configmap("x"))["metadata"]["resourceVersion"]
    # A watch from ``revision`` starts at the next one: that one must be compacted too,
    # or the watch is valid and streams the writes made while waiting.
    after = str(int(revision) + 1)
    assert wait_until_compacted(http, namespace, after).status_code == 410
    content_type, events = protobuf_watch(
        compacting_server.url,
        cm_path(namespace),
        {"resourceVersion": revision},
        lambda e: bool(e),
        accept=CLIENT_GO_ACCEPT,
    )
    assert content_type == PROTOBUF_WATCH
    [(kind, body)] = events
    assert kind == "ERROR"
    status = pb.status(body)
    assert (status["kind"], status["apiVersion"]) == ("Status", "v1")
    assert (status["status"], status["reason"], status["code"]) == ("Failure", "Expired", 410)
    assert status["message"].startswith(f"too old resource version: {revision} ("), status


def test_watch_stays_json_without_protobuf(
    http: httpx.Client, kapi_server: KapiServer, namespace: str
) -> None:
    create(http, namespace, configmap(unique("j")))
    with httpx.stream(
        "GET",
        kapi_server.url + cm_path(namespace),
        params={"watch": "1", "timeoutSeconds": "1"},
        headers={"accept": f"application/json, {PROTOBUF}"},
    ) as response:
        assert response.headers["content-type"] == "application/json"
        assert json.loads(next(response.iter_lines()))["type"] == "ADDED"


@pytest.mark.kubectl
def test_custom_resource_watch_stays_json(
    http: httpx.Client, kapi_server: KapiServer, custom_resources: str
) -> None:
    body = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "PbCronTab",
        "metadata": {"name": unique("w")},
        "spec": {"cronSpec": "* * * * *"},
    }
    assert http.post(custom_resources, json=body).status_code == 201
    with httpx.stream(
        "GET",
        kapi_server.url + custom_resources,
        params={"watch": "1", "timeoutSeconds": "1"},
        headers={"accept": CLIENT_GO_ACCEPT},
    ) as response:
        assert response.headers["content-type"] == "application/json"
        first = json.loads(next(response.iter_lines()))
    assert (first["type"], first["object"]["kind"]) == ("ADDED", "PbCronTab")
