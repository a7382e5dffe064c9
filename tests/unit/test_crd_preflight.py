"""The pre-flight report's verdicts and warnings, without a server (the HTTP side is in
tests/integration/test_crd_preflight.py)."""

from __future__ import annotations

import copy
from typing import Any

from kapi.apiextensions.preflight import MAX_LINE, Checker, Finding, Report, Verdict
from kapi.features import FeatureGate
from kapi.version import Version
from kapi.webhook import WebhookClientManager

GROUP = "example.com"


def crd(spec_schema: dict[str, Any], *, versions: tuple[str, ...] = ("v1",)) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": spec_schema}}
    return {
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "conversion": {"strategy": "None"},
            "versions": [
                {
                    "name": name,
                    "served": True,
                    "storage": i == 0,
                    "schema": {"openAPIV3Schema": copy.deepcopy(schema)},
                }
                for i, name in enumerate(versions)
            ],
        },
        "status": {"acceptedNames": {"plural": "widgets", "kind": "Widget"}},
    }


def widget(name: str, version: str = "v1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "demo"},
        "spec": spec,
    }


def report(
    new: dict[str, Any], *objects: dict[str, Any], gates: FeatureGate | None = None
) -> Report:
    checker = Checker(new, WebhookClientManager(), gates or FeatureGate())
    for obj in objects:
        checker.check(obj)
    return checker.report


def verdicts(r: Report) -> list[tuple[str, str, Verdict]]:
    return [(f.object, f.version, f.verdict) for f in r.findings]


RULES = {
    "type": "object",
    "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
    "x-kubernetes-validations": [
        {"rule": "self.min <= self.max"},
        {"rule": "self.max > 0"},
    ],
}


def test_a_failed_rule_ratchets_but_an_evaluation_error_does_not() -> None:
    r = report(
        crd(RULES),
        widget("fine", min=1, max=2),
        widget("inverted", min=3, max=2),
        widget("no-max", min=3),  # "no such key: max": never forgiven
    )
    assert verdicts(r) == [
        ("demo/inverted", "v1", Verdict.RATCHETS),
        ("demo/no-max", "v1", Verdict.REJECTED),
    ]
    assert r.findings[0].error == "spec: Invalid value: failed rule: self.min <= self.max"
    assert r.objects == 3
    assert r.verdict is Verdict.REJECTED


def test_with_the_gate_off_nothing_ratchets() -> None:
    schema = {"type": "object", "properties": {"count": {"type": "integer", "minimum": 10}}}
    new = crd(schema)
    off = FeatureGate.parse("CRDValidationRatcheting=false", Version(1, 32))
    assert verdicts(report(new, widget("low", count=4))) == [("demo/low", "v1", Verdict.RATCHETS)]
    assert verdicts(report(new, widget("low", count=4), gates=off)) == [
        ("demo/low", "v1", Verdict.REJECTED)
    ]


def test_none_conversion_checks_every_served_version() -> None:
    new = crd(
        {"type": "object", "properties": {"count": {"type": "integer"}}}, versions=("v1", "v2")
    )
    new["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "count"
    ]["maximum"] = 5
    r = report(new, widget("big", count=9))
    assert verdicts(r) == [("demo/big", "v2", Verdict.RATCHETS)]


def test_webhook_conversion_checks_the_stored_version_only() -> None:
    schema = {"type": "object", "properties": {"count": {"type": "integer", "maximum": 5}}}
    new = crd(schema, versions=("v1", "v2"))
    new["spec"]["conversion"] = {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {"url": "https://convert.example.com/"},
            "conversionReviewVersions": ["v1"],
        },
    }
    new["spec"]["versions"][1]["served"] = False
    r = report(new, widget("in-v1", count=9), widget("in-v2", "v2", count=9))
    assert verdicts(r) == [("demo/in-v1", "v1", Verdict.RATCHETS)]
    assert r.unchecked == 1
    assert r.warnings()[-1] == (
        "preflight: 1 stored Widget objects not checked: the CRD converts with a webhook "
        "and they are stored in a version it does not serve"
    )


def test_status_is_not_created_but_is_updated() -> None:
    new = crd({"type": "object"})
    root = new["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    root["properties"]["status"] = {
        "type": "object",
        "properties": {"phase": {"type": "string", "enum": ["Ready"]}},
    }
    new["spec"]["versions"][0]["subresources"] = {"status": {}}
    obj = widget("w")
    obj["status"] = {"phase": "Broken"}
    # A create drops status; an unchanged update keeps it and forgives the unchanged value.
    assert verdicts(report(new, obj)) == []


def test_warnings_are_bounded_and_short() -> None:
    r = Report("Widget", ["v1"], objects=30)
    for i in range(25):
        verdict = Verdict.REJECTED if i == 24 else Verdict.RATCHETS
        r.add(Finding(f"demo/w{i:02}", "v1", verdict, "spec.x: Invalid value: " + "y" * 400, 1))
    texts = r.warnings()
    assert texts[0] == (
        "preflight: 25 of 30 stored Widget objects would be rejected on create by the new "
        "schema: 24 accepted unchanged (ratcheting), 1 rejected even unchanged"
    )
    assert len(texts) == 22
    assert all(len(t) <= MAX_LINE for t in texts[1:21])
    assert texts[1].endswith("yyy...")
    assert texts[-1] == "preflight: 5 more (object, version) rejections not listed"
    # The whole report fits the 4096-character warning budget of one response.
    assert sum(len(t) for t in texts) < 4096
    assert Report("Widget", ["v1"], objects=3).warnings() == []
