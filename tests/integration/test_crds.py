"""CustomResourceDefinitions end to end: the real kubectl against a real ``kapi serve``."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import KapiServer
from tests.helpers.crds import GROUP, crontab, crontab_crd, wait_established, write_manifest
from tests.helpers.kubectl import Kubectl, Result
from tests.helpers.wait import eventually

pytestmark = pytest.mark.kubectl

DEPRECATED = (
    "Warning: stable.example.com/v1beta1 CronTab is deprecated; use stable.example.com/v1 CronTab"
)


@pytest.fixture
def crontabs(kubectl: Kubectl, tmp_path: Path, namespace: str) -> Any:
    """A two-version CronTab CRD, established; deleted afterwards."""
    crd = crontab_crd()
    kubectl.ok("apply", "-f", write_manifest(tmp_path, "crd.yaml", crd))
    wait_established(kubectl, crd["metadata"]["name"])
    yield crd
    kubectl.run("delete", "crd", crd["metadata"]["name"], "--wait=true")


def test_crd_is_established_with_accepted_names(kubectl: Kubectl, crontabs: Any) -> None:
    crd = kubectl.json("get", "crd", crontabs["metadata"]["name"])
    conditions = {c["type"]: c for c in crd["status"]["conditions"]}
    assert conditions["NamesAccepted"]["status"] == "True"
    assert conditions["NamesAccepted"]["reason"] == "NoConflicts"
    assert conditions["Established"]["status"] == "True"
    assert crd["status"]["acceptedNames"]["plural"] == "crontabs"
    assert crd["status"]["acceptedNames"]["listKind"] == "CronTabList"
    assert crd["status"]["storedVersions"] == ["v1"]
    assert crd["spec"]["conversion"] == {"strategy": "None"}


def test_get_by_plural_and_short_name_with_printer_columns(
    kubectl: Kubectl, crontabs: Any, namespace: str, tmp_path: Path
) -> None:
    kubectl.ok(
        "-n",
        namespace,
        "create",
        "-f",
        write_manifest(tmp_path, "ct.yaml", crontab("a", replicas=3)),
    )
    lines = kubectl.ok("-n", namespace, "get", "crontabs").out_lines
    assert lines[0].split() == ["NAME", "SPEC", "REPLICAS"]
    assert lines[1].split() == ["a", "*/5", "*", "*", "*", "*", "3"]
    wide = kubectl.ok("-n", namespace, "get", "crt", "-o", "wide").out_lines
    assert wide[0].split() == ["NAME", "SPEC", "REPLICAS", "IMAGE"]
    assert wide[1].split()[-1] == "busybox"


def test_objects_read_back_in_either_version(
    kubectl: Kubectl, crontabs: Any, namespace: str, tmp_path: Path
) -> None:
    kubectl.ok("-n", namespace, "create", "-f", write_manifest(tmp_path, "a.yaml", crontab("one")))
    result = kubectl.run(
        "-n",
        namespace,
        "create",
        "-f",
        write_manifest(tmp_path, "b.yaml", crontab("two", "v1beta1")),
    )
    assert result.returncode == 0, str(result)
    assert result.err_lines == [DEPRECATED]
    read = kubectl.run(
        "-n", namespace, "get", "crontabs.v1beta1.stable.example.com", "one", "-o", "json"
    )
    assert read.returncode == 0, str(read)
    assert read.err_lines == [DEPRECATED]
    one = json.loads(read.stdout)
    assert one["apiVersion"] == "stable.example.com/v1beta1"
    two = kubectl.json("-n", namespace, "get", "crontabs.v1.stable.example.com", "two")
    assert two["apiVersion"] == "stable.example.com/v1"
    assert two["spec"]["cronSpec"] == "*/5 * * * *"


def test_invalid_object_rejected_with_schema_messages(
    kubectl: Kubectl, crontabs: Any, namespace: str, tmp_path: Path
) -> None:
    bad = crontab("bad", replicas=0)
    bad["spec"]["cronSpec"] = "nope"
    result = kubectl.fails(
        "-n", namespace, "create", "-f", write_manifest(tmp_path, "bad.yaml", bad)
    )
    assert result.err_lines == [
        'The CronTab "bad" is invalid: ',
        '* spec.cronSpec: Invalid value: "nope": spec.cronSpec in body should match '
        "'^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'",
        "* spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or "
        "equal to 1",
    ]
    assert kubectl.run("-n", namespace, "get", "crontab", "bad").returncode == 1


def test_unknown_fields_pruned_or_rejected_per_field_validation(
    kubectl: Kubectl, crontabs: Any, namespace: str, tmp_path: Path
) -> None:
    obj = crontab("pruned")
    obj["spec"]["extra"] = True
    path = write_manifest(tmp_path, "p.yaml", obj)
    # kubectl validates strictly by default: the server refuses unknown fields.
    strict = kubectl.fails("-n", namespace, "create", "-f", path)
    assert strict.err_lines == [
        f'Error from server (BadRequest): error when creating "{path}": CronTab in version "v1" '
        'cannot be handled as a CronTab: strict decoding error: unknown field "spec.extra"'
    ]
    warned = kubectl.run("-n", namespace, "create", "--validate=warn", "-f", path)
    assert warned.returncode == 0, str(warned)
    assert warned.err_lines == ['Warning: unknown field "spec.extra"']
    stored = kubectl.json("-n", namespace, "get", "crontab", "pruned")
    assert "extra" not in stored["spec"]


def test_status_subresource_and_scale(
    kubectl: Kubectl, crontabs: Any, namespace: str, tmp_path: Path, kapi_server: KapiServer
) -> None:
    kubectl.ok(
        "-n",
        namespace,
        "create",
        "-f",
        write_manifest(tmp_path, "s.yaml", crontab("s", replicas=2)),
    )
    base = f"/apis/{GROUP}/v1/namespaces/{namespace}/crontabs/s"
    with kapi_server.client() as http:
        # Status changes through the main resource are ignored...
        http.patch(
            base,
            content=b'{"status":{"replicas":7}}',
            headers={"content-type": "application/merge-patch+json"},
        ).raise_for_status()
        assert "status" not in http.get(base).json()
        # ...and go through /status, where spec changes are ignored.
        response = http.patch(
            base + "/status",
            content=b'{"status":{"replicas":2},"spec":{"replicas":9}}',
            headers={"content-type": "application/merge-patch+json"},
        )
        assert response.status_code == 200, response.text
        assert response.json()["status"] == {"replicas": 2}
        assert response.json()["spec"]["replicas"] == 2
    kubectl.ok("-n", namespace, "scale", "crontab/s", "--replicas=5")
    assert kubectl.json("-n", namespace, "get", "crontab", "s")["spec"]["replicas"] == 5
    with kapi_server.client() as http:
        scale = http.get(base + "/scale").json()
    assert scale["kind"] == "Scale"
    assert scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 5}
    assert scale["status"] == {"replicas": 2}


def test_crd_deletion_removes_its_objects(
    kubectl: Kubectl, namespace: str, tmp_path: Path, kapi_server: KapiServer
) -> None:
    crd = crontab_crd("gonetabs", "GoneTab")
    kubectl.ok("apply", "-f", write_manifest(tmp_path, "crd.yaml", crd))
    wait_established(kubectl, crd["metadata"]["name"])
    obj = crontab("x")
    obj["kind"] = "GoneTab"
    kubectl.ok("-n", namespace, "create", "-f", write_manifest(tmp_path, "x.yaml", obj))
    kubectl.ok("delete", "crd", crd["metadata"]["name"])
    gonetabs = f"/apis/{GROUP}/v1/namespaces/{namespace}/gonetabs"
    with kapi_server.client() as http:
        eventually(
            lambda: http.get(gonetabs).status_code == 404,
            what=f"{gonetabs} to stop being served",
            timeout=10,
            interval=0.1,
        )
    # Re-creating the CRD shows no leftover objects.
    kubectl.ok("apply", "-f", write_manifest(tmp_path, "crd.yaml", crd))
    wait_established(kubectl, crd["metadata"]["name"])
    assert kubectl.json("-n", namespace, "get", "gonetabs")["items"] == []
    kubectl.ok("delete", "crd", crd["metadata"]["name"])


def test_unserved_version_is_not_found(
    kubectl: Kubectl, crontabs: Any, namespace: str, kapi_server: KapiServer, tmp_path: Path
) -> None:
    with kapi_server.client() as http:
        response = http.get(f"/apis/{GROUP}/v2/namespaces/{namespace}/crontabs")
    assert response.status_code == 404
    assert response.json()["reason"] == "NotFound"


def test_bad_crd_rejected_and_not_stored(kubectl: Kubectl, tmp_path: Path) -> None:
    crd = crontab_crd("badtabs", "BadTab")
    for version in crd["spec"]["versions"]:
        version["storage"] = True
    result = kubectl.fails("create", "-f", write_manifest(tmp_path, "bad.yaml", crd))
    assert "must have exactly one version marked as storage version" in result.stderr
    assert kubectl.run("get", "crd", "badtabs.stable.example.com").returncode == 1


def test_discovery_lists_the_custom_resource(crontabs: Any, kapi_server: KapiServer) -> None:
    with kapi_server.client() as http:
        listing = http.get(f"/apis/{GROUP}/v1").json()
        groups = http.get("/apis").json()
    entries = {r["name"]: r for r in listing["resources"]}
    assert entries["crontabs"]["kind"] == "CronTab"
    assert entries["crontabs"]["shortNames"] == ["crt"]
    assert entries["crontabs"]["namespaced"] is True
    assert entries["crontabs/scale"]["kind"] == "Scale"
    assert "crontabs/status" in entries
    group = next(g for g in groups["groups"] if g["name"] == GROUP)
    assert group["preferredVersion"]["version"] == "v1"


def test_strategic_merge_patch_is_unsupported(
    crontabs: Any, kapi_server: KapiServer, namespace: str, kubectl: Kubectl, tmp_path: Path
) -> None:
    kubectl.ok("-n", namespace, "create", "-f", write_manifest(tmp_path, "m.yaml", crontab("m")))
    with kapi_server.client() as http:
        response = http.patch(
            f"/apis/{GROUP}/v1/namespaces/{namespace}/crontabs/m",
            content=b'{"spec":{"replicas":2}}',
            headers={"content-type": "application/strategic-merge-patch+json"},
        )
    assert response.status_code == 415
    assert response.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )


def test_kubectl_apply_updates_a_custom_resource(
    kubectl: Kubectl, crontabs: Any, namespace: str, tmp_path: Path
) -> None:
    """kubectl reads the PATCH types from OpenAPI: for custom resources, no strategic merge."""
    obj = crontab("applied", replicas=1)
    assert kubectl.ok(
        "-n", namespace, "apply", "-f", write_manifest(tmp_path, "a.yaml", obj)
    ).out_lines == ["crontab.stable.example.com/applied created"]
    obj["spec"]["replicas"] = 4
    again = kubectl.ok("-n", namespace, "apply", "-f", write_manifest(tmp_path, "a.yaml", obj))
    assert again.out_lines == ["crontab.stable.example.com/applied configured"]
    assert kubectl.json("-n", namespace, "get", "crontab", "applied")["spec"]["replicas"] == 4


def test_default_columns_show_the_age(
    kubectl: Kubectl, crontabs: Any, namespace: str, tmp_path: Path
) -> None:
    """A version without printer columns gets NAME and AGE; the server renders the age."""
    kubectl.ok("-n", namespace, "create", "-f", write_manifest(tmp_path, "g.yaml", crontab("aged")))
    result = kubectl.run("-n", namespace, "get", "crontabs.v1beta1.stable.example.com")
    assert result.returncode == 0, str(result)
    header, row = result.out_lines
    assert header.split() == ["NAME", "AGE"]
    assert re.fullmatch(r"aged\s+\d+s", row), row


def test_custom_deprecation_warning_replaces_the_default(
    kubectl: Kubectl, crontabs: Any, namespace: str, tmp_path: Path
) -> None:
    crd = copy.deepcopy(crontabs)
    crd["spec"]["versions"][1]["deprecationWarning"] = "v1beta1 CronTabs go away in March"
    kubectl.ok("apply", "-f", write_manifest(tmp_path, "crd.yaml", crd))

    def reinstalled() -> Result | None:
        """The get, once the controller has reinstalled the CRD's resource after the update."""
        result = kubectl.run("-n", namespace, "get", "crontabs.v1beta1.stable.example.com")
        return result if result.err_lines != [DEPRECATED] else None

    result = eventually(reinstalled, what="the new deprecation warning", timeout=10, interval=0.1)
    assert result.returncode == 0, str(result)
    assert result.err_lines == [
        "Warning: v1beta1 CronTabs go away in March",
        f"No resources found in {namespace} namespace.",
    ]
    assert kubectl.run("-n", namespace, "get", "crontabs.v1.stable.example.com").err_lines == [
        f"No resources found in {namespace} namespace."
    ]


def test_malformed_scale_patch_is_a_bad_request(
    kubectl: Kubectl, crontabs: Any, namespace: str, tmp_path: Path, kapi_server: KapiServer
) -> None:
    kubectl.ok(
        "-n",
        namespace,
        "create",
        "-f",
        write_manifest(tmp_path, "m.yaml", crontab("ms", replicas=2)),
    )
    base = f"/apis/{GROUP}/v1/namespaces/{namespace}/crontabs/ms"
    with kapi_server.client() as http:
        response = http.patch(
            base + "/scale",
            content=b"{bad",
            headers={"content-type": "application/merge-patch+json"},
        )
        assert response.status_code == 400, response.text
        assert response.json()["message"] == (
            "error decoding patch: invalid character 'b' looking for beginning of object key string"
        )
        assert http.get(base).json()["spec"]["replicas"] == 2


def test_put_without_resource_version_is_refused(
    crontabs: Any, kapi_server: KapiServer, namespace: str, kubectl: Kubectl, tmp_path: Path
) -> None:
    """Custom resources and CRDs allow no unconditional update (upstream's strategies);
    patches stay conditional on the object they were applied to, so they pass."""
    kubectl.ok("-n", namespace, "create", "-f", write_manifest(tmp_path, "u.yaml", crontab("u")))
    path = f"/apis/{GROUP}/v1/namespaces/{namespace}/crontabs/u"
    with kapi_server.client() as http:
        before = http.get(path).json()
        response = http.put(path, json=crontab("u", replicas=4))
        assert response.status_code == 422
        status = response.json()
        assert status["reason"] == "Invalid"
        assert status["message"] == (
            f'crontabs.{GROUP} "u" is invalid: metadata.resourceVersion: Invalid value: 0x0: '
            "must be specified for an update"
        )
        assert status["details"]["kind"] == "crontabs"
        assert http.get(path).json() == before
        crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        crd_path = f"{crds}/{crontabs['metadata']['name']}"
        crd = http.get(crd_path).json()
        del crd["metadata"]["resourceVersion"]
        refused = http.put(crd_path, json=crd)
        assert refused.status_code == 422, refused.text
        assert refused.json()["message"].endswith(
            "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
        )
        with_version = {**crontab("u", replicas=4)}
        with_version["metadata"]["resourceVersion"] = before["metadata"]["resourceVersion"]
        assert http.put(path, json=with_version).status_code == 200
    patched = kubectl.ok(
        "-n", namespace, "patch", "crontab", "u", "--type=merge", "-p", '{"spec":{"replicas":5}}'
    )
    assert patched.out_lines == [f"crontab.{GROUP}/u patched"]
