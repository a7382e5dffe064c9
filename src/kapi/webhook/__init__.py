"""Webhooks shared by CRD conversion and admission: the client and address validation.

The counterpart of ``k8s.io/apiserver/pkg/util/webhook``.
"""

from kapi.webhook.client import DEFAULT_TIMEOUT, WebhookClient, WebhookClientManager
from kapi.webhook.config import (
    ServiceNotFound,
    ServiceReference,
    ServiceResolver,
    WebhookClientConfig,
)
from kapi.webhook.errors import (
    WebhookConfigError,
    WebhookConnectionError,
    WebhookDecodeError,
    WebhookError,
    WebhookResponseError,
    WebhookTimeoutError,
    WebhookTLSError,
    WebhookTransportError,
)
from kapi.webhook.validation import validate_webhook_service, validate_webhook_url

__all__ = [
    "DEFAULT_TIMEOUT",
    "ServiceNotFound",
    "ServiceReference",
    "ServiceResolver",
    "WebhookClient",
    "WebhookClientConfig",
    "WebhookClientManager",
    "WebhookConfigError",
    "WebhookConnectionError",
    "WebhookDecodeError",
    "WebhookError",
    "WebhookResponseError",
    "WebhookTLSError",
    "WebhookTimeoutError",
    "WebhookTransportError",
    "validate_webhook_service",
    "validate_webhook_url",
]
