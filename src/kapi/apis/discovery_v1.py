"""discovery.k8s.io/v1 ``EndpointSlice``: the replacement for core/v1 Endpoints.

Schema from ``k8s.io/api/discovery/v1`` (without the alpha ``hints.forNodes``);
defaulting (``SetDefaults_EndpointPort``), validation
(``ValidateEndpointSliceCreate`` / ``ValidateEndpointSliceUpdate`` of
``pkg/apis/discovery/validation``) and the strategy
(``pkg/registry/discovery/endpointslice``) follow upstream.
"""

from __future__ import annotations

import ipaddress

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
    too_many,
)
from kapi.apimachinery.unstructured import Object
from kapi.apis.core_v1_endpoints import (
    PROTOCOL_TCP,
    ObjectReference,
    Protocol,
    endpoint_ip_errors,
    validate_port_protocol,
)
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column, first_of
from kapi.runtime.meta import kind_struct
from kapi.runtime.schema import BOOLEAN, INT32, STRING, Field, List, Map, Scalar, Struct
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.version import Version

#: Sorted, as upstream's ``sets.List(supportedAddressTypes)`` reports them.
ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")
MAX_ENDPOINTS = 1000
MAX_ADDRESSES = 100
MAX_PORTS = 20000
_PREFIX = "io.k8s.api.discovery.v1"

ADDRESS_TYPE_DOC = (
    "The kind of address every endpoint of the slice has: IPv4, IPv6 or FQDN. Cannot change "
    "after creation."
)
PORTS_DOC = "The ports every endpoint of the slice serves."
ENDPOINTS_DOC = "The endpoints of the slice, each listed once."

# --- schema ---------------------------------------------------------------------------------

EndpointConditions = Struct(
    f"{_PREFIX}.EndpointConditions",
    (
        Field(
            "ready",
            BOOLEAN,
            "Whether the endpoint should get traffic now; false while it terminates.",
        ),
        Field("serving", BOOLEAN, "Whether the endpoint can handle traffic, terminating or not."),
        Field("terminating", BOOLEAN, "Whether the endpoint is shutting down."),
    ),
    "The readiness state of an endpoint.",
)

ForZone = Struct(
    f"{_PREFIX}.ForZone",
    (Field("name", STRING, "The zone's name.", required=True),),
    "A zone whose clients should use the endpoint.",
)

EndpointHints = Struct(
    f"{_PREFIX}.EndpointHints",
    (Field("forZones", List(ForZone), "The zones the endpoint is meant for."),),
    "Routing hints for an endpoint.",
)

Endpoint = Struct(
    f"{_PREFIX}.Endpoint",
    (
        Field(
            "addresses",
            List(STRING, list_type="set"),
            "The endpoint's addresses, of the slice's addressType.",
            required=True,
        ),
        Field(
            "conditions",
            EndpointConditions,
            "The endpoint's readiness.",
        ),
        Field(
            "deprecatedTopology",
            Map(STRING),
            "Deprecated topology labels; zone and nodeName replace them.",
        ),
        Field(
            "hints",
            EndpointHints,
            "Hints for routing to the endpoint.",
        ),
        Field("hostname", STRING, "The endpoint's host name, for DNS."),
        Field("nodeName", STRING, "The node the endpoint runs on."),
        Field(
            "targetRef",
            ObjectReference,
            "The object behind the endpoint, usually a Pod.",
        ),
        Field("zone", STRING, "The zone the endpoint runs in."),
    ),
    "One backend of a Service, with its addresses.",
)

EndpointPort = Struct(
    f"{_PREFIX}.EndpointPort",
    (
        Field(
            "appProtocol",
            STRING,
            "The protocol spoken above the transport, such as http or kubernetes.io/h2c.",
        ),
        Field("name", STRING, "The port's name, matching the Service port."),
        Field("port", INT32, "The port number; unset means every port."),
        Field("protocol", Protocol, "TCP (the default), UDP or SCTP."),
    ),
    "One port of the endpoints of a slice.",
    map_type="atomic",
)

EndpointSlice = kind_struct(
    f"{_PREFIX}.EndpointSlice",
    (("discovery.k8s.io", "v1", "EndpointSlice"),),
    (
        Field(
            "addressType",
            Scalar("string", enum=ADDRESS_TYPES),
            ADDRESS_TYPE_DOC,
            required=True,
        ),
        Field("endpoints", List(Endpoint), ENDPOINTS_DOC, required=True),
        Field("ports", List(EndpointPort), PORTS_DOC),
    ),
    "Part of the endpoints of a Service, with the ports they share.",
)


def default_endpoint_slice(obj: Object) -> None:
    """``SetDefaults_EndpointPort``: an unset port name is "", an unset protocol TCP."""
    for port in obj.get("ports") or ():
        port.setdefault("name", "")
        port.setdefault("protocol", PROTOCOL_TCP)


# --- validation -----------------------------------------------------------------------------


def fqdn_errors(name: str, path: Path) -> list[FieldError]:
    """``IsFullyQualifiedDomainName``: a subdomain of at least two labels (one trailing dot ok)."""
    if not name:
        return [required(path)]
    name = name.removesuffix(".")
    if errs := validation.is_dns1123_subdomain(name):
        return [invalid(path, name, ",".join(errs))]
    labels = name.split(".")
    if len(labels) < 2:
        detail = "should be a domain with at least two segments separated by dots"
        return [invalid(path, name, detail)]
    for label in labels:
        if errs := validation.is_dns1123_label(label):
            return [invalid(path, label, ",".join(errs))]
    return []


def _address_errors(address: str, address_type: str, path: Path) -> list[FieldError]:
    """One address by the slice's type; unknown types are not checked (as upstream)."""
    if address_type == "FQDN":
        return fqdn_errors(address, path)
    if address_type not in ("IPv4", "IPv6"):
        return []
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        parsed = None
    if parsed is None or f"IPv{parsed.version}" != address_type:
        return [invalid(path, address, f"must be a valid {address_type} address")]
    return [invalid(path, address, m) for m in endpoint_ip_errors(parsed, address)]


def _validate_endpoints(endpoints: list[Object], address_type: str) -> list[FieldError]:
    path = Path("endpoints")
    if len(endpoints) > MAX_ENDPOINTS:
        return [too_many(path, len(endpoints), MAX_ENDPOINTS)]
    errs: list[FieldError] = []
    for i, endpoint in enumerate(endpoints):
        addresses_path = path.index(i).child("addresses")
        addresses = endpoint.get("addresses") or []
        if not addresses:
            errs.append(required(addresses_path, "must contain at least 1 address"))
        elif len(addresses) > MAX_ADDRESSES:
            errs.append(too_many(addresses_path, len(addresses), MAX_ADDRESSES))
        for j, address in enumerate(addresses):
            errs += _address_errors(address, address_type, addresses_path.index(j))
        hostname = endpoint.get("hostname")
        if hostname is not None:
            host_path = path.index(i).child("hostname")
            errs += [invalid(host_path, hostname, m) for m in validation.is_dns1123_label(hostname)]
    return errs


def _validate_ports(ports: list[Object]) -> list[FieldError]:
    path = Path("ports")
    if len(ports) > MAX_PORTS:
        return [too_many(path, len(ports), MAX_PORTS)]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        name = port.get("name") or ""
        name_path = path.index(i).child("name")
        if name:
            errs += [invalid(name_path, name, m) for m in validation.is_dns1123_label(name)]
        if name in names:
            errs.append(duplicate(name_path, name))
        names.add(name)
        errs += validate_port_protocol(port.get("protocol"), path.index(i).child("protocol"))
    return errs


def validate_endpoint_slice(obj: Object) -> list[FieldError]:
    """``ValidateEndpointSlice`` without ObjectMeta (the store validates that)."""
    address_type = obj.get("addressType") or ""
    errs: list[FieldError] = []
    if not address_type:
        errs.append(required(Path("addressType")))
    elif address_type not in ADDRESS_TYPES:
        errs.append(not_supported(Path("addressType"), address_type, ADDRESS_TYPES))
    errs += _validate_endpoints(obj.get("endpoints") or [], address_type)
    return errs + _validate_ports(obj.get("ports") or [])


class EndpointSliceStrategy(Strategy):
    """Upstream ``endpointSliceStrategy``: generation, and ``addressType`` fixed once set."""

    has_generation = True

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_endpoint_slice(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        errs = validate_endpoint_slice(new)
        return errs + validation.validate_immutable_field(
            new.get("addressType"), old.get("addressType"), Path("addressType")
        )


# --- resource -------------------------------------------------------------------------------


def _port_cell(port: Object) -> str:
    if port.get("port") is not None:
        return str(port["port"])
    return "*" if port.get("name") is None else port["name"]


def ports_cell(obj: Object) -> str:
    """``formatDiscoveryPorts``: port numbers (else names, else ``*``), ``<unset>`` if none."""
    cells = [_port_cell(p) for p in obj.get("ports") or ()]
    return first_of(cells, len(cells)) or "<unset>"


def addresses_cell(obj: Object) -> str:
    """``formatDiscoveryEndpoints``: the first three addresses, ``<unset>`` if none."""
    addresses = [a for e in obj.get("endpoints") or () for a in e.get("addresses") or ()]
    return first_of(addresses, len(addresses)) or "<unset>"


def resources() -> list[Resource]:
    """The discovery.k8s.io/v1 resources this module defines."""
    return [
        Resource(
            group="discovery.k8s.io",
            kind="EndpointSlice",
            plural="endpointslices",
            singular="endpointslice",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1",
                    EndpointSlice,
                    Lifecycle(introduced=Version(1, 21)),
                    default_endpoint_slice,
                )
            },
            hub_version="v1",
            storage_version="v1",
            strategy=EndpointSliceStrategy(),
            columns=(
                NAME,
                Column(
                    "AddressType",
                    "string",
                    ADDRESS_TYPE_DOC,
                    lambda o: o.get("addressType") or "",
                ),
                Column("Ports", "string", PORTS_DOC, ports_cell),
                Column("Endpoints", "string", ENDPOINTS_DOC, addresses_cell),
                AGE,
            ),
        )
    ]
