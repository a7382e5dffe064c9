"""Requests in protobuf: the media type, the kubectl releases that send it, and bodies."""

from __future__ import annotations

import re

import httpx

from kapi.runtime import protobuf

PROTOBUF = "application/vnd.kubernetes.protobuf"
#: kubectl >= 1.32 sends protobuf; 1.27 sends JSON for the same commands.
PROTOBUF_VERSIONS = ["1.32", "1.33"]
#: A Content-Type header in kubectl's -v=8 log.
CONTENT_TYPE = re.compile(r"Content-Type: (\S+)$", re.MULTILINE)


def post(
    http: httpx.Client, path: str, body: bytes, accept: str = "application/json"
) -> httpx.Response:
    """POST a protobuf ``body``, asking for ``accept`` back."""
    return http.post(path, content=body, headers={"content-type": PROTOBUF, "accept": accept})


def configmap_body(name: str, **data: str) -> bytes:
    return protobuf.encode(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}
    )
