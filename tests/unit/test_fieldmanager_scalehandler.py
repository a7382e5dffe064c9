"""Managed fields carried between an object and its ``/scale`` (apimachinery's ScaleHandler)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.registry.fieldmanager.managedfields import ManagedFieldsError
from kapi.registry.fieldmanager.scalehandler import ScaleHandler, replicas_path

Object = dict[str, Any]
T1, T2 = "2024-01-01T00:00:00Z", "2024-02-02T00:00:00Z"
REPLICAS = {"f:spec": {"f:replicas": {}}}
MAPPINGS = {"example.com/v1": replicas_path(".spec.replicas")}


def entry(
    manager: str,
    operation: str,
    api_version: str,
    fields: Object,
    *,
    time: str | None = None,
    subresource: str = "",
) -> Object:
    """A managedFields entry, with its keys in the order kapi encodes them."""
    out: Object = {"manager": manager, "operation": operation, "apiVersion": api_version}
    if time:
        out["time"] = time
    out["fieldsType"] = "FieldsV1"
    out["fieldsV1"] = fields
    if subresource:
        out["subresource"] = subresource
    return out


def test_replicas_path_reads_a_json_path() -> None:
    assert replicas_path(".spec.scaling.replicas") == ("f:spec", "f:scaling", "f:replicas")


def test_to_subresource_keeps_only_owners_of_the_replicas_in_the_scale_version() -> None:
    parent = [
        entry("applier", "Apply", "example.com/v1", {"f:spec": {"f:image": {}}}),
        entry("creator", "Update", "example.com/v1", {"f:spec": {"f:replicas": {}, "f:x": {}}}),
        entry("helm", "Apply", "example.com/v1", REPLICAS, time=T1),
    ]
    handler = ScaleHandler(parent, "example.com/v1", MAPPINGS)
    assert handler.to_subresource() == [
        entry("helm", "Apply", "autoscaling/v1", REPLICAS, time=T1),
        entry("creator", "Update", "autoscaling/v1", REPLICAS),
    ]


def test_to_subresource_skips_versions_without_a_replicas_path() -> None:
    parent = [
        entry("old", "Apply", "example.com/v0", REPLICAS),
        entry("plain", "Apply", "example.com/v2", REPLICAS),
    ]
    mappings = {**MAPPINGS, "example.com/v2": None}
    assert ScaleHandler(parent, "example.com/v1", mappings).to_subresource() is None


def test_to_parent_moves_the_replicas_to_whoever_took_them_through_the_scale() -> None:
    parent = [
        entry("creator", "Update", "example.com/v1", {"f:spec": {"f:replicas": {}, "f:x": {}}}),
        entry("helm", "Apply", "example.com/v1", REPLICAS, time=T1),
    ]
    scale = [entry("hpa", "Update", "autoscaling/v1", REPLICAS, time=T2, subresource="scale")]
    handler = ScaleHandler(parent, "example.com/v1", MAPPINGS)
    # helm's entry is left empty and goes; the new entry has no time of the object's to keep.
    assert handler.to_parent(scale) == [
        entry("creator", "Update", "example.com/v1", {"f:spec": {"f:x": {}}}),
        entry("hpa", "Update", "example.com/v1", REPLICAS, subresource="scale"),
    ]


def test_to_parent_keeps_an_applier_still_owning_the_replicas_of_the_scale() -> None:
    parent = [entry("helm", "Apply", "example.com/v1", REPLICAS, time=T1)]
    handler = ScaleHandler(parent, "example.com/v1", MAPPINGS)
    # A co-owner through the Scale: an Apply entry is the same manager in both versions.
    scale = [
        *(handler.to_subresource() or []),
        entry("hpa", "Apply", "autoscaling/v1", REPLICAS, time=T2, subresource="scale"),
    ]
    assert handler.to_parent(scale) == [
        entry("hpa", "Apply", "example.com/v1", REPLICAS, subresource="scale"),
        entry("helm", "Apply", "example.com/v1", REPLICAS, time=T1),
    ]


def test_an_updater_of_the_object_always_loses_the_replicas_to_its_scale_entry() -> None:
    # An Update entry is known by its apiVersion too, which the Scale's does not share.
    parent = [entry("ctl", "Update", "example.com/v1", REPLICAS, time=T1)]
    handler = ScaleHandler(parent, "example.com/v1", MAPPINGS)
    assert handler.to_parent(handler.to_subresource()) == [
        entry("ctl", "Update", "example.com/v1", REPLICAS)
    ]


def test_scale_entries_without_the_replicas_are_not_carried_over() -> None:
    parent = [entry("ctl", "Update", "example.com/v1", {"f:spec": {"f:x": {}}}, time=T1)]
    scale = [
        entry("reader", "Update", "autoscaling/v1", {"f:status": {"f:replicas": {}}}),
    ]
    handler = ScaleHandler(parent, "example.com/v1", MAPPINGS)
    assert handler.to_parent(scale) == parent


def test_to_parent_drops_entries_of_unknown_versions_and_keeps_those_without_scale() -> None:
    parent = [
        entry("gone", "Apply", "example.com/v0", REPLICAS),
        entry("plain", "Apply", "example.com/v2", REPLICAS),
    ]
    mappings = {**MAPPINGS, "example.com/v2": None}
    scale = [entry("hpa", "Update", "autoscaling/v1", REPLICAS, subresource="scale")]
    assert ScaleHandler(parent, "example.com/v1", mappings).to_parent(scale) == [
        entry("plain", "Apply", "example.com/v2", REPLICAS),
        entry("hpa", "Update", "example.com/v1", REPLICAS, subresource="scale"),
    ]


def test_each_version_has_its_own_replicas_path() -> None:
    mappings = {
        "example.com/v1": replicas_path(".spec.replicas"),
        "example.com/v2": replicas_path(".spec.size"),
    }
    parent = [
        entry("one", "Apply", "example.com/v1", {"f:spec": {"f:replicas": {}, "f:a": {}}}),
        entry("two", "Apply", "example.com/v2", {"f:spec": {"f:size": {}, "f:b": {}}}),
    ]
    scale = [entry("hpa", "Update", "autoscaling/v1", REPLICAS, subresource="scale")]
    assert ScaleHandler(parent, "example.com/v2", mappings).to_parent(scale) == [
        entry("one", "Apply", "example.com/v1", {"f:spec": {"f:a": {}}}),
        entry("two", "Apply", "example.com/v2", {"f:spec": {"f:b": {}}}),
        entry("hpa", "Update", "example.com/v2", {"f:spec": {"f:size": {}}}, subresource="scale"),
    ]


def test_managed_fields_that_do_not_decode_are_an_error() -> None:
    with pytest.raises(ManagedFieldsError):
        ScaleHandler([{"manager": "x"}], "example.com/v1", MAPPINGS)
