"""``tests.helpers.kubectl.kubectl_binary``: how every test finds the kubectl release it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

import tests.conftest as shared
from tests.helpers import kubectl as helpers
from tests.helpers.kubectl import DEFAULT_VERSION, kubectl_binary


@pytest.fixture
def releases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty KUBECTL_DIR of the test's own, and a PATH holding an unversioned kubectl."""
    directory = tmp_path / "releases"
    directory.mkdir()
    monkeypatch.setattr(helpers, "KUBECTL_DIR", str(directory))
    on_path = tmp_path / "bin"
    on_path.mkdir()
    install(on_path, "kubectl")
    monkeypatch.setenv("PATH", str(on_path))
    return directory


def install(directory: Path, name: str) -> Path:
    binary = directory / name
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    return binary


def test_a_release_is_its_versioned_binary(releases: Path) -> None:
    wanted = install(releases, "kubectl.1.29")
    install(releases, "kubectl.1.33")
    assert kubectl_binary("1.29") == str(wanted)


def test_without_a_version_it_is_the_default_release(releases: Path) -> None:
    wanted = install(releases, f"kubectl.{DEFAULT_VERSION}")
    assert kubectl_binary() == str(wanted)


def test_a_missing_release_fails_in_ci_even_with_kubectl_on_path(
    releases: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared, "IN_CI", True)
    with pytest.raises(pytest.fail.Exception) as failed:
        kubectl_binary("1.29")
    assert str(failed.value) == f"{releases}/kubectl.1.29 is required in CI but is not installed"


def test_a_missing_release_skips_outside_ci(
    releases: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shared, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception) as skipped:
        kubectl_binary("1.29")
    assert str(skipped.value) == f"{releases}/kubectl.1.29 is not installed"
