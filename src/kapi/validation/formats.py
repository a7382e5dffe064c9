"""String formats of CRD schemas, checked as kube-openapi's ``strfmt.Default`` registry does.

Upstream (apiextensions-apiserver ``validation/formats.go``) first strips every
format a CRD may not use (``StripUnsupportedFormatsPostProcessorForVersion``):
on strings only the formats listed in :data:`SUPPORTED_STRING_FORMATS` survive,
on integers only ``int32``/``int64``, on numbers only ``float``/``double``;
anything else is ignored, not rejected. Surviving string formats are then
validated by the registry function of the same (dash-less) name.

The checkers below reimplement the Go functions the registry calls
(``net.ParseIP``, ``net.ParseMAC``, ``url.ParseRequestURI``,
``mail.ParseAddress``, ``time.Parse``, govalidator's regular expressions...)
closely enough to give the same verdict on ordinary input. Go's regexp is RE2:
``$`` is the end of the text and ``\\d``/``\\s`` are ASCII, so the patterns here
use ``fullmatch`` and explicit ASCII classes. Lengths Go takes with ``len`` are
UTF-8 byte counts.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable
from typing import Final

from kapi.apimachinery.gotext import go_len
from kapi.apimachinery.validation import is_dns1123_label, is_dns1123_subdomain

FormatChecker = Callable[[str], bool]

# Formats a CRD may use, dash-less as go-openapi normalises names (1.34 added the k8s- ones).
SUPPORTED_STRING_FORMATS: Final = frozenset(
    {
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
        "datetime",
        "k8sshortname",
        "k8slongname",
    }
)

INTEGER_FORMATS: Final = frozenset({"int32", "int64"})
NUMBER_FORMATS: Final = frozenset({"float", "double"})


def normalize_format_name(name: str) -> str:
    """go-openapi's ``DefaultNameNormalizer``: dashes are dropped (date-time == datetime)."""
    return name.replace("-", "")


def effective_format(fmt: str, types: tuple[str, ...]) -> str:
    """The format left after upstream strips those a CRD schema may not use ("" if none).

    ``types`` is the schema's type list (two entries for x-kubernetes-int-or-string,
    which upstream treats like an untyped schema here).
    """
    if not fmt:
        return ""
    schema_type = types[0] if len(types) == 1 else ""
    if schema_type in ("", "string"):
        return fmt if normalize_format_name(fmt) in SUPPORTED_STRING_FORMATS else ""
    if schema_type == "integer":
        return fmt if fmt in INTEGER_FORMATS else ""
    if schema_type == "number":
        return fmt if fmt in NUMBER_FORMATS else ""
    return ""


def string_format_checker(fmt: str) -> FormatChecker | None:
    """The registry's validator for ``fmt`` (``ContainsName``), or None when it has none."""
    return _CHECKERS.get(normalize_format_name(fmt))


# --- regular-expression formats -------------------------------------------------------------


def _full(pattern: str, flags: int = 0) -> FormatChecker:
    """A checker matching the whole string, as Go's ``^...$`` does (no trailing-newline slack)."""
    rx = re.compile(pattern, flags)

    def check(s: str) -> bool:
        return rx.fullmatch(s) is not None

    return check


_HEX = "[0-9a-fA-F]"
_UUID_TAIL = f"{_HEX}{{4}}-?{_HEX}{{12}}"
is_uuid = _full(f"{_HEX}{{8}}-?{_HEX}{{4}}-?{_HEX}{{4}}-?{_UUID_TAIL}")
is_uuid3 = _full(f"{_HEX}{{8}}-?{_HEX}{{4}}-?3{_HEX}{{3}}-?{_UUID_TAIL}")
is_uuid4 = _full(f"{_HEX}{{8}}-?{_HEX}{{4}}-?4{_HEX}{{3}}-?[89abAB]{_HEX}{{3}}-?{_HEX}{{12}}")
is_uuid5 = _full(f"{_HEX}{{8}}-?{_HEX}{{4}}-?5{_HEX}{{3}}-?[89abAB]{_HEX}{{3}}-?{_HEX}{{12}}")
is_hexcolor = _full(f"#?({_HEX}{{3}}|{_HEX}{{6}})")
_BYTE = "(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])"
_WS = "[\t\n\f\r ]*"  # Go's \s: ASCII whitespace without \v
is_rgbcolor = _full(f"rgb\\({_WS}{_BYTE}{_WS},{_WS}{_BYTE}{_WS},{_WS}{_BYTE}{_WS}\\)")
is_base64 = _full("(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})")
_SSN = re.compile("[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}")


def is_ssn(s: str) -> bool:
    return go_len(s) == 11 and _SSN.fullmatch(s) is not None


def is_bson_object_id(s: str) -> bool:
    """``ObjectIDFromHex``: exactly 12 hex-encoded bytes."""
    return len(s) == 24 and all(c in "0123456789abcdefABCDEF" for c in s)


def is_k8s_short_name(s: str) -> bool:
    """strfmt ``IsShortName``: a DNS-1123 label of at most 63 bytes."""
    return not is_dns1123_label(s)


def is_k8s_long_name(s: str) -> bool:
    """strfmt ``IsLongName``: a DNS-1123 subdomain of at most 253 bytes."""
    return not is_dns1123_subdomain(s)


def is_password(s: str) -> bool:
    return True


# --- checksummed numbers (govalidator) -------------------------------------------------------

_CREDIT_CARD = re.compile(
    "(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    "|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})"
)
_NOT_DIGITS = re.compile("[^0-9]+")
_ISBN_SEPARATORS = re.compile("[\t\n\f\r -]+")
_ISBN10 = re.compile("(?:[0-9]{9}X|[0-9]{10})")
_ISBN13 = re.compile("[0-9]{13}")


def is_credit_card(s: str) -> bool:
    """Every non-digit is dropped, then the issuer pattern and the Luhn checksum must hold."""
    digits = _NOT_DIGITS.sub("", s)
    if _CREDIT_CARD.fullmatch(digits) is None:
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d *= 2
            total += d % 10 + 1 if d >= 10 else d
        else:
            total += d
    return total % 10 == 0


def is_isbn10(s: str) -> bool:
    s = _ISBN_SEPARATORS.sub("", s)
    if _ISBN10.fullmatch(s) is None:
        return False
    checksum = sum((i + 1) * int(s[i]) for i in range(9))
    checksum += 100 if s[9] == "X" else 10 * int(s[9])
    return checksum % 11 == 0


def is_isbn13(s: str) -> bool:
    s = _ISBN_SEPARATORS.sub("", s)
    if _ISBN13.fullmatch(s) is None:
        return False
    checksum = sum((3 if i % 2 else 1) * int(s[i]) for i in range(12))
    return int(s[12]) - (10 - checksum % 10) % 10 == 0


def is_isbn(s: str) -> bool:
    return is_isbn10(s) or is_isbn13(s)


# --- hostnames ------------------------------------------------------------------------------

# The upstream pattern uses [a-zA-Z0-9\p{S}\p{L}] classes; Python's re has no \p, so each
# character is first mapped to its class ("a" letter, "s" symbol, "d" ASCII digit) and an
# ASCII pattern of the same shape runs on the mapped string.
_HOSTNAME_SHAPE = re.compile(
    r"[ads]((-?[ads]{0,62})?)|([ads](([ads-]{0,61}[ads])?)(\.)){1,}(a){2,63}"
)


def _hostname_class(ch: str) -> str:
    if ch in "-.":
        return ch
    if "0" <= ch <= "9":
        return "d"
    cat = unicodedata.category(ch)
    if cat[0] == "L":
        return "a"
    if cat[0] == "S":
        return "s"
    return "x"


def is_hostname(s: str) -> bool:
    shape = "".join(map(_hostname_class, s))
    if _HOSTNAME_SHAPE.fullmatch(shape) is None or go_len(s) > 255:
        return False
    return all(go_len(part) <= 63 for part in s.split("."))


# --- IP addresses (net.ParseIP and the sloppy fork in k8s.io/utils/net) ----------------------


def _parse_ipv4_sloppy(s: str) -> bytes | None:
    """Dotted decimal with leading zeros allowed, as Go's pre-1.17 parser."""
    parts = s.split(".")
    if len(parts) != 4:
        return None
    out = bytearray()
    for p in parts:
        if not p or not p.isascii() or not p.isdigit() or int(p) > 255:
            return None
        out.append(int(p))
    return bytes(out)


def _parse_ipv4_strict(s: str) -> bytes | None:
    parsed = _parse_ipv4_sloppy(s)
    if parsed is None or any(len(p) > 1 and p[0] == "0" for p in s.split(".")):
        return None
    return parsed


def _parse_ipv6(s: str, v4: Callable[[str], bytes | None]) -> bool:
    if "%" in s or not s.isascii():
        return False  # zones are not IPs for net.ParseIP
    head, sep, tail = s.rpartition(":")
    if sep and "." in tail:
        embedded = v4(tail)
        if embedded is None:
            return False
        s = f"{head}:{embedded[0] * 256 + embedded[1]:x}:{embedded[2] * 256 + embedded[3]:x}"
    try:
        ipaddress.IPv6Address(s)
    except ValueError:
        return False
    return True


def _parse_ip(s: str, sloppy: bool) -> int:
    """4 or 16 for an IPv4 or IPv6 address, 0 when ``s`` is not an IP."""
    v4 = _parse_ipv4_sloppy if sloppy else _parse_ipv4_strict
    if "." in s and ":" not in s:
        return 4 if v4(s) is not None else 0
    return 16 if _parse_ipv6(s, v4) else 0


def is_ipv4(s: str) -> bool:
    """``ParseIPSloppy(s) != nil && contains "."``: IPv4-mapped IPv6 forms pass too."""
    return "." in s and _parse_ip(s, True) != 0


def is_ipv6(s: str) -> bool:
    return ":" in s and _parse_ip(s, False) != 0


def is_cidr(s: str) -> bool:
    """``ParseCIDRSloppy``: a sloppy IP, a slash, and a decimal prefix length in range."""
    addr, sep, mask = s.partition("/")
    if not sep or not mask or not mask.isascii() or not mask.isdigit():
        return False
    size = _parse_ip(addr, True)
    return size != 0 and int(mask) <= 8 * size


# --- MAC addresses (net.ParseMAC) ------------------------------------------------------------

_MAC_OCTETS: Final = frozenset({6, 8, 20})
_HEX2 = re.compile("[0-9a-fA-F]{2}")
_HEX4 = re.compile("[0-9a-fA-F]{4}")


def is_mac(s: str) -> bool:
    """IEEE 802 MAC-48, EUI-48, EUI-64 or 20-octet IPoIB, ``:``/``-`` or dotted-quad form."""
    if len(s) < 14 or not s.isascii():
        return False
    if s[2] in ":-":
        groups = s.split(s[2])
        return len(groups) in _MAC_OCTETS and all(_HEX2.fullmatch(g) for g in groups)
    if s[4] == ".":
        groups = s.split(".")
        return 2 * len(groups) in _MAC_OCTETS and all(_HEX4.fullmatch(g) for g in groups)
    return False


# --- dates and durations ---------------------------------------------------------------------

_DATE = re.compile("([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DAYS_IN_MONTH: Final = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_date(s: str) -> bool:
    """``time.Parse("2006-01-02", s)``: fixed widths and a day that exists in that month."""
    m = _DATE.fullmatch(s)
    if m is None:
        return False
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = 29 if month == 2 and leap else _DAYS_IN_MONTH[month]
    return 1 <= day <= days


_TIME_OF_DAY = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")


def is_datetime(s: str) -> bool:
    """strfmt ``IsDateTime``: a date, a ``t``, and a time of day compared field by field."""
    if len(s) < 4:
        return False
    parts = s.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    m = _TIME_OF_DAY.fullmatch(parts[1])
    return m is not None and m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


_GO_DURATION = re.compile(
    "[-+]?(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h))+)"
)
_DURATION_TERM = re.compile("(([0-9]+)[\t\n\f\r ]*([A-Za-z\u00b5]+))")
_DURATION_UNITS: Final = (
    ("ns", "nano"),
    ("us", "\u00b5s", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)
_INT64_MAX: Final = (1 << 63) - 1


def _known_duration_unit(unit: str) -> bool:
    for variants in _DURATION_UNITS:
        if unit.startswith(variants[-1]) or any(unit == v.lower() for v in variants):
            return True
    return False


def is_duration(s: str) -> bool:
    """strfmt ``ParseDuration``: Go's ``time.ParseDuration``, else "<n> <unit>" terms.

    The fallback accepts a string when any term names a known unit (``3 days``),
    and rejects it when a term's number overflows before that.
    """
    if _GO_DURATION.fullmatch(s):
        return True
    ok = False
    for m in _DURATION_TERM.finditer(s):
        if int(m[2]) > _INT64_MAX:
            return False
        if _known_duration_unit(m[3].strip().lower()):
            ok = True
    return ok


# --- URIs and e-mail addresses ---------------------------------------------------------------

_SCHEME = re.compile("[a-zA-Z][a-zA-Z0-9+.-]*")
_BAD_ESCAPE = re.compile("%(?![0-9a-fA-F]{2})")
_PORT = re.compile(":[0-9]*")


def _valid_host(host: str) -> bool:
    if host.startswith("["):
        end = host.find("]")
        if end < 0:
            return False
        rest = host[end + 1 :]
        return not rest or _PORT.fullmatch(rest) is not None
    i = host.rfind(":")
    if i >= 0 and _PORT.fullmatch(host[i:]) is None:
        return False
    return _BAD_ESCAPE.search(host) is None


def is_request_uri(s: str) -> bool:
    """``url.ParseRequestURI``: an absolute URI or an absolute path, no fragment split off."""
    if not s or any(ord(c) < 0x20 or ord(c) == 0x7F for c in s):
        return False
    if s == "*":
        return True
    rest = s
    colon = s.find(":")
    m = _SCHEME.match(s)
    if colon == 0:
        return False  # missing protocol scheme
    has_scheme = m is not None and m.end() == colon
    if has_scheme:
        rest = s[colon + 1 :]
    rest = rest.partition("?")[0]
    if not rest.startswith("/"):
        return has_scheme  # opaque URI (mailto:x) is fine, a relative path is not
    if has_scheme and rest.startswith("//"):
        authority, _, rest = rest[2:].partition("/")
        userinfo, at, host = authority.rpartition("@")
        if at and "/" in userinfo:
            return False
        if not _valid_host(host):
            return False
    return _BAD_ESCAPE.search(rest) is None


_ATEXT = "A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\U0010ffff-"
_DOT_ATOM = f"[{_ATEXT}]+(?:\\.[{_ATEXT}]+)*"
_QUOTED = '"(?:[^"\\\\\r\n]|\\\\.)*"'
_ADDR_SPEC = f"(?:{_DOT_ATOM}|{_QUOTED})@(?:{_DOT_ATOM}|\\[[^\\[\\]\\\\]*\\])"
_EMAIL = re.compile(f"[ \t]*(?:{_ADDR_SPEC}|(?:[^<>]*?[ \t]*)?<{_ADDR_SPEC}>)[ \t]*")


def is_email(s: str) -> bool:
    """``mail.ParseAddress``: an addr-spec, optionally wrapped as ``Name <addr-spec>``."""
    return _EMAIL.fullmatch(s) is not None


_CHECKERS: Final[dict[str, FormatChecker]] = {
    "bsonobjectid": is_bson_object_id,
    "uri": is_request_uri,
    "email": is_email,
    "hostname": is_hostname,
    "ipv4": is_ipv4,
    "ipv6": is_ipv6,
    "cidr": is_cidr,
    "mac": is_mac,
    "uuid": is_uuid,
    "uuid3": is_uuid3,
    "uuid4": is_uuid4,
    "uuid5": is_uuid5,
    "isbn": is_isbn,
    "isbn10": is_isbn10,
    "isbn13": is_isbn13,
    "creditcard": is_credit_card,
    "ssn": is_ssn,
    "hexcolor": is_hexcolor,
    "rgbcolor": is_rgbcolor,
    "byte": is_base64,
    "password": is_password,
    "date": is_date,
    "duration": is_duration,
    "datetime": is_datetime,
    "k8sshortname": is_k8s_short_name,
    "k8slongname": is_k8s_long_name,
}
