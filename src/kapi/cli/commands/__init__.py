"""kubectl-like commands on :mod:`kapi.client`: ``get``, ``apply``, ``explain`` and the rest.

Each module registers its sub-commands; :func:`register` adds them all to the
``kapi`` parser with the global flags of
:func:`~kapi.cli.commands.session.add_global_flags`, and :func:`run` runs the
parsed one through :func:`~kapi.cli.commands.session.run`.
"""

from __future__ import annotations

import argparse

from kapi.cli.commands import (
    apply,
    crd,
    delete,
    deprecations,
    describe,
    discovery,
    explain,
    get,
    lint,
    migrate,
    patch,
    session,
    storage_versions,
)

_MODULES = (
    get,
    describe,
    apply,
    patch,
    delete,
    discovery,
    explain,
    deprecations,
    crd,
    migrate,
    storage_versions,
    lint,
)


def register(parser: argparse.ArgumentParser, sub: argparse._SubParsersAction) -> None:
    """Add the global flags to the ``kapi`` parser and every command to its sub-commands."""
    session.add_global_flags(parser, defaults=True)
    command_flags = argparse.ArgumentParser(add_help=False)
    session.add_global_flags(command_flags, defaults=False)
    parents = [command_flags]
    for module in _MODULES:
        module.register(sub, parents)


def run(args: argparse.Namespace) -> int | None:
    """The exit code of the parsed command, or None when it is not one of these.

    A command that may run without a server (``deprecations`` on an audit log)
    sets ``command_main`` and opens a session itself only when it needs one.
    """
    main = getattr(args, "command_main", None)
    if main is not None:
        return int(main(args))
    command = getattr(args, "command_run", None)
    return None if command is None else session.run(command, args)
