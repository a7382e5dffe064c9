"""One invocation of a kubectl-like command: global flags, the client, errors, warnings.

Every command runs through :func:`run`, so they all share kubectl's behaviour:

* ``--kubeconfig``, ``--context`` and ``-n/--namespace`` pick the server and
  namespace by clientcmd's rules;
* warnings go to stderr through one de-duplicating
  :class:`~kapi.client.warnings.WarningWriter` (KEP-1693's kubectl handler):
  each distinct text once, ``Warning:`` coloured only on a colour-capable
  terminal without ``NO_COLOR``; with ``--warnings-as-errors`` the command
  exits 1 after finishing if any warning was written (``error: 1 warning
  received``);
* API errors print as kubectl's ``Error from server (Reason): message``; a
  command that handles several objects reports each failure and goes on, and
  then exits 1.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx

from kapi.apimachinery.gotext import go_quote
from kapi.cli.commands.resources import Discovery, ResourceInfo, UnknownResourceError
from kapi.client import (
    ApiError,
    Client,
    KubeconfigError,
    SyncResource,
    WarningWriter,
    load_kubeconfig,
)


class CommandError(Exception):
    """A usage or input problem, printed as kubectl prints them: ``error: <message>``."""


@dataclass
class Session:
    """What a command works with: the client, the namespace, discovery and the output."""

    client: Client
    #: The namespace of ``-n``, else the kubeconfig context's, else ``default``.
    namespace: str
    discovery: Discovery
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    failed: bool = False

    def resource(self, info: ResourceInfo) -> SyncResource:
        """The client handle on a discovered resource."""
        return self.client.resource(info.api_version, info.plural, namespaced=info.namespaced)

    def report(self, error: Exception, *, verb: str = "", source: str = "") -> None:
        """Print one failure and remember that the command must exit 1."""
        self.failed = True
        self.err.write(error_message(error, verb=verb, source=source) + "\n")


def add_global_flags(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    """The flags every command accepts, before or after the command name, as kubectl's.

    Only the top-level parser sets ``defaults``: a sub-command's copy must not
    overwrite a value given before the command name.
    """

    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    parser.add_argument("--kubeconfig", default=default(None), help="the kubeconfig file to use")
    parser.add_argument("--context", default=default(None), help="the kubeconfig context to use")
    parser.add_argument(
        "-n", "--namespace", default=default(None), help="the namespace scope for this request"
    )
    parser.add_argument(
        "--warnings-as-errors",
        action="store_true",
        default=default(False),
        help="treat warnings received from the server as errors and exit with a non-zero code",
    )


Command = Callable[[Session, argparse.Namespace], None]


def run(command: Command, args: argparse.Namespace) -> int:
    """Run ``command`` in a new session and return the process exit code."""
    warnings = WarningWriter(sys.stderr, deduplicate=True, color=_stderr_has_colour())
    try:
        config = load_kubeconfig(args.kubeconfig, args.context)
    except KubeconfigError as err:
        return _fail(str(err))
    if args.namespace:
        config = dataclasses.replace(config, namespace=args.namespace)
    with Client(config, warning_handler=warnings) as client:
        session = Session(client, config.namespace, Discovery(client))
        try:
            command(session, args)
        except (ApiError, CommandError, UnknownResourceError, httpx.TransportError) as err:
            session.report(err)
        except KeyboardInterrupt:
            session.failed = True
    session.out.flush()
    if args.warnings_as_errors and warnings.count:
        plural = "" if warnings.count == 1 else "s"
        return _fail(f"{warnings.count} warning{plural} received")
    return 1 if session.failed else 0


def error_message(error: Exception, *, verb: str = "", source: str = "") -> str:
    """The line kubectl prints for ``error`` (``cmdutil.CheckErr`` and ``AddSourceToErr``)."""
    if isinstance(error, ApiError):
        return _api_error_message(error, verb, source)
    if isinstance(error, httpx.TransportError):
        return f"Unable to connect to the server: {error}"
    prefix = f"error when {verb} {go_quote(source)}: " if source else ""
    return f"error: {prefix}{error}"


def _api_error_message(error: ApiError, verb: str, source: str) -> str:
    message = error.message
    if source:
        message = f"error when {verb} {go_quote(source)}: {message}"
    if error.reason == "Invalid":
        return _invalid_message(error.details, message)
    if error.reason == "Unauthorized":
        return f"error: You must be logged in to the server ({message})"
    if error.reason:
        return f"Error from server ({error.reason}): {message}"
    return f"Error from server: {message}"


def _invalid_message(details: dict[str, Any], message: str) -> str:
    """kubectl rebuilds an Invalid error from its details (dropping the source if it can).

    Causes are listed as ``<field>: <message>``, each distinct line once, as
    ``statusCausesToAggrError`` lists them.
    """
    causes = details.get("causes") or []
    if details.get("kind") or details.get("name"):
        head = f"The {details.get('kind', '')} {go_quote(str(details.get('name', '')))} is invalid"
    else:
        head = "The request is invalid"
        if not causes and message:
            head += f": {message}"
    lines = list(dict.fromkeys(f"{c.get('field', '')}: {c.get('message', '')}" for c in causes))
    if not lines:
        return head
    if len(lines) == 1:
        return f"{head}: {lines[0]}"
    return f"{head}: \n" + "\n".join(f"* {line}" for line in lines)


def _stderr_has_colour() -> bool:
    """Colour only for a terminal that can show it, and never with ``NO_COLOR`` (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM", "") == "dumb":
        return False
    return sys.stderr.isatty()


def _fail(message: str) -> int:
    sys.stderr.write(f"error: {message}\n")
    return 1
