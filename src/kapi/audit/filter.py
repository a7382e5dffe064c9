"""The audit filter: upstream's ``WithAuditInit`` and ``WithAudit`` for kapi's handler chain.

:meth:`Auditor.begin` runs when a request enters (after its request info is
known): it picks the audit ID (the client's ``Audit-ID`` header, else a new
UUID, echoed in the response's ``Audit-Id``), asks the policy for a level and,
unless the level is ``None``, records ``RequestReceived``.
:meth:`RequestAudit.respond` writes the response and records
``ResponseStarted`` (long-running requests only, when their headers go out)
and ``ResponseComplete``; :meth:`RequestAudit.panic` records ``Panic`` for an
unexpected error, the analogue of a Go handler's panic.

Unlike kube-apiserver, which sends ``Audit-Id`` on every response, kapi sends
it only when auditing is on (``--audit-log-path``): a server without an audit
log then does no audit work per request at all.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from kapi.audit.backend import AuditLogBackend, new_writer
from kapi.audit.event import (
    HEADER_AUDIT_ID,
    AuditEvent,
    object_ref,
    request_uri,
    source_ips,
    user_agent,
    without_managed_fields,
)
from kapi.audit.policy import (
    LEVEL_NONE,
    LEVEL_REQUEST,
    STAGE_PANIC,
    STAGE_REQUEST_RECEIVED,
    STAGE_RESPONSE_COMPLETE,
    STAGE_RESPONSE_STARTED,
    Policy,
    RequestAuditConfig,
    level_at_least,
    load_policy_file,
)
from kapi.endpoints.http import Receive, Request, Response, Send, StreamingResponse, send_response
from kapi.request import RequestContext, RequestInfo
from kapi.runtime.objects import new_uid

log = logging.getLogger(__name__)

#: Upstream's ``BasicLongRunningRequestCheck`` as kube-apiserver configures it.
_LONG_RUNNING_VERBS = frozenset({"watch", "proxy"})
_LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})
#: Verbs whose body upstream logs (``LogRequestObject``/``LogRequestPatch``).
_BODY_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
#: Verbs whose body names the object in ``objectRef`` even at level Metadata.
_NAMING_VERBS = frozenset({"create", "update"})


def is_long_running(info: RequestInfo) -> bool:
    return info.verb in _LONG_RUNNING_VERBS or (
        info.is_resource_request and info.subresource in _LONG_RUNNING_SUBRESOURCES
    )


class Auditor:
    """One server's audit policy and log backend."""

    def __init__(self, policy: Policy, backend: AuditLogBackend) -> None:
        self.policy = policy
        self.backend = backend

    @classmethod
    def from_flags(
        cls,
        log_path: str,
        policy_file: str,
        max_size_mb: int = 0,
        max_backups: int = 0,
        max_age_days: int = 0,
    ) -> Auditor | None:
        """The auditor the ``--audit-*`` flags ask for, or ``None`` (auditing off).

        As upstream: no ``--audit-log-path``, no log; a path without a policy
        file records nothing.  A bad policy file raises
        :class:`~kapi.audit.policy.PolicyError`.
        """
        if not log_path:
            return None
        if not policy_file:
            log.info("No audit policy file provided, no events will be recorded for log backend")
            return None
        policy = load_policy_file(policy_file)
        writer = new_writer(log_path, max_size_mb, max_backups, max_age_days)
        return cls(policy, AuditLogBackend(writer))

    def start(self) -> None:
        self.backend.start()

    def close(self) -> None:
        self.backend.close()

    def begin(self, request: Request, info: RequestInfo, context: RequestContext) -> RequestAudit:
        headers = request.headers
        audit_id = headers.get(HEADER_AUDIT_ID) or new_uid()
        config = self.policy.evaluate(info, context.user, context.groups)
        if config.level == LEVEL_NONE:
            return RequestAudit(self.backend, audit_id, None, config, info, context)
        received = time.time()
        event = AuditEvent(
            level=config.level,
            audit_id=audit_id,
            request_uri=request_uri(request.scope),
            verb=info.verb,
            username=context.user,
            groups=context.groups,
            source_ips=source_ips(headers, request.scope.get("client")),
            user_agent=user_agent(headers),
            object_ref=object_ref(info),
            received=received,
        )
        audit = RequestAudit(self.backend, audit_id, event, config, info, context)
        audit.emit(STAGE_REQUEST_RECEIVED, received)
        if info.verb in _BODY_VERBS and (
            info.verb in _NAMING_VERBS or level_at_least(config.level, LEVEL_REQUEST)
        ):
            audit.keep_body(request)
        return audit


class RequestAudit:
    """The audit state of one request (``event`` is ``None`` at level None)."""

    __slots__ = (
        "_body",
        "_code",
        "_done",
        "audit_id",
        "backend",
        "config",
        "content_type",
        "context",
        "event",
        "info",
    )

    def __init__(
        self,
        backend: AuditLogBackend,
        audit_id: str,
        event: AuditEvent | None,
        config: RequestAuditConfig,
        info: RequestInfo,
        context: RequestContext,
    ) -> None:
        self.backend = backend
        self.audit_id = audit_id
        self.event = event
        self.config = config
        self.info = info
        self.context = context
        self.content_type = ""
        self._body: list[bytes] | None = None
        self._code: int | None = None
        self._done = False

    def emit(self, stage: str, at: float | None = None) -> None:
        event = self.event
        if event is None or stage in self.config.omit_stages:
            return
        if stage != STAGE_REQUEST_RECEIVED:
            annotations = self.context.audit_annotations
            event.annotations = dict(annotations) if annotations else None
        self.backend.process(event.encode(stage, time.time() if at is None else at))

    def keep_body(self, request: Request) -> None:
        """Keep a copy of the body as the handler reads it, for ``requestObject``."""
        chunks: list[bytes] = []
        self._body = chunks
        self.content_type = request.headers.get("content-type", "")
        receive = request.receive

        async def receive_and_keep() -> dict[str, Any]:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
            return message

        request.receive = receive_and_keep

    def panic(self, exc: BaseException) -> None:
        """Record ``Panic`` for an unexpected error; no ``ResponseComplete`` follows."""
        event = self.event
        self._done = True
        if event is None:
            return
        event.response_status = {
            "metadata": {},
            "status": "Failure",
            "message": f"APIServer panic'd: {exc}",
            "reason": "InternalError",
            "code": 500,
        }
        self.emit(STAGE_PANIC)

    async def respond(
        self,
        send: Send,
        response: Response | StreamingResponse,
        extra: list[tuple[bytes, bytes]],
        receive: Receive,
    ) -> None:
        """Write the response with ``Audit-Id``, recording the response stages."""
        extra.append((b"audit-id", self.audit_id.encode("latin-1")))
        if self.event is None:
            await send_response(send, response, extra, receive)
            return
        long_running = is_long_running(self.info)

        async def send_and_audit(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and self._code is None:
                self._started(message["status"], long_running)
            await send(message)

        try:
            await send_response(send_and_audit, response, extra, receive)
        finally:
            if not self._done:
                self._complete(response, long_running)

    def _started(self, code: int, long_running: bool) -> None:
        self._code = code
        assert self.event is not None
        self.event.response_status = {"metadata": {}, "code": code}
        if long_running:
            self.emit(STAGE_RESPONSE_STARTED)

    def _complete(self, response: Response | StreamingResponse, long_running: bool) -> None:
        event = self.event
        assert event is not None
        self._done = True
        omit_managed = self.config.omit_managed_fields
        if self._body:
            event.log_request_body(self.info.verb, b"".join(self._body), self.content_type)
            if omit_managed and event.request_object is not None:
                event.request_object = without_managed_fields(event.request_object)
        if self._code is None:
            # Nothing was written (the client went away): upstream fakes a success.
            event.response_status = {
                "metadata": {},
                "status": "Success",
                "message": "Connection closed early",
                "code": 200,
            }
            if long_running:
                self.emit(STAGE_RESPONSE_STARTED)
        elif isinstance(response, Response):
            event.log_response(
                response.status,
                response.body,
                response.content_type,
                keep=self.info.is_resource_request,
            )
            if omit_managed and event.response_object is not None:
                event.response_object = without_managed_fields(event.response_object)
        self.emit(STAGE_RESPONSE_COMPLETE)
