"""The HTTPS client every webhook call goes through.

The counterpart of ``ClientManager`` in ``k8s.io/apiserver/pkg/util/webhook``
and the client-go REST client under it: one cached client per
``clientConfig`` (so connections are reused), TLS that trusts exactly the
``caBundle`` (the system roots when there is none), HTTP/1.1 only (as
upstream, so concurrent calls spread over a service's backends), a per-call
timeout sent as ``?timeout=<duration>`` and enforced as a deadline, and
failures turned into :mod:`kapi.webhook.errors` with Go's wording.  CRD
conversion webhooks and admission webhooks both use it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
import ssl
from collections.abc import Iterator
from typing import Any

import httpx
import orjson

from kapi.apimachinery.gojson import syntax_error
from kapi.apimachinery.gotext import go_duration, go_json_kind
from kapi.webhook.config import ServiceNotFound, ServiceResolver, WebhookClientConfig
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

#: Upstream's default for calls whose API has no ``timeoutSeconds`` (conversion webhooks).
DEFAULT_TIMEOUT = 30.0

#: client-go keeps at most this much of a non-Status error body.
_MAX_UNSTRUCTURED_RESPONSE = 2048

#: OpenSSL verify results that Go reports as an unknown authority.
_UNKNOWN_AUTHORITY = {2, 18, 19, 20, 21}
_NOT_VALID_NOW = {9, 10}
_NAME_MISMATCH = {62, 64}


class WebhookClientManager:
    """Builds webhook clients and keeps one per configuration.

    ``service_resolver`` decides where ``service`` references are dialled;
    the server may replace it (see :class:`~kapi.webhook.config.ServiceResolver`).
    """

    def __init__(self, service_resolver: ServiceResolver | None = None) -> None:
        self.service_resolver = service_resolver or ServiceResolver()
        self._clients: dict[WebhookClientConfig, WebhookClient] = {}

    def client_for(self, config: WebhookClientConfig) -> WebhookClient:
        """The cached client for ``config``; raises WebhookConfigError if none can be built."""
        client = self._clients.get(config)
        if client is None:
            client = self._clients[config] = WebhookClient(config, self)
        return client

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()


class WebhookClient:
    """POSTs JSON to one webhook and returns its decoded JSON answer."""

    def __init__(self, config: WebhookClientConfig, manager: WebhookClientManager) -> None:
        self.config = config
        #: The URL upstream prints: ``https://<name>.<namespace>.svc:<port><path>`` for services.
        self.endpoint = config.endpoint()
        self._manager = manager
        self._http = httpx.AsyncClient(
            verify=_ssl_context(config.ca_bundle), trust_env=False, follow_redirects=False
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def post(self, body: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """POST ``body`` as JSON within ``timeout`` seconds; the answer's JSON, or WebhookError."""
        url = f"{self.endpoint}?timeout={go_duration(timeout)}"
        try:
            async with asyncio.timeout(timeout):
                return _decode_response(await self._send(url, orjson.dumps(body), timeout))
        except (TimeoutError, httpx.TimeoutException):
            raise WebhookTimeoutError(url, "context deadline exceeded") from None

    async def _send(self, url: str, content: bytes, timeout: float) -> httpx.Response:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        extensions: dict[str, Any] = {}
        target = url
        server_name = httpx.URL(url).host
        service = self.config.service
        if service is not None:
            try:
                host, port = await self._manager.service_resolver.resolve(
                    service.namespace, service.name, service.port
                )
            except ServiceNotFound as err:
                raise WebhookConnectionError(url, str(err)) from None
            target = str(httpx.URL(url).copy_with(host=host, port=port))
            headers["Host"] = f"{service.server_name}:{service.port}"
            extensions["sni_hostname"] = server_name = service.server_name
        try:
            return await self._http.post(
                target, content=content, headers=headers, extensions=extensions, timeout=timeout
            )
        except httpx.TimeoutException:
            raise
        except httpx.TransportError as err:
            dial = httpx.URL(target)
            raise await self._transport_error(
                url, err, dial.host, dial.port or 443, server_name
            ) from err

    async def _transport_error(
        self, url: str, err: Exception, host: str, port: int, server_name: str
    ) -> WebhookTransportError:
        """Go's text for what broke: dial, TLS verification, or the connection."""
        for cause in _causes(err):
            if isinstance(cause, ssl.SSLCertVerificationError):
                why = await self._verification_error(cause, host, port, server_name)
                return WebhookTLSError(url, f"tls: failed to verify certificate: {why}")
            if isinstance(cause, ssl.SSLError):
                if cause.reason == "WRONG_VERSION_NUMBER":
                    return WebhookConnectionError(
                        url, "http: server gave HTTP response to HTTPS client"
                    )
                return WebhookTLSError(url, f"remote error: tls: {cause.reason or cause}")
            if isinstance(cause, ConnectionRefusedError):
                return WebhookConnectionError(
                    url, f"dial tcp {_join_host_port(host, port)}: connect: connection refused"
                )
            if isinstance(cause, socket.gaierror):
                return WebhookConnectionError(url, f"dial tcp: lookup {host}: no such host")
        if isinstance(err, httpx.RemoteProtocolError):
            return WebhookConnectionError(url, "EOF")
        return WebhookConnectionError(url, str(err) or type(err).__name__)

    async def _verification_error(
        self, err: ssl.SSLCertVerificationError, host: str, port: int, server_name: str
    ) -> str:
        if err.verify_code in _UNKNOWN_AUTHORITY:
            return "x509: certificate signed by unknown authority"
        if err.verify_code in _NOT_VALID_NOW:
            return "x509: certificate has expired or is not yet valid"
        if err.verify_code in _NAME_MISMATCH:
            names = await self._peer_names(host, port, server_name)
            if names is not None:
                return _hostname_error(server_name, names)
        return f"x509: {err.verify_message}"

    async def _peer_names(
        self, host: str, port: int, server_name: str
    ) -> list[tuple[str, str]] | None:
        """The certificate's SANs, fetched again without the name check.

        Only on the error path: Go names the SANs the certificate does cover,
        which is what a user needs to fix a webhook certificate.
        """
        context = _ssl_context(self.config.ca_bundle)
        context.check_hostname = False
        try:
            _, writer = await asyncio.open_connection(
                host, port, ssl=context, server_hostname=server_name
            )
        except (OSError, ssl.SSLError):
            return None
        cert = writer.get_extra_info("peercert") or {}
        writer.close()
        return list(cert.get("subjectAltName", ()))


def _ssl_context(ca_bundle: bytes) -> ssl.SSLContext:
    """Trust exactly ``ca_bundle`` when given, else the system roots, as upstream."""
    if not ca_bundle:
        context = ssl.create_default_context()
    else:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        try:
            context.load_verify_locations(cadata=ca_bundle.decode("ascii"))
        except (ssl.SSLError, ValueError):
            raise WebhookConfigError(
                "unable to load root certificates: unable to parse bytes as PEM block"
            ) from None
    context.set_alpn_protocols(["http/1.1"])
    return context


def _causes(err: BaseException) -> Iterator[BaseException]:
    seen: BaseException | None = err
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__


def _join_host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _hostname_error(host: str, names: list[tuple[str, str]]) -> str:
    """crypto/x509 ``HostnameError`` text."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        valid = ", ".join(value for kind, value in names if kind == "DNS")
    else:
        ips = [str(ipaddress.ip_address(v.strip())) for k, v in names if k == "IP Address"]
        if not ips:
            return (
                f"x509: cannot validate certificate for {host} "
                "because it doesn't contain any IP SANs"
            )
        valid = ", ".join(ips)
    if not valid:
        return f"x509: certificate is not valid for any names, but wanted to match {host}"
    return f"x509: certificate is valid for {valid}, not {host}"


def _decode_response(response: httpx.Response) -> Any:
    """client-go's ``Result.Into`` on a webhook's answer."""
    content_type = response.headers.get("Content-Type", "application/json")
    if not 200 <= response.status_code <= 206:
        raise _status_error(response, content_type)
    if not response.content:
        raise WebhookDecodeError(
            f"0-length response with status code: {response.status_code} "
            f"and content type: {content_type}"
        )
    try:
        decoded = json.loads(response.content)
    except json.JSONDecodeError as err:
        detail = syntax_error(response.content) or err.msg
        raise WebhookDecodeError(f"couldn't get version/kind; json parse error: {detail}") from None
    except UnicodeDecodeError:
        raise WebhookDecodeError(
            "couldn't get version/kind; json parse error: invalid UTF-8 in JSON"
        ) from None
    if decoded is None:
        return {}
    if not isinstance(decoded, dict):
        raise WebhookDecodeError(
            "couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{go_json_kind(decoded)} into Go value of type struct "
            '{ APIVersion string "json:\\"apiVersion,omitempty\\""; '
            'Kind string "json:\\"kind,omitempty\\"" }'
        )
    return decoded


def _status_error(response: httpx.Response, content_type: str) -> WebhookError:
    """A ``Status`` body speaks for itself; anything else gets client-go's generic text."""
    try:
        status = json.loads(response.content)
    except ValueError:
        status = None
    if (
        isinstance(status, dict)
        and status.get("kind") == "Status"
        and status.get("apiVersion", "v1") == "v1"
        and status.get("status") == "Failure"
    ):
        return WebhookResponseError(
            int(status.get("code") or response.status_code),
            str(status.get("reason", "")),
            str(status.get("message", "")),
        )
    server_message = "unknown"
    if content_type.startswith("text/"):
        text = response.content[:_MAX_UNSTRUCTURED_RESPONSE].decode("utf-8", "replace")
        server_message = text.strip()
    reason, message = _generic_response(response.status_code, server_message)
    return WebhookResponseError(response.status_code, reason, message)


_GENERIC_RESPONSES = {
    400: ("BadRequest", "the server rejected our request for an unknown reason"),
    401: ("Unauthorized", "the server has asked for the client to provide credentials"),
    404: ("NotFound", "the server could not find the requested resource"),
    405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
    409: ("AlreadyExists", "the server reported a conflict"),
    422: ("Invalid", "the server rejected our request due to an error in our request"),
    429: (
        "TooManyRequests",
        "the server has received too many requests and has asked us to try again later",
    ),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: (
        "Timeout",
        "the server was unable to return a response in the time allotted, "
        "but may still be processing the request",
    ),
}


def _generic_response(code: int, server_message: str) -> tuple[str, str]:
    """apimachinery's ``NewGenericServerResponse`` for a POST without a resource."""
    if code in _GENERIC_RESPONSES:
        return _GENERIC_RESPONSES[code]
    if code == 403:
        return "Forbidden", server_message
    if code == 406:
        if server_message in ("", "unknown"):
            return (
                "NotAcceptable",
                "the server was unable to respond with a content type that the client supports",
            )
        return "NotAcceptable", server_message
    if code == 415:
        return "UnsupportedMediaType", server_message
    if code >= 500:
        return (
            "InternalError",
            f"an error on the server ({json.dumps(server_message)}) "
            "has prevented the request from succeeding",
        )
    return "", (
        f"the server responded with the status code {code} but did not return more information"
    )
