"""``delete``: by ``TYPE NAME...``, ``TYPE/NAME``, ``-l``/``--all`` or ``-f`` manifests.

Each deletion prints kubectl's ``configmap "x" deleted``; selectors and
``--all`` list first and delete each listed object, as kubectl does, so the
output names every object.
"""

from __future__ import annotations

import argparse

from kapi.apimachinery.unstructured import Object
from kapi.cli.commands.get import Target, namespace_for, parse_targets
from kapi.cli.commands.manifests import each_manifest, success_line
from kapi.cli.commands.resources import ResourceInfo
from kapi.cli.commands.session import CommandError, Session
from kapi.client import ApiError


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("delete", help="delete resources", parents=parents)
    parser.add_argument("targets", nargs="*", metavar="TYPE [NAME...] | TYPE/NAME...")
    parser.add_argument(
        "-f", "--filename", action="append", default=[], help="file, directory or - (stdin)"
    )
    parser.add_argument("-l", "--selector", help="delete the objects matching this label selector")
    parser.add_argument("--all", action="store_true", help="delete all objects of the type")
    parser.set_defaults(command_run=delete)


def delete(session: Session, args: argparse.Namespace) -> None:
    if args.filename:
        if args.targets:
            raise CommandError("cannot specify both a resource and -f")

        def act(resource: ResourceInfo, obj: Object, namespace: str) -> str:
            session.resource(resource).delete(obj.get("metadata", {}).get("name", ""), namespace)
            return "deleted"

        each_manifest(session, args.filename, "delete", "deleting", act)
        return
    if not args.targets:
        raise CommandError("You must provide one or more resources by argument or filename.")
    for target in parse_targets(session, args.targets):
        for name in _names(session, args, target):
            namespace = namespace_for(session, args, target.resource)
            try:
                session.resource(target.resource).delete(name, namespace)
            except ApiError as err:
                session.report(err)
                continue
            session.out.write(success_line(target.resource, name, "deleted"))


def _names(session: Session, args: argparse.Namespace, target: Target) -> list[str]:
    if target.names is not None:
        if args.selector or args.all:
            raise CommandError("name cannot be provided when a selector or --all is specified")
        return target.names
    if not (args.selector or args.all):
        raise CommandError("resource(s) were provided, but no name was specified")
    listed = session.resource(target.resource).list(
        namespace_for(session, args, target.resource), label_selector=args.selector
    )
    return [item["metadata"]["name"] for item in listed.get("items") or []]
