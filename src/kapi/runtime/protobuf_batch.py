"""Field tables of ``k8s.io/api/batch``: CronJob in ``v1`` and ``v1beta1``, and their lists.

kubectl 1.32 and later send ``kubectl create cronjob`` as protobuf, so kapi
reads and writes the CronJob of both served versions.  Both versions have the
same fields under the same numbers, and ``v1beta1``'s job template holds the
``v1`` ``JobSpec`` (upstream's ``batchv1.JobSpec``); the job's pod template is
tabled in :mod:`kapi.runtime.protobuf_pod`.  Numbers, pointers and
``omitempty`` follow ``k8s.io/api`` v0.37.0-beta.0.  Job itself is not a kind
here: kapi does not serve it.
"""

from __future__ import annotations

from kapi.runtime.protobuf_messages import (
    BOOL,
    INT32,
    INT64,
    LABEL_SELECTOR,
    OBJECT_META,
    OBJECT_REFERENCE,
    STRING,
    TIME,
    message,
    omitempty,
    pointer,
    register_kind,
    repeated,
    required,
)
from kapi.runtime.protobuf_pod import POD_TEMPLATE_SPEC

_BATCH = "k8s.io.api.batch.v1."
_BATCH_BETA = "k8s.io.api.batch.v1beta1."

POD_FAILURE_POLICY_RULE = message(
    _BATCH + "PodFailurePolicyRule",
    required(1, "action", STRING),
    pointer(
        2,
        "onExitCodes",
        message(
            _BATCH + "PodFailurePolicyOnExitCodesRequirement",
            pointer(1, "containerName", STRING),
            required(2, "operator", STRING),
            repeated(3, "values", INT32),
        ),
    ),
    repeated(
        3,
        "onPodConditions",
        message(
            _BATCH + "PodFailurePolicyOnPodConditionsPattern",
            required(1, "type", STRING),
            required(2, "status", STRING),
        ),
    ),
)
SUCCESS_POLICY_RULE = message(
    _BATCH + "SuccessPolicyRule",
    pointer(1, "succeededIndexes", STRING),
    pointer(2, "succeededCount", INT32),
)
JOB_SPEC = message(
    _BATCH + "JobSpec",
    pointer(1, "parallelism", INT32),
    pointer(2, "completions", INT32),
    pointer(3, "activeDeadlineSeconds", INT64),
    pointer(4, "selector", LABEL_SELECTOR),
    pointer(5, "manualSelector", BOOL),
    required(6, "template", POD_TEMPLATE_SPEC),
    pointer(7, "backoffLimit", INT32),
    pointer(8, "ttlSecondsAfterFinished", INT32),
    pointer(9, "completionMode", STRING),
    pointer(10, "suspend", BOOL),
    pointer(
        11,
        "podFailurePolicy",
        message(_BATCH + "PodFailurePolicy", repeated(1, "rules", POD_FAILURE_POLICY_RULE)),
    ),
    pointer(12, "backoffLimitPerIndex", INT32),
    pointer(13, "maxFailedIndexes", INT32),
    pointer(14, "podReplacementPolicy", STRING),
    pointer(15, "managedBy", STRING),
    pointer(
        16,
        "successPolicy",
        message(_BATCH + "SuccessPolicy", repeated(1, "rules", SUCCESS_POLICY_RULE)),
    ),
)


def _cron_job(package: str) -> str:
    """CronJob of one batch version: the same fields, each version's own message names."""
    job_template = message(
        package + "JobTemplateSpec",
        omitempty(1, "metadata", OBJECT_META),
        omitempty(2, "spec", JOB_SPEC),
    )
    spec = message(
        package + "CronJobSpec",
        required(1, "schedule", STRING),
        pointer(2, "startingDeadlineSeconds", INT64),
        omitempty(3, "concurrencyPolicy", STRING),
        pointer(4, "suspend", BOOL),
        required(5, "jobTemplate", job_template),
        pointer(6, "successfulJobsHistoryLimit", INT32),
        pointer(7, "failedJobsHistoryLimit", INT32),
        pointer(8, "timeZone", STRING),
    )
    status = message(
        package + "CronJobStatus",
        repeated(1, "active", OBJECT_REFERENCE),
        pointer(4, "lastScheduleTime", TIME),
        pointer(5, "lastSuccessfulTime", TIME),
    )
    return message(
        package + "CronJob",
        omitempty(1, "metadata", OBJECT_META),
        omitempty(2, "spec", spec),
        omitempty(3, "status", status),
    )


CRON_JOB = _cron_job(_BATCH)
CRON_JOB_BETA = _cron_job(_BATCH_BETA)

register_kind("batch/v1", "CronJob", CRON_JOB)
register_kind("batch/v1beta1", "CronJob", CRON_JOB_BETA)
