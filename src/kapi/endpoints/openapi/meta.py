"""The ``meta.k8s.io`` and ``runtime`` types that only OpenAPI operations refer to.

Object schemas reference ObjectMeta and ListMeta (:mod:`kapi.runtime.meta`);
the operations around them also name a ``Status`` (delete responses), the
``DeleteOptions`` and ``Patch`` bodies, the ``WatchEvent`` of watch
responses and the ``APIResourceList`` of a group version's root path.
"""

from __future__ import annotations

from kapi.runtime.meta import ListMeta, ObjectMeta
from kapi.runtime.schema import BOOLEAN, INT32, INT64, STRING, Field, List, Struct

_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_CORE_V1 = (("", "v1"),)

_API_VERSION = Field(
    "apiVersion", STRING, "APIVersion defines the versioned schema of this object."
)
_KIND = Field("kind", STRING, "Kind is a string value representing the REST resource.")

StatusCause = Struct(
    f"{_META}.StatusCause",
    (
        Field("field", STRING, "The field of the resource that caused this error, if any."),
        Field("message", STRING, "A human-readable description of the cause of the error."),
        Field("reason", STRING, "A machine-readable description of the cause of the error."),
    ),
    "StatusCause provides more information about an api.Status failure.",
)

StatusDetails = Struct(
    f"{_META}.StatusDetails",
    (
        Field("causes", List(StatusCause, list_type="atomic"), "The causes of the failure."),
        Field("group", STRING, "The group of the resource the status is about."),
        Field("kind", STRING, "The kind of the resource the status is about."),
        Field("name", STRING, "The name of the resource the status is about."),
        Field("retryAfterSeconds", INT32, "Seconds the client should wait before retrying."),
        Field("uid", STRING, "The UID of the resource the status is about."),
    ),
    "StatusDetails is a set of additional properties that may be set by the server.",
)

Status = Struct(
    f"{_META}.Status",
    (
        _API_VERSION,
        Field("code", INT32, "Suggested HTTP return code for this status, 0 if not set."),
        Field("details", StatusDetails, "Extended data associated with the reason."),
        _KIND,
        Field("message", STRING, "A human-readable description of the status of this operation."),
        Field("metadata", ListMeta, "Standard list metadata."),
        Field("reason", STRING, "A machine-readable description of why this operation failed."),
        Field("status", STRING, 'Status of the operation: "Success" or "Failure".'),
    ),
    "Status is a return value for calls that don't return other objects.",
    gvks=(("", "v1", "Status"),),
)

Preconditions = Struct(
    f"{_META}.Preconditions",
    (
        Field("resourceVersion", STRING, "The target resource version."),
        Field("uid", STRING, "The target UID."),
    ),
    "Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.",
)

DeleteOptions = Struct(
    f"{_META}.DeleteOptions",
    (
        _API_VERSION,
        Field("dryRun", List(STRING, list_type="atomic"), "Dry run stages; only All is valid."),
        Field("gracePeriodSeconds", INT64, "The duration in seconds before deletion."),
        _KIND,
        Field("orphanDependents", BOOLEAN, "Deprecated: use propagationPolicy."),
        Field("preconditions", Preconditions, "Must be fulfilled before a deletion."),
        Field("propagationPolicy", STRING, "Whether and how garbage collection is performed."),
    ),
    "DeleteOptions may be provided when deleting an API object.",
    gvks=tuple((g, v, "DeleteOptions") for g, v in _CORE_V1),
)

Patch = Struct(
    f"{_META}.Patch",
    (),
    "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
)

RawExtension = Struct(
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    (),
    "RawExtension holds an object of any kind, as its own JSON.",
)

WatchEvent = Struct(
    f"{_META}.WatchEvent",
    (
        Field("object", RawExtension, "The object, or an error Status for an ERROR event.", True),
        Field("type", STRING, "ADDED, MODIFIED, DELETED, BOOKMARK or ERROR.", required=True),
    ),
    "Event represents a single event to a watched resource.",
    gvks=tuple((g, v, "WatchEvent") for g, v in _CORE_V1),
)

APIResource = Struct(
    f"{_META}.APIResource",
    (
        Field("categories", List(STRING, list_type="atomic"), "The groups this resource is in."),
        Field("group", STRING, "The preferred group of the resource, if not the list's."),
        Field("kind", STRING, "The kind of the resource.", required=True),
        Field("name", STRING, "The plural name of the resource.", required=True),
        Field("namespaced", BOOLEAN, "Whether the resource is namespaced.", required=True),
        Field("shortNames", List(STRING, list_type="atomic"), "Suggested short names."),
        Field("singularName", STRING, "The singular name of the resource.", required=True),
        Field("storageVersionHash", STRING, "A hash of the resource's storage version."),
        Field("verbs", List(STRING), "The verbs the resource supports.", required=True),
        Field("version", STRING, "The preferred version of the resource, if not the list's."),
    ),
    "APIResource specifies the name of a resource and whether it is namespaced.",
)

APIResourceList = Struct(
    f"{_META}.APIResourceList",
    (
        _API_VERSION,
        Field("groupVersion", STRING, "The group and version of the resources.", required=True),
        _KIND,
        Field("resources", List(APIResource, list_type="atomic"), "The resources.", True),
    ),
    "APIResourceList is a list of APIResource.",
    gvks=(("", "v1", "APIResourceList"),),
)

_AUTOSCALING = "io.k8s.api.autoscaling.v1"

ScaleSpec = Struct(
    f"{_AUTOSCALING}.ScaleSpec",
    (Field("replicas", INT32, "The desired number of instances."),),
    "ScaleSpec describes the attributes of a scale subresource.",
)

ScaleStatus = Struct(
    f"{_AUTOSCALING}.ScaleStatus",
    (
        Field("replicas", INT32, "The actual number of observed instances.", required=True),
        Field("selector", STRING, "The label query over the pods counted in replicas."),
    ),
    "ScaleStatus represents the current status of a scale subresource.",
)

Scale = Struct(
    f"{_AUTOSCALING}.Scale",
    (
        _API_VERSION,
        _KIND,
        Field("metadata", ObjectMeta, "Standard object metadata."),
        Field("spec", ScaleSpec, "The desired state of the scale."),
        Field("status", ScaleStatus, "The current state of the scale; read-only."),
    ),
    "Scale represents a scaling request for a resource.",
    gvks=(("autoscaling", "v1", "Scale"),),
)
