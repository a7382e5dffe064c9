"""cel-go's ``string.format``, ``strings.quote`` and ``join`` (ext.Strings version 2).

Kubernetes pins cel-go's strings extension at version 2. cel-cpp's own ``format`` differs from
cel-go's in what CRD authors see: it prints ``[a, b]`` where cel-go prints ``["a", "b"]``, doubles
in lists as ``2.5`` rather than ``2.500000``, accepts a double for ``%d`` and words its errors
differently. So kapi loads cel-cpp's strings extension at version 0 (everything but these three
functions) and implements them here.

The fixed-point and scientific clauses follow cel-go with its default ``en_US`` locale, which
formats through golang.org/x/text: ``%f`` groups thousands (``1,234.500000``) and prints
infinities as the infinity sign; ``%e`` writes the mantissa, a multiplication sign and a power
of ten with superscript digits, and, because cel-go passes the requested precision as a width,
always with six decimals.

:func:`format_call_errors` is cel-go's compile-time validator of ``format`` calls whose format
string is a literal and whose arguments are a list literal.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

from cel_expr_python import cel

from kapi.apimachinery.gotext import GO_SHORT_ESCAPES, go_format_fixed, go_format_float, go_quote
from kapi.validation.cel import checked

_DEFAULT_PRECISION: Final = 6
_NAMED_DOUBLES: Final = frozenset({"NaN", "Infinity", "-Infinity"})
#: ``format`` overload id, as the checker records it.
FORMAT_OVERLOAD: Final = "string_format"


class FormatError(ValueError):
    """A formatting error; CEL turns it into an error value with this text."""


# --- runtime -------------------------------------------------------------------------------

_CEL_TYPE_NAMES: Final = {
    "INT": "int",
    "UINT": "uint",
    "DOUBLE": "double",
    "BOOL": "bool",
    "STRING": "string",
    "BYTES": "bytes",
    "NULL": "null_type",
    "TYPE": "type",
    "DURATION": "google.protobuf.Duration",
    "TIMESTAMP": "google.protobuf.Timestamp",
}


def _type_value_name(t: Any) -> str:
    """cel-go's name of a ``type`` value (``list(int)`` is ``list``)."""
    name: str = t.name()
    base = name.split("<", 1)[0]
    return _CEL_TYPE_NAMES.get(base, base.lower())


def type_name(v: Any) -> str:
    """cel-go's ``TypeName()`` of a value as the bindings hand it to Python.

    The bindings pass CEL ``uint`` values as plain ints, so they are named ``int``.
    """
    if v is None:
        return "null_type"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bytes | bytearray):
        return "bytes"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, datetime.datetime):
        return "google.protobuf.Timestamp"
    if isinstance(v, datetime.timedelta):
        return "google.protobuf.Duration"
    if isinstance(v, cel.Type):
        return "type"
    return type(v).__name__


def _timestamp(t: datetime.datetime) -> str:
    """Go ``time.RFC3339Nano`` of a UTC timestamp: trailing zeros of the fraction dropped."""
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        text += "." + f"{t.microsecond:06d}".rstrip("0")
    return text + "Z"


def _duration(d: datetime.timedelta) -> str:
    """cel-go's string of a duration: ``FormatFloat(seconds, 'f', -1, 64) + "s"``."""
    return format(Decimal(repr(d.total_seconds())).normalize(), "f") + "s"


def _to_string(v: Any) -> str:
    """cel-go's conversion of a scalar to ``string``."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return go_format_float(v)
    if isinstance(v, bytes | bytearray):
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, datetime.datetime):
        return _timestamp(v)
    if isinstance(v, datetime.timedelta):
        return _duration(v)
    if isinstance(v, cel.Type):
        return _type_value_name(v)
    return str(v)


_SCALARS: Final = (
    bool,
    int,
    float,
    str,
    bytes,
    bytearray,
    cel.Type,
    datetime.datetime,
    datetime.timedelta,
)


def _string_clause(v: Any) -> str:
    """``%s`` (cel-go ``FormatString``)."""
    if v is None:
        return "null"
    if isinstance(v, list):
        return _format_list(v)
    if isinstance(v, dict):
        return _format_map(v)
    if isinstance(v, _SCALARS):
        return _to_string(v)
    raise FormatError(
        "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, "
        f"types, durations, and timestamps, was given {type_name(v)}"
    )


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _decimal_clause(v: Any) -> str:
    if not _is_int(v):
        raise FormatError(f"decimal clause can only be used on integers, was given {type_name(v)}")
    return str(v)


def _as_double(v: Any, clause: str) -> float:
    """The double a fixed-point or scientific clause formats (three strings name doubles)."""
    if isinstance(v, float):
        return v
    if isinstance(v, str) and v in _NAMED_DOUBLES:
        return float(v)
    raise FormatError(f"{clause} clause can only be used on doubles, was given {type_name(v)}")


def _localized_special(f: float) -> str | None:
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "\u221e" if f > 0 else "-\u221e"
    return None


def _fixed_clause(precision: int | None) -> Callable[[Any], str]:
    digits = _DEFAULT_PRECISION if precision is None else precision

    def fixed(v: Any) -> str:
        f = _as_double(v, "fixed-point")
        special = _localized_special(f)
        return special if special is not None else f"{f:,.{digits}f}"

    return fixed


_SUPERSCRIPT: Final = str.maketrans(
    "0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b"
)


def _scientific_clause(precision: int | None) -> Callable[[Any], str]:
    # cel-go builds "%<precision>e": the precision becomes a width, the precision stays 6.
    width = _DEFAULT_PRECISION if precision is None else precision

    def scientific(v: Any) -> str:
        f = _as_double(v, "scientific")
        special = _localized_special(f)
        if special is not None:
            return special.rjust(width)
        mantissa, _, exponent = f"{f:.{_DEFAULT_PRECISION}e}".partition("e")
        exp = int(exponent)
        power = ("-" if exp < 0 else "") + f"{abs(exp):02d}"
        return f"{mantissa}\u202f\u00d7\u202f10{power.translate(_SUPERSCRIPT)}".rjust(width)

    return scientific


def _binary_clause(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if _is_int(v):
        return format(v, "b")
    raise FormatError(
        f"only integers and bools can be formatted as binary, was given {type_name(v)}"
    )


def _hex_clause(upper: bool) -> Callable[[Any], str]:
    def hexadecimal(v: Any) -> str:
        if isinstance(v, str):
            text = v.encode().hex()
        elif isinstance(v, bytes | bytearray):
            text = bytes(v).hex()
        elif _is_int(v):
            text = format(v, "x")
        else:
            raise FormatError(
                "only integers, byte buffers, and strings can be formatted as hex, "
                f"was given {type_name(v)}"
            )
        return text.upper() if upper else text

    return hexadecimal


def _octal_clause(v: Any) -> str:
    if not _is_int(v):
        raise FormatError(f"octal clause can only be used on integers, was given {type_name(v)}")
    return format(v, "o")


def _element(v: Any) -> str:
    """A list element or map value: formatted by its type, quoted to read as CEL."""
    if v is None or isinstance(v, bool | str | bytes | bytearray | cel.Type):
        text = _to_string(v) if v is not None else "null"
    elif _is_int(v):
        text = str(v)
    elif isinstance(v, float):
        text = go_format_fixed(v)  # cel-go prints doubles in lists and maps with %.6f
    elif isinstance(v, datetime.datetime):
        return f'timestamp("{_timestamp(v)}")'
    elif isinstance(v, datetime.timedelta):
        return f'duration("{_duration(v)}")'
    elif isinstance(v, list):
        return _format_list(v)
    elif isinstance(v, dict):
        return _format_map(v)
    else:
        raise FormatError(f"no formatting function for {type_name(v)}")
    return _quote_for_cel(v, text)


def _quote_for_cel(v: Any, text: str) -> str:
    if isinstance(v, str):
        return go_quote(text)
    if isinstance(v, bytes | bytearray):
        return "b" + go_quote(text)
    if isinstance(v, float) and not math.isfinite(v):
        return go_quote(text)
    return text


def _format_list(items: list[Any]) -> str:
    return "[" + ", ".join(_element(v) for v in items) + "]"


def _map_key(k: Any) -> str:
    if isinstance(k, bool | str) or _is_int(k):
        return _quote_for_cel(k, _to_string(k))
    raise FormatError(f"no formatting function for map key of type {type_name(k)}")


def _format_map(m: dict[Any, Any]) -> str:
    pairs = sorted((_map_key(k), _element(v)) for k, v in m.items())
    return "{" + ", ".join(f"{k}:{v}" for k, v in pairs) + "}"


# --- parsing the format string (shared by evaluation and the compile-time check) -----------


class _Clauses:
    """What each formatting verb does; the compile-time check substitutes type checks."""

    def string(self) -> Callable[[Any], str]:
        return _string_clause

    def decimal(self) -> Callable[[Any], str]:
        return _decimal_clause

    def fixed(self, precision: int | None) -> Callable[[Any], str]:
        return _fixed_clause(precision)

    def scientific(self, precision: int | None) -> Callable[[Any], str]:
        return _scientific_clause(precision)

    def binary(self) -> Callable[[Any], str]:
        return _binary_clause

    def hexadecimal(self, upper: bool) -> Callable[[Any], str]:
        return _hex_clause(upper)

    def octal(self) -> Callable[[Any], str]:
        return _octal_clause


def _precision(fmt: str, i: int) -> tuple[int, int | None]:
    """cel-go ``parsePrecision`` at ``fmt[i]``: (index after it, precision or None)."""
    if fmt[i] != ".":
        return i, None
    start = i = i + 1
    while True:
        if i >= len(fmt):
            raise FormatError(
                "error while parsing precision: could not find end of precision specifier"
            )
        if not ("0" <= fmt[i] <= "9"):
            break
        i += 1
    digits = fmt[start:i]
    if not digits:
        raise FormatError(
            "error while parsing precision: error while converting precision to integer: "
            'strconv.Atoi: parsing "": invalid syntax'
        )
    return i, int(digits)


def _clause(fmt: str, i: int, clauses: _Clauses) -> tuple[int, Callable[[Any], str]]:
    """cel-go ``parseFormattingClause`` at ``fmt[i]``: (index after it, clause)."""
    try:
        i, precision = _precision(fmt, i)
    except FormatError as e:
        raise FormatError(f"could not parse formatting clause: {e}") from None
    verb = fmt[i]
    by_verb: dict[str, Callable[[], Callable[[Any], str]]] = {
        "s": clauses.string,
        "d": clauses.decimal,
        "f": lambda: clauses.fixed(precision),
        "e": lambda: clauses.scientific(precision),
        "b": clauses.binary,
        "x": lambda: clauses.hexadecimal(False),
        "X": lambda: clauses.hexadecimal(True),
        "o": clauses.octal,
    }
    if verb not in by_verb:
        raise FormatError(
            f'could not parse formatting clause: unrecognized formatting clause "{verb}"'
        )
    return i + 1, by_verb[verb]()


def _interpolate(fmt: str, count: int, arg: Callable[[int], Any], clauses: _Clauses) -> str:
    """cel-go ``parseFormatString`` over ``count`` arguments fetched with ``arg``."""
    out: list[str] = []
    i, index, n = 0, 0, len(fmt)
    while i < n:
        if fmt[i] != "%":
            out.append(fmt[i])
            i += 1
            continue
        if i + 1 < n and fmt[i + 1] == "%":
            out.append("%")
            i += 2
            continue
        value = arg(index)
        if i + 1 >= n:
            raise FormatError("unexpected end of string")
        if index >= count:
            raise FormatError(f"index {index} out of range")
        i, clause = _clause(fmt, i + 1, clauses)
        try:
            out.append(clause(value))
        except FormatError as e:
            # The cause tells the compile-time check which argument was at fault.
            raise FormatError(f"error during formatting: {e}") from e
        index += 1
    return "".join(out)


def format_string(fmt: str, args: list[Any]) -> str:
    """``<string>.format(<list>)``."""

    def arg(index: int) -> Any:
        if index >= len(args):
            raise FormatError(f"index {index} out of range")
        return args[index]

    return _interpolate(fmt, len(args), arg, _Clauses())


def quote(s: str) -> str:
    """``strings.quote``: the string in double quotes, with C-style escapes."""
    return '"' + s.translate(_QUOTE_ESCAPES) + '"'


_QUOTE_ESCAPES: Final = str.maketrans({**GO_SHORT_ESCAPES, "\\": "\\\\", '"': '\\"'})


def join(items: list[Any], separator: str = "") -> str:
    """``<list<string>>.join([separator])``."""
    for item in items:
        if not isinstance(item, str):
            raise FormatError(f"join: invalid input: {_to_string(item)}")
    return separator.join(items)


# --- compile-time check --------------------------------------------------------------------

#: Type names each verb accepts; ``dyn`` passes every check.
_STRING_TYPES: Final = frozenset(
    {
        "list",
        "map",
        "int",
        "uint",
        "double",
        "bool",
        "string",
        "google.protobuf.Timestamp",
        "bytes",
        "google.protobuf.Duration",
        "type",
        "null_type",
    }
)


class _ArgumentError(FormatError):
    """A compile-time clause error, reported at the offending argument."""

    def __init__(self, message: str, node_id: int) -> None:
        super().__init__(message)
        self.node_id = node_id


class _TypeClauses(_Clauses):
    """Clauses that check the checked type of the argument instead of formatting it."""

    def __init__(self, type_of: Callable[[checked.Node], str]) -> None:
        self._type_of = type_of

    def _expect(self, accepted: frozenset[str], message: str) -> Callable[[Any], str]:
        def check(node: checked.Node) -> str:
            t = self._type_of(node)
            if t != "dyn" and t not in accepted:
                raise _ArgumentError(f"{message}, was given {t}", node.id)
            return ""

        return check

    def string(self) -> Callable[[Any], str]:
        def check(node: checked.Node) -> str:
            t = self._type_of(node)
            if t != "dyn" and t not in _STRING_TYPES:
                raise _ArgumentError(
                    "string clause can only be used on strings, bools, bytes, ints, doubles, "
                    f"maps, lists, types, durations, and timestamps, was given {t}",
                    node.id,
                )
            if node.kind in (checked.LIST, checked.STRUCT):
                for element in node.args:
                    check(element)
            return ""

        return check

    def decimal(self) -> Callable[[Any], str]:
        return self._expect(
            frozenset({"int", "uint"}), "decimal clause can only be used on integers"
        )

    def fixed(self, precision: int | None) -> Callable[[Any], str]:
        return self._expect(
            frozenset({"double", "string"}), "fixed-point clause can only be used on doubles"
        )

    def scientific(self, precision: int | None) -> Callable[[Any], str]:
        return self._expect(
            frozenset({"double", "string"}), "scientific clause can only be used on doubles"
        )

    def binary(self) -> Callable[[Any], str]:
        return self._expect(
            frozenset({"int", "uint", "bool"}),
            "only integers and bools can be formatted as binary",
        )

    def hexadecimal(self, upper: bool) -> Callable[[Any], str]:
        return self._expect(
            frozenset({"int", "uint", "string", "bytes"}),
            "only integers, byte buffers, and strings can be formatted as hex",
        )

    def octal(self) -> Callable[[Any], str]:
        return self._expect(frozenset({"int", "uint"}), "octal clause can only be used on integers")


def _checkable_format_call(expr: checked.CheckedExpr, n: checked.Node) -> bool:
    """A ``format`` call with a literal format string and a list literal of arguments."""
    if n.kind != checked.CALL or n.name != "format" or n.operand is None:
        return False
    overloads = expr.overloads.get(n.id)
    if overloads and FORMAT_OVERLOAD not in overloads:
        return False
    target = n.operand
    return (
        target.kind == checked.CONST
        and isinstance(target.value, str)
        and len(n.args) == 1
        and n.args[0].kind == checked.LIST
    )


def format_call_errors(
    expr: checked.CheckedExpr, type_of: Callable[[checked.Node], str]
) -> list[tuple[int, str]]:
    """cel-go's ``string.format`` validator: (node id to report at, message) per bad call."""
    errors: list[tuple[int, str]] = []
    for n in checked.walk(expr.root):
        if not _checkable_format_call(expr, n):
            continue
        assert n.operand is not None
        elements = n.args[0].args
        requested: list[int] = []

        def arg(
            index: int, requested: list[int] = requested, elements: list[Any] = elements
        ) -> Any:
            requested.append(index)
            return elements[index] if index < len(elements) else None

        try:
            _interpolate(n.operand.value, len(elements), arg, _TypeClauses(type_of))
        except FormatError as e:
            cause = e.__cause__
            at = cause.node_id if isinstance(cause, _ArgumentError) else n.id
            errors.append((at, str(e)))
            continue
        if len(elements) > len(requested):
            errors.append(
                (
                    n.id,
                    "too many arguments supplied to string.format "
                    f"(expected {len(requested)}, got {len(elements)})",
                )
            )
    return errors
