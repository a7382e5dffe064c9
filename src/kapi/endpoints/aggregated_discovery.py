"""Aggregated discovery: ``/api`` and ``/apis`` as one ``APIGroupDiscoveryList`` each.

A client that asks for ``application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList``
(kubectl from 1.30; 1.27 to 1.29 ask for ``v2beta1``) gets every group,
version and resource in one response instead of one request per group
version.  Any other ``Accept`` gets the legacy documents, as upstream's
discovery wrapper hands them on.

Which versions are served follows the emulated release: the
``AggregatedDiscoveryEndpoint`` feature is on from 1.27, ``v2`` exists from
1.30, and from 1.33 ``AggregatedDiscoveryRemoveBetaType`` stops treating
``v2beta1`` as aggregated (such clients get the legacy documents).

The documents carry upstream's ETag (sha512 of the list's JSON) and answer
a matching ``If-None-Match`` with 304.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import orjson

from kapi.apimachinery.unstructured import Object
from kapi.endpoints.autoneg import parse_accept
from kapi.endpoints.discovery import (
    DiscoveredResource,
    discovered_resources,
    ordered_groups,
)
from kapi.endpoints.http import Request, Response
from kapi.endpoints.scheme_cache import SchemeCache
from kapi.runtime import serializer
from kapi.runtime.scheme import Scheme
from kapi.version import Version

GROUP = "apidiscovery.k8s.io"
LIST_KIND = "APIGroupDiscoveryList"
#: The serializers upstream's discovery codecs offer that kapi encodes, in their order.
_MEDIA_TYPES = (serializer.JSON, serializer.YAML)

_AGGREGATED_FROM = Version(1, 27)
_V2_FROM = Version(1, 30)
_V2BETA1_REMOVED = Version(1, 33)


def served_versions(emulated: Version) -> tuple[str, ...]:
    """The ``apidiscovery.k8s.io`` versions answered with an aggregated document."""
    versions: list[str] = []
    if emulated >= _V2_FROM:
        versions.append("v2")
    if _AGGREGATED_FROM <= emulated < _V2BETA1_REMOVED:
        versions.append("v2beta1")
    return tuple(versions)


@dataclass(frozen=True)
class Negotiated:
    media_type: str
    version: str

    @property
    def content_type(self) -> str:
        """The response type upstream writes: the media type with the conversion asked for."""
        return f"{self.media_type};g={GROUP};v={self.version};as={LIST_KIND}"


def negotiate(accept: str | None, emulated: Version) -> Negotiated | None:
    """The first ``Accept`` clause that asks for an aggregated list kapi serves, if any.

    Upstream's discovery endpoint restrictions accept a clause only when it names
    the aggregated list (``g``, ``v`` and ``as``); plain clauses fall through to
    the legacy handler.
    """
    if not accept:
        return None
    versions = served_versions(emulated)
    for clause in parse_accept(accept):
        params = clause.params
        if params.get("g") != GROUP or params.get("as") != LIST_KIND:
            continue
        if params.get("v") not in versions:
            continue
        for media_type in _MEDIA_TYPES:
            if clause.matches(media_type):
                return Negotiated(media_type, params["v"])
    return None


@dataclass
class _Document:
    """One aggregated list, encoded per media type and version on first use."""

    items: list[Object]
    etag: str
    bodies: dict[Negotiated, bytes] = field(default_factory=dict)

    def body(self, negotiated: Negotiated) -> bytes:
        body = self.bodies.get(negotiated)
        if body is None:
            obj = {
                "kind": LIST_KIND,
                "apiVersion": f"{GROUP}/{negotiated.version}",
                "metadata": {},
                "items": self.items,
            }
            if negotiated.media_type == serializer.YAML:
                body = serializer.encode_yaml(obj)
            else:
                body = orjson.dumps(obj)
            self.bodies[negotiated] = body
        return body


class AggregatedDiscovery:
    """The ``/api`` and ``/apis`` aggregated documents of one scheme."""

    def __init__(self, scheme: Scheme) -> None:
        self.scheme = scheme
        self._core = SchemeCache(scheme, lambda: self._document(core=True))
        self._groups = SchemeCache(scheme, lambda: self._document(core=False))

    def serve(self, request: Request, *, core: bool) -> Response | None:
        """The aggregated answer to ``request``, or ``None`` for the legacy document."""
        negotiated = negotiate(request.headers.get("accept"), self.scheme.emulated_version)
        if negotiated is None:
            return None
        document = (self._core if core else self._groups).get()
        etag = f'"{document.etag}"'.encode()
        headers = [(b"etag", etag), (b"vary", b"Accept"), (b"cache-control", b"public")]
        if request.headers.get("if-none-match", "").encode() == etag:
            return Response(304, b"", "", headers)
        return Response(200, document.body(negotiated), negotiated.content_type, headers)

    def _document(self, *, core: bool) -> _Document:
        items = [
            _group_item(group, versions, self.scheme)
            for group, versions in ordered_groups(self.scheme)
            if (group == "") == core
        ]
        # Upstream hashes the list as Go marshals it before its type is set.
        digest = hashlib.sha512(orjson.dumps({"metadata": {}, "items": items})).hexdigest()
        return _Document(items, digest.upper())


def _group_item(group: str, versions: list[str], scheme: Scheme) -> Object:
    metadata: Object = {"name": group} if group else {}
    metadata["creationTimestamp"] = None
    return {
        "metadata": metadata,
        "versions": [
            {
                "version": version,
                "resources": [
                    _resource(found) for found in discovered_resources(scheme, group, version)
                ],
                "freshness": "Current",
            }
            for version in versions
        ],
    }


def _resource(found: DiscoveredResource) -> Object:
    resource = found.resource
    entry: Object = {
        "resource": resource.plural,
        "responseKind": found.response_kind.as_dict(),
        "scope": "Namespaced" if resource.namespaced else "Cluster",
        "singularResource": resource.singular,
        "verbs": list(found.verbs),
    }
    if resource.short_names:
        entry["shortNames"] = list(resource.short_names)
    if resource.categories:
        entry["categories"] = list(resource.categories)
    if found.subresources:
        entry["subresources"] = [
            {
                "subresource": sub.name,
                "responseKind": sub.response_kind.as_dict(),
                "verbs": list(sub.verbs),
            }
            for sub in found.subresources
        ]
    return entry
