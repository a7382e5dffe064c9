"""``patch TYPE NAME -p PATCH [--type strategic|merge|json]``, as kubectl.

The patch is JSON or YAML.  Like kubectl, the object is read first so that a
patch that changes nothing says ``patched (no change)``.
"""

from __future__ import annotations

import argparse

import yaml

from kapi.cli.commands.get import namespace_for, parse_targets
from kapi.cli.commands.manifests import success_line
from kapi.cli.commands.session import CommandError, Session
from kapi.client import ApiError


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("patch", help="update fields of a resource", parents=parents)
    parser.add_argument("targets", nargs="+", metavar="TYPE NAME | TYPE/NAME")
    parser.add_argument("-p", "--patch", required=True, help="the patch, JSON or YAML")
    parser.add_argument(
        "--type",
        dest="patch_type",
        choices=("strategic", "merge", "json"),
        default="strategic",
        help="the type of patch (default strategic)",
    )
    parser.set_defaults(command_run=patch)


def patch(session: Session, args: argparse.Namespace) -> None:
    try:
        body = yaml.safe_load(args.patch)
    except yaml.YAMLError as err:
        raise CommandError(f"unable to parse {args.patch!r}: {err}") from err
    for target in parse_targets(session, args.targets):
        if target.names is None:
            raise CommandError("resource(s) were provided, but no name was specified")
        handle = session.resource(target.resource)
        namespace = namespace_for(session, args, target.resource)
        for name in target.names:
            try:
                before = handle.get(name, namespace)
                after = handle.patch(name, body, namespace, patch_type=args.patch_type)
            except ApiError as err:
                session.report(err)
                continue
            word = "patched" if after != before else "patched (no change)"
            session.out.write(success_line(target.resource, name, word))
