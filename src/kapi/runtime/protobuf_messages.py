"""Field tables of the protobuf messages kapi reads and writes, by upstream's numbers.

Each built-in kind's protobuf form is fixed by the ``generated.proto`` of its
group version (``k8s.io/api/core/v1``, ``k8s.io/apimachinery/pkg/apis/meta/v1``
...).  A :class:`Message` here lists, for one of those messages, each field's
number, its JSON name and its type, plus the two facts of the Go struct that
the ``.proto`` does not carry and the JSON form depends on: whether the field
is a pointer (``optional``: written only when set, kept when zero) and whether
its JSON tag has ``omitempty`` (a zero value is left out of the object).

The pod template (``k8s.io/api/core/v1``), batch's CronJob and apiextensions'
CustomResourceDefinition are tabled in :mod:`kapi.runtime.protobuf_pod`,
:mod:`kapi.runtime.protobuf_batch` and :mod:`kapi.runtime.protobuf_apiextensions`,
which build on the messages here and add their kinds with :func:`register_kind`.
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


def _f(number: int, name: str, type_: ValueType | str) -> Field:
    return Field(number, name, type_)


def _opt(number: int, name: str, type_: ValueType | str) -> Field:
    return Field(number, name, type_, optional=True)


def _req(number: int, name: str, type_: ValueType | str) -> Field:
    """A non-pointer field without ``omitempty``: its zero value shows in JSON."""
    return Field(number, name, type_, omitempty=False)


def _rep(number: int, name: str, type_: ValueType | str) -> Field:
    return Field(number, name, type_, Label.REPEATED)


def _map(number: int, name: str, type_: ValueType | str) -> Field:
    return Field(number, name, type_, Label.MAP)


def _inline(number: int, message: str) -> Field:
    return Field(number, "", message, inline=True)


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


def _message(name: str, *fields: Field, custom_json: CustomJSON | None = None) -> str:
    MESSAGES[name] = Message(name, tuple(sorted(fields, key=lambda f: f.number)), custom_json)
    return name


# --- k8s.io/apimachinery/pkg/apis/meta/v1 ---------------------------------------------------

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."

OWNER_REFERENCE = _message(
    _META + "OwnerReference",
    _req(1, "kind", STRING),
    _req(3, "name", STRING),
    _req(4, "uid", STRING),
    _req(5, "apiVersion", STRING),
    _opt(6, "controller", BOOL),
    _opt(7, "blockOwnerDeletion", BOOL),
)
MANAGED_FIELDS_ENTRY = _message(
    _META + "ManagedFieldsEntry",
    _f(1, "manager", STRING),
    _f(2, "operation", STRING),
    _f(3, "apiVersion", STRING),
    _opt(4, "time", TIME),
    _f(6, "fieldsType", STRING),
    Field(7, "fieldsV1", ValueType.FIELDS_V1, optional=True),
    _f(8, "subresource", STRING),
)
OBJECT_META = _message(
    _META + "ObjectMeta",
    _f(1, "name", STRING),
    _f(2, "generateName", STRING),
    _f(3, "namespace", STRING),
    _f(4, "selfLink", STRING),
    _f(5, "uid", STRING),
    _f(6, "resourceVersion", STRING),
    _f(7, "generation", INT64),
    _f(8, "creationTimestamp", TIME),
    _opt(9, "deletionTimestamp", TIME),
    _opt(10, "deletionGracePeriodSeconds", INT64),
    _map(11, "labels", STRING),
    _map(12, "annotations", STRING),
    _rep(13, "ownerReferences", OWNER_REFERENCE),
    _rep(14, "finalizers", STRING),
    _rep(17, "managedFields", MANAGED_FIELDS_ENTRY),
)
LIST_META = _message(
    _META + "ListMeta",
    _f(1, "selfLink", STRING),
    _f(2, "resourceVersion", STRING),
    _f(3, "continue", STRING),
    _opt(4, "remainingItemCount", INT64),
)
STATUS_CAUSE = _message(
    _META + "StatusCause",
    _f(1, "reason", STRING),
    _f(2, "message", STRING),
    _f(3, "field", STRING),
)
STATUS_DETAILS = _message(
    _META + "StatusDetails",
    _f(1, "name", STRING),
    _f(2, "group", STRING),
    _f(3, "kind", STRING),
    _rep(4, "causes", STATUS_CAUSE),
    _f(5, "retryAfterSeconds", INT32),
    _f(6, "uid", STRING),
)
STATUS = _message(
    _META + "Status",
    _f(1, "metadata", LIST_META),
    _f(2, "status", STRING),
    _f(3, "message", STRING),
    _f(4, "reason", STRING),
    _opt(5, "details", STATUS_DETAILS),
    _f(6, "code", INT32),
)
PRECONDITIONS = _message(
    _META + "Preconditions",
    _opt(1, "uid", STRING),
    _opt(2, "resourceVersion", STRING),
)
DELETE_OPTIONS = _message(
    _META + "DeleteOptions",
    _opt(1, "gracePeriodSeconds", INT64),
    _opt(2, "preconditions", PRECONDITIONS),
    _opt(3, "orphanDependents", BOOL),
    _opt(4, "propagationPolicy", STRING),
    _rep(5, "dryRun", STRING),
    _opt(6, "ignoreStoreReadErrorWithClusterBreakingPotential", BOOL),
)
LABEL_SELECTOR_REQUIREMENT = _message(
    _META + "LabelSelectorRequirement",
    _req(1, "key", STRING),
    _req(2, "operator", STRING),
    _rep(3, "values", STRING),
)
LABEL_SELECTOR = _message(
    _META + "LabelSelector",
    _map(1, "matchLabels", STRING),
    _rep(2, "matchExpressions", LABEL_SELECTOR_REQUIREMENT),
)
CONDITION = _message(
    _META + "Condition",
    _req(1, "type", STRING),
    _req(2, "status", STRING),
    _f(3, "observedGeneration", INT64),
    _f(4, "lastTransitionTime", TIME),
    _req(5, "reason", STRING),
    _req(6, "message", STRING),
)

# --- k8s.io/api/core/v1 ---------------------------------------------------------------------

_CORE = "k8s.io.api.core.v1."

OBJECT_REFERENCE = _message(
    _CORE + "ObjectReference",
    _f(1, "kind", STRING),
    _f(2, "namespace", STRING),
    _f(3, "name", STRING),
    _f(4, "uid", STRING),
    _f(5, "apiVersion", STRING),
    _f(6, "resourceVersion", STRING),
    _f(7, "fieldPath", STRING),
)
TYPED_LOCAL_OBJECT_REFERENCE = _message(
    _CORE + "TypedLocalObjectReference",
    _opt(1, "apiGroup", STRING),
    _req(2, "kind", STRING),
    _req(3, "name", STRING),
)
NAMESPACE_CONDITION = _message(
    _CORE + "NamespaceCondition",
    _req(1, "type", STRING),
    _req(2, "status", STRING),
    _f(4, "lastTransitionTime", TIME),
    _f(5, "reason", STRING),
    _f(6, "message", STRING),
)
NAMESPACE = _message(
    _CORE + "Namespace",
    _f(1, "metadata", OBJECT_META),
    _f(2, "spec", _message(_CORE + "NamespaceSpec", _rep(1, "finalizers", STRING))),
    _f(
        3,
        "status",
        _message(
            _CORE + "NamespaceStatus",
            _f(1, "phase", STRING),
            _rep(2, "conditions", NAMESPACE_CONDITION),
        ),
    ),
)
CONFIG_MAP = _message(
    _CORE + "ConfigMap",
    _f(1, "metadata", OBJECT_META),
    _map(2, "data", STRING),
    _map(3, "binaryData", BYTES),
    _opt(4, "immutable", BOOL),
)
SECRET = _message(
    _CORE + "Secret",
    _f(1, "metadata", OBJECT_META),
    _map(2, "data", BYTES),
    _f(3, "type", STRING),
    _map(4, "stringData", STRING),
    _opt(5, "immutable", BOOL),
)
ENDPOINT_ADDRESS = _message(
    _CORE + "EndpointAddress",
    _req(1, "ip", STRING),
    _opt(2, "targetRef", OBJECT_REFERENCE),
    _f(3, "hostname", STRING),
    _opt(4, "nodeName", STRING),
)
CORE_ENDPOINT_PORT = _message(
    _CORE + "EndpointPort",
    _f(1, "name", STRING),
    _req(2, "port", INT32),
    _f(3, "protocol", STRING),
    _opt(4, "appProtocol", STRING),
)
ENDPOINTS = _message(
    _CORE + "Endpoints",
    _f(1, "metadata", OBJECT_META),
    _rep(
        2,
        "subsets",
        _message(
            _CORE + "EndpointSubset",
            _rep(1, "addresses", ENDPOINT_ADDRESS),
            _rep(2, "notReadyAddresses", ENDPOINT_ADDRESS),
            _rep(3, "ports", CORE_ENDPOINT_PORT),
        ),
    ),
)

EVENT_SOURCE = _message(
    _CORE + "EventSource",
    _f(1, "component", STRING),
    _f(2, "host", STRING),
)
EVENT = _message(
    _CORE + "Event",
    _f(1, "metadata", OBJECT_META),
    _f(2, "involvedObject", OBJECT_REFERENCE),
    _f(3, "reason", STRING),
    _f(4, "message", STRING),
    _f(5, "source", EVENT_SOURCE),
    _f(6, "firstTimestamp", TIME),
    _f(7, "lastTimestamp", TIME),
    _f(8, "count", INT32),
    _f(9, "type", STRING),
    _f(10, "eventTime", MICRO_TIME),
    _opt(
        11,
        "series",
        _message(
            _CORE + "EventSeries",
            _f(1, "count", INT32),
            _f(2, "lastObservedTime", MICRO_TIME),
        ),
    ),
    _f(12, "action", STRING),
    _opt(13, "related", OBJECT_REFERENCE),
    _req(14, "reportingComponent", STRING),
    _req(15, "reportingInstance", STRING),
)

# --- k8s.io/api/autoscaling/v1 (the scale subresource) ---------------------------------------

_AUTOSCALING = "k8s.io.api.autoscaling.v1."

SCALE = _message(
    _AUTOSCALING + "Scale",
    _f(1, "metadata", OBJECT_META),
    _f(2, "spec", _message(_AUTOSCALING + "ScaleSpec", _f(1, "replicas", INT32))),
    _f(
        3,
        "status",
        _message(
            _AUTOSCALING + "ScaleStatus",
            _req(1, "replicas", INT32),
            _f(2, "selector", STRING),
        ),
    ),
)

# --- k8s.io/api/admissionregistration/v1 -----------------------------------------------------

_ADMISSION = "k8s.io.api.admissionregistration.v1."

RULE_WITH_OPERATIONS = _message(
    _ADMISSION + "RuleWithOperations",
    _rep(1, "operations", STRING),
    _inline(
        2,
        _message(
            _ADMISSION + "Rule",
            _rep(1, "apiGroups", STRING),
            _rep(2, "apiVersions", STRING),
            _rep(3, "resources", STRING),
            _opt(4, "scope", STRING),
        ),
    ),
)


def webhook_client_config(package: str) -> str:
    """``WebhookClientConfig`` and its ``ServiceReference``: the same in admissionregistration
    and apiextensions (the CRD conversion webhook), under each package's name."""
    service = _message(
        package + "ServiceReference",
        _req(1, "namespace", STRING),
        _req(2, "name", STRING),
        _opt(3, "path", STRING),
        _opt(4, "port", INT32),
    )
    return _message(
        package + "WebhookClientConfig",
        _opt(1, "service", service),
        _f(2, "caBundle", BYTES),
        _opt(3, "url", STRING),
    )


WEBHOOK_CLIENT_CONFIG = webhook_client_config(_ADMISSION)
MATCH_CONDITION = _message(
    _ADMISSION + "MatchCondition",
    _req(1, "name", STRING),
    _req(2, "expression", STRING),
)


def _webhook(name: str, object_selector: int, match_conditions: int, *extra: Field) -> str:
    """A mutating or validating webhook: the same fields, some under other numbers."""
    return _message(
        _ADMISSION + name,
        _req(1, "name", STRING),
        _f(2, "clientConfig", WEBHOOK_CLIENT_CONFIG),
        _rep(3, "rules", RULE_WITH_OPERATIONS),
        _opt(4, "failurePolicy", STRING),
        _opt(5, "namespaceSelector", LABEL_SELECTOR),
        _opt(6, "sideEffects", STRING),
        _opt(7, "timeoutSeconds", INT32),
        _rep(8, "admissionReviewVersions", STRING),
        _opt(9, "matchPolicy", STRING),
        _opt(object_selector, "objectSelector", LABEL_SELECTOR),
        _rep(match_conditions, "matchConditions", MATCH_CONDITION),
        *extra,
    )


MUTATING_WEBHOOK_CONFIGURATION = _message(
    _ADMISSION + "MutatingWebhookConfiguration",
    _f(1, "metadata", OBJECT_META),
    _rep(
        2, "webhooks", _webhook("MutatingWebhook", 11, 12, _opt(10, "reinvocationPolicy", STRING))
    ),
)
VALIDATING_WEBHOOK_CONFIGURATION = _message(
    _ADMISSION + "ValidatingWebhookConfiguration",
    _f(1, "metadata", OBJECT_META),
    _rep(2, "webhooks", _webhook("ValidatingWebhook", 10, 11)),
)

# --- k8s.io/api/coordination/v1 --------------------------------------------------------------

_COORDINATION = "k8s.io.api.coordination.v1."

LEASE = _message(
    _COORDINATION + "Lease",
    _f(1, "metadata", OBJECT_META),
    _f(
        2,
        "spec",
        _message(
            _COORDINATION + "LeaseSpec",
            _opt(1, "holderIdentity", STRING),
            _opt(2, "leaseDurationSeconds", INT32),
            _opt(3, "acquireTime", MICRO_TIME),
            _opt(4, "renewTime", MICRO_TIME),
            _opt(5, "leaseTransitions", INT32),
            _opt(6, "strategy", STRING),
            _opt(7, "preferredHolder", STRING),
        ),
    ),
)

# --- k8s.io/api/discovery/v1 -----------------------------------------------------------------

_DISCOVERY = "k8s.io.api.discovery.v1."

_FOR_ZONE = _message(_DISCOVERY + "ForZone", _req(1, "name", STRING))
_FOR_NODE = _message(_DISCOVERY + "ForNode", _req(1, "name", STRING))
DISCOVERY_ENDPOINT = _message(
    _DISCOVERY + "Endpoint",
    _rep(1, "addresses", STRING),
    _f(
        2,
        "conditions",
        _message(
            _DISCOVERY + "EndpointConditions",
            _opt(1, "ready", BOOL),
            _opt(2, "serving", BOOL),
            _opt(3, "terminating", BOOL),
        ),
    ),
    _opt(3, "hostname", STRING),
    _opt(4, "targetRef", OBJECT_REFERENCE),
    _map(5, "deprecatedTopology", STRING),
    _opt(6, "nodeName", STRING),
    _opt(7, "zone", STRING),
    _opt(
        8,
        "hints",
        _message(
            _DISCOVERY + "EndpointHints",
            _rep(1, "forZones", _FOR_ZONE),
            _rep(2, "forNodes", _FOR_NODE),
        ),
    ),
)
ENDPOINT_SLICE = _message(
    _DISCOVERY + "EndpointSlice",
    _f(1, "metadata", OBJECT_META),
    _rep(2, "endpoints", DISCOVERY_ENDPOINT),
    _rep(
        3,
        "ports",
        _message(
            _DISCOVERY + "EndpointPort",
            _opt(1, "name", STRING),
            _opt(2, "protocol", STRING),
            _opt(3, "port", INT32),
            _opt(4, "appProtocol", STRING),
        ),
    ),
    _req(4, "addressType", STRING),
)

# --- k8s.io/api/events/v1 and v1beta1 --------------------------------------------------------


def _events_event(package: str) -> str:
    """events.k8s.io Event: v1beta1 and v1 have the same fields under the same numbers."""
    series = _message(
        package + "EventSeries",
        _req(1, "count", INT32),
        _f(2, "lastObservedTime", MICRO_TIME),
    )
    return _message(
        package + "Event",
        _f(1, "metadata", OBJECT_META),
        _f(2, "eventTime", MICRO_TIME),
        _opt(3, "series", series),
        _f(4, "reportingController", STRING),
        _f(5, "reportingInstance", STRING),
        _f(6, "action", STRING),
        _f(7, "reason", STRING),
        _f(8, "regarding", OBJECT_REFERENCE),
        _opt(9, "related", OBJECT_REFERENCE),
        _f(10, "note", STRING),
        _f(11, "type", STRING),
        _f(12, "deprecatedSource", EVENT_SOURCE),
        _f(13, "deprecatedFirstTimestamp", TIME),
        _f(14, "deprecatedLastTimestamp", TIME),
        _f(15, "deprecatedCount", INT32),
    )


EVENTS_EVENT = _events_event("k8s.io.api.events.v1.")
EVENTS_EVENT_BETA = _events_event("k8s.io.api.events.v1beta1.")

# --- k8s.io/api/networking/v1 and v1beta1 ----------------------------------------------------


def _ingress(package: str, backend: tuple[Field, ...], default_backend: str) -> str:
    """Ingress of one networking version: only the backend differs between v1beta1 and v1."""
    port_status = _message(
        package + "IngressPortStatus",
        _req(1, "port", INT32),
        _req(2, "protocol", STRING),
        _opt(3, "error", STRING),
    )
    ingress_backend = _message(package + "IngressBackend", *backend)
    http_path = _message(
        package + "HTTPIngressPath",
        _f(1, "path", STRING),
        _f(2, "backend", ingress_backend),
        _opt(3, "pathType", STRING),
    )
    rule_value = _message(
        package + "IngressRuleValue",
        _opt(
            1,
            "http",
            _message(
                package + "HTTPIngressRuleValue",
                _rep(1, "paths", http_path),
            ),
        ),
    )
    spec = _message(
        package + "IngressSpec",
        _opt(1, default_backend, ingress_backend),
        _rep(
            2,
            "tls",
            _message(package + "IngressTLS", _rep(1, "hosts", STRING), _f(2, "secretName", STRING)),
        ),
        _rep(
            3,
            "rules",
            _message(package + "IngressRule", _f(1, "host", STRING), _inline(2, rule_value)),
        ),
        _opt(4, "ingressClassName", STRING),
    )
    load_balancer_ingress = _message(
        package + "IngressLoadBalancerIngress",
        _f(1, "ip", STRING),
        _f(2, "hostname", STRING),
        _rep(4, "ports", port_status),
    )
    status = _message(
        package + "IngressStatus",
        _f(
            1,
            "loadBalancer",
            _message(
                package + "IngressLoadBalancerStatus", _rep(1, "ingress", load_balancer_ingress)
            ),
        ),
    )
    return _message(
        package + "Ingress",
        _f(1, "metadata", OBJECT_META),
        _f(2, "spec", spec),
        _f(3, "status", status),
    )


_NETWORKING = "k8s.io.api.networking.v1."
_NETWORKING_BETA = "k8s.io.api.networking.v1beta1."

INGRESS = _ingress(
    _NETWORKING,
    (
        _opt(3, "resource", TYPED_LOCAL_OBJECT_REFERENCE),
        _opt(
            4,
            "service",
            _message(
                _NETWORKING + "IngressServiceBackend",
                _req(1, "name", STRING),
                _f(
                    2,
                    "port",
                    _message(
                        _NETWORKING + "ServiceBackendPort",
                        _f(1, "name", STRING),
                        _f(2, "number", INT32),
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
        _f(1, "serviceName", STRING),
        _f(2, "servicePort", INT_OR_STRING),
        _opt(3, "resource", TYPED_LOCAL_OBJECT_REFERENCE),
    ),
    "backend",
)

# --- k8s.io/api/policy/v1 and v1beta1 --------------------------------------------------------


def _pod_disruption_budget(package: str) -> str:
    """PodDisruptionBudget: v1beta1 and v1 have the same fields under the same numbers."""
    spec = _message(
        package + "PodDisruptionBudgetSpec",
        _opt(1, "minAvailable", INT_OR_STRING),
        _opt(2, "selector", LABEL_SELECTOR),
        _opt(3, "maxUnavailable", INT_OR_STRING),
        _opt(4, "unhealthyPodEvictionPolicy", STRING),
    )
    status = _message(
        package + "PodDisruptionBudgetStatus",
        _f(1, "observedGeneration", INT64),
        _map(2, "disruptedPods", TIME),
        _req(3, "disruptionsAllowed", INT32),
        _req(4, "currentHealthy", INT32),
        _req(5, "desiredHealthy", INT32),
        _req(6, "expectedPods", INT32),
        _rep(7, "conditions", CONDITION),
    )
    return _message(
        package + "PodDisruptionBudget",
        _f(1, "metadata", OBJECT_META),
        _f(2, "spec", spec),
        _f(3, "status", status),
    )


POD_DISRUPTION_BUDGET = _pod_disruption_budget("k8s.io.api.policy.v1.")
POD_DISRUPTION_BUDGET_BETA = _pod_disruption_budget("k8s.io.api.policy.v1beta1.")

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
    ("discovery.k8s.io/v1", "EndpointSlice"): ENDPOINT_SLICE,
    ("events.k8s.io/v1", "Event"): EVENTS_EVENT,
    ("events.k8s.io/v1beta1", "Event"): EVENTS_EVENT_BETA,
    ("networking.k8s.io/v1", "Ingress"): INGRESS,
    ("networking.k8s.io/v1beta1", "Ingress"): INGRESS_BETA,
    ("policy/v1", "PodDisruptionBudget"): POD_DISRUPTION_BUDGET,
    ("policy/v1beta1", "PodDisruptionBudget"): POD_DISRUPTION_BUDGET_BETA,
}


def _list_message(item: str) -> str:
    """``<Kind>List``: every list kind has its metadata as field 1 and its items as 2."""
    return _message(item + "List", _f(1, "metadata", LIST_META), _rep(2, "items", item))


KINDS.update(
    {
        (api_version, kind + "List"): _list_message(item)
        for (api_version, kind), item in KINDS.items()
    }
)
KINDS["autoscaling/v1", "Scale"] = SCALE


def register_kind(api_version: str, kind: str, message: str) -> None:
    """Serve ``kind`` and its list in protobuf (for the tables of other modules)."""
    KINDS[api_version, kind] = message
    KINDS[api_version, kind + "List"] = _list_message(message)


#: Kinds of ``meta.k8s.io/v1`` that every group version carries (``AddToGroupVersion``).
GROUP_VERSION_INDEPENDENT_KINDS: dict[str, str] = {
    "Status": STATUS,
    "DeleteOptions": DELETE_OPTIONS,
}


def message_for(api_version: str, kind: str) -> Message | None:
    """The message of a kind, or ``None`` when kapi has no protobuf form for it."""
    name = KINDS.get((api_version, kind)) or GROUP_VERSION_INDEPENDENT_KINDS.get(kind)
    return MESSAGES[name] if name is not None else None
