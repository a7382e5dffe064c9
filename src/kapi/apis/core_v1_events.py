"""core/v1 ``Event``: the hub and storage shape of every Event, whichever group serves it.

Upstream stores ``events.k8s.io`` Events as core/v1 Events, validates the
internal (core-shaped) object with ``pkg/apis/core/validation/events.go``
(strictly for requests to ``events.k8s.io/v1``, leniently for core/v1 and
``events.k8s.io/v1beta1``), prints it with ``printEvent`` and selects it by
``ToSelectableFields`` (``pkg/registry/core/event/strategy.go``).  This module
holds all of that; :mod:`kapi.apis.events_v1` adds the ``events.k8s.io``
shape and its conversion.

Events expire ``--event-ttl`` (default an hour) after their last write, in
every group: :class:`EventStrategy` asks the store to lease them in storage,
as upstream's event registry does with an etcd lease.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError, Path, invalid, required
from kapi.apimachinery.gotext import OrderedStruct
from kapi.apimachinery.unstructured import Object
from kapi.apis.coordination_v1 import canonical_micro_time
from kapi.apis.core_v1_endpoints import ObjectReference
from kapi.registry.strategy import METADATA, Strategy
from kapi.registry.tables import NAME, Column, short_duration
from kapi.request import current as current_request
from kapi.runtime.meta import kind_struct
from kapi.runtime.schema import INT32, STRING, Field, MicroTime, Struct, Time
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.runtime.strategy import GarbageCollectionPolicy
from kapi.version import Version

_CORE = "io.k8s.api.core.v1"

# --- schema ---------------------------------------------------------------------------------

EventSource = Struct(
    f"{_CORE}.EventSource",
    (
        Field("component", STRING, "The component that reported the event."),
        Field("host", STRING, "The node it reported from."),
    ),
    "Who reported an event, and where.",
)

EventSeries = Struct(
    f"{_CORE}.EventSeries",
    (
        Field("count", INT32, "How many times the event had recurred at the last update."),
        Field("lastObservedTime", MicroTime(), "When it was last seen."),
    ),
    "A repeating event, counted instead of recorded each time.",
)

_INVOLVED_OBJECT_DOC = "The object the event concerns."
_REASON_DOC = "A short CamelCase word, for programs, saying why the event happened."
_MESSAGE_DOC = "What happened, written for people."
_SOURCE_DOC = "The component, and node, that reported the event."
_FIRST_TIMESTAMP_DOC = "When the event was recorded the first time."
_LAST_TIMESTAMP_DOC = "When the event was recorded the last time."
_COUNT_DOC = "How often the event has happened."
_TYPE_DOC = "Normal or Warning; more types may come."

Event = kind_struct(
    f"{_CORE}.Event",
    (("", "v1", "Event"),),
    (
        Field("action", STRING, "What was done, or failed, to the object."),
        Field("count", INT32, _COUNT_DOC),
        Field("eventTime", MicroTime(), "When the event was first seen, to the microsecond."),
        Field("firstTimestamp", Time(), _FIRST_TIMESTAMP_DOC),
        Field("involvedObject", ObjectReference, _INVOLVED_OBJECT_DOC, required=True),
        Field("lastTimestamp", Time(), _LAST_TIMESTAMP_DOC),
        Field("message", STRING, _MESSAGE_DOC),
        Field("reason", STRING, _REASON_DOC),
        Field("related", ObjectReference, "A second object the event involves, if any."),
        Field(
            "reportingComponent",
            STRING,
            "The controller that reported the event, such as kubernetes.io/kubelet.",
        ),
        Field(
            "reportingInstance",
            STRING,
            "Which instance of that controller reported it, such as kubelet-xyzf.",
        ),
        Field(
            "series",
            EventSeries,
            "Set when the event repeats; unset for a one-off.",
        ),
        Field("source", EventSource, _SOURCE_DOC),
        Field("type", STRING, _TYPE_DOC),
    ),
    "A record of something that happened to an object. Events expire after a while and their "
    "reasons and wording may change, so treat them as hints, not as an interface.",
)

# --- timestamps -----------------------------------------------------------------------------


def _parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp as an aware datetime, or ``None`` (unset or unreadable)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def canonical_time(value: str) -> str:
    """How ``metav1.Time`` serialises: UTC, whole seconds (``RFC3339``).

    Values that do not parse are returned unchanged.
    """
    parsed = _parse_time(value)
    if parsed is None:
        return value
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _since(value: Any) -> str:
    """``translateTimestampSince`` / ``translateMicroTimestampSince``: ``<unknown>`` if unset."""
    then = _parse_time(value)
    if then is None:
        return "<unknown>"
    return short_duration((datetime.now(UTC) - then).total_seconds())


# --- Go's serialisation of the hub ----------------------------------------------------------

#: ``metav1.Time`` and ``metav1.MicroTime`` fields, which encode a zero value as ``null``.
_TIMES = ("firstTimestamp", "lastTimestamp")
_MICRO_TIMES = ("eventTime",)
#: Struct fields, which Go always encodes (``omitempty`` does not apply to structs).
_STRUCTS = ("involvedObject", "source")
#: String fields without ``omitempty``.
_ALWAYS_STRINGS = ("reportingComponent", "reportingInstance")


def normalize_event(event: Object) -> None:
    """Give a hub Event the shape decoding it into upstream's Go type gives it.

    Timestamps are canonical (so comparisons see what upstream compares), and
    the fields Go always encodes are present: structs as objects, times as
    ``null``, the two reporting strings as ``""``.
    """
    for name in _TIMES:
        value = event.get(name)
        event[name] = canonical_time(value) if isinstance(value, str) else None
    for name in _MICRO_TIMES:
        value = event.get(name)
        event[name] = canonical_micro_time(value) if isinstance(value, str) else None
    series = event.get("series")
    if isinstance(series, dict) and isinstance(series.get("lastObservedTime"), str):
        series["lastObservedTime"] = canonical_micro_time(series["lastObservedTime"])
    for name in _STRUCTS:
        if not isinstance(event.get(name), dict):
            event[name] = {}
    for name in _ALWAYS_STRINGS:
        event.setdefault(name, "")


# --- validation -----------------------------------------------------------------------------

EVENT_TYPE_NORMAL = "Normal"
EVENT_TYPE_WARNING = "Warning"
REPORTING_INSTANCE_LENGTH_LIMIT = 128
ACTION_LENGTH_LIMIT = 128
REASON_LENGTH_LIMIT = 128
NOTE_LENGTH_LIMIT = 1024
_NAMESPACE_DEFAULT = "default"
_NAMESPACE_SYSTEM = "kube-system"
_NS_MISMATCH = "does not match event.namespace"
_REPORTING_CONTROLLER = Path("reportingController")
#: Request versions whose writes get only the legacy checks, for backwards compatibility.
_LEGACY_REQUEST_VERSIONS = frozenset({("", "v1"), ("events.k8s.io", "v1beta1")})


def _blen(value: str) -> int:
    """Go's ``len`` of a string: its UTF-8 bytes."""
    return len(value.encode())


def _text(event: Object, name: str) -> str:
    value = event.get(name)
    return value if isinstance(value, str) else ""


def _at_most(event: Object, name: str, limit: int) -> list[FieldError]:
    if _blen(_text(event, name)) > limit:
        return [invalid(Path(name), "", f"can have at most {limit} characters")]
    return []


def _present(event: Object, name: str) -> list[FieldError]:
    return [] if _text(event, name) else [required(Path(name), "")]


def legacy_validate_event(event: Object) -> list[FieldError]:
    """``legacyValidateEvent``: every Event write, in every version.

    Events without ``eventTime`` are old-style: their namespace must agree with
    the involved object's.  New-style events need the reporting fields.
    """
    errs: list[FieldError] = []
    namespace = event.get("metadata", {}).get("namespace") or ""
    involved_namespace = (event.get("involvedObject") or {}).get("namespace") or ""
    mismatch = invalid(Path("involvedObject", "namespace"), involved_namespace, _NS_MISMATCH)
    if not event.get("eventTime"):
        if not involved_namespace:
            # Cluster-scoped objects' events may live in "default" for old clients.
            if namespace not in ("", _NAMESPACE_DEFAULT):
                errs.append(mismatch)
        elif namespace != involved_namespace:
            errs.append(mismatch)
    else:
        if not involved_namespace and namespace not in (_NAMESPACE_DEFAULT, _NAMESPACE_SYSTEM):
            errs.append(mismatch)
        # Paths name the internal Go fields: ``reportingController``, not the JSON name.
        controller = _text(event, "reportingComponent")
        if not controller:
            errs.append(required(_REPORTING_CONTROLLER, ""))
        errs += [
            invalid(_REPORTING_CONTROLLER, controller, msg)
            for msg in validation.is_qualified_name(controller)
        ]
        errs += _present(event, "reportingInstance")
        errs += _at_most(event, "reportingInstance", REPORTING_INSTANCE_LENGTH_LIMIT)
        errs += _present(event, "action")
        errs += _at_most(event, "action", ACTION_LENGTH_LIMIT)
        errs += _present(event, "reason")
        errs += _at_most(event, "reason", REASON_LENGTH_LIMIT)
        errs += _at_most(event, "message", NOTE_LENGTH_LIMIT)
    # Upstream names the event's namespace "namespace", not "metadata.namespace".
    errs += [
        invalid(Path("namespace"), namespace, msg)
        for msg in validation.is_dns1123_subdomain(namespace)
    ]
    return errs


def _validate_series(event: Object) -> list[FieldError]:
    """``validateV1EventSeries``."""
    series = event.get("series")
    if not isinstance(series, dict):
        return []
    errs: list[FieldError] = []
    if (series.get("count") or 0) < 2:
        errs.append(invalid(Path("series", "count"), "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required(Path("series", "lastObservedTime"), ""))
    return errs


def validate_event_create(event: Object, strict: bool) -> list[FieldError]:
    """``ValidateEventCreate``: the legacy checks, then (``strict``) events.k8s.io/v1's."""
    errs = legacy_validate_event(event)
    if not strict:
        return errs
    errs += validation.validate_object_meta(
        event.get("metadata", {}),
        namespaced=True,
        name_validator=validation.name_is_dns_subdomain,
        path=METADATA,
    )
    errs += _validate_series(event)
    if not event.get("eventTime"):
        errs.append(required(Path("eventTime"), ""))
    event_type = _text(event, "type")
    if event_type not in (EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING):
        errs.append(invalid(Path("type"), "", f"has invalid value: {event_type}"))
    for name in ("firstTimestamp", "lastTimestamp", "count"):
        if event.get(name):
            errs.append(invalid(Path(name), "", "needs to be unset"))
    source = event.get("source") or {}
    if source.get("component") or source.get("host"):
        errs.append(invalid(Path("source"), "", "needs to be unset"))
    return errs


def _go_reference(ref: Any) -> OrderedStruct | None:
    """An internal ``core.ObjectReference`` as a bad value prints (Go field names)."""
    if not isinstance(ref, dict):
        return None
    return OrderedStruct(
        Kind=ref.get("kind") or "",
        Namespace=ref.get("namespace") or "",
        Name=ref.get("name") or "",
        UID=ref.get("uid") or "",
        APIVersion=ref.get("apiVersion") or "",
        ResourceVersion=ref.get("resourceVersion") or "",
        FieldPath=ref.get("fieldPath") or "",
    )


def _go_source(source: Any) -> OrderedStruct:
    source = source if isinstance(source, dict) else {}
    return OrderedStruct(Component=source.get("component") or "", Host=source.get("host") or "")


#: ``ValidateEventUpdate``'s immutable fields, in its order (``reason`` is checked twice),
#: with how each bad value prints; the error path is the field's name but for
#: ``reportingComponent``, reported as the Go field ``reportingController``.
_IMMUTABLE: tuple[tuple[str, Callable[[Any], Any]], ...] = (
    ("involvedObject", lambda v: _go_reference(v or {})),
    ("reason", lambda v: v or ""),
    ("message", lambda v: v or ""),
    ("source", _go_source),
    ("firstTimestamp", lambda v: v),
    ("lastTimestamp", lambda v: v),
    ("count", lambda v: v or 0),
    ("reason", lambda v: v or ""),
    ("type", lambda v: v or ""),
    ("eventTime", lambda v: v),
    ("action", lambda v: v or ""),
    ("related", _go_reference),
    ("reportingComponent", lambda v: v or ""),
    ("reportingInstance", lambda v: v or ""),
)


def validate_event_update(new: Object, old: Object, strict: bool) -> list[FieldError]:
    """``ValidateEventUpdate`` (the store checks ObjectMeta updates for every kind)."""
    errs = legacy_validate_event(new)
    if not strict:
        return errs
    if new.get("series") != old.get("series"):
        errs += _validate_series(new)
    for name, go_value in _IMMUTABLE:
        new_value, old_value = go_value(new.get(name)), go_value(old.get(name))
        if new_value != old_value:
            path = _REPORTING_CONTROLLER if name == "reportingComponent" else Path(name)
            errs.append(invalid(path, new_value, validation.FIELD_IMMUTABLE_ERROR_MSG))
    return errs


def _strict_request() -> bool:
    """Whether the request's API version gets the strict (events.k8s.io/v1) checks.

    Upstream's ``requestGroupVersion``: work outside a request is strict too.
    """
    info = current_request().info
    return (info.api_group, info.api_version) not in _LEGACY_REQUEST_VERSIONS


class EventStrategy(Strategy):
    """Upstream ``eventStrategy``: validation by request version, path-segment names,
    creation through PUT, Go's encoding of the stored object, and the event TTL."""

    allow_create_on_update = True
    expires_after_event_ttl = True

    def default_garbage_collection_policy(self) -> GarbageCollectionPolicy:
        """Events take no part in garbage collection: a delete never waits on a finalizer."""
        return GarbageCollectionPolicy.UNSUPPORTED

    validate_name = staticmethod(validation.name_is_path_segment)

    def prepare_for_create(self, obj: Object) -> None:
        normalize_event(obj)

    def prepare_for_update(self, new: Object, old: Object) -> None:
        normalize_event(new)

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_event_create(obj, _strict_request())

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_event_update(new, old, _strict_request())


# --- field selectors ------------------------------------------------------------------------

#: The ``involvedObject`` fields Events can be selected by.
REFERENCE_FIELDS = (
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
)
#: ``AddFieldLabelConversionsForEvent`` of core/v1, besides metadata.name/namespace.
FIELD_LABELS = (
    *(f"involvedObject.{name}" for name in REFERENCE_FIELDS),
    "reason",
    "reportingComponent",
    "source",
    "type",
)


def selectable_fields(event: Object) -> dict[str, str]:
    """``ToSelectableFields``: what field selectors on Events match, from a hub Event.

    ``source`` falls back to the reporting controller, so new-style events are
    found by the component that reported them.
    """
    metadata = event.get("metadata", {})
    ref = event.get("involvedObject") or {}
    controller = _text(event, "reportingComponent")
    fields = {
        "metadata.name": metadata.get("name") or "",
        "metadata.namespace": metadata.get("namespace") or "",
        "reason": _text(event, "reason"),
        "reportingComponent": controller,
        "source": (event.get("source") or {}).get("component") or controller,
        "type": _text(event, "type"),
    }
    for name in REFERENCE_FIELDS:
        fields[f"involvedObject.{name}"] = ref.get(name) or ""
    return fields


# --- printing -------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventFieldNames:
    """Where a version of Event keeps what ``printEvent`` reads (the names differ by group)."""

    involved_object: str
    message: str
    source: str
    first_timestamp: str
    last_timestamp: str
    count: str
    reporting_controller: str


CORE_NAMES = EventFieldNames(
    involved_object="involvedObject",
    message="message",
    source="source",
    first_timestamp="firstTimestamp",
    last_timestamp="lastTimestamp",
    count="count",
    reporting_controller="reportingComponent",
)


def _first_seen(event: Object, names: EventFieldNames) -> str:
    first = event.get(names.first_timestamp)
    return _since(first) if first else _since(event.get("eventTime"))


def _last_seen(event: Object, names: EventFieldNames) -> str:
    """LAST SEEN: the series' last observation, else lastTimestamp, else when first seen."""
    series = event.get("series")
    if isinstance(series, dict):
        return _since(series.get("lastObservedTime"))
    last = event.get(names.last_timestamp)
    return _since(last) if last else _first_seen(event, names)


def _count(event: Object, names: EventFieldNames) -> int:
    """COUNT: the series' count; singleton events of the new API count 1."""
    series = event.get("series")
    if isinstance(series, dict):
        return series.get("count") or 0
    return event.get(names.count) or 1


def _object(event: Object, names: EventFieldNames) -> str:
    """OBJECT: ``kind/name`` with the kind in lower case (just the kind without a name)."""
    ref = event.get(names.involved_object) or {}
    kind = (ref.get("kind") or "").lower()
    return f"{kind}/{ref['name']}" if ref.get("name") else kind


def _source(event: Object, names: EventFieldNames) -> str:
    """SOURCE: ``formatEventSource``, the reporting controller and instance standing in."""
    source = event.get(names.source) or {}
    component = source.get("component") or _text(event, names.reporting_controller)
    host = source.get("host") or _text(event, "reportingInstance")
    return f"{component}, {host}" if host else component


def event_columns(names: EventFieldNames) -> tuple[Column, ...]:
    """Upstream's Event printer columns, reading a version whose fields are ``names``."""

    def cell(compute: Callable[[Object, EventFieldNames], Any]) -> Callable[[Object], Any]:
        return lambda event: compute(event, names)

    def text(name: str) -> Callable[[Object], str]:
        return lambda event: _text(event, name)

    return (
        Column("Last Seen", "string", _LAST_TIMESTAMP_DOC, cell(_last_seen)),
        Column("Type", "string", _TYPE_DOC, text("type")),
        Column("Reason", "string", _REASON_DOC, text("reason")),
        Column("Object", "string", _INVOLVED_OBJECT_DOC, cell(_object)),
        Column(
            "Subobject",
            "string",
            ObjectReference.by_name["fieldPath"].description,
            lambda event: (event.get(names.involved_object) or {}).get("fieldPath") or "",
            priority=1,
        ),
        Column("Source", "string", _SOURCE_DOC, cell(_source), priority=1),
        Column(
            "Message",
            "string",
            _MESSAGE_DOC,
            lambda event: _text(event, names.message).strip(),
        ),
        Column("First Seen", "string", _FIRST_TIMESTAMP_DOC, cell(_first_seen), priority=1),
        Column("Count", "string", _COUNT_DOC, cell(_count), priority=1),
        Column(NAME.name, NAME.type, NAME.description, NAME.cell, NAME.format, priority=1),
    )


def event_resource(
    group: str,
    versions: Mapping[str, ResourceVersion],
    hub_version: str,
    **kwargs: Any,
) -> Resource:
    """An Event resource of ``group``; every group's Events share one strategy and storage."""
    return Resource(
        group=group,
        kind="Event",
        plural="events",
        singular="event",
        namespaced=True,
        versions=dict(versions),
        hub_version=hub_version,
        storage_version=hub_version,
        strategy=EventStrategy(),
        short_names=("ev",),
        selectable_fields=selectable_fields,
        **kwargs,
    )


def resources() -> list[Resource]:
    """The core/v1 Event resource."""
    return [
        event_resource(
            "",
            {"v1": ResourceVersion("v1", Event, Lifecycle(introduced=Version(1, 0)))},
            "v1",
            field_labels=FIELD_LABELS,
            columns=event_columns(CORE_NAMES),
        )
    ]
