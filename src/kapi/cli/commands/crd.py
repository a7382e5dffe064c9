"""``crd check -f FILE``: which stored objects a changed CRD would reject, before applying it.

For each CustomResourceDefinition in the files, the command sends the CRD as
a ``dryRun=All`` update (PUT) and reads the pre-flight report the server
answers as ``Warning`` headers (kapi's ``apiextensions/preflight.py``): each
stored object is checked against each served version of the new schema, on
create and on an update that leaves it unchanged (with ratcheting).  Nothing
is stored.  The report prints as a table of the rejected objects (at most
the 20 the server lists) under a summary line.

Exit codes: 0 every stored object is accepted on create (or there is nothing
to check: a CRD that does not exist yet, or whose spec is unchanged); 1 some
objects are rejected on create but an update that leaves them unchanged is
accepted (they ratchet); 2 some objects are rejected even by an unchanged
update; 3 the check could not be done (a file, connection or API error, such
as the new CRD itself being invalid, or a server that is not kapi).
argparse's own usage errors exit 2 before anything is checked, as for every
``kapi`` command.
"""

from __future__ import annotations

import argparse
import copy
import re
from dataclasses import dataclass, field

from kapi.apimachinery.unstructured import Object
from kapi.cli.commands import printers, session
from kapi.cli.commands.manifests import read_manifests
from kapi.cli.commands.session import CommandError, Session
from kapi.client import NotFoundError, WarningHandler

#: The prefix and the verdict phrases of the server's report (``kapi.apiextensions.preflight``).
PREFIX = "preflight: "
RATCHETS = "rejected on create, accepted unchanged (ratcheting)"
REJECTED = "rejected even unchanged"
_SUMMARY = re.compile(
    r"^\d+ of \d+ stored \S+ objects would be rejected on create by the new schema: "
    r"(?P<ratchets>\d+) accepted unchanged \(ratcheting\), "
    r"(?P<rejected>\d+) rejected even unchanged$"
)
_LINE = re.compile(
    rf"^(?P<version>\S+) (?P<object>\S+): (?P<verdict>{re.escape(RATCHETS)}|{REJECTED}): "
    r"(?P<error>.*)$"
)

EXIT_ACCEPTED, EXIT_RATCHETS, EXIT_REJECTED, EXIT_ERROR = 0, 1, 2, 3
_CRD = ("apiextensions.k8s.io/v1", "customresourcedefinitions")


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    crd = sub.add_parser("crd", help="work with CustomResourceDefinitions")
    commands = crd.add_subparsers(dest="crd_command", required=True)
    parser = commands.add_parser(
        "check",
        help="list the stored objects a changed CRD would reject (a server-side dry run)",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
        epilog=__doc__.split("\n\n")[2] if __doc__ else None,
        parents=parents,
    )
    parser.add_argument(
        "-f",
        "--filename",
        action="append",
        default=[],
        help="file, directory or - (stdin) holding the new CustomResourceDefinition(s)",
    )
    parser.set_defaults(command_main=main)


def main(args: argparse.Namespace) -> int:
    """The exit code documented above (the session's own failure exit 1 becomes 3)."""
    outcome = Outcome()
    code = session.run(lambda s, a: check(s, a, outcome), args)
    return EXIT_ERROR if code else outcome.exit_code


@dataclass
class Outcome:
    """The worst verdict over every CRD checked."""

    exit_code: int = EXIT_ACCEPTED

    def worst(self, code: int) -> None:
        self.exit_code = max(self.exit_code, code)


@dataclass
class ParsedReport:
    """The server's report, read back from the warnings of the dry run."""

    summary: str = ""
    ratchets: int = 0
    rejected: int = 0
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        body = text.removeprefix(PREFIX)
        if summary := _SUMMARY.match(body):
            self.summary = body
            self.ratchets = int(summary["ratchets"])
            self.rejected = int(summary["rejected"])
        elif line := _LINE.match(body):
            verdict = "ratchets" if line["verdict"] == RATCHETS else "rejected"
            self.rows.append([line["object"], line["version"], verdict, line["error"]])
        else:
            self.notes.append(body)

    @property
    def exit_code(self) -> int:
        if self.rejected:
            return EXIT_REJECTED
        return EXIT_RATCHETS if self.ratchets else EXIT_ACCEPTED


class _Collector:
    """Keeps the report's warnings and passes every other one to the session's handler."""

    def __init__(self, others: WarningHandler | None) -> None:
        self.others = others
        self.report: list[str] = []

    def handle_warning(self, code: int, agent: str, text: str) -> None:
        if code == 299 and text.startswith(PREFIX):
            self.report.append(text)
        elif self.others is not None:
            self.others.handle_warning(code, agent, text)


def check(s: Session, args: argparse.Namespace, outcome: Outcome) -> None:
    manifests = read_manifests(args.filename, "crd check")
    version = s.client.request("GET", "/version").body
    if "+kapi." not in str(version.get("gitVersion", "")):
        # Another server answers the dry run without a report: silence would read as "all good".
        raise CommandError(
            f"the server ({version.get('gitVersion', 'unknown version')}) is not kapi: "
            "the pre-flight report of a dry-run CRD update is a kapi extension"
        )
    for source, obj in manifests:
        if obj.get("kind") != "CustomResourceDefinition":
            raise CommandError(
                f"{source}: {obj.get('kind') or 'an object without kind'} is not a "
                "CustomResourceDefinition"
            )
        outcome.worst(_check_one(s, obj))


def _check_one(s: Session, obj: Object) -> int:
    crds = s.client.resource(*_CRD, namespaced=False)
    name = str((obj.get("metadata") or {}).get("name", ""))
    try:
        stored = crds.get(name)
    except NotFoundError:
        s.out.write(
            f"customresourcedefinition/{name} does not exist yet: no stored objects to check\n"
        )
        return EXIT_ACCEPTED
    body = copy.deepcopy(obj)
    # The check is of the new spec against what was just read: CRDs take no unconditional
    # update, so the dry run names the version read, as kubectl replace does.
    body.setdefault("metadata", {})["resourceVersion"] = stored["metadata"]["resourceVersion"]
    collector = _Collector(s.client.warning_handler)
    s.client.warning_handler = collector
    try:
        answer = crds.replace(body, dry_run=True)
    finally:
        s.client.warning_handler = collector.others
    if answer.get("spec") == stored.get("spec"):
        s.out.write(
            f"customresourcedefinition/{name}: the spec is unchanged, nothing to check "
            "(the server checks stored objects against a changed spec only)\n"
        )
        return EXIT_ACCEPTED
    report = ParsedReport()
    for text in collector.report:
        report.add(text)
    if not report.summary:
        s.out.write(
            f"customresourcedefinition/{name}: every stored object is accepted on create "
            "by the new schema\n"
        )
        return EXIT_ACCEPTED
    s.out.write(f"customresourcedefinition/{name}: {report.summary}\n")
    table = [["OBJECT", "VERSION", "VERDICT", "FIRST ERROR"], *report.rows]
    s.out.write("".join(line + "\n" for line in printers.align(table)))
    for note in report.notes:
        s.out.write(note + "\n")
    return report.exit_code
