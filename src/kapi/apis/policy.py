"""policy ``PodDisruptionBudget`` in ``v1`` (hub and storage) and ``v1beta1``.

The versions differ in one meaning: an empty selector ``{}`` matches no pods in
v1beta1 and all pods in v1.  As upstream (``pkg/apis/policy/helper.go`` and
the v1 / v1beta1 ``conversion.go``), the hub spells v1beta1's "match none" as a
selector on the reserved label :data:`PDB_V1BETA1_LABEL`, and v1beta1 spells
v1's "match all" the same way, so objects round-trip through both versions.
Validation follows ``pkg/apis/policy/validation``; the strategy follows
``pkg/registry/policy/poddisruptionbudget``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    FieldError,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
    too_long,
)
from kapi.apimachinery.gotext import OrderedStruct
from kapi.apimachinery.unstructured import Object
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column
from kapi.runtime.meta import Condition, LabelSelector, kind_struct
from kapi.runtime.objects import deep_copy
from kapi.runtime.schema import INT32, INT64, Field, IntOrString, List, Map, Scalar, Struct, Time
from kapi.runtime.scheme import GroupVersionKind, Lifecycle, Resource, ResourceVersion
from kapi.version import Version

# --- the empty-selector mapping between v1beta1 and the hub ---------------------------------

PDB_V1BETA1_LABEL = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"
#: In the hub (and v1) ``{}`` selects every pod; this selects none.
NON_V1BETA1_MATCH_ALL: Object = {}
NON_V1BETA1_MATCH_NONE: Object = {
    "matchExpressions": [{"key": PDB_V1BETA1_LABEL, "operator": "Exists"}]
}
#: In v1beta1 ``{}`` selects no pod; this selects all.
V1BETA1_MATCH_NONE: Object = {}
V1BETA1_MATCH_ALL: Object = {
    "matchExpressions": [{"key": PDB_V1BETA1_LABEL, "operator": "DoesNotExist"}]
}

Swaps = tuple[tuple[Object, Object], ...]
_FROM_V1BETA1: Swaps = (
    (V1BETA1_MATCH_NONE, NON_V1BETA1_MATCH_NONE),
    (V1BETA1_MATCH_ALL, NON_V1BETA1_MATCH_ALL),
)
_TO_V1BETA1: Swaps = (
    (NON_V1BETA1_MATCH_NONE, V1BETA1_MATCH_NONE),
    (NON_V1BETA1_MATCH_ALL, V1BETA1_MATCH_ALL),
)
#: What v1 input keeps verbatim; anything else loses the reserved label.
_V1_SPECIAL: Swaps = (
    (NON_V1BETA1_MATCH_NONE, NON_V1BETA1_MATCH_NONE),
    (NON_V1BETA1_MATCH_ALL, NON_V1BETA1_MATCH_ALL),
)


def _semantic(selector: Mapping[str, Any]) -> tuple[Any, ...]:
    """A selector as ``apiequality.Semantic.DeepEqual`` sees it: nil and empty alike."""
    return (
        dict(selector.get("matchLabels") or {}),
        [
            (r.get("key") or "", r.get("operator") or "", list(r.get("values") or ()))
            for r in selector.get("matchExpressions") or ()
        ],
    )


def _convert_selector(obj: Object, swaps: Swaps, strip: bool) -> None:
    """Replace a special selector by its counterpart, else maybe strip the reserved label.

    The label must never combine with user requirements; upstream strips it
    with ``StripPDBV1beta1Label`` wherever a selector enters the hub.
    """
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    selector = spec.get("selector")
    if not isinstance(selector, dict):
        return  # a nil selector (matches nothing in every version) stays nil
    semantic = _semantic(selector)
    for match, replacement in swaps:
        if semantic == _semantic(match):
            spec["selector"] = deep_copy(replacement)
            return
    if strip and selector.get("matchExpressions"):
        kept = [r for r in selector["matchExpressions"] if r.get("key") != PDB_V1BETA1_LABEL]
        if kept:
            selector["matchExpressions"] = kept
        else:
            del selector["matchExpressions"]


def v1beta1_to_hub(obj: Object) -> Object:
    """``Convert_v1beta1_PodDisruptionBudget_To_policy_PodDisruptionBudget``."""
    out = deep_copy(obj)
    _convert_selector(out, _FROM_V1BETA1, strip=True)
    return out


def hub_to_v1beta1(obj: Object) -> Object:
    """``Convert_policy_PodDisruptionBudget_To_v1beta1_PodDisruptionBudget``.

    Every read through v1beta1 converts, so only what may change is copied: the
    object and its spec (``spec.selector`` is replaced, never edited in place
    without ``strip``); the rest is shared with ``obj``, as the hub's own
    version shares it with no copy at all.
    """
    out = dict(obj)
    if isinstance(obj.get("spec"), dict):
        out["spec"] = dict(obj["spec"])
    _convert_selector(out, _TO_V1BETA1, strip=False)
    return out


_SELECTOR_KEY = b'"selector":'
_RESERVED_LABEL = PDB_V1BETA1_LABEL.encode()
#: How a stored selector starts when it surely selects some pods but not all...
_SOME_LABELS = b'{"matchLabels":{"'
#: ... and when it does unless its requirements are the reserved "none" one.
_SOME_EXPRESSIONS = b'{"matchExpressions":[{'


def v1beta1_reads_as_hub(value: bytes) -> bool:
    """Whether :func:`hub_to_v1beta1` leaves the stored hub JSON ``value`` as it is.

    It only replaces ``spec.selector`` when that selects every pod or none:
    empty, or with the reserved label as its only requirement.  Keys are never
    escaped in stored JSON and ``"selector":`` cannot occur inside an encoded
    string, so the key followed by an object with a non-empty field can only
    be ``spec.selector`` (every other map of a PDB holds strings), and such a
    selector has nothing to replace (with the label nowhere, for
    requirements).  Any other last occurrence (a label or a disrupted pod
    named "selector") is left to the conversion.  Every GET through v1beta1
    asks, so this scans from the end, where ``spec`` is, and stops there.
    """
    at = value.rfind(_SELECTOR_KEY)
    if at < 0:
        return True
    at += len(_SELECTOR_KEY)
    return value.startswith(_SOME_LABELS, at) or (
        value.startswith(_SOME_EXPRESSIONS, at) and _RESERVED_LABEL not in value
    )


def normalize_v1_selector(obj: Object) -> None:
    """``Convert_v1_PodDisruptionBudget_To_policy_PodDisruptionBudget``, in place.

    The hub is v1, so v1 requests never convert; the strategy applies this rule
    on every write instead (it leaves already-converted v1beta1 input as it is).
    """
    _convert_selector(obj, _V1_SPECIAL, strip=True)


# --- schema ---------------------------------------------------------------------------------

UNHEALTHY_POD_EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")
_STATUS_COUNTS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")


def _pdb_schema(version: str, selector_doc: str, selector_patch_strategy: str | None) -> Struct:
    """The kind's schema in ``version``; the versions differ only in the selector's meaning
    (and v1 alone tags it ``patchStrategy:"replace"``, so a strategic merge patch replaces it)."""
    prefix = f"io.k8s.api.policy.{version}"
    spec = Struct(
        f"{prefix}.PodDisruptionBudgetSpec",
        (
            Field(
                "minAvailable",
                IntOrString(),
                "Evictions go ahead only while this many selected pods (a number or a percentage) "
                'stay available without the evicted one; "100%" blocks them all.',
            ),
            Field("selector", LabelSelector, selector_doc, patch_strategy=selector_patch_strategy),
            Field(
                "maxUnavailable",
                IntOrString(),
                "Evictions go ahead only while no more than this many selected pods (a number or a "
                "percentage) would be unavailable; 0 blocks them all. Not with minAvailable.",
            ),
            Field(
                "unhealthyPodEvictionPolicy",
                Scalar("string", enum=UNHEALTHY_POD_EVICTION_POLICIES),
                "When running pods that are not ready may be evicted: IfHealthyBudget (the "
                "default) only while the budget is met, AlwaysAllow regardless of it.",
            ),
        ),
        "The pods a budget covers and how many of them must stay up.",
    )
    status = Struct(
        f"{prefix}.PodDisruptionBudgetStatus",
        (
            Field(
                "observedGeneration",
                INT64,
                "The metadata.generation this status was computed for; the counts are current "
                "only when the two are equal.",
            ),
            Field(
                "disruptedPods",
                Map(Time()),
                "Pods evicted through the API server, by name with the time of eviction, that the "
                "disruption controller has not yet seen go.",
            ),
            Field(
                "disruptionsAllowed",
                INT32,
                "How many more pods may be evicted now.",
                required=True,
            ),
            Field(
                "currentHealthy", INT32, "How many selected pods are healthy now.", required=True
            ),
            Field(
                "desiredHealthy", INT32, "How many selected pods must stay healthy.", required=True
            ),
            Field(
                "expectedPods",
                INT32,
                "How many pods the budget counts in all.",
                required=True,
            ),
            Field(
                "conditions",
                List(
                    Condition,
                    list_type="map",
                    map_keys=("type",),
                    patch_strategy="merge",
                    patch_merge_key="type",
                ),
                "Observed conditions of the budget, such as DisruptionAllowed from the disruption "
                "controller.",
            ),
        ),
        "What the disruption controller last counted for a budget; may lag behind the pods.",
    )
    return kind_struct(
        f"{prefix}.PodDisruptionBudget",
        (("policy", version, "PodDisruptionBudget"),),
        (
            Field("spec", spec, "The pods covered and the disruption they may take."),
            Field("status", status, "The counts last observed."),
        ),
        "A limit on how many pods of a group voluntary evictions may take down at once.",
    )


PodDisruptionBudgetV1 = _pdb_schema(
    "v1",
    "The pods whose evictions the budget governs. Unset selects none; an empty selector ({}) "
    "selects every pod of the namespace.",
    "replace",
)
PodDisruptionBudgetV1beta1 = _pdb_schema(
    "v1beta1",
    "The pods whose evictions the budget governs. Both unset and empty ({}) select none here; "
    "in policy/v1 an empty selector selects the whole namespace.",
    None,
)

# --- validation -----------------------------------------------------------------------------

PERCENT_FMT = "[0-9]+%"
_PERCENT_RE = re.compile(PERCENT_FMT)
_PERCENT_MSG = validation.regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'",
    PERCENT_FMT,
    "1%",
    "93%",
)


def validate_int_or_percent(value: int | str, path: Path) -> list[FieldError]:
    """``ValidatePositiveIntOrPercent`` then ``IsNotMoreThan100Percent`` (apps validation)."""
    if not isinstance(value, str):
        return validation.validate_nonnegative_field(value, path)
    if not _PERCENT_RE.fullmatch(value):
        return [invalid(path, value, _PERCENT_MSG)]
    if int(value[:-1]) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


def _go_spec(spec: Object) -> OrderedStruct:
    """The internal ``PodDisruptionBudgetSpec`` as a bad value prints: Go field names
    (internal types have no json tags), declaration order, nil as null."""
    selector = spec.get("selector")
    if isinstance(selector, dict):
        selector = OrderedStruct(
            (k, selector[k]) for k in ("matchLabels", "matchExpressions") if selector.get(k)
        )
    return OrderedStruct(
        MinAvailable=spec.get("minAvailable"),
        Selector=selector,
        MaxUnavailable=spec.get("maxUnavailable"),
        UnhealthyPodEvictionPolicy=spec.get("unhealthyPodEvictionPolicy"),
    )


def validate_pdb_spec(spec: Object, *, allow_invalid_label_value: bool) -> list[FieldError]:
    """``ValidatePodDisruptionBudgetSpec``."""
    path = Path("spec")
    errs: list[FieldError] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        detail = "minAvailable and maxUnavailable cannot be both set"
        errs.append(invalid(path, _go_spec(spec), detail))
    for name in ("minAvailable", "maxUnavailable"):
        if spec.get(name) is not None:
            errs += validate_int_or_percent(spec[name], path.child(name))
    errs += validation.validate_label_selector(
        spec.get("selector"),
        path.child("selector"),
        allow_invalid_label_value=allow_invalid_label_value,
    )
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(
            not_supported(
                path.child("unhealthyPodEvictionPolicy"), policy, UNHEALTHY_POD_EVICTION_POLICIES
            )
        )
    return errs


CONDITION_STATUSES = ("False", "True", "Unknown")
CONDITION_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_CONDITION_REASON_RE = re.compile(CONDITION_REASON_FMT)
_CONDITION_REASON_MSG = validation.regex_error(
    "a condition reason must start with alphabetic character, optionally followed by a string "
    "of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
    CONDITION_REASON_FMT,
    "my_name",
    "MY_NAME",
    "MyName",
    "ReasonA,ReasonB",
    "ReasonA:ReasonB",
)
_MAX_REASON_LENGTH = 1024
_MAX_MESSAGE_LENGTH = 32 * 1024


def validate_condition(condition: Object, path: Path) -> list[FieldError]:
    """``metav1validation.ValidateCondition``."""
    errs = validation.validate_label_name(condition.get("type") or "", path.child("type"))
    status = condition.get("status") or ""
    if status not in CONDITION_STATUSES:
        errs.append(not_supported(path.child("status"), status, CONDITION_STATUSES))
    observed = condition.get("observedGeneration") or 0
    if observed < 0:
        detail = "must be greater than or equal to zero"
        errs.append(invalid(path.child("observedGeneration"), observed, detail))
    if not condition.get("lastTransitionTime"):
        errs.append(required(path.child("lastTransitionTime"), "must be set"))
    reason = condition.get("reason") or ""
    if not reason:
        errs.append(required(path.child("reason"), "must be set"))
    else:
        if not _CONDITION_REASON_RE.fullmatch(reason):
            errs.append(invalid(path.child("reason"), reason, _CONDITION_REASON_MSG))
        if len(reason.encode()) > _MAX_REASON_LENGTH:
            errs.append(too_long(path.child("reason"), reason, _MAX_REASON_LENGTH))
    message = condition.get("message") or ""
    if len(message.encode()) > _MAX_MESSAGE_LENGTH:
        errs.append(too_long(path.child("message"), message, _MAX_MESSAGE_LENGTH))
    return errs


def validate_conditions(conditions: list[Object], path: Path) -> list[FieldError]:
    """``metav1validation.ValidateConditions``: each valid, types unique."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions):
        condition_type = condition.get("type") or ""
        if condition_type in seen:
            errs.append(duplicate(path.index(i).child("type"), condition_type))
        seen.add(condition_type)
        errs += validate_condition(condition, path.index(i))
    return errs


# --- strategy -------------------------------------------------------------------------------


def _spec_of(obj: Object) -> Object:
    return obj.get("spec") or {}


class PodDisruptionBudgetStrategy(Strategy):
    """Upstream ``podDisruptionBudgetStrategy``: generation, status subresource,
    and selector label values that were invalid before may stay invalid."""

    has_generation = True
    has_status = True

    def prepare_for_create(self, obj: Object) -> None:
        # Upstream resets status to the zero struct, whose counters always serialise.
        obj["status"] = dict.fromkeys(_STATUS_COUNTS, 0)
        normalize_v1_selector(obj)

    def prepare_for_update(self, new: Object, old: Object) -> None:
        super().prepare_for_update(new, old)
        normalize_v1_selector(new)

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_pdb_spec(_spec_of(obj), allow_invalid_label_value=False)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        # ``hasInvalidLabelValueInLabelSelector`` of the old object: any selector error.
        old_selector = _spec_of(old).get("selector")
        grandfathered = bool(validation.validate_label_selector(old_selector, Path("selector")))
        return validate_pdb_spec(_spec_of(new), allow_invalid_label_value=grandfathered)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        """``ValidatePodDisruptionBudgetStatusUpdate`` (``/status``) as for policy/v1.

        Upstream skips the counter checks for v1beta1 requests; the hook is not
        told the request's version, so they always apply.
        """
        status = new.get("status") or {}
        path = Path("status")
        errs = validate_conditions(status.get("conditions") or [], path.child("conditions"))
        for name in _STATUS_COUNTS:
            errs += validation.validate_nonnegative_field(status.get(name) or 0, path.child(name))
        return errs


# --- resource -------------------------------------------------------------------------------


def _int_or_string_cell(name: str) -> Callable[[Object], str]:
    """``IntOrString.String()`` of a spec field, or N/A when unset (upstream's printer)."""

    def cell(obj: Object) -> str:
        value = _spec_of(obj).get(name)
        return "N/A" if value is None else str(value)

    return cell


def resources() -> list[Resource]:
    """The policy resources this module defines."""
    v1 = GroupVersionKind("policy", "v1", "PodDisruptionBudget")
    return [
        Resource(
            group="policy",
            kind="PodDisruptionBudget",
            plural="poddisruptionbudgets",
            singular="poddisruptionbudget",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1", PodDisruptionBudgetV1, Lifecycle(introduced=Version(1, 21))
                ),
                "v1beta1": ResourceVersion(
                    "v1beta1",
                    PodDisruptionBudgetV1beta1,
                    Lifecycle(
                        introduced=Version(1, 5),
                        deprecated=Version(1, 21),
                        removed=Version(1, 25),
                        replacement=v1,
                    ),
                    to_hub=v1beta1_to_hub,
                    from_hub=hub_to_v1beta1,
                    reads_as_hub=v1beta1_reads_as_hub,
                ),
            },
            hub_version="v1",
            storage_version="v1",
            strategy=PodDisruptionBudgetStrategy(),
            short_names=("pdb",),
            subresources=("status",),
            columns=(
                NAME,
                Column(
                    "Min Available",
                    "string",
                    "Selected pods that must stay available.",
                    _int_or_string_cell("minAvailable"),
                ),
                Column(
                    "Max Unavailable",
                    "string",
                    "Selected pods that may be unavailable.",
                    _int_or_string_cell("maxUnavailable"),
                ),
                Column(
                    "Allowed Disruptions",
                    "integer",
                    "Evictions allowed right now.",
                    lambda obj: (obj.get("status") or {}).get("disruptionsAllowed") or 0,
                ),
                AGE,
            ),
        )
    ]
