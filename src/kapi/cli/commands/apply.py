"""``create -f``, ``replace -f`` and ``apply -f``: write manifests to the server.

``apply`` is client-side and simpler than kubectl's (server-side apply does
not exist yet): an object that does not exist is created; one that exists
gets the manifest as a JSON merge patch (RFC 7386), so the fields the
manifest sets are set and the fields it leaves out are kept.  It records no
``last-applied-configuration`` annotation and so never deletes a field that
an earlier manifest set.  When merging the manifest into the live object
changes nothing, no request is sent and the line says ``unchanged``.
"""

from __future__ import annotations

import argparse

from kapi.apimachinery.unstructured import Object
from kapi.cli.commands.manifests import each_manifest
from kapi.cli.commands.resources import ResourceInfo
from kapi.cli.commands.session import Session
from kapi.client import NotFoundError
from kapi.runtime.patch import merge_patch


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    for name, run, help_ in (
        ("create", create, "create objects from files or stdin"),
        ("replace", replace, "replace objects from files or stdin"),
        ("apply", apply, "create or update objects from files or stdin (client-side merge)"),
    ):
        parser = sub.add_parser(name, help=help_, parents=parents)
        parser.add_argument(
            "-f", "--filename", action="append", default=[], help="file, directory or - (stdin)"
        )
        parser.set_defaults(command_run=run)


def create(session: Session, args: argparse.Namespace) -> None:
    def act(resource: ResourceInfo, obj: Object, namespace: str) -> str:
        session.resource(resource).create(obj, namespace)
        return "created"

    each_manifest(session, args.filename, "create", "creating", act)


def replace(session: Session, args: argparse.Namespace) -> None:
    def act(resource: ResourceInfo, obj: Object, namespace: str) -> str:
        session.resource(resource).replace(obj, namespace)
        return "replaced"

    each_manifest(session, args.filename, "replace", "replacing", act)


def apply(session: Session, args: argparse.Namespace) -> None:
    def act(resource: ResourceInfo, obj: Object, namespace: str) -> str:
        handle = session.resource(resource)
        name = obj.get("metadata", {}).get("name", "")
        try:
            live = handle.get(name, namespace)
        except NotFoundError:
            handle.create(obj, namespace)
            return "created"
        if merge_patch(live, obj) == live:
            return "unchanged"
        handle.patch(name, obj, namespace, patch_type="merge")
        return "configured"

    each_manifest(session, args.filename, "apply", "applying", act)
