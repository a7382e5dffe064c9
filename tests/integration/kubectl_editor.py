"""A scripted stand-in for the user's editor, for ``kubectl edit`` tests.

kubectl runs ``$KUBE_EDITOR <file>`` and waits for it, once per pass of its edit
loop (it reopens the file after an invalid edit). Set ``KUBE_EDITOR`` to
``python kubectl_editor.py <plan.json>``; the plan is a JSON list with one entry
per expected invocation::

    [{"run": [[argv...], ...], "set": [[path, value], ...], "delete": [path, ...]}, ...]

On invocation ``n`` the script saves the file as kubectl showed it to
``shown-<n><suffix>`` beside the plan (so tests can read kubectl's error header),
runs the ``run`` commands (changes made on the server while the "user" edits),
then sets each ``path`` (a list of keys and list indexes) to ``value`` and
removes each ``delete`` path in the document. An entry without either leaves
the file byte for byte unchanged, which is how a user saves without editing.
An invocation the plan does not expect exits 1, so kubectl reports an editor
failure instead of looping forever.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml


def set_path(document: Any, path: list[str | int], value: Any) -> None:
    """Set one field, creating the maps on the way as a user typing them would."""
    *parents, last = path
    node = document
    for key in parents:
        node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]
    node[last] = value


class QuotingDumper(yaml.SafeDumper):
    """Quotes every string: kubectl reads YAML 1.1, where a bare ``y`` or ``on`` is a bool."""


QuotingDumper.add_representer(
    str, lambda dumper, text: dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"')
)


def delete_path(document: Any, path: list[str | int]) -> None:
    *parents, last = path
    node = document
    for key in parents:
        node = node[key]
    del node[last]


def rewrite(file: Path, changes: list[list[Any]], deletions: list[list[str | int]]) -> None:
    """Apply the changes to the JSON or YAML document kubectl wrote (comments are dropped)."""
    as_json = file.suffix == ".json"
    text = file.read_text()
    document = json.loads(strip_comments(text)) if as_json else yaml.safe_load(text)
    for path, value in changes:
        set_path(document, path, value)
    for path in deletions:
        delete_path(document, path)
    file.write_text(
        json.dumps(document, indent=4) if as_json else yaml.dump(document, Dumper=QuotingDumper)
    )


def strip_comments(text: str) -> str:
    """kubectl puts ``#`` comment lines above JSON too; a JSON parser would reject them."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("#"))


def run_all(commands: list[list[str]], log: Path) -> None:
    """Run the concurrent changes; their output goes to a log, not into kubectl's stdout."""
    with log.open("a") as out:
        for argv in commands:
            subprocess.run(argv, stdout=out, stderr=out, check=True)


def main(plan_file: str, file: str) -> int:
    plan_path = Path(plan_file)
    edited = Path(file)
    shown = sorted(plan_path.parent.glob("shown-*"))
    invocation = len(shown)
    (plan_path.parent / f"shown-{invocation}{edited.suffix}").write_text(edited.read_text())
    plan = json.loads(plan_path.read_text())
    if invocation >= len(plan):
        print(f"editor: unexpected invocation {invocation + 1}", file=sys.stderr)
        return 1
    step = plan[invocation]
    run_all(step.get("run", []), plan_path.parent / "editor-commands.log")
    if "set" in step or "delete" in step:
        rewrite(edited, step.get("set", []), step.get("delete", []))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
