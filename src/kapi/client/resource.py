"""Resource handles: the verbs of one resource type, on plain JSON dicts.

One :class:`Resource` class serves both clients.  It only *builds* requests and
hands them to its client, which returns either the result (sync client) or an
awaitable of it (async client); the type parameters carry that difference, so
``client.resource(...).get(name)`` and ``await aclient.resource(...).get(name)``
share every line of request logic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, Literal, Protocol, TypeVar

from kapi.client.request import PATCH_CONTENT_TYPES, Request, ResourceType

T_co = TypeVar("T_co", covariant=True)
W_co = TypeVar("W_co", covariant=True)

PatchType = Literal["merge", "json", "strategic", "apply"]


class Executor(Protocol[T_co, W_co]):
    """What a :class:`Resource` needs from a client."""

    @property
    def namespace(self) -> str:
        """The namespace used when a call names none."""
        ...

    def _call(self, request: Request) -> T_co:
        """Send and return the decoded body (or an awaitable of it)."""
        ...

    def _watch(self, request: Request) -> W_co:
        """Open a watch and return its (sync or async) event iterator."""
        ...


class Resource(Generic[T_co, W_co]):
    """The verbs of one resource type.

    ``namespace=None`` means the client's default namespace (for create and
    replace, the object's own ``metadata.namespace`` first); ``""`` means all
    namespaces and is only meaningful for list, watch and delete_collection.
    Cluster-scoped types ignore the namespace.
    """

    def __init__(self, client: Executor[T_co, W_co], type_: ResourceType) -> None:
        self._client = client
        self.type = type_

    def get(
        self, name: str, namespace: str | None = None, *, subresource: str | None = None
    ) -> T_co:
        return self._send("GET", self._item(name, namespace, subresource))

    def list(
        self,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
    ) -> T_co:
        params = {
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "limit": limit,
            "continue": continue_,
            "resourceVersion": resource_version,
        }
        return self._send("GET", self._collection(namespace), params)

    def create(
        self,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: str | None = None,
    ) -> T_co:
        path = self._collection(self._object_namespace(obj, namespace))
        params = _write_params(dry_run, field_manager, field_validation)
        return self._send("POST", path, params, obj)

    def replace(
        self,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: str | None = None,
    ) -> T_co:
        """PUT the whole object to its own name; ``metadata.resourceVersion`` makes it a CAS."""
        name = obj.get("metadata", {}).get("name", "")
        path = self._item(name, self._object_namespace(obj, namespace), subresource)
        params = _write_params(dry_run, field_manager, field_validation)
        return self._send("PUT", path, params, obj)

    def patch(
        self,
        name: str,
        body: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: str | None = None,
        force: bool | None = None,
    ) -> T_co:
        """Patch with ``body`` (a dict, a JSON-patch list, or pre-encoded text or bytes).

        ``patch_type="apply"`` is server-side apply, which requires ``field_manager``;
        ``force`` takes over conflicting fields from other managers.
        """
        content_type = PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise ValueError(
                f"unknown patch type {patch_type!r}: expected one of {sorted(PATCH_CONTENT_TYPES)}"
            )
        params = _write_params(dry_run, field_manager, field_validation)
        params["force"] = force
        path = self._item(name, namespace, subresource)
        return self._send("PATCH", path, params, body, content_type)

    def delete(
        self,
        name: str,
        namespace: str | None = None,
        *,
        preconditions: Mapping[str, str] | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> T_co:
        """Delete; the result is the object (when deletion is deferred) or a success Status."""
        options = _delete_options(preconditions, propagation_policy, grace_period_seconds, dry_run)
        return self._send("DELETE", self._item(name, namespace), body=options)

    def delete_collection(
        self,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> T_co:
        params = {"labelSelector": label_selector, "fieldSelector": field_selector}
        options = _delete_options(None, propagation_policy, grace_period_seconds, dry_run)
        return self._send("DELETE", self._collection(namespace), params, options)

    def watch(
        self,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        allow_bookmarks: bool = False,
        timeout_seconds: int | None = None,
        accept: str | None = None,
    ) -> W_co:
        """Stream :class:`~kapi.client.watch.WatchEvent` values until the server ends the watch.

        An ERROR event raises its typed error: ``GoneError`` when ``resource_version``
        is too old, the cue to list again and watch from the list's version.
        ``accept`` asks for another representation of the event objects, such as
        the ``meta.k8s.io`` Table that ``kapi get -w`` prints.
        """
        params = {
            "watch": True,
            "resourceVersion": resource_version,
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "allowWatchBookmarks": allow_bookmarks or None,
            "timeoutSeconds": timeout_seconds,
        }
        request = Request.build("GET", self._collection(namespace), params, accept=accept)
        return self._client._watch(request)

    def _send(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
    ) -> T_co:
        return self._client._call(Request.build(method, path, params, body, content_type))

    def _namespace(self, namespace: str | None) -> str | None:
        if not self.type.namespaced:
            return None
        return self._client.namespace if namespace is None else namespace

    def _object_namespace(self, obj: Mapping[str, Any], namespace: str | None) -> str | None:
        if namespace is None:
            namespace = obj.get("metadata", {}).get("namespace")
        return self._namespace(namespace)

    def _collection(self, namespace: str | None) -> str:
        return self.type.path(self._namespace(namespace))

    def _item(self, name: str, namespace: str | None, subresource: str | None = None) -> str:
        return self.type.path(self._namespace(namespace), name, subresource)


def _write_params(
    dry_run: bool, field_manager: str | None, field_validation: str | None
) -> dict[str, Any]:
    return {
        "dryRun": "All" if dry_run else None,
        "fieldManager": field_manager,
        "fieldValidation": field_validation,
    }


def _delete_options(
    preconditions: Mapping[str, str] | None,
    propagation_policy: str | None,
    grace_period_seconds: int | None,
    dry_run: bool,
) -> dict[str, Any]:
    """A ``DeleteOptions`` body, which (unlike query parameters) can carry preconditions."""
    options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if preconditions:
        options["preconditions"] = dict(preconditions)
    if propagation_policy:
        options["propagationPolicy"] = propagation_policy
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if dry_run:
        options["dryRun"] = ["All"]
    return options
