"""KEP-2558 follow-ups on writes of built-in kinds, driven by the same tags OpenAPI publishes.

Lease's ``spec.strategy`` and ``spec.preferredHolder`` are behind
CoordinatedLeaderElection: alpha in 1.31-1.32 and beta, still off by default,
in 1.33.  With the gate off they are dropped from new objects, with a
warning, and kept on objects that already had them; with the gate on at an
alpha release, setting them warns that the field is alpha.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import KapiServer, serve_with_flags, start_server
from tests.helpers.kubectl import make_kubectl
from tests.helpers.objects import unique

GATE = "CoordinatedLeaderElection"
DROPPED = f"spec.strategy: dropped because the {GATE} feature gate is disabled"
DROPPED_HOLDER = f"spec.preferredHolder: dropped because the {GATE} feature gate is disabled"
ALPHA = (
    f"spec.strategy: alpha field (feature gate {GATE}); it may change or be removed in a "
    "future release"
)
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def lease(name: str, **spec: str) -> dict[str, object]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name},
        "spec": {"holderIdentity": "a", **spec},
    }


def warnings(response: httpx.Response) -> list[str]:
    """The Warning header texts (code 299, agent "-")."""
    return [value.split('"')[1] for value in response.headers.get_list("warning")]


@pytest.fixture(scope="module")
def alpha_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    yield from serve_with_flags(
        tmp_path_factory,
        "lifecycle-alpha",
        "--emulated-version=1.32",
        f"--feature-gates={GATE}=true",
    )


def test_disabled_field_is_dropped_on_create_with_a_warning(http: httpx.Client) -> None:
    name = unique("lease")
    created = http.post(LEASES, json=lease(name, strategy="OldestEmulationVersion"))
    assert created.status_code == 201, created.text
    assert "strategy" not in created.json()["spec"]
    assert warnings(created) == [DROPPED]
    assert "strategy" not in http.get(f"{LEASES}/{name}").json()["spec"]


def test_update_that_newly_sets_a_disabled_field_drops_it(http: httpx.Client) -> None:
    name = unique("lease")
    assert http.post(LEASES, json=lease(name)).status_code == 201
    patched = http.patch(
        f"{LEASES}/{name}",
        json={"spec": {"preferredHolder": "b"}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert "preferredHolder" not in patched.json()["spec"]
    assert warnings(patched) == [DROPPED_HOLDER]


def test_alpha_field_warns_when_its_gate_is_on(alpha_server: KapiServer) -> None:
    name = unique("lease")
    with alpha_server.client() as http:
        created = http.post(LEASES, json=lease(name, strategy="OldestEmulationVersion"))
        assert created.status_code == 201, created.text
        assert created.json()["spec"]["strategy"] == "OldestEmulationVersion"
        assert warnings(created) == [ALPHA]
        # Re-sending the same value is not a new use of the field: no warning.
        same = http.patch(
            f"{LEASES}/{name}",
            json={"spec": {"holderIdentity": "c", "strategy": "OldestEmulationVersion"}},
            headers={"content-type": "application/merge-patch+json"},
        )
        assert same.status_code == 200, same.text
        assert warnings(same) == []


def test_kubectl_shows_the_alpha_field_warning(alpha_server: KapiServer, tmp_path: Path) -> None:
    kubectl = make_kubectl(alpha_server, tmp_path)
    manifest = tmp_path / "lease.yaml"
    manifest.write_text(
        "apiVersion: coordination.k8s.io/v1\n"
        "kind: Lease\n"
        "metadata:\n  name: kubectl-alpha\n  namespace: default\n"
        "spec:\n  holderIdentity: a\n  strategy: OldestEmulationVersion\n"
    )
    result = kubectl.run("create", "-f", str(manifest))
    assert result.returncode == 0, str(result)
    assert result.stdout == "lease.coordination.k8s.io/kubectl-alpha created\n"
    assert result.stderr == f"Warning: {ALPHA}\n"


def test_existing_objects_keep_a_field_after_its_gate_is_turned_off(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The same store, first served with the gate on, then with it off."""
    data = tmp_path_factory.mktemp("lifecycle-restart") / "data"
    on = start_server(data, f"--feature-gates={GATE}=true")
    try:
        with on.client() as http:
            created = http.post(LEASES, json=lease("kept", strategy="OldestEmulationVersion"))
            assert created.status_code == 201, created.text
            assert warnings(created) == []  # beta at 1.33: no warning
    finally:
        on.stop()
    off = start_server(data)
    try:
        with off.client() as http:
            updated = http.patch(
                f"{LEASES}/kept",
                json={"spec": {"holderIdentity": "b"}},
                headers={"content-type": "application/merge-patch+json"},
            )
            assert updated.status_code == 200, updated.text
            assert updated.json()["spec"]["strategy"] == "OldestEmulationVersion"
            assert warnings(updated) == []
    finally:
        off.stop()
        shutil.rmtree(data, ignore_errors=True)
