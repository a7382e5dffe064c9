"""policy PodDisruptionBudget: v1 <-> v1beta1 conversion, validation, strategy, columns."""

from __future__ import annotations

import asyncio
import copy

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kapi.apimachinery.field_errors import FieldError
from kapi.apis import builtin_resources, policy
from kapi.apis.policy import (
    NON_V1BETA1_MATCH_NONE,
    PDB_V1BETA1_LABEL,
    V1BETA1_MATCH_ALL,
    PodDisruptionBudgetStrategy,
    PodDisruptionBudgetV1,
    PodDisruptionBudgetV1beta1,
    hub_to_v1beta1,
    normalize_v1_selector,
    v1beta1_reads_as_hub,
    v1beta1_to_hub,
)
from kapi.runtime.schema import components
from kapi.runtime.scheme import GroupVersionKind, Scheme
from kapi.version import Version

PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
EXISTS = {"key": PDB_V1BETA1_LABEL, "operator": "Exists"}
DOES_NOT_EXIST = {"key": PDB_V1BETA1_LABEL, "operator": "DoesNotExist"}


def messages(errs: list[FieldError]) -> list[str]:
    return [e.error_message() for e in errs]


def pdb(selector: object = ..., **spec: object) -> dict:
    obj: dict = {"metadata": {"name": "p", "namespace": "n"}, "spec": dict(spec)}
    if selector is not ...:
        obj["spec"]["selector"] = selector
    return obj


def the_resource():
    return next(r for r in builtin_resources() if r.kind == "PodDisruptionBudget")


# --- conversion -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("v1beta1", "hub"),
    [
        # v1beta1 {} selects nothing: the hub spells that with the reserved label.
        ({}, {"matchExpressions": [EXISTS]}),
        # v1beta1's spelling of "everything" is the hub's plain {}.
        ({"matchExpressions": [DOES_NOT_EXIST]}, {}),
        ({"matchLabels": {"app": "a"}}, {"matchLabels": {"app": "a"}}),
        (
            {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]},
            {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}]},
        ),
    ],
)
def test_round_trips_both_ways(v1beta1: dict, hub: dict) -> None:
    assert v1beta1_to_hub(pdb(v1beta1))["spec"]["selector"] == hub
    assert hub_to_v1beta1(pdb(hub))["spec"]["selector"] == v1beta1
    assert hub_to_v1beta1(v1beta1_to_hub(pdb(v1beta1))) == pdb(v1beta1)
    assert v1beta1_to_hub(hub_to_v1beta1(pdb(hub))) == pdb(hub)


def _requirement(key: str, operator: str, values: list[str], key_first: bool) -> dict:
    fields = [("key", key), ("operator", operator)] + ([("values", values)] if values else [])
    return dict(fields if key_first else reversed(fields))


_REQUIREMENTS = st.builds(
    lambda fields, key_first: _requirement(*fields, key_first),
    st.sampled_from(
        [
            (PDB_V1BETA1_LABEL, "Exists", []),
            (PDB_V1BETA1_LABEL, "DoesNotExist", []),
            (PDB_V1BETA1_LABEL, "In", ["web"]),
            ("tier", "Exists", []),
            ("tier", "In", ["web", "db"]),
        ]
    ),
    st.booleans(),
)
_SELECTORS = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "matchLabels": st.dictionaries(st.sampled_from(["app", "tier"]), st.just("a")),
            "matchExpressions": st.lists(_REQUIREMENTS, max_size=2),
        },
    ),
).map(lambda selector: selector if selector is None else dict(sorted(selector.items())[::-1]))
_ANNOTATIONS = st.dictionaries(
    st.sampled_from(["selector", "note"]), st.sampled_from(["x", '{"selector":{}}', "y"])
)


@given(_SELECTORS, _ANNOTATIONS, st.booleans())
def test_reads_as_hub_only_when_the_conversion_changes_nothing(
    selector: dict | None, annotations: dict, with_selector: bool
) -> None:
    # As stored: the hub's JSON, with the selector's fields in whatever order they came.
    hub = pdb(selector) if with_selector else pdb()
    hub["metadata"]["annotations"] = annotations
    if v1beta1_reads_as_hub(orjson.dumps(hub)):
        assert hub_to_v1beta1(hub) == hub


@pytest.mark.parametrize(
    "selector",
    [
        {"matchLabels": {"app": "a"}},
        {"matchLabels": {"app": "a"}, "matchExpressions": [EXISTS]},
        {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
    ],
)
def test_ordinary_selectors_read_as_stored(selector: dict) -> None:
    assert v1beta1_reads_as_hub(orjson.dumps(pdb(selector)))
    assert v1beta1_reads_as_hub(orjson.dumps(pdb()))


@pytest.mark.parametrize(
    "selector",
    [{}, {"matchLabels": {}}, {"matchExpressions": []}, NON_V1BETA1_MATCH_NONE],
)
def test_selectors_that_select_all_or_none_convert(selector: dict) -> None:
    assert hub_to_v1beta1(pdb(selector)) != pdb(selector)
    assert not v1beta1_reads_as_hub(orjson.dumps(pdb(selector)))


def test_nil_selector_stays_nil() -> None:
    assert v1beta1_to_hub(pdb()) == pdb()
    assert hub_to_v1beta1(pdb()) == pdb()
    assert v1beta1_to_hub(pdb(None)) == pdb(None)
    assert v1beta1_to_hub({"metadata": {"name": "p"}}) == {"metadata": {"name": "p"}}


def test_empty_means_semantically_empty() -> None:
    # Semantic.DeepEqual: empty lists and maps equal absent ones.
    empty = {"matchLabels": {}, "matchExpressions": []}
    assert v1beta1_to_hub(pdb(empty))["spec"]["selector"] == NON_V1BETA1_MATCH_NONE
    assert hub_to_v1beta1(pdb(empty))["spec"]["selector"] == V1BETA1_MATCH_ALL
    match_none = {"matchExpressions": [{**EXISTS, "values": []}]}
    assert hub_to_v1beta1(pdb(match_none))["spec"]["selector"] == {}


def test_v1beta1_input_never_combines_the_reserved_label_with_user_requirements() -> None:
    selector = {"matchLabels": {"app": "a"}, "matchExpressions": [EXISTS, DOES_NOT_EXIST]}
    assert v1beta1_to_hub(pdb(selector))["spec"]["selector"] == {"matchLabels": {"app": "a"}}
    tier = {"key": "tier", "operator": "Exists"}
    mixed = {"matchExpressions": [tier, EXISTS]}
    assert v1beta1_to_hub(pdb(mixed))["spec"]["selector"] == {"matchExpressions": [tier]}
    # Going out to v1beta1 nothing is stripped: only the two special forms are swapped.
    assert hub_to_v1beta1(pdb(mixed))["spec"]["selector"] == mixed


def test_conversions_do_not_mutate_their_input() -> None:
    obj = pdb({})
    before = copy.deepcopy(obj)
    v1beta1_to_hub(obj)
    hub_to_v1beta1(obj)
    assert obj == before


def test_v1_input_keeps_special_selectors_and_strips_the_label_otherwise() -> None:
    match_none = pdb({"matchExpressions": [EXISTS]})
    normalize_v1_selector(match_none)
    assert match_none["spec"]["selector"] == {"matchExpressions": [EXISTS]}
    match_all = pdb({})
    normalize_v1_selector(match_all)
    assert match_all["spec"]["selector"] == {}
    # v1beta1's "match all" spelling means nothing special in v1: the label goes.
    spelled = pdb({"matchExpressions": [DOES_NOT_EXIST]})
    normalize_v1_selector(spelled)
    assert spelled["spec"]["selector"] == {}
    combined = pdb({"matchLabels": {"app": "a"}, "matchExpressions": [EXISTS]})
    normalize_v1_selector(combined)
    assert combined["spec"]["selector"] == {"matchLabels": {"app": "a"}}


def test_scheme_conversion_sets_api_version() -> None:
    scheme = Scheme(Version(1, 24))
    resource = the_resource()
    scheme.add(resource)
    obj = {"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget", **pdb({})}
    hub = asyncio.run(scheme.to_hub(resource, obj, "v1beta1"))
    assert hub["apiVersion"] == "policy/v1"
    assert hub["spec"]["selector"] == {"matchExpressions": [EXISTS]}
    back = asyncio.run(scheme.from_hub(resource, hub, "v1beta1"))
    assert back == obj


# --- validation -----------------------------------------------------------------------------


def validate(obj: dict) -> list[str]:
    return messages(PodDisruptionBudgetStrategy().validate(obj))


def test_min_available_and_max_unavailable_cannot_both_be_set() -> None:
    assert validate(pdb(minAvailable=1, maxUnavailable="10%")) == [
        'spec: Invalid value: {"MinAvailable":1,"Selector":null,"MaxUnavailable":"10%",'
        '"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set'
    ]
    with_selector = pdb(
        {"matchExpressions": [{"key": "a", "operator": "Exists"}], "matchLabels": {"b": "c"}},
        minAvailable=1,
        maxUnavailable=0,
    )
    assert validate(with_selector) == [
        'spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"b":"c"},'
        '"matchExpressions":[{"key":"a","operator":"Exists"}]},"MaxUnavailable":0,'
        '"UnhealthyPodEvictionPolicy":null}: minAvailable and maxUnavailable cannot be both set'
    ]


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("minAvailable", 0, []),
        ("minAvailable", "0%", []),
        ("maxUnavailable", "100%", []),
        (
            "minAvailable",
            -1,
            ["spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"],
        ),
        ("minAvailable", "50x", [f'spec.minAvailable: Invalid value: "50x": {PERCENT_MSG}']),
        ("maxUnavailable", "-5%", [f'spec.maxUnavailable: Invalid value: "-5%": {PERCENT_MSG}']),
        (
            "maxUnavailable",
            "101%",
            ['spec.maxUnavailable: Invalid value: "101%": must not be greater than 100%'],
        ),
    ],
)
def test_int_or_percent(name: str, value: object, expected: list[str]) -> None:
    assert validate(pdb(**{name: value})) == expected


def test_selector_and_eviction_policy() -> None:
    assert validate(pdb({"matchLabels": {"app": "-bad-"}})) == [
        f'spec.selector.matchLabels: Invalid value: "-bad-": {LABEL_VALUE_MSG}'
    ]
    assert validate(pdb(unhealthyPodEvictionPolicy="Sometimes")) == [
        'spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": '
        'supported values: "AlwaysAllow", "IfHealthyBudget"'
    ]
    assert validate(pdb(unhealthyPodEvictionPolicy="AlwaysAllow")) == []


def test_update_tolerates_label_values_that_were_already_invalid() -> None:
    s = PodDisruptionBudgetStrategy()
    bad = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["-bad-"]}]}
    assert messages(s.validate(pdb(bad))) == [
        f'spec.selector.matchExpressions[0].values[0]: Invalid value: "-bad-": {LABEL_VALUE_MSG}'
    ]
    assert s.validate_update(pdb(bad, minAvailable=2), pdb(bad)) == []
    assert len(s.validate_update(pdb(bad), pdb({}))) == 1


def test_status_update_validation() -> None:
    s = PodDisruptionBudgetStrategy()
    condition = {
        "type": "DisruptionAllowed",
        "status": "True",
        "reason": "SufficientPods",
        "message": "",
        "lastTransitionTime": "2024-01-01T00:00:00Z",
    }
    good = {"status": {"disruptionsAllowed": 1, "conditions": [condition]}}
    assert s.validate_subresource_update("status", good, good) == []
    bad = {
        "status": {
            "disruptionsAllowed": -1,
            "expectedPods": -2,
            "conditions": [
                {"type": "Ready", "status": "Maybe", "observedGeneration": -1},
                {**condition, "type": "Ready", "reason": "no good"},
            ],
        }
    }
    assert messages(s.validate_subresource_update("status", bad, good)) == [
        'status.conditions[0].status: Unsupported value: "Maybe": '
        'supported values: "False", "True", "Unknown"',
        "status.conditions[0].observedGeneration: Invalid value: -1: "
        "must be greater than or equal to zero",
        "status.conditions[0].lastTransitionTime: Required value: must be set",
        "status.conditions[0].reason: Required value: must be set",
        'status.conditions[1].type: Duplicate value: "Ready"',
        'status.conditions[1].reason: Invalid value: "no good": a condition reason must start '
        "with alphabetic character, optionally followed by a string of alphanumeric characters "
        "or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or "
        "'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for "
        "validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
        "status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0",
        "status.expectedPods: Invalid value: -2: must be greater than or equal to 0",
    ]


# --- strategy -------------------------------------------------------------------------------


def test_create_resets_status_and_normalizes_the_selector() -> None:
    s = PodDisruptionBudgetStrategy()
    assert s.has_generation and s.has_status
    obj = pdb({"matchLabels": {"a": "b"}, "matchExpressions": [EXISTS]})
    obj["status"] = {"disruptionsAllowed": 5}
    s.prepare_for_create(obj)
    assert obj["status"] == {
        "disruptionsAllowed": 0,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
    }
    assert obj["spec"]["selector"] == {"matchLabels": {"a": "b"}}


def test_update_keeps_status_and_generation_follows_spec() -> None:
    s = PodDisruptionBudgetStrategy()
    old = pdb({}, minAvailable=1)
    old["status"] = {"disruptionsAllowed": 1}
    new = pdb({}, minAvailable=2)
    new["status"] = {"disruptionsAllowed": 9}
    s.prepare_for_update(new, old)
    assert new["status"] == {"disruptionsAllowed": 1}
    assert s.spec_changed(new, old)
    relabeled = copy.deepcopy(old)
    relabeled["metadata"]["labels"] = {"x": "y"}
    relabeled["status"] = {"disruptionsAllowed": 3}
    assert not s.spec_changed(relabeled, old)


# --- resource, columns and OpenAPI ----------------------------------------------------------


def test_resource_declaration_and_lifecycle() -> None:
    r = the_resource()
    assert (r.group, r.plural, r.singular, r.namespaced) == (
        "policy",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        True,
    )
    assert (r.hub_version, r.storage_version) == ("v1", "v1")
    assert (r.short_names, r.subresources, r.categories) == (("pdb",), ("status",), ())
    assert r.storage_prefix() == "/registry/poddisruptionbudgets/"
    beta = r.versions["v1beta1"].lifecycle
    assert beta is not None
    assert beta.replacement == GroupVersionKind("policy", "v1", "PodDisruptionBudget")
    assert beta.served_at(Version(1, 24)) and not beta.served_at(Version(1, 25))
    assert beta.deprecated_at(Version(1, 21)) and not beta.deprecated_at(Version(1, 20))
    ga = r.versions["v1"].lifecycle
    assert ga is not None and not ga.served_at(Version(1, 20)) and ga.served_at(Version(1, 21))


def test_columns() -> None:
    columns = the_resource().columns
    assert [(c.name, c.type) for c in columns] == [
        ("Name", "string"),
        ("Min Available", "string"),
        ("Max Unavailable", "string"),
        ("Allowed Disruptions", "integer"),
        ("Age", "string"),
    ]
    obj = pdb(minAvailable="50%")
    obj["status"] = {"disruptionsAllowed": 2}
    assert [c.cell(obj) for c in columns[:4]] == ["p", "50%", "N/A", 2]
    assert [c.cell(pdb(maxUnavailable=1)) for c in columns[1:4]] == ["N/A", "1", 0]


@pytest.mark.parametrize("struct", [PodDisruptionBudgetV1, PodDisruptionBudgetV1beta1])
def test_openapi(struct) -> None:
    version = struct.gvks[0][1]
    prefix = f"io.k8s.api.policy.{version}"
    schemas = components([struct])
    assert schemas[f"{prefix}.PodDisruptionBudget"]["x-kubernetes-group-version-kind"] == [
        {"group": "policy", "version": version, "kind": "PodDisruptionBudget"}
    ]
    status = schemas[f"{prefix}.PodDisruptionBudgetStatus"]
    assert status["required"] == [
        "disruptionsAllowed",
        "currentHealthy",
        "desiredHealthy",
        "expectedPods",
    ]
    conditions = status["properties"]["conditions"]
    assert conditions["items"] == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Condition"}],
        "default": {},
    }
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]
    assert conditions["x-kubernetes-patch-merge-key"] == "type"
    assert conditions["x-kubernetes-patch-strategy"] == "merge"
    spec = schemas[f"{prefix}.PodDisruptionBudgetSpec"]["properties"]
    assert spec["minAvailable"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}
    ]
    assert spec["unhealthyPodEvictionPolicy"]["enum"] == ["AlwaysAllow", "IfHealthyBudget"]
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector" in schemas


def test_versions_document_their_empty_selector_semantics() -> None:
    v1 = components([PodDisruptionBudgetV1])["io.k8s.api.policy.v1.PodDisruptionBudgetSpec"]
    beta = components([PodDisruptionBudgetV1beta1])[
        "io.k8s.api.policy.v1beta1.PodDisruptionBudgetSpec"
    ]
    assert "an empty selector ({}) selects every pod" in v1["properties"]["selector"]["description"]
    assert "Both unset and empty ({}) select none" in beta["properties"]["selector"]["description"]
    assert policy.UNHEALTHY_POD_EVICTION_POLICIES == ("AlwaysAllow", "IfHealthyBudget")
