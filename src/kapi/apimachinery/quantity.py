"""``resource.Quantity``: parsing, and the canonical text kube-apiserver writes back.

kube-apiserver decodes every quantity of a built-in kind (container limits and
requests, ``emptyDir.sizeLimit``, a downward API ``divisor`` ...) into Go's
``resource.Quantity`` and encodes it with ``Quantity.String()``, so a client
reads back ``"1"`` for the ``"1000m"`` it sent, ``"1536Mi"`` for ``"1.5Gi"``,
and text that does not parse fails the request.  This module follows
``k8s.io/apimachinery/pkg/api/resource`` (``quantity.go``, ``suffix.go``,
``amount.go``, ``math.go``) so that kapi answers with the same text and the
same errors:

* a value keeps the *format* of its suffix: ``DecimalSI`` (``m``, ``k``,
  ``M`` ... or none), ``BinarySI`` (``Ki`` ... ``Ei``) or ``DecimalExponent``
  (``e3``, ``E-6``);
* parsing rounds a value up (away from zero) to whole nanos, caps a binary one
  at ``2^63-1``, and turns a binary one between 0 and 1 into ``DecimalSI``;
* the canonical text is the value as an integer mantissa and the largest
  exponent that is a multiple of three (a power of 1024 for ``BinarySI``, which
  falls back to ``DecimalSI`` under 1024 or when the value is not an integer);
* text that upstream already finds canonical is kept as sent, including what
  only its cheap check lets through (a leading ``+``, leading zeros, ``1E3``).

Values are exact :class:`~decimal.Decimal` numbers; Go's ``int64`` fast path
matters only for deciding whether the text is kept.  Exponents wrap at 32 bits
where upstream's ``int32`` arithmetic does.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, ROUND_UP, Context, Decimal, InvalidOperation
from enum import Enum
from functools import cached_property, lru_cache
from typing import Any, NamedTuple


class Format(Enum):
    """How a quantity is written: the kind of suffix it was parsed with."""

    DECIMAL_EXPONENT = "DecimalExponent"  # 12e6
    BINARY_SI = "BinarySI"  # 12Mi
    DECIMAL_SI = "DecimalSI"  # 12M


#: The pattern upstream's error names (its scanner is a hand-written form of it).
SPLIT_RE_STRING = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE_STRING}'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"


class QuantityError(ValueError):
    """Text that is not a quantity; ``str()`` is upstream's error text."""


_DECIMAL_SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SI_SUFFIX = {exponent: suffix for suffix, exponent in _DECIMAL_SI.items()}
_BINARY_SI = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_SI_SUFFIX = {exponent // 10: suffix for suffix, exponent in _BINARY_SI.items()}

_DIGITS = frozenset("0123456789")
_SUFFIX_LETTERS = frozenset("eEinumkKMGTP")
#: Go's ``unicode.IsSpace``, which ``strings.TrimSpace`` strips (``str.strip()`` strips more).
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)

_MAX_INT64 = (1 << 63) - 1
#: ``maxInt64Factors``: the decimal digits an int64 surely holds (upstream's fast-path limit).
_MAX_INT64_FACTORS = 18
#: ``Nano``: values are rounded up to this many decimal places.
_NANO_PLACES = 9
_ONE_NANO = Decimal(1).scaleb(-_NANO_PLACES)
#: Arithmetic that never rounds: the exponents here are unbounded, as ``inf.Dec``'s are.
_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)


@dataclass(frozen=True)
class Quantity:
    """A parsed quantity: its exact value, its format, and its text when already canonical."""

    amount: Decimal
    format: Format
    #: The text it was parsed from, when upstream keeps it (its cached ``s``).
    text: str | None = None

    def __str__(self) -> str:
        """``Quantity.String()``: the text kept from parsing, or the canonical form."""
        if self.text is not None:
            return self.text
        return self._canonical_text

    @cached_property
    def _canonical_text(self) -> str:
        """The canonical form, worked out once: parsed quantities are shared (see
        :func:`parse_quantity`), and ``128Mi`` is not kept as sent (upstream's cheap
        check keeps no binary multiple of 8), so every request would rebuild it."""
        return _canonical(self.amount, self.format)


ZERO = Quantity(Decimal(0), Format.DECIMAL_SI)


#: How many distinct quantity texts :func:`parse_quantity` remembers.
_PARSED_CACHE_SIZE = 4096


@lru_cache(maxsize=_PARSED_CACHE_SIZE)
def parse_quantity(text: str) -> Quantity:
    """``resource.ParseQuantity``; raises :class:`QuantityError` with upstream's text.

    One request meets each of its quantities several times (defaulting rounds it,
    decoding writes it back canonical, validation checks its value), and clients
    send the same few texts (``100m``, ``128Mi``) over and over: a parsed
    :class:`Quantity` is immutable, so the result is remembered per text.  Text
    that fails is parsed again each time (errors are rare and not cached).
    """
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG)
    if text == "0":
        return Quantity(Decimal(0), Format.DECIMAL_SI, text)
    parts = _split(text)
    base, exponent, format_ = _interpret(parts.suffix)
    fast = _int64_amount(text, parts, exponent, format_)
    return fast if fast is not None else _dec_amount(parts, base, exponent, format_)


def unmarshal_json(value: Any) -> Quantity:
    """``Quantity.UnmarshalJSON`` for an already decoded JSON value.

    ``null`` is zero; a string is parsed without the white space around it; a
    number is parsed from its JSON text.  Upstream hands any other value's raw
    JSON (``true``, ``{...}``, ``[...]``) to the parser, which finds no number
    at its start.
    """
    if value is None:
        return ZERO
    if isinstance(value, str):
        return parse_quantity(value.strip(_GO_SPACE))
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise QuantityError(ERR_FORMAT_WRONG)
    return parse_quantity(_json_number_text(value))


def _json_number_text(value: int | float) -> str:
    """A number's JSON text, positional as Go's and JavaScript's encoders write common values."""
    if isinstance(value, int):
        return str(value)
    return format(Decimal(repr(value)), "f")


# -- parsing -----------------------------------------------------------------------------------


class _Parts(NamedTuple):
    """``parseQuantityString``'s pieces: the signed number's text, its digits, the suffix."""

    positive: bool
    #: The signed number as written (``"0"`` when it is only zeros).
    value: str
    #: Integer digits without leading zeros (``"0"`` when none are left).
    num: str
    #: Fraction digits as written.
    denom: str
    suffix: str


def _split(text: str) -> _Parts:
    """Scan ``text`` as upstream's ``parseQuantityString`` does.

    It is looser than :data:`SPLIT_RE_STRING`: the suffix is only checked to
    be letters from a set, a sign and digits; ``_interpret`` decides whether
    it means anything.
    """
    end = len(text)
    pos = 1 if text[0] in "+-" else 0
    positive = text[0] != "-"
    while pos < end and text[pos] == "0":
        pos += 1
    if pos == end:
        return _Parts(positive, "0", "0", "", "")
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    if pos == end:
        return _Parts(positive, text, num, denom, "")
    value, start = text[:pos], pos
    while pos < end and text[pos] in _SUFFIX_LETTERS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return _Parts(positive, value, num, denom, text[start:])


def _interpret(suffix: str) -> tuple[int, int, Format]:
    """The base, exponent and format a suffix stands for (upstream's ``quantitySuffixer``)."""
    if suffix in _DECIMAL_SI:
        return 10, _DECIMAL_SI[suffix], Format.DECIMAL_SI
    if suffix in _BINARY_SI:
        return 2, _BINARY_SI[suffix], Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        exponent = _parse_int64(suffix[1:])
        if exponent is not None:
            return 10, _int32(exponent), Format.DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``, or ``None`` where it fails."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not set(digits) <= _DIGITS or len(digits.lstrip("0")) > 19:
        return None
    value = int(text)
    return value if -(1 << 63) <= value <= _MAX_INT64 else None


def _int32(value: int) -> int:
    """``value`` as Go's ``int32`` arithmetic leaves it (wrapping around)."""
    return (value + (1 << 31)) % (1 << 32) - (1 << 31)


def _int64_amount(text: str, parts: _Parts, exponent: int, format_: Format) -> Quantity | None:
    """Upstream's fast path, for values an int64 holds to the nano; ``None`` where it can't.

    It is the only place upstream keeps the text as sent: when the digits end
    in no three zeros and the exponent is a multiple of three (for ``BinarySI``:
    when the number is not a multiple of 8).
    """
    if format_ is Format.BINARY_SI:
        if parts.denom:
            return None
        mantissa, scale = 1 << exponent, 0
        # 2^10 has about three decimal digits: the digits the suffix adds to the number's.
        precision = 15 - len(parts.num) - exponent * 3 // 10 - 1
    else:
        mantissa, scale = 1, exponent
        precision = _MAX_INT64_FACTORS - len(parts.num) - len(parts.denom)
    if precision < 0:
        return None
    scale = _int32(scale - len(parts.denom))
    if scale < -_NANO_PLACES:
        return None
    shifted = parts.num + parts.denom
    number = int(shifted)
    if number * mantissa > _MAX_INT64:
        return None
    amount = Decimal(f"{'' if parts.positive else '-'}{number * mantissa}E{scale}")
    if format_ is Format.BINARY_SI:
        canonical = number & 7 != 0
    else:
        canonical = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    return Quantity(amount, format_, text if canonical else None)


def _dec_amount(parts: _Parts, base: int, exponent: int, format_: Format) -> Quantity:
    """Upstream's arbitrary-precision path: round up to the nano, cap binary values."""
    try:
        number = Decimal(parts.value)
    except InvalidOperation:
        raise QuantityError(ERR_NUMERIC) from None
    sign, digits, places = number.as_tuple()
    assert isinstance(places, int)
    if base == 10:
        # inf.Dec's scale is an int32: the exponent is added to it as one.
        number = Decimal((sign, digits, -_int32(-places - exponent)))
    else:
        number = _EXACT.multiply(number, Decimal(1 << exponent))
    magnitude = number.copy_abs()
    if magnitude and magnitude.as_tuple().exponent < -_NANO_PLACES:  # type: ignore[operator]
        # Rounded up, not to the nearest: whoever asks for some of a resource gets some.
        magnitude = magnitude.quantize(_ONE_NANO, rounding=ROUND_UP, context=_EXACT)
    if format_ is Format.BINARY_SI and magnitude > _MAX_INT64:
        magnitude = Decimal(_MAX_INT64)
    if format_ is Format.BINARY_SI and 0 < magnitude < 1:
        format_ = Format.DECIMAL_SI
    return Quantity(magnitude.copy_negate() if sign else magnitude, format_)


# -- the canonical form ------------------------------------------------------------------------


def _canonical(amount: Decimal, format_: Format) -> str:
    """``CanonicalizeBytes``: the value in ``format_``, or ``DecimalSI`` where binary rounds."""
    if not amount:
        return "0"
    if format_ is Format.BINARY_SI:
        if -1024 < amount < 1024:
            format_ = Format.DECIMAL_SI
        else:
            rounded = amount.to_integral_value(rounding=ROUND_UP, context=_EXACT)
            if rounded == amount:
                return _base1024(int(rounded))
            format_ = Format.DECIMAL_SI
    return _base10(amount, format_)


def _base1024(value: int) -> str:
    """An integer as its mantissa and the largest power of 1024 that divides it."""
    mantissa, power = abs(value), 0
    while mantissa >= 1024 and mantissa % 1024 == 0:
        mantissa //= 1024
        power += 1
    # 1024^0 has no binary suffix: upstream writes the bare number.
    return f"{'-' if value < 0 else ''}{mantissa}{_BINARY_SI_SUFFIX.get(power, '')}"


def _base10(amount: Decimal, format_: Format) -> str:
    """The value as an integer mantissa and the largest exponent that is a multiple of 3."""
    sign, digits, exponent = amount.as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, digits)).rstrip("0")
    exponent = _int32(exponent + len(digits) - len(mantissa))
    padding = exponent % 3
    mantissa += "0" * padding
    exponent -= padding
    if format_ is Format.DECIMAL_EXPONENT:
        suffix = f"e{exponent}" if exponent else ""
    else:
        # Past E (10^18) upstream finds no suffix and writes the bare mantissa, losing the
        # magnitude (kubernetes/kubernetes#141249; every release through 1.36 does).
        suffix = _DECIMAL_SI_SUFFIX.get(exponent, "")
    return f"{'-' if sign else ''}{mantissa}{suffix}"
