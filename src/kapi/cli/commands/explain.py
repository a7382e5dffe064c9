"""``explain TYPE[.field.path]``: a resource's schema from ``/openapi/v3``, as kubectl prints it.

The layout is kubectl's plaintext template: ``GROUP:``/``KIND:``/``VERSION:``,
``FIELD: name <type>`` for a field path, ``DESCRIPTION:`` (a field's own
description, then that of the type it refers to), and ``FIELDS:`` with each
property's type, ``-required-`` mark, enum and description.  Type names are
guessed as kubectl guesses them: ``[]T``, ``map[string]T``, a referenced
schema's short name (``ObjectMeta``) unless it is a plain string or number,
``Object`` for an inline object.  Descriptions are word-wrapped at kubectl's width.
"""

from __future__ import annotations

import argparse
import json

from kapi.apimachinery.unstructured import Object as Schema
from kapi.cli.commands.session import CommandError, Session
from kapi.runtime.lifecycle import EXTENSION as LIFECYCLE_EXTENSION

#: kubectl wraps description lines at this many columns, indent included.
_WRAP = 80
_REF_PREFIX = "#/components/schemas/"


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("explain", help="describe the fields of a resource", parents=parents)
    parser.add_argument("target", metavar="TYPE[.FIELD...]")
    parser.set_defaults(command_run=explain)


def explain(session: Session, args: argparse.Namespace) -> None:
    type_name, *path = args.target.split(".")
    resource = session.discovery.resolve(type_name)
    document = _openapi_document(session, resource.api_version)
    schema = _kind_schema(document, resource.group, resource.version, resource.kind)
    lines = [f"GROUP:      {resource.group}"] if resource.group else []
    lines += [f"KIND:       {resource.kind}", f"VERSION:    {resource.version}", ""]
    description = str(schema.get("description", ""))
    for field in path:
        properties = _resolved(document, _element(document, schema)).get("properties") or {}
        if field not in properties:
            session.out.write("\n".join(lines) + "\n")
            raise CommandError(f'field "{field}" does not exist')
        schema = properties[field]
        description = _field_description(document, schema)
    if path:
        lines += [f"FIELD: {path[-1]} <{type_guess(document, schema)}>", "", ""]
        lines += _lifecycle_lines(schema)
    lines += ["DESCRIPTION:", *_indented(description or "<empty>", 4), "    "]
    target = _resolved(document, _element(document, schema))
    properties = target.get("properties") or {}
    if properties:
        lines.append("FIELDS:")
        required = set(target.get("required") or [])
        for name in sorted(properties):
            lines += _field_lines(document, name, properties[name], name in required)
    session.out.write("\n".join(lines) + "\n\n")


def _lifecycle_lines(schema: Schema) -> list[str]:
    """A ``LIFECYCLE:`` block for a KEP-2558 tagged field, one line a component.

    kubectl shows none (it prints no extensions); kapi reads the same
    ``x-kubernetes-api-lifecycle`` the server publishes.
    """
    tags = schema.get(LIFECYCLE_EXTENSION)
    if not isinstance(tags, dict) or not tags:
        return []
    lines = ["LIFECYCLE:"]
    for component, tag in tags.items():
        parts = [str(tag.get("status") or "available")]
        if tag.get("featureGate"):
            parts.append(f"feature gate {tag['featureGate']}")
        lines.append(f"    {component}: {', '.join(parts)}, field since {tag.get('minVersion')}")
    return [*lines, "", ""]


def _stage_mark(schema: Schema) -> str:
    """`` -alpha-`` and the like after a tagged field's type, as ``-required-`` is shown."""
    tags = schema.get(LIFECYCLE_EXTENSION)
    if not isinstance(tags, dict):
        return ""
    stages = sorted({str(t.get("status")) for t in tags.values() if isinstance(t, dict)} - {"None"})
    return "".join(f" -{stage}-" for stage in stages)


def _field_lines(document: Schema, name: str, schema: Schema, required: bool) -> list[str]:
    mark = (" -required-" if required else "") + _stage_mark(schema)
    lines = [f"  {name}\t<{type_guess(document, schema)}>{mark}"]
    enum = schema.get("enum") or _resolved(document, schema).get("enum")
    if enum:
        lines.append("  enum: " + ", ".join(str(v) for v in enum))
    lines += _indented(str(schema.get("description", "")) or "<no description>", 4)
    return [*lines, ""]


def type_guess(document: Schema, schema: Schema) -> str:
    """kubectl's ``typeGuess`` template: how a schema's type is named in explain output."""
    if "items" in schema:
        return "[]" + type_guess(document, schema["items"])
    if isinstance(schema.get("additionalProperties"), dict):
        return "map[string]" + type_guess(document, schema["additionalProperties"])
    all_of = schema.get("allOf") or []
    if len(all_of) == 1 and not schema.get("properties"):
        return type_guess(document, all_of[0])
    if "$ref" in schema:
        target = _lookup(document, schema["$ref"])
        if target.get("type") and target["type"] != "object":
            return str(target["type"])
        return schema["$ref"].rpartition(".")[2]
    kind = schema.get("type")
    return "Object" if kind in (None, "object") else str(kind)


def _openapi_document(session: Session, api_version: str) -> Schema:
    key = f"apis/{api_version}" if "/" in api_version else f"api/{api_version}"
    index = session.client.request("GET", "/openapi/v3").body
    if isinstance(index, str):  # kube-apiserver serves the index as text/plain
        index = json.loads(index)
    paths = index.get("paths") or {}
    if key not in paths:
        raise CommandError(f"couldn't find the OpenAPI v3 document of {api_version}")
    return session.client.request("GET", paths[key]["serverRelativeURL"]).body


def _kind_schema(document: Schema, group: str, version: str, kind: str) -> Schema:
    wanted = {"group": group, "version": version, "kind": kind}
    for schema in (document.get("components") or {}).get("schemas", {}).values():
        if wanted in (schema.get("x-kubernetes-group-version-kind") or []):
            return schema
    raise CommandError(f'couldn\'t find resource for "{kind}" in version "{version}"')


def _lookup(document: Schema, ref: str) -> Schema:
    schemas = (document.get("components") or {}).get("schemas", {})
    return schemas.get(ref.removeprefix(_REF_PREFIX)) or {}


def _resolved(document: Schema, schema: Schema) -> Schema:
    """The schema a ``$ref`` (direct or as a single ``allOf``) points to, else itself."""
    all_of = schema.get("allOf") or []
    if len(all_of) == 1 and not schema.get("properties"):
        schema = all_of[0]
    return _lookup(document, schema["$ref"]) if "$ref" in schema else schema


def _element(document: Schema, schema: Schema) -> Schema:
    """An array's item schema (explain walks through lists), else the schema."""
    resolved = _resolved(document, schema)
    return resolved.get("items", schema)


def _field_description(document: Schema, schema: Schema) -> str:
    """A field's description, then its referenced type's, one a line, as kubectl shows them."""
    parts = [str(schema.get("description", ""))]
    element = _element(document, schema)
    if "$ref" in element or element.get("allOf"):
        parts.append(str(_resolved(document, element).get("description", "")))
    return "\n".join(part for part in parts if part)


def _indented(text: str, indent: int) -> list[str]:
    """``text`` word-wrapped line by line (go-wordwrap style), each line indented."""
    out = []
    for line in text.split("\n"):
        current: str | None = None
        for word in line.split(" "):
            if current is None:
                current = word
            elif len(current) + 1 + len(word) <= _WRAP - indent:
                current += " " + word
            else:
                out.append(current)
                current = word
        out.append(current or "")
    return [" " * indent + line if line else " " * indent for line in out]
