"""The ``/scale`` subresource: an ``autoscaling/v1`` ``Scale`` view of an object.

Custom resources name their replica paths in the CRD (on their strategy);
built-in kinds declare theirs on the :class:`~kapi.runtime.scheme.Resource`
(:class:`~kapi.runtime.scale.BuiltinScale`), whose deprecated versions answer
their own group's ``Scale`` (``apps/v1beta1``, ``apps/v1beta2``,
``extensions/v1beta1``: the selector also as a label map, and as
``targetSelector``).  Reads project the object's replica paths into a Scale;
writes (PUT, a JSON/merge patch of the Scale, or a server-side apply of one)
set the spec replicas on the object and store it through the main resource's
strategy, as upstream's scale REST does.

Field ownership of a write is worked out on the Scale, by a field manager of
its own, over managedFields carried over from the object and back
(:mod:`kapi.registry.fieldmanager.scalehandler`): whoever scales owns the
object's replicas field.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kapi.apimachinery import errors, field_errors
from kapi.apimachinery.field_errors import Path
from kapi.apimachinery.unstructured import Object
from kapi.endpoints.handlers import (
    RequestScope,
    apply_configuration,
    apply_json_patch,
    bool_param,
    decode_patch,
    encode,
    write_options,
)
from kapi.endpoints.http import Request, Response
from kapi.endpoints.negotiation import body_media_type, patch_media_type
from kapi.endpoints.openapi.meta import Scale
from kapi.registry.fieldmanager.managedfields import ManagedFieldsError
from kapi.registry.fieldmanager.manager import FieldManager, manager_or_user_agent
from kapi.registry.fieldmanager.scalehandler import (
    SCALE_API_VERSION,
    ResourcePathMappings,
    ScaleHandler,
    replicas_path,
)
from kapi.registry.fieldmanager.schema import declared_atom
from kapi.registry.fieldmanager.updater import Converter
from kapi.runtime import patch, serializer
from kapi.runtime.objects import meta
from kapi.runtime.scale import AUTOSCALING_V1, BuiltinScale
from kapi.runtime.scheme import GroupVersion
from kapi.runtime.strategy import ScaleSubresource

_PATCH_TYPES = (serializer.JSON_PATCH, serializer.MERGE_PATCH, serializer.APPLY_PATCH)
_BUILTIN_PATCH_TYPES = (
    serializer.JSON_PATCH,
    serializer.MERGE_PATCH,
    serializer.STRATEGIC_MERGE_PATCH,
    serializer.APPLY_PATCH,
)
#: What a write makes of the live Scale (which carries its managedFields): the new Scale
#: with its managedFields.
ScaleWrite = Callable[[Object], Awaitable[Object]]

_SCALE_ATOM = declared_atom(Scale)
#: The field manager of writes through ``/scale`` (upstream gives the scale scope one).
SCALE_FIELD_MANAGER = FieldManager(
    kind="Scale",
    api_version=SCALE_API_VERSION,
    atom=_SCALE_ATOM,
    converter=Converter(lambda v: _SCALE_ATOM if v == SCALE_API_VERSION else None),
    subresource="scale",
)


def _spec(scope: RequestScope) -> ScaleSubresource:
    spec = scope.store.strategy.scale or scope.resource.scale
    assert spec is not None
    return spec


def versioned_scale(scale: Object, spec: ScaleSubresource, obj: Object, version: str) -> Object:
    """``scale`` (an ``autoscaling/v1`` Scale of ``obj``) as the request version answers it.

    A deprecated apps or extensions version answers its own group's Scale, whose
    status has the selector string as ``targetSelector`` and, when it matches
    labels only, those labels as ``selector`` (upstream's conversion).
    """
    if not isinstance(spec, BuiltinScale):
        return scale
    api_version = spec.scale_api_version(version)
    if api_version == AUTOSCALING_V1:
        return scale
    status: Object = {"replicas": scale["status"]["replicas"]}
    labels = spec.selector_labels(obj)
    if labels:
        status["selector"] = labels
    if "selector" in scale["status"]:
        status["targetSelector"] = scale["status"]["selector"]
    return {**scale, "apiVersion": api_version, "status": status}


def to_scale(obj: Object, spec: ScaleSubresource) -> Object:
    metadata = obj["metadata"]
    scale_meta = {
        k: metadata[k]
        for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        if k in metadata
    }
    replicas = spec.get(obj, spec.spec_replicas)
    status: Object = {"replicas": spec.get(obj, spec.status_replicas) or 0}
    if spec.label_selector:
        selector = spec.get(obj, spec.label_selector)
        if isinstance(selector, str) and selector:
            status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": scale_meta,
        "spec": {"replicas": replicas} if replicas else {},
        "status": status,
    }


async def get(scope: RequestScope, request: Request) -> Response:
    obj = await scope.store.get(scope.namespace, scope.name)
    spec = _spec(scope)
    return encode(200, versioned_scale(to_scale(obj, spec), spec, obj, scope.version), scope.output)


async def update(scope: RequestScope, request: Request) -> Response:
    dry_run, _ = write_options(request.query, "UpdateOptions")
    media = body_media_type(request.headers.get("content-type"), serializer.BODY_TYPES)
    raw = await request.body()
    try:
        body = serializer.decode(raw, media, find_duplicates=False).obj
    except serializer.SyntaxDecodeError as exc:
        raise scope.unrecognized(str(exc), raw) from None
    return await _write(scope, _recording_update(scope, request, lambda _live: body), dry_run)


async def patch_(scope: RequestScope, request: Request) -> Response:
    # A built-in kind's Scale is a typed object upstream, so it takes strategic merge
    # patches too (a custom resource's is unstructured: it does not).
    builtin = isinstance(_spec(scope), BuiltinScale)
    allowed = _BUILTIN_PATCH_TYPES if builtin else _PATCH_TYPES
    media = patch_media_type(request.headers.get("content-type"), allowed)
    dry_run, _ = write_options(request.query, "PatchOptions", media)
    if media == serializer.APPLY_PATCH:
        apply = _server_side_apply(scope, request, await request.body())
        return await _write(scope, apply, dry_run)
    document = decode_patch(await request.body())

    def patched(live: Object) -> Any:
        if media == serializer.JSON_PATCH:
            return apply_json_patch(live, document)
        if media == serializer.STRATEGIC_MERGE_PATCH:
            try:
                return patch.strategic_merge_patch(live, document, Scale)
            except patch.StrategicMergePatchError as exc:
                raise errors.bad_request(str(exc)) from None
        return patch.merge_patch(live, document)

    return await _write(scope, _recording_update(scope, request, patched), dry_run)


def _recording_update(
    scope: RequestScope, request: Request, desired: Callable[[Object], Any]
) -> ScaleWrite:
    """An update to ``desired(live)``, recorded as an Update by the request's manager."""
    manager = manager_or_user_agent(
        request.query.get("fieldManager", ""), request.headers.get("user-agent", "")
    )

    async def write(live: Object) -> Object:
        scale = _checked(desired(live), scope.name)
        # The Scale as its Go type holds it: no replicas when they are 0 (omitempty).
        replicas = _replicas(scale)
        typed = {**live, "spec": {"replicas": replicas} if replicas else {}}
        entries = await SCALE_FIELD_MANAGER.update(live, typed, manager)
        return {**scale, "metadata": {**_metadata(scale), "managedFields": entries}}

    return write


def _server_side_apply(scope: RequestScope, request: Request, body: bytes) -> ScaleWrite:
    """An apply of a Scale configuration by the request's manager."""
    config = apply_configuration(body)
    manager = request.query["fieldManager"]
    force = bool(bool_param(request.query, "force"))

    async def write(live: Object) -> Object:
        return _checked(await SCALE_FIELD_MANAGER.apply(live, config, manager, force), scope.name)

    return write


async def _write(scope: RequestScope, write: ScaleWrite, dry_run: bool) -> Response:
    """Store the object with the replicas and managedFields of the Scale ``write`` makes."""
    spec = _spec(scope)
    mappings = _replicas_paths(scope, spec)

    async def set_replicas(obj: Object) -> Object:
        try:
            handler = ScaleHandler(meta(obj).get("managedFields"), scope.api_version, mappings)
        except ManagedFieldsError as exc:
            raise errors.internal_error(exc) from None
        current = to_scale(obj, spec)
        live = {**current, "metadata": {**current["metadata"]}}
        scale_entries = handler.to_subresource()
        if scale_entries is not None:
            live["metadata"]["managedFields"] = scale_entries
        scale = await write(live)
        spec.set(obj, spec.spec_replicas, _replicas(scale))
        wanted_rv = _metadata(scale).get("resourceVersion")
        if wanted_rv and wanted_rv != current["metadata"].get("resourceVersion"):
            obj["metadata"]["resourceVersion"] = wanted_rv
        else:
            obj["metadata"].pop("resourceVersion", None)
        try:
            entries = handler.to_parent(_metadata(scale).get("managedFields"))
        except ManagedFieldsError as exc:
            raise errors.internal_error(exc) from None
        if entries is None:
            obj["metadata"].pop("managedFields", None)
        else:
            obj["metadata"]["managedFields"] = entries
        return obj

    updated = await scope.store.update(scope.namespace, scope.name, set_replicas, dry_run=dry_run)
    scale = versioned_scale(to_scale(updated, spec), spec, updated, scope.version)
    return encode(200, scale, scope.output)


def _replicas_paths(scope: RequestScope, spec: ScaleSubresource) -> ResourcePathMappings:
    """The replicas path of every version of the resource.

    Each version could name its own; kapi knows the request version's, and takes it
    for every version that has a scale subresource.
    """
    resource = scope.resource
    own = replicas_path(spec.spec_replicas)
    return {
        GroupVersion(resource.group, version).api_version: (
            own if "scale" in resource.subresources_of(version) else None
        )
        for version in resource.versions
    }


def _checked(scale: Any, name: str) -> Object:
    """``scale`` if it is a Scale with valid replicas."""
    if not isinstance(scale, dict) or scale.get("kind", "Scale") != "Scale":
        raise errors.bad_request("the body of the request must be an autoscaling/v1 Scale")
    replicas = _replicas(scale)
    if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
        raise errors.invalid("Scale", "autoscaling", name, [_negative(replicas)])
    return scale


def _replicas(scale: Object) -> Any:
    spec = scale.get("spec")
    return spec.get("replicas", 0) if isinstance(spec, dict) else 0


def _metadata(scale: Object) -> Object:
    metadata = scale.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _negative(value: Any) -> field_errors.FieldError:
    return field_errors.invalid(
        Path("spec", "replicas"), value, "must be greater than or equal to 0"
    )


VERBS = {"get": get, "update": update, "patch": patch_}
