"""``CELValidator``: the CEL rules of one CRD schema, compiled once and run on every write."""

from __future__ import annotations

from typing import Any

from kapi.apimachinery.field_errors import FieldError, Path
from kapi.validation.cel.evaluation import RuleResults, validate_tree
from kapi.validation.cel.schema_rules import RuleNode, build_rule_tree
from kapi.validation.correlation import CorrelatedObject


class CELValidator:
    """All compiled ``x-kubernetes-validations`` rules of one schema tree."""

    def __init__(self, root: RuleNode) -> None:
        self._root = root

    @classmethod
    def compile(
        cls, schema: dict[str, Any], path: Path
    ) -> tuple[CELValidator | None, list[FieldError]]:
        """Compile every rule in the schema tree once (see :func:`build_rule_tree`).

        Returns ``(None, [])`` when the schema has no rules.
        """
        root, errors = build_rule_tree(schema, path)
        return (None if root is None else cls(root)), errors

    def validate(
        self,
        new: Any,
        old: Any | None = None,
        path: Path | None = None,
        *,
        optional_old_self: bool = True,
    ) -> list[FieldError]:
        """Evaluate all rules on a custom resource (root object), transition rules when ``old``
        is given, within upstream's per-call limit and per-resource budget.

        ``optional_old_self=False`` (ratcheting's gate off) skips rules marked
        ``optionalOldSelf`` where there is no old value, as upstream does.
        """
        return validate_tree(self._root, new, old, path, optional_old_self=optional_old_self).errors

    def validate_update(
        self, new: Any, old: Any, correlation: CorrelatedObject, path: Path | None = None
    ) -> RuleResults:
        """The rules of an update with ratcheting (KEP-4008): ``correlation`` pairs ``new``
        with ``old``; failures on unchanged values come back in ``ratcheted``."""
        return validate_tree(self._root, new, old, path, correlation)
