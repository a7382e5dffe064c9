"""Pod spec validation with kube-apiserver's field paths and messages (one case per rule)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.apimachinery.field_errors import FieldError, Path
from kapi.apis.core_v1_pod_defaults import default_pod, default_pod_template
from kapi.apis.core_v1_pod_validation import (
    POD_UPDATE_FORBIDDEN_PREFIX,
    PodValidationOptions,
    validate_pod_create,
    validate_pod_spec,
    validate_pod_template_spec,
    validate_pod_update,
)

SPEC = Path("spec")
TEMPLATE = Path("spec", "template")
DNS_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def messages(errs: list[FieldError]) -> list[str]:
    return [e.error_message() for e in errs]


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "app", "image": "nginx:1.27", **fields}


def pod_spec(*containers: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A defaulted spec, as validation sees it after decoding and defaulting."""
    template: dict[str, Any] = {"spec": {"containers": list(containers) or [container()], **fields}}
    default_pod_template(template)
    spec: dict[str, Any] = template["spec"]
    return spec


def errors_of(spec: dict[str, Any]) -> list[str]:
    return messages(validate_pod_spec(spec, SPEC))


def test_valid_spec_has_no_errors() -> None:
    spec = pod_spec(
        container(
            ports=[{"name": "http", "containerPort": 80}],
            env=[{"name": "MODE", "value": "prod"}],
            resources={"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}},
            volumeMounts=[{"name": "data", "mountPath": "/data"}],
            livenessProbe={"httpGet": {"port": "http"}},
        ),
        volumes=[{"name": "data", "emptyDir": {}}],
    )
    assert errors_of(spec) == []


def test_containers_required() -> None:
    spec = pod_spec()
    spec["containers"] = []
    assert errors_of(spec) == ["spec.containers: Required value"]


def test_missing_defaults_are_required() -> None:
    assert messages(validate_pod_spec({"containers": [container()]}, SPEC)) == [
        "spec.terminationGracePeriodSeconds: Required value",
        "spec.containers[0].terminationMessagePolicy: Required value",
        "spec.containers[0].imagePullPolicy: Required value",
        "spec.restartPolicy: Required value",
        "spec.dnsPolicy: Required value",
    ]


def test_container_name_is_a_dns_label() -> None:
    spec = pod_spec(container(name="App_1"))
    assert errors_of(spec) == [f'spec.containers[0].name: Invalid value: "App_1": {DNS_LABEL_MSG}']


def test_container_name_required_and_unique() -> None:
    spec = pod_spec(container(name=""), container(), container())
    assert errors_of(spec) == [
        "spec.containers[0].name: Required value",
        'spec.containers[2].name: Duplicate value: "app"',
    ]


def test_init_container_name_unique_across_containers() -> None:
    spec = pod_spec(container(), initContainers=[container()])
    assert errors_of(spec) == ['spec.initContainers[0].name: Duplicate value: "app"']


def test_image_required() -> None:
    spec = pod_spec(container(image=""))
    assert errors_of(spec) == ["spec.containers[0].image: Required value"]


@pytest.mark.parametrize(
    ("port", "expected"),
    [
        ({"containerPort": 0}, ["spec.containers[0].ports[0].containerPort: Required value"]),
        (
            {"containerPort": 70000},
            [
                "spec.containers[0].ports[0].containerPort: Invalid value: 70000: "
                "must be between 1 and 65535, inclusive"
            ],
        ),
        (
            {"containerPort": 80, "hostPort": -1},
            [
                "spec.containers[0].ports[0].hostPort: Invalid value: -1: "
                "must be between 1 and 65535, inclusive"
            ],
        ),
        (
            {"containerPort": 80, "protocol": "ICMP"},
            [
                'spec.containers[0].ports[0].protocol: Unsupported value: "ICMP": '
                'supported values: "SCTP", "TCP", "UDP"'
            ],
        ),
        (
            {"containerPort": 80, "name": "HTTP"},
            [
                'spec.containers[0].ports[0].name: Invalid value: "HTTP": '
                "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                'spec.containers[0].ports[0].name: Invalid value: "HTTP": '
                "must contain at least one letter (a-z)",
            ],
        ),
        (
            {"containerPort": 80, "name": "a-very-long-port-name"},
            [
                'spec.containers[0].ports[0].name: Invalid value: "a-very-long-port-name": '
                "must be no more than 15 characters"
            ],
        ),
    ],
)
def test_ports(port: dict[str, Any], expected: list[str]) -> None:
    assert errors_of(pod_spec(container(ports=[port]))) == expected


def test_port_names_unique_and_host_ports_not_shared() -> None:
    spec = pod_spec(
        container(ports=[{"name": "web", "containerPort": 80, "hostPort": 8080}]),
        container(
            name="other",
            ports=[
                {"name": "web", "containerPort": 81},
                {"name": "web", "containerPort": 82, "hostPort": 8080},
            ],
        ),
    )
    assert errors_of(spec) == [
        'spec.containers[1].ports[1].name: Duplicate value: "web"',
        'spec.containers[1].ports[1].hostPort: Duplicate value: "TCP//8080"',
    ]


def test_env_var_names_relaxed_by_default() -> None:
    spec = pod_spec(container(env=[{"name": "1 ok"}, {"name": "A=B"}, {"name": ""}]))
    assert errors_of(spec) == [
        'spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable '
        "name must consist only of printable ASCII characters other than '='",
        "spec.containers[0].env[2].name: Required value",
    ]


def test_env_var_names_strict() -> None:
    spec = pod_spec(container(env=[{"name": "1BAD"}]))
    opts = PodValidationOptions(allow_relaxed_environment_variable_validation=False)
    assert messages(validate_pod_spec(spec, SPEC, opts=opts)) == [
        'spec.containers[0].env[0].name: Invalid value: "1BAD": a valid environment variable '
        "name must consist of alphabetic characters, digits, '_', '-', or '.', and must not "
        "start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex "
        "used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')"
    ]


def field_ref_env(name: str, field_path: str, api_version: str = "v1") -> dict[str, Any]:
    return {
        "name": name,
        "valueFrom": {"fieldRef": {"apiVersion": api_version, "fieldPath": field_path}},
    }


def test_env_value_from() -> None:
    spec = pod_spec(
        container(
            env=[
                {"name": "A", "valueFrom": {}},
                {
                    "name": "B",
                    "value": "x",
                    "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}},
                },
                field_ref_env("C", "status.phase"),
                field_ref_env("D", "spec.foo"),
                field_ref_env("E", "metadata.name", "v2"),
                field_ref_env("F", "metadata.labels['a b']"),
                field_ref_env("G", "spec.host"),
            ]
        )
    )
    env = "spec.containers[0].env"
    assert errors_of(spec) == [
        f'{env}[0].valueFrom: Invalid value: "": must specify one of: '
        "`fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        f'{env}[1].valueFrom: Invalid value: "": may not be specified when `value` is not empty',
        # a field the downward API knows, but not for environment variables
        f'{env}[2].valueFrom.fieldRef.fieldPath: Unsupported value: "status.phase": '
        'supported values: "metadata.name", "metadata.namespace", "metadata.uid", '
        '"spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", '
        '"status.podIP", "status.podIPs"',
        f'{env}[3].valueFrom.fieldRef.fieldPath: Invalid value: "spec.foo": '
        "error converting fieldPath: field label not supported: spec.foo",
        f'{env}[4].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.name": '
        "error converting fieldPath: unsupported pod version: v2",
        f'{env}[5].valueFrom.fieldRef: Invalid value: "a b": name part must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]


def test_requests_may_not_exceed_limits() -> None:
    spec = pod_spec(container(resources={"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}))
    assert errors_of(spec) == [
        'spec.containers[0].resources.requests: Invalid value: "2": '
        "must be less than or equal to cpu limit of 1"
    ]


def test_negative_and_unknown_resources() -> None:
    spec = pod_spec(
        container(
            resources={
                "limits": {"memory": "-1Gi", "gpu": "1"},
                "requests": {"example.com/dev": "0.5"},
            }
        )
    )
    assert errors_of(spec) == [
        'spec.containers[0].resources.limits[memory]: Invalid value: "-1Gi": '
        "must be greater than or equal to 0",
        "spec.containers[0].resources.limits[gpu]: Invalid value: gpu: "
        "must be a standard resource type or fully qualified",
        "spec.containers[0].resources.limits[gpu]: Invalid value: gpu: "
        "must be a standard resource for containers",
        "spec.containers[0].resources.requests[example.com/dev]: Invalid value: 500m: "
        "must be an integer",
        "spec.containers[0].resources.limits: Required value: "
        "Limit must be set for non overcommitable resources",
    ]


def test_extended_resources_request_equals_limit() -> None:
    spec = pod_spec(
        container(
            resources={"limits": {"example.com/dev": "2"}, "requests": {"example.com/dev": "1"}}
        )
    )
    assert errors_of(spec) == [
        'spec.containers[0].resources.requests: Invalid value: "1": '
        "must be equal to example.com/dev limit of 2"
    ]


def test_unparsable_quantity_in_a_free_form_template() -> None:
    spec = pod_spec(container(resources={"limits": {"cpu": "2 cores"}}))
    assert errors_of(spec) == [
        'spec.containers[0].resources.limits[cpu]: Invalid value: "2 cores": quantities must '
        "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    ]


def test_volume_names_required_valid_and_unique() -> None:
    spec = pod_spec(
        volumes=[
            {"name": "", "emptyDir": {}},
            {"name": "data", "emptyDir": {}},
            {"name": "data", "emptyDir": {}},
            {"name": "Bad", "emptyDir": {}},
        ]
    )
    assert errors_of(spec) == [
        "spec.volumes[0].name: Required value",
        'spec.volumes[2].name: Duplicate value: "data"',
        f'spec.volumes[3].name: Invalid value: "Bad": {DNS_LABEL_MSG}',
    ]


def test_volume_sources_exactly_one() -> None:
    spec = pod_spec(
        volumes=[
            {"name": "two", "secret": {"secretName": "s"}, "configMap": {"name": "c"}},
            {"name": "api", "emptyDir": {}, "downwardAPI": {}},
        ]
    )
    spec["volumes"].append({"name": "none"})  # after defaulting, as no client can send it
    assert errors_of(spec) == [
        "spec.volumes[0].configMap: Forbidden: may not specify more than 1 volume type",
        # upstream's own spelling of the path
        "spec.volumes[1].downwarAPI: Forbidden: may not specify more than 1 volume type",
        "spec.volumes[2]: Required value: must specify a volume type",
    ]


def test_volume_source_fields() -> None:
    spec = pod_spec(
        volumes=[
            {"name": "s", "secret": {"defaultMode": 1000}},
            {"name": "c", "configMap": {"name": "c", "items": [{"key": "k", "path": "../x"}]}},
            {"name": "h", "hostPath": {"path": "/a/../b", "type": "Dir"}},
            {"name": "p", "persistentVolumeClaim": {}},
        ]
    )
    assert errors_of(spec) == [
        "spec.volumes[0].secret.secretName: Required value",
        "spec.volumes[0].secret.defaultMode: Invalid value: 1000: "
        "must be a number between 0 and 0777 (octal), both inclusive",
        "spec.volumes[1].configMap.items[0].path: Invalid value: \"../x\": must not contain '..'",
        "spec.volumes[2].hostPath.path: Invalid value: \"/a/../b\": must not contain '..'",
        'spec.volumes[2].hostPath.type: Unsupported value: "Dir": supported values: "", '
        '"BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", '
        '"FileOrCreate", "Socket"',
        "spec.volumes[3].persistentVolumeClaim.claimName: Required value",
    ]


def test_volume_mounts_refer_to_volumes() -> None:
    spec = pod_spec(
        container(
            volumeMounts=[
                {"name": "data", "mountPath": "/data"},
                {"name": "missing", "mountPath": "/data"},
                {"name": "bad", "mountPath": ""},
            ]
        ),
        volumes=[{"name": "data", "emptyDir": {}}, {"name": "bad", "secret": {}}],
    )
    assert errors_of(spec) == [
        "spec.volumes[1].secret.secretName: Required value",
        'spec.containers[0].volumeMounts[1].name: Not found: "missing"',
        'spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/data": must be unique',
        # a mount of an invalid volume is not found either, as upstream
        'spec.containers[0].volumeMounts[2].name: Not found: "bad"',
        "spec.containers[0].volumeMounts[2].mountPath: Required value",
    ]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        (
            "restartPolicy",
            "Sometimes",
            'spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
            '"Always", "OnFailure", "Never"',
        ),
        (
            "dnsPolicy",
            "Google",
            'spec.dnsPolicy: Unsupported value: "Google": supported values: '
            '"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
        ),
        (
            "activeDeadlineSeconds",
            0,
            "spec.activeDeadlineSeconds: Invalid value: 0: "
            "must be between 1 and 2147483647, inclusive",
        ),
        ("hostname", "Web", f'spec.hostname: Invalid value: "Web": {DNS_LABEL_MSG}'),
    ],
)
def test_pod_level_fields(field: str, value: Any, expected: str) -> None:
    assert errors_of(pod_spec(**{field: value})) == [expected]


def test_container_enums() -> None:
    spec = pod_spec(container(imagePullPolicy="Sometimes", terminationMessagePolicy="Log"))
    assert errors_of(spec) == [
        'spec.containers[0].terminationMessagePolicy: Unsupported value: "Log": '
        'supported values: "File", "FallbackToLogsOnError"',
        'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": '
        'supported values: "Always", "IfNotPresent", "Never"',
    ]


def test_probes() -> None:
    spec = pod_spec(
        container(
            livenessProbe={"successThreshold": 2, "exec": {"command": ["true"]}},
            readinessProbe={"httpGet": {"port": 0}, "tcpSocket": {"port": 80}},
            startupProbe={"periodSeconds": -1, "exec": {"command": []}},
        )
    )
    assert errors_of(spec) == [
        "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
        "spec.containers[0].readinessProbe.httpGet.port: Invalid value: 0: "
        "must be between 1 and 65535, inclusive",
        "spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 "
        "handler type",
        "spec.containers[0].startupProbe.exec.command: Required value",
        "spec.containers[0].startupProbe.periodSeconds: Invalid value: -1: "
        "must be greater than or equal to 0",
    ]


def test_probe_needs_a_handler() -> None:
    spec = pod_spec(container(livenessProbe={}))
    assert errors_of(spec) == [
        "spec.containers[0].livenessProbe: Required value: must specify a handler type"
    ]


def test_init_containers_without_restart_always_have_no_probes() -> None:
    spec = pod_spec(
        initContainers=[
            container(name="init", readinessProbe={"exec": {"command": ["x"]}}),
            container(
                name="sidecar", restartPolicy="Always", readinessProbe={"exec": {"command": ["x"]}}
            ),
            container(name="odd", restartPolicy="OnFailure"),
        ]
    )
    assert errors_of(spec) == [
        "spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers "
        "without restartPolicy=Always",
        'spec.initContainers[2].restartPolicy: Unsupported value: "OnFailure": '
        'supported values: "Always"',
    ]


def test_regular_containers_have_no_restart_policy() -> None:
    spec = pod_spec(container(restartPolicy="Always"))
    assert errors_of(spec) == [
        "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"
    ]


def test_template_labels_annotations_and_ephemeral_containers() -> None:
    template: dict[str, Any] = {
        "metadata": {"labels": {"app": "bad value"}},
        "spec": {
            "containers": [container()],
            "ephemeralContainers": [{"name": "dbg", "image": "busybox"}],
        },
    }
    default_pod_template(template)
    assert messages(validate_pod_template_spec(template, TEMPLATE)) == [
        'spec.template.labels: Invalid value: "bad value": a valid label must be an empty string '
        "or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
        "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        "spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in "
        "pod template",
    ]


def test_template_without_containers() -> None:
    template: dict[str, Any] = {"metadata": {"labels": {"app": "web"}}}
    default_pod_template(template)
    assert messages(validate_pod_template_spec(template, TEMPLATE)) == [
        "spec.template.spec.containers: Required value"
    ]


def test_template_allows_leading_space_in_image_but_pod_does_not() -> None:
    spec = pod_spec(container(image=" nginx"))
    assert errors_of(spec) == []
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [container(image=" nginx")]}}
    default_pod(pod)
    assert messages(validate_pod_create(pod)) == [
        'spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing '
        "whitespace"
    ]


def test_pod_create_forbids_ephemeral_containers() -> None:
    pod = {
        "spec": {
            "containers": [container()],
            "ephemeralContainers": [{"name": "dbg", "image": "busybox"}],
        }
    }
    default_pod(pod)
    assert messages(validate_pod_create(pod)) == [
        "spec.ephemeralContainers: Forbidden: cannot be set on create"
    ]


def make_pod(**spec: Any) -> dict[str, Any]:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [container()], **spec}}
    default_pod(pod)
    return pod


def test_pod_update_may_change_image_and_add_tolerations() -> None:
    old = make_pod(activeDeadlineSeconds=100)
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "nginx:1.28"
    new["spec"]["activeDeadlineSeconds"] = 50
    new["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    assert validate_pod_update(new, old) == []


def test_pod_update_may_not_change_other_fields() -> None:
    old = make_pod()
    new = copy.deepcopy(old)
    new["spec"]["restartPolicy"] = "Never"
    errs = validate_pod_update(new, old)
    assert len(errs) == 1
    assert errs[0].field == "spec"
    assert (
        errs[0]
        .error_body()
        .startswith(
            "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
            "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
            "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to "
            "be set to 1 if it was previously negative)\n"
        )
    )
    assert errs[0].detail.startswith(POD_UPDATE_FORBIDDEN_PREFIX)
    assert "restartPolicy" in errs[0].detail


def test_pod_update_may_not_add_containers() -> None:
    old = make_pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"].append(container(name="two"))
    default_pod(new)
    assert messages(validate_pod_update(new, old)) == [
        "spec.containers: Forbidden: pod updates may not add or remove containers"
    ]


def test_pod_update_active_deadline_and_gates() -> None:
    old = make_pod(activeDeadlineSeconds=10, schedulingGates=[{"name": "a"}])
    new = copy.deepcopy(old)
    new["spec"]["activeDeadlineSeconds"] = 20
    assert messages(validate_pod_update(new, old)) == [
        "spec.activeDeadlineSeconds: Invalid value: 20: "
        "must be less than or equal to previous value"
    ]
    new["spec"]["activeDeadlineSeconds"] = 5
    new["spec"]["schedulingGates"] = [{"name": "a"}, {"name": "b"}]
    assert messages(validate_pod_update(new, old)) == [
        "spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new "
        "scheduling gate 'b'"
    ]
    del new["spec"]["activeDeadlineSeconds"]
    new["spec"]["schedulingGates"] = []
    assert messages(validate_pod_update(new, old)) == [
        "spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive "
        "integer to nil value"
    ]


def test_pod_update_tolerations_only_added() -> None:
    old = make_pod(tolerations=[{"key": "k", "operator": "Equal", "value": "v"}])
    new = copy.deepcopy(old)
    new["spec"]["tolerations"][0]["value"] = "w"
    assert messages(validate_pod_update(new, old)) == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its "
        "tolerationSeconds"
    ]


def test_host_network_ports() -> None:
    """A template may leave the host port to the Pod's defaulting; any other value must match."""
    ports = [{"containerPort": 80}, {"containerPort": 81, "hostPort": 8081}]
    spec = pod_spec(container(ports=ports), hostNetwork=True)
    assert errors_of(spec) == [
        "spec.containers[0].ports[1].hostPort: Invalid value: 8081: "
        "must match `containerPort` when `hostNetwork` is true"
    ]
    pod = {"spec": {"hostNetwork": True, "containers": [container(ports=ports[:1])]}}
    default_pod(pod)  # host port defaulted to the container port
    assert validate_pod_create(pod) == []
    pod["spec"]["containers"][0]["ports"][0]["hostPort"] = 0
    assert messages(validate_pod_create(pod)) == [
        "spec.containers[0].ports[0].hostPort: Invalid value: 0: "
        "must match `containerPort` when `hostNetwork` is true"
    ]


def test_tolerations() -> None:
    spec = pod_spec(
        tolerations=[
            {"operator": "Equal", "value": "v"},
            {"key": "k", "operator": "Exists", "value": "v"},
            {"key": "k", "operator": "In"},
            {"key": "k", "value": "v", "effect": "NoSchedule", "tolerationSeconds": 5},
            {"key": "k", "operator": "Exists", "effect": "Never"},
        ]
    )
    assert errors_of(spec) == [
        'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when '
        '`key` is empty, which means "match all values and all keys"',
        'spec.tolerations[1].operator: Invalid value: {"Key":"k","Operator":"Exists",'
        '"Value":"v","Effect":"","TolerationSeconds":null}: '
        "value must be empty when `operator` is 'Exists'",
        'spec.tolerations[2].operator: Unsupported value: "In": supported values: "Equal", '
        '"Exists"',
        'spec.tolerations[3].effect: Invalid value: "NoSchedule": effect must be '
        "'NoExecute' when `tolerationSeconds` is set",
        'spec.tolerations[4].effect: Unsupported value: "Never": supported values: '
        '"NoSchedule", "PreferNoSchedule", "NoExecute"',
    ]


def test_security_context_ids() -> None:
    spec = pod_spec(
        container(securityContext={"runAsUser": -1}),
        securityContext={"fsGroup": 2**31, "supplementalGroups": [1, -5]},
        shareProcessNamespace=True,
        hostPID=True,
    )
    assert errors_of(spec) == [
        "spec.containers[0].securityContext.runAsUser: Invalid value: -1: "
        "must be between 0 and 2147483647, inclusive",
        "spec.securityContext.fsGroup: Invalid value: 2147483648: "
        "must be between 0 and 2147483647, inclusive",
        "spec.securityContext.supplementalGroups[1]: Invalid value: -5: "
        "must be between 0 and 2147483647, inclusive",
        "spec.securityContext.shareProcessNamespace: Invalid value: true: "
        "ShareProcessNamespace and HostPID cannot both be enabled",
    ]


@pytest.mark.parametrize("cost", ["+1", "007", "1.5", "2147483648", "x"])
def test_pod_deletion_cost_annotation(cost: str) -> None:
    key = "controller.kubernetes.io/pod-deletion-cost"
    template: dict[str, Any] = {
        "metadata": {"annotations": {key: cost}},
        "spec": {"containers": [container()]},
    }
    default_pod_template(template)
    assert messages(validate_pod_template_spec(template, TEMPLATE)) == [
        f'spec.template.annotations[{key}]: Invalid value: "{cost}": must be a 32bit integer'
    ]
    template["metadata"]["annotations"][key] = "-10"
    assert validate_pod_template_spec(template, TEMPLATE) == []


def test_affinity() -> None:
    required_key = "requiredDuringSchedulingIgnoredDuringExecution"
    preferred_key = "preferredDuringSchedulingIgnoredDuringExecution"
    spec = pod_spec(
        affinity={
            "nodeAffinity": {
                required_key: {"nodeSelectorTerms": []},
                preferred_key: [
                    {
                        "weight": 0,
                        "preference": {
                            "matchExpressions": [{"key": "zone", "operator": "In"}],
                            "matchFields": [
                                {"key": "metadata.uid", "operator": "In", "values": ["a"]}
                            ],
                        },
                    }
                ],
            },
            "podAntiAffinity": {
                required_key: [
                    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": ""}
                ]
            },
        }
    )
    aff = "spec.affinity.nodeAffinity"
    term = f"spec.affinity.podAntiAffinity.{required_key}[0].topologyKey"
    assert errors_of(spec) == [
        f"{aff}.{required_key}.nodeSelectorTerms: Required value: "
        "must have at least one node selector term",
        f"{aff}.{preferred_key}[0].weight: Invalid value: 0: must be in the range 1-100",
        f"{aff}.{preferred_key}[0].preference.matchExpressions[0].values: Required value: "
        "must be specified when `operator` is 'In' or 'NotIn'",
        f'{aff}.{preferred_key}[0].preference.matchFields[0].key: Invalid value: "metadata.uid": '
        "not a valid field selector key",
        f"{term}: Required value: can not be empty",
        f'{term}: Invalid value: "": name part must be non-empty',
        f'{term}: Invalid value: "": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]


def test_pod_update_empty_lists_equal_absent_ones() -> None:
    old = make_pod()
    new = copy.deepcopy(old)
    new["spec"]["volumes"] = []
    new["spec"]["nodeSelector"] = None
    assert validate_pod_update(new, old) == []


def test_topology_spread_constraints() -> None:
    spread = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    spec = pod_spec(
        topologySpreadConstraints=[
            {**spread, "maxSkew": 0},
            {**spread, "topologyKey": "", "whenUnsatisfiable": "Maybe"},
            {**spread, "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2},
        ]
    )
    path = "spec.topologySpreadConstraints"
    assert errors_of(spec) == [
        f"{path}[0].maxSkew: Invalid value: 0: must be greater than zero",
        f"{path}[1].topologyKey: Required value: can not be empty",
        f'{path}[1].whenUnsatisfiable: Unsupported value: "Maybe": supported values: '
        '"DoNotSchedule", "ScheduleAnyway"',
        f"{path}[2].minDomains: Invalid value: 2: can only use minDomains if "
        "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
    ]
    spec["topologySpreadConstraints"] = [spread, dict(spread)]
    assert errors_of(spec) == [
        f'{path}[0].{{topologyKey, whenUnsatisfiable}}: Duplicate value: "{{zone, DoNotSchedule}}"'
    ]


def test_dns_policy_none_needs_dns_config() -> None:
    assert errors_of(pod_spec(dnsPolicy="None")) == [
        "spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"
    ]


def test_dns_config() -> None:
    assert errors_of(pod_spec(dnsPolicy="None", dnsConfig={})) == [
        "spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver "
        "when `dnsPolicy` is None"
    ]
    spec = pod_spec(
        dnsConfig={
            "nameservers": ["1.1.1.1", "8.8.8.8", "9.9.9.9", "dns.example.com"],
            "searches": ["svc.cluster.local.", "Bad_Domain"],
            "options": [{"name": "ndots", "value": "2"}, {"value": "x"}],
        }
    )
    assert errors_of(spec) == [
        'spec.dnsConfig.nameservers: Invalid value: ["1.1.1.1","8.8.8.8","9.9.9.9",'
        '"dns.example.com"]: must not have more than 3 nameservers',
        'spec.dnsConfig.nameservers[3]: Invalid value: "dns.example.com": '
        "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        'spec.dnsConfig.searches[1]: Invalid value: "Bad_Domain": a lowercase RFC 1123 '
        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        "spec.dnsConfig.options[1]: Required value: must not be empty",
    ]


def test_readiness_and_scheduling_gates() -> None:
    spec = pod_spec(
        readinessGates=[{"conditionType": "example.com/ready"}, {"conditionType": "not ok"}],
        schedulingGates=[{"name": "example.com/quota"}, {"name": "example.com/quota"}],
    )
    assert errors_of(spec) == [
        'spec.readinessGates[1].conditionType: Invalid value: "not ok": name part must consist '
        "of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
        "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        'spec.schedulingGates[1]: Duplicate value: "example.com/quota"',
    ]
