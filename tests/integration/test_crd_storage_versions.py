"""KEP-2339's CRD storage versions on a real server: a CRD's StorageVersion is written
before its custom resources are served or written in a new storage version, follows
the CRD's versions, is deleted with the CRD; while it cannot be written (a validating
webhook refuses it) custom-resource writes wait, then get upstream's 503."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.admission import PROPAGATION, configure, review_answer
from tests.helpers.crds import CRDS
from tests.helpers.storage_versions import stored_object
from tests.helpers.wait import eventually
from tests.tls import CertificateAuthority, make_ca, make_serving_cert
from tests.webhook_server import serve_webhook

SV = "/apis/internal.apiserver.k8s.io/v1alpha1/storageversions"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
IDENTITY = "apiserver.kubernetes.io/identity=kube-apiserver"
SCHEMA = {
    "openAPIV3Schema": {
        "type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
}

_ids = iter(range(1, 1_000_000))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """A server of this module's own: its webhooks apply to every StorageVersion."""
    yield from serve_with_flags(tmp_path_factory, "kapi-crd-sv")


@pytest.fixture
def http(server: KapiServer) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


def _version(name: str, storage: bool = False, served: bool = True) -> dict[str, Any]:
    return {"name": name, "served": served, "storage": storage, "schema": SCHEMA}


def _crd(versions: list[dict[str, Any]]) -> tuple[dict[str, Any], str, str]:
    """A namespaced CRD of a group of its own; with its group and plural."""
    group = f"sv{next(_ids)}.example.com"
    plural = "gadgets"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": "gadget", "kind": "Gadget"},
            "versions": versions,
        },
    }
    return crd, group, plural


def _gadget(group: str, name: str, version: str = "v1") -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/{version}",
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": {"size": 1},
    }


def _server_id(http: httpx.Client) -> str:
    response = http.get(LEASES, params={"labelSelector": IDENTITY})
    assert response.status_code == 200, response.text
    names = [lease["metadata"]["name"] for lease in response.json()["items"]]
    assert len(names) == 1, names
    return names[0]


def _entry(http: httpx.Client, name: str) -> dict[str, Any]:
    response = http.get(f"{SV}/{name}")
    assert response.status_code == 200, response.text
    entries = response.json()["status"]["storageVersions"]
    assert len(entries) == 1, entries
    return dict(entries[0])


def _served(http: httpx.Client, path: str) -> bool:
    return http.get(path).status_code == 200


def _raw_api_version(server: KapiServer, key: str) -> str:
    return str(stored_object(server, key)["apiVersion"])


def _patch_versions(http: httpx.Client, crd_name: str, versions: list[dict[str, Any]]) -> None:
    response = http.patch(
        f"{CRDS}/{crd_name}",
        json={"spec": {"versions": versions}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text


# --- following the CRD --------------------------------------------------------------------


def test_storage_version_exists_once_the_custom_resource_is_served(
    server: KapiServer, http: httpx.Client
) -> None:
    crd, group, plural = _crd([_version("v1", storage=True), _version("v1beta1")])
    assert http.post(CRDS, json=crd).status_code == 201
    path = f"/apis/{group}/v1/namespaces/default/{plural}"
    eventually(lambda: _served(http, path), what="the custom resources served")
    # Read at once: the StorageVersion was written before the endpoint was installed.
    response = http.get(f"{SV}/{group}.{plural}")
    assert response.status_code == 200, response.text
    status = response.json()["status"]
    assert status["storageVersions"] == [
        {
            "apiServerID": _server_id(http),
            "encodingVersion": f"{group}/v1",
            "decodableVersions": [f"{group}/v1", f"{group}/v1beta1"],
            "servedVersions": [f"{group}/v1", f"{group}/v1beta1"],
        }
    ]
    assert status["commonEncodingVersion"] == f"{group}/v1"
    [condition] = status["conditions"]
    assert {k: condition[k] for k in ("type", "status", "reason", "message")} == {
        "type": "AllEncodingVersionsEqual",
        "status": "True",
        "reason": "CommonEncodingVersionSet",
        "message": "Common encoding version set",
    }


def test_storage_and_served_version_changes_are_recorded(fresh_server: KapiServer) -> None:
    with fresh_server.client() as http:
        group, plural = _change_storage_and_served_versions(http)
    assert fresh_server.stop() == 0
    prefix = f"/registry/{group}/{plural}/default"
    # The object written before the change stays in v1; the one written once the
    # StorageVersion said v2 is in v2.
    assert _raw_api_version(fresh_server, f"{prefix}/old") == f"{group}/v1"
    assert _raw_api_version(fresh_server, f"{prefix}/new") == f"{group}/v2"


def _change_storage_and_served_versions(http: httpx.Client) -> tuple[str, str]:
    """The live part of the test above: its group and plural."""
    crd, group, plural = _crd([_version("v1", storage=True), _version("v2")])
    name = crd["metadata"]["name"]
    sv_name = f"{group}.{plural}"
    assert http.post(CRDS, json=crd).status_code == 201
    path = f"/apis/{group}/v1/namespaces/default/{plural}"
    eventually(lambda: _served(http, path), what="the custom resources served")
    assert http.post(path, json=_gadget(group, "old")).status_code == 201

    _patch_versions(http, name, [_version("v1"), _version("v2", storage=True)])
    eventually(
        lambda: _entry(http, sv_name)["encodingVersion"] == f"{group}/v2",
        what="the StorageVersion at v2",
    )
    sv = http.get(f"{SV}/{sv_name}").json()
    assert sv["status"]["commonEncodingVersion"] == f"{group}/v2"
    assert sv["status"]["conditions"][0]["reason"] == "CommonEncodingVersionSet"
    assert _entry(http, sv_name)["servedVersions"] == [f"{group}/v1", f"{group}/v2"]
    created = http.post(path, json=_gadget(group, "new"))
    assert created.status_code == 201, created.text

    # A served-version change: v3 added and served.
    _patch_versions(http, name, [_version("v1"), _version("v2", storage=True), _version("v3")])
    all_three = [f"{group}/{v}" for v in ("v1", "v2", "v3")]
    eventually(
        lambda: _entry(http, sv_name)["servedVersions"] == all_three,
        what="v3 among the served versions",
    )
    entry = _entry(http, sv_name)
    assert entry["encodingVersion"] == f"{group}/v2"
    assert entry["decodableVersions"] == all_three
    # v1 no longer served: still decodable (objects are stored in it).
    _patch_versions(
        http, name, [_version("v1", served=False), _version("v2", storage=True), _version("v3")]
    )
    eventually(
        lambda: _entry(http, sv_name)["servedVersions"] == [f"{group}/v2", f"{group}/v3"],
        what="v1 no longer served",
    )
    assert _entry(http, sv_name)["decodableVersions"] == all_three
    return group, plural


def test_deleting_the_crd_deletes_its_storage_version(http: httpx.Client) -> None:
    crd, group, plural = _crd([_version("v1", storage=True)])
    name = crd["metadata"]["name"]
    sv_name = f"{group}.{plural}"
    assert http.post(CRDS, json=crd).status_code == 201
    path = f"/apis/{group}/v1/namespaces/default/{plural}"
    eventually(lambda: _served(http, path), what="the custom resources served")
    assert http.post(path, json=_gadget(group, "doomed")).status_code == 201
    assert http.get(f"{SV}/{sv_name}").status_code == 200

    assert http.delete(f"{CRDS}/{name}").status_code == 200
    eventually(
        lambda: http.get(f"{SV}/{sv_name}").status_code == 404,
        what="the StorageVersion deleted with its CRD",
    )
    assert sv_name not in {s["metadata"]["name"] for s in http.get(SV).json()["items"]}
    assert http.get(f"{CRDS}/{name}").status_code == 404


# --- the write gate while the StorageVersion cannot be written ----------------------------

WEBHOOK = "storageversions.example.com"
REFUSAL = "storage versions of this CRD are frozen"


class _Refuser:
    """A validating webhook's answers: while ``refusing``, refuses writes to the
    StorageVersion of ``plural.group`` and to ``probe`` (to see that the webhook is
    called); everything else is allowed."""

    def __init__(self, group: str, plural: str) -> None:
        self.probe = f"probe.{group}"
        self.names = {f"{group}.{plural}", self.probe}
        self.refusing = threading.Event()
        self.refused: list[dict[str, Any]] = []

    def __call__(self, path: str, review: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        request = review["request"]
        if self.refusing.is_set() and request["name"] in self.names:
            self.refused.append(request)
            status = {"code": 403, "reason": "Forbidden", "message": REFUSAL}
            return review_answer(review, allowed=False, status=status)
        return review_answer(review, allowed=True)


def _refuse_storage_versions(
    http: httpx.Client, ca: CertificateAuthority, url: str, name: str
) -> None:
    """A ValidatingWebhookConfiguration sending StorageVersion writes to ``url``."""
    hook = {
        "name": WEBHOOK,
        "clientConfig": {"url": url, "caBundle": base64.b64encode(ca.cert_pem).decode()},
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": ["internal.apiserver.k8s.io"],
                "apiVersions": ["v1alpha1"],
                "resources": ["storageversions", "storageversions/status"],
            }
        ],
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    configure(http, "validatingwebhookconfigurations", name, [hook])


def test_custom_resource_writes_wait_then_503_while_the_storage_version_is_refused(
    fresh_server: KapiServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    ca = make_ca()
    cert = make_serving_cert(ca, tmp_path_factory.mktemp("sv-certs"))
    crd, group, plural = _crd([_version("v1", storage=True), _version("v2")])
    with fresh_server.client() as http, serve_webhook(cert, _Refuser(group, plural)) as hook:
        _refuse_storage_versions(http, ca, hook.url("/validate"), f"refuse-{group}")
        _writes_wait_while_refused(http, hook.handler, crd, group, plural)
    assert fresh_server.stop() == 0
    prefix = f"/registry/{group}/{plural}/default"
    assert _raw_api_version(fresh_server, f"{prefix}/before") == f"{group}/v1"
    assert _raw_api_version(fresh_server, f"{prefix}/after") == f"{group}/v2"


def _writes_wait_while_refused(
    http: httpx.Client, refuser: Any, crd: dict[str, Any], group: str, plural: str
) -> None:
    """The live part of the test above."""
    name = crd["metadata"]["name"]
    sv_name = f"{group}.{plural}"
    path = f"/apis/{group}/v1/namespaces/default/{plural}"
    assert http.post(CRDS, json=crd).status_code == 201
    eventually(lambda: _served(http, path), what="the custom resources served")
    assert http.post(path, json=_gadget(group, "before")).status_code == 201

    refuser.refusing.set()
    probe = {
        "apiVersion": "internal.apiserver.k8s.io/v1alpha1",
        "kind": "StorageVersion",
        "metadata": {"name": refuser.probe},
    }
    eventually(
        lambda: http.post(SV, json=probe).status_code == 403,
        what="the webhook refusing StorageVersion writes",
        timeout=PROPAGATION,
    )
    _patch_versions(http, name, [_version("v1"), _version("v2", storage=True)])
    # The registration of v2 was tried (and refused): writes wait for it now.
    eventually(
        lambda: any(r["name"] == sv_name for r in refuser.refused),
        what="the registration of v2 refused",
    )
    refused = http.post(path, json=_gadget(group, "during"))
    assert refused.status_code == 503, refused.text
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "wait for storage version registration to complete for resource: "
        f"{plural}.{group}, last seen error: "
        f'admission webhook "{WEBHOOK}" denied the request: {REFUSAL}',
        "reason": "ServiceUnavailable",
        "code": 503,
    }
    assert "retry-after" not in refused.headers
    # Deletes are writes too; reads still work, and nothing was stored or deleted.
    deleted = http.delete(f"{path}/before")
    assert deleted.status_code == 503, deleted.text
    listed = http.get(path)
    assert listed.status_code == 200, listed.text
    assert [o["metadata"]["name"] for o in listed.json()["items"]] == ["before"]
    assert http.get(f"{path}/during").status_code == 404
    assert _entry(http, sv_name)["encodingVersion"] == f"{group}/v1"

    refuser.refusing.clear()
    eventually(
        lambda: _entry(http, sv_name)["encodingVersion"] == f"{group}/v2",
        what="the retried registration of v2",
    )
    created = http.post(path, json=_gadget(group, "after"))
    assert created.status_code == 201, created.text
    assert http.get(f"{path}/before").status_code == 200
