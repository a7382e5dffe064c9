"""What label selectors and field selectors have in common.

The counterpart of upstream ``k8s.io/apimachinery/pkg/selection`` (the
operators), plus the parts of a selector that do not depend on what it
selects: a selector is an AND of requirements, printed joined by commas,
equal to another of its kind with the same requirements. :mod:`labels` and
:mod:`field_selector` build their ``Selector`` types on :class:`AndSelector`
and their "matches nothing" selectors on :class:`MatchesNothing`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, Generic, TypeVar

# selection.Operator values.
DOES_NOT_EXIST: Final = "!"
EQUALS: Final = "="
DOUBLE_EQUALS: Final = "=="
IN: Final = "in"
NOT_EQUALS: Final = "!="
NOT_IN: Final = "notin"
EXISTS: Final = "exists"
GREATER_THAN: Final = "gt"
LESS_THAN: Final = "lt"

R = TypeVar("R")


class AndSelector(Generic[R]):
    """A conjunction of requirements, compared and hashed by its kind and requirements."""

    __slots__ = ("requirements",)

    def __init__(self, requirements: Iterable[R] = ()) -> None:
        self.requirements: tuple[R, ...] = tuple(requirements)

    def empty(self) -> bool:
        """True when nothing is restricted (the selector matches everything)."""
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)

    def __repr__(self) -> str:
        return f"Selector({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AndSelector):
            return NotImplemented
        return type(self) is type(other) and self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash((type(self), self.requirements))


class MatchesNothing:
    """Mixin for the selector that matches nothing (not the same as one without terms)."""

    __slots__ = ()

    def matches(self, _: Any) -> bool:
        return False

    def empty(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "Selector(<nothing>)"
