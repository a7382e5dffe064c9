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

from kapi.apimachinery.gojson import syntax_error
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
        if not find_duplicates or not _may_have_duplicates(body, _count_keys(obj)):
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
    except json.JSONDecodeError as exc:
        # Go's scanner words the error; Python's decoder only says that there is one.
        detail = syntax_error(body) or exc.msg
        raise SyntaxDecodeError(
            "couldn't get version/kind; json parse error: " + detail, detail
        ) from None
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


def _may_have_duplicates(body: bytes, kept: int) -> bool:
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
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            if not all(type(k) is str for k in node):
                items = [(_json_key(k, v), v) for k, v in node.items()]
                node.clear()
                node.update(items)
            pending.extend(v for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            pending.extend(v for v in node if isinstance(v, dict | list))
    return root


def _decode_yaml(body: bytes) -> Decoded:
    try:
        obj = _with_json_keys(yaml.load(body, Loader=_GoYAMLLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise SyntaxDecodeError(f"error converting YAML to JSON: yaml: {where}{problem}") from None
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
