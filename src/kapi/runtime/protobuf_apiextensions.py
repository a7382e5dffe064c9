"""Field tables of ``k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1``: the CRD.

CustomResourceDefinition and its list, by the numbers of that package's
``generated.proto``; pointers and ``omitempty`` are read off its
``types.go`` and ``types_jsonschema.go``.  The schema (``JSONSchemaProps``)
nests itself, so its fields name its message before it is declared.

Four of its types marshal themselves to JSON (``marshal.go``).  ``JSON``
(``default``, ``example``, ``enum`` items) is a value type of its own,
:attr:`~kapi.runtime.protobuf_messages.ValueType.JSON`; the other three are
tabled as the messages they are on the wire, with a
:class:`~kapi.runtime.protobuf_messages.CustomJSON` for their JSON forms:

* ``JSONSchemaPropsOrArray`` (``items``) is a schema, or an array of them
  when it holds any;
* ``JSONSchemaPropsOrBool`` (``additionalProperties``, ``additionalItems``)
  is its schema when it has one, else its ``allows`` as a boolean;
* ``JSONSchemaPropsOrStringArray`` (``dependencies`` values) is a string
  array when it holds any strings, else its schema.

An ``OrArray`` or ``OrStringArray`` with neither part, like an empty ``JSON``,
is ``null``: a field holding it is left out of the object, as upstream's
storage drops it when it reads the object back; a ``dependencies`` value
stays ``null``.
"""

from __future__ import annotations

from typing import Any

from kapi.apimachinery.unstructured import Object
from kapi.runtime.protobuf_messages import (
    BOOL,
    INT32,
    INT64,
    OBJECT_META,
    STRING,
    TIME,
    CustomJSON,
    ValueType,
    map_of,
    message,
    omitempty,
    pointer,
    register_kind,
    repeated,
    required,
    webhook_client_config,
)

_V1 = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1."

DOUBLE = ValueType.DOUBLE
JSON = ValueType.JSON
#: Named before it is declared: the schema's own fields hold schemas.
JSON_SCHEMA_PROPS = _V1 + "JSONSchemaProps"


def _schema_or_list(list_field: str) -> CustomJSON:
    """A schema or a list (``OrArray``, ``OrStringArray``): the list wins when it has items.

    Reading JSON, an object is the schema and an array the list; any other
    value leaves both unset, as upstream's ``UnmarshalJSON`` does.
    """

    def to_json(fields: Object) -> Any:
        return fields.get(list_field) or fields.get("schema")

    def from_json(value: Any) -> Object:
        if isinstance(value, dict):
            return {"schema": value}
        if isinstance(value, list):
            return {list_field: value}
        return {}

    return CustomJSON(to_json, from_json)


def _schema_or_bool_to_json(fields: Object) -> Any:
    return fields["schema"] if "schema" in fields else fields.get("allows", False)


def _schema_or_bool_from_json(value: Any) -> Object:
    """A schema allows, and is kept; ``true``/``false`` is ``allows`` alone."""
    if isinstance(value, dict):
        return {"allows": True, "schema": value}
    if isinstance(value, bool):
        return {"allows": value}
    raise ValueError("boolean or JSON schema expected")


JSON_SCHEMA_PROPS_OR_ARRAY = message(
    _V1 + "JSONSchemaPropsOrArray",
    pointer(1, "schema", JSON_SCHEMA_PROPS),
    repeated(2, "jSONSchemas", JSON_SCHEMA_PROPS),
    custom_json=_schema_or_list("jSONSchemas"),
)
JSON_SCHEMA_PROPS_OR_BOOL = message(
    _V1 + "JSONSchemaPropsOrBool",
    required(1, "allows", BOOL),
    pointer(2, "schema", JSON_SCHEMA_PROPS),
    custom_json=CustomJSON(_schema_or_bool_to_json, _schema_or_bool_from_json),
)
JSON_SCHEMA_PROPS_OR_STRING_ARRAY = message(
    _V1 + "JSONSchemaPropsOrStringArray",
    pointer(1, "schema", JSON_SCHEMA_PROPS),
    repeated(2, "property", STRING),
    custom_json=_schema_or_list("property"),
)
EXTERNAL_DOCUMENTATION = message(
    _V1 + "ExternalDocumentation",
    omitempty(1, "description", STRING),
    omitempty(2, "url", STRING),
)
VALIDATION_RULE = message(
    _V1 + "ValidationRule",
    required(1, "rule", STRING),
    omitempty(2, "message", STRING),
    omitempty(3, "messageExpression", STRING),
    pointer(4, "reason", STRING),
    omitempty(5, "fieldPath", STRING),
    pointer(6, "optionalOldSelf", BOOL),
)


message(
    JSON_SCHEMA_PROPS,
    omitempty(1, "id", STRING),
    omitempty(2, "$schema", STRING),
    pointer(3, "$ref", STRING),
    omitempty(4, "description", STRING),
    omitempty(5, "type", STRING),
    omitempty(6, "format", STRING),
    omitempty(7, "title", STRING),
    pointer(8, "default", JSON),
    pointer(9, "maximum", DOUBLE),
    omitempty(10, "exclusiveMaximum", BOOL),
    pointer(11, "minimum", DOUBLE),
    omitempty(12, "exclusiveMinimum", BOOL),
    pointer(13, "maxLength", INT64),
    pointer(14, "minLength", INT64),
    omitempty(15, "pattern", STRING),
    pointer(16, "maxItems", INT64),
    pointer(17, "minItems", INT64),
    omitempty(18, "uniqueItems", BOOL),
    pointer(19, "multipleOf", DOUBLE),
    repeated(20, "enum", JSON),
    pointer(21, "maxProperties", INT64),
    pointer(22, "minProperties", INT64),
    repeated(23, "required", STRING),
    pointer(24, "items", JSON_SCHEMA_PROPS_OR_ARRAY),
    repeated(25, "allOf", JSON_SCHEMA_PROPS),
    repeated(26, "oneOf", JSON_SCHEMA_PROPS),
    repeated(27, "anyOf", JSON_SCHEMA_PROPS),
    pointer(28, "not", JSON_SCHEMA_PROPS),
    map_of(29, "properties", JSON_SCHEMA_PROPS),
    pointer(30, "additionalProperties", JSON_SCHEMA_PROPS_OR_BOOL),
    map_of(31, "patternProperties", JSON_SCHEMA_PROPS),
    map_of(32, "dependencies", JSON_SCHEMA_PROPS_OR_STRING_ARRAY),
    pointer(33, "additionalItems", JSON_SCHEMA_PROPS_OR_BOOL),
    map_of(34, "definitions", JSON_SCHEMA_PROPS),
    pointer(35, "externalDocs", EXTERNAL_DOCUMENTATION),
    pointer(36, "example", JSON),
    omitempty(37, "nullable", BOOL),
    pointer(38, "x-kubernetes-preserve-unknown-fields", BOOL),
    omitempty(39, "x-kubernetes-embedded-resource", BOOL),
    omitempty(40, "x-kubernetes-int-or-string", BOOL),
    repeated(41, "x-kubernetes-list-map-keys", STRING),
    pointer(42, "x-kubernetes-list-type", STRING),
    pointer(43, "x-kubernetes-map-type", STRING),
    repeated(44, "x-kubernetes-validations", VALIDATION_RULE),
)

CUSTOM_RESOURCE_DEFINITION_NAMES = message(
    _V1 + "CustomResourceDefinitionNames",
    required(1, "plural", STRING),
    omitempty(2, "singular", STRING),
    repeated(3, "shortNames", STRING),
    required(4, "kind", STRING),
    omitempty(5, "listKind", STRING),
    repeated(6, "categories", STRING),
)
WEBHOOK_CLIENT_CONFIG = webhook_client_config(_V1)
CUSTOM_RESOURCE_CONVERSION = message(
    _V1 + "CustomResourceConversion",
    required(1, "strategy", STRING),
    pointer(
        2,
        "webhook",
        message(
            _V1 + "WebhookConversion",
            pointer(2, "clientConfig", WEBHOOK_CLIENT_CONFIG),
            repeated(3, "conversionReviewVersions", STRING),
        ),
    ),
)
CUSTOM_RESOURCE_SUBRESOURCES = message(
    _V1 + "CustomResourceSubresources",
    # An empty struct: ``status: {}`` turns the subresource on.
    pointer(1, "status", message(_V1 + "CustomResourceSubresourceStatus")),
    pointer(
        2,
        "scale",
        message(
            _V1 + "CustomResourceSubresourceScale",
            required(1, "specReplicasPath", STRING),
            required(2, "statusReplicasPath", STRING),
            pointer(3, "labelSelectorPath", STRING),
        ),
    ),
)
CUSTOM_RESOURCE_COLUMN_DEFINITION = message(
    _V1 + "CustomResourceColumnDefinition",
    required(1, "name", STRING),
    required(2, "type", STRING),
    omitempty(3, "format", STRING),
    omitempty(4, "description", STRING),
    omitempty(5, "priority", INT32),
    required(6, "jsonPath", STRING),
)
CUSTOM_RESOURCE_DEFINITION_VERSION = message(
    _V1 + "CustomResourceDefinitionVersion",
    required(1, "name", STRING),
    required(2, "served", BOOL),
    required(3, "storage", BOOL),
    pointer(
        4,
        "schema",
        message(_V1 + "CustomResourceValidation", pointer(1, "openAPIV3Schema", JSON_SCHEMA_PROPS)),
    ),
    pointer(5, "subresources", CUSTOM_RESOURCE_SUBRESOURCES),
    repeated(6, "additionalPrinterColumns", CUSTOM_RESOURCE_COLUMN_DEFINITION),
    omitempty(7, "deprecated", BOOL),
    pointer(8, "deprecationWarning", STRING),
    repeated(
        9, "selectableFields", message(_V1 + "SelectableField", required(1, "jsonPath", STRING))
    ),
)
CUSTOM_RESOURCE_DEFINITION_SPEC = message(
    _V1 + "CustomResourceDefinitionSpec",
    required(1, "group", STRING),
    required(3, "names", CUSTOM_RESOURCE_DEFINITION_NAMES),
    required(4, "scope", STRING),
    repeated(7, "versions", CUSTOM_RESOURCE_DEFINITION_VERSION),
    pointer(9, "conversion", CUSTOM_RESOURCE_CONVERSION),
    omitempty(10, "preserveUnknownFields", BOOL),
)
CUSTOM_RESOURCE_DEFINITION_STATUS = message(
    _V1 + "CustomResourceDefinitionStatus",
    repeated(
        1,
        "conditions",
        message(
            _V1 + "CustomResourceDefinitionCondition",
            required(1, "type", STRING),
            required(2, "status", STRING),
            omitempty(3, "lastTransitionTime", TIME),
            omitempty(4, "reason", STRING),
            omitempty(5, "message", STRING),
            omitempty(6, "observedGeneration", INT64),
        ),
    ),
    required(2, "acceptedNames", CUSTOM_RESOURCE_DEFINITION_NAMES),
    repeated(3, "storedVersions", STRING),
    omitempty(4, "observedGeneration", INT64),
)
CUSTOM_RESOURCE_DEFINITION = message(
    _V1 + "CustomResourceDefinition",
    omitempty(1, "metadata", OBJECT_META),
    required(2, "spec", CUSTOM_RESOURCE_DEFINITION_SPEC),
    omitempty(3, "status", CUSTOM_RESOURCE_DEFINITION_STATUS),
)

register_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition", CUSTOM_RESOURCE_DEFINITION)
