"""Long CPU work of one request, done in chunks that give the event loop a turn.

kapi serves every request on one event loop.  Work that runs for seconds
without an ``await`` that suspends (decoding, filtering or encoding a list of
tens of thousands of objects) would hold up every other client for as long;
done :data:`CHUNK` objects at a time with :func:`pause` in between, it costs
the other clients at most one chunk's time, and its own client the rest.
Lists up to one chunk long, the common case, never pause.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Final, TypeVar

#: Objects handled between two turns of the loop: about a millisecond of decoding.
#: Another request needs a few turns to be read, handled and answered, so this is
#: also about how many milliseconds a long request adds to each of those turns.
CHUNK: Final = 100

T = TypeVar("T")


async def pause() -> None:
    """Let every other ready task run before carrying on."""
    await asyncio.sleep(0)


async def run_steps(steps: Generator[None, None, T]) -> T:
    """Drive a generator that yields between chunks of its work, pausing at each yield."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
        await pause()
