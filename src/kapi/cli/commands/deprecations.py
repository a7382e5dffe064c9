"""``deprecations``: which deprecated APIs clients still call, from real traffic.

pluto and kubent find deprecated APIs in manifests; what breaks on upgrade is
what clients actually *call*.  KEP-1693 gives administrators two records of
that, and this command reads either or both:

* the server's ``/metrics`` (through the kubeconfig, as every command):
  ``apiserver_requested_deprecated_apis`` says which deprecated
  group/version/resource(/subresource) was requested and its removal release,
  ``apiserver_request_total`` how often;
* audit logs (``--audit-log``, JSON lines of ``audit.k8s.io/v1`` Events, as
  kube-apiserver's ``--audit-log-path`` writes them, rotated backups too):
  events annotated ``k8s.io/deprecated: "true"`` say who called (user, user
  agent) and when last.

Only the names upstream writes are read, so the same command works on the
metrics and audit logs of a real kube-apiserver.  kapi's metrics also count
writes that set a field whose KEP-2558 lifecycle tag says deprecated
(``kapi_requested_deprecated_fields_total``); those are listed below the APIs.
The replacement comes from kapi's own lifecycle data (:mod:`kapi.apis.lifecycles`), the data its
warnings are made from.
"""

from __future__ import annotations

import argparse
import gzip
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import orjson
from prometheus_client.parser import text_string_to_metric_families

from kapi.apis.lifecycles import lifecycle_of
from kapi.cli.commands import printers, session
from kapi.cli.commands.session import Session
from kapi.version import Version

#: The gauge and counter of upstream's ``endpoints/metrics``.
DEPRECATED_GAUGE = "apiserver_requested_deprecated_apis"
REQUEST_COUNTER = "apiserver_request_total"
#: kapi's counter of writes setting a deprecated field (its ``_total`` sample).
DEPRECATED_FIELDS_COUNTER = "kapi_requested_deprecated_fields_total"
#: The audit annotations upstream puts on requests for deprecated APIs.
DEPRECATED_ANNOTATION = "k8s.io/deprecated"
REMOVED_RELEASE_ANNOTATION = "k8s.io/removed-release"
#: How kubectl shows an empty cell.
NONE = "<none>"
UNKNOWN = "<unknown>"

#: (group, version, resource, subresource), as the metric labels and ``objectRef`` name them.
Key = tuple[str, str, str, str]


@dataclass
class DeprecatedAPIUsage:
    """What the records say about one deprecated group/version/resource(/subresource)."""

    group: str
    version: str
    resource: str
    subresource: str = ""
    #: The release the server said it goes away in (``""``: no removal planned).
    removed_release: str = ""
    #: Requests counted by ``apiserver_request_total`` (None: metrics not read).
    requests: int | None = None
    #: Requests found in the audit logs (None: no audit log read).
    audited_requests: int | None = None
    users: set[str] = field(default_factory=set)
    user_agents: set[str] = field(default_factory=set)
    last_seen: datetime | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource_path(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource

    def to_dict(self) -> dict[str, Any]:
        """The machine-readable form (``-o json|yaml``), with the lifecycle kapi knows."""
        known = lifecycle_of(self.group, self.version, self.resource)
        lifecycle = known.lifecycle if known is not None else None
        return {
            "group": self.group,
            "version": self.version,
            "resource": self.resource,
            "subresource": self.subresource,
            "kind": known.gvk.kind if known is not None else None,
            "deprecatedIn": _str_or_none(lifecycle.deprecated if lifecycle else None),
            "removedIn": self.removed_in(),
            "replacement": _str_or_none(lifecycle.replacement if lifecycle else None),
            "requests": self.requests,
            "auditedRequests": self.audited_requests,
            "users": sorted(self.users),
            "userAgents": sorted(self.user_agents),
            "lastSeen": _rfc3339(self.last_seen) if self.last_seen else None,
        }

    def removed_in(self) -> str | None:
        """The removal release the server reported, else the one kapi declares, else None."""
        if self.removed_release:
            return self.removed_release
        known = lifecycle_of(self.group, self.version, self.resource)
        return _str_or_none(known.lifecycle.removed) if known is not None else None

    def sort_key(self) -> tuple[tuple[int, ...], str, str, str, str]:
        """Soonest removal first (no planned removal last), then by API."""
        removed = self.removed_in()
        release = tuple(int(p) for p in removed.split(".")) if removed else (sys.maxsize,)
        return (release, self.group, self.version, self.resource, self.subresource)


# --- reading the records ----------------------------------------------------------------------


def usages_from_metrics(text: str) -> dict[Key, DeprecatedAPIUsage]:
    """The deprecated APIs a ``/metrics`` text says were requested, and their request counts.

    The gauge names the deprecated APIs (set to 1 once requested); the request
    counter, summed over verb, code, scope and the rest, says how often.
    """
    usages: dict[Key, DeprecatedAPIUsage] = {}
    counts: dict[Key, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if sample.name == DEPRECATED_GAUGE and sample.value > 0:
                key = _key(labels)
                usages[key] = DeprecatedAPIUsage(
                    *key, removed_release=labels.get("removed_release", "")
                )
            elif sample.name == REQUEST_COUNTER:
                key = _key(labels)
                counts[key] = counts.get(key, 0.0) + sample.value
    for key, usage in usages.items():
        usage.requests = int(counts.get(key, 0.0))
    return usages


@dataclass(frozen=True)
class DeprecatedFieldUsage:
    """Writes to one resource that set one deprecated field, as the metrics count them."""

    group: str
    version: str
    resource: str
    #: The tagged field, ``[*]`` standing for every item (``spec.ports[*].legacy``).
    field: str
    writes: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "version": self.version,
            "resource": self.resource,
            "field": self.field,
            "writes": self.writes,
        }


def field_usages_from_metrics(text: str) -> list[DeprecatedFieldUsage]:
    """The deprecated fields a ``/metrics`` text says writes set, by resource and field."""
    usages = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == DEPRECATED_FIELDS_COUNTER and sample.value > 0:
                labels = sample.labels
                usages.append(
                    DeprecatedFieldUsage(
                        labels.get("group", ""),
                        labels.get("version", ""),
                        labels.get("resource", ""),
                        labels.get("field", ""),
                        int(sample.value),
                    )
                )
    return sorted(usages, key=lambda u: (u.group, u.resource, u.version, u.field))


def _key(labels: Mapping[str, str]) -> Key:
    return (
        labels.get("group", ""),
        labels.get("version", ""),
        labels.get("resource", ""),
        labels.get("subresource", ""),
    )


@dataclass
class AuditLogReader:
    """Reads audit events from log files (plain or ``.gz`` rotated backups), line by line.

    A line that is not a JSON object is counted and skipped, not fatal: the
    newest line of a live log may be half written.
    """

    skipped: int = 0

    def events(self, paths: Iterable[Path]) -> Iterator[Mapping[str, Any]]:
        for path in paths:
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rb") as lines:
                for line in lines:
                    if not line.strip():
                        continue
                    try:
                        event = orjson.loads(line)
                    except orjson.JSONDecodeError:
                        self.skipped += 1
                        continue
                    if isinstance(event, dict):
                        yield event
                    else:
                        self.skipped += 1


def add_audit_events(
    usages: dict[Key, DeprecatedAPIUsage], events: Iterable[Mapping[str, Any]]
) -> None:
    """Add the requests for deprecated APIs among ``events`` to ``usages``.

    A request has an event per stage (``RequestReceived``, ``ResponseStarted``
    for watches, ``ResponseComplete``); it is counted once, by ``auditID``.
    Every usage gets an audited count, zero if no event names it.
    """
    seen: set[str] = set()
    for existing in usages.values():
        existing.audited_requests = 0
    for event in events:
        annotations = event.get("annotations") or {}
        ref = event.get("objectRef") or {}
        if annotations.get(DEPRECATED_ANNOTATION) != "true" or not ref.get("apiVersion"):
            continue
        key = (
            ref.get("apiGroup", ""),
            ref["apiVersion"],
            ref.get("resource", ""),
            ref.get("subresource", ""),
        )
        usage = usages.get(key)
        if usage is None:
            usage = usages[key] = DeprecatedAPIUsage(*key, audited_requests=0)
        usage.removed_release = usage.removed_release or annotations.get(
            REMOVED_RELEASE_ANNOTATION, ""
        )
        when = _parse_time(event.get("stageTimestamp") or event.get("requestReceivedTimestamp"))
        if when is not None and (usage.last_seen is None or when > usage.last_seen):
            usage.last_seen = when
        audit_id = event.get("auditID")
        if audit_id:
            if audit_id in seen:
                continue
            seen.add(audit_id)
        usage.audited_requests = (usage.audited_requests or 0) + 1
        username = (event.get("user") or {}).get("username")
        if username:
            usage.users.add(username)
        if event.get("userAgent"):
            usage.user_agents.add(event["userAgent"])


def _parse_time(text: Any) -> datetime | None:
    """An audit timestamp (RFC 3339, microseconds), or None if absent or malformed."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _rfc3339(when: datetime) -> str:
    """Seconds precision in UTC, as Kubernetes prints times (``metav1.Time``)."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _str_or_none(value: object) -> str | None:
    """A release or kind as text, JSON's null for none."""
    return str(value) if value is not None else None


# --- output -----------------------------------------------------------------------------------


def render_table(usages: list[DeprecatedAPIUsage], *, audited: bool) -> str:
    """kubectl-style columns; who and when only when an audit log was read.

    ``REQUESTS`` is the metrics' count when they were read (every request since
    the server started), else the audit logs' count.  User agents show their
    first token (``kubectl/v1.32.3``); ``-o json`` has them whole.
    """
    header = ["API", "RESOURCE", "REMOVED IN", "REPLACEMENT", "REQUESTS"]
    if audited:
        header += ["LAST SEEN", "USERS", "USER AGENTS"]
    rows = [header]
    for usage in usages:
        item = usage.to_dict()
        known = lifecycle_of(usage.group, usage.version, usage.resource) is not None
        count = usage.requests if usage.requests is not None else usage.audited_requests
        row = [
            usage.api_version,
            usage.resource_path,
            item["removedIn"] or NONE,
            item["replacement"] or (NONE if known else UNKNOWN),
            str(count or 0),
        ]
        if audited:
            agents = sorted({agent.split(" ", 1)[0] for agent in usage.user_agents})
            row += [
                item["lastSeen"] or NONE,
                ",".join(item["users"]) or NONE,
                ",".join(agents) or NONE,
            ]
        rows.append(row)
    return "".join(line + "\n" for line in printers.align(rows))


def render_fields_table(usages: list[DeprecatedFieldUsage]) -> str:
    rows = [["API", "RESOURCE", "DEPRECATED FIELD", "WRITES"]]
    for usage in usages:
        api = f"{usage.group}/{usage.version}" if usage.group else usage.version
        rows.append([api, usage.resource, usage.field, str(usage.writes)])
    return "".join(line + "\n" for line in printers.align(rows))


def write_report(
    out: TextIO,
    usages: Iterable[DeprecatedAPIUsage],
    output: str | None,
    *,
    audited: bool,
    fields: list[DeprecatedFieldUsage] | None = None,
) -> None:
    ordered = sorted(usages, key=DeprecatedAPIUsage.sort_key)
    fields = fields or []
    if output in ("json", "yaml"):
        document: dict[str, Any] = {"items": [usage.to_dict() for usage in ordered]}
        if fields:
            document["fields"] = [usage.to_dict() for usage in fields]
        out.write(printers.to_json(document) if output == "json" else printers.to_yaml(document))
        return
    if ordered:
        out.write(render_table(ordered, audited=audited))
    if fields:
        out.write(("\n" if ordered else "") + render_fields_table(fields))


# --- the command ------------------------------------------------------------------------------


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "deprecations",
        help="show which deprecated APIs clients call, from metrics and audit logs",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
        parents=parents,
    )
    parser.add_argument(
        "--audit-log",
        dest="audit_logs",
        type=Path,
        nargs="+",
        action="extend",
        default=[],
        metavar="PATH",
        help="audit log files (JSON lines; rotated backups too, .gz allowed); "
        "the server's /metrics are then read only with --metrics",
    )
    parser.add_argument(
        "--metrics",
        action="store_true",
        help="also read the server's /metrics when --audit-log is given",
    )
    parser.add_argument(
        "--removed-in",
        type=_release_arg,
        metavar="RELEASE",
        help="only APIs removed in this release, e.g. 1.25",
    )
    parser.add_argument("-o", "--output", choices=("json", "yaml"), help="output format")
    parser.set_defaults(command_main=main)


def _release_arg(text: str) -> str:
    """``1.25`` or ``v1.25`` as the metrics and annotations spell a release: ``1.25``."""
    try:
        return str(Version.parse(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def main(args: argparse.Namespace) -> int:
    """Run with a server when its metrics are wanted; an audit log alone needs no kubeconfig."""
    if args.audit_logs and not args.metrics:
        try:
            _report(sys.stdout, sys.stderr, args, None)
        except OSError as err:
            sys.stderr.write(f"error: {err}\n")
            return 1
        return 0
    return session.run(_with_server, args)


def _with_server(current: Session, args: argparse.Namespace) -> None:
    metrics = current.client.request("GET", "/metrics", accept="text/plain").body
    try:
        _report(current.out, current.err, args, metrics)
    except OSError as err:
        current.report(err)


def _report(out: TextIO, err: TextIO, args: argparse.Namespace, metrics: str | None) -> None:
    usages = usages_from_metrics(metrics) if metrics is not None else {}
    if args.audit_logs:
        reader = AuditLogReader()
        add_audit_events(usages, reader.events(args.audit_logs))
        if reader.skipped:
            err.write(f"warning: skipped {reader.skipped} lines that are not JSON objects\n")
    found = [u for u in usages.values() if args.removed_in in (None, u.removed_in())]
    # Deprecated fields have no removal release: a --removed-in question leaves them out.
    fields = (
        field_usages_from_metrics(metrics)
        if metrics is not None and args.removed_in is None
        else []
    )
    if not found and not fields and args.output is None:
        err.write("No deprecated API requests found\n")
    write_report(out, found, args.output, audited=bool(args.audit_logs), fields=fields)
