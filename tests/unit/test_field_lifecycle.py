"""KEP-2558 lifecycle tags: printing as the KEP's text and parsing it back."""

from __future__ import annotations

import pytest

from kapi.runtime.lifecycle import (
    FieldLifecycle,
    LifecycleSyntaxError,
    at_version,
    extension,
    parse,
)
from kapi.version import Version


def test_prints_the_keps_tag_text() -> None:
    tag = FieldLifecycle("v1.30", "beta", "JobManagedBy")
    assert str(tag) == "+lifecycle:kubernetes:minVersion=v1.30,status=beta,featureGate=JobManagedBy"


@pytest.mark.parametrize(
    "text",
    [
        "+lifecycle:kubernetes:minVersion=v1.30,status=beta,featureGate=JobManagedBy",
        "+lifecycle:kubernetes:minVersion=v1.33,status=alpha,featureGate=X",
        "+lifecycle:istio:minVersion=v3.0.0",
        "+lifecycle:kubernetes:minVersion=v1.20,status=deprecated",
    ],
)
def test_round_trip(text: str) -> None:
    tag = parse(text)
    assert str(tag) == text
    assert parse(str(tag)) == tag


def test_parse_fields_and_component() -> None:
    tag = parse("+lifecycle:istio:minVersion=v3.0.0")
    assert tag == FieldLifecycle("v3.0.0", component="istio")
    both = (FieldLifecycle("v1.30", "beta", "JobManagedBy"), tag)
    assert extension(both) == {
        "kubernetes": {"minVersion": "v1.30", "status": "beta", "featureGate": "JobManagedBy"},
        "istio": {"minVersion": "v3.0.0"},
    }


@pytest.mark.parametrize(
    "text",
    [
        "",
        "lifecycle:kubernetes:minVersion=v1.30",  # no leading +
        "+lifecycle:minVersion=v1.30",  # no component
        "+lifecycle::minVersion=v1.30",  # empty component
        "+lifecycle:Kube rnetes:minVersion=v1.30",  # bad component
        "+lifecycle:kubernetes:status=beta",  # minVersion missing
        "+lifecycle:kubernetes:minVersion=v1.30,status",  # not key=value
        "+lifecycle:kubernetes:minVersion=",  # empty value
        "+lifecycle:kubernetes:minVersion=v1.30,,status=beta",  # empty item
        "+lifecycle:kubernetes:minVersion=v1.30,stage=beta",  # unknown key
        "+lifecycle:kubernetes:minVersion=v1.30,minVersion=v1.31",  # repeated key
    ],
)
def test_rejects_malformed(text: str) -> None:
    with pytest.raises(LifecycleSyntaxError):
        parse(text)


CLE = FieldLifecycle("v1.31", "beta", "CoordinatedLeaderElection")


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        (Version(1, 30), None),  # before the field existed
        (Version(1, 31), FieldLifecycle("v1.31", "alpha", "CoordinatedLeaderElection")),
        (Version(1, 32), FieldLifecycle("v1.31", "alpha", "CoordinatedLeaderElection")),
        (Version(1, 33), CLE),
    ],
)
def test_tag_follows_the_gates_stage_at_the_emulated_version(
    version: Version, expected: FieldLifecycle | None
) -> None:
    assert at_version(CLE, version) == expected


def test_tag_of_a_ga_gate_is_not_published() -> None:
    hints = FieldLifecycle("v1.21", "beta", "TopologyAwareHints")
    assert at_version(hints, Version(1, 32)) == hints
    assert at_version(hints, Version(1, 33)) is None
    assert extension((hints,), Version(1, 33)) == {}


def test_other_components_are_published_as_declared() -> None:
    istio = FieldLifecycle("v3.0.0", component="istio")
    assert at_version(istio, Version(1, 20)) == istio
