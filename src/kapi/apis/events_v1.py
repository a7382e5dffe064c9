"""events.k8s.io ``Event`` (v1, and v1beta1 until 1.25): a reshaped view of core/v1 Events.

Upstream cohabits the two resources in one storage: events.k8s.io Events
convert to and from the internal (core-shaped) Event, and are stored as
core/v1 Events (``pkg/apis/events/v1/conversion.go``).  Here the hub of the
events.k8s.io resource is core/v1 itself, a version kept only to convert
through, so both resources validate, store and select with the same code
(:mod:`kapi.apis.core_v1_events`).  The conversion renames fields: ``regarding`` is
``involvedObject``, ``note`` is ``message``, ``reportingController`` is
``reportingComponent``, and the ``deprecated*`` fields are core/v1's
``source``, ``firstTimestamp``, ``lastTimestamp`` and ``count``.

v1beta1 has v1's fields under the same names (``pkg/apis/events/v1beta1``
converts exactly as v1 does) and differs only in documentation; it was
deprecated in 1.22 and removed in 1.25, naming no replacement in upstream's
lifecycle tags, so its warning names none either.  Requests to it get the
lenient (legacy) validation, as core/v1 ones do.  Both versions share the
resource's field selectors (v1's); upstream's v1beta1 mapped
``reportingController`` to ``source.component`` instead.
"""

from __future__ import annotations

from typing import NamedTuple

from kapi.apimachinery.unstructured import Object
from kapi.apis import core_v1_events
from kapi.apis.core_v1_endpoints import ObjectReference
from kapi.runtime.meta import kind_struct
from kapi.runtime.schema import INT32, STRING, Field, MicroTime, Struct, Time
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.version import Version

GROUP = "events.k8s.io"
#: The hub of the events.k8s.io resource: core/v1 Events, never served by this group
#: (upstream's internal version plays this part).
HUB_VERSION = "__internal"

#: events.k8s.io/v1 field name -> core/v1 field name, for the fields that differ.
RENAMED = {
    "regarding": "involvedObject",
    "note": "message",
    "reportingController": "reportingComponent",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
}
_TO_V1 = {core: v1 for v1, core in RENAMED.items()}

# --- schema ---------------------------------------------------------------------------------

_DEPRECATED_DOC = "The core/v1 Event field of the same meaning, kept for compatibility."
_EVENT_DOC = (
    "A record of something that happened to an object, usually a change of state. Events "
    "expire after a while and their reasons and wording may change, so treat them as hints, "
    "not as an interface."
)


class _VersionDocs(NamedTuple):
    """What the versions' documentation says differently: v1 requires what v1beta1 allowed."""

    series: str
    action: str
    reason: str
    type: str


_SERIES_DOC = "A repeating event, counted instead of recorded each time."
_DOCS = {
    "v1": _VersionDocs(
        series=f"{_SERIES_DOC} Reporters choose how often they update it.",
        action="What was done, or failed, to the object, for programs; required on new Events, "
        "up to 128 characters.",
        reason="Why it was done, for people; required on new Events, up to 128 characters.",
        type="Normal or Warning (more may come), for programs; required on new Events.",
    ),
    "v1beta1": _VersionDocs(
        series=_SERIES_DOC,
        action="What was done, or failed, to the object, for programs; up to 128 characters.",
        reason="Why it was done, for people; up to 128 characters.",
        type="Normal or Warning (more may come), for programs.",
    ),
}


def _event_schema(version: str) -> Struct:
    """The kind's schema in ``version``: the same fields, documented per version."""
    prefix = f"io.k8s.api.events.{version}"
    docs = _DOCS[version]
    series = Struct(
        f"{prefix}.EventSeries",
        (
            Field(
                "count",
                INT32,
                "How many times the event had recurred at the last update.",
                required=True,
            ),
            Field(
                "lastObservedTime",
                MicroTime(),
                "When it was last seen before the last update.",
                required=True,
            ),
        ),
        docs.series,
    )
    return kind_struct(
        f"{prefix}.Event",
        ((GROUP, version, "Event"),),
        (
            Field("action", STRING, docs.action),
            Field("deprecatedCount", INT32, f"{_DEPRECATED_DOC} (count)"),
            Field("deprecatedFirstTimestamp", Time(), f"{_DEPRECATED_DOC} (firstTimestamp)"),
            Field("deprecatedLastTimestamp", Time(), f"{_DEPRECATED_DOC} (lastTimestamp)"),
            Field(
                "deprecatedSource",
                core_v1_events.EventSource,
                f"{_DEPRECATED_DOC} (source)",
            ),
            Field(
                "eventTime",
                MicroTime(),
                "When the event was first seen, to the microsecond. Required.",
                required=True,
            ),
            Field(
                "note",
                STRING,
                "What happened, written for people; at most 1kB, though readers should cope "
                "with up to 64kB.",
            ),
            Field("reason", STRING, docs.reason),
            Field(
                "regarding",
                ObjectReference,
                "The object the event concerns, typically one the reporting controller "
                "manages (a ReplicaSet for the ReplicaSet controller).",
            ),
            Field(
                "related",
                ObjectReference,
                "A second object the event involves, such as one the regarding object "
                "created or deleted.",
            ),
            Field(
                "reportingController",
                STRING,
                "The controller that reported the event, such as kubernetes.io/kubelet; "
                "required on new Events.",
            ),
            Field(
                "reportingInstance",
                STRING,
                "Which instance of that controller reported it, such as kubelet-xyzf; "
                "required on new Events, up to 128 characters.",
            ),
            Field(
                "series",
                series,
                "Set when the event repeats; unset for a one-off.",
            ),
            Field("type", STRING, docs.type),
        ),
        _EVENT_DOC,
    )


Event = _event_schema("v1")
#: As of 1.24, its last release (``eventTime`` is required there too).
EventV1beta1 = _event_schema("v1beta1")

# --- conversion -----------------------------------------------------------------------------


def v1_to_hub(obj: Object) -> Object:
    """``Convert_v1_Event_To_core_Event`` (and v1beta1's): the same values under core/v1's names.

    Values are shared with ``obj``, a decoded request body nothing else keeps.
    """
    return {RENAMED.get(key, key): value for key, value in obj.items()}


#: events.k8s.io/v1 fields in the order Go encodes them, and whether a zero value is
#: left out (``omitempty`` on a scalar); the others are always encoded.
_V1_ENCODING = (
    ("eventTime", False),
    ("series", True),
    ("reportingController", True),
    ("reportingInstance", True),
    ("action", True),
    ("reason", True),
    ("regarding", False),
    ("related", True),
    ("note", True),
    ("type", True),
    ("deprecatedSource", False),
    ("deprecatedFirstTimestamp", False),
    ("deprecatedLastTimestamp", False),
    ("deprecatedCount", True),
)
_V1_STRUCTS = frozenset({"regarding", "deprecatedSource"})


def hub_to_v1(obj: Object) -> Object:
    """``Convert_core_Event_To_v1_Event`` (and v1beta1's), encoded as Go encodes either.

    The result shares nested values with ``obj``: reads never change them.
    """
    renamed = {_TO_V1.get(key, key): value for key, value in obj.items()}
    out: Object = {"metadata": renamed.get("metadata", {})}
    for name, omit_empty in _V1_ENCODING:
        value = renamed.get(name)
        if name in _V1_STRUCTS and not isinstance(value, dict):
            value = {}
        if omit_empty and not value:
            continue
        out[name] = value
    return out


# --- resource -------------------------------------------------------------------------------

#: ``AddFieldLabelConversionsForEvent`` of events.k8s.io/v1: its labels and the core/v1
#: labels they stand for.
FIELD_LABEL_RENAMES = {
    **{f"regarding.{name}": f"involvedObject.{name}" for name in core_v1_events.REFERENCE_FIELDS},
    "reportingController": "reportingComponent",
}
FIELD_LABELS = (*FIELD_LABEL_RENAMES, "reason", "source", "type")

V1_NAMES = core_v1_events.EventFieldNames(
    involved_object="regarding",
    message="note",
    source="deprecatedSource",
    first_timestamp="deprecatedFirstTimestamp",
    last_timestamp="deprecatedLastTimestamp",
    count="deprecatedCount",
    reporting_controller="reportingController",
)


def resources() -> list[Resource]:
    """The events.k8s.io Event resource, stored with (and as) core/v1 Events."""
    return [
        core_v1_events.event_resource(
            GROUP,
            {
                "v1": ResourceVersion(
                    "v1",
                    Event,
                    Lifecycle(introduced=Version(1, 19)),
                    to_hub=v1_to_hub,
                    from_hub=hub_to_v1,
                ),
                "v1beta1": ResourceVersion(
                    "v1beta1",
                    EventV1beta1,
                    Lifecycle(
                        introduced=Version(1, 8),
                        deprecated=Version(1, 22),
                        removed=Version(1, 25),
                    ),
                    to_hub=v1_to_hub,
                    from_hub=hub_to_v1,
                ),
                HUB_VERSION: ResourceVersion(HUB_VERSION, core_v1_events.Event, served=False),
            },
            HUB_VERSION,
            hub_api_version="v1",
            field_labels=FIELD_LABELS,
            field_label_renames=FIELD_LABEL_RENAMES,
            columns=core_v1_events.event_columns(V1_NAMES),
        )
    ]
