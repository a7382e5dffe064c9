"""Requests kube-apiserver serves or refuses differently from what kapi once did.

The deprecated ``/watch/`` paths (kapi's OpenAPI lists them) are watches, of a
collection or of one object; a body whose ``Content-Type`` Go cannot parse is
a 415; an unknown strategic-merge-patch directive is upstream's bare 500.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer
from tests.helpers.objects import configmap, create
from tests.helpers.status import assert_status, storage_unchanged
from tests.integration.paths import cm_path

Object = dict[str, Any]

METHOD_NOT_ALLOWED = "the server does not allow this method on the requested resource"
NOT_FOUND = "the server could not find the requested resource"


def watch(server: KapiServer, path: str, count: int, **params: str) -> list[tuple[str, str]]:
    """The first ``count`` events of a watch (type, name), or all until it times out (2 s)."""
    events: list[tuple[str, str]] = []
    query = {"timeoutSeconds": "2", **params}
    with httpx.stream("GET", server.url + path, params=query, timeout=10) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"] == "application/json"
        for line in response.iter_lines():
            if line.strip():
                event = json.loads(line)
                events.append((event["type"], event["object"]["metadata"]["name"]))
                if len(events) == count:
                    break
    return events


def list_rv(http: httpx.Client, path: str) -> str:
    response = http.get(path)
    assert response.status_code == 200, response.text
    return str(response.json()["metadata"]["resourceVersion"])


def touch(http: httpx.Client, path: str) -> None:
    response = http.patch(
        path,
        content=json.dumps({"metadata": {"labels": {"touched": "yes"}}}),
        headers={"content-type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text


# -- deprecated /watch/ paths -------------------------------------------------------------


def test_watch_path_of_one_object_watches_only_it(
    kapi_server: KapiServer, http: httpx.Client, namespace: str
) -> None:
    rv = list_rv(http, cm_path(namespace))
    for name in ("one", "other"):
        create(http, namespace, configmap(name))
    touch(http, cm_path(namespace, "other"))
    touch(http, cm_path(namespace, "one"))
    path = f"/api/v1/watch/namespaces/{namespace}/configmaps/one"
    events = watch(kapi_server, path, 2, resourceVersion=rv)
    assert events == [("ADDED", "one"), ("MODIFIED", "one")]
    # A field selector naming the same object is allowed.
    selected = watch(kapi_server, path, 1, resourceVersion=rv, fieldSelector="metadata.name=one")
    assert selected == [("ADDED", "one")]


def test_watch_path_of_one_object_in_a_group(
    kapi_server: KapiServer, http: httpx.Client, namespace: str
) -> None:
    leases = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    rv = list_rv(http, leases)
    for name in ("lease-a", "lease-b"):
        response = http.post(leases, json={"metadata": {"name": name}, "spec": {}})
        assert response.status_code == 201, response.text
    path = f"/apis/coordination.k8s.io/v1/watch/namespaces/{namespace}/leases/lease-b"
    assert watch(kapi_server, path, 1, resourceVersion=rv) == [("ADDED", "lease-b")]


def test_watch_paths_of_collections(
    kapi_server: KapiServer, http: httpx.Client, namespace: str
) -> None:
    rv = list_rv(http, cm_path(namespace))
    create(http, namespace, configmap("in-collection"))
    path = f"/api/v1/watch/namespaces/{namespace}/configmaps"
    assert watch(kapi_server, path, 1, resourceVersion=rv) == [("ADDED", "in-collection")]
    everywhere = watch(
        kapi_server,
        "/api/v1/watch/configmaps",
        1,
        resourceVersion=rv,
        fieldSelector=f"metadata.namespace={namespace}",
    )
    assert everywhere == [("ADDED", "in-collection")]


def test_watch_path_with_a_field_selector_for_another_name_is_refused(
    http: httpx.Client, namespace: str
) -> None:
    create(http, namespace, configmap("named"))
    response = http.get(
        f"/api/v1/watch/namespaces/{namespace}/configmaps/named",
        params={"fieldSelector": "metadata.name=someone-else"},
    )
    assert_status(
        response, 400, "BadRequest", "fieldSelector metadata.name doesn't match requested name"
    )


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_watch_paths_take_only_get(http: httpx.Client, namespace: str, method: str) -> None:
    create(http, namespace, configmap("kept", data={"a": "b"}))
    body = json.dumps(configmap("kept", data={"a": "changed"}))
    headers = {
        "content-type": "application/merge-patch+json" if method == "PATCH" else "application/json"
    }
    with storage_unchanged(http, namespace):
        for path in (
            f"/api/v1/watch/namespaces/{namespace}/configmaps",
            f"/api/v1/watch/namespaces/{namespace}/configmaps/kept",
        ):
            response = http.request(method, path, content=body, headers=headers)
            assert_status(response, 405, "MethodNotAllowed", METHOD_NOT_ALLOWED)


def test_watch_path_of_a_subresource_is_not_found(http: httpx.Client, namespace: str) -> None:
    path = f"/apis/policy/v1/watch/namespaces/{namespace}/poddisruptionbudgets/x/status"
    assert_status(http.get(path), 404, "NotFound", NOT_FOUND)


def test_watch_parameter_on_an_object_path_is_a_get(http: httpx.Client, namespace: str) -> None:
    """Upstream reads ``?watch`` on collections only: on an object's path it is a GET."""
    created = create(http, namespace, configmap("plain", data={"a": "b"}))
    response = http.get(cm_path(namespace, "plain"), params={"watch": "true"})
    assert response.status_code == 200, response.text
    assert response.json() == created


# -- Content-Type Go cannot parse ----------------------------------------------------------

UNSUPPORTED = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json, application/yaml, application/vnd.kubernetes.protobuf"
)


@pytest.mark.parametrize(
    "content_type",
    ["application/json;;;", "application/json;charset", "application/json;a=1;a=2", "json/"],
)
def test_body_with_an_unparsable_content_type_is_415(
    http: httpx.Client, namespace: str, content_type: str
) -> None:
    create(http, namespace, configmap("present", data={"a": "b"}))
    headers = {"content-type": content_type}
    with storage_unchanged(http, namespace):
        created = http.post(
            cm_path(namespace), content=json.dumps(configmap("absent")), headers=headers
        )
        assert_status(created, 415, "UnsupportedMediaType", UNSUPPORTED)
        replaced = http.put(
            cm_path(namespace, "present"),
            content=json.dumps(configmap("present", data={"a": "changed"})),
            headers=headers,
        )
        assert_status(replaced, 415, "UnsupportedMediaType", UNSUPPORTED)
    assert http.get(cm_path(namespace, "absent")).status_code == 404


@pytest.mark.parametrize("content_type", ["application/json;", "application/json; charset=utf-8"])
def test_body_with_a_parsable_content_type_is_accepted(
    http: httpx.Client, namespace: str, content_type: str
) -> None:
    response = http.post(
        cm_path(namespace),
        content=json.dumps(configmap("accepted")),
        headers={"content-type": content_type},
    )
    assert response.status_code == 201, response.text


def test_patch_type_ignores_what_follows_a_semicolon(http: httpx.Client, namespace: str) -> None:
    """Upstream's patch handler cuts the header at ``;`` without parsing parameters."""
    create(http, namespace, configmap("patched", data={"a": "b"}))
    response = http.patch(
        cm_path(namespace, "patched"),
        content=json.dumps({"data": {"a": "c"}}),
        headers={"content-type": "application/merge-patch+json;;;"},
    )
    assert response.status_code == 200, response.text
    assert response.json()["data"] == {"a": "c"}


# -- strategic merge patch directives -------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"$patch": "bogus"}, "unknown patch type: bogus in map: map[$patch:bogus]"),
        (
            {"data": {"$patch": "bogus", "k": "v"}},
            "unknown patch type: bogus in map: map[$patch:bogus k:v]",
        ),
        ({"metadata": {"$patch": 7}}, "unknown patch type: %!s(int64=7) in map: map[$patch:7]"),
    ],
)
def test_unknown_strategic_patch_directive_is_upstreams_bare_500(
    http: httpx.Client, namespace: str, document: Object, message: str
) -> None:
    """kube-apiserver's ``interpretStrategicMergePatchError`` maps only mergepatch's
    format errors to 400/422; ``ErrBadPatchType`` is returned as is, so the answer is a
    500 Status with no reason and the merge's message.  Nothing is written."""
    create(http, namespace, configmap("directive", data={"a": "b"}))
    with storage_unchanged(http, namespace):
        response = http.patch(
            cm_path(namespace, "directive"),
            content=json.dumps(document),
            headers={"content-type": "application/strategic-merge-patch+json"},
        )
        assert response.status_code == 500, response.text
        status = response.json()
        assert status == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "code": 500,
        }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"dryRun": 1.401298464324817e-45, "preconditions": []},
            "json: cannot unmarshal number into Go struct field DeleteOptions.dryRun of type "
            "[]string",
        ),
        (
            {"dryRun": "All"},
            "json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type "
            "[]string",
        ),
        (
            {"gracePeriodSeconds": "x"},
            "json: cannot unmarshal string into Go struct field "
            "DeleteOptions.gracePeriodSeconds of type int64",
        ),
        (
            {"gracePeriodSeconds": 1.5},
            "json: cannot unmarshal number 1.5 into Go struct field "
            "DeleteOptions.gracePeriodSeconds of type int64",
        ),
        (
            {"orphanDependents": "x"},
            "json: cannot unmarshal string into Go struct field DeleteOptions.orphanDependents "
            "of type bool",
        ),
        (
            {"preconditions": []},
            "json: cannot unmarshal array into Go struct field DeleteOptions.preconditions of "
            "type v1.Preconditions",
        ),
        (
            {"apiVersion": 0},
            "couldn't get version/kind; json parse error: json: cannot unmarshal number into "
            "Go struct field .apiVersion of type string",
        ),
        (
            {"kind": ["DeleteOptions"]},
            "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go "
            "struct field .kind of type string",
        ),
        (
            {"preconditions": {"uid": 1}},
            "json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid "
            "of type string",
        ),
    ],
)
def test_delete_options_of_the_wrong_type_delete_nothing(
    http: httpx.Client, namespace: str, options: dict[str, Any], message: str
) -> None:
    """Upstream's delete handler hands the decoder's error on as a plain error: a 500 with
    no reason and Go's text. Nothing is deleted, one object or the collection."""
    create(http, namespace, configmap("keep"))
    with storage_unchanged(http, namespace):
        for path in (cm_path(namespace, "keep"), cm_path(namespace)):
            response = http.request(
                "DELETE",
                path,
                content=json.dumps(options),
                headers={"Content-Type": "application/json"},
            )
            assert_status(response, 500, "", message)
