"""networking.k8s.io ``NetworkPolicy`` and ``IngressClass``, and the extensions/v1beta1 versions.

``NetworkPolicy`` is served in ``networking.k8s.io/v1`` (since 1.7) and, until
1.16, in ``extensions/v1beta1`` (deprecated in 1.9): the same objects, stored
as ``networking.k8s.io/v1`` under one key, as upstream's storage factory
cohabits the two groups (events.k8s.io Events do the same with core Events).
``IngressClass`` is served in ``networking.k8s.io/v1`` (since 1.19) and the
deprecated ``v1beta1`` (1.18 to 1.22).  The versions have the same fields, so
converting between them only renames ``apiVersion``.

Defaults follow upstream's ``defaults.go`` of each version (a port's protocol
TCP, ``policyTypes`` from the rules given, a parameters reference's scope
``Cluster``); validation follows ``pkg/apis/networking/validation`` as of
v1.33 with the ``StrictIPCIDRValidation`` gate off (CIDRs are parsed as Go's
lenient ``ParseCIDRSloppy`` does; non-standard ones only warn), and the
strategies ``pkg/registry/networking/networkpolicy`` and ``ingressclass``:
the generation counts spec changes, and neither kind has a status.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    GoSyntax,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from kapi.apimachinery.gotext import go_quote
from kapi.apimachinery.unstructured import Object
from kapi.apis.batch_jobs import is_domain_prefixed_path
from kapi.apis.generated import extensions_v1beta1, networking_v1, networking_v1beta1
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column, label_selector_cell
from kapi.runtime.scheme import GroupVersionKind, Lifecycle, Resource, ResourceVersion
from kapi.version import Version

GROUP = "networking.k8s.io"
EXTENSIONS = "extensions"
#: The hub of extensions/v1beta1 NetworkPolicies: networking.k8s.io/v1 objects, never
#: served by that group.
EXTENSIONS_HUB = "__networking_v1"

TCP, UDP, SCTP = "TCP", "UDP", "SCTP"
INGRESS, EGRESS = "Ingress", "Egress"
#: The order upstream lists supported protocols and policy types in.
PROTOCOLS = (TCP, UDP, SCTP)
POLICY_TYPES = (INGRESS, EGRESS)
SCOPE_CLUSTER, SCOPE_NAMESPACE = "Cluster", "Namespace"
#: Sorted, as upstream's ``sets.String.List()`` reports them.
PARAMETER_SCOPES = (SCOPE_CLUSTER, SCOPE_NAMESPACE)
MAX_CONTROLLER_LENGTH = 250
#: The annotation that marks the IngressClass new Ingresses without a class get.
DEFAULT_CLASS_ANNOTATION = "ingressclass.kubernetes.io/is-default-class"

CIDR_DETAIL = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# --- defaults ---------------------------------------------------------------------------------


def _spec(obj: Object) -> Object:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _rules(spec: Object) -> Iterator[tuple[str, int, Object]]:
    """Every ingress and egress rule, with its list's name and its index."""
    for name in ("ingress", "egress"):
        for i, rule in enumerate(spec.get(name) or ()):
            if isinstance(rule, dict):
                yield name, i, rule


def default_network_policy(obj: Object) -> None:
    """``SetDefaults_NetworkPolicy`` and ``SetDefaults_NetworkPolicyPort`` (v1 and the beta)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    # Go writes the (non-pointer) pod selector even when empty: it selects every pod.
    if spec.get("podSelector") is None:
        spec["podSelector"] = {}
    for _, _, rule in _rules(spec):
        for port in rule.get("ports") or ():
            if isinstance(port, dict) and port.get("protocol") is None:
                port["protocol"] = TCP
    if not spec.get("policyTypes"):
        # A policy naming no type is an ingress policy, and an egress one when it has
        # egress rules.
        spec["policyTypes"] = [INGRESS, EGRESS] if spec.get("egress") else [INGRESS]


def default_ingress_class(obj: Object) -> None:
    """``SetDefaults_IngressClass``: a parameters reference without a scope is cluster-wide."""
    parameters = _spec(obj).get("parameters")
    if isinstance(parameters, dict) and parameters.get("scope") is None:
        parameters["scope"] = SCOPE_CLUSTER


# --- NetworkPolicy validation -----------------------------------------------------------------


def _parse_ip_sloppy(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Go's ``netutils.ParseIPSloppy``: IPv4 octets may have leading zeros (read as decimal)."""
    if ":" not in text:
        parts = text.split(".")
        if len(parts) != 4 or not all(p.isdigit() and p.isascii() and p for p in parts):
            return None
        if any(int(p) > 255 for p in parts):
            return None
        return ipaddress.IPv4Address(".".join(str(int(p)) for p in parts))
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        return None


def parse_cidr_sloppy(text: str) -> tuple[Any, Network] | None:
    """``netutils.ParseCIDRSloppy``: the address and its network, or ``None``.

    The address may have host bits set (``10.0.0.1/8``); the prefix length is
    decimal digits, leading zeros allowed.
    """
    address, slash, length = text.partition("/")
    if not slash or not length.isdigit() or not length.isascii():
        return None
    ip = _parse_ip_sloppy(address)
    if ip is None or int(length) > ip.max_prefixlen:
        return None
    return ip, ipaddress.ip_network(f"{ip}/{int(length)}", strict=False)


def _cidr_errors(path: Path, value: str) -> list[FieldError]:
    """``IsValidCIDRForLegacyField`` with strict validation off (the gate's 1.33 default).

    Strict validation would spare the CIDRs the old object had; lenient parsing
    takes the same values either way, so an update is checked as a create.
    """
    if parse_cidr_sloppy(value) is not None:
        return []
    return [invalid(path, value, CIDR_DETAIL)]


def validate_ip_block(block: Object, path: Path) -> list[FieldError]:
    """``ValidateIPBlock``: a CIDR, and exceptions strictly inside it."""
    cidr = block.get("cidr") or ""
    if not cidr:
        return [required(path.child("cidr"), "")]
    errs = _cidr_errors(path.child("cidr"), cidr)
    parsed = parse_cidr_sloppy(cidr)
    if parsed is None:
        return errs
    network = parsed[1]
    for i, text in enumerate(block.get("except") or ()):
        except_path = path.child("except").index(i)
        errs += _cidr_errors(except_path, text)
        inner = parse_cidr_sloppy(text)
        if inner is None:
            continue
        contained = inner[1].version == network.version and inner[1].network_address in network
        if not contained or network.prefixlen >= inner[1].prefixlen:
            errs.append(invalid(except_path, text, "must be a strict subset of `cidr`"))
    return errs


def validate_port(port: Object, path: Path) -> list[FieldError]:
    """``ValidateNetworkPolicyPort``: protocol, port by number or name, and ``endPort``."""
    errs: list[FieldError] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        errs.append(not_supported(path.child("protocol"), protocol, PROTOCOLS))
    value, end = port.get("port"), port.get("endPort")
    end_path = path.child("endPort")
    if value is None:
        if end is not None:
            errs.append(invalid(end_path, end, "may not be specified when `port` is not specified"))
    elif isinstance(value, int):
        errs += [invalid(path.child("port"), value, m) for m in validation.is_valid_port_num(value)]
        if end is not None:
            if end < value:
                errs.append(invalid(end_path, end, "must be greater than or equal to `port`"))
            errs += [invalid(end_path, end, m) for m in validation.is_valid_port_num(end)]
    else:
        if end is not None:
            errs.append(invalid(end_path, end, "may not be specified when `port` is non-numeric"))
        errs += [
            invalid(path.child("port"), value, m) for m in validation.is_valid_port_name(value)
        ]
    return errs


def validate_peer(peer: Object, path: Path) -> list[FieldError]:
    """``ValidateNetworkPolicyPeer``: at least one peer, an ipBlock alone."""
    errs: list[FieldError] = []
    count = 0
    for name in ("podSelector", "namespaceSelector"):
        if peer.get(name) is not None:
            count += 1
            errs += validation.validate_label_selector(peer[name], path.child(name))
    block = peer.get("ipBlock")
    if block is not None:
        count += 1
        errs += validate_ip_block(block, path.child("ipBlock"))
    if count == 0:
        errs.append(required(path, "must specify a peer"))
    elif count > 1 and block is not None:
        errs.append(forbidden(path, "may not specify both ipBlock and another peer"))
    return errs


def validate_network_policy_spec(spec: Object) -> list[FieldError]:
    """``ValidateNetworkPolicySpec``."""
    path = Path("spec")
    errs = validation.validate_label_selector(spec.get("podSelector"), path.child("podSelector"))
    for name, i, rule in _rules(spec):
        rule_path = path.child(name).index(i)
        for j, port in enumerate(rule.get("ports") or ()):
            errs += validate_port(port, rule_path.child("ports").index(j))
        peers = "from" if name == "ingress" else "to"
        for j, peer in enumerate(rule.get(peers) or ()):
            errs += validate_peer(peer, rule_path.child(peers).index(j))
    types = spec.get("policyTypes") or []
    types_path = path.child("policyTypes")
    if len(types) > len(POLICY_TYPES):
        typed = GoSyntax("[]networking.PolicyType{" + ", ".join(go_quote(t) for t in types) + "}")
        errs.append(invalid(types_path, typed, "may not specify more than two policyTypes"))
        return errs
    errs += [
        not_supported(types_path.index(i), t, POLICY_TYPES)
        for i, t in enumerate(types)
        if t not in POLICY_TYPES
    ]
    return errs


def _ip_blocks(spec: Object) -> Iterator[tuple[Path, Object]]:
    for name, i, rule in _rules(spec):
        peers = "from" if name == "ingress" else "to"
        for j, peer in enumerate(rule.get(peers) or ()):
            if isinstance(peer, dict) and isinstance(peer.get("ipBlock"), dict):
                yield Path("spec", name).index(i).child(peers).index(j), peer["ipBlock"]


def _is_strict_prefix(address: str, length: str) -> bool:
    """Whether Go's ``netip.ParsePrefix`` takes it: no leading zeros in octets or length."""
    try:
        ipaddress.ip_address(address)
    except ValueError:
        return False
    return length == str(int(length))


def _cidr_warnings(path: Path, value: str) -> list[str]:
    """``GetWarningsForCIDR``: host bits set, leading zeros, an IPv4-mapped or long IPv6."""
    parsed = parse_cidr_sloppy(value)
    if parsed is None:
        return []
    ip, network = parsed
    warnings: list[str] = []
    if ip != network.network_address:
        single = f"{ip}/{network.max_prefixlen}"
        warnings.append(
            f'{path}: CIDR value "{value}" is ambiguous in this context '
            f'(should be "{network}" or "{single}"?)'
        )
    address, _, length = value.partition("/")
    mapped = isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None
    if mapped or not _is_strict_prefix(address, length):
        warnings.append(
            f'{path}: non-standard CIDR value "{value}" will be considered invalid in a '
            f'future Kubernetes release: use "{network}"'
        )
    if not warnings and ip.version == 6 and f"{ip}/{length}" != value:
        warnings.append(
            f'{path}: IPv6 CIDR value "{value}" should be in RFC 5952 canonical format '
            f'("{ip}/{length}")'
        )
    return warnings


def network_policy_warnings(obj: Object) -> list[str]:
    """Upstream's ``networkPolicyWarnings``: each ipBlock CIDR in a non-standard form."""
    warnings: list[str] = []
    for path, block in _ip_blocks(_spec(obj)):
        block_path = path.child("ipBlock")
        if block.get("cidr"):
            warnings += _cidr_warnings(block_path.child("cidr"), block["cidr"])
        for k, text in enumerate(block.get("except") or ()):
            warnings += _cidr_warnings(block_path.child("except").index(k), text)
    return warnings


class NetworkPolicyStrategy(Strategy):
    """Upstream ``networkPolicyStrategy``: a generation, no status."""

    has_generation = True

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_network_policy_spec(_spec(obj))

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        # Upstream validates the spec twice (as an object, then as an update) and its
        # message names each error once.
        return validate_network_policy_spec(_spec(new))

    def warnings_on_create(self, obj: Object) -> list[str]:
        return network_policy_warnings(obj)

    def warnings_on_update(self, new: Object, old: Object) -> list[str]:
        return network_policy_warnings(new)


# --- IngressClass validation ------------------------------------------------------------------


def validate_parameters(params: Object, path: Path) -> list[FieldError]:
    """``validateIngressClassParametersReference``."""
    errs: list[FieldError] = []
    group = params.get("apiGroup")
    if group is not None:
        errs += [
            invalid(path.child("apiGroup"), group, m)
            for m in validation.is_dns1123_subdomain(group)
        ]
    for name in ("kind", "name"):
        value = params.get(name) or ""
        if not value:
            errs.append(required(path.child(name), ""))
        else:
            errs += [
                invalid(path.child(name), value, m)
                for m in validation.name_is_path_segment(value, False)
            ]
    scope = params.get("scope")
    if scope is None:
        errs.append(required(path.child("scope"), ""))
        return errs
    namespace = params.get("namespace")
    namespace_path = path.child("namespace")
    if scope not in PARAMETER_SCOPES:
        errs.append(not_supported(path.child("scope"), scope, PARAMETER_SCOPES))
    elif scope == SCOPE_NAMESPACE:
        if namespace is None:
            errs.append(required(namespace_path, "`parameters.scope` is set to 'Namespace'"))
        else:
            errs += [
                invalid(namespace_path, namespace, m)
                for m in validation.validate_namespace_name(namespace, False)
            ]
    elif namespace is not None:
        errs.append(forbidden(namespace_path, "`parameters.scope` is set to 'Cluster'"))
    return errs


def validate_ingress_class_spec(spec: Object) -> list[FieldError]:
    """``validateIngressClassSpec``: a domain-prefixed controller, valid parameters."""
    path = Path("spec")
    errs: list[FieldError] = []
    controller = spec.get("controller") or ""
    controller_path = path.child("controller")
    if not controller:
        errs.append(required(controller_path, ""))
    else:
        if len(controller.encode()) > MAX_CONTROLLER_LENGTH:
            errs.append(too_long(controller_path, "", MAX_CONTROLLER_LENGTH))
        errs += is_domain_prefixed_path(controller_path, controller)
    parameters = spec.get("parameters")
    if parameters is not None:
        errs += validate_parameters(parameters, path.child("parameters"))
    return errs


class IngressClassStrategy(Strategy):
    """Upstream ``ingressClassStrategy``: cluster-scoped, a generation, the controller fixed."""

    has_generation = True

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_ingress_class_spec(_spec(obj))

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        errs = validation.validate_immutable_field(
            _spec(new).get("controller") or "",
            _spec(old).get("controller") or "",
            Path("spec", "controller"),
        )
        return errs + validate_ingress_class_spec(_spec(new))


# --- resources --------------------------------------------------------------------------------


def _renamed(obj: Object) -> Object:
    """The versions have the same fields; the scheme sets ``apiVersion``."""
    return dict(obj)


def _parameters_cell(obj: Object) -> str:
    """``printIngressClass``'s PARAMETERS: ``Kind[.group]/name``, ``<none>`` without any."""
    params = _spec(obj).get("parameters")
    if not isinstance(params, dict):
        return "<none>"
    text = params.get("kind") or ""
    if params.get("apiGroup") is not None:
        text += "." + params["apiGroup"]
    return f"{text}/{params.get('name') or ''}"


NETWORK_POLICY_COLUMNS = (
    NAME,
    Column(
        "Pod-Selector",
        "string",
        "The pods the policy applies to.",
        lambda o: label_selector_cell(_spec(o).get("podSelector")),
    ),
    AGE,
)
INGRESS_CLASS_COLUMNS = (
    NAME,
    Column(
        "Controller",
        "string",
        "The controller that implements the class.",
        lambda o: _spec(o).get("controller") or "",
    ),
    Column(
        "Parameters",
        "string",
        "The object holding the class's configuration.",
        _parameters_cell,
    ),
    AGE,
)


def resources() -> list[Resource]:
    """NetworkPolicies and IngressClasses, and the extensions/v1beta1 NetworkPolicies."""
    return [
        Resource(
            group=GROUP,
            kind="NetworkPolicy",
            plural="networkpolicies",
            singular="networkpolicy",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1",
                    networking_v1.NetworkPolicy,
                    Lifecycle(introduced=Version(1, 7)),
                    default_network_policy,
                ),
            },
            hub_version="v1",
            storage_version="v1",
            strategy=NetworkPolicyStrategy(),
            short_names=("netpol",),
            columns=NETWORK_POLICY_COLUMNS,
        ),
        Resource(
            group=EXTENSIONS,
            kind="NetworkPolicy",
            plural="networkpolicies",
            singular="networkpolicy",
            namespaced=True,
            versions={
                "v1beta1": ResourceVersion(
                    "v1beta1",
                    extensions_v1beta1.NetworkPolicy,
                    Lifecycle(
                        introduced=Version(1, 3),
                        deprecated=Version(1, 9),
                        removed=Version(1, 16),
                        replacement=GroupVersionKind(GROUP, "v1", "NetworkPolicy"),
                    ),
                    default_network_policy,
                    to_hub=_renamed,
                    from_hub=_renamed,
                ),
                EXTENSIONS_HUB: ResourceVersion(
                    EXTENSIONS_HUB, networking_v1.NetworkPolicy, served=False
                ),
            },
            hub_version=EXTENSIONS_HUB,
            storage_version=EXTENSIONS_HUB,
            strategy=NetworkPolicyStrategy(),
            short_names=("netpol",),
            columns=NETWORK_POLICY_COLUMNS,
            hub_api_version=f"{GROUP}/v1",
        ),
        Resource(
            group=GROUP,
            kind="IngressClass",
            plural="ingressclasses",
            singular="ingressclass",
            namespaced=False,
            versions={
                "v1": ResourceVersion(
                    "v1",
                    networking_v1.IngressClass,
                    Lifecycle(introduced=Version(1, 19)),
                    default_ingress_class,
                ),
                "v1beta1": ResourceVersion(
                    "v1beta1",
                    networking_v1beta1.IngressClass,
                    Lifecycle(
                        introduced=Version(1, 18),
                        deprecated=Version(1, 19),
                        removed=Version(1, 22),
                        # Upstream's tag names the list kind; its warning says so too.
                        replacement=GroupVersionKind(GROUP, "v1", "IngressClassList"),
                    ),
                    default_ingress_class,
                    to_hub=_renamed,
                    from_hub=_renamed,
                ),
            },
            hub_version="v1",
            storage_version="v1",
            strategy=IngressClassStrategy(),
            columns=INGRESS_CLASS_COLUMNS,
        ),
    ]
