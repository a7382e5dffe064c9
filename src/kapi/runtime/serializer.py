"""Request bodies to objects, and objects to response bodies.

Decoding keeps what upstream's strict decoder reports: duplicate fields
(which ``fieldValidation`` turns into warnings or errors) and the syntax
error text.  Encoding is orjson, with YAML for clients that ask for it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml

from kapi.apimachinery import errors

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

#: Media types a POST or PUT body may use, in upstream's order of preference.
BODY_TYPES = (JSON, YAML, PROTOBUF)


@dataclass
class Decoded:
    obj: Any
    #: Paths of fields that appeared more than once (the last one wins), in order.
    duplicates: list[str] = field(default_factory=list)


def decode(body: bytes, media_type: str, *, find_duplicates: bool) -> Decoded:
    """Parse a JSON or YAML body; raise BadRequest with upstream wording on a syntax error."""
    if media_type == YAML:
        return _decode_yaml(body)
    if not find_duplicates:
        try:
            return Decoded(orjson.loads(body))
        except orjson.JSONDecodeError as exc:
            raise _syntax_error(exc) from None
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
        obj = json.loads(body, object_pairs_hook=pairs)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _syntax_error(exc) from None
    return Decoded(obj, _duplicate_paths(obj, seen) if seen else [])


def _decode_yaml(body: bytes) -> Decoded:
    try:
        obj = yaml.load(body, Loader=_YAMLLoader)
    except yaml.YAMLError as exc:
        raise errors.bad_request(f"error converting YAML to JSON: yaml: {exc}") from None
    return Decoded(obj)


def _syntax_error(exc: Exception) -> errors.StatusError:
    return errors.bad_request(f"couldn't get version/kind; json parse error: {exc}")


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


def encode_json(obj: Any) -> bytes:
    return orjson.dumps(obj)


def encode_yaml(obj: Any) -> bytes:
    return yaml.dump(obj, Dumper=_YAMLDumper, default_flow_style=False, sort_keys=True).encode()


def load_yaml(text: str | bytes) -> Any:
    return yaml.load(text, Loader=_YAMLLoader)
