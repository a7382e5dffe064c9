"""Audit events: upstream's ``audit.k8s.io/v1`` ``Event``, one JSON line per stage.

Audit pipelines parse kube-apiserver's log, so each line has upstream's
fields, in upstream's order, with upstream's omissions (empty optional fields
are left out; ``requestReceivedTimestamp`` and ``stageTimestamp`` are always
there, in RFC 3339 with microseconds).  One :class:`AuditEvent` lives for a
request and is encoded afresh at every stage, as upstream re-serializes its
one event.
"""

from __future__ import annotations

import functools
import ipaddress
import time
from typing import Any

import orjson

from kapi.audit.policy import LEVEL_REQUEST, LEVEL_REQUEST_RESPONSE, level_at_least
from kapi.request import RequestInfo
from kapi.runtime import protobuf, serializer
from kapi.runtime.protowire import ProtobufDecodeError

API_VERSION = "audit.k8s.io/v1"
#: The request header a client (or a front proxy) may set to choose the audit ID, and the
#: response header that echoes it (upstream ``HeaderAuditID``, canonicalized ``Audit-Id``).
HEADER_AUDIT_ID = "audit-id"
#: Upstream truncates longer user agents and marks the cut.
MAX_USER_AGENT_LENGTH = 1024
USER_AGENT_TRUNCATE_SUFFIX = "...TRUNCATED"

#: How a ``Status`` body begins in each form an error is negotiated into: compact JSON,
#: the indented JSON of an unacceptable ``Accept``, YAML (sorted keys), protobuf.
_STATUS_PREFIXES = (
    b'{"kind":"Status"',
    b'{\n  "kind": "Status"',
    b"apiVersion: v1\ncode: ",
    protobuf.envelope_head("v1", "Status"),
)
_STATUS_FIELDS = ("status", "message", "reason", "details", "code")


def micro_time(epoch: float) -> str:
    """``metav1.MicroTime`` JSON: UTC, six fractional digits, ``Z``.

    Two stamps per event on the request path: the seconds part is cached,
    which makes this several times cheaper than formatting a ``datetime``.
    """
    seconds, micros = divmod(round(epoch * 1_000_000), 1_000_000)
    return f"{_utc_second(seconds)}.{micros:06d}Z"


@functools.lru_cache(maxsize=8)
def _utc_second(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


class AuditEvent:
    """The mutable event of one request; :meth:`encode` snapshots it for one stage."""

    __slots__ = (
        "annotations",
        "audit_id",
        "groups",
        "level",
        "object_ref",
        "received",
        "request_object",
        "request_uri",
        "response_object",
        "response_status",
        "source_ips",
        "user_agent",
        "username",
        "verb",
    )

    def __init__(
        self,
        *,
        level: str,
        audit_id: str,
        request_uri: str,
        verb: str,
        username: str,
        groups: list[str] | tuple[str, ...],
        source_ips: list[str],
        user_agent: str,
        object_ref: dict[str, str] | None,
        received: float,
    ) -> None:
        self.level = level
        self.audit_id = audit_id
        self.request_uri = request_uri
        self.verb = verb
        self.username = username
        self.groups = groups
        self.source_ips = source_ips
        self.user_agent = user_agent
        self.object_ref = object_ref
        self.received = received
        self.response_status: dict[str, Any] | None = None
        self.request_object: Any = None
        self.response_object: Any = None
        self.annotations: dict[str, str] | None = None

    def to_dict(self, stage: str, stage_timestamp: float) -> dict[str, Any]:
        """The v1 ``Event`` for ``stage``: keys in upstream's order, empty optionals left out."""
        user: dict[str, Any] = {"username": self.username}
        if self.groups:
            user["groups"] = list(self.groups)
        event: dict[str, Any] = {
            "kind": "Event",
            "apiVersion": API_VERSION,
            "level": self.level,
            "auditID": self.audit_id,
            "stage": stage,
            "requestURI": self.request_uri,
            "verb": self.verb,
            "user": user,
        }
        if self.source_ips:
            event["sourceIPs"] = self.source_ips
        if self.user_agent:
            event["userAgent"] = self.user_agent
        if self.object_ref is not None:
            event["objectRef"] = self.object_ref
        if self.response_status is not None:
            event["responseStatus"] = self.response_status
        if self.request_object is not None:
            event["requestObject"] = self.request_object
        if self.response_object is not None:
            event["responseObject"] = self.response_object
        event["requestReceivedTimestamp"] = micro_time(self.received)
        # RequestReceived is stamped with the time the request arrived, as upstream does.
        event["stageTimestamp"] = micro_time(stage_timestamp)
        if self.annotations:
            event["annotations"] = self.annotations
        return event

    def encode(self, stage: str, stage_timestamp: float) -> bytes:
        """One JSON line (newline included), as upstream's log backend writes it."""
        return orjson.dumps(self.to_dict(stage, stage_timestamp)) + b"\n"

    # -- filled in while the request is served ---------------------------------------------

    def log_request_body(self, verb: str, body: bytes, content_type: str) -> None:
        """Upstream's ``LogRequestObject``/``LogRequestPatch`` from the body kapi decoded.

        A create or an update also names its object in ``objectRef`` (name,
        namespace, uid, resourceVersion from the body when the URL had none),
        at every level; the body itself is kept from level Request on.
        """
        obj = decode_body(body, content_type)
        if obj is None:
            return
        ref = self.object_ref
        if ref is not None and verb in ("create", "update") and isinstance(obj, dict):
            metadata = obj.get("metadata")
            if isinstance(metadata, dict):
                for key in ("namespace", "name", "uid", "resourceVersion"):
                    value = metadata.get(key)
                    if value and isinstance(value, str) and not ref.get(key):
                        ref[key] = value
                self.object_ref = _ordered_ref(ref)
        if level_at_least(self.level, LEVEL_REQUEST):
            self.request_object = obj

    def log_response(self, code: int, body: bytes | None, content_type: str, keep: bool) -> None:
        """Upstream's ``processCode`` + ``LogResponseObject``: the status, and the body if kept.

        ``responseStatus`` is the code alone unless the body is a ``Status``,
        whose status/message/reason/details/code are copied.  The body is kept
        (``keep``) only at level RequestResponse.
        """
        status: dict[str, Any] = {"metadata": {}, "code": code}
        obj: Any = None
        is_status = body is not None and body.startswith(_STATUS_PREFIXES)
        if body is not None and (
            is_status or (keep and level_at_least(self.level, LEVEL_REQUEST_RESPONSE))
        ):
            obj = decode_body(body, content_type)
        if is_status and isinstance(obj, dict):
            status = {"metadata": {}}
            for key in _STATUS_FIELDS:
                if obj.get(key):
                    status[key] = obj[key]
        self.response_status = status
        if keep and obj is not None and level_at_least(self.level, LEVEL_REQUEST_RESPONSE):
            self.response_object = obj


def _ordered_ref(ref: dict[str, str]) -> dict[str, str]:
    """``objectRef`` keys in upstream's field order, empty ones left out."""
    return {k: ref[k] for k in _OBJECT_REF_ORDER if ref.get(k)}


_OBJECT_REF_ORDER = (
    "resource",
    "namespace",
    "name",
    "uid",
    "apiGroup",
    "apiVersion",
    "resourceVersion",
    "subresource",
)


def object_ref(info: RequestInfo) -> dict[str, str] | None:
    """``objectRef`` from the request path; absent for non-resource requests."""
    if not info.is_resource_request:
        return None
    return _ordered_ref(
        {
            "resource": info.resource,
            "namespace": info.namespace,
            "name": info.name,
            "apiGroup": info.api_group,
            "apiVersion": info.api_version,
            "subresource": info.subresource,
        }
    )


def decode_body(body: bytes, content_type: str) -> Any:
    """A JSON, YAML or protobuf body as data; ``None`` when it is empty or cannot be decoded."""
    if not body:
        return None
    if content_type.startswith(serializer.PROTOBUF):
        try:
            return protobuf.decode(body)
        except ProtobufDecodeError:
            return None
    # What the handler decoded: U+FFFD for what orjson refuses, YAML keys made strings;
    # nothing for a body nested too deep to store, or to log.
    media = (serializer.JSON, serializer.YAML) if "yaml" in content_type else (serializer.JSON,)
    for media_type in media:
        try:
            return serializer.decode(body, media_type, find_duplicates=False).obj
        except serializer.SyntaxDecodeError:
            pass
    return None


def without_managed_fields(obj: Any) -> Any:
    """A copy of ``obj`` (an object, a list or a Table) with ``metadata.managedFields`` dropped.

    Upstream's ``omitManagedFields`` copies rather than edits: the same
    object is still being written to the client.
    """
    if not isinstance(obj, dict):
        return obj
    out = _strip(obj)
    items = obj.get("items")
    if isinstance(items, list):
        out["items"] = [_strip(item) if isinstance(item, dict) else item for item in items]
    rows = obj.get("rows")
    if obj.get("kind") == "Table" and isinstance(rows, list):
        out["rows"] = [_strip_row(row) for row in rows]
    return out


def _strip(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or "managedFields" not in metadata:
        return dict(obj)
    return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}


def _strip_row(row: Any) -> Any:
    if isinstance(row, dict) and isinstance(row.get("object"), dict):
        return {**row, "object": _strip(row["object"])}
    return row


def source_ips(headers: dict[str, str], client: tuple[str, int] | None) -> list[str]:
    """Upstream's ``SourceIPs``: X-Forwarded-For, then X-Real-Ip, then the peer address.

    The peer address cannot be forged, so it is always there (once, when a
    proxy already named it last).
    """
    ips: list[str] = []
    forwarded = headers.get("x-forwarded-for")
    if forwarded:
        for part in forwarded.split(","):
            ip = _parse_ip(part.strip())
            if ip is not None:
                ips.append(ip)
    real_ip = headers.get("x-real-ip")
    if real_ip:
        ip = _parse_ip(real_ip.strip())
        if ip is not None and ip not in ips:
            ips.append(ip)
    if client:
        ip = _parse_ip(client[0])
        if ip is not None and (not ips or ips[-1] != ip):
            ips.append(ip)
    return ips


def _parse_ip(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


def request_uri(scope: dict[str, Any]) -> str:
    """The URI as the client sent it (path still escaped, query as is), as Go's ``RequestURI``."""
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if raw else scope["path"]
    query = scope.get("query_string", b"")
    return f"{path}?{query.decode('latin-1')}" if query else path


def user_agent(headers: dict[str, str]) -> str:
    agent = headers.get("user-agent", "")
    if len(agent) > MAX_USER_AGENT_LENGTH:
        agent = agent[:MAX_USER_AGENT_LENGTH] + USER_AGENT_TRUNCATE_SUFFIX
    return agent
