"""batch: ``Job`` (``v1``) and ``CronJob`` (``v1``, and the deprecated ``v1beta1``).

Job's rules live in :mod:`kapi.apis.batch_jobs`; this module declares the
kinds and their resources.  The two CronJob versions have the same fields and
defaults, so conversion only renames the version: a shallow copy, whose
``apiVersion`` the scheme sets, sharing the rest with the original.  A
CronJob's ``jobTemplate.spec`` is a ``JobSpec``: its pod template gets the pod
defaults, and it is validated as a Job's spec is (but for the selector, which
the CronJob controller generates).  Validation follows ``ValidateCronJobCreate``
/ ``ValidateCronJobUpdate`` of ``pkg/apis/batch/validation``; the strategies
follow ``pkg/registry/batch``.
"""

from __future__ import annotations

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError, Path, invalid, not_supported, required
from kapi.apis import batch_jobs
from kapi.apis.core_v1_pod_defaults import default_pod_template
from kapi.apis.generated import batch_v1, batch_v1beta1
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column, container_columns, label_selector_cell, since
from kapi.runtime.scheme import (
    GroupVersionKind,
    Lifecycle,
    Object,
    Resource,
    ResourceVersion,
    renamed_version,
)
from kapi.version import Version

ALLOW, FORBID, REPLACE = "Allow", "Forbid", "Replace"
CONCURRENCY_POLICIES = (ALLOW, FORBID, REPLACE)
#: Job names are ``<cronjob>-<11-character timestamp>`` and must fit a DNS-1035 label.
MAX_CRONJOB_NAME_LENGTH = 63 - 11

SCHEDULE_DOC = "When to run, in cron syntax (five fields, or a shorthand such as @hourly)."
TIME_ZONE_DOC = (
    "The IANA time zone the schedule is read in, such as Europe/Paris; unset, the "
    "controller manager's own time zone applies."
)
SUSPEND_DOC = "When true, no new runs start; runs already started go on. Defaults to false."
ACTIVE_DOC = "References to the jobs of this CronJob that are running now."
LAST_SCHEDULE_DOC = "When a job was last started for this CronJob."
JOB_SELECTOR_DOC = "The labels the jobs' pods are selected by."

# --- schema ---------------------------------------------------------------------------------

#: The kinds as generated from ``k8s.io/api`` (importing them registers their protobuf).
JobV1 = batch_v1.Job
CronJobV1 = batch_v1.CronJob
CronJobV1beta1 = batch_v1beta1.CronJob

# --- defaulting -----------------------------------------------------------------------------


def default_cronjob(obj: Object) -> None:
    """``SetDefaults_CronJob``, identical in v1 and v1beta1, and the pod template's defaults.

    The job template's own JobSpec fields are not defaulted (upstream defaults a Job,
    not a JobSpec): the Job the controller creates from it gets them.
    """
    spec = obj.setdefault("spec", {})
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = ALLOW
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    # The job template's pod template gets the pod-spec defaults (its spec is never nil).
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict):
        job_spec = job_template.get("spec")
        if job_spec is None:
            job_spec = job_template["spec"] = {}
        if isinstance(job_spec, dict):
            template = job_spec.get("template")
            if template is None:
                template = job_spec["template"] = {}
            if isinstance(template, dict):
                default_pod_template(template)


# --- validation -----------------------------------------------------------------------------

#: robfig/cron's ``ParseStandard`` shorthands.
_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")


def schedule_format_errors(schedule: str) -> list[str]:
    """The shape check of ``cron.ParseStandard``: a descriptor or exactly five fields.

    The values inside each field are not checked (kapi runs no CronJob controller).
    """
    fields = schedule.split()
    if fields and fields[0].startswith(("TZ=", "CRON_TZ=")):
        fields = fields[1:]
    if len(fields) == 1 and fields[0] in _DESCRIPTORS:
        return []
    if len(fields) == 2 and fields[0] == "@every":
        return []
    if len(fields) != 5:
        return [f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"]
    return []


def validate_job_template_spec(template: Object, path: Path) -> list[FieldError]:
    """``ValidateJobTemplateSpec``: a JobSpec whose selector the controller will generate."""
    job_spec = template.get("spec") or {}
    spec_path = path.child("spec")
    errs = batch_jobs.validate_job_spec_fields(job_spec, spec_path)
    if job_spec.get("selector") is not None:
        detail = "`selector` will be auto-generated"
        errs.append(invalid(spec_path.child("selector"), job_spec["selector"], detail))
    if job_spec.get("manualSelector") is True:
        errs.append(not_supported(spec_path.child("manualSelector"), True, ("nil", "false")))
    return errs


def validate_cronjob_spec(spec: Object, *, allow_tz_in_schedule: bool) -> list[FieldError]:
    """``validateCronJobSpec``, but for the rules on ``timeZone``."""
    path = Path("spec")
    errs: list[FieldError] = []
    schedule = spec.get("schedule") or ""
    if not schedule:
        errs.append(required(path.child("schedule")))
    else:
        schedule_path = path.child("schedule")
        errs += [invalid(schedule_path, schedule, m) for m in schedule_format_errors(schedule)]
        if "TZ" in schedule:
            if not allow_tz_in_schedule:
                detail = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
                errs.append(invalid(schedule_path, schedule, detail))
            elif spec.get("timeZone") is not None:
                detail = "cannot use both timeZone field and TZ or CRON_TZ in schedule"
                errs.append(invalid(schedule_path, schedule, detail))
    if spec.get("startingDeadlineSeconds") is not None:
        name = "startingDeadlineSeconds"
        errs += validation.validate_nonnegative_field(spec[name], path.child(name))
    policy = spec.get("concurrencyPolicy") or ""
    if not policy:
        errs.append(required(path.child("concurrencyPolicy")))
    elif policy not in CONCURRENCY_POLICIES:
        errs.append(not_supported(path.child("concurrencyPolicy"), policy, CONCURRENCY_POLICIES))
    errs += validate_job_template_spec(spec.get("jobTemplate") or {}, path.child("jobTemplate"))
    for name in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        if spec.get(name) is not None:
            errs += validation.validate_nonnegative_field(spec[name], path.child(name))
    return errs


# --- warnings (``WarningsOnCreate`` / ``WarningsOnUpdate`` of the cronjob strategy) ------------

NAME_NOT_DNS_LABEL_WARNING = (
    "metadata.name: this is used in Pod names and hostnames, which can result in surprising "
    "behavior; a DNS label is recommended: "
)
#: Upstream names the field ``spec.spec.schedule`` in this text (``field.NewPath("spec",
#: "spec", "schedule")``); clients may match on it, so the slip is kept.
TZ_IN_SCHEDULE_WARNING = (
    "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
    "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"
)


def cronjob_name_warnings(obj: Object) -> list[str]:
    """A name that is valid but not a DNS label (dots, say) makes odd pod hostnames."""
    messages = validation.is_dns1123_label(obj.get("metadata", {}).get("name") or "")
    if not messages:
        return []
    return [NAME_NOT_DNS_LABEL_WARNING + "[" + " ".join(messages) + "]"]  # Go's %v of []string


def cronjob_schedule_warnings(obj: Object) -> list[str]:
    """TZ in a schedule is rejected on create but kept on objects that had it: warn on those."""
    return [TZ_IN_SCHEDULE_WARNING] if "TZ" in (_spec_of(obj).get("schedule") or "") else []


def validate_cronjob_name(obj: Object) -> list[FieldError]:
    """Upstream's extra name rule: room for the suffix of the jobs a CronJob creates."""
    name = obj.get("metadata", {}).get("name") or ""
    if len(name) > MAX_CRONJOB_NAME_LENGTH:
        detail = f"must be no more than {MAX_CRONJOB_NAME_LENGTH} characters"
        return [invalid(Path("metadata", "name"), name, detail)]
    return []


# --- strategy -------------------------------------------------------------------------------


def _spec_of(obj: Object) -> Object:
    return obj.get("spec") or {}


class CronJobStrategy(Strategy):
    """Upstream ``cronJobStrategy``: generation, a status subresource, and TZ in the
    schedule tolerated only on objects that already had it."""

    has_generation = True
    has_status = True
    orphans_by_default_in = frozenset({("batch", "v1beta1")})

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {}  # a zero CronJobStatus: Go always serialises the struct

    def validate(self, obj: Object) -> list[FieldError]:
        spec_errs = validate_cronjob_spec(_spec_of(obj), allow_tz_in_schedule=False)
        return spec_errs + validate_cronjob_name(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        had_tz = "TZ" in (_spec_of(old).get("schedule") or "")
        return validate_cronjob_spec(_spec_of(new), allow_tz_in_schedule=had_tz)

    def warnings_on_create(self, obj: Object) -> list[str]:
        return cronjob_name_warnings(obj)

    def warnings_on_update(self, new: Object, old: Object) -> list[str]:
        return cronjob_schedule_warnings(new)


# --- resource -------------------------------------------------------------------------------


def _suspend_cell(obj: Object) -> str:
    """``printBoolPtr``: True / False, or ``<unset>``."""
    suspend = _spec_of(obj).get("suspend")
    return "<unset>" if suspend is None else str(bool(suspend))


def _time_zone_cell(obj: Object) -> str:
    time_zone = _spec_of(obj).get("timeZone")
    return "<none>" if time_zone is None else time_zone


def _last_schedule_cell(obj: Object) -> str:
    last = (obj.get("status") or {}).get("lastScheduleTime")
    return since(last) if last else "<none>"


def _job_template_spec(obj: Object) -> Object:
    return (_spec_of(obj).get("jobTemplate") or {}).get("spec") or {}


def _containers(obj: Object) -> list[Object]:
    pod = (_job_template_spec(obj).get("template") or {}).get("spec") or {}
    return pod.get("containers") or []


def resources() -> list[Resource]:
    """The batch resources this module defines."""
    return [
        Resource(
            group="batch",
            kind="Job",
            plural="jobs",
            singular="job",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1", JobV1, Lifecycle(introduced=Version(1, 2)), batch_jobs.default_job
                ),
            },
            hub_version="v1",
            storage_version="v1",
            strategy=batch_jobs.JobStrategy(),
            categories=("all",),
            subresources=("status",),
            columns=batch_jobs.JOB_COLUMNS,
        ),
        Resource(
            group="batch",
            kind="CronJob",
            plural="cronjobs",
            singular="cronjob",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1", CronJobV1, Lifecycle(introduced=Version(1, 21)), default_cronjob
                ),
                "v1beta1": renamed_version(
                    "v1beta1",
                    CronJobV1beta1,
                    Lifecycle(
                        introduced=Version(1, 8),
                        deprecated=Version(1, 21),
                        removed=Version(1, 25),
                        replacement=GroupVersionKind("batch", "v1", "CronJob"),
                    ),
                    default_cronjob,
                ),
            },
            hub_version="v1",
            storage_version="v1",
            strategy=CronJobStrategy(),
            short_names=("cj",),
            categories=("all",),
            subresources=("status",),
            columns=(
                NAME,
                Column(
                    "Schedule", "string", SCHEDULE_DOC, lambda o: _spec_of(o).get("schedule", "")
                ),
                Column("Timezone", "string", TIME_ZONE_DOC, _time_zone_cell),
                Column("Suspend", "boolean", SUSPEND_DOC, _suspend_cell),
                Column(
                    "Active",
                    "integer",
                    ACTIVE_DOC,
                    lambda o: len((o.get("status") or {}).get("active") or ()),
                ),
                Column("Last Schedule", "string", LAST_SCHEDULE_DOC, _last_schedule_cell),
                AGE,
                # -o wide: upstream's layoutContainerCells and FormatLabelSelector.
                *container_columns(_containers),
                Column(
                    "Selector",
                    "string",
                    JOB_SELECTOR_DOC,
                    lambda o: label_selector_cell(_job_template_spec(o).get("selector")),
                    priority=1,
                ),
            ),
        ),
    ]
