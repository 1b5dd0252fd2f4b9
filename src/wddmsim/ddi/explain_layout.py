"""Two layouts of one DDI structure side by side, for ``wddmsim layout NAME --compare x86,x64`` (two
architectures at one DDI version) or ``--compare wddm2_0,wddm3_0`` (two DDI versions on one
architecture): every member's offset, size and bits on each side, what differs between them, and in
sentences why the sizes differ (members that grew, members one side lacks, alignment padding).

Members are matched by path (:func:`wddmsim.ddi.layout.members`); a member one side lacks keeps its
place among its neighbours. Layouts are the MSVC ones of :mod:`wddmsim.ddi.layout`, which the layout
tests hold to the compiler's tables (docs/ddi.md, "Reading structures").
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from . import codec, layout
from .schema import Record
from .versions import DdiVersion

__all__ = ["Comparison", "Row", "Side", "compare"]


@dataclass(frozen=True)
class Side:
    """One layout being compared: its ``label`` (the architecture or the DDI version that differs),
    architecture, DDI version, size and alignment."""

    label: str
    arch: str
    version: DdiVersion
    size: int
    align: int


@dataclass(frozen=True)
class Row:
    """One member on both sides (``None`` where a side lacks it) and what differs: ``offset``,
    ``size``, ``bits``, or ``only <label>``."""

    path: str
    depth: int
    type: str
    cells: tuple[layout.MemberLayout | None, layout.MemberLayout | None]
    differs: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    """The whole comparison: the structure, its two sides, one row per member and the sentences
    that say why the sizes differ (or that nothing does)."""

    name: str
    sides: tuple[Side, Side]
    rows: tuple[Row, ...]
    why: tuple[str, ...]

    def as_json(self) -> dict:
        def cell(ml):
            return None if ml is None else {**ml.as_json(), "type": codec.type_name(ml.type)}

        return {
            "struct": self.name,
            "sides": [{"label": s.label, "arch": s.arch, "ddi_version": s.version.name, "size": s.size,
                       "align": s.align} for s in self.sides],
            "members": {r.path: {"differs": list(r.differs), self.sides[0].label: cell(r.cells[0]),
                                 self.sides[1].label: cell(r.cells[1])} for r in self.rows},
            "why": list(self.why),
        }


def _merged(a: list[str], b: list[str]) -> list[str]:
    """``b``'s order, with the paths only ``a`` has put back after the path that precedes them in ``a``."""
    order = list(b)
    seen = set(order)
    for i, path in enumerate(a):
        if path in seen:
            continue
        at = order.index(a[i - 1]) + 1 if i else 0
        order.insert(at, path)
        seen.add(path)
    return order


def _differs(x: layout.MemberLayout | None, y: layout.MemberLayout | None, labels: tuple[str, str]) -> tuple:
    if x is None:
        return (f"only {labels[1]}",)
    if y is None:
        return (f"only {labels[0]}",)
    out = []
    if x.offset != y.offset:
        out.append("offset")
    if x.size != y.size:
        out.append("size")
    if (x.bit_offset, x.bit_width) != (y.bit_offset, y.bit_width):
        out.append("bits")
    return tuple(out)


def _covered(members: list[layout.MemberLayout]) -> int:
    """Bytes the top-level members occupy (overlapping union arms counted once)."""
    spans = sorted((m.offset, m.offset + m.size) for m in members if m.depth == 0)
    total, end = 0, 0
    for start, stop in spans:
        start = max(start, end)
        if stop > start:
            total += stop - start
            end = stop
    return total


def _names(rows: list[Row]) -> str:
    return ", ".join(r.path for r in rows)


def _why(name: str, sides: tuple[Side, Side], rows: list[Row], members: tuple[list, list]) -> tuple[str, ...]:
    a, b = sides
    if a.size == b.size and not any(r.differs for r in rows):
        return (f"Same layout on both: {a.size} bytes, align {a.align}.",)
    out = [f"{name} is {a.size} bytes (align {a.align}) on {a.label} and {b.size} bytes (align {b.align}) on "
           f"{b.label}."]
    top = [r for r in rows if r.depth == 0]
    resized = [r for r in top if "size" in r.differs]
    if resized:
        by_type: dict[tuple[str, int, int], list[Row]] = {}
        for r in resized:
            by_type.setdefault((r.type, r.cells[0].size, r.cells[1].size), []).append(r)
        parts = [f"{_names(rs)} ({t}: {sa} -> {sb} bytes)" for (t, sa, sb), rs in by_type.items()]
        out.append(f"Members whose size differs: {'; '.join(parts)}.")
    for i, side in enumerate(sides):
        only = [r for r in top if r.cells[1 - i] is None]
        if only:
            out.append(f"Only on {side.label}: {_names(only)}.")
    if a.size != b.size:
        ca, cb = _covered(members[0]), _covered(members[1])
        out.append(f"Its top-level members fill {ca} bytes on {a.label} and {cb} on {b.label} ({cb - ca:+}); "
                   f"alignment padding fills {a.size - ca} and {b.size - cb} ({(b.size - cb) - (a.size - ca):+}).")
    return tuple(out)


def compare(rec: Record, first: tuple[str, DdiVersion], second: tuple[str, DdiVersion]) -> Comparison:
    """``rec`` laid out for ``first`` and for ``second`` (each an architecture and a DDI version),
    member by member. Each side is labelled by what differs between them: the architecture when
    the versions are equal, else the DDI version (else both, ``x86 wddm2_0``)."""
    if first[0] != second[0] and first[1] != second[1]:
        labels = (f"{first[0]} {first[1].name}", f"{second[0]} {second[1].name}")
    elif first[0] != second[0]:
        labels = (first[0], second[0])
    else:
        labels = (first[1].name, second[1].name)
    sides, members = [], []
    for label, (arch, version) in zip(labels, (first, second)):
        cls = layout.ctype(rec, arch, version)
        sides.append(Side(label, arch, version, ctypes.sizeof(cls), ctypes.alignment(cls)))
        members.append(layout.members(rec, arch, version))
    by_path = [{m.path: m for m in ms} for ms in members]
    rows = []
    for path in _merged([m.path for m in members[0]], [m.path for m in members[1]]):
        x, y = by_path[0].get(path), by_path[1].get(path)
        ml = y or x
        rows.append(Row(path, ml.depth, codec.type_name(ml.type), (x, y), _differs(x, y, labels)))
    pair = (sides[0], sides[1])
    return Comparison(rec.name, pair, tuple(rows), _why(rec.name, pair, rows, (members[0], members[1])))
