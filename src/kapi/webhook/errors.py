"""Why a webhook call failed, with the error text kube-apiserver would print.

Upstream surfaces Go errors verbatim inside its messages (``Post "<url>":
dial tcp ...: connect: connection refused``), and users grep for those
strings, so each class here carries a message shaped like Go's and the
class says what kind of failure it was, for callers that must tell them
apart (an admission webhook's ``failurePolicy``, metrics labels).
"""

from __future__ import annotations


class WebhookError(Exception):
    """A webhook could not be called or answered unusably; ``str()`` is upstream's text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class WebhookConfigError(WebhookError):
    """The client configuration cannot produce a client (no URL or service, bad caBundle)."""


class WebhookTransportError(WebhookError):
    """The POST itself failed; the message is Go's ``url.Error``: ``Post "<url>": <cause>``."""

    def __init__(self, url: str, cause: str) -> None:
        super().__init__(f'Post "{url}": {cause}')
        self.url = url
        self.cause = cause


class WebhookConnectionError(WebhookTransportError):
    """No connection: refused, unresolvable host or service, reset."""


class WebhookTLSError(WebhookTransportError):
    """The TLS handshake failed, most often because the caBundle does not match."""


class WebhookTimeoutError(WebhookTransportError):
    """No answer within the call's timeout (Go: ``context deadline exceeded``)."""


class WebhookResponseError(WebhookError):
    """The webhook answered with a non-2xx status (client-go's generic ``StatusError``)."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


class WebhookDecodeError(WebhookError):
    """A 2xx answer whose body is empty or not a JSON object."""
