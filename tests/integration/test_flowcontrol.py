"""flowcontrol.apiserver.k8s.io on a real server: the mandatory and suggested objects
(present at start, restored after deletion, their spec protected), CRUD with generation
and status, each version's defaults, conversions between v1, v1beta3, v1beta2 and
v1beta1 (the renamed share and v1beta3's zero-preserving annotation), validation with
upstream's messages, tables, a protobuf round trip, and ``kubectl get``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kubernetes import client, config

from kapi.runtime import protobuf
from tests.conftest import KapiServer, serve_with_flags, start_server
from tests.helpers.kubectl import Kubectl
from tests.helpers.objects import unique
from tests.helpers.protobuf_requests import PROTOBUF
from tests.helpers.status import assert_status
from tests.helpers.wait import eventually

GROUP = "flowcontrol.apiserver.k8s.io"
AUTOUPDATE = "apf.kubernetes.io/autoupdate-spec"
PRESERVE = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
FS_KIND = f"FlowSchema.{GROUP}"
PL_KIND = f"PriorityLevelConfiguration.{GROUP}"

Object = dict[str, Any]


def path(version: str, plural: str, name: str = "") -> str:
    base = f"/apis/{GROUP}/{version}/{plural}"
    return f"{base}/{name}" if name else base


def schemas(version: str = "v1", name: str = "") -> str:
    return path(version, "flowschemas", name)


def levels(version: str = "v1", name: str = "") -> str:
    return path(version, "prioritylevelconfigurations", name)


def flow_schema(name: str, version: str = "v1", **spec: Any) -> Object:
    body: Object = {
        "priorityLevelConfiguration": {"name": "global-default"},
        "rules": [
            {
                "subjects": [{"kind": "User", "user": {"name": "alice"}}],
                "resourceRules": [
                    {
                        "verbs": ["get"],
                        "apiGroups": [""],
                        "resources": ["pods"],
                        "namespaces": ["*"],
                    }
                ],
            }
        ],
    }
    body.update(spec)
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "FlowSchema",
        "metadata": {"name": name},
        "spec": body,
    }


def level(
    name: str, version: str = "v1", annotations: dict[str, str] | None = None, **limited: Any
) -> Object:
    metadata: Object = {"name": name}
    if annotations is not None:
        metadata["annotations"] = annotations
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "PriorityLevelConfiguration",
        "metadata": metadata,
        "spec": {
            "type": "Limited",
            "limited": {"limitResponse": {"type": "Queue", "queuing": {}}, **limited},
        },
    }


def names(http: httpx.Client, url: str) -> set[str]:
    response = http.get(url)
    assert response.status_code == 200, response.text
    return {item["metadata"]["name"] for item in response.json()["items"]}


def invalid(kind: str, name: str, *causes: tuple[str, str]) -> tuple[str, Object]:
    """Upstream's 422 message and details for ``causes`` (field, message body)."""
    texts = [f"{field}: {body}" for field, body in causes]
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    group_kind, _, group = kind.partition(".")
    details = {
        "name": name,
        "group": group,
        "kind": group_kind,
        "causes": [
            {"reason": reason_of(body), "message": body, "field": field} for field, body in causes
        ],
    }
    return f'{kind} "{name}" is invalid: {joined}', details


def reason_of(body: str) -> str:
    for prefix, reason in (
        ("Invalid value", "FieldValueInvalid"),
        ("Required value", "FieldValueRequired"),
        ("Unsupported value", "FieldValueNotSupported"),
        ("Forbidden", "FieldValueForbidden"),
        ("Duplicate value", "FieldValueDuplicate"),
    ):
        if body.startswith(prefix):
            return reason
    raise AssertionError(body)


def assert_invalid(
    response: httpx.Response, kind: str, name: str, *causes: tuple[str, str]
) -> None:
    message, details = invalid(kind, name, *causes)
    assert_status(response, 422, "Invalid", message, details)


# --- the built-in configuration ----------------------------------------------------------------

SUGGESTED_SCHEMAS = {
    "probes",
    "system-leader-election",
    "endpoint-controller",
    "workload-leader-election",
    "system-node-high",
    "system-nodes",
    "kube-controller-manager",
    "kube-scheduler",
    "kube-system-service-accounts",
    "service-accounts",
    "global-default",
}
SUGGESTED_LEVELS = {
    "system",
    "node-high",
    "leader-election",
    "workload-high",
    "workload-low",
    "global-default",
}
CATCH_ALL_LEVEL_SPEC = {
    "type": "Limited",
    "limited": {
        "nominalConcurrencyShares": 5,
        "lendablePercent": 0,
        "limitResponse": {"type": "Reject"},
    },
}
EVERYTHING = {
    "resourceRules": [
        {
            "verbs": ["*"],
            "apiGroups": ["*"],
            "resources": ["*"],
            "clusterScope": True,
            "namespaces": ["*"],
        }
    ],
    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
}


def test_mandatory_and_suggested_objects_at_start(http: httpx.Client) -> None:
    assert {"exempt", "catch-all"} | SUGGESTED_SCHEMAS <= names(http, schemas())
    assert {"exempt", "catch-all"} | SUGGESTED_LEVELS <= names(http, levels())
    catch_all = http.get(schemas(name="catch-all")).json()
    assert catch_all["metadata"]["annotations"] == {AUTOUPDATE: "true"}
    producer = [
        m
        for m in catch_all["metadata"]["managedFields"]
        if m["manager"] == "api-priority-and-fairness-config-producer-v1"
    ]
    assert [(m["operation"], m["apiVersion"]) for m in producer] == [("Update", f"{GROUP}/v1")]
    assert catch_all["spec"] == {
        "priorityLevelConfiguration": {"name": "catch-all"},
        "matchingPrecedence": 10000,
        "distinguisherMethod": {"type": "ByUser"},
        "rules": [
            {
                "subjects": [
                    {"kind": "Group", "group": {"name": "system:unauthenticated"}},
                    {"kind": "Group", "group": {"name": "system:authenticated"}},
                ],
                **EVERYTHING,
            }
        ],
    }
    exempt = http.get(schemas(name="exempt")).json()["spec"]
    assert exempt["matchingPrecedence"] == 1
    assert "distinguisherMethod" not in exempt
    assert exempt["rules"][0]["subjects"] == [
        {"kind": "Group", "group": {"name": "system:masters"}}
    ]
    assert http.get(levels(name="catch-all")).json()["spec"] == CATCH_ALL_LEVEL_SPEC
    assert http.get(levels(name="exempt")).json()["spec"] == {
        "type": "Exempt",
        "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0},
    }
    workload_low = http.get(levels(name="workload-low")).json()["spec"]["limited"]
    assert workload_low == {
        "nominalConcurrencyShares": 100,
        "lendablePercent": 90,
        "limitResponse": {
            "type": "Queue",
            "queuing": {"queues": 128, "handSize": 6, "queueLengthLimit": 50},
        },
    }
    ready = http.get("/readyz?verbose")
    assert "[+]poststarthook/priority-and-fairness-config-producer ok" in ready.text


def test_mandatory_spec_is_fixed(http: httpx.Client) -> None:
    stored = http.get(levels(name="catch-all")).json()
    changed = {
        **stored,
        "spec": {
            **CATCH_ALL_LEVEL_SPEC,
            "limited": {**CATCH_ALL_LEVEL_SPEC["limited"], "nominalConcurrencyShares": 6},
        },
    }
    response = http.put(levels(name="catch-all"), json=changed)
    assert response.status_code == 422, response.text
    causes = response.json()["details"]["causes"]
    assert [(c["field"], c["message"].rsplit(": ", 1)[1]) for c in causes] == [
        ("spec", "spec of 'catch-all' must equal the fixed value")
    ]
    assert http.get(levels(name="catch-all")).json() == stored
    schema = http.get(schemas(name="catch-all")).json()
    schema["spec"]["matchingPrecedence"] = 9999
    response = http.put(schemas(name="catch-all"), json=schema)
    assert response.status_code == 422, response.text
    assert response.json()["details"]["causes"][0]["message"].endswith(
        ': spec of "catch-all" must equal the fixed value'
    )
    # The exempt level's spec.exempt is the operators' to tune.
    exempt = http.get(levels(name="exempt")).json()
    exempt["spec"]["exempt"]["lendablePercent"] = 10
    response = http.put(levels(name="exempt"), json=exempt)
    assert response.status_code == 200, response.text
    exempt = response.json()
    exempt["spec"]["exempt"]["lendablePercent"] = 0
    response = http.put(levels(name="exempt"), json=exempt)
    assert response.status_code == 200, response.text
    exempt = response.json()
    exempt["spec"] = {"type": "Exempt"}
    response = http.put(levels(name="exempt"), json=exempt)
    assert response.status_code == 200, response.text  # spec.exempt may even go


def test_restored_at_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    server = start_server(data)
    try:
        with server.client() as http:
            assert http.delete(schemas(name="catch-all")).status_code == 200
            assert http.delete(levels(name="catch-all")).status_code == 200
            assert http.delete(levels(name="global-default")).status_code == 200
            mandatory = http.get(schemas(name="exempt")).json()
            mandatory["metadata"]["annotations"][AUTOUPDATE] = "false"
            assert http.put(schemas(name="exempt"), json=mandatory).status_code == 200
            opted_out = http.get(levels(name="workload-low")).json()
            opted_out["metadata"]["annotations"][AUTOUPDATE] = "false"
            opted_out["spec"]["limited"]["nominalConcurrencyShares"] = 7
            assert http.put(levels(name="workload-low"), json=opted_out).status_code == 200
            retired = level("retired", annotations={AUTOUPDATE: "true"})
            assert http.post(levels(), json=retired).status_code == 201
            kept = level("mine", annotations={AUTOUPDATE: "false"})
            assert http.post(levels(), json=kept).status_code == 201
            assert "catch-all" not in names(http, schemas())
    finally:
        server.stop()
    server = start_server(data)
    try:
        with server.client() as http:
            assert http.get(schemas(name="catch-all")).json()["spec"]["matchingPrecedence"] == 10000
            assert http.get(levels(name="catch-all")).json()["spec"] == CATCH_ALL_LEVEL_SPEC
            restored = http.get(levels(name="global-default")).json()
            assert restored["metadata"]["annotations"] == {AUTOUPDATE: "true"}
            exempt = http.get(schemas(name="exempt")).json()
            assert exempt["metadata"]["annotations"][AUTOUPDATE] == "true"
            workload_low = http.get(levels(name="workload-low")).json()
            assert workload_low["metadata"]["annotations"][AUTOUPDATE] == "false"
            assert workload_low["spec"]["limited"]["nominalConcurrencyShares"] == 7
            present = names(http, levels())
            assert "retired" not in present
            assert "mine" in present
    finally:
        server.stop()


# --- CRUD ------------------------------------------------------------------------------------


def test_crud_generation_and_status(http: httpx.Client) -> None:
    name = unique("fs")
    body = flow_schema(name)
    body["status"] = {"conditions": [{"type": "Dangling", "status": "True"}]}
    created = http.post(schemas(), json=body)
    assert created.status_code == 201, created.text
    obj = created.json()
    assert obj["metadata"]["generation"] == 1
    assert obj["status"] == {}
    assert obj["spec"]["matchingPrecedence"] == 1000
    assert name in names(http, schemas())
    patched = http.patch(
        schemas(name=name),
        json={"spec": {"matchingPrecedence": 500}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["metadata"]["generation"] == 2
    status = patched.json()
    # Unconditional: the server's own Dangling condition may land at any moment.
    del status["metadata"]["resourceVersion"]
    status["status"] = {"conditions": [{"type": "Reviewed", "status": "True"}]}
    status["spec"]["matchingPrecedence"] = 600  # ignored by /status
    written = http.put(schemas(name=name) + "/status", json=status)
    assert written.status_code == 200, written.text
    assert written.json()["spec"]["matchingPrecedence"] == 500
    assert written.json()["metadata"]["generation"] == 2
    assert written.json()["status"]["conditions"] == [{"type": "Reviewed", "status": "True"}]
    status["status"]["conditions"].append({"type": "Reviewed", "status": "False"})
    assert_invalid(
        http.put(schemas(name=name) + "/status", json=status),
        FS_KIND,
        name,
        ("status.conditions[1].type", 'Duplicate value: "Reviewed"'),
    )
    status["status"]["conditions"] = [{"status": "True"}]
    assert_invalid(
        http.put(schemas(name=name) + "/status", json=status),
        FS_KIND,
        name,
        ("status.conditions[0].type", "Required value: must not be empty"),
    )
    main = http.get(schemas(name=name)).json()
    del main["metadata"]["resourceVersion"]
    main["status"] = {"conditions": []}
    updated = http.put(schemas(name=name), json=main)
    assert updated.status_code == 200, updated.text
    assert updated.json()["metadata"]["generation"] == 2
    assert {c["type"] for c in updated.json()["status"]["conditions"]} >= {"Reviewed"}
    assert http.delete(schemas(name=name)).status_code == 200
    assert_status(http.get(schemas(name=name)), 404, "NotFound")


def test_dangling_condition(http: httpx.Client) -> None:
    """The server says whether a FlowSchema's priority level exists (upstream's
    configuration controller does), which ``kubectl get``'s MISSINGPL column shows."""
    name, level_name = unique("fs"), unique("pl")
    body = flow_schema(name, priorityLevelConfiguration={"name": level_name})
    assert http.post(schemas(), json=body).status_code == 201

    def dangling() -> Object | None:
        conditions = http.get(schemas(name=name)).json()["status"].get("conditions") or []
        return next((c for c in conditions if c["type"] == "Dangling"), None)

    missing = eventually(
        lambda: (c := dangling()) is not None and c["status"] == "True" and c,
        what="the Dangling condition",
    )
    assert missing["reason"] == "NotFound"
    assert missing["message"] == (
        "This FlowSchema references the PriorityLevelConfiguration object named "
        f'"{level_name}" but there is no such object'
    )
    assert http.post(levels(), json=level(level_name)).status_code == 201
    found = eventually(
        lambda: (c := dangling()) is not None and c["status"] == "False" and c,
        what="the condition to clear",
    )
    assert (found["reason"], found["message"]) == (
        "Found",
        "This FlowSchema references the PriorityLevelConfiguration object named "
        f'"{level_name}" and it exists',
    )
    table = http.get(schemas(name=name), headers={"accept": TABLE}).json()
    assert table["rows"][0]["cells"][5] == "False"
    # Applied to /status by upstream's field manager, beside the creator's entry.
    managed = http.get(schemas(name=name)).json()["metadata"]["managedFields"]
    consumer = [
        m for m in managed if m["manager"] == "api-priority-and-fairness-config-consumer-v1"
    ]
    assert [(m["operation"], m.get("subresource")) for m in consumer] == [("Apply", "status")]
    assert http.delete(schemas(name=name)).status_code == 200
    assert http.delete(levels(name=level_name)).status_code == 200


# --- defaults and conversions ------------------------------------------------------------------


def test_v1_defaults(http: httpx.Client) -> None:
    name = unique("pl")
    created = http.post(levels(), json=level(name))
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["limited"] == {
        "nominalConcurrencyShares": 30,
        "lendablePercent": 0,
        "limitResponse": {
            "type": "Queue",
            "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50},
        },
    }
    zero = unique("pl-zero")
    created = http.post(levels(), json=level(zero, nominalConcurrencyShares=0))
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["limited"]["nominalConcurrencyShares"] == 0
    exempt_typed = level(unique("pl-ex"))
    exempt_typed["spec"] = {"type": "Exempt", "exempt": {}}
    assert_invalid(
        http.post(levels(), json=exempt_typed),
        PL_KIND,
        exempt_typed["metadata"]["name"],
        (
            "spec.type",
            "Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'",
        ),
    )
    for item in (name, zero):
        assert http.delete(levels(name=item)).status_code == 200


def test_v1_refuses_the_v1beta3_annotation(http: httpx.Client) -> None:
    name = unique("pl")
    assert_invalid(
        http.post(levels(), json=level(name, annotations={PRESERVE: ""})),
        PL_KIND,
        name,
        ("metadata.annotations", f"Forbidden: annotation '{PRESERVE}' is forbidden"),
    )
    assert_status(http.get(levels(name=name)), 404, "NotFound")


@pytest.fixture(scope="module")
def server_1_31(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "flowcontrol-1-31", "--emulated-version=1.31")


@pytest.fixture(scope="module")
def server_1_25(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "flowcontrol-1-25", "--emulated-version=1.25")


def test_v1beta3_zero_shares_round_trip(server_1_31: KapiServer) -> None:
    with server_1_31.client() as http:
        defaulted = unique("pl")
        created = http.post(
            levels("v1beta3"), json=level(defaulted, "v1beta3", nominalConcurrencyShares=0)
        )
        assert created.status_code == 201, created.text
        assert created.json()["spec"]["limited"]["nominalConcurrencyShares"] == 30
        assert "annotations" not in created.json()["metadata"]
        assert created.headers.get_list("warning") == [
            f'299 - "{GROUP}/v1beta3 PriorityLevelConfiguration is deprecated in v1.29+, '
            f'unavailable in v1.32+; use {GROUP}/v1 PriorityLevelConfiguration"'
        ]
        kept = unique("pl-zero")
        body = level(
            kept, "v1beta3", annotations={PRESERVE: "", "team": "a"}, nominalConcurrencyShares=0
        )
        created = http.post(levels("v1beta3"), json=body)
        assert created.status_code == 201, created.text
        assert created.json()["spec"]["limited"]["nominalConcurrencyShares"] == 0
        assert created.json()["metadata"]["annotations"] == {PRESERVE: "", "team": "a"}
        as_v1 = http.get(levels(name=kept)).json()
        assert as_v1["metadata"]["annotations"] == {"team": "a"}
        assert as_v1["spec"]["limited"]["nominalConcurrencyShares"] == 0
        # A zero written through v1 reads back through v1beta3 with the annotation.
        through_v1 = unique("pl-v1")
        assert (
            http.post(levels(), json=level(through_v1, nominalConcurrencyShares=0)).status_code
            == 201
        )
        read = http.get(levels("v1beta3", through_v1)).json()
        assert read["metadata"]["annotations"] == {PRESERVE: ""}
        assert read["spec"]["limited"]["nominalConcurrencyShares"] == 0
        # ... and an update through v1beta3 with it keeps the zero.
        read["metadata"]["labels"] = {"x": "y"}
        updated = http.put(levels("v1beta3", through_v1), json=read)
        assert updated.status_code == 200, updated.text
        assert (
            http.get(levels(name=through_v1)).json()["spec"]["limited"]["nominalConcurrencyShares"]
            == 0
        )


def test_v1beta1_v1beta2_assured_shares(server_1_25: KapiServer) -> None:
    with server_1_25.client() as http:
        group = http.get(f"/apis/{GROUP}").json()
        assert [v["version"] for v in group["versions"]] == ["v1beta2", "v1beta1"]
        name = unique("pl")
        created = http.post(
            levels("v1beta1"), json=level(name, "v1beta1", assuredConcurrencyShares=0)
        )
        assert created.status_code == 201, created.text
        assert created.headers.get_list("warning") == [
            f'299 - "{GROUP}/v1beta1 PriorityLevelConfiguration is deprecated in v1.23+, '
            f'unavailable in v1.26+; use {GROUP}/v1beta3 PriorityLevelConfiguration"'
        ]
        assert created.json()["spec"]["limited"]["assuredConcurrencyShares"] == 30
        assert "nominalConcurrencyShares" not in created.json()["spec"]["limited"]
        read = http.get(levels("v1beta2", name)).json()
        assert read["apiVersion"] == f"{GROUP}/v1beta2"
        assert read["spec"]["limited"]["assuredConcurrencyShares"] == 30
        read["spec"]["limited"]["assuredConcurrencyShares"] = 12
        updated = http.put(levels("v1beta2", name), json=read)
        assert updated.status_code == 200, updated.text
        assert (
            http.get(levels("v1beta1", name)).json()["spec"]["limited"]["assuredConcurrencyShares"]
            == 12
        )
        negative = unique("pl-neg")
        assert_invalid(
            http.post(
                levels("v1beta2"), json=level(negative, "v1beta2", assuredConcurrencyShares=-1)
            ),
            PL_KIND,
            negative,
            (
                "spec.limited.assuredConcurrencyShares",
                "Invalid value: -1: must be a non-negative integer",
            ),
        )
        assert negative not in names(http, levels("v1beta2"))
        # FlowSchemas convert by renaming the version; the built-in ones are there too.
        assert "catch-all" in names(http, schemas("v1beta1"))
        fs = unique("fs")
        assert http.post(schemas("v1beta2"), json=flow_schema(fs, "v1beta2")).status_code == 201
        assert http.get(schemas("v1beta1", fs)).json()["spec"]["matchingPrecedence"] == 1000


def test_v1_level_reads_through_v1beta3_at_1_31(server_1_31: KapiServer) -> None:
    with server_1_31.client() as http:
        group = http.get(f"/apis/{GROUP}").json()
        assert [v["version"] for v in group["versions"]] == ["v1", "v1beta3"]
        read = http.get(levels("v1beta3", "catch-all"))
        assert read.json()["spec"] == CATCH_ALL_LEVEL_SPEC
        assert_status(http.get(levels("v1beta2")), 404, "NotFound")


# --- validation --------------------------------------------------------------------------------


def test_flow_schema_validation(http: httpx.Client) -> None:
    name = unique("fs")
    bad = flow_schema(
        name,
        matchingPrecedence=10001,
        distinguisherMethod={"type": "ByGroup"},
        rules=[
            {
                "subjects": [
                    {"kind": "Robot"},
                    {"kind": "User", "group": {"name": "g"}},
                    {"kind": "ServiceAccount", "serviceAccount": {"name": "sa"}},
                ],
                "resourceRules": [
                    {"verbs": ["get", "fetch"], "apiGroups": ["*", "apps"], "resources": ["pods"]}
                ],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["healthz"]}],
            },
            {"subjects": []},
        ],
    )
    bad["spec"]["priorityLevelConfiguration"] = {"name": ""}
    assert_invalid(
        http.post(schemas(), json=bad),
        FS_KIND,
        name,
        ("spec.matchingPrecedence", "Invalid value: 10001: must not be greater than 10000"),
        (
            "spec.distinguisherMethod.type",
            'Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByGroup"}: '
            'supported values: "ByNamespace", "ByUser"',
        ),
        ("spec.priorityLevelConfiguration.name", "Required value: must reference a priority level"),
        (
            "spec.rules[0].subjects[0].kind",
            'Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"',
        ),
        (
            "spec.rules[0].subjects[1].user",
            "Required value: user is required when subject kind is 'User'",
        ),
        (
            "spec.rules[0].subjects[1].group",
            "Forbidden: group is forbidden when subject kind is not 'Group'",
        ),
        (
            "spec.rules[0].subjects[2].serviceAccount.namespace",
            "Required value: must specify namespace for service account",
        ),
        (
            "spec.rules[0].resourceRules[0].verbs",
            'Unsupported value: []string{"get", "fetch"}: supported values: "create", "delete", '
            '"deletecollection", "get", "list", "patch", "proxy", "update", "watch"',
        ),
        (
            "spec.rules[0].resourceRules[0].apiGroups",
            'Invalid value: []string{"*", "apps"}: '
            "if '*' is present, must not specify other api groups",
        ),
        (
            "spec.rules[0].resourceRules[0].namespaces",
            "Required value: resource rules that are not cluster scoped must supply at least "
            "one namespace",
        ),
        (
            "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]",
            'Invalid value: "healthz": must start with slash',
        ),
        ("spec.rules[1].subjects", "Required value: subjects must contain at least one value"),
        (
            "spec.rules[1]",
            "Required value: at least one of resourceRules and nonResourceRules has to be "
            "non-empty",
        ),
    )
    assert name not in names(http, schemas())
    assert_invalid(
        http.post(schemas(), json=flow_schema(name, matchingPrecedence=1)),
        FS_KIND,
        name,
        (
            "spec.matchingPrecedence",
            "Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
        ),
    )
    assert_invalid(
        http.post(schemas(), json=flow_schema(name, matchingPrecedence=-3)),
        FS_KIND,
        name,
        ("spec.matchingPrecedence", "Invalid value: -3: must be a positive value"),
    )
    assert name not in names(http, schemas())


def test_priority_level_validation_and_storage_unchanged(http: httpx.Client) -> None:
    name = unique("pl")
    created = http.post(levels(), json=level(name))
    assert created.status_code == 201, created.text
    stored = created.json()
    bad = {
        **stored,
        "spec": {
            "type": "Limited",
            "exempt": {},
            "limited": {
                "nominalConcurrencyShares": -1,
                "lendablePercent": 101,
                "borrowingLimitPercent": -2,
                "limitResponse": {
                    "type": "Queue",
                    "queuing": {"queues": 4, "handSize": 5, "queueLengthLimit": -1},
                },
            },
        },
    }
    assert_invalid(
        http.put(levels(name=name), json=bad),
        PL_KIND,
        name,
        ("spec.exempt", "Forbidden: must be nil if the type is Limited"),
        (
            "spec.limited.nominalConcurrencyShares",
            "Invalid value: -1: must be a non-negative integer",
        ),
        (
            "spec.limited.limitResponse.queuing.queueLengthLimit",
            "Invalid value: -1: must be positive",
        ),
        (
            "spec.limited.limitResponse.queuing.handSize",
            "Invalid value: 5: should not be greater than queues (4)",
        ),
        (
            "spec.limited.lendablePercent",
            "Invalid value: 101: must be between 0 and 100, inclusive",
        ),
        (
            "spec.limited.borrowingLimitPercent",
            "Invalid value: -2: if specified, must be a non-negative integer",
        ),
    )
    entropy = {
        **stored,
        "spec": {
            "type": "Limited",
            "limited": {
                "limitResponse": {"type": "Queue", "queuing": {"queues": 1000, "handSize": 7}}
            },
        },
    }
    assert_invalid(
        http.put(levels(name=name), json=entropy),
        PL_KIND,
        name,
        (
            "spec.limited.limitResponse.queuing.handSize",
            "Invalid value: 7: required entropy bits of deckSize 1000 and handSize 7 should "
            "not be greater than 60",
        ),
    )
    rejecting = {
        **stored,
        "spec": {
            "type": "Limited",
            "limited": {"limitResponse": {"type": "Reject", "queuing": {}}},
        },
    }
    assert_invalid(
        http.put(levels(name=name), json=rejecting),
        PL_KIND,
        name,
        (
            "spec.limited.limitResponse.queuing",
            "Forbidden: must be nil if limited.limitResponse.type is not Limited",
        ),
    )
    untyped = {**stored, "spec": {"type": "Unlimited"}}
    assert_invalid(
        http.put(levels(name=name), json=untyped),
        PL_KIND,
        name,
        ("spec.type", 'Unsupported value: "Unlimited": supported values: "Exempt", "Limited"'),
    )
    assert http.get(levels(name=name)).json() == stored
    assert http.delete(levels(name=name)).status_code == 200


# --- tables, protobuf, kubectl --------------------------------------------------------------


def test_tables(http: httpx.Client) -> None:
    def flow_schema_table() -> Object:
        return http.get(schemas(), headers={"accept": TABLE}).json()

    # The server sets the Dangling condition shortly after it starts.
    table = eventually(
        lambda: (
            (t := flow_schema_table())
            and all(r["cells"][5] == "False" for r in t["rows"] if r["cells"][0] == "catch-all")
            and t
        ),
        what="catch-all's Dangling condition",
    )
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "PriorityLevel",
        "MatchingPrecedence",
        "DistinguisherMethod",
        "Age",
        "MissingPL",
    ]
    rows = {r["cells"][0]: r["cells"] for r in table["rows"]}
    assert rows["catch-all"][:4] == ["catch-all", "catch-all", 10000, "ByUser"]
    assert rows["catch-all"][5] == "False"
    assert rows["exempt"][3] == "<none>"
    table = http.get(levels(), headers={"accept": TABLE}).json()
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Type",
        "NominalConcurrencyShares",
        "Queues",
        "HandSize",
        "QueueLengthLimit",
        "Age",
    ]
    rows = {r["cells"][0]: r["cells"] for r in table["rows"]}
    assert rows["exempt"][:6] == ["exempt", "Exempt", "<none>", "<none>", "<none>", "<none>"]
    assert rows["catch-all"][:6] == ["catch-all", "Limited", 5, "<none>", "<none>", "<none>"]
    assert rows["workload-high"][:6] == ["workload-high", "Limited", 40, 128, 6, 50]


def test_protobuf_round_trip(http: httpx.Client) -> None:
    name = unique("pl-pb")
    body = protobuf.encode(level(name, nominalConcurrencyShares=0, borrowingLimitPercent=150))
    created = http.post(
        levels(), content=body, headers={"content-type": PROTOBUF, "accept": PROTOBUF}
    )
    assert created.status_code == 201, created.text
    assert created.headers["content-type"] == PROTOBUF
    decoded = protobuf.decode(created.content)
    as_json = http.get(levels(name=name)).json()
    assert decoded == as_json
    assert as_json["spec"]["limited"]["nominalConcurrencyShares"] == 0
    assert as_json["spec"]["limited"]["borrowingLimitPercent"] == 150
    assert http.delete(levels(name=name)).status_code == 200


@pytest.mark.kubectl
def test_kubectl_get_flowschemas(kapi_server: KapiServer, tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("KUBE")}
    cache = tmp_path / "kubecache"
    cache.mkdir()
    env.update(KUBECONFIG=str(kapi_server.kubeconfig), KUBECACHEDIR=str(cache), HOME=str(tmp_path))
    kubectl = Kubectl("/usr/bin/kubectl", env)
    lines = kubectl.ok("get", "flowschemas").out_lines
    assert lines[0].split() == [
        "NAME",
        "PRIORITYLEVEL",
        "MATCHINGPRECEDENCE",
        "DISTINGUISHERMETHOD",
        "AGE",
        "MISSINGPL",
    ]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    # Upstream's printer lists schemas by precedence, then name.
    order = [(int(row[2]), row[0]) for row in (line.split() for line in lines[1:])]
    assert order == sorted(order)
    assert [name for _, name in order[:3]] == ["exempt", "probes", "system-leader-election"]
    assert order[-1] == (10000, "catch-all")
    assert rows["catch-all"][:4] == ["catch-all", "catch-all", "10000", "ByUser"]
    assert rows["catch-all"][-1] == "False"
    lines = kubectl.ok("get", "prioritylevelconfigurations", "catch-all").out_lines
    assert lines[0].split() == [
        "NAME",
        "TYPE",
        "NOMINALCONCURRENCYSHARES",
        "QUEUES",
        "HANDSIZE",
        "QUEUELENGTHLIMIT",
        "AGE",
    ]
    assert lines[1].split()[:6] == ["catch-all", "Limited", "5", "<none>", "<none>", "<none>"]


def test_official_client(kapi_server: KapiServer) -> None:
    """The Python client's typed flowcontrol API reads the built-in objects and writes one."""
    api_client = config.new_client_from_config(config_file=str(kapi_server.kubeconfig))
    try:
        api = client.FlowcontrolApiserverV1Api(api_client)
        listed = api.list_flow_schema()
        assert "catch-all" in {fs.metadata.name for fs in listed.items}
        name = unique("pl-client")
        body = client.V1PriorityLevelConfiguration(
            metadata=client.V1ObjectMeta(name=name),
            spec=client.V1PriorityLevelConfigurationSpec(
                type="Limited",
                limited=client.V1LimitedPriorityLevelConfiguration(
                    limit_response=client.V1LimitResponse(type="Reject")
                ),
            ),
        )
        created = api.create_priority_level_configuration(body)
        assert created.spec.limited.nominal_concurrency_shares == 30
        assert created.spec.limited.lendable_percent == 0
        patched = api.patch_priority_level_configuration(
            name, {"spec": {"limited": {"nominalConcurrencyShares": 3}}}
        )
        assert patched.spec.limited.nominal_concurrency_shares == 3
        assert patched.metadata.generation == 2
        api.delete_priority_level_configuration(name)
    finally:
        api_client.close()
