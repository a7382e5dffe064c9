"""``describe TYPE [NAME...]``: an object as readable text, in kubectl's generic layout.

kubectl has hand-written describers for built-in kinds and a generic one for
everything else; kapi uses the generic one for every kind, so the output is
predictable from the object alone:

* ``Name:``, ``Namespace:``, ``Labels:`` (``key=value``, one a line) and
  ``Annotations:`` (``key: value``), ``<none>`` when empty;
* then every other field in key order, named as kubectl names them
  (``creationTimestamp`` becomes ``Creation Timestamp``), nested objects
  indented by two spaces, list items one after another;
  ``metadata.managedFields`` is left out;
* no ``Events:`` section: kapi does not serve events.

Several objects are separated by a blank line.  Without names, every object
of the type in the namespace (or matching ``-l``) is described.
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from kapi.apimachinery.gotext import go_sprint
from kapi.apimachinery.unstructured import Object
from kapi.cli.commands.get import namespace_for, parse_targets
from kapi.cli.commands.printers import align
from kapi.cli.commands.session import Session
from kapi.client import ApiError

#: Metadata fields printed in the header block, or not at all.
_SKIPPED = {"managedFields", "name", "namespace", "labels", "annotations"}
_ACRONYMS = {"API", "URL", "UID", "OSB", "GUID"}
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
#: kubectl's describe tabwriter pads columns by two spaces.
_PADDING = 2
_INDENT = "  "


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("describe", help="show details of resources", parents=parents)
    parser.add_argument("targets", nargs="+", metavar="TYPE [NAME...] | TYPE/NAME...")
    parser.add_argument("-l", "--selector", help="label selector, e.g. -l key1=value1,key2")
    parser.set_defaults(command_run=describe)


def describe(session: Session, args: argparse.Namespace) -> None:
    first = True
    for target in parse_targets(session, args.targets):
        handle = session.resource(target.resource)
        namespace = namespace_for(session, args, target.resource)
        if target.names is None:
            listed = handle.list(namespace, label_selector=args.selector)
            objects = listed.get("items") or []
        else:
            objects = []
            for name in target.names:
                try:
                    objects.append(handle.get(name, namespace))
                except ApiError as err:
                    session.report(err)
        for obj in objects:
            if not first:
                session.out.write("\n")
            first = False
            session.out.write(render(obj))


def render(obj: Object) -> str:
    """The description of one object (see the module docstring for the layout)."""
    metadata = obj.get("metadata") or {}
    lines: list[list[str] | str] = [
        ["Name:", str(metadata.get("name", ""))],
        ["Namespace:", str(metadata.get("namespace", ""))],
    ]
    lines += _multiline("Labels:", [f"{k}={v}" for k, v in sorted(_map(metadata, "labels"))])
    lines += _multiline(
        "Annotations:", [f"{k}: {v}" for k, v in sorted(_map(metadata, "annotations"))]
    )
    _fields(lines, obj, 0, top=True)
    return "".join(line + "\n" for line in _align_blocks(lines))


def _map(metadata: Object, key: str) -> list[tuple[str, Any]]:
    return list((metadata.get(key) or {}).items())


def _multiline(label: str, values: list[str]) -> list[list[str] | str]:
    if not values:
        return [[label, "<none>"]]
    return [[label, values[0]], *[["", value] for value in values[1:]]]


def _fields(lines: list[list[str] | str], content: Object, level: int, top: bool = False) -> None:
    """kubectl's ``printUnstructuredContent``: sorted keys, maps and lists nested."""
    indent = _INDENT * level
    for key in sorted(content):
        value = content[key]
        if top and key == "metadata" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in _SKIPPED}
        label = f"{indent}{smart_label(key)}:"
        if isinstance(value, dict):
            lines.append(label)
            _fields(lines, value, level + 1)
        elif isinstance(value, list):
            lines.append(label)
            for item in value:
                if isinstance(item, dict):
                    _fields(lines, item, level + 1)
                else:
                    lines.append(f"{_INDENT * (level + 1)}{go_sprint(item)}")
        else:
            lines.append([label, go_sprint(value)])


def smart_label(field: str) -> str:
    """``apiVersion`` → ``API Version``, as kubectl's ``smartLabelFor``."""
    if any(not (c.isalpha() or c == "-") for c in field):
        return field
    words = []
    for word in _WORDS.findall(field):
        words.append(word.upper() if word.upper() in _ACRONYMS else word[:1].upper() + word[1:])
    return " ".join(words)


def _align_blocks(lines: list[list[str] | str]) -> list[str]:
    """Align each run of consecutive ``label  value`` lines, as one tabwriter does."""
    out: list[str] = []
    block: list[list[str]] = []
    for line in [*lines, ""]:
        if isinstance(line, list):
            block.append(line)
            continue
        out += align(block, padding=_PADDING)
        block = []
        out.append(line)
    return out[:-1]
