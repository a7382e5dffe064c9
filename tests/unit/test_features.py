"""Versioned feature gates, and the CRD fields dropped while a gate is off."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.apis.apiextensions_v1 import CustomResourceDefinitionStrategy
from kapi.features import KNOWN_FEATURES, FeatureGate, Stage, spec_at
from kapi.server import ServerConfig
from kapi.version import DEFAULT_VERSION, Version


@pytest.mark.parametrize(
    ("version", "stage", "default", "locked"),
    [
        (Version(1, 27), Stage.PRE_ALPHA, False, False),
        (Version(1, 28), Stage.ALPHA, False, False),
        (Version(1, 29), Stage.ALPHA, False, False),
        (Version(1, 30), Stage.BETA, True, False),
        (Version(1, 32), Stage.BETA, True, False),
        (Version(1, 33), Stage.GA, True, True),
    ],
)
def test_a_gates_spec_is_its_newest_one_not_after_the_release(
    version: Version, stage: Stage, default: bool, locked: bool
) -> None:
    spec = spec_at("CRDValidationRatcheting", version)
    assert (spec.stage, spec.default, spec.locked) == (stage, default, locked)


def test_specs_are_declared_oldest_first() -> None:
    for name, specs in KNOWN_FEATURES.items():
        releases = [spec.since for spec in specs]
        assert releases == sorted(set(releases)), name


def test_a_gate_not_yet_introduced_cannot_be_set() -> None:
    with pytest.raises(ValueError) as error:
        FeatureGate.parse("CustomResourceFieldSelectors=true", Version(1, 29))
    assert str(error.value) == (
        "cannot set feature gate CustomResourceFieldSelectors to true, "
        "feature is PreAlpha at emulated version 1.29"
    )
    assert not FeatureGate(emulated_version=Version(1, 29)).enabled("CustomResourceFieldSelectors")


def test_unknown_and_malformed_gates_are_refused_with_upstreams_words() -> None:
    with pytest.raises(ValueError, match=r"^unrecognized feature gate: NoSuchGate$"):
        FeatureGate.parse("NoSuchGate=true")
    with pytest.raises(ValueError, match=r"^missing bool value for APIServerIdentity$"):
        FeatureGate.parse("APIServerIdentity")


def test_the_server_config_resolves_gates_at_its_emulated_version() -> None:
    gates = FeatureGate.parse("APIServerIdentity=false")
    config = ServerConfig(feature_gates=gates, emulated_version=Version(1, 30))
    assert config.feature_gates.emulated_version == Version(1, 30)
    assert not config.feature_gates.enabled("APIServerIdentity")  # the override stays
    assert not config.feature_gates.enabled("CustomResourceFieldSelectors")  # alpha in 1.30
    assert ServerConfig().feature_gates.emulated_version == DEFAULT_VERSION
    with pytest.raises(ValueError, match="feature is locked to true"):
        ServerConfig(
            feature_gates=FeatureGate.parse("CustomResourceFieldSelectors=false", Version(1, 31))
        )


def _rule(**extra: Any) -> dict[str, Any]:
    return {"rule": "self == oldSelf", **extra}


def _crd(rule: dict[str, Any]) -> dict[str, Any]:
    schema = {
        "type": "object",
        "x-kubernetes-validations": [copy.deepcopy(rule)],
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {"type": "string", "x-kubernetes-validations": [rule]},
                    },
                    "labels": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "string",
                            "x-kubernetes-validations": [rule],
                        },
                    },
                },
            }
        },
    }
    version = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    return {"metadata": {"name": "x.example.com"}, "spec": {"versions": [version]}}


def _optional_old_self(crd: dict[str, Any]) -> list[Any]:
    root = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    spec = root["properties"]["spec"]["properties"]
    rules = [
        *root["x-kubernetes-validations"],
        *spec["items"]["items"]["x-kubernetes-validations"],
        *spec["labels"]["additionalProperties"]["x-kubernetes-validations"],
    ]
    return [rule.get("optionalOldSelf") for rule in rules]


def test_optional_old_self_is_dropped_while_ratcheting_is_off() -> None:
    off = CustomResourceDefinitionStrategy(FeatureGate(emulated_version=Version(1, 29)))
    crd = _crd(_rule(optionalOldSelf=True))
    off.prepare_for_create(crd)
    assert _optional_old_self(crd) == [None, None, None]

    # An update keeps it when the stored CRD already used it.
    updated = _crd(_rule(optionalOldSelf=True))
    off.prepare_for_update(updated, _crd(_rule(optionalOldSelf=False)))
    assert _optional_old_self(updated) == [True, True, True]

    on = CustomResourceDefinitionStrategy(FeatureGate(emulated_version=Version(1, 30)))
    kept = _crd(_rule(optionalOldSelf=True))
    on.prepare_for_create(kept)
    assert _optional_old_self(kept) == [True, True, True]
