"""The pre-flight report of a CRD change: ``dryRun=All`` updates and ``kapi crd check``.

A CRD is created with objects that its first schema accepts; a tightened
schema is then sent as a dry run.  The report comes back as ``Warning``
headers (summary first, one line per rejected object and version), nothing
is stored, and ``kapi crd check`` prints the same report as a table and
exits 0 (all accepted), 1 (some only ratchet) or 2 (some rejected even
unchanged), 3 when it cannot check.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.crds import CRDS, crd_of
from tests.helpers.kapi_cli import Kapi, make_kapi
from tests.helpers.objects import unique
from tests.helpers.wait import eventually

RATCHETS = "rejected on create, accepted unchanged (ratcheting)"
REJECTED = "rejected even unchanged"
LOW = "spec.count: Invalid value: 4: spec.count in body should be greater than or equal to 10"
NOT_EMBEDDED = "spec.template.apiVersion: Required value"


def widget_crd(group: str) -> dict[str, Any]:
    """Widgets of ``group``: ``count`` (an integer), ``template`` (any object), ``tags``."""
    spec = {
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    return crd_of(group, "sprockets", "Sprocket", spec)


def _spec_schema(crd: dict[str, Any], version: int = 0) -> dict[str, Any]:
    schema = crd["spec"]["versions"][version]["schema"]["openAPIV3Schema"]
    return schema["properties"]["spec"]["properties"]


def tightened(crd: dict[str, Any], *, embedded: bool = True) -> dict[str, Any]:
    """``count`` at least 10, ``tags`` a set and (``embedded``) ``template`` an embedded object."""
    new = copy.deepcopy(crd)
    properties = _spec_schema(new)
    properties["count"]["minimum"] = 10
    properties["tags"]["x-kubernetes-list-type"] = "set"
    if embedded:
        properties["template"]["x-kubernetes-embedded-resource"] = True
    return new


def widget(group: str, name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{group}/v1",
        "kind": "Sprocket",
        "metadata": {"name": name},
        "spec": spec,
    }


def warnings(response: httpx.Response) -> list[str]:
    """The response's warning texts (kapi's encoding: ``299 - "<text>"``, quotes escaped)."""
    texts = []
    for key, value in response.headers.multi_items():
        if key.lower() == "warning":
            assert value.startswith('299 - "') and value.endswith('"'), value
            texts.append(value[7:-1].replace('\\"', '"').replace("\\\\", "\\"))
    return texts


@dataclass
class Widgets:
    """A CRD of its own group on a server, with three stored objects in one namespace."""

    http: httpx.Client
    group: str
    namespace: str

    @property
    def crd(self) -> dict[str, Any]:
        """The CRD as stored now: a PUT of it (or of a change to it) is conditional on that."""
        response = self.http.get(self.crd_path)
        assert response.status_code == 200, response.text
        return response.json()  # type: ignore[no-any-return]

    @property
    def crd_path(self) -> str:
        return f"{CRDS}/sprockets.{self.group}"

    @property
    def objects_path(self) -> str:
        return f"/apis/{self.group}/v1/namespaces/{self.namespace}/sprockets"

    def stored(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The stored CRD and widgets, to check a dry run left them alone."""
        crd = self.http.get(self.crd_path)
        assert crd.status_code == 200, crd.text
        items = self.http.get(self.objects_path)
        assert items.status_code == 200, items.text
        return crd.json(), items.json()["items"]


def install(http: httpx.Client, namespace: str, crd: dict[str, Any] | None = None) -> Widgets:
    """Create the CRD, wait until its widgets are served, and store ``ok``, ``low``, ``loose``."""
    crd = crd or widget_crd(unique("preflight") + ".example.com")
    group = crd["spec"]["group"]
    response = http.post(CRDS, json=crd)
    assert response.status_code == 201, response.text
    _created.append(f"{http.base_url}{CRDS}/{crd['metadata']['name']}".replace("//apis", "/apis"))
    widgets = Widgets(http, group, namespace)
    eventually(
        lambda: http.get(widgets.objects_path).status_code == 200, what="widgets to be served"
    )
    for obj in (
        widget(group, "ok", count=20, tags=["a", "b"], template={"apiVersion": "v1", "kind": "X"}),
        widget(group, "low", count=4, tags=["a", "a"]),
        widget(group, "loose", count=30, template={"foo": "bar"}),
    ):
        created = http.post(widgets.objects_path, json=obj)
        assert created.status_code == 201, created.text
    return widgets


#: The CRDs a test created, deleted after it so that the shared server keeps no resources
#: of this module's kind.
_created: list[str] = []


@pytest.fixture(autouse=True)
def _delete_crds() -> Iterator[None]:
    yield
    while _created:
        httpx.delete(_created.pop(), timeout=10)


@pytest.fixture
def widgets(http: httpx.Client, namespace: str) -> Widgets:
    return install(http, namespace)


def test_dry_run_put_answers_the_report_and_stores_nothing(widgets: Widgets) -> None:
    before = widgets.stored()
    response = widgets.http.put(
        widgets.crd_path, params={"dryRun": "All"}, json=tightened(widgets.crd)
    )
    assert response.status_code == 200, response.text
    ns = widgets.namespace
    assert warnings(response) == [
        "preflight: 2 of 3 stored Sprocket objects would be rejected on create by the new "
        "schema: 1 accepted unchanged (ratcheting), 1 rejected even unchanged",
        f"preflight: v1 {ns}/loose: {REJECTED}: {NOT_EMBEDDED}",
        f"preflight: v1 {ns}/low: {RATCHETS}: {LOW}",
    ]
    # The answer is the CRD as it would be stored; storage still has the old one.
    assert _spec_schema(response.json())["count"] == {"type": "integer", "minimum": 10}
    assert widgets.stored() == before


def test_dry_run_merge_patch_answers_the_same_report(widgets: Widgets) -> None:
    before = widgets.stored()
    patch = {"spec": {"versions": tightened(widgets.crd)["spec"]["versions"]}}
    response = widgets.http.patch(
        widgets.crd_path,
        params={"dryRun": "All"},
        json=patch,
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert response.status_code == 200, response.text
    assert warnings(response)[0] == (
        "preflight: 2 of 3 stored Sprocket objects would be rejected on create by the new "
        "schema: 1 accepted unchanged (ratcheting), 1 rejected even unchanged"
    )
    assert len(warnings(response)) == 3
    assert widgets.stored() == before


def test_no_report_without_dry_run_or_without_a_spec_change(widgets: Widgets) -> None:
    unchanged = widgets.http.put(widgets.crd_path, params={"dryRun": "All"}, json=widgets.crd)
    assert unchanged.status_code == 200, unchanged.text
    assert warnings(unchanged) == []
    # A real update is not checked: ratcheting is what keeps the stored objects usable.
    applied = widgets.http.put(widgets.crd_path, json=tightened(widgets.crd))
    assert applied.status_code == 200, applied.text
    assert warnings(applied) == []
    assert _spec_schema(widgets.stored()[0])["count"]["minimum"] == 10
    # ... and the report was right: the ratcheting object takes an unchanged update ...
    low = widgets.http.get(f"{widgets.objects_path}/low").json()
    assert widgets.http.put(f"{widgets.objects_path}/low", json=low).status_code == 200
    # ... the one rejected even unchanged does not.
    loose = widgets.http.get(f"{widgets.objects_path}/loose").json()
    refused = widgets.http.put(f"{widgets.objects_path}/loose", json=loose)
    assert refused.status_code == 422, refused.text
    assert NOT_EMBEDDED in refused.json()["message"]


def test_a_field_the_new_schema_drops_is_still_in_the_old_object(widgets: Widgets) -> None:
    """A read still has the dropped field, the request that sends it back does not: the
    object holding it has changed, so a rule on that object is not forgiven."""
    new = copy.deepcopy(widgets.crd)
    spec = new["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    del spec["properties"]["tags"]
    spec["x-kubernetes-validations"] = [{"rule": "self.count >= 10"}]
    dry_run = widgets.http.put(widgets.crd_path, params={"dryRun": "All"}, json=new)
    assert dry_run.status_code == 200, dry_run.text
    rule = "spec: Invalid value: failed rule: self.count >= 10"
    assert warnings(dry_run)[1:] == [f"preflight: v1 {widgets.namespace}/low: {REJECTED}: {rule}"]
    # The server then does what the report said.
    assert widgets.http.put(widgets.crd_path, json=new).status_code == 200
    low_path = f"{widgets.objects_path}/low"

    def refused() -> httpx.Response | None:
        answer = widgets.http.put(low_path, json=widgets.http.get(low_path).json())
        return answer if answer.status_code == 422 else None

    answer = eventually(refused, what="the new schema to be served")
    assert answer.json()["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: failed rule: self.count >= 10",
            "field": "spec",
        }
    ]


def test_report_is_bounded_with_the_summary_first(http: httpx.Client, namespace: str) -> None:
    widgets = install(http, namespace)
    for i in range(25):
        created = http.post(widgets.objects_path, json=widget(widgets.group, f"n{i:02}", count=i))
        assert created.status_code == 201, created.text
    response = http.put(widgets.crd_path, params={"dryRun": "All"}, json=tightened(widgets.crd))
    assert response.status_code == 200, response.text
    texts = warnings(response)
    # 2 of the first three and the 10 of n00..n09 below the minimum.
    assert texts[0] == (
        "preflight: 12 of 28 stored Sprocket objects would be rejected on create by the new "
        "schema: 11 accepted unchanged (ratcheting), 1 rejected even unchanged"
    )
    assert len(texts) == 1 + 12  # fewer than the limit: all listed, no "more" line
    for i in range(13):
        http.post(widgets.objects_path, json=widget(widgets.group, f"m{i:02}", count=1))
    texts = warnings(
        http.put(widgets.crd_path, params={"dryRun": "All"}, json=tightened(widgets.crd))
    )
    assert texts[0].startswith("preflight: 25 of 41 stored Sprocket objects")
    assert len(texts) == 1 + 20 + 1
    assert texts[-1] == "preflight: 5 more (object, version) rejections not listed"


def test_each_served_version_is_checked(http: httpx.Client, namespace: str) -> None:
    group = unique("preflight") + ".example.com"
    crd = widget_crd(group)
    v2 = copy.deepcopy(crd["spec"]["versions"][0])
    v2.update(name="v2", storage=False)
    crd["spec"]["versions"].append(v2)
    widgets = install(http, namespace, crd)
    new = copy.deepcopy(widgets.crd)
    _spec_schema(new, 1)["count"]["maximum"] = 10  # v2 only
    response = http.put(widgets.crd_path, params={"dryRun": "All"}, json=new)
    assert response.status_code == 200, response.text
    assert warnings(response)[1:] == [
        f"preflight: v2 {namespace}/loose: {RATCHETS}: spec.count: Invalid value: 30: "
        "spec.count in body should be less than or equal to 10",
        f"preflight: v2 {namespace}/ok: {RATCHETS}: spec.count: Invalid value: 20: "
        "spec.count in body should be less than or equal to 10",
    ]


# -- kapi crd check ------------------------------------------------------------------------


@pytest.fixture
def kapi(kapi_server: KapiServer) -> Kapi:
    return make_kapi(kapi_server)


def manifest(tmp_path: Path, crd: dict[str, Any]) -> str:
    path = tmp_path / "new-crd.yaml"
    path.write_text(yaml.safe_dump(crd))
    return str(path)


def test_check_prints_the_table_and_exits_2(kapi: Kapi, widgets: Widgets, tmp_path: Path) -> None:
    before = widgets.stored()
    done = kapi.run("crd", "check", "-f", manifest(tmp_path, tightened(widgets.crd)))
    ns = widgets.namespace
    assert (done.returncode, done.stderr) == (2, ""), done
    name = f"customresourcedefinition/sprockets.{widgets.group}"
    width = len(f"{ns}/loose") + 3
    assert done.out_lines == [
        f"{name}: 2 of 3 stored Sprocket objects would be rejected on create by the new "
        "schema: 1 accepted unchanged (ratcheting), 1 rejected even unchanged",
        "OBJECT".ljust(width) + "VERSION   VERDICT    FIRST ERROR",
        f"{ns}/loose".ljust(width) + f"v1        rejected   {NOT_EMBEDDED}",
        f"{ns}/low".ljust(width) + f"v1        ratchets   {LOW}",
    ]
    assert widgets.stored() == before


def test_check_exits_1_when_every_rejection_ratchets(
    kapi: Kapi, widgets: Widgets, tmp_path: Path
) -> None:
    done = kapi.run(
        "crd", "check", "-f", manifest(tmp_path, tightened(widgets.crd, embedded=False))
    )
    assert (done.returncode, done.stderr) == (1, ""), done
    assert done.out_lines[0].endswith(
        "1 accepted unchanged (ratcheting), 0 rejected even unchanged"
    )
    assert [line.split()[:3] for line in done.out_lines[2:]] == [
        [f"{widgets.namespace}/low", "v1", "ratchets"]
    ]


def test_check_exits_0_when_nothing_is_rejected(
    kapi: Kapi, widgets: Widgets, tmp_path: Path
) -> None:
    loosened = copy.deepcopy(widgets.crd)
    _spec_schema(loosened)["count"]["maximum"] = 100
    name = f"customresourcedefinition/sprockets.{widgets.group}"
    done = kapi.run("crd", "check", "-f", manifest(tmp_path, loosened))
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.out_lines == [
        f"{name}: every stored object is accepted on create by the new schema"
    ]
    same = kapi.run("crd", "check", "-f", manifest(tmp_path, widgets.crd))
    assert (same.returncode, same.stderr) == (0, ""), same
    assert same.out_lines == [
        f"{name}: the spec is unchanged, nothing to check "
        "(the server checks stored objects against a changed spec only)"
    ]


def test_check_of_a_new_crd_exits_0(kapi: Kapi, tmp_path: Path) -> None:
    crd = widget_crd(unique("preflight") + ".example.com")
    done = kapi.run("crd", "check", "-f", manifest(tmp_path, crd))
    assert (done.returncode, done.stderr) == (0, ""), done
    assert done.out_lines == [
        f"customresourcedefinition/{crd['metadata']['name']} does not exist yet: "
        "no stored objects to check"
    ]


def test_check_exits_3_when_the_server_refuses_the_crd(
    kapi: Kapi, widgets: Widgets, tmp_path: Path
) -> None:
    broken = tightened(widgets.crd)
    broken["spec"]["scope"] = "Cluster"  # immutable
    done = kapi.run("crd", "check", "-f", manifest(tmp_path, broken))
    assert done.returncode == 3, done
    assert done.stdout == ""
    assert done.err_lines == [
        f'The CustomResourceDefinition "sprockets.{widgets.group}" is invalid: '
        'spec.scope: Invalid value: "Cluster": field is immutable'
    ]


def test_check_refuses_other_kinds(kapi: Kapi, tmp_path: Path) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap"}))
    done = kapi.run("crd", "check", "-f", str(path))
    assert done.returncode == 3, done
    assert done.err_lines == [f"error: {path}: ConfigMap is not a CustomResourceDefinition"]


class _OtherServer(BaseHTTPRequestHandler):
    """A server that is not kapi: it answers ``/version`` as kube-apiserver does."""

    def do_GET(self) -> None:
        body = json.dumps({"major": "1", "minor": "34", "gitVersion": "v1.34.1"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return None


def test_check_refuses_a_server_that_is_not_kapi(kapi: Kapi, tmp_path: Path) -> None:
    """Without the report, another server's dry run would read as "every object accepted"."""
    other = ThreadingHTTPServer(("127.0.0.1", 0), _OtherServer)
    thread = threading.Thread(target=other.serve_forever, daemon=True)
    thread.start()
    try:
        config = tmp_path / "kubeconfig"
        config.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {
                            "name": "k",
                            "cluster": {"server": f"http://127.0.0.1:{other.server_port}"},
                        }
                    ],
                    "users": [{"name": "k", "user": {}}],
                    "contexts": [{"name": "k", "context": {"cluster": "k", "user": "k"}}],
                    "current-context": "k",
                }
            )
        )
        crd = widget_crd(unique("preflight") + ".example.com")
        done = Kapi({**kapi.env, "KUBECONFIG": str(config)}).run(
            "crd", "check", "-f", manifest(tmp_path, crd)
        )
    finally:
        other.shutdown()
        other.server_close()
    assert done.returncode == 3, done
    assert done.stdout == ""
    assert done.err_lines == [
        "error: the server (v1.34.1) is not kapi: "
        "the pre-flight report of a dry-run CRD update is a kapi extension"
    ]


# -- with ratcheting off ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def no_ratcheting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(
        tmp_path_factory,
        "no-ratcheting",
        "--emulated-version",
        "1.32",
        "--feature-gates",
        "CRDValidationRatcheting=false",
    )


def test_without_ratcheting_nothing_ratchets(no_ratcheting: KapiServer) -> None:
    with no_ratcheting.client() as http:
        created = http.post("/api/v1/namespaces", json={"metadata": {"name": "demo"}})
        assert created.status_code == 201, created.text
        widgets = install(http, "demo")
        response = http.put(
            widgets.crd_path, params={"dryRun": "All"}, json=tightened(widgets.crd, embedded=False)
        )
        assert response.status_code == 200, response.text
        assert warnings(response) == [
            "preflight: 1 of 3 stored Sprocket objects would be rejected on create by the new "
            "schema: 0 accepted unchanged (ratcheting), 1 rejected even unchanged",
            f"preflight: v1 demo/low: {REJECTED}: {LOW}",
        ]
