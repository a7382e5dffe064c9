"""Events as clients write them: core/v1 as client-go's record package does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any


def ago(seconds: int, micro: bool = False) -> str:
    """The time ``seconds`` ago, as a metav1.Time (or MicroTime) string."""
    then = datetime.now(UTC) - timedelta(seconds=seconds)
    return then.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


def reference(obj: dict[str, Any]) -> dict[str, str]:
    """An ObjectReference to ``obj``."""
    metadata = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": metadata["name"],
        "namespace": metadata["namespace"],
        "uid": metadata["uid"],
    }


def old_style(name: str, about: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """A core/v1 event as client-go's record package writes them."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": reference(about),
        "reason": "BackOff",
        "message": "back-off restarting",
        "type": "Warning",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": ago(3600),
        "lastTimestamp": ago(20 * 60 + 10),
        "count": 2,
        **fields,
    }
