"""``meta.k8s.io/v1`` types shared by every kind: ObjectMeta, ListMeta, LabelSelector."""

from __future__ import annotations

from kapi.runtime.schema import (
    BOOLEAN,
    INT64,
    STRING,
    Field,
    List,
    Map,
    Scalar,
    Struct,
    Time,
)

_META = "io.k8s.apimachinery.pkg.apis.meta.v1"

OwnerReference = Struct(
    f"{_META}.OwnerReference",
    (
        Field("apiVersion", STRING, "API version of the referent.", required=True),
        Field("blockOwnerDeletion", BOOLEAN, "If true, the owner cannot be deleted before this."),
        Field("controller", BOOLEAN, "If true, this reference points to the managing controller."),
        Field("kind", STRING, "Kind of the referent.", required=True),
        Field("name", STRING, "Name of the referent.", required=True),
        Field("uid", STRING, "UID of the referent.", required=True),
    ),
    "OwnerReference contains enough information to let you identify an owning object.",
    map_type="atomic",
)

FieldsV1 = Struct(
    f"{_META}.FieldsV1",
    (),
    "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.",
    preserve_unknown_fields=True,
)

ManagedFieldsEntry = Struct(
    f"{_META}.ManagedFieldsEntry",
    (
        Field("apiVersion", STRING, "The version of the resource this field set applies to."),
        Field("fieldsType", STRING, "The type of the fields field; only FieldsV1 is defined."),
        Field("fieldsV1", FieldsV1, "The field set of this entry."),
        Field("manager", STRING, "The identifier of the workflow managing these fields."),
        Field("operation", STRING, "The operation that created this entry: Apply or Update."),
        Field("subresource", STRING, "The subresource used to update the object."),
        Field("time", Time(), "When this entry was last changed."),
    ),
    "ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource "
    "that the fieldset applies to.",
)

ObjectMeta = Struct(
    f"{_META}.ObjectMeta",
    (
        Field("annotations", Map(STRING), "Unstructured key value map stored with a resource."),
        Field("creationTimestamp", Time(), "The time this object was created."),
        Field("deletionGracePeriodSeconds", INT64, "Seconds allowed to terminate gracefully."),
        Field("deletionTimestamp", Time(), "The time after which this resource will be deleted."),
        Field(
            "finalizers",
            List(STRING, list_type="set", patch_strategy="merge"),
            "Must be empty before the object is deleted from the registry.",
        ),
        Field("generateName", STRING, "Prefix used to generate a unique name if name is unset."),
        Field("generation", INT64, "A sequence number representing a specific generation."),
        Field("labels", Map(STRING), "Map of string keys and values to organize objects."),
        Field(
            "managedFields",
            List(ManagedFieldsEntry),
            "Maps workflow-id and version to the set of fields managed by that workflow.",
        ),
        Field("name", STRING, "Name must be unique within a namespace."),
        Field("namespace", STRING, "The space within which each name must be unique."),
        Field(
            "ownerReferences",
            List(
                OwnerReference,
                list_type="map",
                map_keys=("uid",),
                patch_strategy="merge",
                patch_merge_key="uid",
            ),
            "Objects depended by this object.",
        ),
        Field("resourceVersion", STRING, "The internal version of this object."),
        Field("selfLink", STRING, "Deprecated: selfLink is a legacy read-only field."),
        Field("uid", STRING, "The unique in time and space value for this object."),
    ),
    "ObjectMeta is metadata that all persisted resources must have.",
)

ListMeta = Struct(
    f"{_META}.ListMeta",
    (
        Field("continue", STRING, "Set if the user should request more items."),
        Field("remainingItemCount", INT64, "The number of items remaining after this list."),
        Field("resourceVersion", STRING, "The internal version of this list."),
        Field("selfLink", STRING, "Deprecated: selfLink is a legacy read-only field."),
    ),
    "ListMeta describes metadata that synthetic resources must have.",
)

LabelSelectorRequirement = Struct(
    f"{_META}.LabelSelectorRequirement",
    (
        Field("key", STRING, "The label key that the selector applies to.", required=True),
        Field("operator", STRING, "In, NotIn, Exists or DoesNotExist.", required=True),
        Field("values", List(STRING), "An array of string values."),
    ),
    "A selector that contains values, a key, and an operator.",
)

LabelSelector = Struct(
    f"{_META}.LabelSelector",
    (
        Field("matchExpressions", List(LabelSelectorRequirement), "Label selector requirements."),
        Field("matchLabels", Map(STRING), "A map of {key,value} pairs."),
    ),
    "A label query over a set of resources.",
    map_type="atomic",
)

Condition = Struct(
    f"{_META}.Condition",
    (
        Field("lastTransitionTime", Time(), "When the condition last changed.", required=True),
        Field("message", STRING, "A human readable message.", required=True),
        Field("observedGeneration", INT64, "The generation the condition was set on."),
        Field("reason", STRING, "A programmatic identifier of the last transition.", required=True),
        Field("status", Scalar("string", enum=("True", "False", "Unknown")), required=True),
        Field("type", STRING, "The type of condition in CamelCase.", required=True),
    ),
    "Condition contains details for one aspect of the current state of this API Resource.",
)


RawExtension = Struct(
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    (),
    "An embedded object, kept as sent.",
    preserve_unknown_fields=True,
)


def kind_struct(
    name: str,
    gvks: tuple[tuple[str, str, str], ...],
    fields: tuple[Field, ...],
    description: str,
) -> Struct:
    """A top-level kind: ``apiVersion``, ``kind`` and ``metadata`` plus its own fields."""
    common = (
        Field("apiVersion", STRING, "APIVersion defines the versioned schema of this object."),
        Field("kind", STRING, "Kind is a string value representing the REST resource."),
        Field("metadata", ObjectMeta, "Standard object's metadata."),
    )
    return Struct(
        name,
        tuple(sorted(common + fields, key=lambda f: f.name)),
        description,
        gvks=gvks,
    )


def list_struct(item: Struct) -> Struct:
    """``<Kind>List`` for a top-level kind."""
    gvks = tuple((g, v, k + "List") for g, v, k in item.gvks)
    return Struct(
        item.name + "List",
        (
            Field("apiVersion", STRING, "APIVersion defines the versioned schema of this object."),
            Field("items", List(item), "List of objects.", required=True),
            Field("kind", STRING, "Kind is a string value representing the REST resource."),
            Field("metadata", ListMeta, "Standard list metadata."),
        ),
        f"{item.type_name}List is a list of {item.type_name} objects.",
        gvks=gvks,
    )
