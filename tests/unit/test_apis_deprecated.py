"""Deprecated built-in APIs: lifecycle data, emulation, conversion, validation, columns."""

from __future__ import annotations

import asyncio
import copy

import pytest

from kapi.apimachinery.field_errors import FieldError
from kapi.apis import batch, builtin_resources, core_v1_endpoints, discovery_v1, networking
from kapi.apis.core_v1_pod_defaults import default_pod_template
from kapi.features import FeatureGate
from kapi.runtime.scheme import Deprecation, GroupVersionKind, Lifecycle, Resource, Scheme
from kapi.version import DEFAULT_VERSION, Version


def messages(errs: list[FieldError]) -> list[str]:
    return [e.error_message() for e in errs]


def resource(kind: str) -> Resource:
    return next(r for r in builtin_resources() if r.kind == kind)


def scheme_at(version: str) -> Scheme:
    scheme = Scheme(Version.parse(version))
    for r in builtin_resources():
        scheme.add(r)
    return scheme


# --- lifecycle data (zz_generated.prerelease-lifecycle.go, KEP-4974) -------------------------


@pytest.mark.parametrize(
    ("kind", "version", "lifecycle"),
    [
        ("CronJob", "v1", Lifecycle(Version(1, 21))),
        (
            "CronJob",
            "v1beta1",
            Lifecycle(
                Version(1, 8),
                Version(1, 21),
                Version(1, 25),
                GroupVersionKind("batch", "v1", "CronJob"),
            ),
        ),
        ("Ingress", "v1", Lifecycle(Version(1, 19))),
        (
            "Ingress",
            "v1beta1",
            Lifecycle(
                Version(1, 14),
                Version(1, 19),
                Version(1, 22),
                GroupVersionKind("networking.k8s.io", "v1", "Ingress"),
            ),
        ),
        (
            "Endpoints",
            "v1",
            Lifecycle(
                Version(1, 0),
                Version(1, 33),
                None,
                GroupVersionKind("discovery.k8s.io", "v1", "EndpointSlice"),
            ),
        ),
        ("EndpointSlice", "v1", Lifecycle(Version(1, 21))),
    ],
)
def test_lifecycle_matches_upstream(kind: str, version: str, lifecycle: Lifecycle) -> None:
    assert resource(kind).versions[version].lifecycle == lifecycle


# Served (S), deprecated (D) or not served (-) at each emulated release.
_MATRIX = {
    ("batch", "cronjobs", "v1beta1"): {"1.20": "S", "1.21": "D", "1.24": "D", "1.25": "-"},
    ("batch", "cronjobs", "v1"): {"1.20": "-", "1.21": "S", "1.24": "S", "1.25": "S"},
    ("networking.k8s.io", "ingresses", "v1beta1"): {"1.20": "D", "1.21": "D", "1.24": "-"},
    ("networking.k8s.io", "ingresses", "v1"): {"1.20": "S", "1.24": "S", "1.33": "S"},
    ("", "endpoints", "v1"): {"1.20": "S", "1.32": "S", "1.33": "D"},
    ("discovery.k8s.io", "endpointslices", "v1"): {"1.20": "-", "1.21": "S", "1.33": "S"},
    ("flowcontrol.apiserver.k8s.io", "flowschemas", "v1beta1"): {
        "1.19": "-",
        "1.20": "S",
        "1.23": "D",
        "1.26": "-",
    },
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations", "v1beta3"): {
        "1.25": "-",
        "1.26": "S",
        "1.29": "D",
        "1.32": "-",
    },
    ("flowcontrol.apiserver.k8s.io", "flowschemas", "v1"): {"1.28": "-", "1.29": "S", "1.33": "S"},
}


@pytest.mark.parametrize(
    ("group", "plural", "version", "at", "state"),
    [(*key, at, state) for key, states in _MATRIX.items() for at, state in states.items()],
)
def test_served_and_deprecated_across_emulated_versions(
    group: str, plural: str, version: str, at: str, state: str
) -> None:
    scheme = scheme_at(at)
    found = scheme.lookup(group, version, plural)
    assert (found is not None) == (state != "-")
    if found is not None:
        assert (scheme.deprecation_warning(found, version) is not None) == (state == "D")


def test_warning_texts_and_removed_releases() -> None:
    scheme = scheme_at("1.21")
    cj, ing = resource("CronJob"), resource("Ingress")
    assert scheme.deprecation_warning(cj, "v1beta1") == (
        "batch/v1beta1 CronJob is deprecated in v1.21+, unavailable in v1.25+; use batch/v1 CronJob"
    )
    assert scheme.deprecation_warning(ing, "v1beta1") == (
        "networking.k8s.io/v1beta1 Ingress is deprecated in v1.19+, unavailable in v1.22+; "
        "use networking.k8s.io/v1 Ingress"
    )
    assert (scheme.removed_release(cj, "v1beta1"), scheme.removed_release(cj, "v1")) == ("1.25", "")
    ep = resource("Endpoints")
    at_1_33 = scheme_at("1.33")
    assert at_1_33.deprecation_warning(ep, "v1") == (
        "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
    )
    assert at_1_33.removed_release(ep, "v1") == ""


@pytest.mark.parametrize("at", ["1.21", "1.24", "1.33"])
def test_each_request_sees_the_deprecation_worked_out_when_the_kind_was_added(at: str) -> None:
    scheme = scheme_at(at)
    seen = 0
    for found in scheme.resources():
        for version in found.versions:
            warning = scheme.deprecation_warning(found, version)
            expected = (
                None
                if warning is None
                else Deprecation(warning, scheme.removed_release(found, version))
            )
            assert scheme.deprecation(found, version) == expected
            seen += expected is not None
    assert seen >= 1
    cj = resource("CronJob")
    scheme.remove(cj.group, cj.plural)
    assert scheme.deprecation(cj, "v1beta1") is None


def test_storage_prefixes_follow_upstream_etcd_layout() -> None:
    """``test/integration/etcd/data.go``: built-ins by resource whatever their group
    (ingresses under the singular, endpoints next to services), CRDs and custom
    resources under their group."""
    scheme = Scheme(DEFAULT_VERSION)
    for r in builtin_resources(FeatureGate()):
        scheme.add(r)
    prefixes = {r.plural: r.storage_prefix() for r in scheme.resources()}
    assert prefixes == {
        "namespaces": "/registry/namespaces/",
        "configmaps": "/registry/configmaps/",
        "secrets": "/registry/secrets/",
        "serviceaccounts": "/registry/serviceaccounts/",
        "services": "/registry/services/specs/",
        "endpoints": "/registry/services/endpoints/",
        "events": "/registry/events/",
        "pods": "/registry/pods/",
        "podtemplates": "/registry/podtemplates/",
        "replicationcontrollers": "/registry/controllers/",
        "nodes": "/registry/minions/",
        "resourcequotas": "/registry/resourcequotas/",
        "limitranges": "/registry/limitranges/",
        "persistentvolumes": "/registry/persistentvolumes/",
        "persistentvolumeclaims": "/registry/persistentvolumeclaims/",
        # Never written: computed on each read.
        "componentstatuses": "/registry/componentstatuses/",
        "mutatingwebhookconfigurations": "/registry/mutatingwebhookconfigurations/",
        "validatingwebhookconfigurations": "/registry/validatingwebhookconfigurations/",
        "customresourcedefinitions": "/registry/apiextensions.k8s.io/customresourcedefinitions/",
        "cronjobs": "/registry/cronjobs/",
        "deployments": "/registry/deployments/",
        "replicasets": "/registry/replicasets/",
        "statefulsets": "/registry/statefulsets/",
        "daemonsets": "/registry/daemonsets/",
        "controllerrevisions": "/registry/controllerrevisions/",
        "jobs": "/registry/jobs/",
        "horizontalpodautoscalers": "/registry/horizontalpodautoscalers/",
        "leases": "/registry/leases/",
        "endpointslices": "/registry/endpointslices/",
        "flowschemas": "/registry/flowschemas/",
        "prioritylevelconfigurations": "/registry/prioritylevelconfigurations/",
        "ingresses": "/registry/ingress/",
        "ingressclasses": "/registry/ingressclasses/",
        "networkpolicies": "/registry/networkpolicies/",
        "podsecuritypolicies": "/registry/podsecuritypolicy/",
        "poddisruptionbudgets": "/registry/poddisruptionbudgets/",
        "storageversions": "/registry/storageversions/",
        "storageversionmigrations": "/registry/storageversionmigrations/",
        "clusterroles": "/registry/clusterroles/",
        "clusterrolebindings": "/registry/clusterrolebindings/",
        "roles": "/registry/roles/",
        "rolebindings": "/registry/rolebindings/",
        "storageclasses": "/registry/storageclasses/",
        "volumeattachments": "/registry/volumeattachments/",
        "csidrivers": "/registry/csidrivers/",
        "csinodes": "/registry/csinodes/",
        "csistoragecapacities": "/registry/csistoragecapacities/",
        "priorityclasses": "/registry/priorityclasses/",
        "runtimeclasses": "/registry/runtimeclasses/",
        "certificatesigningrequests": "/registry/certificatesigningrequests/",
    }
    assert resource("Ingress").key("ns", "a") == "/registry/ingress/ns/a"


def test_discovery_names() -> None:
    shape = {
        kind: (r.plural, r.singular, r.short_names, r.categories, r.subresources)
        for kind in ("CronJob", "Ingress", "Endpoints", "EndpointSlice")
        for r in [resource(kind)]
    }
    assert shape == {
        "CronJob": ("cronjobs", "cronjob", ("cj",), ("all",), ("status",)),
        "Ingress": ("ingresses", "ingress", ("ing",), (), ("status",)),
        "Endpoints": ("endpoints", "endpoints", ("ep",), (), ()),
        "EndpointSlice": ("endpointslices", "endpointslice", (), (), ()),
    }


# --- conversion ---------------------------------------------------------------------------


def _ingress(spec: dict) -> dict:
    return {"metadata": {"name": "i", "namespace": "n"}, "spec": spec}


_V1BETA1_SPEC = {
    "backend": {"serviceName": "default", "servicePort": 80},
    "rules": [
        {
            "host": "a.example.com",
            "http": {
                "paths": [
                    {
                        "path": "/",
                        "pathType": "Prefix",
                        "backend": {"serviceName": "web", "servicePort": "http"},
                    },
                    {
                        "path": "/static",
                        "pathType": "Exact",
                        "backend": {
                            "resource": {
                                "apiGroup": "k8s.example.com",
                                "kind": "Bucket",
                                "name": "b",
                            },
                            "servicePort": 0,
                        },
                    },
                ]
            },
        }
    ],
}
_HUB_SPEC = {
    "defaultBackend": {"service": {"name": "default", "port": {"number": 80}}},
    "rules": [
        {
            "host": "a.example.com",
            "http": {
                "paths": [
                    {
                        "path": "/",
                        "pathType": "Prefix",
                        "backend": {"service": {"name": "web", "port": {"name": "http"}}},
                    },
                    {
                        "path": "/static",
                        "pathType": "Exact",
                        "backend": {
                            "resource": {
                                "apiGroup": "k8s.example.com",
                                "kind": "Bucket",
                                "name": "b",
                            }
                        },
                    },
                ]
            },
        }
    ],
}


def test_ingress_round_trips_between_v1beta1_and_v1() -> None:
    beta = _ingress(copy.deepcopy(_V1BETA1_SPEC))
    hub = networking.v1beta1_to_hub(beta)
    assert hub["spec"] == _HUB_SPEC
    assert networking.hub_to_v1beta1(hub) == beta
    # Conversion copies what it changes: neither the input nor the (shared) hub is edited.
    assert beta["spec"] == _V1BETA1_SPEC
    assert hub["spec"] == _HUB_SPEC


def test_ingress_backend_edge_cases() -> None:
    # A string port, even empty, names a service; an int 0 with no name does not.
    assert networking.v1beta1_to_hub(_ingress({"backend": {"servicePort": ""}}))["spec"] == {
        "defaultBackend": {"service": {"name": "", "port": {}}}
    }
    assert networking.v1beta1_to_hub(_ingress({"backend": {"servicePort": 0}}))["spec"] == {
        "defaultBackend": {}
    }
    # servicePort is a Go struct: v1beta1 always shows it.
    hub = _ingress({"defaultBackend": {"resource": {"kind": "K", "name": "n"}}})
    assert networking.hub_to_v1beta1(hub)["spec"] == {
        "backend": {"resource": {"kind": "K", "name": "n"}, "servicePort": 0}
    }


def test_ingress_v1beta1_defaults_path_type() -> None:
    obj = _ingress({"rules": [{"http": {"paths": [{"path": "/a"}, {"pathType": "Exact"}]}}]})
    networking.default_v1beta1(obj)
    paths = obj["spec"]["rules"][0]["http"]["paths"]
    assert [p["pathType"] for p in paths] == ["ImplementationSpecific", "Exact"]


def test_scheme_converts_cronjobs_through_the_hub() -> None:
    scheme = scheme_at("1.24")
    cj = resource("CronJob")
    beta = {"apiVersion": "batch/v1beta1", "kind": "CronJob", "spec": {"schedule": "@daily"}}
    hub = asyncio.run(scheme.to_hub(cj, copy.deepcopy(beta), "v1beta1"))
    assert hub == {**beta, "apiVersion": "batch/v1"}
    assert asyncio.run(scheme.from_hub(cj, hub, "v1beta1")) == beta
    assert hub["apiVersion"] == "batch/v1"  # the hub object read is left as it was


# --- defaulting and validation ----------------------------------------------------------------


def test_cronjob_defaults() -> None:
    obj: dict = {"spec": {"schedule": "* * * * *", "suspend": True}}
    batch.default_cronjob(obj)
    assert obj["spec"] == {
        "schedule": "* * * * *",
        "suspend": True,
        "concurrencyPolicy": "Allow",
        "successfulJobsHistoryLimit": 3,
        "failedJobsHistoryLimit": 1,
    }


JOB_TEMPLATE: dict = {
    "spec": {
        "template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
        }
    }
}
default_pod_template(JOB_TEMPLATE["spec"]["template"])


def test_cronjob_validation_messages() -> None:
    strategy = batch.CronJobStrategy()
    name = "x" * 53
    obj = {
        "metadata": {"name": name},
        "spec": {
            "schedule": "TZ=UTC * *",
            "concurrencyPolicy": "Sometimes",
            "startingDeadlineSeconds": -1,
            "jobTemplate": JOB_TEMPLATE,
        },
    }
    assert messages(strategy.validate(obj)) == [
        'spec.schedule: Invalid value: "TZ=UTC * *": expected exactly 5 fields, found 2: [* *]',
        'spec.schedule: Invalid value: "TZ=UTC * *": cannot use TZ or CRON_TZ in schedule, '
        "use timeZone field instead",
        "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", '
        '"Forbid", "Replace"',
        f'metadata.name: Invalid value: "{name}": must be no more than 52 characters',
    ]
    empty = messages(strategy.validate({"spec": {}}))
    assert empty[:2] == ["spec.schedule: Required value", "spec.concurrencyPolicy: Required value"]
    # The (undefaulted, empty) job template is validated as a JobSpec too.
    assert empty[-1] == (
        "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: "
        'valid values: "OnFailure", "Never"'
    )
    # An object that already had TZ in its schedule may keep it, unless timeZone is set too.
    old = {"spec": {"schedule": "CRON_TZ=UTC 0 * * * *", "jobTemplate": JOB_TEMPLATE}}
    new = {"spec": {**old["spec"], "concurrencyPolicy": "Allow"}}
    assert strategy.validate_update(new, old) == []
    new["spec"]["timeZone"] = "UTC"
    assert messages(strategy.validate_update(new, old)) == [
        'spec.schedule: Invalid value: "CRON_TZ=UTC 0 * * * *": cannot use both timeZone field '
        "and TZ or CRON_TZ in schedule"
    ]


def test_ingress_validation_messages() -> None:
    strategy = networking.IngressStrategy()
    assert messages(strategy.validate(_ingress({}))) == [
        "spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"
    ]
    spec = {
        "defaultBackend": {"service": {"name": "Web", "port": {"number": 70000}}},
        "rules": [
            {"host": "10.0.0.1", "http": {"paths": []}},
            {
                "host": "*.example.com",
                "http": {
                    "paths": [
                        {"path": "/a//b", "pathType": "Prefix", "backend": {}},
                        {"path": "/", "backend": {"service": {"name": "w", "port": {}}}},
                        {"path": "x", "pathType": "Regex", "backend": {}},
                    ]
                },
            },
        ],
    }
    assert messages(strategy.validate(_ingress(spec))) == [
        'spec.defaultBackend.service.name: Invalid value: "Web": a DNS-1035 label must consist '
        "of lower case alphanumeric characters or '-', start with an alphabetic character, and "
        "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        "spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and "
        "65535, inclusive",
        'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
        "spec.rules[0].http.paths: Required value",
        "spec.rules[1].http.paths[0].path: Invalid value: \"/a//b\": must not contain '//'",
        'spec.rules[1].http.paths[0].backend: Invalid value: "": resource or service backend '
        "is required",
        "spec.rules[1].http.paths[1].pathType: Required value: pathType must be specified",
        'spec.rules[1].http.paths[2].pathType: Unsupported value: "Regex": supported values: '
        '"Exact", "ImplementationSpecific", "Prefix"',
        'spec.rules[1].http.paths[2].backend: Invalid value: "": resource or service backend '
        "is required",
    ]
    both = {"defaultBackend": {"service": {"name": "w", "port": {"name": "http", "number": 80}}}}
    assert messages(strategy.validate(_ingress(both))) == [
        'spec.defaultBackend: Invalid value: "": cannot set both port name & port number'
    ]


def test_ingress_class_annotation_must_match_on_create() -> None:
    obj = _ingress(
        {"ingressClassName": "a", "defaultBackend": {"resource": {"kind": "K", "name": "n"}}}
    )
    obj["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "b"}
    assert messages(networking.IngressStrategy().validate(obj)) == [
        'annotations.kubernetes.io/ingress.class: Invalid value: "b": must match '
        "`ingressClassName` when both are specified"
    ]


def test_endpoints_defaults_and_validation() -> None:
    obj = {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}
    core_v1_endpoints.default_endpoints(obj)
    assert obj["subsets"][0]["ports"][0]["protocol"] == "TCP"
    strategy = core_v1_endpoints.EndpointsStrategy()
    assert strategy.validate(obj) == []
    bad = {
        "subsets": [
            {},
            {
                "addresses": [{"ip": "127.0.0.1"}, {"ip": "nope"}],
                "ports": [
                    {"port": 0, "protocol": "ICMP"},
                    {"name": "b", "port": 1, "protocol": "TCP"},
                ],
            },
        ]
    }
    assert messages(strategy.validate(bad)) == [
        "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`",
        'subsets[1].addresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback '
        "range (127.0.0.0/8, ::1/128)",
        'subsets[1].addresses[1].ip: Invalid value: "nope": must be a valid IP address, (e.g. '
        "10.9.8.7 or 2001:db8::ffff)",
        "subsets[1].ports[0].name: Required value",
        "subsets[1].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        'subsets[1].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", '
        '"TCP", "UDP"',
    ]
    assert strategy.allow_create_on_update


def test_endpoint_slice_defaults_and_validation() -> None:
    obj = {"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}], "ports": [{}]}
    discovery_v1.default_endpoint_slice(obj)
    assert obj["ports"] == [{"name": "", "protocol": "TCP"}]
    strategy = discovery_v1.EndpointSliceStrategy()
    assert strategy.validate(obj) == []
    bad = {
        "addressType": "IPv4",
        "endpoints": [{"addresses": []}, {"addresses": ["::1", "169.254.1.1"]}],
        "ports": [{"name": "a", "protocol": "TCP"}, {"name": "a"}],
    }
    assert messages(strategy.validate(bad)) == [
        "endpoints[0].addresses: Required value: must contain at least 1 address",
        'endpoints[1].addresses[0]: Invalid value: "::1": must be a valid IPv4 address',
        'endpoints[1].addresses[1]: Invalid value: "169.254.1.1": may not be in the link-local '
        "range (169.254.0.0/16, fe80::/10)",
        'ports[1].name: Duplicate value: "a"',
        "ports[1].protocol: Required value",
    ]
    assert messages(strategy.validate({"addressType": "IP", "endpoints": []})) == [
        'addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"'
    ]
    fqdn = {"addressType": "FQDN", "endpoints": [{"addresses": ["localhost"]}]}
    assert messages(strategy.validate(fqdn)) == [
        'endpoints[0].addresses[0]: Invalid value: "localhost": should be a domain with at least '
        "two segments separated by dots"
    ]
    old = {"addressType": "IPv6", "endpoints": []}
    assert messages(strategy.validate_update({"addressType": "IPv4", "endpoints": []}, old)) == [
        'addressType: Invalid value: "IPv4": field is immutable'
    ]


# --- columns ----------------------------------------------------------------------------------


def cells(kind: str, obj: dict) -> list:
    return [c.cell(obj) for c in resource(kind).columns[:-1]]  # Age is time-dependent


def test_columns() -> None:
    assert [c.name for c in resource("CronJob").columns] == [
        "Name",
        "Schedule",
        "Timezone",
        "Suspend",
        "Active",
        "Last Schedule",
        "Age",
        "Containers",
        "Images",
        "Selector",
    ]
    # -o wide adds the pod template's containers and images and the job selector.
    cronjob_columns = [c for c in resource("CronJob").columns if c.name != "Age"]
    assert [c.priority for c in cronjob_columns] == [0] * 6 + [1] * 3
    cj = {"metadata": {"name": "c"}, "spec": {"schedule": "@daily"}, "status": {"active": [{}]}}
    assert [c.cell(cj) for c in cronjob_columns] == [
        *["c", "@daily", "<none>", "<unset>", 1, "<none>"],
        *["", "", "<none>"],
    ]
    containers = [{"name": "a", "image": "i:1"}, {"name": "b", "image": "i:2"}]
    job = {
        "selector": {"matchLabels": {"app": "x"}},
        "template": {"spec": {"containers": containers}},
    }
    cj["spec"]["jobTemplate"] = {"spec": job}
    assert [c.cell(cj) for c in cronjob_columns[-3:]] == ["a,b", "i:1,i:2", "app=x"]
    assert [c.name for c in resource("Ingress").columns] == [
        "Name",
        "Class",
        "Hosts",
        "Address",
        "Ports",
        "Age",
    ]
    ing = {
        "metadata": {"name": "i"},
        "spec": {"rules": [{"host": h} for h in ("a", "", "b", "c", "d")], "tls": [{}]},
        "status": {
            "loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.example.com"}]}
        },
    }
    assert cells("Ingress", ing) == [
        "i",
        "<none>",
        "a,b,c + 2 more...",
        "10.0.0.2,lb.e...",
        "80, 443",
    ]
    assert cells("Ingress", {"metadata": {"name": "j"}}) == ["j", "<none>", "*", "", "80"]
    assert [c.name for c in resource("Endpoints").columns] == ["Name", "Endpoints", "Age"]
    ep = {
        "metadata": {"name": "e"},
        "subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}], "ports": [{"port": 80}]},
            {"addresses": [{"ip": "10.0.0.3"}, {"ip": "10.0.0.4"}]},
        ],
    }
    assert cells("Endpoints", ep) == ["e", "10.0.0.1:80,[fd00::1]:80,10.0.0.3 + 1 more..."]
    assert cells("Endpoints", {"metadata": {"name": "e"}}) == ["e", "<none>"]
    assert [c.name for c in resource("EndpointSlice").columns] == [
        "Name",
        "AddressType",
        "Ports",
        "Endpoints",
        "Age",
    ]
    eps = {
        "metadata": {"name": "s"},
        "addressType": "IPv4",
        "ports": [{"port": 80}, {"name": "dns"}, {}],
        "endpoints": [{"addresses": ["10.0.0.1"]}],
    }
    assert cells("EndpointSlice", eps) == ["s", "IPv4", "80,dns,*", "10.0.0.1"]
    assert cells("EndpointSlice", {"metadata": {"name": "s"}, "addressType": "FQDN"}) == [
        "s",
        "FQDN",
        "<unset>",
        "<unset>",
    ]
