"""URL paths of the resources the integration tests write."""

from __future__ import annotations


def cm_path(namespace: str, name: str = "") -> str:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    return f"{path}/{name}" if name else path


def pdb_path(namespace: str, name: str = "", version: str = "v1") -> str:
    path = f"/apis/policy/{version}/namespaces/{namespace}/poddisruptionbudgets"
    return f"{path}/{name}" if name else path
