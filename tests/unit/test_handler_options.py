"""The REST handlers' checks of query parameters and options, without a server.

Bad values answer upstream's ``Status``: 422 Invalid on ``<Kind>Options.meta.k8s.io``
(``ValidateCreateOptions`` and its siblings, ``ValidateListOptions``,
``ValidateDeleteOptions``) or 400 BadRequest; good values pass and give what
the handler goes on with.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kapi.apimachinery import errors
from kapi.endpoints import handlers
from kapi.endpoints.http import Request
from kapi.runtime import serializer

Object = dict[str, Any]

APPLY = serializer.APPLY_PATCH
MERGE = serializer.MERGE_PATCH
FIELD_VALIDATION_VALUES = 'supported values: "", "Ignore", "Strict", "Warn"'


def refusal(call: Any, *args: Any) -> tuple[int, str, str]:
    """Code, reason and message of the ``StatusError`` that ``call(*args)`` raises."""
    with pytest.raises(errors.StatusError) as raised:
        call(*args)
    return raised.value.code, raised.value.reason, raised.value.message


def invalid(kind: str, *causes: tuple[str, str]) -> tuple[int, str, str]:
    """422 on ``<kind>.meta.k8s.io`` with ``causes`` (field, message) in order."""
    summaries = [f"{field}: {message}" for field, message in causes]
    summary = summaries[0] if len(summaries) == 1 else "[" + ", ".join(summaries) + "]"
    return 422, "Invalid", f'{kind}.meta.k8s.io "" is invalid: {summary}'


# -- dryRun, fieldManager, fieldValidation, force ------------------------------------------


@pytest.mark.parametrize(
    ("query", "kind", "patch_type", "expected"),
    [
        ({}, "CreateOptions", "", (False, "Warn")),
        ({"dryRun": "All"}, "CreateOptions", "", (True, "Warn")),
        ({"dryRun": ""}, "UpdateOptions", "", (False, "Warn")),
        ({"fieldValidation": "Strict"}, "UpdateOptions", "", (False, "Strict")),
        ({"fieldValidation": "Ignore"}, "CreateOptions", "", (False, "Ignore")),
        ({"fieldValidation": ""}, "CreateOptions", "", (False, "Warn")),
        ({"fieldManager": "m" * 128}, "CreateOptions", "", (False, "Warn")),
        ({"fieldManager": "kubectl"}, "PatchOptions", APPLY, (False, "Warn")),
        ({"fieldManager": "kubectl", "force": "true"}, "PatchOptions", APPLY, (False, "Warn")),
        ({"dryRun": "All"}, "PatchOptions", MERGE, (True, "Warn")),
    ],
)
def test_write_options_accepted(
    query: dict[str, str], kind: str, patch_type: str, expected: tuple[bool, str]
) -> None:
    assert handlers.write_options(query, kind, patch_type) == expected


@pytest.mark.parametrize(
    ("query", "kind", "patch_type", "causes"),
    [
        (
            {"dryRun": "Foo"},
            "CreateOptions",
            "",
            [("dryRun", 'Unsupported value: ["Foo"]: supported values: "All"')],
        ),
        (
            {"fieldValidation": "Foo"},
            "CreateOptions",
            "",
            [("fieldValidation", f'Unsupported value: "Foo": {FIELD_VALIDATION_VALUES}')],
        ),
        (
            # The values are case-sensitive.
            {"fieldValidation": "strict"},
            "UpdateOptions",
            "",
            [("fieldValidation", f'Unsupported value: "strict": {FIELD_VALIDATION_VALUES}')],
        ),
        (
            {"fieldManager": "m" * 129},
            "UpdateOptions",
            "",
            [("fieldManager", "Too long: may not be more than 128 bytes")],
        ),
        (
            {"fieldManager": "bad\x01"},
            "CreateOptions",
            "",
            [
                (
                    "fieldManager",
                    'Invalid value: "bad\\x01": invalid character U+0001 (at position 3)',
                )
            ],
        ),
        (
            {},
            "PatchOptions",
            APPLY,
            [("fieldManager", "Required value: is required for apply patch")],
        ),
        (
            {"force": "true"},
            "PatchOptions",
            MERGE,
            [("force", "Forbidden: may not be specified for non-apply patch")],
        ),
        (
            # Every problem is reported, in upstream's order.
            {"dryRun": "Foo", "fieldValidation": "x", "fieldManager": "a\tb"},
            "CreateOptions",
            "",
            [
                (
                    "fieldManager",
                    'Invalid value: "a\\tb": invalid character U+0009 (at position 1)',
                ),
                ("dryRun", 'Unsupported value: ["Foo"]: supported values: "All"'),
                ("fieldValidation", f'Unsupported value: "x": {FIELD_VALIDATION_VALUES}'),
            ],
        ),
    ],
    ids=[
        "dry-run-value",
        "field-validation-value",
        "field-validation-case",
        "field-manager-too-long",
        "field-manager-unprintable",
        "apply-without-manager",
        "force-without-apply",
        "all-at-once",
    ],
)
def test_write_options_refused(
    query: dict[str, str], kind: str, patch_type: str, causes: list[tuple[str, str]]
) -> None:
    with pytest.raises(errors.StatusError) as raised:
        handlers.write_options(query, kind, patch_type)
    assert (raised.value.code, raised.value.reason, raised.value.message) == invalid(kind, *causes)
    details = raised.value.details
    assert details is not None
    assert (details["group"], details["kind"]) == ("meta.k8s.io", kind)
    assert [(c["field"], c["message"]) for c in details["causes"]] == causes


# -- list and watch options ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "watch"),
    [
        ({}, False),
        ({"resourceVersion": "0"}, False),
        ({"resourceVersion": "5", "resourceVersionMatch": "Exact"}, False),
        ({"resourceVersion": "5", "resourceVersionMatch": "NotOlderThan"}, False),
        ({"resourceVersion": "0", "resourceVersionMatch": "NotOlderThan"}, False),
        ({"continue": "token"}, False),
        ({"continue": "token", "resourceVersion": "0"}, False),
        ({}, True),
        ({"resourceVersion": "5"}, True),
        ({"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan"}, True),
    ],
)
def test_list_options_accepted(query: dict[str, str], watch: bool) -> None:
    assert handlers._validate_list_options(query, watch) is None


@pytest.mark.parametrize(
    ("query", "watch", "causes"),
    [
        (
            {"resourceVersionMatch": "Exact"},
            False,
            [
                (
                    "resourceVersionMatch",
                    "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is "
                    "provided",
                )
            ],
        ),
        (
            {"resourceVersion": "1", "resourceVersionMatch": "Foo"},
            False,
            [
                (
                    "resourceVersionMatch",
                    'Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""',
                )
            ],
        ),
        (
            {"resourceVersion": "0", "resourceVersionMatch": "Exact"},
            False,
            [
                (
                    "resourceVersionMatch",
                    'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            ],
        ),
        (
            {"resourceVersion": "5", "resourceVersionMatch": "Exact", "continue": "token"},
            False,
            [
                (
                    "resourceVersionMatch",
                    "Forbidden: resourceVersionMatch is forbidden when continue is provided",
                )
            ],
        ),
        (
            {"sendInitialEvents": "true"},
            False,
            [("sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list")],
        ),
        (
            {"sendInitialEvents": "true"},
            True,
            [
                (
                    "resourceVersionMatch",
                    "Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                    "NotOlderThan",
                )
            ],
        ),
        (
            {"resourceVersion": "1", "resourceVersionMatch": "NotOlderThan"},
            True,
            [
                (
                    "resourceVersionMatch",
                    "Forbidden: resourceVersionMatch is forbidden for watch unless "
                    "sendInitialEvents is provided",
                )
            ],
        ),
        (
            {"sendInitialEvents": "true", "resourceVersionMatch": "Exact"},
            True,
            [
                (
                    "resourceVersionMatch",
                    "Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                    "NotOlderThan",
                ),
                (
                    "resourceVersionMatch",
                    'Unsupported value: "Exact": supported values: "NotOlderThan"',
                ),
            ],
        ),
    ],
    ids=[
        "match-without-rv",
        "match-value",
        "exact-at-0",
        "match-with-continue",
        "initial-events-on-list",
        "initial-events-without-match",
        "watch-match-without-initial-events",
        "watch-exact",
    ],
)
def test_list_options_refused(
    query: dict[str, str], watch: bool, causes: list[tuple[str, str]]
) -> None:
    assert refusal(handlers._validate_list_options, query, watch) == invalid("ListOptions", *causes)


def test_continue_with_a_resource_version_is_a_bad_request() -> None:
    query = {"continue": "token", "resourceVersion": "5"}
    assert refusal(handlers._validate_list_options, query, False) == (
        400,
        "BadRequest",
        "specifying resource version is not allowed when using continue",
    )


@pytest.mark.parametrize(
    ("query", "expected"),
    [({}, None), ({"limit": ""}, None), ({"limit": "0"}, 0), ({"limit": "500"}, 500)],
)
def test_integer_parameters(query: dict[str, str], expected: int | None) -> None:
    assert handlers._int_param(query, "limit") == expected


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("soon", "invalid syntax"),
        (" 5", "invalid syntax"),
        ("1_000", "invalid syntax"),
        ("9223372036854775808", "value out of range"),
        ("-9223372036854775809", "value out of range"),
    ],
)
def test_an_integer_parameter_go_cannot_parse_is_a_bad_request(value: str, why: str) -> None:
    """As upstream, which answers the strconv error of decoding the query into int64."""
    assert refusal(handlers._int_param, {"timeoutSeconds": value}, "timeoutSeconds") == (
        400,
        "BadRequest",
        f'strconv.ParseInt: parsing "{value}": {why}',
    )


def test_int64_bounds_are_integers() -> None:
    assert handlers._int_param({"limit": "9223372036854775807"}, "limit") == 2**63 - 1
    assert handlers._int_param({"limit": "-9223372036854775808"}, "limit") == -(2**63)
    assert handlers._int_param({"limit": "+7"}, "limit") == 7


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("true", True),
        ("True", True),
        ("1", True),
        ("false", False),
        ("0", False),
        ("yes", False),
    ],
)
def test_boolean_parameters(value: str | None, expected: bool | None) -> None:
    query = {} if value is None else {"watch": value}
    assert handlers.bool_param(query, "watch") is expected


# -- delete options ------------------------------------------------------------------------


def delete_options(body: bytes, content_type: str = "application/json") -> Object:
    """``_delete_options`` of a DELETE request with ``body``."""
    scope = {
        "type": "http",
        "method": "DELETE",
        "path": "/api/v1/namespaces/default/configmaps/x",
        "query_string": b"",
        "headers": [(b"content-type", content_type.encode())],
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    return asyncio.run(handlers._delete_options(Request(scope, receive)))


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"", {}),
        (b"  \n", {}),
        (b'{"propagationPolicy":"Foreground"}', {"propagationPolicy": "Foreground"}),
        (b'{"propagationPolicy":"Background"}', {"propagationPolicy": "Background"}),
        (b'{"propagationPolicy":"Orphan"}', {"propagationPolicy": "Orphan"}),
        # A null is a nil pointer once decoded, the same as leaving the field out.
        (b'{"propagationPolicy":null}', {}),
        (
            b'{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}',
            {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]},
        ),
    ],
)
def test_delete_options_accepted(body: bytes, expected: Object) -> None:
    assert delete_options(body) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            b'{"propagationPolicy":"Now"}',
            invalid(
                "DeleteOptions",
                (
                    "propagationPolicy",
                    'Unsupported value: "Now": supported values: "Foreground", "Background", '
                    '"Orphan", "nil"',
                ),
            ),
        ),
        (b"[]", (400, "BadRequest", "DeleteOptions must be an object")),
    ],
    ids=["propagation-policy", "not-an-object"],
)
def test_delete_options_refused(body: bytes, expected: tuple[int, str, str]) -> None:
    assert refusal(delete_options, body) == expected


@pytest.mark.parametrize(
    ("query", "options", "expected"),
    [
        ({}, {}, False),
        ({"dryRun": "All"}, {}, True),
        ({}, {"dryRun": ["All"]}, True),
        ({}, {"dryRun": []}, False),
        # The query's value replaces the body's: upstream decodes the query over the body.
        ({"dryRun": "All"}, {"dryRun": ["Nope"]}, True),
    ],
)
def test_delete_dry_run_accepted(query: dict[str, str], options: Object, expected: bool) -> None:
    assert handlers._delete_dry_run(query, options) is expected


@pytest.mark.parametrize(
    ("query", "options", "value"),
    [({"dryRun": "Foo"}, {}, '["Foo"]'), ({}, {"dryRun": ["All", "x"]}, '["All","x"]')],
)
def test_delete_dry_run_refused(query: dict[str, str], options: Object, value: str) -> None:
    assert refusal(handlers._delete_dry_run, query, options) == invalid(
        "DeleteOptions", ("dryRun", f'Unsupported value: {value}: supported values: "All"')
    )


# -- patch bodies and names ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "args", "expected"),
    [
        (
            handlers._check_name,
            (None, "x"),
            "the name of the object (x based on URL) was undeterminable: name must be provided",
        ),
        (
            handlers._check_name,
            ("y", "x"),
            "the name of the object (y) does not match the name on the URL (x)",
        ),
        (handlers.decode_patch, (b'{"a":',), "error decoding patch: unexpected end of JSON input"),
        (
            handlers.apply_configuration,
            (b"[1]",),
            "error decoding YAML: json: cannot unmarshal array into Go value of type "
            "map[string]interface {}",
        ),
        (
            handlers.apply_json_patch,
            ({}, {"op": "add"}),
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
        ),
    ],
    ids=["no-name", "other-name", "bad-patch-json", "apply-not-an-object", "json-patch-object"],
)
def test_bad_requests(call: Any, args: tuple[Any, ...], expected: str) -> None:
    assert refusal(call, *args) == (400, "BadRequest", expected)


def test_good_patch_bodies_and_names() -> None:
    assert handlers._check_name("x", "x") is None
    assert handlers.decode_patch(b'{"data":{"a":null}}') == {"data": {"a": None}}
    assert handlers.apply_configuration(b"") == {}
    assert handlers.apply_configuration(b"kind: ConfigMap\ndata:\n  a: '1'\n") == {
        "kind": "ConfigMap",
        "data": {"a": "1"},
    }
    assert handlers.apply_configuration(b'{"kind":"ConfigMap","data":{"a":"1"}}') == {
        "kind": "ConfigMap",
        "data": {"a": "1"},
    }
    patched = handlers.apply_json_patch({"a": 1}, [{"op": "add", "path": "/b", "value": 2}])
    assert patched == {"a": 1, "b": 2}


def test_a_json_patch_that_cannot_apply_is_invalid() -> None:
    assert refusal(handlers.apply_json_patch, {"a": 1}, [{"op": "remove", "path": "/b"}]) == (
        422,
        "Invalid",
        "the server rejected our request due to an error in our request: "
        "can't remove a non-existent object 'b'",
    )


@pytest.mark.parametrize(
    ("document", "sets_rv"),
    [
        ({"metadata": {"resourceVersion": "5"}}, True),
        ({"metadata": {"resourceVersion": None}}, True),
        ({"metadata": {"name": "x"}}, False),
        ({"metadata": None}, False),
        ([{"op": "replace", "path": "/metadata/resourceVersion", "value": "5"}], True),
        ([{"op": "replace", "path": "/data/a", "value": "5"}], False),
        ("not a patch", False),
    ],
)
def test_whether_a_patch_sets_the_resource_version(document: Any, sets_rv: bool) -> None:
    assert handlers._patch_sets_rv(document) is sets_rv
