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

#: Descriptions of the fields every kind and list share (also used by the OpenAPI types).
API_VERSION_DOC = "The group and version this object is written in, such as apps/v1."
KIND_DOC = "The object's type, in CamelCase, such as ConfigMap."
OBJECT_METADATA_DOC = "Name, namespace, labels and the other metadata of the object."
LIST_METADATA_DOC = "The list's resourceVersion and paging token."
NAME_DOC = (
    "The object's name, unique among objects of its kind in its namespace. Required on create "
    "unless generateName is set; cannot change."
)
#: The description of a creation timestamp, in metadata and in table columns.
CREATION_TIMESTAMP_DOC = "When the server stored the object first, in UTC; set by the server."

OwnerReference = Struct(
    f"{_META}.OwnerReference",
    (
        Field("apiVersion", STRING, "The apiVersion of the owner.", required=True),
        Field(
            "blockOwnerDeletion",
            BOOLEAN,
            "When true, foreground deletion of the owner waits for this object to go first.",
        ),
        Field(
            "controller",
            BOOLEAN,
            "When true, the owner is the controller of this object; at most one owner may be.",
        ),
        Field("kind", STRING, "The kind of the owner.", required=True),
        Field("name", STRING, "The owner's name.", required=True),
        Field("uid", STRING, "The owner's uid.", required=True),
    ),
    "An object this one belongs to, in the same namespace or cluster-scoped; garbage collection "
    "removes this object once all its owners are gone.",
    map_type="atomic",
)

FieldsV1 = Struct(
    f"{_META}.FieldsV1",
    (),
    "A set of field paths, as nested JSON objects keyed by field, list item or value.",
    preserve_unknown_fields=True,
)

ManagedFieldsEntry = Struct(
    f"{_META}.ManagedFieldsEntry",
    (
        Field("apiVersion", STRING, "The apiVersion the field set is written in."),
        Field("fieldsType", STRING, "The format of the field set; FieldsV1 is the only one."),
        Field("fieldsV1", FieldsV1, "The fields this manager owns."),
        Field("manager", STRING, "Who owns these fields, such as a client's field manager name."),
        Field("operation", STRING, "Apply or Update: how the manager came to own the fields."),
        Field(
            "subresource",
            STRING,
            "The subresource the write went through; empty for the main resource.",
        ),
        Field("time", Time(), "When the manager last wrote these fields."),
    ),
    "The fields one manager owns, with the apiVersion they were written in.",
)

ObjectMeta = Struct(
    f"{_META}.ObjectMeta",
    (
        Field(
            "annotations",
            Map(STRING),
            "Free-form string data that tools attach to the object; not usable in selectors.",
        ),
        Field("creationTimestamp", Time(), CREATION_TIMESTAMP_DOC),
        Field(
            "deletionGracePeriodSeconds",
            INT64,
            "The grace period granted when deletion was requested; set by the server.",
        ),
        Field(
            "deletionTimestamp",
            Time(),
            "Set by the server when deletion is requested: the object goes once its finalizers "
            "are gone.",
        ),
        Field(
            "finalizers",
            List(STRING, list_type="set", patch_strategy="merge"),
            "Names of components that must each remove their entry before a deleted object "
            "goes away.",
        ),
        Field(
            "generateName",
            STRING,
            "When name is empty, the server appends a random suffix to this to make one.",
        ),
        Field("generation", INT64, "Counts changes to the desired state; set by the server."),
        Field("labels", Map(STRING), "Key-value pairs for grouping objects and selecting them."),
        Field(
            "managedFields",
            List(ManagedFieldsEntry),
            "Which manager owns which fields, as tracked by server-side apply.",
        ),
        Field("name", STRING, NAME_DOC),
        Field(
            "namespace",
            STRING,
            "The namespace the object lives in; empty for cluster-scoped kinds. Cannot change.",
        ),
        Field(
            "ownerReferences",
            List(
                OwnerReference,
                list_type="map",
                map_keys=("uid",),
                patch_strategy="merge",
                patch_merge_key="uid",
            ),
            "The objects this one belongs to (see OwnerReference).",
        ),
        Field(
            "resourceVersion",
            STRING,
            "An opaque token that changes on every write; send it back for optimistic concurrency.",
        ),
        Field("selfLink", STRING, "Deprecated and always empty."),
        Field("uid", STRING, "The server-assigned identity of this object, never reused."),
    ),
    "The metadata every stored object carries.",
)

ListMeta = Struct(
    f"{_META}.ListMeta",
    (
        Field(
            "continue",
            STRING,
            "A token for the next page of a limited list; empty on the last page.",
        ),
        Field(
            "remainingItemCount",
            INT64,
            "An estimate of the items the following pages hold, when known.",
        ),
        Field("resourceVersion", STRING, "The resourceVersion the list was read at."),
        Field("selfLink", STRING, "Deprecated and always empty."),
    ),
    "The metadata of a list response.",
)

LabelSelectorRequirement = Struct(
    f"{_META}.LabelSelectorRequirement",
    (
        Field("key", STRING, "The label to test.", required=True),
        Field(
            "operator",
            STRING,
            "How the label is tested: In, NotIn, Exists or DoesNotExist.",
            required=True,
        ),
        Field(
            "values",
            List(STRING),
            "The values for In and NotIn; must be empty for Exists and DoesNotExist.",
        ),
    ),
    "One test on a label.",
)

LabelSelector = Struct(
    f"{_META}.LabelSelector",
    (
        Field(
            "matchExpressions", List(LabelSelectorRequirement), "Label tests that must all pass."
        ),
        Field("matchLabels", Map(STRING), "Labels that must be present with exactly these values."),
    ),
    "Picks objects by their labels; every test must pass, and an empty selector matches all.",
    map_type="atomic",
)

Condition = Struct(
    f"{_META}.Condition",
    (
        Field("lastTransitionTime", Time(), "When status last flipped.", required=True),
        Field("message", STRING, "Details for people about the last transition.", required=True),
        Field(
            "observedGeneration", INT64, "The metadata.generation this condition was computed from."
        ),
        Field(
            "reason",
            STRING,
            "A CamelCase word naming the cause of the last transition.",
            required=True,
        ),
        Field("status", Scalar("string", enum=("True", "False", "Unknown")), required=True),
        Field("type", STRING, "The aspect this condition reports, in CamelCase.", required=True),
    ),
    "One observed aspect of an object's state.",
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
        Field("apiVersion", STRING, API_VERSION_DOC),
        Field("kind", STRING, KIND_DOC),
        Field("metadata", ObjectMeta, OBJECT_METADATA_DOC),
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
            Field("apiVersion", STRING, API_VERSION_DOC),
            Field("items", List(item), "The objects listed.", required=True),
            Field("kind", STRING, KIND_DOC),
            Field("metadata", ListMeta, LIST_METADATA_DOC),
        ),
        f"{item.type_name} objects, as a list request returns them.",
        gvks=gvks,
    )
