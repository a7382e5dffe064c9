"""AdmissionReview requests and the checks upstream applies to their answers.

The counterpart of ``webhook/request/admissionreview.go``: the review is sent
in the first version the webhook lists that kapi speaks (v1 or v1beta1), and
a v1 answer must echo the request's ``uid`` and be an
``admission.k8s.io/v1 AdmissionReview``; v1beta1 answers were never checked
upstream, and are not here.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kapi.apimachinery.gotext import go_quote, gvk_string
from kapi.apimachinery.unstructured import Object
from kapi.runtime.objects import new_uid

ADMISSION_GROUP = "admission.k8s.io"
KNOWN_REVIEW_VERSIONS = ("v1", "v1beta1")


class InvalidResponse(ValueError):
    """The webhook's answer breaks the AdmissionReview contract; ``str()`` is upstream's text."""


@dataclass
class ReviewRequest:
    """What goes into ``request``, already in the version the webhook is called with."""

    kind: dict[str, str]
    resource: dict[str, str]
    subresource: str
    request_kind: dict[str, str]
    request_resource: dict[str, str]
    request_subresource: str
    name: str
    namespace: str
    operation: str
    user: str
    object: Object | None
    old_object: Object | None
    dry_run: bool
    options: Object | None = None
    groups: Sequence[str] = ()


@dataclass
class AdmissionResponse:
    allowed: bool
    result: Object | None = None
    patch: bytes = b""
    patch_type: str = ""
    warnings: list[str] = field(default_factory=list)


def review_version(accepted: Sequence[str]) -> str:
    """The first listed version kapi can send; ``ValueError`` with upstream's text if none."""
    for version in accepted:
        if version in KNOWN_REVIEW_VERSIONS:
            return version
    raise ValueError("webhook does not accept known AdmissionReview versions (v1, v1beta1)")


def new_review(version: str, request: ReviewRequest) -> tuple[str, Object]:
    """A fresh review with a new UID, returned with it."""
    uid = new_uid()
    user_info: Object = {"username": request.user}
    if request.groups:
        user_info["groups"] = list(request.groups)
    body: Object = {
        "uid": uid,
        "kind": request.kind,
        "resource": request.resource,
        "requestKind": request.request_kind,
        "requestResource": request.request_resource,
        "name": request.name,
        "namespace": request.namespace,
        "operation": request.operation,
        "userInfo": user_info,
        "object": request.object,
        "oldObject": request.old_object,
        "dryRun": request.dry_run,
        "options": request.options,
    }
    if request.subresource:
        body["subResource"] = request.subresource
    if request.request_subresource:
        body["requestSubResource"] = request.request_subresource
    if not request.name:
        del body["name"]
    if not request.namespace:
        del body["namespace"]
    api_version = f"{ADMISSION_GROUP}/{version}"
    return uid, {"kind": "AdmissionReview", "apiVersion": api_version, "request": body}


def verify_response(version: str, uid: str, review: Object, *, mutating: bool) -> AdmissionResponse:
    """Upstream's ``VerifyAdmissionResponse``; raises :class:`InvalidResponse`."""
    response = review.get("response")
    if not isinstance(response, dict):
        raise InvalidResponse("webhook response was absent")
    patch = _decode_patch(response.get("patch"))
    patch_type = response.get("patchType")
    warnings = [str(w) for w in response.get("warnings") or ()]
    result = response.get("status")
    allowed = bool(response.get("allowed"))
    if version == "v1beta1":
        if not mutating:
            patch = b""
        return AdmissionResponse(allowed, result, patch, "JSONPatch" if patch else "", warnings)
    if response.get("uid") != uid:
        got_uid = str(response.get("uid", ""))
        raise InvalidResponse(f"expected response.uid={go_quote(uid)}, got {go_quote(got_uid)}")
    expected = gvk_string(f"{ADMISSION_GROUP}/v1", "AdmissionReview")
    got = gvk_string(str(review.get("apiVersion", "")), str(review.get("kind", "")))
    if got != expected:
        raise InvalidResponse(f"expected webhook response of {expected}, got {got}")
    if mutating:
        if patch and patch_type is None:
            raise InvalidResponse("webhook returned response.patch but not response.patchType")
        if not patch and patch_type is not None:
            raise InvalidResponse("webhook returned response.patchType but not response.patch")
        if patch_type == "":
            raise InvalidResponse('webhook returned invalid response.patchType of ""')
    else:
        if patch:
            raise InvalidResponse("validating webhook may not return response.patch")
        if patch_type is not None:
            raise InvalidResponse("validating webhook may not return response.patchType")
    return AdmissionResponse(allowed, result, patch, patch_type or "", warnings)


def _decode_patch(value: Any) -> bytes:
    """``response.patch`` is ``[]byte``: base64 in JSON."""
    if value is None:
        return b""
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidResponse("illegal base64 data in response.patch") from None
