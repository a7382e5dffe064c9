"""How custom resources are created, updated and validated (upstream ``customResourceStrategy``).

One strategy per served version: objects reach it in the version the request
names, and are checked against that version's schema, its CEL rules and, with
a ``scale`` subresource, the replica paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from kapi.apiextensions.jsonpath import JSONPath
from kapi.apimachinery import field_errors, validation
from kapi.apimachinery.field_errors import FieldError, Path
from kapi.apimachinery.unstructured import Object
from kapi.registry.strategy import Strategy
from kapi.request import current as current_request
from kapi.runtime.scale import set_path
from kapi.validation.cel import CELValidator, RuleResults
from kapi.validation.correlation import CorrelatedObject, RatchetingStats
from kapi.validation.schema_validator import SchemaValidator


class RatchetingMetrics(Protocol):
    """Where an update's ratcheting figures go (the server's metrics registry)."""

    def observe_ratcheting(self, seconds: float) -> None:
        """Time spent comparing old and new values (upstream's histogram)."""

    def count_ratcheted(self, group: str, resource: str, source: str, count: int) -> None:
        """Errors forgiven on a resource, by where they came from (``openapi`` or ``cel``)."""


@dataclass(frozen=True)
class Ratcheting:
    """CRD validation ratcheting (KEP-4008) is on for a resource; its figures go to ``metrics``."""

    metrics: RatchetingMetrics
    group: str
    resource: str

    def record(self, stats: RatchetingStats, forgiven_rules: int) -> None:
        self.metrics.observe_ratcheting(stats.seconds)
        if stats.ratcheted:
            self.metrics.count_ratcheted(self.group, self.resource, "openapi", stats.ratcheted)
        if forgiven_rules:
            self.metrics.count_ratcheted(self.group, self.resource, "cel", forgiven_rules)


@dataclass(frozen=True)
class UpdateCheck:
    """The outcome of validating one update, before any warning is sent or figure recorded."""

    #: What rejects the update.
    errors: list[FieldError]
    #: Failed CEL rules forgiven because their values did not change (sent as warnings).
    forgiven_rules: list[FieldError]
    #: Ratcheting's figures; ``None`` when ratcheting is off.
    stats: RatchetingStats | None


@dataclass(frozen=True)
class ScaleSpec:
    """A CRD's ``subresources.scale``: where replicas and the selector live."""

    spec_replicas: str
    status_replicas: str
    label_selector: str | None

    @classmethod
    def from_crd(cls, scale: dict[str, Any]) -> ScaleSpec:
        return cls(
            scale["specReplicasPath"],
            scale["statusReplicasPath"],
            scale.get("labelSelectorPath") or None,
        )

    @staticmethod
    def get(obj: Object, path: str) -> Any:
        return JSONPath(path).first(obj)

    @staticmethod
    def set(obj: Object, path: str, value: Any) -> None:
        set_path(obj, path, value)


class _SchemaUpdateCheck(Protocol):
    def __call__(
        self, new: Object, old: Object, *, correlation: CorrelatedObject | None = None
    ) -> list[FieldError]: ...


class CustomResourceStrategy(Strategy):
    """Validation of one version's custom resources."""

    has_generation = True
    #: A PUT must name the version it replaces (upstream's custom resource strategy).
    allow_unconditional_update = False

    def __init__(
        self,
        schema: SchemaValidator,
        cel: CELValidator | None,
        *,
        status: bool,
        scale: ScaleSpec | None,
        ratcheting: Ratcheting | None = None,
    ) -> None:
        self.schema = schema
        self.cel = cel
        #: None when the ``CRDValidationRatcheting`` gate is off.
        self.ratcheting = ratcheting
        self.has_status = status
        self.scale = scale
        self.subresource_fields = {"status": ("status",)} if status else {}

    def spec_changed(self, new: Object, old: Object) -> bool:
        """Without a status subresource, a status change is a spec change too (upstream)."""
        if self.has_status:
            return super().spec_changed(new, old)
        keys = (new.keys() | old.keys()) - {"metadata", "apiVersion", "kind"}
        return any(new.get(k) != old.get(k) for k in keys)

    def validate(self, obj: Object) -> list[FieldError]:
        errs = self.schema.validate(obj)
        return errs + self._rules(errs, obj, None, None).errors + self._scale_errors(obj)

    def validate_update(self, new: Object, old: Object) -> list[FieldError]:
        """Validation of an update; with ratcheting, failures on unchanged values are forgiven.

        Schema errors on unchanged values are dropped; failed CEL rules on them
        become warnings. Creates never ratchet (:meth:`validate`).
        """
        return self._report(self.check_update(new, old))

    def check_update(self, new: Object, old: Object) -> UpdateCheck:
        """What :meth:`validate_update` decides, without warning or counting anything.

        The pre-flight report (:mod:`kapi.apiextensions.preflight`) asks this of
        stored objects, so its verdicts are the ones a real update would get.
        """
        return self._check(new, old, self.schema.validate_update)

    def _check(self, new: Object, old: Object, schema_errors: _SchemaUpdateCheck) -> UpdateCheck:
        if self.ratcheting is None:
            errs = schema_errors(new, old)
            rule_errors = self._rules(errs, new, old, None).errors
            return UpdateCheck(errs + rule_errors + self._scale_errors(new), [], None)
        correlation = CorrelatedObject.for_update(new, old, self.schema.schema)
        errs = schema_errors(new, old, correlation=correlation)
        rules = self._rules(errs, new, old, correlation)
        errs = errs + rules.errors + self._scale_errors(new)
        return UpdateCheck(errs, rules.ratcheted, correlation.stats)

    def _report(self, checked: UpdateCheck) -> list[FieldError]:
        """Warn about the forgiven rules, record ratcheting's figures; the errors."""
        if checked.forgiven_rules:
            request = current_request()
            for forgiven in checked.forgiven_rules:
                request.add_warning(str(forgiven))
        if self.ratcheting is not None and checked.stats is not None:
            self.ratcheting.record(checked.stats, len(checked.forgiven_rules))
        return checked.errors

    def warnings_on_create(self, obj: Object) -> list[str]:
        """Unqualified finalizers draw a warning (upstream ``WarningsOnCreate``)."""
        return validation.custom_resource_finalizer_warnings(_finalizers(obj))

    def warnings_on_update(self, new: Object, old: Object) -> list[str]:
        """As on create, for the finalizers the update adds (``WarningsOnUpdate``)."""
        return validation.custom_resource_finalizer_warnings(_finalizers(new), _finalizers(old))

    def _rules(
        self,
        schema_errors: list[FieldError],
        new: Object,
        old: Object | None,
        correlation: CorrelatedObject | None,
    ) -> RuleResults:
        """CEL rules, unless the object is too broken for them to be meaningful (upstream).

        A wrong type, a missing required field, an unsupported value or an
        oversized value would make rules fail for the wrong reason; upstream
        then skips them and says so.
        """
        if self.cel is None:
            return RuleResults([], [])
        if any(e.type in _BLOCKING for e in schema_errors):
            # Upstream passes an untyped nil, which Go prints as the quoted string "null".
            return RuleResults([field_errors.invalid(None, "null", _RULES_SKIPPED)], [])
        if correlation is None or old is None:
            errors = self.cel.validate(new, old, optional_old_self=self.ratcheting is not None)
            return RuleResults(errors, [])
        return self.cel.validate_update(new, old, correlation)

    def validate_subresource_update(
        self, subresource: str, new: Object, old: Object
    ) -> list[FieldError]:
        """An update through ``/status``: its schema errors are the status's only."""
        return self._report(self._check(new, old, self.schema.validate_status_update))

    def _scale_errors(self, obj: Object) -> list[FieldError]:
        """Replica counts must be non-negative integers when present (``validateScale*``)."""
        if self.scale is None:
            return []
        errs: list[FieldError] = []
        for path in (self.scale.spec_replicas, self.scale.status_replicas):
            value = ScaleSpec.get(obj, path)
            if value is None:
                continue
            # Upstream names the field by the JSON path itself (".spec.replicas").
            if isinstance(value, bool) or not isinstance(value, int):
                errs.append(field_errors.invalid(Path(path), value, "should be an integer"))
            elif value < 0:
                errs.append(
                    field_errors.invalid(Path(path), value, "should be a non-negative integer")
                )
        return errs


def _finalizers(obj: Object) -> list[str] | None:
    return (obj.get("metadata") or {}).get("finalizers")


#: Schema errors after which CEL rules are not run (upstream ``hasBlockingErr``).
_BLOCKING = frozenset(
    {
        field_errors.ErrorType.TYPE_INVALID,
        field_errors.ErrorType.REQUIRED,
        field_errors.ErrorType.NOT_SUPPORTED,
        field_errors.ErrorType.TOO_LONG,
        field_errors.ErrorType.TOO_MANY,
    }
)
_RULES_SKIPPED = (
    "some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation"
)
