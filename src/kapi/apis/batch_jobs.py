"""batch/v1 ``Job``: defaulting, the generated selector, validation, strategy and table.

Everything here works on plain dicts of the hub version (``batch/v1``), so the
rules are testable without a server.  The rules follow upstream's
``pkg/apis/batch/v1`` (defaults), ``pkg/apis/batch/validation`` (messages,
kept byte for byte because clients match on them) and ``pkg/registry/batch/job``
(the strategy); the code and its comments are kapi's.

``validate_job_spec_fields`` is shared with CronJob, whose ``jobTemplate.spec``
is a ``JobSpec`` too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import (
    OMIT_VALUE,
    FieldError,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from kapi.apimachinery.labels import Selector, SelectorParseError, label_selector_as_selector
from kapi.apimachinery.unstructured import Object
from kapi.apis.core_v1_pod_defaults import default_pod_template
from kapi.apis.core_v1_pod_validation import validate_pod_template_spec
from kapi.registry.strategy import Strategy
from kapi.registry.tables import (
    AGE,
    NAME,
    Column,
    container_columns,
    label_selector_cell,
    short_duration,
)
from kapi.runtime.strategy import GarbageCollectionPolicy

# --- label keys (k8s.io/api/batch/v1) -------------------------------------------------------

CONTROLLER_UID_LABEL = "batch.kubernetes.io/controller-uid"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
LEGACY_JOB_NAME_LABEL = "job-name"

NON_INDEXED, INDEXED = "NonIndexed", "Indexed"
COMPLETION_MODES = (NON_INDEXED, INDEXED)
#: Sorted, as upstream lists the values of a ``sets.Set`` in messages.
POD_REPLACEMENT_POLICIES = ("Failed", "TerminatingOrFailed")
POD_FAILURE_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
EXIT_CODE_OPERATORS = ("In", "NotIn")
CONDITION_STATUSES = ("False", "True", "Unknown")
RESTART_POLICIES = ("OnFailure", "Never")

MAX_INT32 = 2**31 - 1
MAX_PARALLELISM_INDEXED = 100_000
MAX_FAILED_INDEXES = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000
MAX_POD_FAILURE_RULES = 20
MAX_EXIT_CODE_VALUES = 255
MAX_POD_CONDITION_PATTERNS = 20
MAX_MANAGED_BY_LENGTH = 63
MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024
MAX_SUCCESS_RULES = 20

#: Upstream's warning for a batch/v1 delete that names no propagation (its pods stay).
ORPHANED_PODS_WARNING = (
    "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background "
    "to remove them or set propagationPolicy=Orphan to suppress this warning"
)


# --- defaulting (SetDefaults_Job) -----------------------------------------------------------


def default_job_spec(spec: Object) -> None:
    """The JobSpec part of upstream's Job defaults (also a CronJob's job template)."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        # With a per-index limit, the global one no longer bounds anything by default.
        spec["backoffLimit"] = MAX_INT32 if spec.get("backoffLimitPerIndex") is not None else 6
    if spec.get("completionMode") is None:
        spec["completionMode"] = NON_INDEXED
    if spec.get("suspend") is None:
        spec["suspend"] = False
    failure_policy = spec.get("podFailurePolicy")
    if isinstance(failure_policy, dict):
        for rule in failure_policy.get("rules") or ():
            for pattern in (rule or {}).get("onPodConditions") or ():
                if isinstance(pattern, dict) and not pattern.get("status"):
                    pattern["status"] = "True"
    if spec.get("podReplacementPolicy") is None:  # gate JobPodReplacementPolicy, on in 1.33
        spec["podReplacementPolicy"] = "Failed" if failure_policy else "TerminatingOrFailed"
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    template = spec.get("template")
    if isinstance(template, dict):
        default_pod_template(template)


def default_job(obj: Object) -> None:
    """Upstream's ``SetDefaults_Job`` with the pod template's defaults."""
    spec = obj.setdefault("spec", {})
    default_job_spec(spec)
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    metadata = obj.setdefault("metadata", {})
    if template_labels is not None and not metadata.get("labels"):
        metadata["labels"] = dict(template_labels)


# --- the generated selector (job strategy's PrepareForCreate) -------------------------------


def generate_selector(obj: Object) -> None:
    """Label the pod template with the job's name and uid and select on the uid.

    Labels the user already set are left alone: validation then refuses them
    if they disagree with the job.
    """
    metadata = obj.get("metadata") or {}
    name, uid = metadata.get("name") or "", metadata.get("uid") or ""
    spec = obj.setdefault("spec", {})
    template = spec.setdefault("template", {})
    labels = template.setdefault("metadata", {}).get("labels")
    if labels is None:
        labels = template["metadata"]["labels"] = {}
    for key in (LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL):
        labels.setdefault(key, name)
    for key in (LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL):
        labels.setdefault(key, uid)
    selector = spec.get("selector")
    if selector is None:
        selector = spec["selector"] = {}
    match_labels = selector.get("matchLabels")
    if match_labels is None:
        match_labels = selector["matchLabels"] = {}
    match_labels.setdefault(CONTROLLER_UID_LABEL, uid)


# --- label selectors ------------------------------------------------------------------------


def _selector(selector: Mapping[str, Any] | None) -> Selector | None:
    """``LabelSelectorAsSelector``, or ``None`` where it fails (upstream then skips the match)."""
    try:
        return label_selector_as_selector(selector)
    except SelectorParseError:
        return None


# --- validation -----------------------------------------------------------------------------

_TEMPLATE_META = Path("spec", "template", "metadata")


def _has_label(template: Object, key: str, expected: str) -> list[FieldError]:
    """``ValidateHasLabel`` on the pod template's labels."""
    labels = (template.get("metadata") or {}).get("labels") or {}
    path = _TEMPLATE_META.child("labels").key(key)
    if key not in labels:
        return [required(path, f"must be '{expected}'")]
    if labels[key] != expected:
        return [invalid(path, labels, f"must be '{expected}'")]
    return []


def validate_generated_selector(obj: Object, *, require_prefixed_labels: bool) -> list[FieldError]:
    """The labels and selector a job created without ``manualSelector`` must carry."""
    spec = obj.get("spec") or {}
    if spec.get("manualSelector") is True or spec.get("selector") is None:
        return []
    metadata = obj.get("metadata") or {}
    uid, name = metadata.get("uid") or "", metadata.get("name") or ""
    template = spec.get("template") or {}
    errs: list[FieldError] = []
    if not uid:
        errs.append(required(Path("metadata", "uid"), ""))
    errs += _has_label(template, LEGACY_CONTROLLER_UID_LABEL, uid)
    errs += _has_label(template, LEGACY_JOB_NAME_LABEL, name)
    expected: dict[str, str] = {}
    if require_prefixed_labels:
        errs += _has_label(template, CONTROLLER_UID_LABEL, uid)
        errs += _has_label(template, JOB_NAME_LABEL, name)
        expected[CONTROLLER_UID_LABEL] = uid
        expected[JOB_NAME_LABEL] = name
    expected[LEGACY_CONTROLLER_UID_LABEL] = uid
    expected[LEGACY_JOB_NAME_LABEL] = name
    selector = spec["selector"]
    compiled = _selector(selector)
    if compiled is not None and not compiled.matches(expected):
        errs.append(invalid(Path("spec", "selector"), selector, "`selector` not auto-generated"))
    return errs


_HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_HTTP_PATH_RE = re.compile(f"^{_HTTP_PATH_FMT}$")


def is_domain_prefixed_path(path: Path, value: str) -> list[FieldError]:
    """``IsDomainPrefixedPath``: ``<DNS subdomain>/<HTTP path>``."""
    if not value:
        return [required(path, "")]
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        detail = 'must be a domain-prefixed path (such as "acme.io/foo")'
        return [invalid(path, value, detail)]
    errs = [invalid(path, host, m) for m in validation.is_dns1123_subdomain(host)]
    if not _HTTP_PATH_RE.match(rest):
        errs.append(invalid(path, rest, validation.regex_error("Invalid path", _HTTP_PATH_FMT)))
    return errs


def _nonnegative(spec: Object, name: str, path: Path) -> list[FieldError]:
    value = spec.get(name)
    if value is None:
        return []
    return validation.validate_nonnegative_field(value, path.child(name))


def validate_job_spec_fields(spec: Object, path: Path) -> list[FieldError]:
    """``validateJobSpec``: every JobSpec rule but the selector's (shared with CronJob)."""
    errs: list[FieldError] = []
    for name in (
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
    ):
        errs += _nonnegative(spec, name, path)
    parallelism = spec.get("parallelism")
    completions = spec.get("completions")
    per_index = spec.get("backoffLimitPerIndex")
    max_failed = spec.get("maxFailedIndexes")
    if max_failed is not None:
        errs += _nonnegative(spec, "maxFailedIndexes", path)
        if per_index is None:
            errs.append(
                required(path.child("backoffLimitPerIndex"), "when maxFailedIndexes is specified")
            )
    managed_by = spec.get("managedBy")
    if managed_by is not None:
        errs += is_domain_prefixed_path(path.child("managedBy"), managed_by)
        if len(managed_by) > MAX_MANAGED_BY_LENGTH:
            errs.append(too_long(path.child("managedBy"), managed_by, MAX_MANAGED_BY_LENGTH))
    mode = spec.get("completionMode")
    if mode is not None:
        if mode not in COMPLETION_MODES:
            errs.append(not_supported(path.child("completionMode"), mode, COMPLETION_MODES))
        if mode == INDEXED:
            errs += _indexed_rules(parallelism, completions, per_index, max_failed, path)
    if mode is None or mode == NON_INDEXED:
        if per_index is not None:
            detail = "requires indexed completion mode"
            errs.append(invalid(path.child("backoffLimitPerIndex"), per_index, detail))
        if max_failed is not None:
            errs.append(
                invalid(
                    path.child("maxFailedIndexes"), max_failed, "requires indexed completion mode"
                )
            )
    if spec.get("podFailurePolicy") is not None:
        errs += _validate_pod_failure_policy(spec, path.child("podFailurePolicy"))
    success = spec.get("successPolicy")
    if success is not None:
        if (mode or NON_INDEXED) != INDEXED:
            detail = "requires indexed completion mode"
            errs.append(invalid(path.child("successPolicy"), success, detail))
        else:
            errs += _validate_success_policy(spec, path.child("successPolicy"))
    errs += _validate_pod_replacement_policy(spec, path.child("podReplacementPolicy"))
    template = spec.get("template") or {}
    errs += validate_pod_template_spec(template, path.child("template"))
    restart = (template.get("spec") or {}).get("restartPolicy") or ""
    restart_path = path.child("template", "spec", "restartPolicy")
    if restart in ("Always", ""):
        # Always is what the pod defaults give an unset policy: upstream asks for a value.
        errs.append(required(restart_path, 'valid values: "OnFailure", "Never"'))
    elif restart not in RESTART_POLICIES:
        errs.append(not_supported(restart_path, restart, RESTART_POLICIES))
    elif spec.get("podFailurePolicy") is not None and restart != "Never":
        detail = 'only "Never" is supported when podFailurePolicy is specified'
        errs.append(invalid(restart_path, restart, detail))
    return errs


def _indexed_rules(
    parallelism: int | None,
    completions: int | None,
    per_index: int | None,
    max_failed: int | None,
    path: Path,
) -> list[FieldError]:
    errs: list[FieldError] = []
    if completions is None:
        errs.append(required(path.child("completions"), f"when completion mode is {INDEXED}"))
    if parallelism is not None and parallelism > MAX_PARALLELISM_INDEXED:
        detail = (
            f"must be less than or equal to {MAX_PARALLELISM_INDEXED} "
            f"when completion mode is {INDEXED}"
        )
        errs.append(invalid(path.child("parallelism"), parallelism, detail))
    if completions is not None and max_failed is not None and max_failed > completions:
        detail = "must be less than or equal to completions"
        errs.append(invalid(path.child("maxFailedIndexes"), max_failed, detail))
    if max_failed is not None and max_failed > MAX_FAILED_INDEXES:
        detail = f"must be less than or equal to {MAX_FAILED_INDEXES}"
        errs.append(invalid(path.child("maxFailedIndexes"), max_failed, detail))
    if completions is not None and completions > COMPLETIONS_SOFT_LIMIT and per_index is not None:
        if max_failed is None:
            detail = f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"
            errs.append(required(path.child("maxFailedIndexes"), detail))
        suffix = (
            f"when completions are above {COMPLETIONS_SOFT_LIMIT} "
            "and used with backoff limit per index"
        )
        if parallelism is not None and parallelism > PARALLELISM_LIMIT_HIGH_COMPLETIONS:
            detail = f"must be less than or equal to {PARALLELISM_LIMIT_HIGH_COMPLETIONS} {suffix}"
            errs.append(invalid(path.child("parallelism"), parallelism, detail))
        if max_failed is not None and max_failed > MAX_FAILED_INDEXES_HIGH_COMPLETIONS:
            detail = f"must be less than or equal to {MAX_FAILED_INDEXES_HIGH_COMPLETIONS} {suffix}"
            errs.append(invalid(path.child("maxFailedIndexes"), max_failed, detail))
    return errs


def _go_quoted_list(values: tuple[str, ...]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def _container_names(spec: Object) -> set[str]:
    pod = (spec.get("template") or {}).get("spec") or {}
    containers = (pod.get("containers") or []) + (pod.get("initContainers") or [])
    return {c.get("name", "") for c in containers if isinstance(c, dict)}


def _validate_pod_failure_policy(spec: Object, path: Path) -> list[FieldError]:
    rules = (spec.get("podFailurePolicy") or {}).get("rules") or []
    rules_path = path.child("rules")
    errs: list[FieldError] = []
    if len(rules) > MAX_POD_FAILURE_RULES:
        errs.append(too_many(rules_path, len(rules), MAX_POD_FAILURE_RULES))
    names = _container_names(spec)
    for i, rule in enumerate(rules):
        errs += _validate_failure_rule(spec, rule or {}, rules_path.index(i), names)
    return errs


def _validate_failure_rule(
    spec: Object, rule: Object, path: Path, names: set[str]
) -> list[FieldError]:
    errs: list[FieldError] = []
    action = rule.get("action") or ""
    action_path = path.child("action")
    if not action:
        errs.append(required(action_path, f"valid values: {_go_quoted_list(POD_FAILURE_ACTIONS)}"))
    elif action == "FailIndex":
        if spec.get("backoffLimitPerIndex") is None:
            detail = "requires the backoffLimitPerIndex to be set"
            errs.append(invalid(action_path, action, detail))
    elif action not in POD_FAILURE_ACTIONS:
        errs.append(not_supported(action_path, action, POD_FAILURE_ACTIONS))
    on_exit = rule.get("onExitCodes")
    on_conditions = rule.get("onPodConditions") or []
    if on_exit is not None:
        errs += _validate_on_exit_codes(on_exit, path.child("onExitCodes"), names)
    if on_conditions:
        errs += _validate_on_pod_conditions(on_conditions, path.child("onPodConditions"))
    if on_exit is not None and on_conditions:
        detail = "specifying both OnExitCodes and OnPodConditions is not supported"
        errs.append(invalid(path, OMIT_VALUE, detail))
    if on_exit is None and not on_conditions:
        detail = "specifying one of OnExitCodes and OnPodConditions is required"
        errs.append(invalid(path, OMIT_VALUE, detail))
    return errs


def _validate_on_pod_conditions(patterns: list[Object], path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if len(patterns) > MAX_POD_CONDITION_PATTERNS:
        errs.append(too_many(path, len(patterns), MAX_POD_CONDITION_PATTERNS))
    for j, pattern in enumerate(patterns):
        pattern_path = path.index(j)
        type_path = pattern_path.child("type")
        cond_type = (pattern or {}).get("type") or ""
        errs += [invalid(type_path, cond_type, m) for m in validation.is_qualified_name(cond_type)]
        status = (pattern or {}).get("status") or ""
        status_path = pattern_path.child("status")
        if not status:
            detail = f"valid values: {_go_quoted_list(CONDITION_STATUSES)}"
            errs.append(required(status_path, detail))
        elif status not in CONDITION_STATUSES:
            errs.append(not_supported(status_path, status, CONDITION_STATUSES))
    return errs


def _validate_on_exit_codes(on_exit: Object, path: Path, names: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    operator = on_exit.get("operator") or ""
    operator_path = path.child("operator")
    if not operator:
        detail = f"valid values: {_go_quoted_list(EXIT_CODE_OPERATORS)}"
        errs.append(required(operator_path, detail))
    elif operator not in EXIT_CODE_OPERATORS:
        errs.append(not_supported(operator_path, operator, EXIT_CODE_OPERATORS))
    container = on_exit.get("containerName")
    if container is not None and container not in names:
        detail = "must be one of the container or initContainer names in the pod template"
        errs.append(invalid(path.child("containerName"), container, detail))
    values = on_exit.get("values") or []
    values_path = path.child("values")
    if not values:
        errs.append(invalid(values_path, values, "at least one value is required"))
    elif len(values) > MAX_EXIT_CODE_VALUES:
        errs.append(too_many(values_path, len(values), MAX_EXIT_CODE_VALUES))
    seen: set[int] = set()
    ordered = True
    for j, value in enumerate(values):
        value_path = values_path.index(j)
        if operator == "In" and value == 0:
            errs.append(invalid(value_path, value, "must not be 0 for the In operator"))
        if value in seen:
            errs.append(duplicate(value_path, value))
        else:
            seen.add(value)
        if j > 0 and values[j - 1] > value:
            ordered = False
    if not ordered:
        errs.append(invalid(values_path, values, "must be ordered"))
    return errs


def _validate_pod_replacement_policy(spec: Object, path: Path) -> list[FieldError]:
    policy = spec.get("podReplacementPolicy")
    if policy is None:
        return []
    if spec.get("podFailurePolicy") is not None:
        return [] if policy == "Failed" else [not_supported(path, policy, ("Failed",))]
    if policy not in POD_REPLACEMENT_POLICIES:
        return [not_supported(path, policy, POD_REPLACEMENT_POLICIES)]
    return []


def parse_indexes(text: str, completions: int) -> tuple[int, str | None]:
    """Count the indexes of ``1,3-5`` style text; the error text as upstream's parser's."""
    if not text:
        return 0, None
    total = 0
    last = -1
    for interval in text.split(","):
        first_text, dash, last_text = interval.partition("-")
        try:
            lo = _parse_index(first_text, completions)
            hi = _parse_index(last_text, completions) if dash else lo
        except ValueError as err:
            return total, str(err)
        if hi < lo:
            return total, f"non-increasing order, previous: {lo}, current: {hi}"
        if lo <= last:
            return total, f"overlapping intervals, previous: {last}, current: {lo}"
        total += hi - lo + 1
        last = hi
    return total, None


def _parse_index(text: str, completions: int) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise ValueError(f'cannot convert string to integer for index: "{text}"') from None
    if value < 0:
        raise ValueError(f"index must be greater than or equal to 0, got {value}")
    if value >= completions:
        raise ValueError(f"too large index: {value}")
    return value


def _validate_success_policy(spec: Object, path: Path) -> list[FieldError]:
    rules = (spec.get("successPolicy") or {}).get("rules") or []
    rules_path = path.child("rules")
    errs: list[FieldError] = []
    if not rules:
        detail = "at least one rules must be specified when the successPolicy is specified"
        errs.append(required(rules_path, detail))
    if len(rules) > MAX_SUCCESS_RULES:
        errs.append(too_many(rules_path, len(rules), MAX_SUCCESS_RULES))
    completions = spec.get("completions") or 0
    for i, rule in enumerate(rules):
        rule_path = rules_path.index(i)
        rule = rule or {}
        count, indexes = rule.get("succeededCount"), rule.get("succeededIndexes")
        if count is None and indexes is None:
            detail = "at least one of succeededCount or succeededIndexes must be specified"
            errs.append(required(rule_path, detail))
        total = 0
        if indexes is not None:
            indexes_path = rule_path.child("succeededIndexes")
            if len(indexes) > MAX_SUCCEEDED_INDEXES_LENGTH:
                errs.append(too_long(indexes_path, indexes, MAX_SUCCEEDED_INDEXES_LENGTH))
            total, error = parse_indexes(indexes, completions)
            if error is not None:
                detail = f"error parsing succeededIndexes: {error}"
                errs.append(invalid(indexes_path, indexes, detail))
        if count is not None:
            count_path = rule_path.child("succeededCount")
            errs += validation.validate_nonnegative_field(count, count_path)
            if count > completions:
                detail = (
                    f"must be less than or equal to {completions} "
                    "(the number of specified completions)"
                )
                errs.append(invalid(count_path, count, detail))
            if indexes is not None and count > total:
                detail = (
                    f"must be less than or equal to {total} "
                    "(the number of indexes in the specified succeededIndexes field)"
                )
                errs.append(invalid(count_path, count, detail))
    return errs


def validate_job_spec(spec: Object, path: Path) -> list[FieldError]:
    """``ValidateJobSpec``: the fields, a required valid selector, and it selecting the pods."""
    errs = validate_job_spec_fields(spec, path)
    selector = spec.get("selector")
    if selector is None:
        errs.append(required(path.child("selector"), ""))
    else:
        errs += validation.validate_label_selector(selector, path.child("selector"))
    compiled = _selector(selector)
    if compiled is not None:
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if not compiled.matches(labels):
            detail = "`selector` does not match template `labels`"
            raw = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
            errs.append(invalid(path.child("template", "metadata", "labels"), raw, detail))
    return errs


def validate_job(obj: Object, *, require_prefixed_labels: bool = True) -> list[FieldError]:
    """``ValidateJob`` without ObjectMeta (the generic store checks that)."""
    spec = obj.get("spec") or {}
    errs = validate_generated_selector(obj, require_prefixed_labels=require_prefixed_labels)
    errs += validate_job_spec(spec, Path("spec"))
    completions = spec.get("completions")
    if spec.get("completionMode") == INDEXED and completions is not None and completions > 0:
        # Indexed pods are named <job>-<index>: the last of them must still be a DNS label.
        name = (obj.get("metadata") or {}).get("name") or ""
        hostname = f"{name}-{completions - 1}"
        if validation.is_dns1123_label(hostname):
            detail = f"will not able to create pod with invalid DNS label: {hostname}"
            errs.append(invalid(Path("metadata", "name"), name, detail))
    return errs


def _validate_completions_update(new: Object, old: Object, path: Path) -> list[FieldError]:
    """Completions are immutable, but an Indexed job may scale them with parallelism."""
    if new.get("completionMode") != INDEXED:
        return validation.validate_immutable_field(
            new.get("completions"), old.get("completions"), path
        )
    completions = new.get("completions")
    if completions == old.get("completions") or completions is None:
        return []
    if completions != new.get("parallelism"):
        detail = "can only be modified in tandem with spec.parallelism"
        return [invalid(path, completions, detail)]
    return []


def validate_job_spec_update(
    new: Object, old: Object, *, mutable_scheduling: bool
) -> list[FieldError]:
    """``ValidateJobSpecUpdate``'s immutability rules (the spec itself is validated apart)."""
    path = Path("spec")
    errs = _validate_completions_update(new, old, path.child("completions"))
    errs += validation.validate_immutable_field(
        new.get("selector"), old.get("selector"), path.child("selector")
    )
    template, old_template = new.get("template"), old.get("template")
    if mutable_scheduling and isinstance(old_template, dict) and isinstance(template, dict):
        old_template = _with_scheduling_of(old_template, template)
    errs += validation.validate_immutable_field(template, old_template, path.child("template"))
    for name in (
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ):
        errs += validation.validate_immutable_field(new.get(name), old.get(name), path.child(name))
    return errs


def _with_scheduling_of(old: Object, new: Object) -> Object:
    """``old`` with ``new``'s scheduling directives: what a suspended, unstarted job may change."""
    result = {
        **old,
        "metadata": dict(old.get("metadata") or {}),
        "spec": dict(old.get("spec") or {}),
    }
    new_meta, new_spec = new.get("metadata") or {}, new.get("spec") or {}
    for key in ("labels", "annotations"):
        _copy_key(new_meta, result["metadata"], key)
    for key in ("nodeSelector", "tolerations", "schedulingGates"):
        _copy_key(new_spec, result["spec"], key)
    old_affinity = result["spec"].get("affinity")
    new_affinity = new_spec.get("affinity")
    if new_affinity is None and old_affinity is not None:
        rest = {k: v for k, v in old_affinity.items() if k != "nodeAffinity"}
        if rest:
            result["spec"]["affinity"] = rest
        else:
            result["spec"].pop("affinity", None)
    elif new_affinity is not None:
        merged = {k: v for k, v in (old_affinity or {}).items() if k != "nodeAffinity"}
        if "nodeAffinity" in new_affinity:
            merged["nodeAffinity"] = new_affinity["nodeAffinity"]
        result["spec"]["affinity"] = merged
    if not result["metadata"] and "metadata" not in old:
        del result["metadata"]
    return result


def _copy_key(source: Object, target: Object, key: str) -> None:
    if key in source:
        target[key] = source[key]
    else:
        target.pop(key, None)


def validate_job_status(obj: Object) -> list[FieldError]:
    """The counters of a job's status must not be negative."""
    status = obj.get("status") or {}
    path = Path("status")
    errs: list[FieldError] = []
    for name in ("active", "succeeded", "failed", "ready", "terminating"):
        errs += _nonnegative(status, name, path)
    return errs


def job_name_warnings(obj: Object) -> list[str]:
    """A job's name becomes its pods' hostname prefix: warn when it is not a DNS label."""
    name = (obj.get("metadata") or {}).get("name") or ""
    messages = validation.is_dns1123_label(name)
    if not messages:
        return []
    return [
        "metadata.name: this is used in Pod names and hostnames, which can result in surprising "
        "behavior; a DNS label is recommended: [" + " ".join(messages) + "]"
    ]


# --- strategy -------------------------------------------------------------------------------


class JobStrategy(Strategy):
    """Upstream's ``jobStrategy``: generation, status subresource, the generated selector."""

    has_generation = True
    has_status = True
    #: batch/v1 deletes leave the pods unless told otherwise, and say so.
    orphans_by_default_in = frozenset({("batch", "v1")})

    def warnings_on_delete(self, propagation_given: bool) -> list[str]:
        policy = self.default_garbage_collection_policy()
        orphans = policy is GarbageCollectionPolicy.ORPHAN_DEPENDENTS
        return [] if propagation_given or not orphans else [ORPHANED_PODS_WARNING]

    def prepare_for_create(self, obj: Object) -> None:
        spec = obj.setdefault("spec", {})
        if spec.get("manualSelector") is not True:
            generate_selector(obj)
        obj["status"] = {}  # a zero JobStatus
        # Upstream applies the Job defaults again when it reads the stored object, which
        # copies the now generated template labels onto a job that had none.
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
        metadata = obj.setdefault("metadata", {})
        if labels and not metadata.get("labels"):
            metadata["labels"] = dict(labels)

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_job(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        old_spec = old.get("spec") or {}
        old_labels = ((old_spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        # Jobs created before the prefixed labels existed keep validating without them.
        prefixed = CONTROLLER_UID_LABEL in old_labels
        errs = validate_job(new, require_prefixed_labels=prefixed)
        suspended = old_spec.get("suspend") is True
        not_started = (old.get("status") or {}).get("startTime") is None
        errs += validate_job_spec_update(
            new.get("spec") or {}, old_spec, mutable_scheduling=suspended and not_started
        )
        return errs

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return validate_job_status(new)

    def warnings_on_create(self, obj: Object) -> list[str]:
        return job_name_warnings(obj)


# --- table (printJob) -----------------------------------------------------------------------


def _spec(obj: Object) -> Object:
    return obj.get("spec") or {}


def _status(obj: Object) -> Object:
    return obj.get("status") or {}


def _has_condition(obj: Object, cond_type: str) -> bool:
    return any(
        c.get("type") == cond_type and c.get("status") == "True"
        for c in _status(obj).get("conditions") or ()
    )


def job_status_cell(obj: Object) -> str:
    """The STATUS column: the first of the terminal, deleting, suspended states, else Running."""
    if _has_condition(obj, "Complete"):
        return "Complete"
    if _has_condition(obj, "Failed"):
        return "Failed"
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    if _has_condition(obj, "Suspended"):
        return "Suspended"
    if _has_condition(obj, "FailureTarget"):
        return "FailureTarget"
    return "Running"


def job_completions_cell(obj: Object) -> str:
    succeeded = _status(obj).get("succeeded") or 0
    completions = _spec(obj).get("completions")
    if completions is not None:
        return f"{succeeded}/{completions}"
    parallelism = _spec(obj).get("parallelism") or 0
    if parallelism > 1:
        return f"{succeeded}/1 of {parallelism}"
    return f"{succeeded}/1"


def _parse_time(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def job_duration_cell(obj: Object) -> str:
    """From start to completion, or to now while running; empty before it starts."""
    start = _status(obj).get("startTime")
    if not start:
        return ""
    end = _status(obj).get("completionTime")
    finished = _parse_time(end) if end else datetime.now(UTC)
    return short_duration((finished - _parse_time(start)).total_seconds())


def _containers(obj: Object) -> list[Object]:
    return ((_spec(obj).get("template") or {}).get("spec") or {}).get("containers") or []


JOB_COLUMNS = (
    NAME,
    Column("Status", "string", "The job's state: Complete, Failed, Running, ...", job_status_cell),
    Column(
        "Completions",
        "string",
        "Pods that succeeded, out of the completions the job wants.",
        job_completions_cell,
    ),
    Column("Duration", "string", "How long the job ran or has been running.", job_duration_cell),
    AGE,
    *container_columns(_containers),
    Column(
        "Selector",
        "string",
        "The labels the job's pods are selected by.",
        lambda o: label_selector_cell(_spec(o).get("selector")),
        priority=1,
    ),
)
