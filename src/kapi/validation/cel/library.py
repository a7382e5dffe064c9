"""The Kubernetes CEL libraries (``k8s.io/apiserver/pkg/cel/library``) on cel-expr-python.

The cel-expr-python bindings cannot return values of an opaque (abstract) type from a Python
function, so the Kubernetes ``Quantity``, ``URL``, ``IP`` and ``CIDR`` values are maps with one
reserved key holding a canonical form (``{"__quantity__": "1.5"}``). Equality of two values
of the same kind therefore follows upstream (``quantity('1') == quantity('1000m')``), but
``type(quantity('1'))`` is ``map`` rather than ``kubernetes.Quantity``, and their member
functions are declared on ``map(string, dyn)``. Regular expressions use Python's ``re`` where
upstream uses RE2; the patterns CRD authors write behave the same in both. The list
``indexOf``/``lastIndexOf`` overloads are missing: cel-expr-python allows one declaration per
function name, and the strings extension already declares ``indexOf`` for strings.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from cel_expr_python import cel

T = cel.Type
_MAP = T.Map(T.STRING, T.DYN)
_LIST = T.List(T.DYN)

_QUANTITY_KEY = "__quantity__"
_URL_KEY = "__url__"
_IP_KEY = "__ip__"
_CIDR_KEY = "__cidr__"


class LibraryError(ValueError):
    """An evaluation error raised by a library function; CEL turns it into an error value."""


def _member(name: str, overload: str, ret: Any, params: list[Any], impl: Callable) -> Any:
    return cel.FunctionDecl(name, [cel.Overload(overload, ret, params, is_member=True, impl=impl)])


def _global(name: str, overload: str, ret: Any, params: list[Any], impl: Callable) -> Any:
    return cel.FunctionDecl(name, [cel.Overload(overload, ret, params, impl=impl)])


def _overloads(name: str, overload: str, ret: Any, value: Any, alt: Any, impl: Callable) -> Any:
    """A member taking either a library value (map) or ``alt``: cel-expr-python dispatches
    on declared parameter types, so a ``dyn`` parameter would match nothing at runtime."""
    return cel.FunctionDecl(
        name,
        [
            cel.Overload(f"{overload}_{kind}", ret, [value, t], is_member=True, impl=impl)
            for kind, t in (("value", value), (alt.name().lower(), alt))
        ],
    )


# --- lists ---------------------------------------------------------------------------------


def _is_sorted(items: list[Any]) -> bool:
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def _sum(items: list[Any]) -> Any:
    return sum(items, 0)


def _min(items: list[Any]) -> Any:
    if not items:
        raise LibraryError("min called on empty list")
    return min(items)


def _max(items: list[Any]) -> Any:
    if not items:
        raise LibraryError("max called on empty list")
    return max(items)


# --- regex ---------------------------------------------------------------------------------


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise LibraryError(f"invalid regular expression: {e}") from None


def _find(s: str, pattern: str) -> str:
    m = _regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in _regex(pattern).finditer(s)]
    return found if limit < 0 else found[:limit]


# --- quantity ------------------------------------------------------------------------------

_QUANTITY_RE = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_EXPONENT_RE = re.compile(r"^[eE][+-]?[0-9]+$")


def _parse_quantity(s: str) -> Decimal | None:
    m = _QUANTITY_RE.match(s)
    if m is None:
        return None
    number, suffix = Decimal(m.group(1)), m.group(2)
    if suffix in _BINARY:
        return number * (Decimal(2) ** _BINARY[suffix])
    if suffix in _DECIMAL:
        return number.scaleb(_DECIMAL[suffix])
    if _EXPONENT_RE.match(suffix):
        try:
            return number.scaleb(int(suffix[1:]))
        except InvalidOperation:
            return None
    return None


def _quantity_value(d: Decimal) -> dict[str, str]:
    normalized = d.normalize()
    return {_QUANTITY_KEY: format(normalized, "f") if normalized == normalized else "0"}


def _to_decimal(q: dict[str, str]) -> Decimal:
    try:
        return Decimal(q[_QUANTITY_KEY])
    except KeyError:
        raise LibraryError("no such overload: value is not a quantity") from None


def _quantity(s: str) -> dict[str, str]:
    d = _parse_quantity(s)
    if d is None:
        raise LibraryError(
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    return _quantity_value(d)


def _as_integer(q: dict[str, str]) -> int:
    d = _to_decimal(q)
    if d != d.to_integral_value() or not -(2**63) <= d < 2**63:
        raise LibraryError("cannot convert value to integer")
    return int(d)


def _quantity_add(q: dict[str, str], other: Any) -> dict[str, str]:
    rhs = Decimal(other) if isinstance(other, int) else _to_decimal(other)
    return _quantity_value(_to_decimal(q) + rhs)


def _quantity_sub(q: dict[str, str], other: Any) -> dict[str, str]:
    rhs = Decimal(other) if isinstance(other, int) else _to_decimal(other)
    return _quantity_value(_to_decimal(q) - rhs)


def _compare(a: Decimal, b: Decimal) -> int:
    return (a > b) - (a < b)


# --- url -----------------------------------------------------------------------------------


def _parse_url(s: str) -> dict[str, str] | None:
    # Upstream uses Go url.ParseRequestURI: absolute URI or absolute path, no fragment.
    if not s or "#" in s:
        return None
    try:
        parts = urlsplit(s)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        return None
    if not parts.scheme and not s.startswith("/"):
        return None
    return {_URL_KEY: s}


def _url(s: str) -> dict[str, str]:
    u = _parse_url(s)
    if u is None:
        raise LibraryError(
            f"URL parse error during conversion from string: parse {s!r}: invalid URI for request"
        )
    return u


def _url_part(part: str) -> Callable[[dict[str, str]], str]:
    def get(u: dict[str, str]) -> str:
        p = urlsplit(u[_URL_KEY])
        if part == "host":
            return p.netloc.rpartition("@")[2]
        if part == "hostname":
            return p.hostname or ""
        if part == "port":
            return str(p.port) if p.port is not None else ""
        if part == "path":
            return p.path
        return p.scheme

    return get


def _url_query(u: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for pair in urlsplit(u[_URL_KEY]).query.split("&"):
        if pair:
            k, _, v = pair.partition("=")
            out.setdefault(k, []).append(v)
    return out


# --- ip / cidr -----------------------------------------------------------------------------


def _parse_ip(s: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    if "%" in s:  # zones are rejected upstream
        return None
    try:
        ip = ipaddress.ip_address(s)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return None
    return ip


def _ip(s: str) -> dict[str, str]:
    ip = _parse_ip(s)
    if ip is None:
        raise LibraryError(f"IP Address {s!r} parse error during conversion from string")
    return {_IP_KEY: str(ip)}


def _ip_of(v: dict[str, str]) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(v[_IP_KEY])


def _parse_cidr(s: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface | None:
    if "/" not in s or "%" in s:
        return None
    try:
        return ipaddress.ip_interface(s)
    except ValueError:
        return None


def _cidr(s: str) -> dict[str, str]:
    c = _parse_cidr(s)
    if c is None:
        raise LibraryError(f"network address parse error during conversion from string: {s!r}")
    return {_CIDR_KEY: str(c)}


def _cidr_of(v: dict[str, str]) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    return ipaddress.ip_interface(v[_CIDR_KEY])


def _contains_ip(c: dict[str, str], ip: Any) -> bool:
    addr = _ip_of(_ip(ip) if isinstance(ip, str) else ip)
    return addr in _cidr_of(c).network


def _contains_cidr(c: dict[str, str], other: Any) -> bool:
    sub = _cidr_of(_cidr(other) if isinstance(other, str) else other).network
    net = _cidr_of(c).network
    return sub.version == net.version and sub.subnet_of(net)  # type: ignore[arg-type]


def declarations() -> list[Any]:
    """Function declarations (with implementations) of the Kubernetes libraries kapi offers."""
    B, N, S = T.BOOL, T.INT, T.STRING  # bool, integer (number), string
    d = T.DYN
    return [
        # lists
        _member("isSorted", "list_is_sorted", B, [_LIST], _is_sorted),
        _member("sum", "list_sum", d, [_LIST], _sum),
        _member("min", "list_min", d, [_LIST], _min),
        _member("max", "list_max", d, [_LIST], _max),
        # regex
        _member("find", "string_find_string", S, [S, S], _find),
        cel.FunctionDecl(
            "findAll",
            [
                cel.Overload(
                    "string_find_all_string", T.List(S), [S, S], is_member=True, impl=_find_all
                ),
                cel.Overload(
                    "string_find_all_string_int",
                    T.List(S),
                    [S, S, N],
                    is_member=True,
                    impl=_find_all,
                ),
            ],
        ),
        # quantity
        _global("quantity", "string_to_quantity", _MAP, [S], _quantity),
        _global(
            "isQuantity", "is_quantity_string", B, [S], lambda s: _parse_quantity(s) is not None
        ),
        _member("sign", "quantity_sign", N, [_MAP], lambda q: _compare(_to_decimal(q), Decimal(0))),
        _member(
            "isInteger",
            "quantity_is_integer",
            B,
            [_MAP],
            lambda q: _to_decimal(q) == _to_decimal(q).to_integral_value(),
        ),
        _member("asInteger", "quantity_get_integer", N, [_MAP], _as_integer),
        _member(
            "asApproximateFloat",
            "quantity_get_float",
            T.DOUBLE,
            [_MAP],
            lambda q: float(_to_decimal(q)),
        ),
        _overloads("add", "quantity_add", _MAP, _MAP, N, _quantity_add),
        _overloads("sub", "quantity_sub", _MAP, _MAP, N, _quantity_sub),
        _member(
            "isGreaterThan",
            "quantity_is_greater_than",
            B,
            [_MAP, _MAP],
            lambda a, b: _to_decimal(a) > _to_decimal(b),
        ),
        _member(
            "isLessThan",
            "quantity_is_less_than",
            B,
            [_MAP, _MAP],
            lambda a, b: _to_decimal(a) < _to_decimal(b),
        ),
        _member(
            "compareTo",
            "quantity_compare_to",
            N,
            [_MAP, _MAP],
            lambda a, b: _compare(_to_decimal(a), _to_decimal(b)),
        ),
        # url
        _global("url", "string_to_url", _MAP, [S], _url),
        _global("isURL", "is_url_string", B, [S], lambda s: _parse_url(s) is not None),
        _member("getScheme", "url_get_scheme", S, [_MAP], _url_part("scheme")),
        _member("getHost", "url_get_host", S, [_MAP], _url_part("host")),
        _member("getHostname", "url_get_hostname", S, [_MAP], _url_part("hostname")),
        _member("getPort", "url_get_port", S, [_MAP], _url_part("port")),
        _member("getEscapedPath", "url_get_escaped_path", S, [_MAP], _url_part("path")),
        _member("getQuery", "url_get_query", T.Map(S, T.List(S)), [_MAP], _url_query),
        # ip
        _global("ip", "string_to_ip", _MAP, [S], _ip),
        _global("isIP", "is_ip", B, [S], lambda s: _parse_ip(s) is not None),
        _member("family", "ip_family", N, [_MAP], lambda v: _ip_of(v).version),
        _member(
            "isUnspecified", "ip_is_unspecified", B, [_MAP], lambda v: _ip_of(v).is_unspecified
        ),
        _member("isLoopback", "ip_is_loopback", B, [_MAP], lambda v: _ip_of(v).is_loopback),
        _member(
            "isLinkLocalUnicast",
            "ip_is_link_local_unicast",
            B,
            [_MAP],
            lambda v: _ip_of(v).is_link_local and not _ip_of(v).is_multicast,
        ),
        _member(
            "isGlobalUnicast",
            "ip_is_global_unicast",
            B,
            [_MAP],
            lambda v: (
                not (
                    _ip_of(v).is_multicast
                    or _ip_of(v).is_loopback
                    or _ip_of(v).is_link_local
                    or _ip_of(v).is_unspecified
                )
            ),
        ),
        # cidr
        _global("cidr", "string_to_cidr", _MAP, [S], _cidr),
        _global("isCIDR", "is_cidr", B, [S], lambda s: _parse_cidr(s) is not None),
        _overloads("containsIP", "cidr_contains_ip", B, _MAP, S, _contains_ip),
        _overloads("containsCIDR", "cidr_contains_cidr", B, _MAP, S, _contains_cidr),
        _member(
            "prefixLength", "cidr_prefix_length", N, [_MAP], lambda c: _cidr_of(c).network.prefixlen
        ),
        _member(
            "masked", "cidr_masked", _MAP, [_MAP], lambda c: {_CIDR_KEY: str(_cidr_of(c).network)}
        ),
    ]
