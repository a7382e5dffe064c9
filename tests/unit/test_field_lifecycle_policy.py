"""The drop-disabled-fields rule and the field warnings, on a declared kind with lists and maps."""

from __future__ import annotations

import copy

from kapi.apis.apiextensions_v1 import CustomResourceDefinition
from kapi.features import FeatureGate
from kapi.registry.field_lifecycle import FieldLifecyclePolicy
from kapi.runtime.lifecycle import FieldLifecycle
from kapi.runtime.lifecycle_paths import TaggedPath, tagged_paths
from kapi.runtime.schema import STRING, Field, List, Map, Struct
from kapi.version import Version

GATE = "CoordinatedLeaderElection"  # alpha 1.31, beta (off) 1.33
ALPHA_RELEASE = Version(1, 32)
ALPHA_TAG = FieldLifecycle("v1.31", "alpha", GATE)
DEPRECATED_TAG = FieldLifecycle("v1.2", "deprecated", component="example.com")

Item = Struct(
    "test.Item",
    (
        Field("name", STRING),
        Field("gated", STRING, lifecycle=(ALPHA_TAG,)),
        Field("old", STRING, lifecycle=(DEPRECATED_TAG,)),
    ),
)
Kind = Struct(
    "test.Kind",
    (
        Field("items", List(Item, "map", ("name",))),
        Field("byKey", Map(Item)),
        Field("top", STRING, lifecycle=(ALPHA_TAG,)),
    ),
)


def policy(*, gate_on: bool, version: Version = ALPHA_RELEASE) -> FieldLifecyclePolicy:
    return FieldLifecyclePolicy(FeatureGate({GATE: gate_on}, emulated_version=version))


def test_tagged_paths_cross_lists_and_maps() -> None:
    assert [str(p) for p in tagged_paths(Kind)] == [
        "items[*].gated",
        "items[*].old",
        "byKey[*].gated",
        "byKey[*].old",
        "top",
    ]
    # selectableFields' gate is GA at the newest release: no tag, only its gate's stand-in
    # (no status), which acts at an older emulated release where the gate was not GA.
    (selectable,) = tagged_paths(CustomResourceDefinition)
    assert str(selectable) == "spec.versions[*].selectableFields"
    assert selectable.tags == (FieldLifecycle("v1.30", None, "CustomResourceFieldSelectors"),)


def test_a_type_that_contains_itself_is_walked_once() -> None:
    node = Struct("test.Node", ())
    # A frozen declaration cannot name itself when built; tie the knot afterwards.
    fields = (Field("child", node), Field("x", STRING, lifecycle=(ALPHA_TAG,)))
    object.__setattr__(node, "fields", fields)
    object.__setattr__(node, "by_name", {f.name: f for f in fields})
    assert [str(p) for p in tagged_paths(node)] == ["x"]


def test_values_are_named_as_upstream_paths() -> None:
    obj = {"items": [{"name": "a"}, {"name": "b", "gated": "g"}], "byKey": {"k": {"gated": "h"}}}
    gated = tagged_paths(Kind)[0]
    assert [(w, v) for w, v, _ in gated.values(obj)] == [("items[1].gated", "g")]
    by_key = TaggedPath(("byKey", "*", "gated"), (ALPHA_TAG,))
    assert [(w, v) for w, v, _ in by_key.values(obj)] == [("byKey[k].gated", "h")]


def test_disabled_fields_are_dropped_on_create() -> None:
    obj = {"items": [{"name": "a", "gated": "x"}], "top": "t", "byKey": {"k": {"gated": "y"}}}
    warnings = policy(gate_on=False).on_create(obj, tagged_paths(Kind))
    assert obj == {"items": [{"name": "a"}], "byKey": {"k": {}}}
    assert warnings == [
        f"items[0].gated: dropped because the {GATE} feature gate is disabled",
        f"byKey[k].gated: dropped because the {GATE} feature gate is disabled",
        f"top: dropped because the {GATE} feature gate is disabled",
    ]


def test_update_keeps_a_disabled_field_any_old_item_used() -> None:
    old = {"items": [{"name": "a", "gated": "x"}]}
    new = {"items": [{"name": "a", "gated": "x"}, {"name": "b", "gated": "z"}], "top": "t"}
    warnings = policy(gate_on=False).on_update(new, old, tagged_paths(Kind))
    assert new == {"items": [{"name": "a", "gated": "x"}, {"name": "b", "gated": "z"}]}
    assert warnings == [f"top: dropped because the {GATE} feature gate is disabled"]


def test_alpha_and_deprecated_fields_warn_only_where_changed() -> None:
    paths = tagged_paths(Kind)
    old = {"items": [{"name": "a", "gated": "x", "old": "o"}]}
    new = copy.deepcopy(old)
    new["items"].append({"name": "b", "old": "p"})
    seen: list[str] = []
    gates = FeatureGate({GATE: True}, emulated_version=Version(1, 32))
    warnings = FieldLifecyclePolicy(gates, seen.append).on_update(new, old, paths)
    assert warnings == ["items[1].old: deprecated field; it may be removed in a future release"]
    assert seen == ["items[*].old"]
    assert policy(gate_on=True).on_create(copy.deepcopy(old), paths) == [
        f"items[0].gated: alpha field (feature gate {GATE}); it may change or be removed in a "
        "future release",
        "items[0].old: deprecated field; it may be removed in a future release",
    ]


def test_beta_and_ga_fields_do_not_warn() -> None:
    obj = {"top": "t"}
    assert policy(gate_on=True, version=Version(1, 33)).on_create(obj, tagged_paths(Kind)) == []
    assert obj == {"top": "t"}
