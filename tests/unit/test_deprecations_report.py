"""``kapi deprecations``: reading /metrics and audit logs, aggregating, printing.

The audit events are written with upstream's ``audit.k8s.io/v1`` field names
(as kube-apiserver's ``--audit-log-path`` writes them), so the same parsing
works on a real cluster's log.
"""

from __future__ import annotations

import gzip
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from kapi.apis.lifecycles import lifecycle_of
from kapi.cli.commands import deprecations
from kapi.cli.main import main
from kapi.runtime.scheme import GroupVersionKind
from kapi.version import Version


def sample(name: str, value: float, **labels: str) -> str:
    """One sample line as /metrics renders it (labels sorted by name)."""
    rendered = ",".join(f'{key}="{labels[key]}"' for key in sorted(labels))
    return f"{name}{{{rendered}}} {value}\n"


def requests(verb: str, count: float, version: str = "v1beta1", **labels: str) -> str:
    """An ``apiserver_request_total`` sample of PodDisruptionBudgets unless told otherwise."""
    base = {"code": "200", "component": "apiserver", "dry_run": "", "scope": "resource"}
    base.update(group="policy", resource="poddisruptionbudgets", subresource="")
    return sample(
        "apiserver_request_total", count, **{**base, **labels, "verb": verb}, version=version
    )


def gauge(group: str, version: str, resource: str, subresource: str, removed: str) -> str:
    return sample(
        "apiserver_requested_deprecated_apis",
        1.0,
        group=group,
        removed_release=removed,
        resource=resource,
        subresource=subresource,
        version=version,
    )


METRICS = (
    "# HELP apiserver_request_total [STABLE] Counter of apiserver requests.\n"
    "# TYPE apiserver_request_total counter\n"
    + requests("GET", 3.0)
    + requests("POST", 1.0, code="201", scope="namespace")
    + requests("GET", 7.0, version="v1")
    + requests("PUT", 2.0, subresource="status")
    + requests("LIST", 5.0, version="v1", group="", resource="endpoints", scope="namespace")
    + "# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs requested.\n"
    "# TYPE apiserver_requested_deprecated_apis gauge\n"
    + gauge("policy", "v1beta1", "poddisruptionbudgets", "", "1.25")
    + gauge("policy", "v1beta1", "poddisruptionbudgets", "status", "1.25")
    + gauge("", "v1", "endpoints", "", "")
)

KUBECTL = "kubectl/v1.32.3 (linux/amd64) kubernetes/32cc146"
OPERATOR = "pdb-operator/0.4.1"


def event(
    audit_id: str,
    *,
    stage: str = "ResponseComplete",
    when: str = "2025-03-01T10:00:00.000000Z",
    user: str = "alice",
    agent: str = KUBECTL,
    group: str | None = "policy",
    version: str = "v1beta1",
    resource: str = "poddisruptionbudgets",
    subresource: str | None = None,
    deprecated: bool = True,
    removed: str | None = "1.25",
) -> dict[str, Any]:
    """An upstream audit.k8s.io/v1 Event at level Metadata (core group: no apiGroup)."""
    ref: dict[str, Any] = {"resource": resource, "namespace": "team", "name": "web"}
    if group is not None:
        ref["apiGroup"] = group
    ref["apiVersion"] = version
    if subresource:
        ref["subresource"] = subresource
    annotations = {"authorization.k8s.io/decision": "allow"}
    if deprecated and stage != "RequestReceived":
        annotations["k8s.io/deprecated"] = "true"
        if removed:
            annotations["k8s.io/removed-release"] = removed
    return {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "auditID": audit_id,
        "stage": stage,
        "requestURI": f"/apis/{group}/{version}/namespaces/team/{resource}/web",
        "verb": "get",
        "user": {"username": user, "groups": ["system:authenticated"]},
        "sourceIPs": ["10.0.0.7"],
        "userAgent": agent,
        "objectRef": ref,
        "responseStatus": {"metadata": {}, "code": 200},
        "requestReceivedTimestamp": when,
        "stageTimestamp": when,
        "annotations": annotations,
    }


def write_log(path: Path, events: list[dict[str, Any]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events) + tail)
    return path


def aggregate(*events: dict[str, Any]) -> dict[deprecations.Key, deprecations.DeprecatedAPIUsage]:
    usages: dict[deprecations.Key, deprecations.DeprecatedAPIUsage] = {}
    deprecations.add_audit_events(usages, events)
    return usages


PDB = ("policy", "v1beta1", "poddisruptionbudgets", "")


# --- lifecycle lookup -----------------------------------------------------------------------


def test_lifecycle_of_a_deprecated_version_names_its_replacement() -> None:
    known = lifecycle_of("policy", "v1beta1", "poddisruptionbudgets")
    assert known is not None
    assert known.gvk == GroupVersionKind("policy", "v1beta1", "PodDisruptionBudget")
    assert known.lifecycle.deprecated == Version(1, 21)
    assert known.lifecycle.removed == Version(1, 25)
    assert known.lifecycle.replacement == GroupVersionKind("policy", "v1", "PodDisruptionBudget")


def test_lifecycle_of_core_endpoints_and_unknown_apis() -> None:
    known = lifecycle_of("", "v1", "endpoints")
    assert known is not None
    assert (known.lifecycle.removed, str(known.lifecycle.replacement)) == (
        None,
        "discovery.k8s.io/v1 EndpointSlice",
    )
    assert lifecycle_of("example.com", "v1beta1", "widgets") is None
    assert lifecycle_of("policy", "v1beta1", "poddisruptionbudget") is None  # singular


# --- metrics --------------------------------------------------------------------------------


def test_metrics_give_deprecated_apis_with_summed_request_counts() -> None:
    usages = deprecations.usages_from_metrics(METRICS)
    assert sorted(usages) == [
        ("", "v1", "endpoints", ""),
        PDB,
        ("policy", "v1beta1", "poddisruptionbudgets", "status"),
    ]
    assert usages[PDB].requests == 4  # GET 3 + POST 1; v1's 7 are not deprecated
    assert usages[PDB].removed_release == "1.25"
    assert usages[("policy", "v1beta1", "poddisruptionbudgets", "status")].requests == 2
    assert usages[("", "v1", "endpoints", "")].requests == 5
    assert usages[PDB].audited_requests is None


def test_metrics_without_deprecated_use_give_nothing() -> None:
    text = "\n".join(line for line in METRICS.splitlines() if "deprecated_apis{" not in line)
    assert deprecations.usages_from_metrics(text + "\n") == {}


# --- audit logs -----------------------------------------------------------------------------


def test_audit_events_count_each_request_once_across_stages() -> None:
    usages = aggregate(
        event("a1", stage="RequestReceived"),
        event("a1", when="2025-03-01T10:00:00.250000Z"),
        event("w1", stage="ResponseStarted", when="2025-03-01T11:00:00.000000Z", user="bob"),
        event("w1", when="2025-03-01T11:05:00.000000Z", user="bob", agent=OPERATOR),
    )
    usage = usages[PDB]
    assert usage.audited_requests == 2
    assert usage.users == {"alice", "bob"}
    assert usage.user_agents == {KUBECTL}  # w1's agent counted at its first stage
    assert usage.last_seen == datetime(2025, 3, 1, 11, 5, tzinfo=UTC)
    assert usage.removed_release == "1.25"


def test_audit_events_of_other_apis_are_ignored_and_core_has_no_group() -> None:
    usages = aggregate(
        event("n1", deprecated=False, version="v1"),
        event("e1", group=None, version="v1", resource="endpoints", removed=None),
        event("s1", subresource="status"),
    )
    assert sorted(usages) == [
        ("", "v1", "endpoints", ""),
        ("policy", "v1beta1", "poddisruptionbudgets", "status"),
    ]
    assert usages[("", "v1", "endpoints", "")].removed_release == ""


def test_audit_events_join_metrics_and_count_zero_where_not_audited() -> None:
    usages = deprecations.usages_from_metrics(METRICS)
    deprecations.add_audit_events(usages, [event("a1"), event("a2", user="bob")])
    assert (usages[PDB].requests, usages[PDB].audited_requests) == (4, 2)
    assert usages[("", "v1", "endpoints", "")].audited_requests == 0


def test_audit_log_reader_reads_rotated_gzip_backups_and_skips_broken_lines(
    tmp_path: Path,
) -> None:
    current = write_log(tmp_path / "audit.log", [event("a2")], tail='{"kind": "Ev')
    backup = tmp_path / "audit-2025-03-01T00-00-00.000.log.gz"
    with gzip.open(backup, "wt") as out:
        out.write(json.dumps(event("a1")) + "\n[1, 2]\n\n")
    reader = deprecations.AuditLogReader()
    ids = [e["auditID"] for e in reader.events([backup, current])]
    assert (ids, reader.skipped) == (["a1", "a2"], 2)


# --- output ---------------------------------------------------------------------------------


def report(usages: dict[deprecations.Key, Any], output: str | None, *, audited: bool) -> str:
    out = io.StringIO()
    deprecations.write_report(out, usages.values(), output, audited=audited)
    return out.getvalue()


def test_table_from_metrics_soonest_removal_first() -> None:
    assert report(deprecations.usages_from_metrics(METRICS), None, audited=False) == (
        "API              RESOURCE                      REMOVED IN   REPLACEMENT"
        "                         REQUESTS\n"
        "policy/v1beta1   poddisruptionbudgets          1.25         policy/v1 PodDisruptionBudget"
        "       4\n"
        "policy/v1beta1   poddisruptionbudgets/status   1.25         policy/v1 PodDisruptionBudget"
        "       2\n"
        "v1               endpoints                     <none>       "
        "discovery.k8s.io/v1 EndpointSlice   5\n"
    )


def test_table_with_audit_shows_who_and_when_and_unknown_apis() -> None:
    usages = aggregate(
        event("a1", user="bob", agent=OPERATOR, when="2025-03-02T08:30:00.123456Z"),
        event("a2", when="2025-03-01T10:00:00.000000Z"),
        event("c1", group="example.com", resource="widgets", removed=None),
    )
    assert report(usages, None, audited=True).splitlines() == [
        "API                   RESOURCE               REMOVED IN   REPLACEMENT"
        "                     REQUESTS   LAST SEEN              USERS       USER AGENTS",
        "policy/v1beta1        poddisruptionbudgets   1.25         policy/v1 PodDisruptionBudget"
        "   2          2025-03-02T08:30:00Z   alice,bob   kubectl/v1.32.3,pdb-operator/0.4.1",
        "example.com/v1beta1   widgets                <none>       <unknown>"
        "                       1          2025-03-01T10:00:00Z   alice       kubectl/v1.32.3",
    ]


def test_json_and_yaml_carry_lifecycle_and_whole_user_agents() -> None:
    usages = deprecations.usages_from_metrics(METRICS)
    deprecations.add_audit_events(usages, [event("a1")])
    document = json.loads(report(usages, "json", audited=True))
    assert yaml.safe_load(report(usages, "yaml", audited=True)) == document
    assert document["items"][0] == {
        "group": "policy",
        "version": "v1beta1",
        "resource": "poddisruptionbudgets",
        "subresource": "",
        "kind": "PodDisruptionBudget",
        "deprecatedIn": "1.21",
        "removedIn": "1.25",
        "replacement": "policy/v1 PodDisruptionBudget",
        "requests": 4,
        "auditedRequests": 1,
        "users": ["alice"],
        "userAgents": [KUBECTL],
        "lastSeen": "2025-03-01T10:00:00Z",
    }
    assert [item["removedIn"] for item in document["items"]] == ["1.25", "1.25", None]


# --- the command on an audit log alone (no server, no kubeconfig) ----------------------------


def test_command_on_audit_logs_needs_no_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    first = write_log(tmp_path / "audit-1.log", [event("a1")])
    second = write_log(
        tmp_path / "audit.log",
        [event("e1", group=None, version="v1", resource="endpoints", removed=None)],
    )
    code = main(["deprecations", "--audit-log", str(first), str(second), "--removed-in", "v1.25"])
    captured = capsys.readouterr()
    assert (code, captured.err) == (0, "")
    assert captured.out.splitlines()[1].split() == [
        "policy/v1beta1",
        "poddisruptionbudgets",
        "1.25",
        "policy/v1",
        "PodDisruptionBudget",
        "1",
        "2025-03-01T10:00:00Z",
        "alice",
        "kubectl/v1.32.3",
    ]
    assert len(captured.out.splitlines()) == 2


def test_command_reports_a_missing_audit_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["deprecations", "--audit-log", str(tmp_path / "nope.log")])
    assert code == 1
    assert capsys.readouterr().err == (
        f"error: [Errno 2] No such file or directory: '{tmp_path / 'nope.log'}'\n"
    )


def test_command_says_when_nothing_was_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write_log(tmp_path / "audit.log", [event("n1", deprecated=False)])
    assert main(["deprecations", "--audit-log", str(log)]) == 0
    assert capsys.readouterr() == ("", "No deprecated API requests found\n")
