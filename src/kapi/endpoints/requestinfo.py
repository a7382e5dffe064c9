"""Parse a request path into a :class:`RequestInfo` (upstream ``RequestInfoFactory``)."""

from __future__ import annotations

from kapi.request import RequestInfo

API_PREFIXES = ("api", "apis")
#: Subresources of a namespace, which must not be read as a resource inside it.
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})
_VERBS_BY_METHOD = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def parse_request_info(method: str, path: str, watch_param: bool) -> RequestInfo:
    parts = [p for p in path.strip("/").split("/") if p]
    info = RequestInfo(is_resource_request=False, path=path, verb=method.lower(), parts=parts)
    if len(parts) < 2 or parts[0] not in API_PREFIXES:
        return info
    info.api_prefix = parts[0]
    rest = parts[1:]
    if info.api_prefix == "api":
        info.api_version = rest[0]
        rest = rest[1:]
    else:
        if len(rest) < 2:
            info.api_group = rest[0]
            return info
        info.api_group, info.api_version = rest[0], rest[1]
        rest = rest[2:]
    if not rest:
        return info
    info.is_resource_request = True
    legacy_watch = rest[0] == "watch"
    if legacy_watch:
        rest = rest[1:]
        if not rest:
            info.is_resource_request = False
            return info
    if rest[0] == "namespaces" and len(rest) > 1:
        info.namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    info.resource = rest[0]
    if len(rest) > 1:
        info.name = rest[1]
    if len(rest) > 2:
        info.subresource = rest[2]
    if len(rest) > 3 or (legacy_watch and info.subresource):
        # Upstream routes no deeper paths, nor subresources under /watch/: 404.
        info.is_resource_request = False
        return info
    if legacy_watch:
        # The deprecated /watch/ paths are watches of a collection or of one object (a
        # metadata.name field selector), whatever the method (routing refuses all but GET).
        info.verb = "watch"
        return info
    info.verb = _verb(method, bool(info.name), watch_param)
    return info


def _verb(method: str, has_name: bool, watch: bool) -> str:
    if method in ("GET", "HEAD"):
        if has_name:
            return "get"  # upstream reads ?watch only on collections: a named GET is a get
        return "watch" if watch else "list"
    if method == "DELETE":
        return "delete" if has_name else "deletecollection"
    return _VERBS_BY_METHOD.get(method, method.lower())
