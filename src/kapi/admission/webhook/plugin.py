"""The MutatingAdmissionWebhook and ValidatingAdmissionWebhook admission plugins.

Mutating webhooks run one after another in configuration-name order, each
seeing the previous ones' patches; a webhook with ``reinvocationPolicy:
IfNeeded`` is called once more when a later webhook changed the object, as
upstream's reinvocation round.  Validating webhooks run concurrently and the
first failure (in webhook order, so the answer does not depend on timing)
fails the request.
"""

from __future__ import annotations

import asyncio
import json
import logging

import jsonpatch

from kapi.admission.interface import Attributes
from kapi.admission.namespace_lifecycle import NamespaceGetter
from kapi.admission.webhook.dispatcher import CallingError, Dispatcher, Invocation
from kapi.admission.webhook.rules import RequestTarget
from kapi.admission.webhook.source import Webhook, WebhookSource
from kapi.apimachinery import errors
from kapi.runtime.scheme import Scheme
from kapi.webhook import WebhookClientManager

log = logging.getLogger(__name__)


class _WebhookPlugin(Dispatcher):
    """A dispatcher that reads the current webhook configurations from ``source``."""

    def __init__(
        self,
        scheme: Scheme,
        webhook_clients: WebhookClientManager,
        get_namespace: NamespaceGetter,
        source: WebhookSource,
    ) -> None:
        super().__init__(scheme, webhook_clients, get_namespace)
        self.source = source


class MutatingWebhookAdmission(_WebhookPlugin):
    mutating = True

    async def admit(self, a: Attributes) -> None:
        hooks = self.source.mutating
        target = self.target(a) if hooks else None
        if target is None:
            return
        reinvocable: set[tuple[str, int]] = set()
        reinvoke: set[tuple[str, int]] = set()
        for round_hooks in (hooks, None):
            if round_hooks is None:
                if not reinvoke:
                    break
                round_hooks = [h for h in hooks if h.uid in reinvoke]
            for hook in round_hooks:
                changed = await self._run_one(hook, a, target)
                if changed:
                    reinvoke |= reinvocable
                if hook.reinvoke_if_needed:
                    reinvocable.add(hook.uid)

    async def _run_one(self, hook: Webhook, a: Attributes, target: RequestTarget) -> bool:
        """Call ``hook`` if it applies and apply its patch; whether the object changed."""
        invocation = await self.invocation(hook, a, target)
        if invocation is None:
            return False
        try:
            return await self._call_and_patch(invocation, a, target)
        except CallingError as err:
            failure = self.fail(invocation, err)
            if failure is not None:
                raise failure from None
            log.warning("failed calling webhook, failing open %s: %s", hook.name, err)
            return False

    async def _call_and_patch(
        self, invocation: Invocation, a: Attributes, target: RequestTarget
    ) -> bool:
        hook = invocation.webhook
        response, versioned = await self.call(invocation, a, target)
        if not response.patch:
            return False
        try:
            operations = json.loads(response.patch)
            patch = jsonpatch.JsonPatch(operations)
        except (ValueError, jsonpatch.InvalidJsonPatch) as err:
            raise CallingError(
                hook.name, f"received undecodable patch in webhook response: {err}"
            ) from None
        if not operations:
            return False
        if versioned is None or a.object is None:
            raise errors.internal_error(
                ValueError(
                    f'admission webhook "{hook.name}" attempted to modify the object, '
                    "which is not supported for this operation"
                )
            )
        if response.patch_type != "JSONPatch":
            raise CallingError(hook.name, f'unsupported patch type "{response.patch_type}"')
        try:
            patched = patch.apply(versioned)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as err:
            raise errors.internal_error(err) from None
        if patched == versioned:
            return False
        back = await self.convert(a.resource, patched, invocation.version, self.object_version(a))
        a.object.clear()
        a.object.update(back)
        return True


class ValidatingWebhookAdmission(_WebhookPlugin):
    mutating = False

    async def validate(self, a: Attributes) -> None:
        hooks = self.source.validating
        target = self.target(a) if hooks else None
        if target is None:
            return
        invocations = await self.invocations(hooks, a, target)
        if not invocations:
            return
        outcomes = await asyncio.gather(
            *(self.call(i, a, target) for i in invocations), return_exceptions=True
        )
        for invocation, outcome in zip(invocations, outcomes, strict=True):
            if isinstance(outcome, CallingError):
                failure = self.fail(invocation, outcome)
                if failure is not None:
                    raise failure
                log.warning(
                    "failed calling webhook, failing open %s: %s", invocation.webhook.name, outcome
                )
            elif isinstance(outcome, BaseException):
                raise outcome
