"""The Kubernetes CEL libraries (``k8s.io/apiserver/pkg/cel/library``) on cel-expr-python.

The cel-expr-python bindings cannot return values of an opaque (abstract) type from a Python
function, so the Kubernetes ``Quantity``, ``URL``, ``IP``, ``CIDR`` and ``NamedFormat`` values
are maps with one reserved key holding a canonical form (``{"__quantity__": "1.5"}``). Equality
of two values of the same kind therefore follows upstream (``quantity('1') == quantity('1000m')``),
but ``type(quantity('1'))`` is ``map`` rather than ``kubernetes.Quantity``, and their member
functions are declared on ``map(string, dyn)``. Regular expressions use Python's ``re`` where
upstream uses RE2; the patterns CRD authors write behave the same in both.

Nor can a Python function return an optional, which ``format.named`` and ``<format>.validate``
do. Those two are declared for the checker only (:data:`ENV_CONFIG_YAML`, whose types the
bindings parse properly); :data:`RUNTIME_REWRITES` sends their calls to hidden implementations
returning a list of zero or one element, wrapped in ``.first()``. The same redirection supplies
``cel.@mapInsert``, which the two-variable comprehension macros ``transformMap`` and
``transformMapEntry`` expand to and which the bindings declare but do not implement. Hidden
names start with ``@``, which CEL identifiers cannot, so rules cannot call them directly.

The strings extension is kapi's own (:mod:`~kapi.validation.cel.strings`): cel-expr-python
allows one declaration per function name, and its extension would declare ``indexOf`` and
``lastIndexOf`` for strings only, leaving no room for the lists library's overloads. The semver
library is not offered on purpose: it arrived in 1.33, and kube-apiserver
1.33 compiles new CRD rules for compatibility version 1.32.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from typing import Any, Final, NamedTuple
from urllib.parse import urlsplit

from cel_expr_python import cel

from kapi.apimachinery.gotext import go_quote
from kapi.apimachinery.quantity import QuantityError, parse_quantity
from kapi.apimachinery.validation import (
    is_qualified_name,
    is_valid_label_value,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
)
from kapi.validation import formats
from kapi.validation.cel import strformat, strings
from kapi.validation.cel.checked import CallRewrite

T = cel.Type
_MAP = T.Map(T.STRING, T.DYN)
_LIST = T.List(T.DYN)
#: Declared parameter type that matches a value of any kind at runtime (``dyn`` matches none).
_ANY = T("any")

_QUANTITY_KEY = "__quantity__"
_URL_KEY = "__url__"
_IP_KEY = "__ip__"
_CIDR_KEY = "__cidr__"
_FORMAT_KEY = "__format__"


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


def _parse_quantity(s: str) -> Decimal | None:
    """The value of ``resource.ParseQuantity(s)``, which upstream's ``quantity()`` calls."""
    try:
        return parse_quantity(s).amount
    except QuantityError:
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
    try:
        return _quantity_value(parse_quantity(s).amount)
    except QuantityError as exc:
        raise LibraryError(str(exc)) from None


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


class _URLError(ValueError):
    """An error of Go's ``url.Parse``; ``str()`` is the error's own text (``err.Err``)."""


_CTL = re.compile("[\x00-\x1f\x7f]")
_SCHEME_CHAR = re.compile("[A-Za-z]")
_SCHEME_CONT = re.compile("[0-9+.-]")
_HEX = "0123456789abcdefABCDEF"
_USERINFO_OK = frozenset("-._:~!$&'()*+,;=%@")
_HOST_OK = frozenset("!$&'()*+,;=:[]<>\"-_.~")


def _unescape(s: str, host: bool) -> None:
    """Go ``unescape``'s checks: well-formed %-escapes and, in hosts, allowed characters."""
    i = 0
    while i < len(s):
        c = s[i]
        if c == "%":
            if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                raise _URLError(f"invalid URL escape {go_quote(s[i : i + 3])}")
            if host and int(s[i + 1], 16) < 8 and s[i : i + 3] != "%25":
                raise _URLError(f"invalid URL escape {go_quote(s[i : i + 3])}")
            i += 3
            continue
        if host and ord(c) < 0x80 and not (c.isalnum() or c in _HOST_OK):
            raise _URLError(f"invalid character {go_quote(c)} in host name")
        i += 1


def _check_port(colon_port: str) -> None:
    if colon_port and (colon_port[0] != ":" or not all("0" <= c <= "9" for c in colon_port[1:])):
        raise _URLError(f"invalid port {go_quote(colon_port)} after host")


def _check_authority(authority: str) -> None:
    """Go ``parseAuthority``: host (and port), then userinfo."""
    userinfo, at, host = authority.rpartition("@")
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise _URLError("missing ']' in host")
        _check_port(host[end + 1 :])
    elif ":" in host:
        _check_port(host[host.rfind(":") :])
    _unescape(host, host=True)
    if at:
        if not all((c.isascii() and c.isalnum()) or c in _USERINFO_OK for c in userinfo):
            raise _URLError("net/url: invalid userinfo")
        _unescape(userinfo, host=False)


def _scheme(raw: str) -> tuple[str, str]:
    """Go ``getScheme``: (scheme, rest); no scheme when the text does not start with one."""
    for i, c in enumerate(raw):
        if _SCHEME_CHAR.match(c):
            continue
        if _SCHEME_CONT.match(c):
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise _URLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def request_uri_error(raw: str) -> str | None:
    """Go ``url.ParseRequestURI``'s error text for ``raw``, or None when it parses.

    An absolute URI or an absolute path; no fragment is split off, so ``#`` is part of the
    path or query.
    """
    try:
        _check_request_uri(raw)
    except _URLError as e:
        return f"parse {go_quote(raw)}: {e}"
    return None


def _check_request_uri(raw: str) -> None:
    if _CTL.search(raw):
        raise _URLError("net/url: invalid control character in URL")
    if not raw:
        raise _URLError("empty url")
    if raw == "*":
        return
    scheme, rest = _scheme(raw)
    # The query is cut off; a lone trailing "?" forces an empty one.
    rest = rest[:-1] if rest.endswith("?") and rest.count("?") == 1 else rest.partition("?")[0]
    if not rest.startswith("/"):
        if scheme:
            return  # an opaque URI, such as mailto:someone
        raise _URLError("invalid URI for request")
    if scheme and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        _check_authority(authority)
        rest = slash + path
    _unescape(rest, host=False)


def _url(s: str) -> dict[str, str]:
    err = request_uri_error(s)
    if err is not None:
        raise LibraryError(f"URL parse error during conversion from string: {err}")
    return {_URL_KEY: s}


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


def _is_canonical(s: str) -> bool:
    """``ip.isCanonical``: whether ``s`` is spelled as Go's ``netip.Addr.String()`` would."""
    return _ip(s)[_IP_KEY] == s


def _is_link_local_multicast(v: dict[str, str]) -> bool:
    """Go ``netip.Addr.IsLinkLocalMulticast``: 224.0.0.0/24, or ff02::/16 with any flags."""
    ip = _ip_of(v)
    if ip.version == 4:
        return ip.packed[:3] == b"\xe0\x00\x00"
    return int.from_bytes(ip.packed[:2], "big") & 0xFF0F == 0xFF02


def _contains_ip(c: dict[str, str], ip: Any) -> bool:
    addr = _ip_of(_ip(ip) if isinstance(ip, str) else ip)
    return addr in _cidr_of(c).network


def _contains_cidr(c: dict[str, str], other: Any) -> bool:
    sub = _cidr_of(_cidr(other) if isinstance(other, str) else other).network
    net = _cidr_of(c).network
    return sub.version == net.version and sub.subnet_of(net)  # type: ignore[arg-type]


# --- format --------------------------------------------------------------------------------


class NamedFormat(NamedTuple):
    """One of upstream's ``ConstantFormats``: its validation and its cost estimate input."""

    validate: Callable[[str], list[str]]
    #: Length of the regular expression (or an equivalent estimate) the validation runs.
    max_regex_size: int


def _uri_errors(s: str) -> list[str]:
    err = request_uri_error(s)
    return [] if err is None else [err]


def _strfmt(name: str, message: str) -> Callable[[str], list[str]]:
    """A format validated by kube-openapi's ``strfmt.Default`` registry, with one message."""
    check = formats.string_format_checker(name)
    assert check is not None

    def validate(s: str) -> list[str]:
        return [] if check(s) else [message]

    return validate


#: Upstream's size estimates: govalidator's URL and base64 patterns, strfmt's UUID and
#: date-time patterns (the date format is estimated with the date-time pattern).
_URL_REGEX_SIZE: Final = 1103
_BASE64_REGEX_SIZE: Final = 84
_UUID_PATTERN_SIZE: Final = 70
_DATE_TIME_PATTERN_SIZE: Final = 71

FORMATS: Final[dict[str, NamedFormat]] = {
    "dns1123Label": NamedFormat(lambda s: name_is_dns_label(s, False), 30),
    "dns1123Subdomain": NamedFormat(lambda s: name_is_dns_subdomain(s, False), 60),
    "dns1035Label": NamedFormat(lambda s: name_is_dns1035_label(s, False), 30),
    "qualifiedName": NamedFormat(is_qualified_name, 60),
    "dns1123LabelPrefix": NamedFormat(lambda s: name_is_dns_label(s, True), 30),
    "dns1123SubdomainPrefix": NamedFormat(lambda s: name_is_dns_subdomain(s, True), 60),
    "dns1035LabelPrefix": NamedFormat(lambda s: name_is_dns1035_label(s, True), 30),
    "labelValue": NamedFormat(is_valid_label_value, 40),
    "uri": NamedFormat(_uri_errors, _URL_REGEX_SIZE),
    "uuid": NamedFormat(_strfmt("uuid", "does not match the UUID format"), _UUID_PATTERN_SIZE),
    "byte": NamedFormat(_strfmt("byte", "invalid base64"), _BASE64_REGEX_SIZE),
    "date": NamedFormat(_strfmt("date", "invalid date"), _DATE_TIME_PATTERN_SIZE),
    "datetime": NamedFormat(_strfmt("datetime", "invalid datetime"), _DATE_TIME_PATTERN_SIZE),
}


def format_name(node_name: str) -> str | None:
    """The format a ``format.<name>()`` call returns, from the called function's name."""
    prefix, _, name = node_name.partition(".")
    return name if prefix == "format" and name in FORMATS else None


def _format_value(name: str) -> dict[str, str]:
    return {_FORMAT_KEY: name}


def _named_format(name: str) -> list[dict[str, str]]:
    """``format.named``: the format, or nothing (``optional.none()``) for an unknown name."""
    return [_format_value(name)] if name in FORMATS else []


def _validate_format(f: dict[str, str], s: str) -> list[list[str]]:
    """``<format>.validate``: nothing when ``s`` is valid, else the list of its errors."""
    try:
        named = FORMATS[f[_FORMAT_KEY]]
    except KeyError:
        raise LibraryError("no such overload: value is not a format") from None
    errors = named.validate(s)
    return [errors] if errors else []


def _format_constructors() -> list[Any]:
    """``format.dns1123Label()`` and the other zero-argument constructors."""
    return [
        _global(f"format.{name}", f"format.{name}", _MAP, [], lambda name=name: _format_value(name))
        for name in FORMATS
    ]


# --- two-variable comprehensions -----------------------------------------------------------


def _cel_text(v: Any) -> str:
    """Go ``%v`` of a CEL map key in cel-go's errors."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _map_insert(m: dict[Any, Any], key: Any, value: Any = None) -> dict[Any, Any]:
    """``cel.@mapInsert``: one entry, or every entry of a map; existing keys are an error."""
    update = key if value is None and isinstance(key, dict) else {key: value}
    for k in update:
        if k in m:
            raise LibraryError(f"insert failed: key {_cel_text(k)} already exists")
    return {**m, **update}


# --- environment ---------------------------------------------------------------------------

_HIDDEN_FORMAT_NAMED = "@kapi.format.named"
_HIDDEN_FORMAT_VALIDATE = "@kapi.format.validate"
_HIDDEN_MAP_INSERT = "@kapi.mapInsert"

#: Calls the checker resolves to these overloads run the hidden implementations instead.
RUNTIME_REWRITES: Final[dict[str, CallRewrite]] = {
    "format-named": CallRewrite(_HIDDEN_FORMAT_NAMED, wrap_first=True),
    "format-validate": CallRewrite(_HIDDEN_FORMAT_VALIDATE, wrap_first=True),
    "@mapInsert_map_key_value": CallRewrite(_HIDDEN_MAP_INSERT, wrap_first=False),
    "@mapInsert_map_map": CallRewrite(_HIDDEN_MAP_INSERT, wrap_first=False),
}

#: The extensions Kubernetes 1.33 enables for CRD rules (strings is kapi's own, version 2 as
#: cel-go's: see ``strings`` and ``strformat``) and the
#: declarations only the checker sees: functions returning optionals (see module docstring).
ENV_CONFIG_YAML: Final = """\
extensions:
  - name: optional
  - name: bindings
  - name: sets
  - name: two-var-comprehensions
functions:
  - name: format.named
    overloads:
      - id: format-named
        args:
          - type_name: string
        return:
          type_name: optional_type
          params:
            - type_name: map
              params: [{type_name: string}, {type_name: dyn}]
  - name: validate
    overloads:
      - id: format-validate
        target:
          type_name: map
          params: [{type_name: string}, {type_name: dyn}]
        args:
          - type_name: string
        return:
          type_name: optional_type
          params:
            - type_name: list
              params: [{type_name: string}]
"""


def _overloaded(name: str, *overloads: tuple[str, Any, list[Any], Callable]) -> Any:
    """A member function with several ``(id, result, params, impl)`` overloads."""
    return cel.FunctionDecl(
        name,
        [
            cel.Overload(oid, ret, params, is_member=True, impl=impl)
            for oid, ret, params, impl in overloads
        ],
    )


def _strings_declarations() -> list[Any]:
    """cel-go's strings extension, and the list ``indexOf``/``lastIndexOf`` of Kubernetes'
    lists library under the same names (see :mod:`~kapi.validation.cel.strings`)."""
    N, S = T.INT, T.STRING
    return [
        _member("charAt", "string_char_at_int", S, [S, N], strings.char_at),
        _overloaded(
            "indexOf",
            ("string_index_of_string", N, [S, S], strings.index_of),
            ("string_index_of_string_int", N, [S, S, N], strings.index_of),
            ("list_a_index_of_int", N, [_LIST, _ANY], strings.list_index_of),
        ),
        _overloaded(
            "lastIndexOf",
            ("string_last_index_of_string", N, [S, S], strings.last_index_of),
            ("string_last_index_of_string_int", N, [S, S, N], strings.last_index_of),
            ("list_a_last_index_of_int", N, [_LIST, _ANY], strings.list_last_index_of),
        ),
        _member("lowerAscii", "string_lower_ascii", S, [S], strings.lower_ascii),
        _member("upperAscii", "string_upper_ascii", S, [S], strings.upper_ascii),
        _overloaded(
            "replace",
            ("string_replace_string_string", S, [S, S, S], strings.replace),
            ("string_replace_string_string_int", S, [S, S, S, N], strings.replace),
        ),
        _overloaded(
            "split",
            ("string_split_string", T.List(S), [S, S], strings.split),
            ("string_split_string_int", T.List(S), [S, S, N], strings.split),
        ),
        _overloaded(
            "substring",
            ("string_substring_int", S, [S, N], strings.substring),
            ("string_substring_int_int", S, [S, N, N], strings.substring),
        ),
        _member("trim", "string_trim", S, [S], strings.trim),
    ]


def declarations() -> list[Any]:
    """Function declarations (with implementations) of the Kubernetes libraries kapi offers."""
    B, N, S = T.BOOL, T.INT, T.STRING  # bool, integer (number), string
    d = T.DYN
    map_dyn = T.Map(d, d)
    return [
        *_strings_declarations(),
        # strings (version 2 functions that are cel-go's own, see strformat)
        _member("format", strformat.FORMAT_OVERLOAD, S, [S, _LIST], strformat.format_string),
        _global("strings.quote", "strings_quote", S, [S], strformat.quote),
        cel.FunctionDecl(
            "join",
            [
                cel.Overload("list_join", S, [T.List(S)], is_member=True, impl=strformat.join),
                cel.Overload(
                    "list_join_string", S, [T.List(S), S], is_member=True, impl=strformat.join
                ),
            ],
        ),
        # format
        *_format_constructors(),
        _global(_HIDDEN_FORMAT_NAMED, "kapi_format_named", T.List(_MAP), [S], _named_format),
        _member(
            _HIDDEN_FORMAT_VALIDATE,
            "kapi_format_validate",
            T.List(T.List(S)),
            [_MAP, S],
            _validate_format,
        ),
        # two-variable comprehensions
        cel.FunctionDecl(
            _HIDDEN_MAP_INSERT,
            [
                cel.Overload(
                    "kapi_map_insert_key_value", map_dyn, [map_dyn, _ANY, _ANY], impl=_map_insert
                ),
                cel.Overload("kapi_map_insert_map", map_dyn, [map_dyn, map_dyn], impl=_map_insert),
            ],
        ),
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
        _global("isURL", "is_url_string", B, [S], lambda s: request_uri_error(s) is None),
        _member("getScheme", "url_get_scheme", S, [_MAP], _url_part("scheme")),
        _member("getHost", "url_get_host", S, [_MAP], _url_part("host")),
        _member("getHostname", "url_get_hostname", S, [_MAP], _url_part("hostname")),
        _member("getPort", "url_get_port", S, [_MAP], _url_part("port")),
        _member("getEscapedPath", "url_get_escaped_path", S, [_MAP], _url_part("path")),
        _member("getQuery", "url_get_query", T.Map(S, T.List(S)), [_MAP], _url_query),
        # ip
        cel.FunctionDecl(
            "ip",
            [
                cel.Overload("string_to_ip", _MAP, [S], impl=_ip),
                cel.Overload(
                    "cidr_ip",
                    _MAP,
                    [_MAP],
                    is_member=True,
                    impl=lambda c: {_IP_KEY: str(_cidr_of(c).ip)},
                ),
            ],
        ),
        _global("isIP", "is_ip", B, [S], lambda s: _parse_ip(s) is not None),
        _global("ip.isCanonical", "ip_is_canonical", B, [S], _is_canonical),
        _member("family", "ip_family", N, [_MAP], lambda v: _ip_of(v).version),
        _member(
            "isUnspecified", "ip_is_unspecified", B, [_MAP], lambda v: _ip_of(v).is_unspecified
        ),
        _member("isLoopback", "ip_is_loopback", B, [_MAP], lambda v: _ip_of(v).is_loopback),
        _member(
            "isLinkLocalMulticast",
            "ip_is_link_local_multicast",
            B,
            [_MAP],
            _is_link_local_multicast,
        ),
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
