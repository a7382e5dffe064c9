"""Prometheus metrics under upstream's names and labels.

Each server has its own registry (tests run several in one process), and the
label values follow upstream's ``endpoints/metrics``: verbs upper-case with
LIST/WATCH/APPLY told apart, ``scope`` one of resource/namespace/cluster.
Help texts carry component-base's stability marker (``[STABLE] ...``) where
kapi declares the level, as ``/metrics`` of kube-apiserver shows it.
"""

from __future__ import annotations

import threading
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.utils import floatToGoString

from kapi.request import RequestInfo
from kapi.request import current as current_request

# component-base exposes no ``*_created`` series; prometheus_client would add one per counter.
disable_created_metrics()

_REQUEST_LABELS = (
    "verb",
    "dry_run",
    "group",
    "version",
    "resource",
    "subresource",
    "scope",
    "component",
)
#: Upstream's request duration buckets (seconds).
_DURATION_BUCKETS = (
    0.005,
    0.025,
    0.05,
    0.1,
    0.2,
    0.4,
    0.6,
    0.8,
    1.0,
    1.25,
    1.5,
    2,
    3,
    4,
    5,
    6,
    8,
    10,
    15,
    20,
    30,
    45,
    60,
)


def _exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """component-base's ``ExponentialBuckets``, multiplied step by step as it does."""
    buckets = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return tuple(buckets)


#: Upstream's ratcheting buckets: from 10 µs, growing fourfold, ten of them (~2.6 s).
_RATCHETING_BUCKETS = _exponential_buckets(0.00001, 4, 10)
_VERBS = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETE",
}


class PlainCounter:
    """A counter exposed under its own name, with no ``_total`` appended.

    client_golang writes a counter under the name it was given; prometheus_client
    always appends ``_total``.  The out-of-tree storage version migrator's counters
    (``storage_migrator_core_migrator_*``) carry no suffix, so they are written here.
    """

    def __init__(self, name: str, documentation: str, labelnames: tuple[str, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = labelnames
        self._values: dict[tuple[str, ...], float] = {}
        self._lock = threading.Lock()

    def inc(self, *labelvalues: str, amount: float = 1.0) -> None:
        if len(labelvalues) != len(self.labelnames):
            raise ValueError(f"{self.name} takes labels {self.labelnames}, got {labelvalues}")
        if amount < 0:
            raise ValueError("a counter only goes up")
        with self._lock:
            self._values[labelvalues] = self._values.get(labelvalues, 0.0) + amount

    def value(self, *labelvalues: str) -> float:
        with self._lock:
            return self._values.get(labelvalues, 0.0)

    def exposition(self) -> str:
        """The family in the text format 0.0.4, label pairs sorted by name as Go sorts them."""
        help_text = self.documentation.replace("\\", r"\\").replace("\n", r"\n")
        lines = [f"# HELP {self.name} {help_text}", f"# TYPE {self.name} counter"]
        with self._lock:
            values = sorted(self._values.items())
        for labelvalues, value in values:
            pairs = sorted(zip(self.labelnames, labelvalues, strict=True))
            text = ",".join(f'{k}="{_escape_label_value(v)}"' for k, v in pairs)
            lines.append(f"{self.name}{{{text}}} {floatToGoString(value)}")
        return "".join(line + "\n" for line in lines)


def _escape_label_value(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


class APIServerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._children: dict[tuple[tuple[str, ...], int], tuple[Any, Any]] = {}
        self._deprecated_recorded: set[tuple[str, str, str, str]] = set()
        self.requests = Counter(
            "apiserver_request_total",
            "Counter of apiserver requests broken out for each verb, dry run value, group, "
            "version, resource, scope, component, and HTTP response code.",
            (*_REQUEST_LABELS, "code"),
            registry=self.registry,
        )
        self.duration = Histogram(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, dry run value, group, "
            "version, resource, subresource, scope and component.",
            _REQUEST_LABELS,
            buckets=_DURATION_BUCKETS,
            registry=self.registry,
        )
        self.healthcheck = Gauge(
            "kubernetes_healthcheck",
            "This metric records the result of a single healthcheck.",
            ("name", "type"),
            registry=self.registry,
        )
        self.deprecated_apis = Gauge(
            "apiserver_requested_deprecated_apis",
            "[STABLE] Gauge of deprecated APIs that have been requested, broken out by API "
            "group, version, resource, subresource, and removed_release.",
            ("group", "version", "resource", "subresource", "removed_release"),
            registry=self.registry,
        )
        self.healthchecks = Counter(
            "kubernetes_healthchecks_total",
            "This metric records the results of all healthcheck.",
            ("name", "status", "type"),
            registry=self.registry,
        )
        self.declarative_validation_mismatch = Counter(
            "apiserver_validation_declarative_validation_mismatch_total",
            "[BETA] Number of times declarative validation results differed from handwritten "
            "validation results for core types.",
            registry=self.registry,
        )

        self.ratcheting_seconds = Histogram(
            "apiextensions_apiserver_validation_ratcheting_seconds",
            "[ALPHA] Time for comparison of old to new for the purposes of "
            "CRDValidationRatcheting during an UPDATE in seconds.",
            buckets=_RATCHETING_BUCKETS,
            registry=self.registry,
        )
        self.ratcheted_errors = Counter(
            "kapi_validation_ratcheted_errors_total",
            "[ALPHA] Validation errors on unchanged values that CRD validation ratcheting "
            "let an update through with, by resource and by where the error came from "
            "(openapi: the schema, cel: x-kubernetes-validations, returned as warnings; "
            "declarative: a built-in kind's declared rule).",
            ("group", "resource", "source"),
            registry=self.registry,
        )
        self.deprecated_fields = Counter(
            "kapi_requested_deprecated_fields_total",
            "[ALPHA] Writes that set a field whose KEP-2558 lifecycle tag says deprecated, by "
            "the API group, version and resource written and the field's path.",
            ("group", "version", "resource", "field"),
            registry=self.registry,
        )

        # The storage version migrator's series, under the names of upstream's
        # out-of-tree migrator (kubernetes-sigs/kube-storage-version-migrator,
        # pkg/migrator/metrics): "resource" is the full resource name, "Status"
        # (capitalised, as upstream) is Succeeded or Failed.
        self.migrated_objects = PlainCounter(
            "storage_migrator_core_migrator_migrated_objects",
            "Objects the storage version migrator has rewritten, by resource.",
            ("resource",),
        )
        self.remaining_objects = Gauge(
            "storage_migrator_core_migrator_remaining_objects",
            "Objects the storage version migrator has still to rewrite in its current "
            "run, by resource.",
            ("resource",),
            registry=self.registry,
        )
        self.migrations = PlainCounter(
            "storage_migrator_core_migrator_migrations",
            "Storage version migrations that have finished, by resource and by outcome "
            "(Succeeded or Failed).",
            ("resource", "Status"),
        )
        self._plain_counters = (self.migrated_objects, self.migrations)

    def observe_objects_migrated(self, resource: str, count: int) -> None:
        """``count`` more objects of ``resource`` rewritten in their storage version."""
        self.migrated_objects.inc(resource, amount=count)

    def observe_objects_remaining(self, resource: str, count: int) -> None:
        self.remaining_objects.labels(resource).set(count)

    def observe_migration(self, resource: str, succeeded: bool) -> None:
        """One finished migration of ``resource``."""
        self.migrations.inc(resource, "Succeeded" if succeeded else "Failed")

    def observe_ratcheting(self, seconds: float) -> None:
        self.ratcheting_seconds.observe(seconds)

    def count_ratcheted(self, group: str, resource: str, source: str, count: int) -> None:
        self.ratcheted_errors.labels(group, resource, source).inc(count)

    def count_deprecated_field(self, field: str) -> None:
        """A write in the current request set the deprecated field ``field``."""
        info = current_request().info
        self.deprecated_fields.labels(info.api_group, info.api_version, info.resource, field).inc()

    def observe(
        self,
        info: RequestInfo,
        method: str,
        dry_run: bool,
        code: int,
        seconds: float,
        patch_type: str = "",
    ) -> None:
        if info.is_resource_request:
            verb = _VERBS.get(info.verb, info.verb.upper())
            if verb == "PATCH" and patch_type == "application/apply-patch+yaml":
                verb = "APPLY"
            if (info.namespace and info.resource != "namespaces") or (
                info.name and (info.resource != "namespaces")
            ):
                scope = "resource" if info.name else "namespace"
            else:
                scope = "resource" if info.name else "cluster"
            labels = (
                verb,
                "All" if dry_run else "",
                info.api_group,
                info.api_version,
                info.resource,
                info.subresource,
                scope,
                "apiserver",
            )
        else:
            labels = (method, "", "", "", "", "", "", "apiserver")
        children = self._children.get((labels, code))
        if children is None:
            # prometheus_client's labels() costs more than the rest of a GET's metrics
            # work; label sets are few (bounded by routes x codes), so keep the children.
            children = (self.requests.labels(*labels, str(code)), self.duration.labels(*labels))
            self._children[(labels, code)] = children
        children[0].inc()
        children[1].observe(seconds)

    def record_deprecated(self, info: RequestInfo, removed_release: str) -> None:
        """Mark ``info``'s group/version/resource/subresource as used (upstream sets it to 1).

        Only API coordinates are labels, never names or users: cardinality stays bounded
        by the deprecated routes (KEP-1693); audit annotations identify the callers.
        """
        labels = (info.api_group, info.api_version, info.resource, info.subresource)
        if labels in self._deprecated_recorded:
            return  # already 1, and never reset: skip prometheus_client's labels() look-up
        self._deprecated_recorded.add(labels)
        self.deprecated_apis.labels(*labels, removed_release).set(1)

    def render(self) -> bytes:
        plain = "".join(counter.exposition() for counter in self._plain_counters)
        return generate_latest(self.registry) + plain.encode()
