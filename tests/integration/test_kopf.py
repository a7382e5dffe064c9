"""A real kopf operator against a real ``kapi serve``.

The operator (tests/operators/widgets.py) runs as ``kopf run --standalone``
with kapi's kubeconfig, as an operator author would run it against a cluster.
The test drives a custom resource through create, update and delete and checks
what kopf leaves behind: its finalizer, handler results in ``status``, its
progress annotations, and the events it posts, read back over HTTP and with
kubectl (``describe`` lists them as it does against kube-apiserver).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from tests.conftest import KapiServer
from tests.helpers.kubectl import make_kubectl
from tests.helpers.wait import eventually

OPERATOR = Path(__file__).parent.parent / "operators" / "widgets.py"
GROUP, PLURAL, KIND = "kopf.kapi.test", "widgets", "Widget"
FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"
LAST_HANDLED = "kopf.zalando.org/last-handled-configuration"
DEADLINE = 30.0

T = TypeVar("T")


def eventually_while_running(operator: Operator, probe: Callable[[], T], what: str) -> T:
    """``eventually(probe)`` that fails at once, with the operator's log, if kopf exits."""

    def while_running() -> T:
        if operator.process.poll() is not None:
            pytest.fail(f"kopf exited before {what}; operator log:\n{operator.log()}")
        return probe()

    return eventually(
        while_running,
        what=what,
        timeout=DEADLINE,
        interval=0.1,
        details=lambda: f"operator log:\n{operator.log()}",
    )


class Operator:
    """``kopf run`` in a subprocess, its output in a file."""

    def __init__(self, server: KapiServer, namespace: str, log_path: Path) -> None:
        self.log_path = log_path
        env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")}
        env["KUBECONFIG"] = str(server.kubeconfig)
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kopf",
                    "run",
                    "--standalone",
                    f"--namespace={namespace}",
                    "--verbose",
                    str(OPERATOR),
                ],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": "widget", "kind": KIND},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"size": {"type": "integer"}},
                                },
                                "status": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


@pytest.fixture
def widgets(kapi_server: KapiServer) -> Iterator[str]:
    """The Widget CRD, established; its URL path prefix."""
    with kapi_server.client() as http:
        response = http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd())
        assert response.status_code == 201, response.text
        name = response.json()["metadata"]["name"]
        eventually(
            lambda: http.get(f"/apis/{GROUP}/v1").status_code == 200,
            what="the Widget CRD served",
            timeout=DEADLINE,
        )
        yield f"/apis/{GROUP}/v1"
        http.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")


@pytest.fixture
def operator(kapi_server: KapiServer, namespace: str, tmp_path: Path) -> Iterator[Operator]:
    running = Operator(kapi_server, namespace, tmp_path / "kopf.log")
    try:
        yield running
    finally:
        running.stop()


def _events_about(http: httpx.Client, namespace: str, uid: str) -> list[dict[str, Any]]:
    response = http.get(
        f"/api/v1/namespaces/{namespace}/events",
        params={"fieldSelector": f"involvedObject.uid={uid}"},
    )
    assert response.status_code == 200, response.text
    return response.json()["items"]


def _event(http: httpx.Client, namespace: str, uid: str, reason: str) -> dict[str, Any] | None:
    return next((e for e in _events_about(http, namespace, uid) if e["reason"] == reason), None)


def _logged(http: httpx.Client, namespace: str, uid: str, message: str) -> bool:
    events = _events_about(http, namespace, uid)
    return any(e["reason"] == "Logging" and e["message"] == message for e in events)


@pytest.mark.kubectl
def test_kopf_operator_handles_a_custom_resource_lifecycle(
    kapi_server: KapiServer,
    namespace: str,
    widgets: str,
    operator: Operator,
    tmp_path: Path,
) -> None:
    path = f"{widgets}/namespaces/{namespace}/{PLURAL}"
    with kapi_server.client() as http:
        created = http.post(
            path,
            json={
                "apiVersion": f"{GROUP}/v1",
                "kind": KIND,
                "metadata": {"name": "w1"},
                "spec": {"size": 3},
            },
        )
        assert created.status_code == 201, created.text
        uid = created.json()["metadata"]["uid"]

        def handled(key: str, result: dict[str, Any]) -> dict[str, Any] | None:
            widget = http.get(f"{path}/w1").json()
            return widget if (widget.get("status") or {}).get(key) == result else None

        # Create: kopf adds its finalizer first, then stores the handler's result in
        # status (through the status subresource) and what it handled in an annotation.
        widget = eventually_while_running(
            operator, lambda: handled("create_widget", {"size": 3}), "the create result"
        )
        assert FINALIZER in widget["metadata"]["finalizers"]
        annotations = widget["metadata"]["annotations"]
        assert '"size":3' in annotations[LAST_HANDLED]
        event = eventually_while_running(
            operator, lambda: _event(http, namespace, uid, "WidgetCreated"), "the create event"
        )
        assert event["type"] == "Normal"
        assert event["message"] == "widget w1 has size 3"
        assert event["involvedObject"]["kind"] == KIND
        assert event["involvedObject"]["name"] == "w1"
        assert event["source"]["component"] == "widget-operator"
        assert event["reportingComponent"] == "widget-operator"
        # kopf's log lines about the widget are posted as events with reason Logging.
        eventually_while_running(
            operator,
            lambda: _logged(http, namespace, uid, "Handler 'create_widget' succeeded."),
            "kopf's logging event",
        )

        # The same events through events.k8s.io/v1, by the group's own field names.
        response = http.get(
            f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
            params={"fieldSelector": f"regarding.uid={uid},reason=WidgetCreated"},
        )
        assert response.status_code == 200, response.text
        [item] = response.json()["items"]
        assert item["note"] == "widget w1 has size 3"
        assert item["regarding"]["name"] == "w1"
        assert item["reportingController"] == "widget-operator"

        # kubectl describe lists the widget's events, found by involvedObject fields.
        kubectl = make_kubectl(kapi_server, tmp_path, "1.33")
        described = kubectl.ok("describe", "-n", namespace, f"{PLURAL}.{GROUP}", "w1").stdout
        events_section = described.split("Events:", 1)[1]
        assert "WidgetCreated" in events_section
        assert "widget w1 has size 3" in events_section

        # A merge patch of the spec makes kopf run the update handler.
        patched = http.patch(
            f"{path}/w1",
            content=b'{"spec": {"size": 5}}',
            headers={"content-type": "application/merge-patch+json"},
        )
        assert patched.status_code == 200, patched.text
        # Update: the handler fails once, then succeeds on its first retry; kopf then
        # drops its progress annotation (a merge patch with null).
        updated = eventually_while_running(
            operator, lambda: handled("update_widget", {"size": 5, "retry": 1}), "the update result"
        )
        assert "kopf.zalando.org/update_widget" not in updated["metadata"]["annotations"]
        assert '"size":5' in updated["metadata"]["annotations"][LAST_HANDLED]
        eventually_while_running(
            operator,
            lambda: _logged(
                http, namespace, uid, "Handler 'update_widget' failed temporarily: not yet"
            ),
            "the temporary failure logged",
        )
        resized = eventually_while_running(
            operator, lambda: _event(http, namespace, uid, "WidgetResized"), "the update event"
        )
        assert resized["message"] == "3 -> 5"

        # Delete: the finalizer holds the widget until the delete handler has run.
        deleted = http.delete(f"{path}/w1")
        assert deleted.status_code == 200, deleted.text
        assert deleted.json()["metadata"]["deletionTimestamp"]
        eventually_while_running(
            operator, lambda: http.get(f"{path}/w1").status_code == 404, "the widget gone"
        )
        gone = eventually_while_running(
            operator, lambda: _event(http, namespace, uid, "WidgetDeleted"), "the delete event"
        )
        assert gone["type"] == "Warning"
        assert gone["message"] == "widget w1 is going away"
    assert operator.process.poll() is None, operator.log()
