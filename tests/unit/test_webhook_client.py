"""The shared webhook client against a real HTTPS server: TLS trust, timeouts, Go-shaped errors."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kapi.apimachinery.gotext import go_duration
from kapi.server import free_port
from kapi.webhook import (
    ServiceReference,
    ServiceResolver,
    WebhookClientConfig,
    WebhookClientManager,
    WebhookConfigError,
    WebhookConnectionError,
    WebhookDecodeError,
    WebhookError,
    WebhookResponseError,
    WebhookTimeoutError,
    WebhookTLSError,
)
from tests.tls import CertificateAuthority, ServingCertificate, make_ca, make_serving_cert
from tests.webhook_server import WebhookServer, serve_webhook

SERVICE_HOST = "hook.webhooks.svc"


@pytest.fixture(scope="module")
def ca() -> CertificateAuthority:
    return make_ca()


@pytest.fixture(scope="module")
def cert(ca: CertificateAuthority, tmp_path_factory: pytest.TempPathFactory) -> ServingCertificate:
    hosts = ("127.0.0.1", "localhost", SERVICE_HOST)
    return make_serving_cert(ca, tmp_path_factory.mktemp("tls"), hosts)


@pytest.fixture
def server(cert: ServingCertificate) -> Iterator[WebhookServer]:
    with serve_webhook(cert, lambda path, body: (200, {"echo": body})) as running:
        yield running


def post(
    config: WebhookClientConfig,
    body: Any = None,
    timeout: float = 30.0,
    resolver: ServiceResolver | None = None,
) -> Any:
    async def main() -> Any:
        manager = WebhookClientManager(resolver)
        try:
            return await manager.client_for(config).post(body or {"hello": "world"}, timeout)
        finally:
            await manager.aclose()

    return asyncio.run(main())


def failure(config: WebhookClientConfig, **kwargs: Any) -> WebhookError:
    with pytest.raises(WebhookError) as info:
        post(config, **kwargs)
    return info.value


def url_config(server: WebhookServer, ca: CertificateAuthority, path: str = "/convert"):
    return WebhookClientConfig(url=server.url(path), ca_bundle=ca.cert_pem)


def test_posts_json_and_returns_the_answer(server: WebhookServer, ca: CertificateAuthority):
    assert post(url_config(server, ca), {"a": 1}) == {"echo": {"a": 1}}
    (request,) = server.requests
    assert request.path == "/convert?timeout=30s"
    assert request.headers["Content-Type"] == "application/json"


def test_clients_are_cached_per_config(ca: CertificateAuthority):
    async def main() -> None:
        manager = WebhookClientManager()
        config = WebhookClientConfig(url="https://127.0.0.1:1/x", ca_bundle=ca.cert_pem)
        same = WebhookClientConfig(url="https://127.0.0.1:1/x", ca_bundle=ca.cert_pem)
        assert manager.client_for(config) is manager.client_for(same)
        await manager.aclose()

    asyncio.run(main())


def test_ca_bundle_is_the_only_trust(server: WebhookServer):
    config = WebhookClientConfig(url=server.url("/convert"), ca_bundle=make_ca("other").cert_pem)
    err = failure(config)
    assert isinstance(err, WebhookTLSError)
    assert str(err) == (
        f'Post "https://127.0.0.1:{server.port}/convert?timeout=30s": '
        "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    )


def test_without_ca_bundle_the_system_roots_do_not_trust_a_test_ca(server: WebhookServer):
    err = failure(WebhookClientConfig(url=server.url("/convert")))
    assert str(err).endswith("x509: certificate signed by unknown authority")


def test_certificate_must_cover_the_host(tmp_path: Path, ca: CertificateAuthority):
    narrow = make_serving_cert(ca, tmp_path, ("localhost",))
    with serve_webhook(narrow, lambda path, body: (200, {})) as server:
        err = failure(url_config(server, ca))
    assert isinstance(err, WebhookTLSError)
    assert str(err) == (
        f'Post "https://127.0.0.1:{server.port}/convert?timeout=30s": tls: failed to verify '
        "certificate: x509: cannot validate certificate for 127.0.0.1 "
        "because it doesn't contain any IP SANs"
    )


def test_service_is_reached_through_the_resolver(server: WebhookServer, ca: CertificateAuthority):
    resolver = ServiceResolver()
    resolver.register("webhooks", "hook", 8443, "127.0.0.1", server.port)
    config = WebhookClientConfig(
        service=ServiceReference("webhooks", "hook", "/convert", 8443), ca_bundle=ca.cert_pem
    )
    assert post(config, {"x": 1}, resolver=resolver) == {"echo": {"x": 1}}
    (request,) = server.requests
    assert request.path == "/convert?timeout=30s"
    assert request.headers["Host"] == "hook.webhooks.svc:8443"


def test_service_certificate_must_name_the_service(tmp_path: Path, ca: CertificateAuthority):
    plain = make_serving_cert(ca, tmp_path)
    with serve_webhook(plain, lambda path, body: (200, {})) as server:
        resolver = ServiceResolver()
        resolver.register("webhooks", "hook", 443, "127.0.0.1", server.port)
        config = WebhookClientConfig(
            service=ServiceReference("webhooks", "hook"), ca_bundle=ca.cert_pem
        )
        err = failure(config, resolver=resolver)
    assert str(err) == (
        'Post "https://hook.webhooks.svc:443/?timeout=30s": tls: failed to verify certificate: '
        "x509: certificate is valid for localhost, not hook.webhooks.svc"
    )


def test_unknown_service_fails_like_a_missing_service():
    config = WebhookClientConfig(service=ServiceReference("webhooks", "missing", "convert"))
    err = failure(config)
    assert isinstance(err, WebhookConnectionError)
    assert str(err) == (
        'Post "https://missing.webhooks.svc:443/convert?timeout=30s": service "missing" not found'
    )


def test_timeout(server: WebhookServer, ca: CertificateAuthority):
    server.delay = 2
    err = failure(url_config(server, ca), timeout=0.3)
    assert isinstance(err, WebhookTimeoutError)
    assert str(err) == (
        f'Post "https://127.0.0.1:{server.port}/convert?timeout=300ms": context deadline exceeded'
    )


def test_connection_refused(ca: CertificateAuthority):
    port = free_port()
    err = failure(WebhookClientConfig(url=f"https://127.0.0.1:{port}/convert"))
    assert isinstance(err, WebhookConnectionError)
    assert str(err) == (
        f'Post "https://127.0.0.1:{port}/convert?timeout=30s": '
        f"dial tcp 127.0.0.1:{port}: connect: connection refused"
    )


@pytest.mark.parametrize(
    ("status", "payload", "content_type", "reason", "message"),
    [
        (
            500,
            b"boom\n",
            "text/plain",
            "InternalError",
            'an error on the server ("boom") has prevented the request from succeeding',
        ),
        (
            500,
            {"error": "x"},
            "application/json",
            "InternalError",
            'an error on the server ("unknown") has prevented the request from succeeding',
        ),
        (
            400,
            {"error": "x"},
            "application/json",
            "BadRequest",
            "the server rejected our request for an unknown reason",
        ),
        (
            418,
            b"teapot",
            "text/plain",
            "",
            "the server responded with the status code 418 but did not return more information",
        ),
        (
            403,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": "Forbidden",
                "message": "no conversions for you",
                "code": 403,
            },
            "application/json",
            "Forbidden",
            "no conversions for you",
        ),
    ],
)
def test_non_2xx_answers(
    cert: ServingCertificate,
    ca: CertificateAuthority,
    status: int,
    payload: Any,
    content_type: str,
    reason: str,
    message: str,
):
    with serve_webhook(cert, lambda path, body: (status, payload, content_type)) as server:
        err = failure(url_config(server, ca))
    assert isinstance(err, WebhookResponseError)
    assert (err.code, err.reason, str(err)) == (status, reason, message)


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            b"",
            "0-length response with status code: 200 and content type: application/json",
        ),
        (
            b"<html>oops</html>",
            "couldn't get version/kind; json parse error: "
            "invalid character '<' looking for beginning of value",
        ),
        (b'{"a": 1', "couldn't get version/kind; json parse error: unexpected end of JSON input"),
        (
            b'["a"]',
            "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go "
            'value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
            'Kind string "json:\\"kind,omitempty\\"" }',
        ),
    ],
)
def test_undecodable_answers(
    cert: ServingCertificate, ca: CertificateAuthority, payload: bytes, message: str
):
    with serve_webhook(cert, lambda path, body: (200, payload)) as server:
        err = failure(url_config(server, ca))
    assert isinstance(err, WebhookDecodeError)
    assert str(err) == message


def test_bad_ca_bundle_fails_when_the_client_is_built():
    config = WebhookClientConfig(url="https://127.0.0.1:1/", ca_bundle=b"not a certificate")
    with pytest.raises(WebhookConfigError) as info:
        WebhookClientManager().client_for(config)
    assert str(info.value) == (
        "unable to load root certificates: unable to parse bytes as PEM block"
    )


def test_config_without_url_or_service():
    with pytest.raises(WebhookConfigError) as info:
        WebhookClientConfig().endpoint()
    assert str(info.value) == "webhook configuration must have either service or URL"


def test_config_from_the_api(ca: CertificateAuthority):
    config = WebhookClientConfig.from_api(
        {
            "service": {"namespace": "ns", "name": "svc", "path": "/convert/"},
            "caBundle": base64.b64encode(ca.cert_pem).decode(),
        }
    )
    assert config == WebhookClientConfig(
        service=ServiceReference("ns", "svc", "/convert/", 443), ca_bundle=ca.cert_pem
    )
    assert config.endpoint() == "https://svc.ns.svc:443/convert"
    url = WebhookClientConfig.from_api({"url": "https://hooks.example.com:9443/v1/convert"})
    assert url.endpoint() == "https://hooks.example.com:9443/v1/convert"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(30, "30s"), (10, "10s"), (0.3, "300ms"), (1.5, "1.5s"), (90, "1m30s"), (3600, "1h0m0s")],
)
def test_timeouts_are_spelled_like_go_durations(seconds: float, text: str):
    assert go_duration(seconds) == text
