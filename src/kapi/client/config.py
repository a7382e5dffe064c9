"""What a client needs to reach one API server: address, namespace, TLS and credentials.

:class:`ClientConfig` is the resolved form of a kubeconfig context (client-go's
``rest.Config``): the sync and async clients take only this, so they can be built
from a kubeconfig, from CLI flags or directly in tests without caring which.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import KW_ONLY, dataclass

from kapi.version import KAPI_VERSION

#: The server derives the default field manager from the user agent's first segment.
DEFAULT_USER_AGENT = f"kapi-client/{KAPI_VERSION}"


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Connection settings for one API server.

    Like client-go's ``rest.Config``, each TLS input comes as a file path or as
    PEM data, and data wins when both are set: kubeconfigs carry either form.
    """

    server: str
    _: KW_ONLY
    #: The namespace used when a namespaced call does not name one.
    namespace: str = "default"
    ca_file: str | None = None
    ca_data: bytes | None = None
    cert_file: str | None = None
    cert_data: bytes | None = None
    key_file: str | None = None
    key_data: bytes | None = None
    insecure_skip_tls_verify: bool = False
    #: The name the server certificate is checked against (and sent as SNI)
    #: when it differs from the host in ``server``.
    tls_server_name: str | None = None
    token: str | None = None
    username: str | None = None
    password: str | None = None
    user_agent: str = DEFAULT_USER_AGENT

    def __post_init__(self) -> None:
        # Same refusal as client-go: trusting a CA while skipping verification is a contradiction.
        if self.insecure_skip_tls_verify and (self.ca_file or self.ca_data):
            raise ValueError(
                "specifying a root certificates file with the insecure flag is not allowed"
            )

    def auth_headers(self) -> dict[str, str]:
        """The ``Authorization`` header for the configured credentials, if any."""
        if self.token:
            return {"Authorization": f"Bearer {self.token}"}
        if self.username or self.password:
            pair = f"{self.username or ''}:{self.password or ''}".encode()
            return {"Authorization": f"Basic {base64.b64encode(pair).decode('ascii')}"}
        return {}

    def ssl_context(self) -> ssl.SSLContext:
        """An SSL context honouring the CA, client certificate and verification settings.

        A configured CA replaces the system roots (as in client-go), so a
        kubeconfig for a private cluster cannot be satisfied by a public CA.
        """
        if self.insecure_skip_tls_verify:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif self.ca_data:
            context = ssl.create_default_context(cadata=self.ca_data.decode("ascii"))
        else:
            context = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_data or self.cert_file:
            _load_client_certificate(context, self)
        return context


def _load_client_certificate(context: ssl.SSLContext, config: ClientConfig) -> None:
    """Load the client certificate and key, writing inline data to private temporary files.

    ``SSLContext.load_cert_chain`` only reads files, and kubeconfigs often embed
    the pair as data; the files live only for the duration of the load.
    """
    with tempfile.TemporaryDirectory(prefix="kapi-tls-") as tmp:
        cert = _materialize(tmp, "client.crt", config.cert_data, config.cert_file)
        key = _materialize(tmp, "client.key", config.key_data, config.key_file)
        if cert:
            context.load_cert_chain(cert, key)


def _materialize(directory: str, name: str, data: bytes | None, path: str | None) -> str | None:
    if not data:
        return path
    target = os.path.join(directory, name)
    with open(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as handle:
        handle.write(data)
    return target
