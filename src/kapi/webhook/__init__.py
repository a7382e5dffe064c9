"""Calling webhooks: the shared client for CRD conversion and admission webhooks.

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
]
