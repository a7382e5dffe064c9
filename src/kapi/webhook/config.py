"""Where a webhook lives: the API's ``clientConfig`` and service resolution.

The counterpart of ``ClientConfig`` and ``ServiceResolver`` in
``k8s.io/apiserver/pkg/util/webhook``.  A ``service`` reference is addressed
as ``https://<name>.<namespace>.svc:<port><path>``: that is the URL upstream
prints in errors, the Host header and the TLS server name the certificate
must cover.  Only the address dialled comes from the :class:`ServiceResolver`.
"""

from __future__ import annotations

import base64
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kapi.webhook.errors import WebhookConfigError

DEFAULT_SERVICE_PORT = 443


@dataclass(frozen=True)
class ServiceReference:
    """``clientConfig.service``: a Service in the cluster that serves the webhook."""

    namespace: str
    name: str
    path: str = ""
    port: int = DEFAULT_SERVICE_PORT

    @property
    def server_name(self) -> str:
        """The DNS name the serving certificate must be valid for."""
        return f"{self.name}.{self.namespace}.svc"


@dataclass(frozen=True)
class WebhookClientConfig:
    """``clientConfig`` of a CRD conversion or admission webhook, decoded.

    Hashable, so that clients can be cached per configuration as upstream's
    ``ClientManager`` does.
    """

    url: str = ""
    service: ServiceReference | None = None
    #: PEM certificates to trust, decoded from the API's base64 ``caBundle``.
    ca_bundle: bytes = b""

    @classmethod
    def from_api(cls, client_config: Mapping[str, Any]) -> WebhookClientConfig:
        """From the wire form: ``{url | service: {...}, caBundle: <base64 PEM>}``."""
        service = None
        if (svc := client_config.get("service")) is not None:
            service = ServiceReference(
                namespace=svc.get("namespace", ""),
                name=svc.get("name", ""),
                path=svc.get("path") or "",
                port=svc.get("port") or DEFAULT_SERVICE_PORT,
            )
        ca_bundle = client_config.get("caBundle") or b""
        if isinstance(ca_bundle, str):
            ca_bundle = base64.b64decode(ca_bundle)
        return cls(url=client_config.get("url") or "", service=service, ca_bundle=ca_bundle)

    def endpoint(self) -> str:
        """The URL upstream posts to (before ``?timeout=``), as its errors print it."""
        if self.service is not None:
            svc = self.service
            return f"https://{svc.server_name}:{svc.port}{_api_path(svc.path)}"
        if not self.url:
            raise WebhookConfigError("webhook configuration must have either service or URL")
        scheme, sep, rest = self.url.partition("://")
        host, slash, path = rest.partition("/")
        if not sep or not host:
            raise WebhookConfigError(f'Unparsable URL: parse "{self.url}": missing host')
        return f"{scheme}://{host}{_api_path(slash + path)}"


def _api_path(path: str) -> str:
    """client-go joins ``/`` and the configured path, cleaning it like Go's ``path.Join``."""
    return posixpath.normpath("/" + path.lstrip("/"))


class ServiceNotFound(LookupError):
    """The resolver knows no address for a service; the text matches a lister NotFound."""

    def __init__(self, name: str) -> None:
        super().__init__(f'service "{name}" not found')


class ServiceResolver:
    """Maps a service reference to the ``(host, port)`` to dial.

    kube-apiserver resolves through the Service and its endpoints; kapi has no
    cluster network, so this resolver only knows the addresses registered with
    :meth:`register` and fails every other service the way upstream does for a
    missing Service (``service "<name>" not found``).  A server that can do
    better (for example, look Services up in its own storage) replaces the
    ``service_resolver`` of its :class:`~kapi.webhook.client.WebhookClientManager`
    with a subclass that overrides :meth:`resolve`.
    """

    def __init__(self) -> None:
        self._endpoints: dict[tuple[str, str, int], tuple[str, int]] = {}

    def register(self, namespace: str, name: str, port: int, host: str, target_port: int) -> None:
        """Serve ``<name>.<namespace>.svc:<port>`` from ``host:target_port``."""
        self._endpoints[(namespace, name, port)] = (host, target_port)

    async def resolve(self, namespace: str, name: str, port: int) -> tuple[str, int]:
        try:
            return self._endpoints[(namespace, name, port)]
        except KeyError:
            raise ServiceNotFound(name) from None
