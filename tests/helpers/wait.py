"""Waiting for something the server does in the background (controllers, watches, batches)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(
    probe: Callable[[], T],
    *,
    what: str,
    timeout: float = 20.0,
    interval: float = 0.05,
    details: Callable[[], str] | None = None,
) -> T:
    """Call ``probe`` until it returns a truthy value, and return that value.

    Exceptions from ``probe`` propagate at once (a probe fails early with
    ``pytest.fail`` when what it waits on has died).  When ``timeout`` seconds
    pass without a truthy value, raises AssertionError naming ``what`` is
    awaited, with the probe's last value and ``details()`` if given.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            message = f"timed out after {timeout:g}s waiting for {what}; last probe: {value!r}"
            if details is not None:
                message += "\n" + details()
            raise AssertionError(message)
        time.sleep(interval)
