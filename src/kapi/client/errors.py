"""API errors: a failed response's ``Status``, raised as an exception typed by its reason.

Callers branch on *why* a request failed (``except NotFoundError``), as client-go
callers do with ``errors.IsNotFound``.  The class is chosen from the Status
``reason``; when the reason is missing or not one Kubernetes defines, the HTTP
code decides, so a bare 404 from a proxy is still a :class:`NotFoundError`.
Bodies that are not a Status are turned into one the way client-go's
``NewGenericServerResponse`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

#: client-go caps the text it copies from an unstructured error body.
_MAX_UNSTRUCTURED_BODY = 2048


class ApiError(Exception):
    """A request the server answered with a failure ``Status`` (HTTP 4xx or 5xx)."""

    def __init__(self, status: dict[str, Any]) -> None:
        super().__init__(status.get("message", ""))
        self.status = status

    @property
    def code(self) -> int:
        return int(self.status.get("code") or 0)

    @property
    def reason(self) -> str:
        return str(self.status.get("reason", ""))

    @property
    def message(self) -> str:
        return str(self.status.get("message", ""))

    @property
    def details(self) -> dict[str, Any]:
        return self.status.get("details") or {}


class BadRequestError(ApiError):
    """400 BadRequest."""


class UnauthorizedError(ApiError):
    """401 Unauthorized: missing or rejected credentials."""


class ForbiddenError(ApiError):
    """403 Forbidden."""


class NotFoundError(ApiError):
    """404 NotFound."""


class MethodNotAllowedError(ApiError):
    """405 MethodNotAllowed: the resource does not support the verb."""


class NotAcceptableError(ApiError):
    """406 NotAcceptable: no representation matches the ``Accept`` header."""


class ConflictError(ApiError):
    """409 Conflict: typically a stale ``resourceVersion`` on update."""


class AlreadyExistsError(ApiError):
    """409 AlreadyExists: a create of a name that is taken.

    Not a :class:`ConflictError` (as in client-go, where ``IsConflict`` is false
    for it): a retry-on-conflict loop must not swallow a failed create.
    """


class GoneError(ApiError):
    """410 Gone."""


class ExpiredError(GoneError):
    """410 Expired: the requested resourceVersion (list or watch) was compacted.

    A :class:`GoneError` so that watch restart logic needs one ``except``.
    """


class RequestEntityTooLargeError(ApiError):
    """413 RequestEntityTooLarge."""


class UnsupportedMediaTypeError(ApiError):
    """415 UnsupportedMediaType: for example a patch type the resource does not accept."""


class InvalidError(ApiError):
    """422 Invalid: the object failed validation; ``details["causes"]`` lists the fields."""


class TooManyRequestsError(ApiError):
    """429 TooManyRequests: throttled; ``details["retryAfterSeconds"]`` says when to retry."""


class InternalError(ApiError):
    """500 InternalError."""


class ServiceUnavailableError(ApiError):
    """503 ServiceUnavailable."""


class ServerTimeoutError(ApiError):
    """Timeout (504) or ServerTimeout: the operation may still complete."""


_BY_REASON: dict[str, type[ApiError]] = {
    "BadRequest": BadRequestError,
    "Unauthorized": UnauthorizedError,
    "Forbidden": ForbiddenError,
    "NotFound": NotFoundError,
    "MethodNotAllowed": MethodNotAllowedError,
    "NotAcceptable": NotAcceptableError,
    "Conflict": ConflictError,
    "AlreadyExists": AlreadyExistsError,
    "Gone": GoneError,
    "Expired": ExpiredError,
    "RequestEntityTooLarge": RequestEntityTooLargeError,
    "UnsupportedMediaType": UnsupportedMediaTypeError,
    "Invalid": InvalidError,
    "TooManyRequests": TooManyRequestsError,
    "InternalError": InternalError,
    "ServiceUnavailable": ServiceUnavailableError,
    "Timeout": ServerTimeoutError,
    "ServerTimeout": ServerTimeoutError,
}

_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    406: NotAcceptableError,
    409: ConflictError,
    410: GoneError,
    413: RequestEntityTooLargeError,
    415: UnsupportedMediaTypeError,
    422: InvalidError,
    429: TooManyRequestsError,
    500: InternalError,
    503: ServiceUnavailableError,
    504: ServerTimeoutError,
}


def error_from_status(status: dict[str, Any]) -> ApiError:
    """The typed error for a failure ``Status`` (from a response body or a watch ERROR event)."""
    cls = _BY_REASON.get(str(status.get("reason", "")))
    if cls is None:
        code = int(status.get("code") or 0)
        cls = _BY_CODE.get(code) or (InternalError if code >= 500 else ApiError)
    return cls(status)


def error_from_response(
    code: int, method: str, headers: Mapping[str, str], content: bytes
) -> ApiError:
    """The typed error for a failed HTTP response.

    A body that is a failure Status is used as is; anything else (a proxy's HTML,
    plain text, nothing) gets a Status synthesised from the code, like client-go.
    """
    status = _decode_status(content)
    if status is None:
        status = _generic_status(code, method, headers, content)
    return error_from_status(status)


def _decode_status(content: bytes) -> dict[str, Any] | None:
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    if isinstance(body, dict) and body.get("kind") == "Status" and body.get("status") == "Failure":
        return body
    return None


def _generic_status(
    code: int, method: str, headers: Mapping[str, str], content: bytes
) -> dict[str, Any]:
    """client-go's ``NewGenericServerResponse`` for a body that is not a Status."""
    server_message = "unknown"
    if headers.get("content-type", "").split(";")[0].strip().lower() == "text/plain":
        server_message = content[:_MAX_UNSTRUCTURED_BODY].decode("utf-8", "replace").strip()
    reason, message = _generic_reason_and_message(code, method.upper(), server_message)
    details: dict[str, Any] = {
        "causes": [{"reason": "UnexpectedServerResponse", "message": server_message}]
    }
    retry_after = headers.get("retry-after", "")
    if retry_after.isdigit():
        details["retryAfterSeconds"] = int(retry_after)
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": details,
        "code": code,
    }


def _generic_reason_and_message(code: int, method: str, server_message: str) -> tuple[str, str]:
    """The reason and message client-go picks for a code; kept in its order and wording."""
    match code:
        case 409:
            reason = "AlreadyExists" if method == "POST" else "Conflict"
            return reason, "the server reported a conflict"
        case 404:
            return "NotFound", "the server could not find the requested resource"
        case 400:
            return "BadRequest", "the server rejected our request for an unknown reason"
        case 401:
            return "Unauthorized", "the server has asked for the client to provide credentials"
        case 403:
            # The server's text says who tried to do what: keep it.
            return "Forbidden", server_message
        case 406:
            if server_message in ("", "unknown"):
                return (
                    "NotAcceptable",
                    "the server was unable to respond with a content type that the client supports",
                )
            return "NotAcceptable", server_message
        case 415:
            return "UnsupportedMediaType", server_message
        case 405:
            return (
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            )
        case 422:
            return "Invalid", "the server rejected our request due to an error in our request"
        case 503:
            return "ServiceUnavailable", "the server is currently unable to handle the request"
        case 504:
            return (
                "Timeout",
                "the server was unable to return a response in the time allotted, "
                "but may still be processing the request",
            )
        case 429:
            return (
                "TooManyRequests",
                "the server has received too many requests and has asked us to try again later",
            )
    if code >= 500:
        quoted = orjson.dumps(server_message).decode()
        return (
            "InternalError",
            f"an error on the server ({quoted}) has prevented the request from succeeding",
        )
    return (
        "Unknown",
        f"the server responded with the status code {code} but did not return more information",
    )
