"""The JSONPath subset CRD printer columns and scale paths use.

``additionalPrinterColumns[].jsonPath`` values such as ``.spec.replicas``,
``.spec.containers[0].image``, ``.items[*].name`` or
``.status.conditions[?(@.type=="Ready")].status`` are compiled once into a
list of steps and evaluated on every row.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Step = Callable[[list[Any]], list[Any]]

_TOKEN = re.compile(
    r"""\.(?P<field>[A-Za-z0-9_\-$]+)              # .name
      | \[\s*(?P<index>-?\d+)\s*\]                  # [0]
      | \[\s*\*\s*\]                                # [*]
      | \[\s*'(?P<quoted>[^']*)'\s*\]               # ['name.with.dots']
      | \[\?\(\s*@\.(?P<fpath>[A-Za-z0-9_.\-]+)\s*
            (?:(?P<op>==|!=)\s*(?P<fval>"[^"]*"|'[^']*'|-?\d+(?:\.\d+)?|true|false))?\s*\)\]
    """,
    re.VERBOSE,
)


class JSONPathError(ValueError):
    """A path outside the supported subset."""


class JSONPath:
    """A compiled path; :meth:`find` returns every match, in document order."""

    def __init__(self, path: str) -> None:
        self.path = path
        text = path.strip()
        if text.startswith("{") and text.endswith("}"):
            text = text[1:-1]
        text = text.removeprefix("$")
        self._steps: list[Step] = []
        pos = 0
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if match is None:
                raise JSONPathError(f"unsupported JSONPath {path!r} at offset {pos}")
            self._steps.append(_step(match))
            pos = match.end()

    def find(self, obj: Any) -> list[Any]:
        values = [obj]
        for step in self._steps:
            values = step(values)
            if not values:
                break
        return values

    def first(self, obj: Any) -> Any:
        """The first match, or ``None`` when nothing matches."""
        found = self.find(obj)
        return found[0] if found else None


def _step(match: re.Match[str]) -> Step:
    if match["field"] is not None or match["quoted"] is not None:
        name = match["field"] if match["field"] is not None else match["quoted"]
        return lambda values: [v[name] for v in values if isinstance(v, dict) and name in v]
    if match["index"] is not None:
        index = int(match["index"])
        return lambda values: [
            v[index] for v in values if isinstance(v, list) and -len(v) <= index < len(v)
        ]
    if match["fpath"] is not None:
        return _filter(match["fpath"].split("."), match["op"], match["fval"])
    return lambda values: [item for v in values for item in _children(v)]


def _children(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return list(value.values())
    return []


def _filter(path: list[str], op: str | None, literal: str | None) -> Step:
    expected = _literal(literal) if literal is not None else None

    def keep(item: Any) -> bool:
        value = item
        for name in path:
            if not isinstance(value, dict) or name not in value:
                return False
            value = value[name]
        if op is None:
            return True
        return (value == expected) == (op == "==")

    return lambda values: [item for v in values for item in _children(v) if keep(item)]


def _literal(text: str) -> Any:
    if text[0] in "\"'":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    return float(text) if "." in text else int(text)
