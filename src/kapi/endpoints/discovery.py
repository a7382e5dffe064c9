"""Legacy discovery documents: ``/api``, ``/apis``, ``/api/v1``, ``/apis/<g>/<v>``.

Built from the scheme on every request, so resources that appear or go
(CRDs, a different emulated version) show at once.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from kapi.runtime.scheme import GroupVersion, Resource, Scheme

Object = dict[str, Any]

_VERBS_NAMESPACED = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
]
_SUBRESOURCE_VERBS = {
    "status": ["get", "patch", "update"],
    "scale": ["get", "patch", "update"],
    "finalize": ["update"],
}


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """Upstream's ``StorageVersionHash``: 8 bytes of sha256 over ``group/version/kind``."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def api_versions(server_address: str) -> Object:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def api_group(scheme: Scheme, group: str) -> Object | None:
    versions = scheme.group_versions().get(group)
    if not versions:
        return None
    entries = [{"groupVersion": GroupVersion(group, v).api_version, "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(scheme: Scheme) -> Object:
    groups = [api_group(scheme, g) for g in sorted(scheme.group_versions()) if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [g for g in groups if g]}


def api_resource_list(scheme: Scheme, group: str, version: str) -> Object | None:
    resources = sorted(
        (r for r in scheme.resources() if r.group == group and scheme.served(r, version)),
        key=lambda r: r.plural,
    )
    if not resources:
        return None
    entries: list[Object] = []
    for resource in resources:
        entries.append(_resource_entry(resource))
        for sub in resource.subresources_of(version):
            entry: Object = {
                "name": f"{resource.plural}/{sub}",
                "singularName": "",
                "namespaced": resource.namespaced,
                "kind": resource.kind,
                "verbs": _SUBRESOURCE_VERBS.get(sub, ["get"]),
            }
            if sub == "scale":
                entry.update(group="autoscaling", version="v1", kind="Scale")
            entries.append(entry)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": GroupVersion(group, version).api_version,
        "resources": entries,
    }


def _resource_entry(resource: Resource) -> Object:
    entry: Object = {
        "name": resource.plural,
        "singularName": resource.singular,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": _VERBS_NAMESPACED,
    }
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource.categories:
        entry["categories"] = list(resource.categories)
    entry["storageVersionHash"] = storage_version_hash(
        resource.group, resource.storage_version, resource.kind
    )
    return entry
