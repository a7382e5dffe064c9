"""API Priority and Fairness: keeping the built-in configuration objects in storage.

:func:`producer` is kube-apiserver's ``priority-and-fairness-config-producer``
post-start hook: at start (retrying until it succeeds) and then once a minute it

* creates every suggested and mandatory object (:mod:`kapi.apis.flowcontrol_bootstrap`)
  that is missing;
* puts back the spec of the mandatory ones, marking them ``autoupdate-spec: "true"``;
* puts back the spec of a suggested one only while its annotation says ``true`` (an
  object without the annotation, never changed since created, counts as ``true``);
* deletes objects the server once made (they carry the annotation, set to ``true``)
  that are no longer part of the built-in configuration.

kapi serves these objects but does not queue or limit requests with them.  Of
upstream's APF configuration controller it runs only the status part,
:class:`DanglingConditionController`: each FlowSchema's ``Dangling`` condition
(``kubectl get flowschemas``' MISSINGPL column).
Every server runs this; the writes are read-modify-write and skipped when nothing
changes, so servers racing agree.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from kapi.apimachinery import errors
from kapi.apimachinery.gotext import go_quote
from kapi.apimachinery.unstructured import Object
from kapi.apis.flowcontrol import same_spec
from kapi.apis.flowcontrol_bootstrap import (
    AUTO_UPDATE_ANNOTATION,
    MANDATORY_FLOW_SCHEMAS,
    MANDATORY_PRIORITY_LEVELS,
    SUGGESTED_FLOW_SCHEMAS,
    SUGGESTED_PRIORITY_LEVELS,
)
from kapi.registry.informer import Backoff, Informer
from kapi.registry.predicate import SelectionPredicate
from kapi.registry.store import Store
from kapi.runtime.objects import deep_copy, now_rfc3339

log = logging.getLogger(__name__)

#: Upstream's name for the post-start hook that creates the configuration.
APF_BOOTSTRAP_HOOK = "priority-and-fairness-config-producer"
#: How often the configuration is checked again after start (upstream: a minute).
PERIOD = 60.0
#: The field manager of the hook's writes, as upstream names it.
FIELD_MANAGER = "api-priority-and-fairness-config-producer-v1"
#: The field manager upstream's configuration controller applies FlowSchema status with.
CONSUMER_FIELD_MANAGER = "api-priority-and-fairness-config-consumer-v1"

_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def _parse_bool(value: str | None) -> bool | None:
    """Go's ``strconv.ParseBool``; None when the text is not a boolean."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


def _annotations(obj: Object) -> dict[str, str]:
    return obj.get("metadata", {}).get("annotations") or {}


def should_update(current: Object, wanted: Object, *, mandatory: bool) -> Object | None:
    """``ShouldUpdate`` of the ensure strategies: the object to write, or None."""
    auto_update = mandatory
    if not auto_update:
        parsed = _parse_bool(_annotations(current).get(AUTO_UPDATE_ANNOTATION))
        auto_update = parsed if parsed is not None else current["metadata"].get("generation") == 1
    annotation = _parse_bool(_annotations(current).get(AUTO_UPDATE_ANNOTATION))
    update_annotation = annotation != auto_update
    spec = wanted_spec(current, wanted)
    spec_changed = auto_update and not same_spec(current.get("spec"), spec)
    if not (update_annotation or spec_changed):
        return None
    updated = deep_copy(current)
    if update_annotation:
        metadata = updated["metadata"]
        metadata["annotations"] = {
            **(metadata.get("annotations") or {}),
            AUTO_UPDATE_ANNOTATION: "true" if auto_update else "false",
        }
    if spec_changed:
        updated["spec"] = deep_copy(spec)
    return updated


def wanted_spec(current: Object, wanted: Object) -> Object:
    """The built-in spec; the ``exempt`` level keeps what an operator set in ``spec.exempt``."""
    spec: Object = wanted["spec"]
    if wanted["kind"] == "PriorityLevelConfiguration" and wanted["metadata"]["name"] == "exempt":
        exempt = (current.get("spec") or {}).get("exempt")
        if exempt is not None:
            return {**spec, "exempt": exempt}
    return spec


async def ensure_configuration(flow_schemas: Store, priority_levels: Store) -> None:
    """One pass of the hook: suggested objects, mandatory objects, then removals."""
    for store, objects in (
        (flow_schemas, SUGGESTED_FLOW_SCHEMAS),
        (priority_levels, SUGGESTED_PRIORITY_LEVELS),
    ):
        for wanted in objects.values():
            await _ensure(store, wanted, mandatory=False)
    for store, objects in (
        (flow_schemas, MANDATORY_FLOW_SCHEMAS),
        (priority_levels, MANDATORY_PRIORITY_LEVELS),
    ):
        for wanted in objects.values():
            await _ensure(store, wanted, mandatory=True)
    for store, built_in in (
        (flow_schemas, MANDATORY_FLOW_SCHEMAS.keys() | SUGGESTED_FLOW_SCHEMAS.keys()),
        (priority_levels, MANDATORY_PRIORITY_LEVELS.keys() | SUGGESTED_PRIORITY_LEVELS.keys()),
    ):
        await _remove_retired(store, built_in)


async def _ensure(store: Store, wanted: Object, *, mandatory: bool) -> None:
    """Create ``wanted`` if missing, else update what the strategy says is out of date.

    The stored object is read first, as upstream's ensurer reads its lister: a pass that
    finds everything in place writes nothing (and calls no admission webhook).
    """
    name = wanted["metadata"]["name"]
    try:
        current = await store.get(None, name)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
        try:
            await store.create(await _managed(store, None, deep_copy(wanted)))
        except errors.StatusError as exc:
            if exc.reason != "AlreadyExists":  # another server made it meanwhile
                raise
        return
    if should_update(current, wanted, mandatory=mandatory) is None:
        return

    async def update(current: Object) -> Object:
        updated = should_update(current, wanted, mandatory=mandatory)
        if updated is None:
            return current
        updated["metadata"].pop("resourceVersion", None)  # retried on conflicts
        return await _managed(store, current, updated)

    try:
        await store.update(None, name, update)
    except errors.StatusError as exc:
        if exc.code != 404:  # deleted meanwhile: the next pass creates it again
            raise


async def _managed(store: Store, live: Object | None, new: Object) -> Object:
    """``new`` with the managedFields of an Update by the hook's field manager over ``live``."""
    manager = store.field_managers.get(store.resource.hub_version)
    if manager is not None:
        entries = await manager.update(live, new, FIELD_MANAGER)
        if entries is None:
            new["metadata"].pop("managedFields", None)
        else:
            new["metadata"]["managedFields"] = entries
    return new


async def _remove_retired(store: Store, built_in: set[str]) -> None:
    """Delete the server-made objects (annotated ``true``) no longer built in."""
    listed = await store.list(None, SelectionPredicate())
    for obj in listed.items:
        name = obj["metadata"]["name"]
        annotations = _annotations(obj)
        if name in built_in or AUTO_UPDATE_ANNOTATION not in annotations:
            continue
        if _parse_bool(annotations[AUTO_UPDATE_ANNOTATION]) is not True:
            continue
        try:
            await store.delete(None, name)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise


async def producer(
    flow_schemas: Store,
    priority_levels: Store,
    done: Callable[[], object],
    period: float = PERIOD,
    first_pass_also: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """The post-start hook: a first pass until it succeeds, ``done()``, then a pass a period.

    ``first_pass_also`` runs after the first pass, before ``done()``: kapi sets the
    built-in schemas' conditions there, so a server is ready with them in place.
    """
    backoff = Backoff(initial=0.1)
    while True:
        try:
            await ensure_configuration(flow_schemas, priority_levels)
            if first_pass_also is not None:
                await first_pass_also()
            break
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("creating the APF configuration: %r; retrying", exc)
            await asyncio.sleep(backoff.next())
    done()
    while True:
        await asyncio.sleep(period)
        try:
            await ensure_configuration(flow_schemas, priority_levels)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("keeping the APF configuration: %r; retrying later", exc)


# --- the Dangling condition -------------------------------------------------------------------

#: The levels a FlowSchema may always name: the controller imagines them when missing.
_ALWAYS_THERE = frozenset(MANDATORY_PRIORITY_LEVELS)


def dangling_condition(schema: Object, levels: set[str]) -> tuple[str, str, str]:
    """The ``Dangling`` condition's status, reason and message for ``schema``."""
    name = ((schema.get("spec") or {}).get("priorityLevelConfiguration") or {}).get("name", "")
    named = (
        f"This FlowSchema references the PriorityLevelConfiguration object named {go_quote(name)}"
    )
    if name in levels or name in _ALWAYS_THERE:
        return "False", "Found", named + " and it exists"
    return "True", "NotFound", named + " but there is no such object"


class DanglingConditionController:
    """The status part of upstream's APF configuration controller: each FlowSchema's
    ``Dangling`` condition says whether the priority level it names exists (the mandatory
    levels always count as existing, as the controller imagines them when missing)."""

    def __init__(self, flow_schemas: Store, priority_levels: Store) -> None:
        self.flow_schemas = flow_schemas
        self.priority_levels = priority_levels
        self._changed = asyncio.Event()
        self._schemas = Informer(lambda _: self._changed.set())
        self._levels = Informer(lambda _: self._changed.set())

    async def run(self) -> None:
        """Follow both kinds and sync after each change, until cancelled."""
        tasks = [
            asyncio.create_task(self._schemas.run(self.flow_schemas)),
            asyncio.create_task(self._levels.run(self.priority_levels)),
        ]
        backoff = Backoff(initial=0.2)
        try:
            while True:
                await self._changed.wait()
                self._changed.clear()
                if not (self._schemas.synced and self._levels.synced):
                    continue
                try:
                    await self.sync()
                    backoff.reset()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    log.warning("setting FlowSchema conditions: %r; retrying", exc)
                    self._changed.set()
                    await asyncio.sleep(backoff.next())
        finally:
            for task in tasks:
                task.cancel()

    async def sync(self) -> None:
        """Write the conditions that differ, from what the watches brought."""
        await self._sync(list(self._schemas.objects.values()), set(self._levels.objects))

    async def sync_storage(self) -> None:
        """One pass over what storage holds now (before the watches have caught up)."""
        everything = SelectionPredicate()
        schemas = (await self.flow_schemas.list(None, everything)).items
        levels = (await self.priority_levels.list(None, everything)).items
        await self._sync(schemas, {level["metadata"]["name"] for level in levels})

    async def _sync(self, schemas: list[Object], levels: set[str]) -> None:
        for schema in schemas:
            wanted = dangling_condition(schema, levels)
            if _current(schema) == wanted:
                continue
            await self._write(schema["metadata"]["name"], wanted)

    async def _write(self, name: str, wanted: tuple[str, str, str]) -> None:
        """Apply the condition to ``/status`` as upstream's controller does (server-side
        apply, forced, by its field manager), so other conditions stay as they are."""
        manager = self.flow_schemas.field_managers.get(
            self.flow_schemas.resource.hub_version, "status"
        )

        async def update(current: Object) -> Object:
            if _current(current) == wanted:
                return current
            status, reason, message = wanted
            condition = {
                "type": "Dangling",
                "status": status,
                "lastTransitionTime": now_rfc3339(),
                "reason": reason,
                "message": message,
            }
            if manager is not None:
                config = {
                    "apiVersion": self.flow_schemas.resource.hub_api_version,
                    "kind": "FlowSchema",
                    "metadata": {"name": name},
                    "status": {"conditions": [condition]},
                }
                applied = await manager.apply(current, config, CONSUMER_FIELD_MANAGER, True)
            else:
                conditions = [
                    c
                    for c in (current.get("status") or {}).get("conditions") or []
                    if c.get("type") != "Dangling"
                ]
                applied = {
                    **current,
                    "status": {
                        **(current.get("status") or {}),
                        "conditions": [*conditions, condition],
                    },
                }
            applied["metadata"].pop("resourceVersion", None)
            return applied

        try:
            await self.flow_schemas.update(None, name, update, subresource="status")
        except errors.StatusError as exc:
            if exc.code != 404:  # deleted meanwhile
                raise


def _current(schema: Object) -> tuple[str, str, str] | None:
    for condition in (schema.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Dangling":
            return (
                condition.get("status", ""),
                condition.get("reason", ""),
                condition.get("message", ""),
            )
    return None
