"""CRD validation ratcheting (KEP-4008) applied to built-in kinds, on a real ``kapi serve``.

kapi goes beyond upstream here: a built-in kind's hand-written validation stays
the answer, but on an update, while ``CRDValidationRatcheting`` is on, an error
of a rule its declaration states (an ``enum``, a required field) is forgiven
when the value it is about did not change.  Objects that break those rules can
only exist if they were stored when the rules were looser (or by another
writer), so the module stores valid objects through the API, stops the server
and rewrites them in its SQLite file, as an older release would have left them.
Two servers then serve copies of that file: one with the gate on (1.33, where it
is GA), one with it off (``--emulated-version 1.32``), where every update is
validated as upstream validates it.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.conftest import KapiServer, start_server
from tests.helpers import objects
from tests.helpers.kubectl import make_kubectl
from tests.helpers.status import assert_status

Object = dict[str, Any]

# The objects breaking rules are written into copies of the server's SQLite file.
pytestmark = pytest.mark.sqlite_only

NS = "ratchet"
COUNTER = "kapi_validation_ratcheted_errors_total"
MERGE = {"content-type": "application/merge-patch+json"}

CRONJOBS = f"/apis/batch/v1/namespaces/{NS}/cronjobs"
PDBS = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"
ENDPOINTS = f"/api/v1/namespaces/{NS}/endpoints"
INGRESSES = f"/apis/networking.k8s.io/v1/namespaces/{NS}/ingresses"
SLICES = f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices"


def cronjob(name: str) -> Object:
    return objects.cronjob(name, concurrencyPolicy="Allow")


def pdb(name: str) -> Object:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {
            "minAvailable": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
        },
    }


def endpoints(name: str) -> Object:
    return {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": name},
        "subsets": [
            {"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80, "protocol": "TCP"}]},
            {"addresses": [{"ip": "10.0.0.2"}], "ports": [{"port": 81, "protocol": "TCP"}]},
        ],
    }


def ingress(name: str) -> Object:
    path = {
        "path": "/",
        "pathType": "Prefix",
        "backend": {"service": {"name": "web", "port": {"number": 80}}},
    }
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name},
        "spec": {"rules": [{"host": "example.com", "http": {"paths": [path]}}]},
    }


def endpoint_slice(name: str) -> Object:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": name},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"]}],
    }


def _bad_policy(obj: Object) -> None:
    obj["spec"]["concurrencyPolicy"] = "Sometimes"


def _bad_schedule(obj: Object) -> None:
    obj["spec"]["schedule"] = "every night"


def _bad_eviction_policy(obj: Object) -> None:
    obj["spec"]["unhealthyPodEvictionPolicy"] = "Never"


def _bad_condition(obj: Object) -> None:
    obj["status"]["conditions"] = [
        {
            "type": "DisruptionAllowed",
            "status": "Maybe",
            "reason": "SufficientPods",
            "message": "",
            "lastTransitionTime": "2024-01-01T00:00:00Z",
        }
    ]


def _bad_protocol(obj: Object) -> None:
    obj["subsets"][0]["ports"][0]["protocol"] = "HTTP"


def _no_path_type(obj: Object) -> None:
    del obj["spec"]["rules"][0]["http"]["paths"][0]["pathType"]


def _no_address_type(obj: Object) -> None:
    del obj["addressType"]


#: What the module stores through the API, then rewrites in storage: (collection, object, how).
STORED: list[tuple[str, Object, Callable[[Object], None]]] = [
    (CRONJOBS, cronjob("policy"), _bad_policy),
    (CRONJOBS, cronjob("policy-changed"), _bad_policy),
    (CRONJOBS, cronjob("policy-fixed"), _bad_policy),
    (CRONJOBS, cronjob("policy-kubectl"), _bad_policy),
    (CRONJOBS, cronjob("schedule"), _bad_schedule),
    (PDBS, pdb("eviction"), _bad_eviction_policy),
    (PDBS, pdb("condition"), _bad_condition),
    (ENDPOINTS, endpoints("protocol"), _bad_protocol),
    (ENDPOINTS, endpoints("protocol-list-changed"), _bad_protocol),
    (INGRESSES, ingress("path-type"), _no_path_type),
    (SLICES, endpoint_slice("address-type"), _no_address_type),
]


def _rewrite_in_storage(db: Path, name: str, change: Callable[[Object], None]) -> None:
    """Edit the latest stored value of one object in place, as if an older release wrote it.

    Names are unique across the kinds of :data:`STORED`, so the key's suffix finds it.
    """
    connection = sqlite3.connect(db)
    try:
        rows = connection.execute(
            "SELECT id, name, value FROM kv WHERE name LIKE ? ORDER BY id DESC",
            (f"%/{NS}/{name}",),
        ).fetchall()
        assert len({key for _, key, _ in rows}) == 1, rows
        row_id, _, value = rows[0]
        obj = orjson.loads(value)
        change(obj)
        with connection:
            connection.execute("UPDATE kv SET value = ? WHERE id = ?", (orjson.dumps(obj), row_id))
    finally:
        connection.close()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory holding the objects of :data:`STORED`, each breaking a rule."""
    data = tmp_path_factory.mktemp("builtin-ratcheting") / "data"
    server = start_server(data)
    try:
        with server.client() as http:
            response = http.post(
                "/api/v1/namespaces",
                json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
            )
            assert response.status_code == 201, response.text
            for collection, obj, _ in STORED:
                response = http.post(collection, json=obj)
                assert response.status_code == 201, response.text
            status = {
                "status": {
                    "disruptionsAllowed": 0,
                    "currentHealthy": 0,
                    "desiredHealthy": 1,
                    "expectedPods": 0,
                    "conditions": [],
                }
            }
            response = http.patch(f"{PDBS}/condition/status", json=status, headers=MERGE)
            assert response.status_code == 200, response.text
    finally:
        assert server.stop() == 0
    for _, obj, change in STORED:
        _rewrite_in_storage(data / "kapi.db", obj["metadata"]["name"], change)
    return data


def _serve(seeded: Path, name: str, *flags: str) -> Iterator[KapiServer]:
    data = seeded.parent.parent / name / "data"
    shutil.copytree(seeded, data)
    server = start_server(data, *flags)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server_on(seeded: Path) -> Iterator[KapiServer]:
    """1.33: CRDValidationRatcheting is GA and on."""
    yield from _serve(seeded, "gate-on")


@pytest.fixture(scope="module")
def server_off(seeded: Path) -> Iterator[KapiServer]:
    """The gate turned off, which a 1.32 server allows: no ratcheting at all."""
    flags = ("--emulated-version", "1.32", "--feature-gates", "CRDValidationRatcheting=false")
    yield from _serve(seeded, "gate-off", *flags)


@pytest.fixture
def gate_on(server_on: KapiServer) -> Iterator[httpx.Client]:
    with server_on.client() as http:
        yield http


@pytest.fixture
def gate_off(server_off: KapiServer) -> Iterator[httpx.Client]:
    with server_off.client() as http:
        yield http


def ratcheted(http: httpx.Client, group: str, resource: str) -> float:
    labels = f'group="{group}",resource="{resource}",source="declarative"'
    for line in http.get("/metrics").text.splitlines():
        if line.startswith(f"{COUNTER}{{{labels}}} "):
            return float(line.split()[1])
    return 0.0


def get(http: httpx.Client, path: str) -> Object:
    response = http.get(path)
    assert response.status_code == 200, response.text
    result: Object = response.json()
    return result


def patch(http: httpx.Client, path: str, body: Object) -> httpx.Response:
    return http.patch(path, content=orjson.dumps(body), headers=MERGE)


def assert_refused(response: httpx.Response, http: httpx.Client, path: str, message: str) -> None:
    """422 Invalid with ``message``, and the stored object left as it was."""
    before = get(http, path)
    assert_status(response, 422, "Invalid", message)
    assert get(http, path) == before


# --- an update of another field goes through with the gate on, fails with it off ---------------

POLICY_ERROR = (
    'CronJob.batch "policy" is invalid: spec.concurrencyPolicy: Unsupported value: '
    '"Sometimes": supported values: "Allow", "Forbid", "Replace"'
)


def test_an_enum_value_stored_before_ratchets_when_a_sibling_field_changes(
    gate_on: httpx.Client,
) -> None:
    path = f"{CRONJOBS}/policy"
    before = ratcheted(gate_on, "batch", "cronjobs")
    stored = get(gate_on, path)
    stored["spec"]["suspend"] = True
    response = gate_on.put(path, json=stored)
    assert response.status_code == 200, response.text
    assert "warning" not in response.headers  # dropped silently, as ratcheted schema errors are
    after = get(gate_on, path)
    assert after["spec"]["suspend"] is True
    assert after["spec"]["concurrencyPolicy"] == "Sometimes"
    assert after["metadata"]["generation"] == stored["metadata"]["generation"] + 1
    assert ratcheted(gate_on, "batch", "cronjobs") == before + 1


def test_without_the_gate_the_same_update_fails_as_upstream(gate_off: httpx.Client) -> None:
    path = f"{CRONJOBS}/policy"
    stored = get(gate_off, path)
    stored["spec"]["suspend"] = True
    response = gate_off.put(path, json=stored)
    assert_refused(response, gate_off, path, POLICY_ERROR)
    assert ratcheted(gate_off, "batch", "cronjobs") == 0


@pytest.mark.kubectl
def test_kubectl_patch_of_another_field(
    server_on: KapiServer, server_off: KapiServer, tmp_path: Path
) -> None:
    """What a user sees: the patch goes through with the gate on, not with it off."""
    patch_args = ("patch", "cronjob", "policy-kubectl", "-n", NS, "--type=merge")
    suspend = '{"spec":{"suspend":true}}'
    refused = make_kubectl(server_off, tmp_path, "1.32").run(*patch_args, "-p", suspend)
    assert refused.returncode == 1, refused
    assert refused.err_lines == [
        'The CronJob "policy-kubectl" is invalid: spec.concurrencyPolicy: Unsupported value: '
        '"Sometimes": supported values: "Allow", "Forbid", "Replace"'
    ], refused
    kubectl = make_kubectl(server_on, tmp_path, "1.33")
    accepted = kubectl.run(*patch_args, "-p", suspend)
    assert accepted.returncode == 0, accepted
    assert accepted.out_lines == ["cronjob.batch/policy-kubectl patched"], accepted
    assert accepted.stderr == "", accepted
    shown = kubectl.run("get", "cronjob", "policy-kubectl", "-n", NS, "-o", "jsonpath={.spec}")
    assert '"concurrencyPolicy":"Sometimes"' in shown.stdout, shown
    assert '"suspend":true' in shown.stdout, shown
    again = kubectl.run(*patch_args, "-p", '{"spec":{"concurrencyPolicy":"Never"}}')
    assert again.returncode == 1, again
    assert again.err_lines == [
        'The CronJob "policy-kubectl" is invalid: spec.concurrencyPolicy: Unsupported value: '
        '"Never": supported values: "Allow", "Forbid", "Replace"'
    ], again


def test_changing_the_bad_value_to_another_bad_value_still_fails(gate_on: httpx.Client) -> None:
    path = f"{CRONJOBS}/policy-changed"
    before = ratcheted(gate_on, "batch", "cronjobs")
    response = patch(gate_on, path, {"spec": {"concurrencyPolicy": "Never", "suspend": True}})
    message = (
        'CronJob.batch "policy-changed" is invalid: spec.concurrencyPolicy: Unsupported value: '
        '"Never": supported values: "Allow", "Forbid", "Replace"'
    )
    assert_refused(response, gate_on, path, message)
    assert get(gate_on, path)["spec"]["concurrencyPolicy"] == "Sometimes"
    assert ratcheted(gate_on, "batch", "cronjobs") == before


def test_fixing_the_bad_value_is_an_ordinary_update(gate_on: httpx.Client) -> None:
    path = f"{CRONJOBS}/policy-fixed"
    response = patch(gate_on, path, {"spec": {"concurrencyPolicy": "Forbid"}})
    assert response.status_code == 200, response.text
    assert get(gate_on, path)["spec"]["concurrencyPolicy"] == "Forbid"


@pytest.mark.parametrize(
    ("path", "update", "message"),
    [
        pytest.param(
            f"{PDBS}/eviction",
            {"spec": {"minAvailable": 2}},
            'PodDisruptionBudget.policy "eviction" is invalid: spec.unhealthyPodEvictionPolicy: '
            'Unsupported value: "Never": supported values: "AlwaysAllow", "IfHealthyBudget"',
            id="pdb-enum",
        ),
        pytest.param(
            f"{ENDPOINTS}/protocol",
            {"metadata": {"labels": {"tier": "web"}}},
            'Endpoints "protocol" is invalid: subsets[0].ports[0].protocol: Unsupported value: '
            '"HTTP": supported values: "SCTP", "TCP", "UDP"',
            id="endpoints-enum-in-atomic-list",
        ),
        pytest.param(
            f"{INGRESSES}/path-type",
            {"spec": {"ingressClassName": "nginx"}},
            'Ingress.networking.k8s.io "path-type" is invalid: '
            "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
            id="ingress-required",
        ),
    ],
)
def test_other_kinds_ratchet_with_the_gate_and_fail_without(
    gate_on: httpx.Client, gate_off: httpx.Client, path: str, update: Object, message: str
) -> None:
    assert_refused(patch(gate_off, path, update), gate_off, path, message)
    response = patch(gate_on, path, update)
    assert response.status_code == 200, response.text
    stored = get(gate_on, path)
    for key, value in update.items():
        assert {k: stored[key][k] for k in value} == value


def test_status_updates_ratchet_too(gate_on: httpx.Client, gate_off: httpx.Client) -> None:
    """Conditions pair by type: a condition left as it was is forgiven, a new bad one is not."""
    path = f"{PDBS}/condition"
    message = (
        'PodDisruptionBudget.policy "condition" is invalid: status.conditions[0].status: '
        'Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'
    )
    update = {"status": {"observedGeneration": 1}}
    assert_refused(patch(gate_off, f"{path}/status", update), gate_off, path, message)
    before = ratcheted(gate_on, "policy", "poddisruptionbudgets")
    response = patch(gate_on, f"{path}/status", update)
    assert response.status_code == 200, response.text
    stored = get(gate_on, path)
    assert stored["status"]["observedGeneration"] == 1
    assert stored["status"]["conditions"][0]["status"] == "Maybe"
    assert ratcheted(gate_on, "policy", "poddisruptionbudgets") == before + 1

    added = {
        "type": "Other",
        "status": "Perhaps",
        "reason": "Testing",
        "message": "",
        "lastTransitionTime": "2024-01-01T00:00:00Z",
    }
    conditions = [*stored["status"]["conditions"], added]
    response = patch(gate_on, f"{path}/status", {"status": {"conditions": conditions}})
    message = (
        'PodDisruptionBudget.policy "condition" is invalid: status.conditions[1].status: '
        'Unsupported value: "Perhaps": supported values: "False", "True", "Unknown"'
    )
    assert_refused(response, gate_on, path, message)


# --- what never ratchets ----------------------------------------------------------------------


def test_a_list_compared_whole_is_changed_by_any_item(gate_on: httpx.Client) -> None:
    """Endpoints' subsets are an atomic list: touching the good subset changes the whole list."""
    path = f"{ENDPOINTS}/protocol-list-changed"
    stored = get(gate_on, path)
    stored["subsets"][1]["ports"][0]["port"] = 82
    message = (
        'Endpoints "protocol-list-changed" is invalid: subsets[0].ports[0].protocol: '
        'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'
    )
    assert_refused(gate_on.put(path, json=stored), gate_on, path, message)


def test_a_handwritten_rule_no_declaration_states_never_ratchets(gate_on: httpx.Client) -> None:
    path = f"{CRONJOBS}/schedule"
    message = (
        'CronJob.batch "schedule" is invalid: spec.schedule: Invalid value: "every night": '
        "expected exactly 5 fields, found 2: [every night]"
    )
    response = patch(gate_on, path, {"spec": {"suspend": True}})
    assert_refused(response, gate_on, path, message)
    assert get(gate_on, path)["spec"]["suspend"] is False


def test_a_required_field_of_the_object_itself_never_ratchets(gate_on: httpx.Client) -> None:
    """The object carries metadata, which no declaration describes, so it is never unchanged."""
    path = f"{SLICES}/address-type"
    response = patch(gate_on, path, {"metadata": {"labels": {"tier": "web"}}})
    message = (
        'EndpointSlice.discovery.k8s.io "address-type" is invalid: addressType: Required value'
    )
    assert_refused(response, gate_on, path, message)


def test_create_never_ratchets(gate_on: httpx.Client) -> None:
    obj = cronjob("created")
    _bad_policy(obj)
    response = gate_on.post(CRONJOBS, json=obj)
    message = (
        'CronJob.batch "created" is invalid: spec.concurrencyPolicy: Unsupported value: '
        '"Sometimes": supported values: "Allow", "Forbid", "Replace"'
    )
    assert_status(response, 422, "Invalid", message)
    assert gate_on.get(f"{CRONJOBS}/created").status_code == 404
