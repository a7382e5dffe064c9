"""KEP-2558 lifecycle on custom resource fields: ``x-kubernetes-api-lifecycle`` in a CRD schema.

This goes beyond the KEP, which tags built-in fields only: a CRD author puts
the published shape of the extension on a property of the schema,

.. code-block:: yaml

    frobber:
      type: string
      x-kubernetes-api-lifecycle:
        example.com: {minVersion: v1.2.0, status: alpha, featureGate: Frobbing}

and kapi checks it as it checks the built-in tags (:func:`schema_errors`),
publishes it in the resource's OpenAPI unchanged, and warns on writes that
set an alpha or deprecated field (:func:`tagged_paths`, acted on by
:mod:`kapi.registry.field_lifecycle`).  A project's feature gates are names
only: kapi cannot know whether the operator has them on, so it never drops a
custom resource field.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kapi.apimachinery import field_errors
from kapi.apimachinery.field_errors import FieldError, Path
from kapi.features import KNOWN_FEATURES
from kapi.runtime.lifecycle import (
    COMPONENT,
    COMPONENT_MIN_VERSION,
    EXTENSION,
    KEYS,
    MIN_VERSION,
    STATUSES,
    FieldLifecycle,
)
from kapi.runtime.lifecycle_paths import EACH, TaggedPath


def _children(schema: dict[str, Any]) -> Iterator[tuple[str, tuple[str, ...], Any]]:
    """The sub-schemas of a value's fields, items and map values.

    Each as (its segment in an object path, its keys in the schema, the sub-schema).
    """
    for name, prop in (schema.get("properties") or {}).items():
        yield name, ("properties", name), prop
    for key in ("items", "additionalProperties"):
        if isinstance(child := schema.get(key), dict):
            yield EACH, (key,), child


def schema_errors(schema: Any, path: Path, *, is_field: bool = False) -> list[FieldError]:
    """Errors of every ``x-kubernetes-api-lifecycle`` under ``schema`` (at ``path``).

    Only a field (a ``properties`` entry) has a lifecycle: the extension on the
    root, on ``items`` or on ``additionalProperties`` is refused.
    """
    if not isinstance(schema, dict):
        return []
    errs: list[FieldError] = []
    if EXTENSION in schema:
        where = path.child(EXTENSION)
        if is_field:
            errs += _extension_errors(schema[EXTENSION], where)
        else:
            errs.append(field_errors.forbidden(where, "may only be set on a field in properties"))
    for name, keys, child in _children(schema):
        step = path.child(keys[0])
        if name == EACH:
            errs += schema_errors(child, step)
        else:
            errs += schema_errors(child, step.key(keys[1]), is_field=True)
    return errs


def _extension_errors(value: Any, path: Path) -> list[FieldError]:
    if not isinstance(value, dict) or not value:
        return [field_errors.invalid(path, value, "must be a non-empty map of component to tag")]
    errs: list[FieldError] = []
    for component, tag in value.items():
        where = path.key(component)
        if not COMPONENT.fullmatch(component):
            detail = "must be a lowercase component name such as kubernetes or example.com"
            errs.append(field_errors.invalid(where, component, detail))
        elif not isinstance(tag, dict):
            errs.append(
                field_errors.invalid(where, tag, "must be a map of minVersion, status, featureGate")
            )
        else:
            errs += _tag_errors(component, tag, where)
    return errs


def _tag_errors(component: str, tag: dict[str, Any], path: Path) -> list[FieldError]:
    errs = [
        field_errors.not_supported(path.child(key), key, KEYS) for key in tag if key not in KEYS
    ]
    min_version = tag.get("minVersion")
    release = MIN_VERSION if component == "kubernetes" else COMPONENT_MIN_VERSION
    if not min_version:
        errs.append(field_errors.required(path.child("minVersion")))
    elif not isinstance(min_version, str) or not release.fullmatch(min_version):
        errs.append(
            field_errors.invalid(
                path.child("minVersion"), min_version, f"must match {release.pattern}"
            )
        )
    status = tag.get("status")
    if status is not None and status not in STATUSES:
        errs.append(field_errors.not_supported(path.child("status"), status, STATUSES))
    gate = tag.get("featureGate")
    if gate is not None and (not isinstance(gate, str) or not gate):
        errs.append(field_errors.invalid(path.child("featureGate"), gate, "must be a gate name"))
    elif component == "kubernetes" and gate is not None and gate not in KNOWN_FEATURES:
        detail = "not a Kubernetes feature gate kapi knows"
        errs.append(field_errors.invalid(path.child("featureGate"), gate, detail))
    return errs


def tagged_paths(schema: Any) -> tuple[TaggedPath, ...]:
    """The tagged fields of a custom resource version's ``openAPIV3Schema``.

    Call it on a schema :func:`schema_errors` accepted.
    """
    return tuple(_tagged(schema, ()))


def _tagged(schema: Any, path: tuple[str, ...]) -> Iterator[TaggedPath]:
    if not isinstance(schema, dict):
        return
    for name, _, child in _children(schema):
        here = (*path, name)
        if name != EACH and isinstance(child, dict) and EXTENSION in child:
            yield TaggedPath(here, _tags(child[EXTENSION]))
        yield from _tagged(child, here)


def _tags(extension: dict[str, dict[str, str]]) -> tuple[FieldLifecycle, ...]:
    return tuple(
        FieldLifecycle(
            min_version=tag["minVersion"],
            status=tag.get("status"),
            feature_gate=tag.get("featureGate"),
            component=component,
        )
        for component, tag in extension.items()
    )
