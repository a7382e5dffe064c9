"""core/v1 ``ResourceQuota`` and ``LimitRange``: defaults, validation, strategies, tables.

Follows ``SetDefaults_LimitRangeItem`` (a Container item's default limit falls
back to its max, its default request to the default limit, then to its min),
``ValidateResourceQuota``/``ValidateResourceQuotaUpdate``/``ValidateResourceQuotaStatusUpdate``
and ``ValidateLimitRange`` of ``pkg/apis/core/validation``, and the strategies of
``pkg/registry/core/{resourcequota,limitrange}``.

kapi runs no kube-controller-manager, so no resource quota controller fills a
quota's ``status.hard`` and ``status.used``; and it runs neither the
ResourceQuota nor the LimitRanger admission plugin, so quotas are not enforced
and LimitRanges do not default or bound pods.  Both are stored, validated and
served as upstream's.
"""

from __future__ import annotations

import uuid
from decimal import ROUND_CEILING
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    GoSyntax,
    Path,
    duplicate,
    forbidden,
    invalid,
    required,
)
from kapi.apimachinery.gotext import go_quote
from kapi.apimachinery.quantity import Quantity
from kapi.apimachinery.unstructured import Object
from kapi.apis.core_v1 import core_resource
from kapi.apis.core_v1_resource_names import (
    go_quantity,
    go_string_slice,
    is_overcommit_allowed,
    is_standard_quota_resource_name,
    milli_value,
    quantity_of,
    validate_container_resource_name,
    validate_quantity_value,
    validate_quota_resource_name,
    validate_resource_name,
)
from kapi.apis.generated.core_v1 import LimitRange, ResourceQuota
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, DEFAULT_COLUMNS, NAME, Column
from kapi.runtime.scheme import Resource

# --- ResourceQuota --------------------------------------------------------------------------------

BEST_EFFORT, NOT_BEST_EFFORT = "BestEffort", "NotBestEffort"
TERMINATING, NOT_TERMINATING = "Terminating", "NotTerminating"
PRIORITY_CLASS, CROSS_NAMESPACE_POD_AFFINITY = "PriorityClass", "CrossNamespacePodAffinity"
#: ``IsStandardResourceQuotaScope`` at 1.33 (VolumeAttributesClass needs its feature gate,
#: off by default there, and is refused as upstream refuses it then).
STANDARD_SCOPES = frozenset(
    {TERMINATING, NOT_TERMINATING, BEST_EFFORT, NOT_BEST_EFFORT, PRIORITY_CLASS}
) | {CROSS_NAMESPACE_POD_AFFINITY}
_POD_COUNT = frozenset({"pods"})
_POD_COMPUTE = frozenset(
    {"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"}
)
_CONFLICTING_SCOPES = ((BEST_EFFORT, NOT_BEST_EFFORT), (TERMINATING, NOT_TERMINATING))
_EXISTS_ONLY_SCOPES = frozenset(
    {BEST_EFFORT, NOT_BEST_EFFORT, TERMINATING, NOT_TERMINATING, CROSS_NAMESPACE_POD_AFFINITY}
)
EXISTS_ONLY = (
    "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
    "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
    "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
)
VALUES_REQUIRED = "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
NO_VALUES = "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"


def scope_valid_for_resource(scope: str, resource: str) -> bool:
    """``IsResourceQuotaScopeValidForResource``: pod scopes track pod counts and compute."""
    if scope in (TERMINATING, NOT_TERMINATING, NOT_BEST_EFFORT, PRIORITY_CLASS):
        return resource in _POD_COUNT or resource in _POD_COMPUTE
    if scope == CROSS_NAMESPACE_POD_AFFINITY:
        return resource in _POD_COUNT or resource in _POD_COMPUTE
    if scope == BEST_EFFORT:
        return resource in _POD_COUNT
    return True


def _scopes_value(scopes: list[str]) -> GoSyntax:
    return go_string_slice("core.ResourceQuotaScope", scopes)


def validate_quota_scopes(spec: Object, path: Path) -> list[FieldError]:
    """``validateResourceQuotaScopes``."""
    scopes: list[str] = [str(s) for s in spec.get("scopes") or []]
    if not scopes:
        return []
    hard = sorted((spec.get("hard") or {}).keys())
    scopes_path = path.child("scopes")
    errs: list[FieldError] = []
    for scope in scopes:
        if scope not in STANDARD_SCOPES:
            errs.append(invalid(scopes_path, _scopes_value(scopes), "unsupported scope"))
        for name in hard:
            if is_standard_quota_resource_name(name) and not scope_valid_for_resource(scope, name):
                errs.append(
                    invalid(
                        scopes_path, _scopes_value(scopes), "unsupported scope applied to resource"
                    )
                )
    for pair in _CONFLICTING_SCOPES:
        if all(s in scopes for s in pair):
            errs.append(invalid(scopes_path, _scopes_value(scopes), "conflicting scopes"))
    return errs


def _go_requirement(requirement: Object) -> str:
    values = requirement.get("values")
    rendered = "[]string(nil)" if values is None else go_string_slice("string", list(values)).text
    return (
        f"core.ScopedResourceSelectorRequirement{{ScopeName:"
        f"{go_quote(requirement.get('scopeName') or '')}, Operator:"
        f"{go_quote(requirement.get('operator') or '')}, Values:{rendered}}}"
    )


def _go_scope_selector(selector: Object) -> GoSyntax:
    """``%#v`` of a ``*core.ScopeSelector`` (a pointer: ErrorBody prints what it points at)."""
    expressions = selector.get("matchExpressions")
    if expressions is None:
        inner = "[]core.ScopedResourceSelectorRequirement(nil)"
    else:
        inner = (
            "[]core.ScopedResourceSelectorRequirement{"
            + ", ".join(_go_requirement(r) for r in expressions)
            + "}"
        )
    return GoSyntax(f"core.ScopeSelector{{MatchExpressions:{inner}}}")


def validate_scope_selector(spec: Object, path: Path) -> list[FieldError]:
    """``validateScopeSelector`` / ``validateScopedResourceSelectorRequirement``."""
    selector = spec.get("scopeSelector")
    if selector is None:
        return []
    hard = sorted((spec.get("hard") or {}).keys())
    exprs_path = path.child("scopeSelector", "matchExpressions")
    errs: list[FieldError] = []
    seen: set[str] = set()
    for requirement in selector.get("matchExpressions") or []:
        scope = str(requirement.get("scopeName") or "")
        operator = str(requirement.get("operator") or "")
        values = requirement.get("values") or []
        if scope not in STANDARD_SCOPES:
            errs.append(invalid(exprs_path.child("scopeName"), scope, "unsupported scope"))
        for name in hard:
            if is_standard_quota_resource_name(name) and not scope_valid_for_resource(scope, name):
                errs.append(
                    invalid(
                        exprs_path,
                        _go_scope_selector(selector),
                        "unsupported scope applied to resource",
                    )
                )
        if scope in _EXISTS_ONLY_SCOPES and operator != "Exists":
            errs.append(invalid(exprs_path.child("operator"), operator, EXISTS_ONLY))
        if operator in ("In", "NotIn"):
            if not values:
                errs.append(required(exprs_path.child("values"), VALUES_REQUIRED))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errs.append(
                    invalid(
                        exprs_path.child("values"), go_string_slice("string", values), NO_VALUES
                    )
                )
        else:
            errs.append(
                invalid(exprs_path.child("operator"), operator, "not a valid selector operator")
            )
        seen.add(scope)
    scopes = [str(s) for s in spec.get("scopes") or []]
    scopes_value: Any = GoSyntax("[]core.ResourceQuotaScope(nil)")
    if spec.get("scopes") is not None:
        scopes_value = _scopes_value(scopes)
    for pair in _CONFLICTING_SCOPES:
        if all(s in seen for s in pair):
            errs.append(invalid(exprs_path, scopes_value, "conflicting scopes"))
    return errs


def _validate_resource_list(values: Object | None, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    for name, value in sorted((values or {}).items()):
        errs += validate_quota_resource_name(name, path.key(name))
        errs += validate_quantity_value(name, value, path.key(name))
    return errs


def validate_quota_spec(spec: Object) -> list[FieldError]:
    """``ValidateResourceQuotaSpec``."""
    path = Path("spec")
    errs = _validate_resource_list(spec.get("hard"), path.child("hard"))
    errs += validate_quota_scopes(spec, path)
    errs += validate_scope_selector(spec, path)
    return errs


def validate_quota_status(status: Object) -> list[FieldError]:
    """``ValidateResourceQuotaStatus``."""
    path = Path("status")
    return _validate_resource_list(status.get("hard"), path.child("hard")) + (
        _validate_resource_list(status.get("used"), path.child("used"))
    )


def validate_quota_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateResourceQuotaUpdate``: the spec again, and scopes may not change."""
    spec = new.get("spec") or {}
    errs = validate_quota_spec(spec)
    scopes = [str(s) for s in spec.get("scopes") or []]
    old_scopes = [str(s) for s in (old.get("spec") or {}).get("scopes") or []]
    if set(scopes) != set(old_scopes):
        value = (
            _scopes_value(scopes)
            if spec.get("scopes") is not None
            else GoSyntax("[]core.ResourceQuotaScope(nil)")
        )
        errs.append(invalid(Path("spec", "scopes"), value, validation.FIELD_IMMUTABLE_ERROR_MSG))
    return errs


#: The resources whose request should not exceed their limit in a quota (``knownResourceNames``).
_REQUEST_LIMIT_PAIRS = ("cpu", "memory", "storage", "ephemeral-storage")


def quota_warnings(obj: Object) -> list[str]:
    """Upstream's create warnings: a request quota above its limit quota."""
    hard = (obj.get("spec") or {}).get("hard") or {}
    warnings = []
    for resource in _REQUEST_LIMIT_PAIRS:
        request_name = f"requests.{resource}"
        request = hard.get(request_name)
        if request is None and resource in ("cpu", "memory") and resource in hard:
            request_name, request = resource, hard[resource]
        limit_name = f"limits.{resource}"
        limit = hard.get(limit_name)
        if request is None or limit is None:
            continue
        rq, lq = quantity_of(request), quantity_of(limit)
        if rq is not None and lq is not None and rq.amount > lq.amount:
            warnings.append(
                f"ResourceQuota {request_name} ({rq}) should be less than {limit_name} ({lq})"
            )
    return warnings


class ResourceQuotaStrategy(Strategy):
    """Upstream ``resourcequotaStrategy`` and ``resourcequotaStatusStrategy``."""

    has_status = True

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {}

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_quota_spec(obj.get("spec") or {}) + validate_quota_status(
            obj.get("status") or {}
        )

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_quota_update(new, old)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return validate_quota_status(new.get("status") or {})

    def warnings_on_create(self, obj: Object) -> list[str]:
        return quota_warnings(obj)


def _quota_cells(obj: Object) -> tuple[str, str]:
    """``printResourceQuota``: ``name: used/hard`` per ``status.hard`` entry; ``limits.*``
    go to the Limit column, the rest to Request."""
    status = obj.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        used_q, hard_q = quantity_of(used.get(name, "0")), quantity_of(hard[name])
        cell = f"{name}: {used_q or '0'}/{hard_q or '0'}"
        pieces = name.split(".")
        (limits if len(pieces) > 1 and pieces[0] == "limits" else requests).append(cell)
    return ", ".join(requests), ", ".join(limits)


QUOTA_COLUMNS = (
    NAME,
    AGE,
    Column(
        "Request",
        "string",
        "Used and hard amounts of the quota's request (non-limit) resources.",
        lambda o: _quota_cells(o)[0],
    ),
    Column(
        "Limit",
        "string",
        "Used and hard amounts of the quota's limits.* resources.",
        lambda o: _quota_cells(o)[1],
    ),
)


# --- LimitRange -----------------------------------------------------------------------------------

POD, CONTAINER, PVC = "Pod", "Container", "PersistentVolumeClaim"
STANDARD_LIMIT_TYPES = frozenset({POD, CONTAINER, PVC})
POD_FORBIDDEN = "may not be specified when `type` is 'Pod'"
PVC_STORAGE_REQUIRED = (
    "either minimum or maximum storage value is required, but neither was provided"
)


def default_limit_range(obj: Object) -> None:
    """``SetDefaults_LimitRangeItem`` for every Container item."""
    for item in (obj.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != CONTAINER:
            continue
        default = item.get("default") or {}
        default_request = item.get("defaultRequest") or {}
        for name, value in (item.get("max") or {}).items():
            default.setdefault(name, value)
        for name, value in default.items():
            default_request.setdefault(name, value)
        for name, value in (item.get("min") or {}).items():
            default_request.setdefault(name, value)
        if default:
            item["default"] = default
        if default_request:
            item["defaultRequest"] = default_request


def _limit_type_errors(limit_type: str, path: Path) -> list[FieldError]:
    """``validateLimitRangeTypeName``."""
    errs = [invalid(path, limit_type, m) for m in validation.is_qualified_name(limit_type)]
    if not errs and "/" not in limit_type and limit_type not in STANDARD_LIMIT_TYPES:
        errs.append(invalid(path, limit_type, "must be a standard limit type or fully qualified"))
    return errs


def _limit_resource_name_errors(limit_type: str, name: str, path: Path) -> list[FieldError]:
    """``validateLimitRangeResourceName``: Pod and Container items take container names."""
    if limit_type in (POD, CONTAINER):
        return validate_container_resource_name(name, path)
    return validate_resource_name(name, path)


def _ratio_text(value: float) -> str:
    """Go's ``%f``: six decimals."""
    return f"{value:.6f}"


def validate_limit_range(obj: Object) -> list[FieldError]:
    """``ValidateLimitRange`` (the metadata part is the store's)."""
    errs: list[FieldError] = []
    path = Path("spec", "limits")
    seen_types: set[str] = set()
    for i, item in enumerate((obj.get("spec") or {}).get("limits") or []):
        idx = path.index(i)
        limit_type = str(item.get("type") or "")
        errs += _limit_type_errors(limit_type, idx.child("type"))
        if limit_type in seen_types:
            errs.append(duplicate(idx.child("type"), limit_type))
        seen_types.add(limit_type)

        keys: set[str] = set()
        found: dict[str, dict[str, Quantity]] = {}
        fields = ["max", "min"]
        if limit_type == POD:
            if item.get("default"):
                errs.append(forbidden(idx.child("default"), POD_FORBIDDEN))
            if item.get("defaultRequest"):
                errs.append(forbidden(idx.child("defaultRequest"), POD_FORBIDDEN))
            found["default"], found["defaultRequest"] = {}, {}
        else:
            fields += ["default", "defaultRequest"]
        for field in fields:
            found[field] = _collect(item, field, limit_type, idx, keys, errs)
        bounds = {**(item.get("min") or {}), **(item.get("max") or {})}
        if limit_type == PVC and "storage" not in bounds:
            errs.append(required(idx.child("limits"), PVC_STORAGE_REQUIRED))
        found["maxLimitRequestRatio"] = _collect(
            item, "maxLimitRequestRatio", limit_type, idx, keys, errs
        )
        errs += _compare_limits(sorted(keys), found, idx)
    return errs


def _collect(
    item: Object, field: str, limit_type: str, idx: Path, keys: set[str], errs: list[FieldError]
) -> dict[str, Quantity]:
    """One of an item's resource lists: names checked, quantities parsed."""
    values: dict[str, Quantity] = {}
    for name, value in sorted((item.get(field) or {}).items()):
        errs += _limit_resource_name_errors(limit_type, name, idx.child(field).key(name))
        keys.add(name)
        q = quantity_of(value)
        if q is not None:
            values[name] = q
    return values


def _compare_limits(
    keys: list[str], found: dict[str, dict[str, Quantity]], idx: Path
) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in keys:
        low = found["min"].get(name)
        high = found["max"].get(name)
        default = found["default"].get(name)
        request = found["defaultRequest"].get(name)
        ratio = found["maxLimitRequestRatio"].get(name)
        # Pairs that must be in order: (lower, higher, the field blamed, whether the lower
        # value is the one shown, the message).
        orderings = (
            (low, high, "min", True, f"min value {low} is greater than max value {high}"),
            (
                low,
                request,
                "defaultRequest",
                False,
                f"min value {low} is greater than default request value {request}",
            ),
            (
                request,
                high,
                "defaultRequest",
                True,
                f"default request value {request} is greater than max value {high}",
            ),
            (
                request,
                default,
                "defaultRequest",
                True,
                f"default request value {request} is greater than default limit value {default}",
            ),
            (
                low,
                default,
                "default",
                True,
                f"min value {low} is greater than default value {default}",
            ),
            (
                default,
                high,
                "default",
                False,
                f"default value {default} is greater than max value {high}",
            ),
        )
        for lower, higher, blamed, lower_shown, message in orderings:
            if lower is not None and higher is not None and lower.amount > higher.amount:
                shown = lower if lower_shown else higher
                errs.append(invalid(idx.child(blamed).key(name), go_quantity(shown), message))
        if ratio is not None and ratio.amount < 1:
            errs.append(
                invalid(
                    idx.child("maxLimitRequestRatio").key(name),
                    go_quantity(ratio),
                    f"ratio {ratio} is less than 1",
                )
            )
        if ratio is not None and low is not None and high is not None:
            errs += _ratio_bound(name, ratio, low, high, idx)
        if (
            not is_overcommit_allowed(name)
            and default is not None
            and request is not None
            and default.amount != request.amount
        ):
            errs.append(
                invalid(
                    idx.child("defaultRequest").key(name),
                    go_quantity(request),
                    f"default value {default} must equal to defaultRequest value {request} "
                    f"in {name}",
                )
            )
    return errs


_MAX_MILLI = (1 << 63) // 1000  # resource.MaxMilliValue


def _ratio_bound(
    name: str, ratio: Quantity, low: Quantity, high: Quantity, idx: Path
) -> list[FieldError]:
    """The ratio may not exceed max/min (compared in thousandths when they fit)."""
    ratio_value = float(_value(ratio))
    low_value, high_value = _value(low), _value(high)
    if _value(ratio) < _MAX_MILLI and low_value < _MAX_MILLI and high_value < _MAX_MILLI:
        ratio_value = milli_value(ratio) / 1000
        low_value, high_value = milli_value(low), milli_value(high)
    if low_value == 0:
        bound = float("inf") if high_value > 0 else float("nan")
    else:
        bound = high_value / low_value
    if ratio_value > bound:
        return [
            invalid(
                idx.child("maxLimitRequestRatio").key(name),
                go_quantity(ratio),
                f"ratio {ratio} is greater than max/min = {_go_float(bound)}",
            )
        ]
    return []


def _value(q: Quantity) -> int:
    """``Quantity.Value``: whole units, rounded up."""
    return int(q.amount.to_integral_value(rounding=ROUND_CEILING))


def _go_float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "+Inf"
    return _ratio_text(value)


class LimitRangeStrategy(Strategy):
    """Upstream ``limitrangeStrategy``: a PUT may create; a nameless one gets a UUID name."""

    allow_create_on_update = True

    def prepare_for_create(self, obj: Object) -> None:
        metadata = obj.setdefault("metadata", {})
        if not metadata.get("name"):
            metadata["name"] = str(uuid.uuid4())

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_limit_range(obj)


# --- resources ------------------------------------------------------------------------------------


def resources() -> list[Resource]:
    """The core/v1 ResourceQuota and LimitRange resources."""
    return [
        core_resource(
            "ResourceQuota",
            "resourcequotas",
            ResourceQuota,
            ResourceQuotaStrategy(),
            short_names=("quota",),
            subresources=("status",),
            columns=QUOTA_COLUMNS,
        ),
        core_resource(
            "LimitRange",
            "limitranges",
            LimitRange,
            LimitRangeStrategy(),
            default_limit_range,
            short_names=("limits",),
            columns=DEFAULT_COLUMNS,
        ),
    ]
