"""``POST .../serviceaccounts/{name}/token``: an authentication.k8s.io/v1 TokenRequest in,
the same request with ``status.token`` out (upstream's ``pkg/registry/core/serviceaccount/storage``
token REST).

Nothing is stored: the service account is read, the object the token is bound to (a Pod,
Secret or Node) is checked, and the token is signed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kapi.apimachinery import errors
from kapi.apis.core_v1_serviceaccounts import (
    TOKEN_REQUEST_API_VERSION,
    TokenIssuer,
    default_token_request,
    token_request_invalid,
    validate_token_request,
)
from kapi.endpoints.handlers import RequestScope, encode, write_options
from kapi.endpoints.http import Request, Response
from kapi.endpoints.negotiation import body_media_type
from kapi.runtime import protobuf, serializer
from kapi.runtime.objects import deep_copy

#: Reads one object of a core resource (``pods``, ``secrets``, ``nodes``) by namespace and
#: name; ``None`` when kapi does not serve that resource.
ObjectGetter = Callable[[str, str | None, str], Awaitable[dict] | None]

_BINDABLE = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}


class TokenSubresource:
    """The ``token`` subresource of service accounts."""

    def __init__(self, issuer: TokenIssuer, get_object: ObjectGetter) -> None:
        self.issuer = issuer
        self.get_object = get_object

    async def create(self, scope: RequestScope, request: Request) -> Response:
        dry_run, _ = write_options(request.query, "CreateOptions")
        kind = (TOKEN_REQUEST_API_VERSION, "TokenRequest")
        allowed = serializer.BODY_TYPES if protobuf.supports(*kind) else serializer.TEXT_BODY_TYPES
        media = body_media_type(request.headers.get("content-type"), allowed)
        body = await request.body()
        try:
            decoded = serializer.decode(body, media, find_duplicates=False, default_kind=kind)
        except serializer.SyntaxDecodeError as exc:
            raise errors.bad_request(str(exc)) from None
        token_request = decoded.obj
        if not isinstance(token_request, dict):
            raise errors.bad_request("the body of the request was in an unknown format")
        if (token_request.get("kind") or "TokenRequest") != "TokenRequest":
            named = f"{token_request.get('kind')} in {token_request.get('apiVersion')}"
            raise errors.bad_request(f"not a TokenRequest: {named}")
        answer = await self.create_token(
            scope.store.get, scope.namespace or "", scope.name, token_request, dry_run=dry_run
        )
        return encode(201, answer, scope.output)

    async def create_token(
        self,
        get_service_account: Callable[[str, str], Awaitable[dict]],
        namespace: str,
        name: str,
        token_request: dict,
        *,
        dry_run: bool = False,
    ) -> dict:
        """The answer to a decoded TokenRequest for ``namespace/name``, apart from HTTP
        (the shape of a subresource creator's ``create``)."""
        token_request = deep_copy(token_request)
        token_request["apiVersion"] = TOKEN_REQUEST_API_VERSION
        token_request["kind"] = "TokenRequest"
        metadata = token_request.setdefault("metadata", {})
        if metadata.get("namespace") and metadata["namespace"] != namespace:
            raise errors.bad_request(
                f'namespace mismatch, request namespace "{metadata["namespace"]}", '
                f'expected "{namespace}"'
            )
        if metadata.get("name") and metadata["name"] != name:
            raise errors.bad_request(
                f'name mismatch, request name "{metadata["name"]}", expected "{name}"'
            )
        metadata["namespace"], metadata["name"] = namespace, name
        default_token_request(token_request)
        errs = validate_token_request(token_request)
        if errs:
            raise token_request_invalid(errs)
        service_account = await get_service_account(namespace, name)
        bound = await self._bound_object(token_request, namespace, name)
        if dry_run:
            token_request.setdefault("status", {})
        else:
            self.issuer.issue(token_request, service_account, bound)
        return token_request

    async def _bound_object(
        self, token_request: dict, namespace: str, name: str
    ) -> tuple[str, dict] | None:
        ref = (token_request.get("spec") or {}).get("boundObjectRef")
        if not ref:
            return None
        kind = ref.get("kind") or ""
        api_version = ref.get("apiVersion") or ""
        plural = _BINDABLE.get(kind) if api_version == "v1" else None
        scope_ns = None if kind == "Node" else namespace
        found = self.get_object(plural, scope_ns, ref.get("name") or "") if plural else None
        if found is None:
            raise errors.bad_request(
                f'cannot bind token for serviceaccount "{name}" to object of type '
                f"{_gvk_string(api_version, kind)}"
            )
        obj = await found
        uid = ref.get("uid") or ""
        if uid and uid != obj["metadata"].get("uid"):
            raise errors.conflict(
                kind,
                "",
                ref.get("name") or "",
                f"the UID in the bound object reference ({uid}) does not match the UID in "
                "record. The object might have been deleted and then recreated",
            )
        return kind, obj


def _gvk_string(api_version: str, kind: str) -> str:
    """``schema.GroupVersionKind.String()``: ``apps/v1, Kind=Deployment``, ``/v1, Kind=Pod``."""
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={kind}"
