"""kapi's warning handling for the official ``kubernetes`` Python client.

That client ignores ``Warning`` headers.  This adapter hooks its REST layer
(``RESTClientObject.request``, through which every call, watches included,
passes) so that its responses get the same treatment as kapi's clients:
parsed tolerantly, passed to a :class:`~kapi.client.warnings.WarningHandler`
with the same precedence (the ApiClient's own handler, else the process-wide
default of :func:`~kapi.client.warnings.set_default_warning_handler` at
response time), and kept for the caller::

    api = kubernetes.config.new_client_from_config()
    enable_warnings(api, WarningWriter(sys.stderr, deduplicate=True))
    kubernetes.client.CoreV1Api(api).list_namespaced_pod("default")
    last_warnings(api)            # [WarningHeader(299, "-", "...")]

or, for every ApiClient of the process, :func:`install` (undone by
:func:`uninstall`).  Both may be combined: a response is handled once.  The
``RESTResponse`` that ``ApiClient.call_api`` returns carries a ``warnings``
attribute; generated API methods hide it, hence :func:`last_warnings`.

The ``kubernetes`` package is only imported by this module, which kapi itself
never imports.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from kubernetes.client import ApiClient
from kubernetes.client.rest import RESTClientObject

from kapi.client.warnings import WarningHandler, WarningHeader, handle_warnings

#: Attributes kapi sets on a ``RESTClientObject``: whether it is wired, its own handler
#: (None: the process default), and the warnings of its latest response.
_ENABLED = "_kapi_warnings_enabled"
_HANDLER = "_kapi_warning_handler"
_LAST = "_kapi_last_warnings"

_original_request: Callable[..., Any] | None = None


def enable_warnings(api_client: ApiClient, handler: WarningHandler | None = None) -> ApiClient:
    """Handle the warnings of ``api_client``'s responses; returns it for chaining.

    ``handler`` None follows the process-wide default.  Calling again replaces
    the handler.
    """
    rest = api_client.rest_client
    setattr(rest, _HANDLER, handler)
    if not getattr(rest, _ENABLED, False):
        unwrapped = rest.request

        @functools.wraps(unwrapped)
        def request(*args: Any, **kwargs: Any) -> Any:
            return _observe(rest, unwrapped(*args, **kwargs))

        rest.request = request  # type: ignore[method-assign]  # this one client's, on purpose
        setattr(rest, _ENABLED, True)
    return api_client


def install() -> None:
    """Handle warnings for every ``ApiClient`` of the process, existing or future.

    Each follows its own handler from :func:`enable_warnings` if it has one,
    else the process-wide default.  Installing twice is harmless.
    """
    global _original_request
    if _original_request is not None:
        return
    original = _original_request = RESTClientObject.request

    @functools.wraps(original)
    def request(self: RESTClientObject, *args: Any, **kwargs: Any) -> Any:
        return _observe(self, original(self, *args, **kwargs))

    RESTClientObject.request = request  # type: ignore[method-assign]


def uninstall() -> None:
    """Undo :func:`install` (ApiClients given :func:`enable_warnings` keep handling)."""
    global _original_request
    if _original_request is not None:
        RESTClientObject.request = _original_request  # type: ignore[method-assign]
        _original_request = None


def last_warnings(api_client: ApiClient) -> list[WarningHeader]:
    """The warnings of the latest response ``api_client`` received (empty before any).

    Requests made concurrently through one ApiClient (``async_req``, threads)
    overwrite each other's; use a handler there.
    """
    return list(getattr(api_client.rest_client, _LAST, []))


def _observe(rest: RESTClientObject, response: Any) -> Any:
    """Handle one response's warnings, once even when both hooks wrap the call."""
    if getattr(response, "warnings", None) is not None:
        return response
    values = [_wire_bytes(value) for value in response.headers.getlist("warning")]
    warnings = handle_warnings(values, getattr(rest, _HANDLER, None))
    response.warnings = warnings
    setattr(rest, _LAST, warnings)
    return response


def _wire_bytes(value: str) -> bytes | str:
    """The header as sent: ``http.client`` decodes header bytes as ISO-8859-1."""
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value
