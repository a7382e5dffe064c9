"""The ``/scale`` subresource of custom resources: an ``autoscaling/v1`` ``Scale`` view.

Reads project the object's replica paths into a Scale; writes (PUT, or a
JSON/merge patch of the Scale) set ``specReplicasPath`` on the object and
store it through the main resource's strategy, as upstream's scale REST does.
"""

from __future__ import annotations

from typing import Any

from kapi.apiextensions.strategy import CustomResourceStrategy, ScaleSpec
from kapi.apimachinery import errors, field
from kapi.apimachinery.field import Path
from kapi.endpoints.handlers import (
    RequestScope,
    apply_json_patch,
    decode_patch,
    encode,
    write_options,
)
from kapi.endpoints.http import Request, Response
from kapi.endpoints.negotiation import body_media_type
from kapi.runtime import patch, serializer

Object = dict[str, Any]
_PATCH_TYPES = (serializer.JSON_PATCH, serializer.MERGE_PATCH)


def _spec(scope: RequestScope) -> ScaleSpec:
    strategy = scope.store.strategy
    assert isinstance(strategy, CustomResourceStrategy) and strategy.scale is not None
    return strategy.scale


def to_scale(obj: Object, spec: ScaleSpec) -> Object:
    metadata = obj["metadata"]
    scale_meta = {
        k: metadata[k]
        for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        if k in metadata
    }
    replicas = ScaleSpec.get(obj, spec.spec_replicas)
    status: Object = {"replicas": ScaleSpec.get(obj, spec.status_replicas) or 0}
    if spec.label_selector:
        selector = ScaleSpec.get(obj, spec.label_selector)
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
    return encode(200, to_scale(obj, _spec(scope)), scope.output)


async def update(scope: RequestScope, request: Request) -> Response:
    dry_run, _ = write_options(request.query, "UpdateOptions")
    media = body_media_type(request.headers.get("content-type"), serializer.BODY_TYPES)
    raw = await request.body()
    try:
        body = serializer.decode(raw, media, find_duplicates=False).obj
    except serializer.SyntaxDecodeError as exc:
        raise scope.unrecognized(str(exc), raw) from None
    return await _apply(scope, lambda _current: body, dry_run)


async def patch_(scope: RequestScope, request: Request) -> Response:
    dry_run, _ = write_options(request.query, "PatchOptions")
    media = body_media_type(request.headers.get("content-type"), _PATCH_TYPES)
    if media not in _PATCH_TYPES:
        raise errors.unsupported_media_type(_PATCH_TYPES)
    document = decode_patch(await request.body())

    def patched(current: Object) -> Any:
        if media == serializer.JSON_PATCH:
            return apply_json_patch(current, document)
        return patch.merge_patch(current, document)

    return await _apply(scope, patched, dry_run)


async def _apply(scope: RequestScope, desired: Any, dry_run: bool) -> Response:
    spec = _spec(scope)

    async def set_replicas(obj: Object) -> Object:
        current = to_scale(obj, spec)
        scale = desired(current)
        if not isinstance(scale, dict) or scale.get("kind", "Scale") != "Scale":
            raise errors.bad_request("the body of the request must be an autoscaling/v1 Scale")
        replicas = (scale.get("spec") or {}).get("replicas", 0)
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
            raise errors.invalid(
                "Scale",
                "autoscaling",
                scope.name,
                [_negative(replicas)],
            )
        ScaleSpec.set(obj, spec.spec_replicas, replicas)
        wanted_rv = (scale.get("metadata") or {}).get("resourceVersion")
        if wanted_rv and wanted_rv != current["metadata"].get("resourceVersion"):
            obj["metadata"]["resourceVersion"] = wanted_rv
        else:
            obj["metadata"].pop("resourceVersion", None)
        return obj

    updated = await scope.store.update(scope.namespace, scope.name, set_replicas, dry_run=dry_run)
    return encode(200, to_scale(updated, spec), scope.output)


def _negative(value: Any) -> field.FieldError:
    return field.invalid(Path("spec", "replicas"), value, "must be greater than or equal to 0")


VERBS = {"get": get, "update": update, "patch": patch_}
