"""``storage-versions``: per resource, the version each API server writes it in, at a glance.

Reads the ``internal.apiserver.k8s.io/v1alpha1`` StorageVersion objects
(KEP-2339) and prints one row per resource: ``RESOURCE`` (the object's name,
``<group>.<resource>``), ``COMMON`` (``status.commonEncodingVersion``, or
``<none>`` while the servers differ), ``AGREE`` (``yes`` when every entry
names the same encoding version, ``NO`` when they differ, ``-`` with no
entry yet), then one column per API server with the encoding version it
reported (``-`` when it has no entry for that resource).

Servers are named by the ``kubernetes.io/hostname`` label of their identity
lease (``kube-system`` leases labelled
``apiserver.kubernetes.io/identity=kube-apiserver``); an ID without a lease,
or whose hostname another ID shares, keeps its ID.  ``-o wide`` adds the
versions every listed server can decode and names each server column
``hostname/ID``; ``-o json`` and ``-o yaml`` print the same summary as data.
On a terminal (without ``NO_COLOR``) a disagreeing row is coloured: ``NO``
in red and each version that differs from the most common one in yellow.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from kapi.apimachinery.unstructured import Object
from kapi.cli.commands import printers
from kapi.cli.commands.session import CommandError, Session
from kapi.client import ApiError, NotFoundError

STORAGE_VERSIONS = ("internal.apiserver.k8s.io/v1alpha1", "storageversions")
LEASES = ("coordination.k8s.io/v1", "leases")
IDENTITY_NAMESPACE = "kube-system"
IDENTITY_SELECTOR = "apiserver.kubernetes.io/identity=kube-apiserver"
HOSTNAME_LABEL = "kubernetes.io/hostname"

#: What the command says when the server does not serve the API (the gate is off).
API_OFF_MESSAGE = (
    "the server does not serve internal.apiserver.k8s.io/v1alpha1 storageversions "
    "(is the StorageVersionAPI feature gate off? it is turned on with "
    "--feature-gates=StorageVersionAPI=true)"
)

NO_ENTRY = "-"
NO_COMMON = "<none>"
_RED = "\x1b[31;1m"
_YELLOW = "\x1b[33m"
_RESET = "\x1b[0m"


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "storage-versions",
        help="print, per resource, the version each API server encodes it in and "
        "whether they agree",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
        parents=parents,
    )
    parser.add_argument("-o", "--output", choices=("wide", "json", "yaml"), help="output format")
    parser.add_argument(
        "--only-disagreeing",
        action="store_true",
        help="print only the resources whose servers report different encoding versions",
    )
    parser.set_defaults(command_run=show)


# --- the summary ------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    """One API server as a column: its ``apiServerID`` and the name it is shown as."""

    id: str
    name: str


@dataclass
class Row:
    """One StorageVersion, reduced to what the table shows."""

    resource: str
    common: str | None
    #: apiServerID -> the entry it reported.
    entries: dict[str, Object] = field(default_factory=dict)

    @property
    def encodings(self) -> dict[str, str]:
        return {sid: str(e.get("encodingVersion") or "") for sid, e in self.entries.items()}

    @property
    def agree(self) -> bool | None:
        """True when all entries name one encoding version, False when not, None with none."""
        distinct = set(self.encodings.values())
        return None if not distinct else len(distinct) == 1

    @property
    def decodable_by_all(self) -> list[str]:
        """The versions every listed server can decode, in the first server's order."""
        lists = [list(e.get("decodableVersions") or []) for e in self.entries.values()]
        if not lists:
            return []
        return [v for v in lists[0] if all(v in other for other in lists[1:])]


@dataclass
class Summary:
    servers: list[Server]
    rows: list[Row]


def summarize(
    storage_versions: Sequence[Object],
    leases: Sequence[Object] = (),
    *,
    only_disagreeing: bool = False,
) -> Summary:
    """The table's model: rows sorted by resource, servers sorted by the name shown."""
    rows = []
    for obj in storage_versions:
        status = obj.get("status") or {}
        entries = {str(e.get("apiServerID") or ""): e for e in status.get("storageVersions") or []}
        rows.append(
            Row(
                resource=str((obj.get("metadata") or {}).get("name", "")),
                common=status.get("commonEncodingVersion"),
                entries=entries,
            )
        )
    rows.sort(key=lambda r: r.resource)
    ids = {sid for row in rows for sid in row.entries}
    servers = sorted(_server_names(ids, leases), key=lambda s: (s.name, s.id))
    if only_disagreeing:
        rows = [row for row in rows if row.agree is False]
    return Summary(servers, rows)


def _server_names(ids: set[str], leases: Sequence[Object]) -> list[Server]:
    hostnames: dict[str, str] = {}
    for lease in leases:
        metadata = lease.get("metadata") or {}
        hostname = (metadata.get("labels") or {}).get(HOSTNAME_LABEL)
        if hostname:
            hostnames[str(metadata.get("name", ""))] = str(hostname)
    shared = Counter(hostnames.get(sid) for sid in ids)
    servers = []
    for sid in ids:
        hostname = hostnames.get(sid)
        # Two IDs behind one hostname (a stale lease beside a new one) keep their IDs.
        unique = hostname is not None and shared[hostname] == 1 and hostname not in ids
        servers.append(Server(sid, hostname if unique and hostname else sid))
    return servers


def table(summary: Summary, *, wide: bool = False) -> list[list[str]]:
    """The header and rows as plain text."""
    header = ["RESOURCE", "COMMON", "AGREE"]
    header += [f"{s.name}/{s.id}" if wide and s.name != s.id else s.name for s in summary.servers]
    if wide:
        header.append("DECODABLE BY ALL")
    out = [header]
    for row in summary.rows:
        encodings = row.encodings
        cells = [row.resource, NO_COMMON if row.common is None else row.common]
        cells.append({True: "yes", False: "NO", None: NO_ENTRY}[row.agree])
        cells += [encodings.get(s.id, NO_ENTRY) for s in summary.servers]
        if wide:
            cells.append(",".join(row.decodable_by_all) or NO_ENTRY)
        out.append(cells)
    return out


def render(summary: Summary, *, wide: bool = False, colour: bool = False) -> list[str]:
    """The aligned lines (as kubectl aligns), coloured for a terminal when ``colour``."""
    rows = table(summary, wide=wide)
    lines = printers.align(rows)
    if not colour:
        return lines
    widths = [max(len(r[i]) for r in rows) + 3 for i in range(len(rows[0]))]
    coloured = [lines[0]]
    for row, cells in zip(summary.rows, rows[1:], strict=True):
        codes = _cell_colours(row, summary.servers, len(cells))
        parts = []
        for i, cell in enumerate(cells):
            last = i == len(cells) - 1
            text = cell if last else cell.ljust(widths[i])
            if codes[i]:
                # Pad outside the escape codes so the columns stay aligned.
                text = f"{codes[i]}{cell}{_RESET}" + ("" if last else " " * (widths[i] - len(cell)))
            parts.append(text)
        coloured.append("".join(parts))
    return coloured


def _cell_colours(row: Row, servers: list[Server], count: int) -> list[str]:
    codes = [""] * count
    if row.agree is not False:
        return codes
    codes[2] = _RED
    encodings = row.encodings
    majority, _ = Counter(encodings.values()).most_common(1)[0]
    for i, server in enumerate(servers):
        version = encodings.get(server.id)
        if version is not None and version != majority:
            codes[3 + i] = _YELLOW
    return codes


def as_data(summary: Summary) -> dict[str, Any]:
    """The summary for ``-o json|yaml``."""
    names = {s.id: s.name for s in summary.servers}
    return {
        "servers": [{"apiServerID": s.id, "name": s.name} for s in summary.servers],
        "resources": [
            {
                "name": row.resource,
                "commonEncodingVersion": row.common,
                "agree": row.agree,
                "encodingVersions": {names[sid]: v for sid, v in sorted(row.encodings.items())},
                "decodableByAll": row.decodable_by_all,
            }
            for row in summary.rows
        ],
    }


# --- the command ------------------------------------------------------------------------


def show(session: Session, args: argparse.Namespace) -> None:
    try:
        listed = session.client.resource(*STORAGE_VERSIONS, namespaced=False).list()
    except NotFoundError as err:
        raise CommandError(API_OFF_MESSAGE) from err
    summary = summarize(
        listed.get("items") or [], _identity_leases(session), only_disagreeing=args.only_disagreeing
    )
    if args.output == "json":
        session.out.write(printers.to_json(as_data(summary)))
        return
    if args.output == "yaml":
        session.out.write(printers.to_yaml(as_data(summary)))
        return
    if not summary.rows:
        what = "disagreeing storage versions" if args.only_disagreeing else "StorageVersion objects"
        session.err.write(f"No {what} found\n")
        return
    lines = render(summary, wide=args.output == "wide", colour=has_colour(session.out))
    session.out.write("".join(line + "\n" for line in lines))


def _identity_leases(session: Session) -> list[Object]:
    """The identity leases, or none when they cannot be read (the table falls back to IDs)."""
    leases = session.client.resource(*LEASES, namespaced=True)
    try:
        listed = leases.list(IDENTITY_NAMESPACE, label_selector=IDENTITY_SELECTOR)
    except ApiError:
        return []
    return list(listed.get("items") or [])


def has_colour(stream: TextIO) -> bool:
    """Colour only on a terminal that can show it, never with ``NO_COLOR`` (no-color.org)."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM", "") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
