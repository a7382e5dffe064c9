"""What a client does with the server's ``Warning`` headers (KEP-1693, client-go's shape).

Every response's ``Warning`` headers are parsed (tolerantly: a malformed value
never fails a request, see :mod:`kapi.apimachinery.warningheader`), the
parsed :class:`WarningHeader` list is put on the response, and each warning is
passed to a :class:`WarningHandler`:

* the client's own handler, ``Client(config, warning_handler=...)``, if it
  was given one;
* otherwise the process-wide default *as it is when the response arrives*,
  so :func:`set_default_warning_handler` takes effect at once for clients
  already built.  It starts as :class:`WarningLogger`.

As in client-go, handlers receive every parsed warning and act only on code
299 with non-empty text.  Programs that run inside a server (kube-apiserver,
controller managers) install :class:`NoWarnings`; kapi's own controllers call
the store directly and never see a warning.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Protocol, TextIO, runtime_checkable

from kapi.apimachinery.warningheader import WarningHeader, parse_warning_headers

log = logging.getLogger(__name__)

#: kubectl's colour for the ``Warning:`` prefix: bold yellow, then reset.
_YELLOW = "\x1b[33;1m"
_RESET = "\x1b[0m"


@runtime_checkable
class WarningHandler(Protocol):
    """Receives each warning of each response (client-go's ``rest.WarningHandler``)."""

    def handle_warning(self, code: int, agent: str, text: str) -> None: ...


class NoWarnings:
    """Ignores warnings: for code that runs inside a server and has no one to tell."""

    def handle_warning(self, code: int, agent: str, text: str) -> None:
        return None


class WarningLogger:
    """Logs code 299 warnings at WARNING level on the ``kapi.client.warnings`` logger.

    The counterpart of client-go's default, which hands them to ``klog.Warning``.
    """

    def handle_warning(self, code: int, agent: str, text: str) -> None:
        if code == 299 and text:
            log.warning("%s", text)


class WarningWriter:
    """Writes code 299 warnings to ``stream`` as ``Warning: <text>``, as kubectl prints them.

    With ``deduplicate`` a text is written once for the writer's lifetime (so
    memory grows with distinct warnings in a long-running process); with
    ``color`` the prefix is bold yellow, for terminals.  ``count`` is how many
    warnings were written, what kubectl's ``--warnings-as-errors`` checks.
    """

    def __init__(self, stream: TextIO, *, deduplicate: bool = False, color: bool = False) -> None:
        self.stream = stream
        self.deduplicate = deduplicate
        self.color = color
        self._lock = threading.Lock()
        self._written: set[str] = set()
        self._count = 0

    @property
    def count(self) -> int:
        with self._lock:
            return self._count

    def handle_warning(self, code: int, agent: str, text: str) -> None:
        if code != 299 or not text:
            return
        with self._lock:
            if self.deduplicate:
                if text in self._written:
                    return
                self._written.add(text)
            self._count += 1
            prefix = f"{_YELLOW}Warning:{_RESET}" if self.color else "Warning:"
            self.stream.write(f"{prefix} {text}\n")


_default_lock = threading.Lock()
_default_handler: WarningHandler = WarningLogger()


def set_default_warning_handler(handler: WarningHandler) -> None:
    """Set the process-wide handler, used by every client that has none of its own."""
    global _default_handler
    with _default_lock:
        _default_handler = handler


def get_default_warning_handler() -> WarningHandler:
    """The process-wide handler in effect now."""
    with _default_lock:
        return _default_handler


def handle_warnings(
    values: Iterable[str | bytes], handler: WarningHandler | None
) -> list[WarningHeader]:
    """Parse ``Warning`` header values, pass each warning to the handler, and return them.

    ``handler`` None means the process-wide default at this moment.  Malformed
    values are skipped; nothing here raises on what a server sent.
    """
    warnings, _ = parse_warning_headers(values)
    if warnings:
        chosen = handler if handler is not None else get_default_warning_handler()
        for warning in warnings:
            chosen.handle_warning(warning.code, warning.agent, warning.text)
    return warnings
