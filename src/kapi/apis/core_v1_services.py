"""core/v1 ``Service``: defaulting, validation, cluster IP and node port allocation.

Defaulting follows ``SetDefaults_Service`` (``pkg/apis/core/v1``), validation
``ValidateService``/``ValidateServiceUpdate`` (``pkg/apis/core/validation``) for
the rules users hit, and the registry's allocation (``pkg/registry/core/service``):
a Service of type ClusterIP, NodePort or LoadBalancer gets a cluster IP from
``--service-cluster-ip-range`` (or keeps the one it asked for, if free and in
range), ``None`` makes it headless, NodePort and LoadBalancer Services get node
ports from ``--service-node-port-range``, and deleting the Service frees them.

Allocations are reserved in storage, one key per value
(:mod:`kapi.registry.allocator`), so every server on one store agrees; the
store calls :class:`ServiceAllocator` around each write (upstream's
``BeginCreate``/``BeginUpdate``/``AfterDelete`` hooks).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from kapi.apimachinery import errors, validation
from kapi.apimachinery.field_errors import (
    FieldError,
    GoSyntax,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kapi.apimachinery.gotext import go_quote
from kapi.apimachinery.unstructured import Object
from kapi.apis.generated import core_v1
from kapi.registry.allocator import (
    IP_ALLOCATED,
    NODE_PORTS_PREFIX,
    PORT_ALLOCATED,
    SERVICE_IPS_PREFIX,
    AllocationError,
    FullError,
    IPRange,
    PortRange,
    Reservations,
)
from kapi.registry.store import Finish
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.storage.interface import Storage
from kapi.version import Version

CLUSTER_IP, NODE_PORT, LOAD_BALANCER, EXTERNAL_NAME = (
    "ClusterIP",
    "NodePort",
    "LoadBalancer",
    "ExternalName",
)
#: Sorted, as upstream's ``sets.List`` reports them.
SERVICE_TYPES = (CLUSTER_IP, EXTERNAL_NAME, LOAD_BALANCER, NODE_PORT)
SESSION_AFFINITIES = ("ClientIP", "None")
TRAFFIC_POLICIES = ("Cluster", "Local")
IP_FAMILY_POLICIES = ("PreferDualStack", "RequireDualStack", "SingleStack")
IP_FAMILIES = ("IPv4", "IPv6")
PORT_PROTOCOLS = ("SCTP", "TCP", "UDP")
NONE = "None"
#: ``DefaultClientIPServiceAffinitySeconds``: three hours.
CLIENT_IP_TIMEOUT = 10800
_INVALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"

DEFAULT_SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/24"
DEFAULT_SERVICE_NODE_PORT_RANGE = "30000-32767"


@dataclass
class ServiceNetwork:
    """The server's service ranges (``--service-cluster-ip-range``, ``--service-node-port-range``).

    ``ip_ranges``: one or two ranges (dual stack: one of each family), primary first.
    """

    ip_ranges: tuple[IPRange, ...] = field(
        default_factory=lambda: (IPRange.parse(DEFAULT_SERVICE_CLUSTER_IP_RANGE),)
    )
    node_ports: PortRange = field(
        default_factory=lambda: PortRange.parse(DEFAULT_SERVICE_NODE_PORT_RANGE)
    )

    @classmethod
    def parse(cls, cluster_ip_range: str, node_port_range: str) -> ServiceNetwork:
        """From the flags' values; raises ValueError with the reason on a bad one."""
        cidrs = [c for c in cluster_ip_range.split(",") if c.strip()]
        if not cidrs or len(cidrs) > 2:
            raise ValueError(
                "--service-cluster-ip-range takes one CIDR, or two of different families"
            )
        ranges = tuple(IPRange.parse(c) for c in cidrs)
        if len(ranges) == 2 and ranges[0].family == ranges[1].family:
            raise ValueError(
                "--service-cluster-ip-range and --secondary-service-cluster-ip-range "
                "must be of different IP family"
            )
        return cls(ranges, PortRange.parse(node_port_range))

    @property
    def primary(self) -> IPRange:
        return self.ip_ranges[0]

    def range_of(self, family: str) -> IPRange | None:
        return next((r for r in self.ip_ranges if r.family == family), None)


# --- defaulting -----------------------------------------------------------------------------


def externally_accessible(spec: Object) -> bool:
    """``service.ExternallyAccessible``: NodePort, LoadBalancer, or ClusterIP with external IPs."""
    kind = spec.get("type")
    return kind in (NODE_PORT, LOAD_BALANCER) or (
        kind == CLUSTER_IP and bool(spec.get("externalIPs"))
    )


def default_service(obj: Object) -> None:
    """``SetDefaults_Service`` of core/v1."""
    spec = obj.setdefault("spec", {})
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = NONE
    if spec["sessionAffinity"] == NONE:
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig") or {}
        client = config.get("clientIP") or {}
        if not client.get("timeoutSeconds"):
            client["timeoutSeconds"] = CLIENT_IP_TIMEOUT
        config["clientIP"] = client
        spec["sessionAffinityConfig"] = config
    if not spec.get("type"):
        spec["type"] = CLUSTER_IP
    for port in spec.get("ports") or ():
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port", 0)
    if externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and spec["type"] in (
        CLUSTER_IP,
        NODE_PORT,
        LOAD_BALANCER,
    ):
        spec["internalTrafficPolicy"] = "Cluster"
    if spec["type"] == LOAD_BALANCER and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True
    if spec["type"] == LOAD_BALANCER:
        for ingress in ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or ():
            if ingress.get("ip") and ingress.get("ipMode") is None:
                ingress["ipMode"] = "VIP"


def normalize_cluster_ips(new: Object, old: Object | None) -> None:
    """Upstream's ``normalizeClusterIPs``: ``clusterIP`` and ``clusterIPs[0]`` agree.

    On create an empty ``clusterIPs`` takes ``clusterIP``; on update, a changed
    ``clusterIP`` with unchanged ``clusterIPs`` (a client that knows only the
    old field) changes ``clusterIPs[0]`` too, and a cleared one clears both.
    """
    spec = new.setdefault("spec", {})
    ip = spec.get("clusterIP") or ""
    ips = list(spec.get("clusterIPs") or [])
    if old is None:
        if ip and not ips:
            spec["clusterIPs"] = [ip]
        return
    old_spec = old.get("spec") or {}
    old_ip = old_spec.get("clusterIP") or ""
    old_ips = list(old_spec.get("clusterIPs") or [])
    if ip != old_ip and ips == old_ips:
        if not ip:
            spec.pop("clusterIPs", None)
        elif ips:
            ips[0] = ip
            spec["clusterIPs"] = ips
        else:
            spec["clusterIPs"] = [ip]
    elif ip and not ips:
        spec["clusterIPs"] = [ip]


def needs_cluster_ip(spec: Object) -> bool:
    return spec.get("type") != EXTERNAL_NAME and spec.get("clusterIP") != NONE


def allocates_node_ports(spec: Object) -> bool:
    """``shouldAllocateNodePorts``."""
    kind = spec.get("type")
    if kind == NODE_PORT:
        return True
    return kind == LOAD_BALANCER and spec.get("allocateLoadBalancerNodePorts") is not False


def keep_allocated_values(new: Object, old: Object) -> None:
    """Upstream's ``patchAllocatedValues``: an update that leaves out what was allocated
    (a PUT of a manifest without ``clusterIP``) keeps it, instead of asking for a change."""
    spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}
    keep_ip = needs_cluster_ip(spec) and needs_cluster_ip(old_spec) and not spec.get("clusterIP")
    if keep_ip and old_spec.get("clusterIP"):
        spec["clusterIP"] = old_spec["clusterIP"]
        spec["clusterIPs"] = list(old_spec.get("clusterIPs") or [old_spec["clusterIP"]])
    if allocates_node_ports(spec) and allocates_node_ports(old_spec):
        by_port = {
            (p.get("port"), p.get("protocol")): p.get("nodePort")
            for p in old_spec.get("ports") or ()
            if p.get("nodePort")
        }
        by_number = {p.get("port"): p.get("nodePort") for p in old_spec.get("ports") or ()}
        for port in spec.get("ports") or ():
            if not port.get("nodePort"):
                kept = by_port.get((port.get("port"), port.get("protocol"))) or by_number.get(
                    port.get("port")
                )
                if kept:
                    port["nodePort"] = kept


def trim_on_downgrade(new: Object, old: Object) -> None:
    """A dual-stack Service changed to SingleStack keeps only its primary IP and family
    (upstream's downgrade: the secondary IP is released once the update is stored)."""
    spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}
    if spec.get("ipFamilyPolicy") != "SingleStack":
        return
    if old_spec.get("ipFamilyPolicy") == "SingleStack" or len(old_spec.get("clusterIPs") or ()) < 2:
        return
    for key in ("clusterIPs", "ipFamilies"):
        if len(spec.get(key) or ()) > 1:
            spec[key] = spec[key][:1]


def drop_type_dependent_fields(new: Object, old: Object) -> None:
    """Upstream's ``dropTypeDependentFields``: a change of type clears what only the old
    type used, when the client left it as it was (so a patch of ``type`` alone works)."""
    spec, old_spec = new.setdefault("spec", {}), old.get("spec") or {}

    def unchanged(key: str) -> bool:
        return spec.get(key) == old_spec.get(key)

    kind, old_kind = spec.get("type"), old_spec.get("type")
    if needs_cluster_ip(old_spec) and kind == EXTERNAL_NAME and unchanged("clusterIPs"):
        for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            spec.pop(key, None)
    ports: list[Object] = spec.get("ports") or []
    old_node_ports = [p.get("nodePort") for p in old_spec.get("ports") or ()]
    same_node_ports = [p.get("nodePort") for p in ports] == old_node_ports
    if allocates_node_ports(old_spec) and not allocates_node_ports(spec) and same_node_ports:
        for port in ports:
            port.pop("nodePort", None)
    external_gone = externally_accessible(old_spec) and not externally_accessible(spec)
    if external_gone and unchanged("externalTrafficPolicy"):
        spec.pop("externalTrafficPolicy", None)
    left_lb = old_kind == LOAD_BALANCER and kind != LOAD_BALANCER
    if left_lb and unchanged("allocateLoadBalancerNodePorts"):
        spec.pop("allocateLoadBalancerNodePorts", None)
    became_name = kind == EXTERNAL_NAME and old_kind != EXTERNAL_NAME
    if became_name and unchanged("internalTrafficPolicy"):
        spec.pop("internalTrafficPolicy", None)


def _family_of(ip: str) -> str | None:
    try:
        return "IPv4" if ipaddress.ip_address(ip).version == 4 else "IPv6"
    except ValueError:
        return None


def _other_family(family: str) -> str:
    return "IPv6" if family == "IPv4" else "IPv4"


def init_ip_families(spec: Object, network: ServiceNetwork) -> None:
    """Upstream's ``initIPFamilyFields``: ExternalName Services have no families.

    The policy defaults to RequireDualStack where the request names two IPs or
    two families, or for a headless Service without a selector, else to
    SingleStack.  The families default to those of the given IPs, else to the
    cluster's primary one; a dual-stack policy then adds the other family when
    the cluster has both (a headless Service gets it whatever the cluster has).
    """
    if spec.get("type") == EXTERNAL_NAME:
        spec.pop("ipFamilies", None)
        spec.pop("ipFamilyPolicy", None)
        return
    ips = [ip for ip in spec.get("clusterIPs") or () if ip != NONE]
    headless = spec.get("clusterIP") == NONE
    if not spec.get("ipFamilyPolicy"):
        two = len(ips) == 2 or len(spec.get("ipFamilies") or ()) == 2
        selectorless_headless = headless and not spec.get("selector")
        spec["ipFamilyPolicy"] = (
            "RequireDualStack" if two or selectorless_headless else "SingleStack"
        )
    families: list[str] = list(spec.get("ipFamilies") or ())
    if not families:
        families = [f for f in map(_family_of, ips) if f is not None]
    if not families:
        families = [network.primary.family]
    dual = headless or len(network.ip_ranges) > 1
    if spec["ipFamilyPolicy"] != "SingleStack" and len(families) == 1 and dual:
        families.append(_other_family(families[0]))
    spec["ipFamilies"] = families


# --- validation -----------------------------------------------------------------------------


def _go_strings(values: list[str]) -> GoSyntax:
    """A ``[]string`` as ``%#v`` prints it."""
    return GoSyntax("[]string{" + ", ".join(go_quote(v) for v in values) + "}")


def _port_key(port: Object) -> GoSyntax:
    """The ``core.ServicePort{Protocol, Port}`` upstream reports a duplicate port with."""
    return GoSyntax(
        f'core.ServicePort{{Name:"", Protocol:{go_quote(port.get("protocol") or "")}, '
        f"AppProtocol:(*string)(nil), Port:{port.get('port') or 0}, "
        'TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}'
    )


def _validate_port(
    port: Object, require_name: bool, names: set[str], path: Path
) -> list[FieldError]:
    """``validateServicePort``."""
    errs: list[FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errs.append(required(path.child("name")))
    elif name:
        errs += [invalid(path.child("name"), name, m) for m in validation.is_dns1123_label(name)]
        if name in names:
            errs.append(duplicate(path.child("name"), name))
        names.add(name)
    number = port.get("port") or 0
    errs += [invalid(path.child("port"), number, m) for m in validation.is_valid_port_num(number)]
    protocol = port.get("protocol") or ""
    if not protocol:
        errs.append(required(path.child("protocol")))
    elif protocol not in PORT_PROTOCOLS:
        errs.append(not_supported(path.child("protocol"), protocol, PORT_PROTOCOLS))
    target = port.get("targetPort")
    if isinstance(target, int):
        target_path = path.child("targetPort")
        errs += [invalid(target_path, target, m) for m in validation.is_valid_port_num(target)]
    elif isinstance(target, str):
        target_path = path.child("targetPort")
        errs += [invalid(target_path, target, m) for m in validation.is_valid_port_name(target)]
    return errs


def _validate_cluster_ips(spec: Object, network: ServiceNetwork) -> list[FieldError]:
    """``validateServiceClusterIPsRelatedFields``, for the rules single-stack users hit."""
    errs: list[FieldError] = []
    path = Path("spec", "clusterIPs")
    ip = spec.get("clusterIP") or ""
    ips: list[str] = list(spec.get("clusterIPs") or [])
    if ip and ips and ips[0] != ip:
        errs.append(invalid(path, _go_strings(ips), "first value must match `clusterIP`"))
    if spec.get("type") == EXTERNAL_NAME:
        if ips:
            errs.append(forbidden(path, "may not be set for ExternalName services"))
        return errs
    if ips and ips[0] == NONE and spec.get("type") in (NODE_PORT, LOAD_BALANCER):
        errs.append(
            invalid(
                path.index(0),
                NONE,
                f"may not be set to 'None' for {spec.get('type')} services",
            )
        )
    for i, value in enumerate(ips):
        if value == NONE:
            if i:
                errs.append(invalid(path.index(i), value, "must be a valid IP address"))
            elif len(ips) > 1:
                errs.append(
                    invalid(path, _go_strings(ips), "'None' must be the first and only value")
                )
            continue
        try:
            ipaddress.ip_address(value)
        except ValueError:
            errs.append(invalid(path.index(i), value, _INVALID_IP))
    if len(ips) > 2:
        errs.append(invalid(path, _go_strings(ips), "may only hold up to 2 values"))
    headless = spec.get("clusterIP") == NONE
    families: list[str] = list(spec.get("ipFamilies") or ())
    seen: set[str] = set()
    for i, family in enumerate(families):
        family_path = Path("spec", "ipFamilies").index(i)
        if family not in IP_FAMILIES:
            errs.append(not_supported(family_path, family, IP_FAMILIES))
        elif family in seen:
            errs.append(duplicate(family_path, family))
        elif network.range_of(family) is None and not headless:
            errs.append(invalid(family_path, family, "not configured on this cluster"))
        seen.add(family)
    if not headless:
        for i, (ip, family) in enumerate(zip(ips, families, strict=False)):
            if _family_of(ip) not in (None, family):
                detail = f"expected an {family} value as indicated by `ipFamilies[{i}]`"
                errs.append(invalid(path.index(i), ip, detail))
    policy = spec.get("ipFamilyPolicy")
    policy_path = Path("spec", "ipFamilyPolicy")
    if policy is not None and policy not in IP_FAMILY_POLICIES:
        errs.append(not_supported(policy_path, policy, IP_FAMILY_POLICIES))
    elif policy == "SingleStack" and (len(families) > 1 or len(ips) > 1):
        errs.append(
            invalid(
                policy_path,
                policy,
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families "
                "are specified",
            )
        )
    elif policy == "RequireDualStack" and not headless and len(network.ip_ranges) < 2:
        detail = "this cluster is not configured for dual-stack services"
        errs.append(invalid(policy_path, policy, detail))
    return errs


def validate_service(obj: Object, network: ServiceNetwork) -> list[FieldError]:
    """``ValidateService``: the spec rules users hit, with upstream's messages."""
    spec = obj.get("spec") or {}
    path = Path("spec")
    errs: list[FieldError] = []
    kind = spec.get("type") or ""
    headless = spec.get("clusterIP") == NONE
    ports: list[Object] = spec.get("ports") or []
    if not ports and not headless and kind != EXTERNAL_NAME:
        errs.append(required(path.child("ports")))
    if kind == EXTERNAL_NAME:
        name = (spec.get("externalName") or "").removesuffix(".")
        if not name:
            errs.append(required(path.child("externalName")))
        else:
            errs += [
                invalid(path.child("externalName"), spec.get("externalName"), m)
                for m in validation.is_dns1123_subdomain(name)
            ]
    names: set[str] = set()
    for i, port in enumerate(ports):
        errs += _validate_port(port, len(ports) > 1, names, path.child("ports").index(i))
    selector = spec.get("selector")
    if selector:
        errs += validation.validate_labels(selector, path.child("selector"))
    affinity = spec.get("sessionAffinity") or ""
    if not affinity:
        errs.append(required(path.child("sessionAffinity")))
    elif affinity not in SESSION_AFFINITIES:
        errs.append(not_supported(path.child("sessionAffinity"), affinity, SESSION_AFFINITIES))
    if not kind:
        errs.append(required(path.child("type")))
    elif kind not in SERVICE_TYPES:
        errs.append(not_supported(path.child("type"), kind, SERVICE_TYPES))
    errs += _validate_cluster_ips(spec, network)
    for i, ip in enumerate(spec.get("externalIPs") or ()):
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            errs.append(invalid(path.child("externalIPs").index(i), ip, _INVALID_IP))
    seen_ports: set[tuple[int, str]] = set()
    seen_node_ports: set[tuple[int, str]] = set()
    for i, port in enumerate(ports):
        port_path = path.child("ports").index(i)
        node_port = port.get("nodePort") or 0
        if kind == CLUSTER_IP and node_port:
            errs.append(
                forbidden(port_path.child("nodePort"), "may not be used when `type` is 'ClusterIP'")
            )
        if node_port:
            errs += [
                invalid(port_path.child("nodePort"), node_port, m)
                for m in validation.is_valid_port_num(node_port)
            ]
            key = (node_port, port.get("protocol") or "")
            if key in seen_node_ports:
                errs.append(duplicate(port_path.child("nodePort"), node_port))
            seen_node_ports.add(key)
        port_key = (port.get("port") or 0, port.get("protocol") or "")
        if port_key in seen_ports:
            errs.append(duplicate(port_path, _port_key(port)))
        seen_ports.add(port_key)
    internal = spec.get("internalTrafficPolicy")
    if kind != EXTERNAL_NAME:
        if internal is None:
            # Required only of the types defaulting sets it on (stored objects of others stay).
            if kind in (CLUSTER_IP, NODE_PORT, LOAD_BALANCER):
                errs.append(required(path.child("internalTrafficPolicy")))
        elif internal not in TRAFFIC_POLICIES:
            errs.append(
                not_supported(path.child("internalTrafficPolicy"), internal, TRAFFIC_POLICIES)
            )
    external = spec.get("externalTrafficPolicy") or ""
    if external:
        if not externally_accessible(spec):
            errs.append(
                invalid(
                    path.child("externalTrafficPolicy"),
                    external,
                    "may only be set for externally-accessible services",
                )
            )
        elif external not in TRAFFIC_POLICIES:
            errs.append(
                not_supported(path.child("externalTrafficPolicy"), external, TRAFFIC_POLICIES)
            )
    elif externally_accessible(spec):
        errs.append(required(path.child("externalTrafficPolicy")))
    return errs


def validate_service_update(new: Object, old: Object, network: ServiceNetwork) -> list[FieldError]:
    """``ValidateServiceUpdate``: the primary cluster IP may not change (except to or from
    ExternalName), then everything ``ValidateService`` checks."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errs: list[FieldError] = []
    if EXTERNAL_NAME not in (spec.get("type"), old_spec.get("type")):
        ips = list(spec.get("clusterIPs") or [])
        old_ips = list(old_spec.get("clusterIPs") or [])
        both_headless = spec.get("clusterIP") == NONE and old_spec.get("clusterIP") == NONE
        path = Path("spec", "clusterIPs").index(0)
        if not both_headless and old_ips:
            if not ips:
                errs.append(invalid(path, _go_strings(ips), "primary clusterIP can not be unset"))
            elif ips[0] != old_ips[0]:
                errs.append(invalid(path, _go_strings(ips), "may not change once set"))
    return errs + validate_service(new, network)


# --- strategy -------------------------------------------------------------------------------


class ServiceStrategy(Strategy):
    """Upstream ``svcStrategy``: status subresource, DNS-1035 names, cleared status on create."""

    has_status = True

    def __init__(self, network: ServiceNetwork | None = None) -> None:
        self.network = network or ServiceNetwork()

    @staticmethod
    def validate_name(name: str, prefix: bool) -> list[str]:
        return validation.name_is_dns1035_label(name, prefix)

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"loadBalancer": {}}
        normalize_cluster_ips(obj, None)
        init_ip_families(obj.setdefault("spec", {}), self.network)

    def prepare_for_update(self, new: Object, old: Object) -> None:
        super().prepare_for_update(new, old)
        keep_allocated_values(new, old)
        drop_type_dependent_fields(new, old)
        normalize_cluster_ips(new, old)
        trim_on_downgrade(new, old)
        init_ip_families(new.setdefault("spec", {}), self.network)

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_service(obj, self.network)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_service_update(new, old, self.network)


# --- allocation -----------------------------------------------------------------------------


def service_owner(obj: Object) -> str:
    metadata = obj.get("metadata") or {}
    return f"{metadata.get('namespace', '')}/{metadata.get('name', '')}"


def service_ips(obj: Object) -> list[str]:
    """The cluster IPs a stored Service holds."""
    spec = obj.get("spec") or {}
    if not needs_cluster_ip(spec):
        return []
    return [ip for ip in spec.get("clusterIPs") or () if ip and ip != NONE]


def service_node_ports(obj: Object) -> set[int]:
    spec = obj.get("spec") or {}
    return {p["nodePort"] for p in spec.get("ports") or () if p.get("nodePort")}


class ServiceAllocator:
    """Reserves and frees a Service's cluster IPs and node ports around its writes
    (the store's :class:`~kapi.registry.store.StoreHooks`)."""

    def __init__(self, storage: Storage, network: ServiceNetwork) -> None:
        self.network = network
        self.ips = Reservations(storage, SERVICE_IPS_PREFIX, IP_ALLOCATED)
        self.ports = Reservations(storage, NODE_PORTS_PREFIX, PORT_ALLOCATED)

    # -- the hooks --------------------------------------------------------------------

    async def begin_create(self, obj: Object, dry_run: bool) -> Finish:
        return await self._allocate(obj, None, dry_run)

    async def begin_update(self, new: Object, old: Object, dry_run: bool) -> Finish:
        return await self._allocate(new, old, dry_run)

    async def after_delete(self, obj: Object) -> None:
        owner = service_owner(obj)
        for ip in service_ips(obj):
            await self.ips.release(ip, owner)
        for port in service_node_ports(obj):
            await self.ports.release(str(port), owner)

    # -- allocation -------------------------------------------------------------------

    async def _allocate(self, obj: Object, old: Object | None, dry_run: bool) -> Finish:
        """Reserve what ``obj`` needs beyond what ``old`` holds; the finish frees the new
        reservations if the write failed, or the ones ``obj`` no longer holds if it was
        stored."""
        owner = service_owner(obj)
        reserved_ips: list[str] = []
        reserved_ports: list[int] = []

        async def undo() -> None:
            for ip in reserved_ips:
                await self.ips.release(ip, owner)
            for port in reserved_ports:
                await self.ports.release(str(port), owner)

        try:
            old_ips = service_ips(old) if old is not None else []
            await self._allocate_ips(obj, old_ips, owner, dry_run, reserved_ips)
            old_ports = service_node_ports(old) if old is not None else set()
            await self._allocate_node_ports(obj, old_ports, owner, dry_run, reserved_ports)
        except BaseException:
            if not dry_run:
                await undo()
            raise

        async def finish(stored: bool) -> None:
            if dry_run:
                return
            if not stored:
                await undo()
                return
            if old is not None:
                for ip in set(service_ips(old)) - set(service_ips(obj)):
                    await self.ips.release(ip, owner)
                for port in service_node_ports(old) - service_node_ports(obj):
                    await self.ports.release(str(port), owner)

        return finish

    async def _allocate_ips(
        self, obj: Object, held: list[str], owner: str, dry_run: bool, reserved: list[str]
    ) -> None:
        """One cluster IP per family (two on a dual-stack Service): each given one reserved
        unless ``held`` already, each missing one taken from its family's range."""
        spec = obj["spec"]
        if not needs_cluster_ip(spec):
            return
        ips: list[str] = list(spec.get("clusterIPs") or [])
        families = list(spec.get("ipFamilies") or [self.network.primary.family])
        for ip in ips:
            if ip not in held:
                await self._reserve_given(obj, ip, ips, owner, dry_run, reserved)
        for family in families[len(ips) :]:
            ip_range = self.network.range_of(family) or self.network.primary
            candidates = ip_range.candidates(self.ips.rng)
            try:
                if dry_run:
                    ip = await self.ips.next_free(candidates)
                else:
                    ip = await self.ips.reserve_next(candidates, owner)
                    reserved.append(ip)
            except FullError as exc:
                raise errors.internal_error(
                    RuntimeError(f"failed to allocate a serviceIP: {exc}")
                ) from None
            ips.append(ip)
        spec["clusterIP"] = ips[0]
        spec["clusterIPs"] = ips

    async def _reserve_given(
        self, obj: Object, ip: str, ips: list[str], owner: str, dry_run: bool, reserved: list[str]
    ) -> None:
        """Reserve the IP a client asked for, in its family's range; 422 when it is taken."""
        parsed = ipaddress.ip_address(ip)  # validated already
        family = "IPv4" if parsed.version == 4 else "IPv6"
        ip_range = self.network.range_of(family) or self.network.primary
        try:
            if not ip_range.contains(parsed):
                raise ip_range.not_in_range(ip)
            if dry_run:
                if not await self.ips.is_free(ip):
                    raise AllocationError(IP_ALLOCATED)
            else:
                await self.ips.reserve(ip, owner)
                reserved.append(ip)
        except AllocationError as exc:
            name = (obj.get("metadata") or {}).get("name", "")
            detail = f"failed to allocate IP {ip}: {exc}"
            raise errors.invalid(
                "Service",
                "",
                name,
                [invalid(Path("spec", "clusterIPs"), _go_strings(ips), detail)],
            ) from None

    async def _allocate_node_ports(
        self, obj: Object, held: set[int], owner: str, dry_run: bool, reserved: list[int]
    ) -> None:
        """Upstream's ``initNodePorts``: ports with the same number share one node port."""
        spec = obj["spec"]
        name = (obj.get("metadata") or {}).get("name", "")
        allocate = allocates_node_ports(spec)
        by_number: dict[int, int] = {}
        ports: list[Object] = spec.get("ports") or []
        mine = set(held)

        async def take(value: int, i: int) -> None:
            if value in mine:
                return
            try:
                if not self.network.node_ports.contains(value):
                    raise self.network.node_ports.not_in_range()
                if dry_run:
                    if not await self.ports.is_free(str(value)):
                        raise AllocationError(PORT_ALLOCATED)
                else:
                    await self.ports.reserve(str(value), owner)
                    reserved.append(value)
            except AllocationError as exc:
                path = Path("spec", "ports").index(i).child("nodePort")
                raise errors.invalid(
                    "Service", "", name, [invalid(path, value, str(exc))]
                ) from None
            mine.add(value)

        for i, port in enumerate(ports):
            requested = port.get("nodePort") or 0
            if not requested and not allocate:
                continue
            number = port.get("port") or 0
            shared = by_number.get(number)
            if shared is None:
                wanted = requested or next(
                    (
                        p.get("nodePort")
                        for p in ports[i:]
                        if p.get("port") == number and p.get("nodePort")
                    ),
                    0,
                )
                if wanted:
                    await take(wanted, i)
                    port["nodePort"] = wanted
                    by_number[number] = wanted
                else:
                    candidates = (
                        str(p) for p in self.network.node_ports.candidates(self.ports.rng)
                    )
                    try:
                        if dry_run:
                            value = int(await self.ports.next_free(candidates))
                        else:
                            value = int(await self.ports.reserve_next(candidates, owner))
                            reserved.append(value)
                    except FullError as exc:
                        raise errors.internal_error(
                            RuntimeError(f"failed to allocate a nodePort: {exc}")
                        ) from None
                    mine.add(value)
                    port["nodePort"] = value
                    by_number[number] = value
            elif requested != shared:
                if not requested:
                    port["nodePort"] = shared
                else:
                    await take(requested, i)


# --- schema ---------------------------------------------------------------------------------

#: Generated from upstream's definitions (tools/apigen); registered for protobuf on import.
ServiceSchema = core_v1.Service


# --- table (upstream's ``printService``) -------------------------------------------------------

TYPE_DOC = "The type of the service: ClusterIP, NodePort, LoadBalancer or ExternalName."
CLUSTER_IP_DOC = "The IP address of the service, assigned from the service IP range."
EXTERNAL_IP_DOC = "The addresses the service is reachable at from outside the cluster."
PORTS_DOC = "The ports the service exposes."
SELECTOR_DOC = "The labels of the pods the service sends traffic to."


def _spec(obj: Object) -> Object:
    return obj.get("spec") or {}


def _load_balancer_cell(obj: Object, wide: bool) -> str:
    """``loadBalancerStatusStringer``: ingress IPs or host names, cut at 16 unless wide."""
    ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or ()
    values = [i.get("ip") or i.get("hostname") or "" for i in ingress]
    text = ",".join(v for v in values if v)
    if not wide and len(text) > 16:
        text = text[:13] + "..."
    return text


def external_ip_cell(obj: Object, wide: bool = False) -> str:
    """``getServiceExternalIP``."""
    spec = _spec(obj)
    external: list[str] = list(spec.get("externalIPs") or [])
    kind = spec.get("type")
    if kind in (CLUSTER_IP, NODE_PORT):
        return ",".join(external) if external else "<none>"
    if kind == LOAD_BALANCER:
        balancer = _load_balancer_cell(obj, wide)
        if external:
            return ",".join(([*balancer.split(",")] if balancer else []) + external)
        return balancer or "<pending>"
    if kind == EXTERNAL_NAME:
        return str(spec.get("externalName") or "")
    return "<unknown>"


def ports_cell(obj: Object) -> str:
    """``makePortString``: ``80/TCP``, ``80:30080/TCP``, comma-separated."""
    cells = []
    for port in _spec(obj).get("ports") or ():
        protocol = port.get("protocol") or ""
        if port.get("nodePort"):
            cells.append(f"{port.get('port', 0)}:{port['nodePort']}/{protocol}")
        else:
            cells.append(f"{port.get('port', 0)}/{protocol}")
    return ",".join(cells) if cells else "<none>"


def selector_cell(obj: Object) -> str:
    """``labels.FormatLabels``: ``k=v`` sorted by key, ``<none>`` when empty."""
    selector = _spec(obj).get("selector") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>"


COLUMNS = (
    NAME,
    Column("Type", "string", TYPE_DOC, lambda o: _spec(o).get("type", "")),
    Column("Cluster-IP", "string", CLUSTER_IP_DOC, lambda o: _spec(o).get("clusterIP") or "<none>"),
    Column("External-IP", "string", EXTERNAL_IP_DOC, external_ip_cell),
    Column("Port(s)", "string", PORTS_DOC, ports_cell),
    AGE,
    Column("Selector", "string", SELECTOR_DOC, selector_cell, priority=1),
)


def resources(network: ServiceNetwork | None = None) -> list[Resource]:
    """The core/v1 Service resource (the server hands it its ranges: :meth:`configure`)."""
    return [
        Resource(
            group="",
            kind="Service",
            plural="services",
            singular="service",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1", ServiceSchema, Lifecycle(introduced=Version(1, 0)), default_service
                )
            },
            hub_version="v1",
            storage_version="v1",
            strategy=ServiceStrategy(network),
            short_names=("svc",),
            categories=("all",),
            subresources=("status",),
            # Upstream keeps Services at /registry/services/specs/.
            storage_resource="services/specs",
            columns=COLUMNS,
        )
    ]
