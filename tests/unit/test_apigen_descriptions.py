"""kapi's own field descriptions for the generated built-in types
(tools/apigen/descriptions/<group>.yaml): every file loads, every entry is a
short non-empty string keyed by a Go type name, and none carries the
boilerplate that marks text lifted from upstream's Go comments."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

DESCRIPTIONS = Path(__file__).resolve().parents[2] / "tools" / "apigen" / "descriptions"

GROUPS = [
    "core",
    "authentication",
    "apps",
    "extensions",
    "batch",
    "autoscaling",
    "rbac",
    "storage",
    "scheduling",
    "node",
    "networking",
    "certificates",
    "flowcontrol",
    "policy",
]

# "<Type>" or "<version>/<Type>", as the generator looks them up.
TYPE_KEY = re.compile(r"^(v[0-9]+((alpha|beta)[0-9]+)?/)?[A-Z][A-Za-z0-9]*$")
FIELD_KEY = re.compile(r"^(\.|[a-zA-Z][A-Za-z0-9]*)$")

# Phrases that only appear in text taken over from upstream's Go comments.
UPSTREAM_BOILERPLATE = [
    "More info:",
    "https://",
    "http://",
    "This field is",
    "Standard object's metadata",
    "Standard list metadata",
    "+optional",
    "+listType",
    "+featureGate",
    "TODO",
]

# A description is one or two short sentences.
MAX_LENGTH = 300


def load(group: str) -> dict[str, Any]:
    data = yaml.safe_load((DESCRIPTIONS / f"{group}.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict), group
    return data


def entries(group: str) -> list[tuple[str, str, Any]]:
    return [
        (type_key, field, text)
        for type_key, fields in load(group).items()
        for field, text in (fields.items() if isinstance(fields, dict) else [("?", fields)])
    ]


@pytest.mark.parametrize("group", GROUPS)
def test_every_type_key_names_a_go_type_with_a_field_map(group: str) -> None:
    data = load(group)
    assert data
    bad = [
        key
        for key, fields in data.items()
        if not TYPE_KEY.match(str(key)) or not isinstance(fields, dict)
    ]
    assert bad == []


@pytest.mark.parametrize("group", GROUPS)
def test_every_plain_type_describes_itself(group: str) -> None:
    data = load(group)
    missing = [key for key, fields in data.items() if "/" not in key and "." not in fields]
    assert missing == []


@pytest.mark.parametrize("group", GROUPS)
def test_every_description_is_a_short_non_empty_string(group: str) -> None:
    bad = [
        (type_key, field)
        for type_key, field, text in entries(group)
        if not FIELD_KEY.match(str(field))
        or not isinstance(text, str)
        or not text.strip()
        or len(text) > MAX_LENGTH
    ]
    assert bad == []


@pytest.mark.parametrize("group", GROUPS)
def test_no_description_carries_upstream_boilerplate(group: str) -> None:
    bad = [
        (type_key, field, phrase)
        for type_key, field, text in entries(group)
        for phrase in UPSTREAM_BOILERPLATE
        if isinstance(text, str) and phrase.lower() in text.lower()
    ]
    assert bad == []


def test_inline_embedded_fields_are_merged_into_the_outer_type() -> None:
    core = load("core")
    # Volume embeds VolumeSource, Probe embeds ProbeHandler, EphemeralContainer
    # embeds EphemeralContainerCommon: the outer type carries their fields.
    assert set(core["VolumeSource"]) - {"."} <= set(core["Volume"])
    assert set(core["ProbeHandler"]) - {"."} <= set(core["Probe"])
    assert set(core["EphemeralContainerCommon"]) - {"."} <= set(core["EphemeralContainer"])
    assert core["Volume"]["."] != core["VolumeSource"]["."]


def test_the_checks_catch_lifted_text() -> None:
    lifted = "Standard object's metadata. More info: https://git.k8s.io/community"
    assert any(phrase.lower() in lifted.lower() for phrase in UPSTREAM_BOILERPLATE)
    assert not TYPE_KEY.match("apps/v1/Deployment")
    assert TYPE_KEY.match("v1beta1/DeploymentSpec")


def generated_structs() -> dict[int, tuple[Any, list[tuple[str, str, str]]]]:
    """Every Struct the generated modules export under a Go type name, with the
    (group, version, attribute) places it is exported from."""
    import importlib
    import pkgutil

    from kapi.runtime import meta
    from kapi.runtime.schema import Struct

    package = importlib.import_module("kapi.apis.generated")
    shared = {id(value) for value in vars(meta).values() if isinstance(value, Struct)}
    found: dict[int, tuple[Any, list[tuple[str, str, str]]]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        group, _, version = info.name.rpartition("_")
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for attribute, value in vars(module).items():
            if isinstance(value, Struct) and attribute[:1].isupper() and id(value) not in shared:
                found.setdefault(id(value), (value, []))[1].append((group, version, attribute))
    return found


def test_every_generated_field_has_a_description_here() -> None:
    loaded = {group: load(group) for group in GROUPS}
    missing = []
    for struct, places in generated_structs().values():
        for field in struct.fields:
            if field.name in ("apiVersion", "kind"):
                continue
            described = any(
                field.name in loaded.get(group, {}).get(f"{version}/{name}", {})
                or field.name in loaded.get(group, {}).get(name, {})
                for group, version, name in places
            )
            if not described:
                missing.append(f"{places[0][0]}/{places[0][1]} {places[0][2]}.{field.name}")
    assert missing == []
