"""The generic store: one resource's REST semantics on top of :class:`Storage`.

The counterpart of upstream's ``genericregistry.Store``: it turns
get/list/create/update/delete/watch on hub-version objects into storage
operations, with optimistic concurrency (resourceVersion preconditions),
ObjectMeta system fields, generation, finalizers and graceful deletion, the
status subresource, admission, and the encoding of objects in the storage
version.  It knows nothing of HTTP.
"""

from __future__ import annotations

import base64
import builtins
import secrets
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from kapi.apimachinery import errors, field_errors, validation
from kapi.apimachinery.field_errors import Path
from kapi.apimachinery.unstructured import Object
from kapi.registry.admission import Admission, Attributes, Operation
from kapi.registry.deletion import UNSPECIFIED, Propagation, deletion_finalizers
from kapi.registry.field_lifecycle import FieldLifecyclePolicy
from kapi.registry.fieldmanager.equality import keep_unchanged_timestamps
from kapi.registry.fieldmanager.resource import ResourceFieldManagers
from kapi.registry.json_splice import ResponseSplicer, head_first
from kapi.registry.predicate import SelectionPredicate
from kapi.registry.strategy import METADATA, SubresourceStrategy
from kapi.request import current as current_request
from kapi.runtime.cooperative import CHUNK, pause
from kapi.runtime.lifecycle_paths import TaggedPath, tagged_paths
from kapi.runtime.objects import deep_copy, meta, new_uid, now_rfc3339
from kapi.runtime.scheme import GroupVersion, Resource, Scheme
from kapi.runtime.strategy import ResourceStrategy
from kapi.storage.interface import (
    ConflictError,
    EventType,
    ExpiredError,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    Storage,
    StorageUnavailableError,
)
from kapi.validation.declarative import DeclarativeValidation

_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
_MAX_GENERATED_NAME_LENGTH = 63 - 5
_LIST_TOO_OLD = "The resourceVersion for the provided list is too old."
#: What upstream's etcd3 watcher sends when etcd tells it the watch's next revision is compacted.
_WATCH_TOO_OLD = "The resourceVersion for the provided watch is too old."
_CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter, or use the continue token "
    "in this response to retrieve the remainder of the results. Continuing with the provided "
    "token results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)


@dataclass
class ListResult:
    items: list[Object]
    resource_version: int
    continue_token: str = ""
    remaining: int | None = None
    #: With ``list(json_items=version)``: each item as its GET's JSON, ``items`` then empty.
    json_items: list[bytes] | None = None


@dataclass
class WatchEvent:
    """``ADDED``, ``MODIFIED``, ``DELETED`` or ``BOOKMARK`` with a hub object."""

    type: str
    object: Object


#: What a hook hands back: called once with whether the write it began was stored.
Finish = Callable[[bool], Awaitable[None]]


class StoreHooks(Protocol):
    """Upstream's ``BeginCreate``, ``BeginUpdate`` and ``AfterDelete`` of the generic store.

    A kind whose writes reserve something outside its own object (a Service's
    cluster IPs and node ports) reserves it in ``begin_*``, after validation and
    before the write; the returned :data:`Finish` is told whether the write was
    stored, so a refused or failed write releases what was reserved.
    ``after_delete`` runs once the object is gone from storage.
    """

    async def begin_create(self, obj: Object, dry_run: bool) -> Finish: ...

    async def begin_update(self, new: Object, old: Object, dry_run: bool) -> Finish: ...

    async def after_delete(self, obj: Object) -> None: ...


@dataclass
class Preconditions:
    uid: str | None = None
    resource_version: str | None = None


class Store:
    """REST semantics for one resource, on objects in one version (the store's hub).

    Built-in kinds have one store working in the resource's hub version.  A
    custom resource has one store per served version, as upstream's CRD
    handler does: objects are validated and defaulted in the version the
    request names, and converted to and from the storage version in
    :meth:`encode` and :meth:`decode_many`.

    ``ttl`` > 0 makes every create and update lease the object for that many
    seconds, so it is deleted that long after its last write (upstream's
    ``TTLFunc``, which only the event registry sets, from ``--event-ttl``).
    """

    def __init__(
        self,
        resource: Resource,
        storage: Storage,
        scheme: Scheme,
        admission: Admission | None = None,
        *,
        version: str | None = None,
        strategy: ResourceStrategy | None = None,
        ttl: int = 0,
        declarative: DeclarativeValidation | None = None,
        field_lifecycle: FieldLifecyclePolicy | None = None,
        lifecycle_paths: tuple[TaggedPath, ...] | None = None,
        garbage_collection: bool = False,
    ) -> None:
        self.resource = resource
        self.storage = storage
        self.scheme = scheme
        self.strategy: ResourceStrategy = strategy or resource.strategy
        self.subresource_strategies = {
            name: SubresourceStrategy(self.strategy, name, path)
            for name, path in self.strategy.subresource_fields.items()
        }
        self._admission = admission
        self._ttl = ttl
        self._declarative = declarative
        #: The kind's begin/after hooks (see :class:`StoreHooks`); set once by the server.
        self.hooks: StoreHooks | None = None
        self._prefix = resource.storage_prefix()
        #: Managed fields of writes to each version and subresource (server-side apply).
        self.field_managers = ResourceFieldManagers(resource, scheme)
        #: The version of the objects this store reads and writes.
        self.hub_version = version or resource.hub_version
        self._storage_version = resource.storage_version
        self._recode = resource.storage_version != self.hub_version
        #: The built-in declaration checked in shadow mode beside ``strategy``'s validation.
        self._declared = resource.versions[self.hub_version].schema if declarative else None
        self._field_lifecycle = field_lifecycle
        #: Deletes leave the garbage collector's finalizers (``--enable-garbage-collector``).
        self.garbage_collection = garbage_collection
        #: KEP-2558 tagged fields: a custom resource's from its CRD, a built-in's declared.
        if lifecycle_paths is None:
            hub_schema = resource.versions[self.hub_version].schema
            lifecycle_paths = tagged_paths(hub_schema) if hub_schema is not None else ()
        self._lifecycle_paths = lifecycle_paths if field_lifecycle is not None else ()
        self._hub_api_version = GroupVersion(resource.group, self.hub_version).api_version
        self._storage_api_version = GroupVersion(resource.group, self._storage_version).api_version
        #: The versions a built-in's values may be stored in besides the hub, by apiVersion.
        self._stored_versions = {
            GroupVersion(resource.group, name).api_version: name
            for name, rv in resource.versions.items()
            if name != self.hub_version and rv.to_hub is not None
        }
        #: Custom resources get defaults added since they were stored, on every read.
        self._read_defaulter = (
            resource.versions[self.hub_version].defaulter if resource.default_on_read else None
        )
        #: Answers GETs from the stored bytes when it can: see json_response.
        self._splicer = ResponseSplicer(
            resource, self.hub_version, recode=self._recode, read_defaulter=self._read_defaulter
        )

    # -- encoding --------------------------------------------------------------------

    async def decode(self, kv: KeyValue) -> Object:
        """A stored value as a hub object, with its resourceVersion set from the revision.

        A custom resource converts as one object (not a list of one), so a
        conversion webhook's failure names the stored object's version and kind.
        """
        return (await self.decode_many([kv], single=True))[0]

    async def decode_many(self, kvs: Sequence[KeyValue], *, single: bool = False) -> list[Object]:
        """Stored values as hub objects; values in another version convert in one batch.

        ``single``: the values are one object read on its own (see :meth:`decode`).
        A custom resource written before its storage version changed is still
        stored in the old version, as upstream: it converts on every read.
        """
        objs: list[Object] = []
        for start in range(0, len(kvs), CHUNK):
            if start:
                await pause()
            for kv in kvs[start : start + CHUNK]:
                obj = orjson.loads(kv.value)
                obj["metadata"]["resourceVersion"] = str(kv.mod_revision)
                objs.append(obj)
        converter = self.resource.converter
        if converter is not None:
            stale = [i for i, o in enumerate(objs) if o.get("apiVersion") != self._hub_api_version]
            if single and stale:
                objs = [await converter.convert_object(objs[0], self._hub_api_version)]
            elif stale:
                converted = await converter.convert([objs[i] for i in stale], self._hub_api_version)
                for i, obj in zip(stale, converted, strict=True):
                    objs[i] = obj
        elif self._stored_versions:
            # Each value in the version it was written in: this server's storage version,
            # or another one a server of another release (or --storage-versions) chose.
            hub = self._hub_api_version
            for i, o in enumerate(objs):
                if i and not i % CHUNK:
                    await pause()
                stored: str = o.get("apiVersion") or ""
                if stored != hub and (version := self._stored_versions.get(stored)) is not None:
                    objs[i] = await self.scheme.to_hub(self.resource, o, version)
        if self._read_defaulter is not None:
            for i, obj in enumerate(objs):
                if i and not i % CHUNK:
                    await pause()
                self._read_defaulter(obj)
        return objs

    async def encode(self, obj: Object) -> bytes:
        """A hub object in the storage version; resourceVersion is never stored."""
        metadata = obj["metadata"]
        rv = metadata.pop("resourceVersion", None)
        try:
            if not self._recode:
                # Head first, in the order a response has them: see json_response.
                return orjson.dumps(head_first(obj))
            stored = deep_copy(obj)
            converter = self.resource.converter
            if converter is not None:
                stored = await converter.convert_object(stored, self._storage_api_version)
            else:
                stored = await self.scheme.from_hub(self.resource, stored, self._storage_version)
            stored.get("metadata", {}).pop("resourceVersion", None)
            return orjson.dumps(stored)
        finally:
            if rv is not None:
                metadata["resourceVersion"] = rv

    def _key(self, namespace: str | None, name: str) -> str:
        return self.resource.key(namespace, name)

    def _namespace_prefix(self, namespace: str | None) -> str:
        if self.resource.namespaced and namespace:
            return f"{self._prefix}{namespace}/"
        return self._prefix

    # -- reads -----------------------------------------------------------------------

    async def get(self, namespace: str | None, name: str) -> Object:
        return await self.decode(await self.read(namespace, name))

    async def read(self, namespace: str | None, name: str) -> KeyValue:
        """The stored value of one object (404 when there is none)."""
        kv = await self.storage.get(self._key(namespace, name))
        if kv is None:
            raise self._not_found(name)
        return kv

    def json_response(self, kv: KeyValue, version: str | None = None) -> bytes | None:
        """The JSON a GET in ``version`` (the hub's by default) answers, made without decoding.

        :meth:`encode` writes ``kind``, ``apiVersion`` and ``metadata`` first,
        so the response is the stored bytes with the resourceVersion spliced
        in as the first field of ``metadata`` (and the apiVersion replaced,
        for a custom resource with conversion strategy ``None`` or a version
        whose conversion would change nothing else in this value): the
        hottest read skips a JSON decode and re-encode.  ``None`` when the
        value does not start that way (another version that needs a real
        conversion, or an older key order), or when read-time defaulting
        might change it: decode it then.
        """
        return self._splicer.response(kv.value, kv.mod_revision, version)

    async def list(
        self,
        namespace: str | None,
        predicate: SelectionPredicate,
        *,
        limit: int = 0,
        continue_token: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
        json_items: str | None = None,
    ) -> ListResult:
        """The objects matching ``predicate``, upstream's list semantics.

        ``json_items``: a version to answer in; when no predicate filters and
        every stored value can be answered as it is (see :meth:`json_response`),
        return the items as JSON bytes in that version instead of decoding
        them: a large list then costs a splice per item rather than a decode
        and an encode.
        """
        prefix = self._namespace_prefix(namespace)
        revision, start = 0, None
        if continue_token:
            revision, start = self._decode_continue(continue_token, prefix)
        elif resource_version_match == "Exact":
            revision = _parse_rv(resource_version)
        elif resource_version not in ("", "0"):
            await self._wait_for_revision(_parse_rv(resource_version))
        single = predicate.single_name()
        one_key = single is not None and (prefix != self._prefix or not self.resource.namespaced)
        items: list[Object] = []
        everything = predicate.empty()
        try:
            if one_key and not continue_token:
                return await self._list_one(prefix + str(single), predicate, revision)
            if everything and json_items is not None:
                # Without a filter, storage's own limit and continue are the list's.
                result = await self.storage.list(
                    prefix, revision=revision, start_key=start, limit=limit
                )
                spliced: list[bytes] = []
                for i, kv in enumerate(result.kvs):
                    if i and not i % CHUNK:
                        await pause()
                    body = self.json_response(kv, json_items)
                    if body is None:
                        break  # decode them all below
                    spliced.append(body)
                else:
                    token, remaining = "", None
                    if result.more:
                        start = result.kvs[-1].key + "\x00"
                        token = self._encode_continue(result.revision, start, prefix)
                        remaining = result.remaining
                    return ListResult([], result.revision, token, remaining, spliced)
            while True:
                chunk = limit - len(items) if limit else 0
                result = await self.storage.list(
                    prefix, revision=revision, start_key=start, limit=chunk
                )
                revision = result.revision
                decoded = await self.decode_many(result.kvs)
                if everything:
                    items += decoded
                else:
                    for at in range(0, len(decoded), CHUNK):
                        if at:
                            await pause()
                        items += filter(predicate.matches, decoded[at : at + CHUNK])
                if not result.more:
                    return ListResult(items, revision)
                start = result.kvs[-1].key + "\x00"
                if limit and len(items) >= limit:
                    token = self._encode_continue(revision, start, prefix)
                    remaining = result.remaining if predicate.empty() else None
                    return ListResult(items, revision, token, remaining)
        except ExpiredError:
            if not continue_token:
                raise errors.resource_expired(_LIST_TOO_OLD) from None
            # Upstream offers a token that carries on from the same key at the latest revision.
            expired = errors.resource_expired(_CONTINUE_TOO_OLD)
            expired.list_meta = {"continue": self._encode_continue(-1, str(start), prefix)}
            raise expired from None
        except FutureRevisionError as exc:
            raise _too_large(exc.requested, exc.current) from None

    async def _list_one(self, key: str, predicate: SelectionPredicate, revision: int) -> ListResult:
        """``fieldSelector=metadata.name=x`` in one namespace reads one key, not a scan.

        The key and the list's resourceVersion come from one read: read apart, a write
        landing between them (etcd answers each call on its own) would give a list at
        a revision that does not hold what it shows, and a watch from it would miss
        that write.  The key sorts first among the keys it is a prefix of.
        """
        result = await self.storage.list(key, revision=revision, limit=1)
        kvs = [kv for kv in result.kvs if kv.key == key]
        return ListResult(
            [o for o in await self.decode_many(kvs) if predicate.matches(o)], result.revision
        )

    async def _wait_for_revision(self, revision: int) -> None:
        current = await self.storage.current_revision()
        if revision > current:
            raise _too_large(revision, current)

    def _encode_continue(self, revision: int, start: str, prefix: str) -> str:
        token = {"v": "meta.k8s.io/v1", "rv": revision, "start": start[len(self._prefix) :]}
        return base64.urlsafe_b64encode(orjson.dumps(token)).decode().rstrip("=")

    def _decode_continue(self, token: str, prefix: str) -> tuple[int, str]:
        """Decode upstream's continue token: base64 JSON ``{"v", "rv", "start"}``."""
        try:
            data = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
            version_ok = isinstance(data, dict) and data.get("v") == "meta.k8s.io/v1"
            revision, start = (int(data["rv"]), str(data["start"])) if version_ok else (0, "")
        except (ValueError, KeyError, TypeError) as exc:
            raise errors.bad_request(f"continue key is not valid: {exc}") from None
        if not version_ok:
            version = data.get("v") if isinstance(data, dict) else None
            raise errors.bad_request(
                "continue key is not valid: server does not recognize this encoded version "
                f'"{version}"'
            )
        if revision == 0 or revision < -1:
            raise errors.bad_request(
                "continue key is not valid: incorrect encoded start resourceVersion "
                "(version meta.k8s.io/v1)"
            )
        if ".." in start.split("/"):
            raise errors.bad_request("continue key is not valid: invalid start key")
        full = self._prefix + start
        if not full.startswith(prefix):
            raise errors.bad_request("continue key is not valid: key is outside the list's scope")
        return max(revision, 0), full  # -1: "continue at the latest revision"

    # -- writes ----------------------------------------------------------------------

    async def create(self, obj: Object, *, dry_run: bool = False) -> Object:
        """Create ``obj`` (a hub object whose namespace is already set)."""
        await self._admit(Operation.CREATE, obj, None, dry_run)
        metadata = meta(obj)
        metadata.pop("deletionTimestamp", None)
        metadata.pop("deletionGracePeriodSeconds", None)
        # The system fields and a generated name come first, as upstream's Store.Create
        # fills them before the strategy runs: Job's PrepareForCreate labels its pod
        # template with the new uid and the (possibly generated) name.
        metadata["uid"] = new_uid()
        metadata["creationTimestamp"] = now_rfc3339()
        if not metadata.get("name") and metadata.get("generateName"):
            metadata["name"] = _generate_name(metadata["generateName"])
        self.strategy.prepare_for_create(obj)
        if self._lifecycle_paths:
            assert self._field_lifecycle is not None
            self._warn(self._field_lifecycle.on_create(obj, self._lifecycle_paths))
        metadata.pop("resourceVersion", None)
        metadata.pop("selfLink", None)
        if self.strategy.has_generation:
            metadata["generation"] = 1
        else:
            metadata.pop("generation", None)
        self._validate_create(obj)
        namespace, name = metadata.get("namespace"), metadata["name"]
        finish = await self.hooks.begin_create(obj, dry_run) if self.hooks is not None else None
        stored = False
        try:
            await self._validate_admission(Operation.CREATE, obj, None, dry_run)
            key = self._key(namespace, name)
            if dry_run:
                if await self.storage.get(key) is not None:
                    raise self._already_exists(name)
                return obj
            try:
                kv = await self.storage.create(key, await self.encode(obj), ttl=self._ttl)
            except KeyExistsError:
                raise self._already_exists(name) from None
            stored = True
        finally:
            if finish is not None:
                await finish(stored)
        metadata["resourceVersion"] = str(kv.mod_revision)
        return obj

    def _validate_create(self, obj: Object) -> None:
        metadata = obj["metadata"]
        errs = self._finish_validation(obj, self.strategy.validate(obj))
        if errs:
            raise errors.invalid(
                self.resource.kind, self.resource.group, metadata.get("name", ""), errs
            )
        self._warn(self.strategy.warnings_on_create(obj))
        self.strategy.canonicalize(obj)

    def _finish_validation(
        self, obj: Object, errs: builtins.list[field_errors.FieldError], old: Object | None = None
    ) -> builtins.list[field_errors.FieldError]:
        """A write's errors: the strategy's ``errs`` if any, else ObjectMeta's.

        Create and update (``old`` given) both end this way; ``errs`` are also
        compared with the built-in declaration (shadow mode) first, and on an
        update ratcheting may forgive some of them.
        """
        self._compare_declared(obj, errs)
        if old is not None:
            errs = self._ratchet_declared(obj, old, errs)
        if errs:
            return errs
        return validation.validate_object_meta(
            obj["metadata"],
            namespaced=self.resource.namespaced,
            name_validator=self.strategy.validate_name,
            path=METADATA,
        )

    def _compare_declared(
        self, obj: Object, handwritten: builtins.list[field_errors.FieldError]
    ) -> None:
        """Declarative validation in shadow mode: counted when it differs, never answered."""
        if self._declarative is not None and self._declared is not None:
            self._declarative.compare(self._declared, obj, handwritten)

    def _ratchet_declared(
        self, new: Object, old: Object, errs: builtins.list[field_errors.FieldError]
    ) -> builtins.list[field_errors.FieldError]:
        """An update's ``errs`` less those of declared rules on unchanged values (KEP-4008)."""
        if self._declarative is None or self._declared is None or not errs:
            return errs
        group, resource = self.resource.group, self.resource.plural
        return self._declarative.ratchet(self._declared, group, resource, new, old, errs)

    async def update(
        self,
        namespace: str | None,
        name: str,
        update: Callable[[Object], Awaitable[Object]],
        *,
        subresource: str = "",
        dry_run: bool = False,
        force_precondition: str | None = None,
        replacement: bool = False,
    ) -> Object:
        """Read-modify-write of one object, retried on conflicts (``GuaranteedUpdate``).

        ``update`` receives a copy of the current hub object and returns the
        desired one.  When the desired object carries a resourceVersion, or
        ``force_precondition`` is given, the write is conditional on it and
        a mismatch is a 409 Conflict instead of a retry.  ``replacement``: the
        desired object is what a client PUT, so a missing resourceVersion is
        an unconditional update, which some strategies refuse; other callers
        (patches, scale) derive it from the object read, as upstream's do.
        """
        key = self._key(namespace, name)
        kv = await self.storage.get(key)
        while True:
            if kv is None:
                raise self._not_found(name)
            old = await self.decode(kv)
            new = await update(deep_copy(old))
            await self._admit(Operation.UPDATE, new, old, dry_run, subresource)
            expected = force_precondition or new.get("metadata", {}).get("resourceVersion")
            if expected and expected != old["metadata"]["resourceVersion"]:
                raise self._conflict(name)
            if not expected and replacement and not self.strategy.allow_unconditional_update:
                # Upstream names the resource where a kind would go, and prints the
                # missing version as the uint64 it parsed.
                raise errors.invalid(
                    self.resource.plural,
                    self.resource.group,
                    name,
                    [
                        field_errors.invalid(
                            Path("metadata", "resourceVersion"),
                            field_errors.GoSyntax("0x0"),
                            "must be specified for an update",
                        )
                    ],
                )
            self._prepare_update(new, old, subresource)
            keep_unchanged_timestamps(new, old)
            hooks = self.hooks if not subresource else None
            finish = await hooks.begin_update(new, old, dry_run) if hooks is not None else None
            stored = False
            try:
                await self._validate_admission(Operation.UPDATE, new, old, dry_run, subresource)
                if new == old and (dry_run or await self._stored_as_encoded(new, kv)):
                    return old
                if dry_run:
                    return new
                if _pending_deletion(new) and not self.strategy.has_pending_finalizers(new):
                    return await self._delete_now(key, name, kv.mod_revision, new)
                try:
                    written = await self.storage.update(
                        key, await self.encode(new), kv.mod_revision, ttl=self._ttl
                    )
                except KeyNotFoundError:
                    raise self._not_found(name) from None
                except ConflictError as exc:
                    if expected:
                        raise self._conflict(name) from None
                    kv = exc.current
                    continue
                stored = True
            finally:
                if finish is not None:
                    await finish(stored)
            new["metadata"]["resourceVersion"] = str(written.mod_revision)
            return new

    async def _stored_as_encoded(self, obj: Object, kv: KeyValue) -> bool:
        """Whether ``kv`` holds what writing ``obj`` now would store.

        Upstream's ``GuaranteedUpdate`` skips a write only when the encoded
        bytes equal the stored ones, so an unchanged object stored in another
        version (or with fields since dropped) is written again: that is how a
        storage migrator re-encodes objects, by updating them unchanged.  Key
        order alone (Go's encoding has one; older values here may not) is no
        difference.
        """
        encoded = await self.encode(obj)
        return encoded == kv.value or orjson.loads(encoded) == orjson.loads(kv.value)

    def _prepare_update(self, new: Object, old: Object, subresource: str) -> None:
        metadata, old_meta = meta(new), old["metadata"]
        new.setdefault("apiVersion", old.get("apiVersion"))
        new.setdefault("kind", old.get("kind"))
        metadata.pop("selfLink", None)
        sub_strategy = self.subresource_strategies.get(subresource) if subresource else None
        if sub_strategy is not None:
            sub_strategy.prepare_for_update(new, old)
            metadata = new["metadata"]
        else:
            self.strategy.prepare_for_update(new, old)
            if self._lifecycle_paths:
                assert self._field_lifecycle is not None
                self._warn(self._field_lifecycle.on_update(new, old, self._lifecycle_paths))
        if not metadata.get("uid") and "uid" in old_meta:
            metadata["uid"] = old_meta["uid"]
        # Upstream ignores changes to the creation timestamp rather than rejecting them.
        if "creationTimestamp" in old_meta:
            metadata["creationTimestamp"] = old_meta["creationTimestamp"]
        for immutable in ("deletionTimestamp", "deletionGracePeriodSeconds"):
            if immutable in old_meta:
                metadata[immutable] = old_meta[immutable]
            else:
                metadata.pop(immutable, None)
        if self.strategy.has_generation:
            generation = old_meta.get("generation", 1)
            metadata["generation"] = (
                generation + 1
                if (not subresource or subresource in self.strategy.spec_subresources)
                and self.strategy.spec_changed(new, old)
                else generation
            )
        else:
            metadata.pop("generation", None)
        metadata["resourceVersion"] = old_meta["resourceVersion"]
        errs = validation.validate_object_meta_update(metadata, old_meta, METADATA)
        if sub_strategy is not None:
            errs = self._ratchet_declared(new, old, errs + sub_strategy.validate_update(new, old))
        else:
            errs = self._finish_validation(new, self.strategy.validate_update(new, old) + errs, old)
        if errs:
            raise errors.invalid(self.resource.kind, self.resource.group, metadata["name"], errs)
        if sub_strategy is None:
            self._warn(self.strategy.warnings_on_update(new, old))
        self.strategy.canonicalize(new)

    async def delete(
        self,
        namespace: str | None,
        name: str,
        *,
        preconditions: Preconditions | None = None,
        dry_run: bool = False,
        propagation: Propagation = UNSPECIFIED,
    ) -> tuple[Object, bool]:
        """Delete, or mark for deletion while finalizers remain.

        ``propagation`` may add the garbage collector's finalizer (see
        :mod:`kapi.registry.deletion`), which then holds the object.
        Returns the object and whether it is gone from storage now.
        """
        key = self._key(namespace, name)
        self._warn(self.strategy.warnings_on_delete(propagation.explicit))
        while True:
            kv = await self.storage.get(key)
            if kv is None:
                raise self._not_found(name)
            obj = await self.decode(kv)
            self._check_preconditions(obj, preconditions)
            await self._admit(Operation.DELETE, None, obj, dry_run)
            await self._validate_admission(Operation.DELETE, None, obj, dry_run)
            marked = self._with_collector_finalizers(obj, propagation)
            if self.strategy.has_pending_finalizers(marked):
                if _pending_deletion(obj) and marked is obj:
                    return obj, False
                if marked is obj:
                    marked = deep_copy(obj)
                if not _pending_deletion(marked):
                    marked["metadata"]["deletionTimestamp"] = now_rfc3339()
                    marked["metadata"]["deletionGracePeriodSeconds"] = 0
                    self.strategy.prepare_for_graceful_delete(marked)
                if dry_run:
                    return marked, False
                # Without the TTL, as upstream's marking (a SimpleUpdate) writes it.
                try:
                    written = await self.storage.update(
                        key, await self.encode(marked), kv.mod_revision
                    )
                except ConflictError:
                    continue
                except KeyNotFoundError:
                    raise self._not_found(name) from None
                marked["metadata"]["resourceVersion"] = str(written.mod_revision)
                return marked, False
            if dry_run:
                return obj, True
            try:
                return await self._delete_now(key, name, kv.mod_revision, obj), True
            except errors.StatusError as exc:
                if exc.reason == "Conflict" and preconditions is None:
                    continue
                raise

    def _with_collector_finalizers(self, obj: Object, propagation: Propagation) -> Object:
        """``obj``, or a copy whose finalizers carry what ``propagation`` asks of the collector."""
        if not self.garbage_collection:
            return obj
        finalizers = obj["metadata"].get("finalizers") or []
        policy = self.strategy.default_garbage_collection_policy()
        changed = deletion_finalizers(finalizers, propagation, policy)
        if changed is None:
            return obj
        marked = deep_copy(obj)
        if changed:
            marked["metadata"]["finalizers"] = changed
        else:
            marked["metadata"].pop("finalizers", None)
        return marked

    async def _delete_now(self, key: str, name: str, revision: int, obj: Object) -> Object:
        try:
            _, at = await self.storage.delete(key, revision)
        except KeyNotFoundError:
            raise self._not_found(name) from None
        except ConflictError:
            raise self._conflict(name) from None
        obj["metadata"]["resourceVersion"] = str(at)
        if self.hooks is not None:
            await self.hooks.after_delete(obj)
        return obj

    def _check_preconditions(self, obj: Object, pre: Preconditions | None) -> None:
        if pre is None:
            return
        metadata = obj["metadata"]
        name = metadata["name"]
        if pre.uid and pre.uid != metadata.get("uid"):
            raise self._conflict(
                name,
                f"Precondition failed: UID in precondition: {pre.uid}, "
                f"UID in object meta: {metadata.get('uid', '')}",
            )
        if pre.resource_version and pre.resource_version != metadata.get("resourceVersion"):
            raise self._conflict(
                name,
                f"Precondition failed: ResourceVersion in precondition: {pre.resource_version}, "
                f"ResourceVersion in object meta: {metadata.get('resourceVersion', '')}",
            )

    async def delete_collection(
        self,
        namespace: str | None,
        predicate: SelectionPredicate,
        *,
        dry_run: bool = False,
        propagation: Propagation = UNSPECIFIED,
    ) -> builtins.list[Object]:
        listed = await self.list(namespace, predicate)
        deleted: list[Object] = []
        for obj in listed.items:
            metadata = obj["metadata"]
            try:
                gone, _ = await self.delete(
                    metadata.get("namespace"),
                    metadata["name"],
                    dry_run=dry_run,
                    propagation=propagation,
                )
            except errors.StatusError as exc:
                if exc.code == 404:
                    continue
                raise
            deleted.append(gone)
        return deleted

    # -- watch -----------------------------------------------------------------------

    async def watch(
        self,
        namespace: str | None,
        predicate: SelectionPredicate,
        *,
        resource_version: str = "",
        send_initial_events: bool | None = None,
        progress_interval: float | None = None,
    ) -> AsyncGenerator[WatchEvent]:
        """Events for objects matching ``predicate``, upstream's watch semantics.

        With no resourceVersion (or "0"), or with ``sendInitialEvents``, the
        current objects come first as ADDED events; otherwise events start
        after ``resource_version``.  Raises 410 Expired when that is compacted.
        Iterating the events raises :class:`errors.StatusError` when the storage
        watch cannot go on: 410 Expired when its place was compacted, 500
        InternalError when storage became unreachable; the watch ends there.
        """
        prefix = self._namespace_prefix(namespace)
        initial = send_initial_events
        if initial is None:
            initial = resource_version in ("", "0")
        start = 0 if resource_version in ("", "0") else _parse_rv(resource_version)
        initial_items: list[Object] = []
        if initial:
            listed = await self.list(namespace, predicate)
            initial_items, start = listed.items, listed.resource_version
        try:
            watch = await self.storage.watch(prefix, start, progress_interval=progress_interval)
        except ExpiredError as exc:
            raise errors.resource_expired(
                f"too old resource version: {exc.requested} ({exc.compacted})"
            ) from None
        # The initial-events-end marker is a bookmark: only clients that allow bookmarks get it.
        end_marker = bool(send_initial_events) and progress_interval is not None
        return self._events(watch, predicate, initial_items, start, end_marker)

    async def _events(
        self,
        watch: Any,
        predicate: SelectionPredicate,
        initial: builtins.list[Object],
        start: int,
        end_marker: bool,
    ) -> AsyncGenerator[WatchEvent]:
        try:
            for obj in initial:
                yield WatchEvent("ADDED", obj)
            if end_marker:
                yield WatchEvent(
                    "BOOKMARK",
                    self._bookmark(start, {"k8s.io/initial-events-end": "true"}),
                )
            try:
                async for event in watch:
                    if event.type is EventType.PROGRESS:
                        yield WatchEvent("BOOKMARK", self._bookmark(event.revision))
                        continue
                    out = await self._to_watch_event(event, predicate)
                    if out is not None:
                        yield out
            except ExpiredError:
                # The backend lost its place (etcd compacted past it while unreachable):
                # upstream's etcd3 watcher ends the watch with a 410 its clients relist on.
                raise errors.resource_expired(_WATCH_TOO_OLD) from None
            except StorageUnavailableError as exc:
                # Any other error from etcd's watch ends it with an InternalError Status.
                raise errors.internal_error(exc) from None
        finally:
            await watch.close()

    async def _to_watch_event(self, event: Any, predicate: SelectionPredicate) -> WatchEvent | None:
        obj = await self.decode(event.kv)
        if event.type is EventType.DELETED:
            obj["metadata"]["resourceVersion"] = str(event.revision)
            return WatchEvent("DELETED", obj) if predicate.matches(obj) else None
        matches = predicate.matches(obj)
        if event.type is EventType.CREATED or predicate.empty():
            if not matches:
                return None
            return WatchEvent("ADDED" if event.type is EventType.CREATED else "MODIFIED", obj)
        old_matches = event.prev_kv is not None and predicate.matches(
            await self.decode(event.prev_kv)
        )
        if matches:
            return WatchEvent("MODIFIED" if old_matches else "ADDED", obj)
        return WatchEvent("DELETED", obj) if old_matches else None

    def _bookmark(self, revision: int, annotations: dict[str, str] | None = None) -> Object:
        metadata: Object = {"resourceVersion": str(revision)}
        if annotations:
            metadata["annotations"] = annotations
        return {"kind": self.resource.kind, "metadata": metadata}

    # -- helpers ---------------------------------------------------------------------

    async def _admit(
        self,
        operation: Operation,
        obj: Object | None,
        old: Object | None,
        dry_run: bool,
        subresource: str = "",
    ) -> None:
        """The mutating phase, before the strategy prepares and validates (upstream order)."""
        if self._admission is not None and self._admission.mutating:
            await self._admission.admit(self._attributes(operation, obj, old, dry_run, subresource))

    async def _validate_admission(
        self,
        operation: Operation,
        obj: Object | None,
        old: Object | None,
        dry_run: bool,
        subresource: str = "",
    ) -> None:
        """The validating phase, on the object about to be stored."""
        if self._admission is not None and self._admission.validating:
            attributes = self._attributes(operation, obj, old, dry_run, subresource)
            await self._admission.validate(attributes)

    def _attributes(
        self,
        operation: Operation,
        obj: Object | None,
        old: Object | None,
        dry_run: bool,
        subresource: str,
    ) -> Attributes:
        source = obj if obj is not None else old
        assert source is not None
        metadata = source.get("metadata", {})
        return Attributes(
            operation=operation,
            resource=self.resource,
            subresource=subresource,
            namespace=metadata.get("namespace"),
            name=metadata.get("name", ""),
            object=obj,
            old_object=old,
            dry_run=dry_run,
        )

    def _warn(self, warnings: builtins.list[str]) -> None:
        if warnings:
            request = current_request()
            for text in warnings:
                request.add_warning(text)

    def _not_found(self, name: str) -> errors.StatusError:
        return errors.not_found(self.resource.plural, self.resource.group, name)

    def _already_exists(self, name: str) -> errors.StatusError:
        return errors.already_exists(self.resource.plural, self.resource.group, name)

    def _conflict(self, name: str, why: str = errors.OBJECT_MODIFIED) -> errors.StatusError:
        return errors.conflict(self.resource.plural, self.resource.group, name, why)


def _pending_deletion(obj: Object) -> bool:
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


def _generate_name(prefix: str) -> str:
    prefix = prefix[:_MAX_GENERATED_NAME_LENGTH]
    return prefix + "".join(secrets.choice(_NAME_CHARS) for _ in range(5))


def _parse_rv(value: str) -> int:
    try:
        revision = int(value)
        if revision < 0:
            raise ValueError
    except ValueError:
        raise errors.bad_request(f'Invalid value "{value}" for resourceVersion') from None
    return revision


def _too_large(requested: int, current: int) -> errors.StatusError:
    err = errors.timeout(f"Too large resource version: {requested}, current: {current}")
    err.details = {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    }
    return err
