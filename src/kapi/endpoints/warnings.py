"""``Warning`` response headers (RFC 7234, code 299, agent ``-``), as upstream writes them.

The full KEP-1693 recorder (size limits, truncation) builds on this; what is
here is the encoding every warning needs.
"""

from __future__ import annotations


def warning_headers(warnings: list[str]) -> list[tuple[bytes, bytes]]:
    return [(b"warning", _encode(text)) for text in warnings]


def _encode(text: str) -> bytes:
    """``299 - "text"`` with quotes and backslashes escaped and control characters dropped."""
    clean = "".join(ch if ch == "\t" or (ch >= " " and ch != "\x7f") else " " for ch in text)
    escaped = clean.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'.encode()
