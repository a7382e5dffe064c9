"""Upstream's failure ``Status`` on the wire, and storage left alone by a failed request."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

Object = dict[str, Any]

#: What a namespace's storage is compared on: every kind a test here writes.
_SNAPSHOT_PATHS = (
    "/api/v1/namespaces/{ns}/configmaps",
    "/api/v1/namespaces/{ns}/secrets",
    "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
)


def assert_status(
    response: httpx.Response,
    code: int,
    reason: str,
    message: str | None = None,
    details: Object | None = None,
    *,
    list_meta: bool = False,
) -> Object:
    """The response is upstream's failure ``Status``; returns it for further checks.

    ``list_meta``: the Status may carry ListMeta (``metadata.continue``).
    """
    assert response.status_code == code, response.text
    assert response.headers["content-type"].split(";")[0] == "application/json", response.headers
    status = response.json()
    assert status["kind"] == "Status", status
    assert status["apiVersion"] == "v1", status
    if not list_meta:
        assert status["metadata"] == {}, status
    assert status["status"] == "Failure", status
    assert status["code"] == code, status
    if reason:
        assert status["reason"] == reason, status
    else:  # a plain error: upstream omits the empty reason
        assert "reason" not in status, status
    if message is not None:
        assert status["message"] == message, status
    if details is not None:
        assert status.get("details") == details, status
    return status


def snapshot(http: httpx.Client, namespace: str) -> dict[str, Object]:
    """Every stored object of the namespace, by path and name, with resourceVersion and content."""
    state: dict[str, Object] = {}
    for template in _SNAPSHOT_PATHS:
        path = template.format(ns=namespace)
        response = http.get(path)
        assert response.status_code == 200, response.text
        for item in response.json()["items"]:
            state[f"{path}/{item['metadata']['name']}"] = item
    return state


@contextmanager
def storage_unchanged(http: httpx.Client, namespace: str) -> Iterator[None]:
    """Fail unless every object of the namespace is the same after the block as before."""
    before = snapshot(http, namespace)
    yield
    after = snapshot(http, namespace)
    assert after == before, "a failed request changed storage"
