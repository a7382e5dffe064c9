"""A real HTTPS server that answers webhook calls with a Python function.

Conversion and admission webhook tests need a peer that speaks TLS with a
certificate from a test CA, sees exactly what kapi sends, and can misbehave
(wrong status, garbage body, slowness).  The server runs the stdlib
``http.server`` in a background thread so the client under test can use its
own event loop.

A handler is ``(path, body) -> (status, payload)`` or ``(status, payload,
content_type)``: ``path`` includes the query string, ``body`` is the decoded
JSON request; ``payload`` is JSON-encoded unless it is ``bytes``.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.tls import ServingCertificate

Handler = Callable[[str, Any], tuple[Any, ...]]


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class WebhookServer:
    """A running server: its address, what it received, and knobs to misbehave."""

    host: str
    port: int
    handler: Handler
    #: Seconds to sleep before answering, for timeout tests.
    delay: float = 0.0
    requests: list[RecordedRequest] = field(default_factory=list)

    def url(self, path: str = "/") -> str:
        return f"https://{self.host}:{self.port}{path}"


def _request_handler(server: WebhookServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.loads(raw) if raw else None
            server.requests.append(
                RecordedRequest("POST", self.path, dict(self.headers.items()), body)
            )
            if server.delay:
                time.sleep(server.delay)
            status, payload, *rest = server.handler(self.path, body)
            content_type = rest[0] if rest else "application/json"
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                pass  # the client gave up (timeout tests)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return _Handler


@contextmanager
def serve_webhook(
    cert: ServingCertificate, handler: Handler, host: str = "127.0.0.1"
) -> Iterator[WebhookServer]:
    """Serve ``handler`` over HTTPS on a free port of ``host`` until the block exits."""
    server = WebhookServer(host, 0, handler)
    httpd = ThreadingHTTPServer((host, 0), _request_handler(server))
    httpd.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert.cert_file, cert.key_file)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    server.port = httpd.server_address[1]
    thread = threading.Thread(
        target=httpd.serve_forever, args=(0.05,), name="webhook-server", daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
