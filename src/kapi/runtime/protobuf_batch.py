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
    _f,
    _message,
    _opt,
    _rep,
    _req,
    register_kind,
)
from kapi.runtime.protobuf_pod import POD_TEMPLATE_SPEC

_BATCH = "k8s.io.api.batch.v1."
_BATCH_BETA = "k8s.io.api.batch.v1beta1."

POD_FAILURE_POLICY_RULE = _message(
    _BATCH + "PodFailurePolicyRule",
    _req(1, "action", STRING),
    _opt(
        2,
        "onExitCodes",
        _message(
            _BATCH + "PodFailurePolicyOnExitCodesRequirement",
            _opt(1, "containerName", STRING),
            _req(2, "operator", STRING),
            _rep(3, "values", INT32),
        ),
    ),
    _rep(
        3,
        "onPodConditions",
        _message(
            _BATCH + "PodFailurePolicyOnPodConditionsPattern",
            _req(1, "type", STRING),
            _req(2, "status", STRING),
        ),
    ),
)
SUCCESS_POLICY_RULE = _message(
    _BATCH + "SuccessPolicyRule",
    _opt(1, "succeededIndexes", STRING),
    _opt(2, "succeededCount", INT32),
)
JOB_SPEC = _message(
    _BATCH + "JobSpec",
    _opt(1, "parallelism", INT32),
    _opt(2, "completions", INT32),
    _opt(3, "activeDeadlineSeconds", INT64),
    _opt(4, "selector", LABEL_SELECTOR),
    _opt(5, "manualSelector", BOOL),
    _req(6, "template", POD_TEMPLATE_SPEC),
    _opt(7, "backoffLimit", INT32),
    _opt(8, "ttlSecondsAfterFinished", INT32),
    _opt(9, "completionMode", STRING),
    _opt(10, "suspend", BOOL),
    _opt(
        11,
        "podFailurePolicy",
        _message(_BATCH + "PodFailurePolicy", _rep(1, "rules", POD_FAILURE_POLICY_RULE)),
    ),
    _opt(12, "backoffLimitPerIndex", INT32),
    _opt(13, "maxFailedIndexes", INT32),
    _opt(14, "podReplacementPolicy", STRING),
    _opt(15, "managedBy", STRING),
    _opt(
        16,
        "successPolicy",
        _message(_BATCH + "SuccessPolicy", _rep(1, "rules", SUCCESS_POLICY_RULE)),
    ),
)


def _cron_job(package: str) -> str:
    """CronJob of one batch version: the same fields, each version's own message names."""
    job_template = _message(
        package + "JobTemplateSpec",
        _f(1, "metadata", OBJECT_META),
        _f(2, "spec", JOB_SPEC),
    )
    spec = _message(
        package + "CronJobSpec",
        _req(1, "schedule", STRING),
        _opt(2, "startingDeadlineSeconds", INT64),
        _f(3, "concurrencyPolicy", STRING),
        _opt(4, "suspend", BOOL),
        _req(5, "jobTemplate", job_template),
        _opt(6, "successfulJobsHistoryLimit", INT32),
        _opt(7, "failedJobsHistoryLimit", INT32),
        _opt(8, "timeZone", STRING),
    )
    status = _message(
        package + "CronJobStatus",
        _rep(1, "active", OBJECT_REFERENCE),
        _opt(4, "lastScheduleTime", TIME),
        _opt(5, "lastSuccessfulTime", TIME),
    )
    return _message(
        package + "CronJob",
        _f(1, "metadata", OBJECT_META),
        _f(2, "spec", spec),
        _f(3, "status", status),
    )


CRON_JOB = _cron_job(_BATCH)
CRON_JOB_BETA = _cron_job(_BATCH_BETA)

register_kind("batch/v1", "CronJob", CRON_JOB)
register_kind("batch/v1beta1", "CronJob", CRON_JOB_BETA)
