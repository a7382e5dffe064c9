"""The ``meta.k8s.io`` and ``runtime`` types that only OpenAPI operations refer to.

Object schemas reference ObjectMeta and ListMeta (:mod:`kapi.runtime.meta`);
the operations around them also name a ``Status`` (delete responses), the
``DeleteOptions`` and ``Patch`` bodies, the ``WatchEvent`` of watch
responses and the ``APIResourceList`` of a group version's root path.
"""

from __future__ import annotations

from kapi.runtime.meta import (
    API_VERSION_DOC,
    KIND_DOC,
    LIST_METADATA_DOC,
    ListMeta,
    ObjectMeta,
)
from kapi.runtime.schema import BOOLEAN, INT32, INT64, STRING, Field, List, Struct

_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_CORE_V1 = (("", "v1"),)

_API_VERSION = Field("apiVersion", STRING, API_VERSION_DOC)
_KIND = Field("kind", STRING, KIND_DOC)

StatusCause = Struct(
    f"{_META}.StatusCause",
    (
        Field("field", STRING, "The field at fault, as a path such as spec.replicas, when one is."),
        Field("message", STRING, "What is wrong with the field, for people."),
        Field("reason", STRING, "A word for programs naming the kind of problem."),
    ),
    "One cause of a failed request.",
)

StatusDetails = Struct(
    f"{_META}.StatusDetails",
    (
        Field(
            "causes", List(StatusCause, list_type="atomic"), "Every problem found, one entry each."
        ),
        Field("group", STRING, "The API group of the object concerned."),
        Field("kind", STRING, "The kind of the object concerned."),
        Field("name", STRING, "The name of the object concerned."),
        Field("retryAfterSeconds", INT32, "How long to wait before trying again, in seconds."),
        Field("uid", STRING, "The uid of the object concerned."),
    ),
    "Which object a Status is about, and why the request failed.",
)

Status = Struct(
    f"{_META}.Status",
    (
        _API_VERSION,
        Field("code", INT32, "The HTTP status code of the answer; 0 when unset."),
        Field("details", StatusDetails, "More about the failure, depending on reason."),
        _KIND,
        Field("message", STRING, "What happened, for people."),
        Field("metadata", ListMeta, LIST_METADATA_DOC),
        Field("reason", STRING, "A CamelCase word for programs saying why the request failed."),
        Field("status", STRING, '"Success" or "Failure".'),
    ),
    "The outcome of a request that answers with no object of its own, such as an error.",
    gvks=(("", "v1", "Status"),),
)

Preconditions = Struct(
    f"{_META}.Preconditions",
    (
        Field("resourceVersion", STRING, "The resourceVersion the object must still have."),
        Field("uid", STRING, "The uid the object must still have."),
    ),
    "Checks the stored object must pass for the request to go ahead.",
)

DeleteOptions = Struct(
    f"{_META}.DeleteOptions",
    (
        _API_VERSION,
        Field(
            "dryRun",
            List(STRING, list_type="atomic"),
            "All to check the request without persisting it; the only value.",
        ),
        Field(
            "gracePeriodSeconds", INT64, "Seconds the object gets to shut down; 0 deletes at once."
        ),
        _KIND,
        Field("orphanDependents", BOOLEAN, "Deprecated; propagationPolicy replaces it."),
        Field(
            "preconditions",
            Preconditions,
            "Checks the stored object must pass before it is deleted.",
        ),
        Field(
            "propagationPolicy",
            STRING,
            "What happens to dependents: Orphan, Background or Foreground.",
        ),
    ),
    "Options of a delete request.",
    gvks=tuple((g, v, "DeleteOptions") for g, v in _CORE_V1),
)

Patch = Struct(
    f"{_META}.Patch",
    (),
    "The body of a PATCH request, in one of the patch formats.",
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
    "One change seen by a watch.",
    gvks=tuple((g, v, "WatchEvent") for g, v in _CORE_V1),
)

APIResource = Struct(
    f"{_META}.APIResource",
    (
        Field("categories", List(STRING, list_type="atomic"), "The groups this resource is in."),
        Field("group", STRING, "The preferred group of the resource, if not the list's."),
        Field("kind", STRING, "The kind of the resource.", required=True),
        Field("name", STRING, "The resource's plural, as it appears in URL paths.", required=True),
        Field("namespaced", BOOLEAN, "Whether the resource is namespaced.", required=True),
        Field("shortNames", List(STRING, list_type="atomic"), "Suggested short names."),
        Field("singularName", STRING, "The resource's lowercase singular.", required=True),
        Field("storageVersionHash", STRING, "A hash of the resource's storage version."),
        Field("verbs", List(STRING), "The verbs the resource supports.", required=True),
        Field("version", STRING, "The preferred version of the resource, if not the list's."),
    ),
    "One resource served by a group version.",
)

APIResourceList = Struct(
    f"{_META}.APIResourceList",
    (
        _API_VERSION,
        Field("groupVersion", STRING, "The group and version of the resources.", required=True),
        _KIND,
        Field("resources", List(APIResource, list_type="atomic"), "The resources.", True),
    ),
    "The resources a group version serves.",
    gvks=(("", "v1", "APIResourceList"),),
)

_AUTOSCALING = "io.k8s.api.autoscaling.v1"

ScaleSpec = Struct(
    f"{_AUTOSCALING}.ScaleSpec",
    (Field("replicas", INT32, "How many replicas are wanted."),),
    "The replicas asked for.",
)

ScaleStatus = Struct(
    f"{_AUTOSCALING}.ScaleStatus",
    (
        Field("replicas", INT32, "How many replicas were last counted.", required=True),
        Field("selector", STRING, "The label selector, as a string, of the pods counted."),
    ),
    "The replicas found.",
)

Scale = Struct(
    f"{_AUTOSCALING}.Scale",
    (
        _API_VERSION,
        _KIND,
        Field("metadata", ObjectMeta, "The metadata of the scaled object."),
        Field("spec", ScaleSpec, "The desired state of the scale."),
        Field("status", ScaleStatus, "The current state of the scale; read-only."),
    ),
    "The replica count of a scalable object, read or written through its /scale subresource.",
    gvks=(("autoscaling", "v1", "Scale"),),
)
