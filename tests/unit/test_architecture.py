"""kapi's import graph: no cycles, and only the entry points assemble the server.

The order of the layers is import-linter's to check (``lint-imports``, with the
contracts in pyproject.toml).  This checks what a layers contract does not: that
no modules import each other round in a circle, within a package as much as
across packages, and counting imports made only for type checking; and that
nothing but ``kapi.server`` itself and ``kapi.cli`` imports ``kapi.server``.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """This checkout's import graph, ``if TYPE_CHECKING:`` imports included.

    ``kapi`` is a namespace package, so another checkout on ``sys.path`` (an
    editable install of it) would be a second portion that grimp merged in:
    only this one's ``src`` is left on the path while the graph is built.
    """
    saved = sys.path[:]
    sys.path[:] = [str(SRC)] + [p for p in saved if not (Path(p or ".") / "kapi").is_dir()]
    try:
        return grimp.build_graph("kapi", exclude_type_checking_imports=False, cache_dir=None)
    finally:
        sys.path[:] = saved


def test_the_graph_is_this_checkout(graph: grimp.ImportGraph) -> None:
    on_disk = {
        ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        for path in (SRC / "kapi").rglob("*.py")
    }
    assert graph.modules == on_disk | {"kapi"}


def test_no_import_cycles(graph: grimp.ImportGraph) -> None:
    """No strongly connected component of more than one module."""
    cycles: list[list[str]] = []
    seen: set[str] = set()
    for module in sorted(graph.modules):
        if module in seen:
            continue
        imported = graph.find_upstream_modules(module)
        importers = graph.find_downstream_modules(module)
        component = (imported & importers) | {module}
        seen |= component
        if len(component) > 1:
            cycles.append(sorted(component))
    assert cycles == []


def test_only_the_entry_points_import_the_server(graph: grimp.ImportGraph) -> None:
    importers = {
        m
        for m in graph.find_modules_that_directly_import("kapi.server")
        if m != "kapi.server" and m != "kapi.cli" and not m.startswith("kapi.cli.")
    }
    assert importers == set()


def test_every_package_has_a_layer(graph: grimp.ImportGraph) -> None:
    """A new top-level package must be placed in the layers contract (kapi.client stands apart)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    [layers] = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    placed = {name.strip() for layer in layers for name in re.split(r"[|:]", layer)}
    top_level = {".".join(m.split(".")[:2]) for m in graph.modules if m != "kapi"}
    assert top_level - placed == {"kapi.client"}


def test_object_is_named_once() -> None:
    """The JSON object type has one definition, which every module imports."""
    defined = sorted(
        str(path.relative_to(SRC))
        for path in (SRC / "kapi").rglob("*.py")
        if re.search(r"^Object(: TypeAlias)? = ", path.read_text(), re.M)
    )
    assert defined == ["kapi/apimachinery/unstructured.py"]
