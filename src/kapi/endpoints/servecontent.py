"""Conditional GETs of a cached document, as Go's ``http.ServeContent`` answers them.

kube-openapi serves ``/openapi/v2``, ``/openapi/v3`` and each v3 group
version through ``ServeContent``: the response names its ETag and
Last-Modified time, and a request whose ``If-None-Match`` names the ETag
(or, without one, whose ``If-Modified-Since`` is not older than the
document) gets a bodiless 304.  Range requests are answered in full.
"""

from __future__ import annotations

import email.utils
from collections.abc import Iterable

from kapi.endpoints.http import Request, Response

Header = tuple[bytes, bytes]


def serve_content(
    request: Request,
    body: bytes,
    content_type: str,
    etag: str | None,
    last_modified: float,
    headers: Iterable[Header] = (),
) -> Response:
    """``body`` (or a 304) with ``etag`` (unquoted; ``None``: none) and its modification time."""
    quoted = f'"{etag}"' if etag is not None else None
    own = [*headers]
    if quoted is not None:
        own.append((b"etag", quoted.encode()))
    if not_modified(request, quoted, last_modified):
        return Response(304, b"", "", own)
    modified = email.utils.formatdate(int(last_modified), usegmt=True).encode()
    own += [(b"last-modified", modified), (b"accept-ranges", b"bytes")]
    return Response(200, body, content_type, own)


def not_modified(request: Request, quoted_etag: str | None, last_modified: float) -> bool:
    """Whether the client's copy is current: ``If-None-Match`` first, else ``If-Modified-Since``."""
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None:
        if quoted_etag is None:
            return False
        return any(
            tag == "*" or tag.removeprefix("W/") == quoted_etag
            for tag in (t.strip() for t in if_none_match.split(","))
        )
    since = request.headers.get("if-modified-since")
    if not since:
        return False
    try:
        client_time = email.utils.parsedate_to_datetime(since).timestamp()
    except (TypeError, ValueError):
        return False
    return int(last_modified) <= client_time
