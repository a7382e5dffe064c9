"""apiextensions.k8s.io/v1 ``CustomResourceDefinition``.

The declaration follows ``k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1``;
the schemas users write (``openAPIV3Schema``) are kept as free-form JSON here
and checked by :mod:`kapi.apis.crd_validation`.  The strategy mirrors
upstream's ``strategy.go``: status is cleared on create and kept on update,
``storedVersions`` records every version ever used for storage, and
``generation`` moves with the spec.
"""

from __future__ import annotations

from kapi.apimachinery.field_errors import FieldError, Path
from kapi.apimachinery.unstructured import Object
from kapi.apis import crd_validation
from kapi.features import FeatureGate
from kapi.registry.strategy import Strategy
from kapi.registry.tables import DEFAULT_COLUMNS
from kapi.runtime.meta import Condition, kind_struct
from kapi.runtime.objects import now_rfc3339
from kapi.runtime.schema import BOOLEAN, BYTES, INT32, STRING, Field, List, Struct
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.version import Version

GROUP = "apiextensions.k8s.io"
#: Held by a deleted CRD until its custom resources are gone.
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_V1 = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1"

#: A JSON schema as users write it; validated as a whole, never pruned.
JSONSchemaProps = Struct(
    f"{_V1}.JSONSchemaProps",
    (),
    "An OpenAPI v3 schema (a subset of JSON Schema) describing custom resource objects.",
    preserve_unknown_fields=True,
)

Names = Struct(
    f"{_V1}.CustomResourceDefinitionNames",
    (
        Field(
            "categories",
            List(STRING),
            "Categories that include the resource, such as 'all' for `kubectl get all`.",
        ),
        Field("kind", STRING, "The CamelCase kind of the resource.", required=True),
        Field("listKind", STRING, "The kind of lists of the resource; defaults to kind+List."),
        Field(
            "plural",
            STRING,
            "The plural, lowercase name served at /apis/<group>/<version>/.",
            required=True,
        ),
        Field("shortNames", List(STRING), "Short aliases, as in `kubectl get <shortname>`."),
        Field("singular", STRING, "The singular, lowercase name; defaults to lowercase kind."),
    ),
    "Names used to serve a custom resource.",
)

ServiceReference = Struct(
    f"{_V1}.ServiceReference",
    (
        Field("name", STRING, "The service's name.", required=True),
        Field("namespace", STRING, "The service's namespace.", required=True),
        Field("path", STRING, "The URL path requests are sent to."),
        Field("port", INT32, "The port on the service; defaults to 443."),
    ),
    "A reference to a Service that serves a webhook.",
)

WebhookClientConfig = Struct(
    f"{_V1}.WebhookClientConfig",
    (
        Field("caBundle", BYTES, "PEM CA bundle that signs the webhook's serving certificate."),
        Field("service", ServiceReference, "The service serving the webhook."),
        Field("url", STRING, "The webhook's https URL."),
    ),
    "How to reach a webhook.",
)

CustomResourceConversion = Struct(
    f"{_V1}.CustomResourceConversion",
    (
        Field("strategy", STRING, "None (only apiVersion changes) or Webhook.", required=True),
        Field(
            "webhook",
            Struct(
                f"{_V1}.WebhookConversion",
                (
                    Field("clientConfig", WebhookClientConfig, "How to call the webhook."),
                    Field(
                        "conversionReviewVersions",
                        List(STRING),
                        "ConversionReview versions the webhook accepts, preferred first.",
                        required=True,
                    ),
                ),
                "A conversion webhook.",
            ),
            "The conversion webhook, for strategy Webhook.",
        ),
    ),
    "How custom resources convert between versions.",
)

CustomResourceColumnDefinition = Struct(
    f"{_V1}.CustomResourceColumnDefinition",
    (
        Field("description", STRING, "A description of the column."),
        Field("format", STRING, "An optional OpenAPI format of the column's values."),
        Field("jsonPath", STRING, "A simple JSON path evaluated on each object.", required=True),
        Field("name", STRING, "The column's heading.", required=True),
        Field("priority", INT32, "0 for the standard view, more for `-o wide`."),
        Field("type", STRING, "The OpenAPI type of the column's values.", required=True),
    ),
    "An additional column of `kubectl get`.",
)

Subresources = Struct(
    f"{_V1}.CustomResourceSubresources",
    (
        Field(
            "scale",
            Struct(
                f"{_V1}.CustomResourceSubresourceScale",
                (
                    Field("labelSelectorPath", STRING, "JSON path of the label selector."),
                    Field(
                        "specReplicasPath",
                        STRING,
                        "JSON path of the desired replicas.",
                        required=True,
                    ),
                    Field(
                        "statusReplicasPath",
                        STRING,
                        "JSON path of the observed replicas.",
                        required=True,
                    ),
                ),
                "The /scale subresource.",
            ),
            "Serve /scale.",
        ),
        Field(
            "status",
            Struct(
                f"{_V1}.CustomResourceSubresourceStatus",
                (),
                "The /status subresource.",
                preserve_unknown_fields=True,
            ),
            "Serve /status.",
        ),
    ),
    "Subresources of a custom resource.",
)

CustomResourceDefinitionVersion = Struct(
    f"{_V1}.CustomResourceDefinitionVersion",
    (
        Field(
            "additionalPrinterColumns",
            List(CustomResourceColumnDefinition),
            "Columns of `kubectl get`.",
        ),
        Field("deprecated", BOOLEAN, "Whether requests to this version get a warning."),
        Field("deprecationWarning", STRING, "Overrides the default deprecation warning."),
        Field("name", STRING, "The name of the version, such as v1 or v2beta1.", required=True),
        Field(
            "schema",
            Struct(
                f"{_V1}.CustomResourceValidation",
                (Field("openAPIV3Schema", JSONSchemaProps, "The schema of this version."),),
                "Validation of a version's objects.",
            ),
            "The schema of this version's objects.",
        ),
        Field(
            "selectableFields",
            List(
                Struct(
                    f"{_V1}.SelectableField",
                    (Field("jsonPath", STRING, "The field's JSON path.", required=True),),
                    "A field usable in field selectors.",
                )
            ),
            "Fields usable in field selectors.",
        ),
        Field("served", BOOLEAN, "Whether this version is served.", required=True),
        Field("storage", BOOLEAN, "Whether objects are stored in this version.", required=True),
        Field("subresources", Subresources, "Subresources of this version."),
    ),
    "One version of a custom resource.",
)

CustomResourceDefinitionSpec = Struct(
    f"{_V1}.CustomResourceDefinitionSpec",
    (
        Field("conversion", CustomResourceConversion, "How versions convert."),
        Field("group", STRING, "The API group of the resource.", required=True),
        Field("names", Names, "The names of the resource.", required=True),
        Field("preserveUnknownFields", BOOLEAN, "Must be false in v1."),
        Field("scope", STRING, "Cluster or Namespaced.", required=True),
        Field(
            "versions", List(CustomResourceDefinitionVersion), "The versions served.", required=True
        ),
    ),
    "The desired state of a custom resource definition.",
)

CustomResourceDefinitionStatus = Struct(
    f"{_V1}.CustomResourceDefinitionStatus",
    (
        Field("acceptedNames", Names, "The names actually being served."),
        Field("conditions", List(Condition, "map", ("type",)), "The definition's conditions."),
        Field("storedVersions", List(STRING), "Every version objects were ever stored in."),
    ),
    "The observed state of a custom resource definition.",
)

CustomResourceDefinition = kind_struct(
    f"{_V1}.CustomResourceDefinition",
    ((GROUP, "v1", "CustomResourceDefinition"),),
    (
        Field("spec", CustomResourceDefinitionSpec, "The resource being defined.", required=True),
        Field("status", CustomResourceDefinitionStatus, "The definition's observed state."),
    ),
    "A custom resource served by the API server.",
)


def set_defaults(crd: Object) -> None:
    """Upstream v1 defaulting: singular, listKind, conversion strategy, webhook port."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    conversion = spec.setdefault("conversion", {"strategy": "None"})
    if isinstance(conversion, dict):
        conversion.setdefault("strategy", "None")
        webhook = conversion.get("webhook")
        service = ((webhook or {}).get("clientConfig") or {}).get("service")
        if isinstance(service, dict):
            service.setdefault("port", 443)


def storage_version(crd: Object) -> str | None:
    for version in crd.get("spec", {}).get("versions") or []:
        if isinstance(version, dict) and version.get("storage"):
            return version.get("name")
    return None


def _versions(crd: Object) -> list[Object]:
    return [v for v in (crd.get("spec") or {}).get("versions") or () if isinstance(v, dict)]


def _schemas(crd: Object) -> list[Object]:
    schemas = ((v.get("schema") or {}).get("openAPIV3Schema") for v in _versions(crd))
    return [s for s in schemas if isinstance(s, dict)]


def _has_optional_old_self(schema: Object) -> bool:
    rules = schema.get("x-kubernetes-validations")
    return isinstance(rules, list) and any(
        isinstance(r, dict) and r.get("optionalOldSelf") is not None for r in rules
    )


def _drop_optional_old_self(schema: object) -> None:
    """Upstream ``dropOptionalOldSelfField``: through properties, items, additionalProperties."""
    if not isinstance(schema, dict):
        return
    for rule in schema.get("x-kubernetes-validations") or ():
        if isinstance(rule, dict):
            rule.pop("optionalOldSelf", None)
    children = list((schema.get("properties") or {}).values())
    items = schema.get("items")
    children += items if isinstance(items, list) else [items]
    children.append(schema.get("additionalProperties"))
    for child in children:
        _drop_optional_old_self(child)


def drop_disabled_fields(new: Object, old: Object | None, gates: FeatureGate) -> None:
    """Upstream ``dropDisabledFields``: fields of disabled gates go, unless already in use.

    At an emulated release where a gate is off (or with it turned off), a new
    CRD loses the fields, while one that already had them keeps them on update.
    """
    if not gates.enabled("CRDValidationRatcheting") and not (
        old and any(crd_validation.schema_has(s, _has_optional_old_self) for s in _schemas(old))
    ):
        for schema in _schemas(new):
            _drop_optional_old_self(schema)
    if not gates.enabled("CustomResourceFieldSelectors") and not (
        old and any(v.get("selectableFields") is not None for v in _versions(old))
    ):
        for version in _versions(new):
            version.pop("selectableFields", None)


class CustomResourceDefinitionStrategy(Strategy):
    """Upstream ``strategy`` for CRDs: status-aware, generation-tracking, storedVersions."""

    has_generation = True
    has_status = True
    #: A PUT must name the version it replaces (upstream's CRD strategy).
    allow_unconditional_update = False

    def __init__(self, gates: FeatureGate) -> None:
        self.gates = gates

    @staticmethod
    def validate_name(name: str, prefix: bool) -> list[str]:
        # The name is checked against spec.names.plural + "." + spec.group instead.
        return []

    def prepare_for_create(self, obj: Object) -> None:
        super().prepare_for_create(obj)
        drop_disabled_fields(obj, None, self.gates)
        status: Object = {"acceptedNames": {"plural": "", "kind": ""}}
        version = storage_version(obj)
        if version:
            status["storedVersions"] = [version]
        obj["status"] = status

    def prepare_for_update(self, new: Object, old: Object) -> None:
        super().prepare_for_update(new, old)
        drop_disabled_fields(new, old, self.gates)
        version = storage_version(new)
        status = new.setdefault("status", {})
        stored = status.setdefault("storedVersions", [])
        if version and version not in stored:
            stored.append(version)

    def has_pending_finalizers(self, obj: Object) -> bool:
        """A first delete only marks the CRD: its custom resources must go first (upstream)."""
        metadata = obj.get("metadata", {})
        return bool(metadata.get("finalizers")) or not metadata.get("deletionTimestamp")

    def prepare_for_graceful_delete(self, obj: Object) -> None:
        finalizers = obj["metadata"].setdefault("finalizers", [])
        if CLEANUP_FINALIZER not in finalizers:
            finalizers.append(CLEANUP_FINALIZER)
        conditions = obj.setdefault("status", {}).setdefault("conditions", [])
        conditions[:] = [c for c in conditions if c.get("type") != "Terminating"]
        conditions.append(
            {
                "type": "Terminating",
                "status": "True",
                "lastTransitionTime": now_rfc3339(),
                "reason": "InstanceDeletionInProgress",
                "message": "CustomResource deletion is in progress",
            }
        )

    def validate(self, obj: Object) -> list[FieldError]:
        return crd_validation.validate_crd(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return crd_validation.validate_crd_update(new, old)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        # Upstream's status strategy checks accepted names, not storedVersions.
        return crd_validation.validate_crd_status(
            new.get("status") or {}, new.get("spec") or {}, Path("status"), stored_versions=False
        )


def resources(gates: FeatureGate) -> list[Resource]:
    """The apiextensions.k8s.io/v1 resources this module defines."""
    return [
        Resource(
            group=GROUP,
            kind="CustomResourceDefinition",
            plural="customresourcedefinitions",
            singular="customresourcedefinition",
            namespaced=False,
            versions={
                "v1": ResourceVersion(
                    "v1",
                    CustomResourceDefinition,
                    Lifecycle(introduced=Version(1, 16)),
                    defaulter=set_defaults,
                )
            },
            hub_version="v1",
            storage_version="v1",
            strategy=CustomResourceDefinitionStrategy(gates),
            short_names=("crd", "crds"),
            categories=("api-extensions",),
            subresources=("status",),
            columns=DEFAULT_COLUMNS,
            # apiextensions-apiserver keys its objects under the group, unlike kube-apiserver.
            storage_resource=f"{GROUP}/customresourcedefinitions",
        )
    ]
