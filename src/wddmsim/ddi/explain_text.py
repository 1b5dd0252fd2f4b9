"""Explanations laid out as plain text for a console of a given width: sentences wrapped with a
hanging indent (:func:`wrap`) and aligned tables (:func:`plain_table`) in which no name is ever cut
and the one column of prose or long type names wraps instead. ``wddmsim layout``, ``decode`` and
``rules`` print with them; the width is ``COLUMNS``, the terminal's, or 100 columns when output is
piped (:func:`fit_width`).
"""

from __future__ import annotations

import os
import re
import textwrap
from dataclasses import dataclass

__all__ = ["MIN_CELL", "MIN_WIDTH", "PIPED_WIDTH", "Col", "fit_width", "plain_table", "wrap"]

#: Columns text is wrapped to when output goes to no terminal and COLUMNS is not set.
PIPED_WIDTH = 100
#: The narrowest width text is wrapped to, whatever COLUMNS says.
MIN_WIDTH = 40
#: The narrowest a wrapping table column becomes, however little room the other columns leave.
MIN_CELL = 8


def fit_width(terminal_columns: int | None) -> int:
    """Columns the text output fits: ``COLUMNS`` when it holds a whole number, else
    ``terminal_columns`` (the terminal's width; None when output goes to no terminal), else
    :data:`PIPED_WIDTH`; never under :data:`MIN_WIDTH`."""
    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return max(int(cols), MIN_WIDTH)
    return PIPED_WIDTH if terminal_columns is None else max(terminal_columns, MIN_WIDTH)


def wrap(text: str, width: int, indent: str = "", more: str | None = None) -> list[str]:
    """``text`` wrapped to ``width``: the first line after ``indent``, the others after ``more``
    (``indent`` and two spaces by default). Words are never broken."""
    more = indent + "  " if more is None else more
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=more, break_long_words=False,
                         break_on_hyphens=False) or [indent.rstrip()]


@dataclass(frozen=True)
class Col:
    """A column of :func:`plain_table`: its heading, right-aligned or not, and whether it is the
    one that wraps (prose, or a long type name split after its underscores) to the width left."""

    head: str
    right: bool = False
    wraps: bool = False


def _pieces(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width``: at spaces, a long name after its underscores, and
    only a part longer than ``width`` itself (a long name in a narrow console) within the part."""
    out = []
    for line in textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]:
        if len(line) <= width:
            out.append(line)
            continue
        cur = ""
        for part in re.findall(r"[^_]*_|[^_]+$", line):
            if cur and len(cur) + len(part) > width:
                out.append(cur)
                cur = ""
            cur += part
            while len(cur) > width:
                out.append(cur[:width])
                cur = cur[width:]
        if cur:
            out.append(cur)
    return out


def plain_table(cols: list[Col], rows: list[list[str]], width: int, under_below: int | None = None) -> list[str]:
    """Rows as aligned text lines of at most ``width`` columns (two spaces between columns, no
    trailing spaces). Every column is as wide as its longest cell, so no name is ever cut; the
    one column marked ``wraps`` takes the width left and wraps within it. With ``under_below``,
    when less than that is left, the wrapping column moves under each row instead (indented to
    the second column and wrapped to the full width)."""
    gap = "  "
    w = [max([len(c.head)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
    wi = next((i for i, c in enumerate(cols) if c.wraps), None)
    under = False
    if wi is not None:
        room = width - sum(x for i, x in enumerate(w) if i != wi) - len(gap) * (len(cols) - 1)
        if under_below is not None and room < under_below and w[wi] > room:
            under = True
        elif w[wi] > room:
            w[wi] = max(room, MIN_CELL)
    shown = [i for i in range(len(cols)) if not (under and i == wi)]

    def line(cells: list[str]) -> str:
        parts = [cells[i].rjust(w[i]) if cols[i].right else cells[i].ljust(w[i]) for i in shown]
        return gap.join(parts).rstrip()

    out = [line([c.head for c in cols])]
    indent = " " * (w[shown[0]] + len(gap)) if under else ""
    for r in rows:
        if wi is None or under:
            out.append(line(r))
            if under and r[wi]:
                out += wrap(r[wi], width, indent, indent)
            continue
        lines = _pieces(r[wi], w[wi])
        for k, piece in enumerate(lines):
            cells = [piece if i == wi else (r[i] if k == 0 else "") for i in range(len(cols))]
            out.append(line(cells))
    return out
