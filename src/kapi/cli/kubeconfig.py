"""The kubeconfig ``kapi serve`` writes, so ``KUBECONFIG=… kubectl`` works at once."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

CONTEXT = "kapi"


def path_for(data_dir: Path) -> Path:
    return data_dir / "kubeconfig"


def write(data_dir: Path, server: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": {"server": server}}],
        "users": [{"name": CONTEXT, "user": {}}],
        "contexts": [
            {
                "name": CONTEXT,
                "context": {"cluster": CONTEXT, "user": CONTEXT, "namespace": "default"},
            }
        ],
        "current-context": CONTEXT,
        "preferences": {},
    }
    data_dir.mkdir(parents=True, exist_ok=True)
    path = path_for(data_dir).resolve()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(config, sort_keys=False))
    os.replace(tmp, path)
    return path
