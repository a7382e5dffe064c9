"""API errors as upstream ``metav1.Status`` objects.

The Python counterpart of ``k8s.io/apimachinery/pkg/api/errors``: every error
a request can end with is a :class:`StatusError` whose ``status`` is the exact
``Status`` body kube-apiserver would send (code, reason, message, details), so
kubectl prints the same lines and exits with the same codes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kapi.apimachinery.field_errors import FieldError


class StatusError(Exception):
    """An error that answers a request with a ``Status`` object."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        #: The Status's ``metadata`` (ListMeta): a fresh ``continue`` for an expired one.
        self.list_meta: dict[str, Any] = {}

    @property
    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": self.list_meta,
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # omitempty: a plain 500 (conversion failures) has no reason
            status["reason"] = self.reason
        if self.details:
            status["details"] = self.details
        status["code"] = self.code
        return status


def qualified(resource: str, group: str) -> str:
    """``configmaps`` or ``poddisruptionbudgets.policy``, as upstream prints them."""
    return f"{resource}.{group}" if group else resource


def _details(name: str | None, group: str, kind: str, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = kind
    details.update(extra)
    return details


def not_found(resource: str, group: str, name: str) -> StatusError:
    return StatusError(
        404,
        "NotFound",
        f'{qualified(resource, group)} "{name}" not found',
        _details(name, group, resource),
    )


def already_exists(resource: str, group: str, name: str) -> StatusError:
    return StatusError(
        409,
        "AlreadyExists",
        f'{qualified(resource, group)} "{name}" already exists',
        _details(name, group, resource),
    )


OBJECT_MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def conflict(resource: str, group: str, name: str, why: str = OBJECT_MODIFIED) -> StatusError:
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {why}',
        _details(name, group, resource),
    )


def invalid(kind: str, group: str, name: str, errors: Sequence[FieldError]) -> StatusError:
    """422 Invalid with one cause per field error, in the order given."""
    causes = [
        {"reason": e.type.reason, "message": e.error_body(), "field": str(e.field)} for e in errors
    ]
    if len(errors) == 1:
        summary = errors[0].error_message()
    else:
        summary = "[" + ", ".join(e.error_message() for e in errors) + "]"
    qualified_kind = f"{kind}.{group}" if group else kind
    return StatusError(
        422,
        "Invalid",
        f'{qualified_kind} "{name}" is invalid: {summary}',
        _details(name, group, kind, causes=causes),
    )


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden(
    resource: str, group: str, name: str, why: str, causes: Iterable[dict[str, Any]] = ()
) -> StatusError:
    subject = f'{qualified(resource, group)} "{name}"' if name else qualified(resource, group)
    details = _details(name, group, resource)
    if causes := list(causes):
        details["causes"] = causes
    return StatusError(403, "Forbidden", f"{subject} is forbidden: {why}", details)


def unsupported_media_type(supported: Iterable[str]) -> StatusError:
    """415, listing what the endpoint accepts (upstream lists its serializers)."""
    return StatusError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(supported),
    )


def not_acceptable(supported: Iterable[str]) -> StatusError:
    return StatusError(
        406,
        "NotAcceptable",
        "only the following media types are accepted: " + ", ".join(supported),
    )


def request_entity_too_large(message: str) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def resource_expired(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def service_unavailable(message: str) -> StatusError:
    return StatusError(503, "ServiceUnavailable", message)


def internal_error(err: BaseException) -> StatusError:
    return StatusError(
        500,
        "InternalError",
        f"Internal error occurred: {err}",
        {"causes": [{"message": str(err)}]},
    )


def untyped(message: str) -> StatusError:
    """An error upstream returns as a plain Go error, not a Status: ``ErrorToAPIStatus``
    answers it with a 500 that has no reason and the error's own text."""
    return StatusError(500, "", message)


def server_timeout(resource: str, group: str, operation: str, retry_after: int) -> StatusError:
    """Storage did not answer: upstream's ``NewServerTimeout`` (a 500 clients retry)."""
    return StatusError(
        500,
        "ServerTimeout",
        f"The {operation} operation against {qualified(resource, group)} could not be "
        "completed at this time, please try again.",
        _details(operation, group, resource, retryAfterSeconds=retry_after),
    )


def timeout(message: str) -> StatusError:
    return StatusError(504, "Timeout", message)
