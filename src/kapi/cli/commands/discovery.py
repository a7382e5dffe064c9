"""``api-resources`` and ``api-versions``, from the server's discovery documents.

``api-resources`` lists each group's preferred version, the core group first
and then groups by name (kubectl's stable sort by group), with kubectl's
columns ``NAME SHORTNAMES APIVERSION NAMESPACED KIND`` (``-o wide`` adds
``VERBS CATEGORIES``; ``-o name`` prints ``plural.group``).
"""

from __future__ import annotations

import argparse

from kapi.cli.commands.printers import align
from kapi.cli.commands.session import Session


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    resources = sub.add_parser(
        "api-resources", help="print the supported API resources", parents=parents
    )
    resources.add_argument("-o", "--output", choices=("wide", "name"), help="output format")
    resources.set_defaults(command_run=api_resources)
    versions = sub.add_parser(
        "api-versions", help="print the supported API versions (group/version)", parents=parents
    )
    versions.set_defaults(command_run=api_versions)


def api_resources(session: Session, args: argparse.Namespace) -> None:
    found = sorted(session.discovery.resources(), key=lambda r: r.group)
    if args.output == "name":
        session.out.write("".join(f"{r.qualified_plural}\n" for r in found))
        return
    header = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    rows = [
        [r.plural, ",".join(r.short_names), r.api_version, str(r.namespaced).lower(), r.kind]
        for r in found
    ]
    if args.output == "wide":
        header += ["VERBS", "CATEGORIES"]
        for row, r in zip(rows, found, strict=True):
            row += [",".join(r.verbs), ",".join(r.categories)]
    session.out.write("".join(line + "\n" for line in align([header, *rows])))


def api_versions(session: Session, args: argparse.Namespace) -> None:
    session.out.write("".join(f"{gv}\n" for gv in session.discovery.group_versions()))
