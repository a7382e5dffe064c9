"""``kapi lint lifecycle``: clean on the project, and one bad tag per rule."""

from __future__ import annotations

import inspect

import pytest

from kapi.cli.commands.lint import Problem, lint, project_structs
from kapi.cli.main import main
from kapi.runtime.lifecycle import FieldLifecycle
from kapi.runtime.schema import STRING, Field, Struct
from kapi.version import Version

NAME = "io.example.v1.FrobberSpec"
GATE = "CoordinatedLeaderElection"  # alpha 1.31, beta 1.33


def frobber(*tags: FieldLifecycle) -> tuple[Struct, int]:
    """A struct whose ``width`` field carries ``tags``, and the line declaring it."""
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    width = Field("width", STRING, "how wide", lifecycle=tags)
    return Struct(NAME, (Field("height", STRING), width)), line


def problems(*tags: FieldLifecycle, **kwargs: object) -> list[Problem]:
    struct, line = frobber(*tags)
    kwargs.setdefault("gated_fields", {})  # the project's gated fields are not in ``struct``
    found = lint([struct], **kwargs)  # type: ignore[arg-type]
    for problem in found:
        if problem.field == f"{NAME}.width":
            assert problem.path.endswith("test_lint_lifecycle.py")
            assert problem.line == line
    return found


def messages(*tags: FieldLifecycle, **kwargs: object) -> list[str]:
    return [p.message for p in problems(*tags, **kwargs)]


def test_project_is_clean() -> None:
    assert lint(project_structs()) == []


def test_command_on_the_project(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "lifecycle"]) == 0
    assert capsys.readouterr().out == "lifecycle tags: ok\n"


def test_good_tag() -> None:
    assert messages(FieldLifecycle("v1.31", "beta", GATE)) == []
    assert messages(FieldLifecycle("v1.31", "alpha", GATE), version=Version(1, 32)) == []
    assert messages(FieldLifecycle("v1.31", "deprecated", GATE)) == []
    assert messages(FieldLifecycle("v3.0.0", component="istio")) == []


@pytest.mark.parametrize("min_version", ["1.31", "v1.031", "v0.1", "v1.31.0", "v1"])
def test_min_version_syntax(min_version: str) -> None:
    assert any(
        "does not match ^v[1-9][0-9]*\\.(0|[1-9][0-9]*)$" in m
        for m in messages(FieldLifecycle(min_version, "beta", GATE))
    )


def test_status_must_be_alpha_beta_or_deprecated() -> None:
    assert messages(FieldLifecycle("v1.31", "stable", GATE))[0].endswith(
        "status 'stable' is not one of alpha, beta, deprecated"
    )


def test_gate_must_exist() -> None:
    tag = FieldLifecycle("v1.31", "beta", "Frobber2D")
    assert messages(tag) == [f"{tag}: feature gate 'Frobber2D' is not in kapi.features"]


def test_status_must_match_the_gates_stage() -> None:
    tag = FieldLifecycle("v1.31", "alpha", GATE)
    assert messages(tag) == [f"{tag}: {GATE} is beta in 1.33"]


def test_min_version_must_be_the_gates_first_release() -> None:
    tag = FieldLifecycle("v1.33", "beta", GATE)
    assert messages(tag) == [f"{tag}: {GATE} first appeared in v1.31"]


def test_ga_gate_field_has_no_tag() -> None:
    tag = FieldLifecycle("v1.21", "beta", "TopologyAwareHints")
    assert messages(tag) == [f"{tag}: TopologyAwareHints is GA in 1.33: a GA field carries no tag"]


def test_listed_gated_field_must_exist() -> None:
    struct, _ = frobber()
    (problem,) = lint([struct], gated_fields={(NAME, "depth"): GATE})
    assert (problem.field, problem.message) == (f"{NAME}.depth", f"{GATE} guards no such field")


def test_gated_field_must_be_tagged() -> None:
    gated = {(NAME, "width"): GATE}
    assert messages(gated_fields=gated) == [
        f"guarded by {GATE} (beta in 1.33) but has no lifecycle tag"
    ]
    assert messages(FieldLifecycle("v1.31", "beta", GATE), gated_fields=gated) == []


def test_a_field_declaring_its_gate_must_be_tagged() -> None:
    """``Field(gate=...)`` (the generated kinds' ``+featureGate`` markers) counts as the table."""
    gate = "PodLevelResources"  # alpha from 1.32
    (problem,) = lint([Struct(NAME, (Field("width", STRING, gate=gate),))], gated_fields={})
    assert (problem.field, problem.message) == (
        f"{NAME}.width",
        f"guarded by {gate} (alpha in 1.33) but has no lifecycle tag",
    )
    tag = FieldLifecycle("v1.32", "alpha", gate)
    tagged = Field("width", STRING, lifecycle=(tag,), gate=gate)
    assert lint([Struct(NAME, (tagged,))], gated_fields={}) == []
    # A GA gate's field wants no tag; a deprecated gate's field wants "deprecated".
    sidecar = Field("width", STRING, gate="SidecarContainers")
    assert lint([Struct(NAME, (sidecar,))], gated_fields={}) == []
    allocated = Field("width", STRING, gate="InPlacePodVerticalScalingAllocatedStatus")
    (problem,) = lint([Struct(NAME, (allocated,))], gated_fields={})
    assert problem.message == (
        "guarded by InPlacePodVerticalScalingAllocatedStatus (deprecated in 1.33) "
        "but has no lifecycle tag"
    )
    other = Field("width", STRING, lifecycle=(tag,), gate="SidecarContainers")
    assert [p.message for p in lint([Struct(NAME, (other,))], gated_fields={})] == [
        f"{tag}: the field is guarded by SidecarContainers"
    ]


def test_command_fails_on_a_bad_tag(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    struct, line = frobber(FieldLifecycle("v1.31", "alpha", GATE))
    monkeypatch.setattr("kapi.cli.commands.lint.project_structs", lambda: [struct])
    monkeypatch.setattr("kapi.cli.commands.lint.GATED_FIELDS", {})
    assert main(["lint", "lifecycle"]) == 1
    err = capsys.readouterr().err
    assert f"test_lint_lifecycle.py:{line}: {NAME}.width: " in err
    assert err.endswith("1 lifecycle problem(s)\n")
