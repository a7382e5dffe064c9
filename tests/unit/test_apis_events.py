"""Events: upstream's event validation messages, the events.k8s.io/v1 conversion, field
selectors and printer columns, all on the core/v1-shaped hub."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kapi.apimachinery.field_selector import parse_selector
from kapi.apis import builtin_resources
from kapi.apis.core_v1_events import (
    CORE_NAMES,
    event_columns,
    normalize_event,
    selectable_fields,
    validate_event_create,
    validate_event_update,
)
from kapi.apis.events_v1 import V1_NAMES, hub_to_v1, v1_to_hub
from kapi.registry.predicate import SelectionPredicate

EVENT_TIME = "2024-05-01T10:00:00.000000Z"


def core_event(**fields: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "ns"},
        "involvedObject": {"kind": "ConfigMap", "name": "cm", "namespace": "ns"},
        "reason": "Synced",
        **fields,
    }
    normalize_event(event)
    return event


def new_style(**fields: Any) -> dict[str, Any]:
    """An event as events.k8s.io/v1 clients write them: eventTime and the reporting fields."""
    defaults = {
        "eventTime": EVENT_TIME,
        "reportingComponent": "example.com/controller",
        "reportingInstance": "controller-1",
        "action": "Sync",
        "type": "Normal",
    }
    return core_event(**{**defaults, **fields})


def messages(errors: list[Any]) -> list[str]:
    return [e.error_message() for e in errors]


# --- legacy validation (every version) ------------------------------------------------------


@pytest.mark.parametrize(
    ("namespace", "involved", "ok"),
    [
        ("ns", "ns", True),
        ("other", "ns", False),
        # An old-style event about a cluster-scoped object lives in "default" (or nowhere).
        ("default", "", True),
        ("ns", "", False),
    ],
)
def test_old_style_event_namespace_must_match(namespace: str, involved: str, ok: bool) -> None:
    event = core_event(involvedObject={"kind": "Node", "name": "n", "namespace": involved})
    event["metadata"]["namespace"] = namespace
    mismatch = (
        f'involvedObject.namespace: Invalid value: "{involved}": does not match event.namespace'
    )
    expected = [] if ok else [mismatch]
    assert messages(validate_event_create(event, strict=False)) == expected


def test_new_style_event_may_be_about_cluster_objects_in_kube_system() -> None:
    event = new_style(involvedObject={"kind": "Node", "name": "n"})
    event["metadata"]["namespace"] = "kube-system"
    assert validate_event_create(event, strict=False) == []
    event["metadata"]["namespace"] = "ns"
    assert messages(validate_event_create(event, strict=False)) == [
        'involvedObject.namespace: Invalid value: "": does not match event.namespace'
    ]


def test_new_style_event_needs_its_reporting_fields() -> None:
    event = new_style(reportingComponent="", reportingInstance="", action="", reason="")
    assert messages(validate_event_create(event, strict=False)) == [
        "reportingController: Required value",
        'reportingController: Invalid value: "": name part must be non-empty',
        'reportingController: Invalid value: "": name part must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        "reportingInstance: Required value",
        "action: Required value",
        "reason: Required value",
    ]


def test_new_style_event_length_limits_count_bytes() -> None:
    event = new_style(
        reportingInstance="i" * 129,
        action="a" * 128,
        reason="é" * 65,  # 130 bytes
        message="m" * 1025,
    )
    assert messages(validate_event_create(event, strict=False)) == [
        'reportingInstance: Invalid value: "": can have at most 128 characters',
        'reason: Invalid value: "": can have at most 128 characters',
        'message: Invalid value: "": can have at most 1024 characters',
    ]


def test_old_style_event_has_no_length_limits() -> None:
    assert validate_event_create(core_event(message="m" * 5000), strict=False) == []


# --- strict validation (events.k8s.io/v1) ---------------------------------------------------


def test_strict_create_checks_what_events_k8s_io_v1_forbids() -> None:
    event = new_style(
        type="Odd",
        series={"count": 1},
        firstTimestamp="2024-05-01T10:00:00Z",
        count=2,
        source={"host": "node-1"},
    )
    event["metadata"]["name"] = "Upper.Case"
    assert validate_event_create(event, strict=False) == []
    assert messages(validate_event_create(event, strict=True)) == [
        'metadata.name: Invalid value: "Upper.Case": a lowercase RFC 1123 subdomain must consist '
        "of lower case alphanumeric characters, '-' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'example.com', regex used for validation is "
        r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        'series.count: Invalid value: "": should be at least 2',
        "series.lastObservedTime: Required value",
        'type: Invalid value: "": has invalid value: Odd',
        'firstTimestamp: Invalid value: "": needs to be unset',
        'count: Invalid value: "": needs to be unset',
        'source: Invalid value: "": needs to be unset',
    ]


def test_strict_create_requires_event_time() -> None:
    event = core_event(type="Warning")
    assert messages(validate_event_create(event, strict=True)) == ["eventTime: Required value"]


def test_strict_update_keeps_the_event_immutable_but_its_series() -> None:
    old = new_style(series={"count": 2, "lastObservedTime": EVENT_TIME})
    new = new_style(series={"count": 3, "lastObservedTime": EVENT_TIME})
    assert validate_event_update(new, old, strict=True) == []
    changed = new_style(
        involvedObject={"kind": "ConfigMap", "name": "other", "namespace": "ns"},
        reportingComponent="example.com/other",
        series={"count": 1, "lastObservedTime": EVENT_TIME},
    )
    assert messages(validate_event_update(changed, old, strict=True)) == [
        'series.count: Invalid value: "": should be at least 2',
        'involvedObject: Invalid value: {"Kind":"ConfigMap","Namespace":"ns","Name":"other",'
        '"UID":"","APIVersion":"","ResourceVersion":"","FieldPath":""}: field is immutable',
        'reportingController: Invalid value: "example.com/other": field is immutable',
    ]
    assert validate_event_update(changed, old, strict=False) == []


# --- Go's encoding ----------------------------------------------------------------------------


def test_normalize_event_encodes_as_go_does() -> None:
    event = {
        "metadata": {"name": "e"},
        "firstTimestamp": "2024-05-01T12:00:00.75+02:00",
        "eventTime": "2024-05-01T10:00:00.5Z",
        "series": {"count": 2, "lastObservedTime": "2024-05-01T10:00:01Z"},
    }
    normalize_event(event)
    assert event == {
        "metadata": {"name": "e"},
        "firstTimestamp": "2024-05-01T10:00:00Z",
        "lastTimestamp": None,
        "eventTime": "2024-05-01T10:00:00.500000Z",
        "series": {"count": 2, "lastObservedTime": "2024-05-01T10:00:01.000000Z"},
        "involvedObject": {},
        "source": {},
        "reportingComponent": "",
        "reportingInstance": "",
    }


# --- events.k8s.io/v1 conversion ------------------------------------------------------------


def test_v1_round_trips_through_the_core_hub() -> None:
    v1 = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e", "namespace": "ns"},
        "eventTime": EVENT_TIME,
        "reportingController": "example.com/c",
        "reportingInstance": "c-1",
        "action": "Sync",
        "reason": "Synced",
        "regarding": {"kind": "ConfigMap", "name": "cm", "namespace": "ns"},
        "related": {"kind": "Secret", "name": "s"},
        "note": "done",
        "type": "Normal",
        "deprecatedSource": {"component": "old"},
        "deprecatedFirstTimestamp": "2024-05-01T10:00:00Z",
        "deprecatedLastTimestamp": "2024-05-01T10:00:05Z",
        "deprecatedCount": 4,
    }
    hub = v1_to_hub(v1)
    assert hub["involvedObject"] == v1["regarding"]
    assert hub["message"] == "done"
    assert hub["reportingComponent"] == "example.com/c"
    assert hub["source"] == {"component": "old"}
    assert (hub["firstTimestamp"], hub["lastTimestamp"], hub["count"]) == (
        "2024-05-01T10:00:00Z",
        "2024-05-01T10:00:05Z",
        4,
    )
    assert not {"regarding", "note", "reportingController"} & hub.keys()
    back = hub_to_v1(hub)
    assert back == {k: v for k, v in v1.items() if k not in ("apiVersion", "kind")}


def test_hub_to_v1_encodes_an_old_style_event_as_go_does() -> None:
    converted = hub_to_v1(core_event(message="hi", count=0))
    assert converted == {
        "metadata": {"name": "e", "namespace": "ns"},
        "eventTime": None,
        "reason": "Synced",
        "regarding": {"kind": "ConfigMap", "name": "cm", "namespace": "ns"},
        "note": "hi",
        "deprecatedSource": {},
        "deprecatedFirstTimestamp": None,
        "deprecatedLastTimestamp": None,
    }


def test_both_groups_share_core_v1_storage() -> None:
    resources = {(r.group, r.plural): r for r in builtin_resources()}
    core, events = resources[("", "events")], resources[("events.k8s.io", "events")]
    assert core.storage_prefix() == events.storage_prefix() == "/registry/events/"
    assert core.storage_api_version == events.storage_api_version == "v1"
    assert events.hub_api_version == "v1"
    assert core.short_names == events.short_names == ("ev",)


# --- field selectors ------------------------------------------------------------------------


def test_selectable_fields_fall_back_to_the_reporting_controller() -> None:
    old_style = core_event(source={"component": "kubelet"}, type="Warning")
    fields = selectable_fields(old_style)
    assert fields["source"] == "kubelet"
    assert fields["reportingComponent"] == ""
    assert fields["involvedObject.name"] == "cm"
    assert fields["type"] == "Warning"
    new = selectable_fields(new_style())
    assert new["source"] == new["reportingComponent"] == "example.com/controller"


def test_a_predicate_matches_events_by_their_selectable_fields() -> None:
    predicate = SelectionPredicate(
        field=parse_selector("source=example.com/controller,involvedObject.kind=ConfigMap"),
        get_fields=selectable_fields,
    )
    assert predicate.matches(new_style())
    assert not predicate.matches(core_event(source={"component": "kubelet"}))


# --- printing -------------------------------------------------------------------------------


def cells(event: dict[str, Any], names: Any = CORE_NAMES) -> dict[str, Any]:
    return {c.name: c.cell(event) for c in event_columns(names)}


def ago(seconds: int, micro: bool = False) -> str:
    then = datetime.now(UTC) - timedelta(seconds=seconds)
    return then.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


def test_columns_of_an_old_style_event() -> None:
    event = core_event(
        firstTimestamp=ago(600),
        lastTimestamp=ago(30),
        count=7,
        type="Warning",
        message="  padded  ",
        source={"component": "kubelet", "host": "node-1"},
    )
    row = cells(event)
    assert row["Object"] == "configmap/cm"
    assert row["Message"] == "padded"
    assert row["Source"] == "kubelet, node-1"
    assert row["Count"] == 7
    assert row["Last Seen"] in ("30s", "31s")
    assert row["First Seen"] == "10m"
    assert row["Name"] == "e"
    assert [c.name for c in event_columns(CORE_NAMES) if c.priority == 0] == [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "Message",
    ]


def test_columns_of_a_new_style_event_read_event_time_and_series() -> None:
    event = new_style(eventTime=ago(300, micro=True))
    row = cells(event)
    assert row["Last Seen"] == row["First Seen"] == "5m"
    assert row["Count"] == 1  # singletons of the new API count once
    assert row["Source"] == "example.com/controller, controller-1"
    event["series"] = {"count": 4, "lastObservedTime": ago(5, micro=True)}
    row = cells(event)
    assert row["Last Seen"] in ("5s", "6s")
    assert row["Count"] == 4


def test_events_k8s_io_columns_read_its_own_field_names() -> None:
    v1 = hub_to_v1(core_event(message="note text", involvedObject={"kind": "Pod"}))
    row = cells(v1, V1_NAMES)
    assert row["Object"] == "pod"
    assert row["Message"] == "note text"
    assert row["Last Seen"] == "<unknown>"
