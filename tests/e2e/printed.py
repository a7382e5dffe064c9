"""Reading what kubectl prints back into structure: tables and ``explain`` pages.

Goldens compare structure (column names, cells, fields and their types)
while the layout rules are checked once here, as kubectl applies them:
tables go through Go's tabwriter (cells padded by 3, at least 6 wide, the
last column unpadded), and ``explain`` indents by level under headings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: kubectl's tabwriter: minimum cell width 6, padding 3 (``printers.GetNewTabWriter``).
TAB_MIN_WIDTH = 6
TAB_PADDING = 3
_HEADER_CELL = re.compile(r"\S+(?: \S+)*")


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]

    def row(self, first: str) -> list[str]:
        """The row whose first cell is ``first``."""
        found = [row for row in self.rows if row[0] == first]
        assert len(found) == 1, f"{first!r} in {self.rows}"
        return found[0]

    def column(self, name: str) -> list[str]:
        index = self.header.index(name)
        return [row[index] for row in self.rows]


def parse_table(lines: list[str]) -> Table:
    """Cut each line at the header's column starts, and check tabwriter's layout.

    Header cells are upper-case words separated by single spaces (``MIN
    AVAILABLE``); between columns there are at least three spaces.
    """
    assert lines, "no table printed"
    matches = list(_HEADER_CELL.finditer(lines[0]))
    starts = [m.start() for m in matches]
    assert starts[0] == 0, lines[0]
    bounds = [*starts[1:], None]
    cells = [
        [line[start:end].rstrip() for start, end in zip(starts, bounds, strict=True)]
        for line in lines
    ]
    for line in lines:
        # Nothing may sit in the padding before a column: a cell running into
        # the next column would have been cut in two above.
        for start in starts[1:]:
            assert line[start - 1 : start] in ("", " "), f"misaligned: {line!r}"
    for i in range(len(starts) - 1):
        widest = max(len(row[i]) for row in cells)
        expected = max(widest + TAB_PADDING, TAB_MIN_WIDTH)
        assert starts[i + 1] - starts[i] == expected, (
            f"column {cells[0][i]!r} is {starts[i + 1] - starts[i]} wide, tabwriter makes it "
            f"{expected}:\n" + "\n".join(lines)
        )
    return Table(cells[0], cells[1:])


@dataclass
class Explained:
    """One ``kubectl explain`` page (OpenAPI v3 ``plaintext`` template)."""

    header: list[str]
    field: list[str]
    description: list[str]
    fields: list[str]
    descriptions: dict[str, list[str]]


def parse_explain(text: str) -> Explained:
    """Split a page into its header, ``FIELD:`` lines, description and field list.

    Without ``--recursive`` each field line (and its ``enum:`` line, from
    1.30) is followed by its description indented by four; ``fields`` holds
    the field and enum lines, ``descriptions`` the description lines by field.
    """
    lines = text.split("\n")
    assert lines[-1] == "", "the page ends with a newline"
    blank = lines.index("")
    header = lines[:blank]
    rest = lines[blank + 1 :]
    description_at = rest.index("DESCRIPTION:")
    field = rest[:description_at]
    rest = rest[description_at + 1 :]
    fields_at = rest.index("FIELDS:") if "FIELDS:" in rest else len(rest)
    description = rest[:fields_at]
    fields: list[str] = []
    descriptions: dict[str, list[str]] = {}
    current = ""
    for line in rest[fields_at + 1 :]:
        if line.startswith("    ") and not _is_field_line(line):
            descriptions.setdefault(current, []).append(line)
        elif line:
            fields.append(line)
            if "\t" in line:
                current = line.split("\t")[0].strip()
    return Explained(header, field, description, fields, descriptions)


def _is_field_line(line: str) -> bool:
    """``name<TAB><type>``, at any depth (``--recursive`` indents by two a level)."""
    return re.fullmatch(r" *[A-Za-z0-9$_-]+\t<[^>]+>( -required-)?", line) is not None


def words(lines: list[str]) -> list[str]:
    """The words of wrapped text, to compare prose whatever the wrap width."""
    return " ".join(lines).split()
