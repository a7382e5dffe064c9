"""The audit policy: upstream's ``audit.k8s.io/v1`` ``Policy``, loaded and evaluated.

A platform team reuses the policy file it gives kube-apiserver, so the file
format, the validation messages and the matching rules follow upstream
(``pkg/audit/policy`` and ``pkg/apis/audit/validation`` in k8s.io/apiserver):
the first rule that matches a request decides its level and omitted stages;
no match means level ``None``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kapi.apimachinery import field_errors as fielderr
from kapi.apimachinery.gotext import go_json_kind
from kapi.apimachinery.validation import is_dns1123_subdomain
from kapi.request import RequestInfo

log = logging.getLogger(__name__)

API_VERSION = "audit.k8s.io/v1"

LEVEL_NONE = "None"
LEVEL_METADATA = "Metadata"
LEVEL_REQUEST = "Request"
LEVEL_REQUEST_RESPONSE = "RequestResponse"
#: Levels in increasing detail; a level includes everything logged below it.
LEVELS = (LEVEL_NONE, LEVEL_METADATA, LEVEL_REQUEST, LEVEL_REQUEST_RESPONSE)
_RANK = {level: rank for rank, level in enumerate(LEVELS)}

STAGE_REQUEST_RECEIVED = "RequestReceived"
STAGE_RESPONSE_STARTED = "ResponseStarted"
STAGE_RESPONSE_COMPLETE = "ResponseComplete"
STAGE_PANIC = "Panic"
STAGES = (STAGE_REQUEST_RECEIVED, STAGE_RESPONSE_STARTED, STAGE_RESPONSE_COMPLETE, STAGE_PANIC)


def level_at_least(level: str, minimum: str) -> bool:
    """Whether ``level`` logs what ``minimum`` logs (upstream ``!level.Less(minimum)``)."""
    return _RANK[level] >= _RANK[minimum]


class PolicyError(ValueError):
    """A policy file kube-apiserver would refuse to start with; the text is upstream's."""


@dataclass(frozen=True)
class GroupResources:
    group: str = ""
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class RequestAuditConfig:
    """What the policy decided for one request (upstream ``RequestAuditConfig``)."""

    level: str
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False


@dataclass(frozen=True)
class PolicyRule:
    level: str
    users: tuple[str, ...] = ()
    user_groups: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resources: tuple[GroupResources, ...] = ()
    namespaces: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: tuple[str, ...] = ()
    #: ``None`` inherits the policy's ``omitManagedFields``.
    omit_managed_fields: bool | None = None

    def matches(self, info: RequestInfo, user: str, groups: tuple[str, ...] | list[str]) -> bool:
        """Every non-empty field must match: an intersection, as upstream's ``ruleMatches``."""
        if self.users and user not in self.users:
            return False
        if self.user_groups and not any(g in self.user_groups for g in groups):
            return False
        if self.verbs and info.verb not in self.verbs:
            return False
        if self.namespaces or self.resources:
            return self._matches_resource(info)
        if self.non_resource_urls:
            return not info.is_resource_request and any(
                _path_matches(info.path, spec) for spec in self.non_resource_urls
            )
        return True

    def _matches_resource(self, info: RequestInfo) -> bool:
        if not info.is_resource_request:
            return False
        # Cluster-scoped resources have the empty namespace, which a rule can name as "".
        if self.namespaces and info.namespace not in self.namespaces:
            return False
        if not self.resources:
            return True
        resource, subresource = info.resource, info.subresource
        combined = f"{resource}/{subresource}" if subresource else resource
        for gr in self.resources:
            if gr.group != info.api_group:
                continue
            if not gr.resources:
                return True
            if gr.resource_names and info.name not in gr.resource_names:
                continue
            for spec in gr.resources:
                if spec in ("*", combined):
                    return True
                if subresource and spec.startswith("*/") and spec[2:] == subresource:
                    return True
                # "pods/*" covers pods itself and every subresource of pods.
                if spec.endswith("/*") and spec[:-2] == resource:
                    return True
        return False


def _path_matches(path: str, spec: str) -> bool:
    """``*`` matches all, a trailing ``*`` matches by prefix, anything else exactly."""
    if spec in ("*", path):
        return True
    return spec.endswith("*") and path.startswith(spec.rstrip("*"))


@dataclass(frozen=True)
class Policy:
    rules: tuple[PolicyRule, ...]
    omit_stages: tuple[str, ...] = ()
    omit_managed_fields: bool = False
    #: Per rule: its stages united with the policy's, computed once at load.
    _configs: tuple[RequestAuditConfig, ...] = field(default=(), compare=False, repr=False)
    #: What a request no rule matches gets.
    _default: RequestAuditConfig = field(
        default=RequestAuditConfig(LEVEL_NONE), compare=False, repr=False
    )

    def __post_init__(self) -> None:
        configs = tuple(
            RequestAuditConfig(
                rule.level,
                frozenset(self.omit_stages) | frozenset(rule.omit_stages),
                self.omit_managed_fields
                if rule.omit_managed_fields is None
                else rule.omit_managed_fields,
            )
            for rule in self.rules
        )
        object.__setattr__(self, "_configs", configs)
        object.__setattr__(
            self,
            "_default",
            RequestAuditConfig(LEVEL_NONE, frozenset(self.omit_stages), self.omit_managed_fields),
        )

    def evaluate(
        self, info: RequestInfo, user: str, groups: tuple[str, ...] | list[str]
    ) -> RequestAuditConfig:
        """The first matching rule's level and stages; ``None`` when no rule matches."""
        for rule, config in zip(self.rules, self._configs, strict=True):
            if rule.matches(info, user, groups):
                return config
        return self._default


# -- loading ------------------------------------------------------------------------------


def load_policy_file(path: str | Path) -> Policy:
    """Read and validate a policy file; :class:`PolicyError` carries upstream's message.

    The message reads as kube-apiserver's start-up error does
    (``loading audit policy file: <why>: from file <path>``), so the operator
    sees the same text whichever server rejects the file.
    """
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        raise PolicyError(
            f'loading audit policy file: failed to read file path "{path}": {exc}'
        ) from exc
    try:
        return load_policy(text)
    except PolicyError as exc:
        raise PolicyError(f"loading audit policy file: {exc}: from file {path}") from exc


def load_policy(text: bytes | str) -> Policy:
    """Decode (YAML or JSON) and validate a policy document."""
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise PolicyError(f"failed decoding: {exc}") from exc
    if not isinstance(doc, dict):
        raise PolicyError("failed decoding: Object 'Kind' is missing in policy")
    kind, api_version = doc.get("kind"), doc.get("apiVersion")
    if not kind:
        raise PolicyError("failed decoding: Object 'Kind' is missing in policy")
    if api_version != API_VERSION or kind != "Policy":
        raise PolicyError(
            f'failed decoding: no kind "{kind}" is registered for version "{api_version}"'
        )
    unknown: list[str] = []
    policy = _decode_policy(doc, unknown)
    if unknown:
        # Upstream decodes strictly first and, on unknown fields, warns and decodes leniently.
        log.warning(
            "Audit policy contains errors, falling back to lenient decoding: "
            "strict decoding error: %s",
            ", ".join(f'unknown field "{name}"' for name in unknown),
        )
    errors = _validate(doc)
    if errors:
        raise PolicyError(fielderr.aggregate_message(errors))
    if not policy.rules:
        raise PolicyError("loaded illegal policy with 0 rules")
    return policy


_POLICY_FIELDS = frozenset(
    {"apiVersion", "kind", "metadata", "rules", "omitStages", "omitManagedFields"}
)
_RULE_FIELDS = frozenset(
    {
        "level",
        "users",
        "userGroups",
        "verbs",
        "resources",
        "namespaces",
        "nonResourceURLs",
        "omitStages",
        "omitManagedFields",
    }
)
_GROUP_RESOURCES_FIELDS = frozenset({"group", "resources", "resourceNames"})


def _decode_policy(doc: dict[str, Any], unknown: list[str]) -> Policy:
    unknown.extend(k for k in doc if k not in _POLICY_FIELDS)
    rules_doc = _typed(doc.get("rules"), list, "Policy.rules", "[]audit.PolicyRule")
    rules = []
    for i, rule in enumerate(rules_doc):
        rule = _typed(rule, dict, "Policy.rules", "audit.PolicyRule")
        unknown.extend(f"rules[{i}].{k}" for k in rule if k not in _RULE_FIELDS)
        resources = []
        resources_doc = _typed(
            rule.get("resources"), list, "PolicyRule.resources", "[]audit.GroupResources"
        )
        for j, gr in enumerate(resources_doc):
            gr = _typed(gr, dict, "PolicyRule.resources", "audit.GroupResources")
            unknown.extend(
                f"rules[{i}].resources[{j}].{k}" for k in gr if k not in _GROUP_RESOURCES_FIELDS
            )
            resources.append(
                GroupResources(
                    str(gr.get("group") or ""),
                    _strings(gr, "resources"),
                    _strings(gr, "resourceNames"),
                )
            )
        omit_managed = rule.get("omitManagedFields")
        rules.append(
            PolicyRule(
                level=str(rule.get("level") or ""),
                users=_strings(rule, "users"),
                user_groups=_strings(rule, "userGroups"),
                verbs=_strings(rule, "verbs"),
                resources=tuple(resources),
                namespaces=_strings(rule, "namespaces"),
                non_resource_urls=_strings(rule, "nonResourceURLs"),
                omit_stages=_strings(rule, "omitStages"),
                omit_managed_fields=None if omit_managed is None else bool(omit_managed),
            )
        )
    return Policy(
        tuple(rules),
        _strings(doc, "omitStages"),
        bool(doc.get("omitManagedFields") or False),
    )


def _typed(value: Any, kind: type, where: str, go_type: str) -> Any:
    """``value`` if of ``kind`` (absent is empty); else upstream's JSON decoding error."""
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise PolicyError(
            f"failed decoding: json: cannot unmarshal {go_json_kind(value)} into Go struct field "
            f"{where} of type {go_type}"
        )
    return value


def _strings(doc: dict[str, Any], key: str) -> tuple[str, ...]:
    values = _typed(doc.get(key), list, key, "[]string")
    return tuple("" if v is None else str(v) for v in values)


def _validate(doc: dict[str, Any]) -> list[fielderr.FieldError]:
    """Upstream's ``ValidatePolicy``: levels, stages, URLs and groups, every error at once."""
    errors = _validate_stages(_strings(doc, "omitStages"), fielderr.Path("omitStages"))
    for i, rule in enumerate(doc.get("rules") or []):
        path = fielderr.Path("rules").index(i)
        level = str(rule.get("level") or "")
        if not level:
            errors.append(fielderr.required(path.child("level")))
        elif level not in LEVELS:
            errors.append(fielderr.not_supported(path.child("level"), level, LEVELS))
        urls = _strings(rule, "nonResourceURLs")
        for j, url in enumerate(urls):
            if url == "*":
                continue
            url_path = path.child("nonResourceURLs").index(j)
            if not url.startswith("/"):
                errors.append(
                    fielderr.invalid(
                        url_path, url, "non-resource URL rules must begin with a '/' character"
                    )
                )
            if url and "*" in url[:-1]:
                errors.append(
                    fielderr.invalid(
                        url_path,
                        url,
                        "non-resource URL wildcards '*' must be the final character of the rule",
                    )
                )
        for gr in rule.get("resources") or []:
            group = str(gr.get("group") or "")
            if group:
                msgs = is_dns1123_subdomain(group)
                if msgs:
                    errors.append(
                        fielderr.invalid(path.child("resources", "group"), group, ",".join(msgs))
                    )
            names = _strings(gr, "resourceNames")
            if names and not _strings(gr, "resources"):
                errors.append(
                    fielderr.invalid(
                        path.child("resources", "resourceNames"),
                        list(names),
                        "using resourceNames requires at least one resource",
                    )
                )
        errors.extend(_validate_stages(_strings(rule, "omitStages"), path.child("omitStages")))
        if urls and (rule.get("resources") or rule.get("namespaces")):
            errors.append(
                fielderr.invalid(
                    path.child("nonResourceURLs"),
                    list(urls),
                    "rules cannot apply to both regular resources and non-resource URLs",
                )
            )
    return errors


def _validate_stages(stages: tuple[str, ...], path: fielderr.Path) -> list[fielderr.FieldError]:
    return [
        fielderr.invalid(path.index(i), stage, "allowed stages are " + ",".join(STAGES))
        for i, stage in enumerate(stages)
        if stage not in STAGES
    ]
