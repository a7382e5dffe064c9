"""Reads answered from the stored JSON bytes, with the resourceVersion spliced in.

The store writes every object head first (``kind``, ``apiVersion``, then
``metadata``; see :func:`head_first`), and never stores the resourceVersion.
A GET's response is then the stored value with ``"resourceVersion":"<rev>",``
inserted as the first field of ``metadata``, and, where the version asked for
differs from the stored one only by name, the ``apiVersion`` replaced. That
skips a JSON decode and re-encode on the hottest reads (GET and large LISTs).

:class:`ResponseSplicer` decides once per store which stored heads it can
answer this way, and builds each response; whenever it answers ``None`` the
caller decodes the value instead.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

from kapi.apimachinery.unstructured import Object
from kapi.runtime.scheme import GroupVersion, Resource
from kapi.validation.defaulting import Defaulter

#: What follows the ``apiVersion`` string in a stored head: the start of ``metadata``.
_METADATA_OPEN = b'","metadata":{"'


def head_first(obj: Object) -> Object:
    """``obj`` with ``kind``, ``apiVersion`` and ``metadata`` first, as a response has them.

    Only for objects that have both ``kind`` and ``apiVersion``; others are
    returned as they are (and are never spliced).
    """
    if "kind" in obj and "apiVersion" in obj:
        return {"kind": None, "apiVersion": None, "metadata": None, **obj}
    return obj


class ResponseSplicer:
    """Builds a GET's JSON from a stored value of one resource, when that is safe.

    ``hub_version`` is the version the store works in; ``recode`` whether
    values are stored in another version; ``read_defaulter`` the defaulting
    applied to every value read (custom resources), if any.
    """

    def __init__(
        self,
        resource: Resource,
        hub_version: str,
        *,
        recode: bool,
        read_defaulter: Callable[[Object], None] | None,
    ) -> None:
        self._hub_version = hub_version
        hub_api_version = GroupVersion(resource.group, hub_version).api_version
        converter = resource.converter
        identity = converter is not None and converter.identity
        kind = orjson.dumps({"kind": resource.kind})[:-1]
        #: A schema defaulter that can tell from the bytes when it would change nothing.
        self._schema_defaulter = read_defaulter if isinstance(read_defaulter, Defaulter) else None
        #: How a stored hub value starts; None when no value can be answered as stored.
        self._head = (
            None
            if (read_defaulter is not None and self._schema_defaulter is None)
            or (recode and not identity)
            else kind + b',"apiVersion":"' + hub_api_version.encode() + _METADATA_OPEN
        )
        #: With strategy None, a value stored in any version: only its apiVersion differs.
        self._any_version_head = kind + b',"apiVersion":"' if identity else None
        #: Other versions whose reads may splice too: each one's test and head.
        self._version_heads = {
            name: (
                served.reads_as_hub,
                kind
                + b',"apiVersion":"'
                + GroupVersion(resource.group, name).api_version.encode()
                + _METADATA_OPEN,
            )
            for name, served in resource.versions.items()
            if served.reads_as_hub is not None and self._head is not None
        }

    def response(self, value: bytes, revision: int, version: str | None = None) -> bytes | None:
        """The JSON of stored ``value`` at ``revision`` as a GET in ``version`` answers it.

        ``None`` when the value does not start with a head this resource can
        splice (another version that needs a real conversion, an older key
        order), or when read-time defaulting might change it.
        """
        head = self._head
        if head is None or (self._schema_defaulter and self._schema_defaulter.changes(value)):
            return None
        if version is not None and version != self._hub_version:
            other = self._version_heads.get(version)
            if other is None or not other[0](value) or not value.startswith(head):
                return None
            rv = b'"resourceVersion":"%d",' % revision
            return b"".join((other[1][:-1], rv, value[len(head) - 1 :]))
        if value.startswith(head):
            rest = len(head) - 1
        elif self._any_version_head is not None and value.startswith(self._any_version_head):
            # An apiVersion has no quote in it: the first match closes it.
            rest = value.find(_METADATA_OPEN, len(self._any_version_head))
            if rest < 0:
                return None
            rest += len(_METADATA_OPEN) - 1
        else:
            return None
        rv = b'"resourceVersion":"%d",' % revision
        return b"".join((head[:-1], rv, value[rest:]))
