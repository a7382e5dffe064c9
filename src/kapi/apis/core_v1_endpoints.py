"""core/v1 ``Endpoints``: deprecated in v1.33 in favour of discovery.k8s.io/v1 EndpointSlice.

Upstream (KEP-4974) gives ``v1.Endpoints`` a deprecation release and a
replacement but no removal release, so every request warns
``v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice``
and the version stays served.  Schema from ``k8s.io/api/core/v1``; defaulting
(``SetDefaults_Endpoints``), validation (``ValidateEndpointsCreate``) and the
strategy (``pkg/registry/core/endpoint``) follow upstream.  The module also
declares the core/v1 structs other built-in kinds reference.
"""

from __future__ import annotations

import ipaddress

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError, Path, invalid, not_supported, required
from kapi.apimachinery.unstructured import Object
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column, first_of
from kapi.runtime.meta import kind_struct
from kapi.runtime.schema import INT32, STRING, Field, List, Scalar, Struct
from kapi.runtime.scheme import GroupVersionKind, Lifecycle, Resource, ResourceVersion
from kapi.version import Version

PROTOCOL_TCP = "TCP"
#: Sorted, as upstream's ``sets.List(supportedPortProtocols)`` reports them.
PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")
_INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
SUBSETS_DOC = (
    "Groups of addresses that share the same ports; the endpoints of the Service are all "
    "the groups together."
)

# --- shared core/v1 structs -----------------------------------------------------------------

ObjectReference = Struct(
    "io.k8s.api.core.v1.ObjectReference",
    (
        Field("apiVersion", STRING, "The apiVersion of the object."),
        Field(
            "fieldPath",
            STRING,
            "A field inside the object, such as spec.containers{app}, when only part is meant.",
        ),
        Field("kind", STRING, "The kind of the object."),
        Field("name", STRING, "The object's name."),
        Field("namespace", STRING, "The object's namespace; empty for cluster-scoped kinds."),
        Field(
            "resourceVersion",
            STRING,
            "The resourceVersion of the object that was meant, when that matters.",
        ),
        Field("uid", STRING, "The object's uid."),
    ),
    "Points at one object (or a part of it) by kind, namespace, name and uid.",
    map_type="atomic",
)

Protocol = Scalar("string", enum=PORT_PROTOCOLS)

# --- schema ---------------------------------------------------------------------------------

EndpointAddress = Struct(
    "io.k8s.api.core.v1.EndpointAddress",
    (
        Field("hostname", STRING, "The host name of the endpoint, for DNS."),
        Field("ip", STRING, "The endpoint's IP address.", required=True),
        Field("nodeName", STRING, "The node the endpoint runs on, when known."),
        Field("targetRef", ObjectReference, "The object behind the endpoint, usually a Pod."),
    ),
    "One IP address of an endpoint.",
    map_type="atomic",
)

EndpointPort = Struct(
    "io.k8s.api.core.v1.EndpointPort",
    (
        Field(
            "appProtocol",
            STRING,
            "The protocol spoken above the transport, such as http or kubernetes.io/h2c.",
        ),
        Field(
            "name",
            STRING,
            "The port's name, matching the Service port; may be empty when there is only one.",
        ),
        Field("port", INT32, "The port number.", required=True),
        Field("protocol", Protocol, "TCP (the default), UDP or SCTP."),
    ),
    "One port of the endpoints of a subset.",
    map_type="atomic",
)

EndpointSubset = Struct(
    "io.k8s.api.core.v1.EndpointSubset",
    (
        Field("addresses", List(EndpointAddress), "Addresses ready to take traffic on the ports."),
        Field(
            "notReadyAddresses",
            List(EndpointAddress),
            "Addresses with the ports that are not ready for traffic yet.",
        ),
        Field("ports", List(EndpointPort), "The ports open on every address of the subset."),
    ),
    "Addresses and the ports they all serve.",
)

Endpoints = kind_struct(
    "io.k8s.api.core.v1.Endpoints",
    (("", "v1", "Endpoints"),),
    (Field("subsets", List(EndpointSubset), SUBSETS_DOC),),
    "The network addresses behind a Service. Deprecated since v1.33 in favour of "
    "discovery.k8s.io/v1 EndpointSlice.",
)


def default_endpoints(obj: Object) -> None:
    """``SetDefaults_Endpoints``: ports without a protocol are TCP."""
    for subset in obj.get("subsets") or ():
        for port in subset.get("ports") or ():
            if not port.get("protocol"):
                port["protocol"] = PROTOCOL_TCP


# --- validation -----------------------------------------------------------------------------


def endpoint_ip_errors(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, text: str
) -> list[str]:
    """``ValidateEndpointIP``: addresses that make no sense as a Service endpoint."""
    errs: list[str] = []
    if address.is_unspecified:
        errs.append(f"may not be unspecified ({text})")
    if address.is_loopback:
        errs.append("may not be in the loopback range (127.0.0.0/8, ::1/128)")
    if address.is_link_local:
        errs.append("may not be in the link-local range (169.254.0.0/16, fe80::/10)")
    if address in _LINK_LOCAL_MULTICAST[address.version]:
        errs.append("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")
    return errs


_LINK_LOCAL_MULTICAST = {
    4: ipaddress.ip_network("224.0.0.0/24"),
    6: ipaddress.ip_network("ff02::/16"),
}


def _validate_address(address: Object, path: Path) -> list[FieldError]:
    """``validateEndpointAddress``."""
    ip = address.get("ip") or ""
    ip_path = path.child("ip")
    try:
        parsed = ipaddress.ip_address(ip)
    except ValueError:
        errs = [invalid(ip_path, ip, _INVALID_IP)]
    else:
        errs = [invalid(ip_path, ip, m) for m in endpoint_ip_errors(parsed, ip)]
    hostname = address.get("hostname") or ""
    if hostname:
        host_path = path.child("hostname")
        errs += [invalid(host_path, hostname, m) for m in validation.is_dns1123_label(hostname)]
    node = address.get("nodeName")
    if node is not None:
        node_path = path.child("nodeName")
        errs += [invalid(node_path, node, m) for m in validation.name_is_dns_subdomain(node, False)]
    return errs


def validate_port_protocol(protocol: str | None, path: Path) -> list[FieldError]:
    """A port's protocol: required, and one of SCTP, TCP, UDP."""
    if not protocol:
        return [required(path)]
    if protocol not in PORT_PROTOCOLS:
        return [not_supported(path, protocol, PORT_PROTOCOLS)]
    return []


def _validate_port(port: Object, require_name: bool, path: Path) -> list[FieldError]:
    """``validateEndpointPort``."""
    errs: list[FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(required(path.child("name")))
    elif name:
        errs += [invalid(path.child("name"), name, m) for m in validation.is_dns1123_label(name)]
    number = port.get("port") or 0
    errs += [invalid(path.child("port"), number, m) for m in validation.is_valid_port_num(number)]
    return errs + validate_port_protocol(port.get("protocol"), path.child("protocol"))


def validate_endpoints(obj: Object) -> list[FieldError]:
    """``validateEndpointSubsets``."""
    errs: list[FieldError] = []
    for i, subset in enumerate(obj.get("subsets") or ()):
        path = Path("subsets").index(i)
        addresses = subset.get("addresses") or []
        not_ready = subset.get("notReadyAddresses") or []
        if not addresses and not not_ready:
            errs.append(required(path, "must specify `addresses` or `notReadyAddresses`"))
        for key, items in (("addresses", addresses), ("notReadyAddresses", not_ready)):
            for j, address in enumerate(items):
                errs += _validate_address(address, path.child(key).index(j))
        ports = subset.get("ports") or []
        for j, port in enumerate(ports):
            errs += _validate_port(port, len(ports) > 1, path.child("ports").index(j))
    return errs


class EndpointsStrategy(Strategy):
    """Upstream ``endpointsStrategy``: subset validation, and PUT may create."""

    allow_create_on_update = True

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_endpoints(obj)


# --- resource -------------------------------------------------------------------------------


def endpoints_cell(obj: Object) -> str:
    """``formatEndpoints``: up to three ``ip:port`` (or bare IPs for port-less subsets)."""
    subsets = obj.get("subsets") or []
    if not subsets:
        return "<none>"
    cells: list[str] = []
    for subset in subsets:
        ips = [a.get("ip") or "" for a in subset.get("addresses") or ()]
        ports = subset.get("ports") or []
        if not ports:
            cells += ips
        for port in ports:
            number = port.get("port") or 0
            cells += [f"[{ip}]:{number}" if ":" in ip else f"{ip}:{number}" for ip in ips]
    return first_of(cells, len(cells))


def resources() -> list[Resource]:
    """The core/v1 Endpoints resource."""
    return [
        Resource(
            group="",
            kind="Endpoints",
            plural="endpoints",
            singular="endpoints",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1",
                    Endpoints,
                    Lifecycle(
                        introduced=Version(1, 0),
                        deprecated=Version(1, 33),
                        replacement=GroupVersionKind("discovery.k8s.io", "v1", "EndpointSlice"),
                    ),
                    default_endpoints,
                )
            },
            hub_version="v1",
            storage_version="v1",
            strategy=EndpointsStrategy(),
            short_names=("ep",),
            # Upstream keeps endpoints next to services: /registry/services/endpoints/.
            storage_resource="services/endpoints",
            columns=(NAME, Column("Endpoints", "string", SUBSETS_DOC, endpoints_cell), AGE),
        )
    ]
