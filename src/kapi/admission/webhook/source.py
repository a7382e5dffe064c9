"""The webhook configurations in effect, kept in memory and refreshed by watches.

The counterpart of upstream's configuration managers (informers on
``MutatingWebhookConfiguration`` and ``ValidatingWebhookConfiguration``):
requests read the current, already compiled and ordered list and never
list storage.  As upstream, a configuration takes effect shortly after it is
written, once its watch event arrives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kapi.apimachinery.labels import Selector, SelectorParseError, label_selector_as_selector
from kapi.apimachinery.unstructured import Object
from kapi.apis.admissionregistration_v1 import GROUP
from kapi.registry.informer import Informer
from kapi.registry.store import Store
from kapi.webhook import WebhookClientConfig

MUTATING = "mutatingwebhookconfigurations"
VALIDATING = "validatingwebhookconfigurations"


@dataclass(frozen=True)
class Webhook:
    """One webhook of one configuration, with its selectors parsed once."""

    configuration: str
    index: int
    spec: Mapping[str, Any]
    client_config: WebhookClientConfig
    namespace_selector: Selector | None
    object_selector: Selector | None
    #: Why a selector could not be parsed (upstream fails matching requests with it).
    selector_error: str = ""

    @property
    def name(self) -> str:
        return str(self.spec.get("name", ""))

    @property
    def uid(self) -> tuple[str, int]:
        """Identifies the webhook across reinvocation rounds, as upstream's webhook UID."""
        return (self.configuration, self.index)

    @property
    def failure_policy_ignore(self) -> bool:
        return self.spec.get("failurePolicy") == "Ignore"

    @property
    def timeout(self) -> float:
        return float(self.spec.get("timeoutSeconds") or 10)

    @property
    def reinvoke_if_needed(self) -> bool:
        return self.spec.get("reinvocationPolicy") == "IfNeeded"


def compile_webhooks(configurations: list[Object]) -> list[Webhook]:
    """Webhooks in upstream's call order: by configuration name, then as listed."""
    hooks: list[Webhook] = []
    for config in sorted(configurations, key=lambda c: c["metadata"]["name"]):
        for index, spec in enumerate(config.get("webhooks") or ()):
            hooks.append(_compile(config["metadata"]["name"], index, spec))
    return hooks


def _compile(configuration: str, index: int, spec: Mapping[str, Any]) -> Webhook:
    selectors: list[Selector | None] = []
    error = ""
    for key in ("namespaceSelector", "objectSelector"):
        try:
            selectors.append(label_selector_as_selector(spec.get(key) or {}))
        except SelectorParseError as err:
            selectors.append(None)
            error = error or str(err)
    return Webhook(
        configuration=configuration,
        index=index,
        spec=spec,
        client_config=WebhookClientConfig.from_api(spec.get("clientConfig") or {}),
        namespace_selector=selectors[0],
        object_selector=selectors[1],
        selector_error=error,
    )


class WebhookSource:
    """The current mutating and validating webhooks."""

    def __init__(self) -> None:
        self.mutating: list[Webhook] = []
        self.validating: list[Webhook] = []

    def set(self, plural: str, configurations: list[Object]) -> None:
        hooks = compile_webhooks(configurations)
        if plural == MUTATING:
            self.mutating = hooks
        else:
            self.validating = hooks

    async def run(self, stores: Mapping[tuple[str, str], Store]) -> None:
        """Follow both configuration kinds until cancelled."""
        mutating = Informer(lambda objs: self.set(MUTATING, list(objs.values())))
        validating = Informer(lambda objs: self.set(VALIDATING, list(objs.values())))
        await asyncio.gather(
            mutating.run(stores[(GROUP, MUTATING)]), validating.run(stores[(GROUP, VALIDATING)])
        )
