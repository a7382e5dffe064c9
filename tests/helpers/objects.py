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


def cronjob(name: str, pod: Object | None = None, **spec: Any) -> Object:
    """A batch/v1 CronJob, nightly unless ``spec`` says otherwise, whose jobs run ``pod``
    (by default one busybox container, never restarted)."""
    if pod is None:
        pod = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": "0 1 * * *",
            **spec,
            "jobTemplate": {"spec": {"template": {"spec": pod}}},
        },
    }
