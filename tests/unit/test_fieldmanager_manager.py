"""The field manager: Update entries, server-side apply, conflicts and ownership."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kapi.apimachinery.errors import StatusError
from kapi.apis.core_v1 import ConfigMap
from kapi.registry.fieldmanager.equality import keep_unchanged_timestamps
from kapi.registry.fieldmanager.fieldpath import FieldSet, field_element
from kapi.registry.fieldmanager.manager import FieldManager, manager_or_user_agent
from kapi.registry.fieldmanager.schema import declared_atom, openapi_atom
from kapi.registry.fieldmanager.updater import Converter
from kapi.runtime.meta import ObjectMeta

Object = dict[str, Any]
OLD = "2020-01-01T00:00:00Z"
ATOM = declared_atom(ConfigMap)


def configmap_manager(**kwargs: Any) -> FieldManager:
    return FieldManager(
        kind="ConfigMap",
        api_version="v1",
        atom=ATOM,
        converter=Converter(lambda v: ATOM if v == "v1" else None),
        **kwargs,
    )


def cm(data: dict[str, str] | None = None, **metadata: Any) -> Object:
    obj: Object = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default", **metadata},
    }
    if data is not None:
        obj["data"] = data
    return obj


def stored(obj: Object, managed: list[Object] | None) -> Object:
    """``obj`` as the store holds it: a uid, and the given managedFields."""
    out = json.loads(json.dumps(obj))
    out["metadata"]["uid"] = "0000"
    out["metadata"].pop("managedFields", None)
    if managed:
        out["metadata"]["managedFields"] = managed
    return out


def entries(obj_or_list: Any) -> list[Object]:
    if isinstance(obj_or_list, dict):
        return obj_or_list["metadata"].get("managedFields") or []
    return obj_or_list or []


def summary(managed: Any) -> list[tuple[str, str, dict[str, Any]]]:
    return [(e["manager"], e["operation"], e["fieldsV1"]) for e in entries(managed)]


def aged(managed: list[Object]) -> list[Object]:
    """The entries as if written long ago (entries without a time keep none)."""
    return [{**e, "time": OLD} if "time" in e else e for e in managed]


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


# -- User-Agent -------------------------------------------------------------------------


def test_manager_from_user_agent() -> None:
    assert manager_or_user_agent("mine", "kubectl/v1.32.0") == "mine"
    assert manager_or_user_agent("", "kubectl/v1.32.0 (linux/amd64) kubernetes/abc") == "kubectl"
    assert manager_or_user_agent("", "curl\x00x/8") == "curlx"
    assert manager_or_user_agent("", "é" * 100) == "é" * 64
    assert manager_or_user_agent("", "") == ""


# -- Update entries ---------------------------------------------------------------------


def test_create_records_an_update_entry() -> None:
    fm = configmap_manager()
    managed = run(fm.update(None, cm({"a": "1"}, labels={"app": "x"}), "kubectl-create"))
    assert summary(managed) == [
        (
            "kubectl-create",
            "Update",
            {"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
        )
    ]
    assert managed[0]["apiVersion"] == "v1" and managed[0]["fieldsType"] == "FieldsV1"
    assert managed[0]["time"].endswith("Z")


def test_a_writer_without_a_name_is_unknown() -> None:
    managed = run(configmap_manager().update(None, cm({"a": "1"}), ""))
    assert managed[0]["manager"] == "unknown"


def test_updates_move_changed_fields_and_keep_other_times() -> None:
    fm = configmap_manager()
    created = aged(run(fm.update(None, cm({"a": "1", "b": "2"}), "creator")))
    live = stored(cm({"a": "1", "b": "2"}), created)
    managed = run(fm.update(live, cm({"a": "1", "b": "3", "c": "4"}), "editor"))
    assert summary(managed) == [
        ("creator", "Update", {"f:data": {".": {}, "f:a": {}}}),
        ("editor", "Update", {"f:data": {"f:b": {}, "f:c": {}}}),
    ]
    assert managed[0]["time"] == OLD  # the creator took nothing: its time stays
    assert managed[1]["time"] != OLD


def test_an_update_that_changes_nothing_keeps_every_time() -> None:
    fm = configmap_manager()
    created = aged(run(fm.update(None, cm({"a": "1"}), "creator")))
    live = stored(cm({"a": "1"}), created)
    assert run(fm.update(live, cm({"a": "1"}), "someone")) == created


def test_updates_of_untracked_objects_stay_untracked() -> None:
    live = stored(cm({"a": "1"}), None)
    assert run(configmap_manager().update(live, cm({"a": "2"}), "editor")) is None


def test_requests_may_reset_or_replace_managed_fields() -> None:
    fm = configmap_manager()
    created = aged(run(fm.update(None, cm({"a": "1"}), "creator")))
    live = stored(cm({"a": "1"}), created)
    for reset in ([], [{}]):
        assert run(fm.update(live, cm({"a": "2"}, managedFields=reset), "editor")) is None
    # Valid entries sent by the client replace the stored ones.
    mine = [
        {
            "manager": "tool",
            "operation": "Apply",
            "apiVersion": "v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:a": {}}},
        }
    ]
    assert summary(run(fm.update(live, cm({"a": "1"}, managedFields=mine), "editor"))) == [
        ("tool", "Apply", {"f:data": {"f:a": {}}})
    ]
    # Invalid ones are ignored: the stored entries stay.
    bad = [{"manager": "x", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"}]
    assert run(fm.update(live, cm({"a": "1"}, managedFields=bad), "editor")) == created


def test_a_subresource_ignores_managed_fields_in_the_request() -> None:
    fm = configmap_manager(subresource="status")
    created = aged(run(configmap_manager().update(None, cm({"a": "1"}), "creator")))
    live = stored(cm({"a": "1"}), created)
    managed = run(fm.update(live, cm({"a": "1"}, managedFields=[]), "ctrl"))
    assert managed == created


def test_status_is_not_owned_through_the_main_resource() -> None:
    reset = {"v1": FieldSet.of((field_element("data"),))}
    fm = configmap_manager(reset_fields=reset)
    managed = run(fm.update(None, cm({"a": "1"}, labels={"x": "y"}), "creator"))
    assert summary(managed) == [
        ("creator", "Update", {"f:metadata": {"f:labels": {".": {}, "f:x": {}}}})
    ]


def test_update_managers_are_capped_at_ten() -> None:
    fm = configmap_manager()
    data = {f"k{i}": "v" for i in range(12)}
    managed = aged(run(fm.update(None, cm(data), "m0")))
    for i in range(1, 12):
        live = stored(cm(data), managed)
        data = {**data, f"k{i}": "changed"}
        managed = run(fm.update(live, cm(data), f"m{i}"))
    names = [e["manager"] for e in managed]
    assert len(names) == 10
    assert "ancient-changes" in names
    assert "m0" not in names and "m1" not in names


# -- Apply ------------------------------------------------------------------------------


def test_apply_creates_and_owns_exactly_its_configuration() -> None:
    fm = configmap_manager()
    obj = run(fm.apply(None, cm({"a": "1"}, labels={"app": "x"}), "kubectl", False))
    assert obj["data"] == {"a": "1"}
    assert summary(obj) == [
        ("kubectl", "Apply", {"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {"f:app": {}}}})
    ]
    assert "subresource" not in entries(obj)[0]


def test_applying_the_same_configuration_again_changes_nothing() -> None:
    fm = configmap_manager()
    obj = run(fm.apply(None, cm({"a": "1"}), "kubectl", False))
    live = stored(obj, aged(entries(obj)))
    again = run(fm.apply(live, cm({"a": "1"}), "kubectl", False))
    assert again == live


def test_apply_conflicts_with_another_manager() -> None:
    fm = configmap_manager()
    created = run(fm.update(None, cm({"a": "1"}), "kubectl-client-side-apply"))
    live = stored(cm({"a": "1"}), created)
    with pytest.raises(StatusError) as raised:
        run(fm.apply(live, cm({"a": "2"}), "tool", False))
    assert raised.value.status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" '
        "using v1: .data.a",
        "reason": "Conflict",
        "details": {
            "causes": [
                {
                    "reason": "FieldManagerConflict",
                    "message": 'conflict with "kubectl-client-side-apply" using v1',
                    "field": ".data.a",
                }
            ]
        },
        "code": 409,
    }


def test_conflicts_with_several_managers_are_grouped() -> None:
    fm = configmap_manager()
    first = run(fm.apply(None, cm({"a": "1", "b": "1"}), "one", False))
    live = stored(first, entries(first))
    second = run(fm.apply(live, cm({"c": "1"}), "two", False))
    live = stored(second, entries(second))
    with pytest.raises(StatusError) as raised:
        run(fm.apply(live, cm({"a": "2", "b": "2", "c": "2"}), "three", False))
    assert raised.value.message == (
        'Apply failed with 3 conflicts: conflicts with "one":\n- .data.a\n- .data.b\n'
        'conflicts with "two":\n- .data.c'
    )
    assert [c["field"] for c in raised.value.details["causes"]] == [".data.a", ".data.b", ".data.c"]


def test_force_takes_fields_over() -> None:
    fm = configmap_manager()
    created = run(fm.update(None, cm({"a": "1", "b": "1"}), "editor"))
    live = stored(cm({"a": "1", "b": "1"}), created)
    obj = run(fm.apply(live, cm({"a": "2"}), "tool", True))
    assert obj["data"] == {"a": "2", "b": "1"}
    assert summary(obj) == [
        ("tool", "Apply", {"f:data": {"f:a": {}}}),
        ("editor", "Update", {"f:data": {".": {}, "f:b": {}}}),
    ]


def test_equal_values_are_shared_without_conflict() -> None:
    fm = configmap_manager()
    first = run(fm.apply(None, cm({"a": "1"}), "one", False))
    live = stored(first, entries(first))
    second = run(fm.apply(live, cm({"a": "1"}), "two", False))
    # The object did not change, so the new entry gets no time (and sorts first), as upstream.
    assert summary(second) == [
        ("two", "Apply", {"f:data": {"f:a": {}}}),
        ("one", "Apply", {"f:data": {"f:a": {}}}),
    ]
    assert "time" not in entries(second)[0]


def test_fields_left_out_of_a_later_apply_are_removed_unless_someone_else_owns_them() -> None:
    fm = configmap_manager()
    first = run(fm.apply(None, cm({"a": "1", "b": "1", "shared": "s"}), "kubectl", False))
    live = stored(first, entries(first))
    other = run(fm.apply(live, cm({"shared": "s"}), "other", False))
    live = stored(other, entries(other))
    pruned = run(fm.apply(live, cm({"a": "1"}), "kubectl", False))
    assert pruned["data"] == {"a": "1", "shared": "s"}
    assert summary(pruned) == [
        ("other", "Apply", {"f:data": {"f:shared": {}}}),  # co-owned without a change: no time
        ("kubectl", "Apply", {"f:data": {"f:a": {}}}),
    ]


def test_fields_owned_by_an_updater_survive_an_appliers_removal() -> None:
    fm = configmap_manager()
    first = run(fm.apply(None, cm({"a": "1"}), "kubectl", False))
    live = stored(first, entries(first))
    edited = run(fm.update(live, stored(cm({"a": "1", "b": "2"}), entries(first)), "editor"))
    live = stored(cm({"a": "1", "b": "2"}), edited)
    # "b" was never applied by kubectl: leaving it out does not remove it.
    again = run(fm.apply(live, cm({"a": "1"}), "kubectl", False))
    assert again["data"] == {"a": "1", "b": "2"}


def test_first_apply_gives_existing_fields_to_before_first_apply() -> None:
    fm = configmap_manager()
    live = stored(cm({"a": "1", "b": "2"}), None)
    obj = run(fm.apply(live, cm({"a": "1"}), "kubectl", False))
    assert summary(obj) == [
        ("kubectl", "Apply", {"f:data": {"f:a": {}}}),
        ("before-first-apply", "Update", {"f:data": {".": {}, "f:a": {}, "f:b": {}}}),
    ]
    with pytest.raises(
        StatusError, match=r'conflict with "before-first-apply" using v1: \.data\.a'
    ):
        run(fm.apply(live, cm({"a": "9"}), "kubectl", False))


@pytest.mark.parametrize(
    ("config", "code", "message"),
    [
        (
            {**cm({"a": "1"}), "extra": 1},
            500,
            "failed to create typed patch object (default/c; /v1, Kind=ConfigMap): "
            ".extra: field not declared in schema",
        ),
        ({**cm(), "apiVersion": "v2"}, 400, "invalid object type: /v2, Kind=ConfigMap"),
        ({"metadata": {"name": "c"}}, 400, "invalid object type: /, Kind="),
        (cm(managedFields=[]), 400, "metadata.managedFields must be nil"),
    ],
)
def test_apply_rejects_bad_configurations(config: Object, code: int, message: str) -> None:
    with pytest.raises(StatusError) as raised:
        run(configmap_manager().apply(None, config, "kubectl", False))
    assert (raised.value.code, raised.value.message) == (code, message)
    if code == 500:
        assert raised.value.reason == ""


# -- client-side apply upgrade ----------------------------------------------------------

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def client_side_applied(data: dict[str, str]) -> Object:
    """An object created by ``kubectl apply`` (client-side), with its annotation."""
    config = cm(data)
    annotation = json.dumps(config, separators=(",", ":"), sort_keys=True) + "\n"
    obj = cm(data, annotations={LAST_APPLIED: annotation})
    managed = run(configmap_manager().update(None, obj, "kubectl-client-side-apply"))
    return stored(obj, managed)


def test_kubectl_takes_over_client_side_applied_fields() -> None:
    live = client_side_applied({"a": "1", "b": "2"})
    obj = run(configmap_manager().apply(live, cm({"a": "9", "b": "2"}), "kubectl", False))
    assert obj["data"] == {"a": "9", "b": "2"}
    assert summary(obj)[0] == ("kubectl", "Apply", {"f:data": {"f:a": {}, "f:b": {}}})
    # The annotation follows the applied configuration, as client-side apply expects.
    annotation = obj["metadata"]["annotations"][LAST_APPLIED]
    assert json.loads(annotation) == cm({"a": "9", "b": "2"})
    assert annotation.endswith("\n")


def test_other_managers_still_conflict_with_client_side_apply() -> None:
    live = client_side_applied({"a": "1"})
    with pytest.raises(StatusError, match="kubectl-client-side-apply"):
        run(configmap_manager().apply(live, cm({"a": "9"}), "other", False))


def test_fields_changed_since_the_last_client_side_apply_still_conflict() -> None:
    live = client_side_applied({"a": "1"})
    live["data"]["a"] = "edited"  # no longer what the annotation says
    with pytest.raises(StatusError, match=r"\.data\.a"):
        run(configmap_manager().apply(live, cm({"a": "9"}), "kubectl", False))


# -- custom resources: list maps and versions -------------------------------------------

CR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                    },
                },
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}
CR_ATOM = openapi_atom(CR_SCHEMA, ObjectMeta)


def widget(version: str = "v1", **spec: Any) -> Object:
    return {
        "apiVersion": f"example.com/{version}",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": spec,
    }


async def _convert(obj: Object, api_version: str) -> Object:
    return {**json.loads(json.dumps(obj)), "apiVersion": api_version}


def widget_manager(version: str = "v1", served: tuple[str, ...] = ("v1", "v2")) -> FieldManager:
    def atoms(api_version: str) -> Any:
        return CR_ATOM if api_version.removeprefix("example.com/") in served else None

    return FieldManager(
        kind="Widget",
        api_version=f"example.com/{version}",
        atom=CR_ATOM,
        converter=Converter(atoms, _convert),
        reset_fields={f"example.com/{v}": FieldSet.of((field_element("status"),)) for v in served},
    )


def test_list_map_items_are_owned_one_by_one() -> None:
    fm = widget_manager()
    first = run(fm.apply(None, widget(ports=[{"name": "a", "port": 1}]), "one", False))
    live = stored(first, entries(first))
    second = run(fm.apply(live, widget(ports=[{"name": "b", "port": 2}]), "two", False))
    assert second["spec"]["ports"] == [{"name": "a", "port": 1}, {"name": "b", "port": 2}]
    live = stored(second, entries(second))
    with pytest.raises(StatusError, match=r'conflict with "one": \.spec\.ports\[name="a"\]\.port'):
        run(fm.apply(live, widget(ports=[{"name": "a", "port": 9}]), "two", False))


def test_a_manager_in_another_version_loses_fields_changed_in_this_one() -> None:
    v1 = run(
        widget_manager("v1").apply(None, widget(ports=[{"name": "a", "port": 1}]), "old", False)
    )
    live = {**stored(v1, entries(v1)), "apiVersion": "example.com/v2"}
    managed = run(
        widget_manager("v2").update(live, widget("v2", ports=[{"name": "a", "port": 2}]), "new")
    )
    assert [(e["manager"], e["apiVersion"]) for e in managed] == [
        ("old", "example.com/v1"),
        ("new", "example.com/v2"),
    ]
    assert managed[0]["fieldsV1"] == {
        "f:spec": {"f:ports": {'k:{"name":"a"}': {".": {}, "f:name": {}}}}
    }


def test_managers_of_versions_no_longer_served_are_dropped() -> None:
    v1 = run(
        widget_manager("v1").apply(None, widget(ports=[{"name": "a", "port": 1}]), "old", False)
    )
    live = {**stored(v1, entries(v1)), "apiVersion": "example.com/v2"}
    fm = widget_manager("v2", served=("v2",))
    managed = run(fm.update(live, widget("v2", ports=[{"name": "a", "port": 2}]), "new"))
    assert [e["manager"] for e in managed] == ["new"]


def test_status_applied_through_the_main_resource_is_not_owned() -> None:
    config = {**widget(), "status": {"phase": "x"}}
    del config["spec"]
    obj = run(widget_manager().apply(None, config, "one", False))
    assert obj["status"] == {"phase": "x"}  # the store's strategy drops it, not the merge
    assert entries(obj) == []


# -- no-op writes -----------------------------------------------------------------------


def test_unchanged_objects_keep_their_stored_times() -> None:
    old = stored(cm({"a": "1"}), [{"manager": "m", "time": OLD, "fieldsV1": {}}])
    new = stored(cm({"a": "1"}), [{"manager": "m", "time": "2030-01-01T00:00:00Z", "fieldsV1": {}}])
    keep_unchanged_timestamps(new, old)
    assert new == old
    changed = stored(cm({"a": "2"}), [{"manager": "m", "time": "2030-01-01T00:00:00Z"}])
    keep_unchanged_timestamps(changed, old)
    assert changed["metadata"]["managedFields"][0]["time"] == "2030-01-01T00:00:00Z"


# -- properties -------------------------------------------------------------------------

_keys = st.sampled_from(["a", "b", "c", "d"])
_configs = st.fixed_dictionaries(
    {},
    optional={
        "data": st.dictionaries(_keys, st.sampled_from(["1", "2"])),
        "labels": st.dictionaries(_keys, st.sampled_from(["x", "y"])),
    },
)


def _cm_config(parts: dict[str, Any]) -> Object:
    obj = cm(parts.get("data"))
    if "labels" in parts:
        obj["metadata"]["labels"] = parts["labels"]
    return obj


@settings(max_examples=60, deadline=None)
@given(_configs, _configs)
def test_applying_the_same_configuration_twice_is_a_no_op(first: Any, second: Any) -> None:
    fm = configmap_manager()
    start = run(fm.apply(None, _cm_config(first), "one", False))
    live = stored(start, aged(entries(start)))
    once = run(fm.apply(live, _cm_config(second), "two", True))
    live = stored(once, aged(entries(once)))
    twice = run(fm.apply(live, _cm_config(second), "two", True))
    assert twice == live


@settings(max_examples=60, deadline=None)
@given(_configs, _configs)
def test_an_applier_owns_exactly_its_configuration(first: Any, second: Any) -> None:
    fm = configmap_manager()
    start = run(fm.apply(None, _cm_config(first), "kubectl", False))
    again = run(fm.apply(stored(start, entries(start)), _cm_config(second), "kubectl", False))
    expected = run(fm.apply(None, _cm_config(second), "kubectl", False))
    assert summary(again) == summary(expected)
    # Alone, the applier's object is exactly its latest configuration (an emptied map
    # may be left null, which decoding drops).
    assert (again.get("data") or {}) == (expected.get("data") or {})
    assert (again["metadata"].get("labels") or {}) == (expected["metadata"].get("labels") or {})


def test_structs_held_by_value_are_never_new() -> None:
    """A Go struct held by value exists in the empty object: only what is inside it is new."""
    from kapi.apis.coordination_v1 import Lease

    atom = declared_atom(Lease)
    fm = FieldManager(
        kind="Lease",
        api_version="coordination.k8s.io/v1",
        atom=atom,
        converter=Converter(lambda v: atom),
        held_by_value=("spec",),
    )
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "l", "namespace": "default"},
        "spec": {"holderIdentity": "me"},
    }
    created = run(fm.update(None, lease, "creator"))
    assert summary(created) == [("creator", "Update", {"f:spec": {"f:holderIdentity": {}}})]
    live = stored({**lease, "spec": {}}, None)
    live["metadata"]["managedFields"] = [{**created[0], "fieldsV1": {"f:metadata": {}}}]
    updated = run(fm.update(live, lease, "editor"))
    assert summary(updated)[-1] == ("editor", "Update", {"f:spec": {"f:holderIdentity": {}}})
