"""Which hand-written errors of a built-in kind's update ratchet (kapi beyond upstream)."""

from __future__ import annotations

import copy
import pathlib
from typing import Any

import pytest

from kapi.apimachinery.field_errors import (
    FieldError,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
)
from kapi.apis import builtin_resources
from kapi.runtime.schema import INT32, STRING, Field, List, Scalar, Struct
from kapi.validation.declarative import DeclarativeValidation, declared_rules

WIDGET = Struct(
    "io.example.Widget",
    (
        Field("metadata", Struct("io.example.Meta", (Field("name", STRING),))),
        Field("size", Scalar("string", enum=("S", "M")), required=True),
        Field("note", STRING),
        Field("count", INT32),
        Field("parts", List(Struct("io.example.Part", (Field("name", STRING),)), "map", ("name",))),
        Field(
            "spec",
            Struct(
                "io.example.WidgetSpec",
                (
                    Field("mode", Scalar("string", enum=("On", "Off"))),
                    Field("color", STRING),
                    Field("owner", STRING, required=True),
                ),
            ),
        ),
    ),
)


class Counted:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str, int]] = []

    def count_ratcheted(self, group: str, resource: str, source: str, count: int) -> None:
        self.calls.append((group, resource, source, count))


@pytest.fixture
def counted() -> Counted:
    return Counted()


@pytest.fixture
def engine(counted: Counted) -> DeclarativeValidation:
    return DeclarativeValidation(None, ratcheting=counted)


def _ratchet(
    engine: DeclarativeValidation, new: Any, old: Any, errors: list[FieldError]
) -> list[str]:
    return [str(e) for e in engine.ratchet(WIDGET, "example.io", "widgets", new, old, errors)]


OLD = {
    "metadata": {"name": "w"},
    "size": "S",
    "spec": {"mode": "Sometimes", "color": "red", "owner": "me"},
}
MODE = not_supported(Path("spec", "mode"), "Sometimes", ("On", "Off"))


def test_an_unchanged_enum_value_is_forgiven_and_counted(
    engine: DeclarativeValidation, counted: Counted
) -> None:
    new = copy.deepcopy(OLD)
    new["spec"]["color"] = "blue"
    assert _ratchet(engine, new, OLD, [MODE]) == []
    assert counted.calls == [("example.io", "widgets", "declarative", 1)]


def test_a_changed_enum_value_is_not(engine: DeclarativeValidation, counted: Counted) -> None:
    new = copy.deepcopy(OLD)
    new["spec"]["mode"] = "Never"
    error = not_supported(Path("spec", "mode"), "Never", ("On", "Off"))
    assert _ratchet(engine, new, OLD, [error]) == [str(error)]
    assert counted.calls == []


def test_other_errors_of_the_update_stay(engine: DeclarativeValidation) -> None:
    new = copy.deepcopy(OLD)
    new["note"] = "x"
    cross_field = invalid(Path("spec"), "x", "mode and color disagree")
    assert _ratchet(engine, new, OLD, [MODE, cross_field]) == [str(cross_field)]


def test_without_the_gate_nothing_is_forgiven() -> None:
    engine = DeclarativeValidation(lambda: None)
    new = copy.deepcopy(OLD)
    assert engine.ratchet(WIDGET, "example.io", "widgets", new, OLD, [MODE]) == [MODE]


def test_a_missing_required_field_ratchets_while_its_object_is_unchanged(
    engine: DeclarativeValidation,
) -> None:
    old = {"metadata": {"name": "w"}, "size": "S", "spec": {"mode": "On"}}
    missing = required(Path("spec", "owner"))
    assert _ratchet(engine, {**old, "note": "x"}, old, [missing]) == []
    changed = {**old, "spec": {"mode": "Off"}}
    assert _ratchet(engine, changed, old, [missing]) == [str(missing)]


def test_a_required_field_of_the_object_itself_never_ratchets(
    engine: DeclarativeValidation,
) -> None:
    """The root always holds metadata, which the declaration leaves out: never unchanged."""
    old = {"metadata": {"name": "w"}, "spec": {"mode": "On", "owner": "me"}}
    missing = required(Path("size"))
    assert _ratchet(engine, copy.deepcopy(old), old, [missing]) == [str(missing)]


def test_invalid_errors_never_ratchet(engine: DeclarativeValidation, counted: Counted) -> None:
    """An int32 out of range shares field and type with stricter hand-written bounds."""
    old = {"metadata": {"name": "w"}, "size": "S", "count": 1 << 40}
    new = {**old, "note": "x"}
    bound = invalid(Path("count"), 1 << 40, "must be between 1 and 65535, inclusive")
    assert _ratchet(engine, new, old, [bound]) == [str(bound)]
    assert counted.calls == []


def test_duplicate_map_keys_never_ratchet(engine: DeclarativeValidation) -> None:
    old = {"metadata": {"name": "w"}, "size": "S", "parts": [{"name": "a"}, {"name": "a"}]}
    new = {**old, "note": "x"}
    error = duplicate(Path("parts").index(1), {"name": "a"})
    assert _ratchet(engine, new, old, [error]) == [str(error)]


def test_shadow_mode_off_compares_nothing() -> None:
    """With only ratcheting on, an error the hand-written checks miss is no mismatch."""
    engine = DeclarativeValidation(None, ratcheting=Counted())
    assert engine.compare(WIDGET, {"size": "L"}, [])


# --- docs/builtin-ratcheting.md lists the declared rules ---------------------------------------

DOC = pathlib.Path(__file__).parents[2] / "docs" / "builtin-ratcheting.md"
BEGIN = "<!-- declared rules: generated from the declarations, checked by tests/unit -->"
END = "<!-- end of declared rules -->"


def render_rules() -> str:
    """The rule tables of the docs: one per declaration, with the resources it serves."""
    served: dict[str, list[str]] = {}
    structs: dict[str, Struct] = {}
    for resource in builtin_resources():
        struct = resource.versions[resource.hub_version].schema
        assert struct is not None
        structs.setdefault(struct.name, struct)
        group = resource.group or "core"
        served.setdefault(struct.name, []).append(f"{group} {resource.plural}")
    lines = []
    for name, struct in structs.items():
        kind = name.rsplit(".", 1)[1]
        lines += [
            "",
            f"### {kind}",
            "",
            f"Declaration `{name}`, served as: " + ", ".join(f"`{s}`" for s in served[name]) + ".",
            "",
        ]
        rules = declared_rules(struct)
        if not rules:
            lines.append("No constraints declared.")
            continue
        lines += ["| Field | Declared rule | Ratchets |", "| --- | --- | --- |"]
        for rule in rules:
            verdict = "yes" if rule.ratchets else f"no ({rule.why_not})"
            lines.append(f"| `{rule.field}` | {rule.rule} | {verdict} |")
    return "\n".join([BEGIN, *lines, "", END])


def test_the_docs_list_every_declared_rule() -> None:
    text = DOC.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    assert text[start:end] == render_rules(), "regenerate: render_rules() in this file"
