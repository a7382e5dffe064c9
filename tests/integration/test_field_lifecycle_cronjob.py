"""KEP-2558 on a generated kind: a CronJob's pod template field behind an alpha gate.

A pod's ``spec.resources`` (pod-level requests and limits) is behind
PodLevelResources, alpha and off by default in 1.33 (upstream's ``+featureGate``
marker on PodSpec.Resources).  As upstream's pod strategies do, the field is
dropped from a new template and from an update that newly sets it, and kept on
a template that already had it; kapi says so in a Warning.  With the gate
turned on, setting the field warns that it is alpha.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags, start_server
from tests.helpers.kubectl import make_kubectl
from tests.helpers.objects import cronjob, unique

GATE = "PodLevelResources"
FIELD = "spec.jobTemplate.spec.template.spec.resources"
DROPPED = f"{FIELD}: dropped because the {GATE} feature gate is disabled"
ALPHA = (
    f"{FIELD}: alpha field (feature gate {GATE}); it may change or be removed in a future release"
)
RESOURCES = {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}
MERGE = {"content-type": "application/merge-patch+json"}


def cronjobs(namespace: str) -> str:
    return f"/apis/batch/v1/namespaces/{namespace}/cronjobs"


def with_pod_resources(name: str) -> dict[str, Any]:
    pod = {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "busybox"}],
        "resources": RESOURCES,
    }
    return cronjob(name, pod)


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return spec


def warnings(response: httpx.Response) -> list[str]:
    """The Warning header texts (code 299, agent "-")."""
    return [value.split('"')[1] for value in response.headers.get_list("warning")]


@pytest.fixture(scope="module")
def gate_on(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(tmp_path_factory, "pod-level-on", f"--feature-gates={GATE}=true")


def test_create_drops_the_disabled_field_with_a_warning(http: httpx.Client, namespace: str) -> None:
    name = unique("cj")
    created = http.post(cronjobs(namespace), json=with_pod_resources(name))
    assert created.status_code == 201, created.text
    assert "resources" not in pod_spec(created.json())
    assert warnings(created) == [DROPPED]
    stored = http.get(f"{cronjobs(namespace)}/{name}")
    assert stored.status_code == 200
    assert "resources" not in pod_spec(stored.json())


def test_update_that_newly_sets_the_disabled_field_drops_it(
    http: httpx.Client, namespace: str
) -> None:
    name = unique("cj")
    assert http.post(cronjobs(namespace), json=cronjob(name)).status_code == 201
    patch = {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"resources": RESOURCES}}}}}}
    patched = http.patch(f"{cronjobs(namespace)}/{name}", json=patch, headers=MERGE)
    assert patched.status_code == 200, patched.text
    assert "resources" not in pod_spec(patched.json())
    assert warnings(patched) == [DROPPED]
    stored = http.get(f"{cronjobs(namespace)}/{name}")
    assert "resources" not in pod_spec(stored.json())
    # A PUT of the whole object is an update too.
    body = stored.json()
    pod_spec(body)["resources"] = RESOURCES
    replaced = http.put(f"{cronjobs(namespace)}/{name}", json=body)
    assert replaced.status_code == 200, replaced.text
    assert "resources" not in pod_spec(replaced.json())
    assert warnings(replaced) == [DROPPED]


def test_alpha_field_warns_when_its_gate_is_on(gate_on: KapiServer) -> None:
    name = unique("cj")
    with gate_on.client() as http:
        created = http.post(cronjobs("default"), json=with_pod_resources(name))
        assert created.status_code == 201, created.text
        assert pod_spec(created.json())["resources"] == RESOURCES
        assert warnings(created) == [ALPHA]
        # Changing another field of the template does not re-warn on the unchanged one.
        patch = {"spec": {"schedule": "0 2 * * *"}}
        same = http.patch(f"{cronjobs('default')}/{name}", json=patch, headers=MERGE)
        assert same.status_code == 200, same.text
        assert pod_spec(same.json())["resources"] == RESOURCES
        assert warnings(same) == []


def test_kubectl_shows_the_alpha_field_warning(gate_on: KapiServer, tmp_path: Path) -> None:
    kubectl = make_kubectl(gate_on, tmp_path)
    manifest = tmp_path / "cronjob.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\n"
        "kind: CronJob\n"
        "metadata:\n  name: kubectl-alpha\n  namespace: default\n"
        "spec:\n"
        "  schedule: '0 1 * * *'\n"
        "  jobTemplate:\n    spec:\n      template:\n        spec:\n"
        "          restartPolicy: Never\n"
        "          containers:\n          - name: c\n            image: busybox\n"
        "          resources:\n            requests:\n              cpu: '1'\n"
        "            limits:\n              cpu: '1'\n"
    )
    result = kubectl.run("create", "-f", str(manifest))
    assert result.returncode == 0, str(result)
    assert result.stdout == "cronjob.batch/kubectl-alpha created\n"
    assert result.stderr == f"Warning: {ALPHA}\n"


def test_a_template_that_had_the_field_keeps_it_once_the_gate_is_off(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The same store, first served with the gate on, then with it off."""
    data = tmp_path_factory.mktemp("pod-level-restart") / "data"
    on = start_server(data, f"--feature-gates={GATE}=true")
    try:
        with on.client() as http:
            created = http.post(cronjobs("default"), json=with_pod_resources("kept"))
            assert created.status_code == 201, created.text
    finally:
        on.stop()
    off = start_server(data)
    try:
        with off.client() as http:
            patch = {"spec": {"schedule": "0 3 * * *"}}
            updated = http.patch(f"{cronjobs('default')}/kept", json=patch, headers=MERGE)
            assert updated.status_code == 200, updated.text
            assert pod_spec(updated.json())["resources"] == RESOURCES
            assert updated.json()["spec"]["schedule"] == "0 3 * * *"
            assert warnings(updated) == []
    finally:
        off.stop()
        shutil.rmtree(data, ignore_errors=True)
