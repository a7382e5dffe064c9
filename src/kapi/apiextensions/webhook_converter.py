"""CRD conversion through a webhook (``spec.conversion.strategy: Webhook``).

The counterpart of apiextensions-apiserver's ``webhookConverter``: objects not
already in the desired version are sent in one ``ConversionReview`` (the
first of ``conversionReviewVersions`` kapi speaks, ``v1`` or ``v1beta1``), the
response is checked the way upstream checks it (uid, result, object count,
apiVersion, kind, and identity metadata), and only labels and annotations may
be changed by the webhook: the rest of ``metadata`` is restored from the
original.

Failures are StatusErrors with code 500 and no reason, carrying upstream's
message verbatim: a conversion error is not an API status upstream, so
kube-apiserver answers it as an unknown 500 and kubectl prints
``Error from server: conversion webhook for <group>/<version>, Kind=<Kind> failed: ...``.
The messages are those of upstream's per-object converter, which is what a
GET, create or update of one object runs; :meth:`WebhookConverter.convert`
uses upstream's list variants (``at index <n>``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from kapi.apimachinery.errors import StatusError, untyped
from kapi.apimachinery.field_errors import Path, aggregate_message
from kapi.apimachinery.gotext import go_json_kind, go_quote, go_type, gvk_string
from kapi.apimachinery.validation import validate_annotations, validate_labels
from kapi.runtime.objects import deep_copy, new_uid
from kapi.webhook import (
    DEFAULT_TIMEOUT,
    WebhookClientConfig,
    WebhookClientManager,
    WebhookError,
)

GROUP = "apiextensions.k8s.io"
SUPPORTED_REVIEW_VERSIONS = ("v1beta1", "v1")


class GroupKind(Protocol):
    """What the converter needs to know about the resource (a GroupVersionKind will do)."""

    @property
    def group(self) -> str: ...

    @property
    def kind(self) -> str: ...


class _Invalid(Exception):
    """A check failed; the text goes into upstream's wrapping message."""


def conversion_failed(message: str) -> StatusError:
    """How kube-apiserver answers a failed conversion: 500, no reason, the error text."""
    return untyped(message)


class WebhookConverter:
    """Converts custom resources of one CRD by calling its conversion webhook."""

    identity = False

    def __init__(
        self,
        client_config: Mapping[str, Any] | WebhookClientConfig,
        review_versions: Sequence[str],
        kind: GroupKind,
        *,
        clients: WebhookClientManager | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        """A ``clientConfig`` that cannot be parsed fails here (WebhookError); one whose
        client cannot be built (an unusable CA bundle) fails each conversion instead, so
        the CRD is still served and its objects can still be deleted, as upstream's."""
        if not isinstance(client_config, WebhookClientConfig):
            client_config = WebhookClientConfig.from_api(client_config)
        self._owns_clients = clients is None
        self._clients = clients or WebhookClientManager()
        self._client_config = client_config
        self._review_versions = list(review_versions)
        self._kind = kind
        self._timeout = timeout

    async def aclose(self) -> None:
        """Close the connections, unless the client manager was lent by the caller."""
        if self._owns_clients:
            await self._clients.aclose()

    async def convert_object(
        self, obj: Mapping[str, Any], desired_api_version: str
    ) -> dict[str, Any]:
        """Convert one object; returned as is when already in ``desired_api_version``."""
        if obj.get("apiVersion") == desired_api_version:
            return dict(obj)
        gvk = gvk_string(obj.get("apiVersion", ""), obj.get("kind", ""))
        (raw,) = await self._review([obj], desired_api_version, gvk)
        prefix = f"conversion webhook for {gvk} returned invalid"
        try:
            converted = _unstructured(raw)
        except _Invalid as err:
            raise conversion_failed(str(err)) from None
        try:
            _check_type(converted, desired_api_version, obj.get("kind", ""))
        except _Invalid as err:
            raise conversion_failed(f"{prefix} object at index 0: {err}") from None
        try:
            _validate_identity(obj, converted)
        except _Invalid as err:
            raise conversion_failed(f"{prefix} object: {err}") from None
        try:
            _restore_object_meta(obj, converted)
        except _Invalid as err:
            raise conversion_failed(f"{prefix} metadata: {err}") from None
        return converted

    async def convert(
        self, objects: Sequence[Mapping[str, Any]], desired_api_version: str
    ) -> list[dict[str, Any]]:
        """Convert a list's items in one call; items already in the version are not sent.

        Messages name the list as upstream's ``UnstructuredList`` of the
        desired version (``<desired>, Kind=<Kind>List``).
        """
        pending = [o for o in objects if o.get("apiVersion") != desired_api_version]
        if not pending:
            return [dict(o) for o in objects]
        gvk = gvk_string(desired_api_version, f"{self._kind.kind}List")
        answers = iter(await self._review(pending, desired_api_version, gvk))
        prefix = f"conversion webhook for {gvk} returned invalid"
        result: list[dict[str, Any]] = []
        index = 0
        for original in objects:
            if original.get("apiVersion") == desired_api_version:
                result.append(dict(original))
                continue
            try:
                converted = _unstructured(next(answers))
            except _Invalid as err:
                raise conversion_failed(
                    f"{prefix} converted object at index {index}: {err}"
                ) from None
            # Upstream counts the object before checking it, so these messages are 1-based.
            index += 1
            try:
                _check_type(converted, desired_api_version, original.get("kind", ""))
                _validate_identity(original, converted)
            except _Invalid as err:
                raise conversion_failed(
                    f"{prefix} converted object at index {index}: {err}"
                ) from None
            try:
                _restore_object_meta(original, converted)
            except _Invalid as err:
                raise conversion_failed(
                    f"{prefix} metadata in object at index {index}: {err}"
                ) from None
            result.append(converted)
        return result

    async def _review(
        self, objects: Sequence[Mapping[str, Any]], desired_api_version: str, gvk: str
    ) -> list[Any]:
        """Send one ConversionReview and return its checked ``convertedObjects``."""
        review_version = next(
            (v for v in self._review_versions if v in SUPPORTED_REVIEW_VERSIONS), None
        )
        if review_version is None:
            raise conversion_failed("no supported conversion review versions")
        uid = new_uid()
        review = {
            "kind": "ConversionReview",
            "apiVersion": f"{GROUP}/{review_version}",
            "request": {"uid": uid, "desiredAPIVersion": desired_api_version, "objects": objects},
        }
        try:
            client = self._clients.client_for(self._client_config)
            answer = await client.post(review, timeout=self._timeout)
            converted = _converted_objects(answer, review_version, uid)
        except (WebhookError, _Invalid) as err:
            raise conversion_failed(f"conversion webhook for {gvk} failed: {err}") from None
        if len(converted) != len(objects):
            raise conversion_failed(
                f"conversion webhook for {gvk} returned {len(converted)} objects, "
                f"expected {len(objects)}"
            )
        return converted


def _converted_objects(answer: Mapping[str, Any], review_version: str, uid: str) -> list[Any]:
    """Upstream's ``getConvertedObjectsFromResponse``; v1beta1 skips the GVK and uid checks."""
    if review_version == "v1":
        api_version = answer.get("apiVersion") or f"{GROUP}/v1"
        kind = answer.get("kind") or "ConversionReview"
        if (api_version, kind) != (f"{GROUP}/v1", "ConversionReview"):
            raise _Invalid(
                f"expected webhook response of {gvk_string(f'{GROUP}/v1', 'ConversionReview')}, "
                f"got {gvk_string(api_version, kind)}"
            )
    response = answer.get("response")
    if not isinstance(response, Mapping):
        raise _Invalid("no response provided")
    if review_version == "v1" and (got := response.get("uid", "")) != uid:
        raise _Invalid(f"expected response.uid={go_quote(uid)}, got {go_quote(str(got))}")
    result = response.get("result") or {}
    if (status := result.get("status", "")) != "Success":
        if message := result.get("message"):
            raise _Invalid(message)
        raise _Invalid(f"response.result.status was '{status}', not 'Success'")
    return list(response.get("convertedObjects") or [])


def _unstructured(raw: Any) -> dict[str, Any]:
    """A converted object as ``unstructured.Unstructured`` would accept it."""
    if not isinstance(raw, dict):
        raise _Invalid(
            f"json: cannot unmarshal {go_json_kind(raw)} into Go value of type "
            "map[string]interface {}"
        )
    if not raw.get("kind"):
        compact = json.dumps(raw, separators=(",", ":"), ensure_ascii=False)
        raise _Invalid(f"Object 'Kind' is missing in '{compact}'")
    return raw


def _check_type(converted: Mapping[str, Any], desired_api_version: str, kind: str) -> None:
    if (got := converted.get("apiVersion", "")) != desired_api_version:
        raise _Invalid(f"invalid groupVersion (expected {desired_api_version}, received {got})")
    if (got_kind := converted.get("kind", "")) != kind:
        raise _Invalid(f"invalid kind (expected {kind}, received {got_kind})")


def _meta(obj: Mapping[str, Any], name: str) -> Any:
    metadata = obj.get("metadata")
    return metadata.get(name, "") if isinstance(metadata, Mapping) else ""


def _validate_identity(original: Mapping[str, Any], converted: Mapping[str, Any]) -> None:
    """Upstream's ``validateConvertedObject``: the webhook must not change who the object is."""
    if (a := original.get("kind", "")) != (b := converted.get("kind", "")):
        raise _Invalid(f"must have the same kind: {a} != {b}")
    for field, label in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
        if (a := _meta(original, field)) != (b := _meta(converted, field)):
            raise _Invalid(f"must have the same {label}: {a} != {b}")


def _restore_object_meta(original: Mapping[str, Any], converted: dict[str, Any]) -> None:
    """Put the original metadata back, keeping only the webhook's labels and annotations."""
    if "metadata" not in converted:
        if "metadata" not in original:
            return
        raise _Invalid("missing metadata in converted object")
    answered = converted["metadata"]
    if not isinstance(answered, Mapping):
        raise _Invalid(f"invalid metadata of type {go_type(answered)} in converted object")
    restored = deep_copy(original.get("metadata") or {})
    for field in ("labels", "annotations"):
        values = answered.get(field)
        if values is None:
            restored.pop(field, None)
            continue
        if not isinstance(values, Mapping):
            raise _Invalid(
                f"invalid metadata.{field} of type {go_type(values)} in converted object"
            )
        before = restored.get(field) or {}
        changed = len(before) != len(values)
        for key, value in values.items():
            if not isinstance(value, str):
                raise _Invalid(
                    f"metadata.{field}[{key}] must be a string, but is {go_type(value)} "
                    "in converted object"
                )
            changed = changed or before.get(key) != value
        if changed:
            # Upstream names the annotations path "metadata.annotation".
            errors = (
                validate_labels(values, Path("metadata", "labels"))
                if field == "labels"
                else validate_annotations(values, Path("metadata", "annotation"))
            )
            if errors:
                raise _Invalid(aggregate_message(errors))
        restored[field] = dict(values)
    converted["metadata"] = restored
