"""kube-apiserver's ``scheduling/bootstrap-system-priority-classes`` post-start hook.

Each system PriorityClass (:data:`kapi.apis.scheduling.SYSTEM_PRIORITY_CLASSES`)
that is missing is created; one that exists is left as it is, as upstream's
hook only creates.  Servers racing each other agree: the loser's create
answers AlreadyExists, which counts as done.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from kapi.apimachinery import errors
from kapi.apis.scheduling import system_priority_classes
from kapi.registry.informer import Backoff
from kapi.registry.store import Store

log = logging.getLogger(__name__)

#: Upstream's name for the hook.
PRIORITY_CLASS_BOOTSTRAP_HOOK = "scheduling/bootstrap-system-priority-classes"


async def ensure_system_priority_classes(store: Store) -> None:
    """Create the system classes that storage lacks."""
    for wanted in system_priority_classes():
        try:
            await store.get(None, wanted["metadata"]["name"])
            continue
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
        try:
            await store.create(wanted)
            log.info("created PriorityClass %s", wanted["metadata"]["name"])
        except errors.StatusError as exc:
            if exc.reason != "AlreadyExists":
                raise


async def bootstrap_priority_classes(store: Store, done: Callable[[], object]) -> None:
    """The hook: :func:`ensure_system_priority_classes` until it succeeds, then ``done()``."""
    backoff = Backoff(initial=0.1)
    while True:
        try:
            await ensure_system_priority_classes(store)
            done()
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("creating the system priority classes: %r; retrying", exc)
            await asyncio.sleep(backoff.next())
