"""Per-request state that any layer can reach: request info, user, warnings.

Upstream threads a ``context.Context`` through every call; kapi keeps the
same state in a :class:`contextvars.ContextVar`, so a strategy deep in the
registry can add a warning without a new parameter on every function:
:func:`add_warning` (upstream's ``warning.AddWarning``) reaches the current
request's :class:`~kapi.warning.WarningRecorder`.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field

from kapi.warning import WarningRecorder


@dataclass
class RequestInfo:
    """What a request is about, parsed from its path (upstream ``RequestInfo``)."""

    is_resource_request: bool
    path: str
    verb: str = ""
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)


@dataclass
class RequestContext:
    info: RequestInfo
    user: str = "system:anonymous"
    #: The user's groups (the audit policy's ``userGroups`` match them); anonymous until authn.
    groups: tuple[str, ...] = ("system:unauthenticated",)
    #: Collects the warnings written as the response's ``Warning`` headers.
    warning_recorder: WarningRecorder = field(default_factory=WarningRecorder)
    audit_annotations: dict[str, str] = field(default_factory=dict)

    @property
    def warnings(self) -> list[str]:
        """The request's distinct warning texts, in order, whole even if the headers cut them."""
        return self.warning_recorder.texts

    def add_warning(self, text: str) -> None:
        """Warn the client about ``text`` (de-duplicated; empty text is ignored)."""
        self.warning_recorder.add_warning(text)


_current: ContextVar[RequestContext | None] = ContextVar("kapi_request", default=None)


def current() -> RequestContext:
    """The request being served, or a throwaway context for background work.

    Background work (controllers) has no client to warn, so what it records
    is dropped, as kube-apiserver's loopback clients ignore warnings.
    """
    return _current.get() or RequestContext(RequestInfo(is_resource_request=False, path=""))


def bind(context: RequestContext) -> None:
    """Make ``context`` current for the running task (each ASGI request is one)."""
    _current.set(context)


def add_warning(text: str) -> None:
    """Add a warning to the current request's response (upstream ``warning.AddWarning``).

    Outside a request (controllers, start-up) there is no client to warn and
    the warning is dropped, as upstream drops it without a recorder.
    """
    current().add_warning(text)
