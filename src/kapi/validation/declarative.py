"""Declarative validation of built-in kinds, in upstream's shadow mode (KEP-5073).

Built-in kinds are declared once in Python (:mod:`kapi.runtime.schema`), and
that declaration states constraints of its own: enums, required fields, list
types and map keys, formats.  The validation engine that serves custom
resources (:class:`~kapi.validation.schema_validator.SchemaValidator`) checks
them on every built-in write as well, compiled once per kind.

As in kube-apiserver 1.33, whose ``DeclarativeValidation`` gate is beta and on
while ``DeclarativeValidationTakeover`` is off, the hand-written validation
(the kinds' strategies, which reproduce upstream's Go checks and messages)
stays authoritative: its errors are the response.  The engine runs beside
it, and an error it finds that the hand-written checks did not report (same
field, same type) is a mismatch, counted in
``apiserver_validation_declarative_validation_mismatch_total``: a kind whose
declaration and hand-written checks drift apart shows up in ``/metrics``
rather than in a client's error.  The hand-written checks do much that a
declaration cannot say (name formats, cross-field rules), so only this
direction is compared, as upstream compares only the hand-written errors
that declarations cover.

Beyond upstream, the declarations also decide which hand-written errors CRD
validation ratcheting (KEP-4008) forgives on a built-in kind's update: see
:meth:`DeclarativeValidation.ratchet` and ``docs/builtin-ratcheting.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from kapi.apimachinery.field_errors import ErrorType, FieldError
from kapi.runtime.schema import JSON, Struct, components
from kapi.validation.correlation import CorrelatedObject
from kapi.validation.schema_validator import SchemaValidator

log = logging.getLogger(__name__)

#: What a recursive declaration (a CRD's JSONSchemaProps) becomes below its first cycle.
_ANYTHING: JSON = {"x-kubernetes-preserve-unknown-fields": True}
#: Definitions the engine is given in its own terms: IntOrString by its extension (OpenAPI
#: v3 spells it ``oneOf``), and timestamps as nullable, since Go writes a zero
#: ``metav1.Time`` that is not omitted (an Event's ``eventTime``) as ``null``.
_TIMESTAMP: JSON = {"type": "string", "format": "date-time", "nullable": True}
_IN_ENGINE_TERMS: dict[str, JSON] = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"x-kubernetes-int-or-string": True},
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": _TIMESTAMP,
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": _TIMESTAMP,
}
#: OpenAPI keys that document or guide clients and constrain nothing.
_INERT = frozenset(
    {"description", "default", "x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy"}
)


def declared_schema(struct: Struct) -> JSON:
    """``struct``'s OpenAPI v3 schema as one self-contained tree, for the engine.

    References are inlined (upstream's ``allOf: [$ref]`` wrappers with them);
    a type that contains itself is left unchecked below its first repetition.
    The root's ``metadata`` is left out: ObjectMeta is every kind's, and its
    generic hand-written validation is the one upstream has too.
    """
    definitions = {**components([struct]), **_IN_ENGINE_TERMS}
    schema = _inline(definitions[struct.name], definitions, (struct.name,))
    schema.get("properties", {}).pop("metadata", None)
    return schema


def _inline(schema: Any, definitions: JSON, seen: tuple[str, ...]) -> Any:
    if isinstance(schema, list):
        return [_inline(item, definitions, seen) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if ref is not None:
        name = ref.rsplit("/", 1)[-1]
        if name in seen:
            return dict(_ANYTHING)
        return _inline(definitions[name], definitions, (*seen, name))
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return _inline(all_of[0], definitions, seen)
    return {
        key: value if key == "enum" else _inline(value, definitions, seen)
        for key, value in schema.items()
        if key not in _INERT and key != "x-kubernetes-group-version-kind"
    }


@dataclass(frozen=True)
class DeclaredRule:
    """One constraint a built-in declaration states, and whether its errors can ratchet."""

    #: Where it applies: ``[*]`` stands for every item of a list, ``[key]`` for every map value.
    field: str
    #: The constraint, e.g. ``enum: Allow, Forbid, Replace``, ``required``, ``format: int32``.
    rule: str
    ratchets: bool
    #: Why it never ratchets (empty when it does): one of the ``NEVER_*`` words.
    why_not: str = ""


#: Why a declared constraint cannot ratchet.  A field the object itself requires is
#: reported at the root, which always differs (it holds ``metadata``, which the
#: declaration leaves out); formats, bounds and patterns fail as ``Invalid``, the type
#: of the stricter hand-written checks of the same fields (see :data:`RATCHETING_TYPES`);
#: a repeated set item or map key is a ``Duplicate``, reported whenever it exists.
NEVER_ROOT = "root"
NEVER_INVALID = "Invalid"
NEVER_DUPLICATE = "Duplicate"


def declared_rules(struct: Struct) -> list[DeclaredRule]:
    """Every constraint of ``struct``'s declaration, in schema order, classified for ratcheting.

    An ``enum`` ratchets, and so does a ``required`` field of any object but the
    root: a missing field is reported at the object that lacks it, and the root
    object always holds ``metadata``, which the declaration leaves out, so it is
    never unchanged.  Formats, bounds and patterns are ``Invalid`` errors, which
    never ratchet; list types never do either.
    """
    return list(_rules(declared_schema(struct), "", root=True))


def _rules(schema: Any, at: str, *, root: bool = False) -> Iterator[DeclaredRule]:
    if not isinstance(schema, dict):
        return
    if "enum" in schema:
        yield DeclaredRule(at, "enum: " + ", ".join(map(str, schema["enum"])), True)
    if "format" in schema:
        yield DeclaredRule(at, f"format: {schema['format']}", False, NEVER_INVALID)
    if schema.get("x-kubernetes-int-or-string"):
        yield DeclaredRule(at, "integer or string", False, NEVER_INVALID)
    for keyword in ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"):
        if keyword in schema:
            yield DeclaredRule(at, f"{keyword}: {schema[keyword]}", False, NEVER_INVALID)
    if "pattern" in schema:
        yield DeclaredRule(at, f"pattern: {schema['pattern']}", False, NEVER_INVALID)
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "map":
        keys = ", ".join(schema.get("x-kubernetes-list-map-keys", ()))
        yield DeclaredRule(at, f"list-type: map (keys: {keys})", False, NEVER_DUPLICATE)
    elif list_type == "set":
        yield DeclaredRule(at, "list-type: set", False, NEVER_DUPLICATE)
    for name in schema.get("required", ()):
        field = f"{at}.{name}" if at else name
        yield DeclaredRule(field, "required", not root, NEVER_ROOT if root else "")
    for name, child in schema.get("properties", {}).items():
        yield from _rules(child, f"{at}.{name}" if at else name)
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        yield from _rules(additional, f"{at}[key]")
    yield from _rules(schema.get("items"), f"{at}[*]")


def _signature(errors: list[FieldError]) -> set[tuple[str, Any]]:
    """What two validations must agree on: which fields fail, and how (upstream matches
    errors by field and type, not by wording)."""
    return {(e.field, e.type) for e in errors}


#: The error types whose whole rule a declaration can state: a missing field
#: (``required``) and a value outside an ``enum``.  The engine's other errors on
#: built-in declarations (a value of the wrong type or format, an ``int32`` out of
#: range) share the type ``Invalid`` with the stricter hand-written checks of the
#: same fields (a port must be 1-65535, not any int32), so field and type cannot
#: tell the declared rule from the hand-written one: those never ratchet.
RATCHETING_TYPES = frozenset({ErrorType.REQUIRED, ErrorType.NOT_SUPPORTED})


class RatchetedErrors(Protocol):
    """Where forgiven errors are counted (the server's metrics registry)."""

    def count_ratcheted(self, group: str, resource: str, source: str, count: int) -> None:
        """``count`` errors forgiven on an update of ``resource``, from ``source``."""


class DeclarativeValidation:
    """Runs each built-in kind's declaration through the engine.

    ``on_mismatch`` (the ``DeclarativeValidation`` gate): compare the engine's
    verdict with the hand-written one, in shadow mode.  ``ratcheting`` (the
    ``CRDValidationRatcheting`` gate): forgive, on an update, the hand-written
    errors of declared rules whose value did not change, counted there.  Either
    may be ``None``; the server makes none of this when both are.
    """

    def __init__(
        self,
        on_mismatch: Callable[[], None] | None,
        *,
        ratcheting: RatchetedErrors | None = None,
    ) -> None:
        self._on_mismatch = on_mismatch
        self._ratcheting = ratcheting
        self._validators: dict[str, SchemaValidator] = {}

    def validator(self, struct: Struct) -> SchemaValidator:
        """The compiled engine for ``struct``, built on first use (start-up stays fast)."""
        validator = self._validators.get(struct.name)
        if validator is None:
            validator = self._validators[struct.name] = SchemaValidator(declared_schema(struct))
        return validator

    def compare(self, struct: Struct, obj: Any, handwritten: list[FieldError]) -> bool:
        """Validate ``obj`` declaratively; whether the result matched ``handwritten``.

        A mismatch is counted and logged, never returned to the client.
        Without shadow mode (``on_mismatch`` is ``None``) nothing is compared.
        """
        if self._on_mismatch is None:
            return True
        declarative = self.validator(struct).validate(obj)
        if not declarative or _signature(declarative) <= _signature(handwritten):
            return True
        self._on_mismatch()
        log.debug(
            "declarative validation of %s differs: declarative %s, hand-written %s",
            struct.name,
            [str(e) for e in declarative],
            [str(e) for e in handwritten],
        )
        return False

    def ratchet(
        self,
        struct: Struct,
        group: str,
        resource: str,
        new: Any,
        old: Any,
        handwritten: list[FieldError],
    ) -> list[FieldError]:
        """``handwritten`` (an update's errors) less those ratcheting forgives.

        The engine validates ``new`` against the declaration twice: as on create
        (with the list-type allowance of updates), and ratcheting, paired with
        ``old``.  The errors the second pass drops are declared rules that fail
        only on values the update left as they were; a hand-written error of the
        same field and type (:data:`RATCHETING_TYPES` only) is the same rule,
        written by hand, and is dropped too.  Checks no declaration states (name
        formats, cross-field rules, immutability) have no declarative twin and
        always stay; ObjectMeta is not in the declaration, so it never ratchets.
        """
        if self._ratcheting is None or not any(e.type in RATCHETING_TYPES for e in handwritten):
            return handwritten
        validator = self.validator(struct)
        strict = _signature(validator.validate_update(new, old))
        if not strict:
            return handwritten
        correlation = CorrelatedObject.for_update(new, old, validator.schema)
        kept = _signature(validator.validate_update(new, old, correlation=correlation))
        forgiven = {s for s in strict - kept if s[1] in RATCHETING_TYPES}
        if not forgiven:
            return handwritten
        errors = [e for e in handwritten if (e.field, e.type) not in forgiven]
        if len(errors) < len(handwritten):
            count = len(handwritten) - len(errors)
            self._ratcheting.count_ratcheted(group, resource, "declarative", count)
            log.debug(
                "ratcheting forgave %d error(s) on %s: %s",
                count,
                struct.name,
                [str(e) for e in handwritten if (e.field, e.type) in forgiven],
            )
        return errors
