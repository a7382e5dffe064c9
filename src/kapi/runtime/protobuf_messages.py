"""Field tables of the protobuf messages kapi reads and writes, by upstream's numbers.

Each built-in kind's protobuf form is fixed by the ``generated.proto`` of its
group version (``k8s.io/api/core/v1``, ``k8s.io/apimachinery/pkg/apis/meta/v1``
...).  A :class:`Message` here lists, for one of those messages, each field's
number, its JSON name and its type, plus the two facts of the Go struct that
the ``.proto`` does not carry and the JSON form depends on: whether the field
is a pointer (``optional``: written only when set, kept when zero) and whether
its JSON tag has ``omitempty`` (a zero value is left out of the object).

apiextensions' CustomResourceDefinition is tabled in
:mod:`kapi.runtime.protobuf_apiextensions`, and the workload kinds (pods, apps,
batch, autoscaling, rbac ...) in the modules generated from upstream's
definitions (``kapi.apis.generated``, see ``tools/apigen``); they build on the
messages here and add their kinds with :func:`register_kind` when imported.
Kinds whose messages are tabled nowhere (custom resources) are not served in
protobuf: their bodies get a 415.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class ValueType(Enum):
    """A field's value type, where it is not a nested message of its own."""

    STRING = "string"
    INT32 = "int32"
    INT64 = "int64"
    BOOL = "bool"
    #: ``[]byte``: base64 text in JSON.
    BYTES = "bytes"
    #: ``metav1.Time`` (``{seconds, nanos}``): RFC 3339 text to the second in JSON.
    TIME = "Time"
    #: ``metav1.MicroTime``: RFC 3339 text with microseconds in JSON.
    MICRO_TIME = "MicroTime"
    #: ``intstr.IntOrString`` (``{type, intVal, strVal}``): a number or a string in JSON.
    INT_OR_STRING = "IntOrString"
    #: ``metav1.FieldsV1`` (``{Raw}``, JSON text): the decoded JSON value in the object.
    FIELDS_V1 = "FieldsV1"
    #: ``resource.Quantity`` (``{string}``): its text in JSON, ``"0"`` for an empty message.
    QUANTITY = "Quantity"
    #: ``float64`` (wire type 1, little-endian IEEE 754): a JSON number.
    DOUBLE = "double"
    #: apiextensions' ``JSON`` (``{raw}``, JSON text): the decoded JSON value in the object,
    #: ``null`` for an empty ``raw`` (how ``null`` itself travels).
    JSON = "JSON"


class Label(Enum):
    SINGLE = "single"
    REPEATED = "repeated"
    #: ``map<string, V>``: repeated entry messages with the key as field 1, the value as 2.
    MAP = "map"


@dataclass(frozen=True, slots=True)
class Field:
    number: int
    #: The field's name in the JSON object.
    name: str
    #: A :class:`ValueType`, or the full name of a nested :class:`Message`.
    type: ValueType | str
    label: Label = Label.SINGLE
    #: A Go pointer: written only when set, and kept in the object even when zero.
    optional: bool = False
    #: The JSON tag has ``omitempty``: a zero value of a non-pointer field is left out.
    omitempty: bool = True
    #: An embedded struct (``json:",inline"``): its fields sit in the parent's JSON object.
    inline: bool = False


@dataclass(frozen=True, slots=True)
class CustomJSON:
    """The JSON form of a message whose Go type has its own ``MarshalJSON``/``UnmarshalJSON``.

    The table still says how the message is laid out on the wire; these two
    functions map between its fields (a dict as the table decodes them) and
    the JSON value the Go methods write and read, which need not be an object.
    """

    #: The message's fields, decoded, to its JSON value, as ``MarshalJSON`` writes it.
    to_json: Callable[[dict[str, Any]], Any]
    #: A JSON value to the message's fields, as ``UnmarshalJSON`` reads it.
    from_json: Callable[[Any], dict[str, Any]]


@dataclass(frozen=True)
class Message:
    name: str
    #: In field-number order, the order upstream's marshallers write them in.
    fields: tuple[Field, ...]
    by_number: dict[int, Field] = field(init=False, repr=False, compare=False)
    #: Set when the Go type marshals itself to JSON; ``None`` for an object of ``fields``.
    custom_json: CustomJSON | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_number", {f.number: f for f in self.fields})


# The builders of the tables below and in the sibling modules: each names the
# Go shape of a field (pointer or not, ``omitempty`` or not, repeated, map,
# embedded), which decides how its zero value shows in JSON.


def omitempty(number: int, name: str, type_: ValueType | str) -> Field:
    """A non-pointer field with ``omitempty``: a zero value is left out of JSON."""
    return Field(number, name, type_)


def pointer(number: int, name: str, type_: ValueType | str) -> Field:
    """A pointer field: written when set, even to its zero value."""
    return Field(number, name, type_, optional=True)


def required(number: int, name: str, type_: ValueType | str) -> Field:
    """A non-pointer field without ``omitempty``: its zero value shows in JSON."""
    return Field(number, name, type_, omitempty=False)


def repeated(number: int, name: str, type_: ValueType | str) -> Field:
    """A slice: ``repeated`` on the wire, left out of JSON when empty."""
    return Field(number, name, type_, Label.REPEATED)


def map_of(number: int, name: str, type_: ValueType | str) -> Field:
    """A ``map[string]V``: repeated key/value entries on the wire."""
    return Field(number, name, type_, Label.MAP)


def inline(number: int, message_name: str) -> Field:
    """An embedded struct (``json:",inline"``): its fields sit in the parent's object."""
    return Field(number, "", message_name, inline=True)


STRING = ValueType.STRING
INT32 = ValueType.INT32
INT64 = ValueType.INT64
BOOL = ValueType.BOOL
BYTES = ValueType.BYTES
TIME = ValueType.TIME
MICRO_TIME = ValueType.MICRO_TIME
INT_OR_STRING = ValueType.INT_OR_STRING
QUANTITY = ValueType.QUANTITY

MESSAGES: dict[str, Message] = {}


def message(name: str, *fields: Field, custom_json: CustomJSON | None = None) -> str:
    """Declare message ``name`` with ``fields``; its name, for the fields that hold it."""
    MESSAGES[name] = Message(name, tuple(sorted(fields, key=lambda f: f.number)), custom_json)
    return name


def string_list(name: str) -> str:
    """Declare ``name``, a ``[]string`` wrapped for use as a map value (``ExtraValue``).

    protobuf has no map of lists, so upstream wraps the list in a message whose
    field 1 holds the items; in JSON the value is the bare list.
    """
    return message(
        name,
        repeated(1, "items", STRING),
        custom_json=CustomJSON(
            to_json=lambda fields: list(fields.get("items") or ()),
            from_json=lambda value: {"items": list(value or ())},
        ),
    )


# --- k8s.io/apimachinery/pkg/apis/meta/v1 ---------------------------------------------------

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."

OWNER_REFERENCE = message(
    _META + "OwnerReference",
    required(1, "kind", STRING),
    required(3, "name", STRING),
    required(4, "uid", STRING),
    required(5, "apiVersion", STRING),
    pointer(6, "controller", BOOL),
    pointer(7, "blockOwnerDeletion", BOOL),
)
MANAGED_FIELDS_ENTRY = message(
    _META + "ManagedFieldsEntry",
    omitempty(1, "manager", STRING),
    omitempty(2, "operation", STRING),
    omitempty(3, "apiVersion", STRING),
    pointer(4, "time", TIME),
    omitempty(6, "fieldsType", STRING),
    Field(7, "fieldsV1", ValueType.FIELDS_V1, optional=True),
    omitempty(8, "subresource", STRING),
)
OBJECT_META = message(
    _META + "ObjectMeta",
    omitempty(1, "name", STRING),
    omitempty(2, "generateName", STRING),
    omitempty(3, "namespace", STRING),
    omitempty(4, "selfLink", STRING),
    omitempty(5, "uid", STRING),
    omitempty(6, "resourceVersion", STRING),
    omitempty(7, "generation", INT64),
    omitempty(8, "creationTimestamp", TIME),
    pointer(9, "deletionTimestamp", TIME),
    pointer(10, "deletionGracePeriodSeconds", INT64),
    map_of(11, "labels", STRING),
    map_of(12, "annotations", STRING),
    repeated(13, "ownerReferences", OWNER_REFERENCE),
    repeated(14, "finalizers", STRING),
    repeated(17, "managedFields", MANAGED_FIELDS_ENTRY),
)
LIST_META = message(
    _META + "ListMeta",
    omitempty(1, "selfLink", STRING),
    omitempty(2, "resourceVersion", STRING),
    omitempty(3, "continue", STRING),
    pointer(4, "remainingItemCount", INT64),
)
STATUS_CAUSE = message(
    _META + "StatusCause",
    omitempty(1, "reason", STRING),
    omitempty(2, "message", STRING),
    omitempty(3, "field", STRING),
)
STATUS_DETAILS = message(
    _META + "StatusDetails",
    omitempty(1, "name", STRING),
    omitempty(2, "group", STRING),
    omitempty(3, "kind", STRING),
    repeated(4, "causes", STATUS_CAUSE),
    omitempty(5, "retryAfterSeconds", INT32),
    omitempty(6, "uid", STRING),
)
STATUS = message(
    _META + "Status",
    omitempty(1, "metadata", LIST_META),
    omitempty(2, "status", STRING),
    omitempty(3, "message", STRING),
    omitempty(4, "reason", STRING),
    pointer(5, "details", STATUS_DETAILS),
    omitempty(6, "code", INT32),
)
PRECONDITIONS = message(
    _META + "Preconditions",
    pointer(1, "uid", STRING),
    pointer(2, "resourceVersion", STRING),
)
DELETE_OPTIONS = message(
    _META + "DeleteOptions",
    pointer(1, "gracePeriodSeconds", INT64),
    pointer(2, "preconditions", PRECONDITIONS),
    pointer(3, "orphanDependents", BOOL),
    pointer(4, "propagationPolicy", STRING),
    repeated(5, "dryRun", STRING),
    pointer(6, "ignoreStoreReadErrorWithClusterBreakingPotential", BOOL),
)
LABEL_SELECTOR_REQUIREMENT = message(
    _META + "LabelSelectorRequirement",
    required(1, "key", STRING),
    required(2, "operator", STRING),
    repeated(3, "values", STRING),
)
LABEL_SELECTOR = message(
    _META + "LabelSelector",
    map_of(1, "matchLabels", STRING),
    repeated(2, "matchExpressions", LABEL_SELECTOR_REQUIREMENT),
)
CONDITION = message(
    _META + "Condition",
    required(1, "type", STRING),
    required(2, "status", STRING),
    omitempty(3, "observedGeneration", INT64),
    omitempty(4, "lastTransitionTime", TIME),
    required(5, "reason", STRING),
    required(6, "message", STRING),
)

# --- k8s.io/api/core/v1 ---------------------------------------------------------------------

_CORE = "k8s.io.api.core.v1."

OBJECT_REFERENCE = message(
    _CORE + "ObjectReference",
    omitempty(1, "kind", STRING),
    omitempty(2, "namespace", STRING),
    omitempty(3, "name", STRING),
    omitempty(4, "uid", STRING),
    omitempty(5, "apiVersion", STRING),
    omitempty(6, "resourceVersion", STRING),
    omitempty(7, "fieldPath", STRING),
)
TYPED_LOCAL_OBJECT_REFERENCE = message(
    _CORE + "TypedLocalObjectReference",
    pointer(1, "apiGroup", STRING),
    required(2, "kind", STRING),
    required(3, "name", STRING),
)
NAMESPACE_CONDITION = message(
    _CORE + "NamespaceCondition",
    required(1, "type", STRING),
    required(2, "status", STRING),
    omitempty(4, "lastTransitionTime", TIME),
    omitempty(5, "reason", STRING),
    omitempty(6, "message", STRING),
)
NAMESPACE = message(
    _CORE + "Namespace",
    omitempty(1, "metadata", OBJECT_META),
    omitempty(2, "spec", message(_CORE + "NamespaceSpec", repeated(1, "finalizers", STRING))),
    omitempty(
        3,
        "status",
        message(
            _CORE + "NamespaceStatus",
            omitempty(1, "phase", STRING),
            repeated(2, "conditions", NAMESPACE_CONDITION),
        ),
    ),
)
CONFIG_MAP = message(
    _CORE + "ConfigMap",
    omitempty(1, "metadata", OBJECT_META),
    map_of(2, "data", STRING),
    map_of(3, "binaryData", BYTES),
    pointer(4, "immutable", BOOL),
)
SECRET = message(
    _CORE + "Secret",
    omitempty(1, "metadata", OBJECT_META),
    map_of(2, "data", BYTES),
    omitempty(3, "type", STRING),
    map_of(4, "stringData", STRING),
    pointer(5, "immutable", BOOL),
)
ENDPOINT_ADDRESS = message(
    _CORE + "EndpointAddress",
    required(1, "ip", STRING),
    pointer(2, "targetRef", OBJECT_REFERENCE),
    omitempty(3, "hostname", STRING),
    pointer(4, "nodeName", STRING),
)
CORE_ENDPOINT_PORT = message(
    _CORE + "EndpointPort",
    omitempty(1, "name", STRING),
    required(2, "port", INT32),
    omitempty(3, "protocol", STRING),
    pointer(4, "appProtocol", STRING),
)
ENDPOINTS = message(
    _CORE + "Endpoints",
    omitempty(1, "metadata", OBJECT_META),
    repeated(
        2,
        "subsets",
        message(
            _CORE + "EndpointSubset",
            repeated(1, "addresses", ENDPOINT_ADDRESS),
            repeated(2, "notReadyAddresses", ENDPOINT_ADDRESS),
            repeated(3, "ports", CORE_ENDPOINT_PORT),
        ),
    ),
)

EVENT_SOURCE = message(
    _CORE + "EventSource",
    omitempty(1, "component", STRING),
    omitempty(2, "host", STRING),
)
EVENT = message(
    _CORE + "Event",
    omitempty(1, "metadata", OBJECT_META),
    omitempty(2, "involvedObject", OBJECT_REFERENCE),
    omitempty(3, "reason", STRING),
    omitempty(4, "message", STRING),
    omitempty(5, "source", EVENT_SOURCE),
    omitempty(6, "firstTimestamp", TIME),
    omitempty(7, "lastTimestamp", TIME),
    omitempty(8, "count", INT32),
    omitempty(9, "type", STRING),
    omitempty(10, "eventTime", MICRO_TIME),
    pointer(
        11,
        "series",
        message(
            _CORE + "EventSeries",
            omitempty(1, "count", INT32),
            omitempty(2, "lastObservedTime", MICRO_TIME),
        ),
    ),
    omitempty(12, "action", STRING),
    pointer(13, "related", OBJECT_REFERENCE),
    required(14, "reportingComponent", STRING),
    required(15, "reportingInstance", STRING),
)

# --- k8s.io/api/autoscaling/v1 (the scale subresource) ---------------------------------------

_AUTOSCALING = "k8s.io.api.autoscaling.v1."

SCALE = message(
    _AUTOSCALING + "Scale",
    omitempty(1, "metadata", OBJECT_META),
    omitempty(2, "spec", message(_AUTOSCALING + "ScaleSpec", omitempty(1, "replicas", INT32))),
    omitempty(
        3,
        "status",
        message(
            _AUTOSCALING + "ScaleStatus",
            required(1, "replicas", INT32),
            omitempty(2, "selector", STRING),
        ),
    ),
)

# --- k8s.io/api/admissionregistration/v1 -----------------------------------------------------

_ADMISSION = "k8s.io.api.admissionregistration.v1."

RULE_WITH_OPERATIONS = message(
    _ADMISSION + "RuleWithOperations",
    repeated(1, "operations", STRING),
    inline(
        2,
        message(
            _ADMISSION + "Rule",
            repeated(1, "apiGroups", STRING),
            repeated(2, "apiVersions", STRING),
            repeated(3, "resources", STRING),
            pointer(4, "scope", STRING),
        ),
    ),
)


def webhook_client_config(package: str) -> str:
    """``WebhookClientConfig`` and its ``ServiceReference``: the same in admissionregistration
    and apiextensions (the CRD conversion webhook), under each package's name."""
    service = message(
        package + "ServiceReference",
        required(1, "namespace", STRING),
        required(2, "name", STRING),
        pointer(3, "path", STRING),
        pointer(4, "port", INT32),
    )
    return message(
        package + "WebhookClientConfig",
        pointer(1, "service", service),
        omitempty(2, "caBundle", BYTES),
        pointer(3, "url", STRING),
    )


WEBHOOK_CLIENT_CONFIG = webhook_client_config(_ADMISSION)
MATCH_CONDITION = message(
    _ADMISSION + "MatchCondition",
    required(1, "name", STRING),
    required(2, "expression", STRING),
)


def _webhook(name: str, object_selector: int, match_conditions: int, *extra: Field) -> str:
    """A mutating or validating webhook: the same fields, some under other numbers."""
    return message(
        _ADMISSION + name,
        required(1, "name", STRING),
        omitempty(2, "clientConfig", WEBHOOK_CLIENT_CONFIG),
        repeated(3, "rules", RULE_WITH_OPERATIONS),
        pointer(4, "failurePolicy", STRING),
        pointer(5, "namespaceSelector", LABEL_SELECTOR),
        pointer(6, "sideEffects", STRING),
        pointer(7, "timeoutSeconds", INT32),
        repeated(8, "admissionReviewVersions", STRING),
        pointer(9, "matchPolicy", STRING),
        pointer(object_selector, "objectSelector", LABEL_SELECTOR),
        repeated(match_conditions, "matchConditions", MATCH_CONDITION),
        *extra,
    )


MUTATING_WEBHOOK_CONFIGURATION = message(
    _ADMISSION + "MutatingWebhookConfiguration",
    omitempty(1, "metadata", OBJECT_META),
    repeated(
        2,
        "webhooks",
        _webhook("MutatingWebhook", 11, 12, pointer(10, "reinvocationPolicy", STRING)),
    ),
)
VALIDATING_WEBHOOK_CONFIGURATION = message(
    _ADMISSION + "ValidatingWebhookConfiguration",
    omitempty(1, "metadata", OBJECT_META),
    repeated(2, "webhooks", _webhook("ValidatingWebhook", 10, 11)),
)

# --- k8s.io/api/apiserverinternal/v1alpha1 --------------------------------------------------

_APISERVERINTERNAL = "k8s.io.api.apiserverinternal.v1alpha1."

STORAGE_VERSION = message(
    _APISERVERINTERNAL + "StorageVersion",
    omitempty(1, "metadata", OBJECT_META),
    # Neither is a pointer nor omitempty upstream: both always show, empty as {}.
    required(2, "spec", message(_APISERVERINTERNAL + "StorageVersionSpec")),
    required(
        3,
        "status",
        message(
            _APISERVERINTERNAL + "StorageVersionStatus",
            repeated(
                1,
                "storageVersions",
                message(
                    _APISERVERINTERNAL + "ServerStorageVersion",
                    omitempty(1, "apiServerID", STRING),
                    omitempty(2, "encodingVersion", STRING),
                    repeated(3, "decodableVersions", STRING),
                    repeated(4, "servedVersions", STRING),
                ),
            ),
            pointer(2, "commonEncodingVersion", STRING),
            repeated(
                3,
                "conditions",
                message(
                    _APISERVERINTERNAL + "StorageVersionCondition",
                    required(1, "type", STRING),
                    required(2, "status", STRING),
                    omitempty(3, "observedGeneration", INT64),
                    omitempty(4, "lastTransitionTime", TIME),
                    required(5, "reason", STRING),
                    omitempty(6, "message", STRING),
                ),
            ),
        ),
    ),
)

# --- k8s.io/api/coordination/v1 --------------------------------------------------------------

_COORDINATION = "k8s.io.api.coordination.v1."

LEASE = message(
    _COORDINATION + "Lease",
    omitempty(1, "metadata", OBJECT_META),
    omitempty(
        2,
        "spec",
        message(
            _COORDINATION + "LeaseSpec",
            pointer(1, "holderIdentity", STRING),
            pointer(2, "leaseDurationSeconds", INT32),
            pointer(3, "acquireTime", MICRO_TIME),
            pointer(4, "renewTime", MICRO_TIME),
            pointer(5, "leaseTransitions", INT32),
            pointer(6, "strategy", STRING),
            pointer(7, "preferredHolder", STRING),
        ),
    ),
)

# --- k8s.io/api/discovery/v1 -----------------------------------------------------------------

_DISCOVERY = "k8s.io.api.discovery.v1."

_FOR_ZONE = message(_DISCOVERY + "ForZone", required(1, "name", STRING))
_FOR_NODE = message(_DISCOVERY + "ForNode", required(1, "name", STRING))
DISCOVERY_ENDPOINT = message(
    _DISCOVERY + "Endpoint",
    repeated(1, "addresses", STRING),
    omitempty(
        2,
        "conditions",
        message(
            _DISCOVERY + "EndpointConditions",
            pointer(1, "ready", BOOL),
            pointer(2, "serving", BOOL),
            pointer(3, "terminating", BOOL),
        ),
    ),
    pointer(3, "hostname", STRING),
    pointer(4, "targetRef", OBJECT_REFERENCE),
    map_of(5, "deprecatedTopology", STRING),
    pointer(6, "nodeName", STRING),
    pointer(7, "zone", STRING),
    pointer(
        8,
        "hints",
        message(
            _DISCOVERY + "EndpointHints",
            repeated(1, "forZones", _FOR_ZONE),
            repeated(2, "forNodes", _FOR_NODE),
        ),
    ),
)
ENDPOINT_SLICE = message(
    _DISCOVERY + "EndpointSlice",
    omitempty(1, "metadata", OBJECT_META),
    repeated(2, "endpoints", DISCOVERY_ENDPOINT),
    repeated(
        3,
        "ports",
        message(
            _DISCOVERY + "EndpointPort",
            pointer(1, "name", STRING),
            pointer(2, "protocol", STRING),
            pointer(3, "port", INT32),
            pointer(4, "appProtocol", STRING),
        ),
    ),
    required(4, "addressType", STRING),
)

# --- k8s.io/api/events/v1 and v1beta1 --------------------------------------------------------


def _events_event(package: str) -> str:
    """events.k8s.io Event: v1beta1 and v1 have the same fields under the same numbers."""
    series = message(
        package + "EventSeries",
        required(1, "count", INT32),
        omitempty(2, "lastObservedTime", MICRO_TIME),
    )
    return message(
        package + "Event",
        omitempty(1, "metadata", OBJECT_META),
        omitempty(2, "eventTime", MICRO_TIME),
        pointer(3, "series", series),
        omitempty(4, "reportingController", STRING),
        omitempty(5, "reportingInstance", STRING),
        omitempty(6, "action", STRING),
        omitempty(7, "reason", STRING),
        omitempty(8, "regarding", OBJECT_REFERENCE),
        pointer(9, "related", OBJECT_REFERENCE),
        omitempty(10, "note", STRING),
        omitempty(11, "type", STRING),
        omitempty(12, "deprecatedSource", EVENT_SOURCE),
        omitempty(13, "deprecatedFirstTimestamp", TIME),
        omitempty(14, "deprecatedLastTimestamp", TIME),
        omitempty(15, "deprecatedCount", INT32),
    )


EVENTS_EVENT = _events_event("k8s.io.api.events.v1.")
EVENTS_EVENT_BETA = _events_event("k8s.io.api.events.v1beta1.")

# --- k8s.io/api/networking/v1 and v1beta1 ----------------------------------------------------


def _ingress(package: str, backend: tuple[Field, ...], default_backend: str) -> str:
    """Ingress of one networking version: only the backend differs between v1beta1 and v1."""
    port_status = message(
        package + "IngressPortStatus",
        required(1, "port", INT32),
        required(2, "protocol", STRING),
        pointer(3, "error", STRING),
    )
    ingress_backend = message(package + "IngressBackend", *backend)
    http_path = message(
        package + "HTTPIngressPath",
        omitempty(1, "path", STRING),
        omitempty(2, "backend", ingress_backend),
        pointer(3, "pathType", STRING),
    )
    rule_value = message(
        package + "IngressRuleValue",
        pointer(
            1,
            "http",
            message(
                package + "HTTPIngressRuleValue",
                repeated(1, "paths", http_path),
            ),
        ),
    )
    spec = message(
        package + "IngressSpec",
        pointer(1, default_backend, ingress_backend),
        repeated(
            2,
            "tls",
            message(
                package + "IngressTLS",
                repeated(1, "hosts", STRING),
                omitempty(2, "secretName", STRING),
            ),
        ),
        repeated(
            3,
            "rules",
            message(package + "IngressRule", omitempty(1, "host", STRING), inline(2, rule_value)),
        ),
        pointer(4, "ingressClassName", STRING),
    )
    load_balancer_ingress = message(
        package + "IngressLoadBalancerIngress",
        omitempty(1, "ip", STRING),
        omitempty(2, "hostname", STRING),
        repeated(4, "ports", port_status),
    )
    status = message(
        package + "IngressStatus",
        omitempty(
            1,
            "loadBalancer",
            message(
                package + "IngressLoadBalancerStatus", repeated(1, "ingress", load_balancer_ingress)
            ),
        ),
    )
    return message(
        package + "Ingress",
        omitempty(1, "metadata", OBJECT_META),
        omitempty(2, "spec", spec),
        omitempty(3, "status", status),
    )


_NETWORKING = "k8s.io.api.networking.v1."
_NETWORKING_BETA = "k8s.io.api.networking.v1beta1."

INGRESS = _ingress(
    _NETWORKING,
    (
        pointer(3, "resource", TYPED_LOCAL_OBJECT_REFERENCE),
        pointer(
            4,
            "service",
            message(
                _NETWORKING + "IngressServiceBackend",
                required(1, "name", STRING),
                omitempty(
                    2,
                    "port",
                    message(
                        _NETWORKING + "ServiceBackendPort",
                        omitempty(1, "name", STRING),
                        omitempty(2, "number", INT32),
                    ),
                ),
            ),
        ),
    ),
    "defaultBackend",
)
INGRESS_BETA = _ingress(
    _NETWORKING_BETA,
    (
        omitempty(1, "serviceName", STRING),
        omitempty(2, "servicePort", INT_OR_STRING),
        pointer(3, "resource", TYPED_LOCAL_OBJECT_REFERENCE),
    ),
    "backend",
)

# --- k8s.io/api/policy/v1 and v1beta1 --------------------------------------------------------


def _pod_disruption_budget(package: str) -> str:
    """PodDisruptionBudget: v1beta1 and v1 have the same fields under the same numbers."""
    spec = message(
        package + "PodDisruptionBudgetSpec",
        pointer(1, "minAvailable", INT_OR_STRING),
        pointer(2, "selector", LABEL_SELECTOR),
        pointer(3, "maxUnavailable", INT_OR_STRING),
        pointer(4, "unhealthyPodEvictionPolicy", STRING),
    )
    status = message(
        package + "PodDisruptionBudgetStatus",
        omitempty(1, "observedGeneration", INT64),
        map_of(2, "disruptedPods", TIME),
        required(3, "disruptionsAllowed", INT32),
        required(4, "currentHealthy", INT32),
        required(5, "desiredHealthy", INT32),
        required(6, "expectedPods", INT32),
        repeated(7, "conditions", CONDITION),
    )
    return message(
        package + "PodDisruptionBudget",
        omitempty(1, "metadata", OBJECT_META),
        omitempty(2, "spec", spec),
        omitempty(3, "status", status),
    )


POD_DISRUPTION_BUDGET = _pod_disruption_budget("k8s.io.api.policy.v1.")
POD_DISRUPTION_BUDGET_BETA = _pod_disruption_budget("k8s.io.api.policy.v1beta1.")

# --- k8s.io/api/storagemigration/v1beta1 ----------------------------------------------------

_STORAGEMIGRATION = "k8s.io.api.storagemigration.v1beta1."

GROUP_RESOURCE = message(
    _META + "GroupResource",
    required(1, "group", STRING),
    required(2, "resource", STRING),
)

STORAGE_VERSION_MIGRATION = message(
    _STORAGEMIGRATION + "StorageVersionMigration",
    omitempty(1, "metadata", OBJECT_META),
    # Spec, status and the GroupResource are not pointers: they always show in JSON.
    required(
        2,
        "spec",
        message(
            _STORAGEMIGRATION + "StorageVersionMigrationSpec",
            required(1, "resource", GROUP_RESOURCE),
        ),
    ),
    required(
        3,
        "status",
        message(
            _STORAGEMIGRATION + "StorageVersionMigrationStatus",
            repeated(1, "conditions", CONDITION),
            omitempty(2, "resourceVersion", STRING),
        ),
    ),
)

# --- kinds ----------------------------------------------------------------------------------

#: ``(apiVersion, kind)`` of each top-level kind to its message.
KINDS: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): NAMESPACE,
    ("v1", "ConfigMap"): CONFIG_MAP,
    ("v1", "Secret"): SECRET,
    ("v1", "Endpoints"): ENDPOINTS,
    ("v1", "Event"): EVENT,
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"): (
        MUTATING_WEBHOOK_CONFIGURATION
    ),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"): (
        VALIDATING_WEBHOOK_CONFIGURATION
    ),
    ("coordination.k8s.io/v1", "Lease"): LEASE,
    ("internal.apiserver.k8s.io/v1alpha1", "StorageVersion"): STORAGE_VERSION,
    ("discovery.k8s.io/v1", "EndpointSlice"): ENDPOINT_SLICE,
    ("events.k8s.io/v1", "Event"): EVENTS_EVENT,
    ("events.k8s.io/v1beta1", "Event"): EVENTS_EVENT_BETA,
    ("networking.k8s.io/v1", "Ingress"): INGRESS,
    ("networking.k8s.io/v1beta1", "Ingress"): INGRESS_BETA,
    ("policy/v1", "PodDisruptionBudget"): POD_DISRUPTION_BUDGET,
    ("policy/v1beta1", "PodDisruptionBudget"): POD_DISRUPTION_BUDGET_BETA,
    ("storagemigration.k8s.io/v1beta1", "StorageVersionMigration"): STORAGE_VERSION_MIGRATION,
}


def _list_message(item: str) -> str:
    """``<Kind>List``: every list kind has its metadata as field 1 and its items as 2."""
    return message(item + "List", omitempty(1, "metadata", LIST_META), repeated(2, "items", item))


KINDS.update(
    {
        (api_version, kind + "List"): _list_message(item)
        for (api_version, kind), item in KINDS.items()
    }
)
KINDS["autoscaling/v1", "Scale"] = SCALE


def register_kind(api_version: str, kind: str, message_name: str) -> None:
    """Serve ``kind`` and its list in protobuf (for the tables of other modules)."""
    KINDS[api_version, kind] = message_name
    KINDS[api_version, kind + "List"] = _list_message(message_name)


#: Kinds of ``meta.k8s.io/v1`` that every group version carries (``AddToGroupVersion``).
GROUP_VERSION_INDEPENDENT_KINDS: dict[str, str] = {
    "Status": STATUS,
    "DeleteOptions": DELETE_OPTIONS,
}


def message_for(api_version: str, kind: str) -> Message | None:
    """The message of a kind, or ``None`` when kapi has no protobuf form for it."""
    name = KINDS.get((api_version, kind)) or GROUP_VERSION_INDEPENDENT_KINDS.get(kind)
    return MESSAGES[name] if name is not None else None
