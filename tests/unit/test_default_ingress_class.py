"""The DefaultIngressClass plugin's choice among IngressClasses marked default."""

from __future__ import annotations

from typing import Any

from kapi.admission.default_ingress_class import default_class

MARK = "ingressclass.kubernetes.io/is-default-class"


def klass(name: str, created: str, mark: str | None = "true") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "creationTimestamp": created}
    if mark is not None:
        metadata["annotations"] = {MARK: mark}
    return {"metadata": metadata}


def test_no_marked_class_means_no_default() -> None:
    assert default_class([]) is None
    unmarked = [klass("a", "2024-01-01T00:00:00Z", None), klass("b", "2024-01-01T00:00:00Z", "1")]
    assert default_class(unmarked) is None


def test_the_newest_marked_class_wins_then_the_lowest_name() -> None:
    older = klass("a", "2024-01-01T00:00:00Z")
    newer = klass("z", "2024-06-01T00:00:00Z")
    twin = klass("m", "2024-06-01T00:00:00Z")
    assert default_class([older, newer])["metadata"]["name"] == "z"  # type: ignore[index]
    assert default_class([older, newer, twin])["metadata"]["name"] == "m"  # type: ignore[index]
