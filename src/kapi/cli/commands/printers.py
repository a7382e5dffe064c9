"""Output as kubectl prints it: server-side Tables, ``-o yaml``, ``-o json`` and ``-o name``.

The byte-for-byte details follow kubectl (cli-runtime's printers), because
scripts diff and grep this output:

* tables are aligned like Go's ``tabwriter`` with kubectl's settings (each
  column as wide as its widest cell plus 3 spaces, the last column unpadded),
  headers upper-cased, ``priority > 0`` columns only with ``-o wide``;
* YAML has sorted keys, block style, Go-yaml's quoting (double quotes for a
  string that would read back as another type, literal blocks for multi-line);
* JSON is indented by 4 with sorted keys and Go's HTML-safe escapes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import yaml

from kapi.apimachinery.gotext import go_html_escape, go_sprint
from kapi.apimachinery.unstructured import Object

#: Go's ``tabwriter`` padding as kubectl configures it.
_PADDING = 3


def align(rows: Sequence[Sequence[str]], padding: int = _PADDING) -> list[str]:
    """Lines of ``rows`` aligned as kubectl's tabwriter aligns them (``padding`` after cells)."""
    if not rows:
        return []
    columns = max(len(row) for row in rows)
    widths = [
        max((len(row[i]) for row in rows if i < len(row)), default=0) + padding
        for i in range(columns - 1)
    ]
    lines = []
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("".join(cells) + row[-1])
    return lines


def table_rows(
    table: Object,
    *,
    wide: bool = False,
    with_namespace: bool = False,
    kind_prefix: str = "",
    headers: bool = True,
) -> list[list[str]]:
    """The header and rows of a ``meta.k8s.io/v1`` Table, cells rendered as kubectl renders them.

    ``kind_prefix`` (``configmap``) is put before names as ``configmap/x``, which
    kubectl does when one ``get`` shows several types.
    """
    definitions = table.get("columnDefinitions") or []
    shown = [i for i, c in enumerate(definitions) if wide or not c.get("priority")]
    out: list[list[str]] = []
    if headers:
        names = [str(definitions[i].get("name", "")).upper() for i in shown]
        out.append((["NAMESPACE"] if with_namespace else []) + names)
    for row in table.get("rows") or []:
        cells = row.get("cells") or []
        rendered = []
        for i in shown:
            value = cells[i] if i < len(cells) else None
            text = _cell_text(value)
            if kind_prefix and definitions[i].get("format") == "name":
                text = f"{kind_prefix}/{text}"
            rendered.append(text)
        if with_namespace:
            metadata = (row.get("object") or {}).get("metadata") or {}
            rendered.insert(0, str(metadata.get("namespace", "")))
        out.append(rendered)
    return out


def _cell_text(value: Any) -> str:
    """One cell as kubectl's table printer writes it (Go's ``fmt.Sprint`` of the JSON value).

    The server has already rendered ``date`` cells as ages, as kube-apiserver does.
    """
    if value is None:
        return ""
    text = go_sprint(value)
    # A multi-line cell is cut at its first line break, marked with "...".
    for index, char in enumerate(text):
        if char in "\f\n\r":
            return text[:index] + "..."
    return text


def to_json(obj: Any) -> str:
    """kubectl's ``-o json``: ``json.MarshalIndent(obj, "", "    ")`` and a newline."""
    # encoding/json escapes HTML characters even inside strings, and kubectl's JSON shows it.
    return go_html_escape(json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False)) + "\n"


class _GoStyleDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, quoting as go-yaml does.

    go-yaml double-quotes a string whose plain form would read back as another
    type (``"123"``, ``"true"``, timestamps); PyYAML single-quotes those.  Other
    strings that cannot be plain are single-quoted by both.
    """

    def choose_scalar_style(self) -> str:
        style: str = super().choose_scalar_style()
        event = self.event
        if (
            style == "'"
            and isinstance(event, yaml.ScalarEvent)
            and not event.implicit[0]
            and event.tag == "tag:yaml.org,2002:str"
        ):
            return '"'
        return style


def _represent_str(dumper: yaml.representer.SafeRepresenter, value: str) -> yaml.Node:
    """Multi-line strings as literal blocks (``|``, ``|-``), as go-yaml writes them."""
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_GoStyleDumper.add_representer(str, _represent_str)


def to_yaml(obj: Any) -> str:
    """kubectl's ``-o yaml`` of one object."""
    return yaml.dump(
        obj, Dumper=_GoStyleDumper, default_flow_style=False, allow_unicode=True, sort_keys=True
    )


def as_list(items: Iterable[Object]) -> Object:
    """Several objects as kubectl prints them together: a ``v1`` ``List``."""
    return {
        "apiVersion": "v1",
        "items": list(items),
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }
