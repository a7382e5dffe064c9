"""flowcontrol.apiserver.k8s.io: FlowSchema and PriorityLevelConfiguration (API Priority
and Fairness), in ``v1`` (hub and storage) and the deprecated ``v1beta1``, ``v1beta2`` and
``v1beta3``.

FlowSchemas have the same fields in every version, so their conversion only renames
the version.  PriorityLevelConfigurations differ in one field and one annotation:

* ``v1beta1`` and ``v1beta2`` call the limited level's share ``assuredConcurrencyShares``
  (``nominalConcurrencyShares`` from ``v1beta3`` on) and default a zero to 30;
* ``v1beta3`` also defaults a zero to 30, unless the object carries the
  ``flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares`` annotation: reading a
  level whose share is zero through ``v1beta3`` adds that annotation, and writing
  through ``v1beta3`` drops it, so a zero survives a round trip;
* ``v1`` makes the share optional, defaulting only an absent one to 30.

Defaults follow ``pkg/apis/flowcontrol/<version>/defaults.go``; conversions the
versions' ``conversion.go``; validation ``pkg/apis/flowcontrol/validation`` as of
v1.33, with its messages; the strategies ``pkg/registry/flowcontrol``: a status
subresource, a generation bumped by spec changes, and the mandatory objects
(:mod:`kapi.apis.flowcontrol_bootstrap`) whose spec may not differ from its fixed
value.  kapi serves and validates these objects; it does not queue or limit requests
with them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    GoSyntax,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from kapi.apimachinery.gotext import go_quote, go_sharp_v_strings
from kapi.apimachinery.unstructured import Object
from kapi.apis import flowcontrol_bootstrap as bootstrap
from kapi.apis.generated import (
    flowcontrol_v1,
    flowcontrol_v1beta1,
    flowcontrol_v1beta2,
    flowcontrol_v1beta3,
)
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.request import current as current_request
from kapi.runtime.schema import Struct
from kapi.runtime.scheme import (
    GroupVersionKind,
    Lifecycle,
    Resource,
    ResourceVersion,
    renamed_version,
)
from kapi.version import Version

GROUP = bootstrap.GROUP
HUB = "v1"
#: The v1beta3 annotation that keeps a zero ``nominalConcurrencyShares`` from defaulting.
PRESERVE_ZERO_SHARES = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares"

DEFAULT_MATCHING_PRECEDENCE = 1000
DEFAULT_CONCURRENCY_SHARES = 30
DEFAULT_QUEUES = 64
DEFAULT_HAND_SIZE = 8
DEFAULT_QUEUE_LENGTH_LIMIT = 50
MAX_MATCHING_PRECEDENCE = 10000
MAX_QUEUES = 10 * 1000 * 1000
#: Shuffle sharding hashes into 60 bits (``shufflesharding.MaxHashBits``).
MAX_HASH_BITS = 60

DISTINGUISHER_METHODS = ("ByNamespace", "ByUser")
VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch")
SUBJECT_KINDS = ("Group", "ServiceAccount", "User")
PRIORITY_LEVEL_TYPES = ("Exempt", "Limited")
LIMIT_RESPONSE_TYPES = ("Queue", "Reject")
_NS_INTRO = "each member of this list must be '*' or a DNS-1123 label; "

# --- defaulting -----------------------------------------------------------------------------


def _dict(value: Any) -> Object | None:
    return value if isinstance(value, dict) else None


def default_flow_schema(obj: Object) -> None:
    """``SetDefaults_FlowSchemaSpec``, the same in every version: precedence 1000."""
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    if isinstance(spec, dict) and not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = DEFAULT_MATCHING_PRECEDENCE


def _default_common(spec: Object, shares_field: str, default_shares: Callable[[Any], bool]) -> None:
    """The defaults every version shares; ``default_shares`` says when the share gets 30."""
    exempt = _dict(spec.get("exempt"))
    if exempt is not None:
        if exempt.get("nominalConcurrencyShares") is None:
            exempt["nominalConcurrencyShares"] = 0
        if exempt.get("lendablePercent") is None:
            exempt["lendablePercent"] = 0
    limited = _dict(spec.get("limited"))
    if limited is None:
        return
    if default_shares(limited.get(shares_field)):
        limited[shares_field] = DEFAULT_CONCURRENCY_SHARES
    if limited.get("lendablePercent") is None:
        limited["lendablePercent"] = 0
    queuing = (_dict(limited.get("limitResponse")) or {}).get("queuing")
    if isinstance(queuing, dict):
        if not queuing.get("handSize"):
            queuing["handSize"] = DEFAULT_HAND_SIZE
        if not queuing.get("queues"):
            queuing["queues"] = DEFAULT_QUEUES
        if not queuing.get("queueLengthLimit"):
            queuing["queueLengthLimit"] = DEFAULT_QUEUE_LENGTH_LIMIT


def _spec(obj: Object) -> Object | None:
    spec = obj.get("spec")
    if spec is None:
        spec = obj["spec"] = {}
    return _dict(spec)


def default_priority_level_v1(obj: Object) -> None:
    """v1: an absent share is 30; an explicit zero stays."""
    spec = _spec(obj)
    if spec is not None:
        _default_common(spec, "nominalConcurrencyShares", lambda v: v is None)


def default_priority_level_v1beta3(obj: Object) -> None:
    """v1beta3: a zero share is 30 unless the preserve-zero annotation is set."""
    spec = _spec(obj)
    if spec is None:
        return
    annotations = _dict((_dict(obj.get("metadata")) or {}).get("annotations")) or {}
    preserve = PRESERVE_ZERO_SHARES in annotations
    _default_common(spec, "nominalConcurrencyShares", lambda v: not v and not preserve)


def default_priority_level_beta(obj: Object) -> None:
    """v1beta1 and v1beta2: a zero ``assuredConcurrencyShares`` is 30."""
    spec = _spec(obj)
    if spec is not None:
        _default_common(spec, "assuredConcurrencyShares", lambda v: not v)


# --- conversion -----------------------------------------------------------------------------


def _with_limited(obj: Object, change: Callable[[Object], None]) -> Object:
    """A copy of ``obj`` sharing what ``change`` leaves alone: new object, spec and limited."""
    out = dict(obj)
    spec = _dict(obj.get("spec"))
    if spec is None or _dict(spec.get("limited")) is None:
        return out
    limited = dict(spec["limited"])
    change(limited)
    out["spec"] = {**spec, "limited": limited}
    return out


def _rename(old: str, new: str) -> Callable[[Object], None]:
    """The share under its other name, where it was (first when absent, as Go orders it)."""

    def change(limited: Object) -> None:
        value = limited.get(old) or 0
        renamed = {(new if k == old else k): (value if k == old else v) for k, v in limited.items()}
        if old not in limited:
            renamed = {new: value, **renamed}
        limited.clear()
        limited.update(renamed)

    return change


def beta_to_hub(obj: Object) -> Object:
    """v1beta1/v1beta2 to v1: ``assuredConcurrencyShares`` is ``nominalConcurrencyShares``."""
    return _with_limited(obj, _rename("assuredConcurrencyShares", "nominalConcurrencyShares"))


def hub_to_beta(obj: Object) -> Object:
    """v1 to v1beta1/v1beta2: the share back under its old name (absent: zero)."""
    return _with_limited(obj, _rename("nominalConcurrencyShares", "assuredConcurrencyShares"))


def v1beta3_to_hub(obj: Object) -> Object:
    """v1beta3 to v1: the preserve-zero annotation has done its work and is dropped."""
    out = _with_limited(obj, _rename("nominalConcurrencyShares", "nominalConcurrencyShares"))
    metadata = _dict(obj.get("metadata"))
    annotations = _dict((metadata or {}).get("annotations"))
    if metadata is not None and annotations is not None and PRESERVE_ZERO_SHARES in annotations:
        kept = {k: v for k, v in annotations.items() if k != PRESERVE_ZERO_SHARES}
        out["metadata"] = {**metadata, "annotations": kept}
        if not kept:
            del out["metadata"]["annotations"]
    return out


def hub_to_v1beta3(obj: Object) -> Object:
    """v1 to v1beta3: a zero share is marked with the annotation so that it reads back as zero."""
    out = _with_limited(obj, _rename("nominalConcurrencyShares", "nominalConcurrencyShares"))
    limited = _dict((_dict(out.get("spec")) or {}).get("limited"))
    if limited is not None and limited.get("nominalConcurrencyShares") == 0:
        metadata = dict(_dict(obj.get("metadata")) or {})
        annotations = dict(_dict(metadata.get("annotations")) or {})
        annotations.setdefault(PRESERVE_ZERO_SHARES, "")
        metadata["annotations"] = annotations
        out["metadata"] = metadata
    return out


# --- validation -----------------------------------------------------------------------------


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _go_strings(values: list[str]) -> GoSyntax:
    return GoSyntax(go_sharp_v_strings(values))


def _validate_verbs(verbs: list[str], path: Path) -> list[FieldError]:
    if not verbs:
        return [required(path, "verbs must contain at least one value")]
    if "*" in verbs:
        if len(verbs) > 1:
            return [
                invalid(path, _go_strings(verbs), "if '*' is present, must not specify other verbs")
            ]
        return []
    if not set(verbs) <= set(VERBS):
        return [not_supported(path, _go_strings(verbs), VERBS)]
    return []


def non_resource_url_error(url: str, path: Path) -> FieldError | None:
    """``ValidateNonResourceURLPath``: a rooted path, no blanks or ``//``, ``/*`` only as suffix."""
    if not url:
        return invalid(path, url, "must not be empty")
    if url == "/":
        return None
    if not url.startswith("/"):
        return invalid(path, url, "must start with slash")
    if " " in url:
        return invalid(path, url, "must not contain white-space")
    if "//" in url:
        return invalid(path, url, "must not contain double slash")
    stars = url.count("*")
    if stars > 1 or (stars == 1 and not url.endswith("/*")):
        return invalid(path, url, "wildcard can only do suffix matching")
    return None


def _validate_resource_rule(rule: Object, path: Path) -> list[FieldError]:
    errs = _validate_verbs(_strings(rule.get("verbs")), path.child("verbs"))
    groups = _strings(rule.get("apiGroups"))
    if not groups:
        detail = "resource rules must supply at least one api group"
        errs.append(required(path.child("apiGroups"), detail))
    elif len(groups) > 1 and "*" in groups:
        detail = "if '*' is present, must not specify other api groups"
        errs.append(invalid(path.child("apiGroups"), _go_strings(groups), detail))
    resources = _strings(rule.get("resources"))
    if not resources:
        detail = "resource rules must supply at least one resource"
        errs.append(required(path.child("resources"), detail))
    elif len(resources) > 1 and "*" in resources:
        detail = "if '*' is present, must not specify other resources"
        errs.append(invalid(path.child("resources"), _go_strings(resources), detail))
    namespaces = _strings(rule.get("namespaces"))
    if not namespaces and not rule.get("clusterScope"):
        detail = "resource rules that are not cluster scoped must supply at least one namespace"
        errs.append(required(path.child("namespaces"), detail))
    elif "*" in namespaces:
        if len(namespaces) > 1:
            detail = "if '*' is present, must not specify other namespaces"
            errs.append(invalid(path.child("namespaces"), _go_strings(namespaces), detail))
    else:
        for i, namespace in enumerate(namespaces):
            for msg in validation.validate_namespace_name(namespace, False):
                errs.append(invalid(path.child("namespaces").index(i), namespace, _NS_INTRO + msg))
    return errs


def _validate_non_resource_rule(rule: Object, path: Path) -> list[FieldError]:
    errs = _validate_verbs(_strings(rule.get("verbs")), path.child("verbs"))
    urls = _strings(rule.get("nonResourceURLs"))
    urls_path = path.child("nonResourceURLs")
    if not urls:
        errs.append(required(urls_path, "nonResourceURLs must contain at least one value"))
    elif "*" in urls:
        if len(urls) > 1:
            detail = "if '*' is present, must not specify other non-resource URLs"
            errs.append(invalid(urls_path, _go_strings(urls), detail))
    else:
        for i, url in enumerate(urls):
            error = non_resource_url_error(url, urls_path.index(i))
            if error is not None:
                errs.append(error)
    return errs


_NOT_KIND = {
    "user": "user is forbidden when subject kind is not 'User'",
    "group": "group is forbidden when subject kind is not 'Group'",
    "serviceAccount": "serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
}


def _validate_subject(subject: Object, path: Path) -> list[FieldError]:
    kind = subject.get("kind") or ""
    errs: list[FieldError] = []
    if kind == "ServiceAccount":
        account = _dict(subject.get("serviceAccount"))
        account_path = path.child("serviceAccount")
        if account is None:
            detail = "serviceAccount is required when subject kind is 'ServiceAccount'"
            errs.append(required(account_path, detail))
        else:
            name = account.get("name") or ""
            if not name:
                errs.append(required(account_path.child("name")))
            elif name != "*":
                for msg in validation.name_is_dns_subdomain(name, False):
                    errs.append(invalid(account_path.child("name"), name, msg))
            namespace = account.get("namespace") or ""
            if not namespace:
                detail = "must specify namespace for service account"
                errs.append(required(account_path.child("namespace"), detail))
            else:
                for msg in validation.validate_namespace_name(namespace, False):
                    errs.append(invalid(account_path.child("namespace"), namespace, msg))
        others = ("user", "group")
    elif kind in ("User", "Group"):
        field = kind.lower()
        member = _dict(subject.get(field))
        if member is None:
            detail = f"{field} is required when subject kind is '{kind}'"
            errs.append(required(path.child(field), detail))
        elif not member.get("name"):
            errs.append(required(path.child(field, "name")))
        others = ("serviceAccount", "group") if kind == "User" else ("serviceAccount", "user")
    else:
        return [not_supported(path.child("kind"), kind, SUBJECT_KINDS)]
    for other in others:
        if subject.get(other) is not None:
            errs.append(forbidden(path.child(other), _NOT_KIND[other]))
    return errs


def _validate_rules_with_subjects(rule: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    subjects = rule.get("subjects") or []
    if subjects:
        for i, subject in enumerate(subjects):
            errs += _validate_subject(_dict(subject) or {}, path.child("subjects").index(i))
    else:
        errs.append(required(path.child("subjects"), "subjects must contain at least one value"))
    resource_rules = rule.get("resourceRules") or []
    non_resource_rules = rule.get("nonResourceRules") or []
    if not resource_rules and not non_resource_rules:
        detail = "at least one of resourceRules and nonResourceRules has to be non-empty"
        errs.append(required(path, detail))
    for i, item in enumerate(resource_rules):
        errs += _validate_resource_rule(_dict(item) or {}, path.child("resourceRules").index(i))
    for i, item in enumerate(non_resource_rules):
        item_path = path.child("nonResourceRules").index(i)
        errs += _validate_non_resource_rule(_dict(item) or {}, item_path)
    return errs


def _go_struct(type_name: str, **fields: str) -> GoSyntax:
    """A small struct as Go's ``%#v`` prints it."""
    return GoSyntax(type_name + "{" + ", ".join(f"{k}:{v}" for k, v in fields.items()) + "}")


def validate_flow_schema_spec(name: str, spec: Object, path: Path) -> list[FieldError]:
    """``ValidateFlowSchemaSpec``."""
    errs: list[FieldError] = []
    precedence = spec.get("matchingPrecedence") or 0
    precedence_path = path.child("matchingPrecedence")
    if precedence <= 0:
        errs.append(invalid(precedence_path, precedence, "must be a positive value"))
    if precedence > MAX_MATCHING_PRECEDENCE:
        detail = f"must not be greater than {MAX_MATCHING_PRECEDENCE}"
        errs.append(invalid(precedence_path, precedence, detail))
    if precedence == 1 and name != "exempt":
        detail = "only the schema named 'exempt' may have matchingPrecedence 1"
        errs.append(invalid(precedence_path, precedence, detail))
    method = _dict(spec.get("distinguisherMethod"))
    if method is not None and method.get("type") not in DISTINGUISHER_METHODS:
        shown = _go_struct(
            "flowcontrol.FlowDistinguisherMethod", Type=go_quote(method.get("type") or "")
        )
        errs.append(
            not_supported(path.child("distinguisherMethod", "type"), shown, DISTINGUISHER_METHODS)
        )
    level = (_dict(spec.get("priorityLevelConfiguration")) or {}).get("name") or ""
    level_path = path.child("priorityLevelConfiguration", "name")
    if level:
        for msg in validation.name_is_dns_subdomain(level, False):
            errs.append(invalid(level_path, level, msg))
    else:
        errs.append(required(level_path, "must reference a priority level"))
    for i, rule in enumerate(spec.get("rules") or []):
        errs += _validate_rules_with_subjects(_dict(rule) or {}, path.child("rules").index(i))
    return errs


def _validate_conditions(status: Object, path: Path) -> list[FieldError]:
    """Condition types are required and distinct."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(status.get("conditions") or []):
        kind = (_dict(condition) or {}).get("type") or ""
        item = path.child("conditions").index(i)
        if kind in seen:
            errs.append(duplicate(item.child("type"), kind))
        seen.add(kind)
        if not kind:
            errs.append(required(item.child("type"), "must not be empty"))
    return errs


def _status(obj: Object) -> Object:
    return _dict(obj.get("status")) or {}


def same_spec(a: Any, b: Any) -> bool:
    """``equality.Semantic.DeepEqual`` over JSON: an absent field is its zero value (but for
    numbers, which stand for pointers here), and empty lists and maps equal absent ones."""
    return _normal(a) == _normal(b)


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items() if v not in (None, "", False, [], {})}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def validate_flow_schema(obj: Object) -> list[FieldError]:
    """``ValidateFlowSchema`` less its ObjectMeta part (the store's common validation)."""
    name = (_dict(obj.get("metadata")) or {}).get("name") or ""
    spec = _dict(obj.get("spec")) or {}
    errs = validate_flow_schema_spec(name, spec, Path("spec"))
    mandatory = bootstrap.MANDATORY_FLOW_SCHEMAS.get(name)
    if mandatory is not None and not same_spec(spec, mandatory["spec"]):
        errs.append(
            invalid(Path("spec"), spec, f"spec of {go_quote(name)} must equal the fixed value")
        )
    return errs + _validate_conditions(_status(obj), Path("status"))


def _shares_field() -> str:
    """Upstream names the share as the request's version does."""
    info = current_request().info
    if info.api_group == GROUP and info.api_version in ("v1beta1", "v1beta2"):
        return "assuredConcurrencyShares"
    return "nominalConcurrencyShares"


def _required_entropy_bits(deck_size: int, hand_size: int) -> int:
    """``shufflesharding.RequiredEntropyBits``: ``ceil(log2(deck) * hand)``, in floats as Go."""
    return math.ceil(math.log2(deck_size) * hand_size)


def _validate_queuing(queuing: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    limit = queuing.get("queueLengthLimit") or 0
    if limit <= 0:
        errs.append(invalid(path.child("queueLengthLimit"), limit, "must be positive"))
    queues = queuing.get("queues") or 0
    if queues <= 0:
        errs.append(invalid(path.child("queues"), queues, "must be positive"))
    elif queues > MAX_QUEUES:
        errs.append(invalid(path.child("queues"), queues, f"must not be greater than {MAX_QUEUES}"))
    hand = queuing.get("handSize") or 0
    hand_path = path.child("handSize")
    if hand <= 0:
        errs.append(invalid(hand_path, hand, "must be positive"))
    elif hand > queues:
        errs.append(invalid(hand_path, hand, f"should not be greater than queues ({queues})"))
    elif _required_entropy_bits(queues, hand) > MAX_HASH_BITS:
        detail = (
            f"required entropy bits of deckSize {queues} and handSize {hand} should not be "
            f"greater than {MAX_HASH_BITS}"
        )
        errs.append(invalid(hand_path, hand, detail))
    return errs


def _validate_limit_response(response: Object, path: Path) -> list[FieldError]:
    kind = response.get("type") or ""
    queuing = _dict(response.get("queuing"))
    if kind == "Reject":
        if response.get("queuing") is not None:
            detail = "must be nil if limited.limitResponse.type is not Limited"
            return [forbidden(path.child("queuing"), detail)]
        return []
    if kind == "Queue":
        if queuing is None:
            detail = "must not be empty if limited.limitResponse.type is Limited"
            return [required(path.child("queuing"), detail)]
        return _validate_queuing(queuing, path.child("queuing"))
    return [not_supported(path.child("type"), kind, LIMIT_RESPONSE_TYPES)]


def _validate_limited(limited: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    shares = limited.get("nominalConcurrencyShares") or 0
    if shares < 0:
        errs.append(invalid(path.child(_shares_field()), shares, "must be a non-negative integer"))
    errs += _validate_limit_response(
        _dict(limited.get("limitResponse")) or {}, path.child("limitResponse")
    )
    lendable = limited.get("lendablePercent")
    if lendable is not None and not 0 <= lendable <= 100:
        errs.append(
            invalid(path.child("lendablePercent"), lendable, "must be between 0 and 100, inclusive")
        )
    borrowing = limited.get("borrowingLimitPercent")
    if borrowing is not None and borrowing < 0:
        detail = "if specified, must be a non-negative integer"
        errs.append(invalid(path.child("borrowingLimitPercent"), borrowing, detail))
    return errs


def _validate_exempt(exempt: Object, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    shares = exempt.get("nominalConcurrencyShares")
    if shares is not None and shares < 0:
        errs.append(
            invalid(
                path.child("nominalConcurrencyShares"), shares, "must be a non-negative integer"
            )
        )
    lendable = exempt.get("lendablePercent")
    if lendable is not None and not 0 <= lendable <= 100:
        errs.append(
            invalid(path.child("lendablePercent"), lendable, "must be between 0 and 100, inclusive")
        )
    return errs


def validate_priority_level_spec(name: str, spec: Object, path: Path) -> list[FieldError]:
    """``ValidatePriorityLevelConfigurationSpec``."""
    errs: list[FieldError] = []
    kind = spec.get("type") or ""
    if (name == "exempt") != (kind == "Exempt"):
        errs.append(
            invalid(
                path.child("type"), kind, "type must be 'Exempt' if and only if name is 'exempt'"
            )
        )
    if kind == "Exempt":
        if spec.get("limited") is not None:
            errs.append(forbidden(path.child("limited"), "must be nil if the type is not Limited"))
        exempt = _dict(spec.get("exempt"))
        if exempt is not None:
            errs += _validate_exempt(exempt, path.child("exempt"))
    elif kind == "Limited":
        if spec.get("exempt") is not None:
            errs.append(forbidden(path.child("exempt"), "must be nil if the type is Limited"))
        limited = _dict(spec.get("limited"))
        if limited is None:
            errs.append(required(path.child("limited"), "must not be empty when type is Limited"))
        else:
            errs += _validate_limited(limited, path.child("limited"))
    else:
        errs.append(not_supported(path.child("type"), kind, PRIORITY_LEVEL_TYPES))
    return errs


def _validate_mandatory_priority_level(name: str, spec: Object, path: Path) -> list[FieldError]:
    """The mandatory levels' spec is fixed; ``exempt`` may change its ``exempt`` field only."""
    mandatory = bootstrap.MANDATORY_PRIORITY_LEVELS.get(name)
    if mandatory is None:
        return []
    fixed = mandatory["spec"]
    if name == "exempt":
        if not same_spec({**spec, "exempt": None}, {**fixed, "exempt": None}):
            detail = f"spec of '{name}' except the 'spec.exempt' field must equal the fixed value"
            return [invalid(path, spec, detail)]
        return []
    if not same_spec(spec, fixed):
        escaped = name.replace("'", "\\'")
        return [invalid(path, spec, f"spec of '{escaped}' must equal the fixed value")]
    return []


def validate_priority_level(obj: Object) -> list[FieldError]:
    """``ValidatePriorityLevelConfiguration`` less its ObjectMeta part."""
    metadata = _dict(obj.get("metadata")) or {}
    name = metadata.get("name") or ""
    errs: list[FieldError] = []
    if PRESERVE_ZERO_SHARES in (_dict(metadata.get("annotations")) or {}):
        detail = f"annotation '{PRESERVE_ZERO_SHARES}' is forbidden"
        errs.append(forbidden(Path("metadata", "annotations"), detail))
    spec = _dict(obj.get("spec")) or {}
    errs += validate_priority_level_spec(name, spec, Path("spec"))
    errs += _validate_mandatory_priority_level(name, spec, Path("spec"))
    return errs + _validate_conditions(_status(obj), Path("status"))


# --- strategies -----------------------------------------------------------------------------


class _FlowControlStrategy(Strategy):
    """Both kinds: a generation, a status subresource, status cleared on create."""

    has_generation = True
    has_status = True

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {}  # a zero status struct, as Go serialises it

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return _validate_conditions(_status(new), Path("status"))


class FlowSchemaStrategy(_FlowControlStrategy):
    """Upstream ``flowSchemaStrategy``."""

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_flow_schema(obj)


class PriorityLevelConfigurationStrategy(_FlowControlStrategy):
    """Upstream ``priorityLevelConfigurationStrategy``."""

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_priority_level(obj)


# --- table columns (``printFlowSchema`` / ``printPriorityLevelConfiguration``) --------------


def _spec_of(obj: Object) -> Object:
    return _dict(obj.get("spec")) or {}


def _missing_pl(obj: Object) -> str:
    """The ``Dangling`` condition's status; ``?`` until a controller has set it."""
    for condition in _status(obj).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Dangling":
            return str(condition.get("status") or "")
    return "?"


def _distinguisher(obj: Object) -> str:
    method = _dict(_spec_of(obj).get("distinguisherMethod"))
    return "<none>" if method is None else str(method.get("type") or "")


def _limited_cell(name: str) -> Callable[[Object], Any]:
    def cell(obj: Object) -> Any:
        limited = _dict(_spec_of(obj).get("limited"))
        if limited is None:
            return "<none>"
        if name == "nominalConcurrencyShares":
            return limited.get(name) or 0
        queuing = _dict((_dict(limited.get("limitResponse")) or {}).get("queuing"))
        return "<none>" if queuing is None else queuing.get(name) or 0

    return cell


FLOW_SCHEMA_COLUMNS = (
    NAME,
    Column(
        "PriorityLevel",
        "string",
        "The priority level the matching requests are assigned to.",
        lambda o: (_dict(_spec_of(o).get("priorityLevelConfiguration")) or {}).get("name", ""),
    ),
    Column(
        "MatchingPrecedence",
        "string",
        "The schema's rank among all schemas; the lowest number that matches wins.",
        lambda o: _spec_of(o).get("matchingPrecedence") or 0,
    ),
    Column(
        "DistinguisherMethod",
        "string",
        "How matching requests are split into flows: by user, by namespace, or not at all.",
        _distinguisher,
    ),
    AGE,
    Column(
        "MissingPL",
        "string",
        "Whether the priority level the schema names is missing or broken.",
        _missing_pl,
    ),
)


def flow_schema_order(obj: Object) -> tuple[int, str]:
    """``FlowSchemaSequence``: listed schemas are printed by precedence, then by name."""
    return _spec_of(obj).get("matchingPrecedence") or 0, obj["metadata"].get("name", "")


PRIORITY_LEVEL_COLUMNS = (
    NAME,
    Column("Type", "string", "Exempt or Limited.", lambda o: _spec_of(o).get("type", "")),
    Column(
        "NominalConcurrencyShares",
        "string",
        "The level's share of the server's concurrency.",
        _limited_cell("nominalConcurrencyShares"),
    ),
    Column("Queues", "string", "How many queues the level has.", _limited_cell("queues")),
    Column(
        "HandSize",
        "string",
        "How many queues shuffle sharding deals each flow.",
        _limited_cell("handSize"),
    ),
    Column(
        "QueueLengthLimit",
        "string",
        "How many requests one queue holds.",
        _limited_cell("queueLengthLimit"),
    ),
    AGE,
)

# --- resources ------------------------------------------------------------------------------

_SCHEMAS = {
    "v1": flowcontrol_v1,
    "v1beta3": flowcontrol_v1beta3,
    "v1beta2": flowcontrol_v1beta2,
    "v1beta1": flowcontrol_v1beta1,
}


def _lifecycle(version: str, kind: str) -> Lifecycle:
    """Upstream's ``zz_generated.prerelease-lifecycle.go`` at v1.33."""
    beta3 = GroupVersionKind(GROUP, "v1beta3", kind)
    if version == "v1":
        return Lifecycle(introduced=Version(1, 29))
    if version == "v1beta3":
        return Lifecycle(
            introduced=Version(1, 26),
            deprecated=Version(1, 29),
            removed=Version(1, 32),
            replacement=GroupVersionKind(GROUP, "v1", kind),
        )
    if version == "v1beta2":
        return Lifecycle(Version(1, 23), Version(1, 26), Version(1, 29), beta3)
    return Lifecycle(Version(1, 20), Version(1, 23), Version(1, 26), beta3)


def _flow_schema_version(version: str) -> ResourceVersion:
    schema: Struct = _SCHEMAS[version].FlowSchema
    if version == HUB:
        return ResourceVersion(
            version, schema, _lifecycle(version, "FlowSchema"), default_flow_schema
        )
    return renamed_version(
        version,
        schema,
        _lifecycle(version, "FlowSchema"),
        default_flow_schema,
    )


def _priority_level_version(version: str) -> ResourceVersion:
    schema: Struct = _SCHEMAS[version].PriorityLevelConfiguration
    lifecycle = _lifecycle(version, "PriorityLevelConfiguration")
    if version == HUB:
        return ResourceVersion(version, schema, lifecycle, default_priority_level_v1)
    if version == "v1beta3":
        return ResourceVersion(
            version,
            schema,
            lifecycle,
            default_priority_level_v1beta3,
            to_hub=v1beta3_to_hub,
            from_hub=hub_to_v1beta3,
        )
    return ResourceVersion(
        version,
        schema,
        lifecycle,
        default_priority_level_beta,
        to_hub=beta_to_hub,
        from_hub=hub_to_beta,
    )


VERSIONS = ("v1", "v1beta3", "v1beta2", "v1beta1")


def resources() -> list[Resource]:
    """FlowSchemas and PriorityLevelConfigurations (fresh strategies for a new scheme)."""
    return [
        Resource(
            group=GROUP,
            kind="FlowSchema",
            plural="flowschemas",
            singular="flowschema",
            namespaced=False,
            versions={v: _flow_schema_version(v) for v in VERSIONS},
            hub_version=HUB,
            storage_version=HUB,
            strategy=FlowSchemaStrategy(),
            subresources=("status",),
            columns=FLOW_SCHEMA_COLUMNS,
            table_row_order=flow_schema_order,
        ),
        Resource(
            group=GROUP,
            kind="PriorityLevelConfiguration",
            plural="prioritylevelconfigurations",
            singular="prioritylevelconfiguration",
            namespaced=False,
            versions={v: _priority_level_version(v) for v in VERSIONS},
            hub_version=HUB,
            storage_version=HUB,
            strategy=PriorityLevelConfigurationStrategy(),
            subresources=("status",),
            columns=PRIORITY_LEVEL_COLUMNS,
        ),
    ]
