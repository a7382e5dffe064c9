"""Which webhooks a request calls: rules, scope and ``matchPolicy`` (upstream ``rules.Matcher``).

Pure functions over plain values, so the matching semantics can be tested
without a server.  Selectors are in :mod:`kapi.admission.webhook.selectors`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

ALL = "*"


@dataclass(frozen=True)
class RequestTarget:
    """What a request is about, as upstream's attributes expose it to the matcher.

    ``namespace`` is upstream's: empty for cluster-scoped objects, and the
    namespace's own name for requests to a namespace.
    """

    operation: str
    group: str
    version: str
    resource: str
    subresource: str
    namespace: str

    def with_version(self, version: str) -> RequestTarget:
        return RequestTarget(
            self.operation, self.group, version, self.resource, self.subresource, self.namespace
        )

    @property
    def is_namespace(self) -> bool:
        return self.group == "" and self.version == "v1" and self.resource == "namespaces"


def _exact_or_wildcard(items: Iterable[str], requested: str) -> bool:
    return any(item in (ALL, requested) for item in items)


def _scope_matches(scope: str | None, target: RequestTarget) -> bool:
    """A request to a namespace counts as cluster-scoped even though it names one."""
    if scope is None or scope == ALL:
        return True
    cluster = target.is_namespace or not target.namespace
    if scope == "Namespaced":
        return not cluster
    if scope == "Cluster":
        return cluster
    return False


def _resource_matches(patterns: Iterable[str], resource: str, subresource: str) -> bool:
    for pattern in patterns:
        res, _, sub = pattern.partition("/")
        if res in (ALL, resource) and sub in (ALL, subresource):
            return True
    return False


def rule_matches(rule: Mapping[str, Any], target: RequestTarget) -> bool:
    """One ``RuleWithOperations`` against a request."""
    return (
        _scope_matches(rule.get("scope"), target)
        and _exact_or_wildcard(rule.get("operations") or (), target.operation)
        and _exact_or_wildcard(rule.get("apiGroups") or (), target.group)
        and _exact_or_wildcard(rule.get("apiVersions") or (), target.version)
        and _resource_matches(rule.get("resources") or (), target.resource, target.subresource)
    )


def matched_version(
    rules: Sequence[Mapping[str, Any]],
    match_policy: str,
    target: RequestTarget,
    equivalent_versions: Sequence[str],
) -> str | None:
    """The version the webhook is called with, or ``None`` when no rule matches.

    A rule for the requested version wins.  With ``Equivalent``, the rules are
    then tried in order against the other versions of the same resource, and
    the first match names the version the object is converted to, as upstream
    honours earlier rules first.
    """
    if any(rule_matches(rule, target) for rule in rules):
        return target.version
    if match_policy != "Equivalent":
        return None
    for rule in rules:
        for version in equivalent_versions:
            if version != target.version and rule_matches(rule, target.with_version(version)):
                return version
    return None
