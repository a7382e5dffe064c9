"""Every failed request answers with upstream's ``Status`` object and leaves storage alone.

Each test checks the wire form of the error (kind Status, apiVersion v1,
status Failure, message, reason, details, code) as kube-apiserver sends it,
then that what was stored before the request is exactly what is stored after
it (same items, same resourceVersions, same content).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.helpers.compaction import wait_until_compacted
from tests.helpers.objects import configmap, create, unique
from tests.helpers.status import assert_status, storage_unchanged
from tests.helpers.wait import eventually
from tests.integration.paths import cm_path

Object = dict[str, Any]

# -- 404 NotFound --------------------------------------------------------------------


def test_not_found_on_every_verb(http: httpx.Client, namespace: str) -> None:
    path = cm_path(namespace, "x")
    expected = {"name": "x", "kind": "configmaps"}
    with storage_unchanged(http, namespace):
        for response in (
            http.get(path),
            http.put(path, json=configmap("x", data={"k": "v"})),
            http.patch(
                path,
                content=b'{"data":{"k":"v"}}',
                headers={"content-type": "application/merge-patch+json"},
            ),
            http.delete(path),
        ):
            assert_status(response, 404, "NotFound", 'configmaps "x" not found', expected)


def test_not_found_names_the_group(http: httpx.Client, namespace: str) -> None:
    with storage_unchanged(http, namespace):
        response = http.delete(f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/nope")
        assert_status(
            response,
            404,
            "NotFound",
            'poddisruptionbudgets.policy "nope" not found',
            {"name": "nope", "group": "policy", "kind": "poddisruptionbudgets"},
        )


def test_create_in_missing_namespace(http: httpx.Client) -> None:
    missing = unique("missing")
    response = http.post(cm_path(missing), json=configmap("a"))
    assert_status(
        response,
        404,
        "NotFound",
        f'namespaces "{missing}" not found',
        {"name": missing, "kind": "namespaces"},
    )
    assert http.get(f"/api/v1/namespaces/{missing}").status_code == 404
    assert http.get(cm_path(missing, "a")).status_code == 404


# -- 409 AlreadyExists / Conflict ----------------------------------------------------


def test_already_exists(http: httpx.Client, namespace: str) -> None:
    create(http, namespace, configmap("a", data={"k": "original"}))
    with storage_unchanged(http, namespace):
        response = http.post(cm_path(namespace), json=configmap("a", data={"k": "replaced"}))
        assert_status(
            response,
            409,
            "AlreadyExists",
            'configmaps "a" already exists',
            {"name": "a", "kind": "configmaps"},
        )
    assert http.get(cm_path(namespace, "a")).json()["data"] == {"k": "original"}


def test_conflict_on_stale_resource_version(http: httpx.Client, namespace: str) -> None:
    first = create(http, namespace, configmap("x", data={"v": "1"}))
    second = http.put(cm_path(namespace, "x"), json={**first, "data": {"v": "2"}})
    assert second.status_code == 200, second.text
    assert second.json()["metadata"]["resourceVersion"] != first["metadata"]["resourceVersion"]

    message = (
        'Operation cannot be fulfilled on configmaps "x": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    details = {"name": "x", "kind": "configmaps"}
    with storage_unchanged(http, namespace):
        stale_put = http.put(cm_path(namespace, "x"), json={**first, "data": {"v": "stale"}})
        assert_status(stale_put, 409, "Conflict", message, details)
        stale_patch = http.patch(
            cm_path(namespace, "x"),
            content=json.dumps(
                {"metadata": {"resourceVersion": first["metadata"]["resourceVersion"]}, "data": {}}
            ),
            headers={"content-type": "application/merge-patch+json"},
        )
        assert_status(stale_patch, 409, "Conflict", message, details)
    assert http.get(cm_path(namespace, "x")).json() == second.json()


# -- 422 Invalid ---------------------------------------------------------------------

_NAME_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_KEY_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')"
)


def _cause(reason: str, field: str, message: str) -> Object:
    return {"reason": reason, "message": message, "field": field}


_INVALID_CASES = {
    "bad-name": (
        configmap("Bad_Name"),
        "Bad_Name",
        [_cause("FieldValueInvalid", "metadata.name", f'Invalid value: "Bad_Name": {_NAME_MSG}')],
    ),
    "bad-label-key": (
        configmap("labelled", metadata={"name": "labelled", "labels": {"bad key!": "v"}}),
        "labelled",
        [
            _cause(
                "FieldValueInvalid",
                "metadata.labels",
                f'Invalid value: "bad key!": {_LABEL_KEY_MSG}',
            )
        ],
    ),
    "annotations-over-256KiB": (
        configmap(
            "annotated",
            metadata={"name": "annotated", "annotations": {"a": "x" * (256 * 1024)}},
        ),
        "annotated",
        [
            _cause(
                "FieldValueTooLong",
                "metadata.annotations",
                "Too long: may not be more than 262144 bytes",
            )
        ],
    ),
    "two-errors-at-once": (
        configmap("Bad_Name", metadata={"name": "Bad_Name", "labels": {"bad key!": "v"}}),
        "Bad_Name",
        [
            _cause("FieldValueInvalid", "metadata.name", f'Invalid value: "Bad_Name": {_NAME_MSG}'),
            _cause(
                "FieldValueInvalid",
                "metadata.labels",
                f'Invalid value: "bad key!": {_LABEL_KEY_MSG}',
            ),
        ],
    ),
    "configmap-data-key": (
        configmap("keyed", data={"bad key!": "v"}),
        "keyed",
        [
            _cause(
                "FieldValueInvalid",
                "data[bad key!]",
                f'Invalid value: "bad key!": {_CONFIG_KEY_MSG}',
            )
        ],
    ),
}


@pytest.mark.parametrize("case", list(_INVALID_CASES))
def test_invalid_create(http: httpx.Client, namespace: str, case: str) -> None:
    body, name, causes = _INVALID_CASES[case]
    with storage_unchanged(http, namespace):
        response = http.post(cm_path(namespace), json=body)
        status = assert_status(response, 422, "Invalid")
    assert status["details"] == {"name": name, "kind": "ConfigMap", "causes": causes}
    summaries = [f"{c['field']}: {c['message']}" for c in causes]
    summary = summaries[0] if len(summaries) == 1 else "[" + ", ".join(summaries) + "]"
    assert status["message"] == f'ConfigMap "{name}" is invalid: {summary}'
    assert http.get(cm_path(namespace, name)).status_code == 404


def test_invalid_update_keeps_the_stored_object(http: httpx.Client, namespace: str) -> None:
    stored = create(http, namespace, configmap("x", data={"k": "v"}))
    bad = json.loads(json.dumps(stored))
    bad["metadata"]["labels"] = {"bad key!": "v"}
    with storage_unchanged(http, namespace):
        response = http.put(cm_path(namespace, "x"), json=bad)
        status = assert_status(response, 422, "Invalid")
    assert status["message"] == (
        f'ConfigMap "x" is invalid: metadata.labels: Invalid value: "bad key!": {_LABEL_KEY_MSG}'
    )
    assert http.get(cm_path(namespace, "x")).json() == stored


def test_invalid_field_validation_parameter(http: httpx.Client, namespace: str) -> None:
    """``fieldValidation`` is checked by ``ValidateCreateOptions``: 422 on CreateOptions."""
    with storage_unchanged(http, namespace):
        response = http.post(
            cm_path(namespace), params={"fieldValidation": "Foo"}, json=configmap("a")
        )
        assert_status(
            response,
            422,
            "Invalid",
            'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: '
            '"Foo": supported values: "", "Ignore", "Strict", "Warn"',
            {
                "group": "meta.k8s.io",
                "kind": "CreateOptions",
                "causes": [
                    _cause(
                        "FieldValueNotSupported",
                        "fieldValidation",
                        'Unsupported value: "Foo": supported values: "", "Ignore", "Strict", '
                        '"Warn"',
                    )
                ],
            },
        )


# -- 400 BadRequest: bodies ----------------------------------------------------------


def test_malformed_json(http: httpx.Client, namespace: str) -> None:
    body = b'{"metadata":'
    with storage_unchanged(http, namespace):
        response = http.post(
            cm_path(namespace), content=body, headers={"content-type": "application/json"}
        )
        assert_status(
            response,
            400,
            "BadRequest",
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
            "version/kind; json parse error: unexpected end of JSON input "
            '({"metadata":)',
        )


def test_malformed_yaml(http: httpx.Client, namespace: str) -> None:
    body = b"metadata: [a\n  b: c"
    with storage_unchanged(http, namespace):
        response = http.post(
            cm_path(namespace), content=body, headers={"content-type": "application/yaml"}
        )
        status = assert_status(response, 400, "BadRequest")
    prefix = (
        "the object provided is unrecognized (must be of type ConfigMap): "
        "error converting YAML to JSON: yaml: "
    )
    assert status["message"].startswith(prefix), status["message"]
    # upstream's summarizeData: a body not starting with "{" is shown hex-encoded
    assert status["message"].endswith(f"({body.hex()})"), status["message"]


@pytest.mark.parametrize(
    "content_type", ["application/merge-patch+json", "application/json-patch+json"]
)
def test_malformed_patch(http: httpx.Client, namespace: str, content_type: str) -> None:
    create(http, namespace, configmap("patched", data={"a": "1"}))
    with storage_unchanged(http, namespace):
        response = http.patch(
            f"{cm_path(namespace)}/patched",
            content=b"{bad",
            headers={"content-type": content_type},
        )
        assert_status(
            response,
            400,
            "BadRequest",
            "error decoding patch: invalid character 'b' looking for beginning of object key "
            "string",
        )


def test_malformed_delete_options(http: httpx.Client, namespace: str) -> None:
    create(http, namespace, configmap("kept"))
    with storage_unchanged(http, namespace):
        response = http.request(
            "DELETE",
            f"{cm_path(namespace)}/kept",
            content=b"{bad",
            headers={"content-type": "application/json"},
        )
        assert_status(
            response,
            400,
            "BadRequest",
            "couldn't get version/kind; json parse error: invalid character 'b' looking for "
            "beginning of object key string",
        )


def test_yaml_body_is_accepted(http: httpx.Client, namespace: str) -> None:
    """The YAML decoder itself works, so the malformed case above is about the syntax."""
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n"
    response = http.post(
        cm_path(namespace), content=body, headers={"content-type": "application/yaml"}
    )
    assert response.status_code == 201, response.text
    assert response.json()["data"] == {"k": "v"}


def test_api_version_of_another_registered_version(http: httpx.Client, namespace: str) -> None:
    """A body in a version the scheme knows, sent to another version's URL."""
    path = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets"
    body = {
        "apiVersion": "policy/v1beta1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "p"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}},
    }
    with storage_unchanged(http, namespace):
        response = http.post(path, json=body)
        assert_status(
            response,
            400,
            "BadRequest",
            "the API version in the data (policy/v1beta1) does not match the expected API "
            "version (policy/v1)",
        )


def test_api_version_unknown_to_the_scheme(http: httpx.Client, namespace: str) -> None:
    """``v2`` is no version of the core group: the decoder cannot create the object."""
    with storage_unchanged(http, namespace):
        response = http.post(cm_path(namespace), json={**configmap("a"), "apiVersion": "v2"})
        assert_status(
            response,
            400,
            "BadRequest",
            'ConfigMap in version "v2" cannot be handled as a ConfigMap: no kind "ConfigMap" '
            'is registered for version "v2" in scheme "pkg/api/legacyscheme/scheme.go:30"',
        )


def test_kind_of_another_type(http: httpx.Client, namespace: str) -> None:
    with storage_unchanged(http, namespace):
        response = http.post(cm_path(namespace), json={**configmap("a"), "kind": "Secret"})
        status = assert_status(response, 400, "BadRequest")
    # upstream goes on with "converting (v1.Secret) to (core.ConfigMap): unknown conversion"
    assert status["message"].startswith(
        'Secret in version "v1" cannot be handled as a ConfigMap: '
    ), status["message"]


def test_kind_unknown_to_the_scheme(http: httpx.Client, namespace: str) -> None:
    with storage_unchanged(http, namespace):
        response = http.post(cm_path(namespace), json={**configmap("a"), "kind": "configmap"})
        assert_status(
            response,
            400,
            "BadRequest",
            'configmap in version "v1" cannot be handled as a ConfigMap: no kind "configmap" '
            'is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"',
        )


def test_name_mismatch_on_put(http: httpx.Client, namespace: str) -> None:
    create(http, namespace, configmap("a", data={"k": "a"}))
    create(http, namespace, configmap("b", data={"k": "b"}))
    body = http.get(cm_path(namespace, "a")).json()
    with storage_unchanged(http, namespace):
        response = http.put(cm_path(namespace, "b"), json=body)
        assert_status(
            response,
            400,
            "BadRequest",
            "the name of the object (a) does not match the name on the URL (b)",
        )


def test_namespace_mismatch(http: httpx.Client, namespace: str) -> None:
    message = (
        "the namespace of the provided object does not match the namespace sent on the request"
    )
    stored = create(http, namespace, configmap("a", data={"k": "v"}))
    elsewhere = {"name": "b", "namespace": "other"}
    with storage_unchanged(http, namespace):
        post = http.post(cm_path(namespace), json={**configmap("b"), "metadata": elsewhere})
        assert_status(post, 400, "BadRequest", message)
        moved = json.loads(json.dumps(stored))
        moved["metadata"]["namespace"] = "other"
        put = http.put(cm_path(namespace, "a"), json=moved)
        assert_status(put, 400, "BadRequest", message)


def test_secret_data_must_be_base64(http: httpx.Client, namespace: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s"},
        "data": {"k": "!!notbase64"},
    }
    with storage_unchanged(http, namespace):
        response = http.post(f"/api/v1/namespaces/{namespace}/secrets", json=body)
        assert_status(
            response,
            400,
            "BadRequest",
            'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at '
            "input byte 0",
        )


# -- fieldValidation: Strict, Warn, Ignore -------------------------------------------


def _strict(http: httpx.Client, namespace: str, body: bytes) -> httpx.Response:
    return http.post(
        cm_path(namespace),
        params={"fieldValidation": "Strict"},
        content=body,
        headers={"content-type": "application/json"},
    )


def test_strict_unknown_field(http: httpx.Client, namespace: str) -> None:
    body = json.dumps({**configmap("strict-unknown"), "foo": "bar"}).encode()
    with storage_unchanged(http, namespace):
        assert_status(
            _strict(http, namespace, body),
            400,
            "BadRequest",
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
            'unknown field "foo"',
        )


def test_strict_duplicate_field(http: httpx.Client, namespace: str) -> None:
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"}}'
    with storage_unchanged(http, namespace):
        assert_status(
            _strict(http, namespace, body),
            400,
            "BadRequest",
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
            'duplicate field "metadata.name"',
        )


def test_strict_reports_problems_in_document_order(http: httpx.Client, namespace: str) -> None:
    """Upstream's decoder lists duplicate and unknown fields as it meets them."""
    body = (
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup-a","name":"dup-b"},'
        b'"foo":"bar","data":{"k":"v"}}'
    )
    with storage_unchanged(http, namespace):
        assert_status(
            _strict(http, namespace, body),
            400,
            "BadRequest",
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
            'duplicate field "metadata.name", unknown field "foo"',
        )


def test_strict_unknown_and_duplicated_field_is_only_unknown(
    http: httpx.Client, namespace: str
) -> None:
    """For typed resources a field both unknown and repeated is reported once, as unknown."""
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ud"},"foo":1,"foo":2}'
    with storage_unchanged(http, namespace):
        assert_status(
            _strict(http, namespace, body),
            400,
            "BadRequest",
            'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
            'unknown field "foo"',
        )


@pytest.mark.parametrize("validation", ["Warn", None])
def test_warn_unknown_field(http: httpx.Client, namespace: str, validation: str | None) -> None:
    """Warn (also the default) creates the object and says what it dropped."""
    name = unique("warned")
    params = {"fieldValidation": validation} if validation else {}
    response = http.post(
        cm_path(namespace), params=params, json={**configmap(name, data={"k": "v"}), "foo": 1}
    )
    assert response.status_code == 201, response.text
    assert response.headers.get_list("warning") == ['299 - "unknown field \\"foo\\""']
    stored = http.get(cm_path(namespace, name)).json()
    assert "foo" not in stored
    assert stored["data"] == {"k": "v"}


def test_warn_duplicate_field(http: httpx.Client, namespace: str) -> None:
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"first","name":"last"}}'
    response = http.post(
        cm_path(namespace),
        params={"fieldValidation": "Warn"},
        content=body,
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 201, response.text
    assert response.headers.get_list("warning") == ['299 - "duplicate field \\"metadata.name\\""']
    assert response.json()["metadata"]["name"] == "last"


def test_ignore_unknown_field(http: httpx.Client, namespace: str) -> None:
    name = unique("ignored")
    response = http.post(
        cm_path(namespace),
        params={"fieldValidation": "Ignore"},
        json={**configmap(name), "foo": 1, "metadata": {"name": name, "bar": 2}},
    )
    assert response.status_code == 201, response.text
    assert "warning" not in response.headers
    stored = http.get(cm_path(namespace, name)).json()
    assert "foo" not in stored
    assert "bar" not in stored["metadata"]


# -- 400 BadRequest: query parameters ------------------------------------------------


def test_bad_label_selector(http: httpx.Client, namespace: str) -> None:
    create(http, namespace, configmap("x", metadata={"name": "x", "labels": {"a": "b"}}))
    with storage_unchanged(http, namespace):
        for method in ("GET", "DELETE"):  # list, and delete collection
            response = http.request(method, cm_path(namespace), params={"labelSelector": "a in (b"})
            assert_status(
                response,
                400,
                "BadRequest",
                "unable to parse requirement: found '', expected: ',' or ')'",
            )


def test_unsupported_field_selector_label(http: httpx.Client, namespace: str) -> None:
    create(http, namespace, configmap("x"))
    with storage_unchanged(http, namespace):
        # Secrets register their own field label conversion (upstream core/v1 conversion.go)...
        secrets = http.get(
            f"/api/v1/namespaces/{namespace}/secrets", params={"fieldSelector": "spec.foo=x"}
        )
        assert_status(secrets, 400, "BadRequest", "field label not supported: spec.foo")
        # ... ConfigMaps do not, so runtime.DefaultMetaV1FieldSelectorConversion answers.
        configmaps = http.delete(cm_path(namespace), params={"fieldSelector": "spec.foo=x"})
        assert_status(
            configmaps,
            400,
            "BadRequest",
            '"spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"',
        )


# -- 405, 406, 413, 415 --------------------------------------------------------------

_METHOD_NOT_ALLOWED = "the server does not allow this method on the requested resource"


def test_method_not_allowed(http: httpx.Client, namespace: str) -> None:
    create(http, namespace, configmap("x"))
    with storage_unchanged(http, namespace):
        post_to_item = http.post(cm_path(namespace, "x"), json=configmap("x"))
        assert_status(post_to_item, 405, "MethodNotAllowed", _METHOD_NOT_ALLOWED)
        put_all_namespaces = http.put("/api/v1/configmaps", json=configmap("x"))
        assert_status(put_all_namespaces, 405, "MethodNotAllowed", _METHOD_NOT_ALLOWED)
    # Upstream's namespace storage has no DeleteCollection: no route, rather than deleting
    # namespaces in name order until the immortal "default" refuses (403).
    early = unique("aaa")
    created = http.post("/api/v1/namespaces", json={"metadata": {"name": early}})
    assert created.status_code == 201, created.text
    try:
        delete_all_namespaces = http.delete("/api/v1/namespaces")
        assert_status(delete_all_namespaces, 405, "MethodNotAllowed", _METHOD_NOT_ALLOWED)
        assert http.get(f"/api/v1/namespaces/{early}").json()["status"]["phase"] == "Active"
    finally:
        http.delete(f"/api/v1/namespaces/{early}")


def test_unsupported_media_type(http: httpx.Client, namespace: str) -> None:
    with storage_unchanged(http, namespace):
        response = http.post(
            cm_path(namespace),
            content=b"apiVersion=v1 kind=ConfigMap",
            headers={"content-type": "text/plain"},
        )
        assert_status(
            response,
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml, application/vnd.kubernetes.protobuf",
        )


def test_not_acceptable(http: httpx.Client, namespace: str) -> None:
    create(http, namespace, configmap("x"))
    with storage_unchanged(http, namespace):
        response = http.get(cm_path(namespace, "x"), headers={"accept": "text/html"})
        assert_status(
            response,
            406,
            "NotAcceptable",
            "only the following media types are accepted: application/json, application/yaml, "
            "application/vnd.kubernetes.protobuf",
        )


def test_request_entity_too_large(http: httpx.Client, namespace: str) -> None:
    body = json.dumps(configmap("big", data={"k": "x" * (3 * 1024 * 1024)})).encode()
    assert len(body) > 3 * 1024 * 1024
    with storage_unchanged(http, namespace):
        response = http.post(
            cm_path(namespace), content=body, headers={"content-type": "application/json"}
        )
        assert_status(
            response, 413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728"
        )


# -- 403 Forbidden -------------------------------------------------------------------


def test_create_in_terminating_namespace(http: httpx.Client) -> None:
    """A namespace with a finalizer of its own stays Terminating after the controller's pass."""
    name = unique("terminating")
    response = http.post(
        "/api/v1/namespaces",
        json={
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name},
            "spec": {"finalizers": ["example.com/hold"]},
        },
    )
    assert response.status_code == 201, response.text
    try:
        create(http, name, configmap("before"))
        deleted = http.delete(f"/api/v1/namespaces/{name}")
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["status"]["phase"] == "Terminating"
        # The controller's pass deletes the content; the namespace stays, held by its finalizer.
        eventually(
            lambda: http.get(cm_path(name, "before")).status_code == 404,
            what=f"the namespace controller to empty {name}",
        )
        with storage_unchanged(http, name):
            response = http.post(cm_path(name), json=configmap("late"))
            assert_status(
                response,
                403,
                "Forbidden",
                f'configmaps "late" is forbidden: unable to create new content in namespace '
                f"{name} because it is being terminated",
                {
                    "name": "late",
                    "kind": "configmaps",
                    "causes": [
                        {
                            "reason": "NamespaceTerminating",
                            "message": f"namespace {name} is being terminated",
                            "field": "metadata.namespace",
                        }
                    ],
                },
            )
    finally:
        current = http.get(f"/api/v1/namespaces/{name}")
        if current.status_code == 200:
            ns = current.json()
            ns["spec"]["finalizers"] = []
            http.put(f"/api/v1/namespaces/{name}/finalize", json=ns)


def test_default_namespace_may_not_be_deleted(http: httpx.Client) -> None:
    before = http.get("/api/v1/namespaces/default").json()
    response = http.delete("/api/v1/namespaces/default")
    assert_status(
        response,
        403,
        "Forbidden",
        'namespaces "default" is forbidden: this namespace may not be deleted',
        {"name": "default", "kind": "namespaces"},
    )
    assert http.get("/api/v1/namespaces/default").json() == before


# -- 410 Expired ---------------------------------------------------------------------

_LIST_TOO_OLD = "The resourceVersion for the provided list is too old."
_CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)


def test_expired_list_at_compacted_revision(compacting: tuple[httpx.Client, str]) -> None:
    http, namespace = compacting
    first = create(http, namespace, configmap("x", data={"v": "1"}))
    revision = first["metadata"]["resourceVersion"]
    updated = http.put(cm_path(namespace, "x"), json={**first, "data": {"v": "2"}})
    assert updated.status_code == 200, updated.text
    assert wait_until_compacted(http, namespace, revision).status_code == 410
    with storage_unchanged(http, namespace):
        response = http.get(
            cm_path(namespace),
            params={"resourceVersion": revision, "resourceVersionMatch": "Exact"},
        )
        assert_status(response, 410, "Expired", _LIST_TOO_OLD)
    assert http.get(cm_path(namespace, "x")).json()["data"] == {"v": "2"}


def test_expired_continue_token_offers_a_fresh_one(compacting: tuple[httpx.Client, str]) -> None:
    """Upstream answers an outdated continue with 410 and a token to carry on at latest."""
    http, namespace = compacting
    for name in ("a", "b", "c"):
        create(http, namespace, configmap(name))
    page = http.get(cm_path(namespace), params={"limit": 1})
    assert page.status_code == 200, page.text
    token = page.json()["metadata"]["continue"]
    revision = page.json()["metadata"]["resourceVersion"]
    assert wait_until_compacted(http, namespace, revision).status_code == 410

    response = http.get(cm_path(namespace), params={"limit": 1, "continue": token})
    status = assert_status(response, 410, "Expired", _CONTINUE_TOO_OLD, list_meta=True)
    fresh = status["metadata"].get("continue")
    assert fresh, "the 410 Status must carry metadata.continue to resume at the latest revision"
    rest = http.get(cm_path(namespace), params={"continue": fresh})
    assert rest.status_code == 200, rest.text
    assert [i["metadata"]["name"] for i in rest.json()["items"]][:2] == ["b", "c"]


def test_watch_from_compacted_revision_is_an_error_event(
    compacting: tuple[httpx.Client, str],
) -> None:
    """Past admission, a watch fails with an ERROR event, not an HTTP error (cacher.Watch)."""
    http, namespace = compacting
    first = create(http, namespace, configmap("x"))
    revision = first["metadata"]["resourceVersion"]
    # A watch from R reads history from R + 1 on, and etcd keeps its compaction
    # revision itself readable: wait until R + 1 is compacted away too.
    after = str(int(revision) + 1)
    assert wait_until_compacted(http, namespace, after).status_code == 410
    response = http.get(
        cm_path(namespace),
        params={"watch": "1", "resourceVersion": revision, "timeoutSeconds": "2"},
    )
    assert response.status_code == 200, response.text
    events = [json.loads(line) for line in response.text.splitlines() if line.strip()]
    assert len(events) == 1, events
    assert events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert status["kind"] == "Status"
    assert status["status"] == "Failure"
    assert status["code"] == 410
    assert status["reason"] == "Expired"
    assert status["message"].startswith(f"too old resource version: {revision} ("), status
