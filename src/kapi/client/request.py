"""The I/O-free half of a client call: URL rules, request values and response decoding.

Everything here is shared by the sync and async clients, which differ only in
how they send a :class:`Request` and read the reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
import orjson
import yaml

from kapi.apimachinery.warningheader import WarningHeader

JSON = "application/json"

#: Content type per ``patch_type``, as the API server dispatches on it.
PATCH_CONTENT_TYPES: dict[str, str] = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}


@dataclass(frozen=True, slots=True)
class Request:
    """One API call, ready to send: the body is already encoded."""

    method: str
    path: str
    params: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    content_type: str | None = None
    accept: str = JSON

    @classmethod
    def build(
        cls,
        method: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        accept: str | None = None,
    ) -> Request:
        """A request from loose inputs: ``None`` params are dropped, dicts become JSON."""
        encoded = encode_body(body)
        if encoded is not None and content_type is None:
            content_type = JSON
        return cls(method.upper(), path, query(params or {}), encoded, content_type, accept or JSON)

    def headers(self) -> dict[str, str]:
        headers = {"Accept": self.accept}
        if self.content_type is not None:
            headers["Content-Type"] = self.content_type
        return headers


@dataclass(slots=True)
class Response:
    """A successful reply."""

    status: int
    headers: httpx.Headers
    content: bytes
    #: The body decoded by content type: JSON or YAML to Python values, else text; None if empty.
    body: Any
    #: The well-formed values of the ``Warning`` headers, in order, whatever their code
    #: (client-go's ``Result.Warnings()``); kube-apiserver only sends 299.  The clients
    #: fill this in one place, ``_receive``, which also passes each to the warning handler.
    warnings: list[WarningHeader] = field(default_factory=list)


def encode_body(body: Any) -> bytes | None:
    """Bytes pass through, text is UTF-8, anything else (dicts, lists) is JSON."""
    if body is None or isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return orjson.dumps(body)


def decode_body(content: bytes, content_type: str) -> Any:
    if not content:
        return None
    media_type = content_type.split(";")[0].strip().lower()
    if media_type.endswith(("/json", "+json")):
        return orjson.loads(content)
    if media_type.endswith(("/yaml", "+yaml")):
        return yaml.safe_load(content)
    return content.decode("utf-8", "replace")


def query(params: Mapping[str, Any]) -> dict[str, str]:
    """Query parameters as the API server spells them: booleans lower-case, ``None`` omitted."""
    encoded: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        encoded[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return encoded


@dataclass(frozen=True, slots=True)
class ResourceType:
    """Where a resource lives in the URL space (client-go's GroupVersionResource + scope)."""

    api_version: str
    plural: str
    namespaced: bool = True

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    @property
    def prefix(self) -> str:
        """``/api/v1`` for the legacy core group, ``/apis/{group}/{version}`` otherwise."""
        if not self.group:
            return f"/api/{self.version}"
        return f"/apis/{self.group}/{self.version}"

    def path(
        self, namespace: str | None, name: str | None = None, subresource: str | None = None
    ) -> str:
        """The collection path, or an object's (and its subresource's) path when named.

        For a namespaced type an empty ``namespace`` means all namespaces, which
        only a collection can address.
        """
        parts = [self.prefix]
        if self.namespaced and namespace:
            parts += ["namespaces", _segment(namespace)]
        elif self.namespaced and name is not None:
            raise ValueError(f"a namespace is required to address {self.plural} {name!r}")
        parts.append(self.plural)
        if name is not None:
            if not name:
                raise ValueError(f"a name is required to address one of {self.plural}")
            parts.append(_segment(name))
            if subresource:
                parts.append(subresource)
        return "/".join(parts)


def _segment(value: str) -> str:
    return quote(value, safe="")
