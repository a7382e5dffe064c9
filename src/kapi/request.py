"""Per-request state that any layer can reach: request info, user, warnings.

Upstream threads a ``context.Context`` through every call; kapi keeps the
same state in a :class:`contextvars.ContextVar`, so a strategy deep in the
registry can add a warning without a new parameter on every function.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field


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
    #: Warnings for the response's ``Warning`` headers, de-duplicated, in order.
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)

    def add_warning(self, text: str) -> None:
        if text and text not in self.warnings:
            self.warnings.append(text)


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
