"""Objects the HTTP tests write, and names no other test uses."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.integration.paths import cm_path

Object = dict[str, Any]


def configmap(name: str, **fields: Any) -> Object:
    """A ConfigMap named ``name`` with top-level ``fields`` (``data=...``)."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **fields}


def create(http: httpx.Client, namespace: str, obj: Object, path: str = "") -> Object:
    """POST ``obj`` (to the namespace's configmaps unless ``path``); the created object."""
    response = http.post(path or cm_path(namespace), json=obj)
    assert response.status_code == 201, response.text
    return response.json()


def unique(prefix: str) -> str:
    """``prefix`` and eight random hex digits."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
