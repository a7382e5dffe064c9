"""RBAC's in-server work: the bootstrap policy, and ClusterRole aggregation.

:func:`ensure_bootstrap_policy` is kube-apiserver's ``rbac/bootstrap-roles``
post-start hook: it creates the bootstrap ClusterRoles and ClusterRoleBindings
(:mod:`kapi.apis.rbac_bootstrap`) that are missing and brings those still
marked for auto-update up to date.

:class:`ClusterRoleAggregationController` is the controller upstream runs in
kube-controller-manager: a ClusterRole with an ``aggregationRule`` holds the
rules of every ClusterRole its selectors match, so ``admin``, ``edit`` and
``view`` grow with each ``aggregate-to-*`` role installed.  kapi runs it in
the API server, since users expect the aggregated roles from a bare cluster.

Every server runs both.  They agree without an election: each computes the
same result from what storage holds (the controller follows storage's watch,
never its own writes), writes are read-modify-write on the stored object, and
a write that changes nothing is skipped, so servers racing write once and
then find nothing to do.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from kapi.apimachinery import errors
from kapi.apimachinery.labels import SelectorParseError
from kapi.apimachinery.unstructured import Object
from kapi.apis.rbac_bootstrap import (
    aggregated_rules,
    cluster_role_bindings,
    cluster_roles,
    reconcile,
    same_rules,
)
from kapi.registry.informer import Backoff, Informer
from kapi.registry.store import Store

log = logging.getLogger(__name__)

#: Upstream's name for the post-start hook that creates the bootstrap policy.
RBAC_BOOTSTRAP_HOOK = "rbac/bootstrap-roles"


async def bootstrap_policy(
    cluster_roles_store: Store, bindings_store: Store, done: Callable[[], object]
) -> None:
    """The post-start hook: :func:`ensure_bootstrap_policy` until it succeeds, then ``done()``."""
    backoff = Backoff(initial=0.1)
    while True:
        try:
            await ensure_bootstrap_policy(cluster_roles_store, bindings_store)
            done()
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("creating the bootstrap RBAC policy: %r; retrying", exc)
            await asyncio.sleep(backoff.next())


async def ensure_bootstrap_policy(cluster_roles_store: Store, bindings_store: Store) -> None:
    """Create what is missing of the bootstrap policy, update what opted in to updates.

    Another server doing the same at the same moment is expected: an object
    it created first is reconciled instead, and updates retry on conflicts.
    """
    for store, wanted_objects in (
        (cluster_roles_store, cluster_roles()),
        (bindings_store, cluster_role_bindings()),
    ):
        for wanted in wanted_objects:
            await _ensure(store, wanted)


async def _ensure(store: Store, wanted: Object) -> None:
    name = wanted["metadata"]["name"]
    try:
        await store.create(wanted)
        return
    except errors.StatusError as exc:
        if exc.reason != "AlreadyExists":
            raise

    async def update(current: Object) -> Object:
        updated = reconcile(current, wanted)
        if updated is None:
            return current
        updated["metadata"].pop("resourceVersion", None)  # retried on conflicts
        return updated

    try:
        await store.update(None, name, update)
    except errors.StatusError as exc:
        if exc.code != 404:  # deleted meanwhile: the next start creates it again
            raise


class ClusterRoleAggregationController:
    """Given the ClusterRole store: keeps every aggregating role's rules current."""

    def __init__(self, cluster_roles_store: Store) -> None:
        self.store = cluster_roles_store
        self._dirty = asyncio.Event()
        #: The ClusterRoles as storage holds them; every change marks the roles for a sync.
        self.roles = Informer(lambda _: self._dirty.set())

    async def run(self) -> None:
        """Follow the ClusterRoles in storage and sync after each change, until cancelled."""
        worker = asyncio.create_task(self._work())
        try:
            await self.roles.run(self.store)
        finally:
            worker.cancel()

    async def _work(self) -> None:
        """Like upstream, any change re-examines every aggregating role (they are few)."""
        backoff = Backoff(initial=0.2)
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            try:
                await self.sync()
                backoff.reset()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("aggregating cluster roles: %r; retrying", exc)
                self._dirty.set()
                await asyncio.sleep(backoff.next())

    async def sync(self) -> None:
        """Write the rules every aggregating role should hold, where they differ."""
        roles = list(self.roles.objects.values())
        for role in roles:
            if role.get("aggregationRule") is None:
                continue
            try:
                rules = aggregated_rules(role, roles)
            except SelectorParseError as exc:
                # Only a selector stored before its rule was tightened; upstream's
                # controller fails on that role alone too.
                log.warning("cluster role %s: %s", role["metadata"]["name"], exc)
                continue
            if same_rules(rules, role.get("rules")):
                continue
            await self._write(role["metadata"]["name"], rules)

    async def _write(self, name: str, rules: list[Object]) -> None:
        async def update(current: Object) -> Object:
            if current.get("aggregationRule") is None or same_rules(rules, current.get("rules")):
                return current  # changed meanwhile; the watch brings the next computation
            current["rules"] = rules
            current["metadata"].pop("resourceVersion", None)
            return current

        try:
            await self.store.update(None, name, update)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
