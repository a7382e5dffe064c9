"""``get``: objects as server-side Tables (kubectl's default) or as YAML, JSON or names.

Targets are given as kubectl takes them: ``TYPE``, ``TYPE NAME...``,
``TYPE1,TYPE2`` or ``TYPE/NAME...``.  Tables come from the server
(``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``), so custom
resources show their ``additionalPrinterColumns``.  With ``-w`` the command
keeps printing the objects (or table rows) of a watch started at the list's
resourceVersion until interrupted.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from kapi.apimachinery.unstructured import Object
from kapi.cli.commands import printers
from kapi.cli.commands.resources import ResourceInfo
from kapi.cli.commands.session import CommandError, Session
from kapi.client import ApiError

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
OUTPUTS = ("wide", "yaml", "json", "name")


@dataclass
class Target:
    """One resource type and the names asked for (None: all of them)."""

    resource: ResourceInfo
    names: list[str] | None


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("get", help="display one or many resources", parents=parents)
    parser.add_argument("targets", nargs="+", metavar="TYPE[.GROUP] [NAME...] | TYPE/NAME...")
    parser.add_argument("-o", "--output", choices=OUTPUTS, help="output format")
    parser.add_argument("-l", "--selector", help="label selector, e.g. -l key1=value1,key2")
    parser.add_argument("--field-selector", help="field selector, e.g. metadata.name=x")
    parser.add_argument(
        "-A", "--all-namespaces", action="store_true", help="list across all namespaces"
    )
    parser.add_argument("-w", "--watch", action="store_true", help="watch for changes")
    parser.add_argument(
        "--show-managed-fields",
        action="store_true",
        help="keep metadata.managedFields in -o yaml|json output",
    )
    parser.set_defaults(command_run=get)


def get(session: Session, args: argparse.Namespace) -> None:
    targets = parse_targets(session, args.targets)
    if args.watch:
        if len(targets) != 1:
            raise CommandError("you may only specify a single resource type")
        _watch(session, args, targets[0])
    elif args.output in ("yaml", "json", "name"):
        _print_objects(session, args, targets)
    else:
        _print_tables(session, args, targets)


def parse_targets(session: Session, words: list[str]) -> list[Target]:
    """kubectl's argument forms, resolved through discovery (shared with ``describe``)."""
    if "/" in words[0]:
        targets: list[Target] = []
        for word in words:
            kind, _, name = word.partition("/")
            if not name:
                raise CommandError(
                    "arguments in resource/name form must have a single resource and name"
                )
            resource = session.discovery.resolve(kind)
            same = [t for t in targets if t.resource == resource]
            if same and same[0].names is not None:
                same[0].names.append(name)
            else:
                targets.append(Target(resource, [name]))
        return targets
    names = words[1:] or None
    kinds = [k for k in words[0].split(",") if k]
    if names and len(kinds) > 1:
        raise CommandError("you may only specify a single resource type with names")
    return [Target(session.discovery.resolve(kind), names) for kind in kinds]


def namespace_for(session: Session, args: argparse.Namespace, resource: ResourceInfo) -> str:
    """The namespace of a request: ``""`` (all) for ``-A`` and for cluster-scoped types."""
    if not resource.namespaced or getattr(args, "all_namespaces", False):
        return ""
    return session.namespace


def _params(args: argparse.Namespace) -> dict[str, Any]:
    return {"labelSelector": args.selector, "fieldSelector": args.field_selector}


def _fetch(
    session: Session, args: argparse.Namespace, target: Target, accept: str | None = None
) -> list[Object]:
    """The list (one document) or the named objects (one each) of a target.

    Failures of single names are reported and skipped, as kubectl goes on to the next.
    """
    namespace = namespace_for(session, args, target.resource)
    path = target.resource.type.path
    if target.names is None:
        return [session.client.request("GET", path(namespace), _params(args), accept=accept).body]
    found = []
    for name in target.names:
        try:
            found.append(session.client.request("GET", path(namespace, name), accept=accept).body)
        except ApiError as err:
            session.report(err)
    return found


def _print_tables(session: Session, args: argparse.Namespace, targets: list[Target]) -> None:
    with_kind = len({t.resource for t in targets}) > 1
    printed = False
    for target in targets:
        tables = _fetch(session, args, target, TABLE)
        if not tables or not any(t.get("rows") for t in tables):
            continue
        table = dict(tables[0], rows=[row for t in tables for row in t.get("rows") or []])
        rows = printers.table_rows(
            table,
            wide=args.output == "wide",
            with_namespace=args.all_namespaces and target.resource.namespaced,
            kind_prefix=target.resource.qualified_kind if with_kind else "",
        )
        if printed:
            session.out.write("\n")
        session.out.write("".join(line + "\n" for line in printers.align(rows)))
        printed = True
    if not printed and not session.failed:
        _no_resources(session, args, targets)


def _no_resources(session: Session, args: argparse.Namespace, targets: list[Target]) -> None:
    namespaced = any(t.resource.namespaced for t in targets)
    if namespaced and not args.all_namespaces:
        session.err.write(f"No resources found in {session.namespace} namespace.\n")
    else:
        session.err.write("No resources found\n")


def _print_objects(session: Session, args: argparse.Namespace, targets: list[Target]) -> None:
    found: list[tuple[ResourceInfo, Object]] = []
    for target in targets:
        for document in _fetch(session, args, target):
            objects = _items(document) if target.names is None else [document]
            found += [(target.resource, obj) for obj in objects]
    single = len(targets) == 1 and targets[0].names is not None and len(targets[0].names) == 1
    if args.output == "name":
        session.out.write("".join(name_line(resource, obj) for resource, obj in found))
    elif single and found:
        session.out.write(_format(args, found[0][1]))
    elif not single:
        session.out.write(_format(args, printers.as_list(obj for _, obj in found)))


def name_line(resource: ResourceInfo, obj: Object) -> str:
    """``-o name``: ``configmap/x``, ``poddisruptionbudget.policy/p``."""
    return f"{resource.qualified_kind}/{obj.get('metadata', {}).get('name', '')}\n"


def _items(document: Object) -> list[Object]:
    """A list's items with the ``apiVersion`` and ``kind`` the server leaves out of them."""
    kind = str(document.get("kind", "")).removesuffix("List")
    api_version = document.get("apiVersion", "")
    return [
        {"apiVersion": api_version, "kind": kind, **item} for item in document.get("items") or []
    ]


def _format(args: argparse.Namespace, obj: Object) -> str:
    """``-o yaml|json``; managedFields are left out unless asked for, as kubectl does."""
    if not args.show_managed_fields:
        obj = _without_managed_fields(obj)
    return printers.to_yaml(obj) if args.output == "yaml" else printers.to_json(obj)


def _without_managed_fields(obj: Object) -> Object:
    if "items" in obj:
        return {**obj, "items": [_without_managed_fields(item) for item in obj["items"]]}
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or "managedFields" not in metadata:
        return obj
    return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}


def _watch(session: Session, args: argparse.Namespace, target: Target) -> None:
    """List, print, then print each watch event's object (or table row) as it comes."""
    if target.names is not None:
        if len(target.names) != 1:
            raise CommandError(
                "watch is only supported on individual resources and resource collections, "
                "but multiple resources were found"
            )
        args.field_selector = f"metadata.name={target.names[0]}"
        target = Target(target.resource, None)
    table = args.output not in ("yaml", "json", "name")
    (listed,) = _fetch(session, args, target, TABLE if table else None)
    events = session.resource(target.resource).watch(
        namespace_for(session, args, target.resource),
        resource_version=listed.get("metadata", {}).get("resourceVersion"),
        label_selector=args.selector,
        field_selector=args.field_selector,
        accept=TABLE if table else None,
    )
    printer = _WatchPrinter(session, args, target.resource)
    printer.print(listed if table else _items(listed))
    for event in events:
        if event.type != "BOOKMARK":
            printer.print(event.object if table else [event.object])


class _WatchPrinter:
    """Prints a watch's tables row by row (the header once) or its objects one by one."""

    def __init__(self, session: Session, args: argparse.Namespace, resource: ResourceInfo) -> None:
        self.session = session
        self.args = args
        self.resource = resource
        self.header: list[str] | None = None

    def print(self, page: Object | list[Object]) -> None:
        if isinstance(page, dict):
            self._rows(page)
        elif self.args.output == "name":
            self.session.out.write("".join(name_line(self.resource, obj) for obj in page))
        else:
            for obj in page:
                self.session.out.write(_format(self.args, obj))
        self.session.out.flush()

    def _rows(self, table: Object) -> None:
        rows = printers.table_rows(
            table,
            wide=self.args.output == "wide",
            with_namespace=self.args.all_namespaces and self.resource.namespaced,
        )
        if len(rows) < 2:
            return
        lines = printers.align([self.header or rows[0], *rows[1:]])
        if self.header is None:
            self.header = rows[0]
        else:
            lines = lines[1:]
        self.session.out.write("".join(line + "\n" for line in lines))
