"""``kubectl create cronjob``, which kubectl 1.32 and 1.33 send as protobuf, against kapi.

kubectl builds the CronJob itself, POSTs it as ``application/vnd.kubernetes.protobuf``
and asks for protobuf back, which it decodes with upstream's generated code to print
it: ``-o json`` on the create shows what kubectl read from kapi's protobuf answer.
A mutating webhook fills the job template with nearly every field of ``JobSpec`` and
``PodSpec`` that kubectl 1.32 knows (``tests/unit/fixtures/cronjob-job-spec.json``), so
that upstream's own decoder checks kapi's tables for the whole pod template.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kapi.apis.core_v1_pod_defaults import default_pod_template
from tests.conftest import KapiServer, serve_with_flags
from tests.helpers.admission import PROPAGATION, configure, review_answer, webhook
from tests.helpers.kubectl import Kubectl, make_kubectl
from tests.helpers.protobuf_requests import CONTENT_TYPE, PROTOBUF, PROTOBUF_VERSIONS
from tests.helpers.wait import eventually
from tests.tls import CertificateAuthority, ServingCertificate, make_ca, make_serving_cert
from tests.webhook_server import serve_webhook


def _valid_job_spec() -> dict[str, Any]:
    """The fixture made a valid CronJob job template, as the webhook's patch lands after
    defaulting: with the pod defaults, and less what upstream refuses there (a selector,
    which the controller generates, ``manualSelector: true``, a restart policy other than
    Never beside a pod failure policy, ephemeral containers, a block device without its
    claim, zero grace periods and success thresholds, hostPID with a shared process
    namespace).  The unit tests draw the refused fields through the tables instead."""
    path = Path(__file__).parents[1] / "unit" / "fixtures" / "cronjob-job-spec.json"
    spec = json.loads(path.read_text())
    del spec["selector"]
    spec["manualSelector"] = False
    pod = spec["template"]["spec"]
    pod["restartPolicy"] = "Never"
    del pod["ephemeralContainers"]
    pod["terminationGracePeriodSeconds"] = 30
    del pod["hostPID"]
    for container in pod["containers"] + pod["initContainers"]:
        container.pop("volumeDevices", None)
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            if isinstance(container.get(probe), dict):
                container[probe].pop("terminationGracePeriodSeconds", None)
        if isinstance(container.get("startupProbe"), dict):
            container["startupProbe"]["successThreshold"] = 1
    default_pod_template(spec["template"])
    return spec


JOB_SPEC = _valid_job_spec()
SCHEDULE = "*/1 * * * *"


def create_cronjob(name: str, *flags: str) -> tuple[str, ...]:
    """The command of the task: ``kubectl create cronjob NAME --image=busybox ... -- echo hi``."""
    return ("create", "cronjob", name, "--image=busybox", f"--schedule={SCHEDULE}", *flags)


def without_null_timestamps(value: Any) -> Any:
    """``value`` less the ``creationTimestamp: null`` that kubectl 1.32 and 1.33 print.

    Their ``ObjectMeta`` writes a zero ``creationTimestamp`` as ``null`` in nested
    metadata; the newest release (``omitzero``), and so kapi, leave it out.
    """
    if isinstance(value, dict):
        return {
            key: without_null_timestamps(item)
            for key, item in value.items()
            if not (key == "creationTimestamp" and item is None)
        }
    if isinstance(value, list):
        return [without_null_timestamps(item) for item in value]
    return value


@pytest.fixture(params=PROTOBUF_VERSIONS)
def pb_kubectl(request: pytest.FixtureRequest, kapi_server: KapiServer, tmp_path: Path) -> Kubectl:
    return make_kubectl(kapi_server, tmp_path, request.param)


#: What kube-apiserver adds to a container of ``busybox`` (no tag: pulled ``Always``).
CONTAINER_DEFAULTS = {
    "imagePullPolicy": "Always",
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
}


@pytest.mark.kubectl
def test_create_cronjob(pb_kubectl: Kubectl, namespace: str) -> None:
    k, ns = pb_kubectl, ("-n", namespace)
    assert k.ok(*ns, *create_cronjob("x"), "--", "echo", "hi").out_lines == [
        "cronjob.batch/x created"
    ]
    cronjob = k.json(*ns, "get", "cronjob", "x")
    assert cronjob["spec"]["schedule"] == SCHEDULE
    # With the pod-spec defaults kube-apiserver gives every pod template.
    assert cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"] == {
        "containers": [
            {
                "name": "x",
                "image": "busybox",
                "command": ["echo", "hi"],
                "resources": {},
                **CONTAINER_DEFAULTS,
            }
        ],
        "restartPolicy": "OnFailure",
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    }


@pytest.mark.kubectl
def test_create_cronjob_travels_as_protobuf(
    kapi_server: KapiServer, namespace: str, tmp_path: Path
) -> None:
    for version in PROTOBUF_VERSIONS:
        k = make_kubectl(kapi_server, tmp_path, version)
        result = k.run("-n", namespace, *create_cronjob(f"wire-{version[2:]}"), "-v=8")
        assert result.returncode == 0, str(result)
        # The request's header, then the response's.
        assert CONTENT_TYPE.findall(result.stderr) == [PROTOBUF, PROTOBUF], str(result)


@pytest.mark.kubectl
def test_printed_cronjob_is_the_stored_one(pb_kubectl: Kubectl, namespace: str) -> None:
    k, ns = pb_kubectl, ("-n", namespace)
    printed = json.loads(k.ok(*ns, *create_cronjob("p"), "-o", "json", "--", "date").stdout)
    stored = k.json(*ns, "get", "cronjob", "p")
    assert without_null_timestamps(printed) == stored
    assert stored["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"] == [
        {
            "name": "p",
            "image": "busybox",
            "command": ["date"],
            "resources": {},
            **CONTAINER_DEFAULTS,
        }
    ]


# -- every field, read back by kubectl ------------------------------------------------------


#: The gates, off by default in 1.33, of fields the fixture sets: as upstream does, a
#: server with them off drops those fields from the template (KEP-2558 follow-ups,
#: tests/integration/test_field_lifecycle_cronjob.py), so this server turns them on to
#: keep every field on the wire.
FIXTURE_GATES = (
    "ClusterTrustBundleProjection",  # projected sources[].clusterTrustBundle
    "CrossNamespaceVolumeDataSource",  # volumeClaimTemplate.spec.dataSourceRef.namespace
    "DynamicResourceAllocation",  # spec.resourceClaims, containers[].resources.claims
    "ImageVolume",  # volumes[].image
    "PodLevelResources",  # spec.resources
    "VolumeAttributesClass",  # volumeClaimTemplate.spec.volumeAttributesClassName
)


_TEMPLATE = "spec.jobTemplate.spec.template.spec"
_ALPHA = "alpha field (feature gate {}); it may change or be removed in a future release"
#: What kubectl prints of the fixture's fields behind the alpha gates among those.
ALPHA_WARNINGS = (
    f"Warning: {_TEMPLATE}.resources: {_ALPHA.format('PodLevelResources')}\n"
    f"Warning: {_TEMPLATE}.volumes[6].ephemeral.volumeClaimTemplate.spec.dataSourceRef.namespace: "
    f"{_ALPHA.format('CrossNamespaceVolumeDataSource')}\n"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KapiServer]:
    """A server of this module's own: the webhook configuration is cluster-wide."""
    gates = ",".join(f"{gate}=true" for gate in FIXTURE_GATES)
    yield from serve_with_flags(tmp_path_factory, "kapi-pb-cronjob", f"--feature-gates={gates}")


@pytest.fixture(scope="module")
def ca() -> CertificateAuthority:
    return make_ca()


@pytest.fixture(scope="module")
def cert(ca: CertificateAuthority, tmp_path_factory: pytest.TempPathFactory) -> ServingCertificate:
    return make_serving_cert(ca, tmp_path_factory.mktemp("certs"))


def fill_job_template(path: str, review: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Replaces the job template's spec that kubectl built with the fixture's."""
    ops = [{"op": "replace", "path": "/spec/jobTemplate/spec", "value": JOB_SPEC}]
    patch = base64.b64encode(json.dumps(ops).encode()).decode()
    return review_answer(review, allowed=True, patchType="JSONPatch", patch=patch)


def webhook_fills_the_template(http: httpx.Client, namespace: str) -> bool:
    """Whether a dry-run create of a bare CronJob comes back with the webhook's template.

    Until the server has read the new webhook configuration, the bare template
    is refused (a pod template's default restartPolicy, Always, is invalid in a
    job): that is "not yet", not a failure.
    """
    container = {"name": "c", "image": "busybox"}
    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "probe"},
        "spec": {
            "schedule": SCHEDULE,
            "jobTemplate": {"spec": {"template": {"spec": {"containers": [container]}}}},
        },
    }
    response = http.post(f"/apis/batch/v1/namespaces/{namespace}/cronjobs?dryRun=All", json=cronjob)
    if response.status_code == 422:
        return False
    assert response.status_code == 201, response.text
    return bool(response.json()["spec"]["jobTemplate"]["spec"] == JOB_SPEC)


@pytest.mark.kubectl
def test_every_job_template_field_reads_back_through_kubectl(
    server: KapiServer, cert: ServingCertificate, ca: CertificateAuthority, tmp_path: Path
) -> None:
    namespace = "rich"
    with server.client() as http, serve_webhook(cert, fill_job_template) as hook:
        created = http.post(
            "/api/v1/namespaces",
            json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        )
        assert created.status_code == 201, created.text
        rule = {
            "operations": ["CREATE"],
            "apiGroups": ["batch"],
            "apiVersions": ["v1"],
            "resources": ["cronjobs"],
        }
        configure(
            http,
            "mutatingwebhookconfigurations",
            "fill-job-template",
            [webhook("fill.example.com", hook.url("/fill"), ca, namespace, rules=[rule])],
        )
        eventually(
            lambda: webhook_fills_the_template(http, namespace),
            what="the webhook filling the job template",
            timeout=PROPAGATION,
        )

        for version in PROTOBUF_VERSIONS:
            k, ns = make_kubectl(server, tmp_path, version), ("-n", namespace)
            name = f"rich-{version[2:]}"
            result = k.run(*ns, *create_cronjob(name), "-o", "json")
            assert result.returncode == 0, str(result)
            assert result.stderr == ALPHA_WARNINGS, str(result)
            printed = json.loads(result.stdout)
            stored = k.json(*ns, "get", "cronjob", name)
            assert stored["spec"]["jobTemplate"]["spec"] == JOB_SPEC
            assert without_null_timestamps(printed) == stored, version
