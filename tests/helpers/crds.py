"""The CronTab CustomResourceDefinition of upstream's docs, its objects, and waiting for a CRD."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.helpers.kubectl import Kubectl
from tests.helpers.wait import eventually

GROUP = "stable.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def crontab_crd(plural: str = "crontabs", kind: str = "CronTab") -> dict[str, Any]:
    """A namespaced CRD served in v1 (stored) and a deprecated v1beta1, with status and scale."""
    spec_schema = {
        "type": "object",
        "properties": {
            "cronSpec": {"type": "string", "pattern": r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$"},
            "image": {"type": "string"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
        },
        "required": ["cronSpec"],
    }
    status_schema = {"type": "object", "properties": {"replicas": {"type": "integer"}}}
    schema = {
        "type": "object",
        "properties": {"spec": spec_schema, "status": status_schema},
    }
    subresources = {
        "status": {},
        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
    }
    columns = [
        {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Image", "type": "string", "jsonPath": ".spec.image", "priority": 1},
    ]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "plural": plural,
                "singular": kind.lower(),
                "kind": kind,
                "shortNames": [plural[:2] + "t"],
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": copy.deepcopy(schema)},
                    "subresources": copy.deepcopy(subresources),
                    "additionalPrinterColumns": columns,
                },
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": False,
                    "deprecated": True,
                    "schema": {"openAPIV3Schema": copy.deepcopy(schema)},
                    "subresources": copy.deepcopy(subresources),
                },
            ],
        },
    }


def crontab(name: str, version: str = "v1", **spec: Any) -> dict[str, Any]:
    """A CronTab of ``crontab_crd()``."""
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {"cronSpec": "*/5 * * * *", "image": "busybox", **spec},
    }


def write_manifest(directory: Path, name: str, *docs: dict[str, Any]) -> str:
    """Write ``docs`` as one YAML file in ``directory``; its path, for ``kubectl -f``."""
    path = directory / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def wait_established(kubectl: Kubectl, name: str) -> None:
    """Wait, with ``kubectl wait``, until the CRD ``name`` is Established."""
    kubectl.ok("wait", "--for=condition=Established", f"crd/{name}", "--timeout=20s")


def established(http: httpx.Client, name: str) -> bool:
    """Whether the CRD ``name`` has condition Established True, read over HTTP."""
    crd = http.get(f"{CRDS}/{name}").json()
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def crd_of(
    group: str,
    plural: str,
    kind: str,
    spec: dict[str, Any],
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A namespaced CRD of one version, ``v1``, whose schema gives ``spec`` (and, with
    ``status``, a status subresource and its schema)."""
    properties: dict[str, Any] = {"spec": spec}
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True}
    if status is not None:
        properties["status"] = status
        version["subresources"] = {"status": {}}
    version["schema"] = {"openAPIV3Schema": {"type": "object", "properties": properties}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [version],
        },
    }


def install(http: httpx.Client, crd: dict[str, Any]) -> None:
    """Create ``crd`` (it must be accepted) and wait until it is Established."""
    response = http.post(CRDS, json=crd)
    assert response.status_code == 201, response.text
    name = crd["metadata"]["name"]
    eventually(lambda: established(http, name), what=f"the CRD {name} established")


def named_ports(port: dict[str, Any] | None = None, **item: Any) -> dict[str, Any]:
    """The schema of a map list keyed by ``name``, of items with a ``port`` integer; ``port``:
    more keywords of that integer, ``item``: more keywords of each item."""
    return {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "port": {"type": "integer", **(port or {})}},
            **item,
        },
    }


def serve_widgets(kapi_server: Any, group: str, kind: str) -> Iterator[str]:
    """Body of a fixture: a namespaced CRD of ``group`` and ``kind`` (plural: lower case and
    an ``s``; a name no other test's kind has, since kubectl finds kinds by plural) with
    typed, nullable and free-form (preserve-unknown-fields) spec fields; yields
    ``/apis/{group}/v1/namespaces``."""
    spec = {
        "type": "object",
        "properties": {
            "list": {"type": "array", "items": {"type": "string"}},
            "nullableList": {"type": "array", "items": {"type": "string", "nullable": True}},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    plural = kind.lower() + "s"
    crd = crd_of(group, plural, kind, spec)
    with kapi_server.client() as http:
        install(http, crd)
        yield f"/apis/{group}/v1/namespaces"
        http.delete(f"{CRDS}/{crd['metadata']['name']}")


def widgets_crd(group: str) -> dict[str, Any]:
    """Widgets served in v1 (stored) and v2, with an open spec: for storage-version changes."""
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            },
        }
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": copy.deepcopy(schema)},
                {"name": "v2", "served": True, "storage": False, "schema": copy.deepcopy(schema)},
            ],
        },
    }
