"""Field warnings of built-in strategies: accepted but problematic values, upstream's texts.

The texts are those of ``pkg/registry/batch/cronjob/strategy.go`` and
``pkg/registry/networking/ingress/strategy.go``; clients grep for them.
"""

from __future__ import annotations

from kapi.apis import batch, networking

INGRESS_CLASS_WARNING = (
    "annotation \"kubernetes.io/ingress.class\" is deprecated, please use 'spec.ingressClassName' "
    "instead"
)
TZ_WARNING = (
    "cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
    "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details"
)
NAME_WARNING = (
    "metadata.name: this is used in Pod names and hostnames, which can result in surprising "
    "behavior; a DNS label is recommended: [must not contain dots]"
)


def ingress(annotations: dict[str, str] | None = None, class_name: str | None = None) -> dict:
    spec = {"ingressClassName": class_name} if class_name is not None else {}
    return {"metadata": {"name": "i", "annotations": annotations or {}}, "spec": spec}


def cronjob(name: str = "nightly", schedule: str = "*/5 * * * *") -> dict:
    return {"metadata": {"name": name}, "spec": {"schedule": schedule}}


def test_ingress_class_annotation_warns_on_create_without_class_name() -> None:
    strategy = networking.IngressStrategy()
    annotated = ingress({"kubernetes.io/ingress.class": "nginx"})
    assert strategy.warnings_on_create(annotated) == [INGRESS_CLASS_WARNING]


def test_ingress_class_name_or_no_annotation_does_not_warn() -> None:
    strategy = networking.IngressStrategy()
    both = ingress({"kubernetes.io/ingress.class": "nginx"}, class_name="nginx")
    assert strategy.warnings_on_create(both) == []
    assert strategy.warnings_on_create(ingress({"other": "x"})) == []
    assert strategy.warnings_on_create({"metadata": {"name": "i"}}) == []


def test_ingress_update_does_not_warn_about_the_annotation() -> None:
    annotated = ingress({"kubernetes.io/ingress.class": "nginx"})
    assert networking.IngressStrategy().warnings_on_update(annotated, annotated) == []


def test_cronjob_name_that_is_not_a_dns_label_warns_on_create() -> None:
    strategy = batch.CronJobStrategy()
    assert strategy.warnings_on_create(cronjob("nightly.backup")) == [NAME_WARNING]
    assert strategy.warnings_on_create(cronjob("nightly-backup")) == []


def test_cronjob_name_warning_lists_every_message_as_go_prints_a_slice() -> None:
    name = "a" * 64  # too long for a label; still a valid object name
    assert batch.cronjob_name_warnings(cronjob(name)) == [
        NAME_WARNING.removesuffix("[must not contain dots]")
        + "[must be no more than 63 characters]"
    ]


def test_cronjob_tz_in_schedule_warns_on_update() -> None:
    strategy = batch.CronJobStrategy()
    old = cronjob(schedule="TZ=UTC 0 * * * *")
    new = cronjob(schedule="CRON_TZ=Europe/Paris 0 * * * *")
    assert strategy.warnings_on_update(new, old) == [TZ_WARNING]
    assert strategy.warnings_on_update(cronjob(), old) == []
