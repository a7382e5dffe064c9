"""flowcontrol.apiserver.k8s.io: defaults, conversions, the built-in objects and the
ensurer's update rule, as pure functions."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.apis import flowcontrol as fc
from kapi.apis.flowcontrol_bootstrap import (
    AUTO_UPDATE_ANNOTATION,
    MANDATORY_FLOW_SCHEMAS,
    MANDATORY_PRIORITY_LEVELS,
    SUGGESTED_FLOW_SCHEMAS,
    SUGGESTED_PRIORITY_LEVELS,
)
from kapi.controllers.flowcontrol import dangling_condition, should_update
from kapi.version import Version

Object = dict[str, Any]


def limited(**fields: Any) -> Object:
    return {"metadata": {"name": "l"}, "spec": {"type": "Limited", "limited": fields}}


@pytest.mark.parametrize(
    ("defaulter", "field", "given", "annotations", "expected"),
    [
        (fc.default_priority_level_v1, "nominalConcurrencyShares", None, {}, 30),
        (fc.default_priority_level_v1, "nominalConcurrencyShares", 0, {}, 0),
        (fc.default_priority_level_v1beta3, "nominalConcurrencyShares", 0, {}, 30),
        (
            fc.default_priority_level_v1beta3,
            "nominalConcurrencyShares",
            0,
            {fc.PRESERVE_ZERO_SHARES: ""},
            0,
        ),
        (fc.default_priority_level_beta, "assuredConcurrencyShares", 0, {}, 30),
        (fc.default_priority_level_beta, "assuredConcurrencyShares", 7, {}, 7),
    ],
)
def test_share_defaults(
    defaulter: Any, field: str, given: Any, annotations: Object, expected: int
) -> None:
    obj = limited(
        **({field: given} if given is not None else {}),
        limitResponse={"type": "Queue", "queuing": {}},
    )
    obj["metadata"]["annotations"] = annotations
    defaulter(obj)
    spec = obj["spec"]["limited"]
    assert spec[field] == expected
    assert spec["lendablePercent"] == 0
    assert spec["limitResponse"]["queuing"] == {"handSize": 8, "queues": 64, "queueLengthLimit": 50}


def test_exempt_and_flow_schema_defaults() -> None:
    level = {"spec": {"type": "Exempt", "exempt": {}}}
    fc.default_priority_level_v1(level)
    assert level["spec"]["exempt"] == {"nominalConcurrencyShares": 0, "lendablePercent": 0}
    schema: Object = {"spec": {}}
    fc.default_flow_schema(schema)
    assert schema["spec"]["matchingPrecedence"] == 1000


def test_conversions_round_trip_without_touching_the_input() -> None:
    hub = limited(nominalConcurrencyShares=0, lendablePercent=5)
    original = copy.deepcopy(hub)
    beta = fc.hub_to_beta(hub)
    assert beta["spec"]["limited"] == {"assuredConcurrencyShares": 0, "lendablePercent": 5}
    assert fc.beta_to_hub(beta) == hub
    v1beta3 = fc.hub_to_v1beta3(hub)
    assert v1beta3["metadata"]["annotations"] == {fc.PRESERVE_ZERO_SHARES: ""}
    back = fc.v1beta3_to_hub(v1beta3)
    assert back == hub
    assert hub == original
    nonzero = limited(nominalConcurrencyShares=3)
    assert "annotations" not in fc.hub_to_v1beta3(nonzero)["metadata"]


def test_entropy_is_computed_as_upstream() -> None:
    assert fc._required_entropy_bits(64, 8) == 48
    assert fc._required_entropy_bits(1000, 7) == 70


def test_built_in_objects_are_valid_and_fully_defaulted() -> None:
    for obj in [*MANDATORY_PRIORITY_LEVELS.values(), *SUGGESTED_PRIORITY_LEVELS.values()]:
        assert fc.validate_priority_level(obj) == [], obj["metadata"]["name"]
        defaulted = copy.deepcopy(obj)
        fc.default_priority_level_v1(defaulted)
        assert defaulted == obj
    for obj in [*MANDATORY_FLOW_SCHEMAS.values(), *SUGGESTED_FLOW_SCHEMAS.values()]:
        assert fc.validate_flow_schema(obj) == [], obj["metadata"]["name"]
        defaulted = copy.deepcopy(obj)
        fc.default_flow_schema(defaulted)
        assert defaulted == obj


def test_should_update() -> None:
    wanted = SUGGESTED_PRIORITY_LEVELS["workload-low"]
    current = copy.deepcopy(wanted)
    current["metadata"]["generation"] = 1
    assert should_update(current, wanted, mandatory=False) is None
    current["spec"]["limited"]["nominalConcurrencyShares"] = 1
    updated = should_update(current, wanted, mandatory=False)
    assert updated is not None and updated["spec"] == wanted["spec"]
    current["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION] = "false"
    assert should_update(current, wanted, mandatory=False) is None
    # No annotation and edited (generation 2): kept, marked "false".
    del current["metadata"]["annotations"]
    current["metadata"]["generation"] = 2
    updated = should_update(current, wanted, mandatory=False)
    assert updated is not None
    assert updated["metadata"]["annotations"] == {AUTO_UPDATE_ANNOTATION: "false"}
    assert updated["spec"]["limited"]["nominalConcurrencyShares"] == 1
    # Mandatory objects always come back, annotation and all.
    mandatory = MANDATORY_PRIORITY_LEVELS["catch-all"]
    edited = copy.deepcopy(mandatory)
    edited["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION] = "false"
    updated = should_update(edited, mandatory, mandatory=True)
    assert (
        updated is not None and updated["metadata"]["annotations"][AUTO_UPDATE_ANNOTATION] == "true"
    )
    # ... but the exempt level keeps its operator's spec.exempt.
    exempt = copy.deepcopy(MANDATORY_PRIORITY_LEVELS["exempt"])
    exempt["spec"]["exempt"]["lendablePercent"] = 20
    assert should_update(exempt, MANDATORY_PRIORITY_LEVELS["exempt"], mandatory=True) is None


def test_dangling_condition() -> None:
    schema = {"spec": {"priorityLevelConfiguration": {"name": "gone"}}}
    assert dangling_condition(schema, {"other"})[:2] == ("True", "NotFound")
    assert dangling_condition(schema, {"gone"})[:2] == ("False", "Found")
    schema["spec"]["priorityLevelConfiguration"]["name"] = "catch-all"
    assert dangling_condition(schema, set())[:2] == ("False", "Found")


def test_lifecycles() -> None:
    schema, level = fc.resources()
    for resource in (schema, level):
        v1beta1 = resource.versions["v1beta1"].lifecycle
        assert v1beta1 is not None and v1beta1.served_at(Version(1, 25))
        assert not v1beta1.served_at(Version(1, 26))
        v1beta3 = resource.versions["v1beta3"].lifecycle
        assert v1beta3 is not None and v1beta3.served_at(Version(1, 31))
        assert not v1beta3.served_at(Version(1, 32))
