"""Admission webhooks: the configurations in effect and the two admission plugins."""

from kapi.admission.webhook.plugin import MutatingWebhookAdmission, ValidatingWebhookAdmission
from kapi.admission.webhook.source import WebhookSource

__all__ = ["MutatingWebhookAdmission", "ValidatingWebhookAdmission", "WebhookSource"]
