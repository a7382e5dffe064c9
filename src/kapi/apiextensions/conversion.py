"""Converting custom resources between the versions of their CRD.

Strategy ``None`` only rewrites ``apiVersion`` (upstream's ``nopConverter``);
strategy ``Webhook`` asks the CRD's conversion webhook
(:class:`~kapi.apiextensions.webhook_converter.WebhookConverter`).
"""

from __future__ import annotations

from typing import Any

from kapi.apiextensions.webhook_converter import WebhookConverter
from kapi.apimachinery.unstructured import Object
from kapi.runtime.scheme import GroupVersionKind, ObjectConverter
from kapi.webhook import WebhookClientManager


class NoneConverter:
    """Conversion strategy ``None``: the object is the same in every version."""

    identity = True

    async def convert(self, objects: list[Object], api_version: str) -> list[Object]:
        return [{**obj, "apiVersion": api_version} for obj in objects]

    async def convert_object(self, obj: Object, api_version: str) -> Object:
        return {**obj, "apiVersion": api_version}


def converter_for(crd: Object, clients: WebhookClientManager) -> ObjectConverter:
    """The converter a CRD's ``spec.conversion`` asks for (validated before it gets here)."""
    spec: dict[str, Any] = crd["spec"]
    conversion = spec.get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return NoneConverter()
    webhook = conversion["webhook"]
    kind = GroupVersionKind(spec["group"], "", spec["names"]["kind"])
    return WebhookConverter(
        webhook.get("clientConfig") or {},
        webhook.get("conversionReviewVersions") or [],
        kind,
        clients=clients,
    )
