"""Strategic merge patch as kube-apiserver applies it (``strategicpatch.StrategicMergeMapPatch``).

The cases follow the semantics upstream's ``strategicpatch`` tests pin down,
written here against a small schema of their own: merging and replacing lists
and maps, every directive with upstream's ordering rules, and upstream's
errors (message and the status class the PATCH handler answers with).  The
last part checks the built-in kinds' patch metadata against the Go struct tags
of ``k8s.io/api``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.apis import builtin_resources
from kapi.apis.core_v1 import ConfigMap
from kapi.apis.policy import PodDisruptionBudgetV1, PodDisruptionBudgetV1beta1
from kapi.runtime.patch import (
    BadPatchFormatError,
    StrategicMergePatchError,
    UnprocessablePatchError,
    strategic_merge_patch,
)
from kapi.runtime.schema import INT64, STRING, Field, List, Map, Struct, components

Leaf = Struct(
    "io.example.Leaf",
    (Field("name", STRING), Field("value", STRING), Field("other", STRING)),
)
Item = Struct(
    "io.example.Item",
    (
        Field("name", STRING),
        Field("value", STRING),
        Field("other", STRING),
        Field("mergingList", List(Leaf, patch_strategy="merge", patch_merge_key="name")),
        Field("mergingIntList", List(INT64, patch_strategy="merge")),
        Field("nonMergingList", List(Leaf)),
        Field("simpleMap", Map(STRING)),
    ),
)
Doc = Struct(
    "io.example.Doc",
    (
        Field("name", STRING),
        Field("value", STRING),
        Field("mergingList", List(Item, patch_strategy="merge", patch_merge_key="name")),
        Field("nonMergingList", List(Leaf)),
        Field("mergingIntList", List(INT64, patch_strategy="merge")),
        Field("nonMergingIntList", List(INT64)),
        Field("replaceList", List(Leaf, patch_strategy="replace")),
        Field("simpleMap", Map(STRING)),
        Field("mapOfLeaves", Map(Leaf)),
        Field("replacingMap", Leaf, patch_strategy="replace"),
        Field("retainKeysMap", Item, patch_strategy="retainKeys"),
        Field(
            "retainKeysMergingList",
            List(Item, patch_strategy="merge,retainKeys", patch_merge_key="name"),
        ),
        Field("freeForm", Struct("io.example.FreeForm", (), preserve_unknown_fields=True)),
    ),
)


def named(*names: str, **extra: Any) -> list[dict[str, Any]]:
    return [{"name": n, **extra} for n in names]


# (description, original, patch, expected)
MERGE_CASES: list[tuple[str, dict[str, Any], Any, dict[str, Any]]] = [
    # --- fields and maps
    ("null deletes a field", {"name": "a", "value": "b"}, {"value": None}, {"name": "a"}),
    (
        "a null that matches nothing is dropped, also inside a new map",
        {},
        {"value": None, "simpleMap": {"a": None, "b": "1"}},
        {"simpleMap": {"b": "1"}},
    ),
    (
        "maps merge recursively",
        {"simpleMap": {"a": "1", "b": "2"}},
        {"simpleMap": {"b": None, "c": "3"}},
        {"simpleMap": {"a": "1", "c": "3"}},
    ),
    ("null patch changes nothing", {"name": "a"}, None, {"name": "a"}),
    ("a value of another type replaces", {"value": "a"}, {"value": {"x": 1}}, {"value": {"x": 1}}),
    (
        "replace strategy on a map field takes the patch as is",
        {"replacingMap": {"name": "a", "value": "b"}},
        {"replacingMap": {"value": "c"}},
        {"replacingMap": {"value": "c"}},
    ),
    (
        "retainKeys strategy alone merges: the $retainKeys directive does the clearing",
        {"retainKeysMap": {"name": "a"}},
        {"retainKeysMap": {"value": "b"}},
        {"retainKeysMap": {"name": "a", "value": "b"}},
    ),
    (
        "a free-form struct merges maps and replaces lists",
        {"freeForm": {"list": [1, 2], "map": {"a": 1}}},
        {"freeForm": {"list": [3], "map": {"b": 2}}},
        {"freeForm": {"list": [3], "map": {"a": 1, "b": 2}}},
    ),
    # --- $patch in maps
    (
        "$patch: replace on a map keeps only the patch",
        {"simpleMap": {"a": "1", "b": "2"}},
        {"simpleMap": {"$patch": "replace", "c": "3"}},
        {"simpleMap": {"c": "3"}},
    ),
    (
        "$patch: delete on an existing map leaves it empty",
        {"simpleMap": {"a": "1"}},
        {"simpleMap": {"$patch": "delete"}},
        {"simpleMap": {}},
    ),
    (
        "a map with $patch for a missing field is not added",
        {"name": "a"},
        {"simpleMap": {"$patch": "replace", "a": "1"}},
        {"name": "a"},
    ),
    (
        "$patch: replace at the top level replaces the whole object",
        {"name": "a", "value": "b"},
        {"$patch": "replace", "value": "c"},
        {"value": "c"},
    ),
    # --- non-merging lists
    (
        "a list without merge strategy is replaced",
        {"nonMergingList": named("a", "b"), "nonMergingIntList": [1, 2]},
        {"nonMergingList": named("c"), "nonMergingIntList": [3]},
        {"nonMergingList": named("c"), "nonMergingIntList": [3]},
    ),
    (
        "replace strategy replaces a list of maps",
        {"replaceList": named("a", "b")},
        {"replaceList": named("b", value="x")},
        {"replaceList": named("b", value="x")},
    ),
    # --- lists of primitives with merge strategy
    (
        "merging scalars is a set union with new items first",
        {"mergingIntList": [1, 2]},
        {"mergingIntList": [3, 2]},
        {"mergingIntList": [3, 1, 2]},
    ),
    (
        "duplicates in the live list collapse",
        {"mergingIntList": [1, 2, 1]},
        {"mergingIntList": [2]},
        {"mergingIntList": [1, 2]},
    ),
    (
        "$deleteFromPrimitiveList removes every copy",
        {"mergingIntList": [1, 2, 3, 2]},
        {"$deleteFromPrimitiveList/mergingIntList": [2, 9]},
        {"mergingIntList": [1, 3]},
    ),
    (
        "$deleteFromPrimitiveList also works on a non-merging list",
        {"nonMergingIntList": [1, 2]},
        {"$deleteFromPrimitiveList/nonMergingIntList": [1]},
        {"nonMergingIntList": [2]},
    ),
    (
        "$deleteFromPrimitiveList of a missing list adds nothing",
        {"name": "a"},
        {"$deleteFromPrimitiveList/mergingIntList": [1]},
        {"name": "a"},
    ),
    (
        "a null $deleteFromPrimitiveList deletes the whole list",
        {"mergingIntList": [1, 2]},
        {"$deleteFromPrimitiveList/mergingIntList": None},
        {},
    ),
    (
        "$setElementOrder orders scalars",
        {"mergingIntList": [1, 2, 3]},
        {"$setElementOrder/mergingIntList": [3, 1, 2]},
        {"mergingIntList": [3, 1, 2]},
    ),
    (
        "server-only scalars stay where the live list had them",
        {"mergingIntList": [1, 2, 3, 4]},
        {"$setElementOrder/mergingIntList": [3, 1]},
        {"mergingIntList": [2, 3, 1, 4]},
    ),
    (
        "duplicates follow their first position in $setElementOrder",
        {"mergingIntList": [1, 2, 3, 2, 4]},
        {"$setElementOrder/mergingIntList": [2, 1, 4, 3, 2]},
        {"mergingIntList": [2, 2, 1, 4, 3]},
    ),
    (
        "apply's parallel lists: additions, order and deletions together",
        {"mergingIntList": [1, 2, 3]},
        {
            "mergingIntList": [4],
            "$setElementOrder/mergingIntList": [3, 4, 1],
            "$deleteFromPrimitiveList/mergingIntList": [2],
        },
        {"mergingIntList": [3, 4, 1]},
    ),
    (
        "$setElementOrder for a list that exists nowhere is dropped",
        {"name": "a"},
        {"$setElementOrder/mergingIntList": [1]},
        {"name": "a"},
    ),
    # --- lists of maps with a merge key
    (
        "items merge by key; new items lead the server-only ones",
        {"mergingList": [{"name": "a", "value": "1"}, {"name": "b"}]},
        {"mergingList": [{"name": "c"}, {"name": "b", "value": "2"}]},
        {"mergingList": [{"name": "c"}, {"name": "a", "value": "1"}, {"name": "b", "value": "2"}]},
    ),
    (
        "a server-only item before a patched one keeps its place",
        {"mergingList": named("a", "b")},
        {"mergingList": [{"name": "b", "value": "2"}, {"name": "c"}]},
        {"mergingList": [{"name": "a"}, {"name": "b", "value": "2"}, {"name": "c"}]},
    ),
    (
        "an added item keeps its nulls and nested directives",
        {"mergingList": named("a")},
        {"mergingList": [{"name": "c", "value": None, "simpleMap": {"$patch": "delete"}}]},
        {
            "mergingList": [
                {"name": "c", "value": None, "simpleMap": {"$patch": "delete"}},
                {"name": "a"},
            ]
        },
    ),
    (
        "a new list drops items carrying directives and nested nulls",
        {},
        {"mergingList": [{"name": "a", "value": None}, {"name": "b", "$patch": "delete"}]},
        {"mergingList": [{"name": "a"}]},
    ),
    (
        "$patch: delete removes every item with that key",
        {"mergingList": [{"name": "a", "value": "1"}, {"name": "b"}, {"name": "a", "value": "2"}]},
        {"mergingList": [{"name": "a", "$patch": "delete"}, {"name": "x", "$patch": "delete"}]},
        {"mergingList": named("b")},
    ),
    (
        "$patch: replace makes the other items the whole list",
        {"mergingList": [{"name": "a", "value": "1"}, {"name": "b"}]},
        {"mergingList": [{"name": "c"}, {"$patch": "replace"}]},
        {"mergingList": named("c")},
    ),
    (
        "nested merging lists merge item by item",
        {
            "mergingList": [
                {"name": "a", "mergingList": [{"name": "x", "value": "1"}, {"name": "y"}]}
            ]
        },
        {"mergingList": [{"name": "a", "mergingList": [{"name": "x", "value": "2"}]}]},
        {
            "mergingList": [
                {"name": "a", "mergingList": [{"name": "x", "value": "2"}, {"name": "y"}]}
            ]
        },
    ),
    (
        "a non-merging list inside a merged item is replaced",
        {"mergingList": [{"name": "a", "nonMergingList": named("x", "y")}]},
        {"mergingList": [{"name": "a", "nonMergingList": named("z")}]},
        {"mergingList": [{"name": "a", "nonMergingList": named("z")}]},
    ),
    (
        "$setElementOrder places an added item",
        {"mergingList": named("a", "b")},
        {"$setElementOrder/mergingList": named("a", "c", "b"), "mergingList": named("c")},
        {"mergingList": named("a", "c", "b")},
    ),
    (
        "apply: delete one item and reorder, a server-only item stays last",
        {"mergingList": named("a", "b", "c", "d")},
        {
            "$setElementOrder/mergingList": named("c", "a"),
            "mergingList": [{"name": "b", "$patch": "delete"}],
        },
        {"mergingList": named("c", "a", "d")},
    ),
    (
        "apply: add and delete with a server-only item (interleaved as upstream's slices alias)",
        {"mergingList": [{"name": "a"}, {"name": "b", "other": "x"}, {"name": "d", "other": "y"}]},
        {
            "$setElementOrder/mergingList": named("b", "c"),
            "mergingList": [{"name": "c"}, {"name": "a", "$patch": "delete"}],
        },
        {"mergingList": [{"name": "b", "other": "x"}, {"name": "d", "other": "y"}, {"name": "c"}]},
    ),
    # --- $retainKeys
    (
        "$retainKeys clears the live keys it does not list",
        {"retainKeysMap": {"name": "a", "value": "b", "other": "c"}},
        {"retainKeysMap": {"$retainKeys": ["name", "other"], "other": "d"}},
        {"retainKeysMap": {"name": "a", "other": "d"}},
    ),
    (
        "$retainKeys in a list item, with a null and an ordering directive unlisted",
        {"retainKeysMergingList": [{"name": "a", "value": "1", "mergingIntList": [1, 2]}]},
        {
            "retainKeysMergingList": [
                {
                    "name": "a",
                    "$retainKeys": ["name", "mergingIntList"],
                    "value": None,
                    "$setElementOrder/mergingIntList": [2, 1],
                }
            ]
        },
        {"retainKeysMergingList": [{"name": "a", "mergingIntList": [2, 1]}]},
    ),
]


@pytest.mark.parametrize(
    ("original", "patch", "expected"),
    [case[1:] for case in MERGE_CASES],
    ids=[case[0] for case in MERGE_CASES],
)
def test_merge(original: dict[str, Any], patch: Any, expected: dict[str, Any]) -> None:
    before = (copy.deepcopy(original), copy.deepcopy(patch))
    assert strategic_merge_patch(original, patch, Doc) == expected
    assert (original, patch) == before, "the arguments must not change"


# (description, original, patch, error class, message)
ERROR_CASES: list[tuple[str, dict[str, Any], Any, type[Exception], str]] = [
    (
        "a non-object patch is the JSON decoder's error",
        {},
        [1],
        BadPatchFormatError,
        "json: cannot unmarshal array into Go value of type map[string]interface {}",
    ),
    (
        "unknown $patch in a map",
        {"simpleMap": {"a": "1"}},
        {"simpleMap": {"$patch": "merge"}},
        StrategicMergePatchError,
        "unknown patch type: merge in map: map[$patch:merge]",
    ),
    (
        "a $patch that is not a string, printed with %s",
        {},
        {"$patch": 1, "b": True, "a": [None, 1.5]},
        StrategicMergePatchError,
        "unknown patch type: %!s(int64=1) in map: map[$patch:1 a:[<nil> 1.5] b:true]",
    ),
    (
        "$patch: merge in a list item",
        {"mergingList": named("a")},
        {"mergingList": [{"name": "a", "$patch": "merge"}]},
        StrategicMergePatchError,
        "merging lists cannot yet be specified in the patch",
    ),
    (
        "unknown $patch in a list item",
        {"mergingList": named("a")},
        {"mergingList": [{"name": "a", "$patch": "foo"}]},
        StrategicMergePatchError,
        "unknown patch type: foo in map: map[$patch:foo name:a]",
    ),
    (
        "a list item without its merge key",
        {"mergingList": named("a")},
        {"mergingList": [{"value": "x"}]},
        StrategicMergePatchError,
        "map: map[value:x] does not contain declared merge key: name",
    ),
    (
        "a $patch: delete item without its merge key",
        {"mergingList": named("a")},
        {"mergingList": [{"$patch": "delete"}]},
        StrategicMergePatchError,
        "map: map[$patch:delete] does not contain declared merge key: name",
    ),
    (
        "$retainKeys that is not a list",
        {"retainKeysMap": {"name": "a"}},
        {"retainKeysMap": {"$retainKeys": "name"}},
        BadPatchFormatError,
        "invalid patch format of retainKeys",
    ),
    (
        "a patched key missing from $retainKeys",
        {"retainKeysMap": {"name": "a"}},
        {"retainKeysMap": {"$retainKeys": ["name"], "value": "b"}},
        BadPatchFormatError,
        "invalid patch format of retainKeys",
    ),
    (
        "$setElementOrder that is not a list",
        {"mergingIntList": [1]},
        {"$setElementOrder/mergingIntList": "1"},
        StrategicMergePatchError,
        "expected a []interface {}, but received a string",
    ),
    (
        "a patch list in another order than $setElementOrder",
        {"mergingList": named("a", "b")},
        {"$setElementOrder/mergingList": named("a", "b"), "mergingList": named("b", "a")},
        StrategicMergePatchError,
        "The order in patch list:\n[map[name:b] map[name:a]]\n doesn't match "
        "$setElementOrder list:\n[map[name:a] map[name:b]]\n",
    ),
    (
        "a $setElementOrder item without the merge key",
        {"mergingList": named("a")},
        {"$setElementOrder/mergingList": [{"value": "a"}], "mergingList": named("a")},
        StrategicMergePatchError,
        "map: map[value:a] does not contain declared merge key: name",
    ),
    (
        "$setElementOrder without a field",
        {},
        {"$setElementOrder": []},
        BadPatchFormatError,
        "invalid patch format of setElementOrder list",
    ),
    (
        "$deleteFromPrimitiveList without a field",
        {},
        {"$deleteFromPrimitiveList": [1]},
        BadPatchFormatError,
        "invalid patch format of primitive list",
    ),
    (
        "a misspelt prefix is a malformed directive",
        {},
        {"$setElementOrders/mergingIntList": [1]},
        BadPatchFormatError,
        "invalid patch format of setElementOrder list",
    ),
    (
        "a list of lists",
        {},
        {"$setElementOrder/mergingIntList": [[1]], "mergingIntList": [[1]]},
        UnprocessablePatchError,
        "lists of lists are not supported",
    ),
    (
        "items of mixed types (1 and 1.0 differ, as in Go)",
        {"mergingIntList": [1, 2]},
        {"mergingIntList": [1.0]},
        StrategicMergePatchError,
        "list element types are not identical: [[1 2] [1]]",
    ),
    (
        "$setElementOrder of both empty lists",
        {},
        {"$setElementOrder/mergingIntList": [], "mergingIntList": []},
        StrategicMergePatchError,
        "no elements in any of the given slices",
    ),
    (
        "$setElementOrder for an unknown field",
        {},
        {"$setElementOrder/bogus": []},
        StrategicMergePatchError,
        'unable to find api field in struct Doc for the json field "bogus"',
    ),
    (
        "$setElementOrder for a field that is not a list",
        {},
        {"$setElementOrder/simpleMap": []},
        StrategicMergePatchError,
        "expected slice or array type, but got: struct",
    ),
    (
        "merging maps inside a map field",
        {"mapOfLeaves": {"k": {"name": "a"}}},
        {"mapOfLeaves": {"k": {"value": "b"}}},
        StrategicMergePatchError,
        "merging an object in json but data type is not struct, instead is: map",
    ),
]


@pytest.mark.parametrize(
    ("original", "patch", "error", "message"),
    [case[1:] for case in ERROR_CASES],
    ids=[case[0] for case in ERROR_CASES],
)
def test_errors(original: dict[str, Any], patch: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(StrategicMergePatchError) as raised:
        strategic_merge_patch(original, patch, Doc)
    assert type(raised.value) is error
    assert str(raised.value) == message


def test_field_names_fall_back_to_a_case_insensitive_match() -> None:
    """encoding/json's field lookup: ``MergingIntList`` finds ``mergingIntList``'s strategy."""
    merged = strategic_merge_patch({"MergingIntList": [1]}, {"MergingIntList": [2]}, Doc)
    assert merged == {"MergingIntList": [2, 1]}


# --- built-in kinds -------------------------------------------------------------------------

OWNER = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o"}


def test_object_meta_finalizers_and_owner_references() -> None:
    live = {
        "metadata": {
            "name": "c",
            "finalizers": ["a", "b"],
            "ownerReferences": [{**OWNER, "uid": "1"}, {**OWNER, "uid": "2"}],
        }
    }
    patch = {
        "metadata": {
            "finalizers": ["c"],
            "$deleteFromPrimitiveList/finalizers": ["a"],
            "ownerReferences": [{"uid": "2", "controller": True}, {"uid": "1", "$patch": "delete"}],
        }
    }
    assert strategic_merge_patch(live, patch, ConfigMap)["metadata"] == {
        "name": "c",
        "finalizers": ["c", "b"],
        "ownerReferences": [{**OWNER, "uid": "2", "controller": True}],
    }


@pytest.mark.parametrize(
    ("schema", "selector"),
    [
        (PodDisruptionBudgetV1, {"matchLabels": {"b": "2"}}),
        (PodDisruptionBudgetV1beta1, {"matchLabels": {"a": "1", "b": "2"}}),
    ],
    ids=["v1 replaces", "v1beta1 merges"],
)
def test_pdb_selector_strategy_differs_by_version(schema: Struct, selector: dict) -> None:
    live = {"spec": {"selector": {"matchLabels": {"a": "1"}}}}
    patch = {"spec": {"selector": {"matchLabels": {"b": "2"}}}}
    assert strategic_merge_patch(live, patch, schema)["spec"]["selector"] == selector


#: Every field of these kinds that k8s.io/api (1.32) tags with patchStrategy, with its
#: patchMergeKey: ``(definition, field) -> (strategy, merge key)``.
UPSTREAM_PATCH_TAGS: dict[str, dict[tuple[str, str], tuple[str, str | None]]] = {
    "ConfigMap": {
        ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers"): ("merge", None),
        ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "ownerReferences"): ("merge", "uid"),
    },
    "Namespace": {
        ("io.k8s.api.core.v1.NamespaceStatus", "conditions"): ("merge", "type"),
    },
    "Endpoints": {},
    "Lease": {},
    "EndpointSlice": {},
    "Ingress": {},
    "CronJob": {  # jobTemplate.spec.template: the pod template's lists
        **{
            ("io.k8s.api.core.v1.PodSpec", field): ("merge", key)
            for field, key in (
                ("containers", "name"),
                ("ephemeralContainers", "name"),
                ("hostAliases", "ip"),
                ("imagePullSecrets", "name"),
                ("initContainers", "name"),
                ("schedulingGates", "name"),
                ("topologySpreadConstraints", "topologyKey"),
            )
        },
        ("io.k8s.api.core.v1.PodSpec", "resourceClaims"): ("merge,retainKeys", "name"),
        ("io.k8s.api.core.v1.PodSpec", "volumes"): ("merge,retainKeys", "name"),
        **{
            (f"io.k8s.api.core.v1.{container}", field): ("merge", key)
            for container in ("Container", "EphemeralContainer")
            for field, key in (
                ("env", "name"),
                ("ports", "containerPort"),
                ("volumeDevices", "devicePath"),
                ("volumeMounts", "mountPath"),
            )
        },
    },
    "CustomResourceDefinition": {},
    "PodDisruptionBudget": {
        ("io.k8s.api.policy.v1.PodDisruptionBudgetSpec", "selector"): ("replace", None),
        ("io.k8s.api.policy.v1.PodDisruptionBudgetStatus", "conditions"): ("merge", "type"),
        ("io.k8s.api.policy.v1beta1.PodDisruptionBudgetStatus", "conditions"): ("merge", "type"),
    },
    "ValidatingWebhookConfiguration": {
        ("io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration", "webhooks"): (
            "merge",
            "name",
        ),
        ("io.k8s.api.admissionregistration.v1.ValidatingWebhook", "matchConditions"): (
            "merge",
            "name",
        ),
    },
    "MutatingWebhookConfiguration": {
        ("io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration", "webhooks"): (
            "merge",
            "name",
        ),
        ("io.k8s.api.admissionregistration.v1.MutatingWebhook", "matchConditions"): (
            "merge",
            "name",
        ),
    },
}


@pytest.mark.parametrize("kind", sorted(UPSTREAM_PATCH_TAGS))
def test_patch_metadata_matches_upstream_struct_tags(kind: str) -> None:
    """The OpenAPI extensions kubectl computes its patches from, per served version."""
    resource = next(r for r in builtin_resources() if r.kind == kind)
    roots = [v.schema for v in resource.versions.values() if v.schema is not None]
    found: dict[tuple[str, str], tuple[str, str | None]] = {}
    for name, definition in components(roots).items():
        for prop, schema in definition.get("properties", {}).items():
            if "x-kubernetes-patch-strategy" in schema:
                found[name, prop] = (
                    schema["x-kubernetes-patch-strategy"],
                    schema.get("x-kubernetes-patch-merge-key"),
                )
    expected = dict(UPSTREAM_PATCH_TAGS[kind])
    if kind != "ConfigMap":  # every kind has ObjectMeta's two
        expected.update(UPSTREAM_PATCH_TAGS["ConfigMap"])
    assert found == expected
