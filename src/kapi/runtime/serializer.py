"""Request bodies to objects, and objects to response bodies.

Decoding keeps what upstream's strict decoder reports: duplicate fields
(which ``fieldValidation`` turns into warnings or errors) and the syntax
error text.  Encoding is orjson, with YAML for clients that ask for it.
"""

from __future__ import annotations

import codecs
import json
import math
import re
import struct
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml

from kapi.apimachinery.gojson import nesting_error, syntax_error
from kapi.runtime import protobuf
from kapi.runtime.protowire import ProtobufDecodeError

try:  # The C loader/dumper is an order of magnitude faster when libyaml is there.
    from yaml import CSafeDumper as _YAMLDumper
    from yaml import CSafeLoader as _YAMLLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeDumper as _YAMLDumper  # type: ignore[assignment]
    from yaml import SafeLoader as _YAMLLoader  # type: ignore[assignment]

JSON = "application/json"
YAML = "application/yaml"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
#: What a protobuf watch answers with: length-prefixed events (JSON's is plain JSON).
PROTOBUF_WATCH = PROTOBUF + ";stream=watch"

#: Media types a POST or PUT body may use, in upstream's order of preference.
BODY_TYPES = (JSON, YAML, PROTOBUF)
#: What bodies of kinds without a protobuf form (custom resources) may use.
TEXT_BODY_TYPES = (JSON, YAML)


#: The deepest nesting of objects and arrays kapi accepts in a body or object.
#:
#: Upstream's decoder allows 10,000 levels; kapi stores and encodes objects with
#: orjson, which writes at most 254, and lists, watch events, tables and
#: managedFields wrap an object a few levels deeper still.  A deeper body is
#: refused with the scanner's error for upstream's limit, before anything walks it.
MAX_NESTING = 200
_NESTING_ERROR = "invalid character '{' exceeded max depth"
_YAML_NESTING_ERROR = f"error converting YAML to JSON: yaml: exceeded max depth of {MAX_NESTING}"


def object_nesting_error(obj: Any) -> str | None:
    """The error for ``obj`` nesting deeper than :data:`MAX_NESTING`, or None.

    ``metadata.managedFields`` may nest 3 levels deeper than the rest: each entry's
    ``fieldsV1`` mirrors the object's fields 4 levels down, with ``{}`` for a leaf.
    """
    if _fits_nesting(obj):
        return None
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    if not isinstance(metadata, dict) or "managedFields" not in metadata:
        return nesting_error(obj, MAX_NESTING)
    return (
        nesting_error([v for k, v in obj.items() if k != "metadata"], MAX_NESTING)
        or nesting_error([v for k, v in metadata.items() if k != "managedFields"], MAX_NESTING - 1)
        or nesting_error(metadata["managedFields"], MAX_NESTING + 3)
    )


#: How deep orjson writes: one level more and it refuses.
_ORJSON_MAX_DEPTH = 254


def _fits_nesting(obj: Any) -> bool:
    """Whether ``obj`` nests at most :data:`MAX_NESTING` deep, the quick way.

    orjson's writer counts levels in C and refuses beyond its own limit, so
    ``obj`` under the levels between the two limits writes iff it fits: several
    times faster than walking it in Python.  False also when it does not write
    for another reason; the exact walk then decides.
    """
    wrapped = obj
    for _ in range(_ORJSON_MAX_DEPTH - MAX_NESTING):
        wrapped = [wrapped]
    try:
        orjson.dumps(wrapped)
    except orjson.JSONEncodeError:
        return False
    return True


def _check_nesting(obj: Any) -> None:
    detail = object_nesting_error(obj)
    if detail is not None:
        raise SyntaxDecodeError("couldn't get version/kind; json parse error: " + detail, detail)


@dataclass
class Decoded:
    obj: Any
    #: Paths of fields that appeared more than once (the last one wins), in order.
    duplicates: list[str] = field(default_factory=list)


class SyntaxDecodeError(ValueError):
    """A body that is not valid JSON or YAML; ``str()`` is the Go decoder's wording.

    ``detail`` is the bare parser error (``invalid character 'b' ...``), which
    callers that are not decoding an object (patches) wrap in their own text.
    """

    def __init__(
        self, message: str, detail: str | None = None, named: tuple[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.detail = detail or message
        #: ``(apiVersion, kind)`` the body named, when what failed is the object after it
        #: (protobuf): upstream then says the kind ``cannot be handled``.
        self.named = named


def decode(
    body: bytes,
    media_type: str,
    *,
    find_duplicates: bool,
    default_kind: tuple[str, str] | None = None,
) -> Decoded:
    """Parse a JSON, YAML or protobuf body, keeping duplicate-field paths when asked.

    ``default_kind`` is the ``(apiVersion, kind)`` a protobuf envelope that names
    none means.  Raises :class:`SyntaxDecodeError` on a syntax error; the handler
    adds the upstream ``the object provided is unrecognized`` framing.
    """
    if media_type == YAML:
        return _decode_yaml(body)
    if media_type == PROTOBUF:
        return _decode_protobuf(body, default_kind)
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        pass  # re-parse below for the position-aware message
    else:
        # Every open bracket may nest one level deeper: few of them, no deep nesting.
        if body.count(b"{") + body.count(b"[") > MAX_NESTING:
            _check_nesting(obj)
        if not find_duplicates or not _may_have_duplicates(body, obj):
            return Decoded(obj)
    seen: list[tuple[dict[str, Any], str]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):
            counted: set[str] = set()
            for key, _ in items:
                if key in counted:
                    seen.append((out, key))
                counted.add(key)
        return out

    try:
        # Go's decoder reads each invalid UTF-8 byte and each lone surrogate escape in
        # a string as U+FFFD; orjson refuses both, Python's json keeps the surrogates.
        text = _LONE_SURROGATE.sub(_replace_lone, body.decode("utf-8", _GO_REPLACE))
        obj = json.loads(text, object_pairs_hook=pairs)
    except RecursionError:
        # Deeper than orjson reads (1024): refused whether or not Go's scanner would.
        detail = syntax_error(body) or _NESTING_ERROR
        raise SyntaxDecodeError(
            "couldn't get version/kind; json parse error: " + detail, detail
        ) from None
    except json.JSONDecodeError as exc:
        # Go's scanner words the error; Python's decoder only says that there is one.
        detail = syntax_error(body) or exc.msg
        raise SyntaxDecodeError(
            "couldn't get version/kind; json parse error: " + detail, detail
        ) from None
    _check_nesting(obj)
    return Decoded(obj, _duplicate_paths(obj, seen) if seen else [])


def _replace_invalid_byte(exc: UnicodeError) -> tuple[str, int]:
    """One U+FFFD per byte that is not valid UTF-8, as Go's ``utf8.DecodeRune`` reads them."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "\ufffd", exc.start + 1


_GO_REPLACE = "kapi-go-utf8-replace"
codecs.register_error(_GO_REPLACE, _replace_invalid_byte)

#: A backslash escape in a JSON text: a surrogate pair, a lone surrogate or any other.
#: Escapes are matched left to right, so ``\\ud800`` (an escaped backslash) is no escape.
_LONE_SURROGATE = re.compile(
    r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    r"|(u[dD][89a-fA-F][0-9a-fA-F]{2})|.)",
    re.DOTALL,
)


def _replace_lone(match: re.Match[str]) -> str:
    return "\\ufffd" if match.group(1) else match.group()


#: A JSON string followed by a colon: exactly the object keys of a valid document.
_OBJECT_KEY = re.compile(rb'"(?:[^"\\]|\\.)*"\s*:')
_SPACE_BEFORE_COLON = re.compile(rb"\s:")


def _may_have_duplicates(body: bytes, obj: Any) -> bool:
    """Whether a valid JSON ``body`` spells out more object keys than ``obj``, the
    document parsed from it, kept.

    Every key is followed by its own colon.  When no string in the body spells a
    character with a ``\\u`` escape, each colon inside a string is one byte in the
    body and one in ``obj`` written back (orjson escapes no colon), so the body
    has more colons exactly when a repeated key, and whatever its dropped value
    held, is gone: two byte counts and a C encoder, with no walk of ``obj``.

    Bodies with a number of 19 digits or more take the older count: orjson reads an
    integer beyond 64 bits as a float where the exact re-parse keeps it, and which
    of the two a body gets must not change with this shortcut.
    """
    if b"\\u" not in body and _LONG_DIGITS not in body.translate(_DIGITS_AS_ZERO):
        try:
            return body.count(b":") != orjson.dumps(obj).count(b":")
        except orjson.JSONEncodeError:
            pass
    return _more_keys_than(body, _count_keys(obj))


#: Every digit as ``0``, so a run of digits is found by a plain substring search
#: (a regular expression for it scans a body fifty times slower).
_DIGITS_AS_ZERO = bytes.maketrans(b"0123456789", b"0000000000")
#: A run of digits as long as the longest 64-bit integers' (and longer).
_LONG_DIGITS = b"0" * 19


def _more_keys_than(body: bytes, kept: int) -> bool:
    """Whether a valid JSON ``body`` spells out more object keys than the ``kept`` ones.

    Every key is followed by its own colon, so a body with no more colons (or,
    when no whitespace precedes any colon, no more ``":``) than kept keys has
    no duplicate.  Those byte counts run at memory speed; the exact key scan,
    ten times slower, is left for bodies with colons inside their strings.
    """
    if body.count(b":") == kept:
        return False
    if body.count(b'":') == kept and _SPACE_BEFORE_COLON.search(body) is None:
        return False
    return len(_OBJECT_KEY.findall(body)) != kept


def _count_keys(node: Any) -> int:
    """How many keys the parsed document kept; fewer than it spelled out means duplicates."""
    if isinstance(node, dict):
        return len(node) + sum(_count_keys(v) for v in node.values() if isinstance(v, dict | list))
    if isinstance(node, list):
        return sum(_count_keys(v) for v in node if isinstance(v, dict | list))
    return 0


def _decode_protobuf(body: bytes, default_kind: tuple[str, str] | None) -> Decoded:
    try:
        return Decoded(protobuf.decode(body, default_kind))
    except protobuf.ObjectDecodeError as exc:
        raise SyntaxDecodeError(str(exc), named=(exc.api_version, exc.kind)) from None
    except ProtobufDecodeError as exc:
        raise SyntaxDecodeError(str(exc)) from None


class _GoYAMLLoader(_YAMLLoader):
    """YAML as ``sigs.k8s.io/yaml`` reads it into ``interface{}``: timestamps stay text."""


_GoYAMLLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _YAMLLoader.yaml_implicit_resolvers.items()
}


def _go_float32_text(value: float) -> str:
    """``strconv.FormatFloat(value, 'g', -1, 32)``, as YAML-to-JSON names a float key."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    single = struct.unpack("f", struct.pack("f", value))[0]
    if single == 0:
        return "-0" if math.copysign(1, single) < 0 else "0"
    for digits in range(1, 10):  # the fewest digits that read back as the same float32
        text = f"{single:.{digits - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    mantissa, exponent_text = text.split("e")
    exponent = int(exponent_text)
    sign = "-" if mantissa.startswith("-") else ""
    figures = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
    if exponent < -4 or exponent >= 6:  # Go decides by 6 digits for the shortest form
        rest = "." + figures[1:] if len(figures) > 1 else ""
        return f"{sign}{figures[0]}{rest}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if exponent < 0:
        return f"{sign}0.{'0' * (-exponent - 1)}{figures}"
    whole, frac = figures[: exponent + 1].ljust(exponent + 1, "0"), figures[exponent + 1 :]
    return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"


def _json_key(key: Any, value: Any) -> str:
    """A YAML mapping key as ``sigs.k8s.io/yaml`` writes it into JSON."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _go_float32_text(key)
    raise SyntaxDecodeError(
        f"error converting YAML to JSON: unsupported map key of type: "
        f"{_go_type_name(key)}, key: {_go_value(key)}, value: {_go_value(value)}"
    )


def _go_type_name(value: Any) -> str:
    return "%!s(<nil>)" if value is None else type(value).__name__


def _go_value(value: Any) -> str:
    if value is None:
        return "<nil>"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


def _with_json_keys(root: Any) -> Any:
    """``root`` with every mapping key a string (a walk by hand: YAML may nest deep)."""
    pending = [root]
    seen: set[int] = set()  # an alias is the anchor's very object: convert it once
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            if not all(type(k) is str for k in node):
                items = [(_json_key(k, v), v) for k, v in node.items()]
                node.clear()
                node.update(items)
            pending.extend(v for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            pending.extend(v for v in node if isinstance(v, dict | list))
    return root


#: Each level of YAML nesting opens with one of these (a flow collection, a block
#: sequence entry, a key): a body with few of them cannot nest deep.
_YAML_OPENERS = (b"[", b"{", b"-", b":", b"?")
#: Nesting PyYAML's composer (C, recursive, with no limit) is known to survive.
_YAML_SAFE_NESTING = 2000
_YAML_STARTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_YAML_ENDS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
_YAML_NODES = (yaml.ScalarEvent, yaml.DocumentStartEvent, *_YAML_STARTS)
_YAML_ALIASING_ERROR = "error converting YAML to JSON: yaml: document contains excessive aliasing"


def _allowed_alias_ratio(decoded: int) -> float:
    """goyaml's share of decoded nodes that may come from aliases: 99% up to 400,000
    nodes, falling evenly to 10% at 4,000,000."""
    low, high = 400_000, 4_000_000
    if decoded <= low:
        return 0.99
    if decoded >= high:
        return 0.10
    return 0.99 - 0.89 * (decoded - low) / (high - low)


def _yaml_problem(body: bytes) -> str | None:
    """Refuse, before composing it, a YAML document nesting deeper than
    :data:`MAX_NESTING` (composing one nested 100,000 deep overflows the C stack)
    or expanding aliases as goyaml refuses to (a few hundred bytes can stand for
    billions of nodes).

    libyaml's parser keeps its own stack, so its events are safe to count; each
    node counts once, and an alias counts as all the nodes of its anchor, as
    goyaml's decoder counts them when it expands the alias.
    """
    openers = sum(body.count(opener) for opener in _YAML_OPENERS)
    if openers <= _YAML_SAFE_NESTING and b"*" not in body:
        return None
    decoded = aliased = depth = 0
    sizes: dict[str, int] = {}  # expanded node count of each anchor
    open_nodes: list[tuple[str | None, int]] = []  # anchor and count at start
    try:
        for event in yaml.parse(body, Loader=_GoYAMLLoader):
            if isinstance(event, yaml.AliasEvent):
                size = sizes.get(str(event.anchor), 0)
                decoded += 1 + size
                aliased += size
            elif isinstance(event, _YAML_NODES):
                decoded += 1
                anchor = getattr(event, "anchor", None)
                if isinstance(event, _YAML_STARTS):
                    depth += 1
                    if depth > MAX_NESTING:
                        return _YAML_NESTING_ERROR
                    open_nodes.append((anchor, decoded - 1))
                elif anchor is not None:
                    sizes[anchor] = 1
            elif isinstance(event, _YAML_ENDS):
                depth -= 1
                anchor, before = open_nodes.pop()
                if anchor is not None:
                    sizes[anchor] = decoded - before
                continue
            else:
                continue
            if (
                aliased > 100
                and decoded > 1000
                and aliased > decoded * _allowed_alias_ratio(decoded)
            ):
                return _YAML_ALIASING_ERROR
    except yaml.YAMLError:
        return None  # loading reports it
    return None


def _decode_yaml(body: bytes) -> Decoded:
    problem = _yaml_problem(body)
    if problem is not None:
        raise SyntaxDecodeError(problem)
    try:
        obj = _with_json_keys(yaml.load(body, Loader=_GoYAMLLoader))
    except yaml.reader.ReaderError as exc:
        # libyaml's reader words it as goyaml's (a port of it) does, which names no line.
        raise SyntaxDecodeError(f"error converting YAML to JSON: yaml: {exc.reason}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise SyntaxDecodeError(f"error converting YAML to JSON: yaml: {where}{problem}") from None
    except RecursionError:  # deeper than PyYAML's composer recurses
        raise SyntaxDecodeError(_YAML_NESTING_ERROR) from None
    if object_nesting_error(obj) is not None:
        raise SyntaxDecodeError(_YAML_NESTING_ERROR)
    return Decoded(obj)


def _duplicate_paths(root: Any, seen: list[tuple[dict[str, Any], str]]) -> list[str]:
    """Find where each dict holding a duplicate key sits, to name it as upstream does."""
    where: dict[int, str] = {}

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            where[id(node)] = path
            for key, value in node.items():
                walk(value, f"{path}.{key}" if path else key)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{path}[{i}]")

    walk(root, "")
    out: list[str] = []
    for holder, key in seen:
        parent = where.get(id(holder), "")
        path = f"{parent}.{key}" if parent else key
        if path not in out:
            out.append(path)
    return out


def summarize(body: bytes, max_length: int = 30) -> str:
    """Upstream's ``summarizeData``: a short excerpt of a body for error messages."""
    if not body:
        return "<empty>"
    if body[:1] == b"{":
        text = body.decode("utf-8", "replace")
        return text[:max_length] + " ..." if len(body) > max_length else text
    return body[:max_length].hex() + " ..." if len(body) > max_length else body.hex()


def encode_yaml(obj: Any) -> bytes:
    return yaml.dump(obj, Dumper=_YAMLDumper, default_flow_style=False, sort_keys=True).encode()
