"""batch ``CronJob`` in ``v1`` (hub and storage) and the deprecated ``v1beta1``.

The two versions have the same fields and defaults (``k8s.io/api/batch``), so
conversion only renames the version: a shallow copy, whose ``apiVersion`` the
scheme sets, sharing the rest with the original (every read through v1beta1
converts, and the hub's own version is served with no copy at all).
``jobTemplate.spec`` (a ``JobSpec`` with its pod template) is declared as a
free-form struct that keeps unknown fields: kapi stores and returns it as sent
but neither prunes nor validates it, which keeps this module small; CronJob's
own fields follow upstream.  Validation follows ``ValidateCronJobCreate`` /
``ValidateCronJobUpdate`` of ``pkg/apis/batch/validation``; the strategy
follows ``pkg/registry/batch/cronjob``.
"""

from __future__ import annotations

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError, Path, invalid, not_supported, required
from kapi.apis.core_v1_endpoints import ObjectReference
from kapi.apis.generated import batch_v1beta1  # noqa: F401 -- registers CronJob for protobuf
from kapi.apis.generated.core_v1 import PodTemplateSpec
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME, Column, label_selector_cell, since
from kapi.runtime.meta import ObjectMeta, kind_struct
from kapi.runtime.schema import BOOLEAN, INT32, INT64, STRING, Field, List, Scalar, Struct, Time
from kapi.runtime.scheme import (
    GroupVersionKind,
    Lifecycle,
    Object,
    Resource,
    ResourceVersion,
    renamed_hub,
)
from kapi.version import Version

ALLOW, FORBID, REPLACE = "Allow", "Forbid", "Replace"
CONCURRENCY_POLICIES = (ALLOW, FORBID, REPLACE)
#: Job names are ``<cronjob>-<11-character timestamp>`` and must fit a DNS-1035 label.
MAX_CRONJOB_NAME_LENGTH = 63 - 11

_SPEC_AND_STATUS = (
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#spec-and-status"
)
SCHEDULE_DOC = "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."
TIME_ZONE_DOC = (
    "The time zone name for the given schedule, see "
    "https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will "
    "default to the time zone of the kube-controller-manager process."
)
SUSPEND_DOC = (
    "This flag tells the controller to suspend subsequent executions, it does not apply to "
    "already started executions.  Defaults to false."
)
ACTIVE_DOC = "A list of pointers to currently running jobs."
LAST_SCHEDULE_DOC = "Information when was the last time the job was successfully scheduled."
CONTAINERS_DOC = "Names of each container in the template."
IMAGES_DOC = "Images referenced by each container in the template."
JOB_SELECTOR_DOC = "A label query over pods that should match the pod count."

# --- schema ---------------------------------------------------------------------------------

#: Kept free-form on purpose (see the module docstring), but for the pod template's
#: patch metadata, which strategic merge patch needs to merge its containers.
JobSpec = Struct(
    "io.k8s.api.batch.v1.JobSpec",
    (
        Field(
            "template",
            PodTemplateSpec,
            "Describes the pod that will be created when executing a job.",
        ),
    ),
    "JobSpec describes how the job execution will look like.",
    preserve_unknown_fields=True,
)


def _cronjob_schema(version: str) -> Struct:
    """The kind in ``version``; both versions declare the same fields under their own names."""
    prefix = f"io.k8s.api.batch.{version}"
    job_template = Struct(
        f"{prefix}.JobTemplateSpec",
        (
            Field("metadata", ObjectMeta, "Standard object's metadata of the jobs created."),
            Field("spec", JobSpec, "Specification of the desired behavior of the job."),
        ),
        "JobTemplateSpec describes the data a Job should have when created from a template",
    )
    spec = Struct(
        f"{prefix}.CronJobSpec",
        (
            Field(
                "concurrencyPolicy",
                Scalar("string", enum=CONCURRENCY_POLICIES),
                "Specifies how to treat concurrent executions of a Job: Allow (default), "
                "Forbid or Replace.",
            ),
            Field(
                "failedJobsHistoryLimit",
                INT32,
                "The number of failed finished jobs to retain. Defaults to 1.",
            ),
            Field(
                "jobTemplate",
                job_template,
                "Specifies the job that will be created when executing a CronJob.",
                required=True,
            ),
            Field("schedule", STRING, SCHEDULE_DOC, required=True),
            Field(
                "startingDeadlineSeconds",
                INT64,
                "Optional deadline in seconds for starting the job if it misses scheduled time "
                "for any reason.  Missed jobs executions will be counted as failed ones.",
            ),
            Field(
                "successfulJobsHistoryLimit",
                INT32,
                "The number of successful finished jobs to retain. Defaults to 3.",
            ),
            Field("suspend", BOOLEAN, SUSPEND_DOC),
            Field("timeZone", STRING, TIME_ZONE_DOC),
        ),
        "CronJobSpec describes how the job execution will look like and when it will actually run.",
    )
    status = Struct(
        f"{prefix}.CronJobStatus",
        (
            Field("active", List(ObjectReference), ACTIVE_DOC),
            Field("lastScheduleTime", Time(), LAST_SCHEDULE_DOC),
            Field(
                "lastSuccessfulTime",
                Time(),
                "Information when was the last time the job successfully completed.",
            ),
        ),
        "CronJobStatus represents the current state of a cron job.",
    )
    return kind_struct(
        f"{prefix}.CronJob",
        (("batch", version, "CronJob"),),
        (
            Field(
                "spec",
                spec,
                "Specification of the desired behavior of a cron job, including the schedule. "
                + _SPEC_AND_STATUS,
            ),
            Field("status", status, f"Current status of a cron job. {_SPEC_AND_STATUS}"),
        ),
        "CronJob represents the configuration of a single cron job.",
    )


CronJobV1 = _cronjob_schema("v1")
CronJobV1beta1 = _cronjob_schema("v1beta1")

# --- defaulting -----------------------------------------------------------------------------


def default_cronjob(obj: Object) -> None:
    """``SetDefaults_CronJob``, identical in v1 and v1beta1."""
    spec = obj.setdefault("spec", {})
    if not spec.get("concurrencyPolicy"):
        spec["concurrencyPolicy"] = ALLOW
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)


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


def validate_cronjob_spec(spec: Object, *, allow_tz_in_schedule: bool) -> list[FieldError]:
    """``validateCronJobSpec`` without the job template (free-form here)."""
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
    for name in ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        if spec.get(name) is not None:
            errs += validation.validate_nonnegative_field(spec[name], path.child(name))
    policy = spec.get("concurrencyPolicy") or ""
    if not policy:
        errs.append(required(path.child("concurrencyPolicy")))
    elif policy not in CONCURRENCY_POLICIES:
        errs.append(not_supported(path.child("concurrencyPolicy"), policy, CONCURRENCY_POLICIES))
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
            kind="CronJob",
            plural="cronjobs",
            singular="cronjob",
            namespaced=True,
            versions={
                "v1": ResourceVersion(
                    "v1", CronJobV1, Lifecycle(introduced=Version(1, 21)), default_cronjob
                ),
                "v1beta1": ResourceVersion(
                    "v1beta1",
                    CronJobV1beta1,
                    Lifecycle(
                        introduced=Version(1, 8),
                        deprecated=Version(1, 21),
                        removed=Version(1, 25),
                        replacement=GroupVersionKind("batch", "v1", "CronJob"),
                    ),
                    default_cronjob,
                    to_hub=dict,
                    from_hub=dict,
                    reads_as_hub=renamed_hub,
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
                Column(
                    "Containers",
                    "string",
                    CONTAINERS_DOC,
                    lambda o: ",".join(c.get("name", "") for c in _containers(o)),
                    priority=1,
                ),
                Column(
                    "Images",
                    "string",
                    IMAGES_DOC,
                    lambda o: ",".join(c.get("image", "") for c in _containers(o)),
                    priority=1,
                ),
                Column(
                    "Selector",
                    "string",
                    JOB_SELECTOR_DOC,
                    lambda o: label_selector_cell(_job_template_spec(o).get("selector")),
                    priority=1,
                ),
            ),
        )
    ]
