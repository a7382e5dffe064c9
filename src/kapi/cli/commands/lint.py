"""``lint lifecycle``: check the KEP-2558 lifecycle tags of the built-in kinds.

Each field's tags are checked against the KEP's syntax rules and against the
versioned spec of the gate they name (:mod:`kapi.features`), at the release kapi
models:

* ``minVersion`` looks like ``v1.31``;
* ``status`` is ``alpha``, ``beta`` or ``deprecated``;
* the gate is one kapi knows;
* the tag agrees with the gate: ``minVersion`` is the release the gate (and the
  field) first appeared in, ``status`` is the gate's stage now, and a gate that is
  GA leaves its field untagged;
* a field guarded by a non-GA gate carries a tag: a field declaring its gate
  (``Field(gate=...)``, which tools/apigen writes from upstream's ``+featureGate``
  markers) and the hand-declared kinds' fields listed in
  :data:`kapi.features.GATED_FIELDS`, each of which must exist.

Each problem names the file and line of the ``Field(...)`` declaration, so a
wrong tag fails CI with a pointer to the fix.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from kapi.apis import builtin_resources
from kapi.features import GATED_FIELDS, KNOWN_FEATURES, Stage, spec_at
from kapi.runtime.lifecycle import MIN_VERSION, STATUSES
from kapi.runtime.schema import Field, Struct
from kapi.version import DEFAULT_VERSION, Version


@dataclass(frozen=True)
class Problem:
    """One lint finding, located at a field's declaration."""

    path: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.message}"


def project_structs() -> list[Struct]:
    """Every named struct the built-in kinds reach, sorted by definition name."""
    refs: dict[str, Struct] = {}
    for resource in builtin_resources():
        for rv in resource.versions.values():
            if rv.schema is not None:
                rv.schema.openapi(refs)
    done: set[str] = set()
    while len(done) < len(refs):
        for name in sorted(set(refs) - done):
            refs[name].definition(refs)
            done.add(name)
    return [refs[name] for name in sorted(refs)]


def _first_release(gate: str) -> Version | None:
    for spec in KNOWN_FEATURES[gate]:
        if spec.stage is not Stage.PRE_ALPHA:
            return spec.since
    return None


def _check_field(struct: Struct, f: Field, version: Version, gated: str | None) -> Iterable[str]:
    kubernetes_tags = [t for t in f.lifecycle if t.component == "kubernetes"]
    for tag in f.lifecycle:
        if tag.component == "kubernetes" and not MIN_VERSION.fullmatch(tag.min_version):
            yield (f"{tag}: minVersion {tag.min_version!r} does not match ^{MIN_VERSION.pattern}$")
        if tag.status is not None and tag.status not in STATUSES:
            yield f"{tag}: status {tag.status!r} is not one of {', '.join(STATUSES)}"
    for tag in kubernetes_tags:
        if tag.feature_gate is None:
            yield f"{tag}: a kubernetes tag names its featureGate"
            continue
        if tag.feature_gate not in KNOWN_FEATURES:
            yield f"{tag}: feature gate {tag.feature_gate!r} is not in kapi.features"
            continue
        stage = spec_at(tag.feature_gate, version).stage
        if stage is Stage.GA:
            yield f"{tag}: {tag.feature_gate} is GA in {version}: a GA field carries no tag"
            continue
        if stage is Stage.PRE_ALPHA:
            yield f"{tag}: {tag.feature_gate} does not exist yet in {version}"
            continue
        expected_status = stage.value.lower()
        if tag.status != "deprecated" and tag.status != expected_status:
            yield f"{tag}: {tag.feature_gate} is {expected_status} in {version}"
        first = _first_release(tag.feature_gate)
        if first is not None and tag.min_version != f"v{first}":
            yield f"{tag}: {tag.feature_gate} first appeared in v{first}"
        if gated is not None and gated != tag.feature_gate:
            yield f"{tag}: the field is guarded by {gated}"
    if gated is not None and not kubernetes_tags and gated in KNOWN_FEATURES:
        stage = spec_at(gated, version).stage
        if stage not in (Stage.GA, Stage.PRE_ALPHA):
            status = stage.value.lower()
            yield f"guarded by {gated} ({status} in {version}) but has no lifecycle tag"


def lint(
    structs: Iterable[Struct],
    version: Version = DEFAULT_VERSION,
    gated_fields: dict[tuple[str, str], str] | None = None,
) -> list[Problem]:
    """The lifecycle problems of ``structs`` at release ``version``.

    A field's gate is its own (``Field.gate``) or its entry in ``gated_fields``
    (default: the hand-declared kinds' table), each of which must exist in ``structs``.
    """
    gated_fields = GATED_FIELDS if gated_fields is None else gated_fields
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for struct in structs:
        for f in struct.fields:
            key = (struct.name, f.name)
            seen.add(key)
            path, line = f.declared_at
            for message in _check_field(struct, f, version, f.gate or gated_fields.get(key)):
                problems.append(Problem(_relative(path), line, f"{struct.name}.{f.name}", message))
    for (definition, prop), gate in sorted(gated_fields.items()):
        if (definition, prop) not in seen:
            where = f"{definition}.{prop}"
            problems.append(Problem("kapi/features.py", 0, where, f"{gate} guards no such field"))
    return problems


def _relative(path: str) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def main(args: argparse.Namespace) -> int:
    problems = lint(project_structs())
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} lifecycle problem(s)", file=sys.stderr)
        return 1
    print("lifecycle tags: ok")
    return 0


def register(sub: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("lint", help="check kapi's own declarations")
    checks = parser.add_subparsers(dest="lint_check", required=True)
    lifecycle = checks.add_parser(
        "lifecycle",
        help="check the KEP-2558 field lifecycle tags against the feature gates",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    lifecycle.set_defaults(command_main=main)
