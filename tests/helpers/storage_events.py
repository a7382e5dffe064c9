"""Reading a storage watch in tests: bounded waits, and events as comparable tuples."""

from __future__ import annotations

import asyncio

from kapi.storage.interface import EventType, Watch, WatchEvent


async def take(watch: Watch, count: int, timeout: float = 5.0) -> list[WatchEvent]:
    """The next ``count`` events of ``watch``, failing after ``timeout`` seconds
    instead of hanging."""
    events: list[WatchEvent] = []
    async with asyncio.timeout(timeout):
        async for event in watch:
            events.append(event)
            if len(events) == count:
                break
    return events


def summary(events: list[WatchEvent], base: int = 0) -> list[tuple[EventType, int, str, bytes]]:
    """(type, revision - ``base``, key, value) of each event that carries a key."""
    return [(e.type, e.revision - base, e.kv.key, e.kv.value) for e in events if e.kv is not None]
