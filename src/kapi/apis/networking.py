"""networking.k8s.io ``Ingress`` in ``v1`` (hub and storage) and the deprecated ``v1beta1``,
and the extensions/v1beta1 Ingress, which shares their storage.

The versions differ in how a backend names its Service: v1beta1 has
``serviceName`` and an int-or-string ``servicePort``, v1 has
``service.name`` with ``service.port.number`` or ``service.port.name``; and
v1beta1's ``spec.backend`` is v1's ``spec.defaultBackend``.  Conversion
follows ``pkg/apis/networking/v1beta1/conversion.go``; v1beta1 defaults a
missing ``pathType`` to ``ImplementationSpecific`` while v1 requires it.
Validation follows ``ValidateIngressCreate`` / ``ValidateIngressUpdate`` and
``ValidateIngressStatusUpdate`` of ``pkg/apis/networking/validation`` as of
v1.33 (Service names are DNS-1035 labels); the strategy follows
``pkg/registry/networking/ingress``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError, Path, invalid, not_supported, required
from kapi.apimachinery.unstructured import Object
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.meta import kind_struct
from kapi.runtime.protobuf_messages import INGRESS_BETA, register_kind
from kapi.runtime.schema import INT32, STRING, Field, IntOrString, List, Scalar, Struct
from kapi.runtime.scheme import GroupVersionKind, Lifecycle, Resource, ResourceVersion
from kapi.version import Version

GROUP = "networking.k8s.io"
EXTENSIONS = "extensions"
#: The hub of extensions/v1beta1 Ingresses: networking.k8s.io/v1 objects, never served there.
EXTENSIONS_HUB = "__networking_v1"

EXACT, PREFIX, IMPLEMENTATION_SPECIFIC = "Exact", "Prefix", "ImplementationSpecific"
#: Sorted, as upstream's ``supportedPathTypes.List()`` reports them.
PATH_TYPES = (EXACT, IMPLEMENTATION_SPECIFIC, PREFIX)
_INVALID_PATH_SEQUENCES = ("//", "/./", "/../", "%2f", "%2F")
_INVALID_PATH_SUFFIXES = ("/..", "/.")
#: The ADDRESS cell is clipped to this many bytes outside ``-o wide``.
_LOAD_BALANCER_WIDTH = 16

# --- schema ---------------------------------------------------------------------------------

TypedLocalObjectReference = Struct(
    "io.k8s.api.core.v1.TypedLocalObjectReference",
    (
        Field("apiGroup", STRING, "The API group of the object; empty for the core group."),
        Field("kind", STRING, "The kind of the object.", required=True),
        Field("name", STRING, "The object's name.", required=True),
    ),
    "Names an object of a given kind in the same namespace.",
    map_type="atomic",
)

_RESOURCE_DOC = (
    "An object in the Ingress's namespace that serves the traffic instead of a Service; "
    "cannot be combined with service."
)
_CLASS_DOC = (
    "The IngressClass this Ingress belongs to; controllers read it to decide whether the "
    "Ingress is theirs."
)


def _backend_v1() -> Struct:
    port = Struct(
        "io.k8s.api.networking.v1.ServiceBackendPort",
        (
            Field("name", STRING, "The Service port, by its name; not with number."),
            Field("number", INT32, "The Service port, by its number; not with name."),
        ),
        "A port of a Service, by name or number.",
        map_type="atomic",
    )
    service = Struct(
        "io.k8s.api.networking.v1.IngressServiceBackend",
        (
            Field("name", STRING, "The Service's name, in the Ingress's namespace.", required=True),
            Field("port", port, "The Service port to send traffic to."),
        ),
        "A Service that receives traffic.",
    )
    return Struct(
        "io.k8s.api.networking.v1.IngressBackend",
        (
            Field("resource", TypedLocalObjectReference, _RESOURCE_DOC),
            Field(
                "service",
                service,
                "A Service receiving the traffic; cannot be combined with resource.",
            ),
        ),
        "Where matching traffic is sent: a Service port or another object.",
    )


def _backend_v1beta1(package: str = "networking") -> Struct:
    return Struct(
        f"io.k8s.api.{package}.v1beta1.IngressBackend",
        (
            Field("resource", TypedLocalObjectReference, _RESOURCE_DOC),
            Field("serviceName", STRING, "The Service's name."),
            Field("servicePort", IntOrString(), "The Service port, by name or number."),
        ),
        "Where matching traffic is sent: a Service port or another object.",
    )


def _ingress_schema(
    version: str, backend: Struct, default_backend_field: str, group: str = GROUP
) -> Struct:
    """The kind in ``version``: the same tree around a version-specific backend."""
    package = "extensions" if group == EXTENSIONS else "networking"
    prefix = f"io.k8s.api.{package}.{version}"
    path = Struct(
        f"{prefix}.HTTPIngressPath",
        (
            Field("backend", backend, "Where requests matching path are sent.", required=True),
            Field(
                "path",
                STRING,
                "The request path to match, starting with '/'.",
            ),
            Field(
                "pathType",
                Scalar("string", enum=PATH_TYPES),
                "How path is compared: Exact, Prefix (by '/'-separated elements) or "
                "ImplementationSpecific (up to the IngressClass).",
                required=version == "v1",
            ),
        ),
        "A request path and the backend it is sent to.",
    )
    http = Struct(
        f"{prefix}.HTTPIngressRuleValue",
        (Field("paths", List(path), "Paths and their backends.", required=True),),
        "The HTTP paths of a rule.",
    )
    rule = Struct(
        f"{prefix}.IngressRule",
        (
            Field(
                "host",
                STRING,
                "The host name to match, possibly with a '*.' wildcard; unset matches every host.",
            ),
            Field("http", http, "The paths routed for this host."),
        ),
        "Routing for one host (or every host): which paths go to which backend.",
    )
    tls = Struct(
        f"{prefix}.IngressTLS",
        (
            Field("hosts", List(STRING), "Host names the certificate is served for."),
            Field("secretName", STRING, "The Secret holding the certificate and key."),
        ),
        "A TLS certificate and the hosts it serves.",
    )
    port_status = Struct(
        f"{prefix}.IngressPortStatus",
        (
            Field("error", STRING, "What went wrong with this port, if anything."),
            Field("port", INT32, "The port number.", required=True),
            Field("protocol", STRING, "TCP, UDP or SCTP.", required=True),
        ),
        "The state of one port of an ingress point.",
    )
    lb_ingress = Struct(
        f"{prefix}.IngressLoadBalancerIngress",
        (
            Field(
                "hostname",
                STRING,
                "The DNS name of the ingress point, when it has one.",
            ),
            Field("ip", STRING, "The IP address of the ingress point, when it has one."),
            Field("ports", List(port_status), "The state of the point's ports."),
        ),
        "One address where the Ingress can be reached.",
    )
    lb_status = Struct(
        f"{prefix}.IngressLoadBalancerStatus",
        (
            Field(
                "ingress",
                List(lb_ingress),
                "The addresses where the Ingress can be reached.",
            ),
        ),
        "The addresses the load balancer reports.",
    )
    spec = Struct(
        f"{prefix}.IngressSpec",
        (
            Field(
                default_backend_field,
                backend,
                "Where requests that match no rule go; when unset the controller decides.",
            ),
            Field("ingressClassName", STRING, _CLASS_DOC),
            Field(
                "rules",
                List(rule),
                "Routing by host and path; without rules all traffic goes to the default backend.",
            ),
            Field("tls", List(tls), "Certificates for the hosts served over TLS on port 443."),
        ),
        "The routing asked of an Ingress.",
    )
    status = Struct(
        f"{prefix}.IngressStatus",
        (
            Field(
                "loadBalancer",
                lb_status,
                "The addresses of the load balancer.",
            ),
        ),
        "What the controller reports of an Ingress.",
    )
    return kind_struct(
        f"{prefix}.Ingress",
        ((group, version, "Ingress"),),
        (
            Field("spec", spec, "The routing asked for."),
            Field("status", status, "What the controller reports."),
        ),
        "HTTP(S) routing from outside the cluster to Services, by host and path.",
    )


IngressV1 = _ingress_schema("v1", _backend_v1(), "defaultBackend")
IngressV1beta1 = _ingress_schema("v1beta1", _backend_v1beta1(), "backend")
#: extensions/v1beta1 Ingress: networking.k8s.io/v1beta1's fields under the old group.
IngressExtensions = _ingress_schema("v1beta1", _backend_v1beta1(EXTENSIONS), "backend", EXTENSIONS)
# The same protobuf fields under the same numbers as networking.k8s.io/v1beta1.
register_kind(f"{EXTENSIONS}/v1beta1", "Ingress", INGRESS_BETA)

# --- conversion and defaulting --------------------------------------------------------------


def _paths(spec: Object) -> Iterator[Object]:
    """Every ``rules[*].http.paths[*]`` of a spec."""
    for rule in spec.get("rules") or ():
        yield from ((rule.get("http") or {}).get("paths") or ())


def _convert_backends(
    obj: Object, old_key: str, new_key: str, convert: Callable[[Object], Object]
) -> Object:
    """A copy of ``obj`` with every backend converted and ``spec.<old_key>`` renamed.

    Every read through v1beta1 converts, so only what changes is copied: the
    object, its spec, and each rule, ``http`` and path on the way to a backend
    (``convert`` builds new backends); the rest is shared with ``obj``, as the
    hub's own version shares it with no copy at all.
    """
    out = dict(obj)
    if not isinstance(obj.get("spec"), dict):
        return out
    spec = out["spec"] = dict(obj["spec"])
    if spec.get(old_key) is not None:
        spec[new_key] = convert(spec.pop(old_key))
    if spec.get("rules"):
        spec["rules"] = [_convert_rule(rule, convert) for rule in spec["rules"]]
    return out


def _convert_rule(rule: Object, convert: Callable[[Object], Object]) -> Object:
    http = rule.get("http")
    if not http or not http.get("paths"):
        return rule
    paths = [
        path if path.get("backend") is None else {**path, "backend": convert(path["backend"])}
        for path in http["paths"]
    ]
    return {**rule, "http": {**http, "paths": paths}}


def _backend_to_hub(backend: Object) -> Object:
    """``Convert_v1beta1_IngressBackend_To_networking_IngressBackend``."""
    out: Object = {}
    if backend.get("resource") is not None:
        out["resource"] = backend["resource"]
    name = backend.get("serviceName") or ""
    port = backend.get("servicePort", 0)
    if name or port != 0:  # a string port, even "", names a service too
        service_port: Object = {}
        if isinstance(port, str) and port:
            service_port["name"] = port
        elif isinstance(port, int) and port:
            service_port["number"] = port
        out["service"] = {"name": name, "port": service_port}
    return out


def _backend_from_hub(backend: Object) -> Object:
    """``Convert_networking_IngressBackend_To_v1beta1_IngressBackend``.

    ``servicePort`` is a struct in Go, so it is always written (0 when unset).
    """
    out: Object = {}
    if backend.get("resource") is not None:
        out["resource"] = backend["resource"]
    service = backend.get("service")
    port: int | str = 0
    if service is not None:
        if service.get("name"):
            out["serviceName"] = service["name"]
        service_port = service.get("port") or {}
        port = service_port.get("name") or service_port.get("number") or 0
    out["servicePort"] = port
    return out


def v1beta1_to_hub(obj: Object) -> Object:
    """``Convert_v1beta1_IngressSpec_To_networking_IngressSpec`` and the backends in it."""
    return _convert_backends(obj, "backend", "defaultBackend", _backend_to_hub)


def hub_to_v1beta1(obj: Object) -> Object:
    """``Convert_networking_IngressSpec_To_v1beta1_IngressSpec`` and the backends in it."""
    return _convert_backends(obj, "defaultBackend", "backend", _backend_from_hub)


def default_v1beta1(obj: Object) -> None:
    """``SetDefaults_HTTPIngressPath`` of v1beta1 (v1 has no Ingress defaults)."""
    for path in _paths(obj.get("spec") or {}):
        if path.get("pathType") is None:
            path["pathType"] = IMPLEMENTATION_SPECIFIC


# --- validation -----------------------------------------------------------------------------


def _host_errors(host: str) -> list[str]:
    if "*" in host:
        return validation.is_wildcard_dns1123_subdomain(host)
    return validation.is_dns1123_subdomain(host)


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def validate_backend(backend: Object, path: Path) -> list[FieldError]:
    """``validateIngressBackend``: exactly one of a resource or a service with one port."""
    resource, service = backend.get("resource"), backend.get("service")
    if resource is not None and service is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        ref_path = path.child("resource")
        group = resource.get("apiGroup")
        ref_errs: list[FieldError] = []
        if group is not None:
            group_path = ref_path.child("apiGroup")
            group_errs = validation.is_dns1123_subdomain(group)
            ref_errs += [invalid(group_path, group, m) for m in group_errs]
        ref_errs += [
            required(ref_path.child(k), f"{k} is required")
            for k in ("kind", "name")
            if not resource.get(k)
        ]
        return ref_errs
    if service is None:
        return [invalid(path, "", "resource or service backend is required")]
    errs: list[FieldError] = []
    name_path = path.child("service", "name")
    name = service.get("name") or ""
    if not name:
        errs.append(required(name_path))
    else:
        errs += [invalid(name_path, name, m) for m in validation.name_is_dns1035_label(name, False)]
    port = service.get("port") or {}
    port_name, number = port.get("name") or "", port.get("number") or 0
    if port_name and number:
        errs.append(invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        errs += [
            invalid(path.child("service", "port", "name"), port_name, m)
            for m in validation.is_valid_port_name(port_name)
        ]
    elif number:
        errs += [
            invalid(path.child("service", "port", "number"), number, m)
            for m in validation.is_valid_port_num(number)
        ]
    else:
        errs.append(required(path, "port name or number is required"))
    return errs


def validate_http_path(http_path: Object, path: Path) -> list[FieldError]:
    """``validateHTTPIngressPath``."""
    path_type = http_path.get("pathType")
    if path_type is None:
        return [required(path.child("pathType"), "pathType must be specified")]
    value = http_path.get("path") or ""
    value_path = path.child("path")
    errs: list[FieldError] = []
    if path_type in (EXACT, PREFIX):
        if not value.startswith("/"):
            errs.append(invalid(value_path, value, "must be an absolute path"))
        errs += [
            invalid(value_path, value, f"must not contain '{seq}'")
            for seq in _INVALID_PATH_SEQUENCES
            if seq in value
        ]
        errs += [
            invalid(value_path, value, f"cannot end with '{suffix}'")
            for suffix in _INVALID_PATH_SUFFIXES
            if value.endswith(suffix)
        ]
    elif path_type == IMPLEMENTATION_SPECIFIC:
        if value and not value.startswith("/"):
            errs.append(invalid(value_path, value, "must be an absolute path"))
    else:
        errs.append(not_supported(path.child("pathType"), path_type, PATH_TYPES))
    return errs + validate_backend(http_path.get("backend") or {}, path.child("backend"))


def validate_ingress_spec(spec: Object) -> list[FieldError]:
    """``ValidateIngressSpec`` (create rules: TLS secret names and wildcard rules checked)."""
    path = Path("spec")
    rules = spec.get("rules") or []
    errs: list[FieldError] = []
    if not rules and spec.get("defaultBackend") is None:
        errs.append(invalid(path, None, "either `defaultBackend` or `rules` must be specified"))
    if spec.get("defaultBackend") is not None:
        errs += validate_backend(spec["defaultBackend"], path.child("defaultBackend"))
    for i, rule in enumerate(rules):
        rule_path = path.child("rules").index(i)
        host = rule.get("host") or ""
        if host and _is_ip(host):
            errs.append(
                invalid(rule_path.child("host"), host, "must be a DNS name, not an IP address")
            )
        errs += (
            [invalid(rule_path.child("host"), host, m) for m in _host_errors(host)] if host else []
        )
        http = rule.get("http")
        if http is not None:
            http_path = rule_path.child("http")
            paths = http.get("paths") or []
            if not paths:
                errs.append(required(http_path.child("paths")))
            for j, item in enumerate(paths):
                errs += validate_http_path(item, http_path.child("paths").index(j))
    for i, tls in enumerate(spec.get("tls") or ()):
        tls_path = path.child("tls").index(i)
        for j, host in enumerate(tls.get("hosts") or ()):
            errs += [invalid(tls_path.child("hosts").index(j), host, m) for m in _host_errors(host)]
        secret = tls.get("secretName") or ""
        if secret:
            errs += [
                invalid(tls_path.child("secretName"), secret, m)
                for m in validation.name_is_dns_subdomain(secret, False)
            ]
    class_name = spec.get("ingressClassName")
    if class_name is not None:
        errs += [
            invalid(path.child("ingressClassName"), class_name, m)
            for m in validation.name_is_dns_subdomain(class_name, False)
        ]
    return errs


INGRESS_CLASS_ANNOTATION = "kubernetes.io/ingress.class"


INGRESS_CLASS_ANNOTATION_WARNING = (
    f'annotation "{INGRESS_CLASS_ANNOTATION}" is deprecated, '
    "please use 'spec.ingressClassName' instead"
)


def ingress_class_annotation_warnings(obj: Object) -> list[str]:
    """Upstream warns on create when only the legacy annotation names the class."""
    annotations = obj.get("metadata", {}).get("annotations") or {}
    if INGRESS_CLASS_ANNOTATION in annotations and _spec_of(obj).get("ingressClassName") is None:
        return [INGRESS_CLASS_ANNOTATION_WARNING]
    return []


def validate_ingress_class_annotation(obj: Object) -> list[FieldError]:
    """On create, the legacy class annotation must agree with ``ingressClassName``."""
    annotations = obj.get("metadata", {}).get("annotations") or {}
    class_name = (obj.get("spec") or {}).get("ingressClassName")
    value = annotations.get(INGRESS_CLASS_ANNOTATION)
    if value is not None and class_name is not None and value != class_name:
        path = Path("annotations").child(INGRESS_CLASS_ANNOTATION)
        return [invalid(path, value, "must match `ingressClassName` when both are specified")]
    return []


def validate_load_balancer_status(status: Object) -> list[FieldError]:
    """``ValidateIngressLoadBalancerStatus`` (IP syntax and hostnames)."""
    path = Path("status", "loadBalancer", "ingress")
    errs: list[FieldError] = []
    for i, entry in enumerate((status.get("loadBalancer") or {}).get("ingress") or ()):
        ip, hostname = entry.get("ip") or "", entry.get("hostname") or ""
        if ip and not _is_ip(ip):
            detail = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
            errs.append(invalid(path.index(i).child("ip"), ip, detail))
        if hostname:
            host_path = path.index(i).child("hostname")
            errs += [
                invalid(host_path, hostname, m) for m in validation.is_dns1123_subdomain(hostname)
            ]
            if _is_ip(hostname):
                errs.append(invalid(host_path, hostname, "must be a DNS name, not an IP address"))
    return errs


# --- strategy -------------------------------------------------------------------------------


class IngressStrategy(Strategy):
    """Upstream ``ingressStrategy``: generation and a status subresource.

    Not modelled: the relaxed rules upstream keeps for objects that already had
    invalid TLS secret names or wildcard-host rules.
    """

    has_generation = True
    has_status = True

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"loadBalancer": {}}  # the zero IngressStatus, as Go serialises it

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_ingress_spec(obj.get("spec") or {}) + validate_ingress_class_annotation(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_ingress_spec(new.get("spec") or {})

    def warnings_on_create(self, obj: Object) -> list[str]:
        return ingress_class_annotation_warnings(obj)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return validate_load_balancer_status(new.get("status") or {})


# --- resource -------------------------------------------------------------------------------


def _spec_of(obj: Object) -> Object:
    return obj.get("spec") or {}


def hosts_cell(obj: Object) -> str:
    """``formatHosts``: the first three rule hosts, ``*`` when none is set."""
    rules: list[Any] = _spec_of(obj).get("rules") or []
    hosts: list[str] = []
    more = False
    for rule in rules:
        more = more or len(hosts) == 3
        if not more and rule.get("host"):
            hosts.append(rule["host"])
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - 3} more..." if more else text


def address_cell(obj: Object) -> str:
    """``ingressLoadBalancerStatusStringer``: distinct IPs or hostnames, sorted, clipped."""
    entries = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or ()
    addresses = sorted({e.get("ip") or e.get("hostname") for e in entries} - {None, ""})
    text = ",".join(addresses)
    if len(text) > _LOAD_BALANCER_WIDTH:
        text = text[: _LOAD_BALANCER_WIDTH - 3] + "..."
    return text


INGRESS_COLUMNS = (
    NAME,
    Column(
        "Class",
        "string",
        "The IngressClass of the Ingress.",
        lambda o: _spec_of(o).get("ingressClassName") or "<none>",
    ),
    Column(
        "Hosts",
        "string",
        "The host names the rules match.",
        hosts_cell,
    ),
    Column(
        "Address",
        "string",
        "The load balancer's addresses.",
        address_cell,
    ),
    Column(
        "Ports",
        "string",
        "The ports served: 80, and 443 when TLS is set.",
        lambda o: "80, 443" if _spec_of(o).get("tls") else "80",
    ),
    AGE,
)


def _ingress_resource(
    group: str, versions: dict[str, ResourceVersion], hub: str, hub_api_version: str = ""
) -> Resource:
    return Resource(
        group=group,
        kind="Ingress",
        plural="ingresses",
        singular="ingress",
        namespaced=True,
        versions=versions,
        hub_version=hub,
        storage_version=hub,
        strategy=IngressStrategy(),
        short_names=("ing",),
        subresources=("status",),
        # Upstream's storage factory keys ingresses by the singular, in both groups.
        storage_resource="ingress",
        columns=INGRESS_COLUMNS,
        hub_api_version=hub_api_version,
    )


def resources() -> list[Resource]:
    """networking.k8s.io Ingresses, and the extensions/v1beta1 ones sharing their storage.

    extensions/v1beta1 Ingresses (1.1 to 1.22, deprecated in 1.14) are the
    same objects as networking.k8s.io/v1beta1's, stored as networking.k8s.io/v1
    under the same key, as upstream's storage factory cohabits the two groups.
    """
    replacement = GroupVersionKind(GROUP, "v1", "Ingress")
    return [
        _ingress_resource(
            GROUP,
            {
                "v1": ResourceVersion("v1", IngressV1, Lifecycle(introduced=Version(1, 19))),
                "v1beta1": ResourceVersion(
                    "v1beta1",
                    IngressV1beta1,
                    Lifecycle(
                        introduced=Version(1, 14),
                        deprecated=Version(1, 19),
                        removed=Version(1, 22),
                        replacement=replacement,
                    ),
                    default_v1beta1,
                    to_hub=v1beta1_to_hub,
                    from_hub=hub_to_v1beta1,
                ),
            },
            "v1",
        ),
        _ingress_resource(
            EXTENSIONS,
            {
                "v1beta1": ResourceVersion(
                    "v1beta1",
                    IngressExtensions,
                    Lifecycle(
                        introduced=Version(1, 1),
                        deprecated=Version(1, 14),
                        removed=Version(1, 22),
                        replacement=replacement,
                    ),
                    default_v1beta1,
                    to_hub=v1beta1_to_hub,
                    from_hub=hub_to_v1beta1,
                ),
                EXTENSIONS_HUB: ResourceVersion(EXTENSIONS_HUB, IngressV1, served=False),
            },
            EXTENSIONS_HUB,
            f"{GROUP}/v1",
        ),
    ]
