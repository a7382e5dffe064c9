"""Declarations generated from upstream's API definitions (tools/apigen).

Each module is one k8s.io/api package: a ``Struct`` per Go type under its Go
name and its protobuf message name under the UPPER_SNAKE name.  This package
holds what the generated modules share: :func:`gated`, the KEP-2558 lifecycle
tags of a field behind upstream ``+featureGate`` markers.
"""

from __future__ import annotations

from kapi.features import KNOWN_FEATURES, Stage, spec_at
from kapi.runtime.lifecycle import FieldLifecycle
from kapi.version import DEFAULT_VERSION


def gated(*gates: str) -> tuple[FieldLifecycle, ...]:
    """The lifecycle tags of a field guarded by ``gates``, at the release kapi models.

    A gate kapi does not know yet, or one that is GA, gives no tag; otherwise the
    tag names the release the gate first appeared in and its stage now, as
    ``kapi lint lifecycle`` checks.
    """
    tags = []
    for gate in gates:
        specs = KNOWN_FEATURES.get(gate)
        if specs is None:
            continue
        stage = spec_at(gate, DEFAULT_VERSION).stage
        if stage in (Stage.GA, Stage.PRE_ALPHA):
            continue
        first = next(spec.since for spec in specs if spec.stage is not Stage.PRE_ALPHA)
        tags.append(FieldLifecycle(f"v{first}", stage.value.lower(), gate))
    return tuple(tags)
