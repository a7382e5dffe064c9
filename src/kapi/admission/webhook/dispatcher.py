"""Calling admission webhooks: matching, one call, and the failure policy.

The counterpart of upstream's ``generic.Webhook.ShouldCallHook`` and the
``callHook`` halves of its mutating and validating dispatchers.  Errors keep
upstream's split: a *calling* error (transport, timeout, a malformed answer)
obeys ``failurePolicy``; a denial, a dry run the webhook cannot take, or a
patch that does not apply fails the request whatever the policy says.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kapi.admission.interface import Attributes
from kapi.admission.namespace_lifecycle import NamespaceGetter
from kapi.admission.webhook.review import (
    AdmissionResponse,
    InvalidResponse,
    ReviewRequest,
    new_review,
    review_version,
    verify_response,
)
from kapi.admission.webhook.rules import RequestTarget, matched_version
from kapi.admission.webhook.selectors import (
    namespace_selector_applies,
    object_selector_matches,
    own_namespace_labels,
)
from kapi.admission.webhook.source import MUTATING, VALIDATING, Webhook
from kapi.apimachinery import errors
from kapi.apimachinery.unstructured import Object
from kapi.apis.admissionregistration_v1 import GROUP as ADMISSIONREGISTRATION
from kapi.request import add_warning
from kapi.request import current as current_request
from kapi.runtime.objects import deep_copy
from kapi.runtime.scheme import GroupVersion, Resource, Scheme, version_priority_key
from kapi.webhook import WebhookClientManager, WebhookError

NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")

_OPTIONS_KIND = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}


class CallingError(Exception):
    """Upstream's ``ErrCallingWebhook``: the webhook could not give a usable answer."""

    def __init__(self, webhook: str, reason: str) -> None:
        super().__init__(f'failed calling webhook "{webhook}": {reason}')


def denial(webhook: str, result: Object | None) -> errors.StatusError:
    """Upstream's ``ToStatusErr``: the webhook's Status, at least 400, message prefixed."""
    result = dict(result or {})
    denied_by = f'admission webhook "{webhook}" denied the request'
    if result.get("message"):
        message = f"{denied_by}: {result['message']}"
    elif result.get("reason"):
        message = f"{denied_by}: {result['reason']}"
    else:
        message = f"{denied_by} without explanation"
    code = result.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    return errors.StatusError(code, str(result.get("reason") or ""), message, result.get("details"))


@dataclass(frozen=True)
class Invocation:
    """A webhook that applies to a request, and the version it sees the object in."""

    webhook: Webhook
    version: str


class Dispatcher:
    """What mutating and validating webhook admission share.

    Given the scheme (served versions, conversion), the webhook clients and a
    namespace getter (for ``namespaceSelector``), as upstream's plugin
    initializers hand its webhook plugins what they need.
    """

    mutating: bool

    def __init__(
        self,
        scheme: Scheme,
        webhook_clients: WebhookClientManager,
        get_namespace: NamespaceGetter,
    ) -> None:
        self.scheme = scheme
        self.webhook_clients = webhook_clients
        self.get_namespace = get_namespace

    # -- matching ---------------------------------------------------------------------

    def target(self, a: Attributes) -> RequestTarget | None:
        """The request as webhooks match it; ``None`` for the webhook configurations themselves.

        Those are never sent to webhooks, as upstream, so that a broken
        webhook cannot lock its own configuration.
        """
        resource = a.resource
        if resource.group == ADMISSIONREGISTRATION and resource.plural in (MUTATING, VALIDATING):
            return None
        info = current_request().info
        if info.is_resource_request and (info.api_group, info.resource) == (
            resource.group,
            resource.plural,
        ):
            version = info.api_version
        else:
            version = self.object_version(a)
        is_namespace = resource.group == "" and resource.plural == "namespaces"
        return RequestTarget(
            operation=a.operation.value,
            group=resource.group,
            version=version,
            resource=resource.plural,
            subresource=a.subresource,
            namespace=a.name if is_namespace else (a.namespace or ""),
        )

    @staticmethod
    def object_version(a: Attributes) -> str:
        """The version of the objects admission holds (the store's)."""
        obj = a.object if a.object is not None else a.old_object
        api_version = (obj or {}).get("apiVersion") or ""
        return GroupVersion.parse(api_version).version if api_version else a.resource.hub_version

    def _equivalent_versions(self, resource: Resource) -> list[str]:
        served = [v for v in resource.versions if self.scheme.served(resource, v)]
        return sorted(served, key=version_priority_key)

    async def invocation(
        self, hook: Webhook, a: Attributes, target: RequestTarget
    ) -> Invocation | None:
        """Whether ``hook`` applies to the request, and in which version."""
        spec = hook.spec
        version = matched_version(
            spec.get("rules") or (),
            str(spec.get("matchPolicy") or "Equivalent"),
            target,
            self._equivalent_versions(a.resource),
        )
        if version is None:
            return None
        if hook.namespace_selector is None or hook.object_selector is None:
            raise errors.internal_error(ValueError(hook.selector_error))
        if namespace_selector_applies(target) and not hook.namespace_selector.empty():
            labels = own_namespace_labels(target, a.object)
            if labels is None:
                labels = await self._namespace_labels(target.namespace)
            if not hook.namespace_selector.matches(labels):
                return None
        if not object_selector_matches(hook.object_selector, a.object, a.old_object):
            return None
        return Invocation(hook, version)

    async def _namespace_labels(self, name: str) -> dict[str, str]:
        """The stored namespace's labels; a missing namespace fails the request (404)."""
        namespace = await self.get_namespace(name)
        return dict(namespace["metadata"].get("labels") or {})

    async def invocations(
        self, hooks: Iterable[Webhook], a: Attributes, target: RequestTarget
    ) -> list[Invocation]:
        out = []
        for hook in hooks:
            invocation = await self.invocation(hook, a, target)
            if invocation is not None:
                out.append(invocation)
        return out

    # -- conversion -------------------------------------------------------------------

    async def convert(self, resource: Resource, obj: Object | None, src: str, dst: str) -> Any:
        """A copy of ``obj`` in version ``dst``: webhooks see the version their rule names."""
        if obj is None:
            return None
        obj = deep_copy(obj)
        if src == dst:
            return obj
        try:
            if resource.converter is not None:
                api_version = GroupVersion(resource.group, dst).api_version
                return await resource.converter.convert_object(obj, api_version)
            hub = await self.scheme.to_hub(resource, obj, src)
            return await self.scheme.from_hub(resource, deep_copy(hub), dst)
        except errors.StatusError:
            raise
        except Exception as err:
            raise errors.internal_error(err) from None

    # -- one call ---------------------------------------------------------------------

    async def call(
        self, invocation: Invocation, a: Attributes, target: RequestTarget
    ) -> tuple[AdmissionResponse, Object | None]:
        """Call one webhook; its verified answer and the object it was sent (in its version)."""
        hook = invocation.webhook
        if a.dry_run:
            side_effects = hook.spec.get("sideEffects")
            if side_effects is None:
                raise CallingError(hook.name, "Webhook SideEffects is nil")
            if side_effects not in NO_SIDE_EFFECTS:
                raise errors.bad_request(
                    f'admission webhook "{hook.name}" does not support dry run'
                )
        try:
            version = review_version(hook.spec.get("admissionReviewVersions") or ())
        except ValueError as err:
            raise CallingError(hook.name, f"could not create admission objects: {err}") from None
        source_version = self.object_version(a)
        obj = await self.convert(a.resource, a.object, source_version, invocation.version)
        old = await self.convert(a.resource, a.old_object, source_version, invocation.version)
        uid, review = new_review(version, self._review_request(invocation, a, target, obj, old))
        try:
            client = self.webhook_clients.client_for(hook.client_config)
        except WebhookError as err:
            raise CallingError(hook.name, f"could not get REST client: {err}") from None
        try:
            answer = await client.post(review, hook.timeout)
        except WebhookError as err:
            raise CallingError(hook.name, f"failed to call webhook: {err}") from None
        try:
            response = verify_response(version, uid, answer, mutating=self.mutating)
        except InvalidResponse as err:
            raise CallingError(hook.name, f"received invalid webhook response: {err}") from None
        for text in response.warnings:
            add_warning(text)
        if not response.allowed:
            raise denial(hook.name, response.result)
        return response, obj

    def _review_request(
        self,
        invocation: Invocation,
        a: Attributes,
        target: RequestTarget,
        obj: Object | None,
        old: Object | None,
    ) -> ReviewRequest:
        resource = a.resource
        context = current_request()
        options: Object | None = None
        if kind := _OPTIONS_KIND.get(target.operation):
            options = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
            if a.dry_run:
                options["dryRun"] = ["All"]
        return ReviewRequest(
            kind=_gvk(resource.group, invocation.version, resource.kind),
            resource=_gvr(resource.group, invocation.version, resource.plural),
            subresource=a.subresource,
            request_kind=_gvk(resource.group, target.version, resource.kind),
            request_resource=_gvr(resource.group, target.version, resource.plural),
            request_subresource=a.subresource,
            name=a.name,
            namespace=a.namespace or "",
            operation=target.operation,
            user=context.user,
            groups=context.groups,
            object=obj,
            old_object=old,
            dry_run=a.dry_run,
            options=options,
        )

    @staticmethod
    def fail(invocation: Invocation, err: CallingError) -> errors.StatusError | None:
        """``failurePolicy``: Fail answers 500 with the calling error; Ignore lets it pass."""
        if invocation.webhook.failure_policy_ignore:
            return None
        return errors.internal_error(err)


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": kind}


def _gvr(group: str, version: str, resource: str) -> dict[str, str]:
    return {"group": group, "version": version, "resource": resource}
