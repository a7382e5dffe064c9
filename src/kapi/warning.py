"""The per-request warning recorder of KEP-1693 and its ``Warning`` response headers.

The counterpart of the recorder upstream's ``filters.WithWarningRecorder``
attaches: every request's context carries one :class:`WarningRecorder` (see
:mod:`kapi.request`), any layer adds warnings to it, and the handler chain
writes what it recorded as RFC 7234 ``Warning`` headers, one per warning,
``299 - "<text>"`` (encoding in :mod:`kapi.apimachinery.warningheader`).

Behaviour clients can observe follows upstream exactly:

* empty texts are ignored, and a text already recorded for the request is not
  written again, whatever agent it came with;
* a text that is not valid UTF-8 or holds a control character (C0, DEL, C1)
  is dropped, not repaired, as upstream's ``NewWarningHeader`` refuses it;
* the budget is 4096 characters of warning text per response, counted in
  runes (code points) as upstream counts them, not in bytes.  While warnings
  fit they are written whole.  The first warning that would exceed the budget
  switches the recorder to truncating: everything recorded so far is rewritten
  cut to 256 characters (no ellipsis), as is every later warning, until the
  running total reaches the budget; later warnings are dropped.  The warning
  that crosses the budget is still written, as upstream writes it.
"""

from __future__ import annotations

import functools
import logging

from kapi.apimachinery.warningheader import new_warning_header

log = logging.getLogger(__name__)

#: Upstream's ``truncateAtTotalRunes``: the per-response budget of warning text.
TRUNCATE_AT_TOTAL_RUNES = 4 * 1024
#: Upstream's ``truncateItemRunes``: how long each warning may be once truncating.
TRUNCATE_ITEM_RUNES = 256
#: "Miscellaneous persistent warning", the only warn-code kube-apiserver sends.
WARNING_CODE = 299


class WarningRecorder:
    """Collects one request's warnings, de-duplicated, and renders their headers.

    Upstream's recorder takes a lock because Go handlers fan out to
    goroutines.  A kapi request runs on the event loop's thread, and no
    request work is handed to other threads, so this one has none: every
    request creates a recorder, and most never add to it.
    """

    __slots__ = ("_headers", "_recorded", "_truncating", "_written")

    def __init__(self) -> None:
        #: Every distinct text added, in order, with the agent it first came with.
        self._recorded: dict[str, str] = {}
        self._headers: list[tuple[bytes, bytes]] = []
        self._written = 0
        self._truncating = False

    def add_warning(self, text: str, *, agent: str = "") -> None:
        """Record ``text`` for the response; an empty ``agent`` is written as ``-``."""
        if not text or text in self._recorded:
            return
        if self._truncating and self._written >= TRUNCATE_AT_TOTAL_RUNES:
            return
        self._recorded[text] = agent
        if self._truncating:
            text = _truncate(text)
        header = _header(agent, text)
        if header is None:
            return
        if self._truncating or self._written + len(text) <= TRUNCATE_AT_TOTAL_RUNES:
            self._written += len(text)
            self._headers.append(header)
        else:
            self._start_truncating()

    def _start_truncating(self) -> None:
        """Rewrite everything recorded so far, each warning cut to the item limit."""
        log.warning("exceeded max warning header size, truncating")
        self._truncating = True
        self._written = 0
        self._headers = []
        for whole, agent in self._recorded.items():
            text = _truncate(whole)
            header = _header(agent, text)
            if header is not None:
                self._written += len(text)
                self._headers.append(header)

    @property
    def texts(self) -> list[str]:
        """Every distinct text added, whole and in order, whether written or not.

        What the request warned about, for callers such as audit that must not
        depend on the header budget.
        """
        return list(self._recorded)

    def headers(self) -> list[tuple[bytes, bytes]]:
        """The ``Warning`` response headers, in the order their warnings were added.

        A new list each call: the handler chain appends its own headers to it.
        """
        return list(self._headers)


@functools.lru_cache(maxsize=1024)
def _header(agent: str, text: str) -> tuple[bytes, bytes] | None:
    """The encoded header; cached, since most warnings (deprecations) recur verbatim."""
    value = new_warning_header(WARNING_CODE, agent, text)
    return None if value is None else (b"warning", value)


def _truncate(text: str) -> str:
    """``text`` cut to the item limit, as upstream cuts it through a rune slice.

    That conversion turns each invalid UTF-8 byte (here: a lone surrogate from
    ``surrogateescape``) into U+FFFD, so a long invalid text becomes writable
    once cut while a short one stays refused; kapi keeps even that quirk.
    """
    if len(text) <= TRUNCATE_ITEM_RUNES:
        return text
    return "".join(
        "\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text[:TRUNCATE_ITEM_RUNES]
    )
