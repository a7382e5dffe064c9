"""CronJob in protobuf: kubectl's own body, the pod template's wire forms, and round trips.

``KUBECTL_CRONJOB`` is the exact request body that kubectl 1.32.5 and 1.33.1 sent (both
send the same bytes) for ``kubectl create cronjob x --image=busybox --schedule="*/1 * * * *"
-- echo hi``, recorded by a logging proxy in front of a kapi server.  The pod specs of
the wire-form tests, and the field paths the rich CronJob is checked at, are written here
with the numbers of upstream's ``generated.proto`` (``k8s.io/api`` at kubernetes-1.33.0,
the release kapi models), independently of kapi's tables.  The rich job spec of
``fixtures/cronjob-job-spec.json`` (nearly every field kubectl 1.32 knows) is also read back
by kubectl's own decoder in ``tests/integration/test_kubectl_protobuf_cronjob.py``; the
1.33 fields newer than kubectl 1.32 are added here.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kapi.apis.generated import batch_v1beta1  # noqa: F401 -- registers CronJob for protobuf
from kapi.runtime import protobuf
from kapi.runtime.protowire import VARINT, MessageWriter, encode_varint, iter_fields

Object = dict[str, Any]

KUBECTL_CRONJOB = bytes.fromhex(
    "6b3873000a130a0862617463682f7631120743726f6e4a6f6212a5010a110a017812001a0022002a0032003800"
    "4200128d010a0b2a2f31202a202a202a202a1a002a7c0a110a017812001a0022002a00320038004200126732650a"
    "100a0012001a0022002a003200380042001251122a0a0178120762757379626f781a046563686f1a0268692a0042"
    "006a007200800100880100900100a201001a094f6e4661696c757265320042004a0052005800600068008201008a"
    "01009a0100c201001a001a002200"
)
#: What kubectl's CronJob is in JSON: its zero fields are left out, its structs kept.
KUBECTL_CRONJOB_JSON: Object = {
    "apiVersion": "batch/v1",
    "kind": "CronJob",
    "metadata": {"name": "x"},
    "spec": {
        "schedule": "*/1 * * * *",
        "jobTemplate": {
            "metadata": {"name": "x"},
            "spec": {
                "template": {
                    "metadata": {},
                    "spec": {
                        "containers": [
                            {
                                "name": "x",
                                "image": "busybox",
                                "command": ["echo", "hi"],
                                "resources": {},
                            }
                        ],
                        "restartPolicy": "OnFailure",
                    },
                }
            },
        },
    },
    "status": {},
}
JOB_SPEC: Object = json.loads(
    (Path(__file__).parent / "fixtures" / "cronjob-job-spec.json").read_text()
)


def envelope(api_version: str, kind: str, raw: bytes | MessageWriter) -> bytes:
    """A body as upstream writes it: ``runtime.Unknown`` with empty encoding and type."""
    type_meta = MessageWriter().string(1, api_version).string(2, kind)
    unknown = MessageWriter().message(1, type_meta).message(2, raw).string(3, "").string(4, "")
    return b"k8s\x00" + unknown.getvalue()


def raw_object(body: bytes) -> bytes:
    """The object's own message inside a body's ``runtime.Unknown``."""
    [raw] = [value for number, _, value in iter_fields(body[4:]) if number == 2]
    assert isinstance(raw, bytes)
    return raw


def occurrences(data: bytes, number: int) -> list[Any]:
    """Every value of one field number in a message, in wire order."""
    return [value for n, _, value in iter_fields(data) if n == number]


def field(data: bytes, *numbers: int) -> Any:
    """The value at a path of field numbers, the first occurrence at each step."""
    value: Any = data
    for number in numbers:
        value = occurrences(value, number)[0]
    return value


# -- kubectl's body --------------------------------------------------------------------------


def test_kubectl_cronjob_decodes_to_its_json_and_back() -> None:
    assert protobuf.decode(KUBECTL_CRONJOB) == KUBECTL_CRONJOB_JSON
    assert protobuf.encode(KUBECTL_CRONJOB_JSON) == KUBECTL_CRONJOB


def test_v1beta1_cronjob_has_the_same_message() -> None:
    body = envelope("batch/v1beta1", "CronJob", raw_object(KUBECTL_CRONJOB))
    beta = {**KUBECTL_CRONJOB_JSON, "apiVersion": "batch/v1beta1"}
    assert protobuf.decode(body) == beta
    assert protobuf.encode(beta) == body


def test_cronjob_list_items_have_no_type_meta() -> None:
    item = {k: v for k, v in KUBECTL_CRONJOB_JSON.items() if k not in ("apiVersion", "kind")}
    listed = {
        "apiVersion": "batch/v1",
        "kind": "CronJobList",
        "metadata": {"resourceVersion": "7"},
        "items": [item, {**item, "metadata": {"name": "y"}}],
    }
    body = protobuf.encode(listed)
    assert field(raw_object(body), 2) == raw_object(KUBECTL_CRONJOB)
    assert protobuf.decode(body) == listed


# -- the pod template's wire forms -----------------------------------------------------------


def cronjob_with_pod_spec(pod_spec: MessageWriter) -> bytes:
    """A CronJob body whose job's pod template has ``pod_spec`` (and nothing else is set)."""
    template = MessageWriter().message(2, pod_spec)  # PodTemplateSpec.spec
    job_spec = MessageWriter().message(6, template)  # JobSpec.template
    job_template = MessageWriter().message(2, job_spec)  # JobTemplateSpec.spec
    spec = MessageWriter().message(5, job_template)  # CronJobSpec.jobTemplate
    return envelope("batch/v1", "CronJob", MessageWriter().message(2, spec))


def quantity(text: str) -> MessageWriter:
    return MessageWriter().string(1, text)


def entry(key: str, value: MessageWriter | None = None) -> MessageWriter:
    out = MessageWriter().string(1, key)
    return out.message(2, value) if value is not None else out


def container(name: str) -> MessageWriter:
    return MessageWriter().string(1, name)


def local_reference(name: str) -> MessageWriter:
    return MessageWriter().message(1, MessageWriter().string(1, name))


def int_or_string(value: int | str) -> MessageWriter:
    if isinstance(value, str):
        return MessageWriter().varint(1, 1).string(3, value)
    return MessageWriter().varint(1, 0).varint(2, value)


def packed(*values: int) -> bytes:
    return b"".join(encode_varint(value) for value in values)


_POD_SPECS: dict[str, tuple[MessageWriter, Object]] = {
    "quantities, an empty one and a missing map value read as 0": (
        MessageWriter().message(
            2,
            container("c").message(
                8,
                MessageWriter()
                .message(1, entry("cpu", quantity("500m")))
                .message(1, entry("memory", MessageWriter()))
                .message(2, entry("cpu")),
            ),
        ),
        {
            "containers": [
                {
                    "name": "c",
                    "resources": {
                        "limits": {"cpu": "500m", "memory": "0"},
                        "requests": {"cpu": "0"},
                    },
                }
            ]
        },
    ),
    "probe handlers are inline, ports are IntOrString": (
        MessageWriter().message(
            2,
            container("c")
            .message(
                10,
                MessageWriter()
                .message(
                    1,
                    MessageWriter().message(
                        2, MessageWriter().string(1, "/healthz").message(2, int_or_string("http"))
                    ),
                )
                .varint(4, 10),
            )
            .message(
                11,
                MessageWriter().message(
                    1, MessageWriter().message(3, MessageWriter().message(1, int_or_string(8080)))
                ),
            ),
        ),
        {
            "containers": [
                {
                    "name": "c",
                    "livenessProbe": {
                        "httpGet": {"path": "/healthz", "port": "http"},
                        "periodSeconds": 10,
                    },
                    "readinessProbe": {"tcpSocket": {"port": 8080}},
                }
            ]
        },
    ),
    "volume sources and local object references are inline": (
        MessageWriter().message(
            1,
            MessageWriter()
            .string(1, "cfg")
            .message(2, MessageWriter().message(19, local_reference("settings").varint(3, 420))),
        ),
        {"volumes": [{"name": "cfg", "configMap": {"name": "settings", "defaultMode": 420}}]},
    ),
    "env sources: divisor is a struct, shown as 0 when empty": (
        MessageWriter().message(
            2,
            container("c")
            .message(
                7,
                MessageWriter()
                .string(1, "CPU")
                .message(
                    3,
                    MessageWriter().message(
                        2, MessageWriter().string(2, "limits.cpu").message(3, MessageWriter())
                    ),
                ),
            )
            .message(
                7,
                MessageWriter()
                .string(1, "PASS")
                .message(3, MessageWriter().message(4, local_reference("s").string(2, "p"))),
            ),
        ),
        {
            "containers": [
                {
                    "name": "c",
                    "env": [
                        {
                            "name": "CPU",
                            "valueFrom": {
                                "resourceFieldRef": {"resource": "limits.cpu", "divisor": "0"}
                            },
                        },
                        {"name": "PASS", "valueFrom": {"secretKeyRef": {"name": "s", "key": "p"}}},
                    ],
                }
            ]
        },
    ),
    "a zero pointer is kept, a zero omitempty value left out": (
        MessageWriter()
        .message(
            2,
            container("c").varint(16, 0).message(15, MessageWriter().varint(2, 0).varint(4, 0)),
        )
        .varint(11, 0)
        .varint(37, 0),
        {
            "containers": [{"name": "c", "securityContext": {"privileged": False, "runAsUser": 0}}],
            "hostUsers": False,
        },
    ),
    "repeated numbers read unpacked and packed": (
        MessageWriter().message(
            14, MessageWriter().varint(4, 1000).varint(4, 2000).bytes(4, packed(3000, 4000))
        ),
        {"securityContext": {"supplementalGroups": [1000, 2000, 3000, 4000]}},
    ),
    "ephemeral containers inline their common fields": (
        MessageWriter().message(
            34,
            MessageWriter()
            .message(1, container("debugger").string(2, "busybox"))
            .string(2, "main"),
        ),
        {
            "ephemeralContainers": [
                {"name": "debugger", "image": "busybox", "targetContainerName": "main"}
            ]
        },
    ),
    "scheduling fields": (
        MessageWriter()
        .message(22, MessageWriter().string(1, "k").string(2, "Exists").varint(5, 30))
        .message(32, entry("cpu", quantity("250m")))
        .message(
            33,
            MessageWriter().varint(1, 1).string(2, "zone").string(3, "DoNotSchedule").varint(5, 2),
        )
        .message(36, MessageWriter().string(1, "linux")),
        {
            "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 30}],
            "overhead": {"cpu": "250m"},
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "minDomains": 2,
                }
            ],
            "os": {"name": "linux"},
        },
    ),
}


@pytest.mark.parametrize(("pod_spec", "expected"), _POD_SPECS.values(), ids=_POD_SPECS.keys())
def test_pod_spec_fields_decode_by_upstream_numbers(
    pod_spec: MessageWriter, expected: Object
) -> None:
    decoded = protobuf.decode(cronjob_with_pod_spec(pod_spec))
    assert decoded["spec"]["jobTemplate"]["spec"]["template"]["spec"] == expected


def test_repeated_numbers_are_written_unpacked_as_upstream_does() -> None:
    obj = copy.deepcopy(KUBECTL_CRONJOB_JSON)
    pod_spec = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    pod_spec["securityContext"] = {"supplementalGroups": [1000, 2000]}
    security_context = field(raw_object(protobuf.encode(obj)), 2, 5, 2, 6, 2, 14)
    assert list(iter_fields(security_context)) == [(4, VARINT, 1000), (4, VARINT, 2000)]


def test_a_packed_run_that_ends_inside_a_number_is_refused() -> None:
    pod_spec = MessageWriter().message(14, MessageWriter().bytes(4, b"\xe8"))
    with pytest.raises(protobuf.ObjectDecodeError, match="unexpected EOF"):
        protobuf.decode(cronjob_with_pod_spec(pod_spec))


# -- a CronJob with nearly every field -------------------------------------------------------


def rich_cronjob(api_version: str) -> Object:
    """The fixture's job spec, plus the 1.33 fields too new for kubectl 1.32, in a full CronJob."""
    job_spec = copy.deepcopy(JOB_SPEC)
    pod_spec = job_spec["template"]["spec"]
    main = pod_spec["containers"][0]
    main["lifecycle"]["stopSignal"] = "SIGUSR1"
    return {
        "apiVersion": api_version,
        "kind": "CronJob",
        "metadata": {"name": "rich", "namespace": "jobs", "labels": {"app": "rich"}},
        "spec": {
            "schedule": "0 3 * * *",
            "timeZone": "Etc/UTC",
            "startingDeadlineSeconds": 200,
            "concurrencyPolicy": "Forbid",
            "suspend": True,
            "jobTemplate": {"metadata": {"labels": {"app": "rich"}}, "spec": job_spec},
            "successfulJobsHistoryLimit": 0,
            "failedJobsHistoryLimit": 5,
        },
        "status": {
            "active": [
                {"kind": "Job", "namespace": "jobs", "name": "rich-1", "apiVersion": "batch/v1"}
            ],
            "lastScheduleTime": "2025-01-02T03:00:00Z",
            "lastSuccessfulTime": "2025-01-01T03:00:09Z",
        },
    }


@pytest.mark.parametrize("api_version", ["batch/v1", "batch/v1beta1"])
def test_rich_cronjob_round_trip(api_version: str) -> None:
    obj = rich_cronjob(api_version)
    body = protobuf.encode(obj)
    assert protobuf.decode(body) == obj
    assert protobuf.encode(protobuf.decode(body)) == body


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ((2, 8), b"Etc/UTC"),  # CronJobSpec.timeZone
        ((2, 6), 0),  # CronJobSpec.successfulJobsHistoryLimit: a zero pointer is written
        ((3, 4, 1), int(datetime(2025, 1, 2, 3, tzinfo=UTC).timestamp())),  # lastScheduleTime
        ((2, 5, 2, 16, 1, 1), b"0-2"),  # JobSpec.successPolicy.rules.succeededIndexes
        ((2, 5, 2, 6, 2, 2, 12, 3), b"SIGUSR1"),  # Lifecycle.stopSignal
        ((2, 5, 2, 6, 2, 2, 8, 1, 2, 1), b"500m"),  # Container.resources.limits["cpu"]
    ],
)
def test_rich_cronjob_fields_are_at_upstream_numbers(
    path: tuple[int, ...], expected: bytes | int
) -> None:
    assert field(raw_object(protobuf.encode(rich_cronjob("batch/v1"))), *path) == expected
