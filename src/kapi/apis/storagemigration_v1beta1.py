"""storagemigration.k8s.io/v1beta1 ``StorageVersionMigration``.

A request to rewrite every stored object of one resource so that all of them
end up encoded in the resource's current storage version.  Schema after
``k8s.io/api/storagemigration/v1beta1`` (``spec.resource`` a GroupResource,
``status.conditions`` metav1 Conditions of types Running, Succeeded and
Failed); validation after upstream ``pkg/apis/storagemigration/validation``;
strategy after ``pkg/registry/storagemigration/storagemigration``.

A deliberate kapi addition: upstream introduced v1beta1 in 1.35, while kapi
models 1.33.  kapi serves this version at every emulated version from 1.30, the
release in which the API (then v1alpha1) first appeared, behind the
``StorageVersionMigrator`` gate, which upstream keeps off by default and kapi
turns on.  The migrator itself is :mod:`kapi.storageversion.migrator`.
"""

from __future__ import annotations

from kapi.apimachinery import validation
from kapi.apimachinery.field_errors import FieldError, GoSyntax, Path, invalid, required
from kapi.apimachinery.gotext import go_quote
from kapi.apimachinery.unstructured import Object
from kapi.apis.policy import validate_conditions
from kapi.features import FeatureGate
from kapi.registry.strategy import Strategy
from kapi.registry.tables import AGE, NAME
from kapi.runtime.meta import Condition, kind_struct
from kapi.runtime.schema import STRING, Field, List, Struct
from kapi.runtime.scheme import Lifecycle, Resource, ResourceVersion
from kapi.version import Version

GROUP = "storagemigration.k8s.io"
VERSION = "v1beta1"
_PREFIX = "io.k8s.api.storagemigration.v1beta1"

#: Condition types (upstream ``MigrationConditionType``).
RUNNING = "Running"
SUCCEEDED = "Succeeded"
FAILED = "Failed"

GroupResource = Struct(
    "io.k8s.apimachinery.pkg.apis.meta.v1.GroupResource",
    (
        Field("group", STRING, "The API group; empty for the core group.", required=True),
        Field("resource", STRING, "The resource's plural name.", required=True),
    ),
    "A resource named by its API group and plural, without a version.",
)

StorageVersionMigrationSpec = Struct(
    f"{_PREFIX}.StorageVersionMigrationSpec",
    (
        Field(
            "resource",
            GroupResource,
            "Which resource to migrate: every stored object of it is written back in the "
            "current storage version. Cannot be changed after creation.",
            required=True,
        ),
    ),
    "What a storage version migration should migrate.",
)

StorageVersionMigrationStatus = Struct(
    f"{_PREFIX}.StorageVersionMigrationStatus",
    (
        Field(
            "conditions",
            List(Condition, list_type="map", map_keys=("type",)),
            "The newest observations of the migration: Running while objects are being "
            "rewritten, then Succeeded or Failed.",
        ),
        Field(
            "resourceVersion",
            STRING,
            "The resource version of the migrated resource when the migrator first "
            "picked this migration up. Cannot be changed once set.",
        ),
    ),
    "How far a storage version migration has come.",
)

StorageVersionMigration = kind_struct(
    f"{_PREFIX}.StorageVersionMigration",
    ((GROUP, VERSION, "StorageVersionMigration"),),
    (
        Field("spec", StorageVersionMigrationSpec, "The resource to migrate."),
        Field("status", StorageVersionMigrationStatus, "The progress of the migration."),
    ),
    "A request to rewrite the stored objects of one resource in its current storage version.",
)


# --- validation -----------------------------------------------------------------------------

RESOURCE_REQUIRED_MSG = "resource is required to be set"


def _resource_of(obj: Object) -> Object:
    return (obj.get("spec") or {}).get("resource") or {}


def validate_storage_version_migration(obj: Object) -> list[FieldError]:
    """``ValidateStorageVersionMigration`` (metadata is checked by the store)."""
    errs: list[FieldError] = []
    resource = _resource_of(obj)
    at = Path("spec").child("resource")
    plural = resource.get("resource") or ""
    if not plural:
        errs.append(required(at.child("resource"), RESOURCE_REQUIRED_MSG))
    else:
        msgs = validation.is_dns1035_label(plural)
        if msgs:
            errs.append(invalid(at.child("resource"), plural, ",".join(msgs)))
    group = resource.get("group") or ""
    if group:
        msgs = validation.is_dns1123_subdomain(group)
        if msgs:
            errs.append(invalid(at.child("group"), group, ",".join(msgs)))
    return errs


def _spec_go_syntax(obj: Object) -> GoSyntax:
    """``%#v`` of the internal spec, which is how upstream prints an immutable spec."""
    resource = _resource_of(obj)
    group = go_quote(resource.get("group") or "")
    plural = go_quote(resource.get("resource") or "")
    return GoSyntax(
        "storagemigration.StorageVersionMigrationSpec{Resource:v1.GroupResource"
        f"{{Group:{group}, Resource:{plural}}}}}"
    )


def validate_storage_version_migration_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateStorageVersionMigrationUpdate``: the spec is immutable as a whole."""
    errs = validate_storage_version_migration(new)
    if _resource_of(new) != _resource_of(old):
        errs.append(
            invalid(Path("spec"), _spec_go_syntax(new), validation.FIELD_IMMUTABLE_ERROR_MSG)
        )
    return errs


def _well_formed_rv(rv: str) -> bool:
    """``resourceversion.CompareResourceVersion``'s check: digits, no leading zero."""
    return bool(rv) and rv.isascii() and rv.isdigit() and rv[0] != "0"


def condition_true(obj: Object, condition_type: str) -> bool:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == condition_type:
            return condition.get("status") == "True"
    return False


def _conditions_go_syntax(obj: Object) -> GoSyntax:
    """An approximation of ``%#v`` of ``[]v1.Condition`` (upstream prints the Go value)."""
    parts = []
    for c in (obj.get("status") or {}).get("conditions") or []:
        parts.append(
            "v1.Condition{"
            f"Type:{go_quote(c.get('type') or '')}, Status:{go_quote(c.get('status') or '')}, "
            f"ObservedGeneration:{c.get('observedGeneration') or 0}, "
            f"Reason:{go_quote(c.get('reason') or '')}, "
            f"Message:{go_quote(c.get('message') or '')}}}"
        )
    return GoSyntax("[]v1.Condition{" + ", ".join(parts) + "}")


def validate_storage_version_migration_status_update(new: Object, old: Object) -> list[FieldError]:
    """``ValidateStorageVersionMigrationStatusUpdate``."""
    errs: list[FieldError] = []
    path = Path("status")
    status = new.get("status") or {}
    rv = status.get("resourceVersion") or ""
    if not _well_formed_rv(rv):
        errs.append(
            invalid(path.child("resourceVersion"), rv, f"resource version is not well formed: {rv}")
        )
    errs += validate_conditions(status.get("conditions") or [], path.child("conditions"))
    old_rv = (old.get("status") or {}).get("resourceVersion") or ""
    if old_rv and old_rv != rv:
        errs.append(
            invalid(path.child("resourceVersion"), rv, validation.FIELD_IMMUTABLE_ERROR_MSG)
        )
    succeeded = condition_true(new, SUCCEEDED)
    failed = condition_true(new, FAILED)
    running = condition_true(new, RUNNING)
    conditions = path.child("conditions")
    checks = (
        (
            succeeded and failed,
            "Both success and failed conditions cannot be true at the same time",
        ),
        (succeeded and running, "Running condition cannot be true when success condition is true"),
        (failed and running, "Running condition cannot be true when failed condition is true"),
        (
            condition_true(old, SUCCEEDED) and not succeeded,
            "Success condition cannot be set to false once it is true",
        ),
        (
            condition_true(old, FAILED) and not failed,
            "Failed condition cannot be set to false once it is true",
        ),
    )
    for broken, detail in checks:
        if broken:
            errs.append(invalid(conditions, _conditions_go_syntax(new), detail))
    return errs


# --- strategy -------------------------------------------------------------------------------


class StorageVersionMigrationStrategy(Strategy):
    """Upstream's ``strategy`` and ``statusStrategy``: status reset on create and kept on
    update; ``/status`` writes status alone; updates must name a resourceVersion."""

    has_status = True
    allow_unconditional_update = False

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {}

    def validate(self, obj: Object) -> list[FieldError]:
        return validate_storage_version_migration(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        return validate_storage_version_migration_update(new, old)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        return validate_storage_version_migration_status_update(new, old)

    def canonicalize(self, obj: Object) -> None:
        # Neither spec, status nor the GroupResource is a pointer upstream: all serialise.
        spec = obj.setdefault("spec", {})
        resource = spec.get("resource") or {}
        spec["resource"] = {
            "group": resource.get("group") or "",
            "resource": resource.get("resource") or "",
        }
        obj.setdefault("status", {})


# --- resource -------------------------------------------------------------------------------


def resources(gates: FeatureGate) -> list[Resource]:
    """The storagemigration.k8s.io resources, while ``StorageVersionMigrator`` is on."""
    if not gates.enabled("StorageVersionMigrator"):
        return []
    return [
        Resource(
            group=GROUP,
            kind="StorageVersionMigration",
            plural="storageversionmigrations",
            singular="storageversionmigration",
            namespaced=False,
            versions={
                VERSION: ResourceVersion(
                    VERSION, StorageVersionMigration, Lifecycle(introduced=Version(1, 30))
                )
            },
            hub_version=VERSION,
            storage_version=VERSION,
            strategy=StorageVersionMigrationStrategy(),
            subresources=("status",),
            columns=(NAME, AGE),
        )
    ]
