"""Objects from ``-f``: files, directories and ``-`` (stdin), YAML or JSON, many per file.

As kubectl: a directory contributes its ``.json``, ``.yaml`` and ``.yml``
files in name order (not recursively), a file may hold several YAML
documents, empty documents are skipped, and a ``kind: List`` stands for its
items.  Each object is paired with its source, the name error messages quote
(``STDIN`` for ``-``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml

from kapi.apimachinery.unstructured import Object
from kapi.cli.commands.resources import ResourceInfo, UnknownResourceError
from kapi.cli.commands.session import CommandError, Session
from kapi.client import ApiError

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_EXTENSIONS = (".json", ".yaml", ".yml")


#: What a command does with one object: returns the past-tense word of its success line.
Action = Callable[[ResourceInfo, Object, str], str]


def each_manifest(session: Session, paths: list[str], command: str, verb: str, act: Action) -> None:
    """Run ``act(resource, object, namespace)`` on every object of ``paths``, as kubectl does.

    Success prints ``kind.group/name <word>``; a failure prints kubectl's
    ``error when <verb> "<source>": ...`` and the next object is still tried.
    """
    for source, obj in read_manifests(paths, command):
        try:
            resource = session.discovery.for_object(obj)
            namespace = obj.get("metadata", {}).get("namespace") or session.namespace
            word = act(resource, obj, namespace if resource.namespaced else "")
        except (ApiError, UnknownResourceError) as err:
            session.report(err, verb=verb, source=source)
            continue
        name = obj.get("metadata", {}).get("name", "")
        session.out.write(success_line(resource, name, word))


def success_line(resource: ResourceInfo, name: str, word: str) -> str:
    """``configmap/x created``, or for deletions kubectl's ``configmap "x" deleted``."""
    if word == "deleted":
        return f'{resource.qualified_kind} "{name}" deleted\n'
    return f"{resource.qualified_kind}/{name} {word}\n"


def read_manifests(paths: list[str], command: str) -> list[tuple[str, Object]]:
    """Every object named by the ``-f`` arguments, in order, with its source."""
    if not paths:
        raise CommandError("must specify one of -f and -k")
    found: list[tuple[str, Object]] = []
    for path in paths:
        for source, text in _sources(path):
            found += [(source, obj) for obj in _objects(source, text)]
    if not found:
        raise CommandError(f"no objects passed to {command}")
    return found


def _sources(path: str) -> Iterator[tuple[str, str]]:
    if path == "-":
        yield "STDIN", sys.stdin.read()
        return
    target = Path(path)
    if target.is_dir():
        for child in sorted(target.iterdir()):
            if child.is_file() and child.suffix in _EXTENSIONS:
                yield str(child), child.read_text()
        return
    if not target.exists():
        raise CommandError(f'the path "{path}" does not exist')
    yield path, target.read_text()


def _objects(source: str, text: str) -> Iterator[Object]:
    try:
        documents = list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as err:
        raise CommandError(f"error parsing {source}: {err}") from err
    for document in documents:
        if document is None:
            continue
        if not isinstance(document, dict):
            raise CommandError(f"error parsing {source}: not an object")
        if document.get("kind") == "List" and isinstance(document.get("items"), list):
            yield from document["items"]
        else:
            yield document
