"""What a write does with lifecycle-tagged fields (KEP-2558's follow-ups).

Upstream strategies each drop the fields whose feature gate is off
(``dropDisabledFields``): on create, and on an update that newly sets them;
an object that already had the field keeps it, so turning a gate off never
breaks updates of existing objects.  kapi does this once for every kind,
driven by the same ``+lifecycle`` tags the OpenAPI publishes, and says so in a
``Warning`` instead of dropping silently.  A write that sets an alpha or a
deprecated field gets a field-level warning too, in the ``<field path>:
<text>`` form of upstream's own field warnings; on an update only where the
value changed, so re-applying an unchanged manifest does not repeat them.

The texts are built by :func:`dropped_warning` and :func:`stage_warning`, and
shown in docs/field-lifecycle.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kapi.apimachinery.unstructured import Object
from kapi.features import KNOWN_FEATURES, FeatureGate
from kapi.runtime.lifecycle import FieldLifecycle, at_version
from kapi.runtime.lifecycle_paths import TaggedPath


def dropped_warning(where: str, gate: str) -> str:
    return f"{where}: dropped because the {gate} feature gate is disabled"


def stage_warning(where: str, status: str, gate: str | None) -> str:
    gated = f" (feature gate {gate})" if gate else ""
    if status == "alpha":
        return f"{where}: alpha field{gated}; it may change or be removed in a future release"
    return f"{where}: deprecated field{gated}; it may be removed in a future release"


class FieldLifecyclePolicy:
    """Drops disabled fields and warns on alpha and deprecated ones, for one server.

    ``gates``: the server's feature gates at its emulated release.
    ``on_deprecated``: told the tagged path (``spec.x[*].y``) of each deprecated
    field a write sets, for ``kapi deprecations``' report.
    """

    def __init__(
        self, gates: FeatureGate, on_deprecated: Callable[[str], None] | None = None
    ) -> None:
        self._gates = gates
        self._on_deprecated = on_deprecated
        #: Per tagged-paths tuple (by identity, the tuple kept alive here): its plan.
        self._plans: dict[int, tuple[Iterable[TaggedPath], tuple[_Step, ...]]] = {}

    def on_create(self, obj: Object, paths: Iterable[TaggedPath]) -> list[str]:
        """Drop and warn on a new object; the warnings, in field order."""
        return self._admit(obj, None, paths)

    def on_update(self, new: Object, old: Object, paths: Iterable[TaggedPath]) -> list[str]:
        """As :meth:`on_create`, but a field the old object had is kept and warned on only
        where its value changed."""
        return self._admit(new, old, paths)

    def _admit(self, new: Object, old: Object | None, paths: Iterable[TaggedPath]) -> list[str]:
        warnings: list[str] = []
        for tagged, tag, off_gate, status in self._plan(paths):
            if off_gate is not None:
                warnings += _drop(tagged, off_gate, new, old)
            else:
                warnings += self._stage_warnings(tagged, tag, status, new, old)
        return warnings

    def _plan(self, paths: Iterable[TaggedPath]) -> tuple[_Step, ...]:
        """The tags of ``paths`` a write must act on, in order; remembered per tuple.

        A store passes the same tuple on every write, and a server's gates and
        emulated release are settled before it serves, so which tags drop a field
        and which warn is worked out once: most tags (beta or GA fields) need
        nothing, and resolving each (release arithmetic, the gate's history) on
        every write was a measurable share of a Deployment create.
        """
        if not isinstance(paths, tuple):
            return self._steps(paths)
        entry = self._plans.get(id(paths))
        if entry is None or entry[0] is not paths:
            if len(self._plans) >= _MAX_PLANS:  # custom resources' stores come and go
                self._plans.clear()
            entry = self._plans[id(paths)] = (paths, self._steps(paths))
        return entry[1]

    def _steps(self, paths: Iterable[TaggedPath]) -> tuple[_Step, ...]:
        """Per path, its tags that warn, up to the first whose gate is off (which drops)."""
        steps: list[_Step] = []
        for tagged in paths:
            for tag in tagged.tags:
                if self._disabled(tag):
                    steps.append((tagged, tag, tag.feature_gate or "", ""))
                    break
                status = self._status(tag)
                if status in ("alpha", "deprecated"):
                    steps.append((tagged, tag, None, status))
        return tuple(steps)

    def _disabled(self, tag: FieldLifecycle) -> bool:
        """Only Kubernetes gates kapi knows can be off; a CRD's project gates are labels."""
        gate = tag.feature_gate
        return (
            tag.component == "kubernetes"
            and gate in KNOWN_FEATURES
            and not self._gates.enabled(gate or "")
        )

    def _status(self, tag: FieldLifecycle) -> str | None:
        if tag.component == "kubernetes":
            resolved = at_version(tag, self._gates.emulated_version)
            return resolved.status if resolved is not None else None
        return tag.status

    def _stage_warnings(
        self,
        tagged: TaggedPath,
        tag: FieldLifecycle,
        status: str,
        new: Object,
        old: Object | None,
    ) -> list[str]:
        before = {where: value for where, value, _ in tagged.values(old)} if old else {}
        changed = [
            where for where, value, _ in tagged.values(new) if before.get(where, _UNSET) != value
        ]
        if changed and status == "deprecated" and self._on_deprecated is not None:
            self._on_deprecated(str(tagged))
        return [stage_warning(where, status, tag.feature_gate) for where in changed]


_UNSET = object()

#: Plans a policy keeps: one per store (kind and version served), with room for CRD churn.
_MAX_PLANS = 1024

#: One action of a write: the tagged path, the tag, the gate that is off (the field is
#: dropped) or ``None``, and otherwise the stage its warning names.
_Step = tuple[TaggedPath, FieldLifecycle, str | None, str]


def _drop(tagged: TaggedPath, gate: str, new: Object, old: Object | None) -> list[str]:
    """Remove the field everywhere ``new`` sets it, unless ``old`` already used it."""
    if old is not None and next(tagged.values(old), None) is not None:
        return []
    name = tagged.path[-1]
    places = list(tagged.values(new))
    for _, _, parent in places:
        del parent[name]
    return [dropped_warning(where, gate) for where, _, _ in places]
