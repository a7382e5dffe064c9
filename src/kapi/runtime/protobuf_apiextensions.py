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

from kapi.runtime.protobuf_messages import (
    BOOL,
    INT32,
    INT64,
    OBJECT_META,
    STRING,
    TIME,
    CustomJSON,
    ValueType,
    _f,
    _map,
    _message,
    _opt,
    _rep,
    _req,
    register_kind,
    webhook_client_config,
)

_V1 = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1."

DOUBLE = ValueType.DOUBLE
JSON = ValueType.JSON
#: Named before it is declared: the schema's own fields hold schemas.
JSON_SCHEMA_PROPS = _V1 + "JSONSchemaProps"

Object = dict[str, Any]


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


JSON_SCHEMA_PROPS_OR_ARRAY = _message(
    _V1 + "JSONSchemaPropsOrArray",
    _opt(1, "schema", JSON_SCHEMA_PROPS),
    _rep(2, "jSONSchemas", JSON_SCHEMA_PROPS),
    custom_json=_schema_or_list("jSONSchemas"),
)
JSON_SCHEMA_PROPS_OR_BOOL = _message(
    _V1 + "JSONSchemaPropsOrBool",
    _req(1, "allows", BOOL),
    _opt(2, "schema", JSON_SCHEMA_PROPS),
    custom_json=CustomJSON(_schema_or_bool_to_json, _schema_or_bool_from_json),
)
JSON_SCHEMA_PROPS_OR_STRING_ARRAY = _message(
    _V1 + "JSONSchemaPropsOrStringArray",
    _opt(1, "schema", JSON_SCHEMA_PROPS),
    _rep(2, "property", STRING),
    custom_json=_schema_or_list("property"),
)
EXTERNAL_DOCUMENTATION = _message(
    _V1 + "ExternalDocumentation",
    _f(1, "description", STRING),
    _f(2, "url", STRING),
)
VALIDATION_RULE = _message(
    _V1 + "ValidationRule",
    _req(1, "rule", STRING),
    _f(2, "message", STRING),
    _f(3, "messageExpression", STRING),
    _opt(4, "reason", STRING),
    _f(5, "fieldPath", STRING),
    _opt(6, "optionalOldSelf", BOOL),
)


_message(
    JSON_SCHEMA_PROPS,
    _f(1, "id", STRING),
    _f(2, "$schema", STRING),
    _opt(3, "$ref", STRING),
    _f(4, "description", STRING),
    _f(5, "type", STRING),
    _f(6, "format", STRING),
    _f(7, "title", STRING),
    _opt(8, "default", JSON),
    _opt(9, "maximum", DOUBLE),
    _f(10, "exclusiveMaximum", BOOL),
    _opt(11, "minimum", DOUBLE),
    _f(12, "exclusiveMinimum", BOOL),
    _opt(13, "maxLength", INT64),
    _opt(14, "minLength", INT64),
    _f(15, "pattern", STRING),
    _opt(16, "maxItems", INT64),
    _opt(17, "minItems", INT64),
    _f(18, "uniqueItems", BOOL),
    _opt(19, "multipleOf", DOUBLE),
    _rep(20, "enum", JSON),
    _opt(21, "maxProperties", INT64),
    _opt(22, "minProperties", INT64),
    _rep(23, "required", STRING),
    _opt(24, "items", JSON_SCHEMA_PROPS_OR_ARRAY),
    _rep(25, "allOf", JSON_SCHEMA_PROPS),
    _rep(26, "oneOf", JSON_SCHEMA_PROPS),
    _rep(27, "anyOf", JSON_SCHEMA_PROPS),
    _opt(28, "not", JSON_SCHEMA_PROPS),
    _map(29, "properties", JSON_SCHEMA_PROPS),
    _opt(30, "additionalProperties", JSON_SCHEMA_PROPS_OR_BOOL),
    _map(31, "patternProperties", JSON_SCHEMA_PROPS),
    _map(32, "dependencies", JSON_SCHEMA_PROPS_OR_STRING_ARRAY),
    _opt(33, "additionalItems", JSON_SCHEMA_PROPS_OR_BOOL),
    _map(34, "definitions", JSON_SCHEMA_PROPS),
    _opt(35, "externalDocs", EXTERNAL_DOCUMENTATION),
    _opt(36, "example", JSON),
    _f(37, "nullable", BOOL),
    _opt(38, "x-kubernetes-preserve-unknown-fields", BOOL),
    _f(39, "x-kubernetes-embedded-resource", BOOL),
    _f(40, "x-kubernetes-int-or-string", BOOL),
    _rep(41, "x-kubernetes-list-map-keys", STRING),
    _opt(42, "x-kubernetes-list-type", STRING),
    _opt(43, "x-kubernetes-map-type", STRING),
    _rep(44, "x-kubernetes-validations", VALIDATION_RULE),
)

CUSTOM_RESOURCE_DEFINITION_NAMES = _message(
    _V1 + "CustomResourceDefinitionNames",
    _req(1, "plural", STRING),
    _f(2, "singular", STRING),
    _rep(3, "shortNames", STRING),
    _req(4, "kind", STRING),
    _f(5, "listKind", STRING),
    _rep(6, "categories", STRING),
)
WEBHOOK_CLIENT_CONFIG = webhook_client_config(_V1)
CUSTOM_RESOURCE_CONVERSION = _message(
    _V1 + "CustomResourceConversion",
    _req(1, "strategy", STRING),
    _opt(
        2,
        "webhook",
        _message(
            _V1 + "WebhookConversion",
            _opt(2, "clientConfig", WEBHOOK_CLIENT_CONFIG),
            _rep(3, "conversionReviewVersions", STRING),
        ),
    ),
)
CUSTOM_RESOURCE_SUBRESOURCES = _message(
    _V1 + "CustomResourceSubresources",
    # An empty struct: ``status: {}`` turns the subresource on.
    _opt(1, "status", _message(_V1 + "CustomResourceSubresourceStatus")),
    _opt(
        2,
        "scale",
        _message(
            _V1 + "CustomResourceSubresourceScale",
            _req(1, "specReplicasPath", STRING),
            _req(2, "statusReplicasPath", STRING),
            _opt(3, "labelSelectorPath", STRING),
        ),
    ),
)
CUSTOM_RESOURCE_COLUMN_DEFINITION = _message(
    _V1 + "CustomResourceColumnDefinition",
    _req(1, "name", STRING),
    _req(2, "type", STRING),
    _f(3, "format", STRING),
    _f(4, "description", STRING),
    _f(5, "priority", INT32),
    _req(6, "jsonPath", STRING),
)
CUSTOM_RESOURCE_DEFINITION_VERSION = _message(
    _V1 + "CustomResourceDefinitionVersion",
    _req(1, "name", STRING),
    _req(2, "served", BOOL),
    _req(3, "storage", BOOL),
    _opt(
        4,
        "schema",
        _message(_V1 + "CustomResourceValidation", _opt(1, "openAPIV3Schema", JSON_SCHEMA_PROPS)),
    ),
    _opt(5, "subresources", CUSTOM_RESOURCE_SUBRESOURCES),
    _rep(6, "additionalPrinterColumns", CUSTOM_RESOURCE_COLUMN_DEFINITION),
    _f(7, "deprecated", BOOL),
    _opt(8, "deprecationWarning", STRING),
    _rep(9, "selectableFields", _message(_V1 + "SelectableField", _req(1, "jsonPath", STRING))),
)
CUSTOM_RESOURCE_DEFINITION_SPEC = _message(
    _V1 + "CustomResourceDefinitionSpec",
    _req(1, "group", STRING),
    _req(3, "names", CUSTOM_RESOURCE_DEFINITION_NAMES),
    _req(4, "scope", STRING),
    _rep(7, "versions", CUSTOM_RESOURCE_DEFINITION_VERSION),
    _opt(9, "conversion", CUSTOM_RESOURCE_CONVERSION),
    _f(10, "preserveUnknownFields", BOOL),
)
CUSTOM_RESOURCE_DEFINITION_STATUS = _message(
    _V1 + "CustomResourceDefinitionStatus",
    _rep(
        1,
        "conditions",
        _message(
            _V1 + "CustomResourceDefinitionCondition",
            _req(1, "type", STRING),
            _req(2, "status", STRING),
            _f(3, "lastTransitionTime", TIME),
            _f(4, "reason", STRING),
            _f(5, "message", STRING),
            _f(6, "observedGeneration", INT64),
        ),
    ),
    _req(2, "acceptedNames", CUSTOM_RESOURCE_DEFINITION_NAMES),
    _rep(3, "storedVersions", STRING),
    _f(4, "observedGeneration", INT64),
)
CUSTOM_RESOURCE_DEFINITION = _message(
    _V1 + "CustomResourceDefinition",
    _f(1, "metadata", OBJECT_META),
    _req(2, "spec", CUSTOM_RESOURCE_DEFINITION_SPEC),
    _f(3, "status", CUSTOM_RESOURCE_DEFINITION_STATUS),
)

register_kind("apiextensions.k8s.io/v1", "CustomResourceDefinition", CUSTOM_RESOURCE_DEFINITION)
