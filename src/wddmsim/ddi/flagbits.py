"""What every bit of the DDI's flag unions means, who sets it and when, what the driver must do
about it, and the contract rules that judge it: ``wddmsim layout NAME --explain`` and the "Flag
bits" tables of docs/ddi.md.

A *flag type* is every record of :mod:`wddmsim.ddi.registry` with bit fields of its own: the flag
unions (``DXGK_SUBMITCOMMANDFLAGS``), the capability bit sets (``DXGK_VIDMMCAPS``) and the few
structures that pack numbers into bits (``DXGK_PTE``, ``D3DDDI_PATCHLOCATIONLIST``). Bit
positions, widths and the DDI version each bit appeared in come from the declarations
(:mod:`wddmsim.ddi.structs`, laid out by :mod:`wddmsim.ddi.layout`), never from here; what a bit
means comes from its declaration's ``doc`` unless the text gives it. The texts (in the form of
:mod:`.flagtext`) live in :mod:`.flagbits_os` (what the OS, VidMm or the runtime fills in and hands
the driver) and :mod:`.flagbits_driver` (what the driver fills in: capabilities, answers,
reports). A reserved range (a name starting with ``Reserved``, or ``Unused``) needs no text: it is
explained from who fills the type. tests/test_flagbits.py keeps every bit of every flag type
explained at every DDI version, every rule number real, and docs/ddi.md equal to :func:`markdown`.

Spec: the reference page each record cites (``Record.source``, shown as its learn.microsoft.com
address), restated in the project's words; rule numbers are those of docs/rules.md.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from . import layout, registry
from .flagbits_driver import DRIVER_FILLED
from .flagbits_os import OS_FILLED
from .flagtext import BitText, FlagType
from .schema import Record
from .versions import LATEST, DdiVersion, ddi_version

__all__ = ["TEXTS", "BitExplained", "BitText", "FlagType", "explain", "flag_text", "flag_types", "has_bits",
           "later_bits", "markdown", "source_url"]


@dataclass(frozen=True)
class BitExplained:
    """One bit field of a flag type at one DDI version, explained."""

    flag_type: str
    name: str
    bit_offset: int
    bit_width: int
    storage: int
    since: str
    means: str
    sets: str
    must: str
    rules: tuple[int, ...]

    @property
    def bits(self) -> str:
        """``6`` for one bit, ``9..31`` for a range."""
        last = self.bit_offset + self.bit_width - 1
        return f"{self.bit_offset}" if self.bit_width == 1 else f"{self.bit_offset}..{last}"

    @property
    def mask(self) -> str:
        """The bits' mask in the storage unit's width, ``0x00000040``."""
        return f"0x{((1 << self.bit_width) - 1) << self.bit_offset:0{self.storage * 2}X}"

    @property
    def rules_text(self) -> str:
        return ", ".join(str(n) for n in self.rules)

    def as_json(self) -> dict:
        return {"name": self.name, "bit_offset": self.bit_offset, "bit_width": self.bit_width, "mask": self.mask,
                "since": self.since, "means": self.means, "set": self.sets, "driver": self.must,
                "rules": list(self.rules)}


#: Every flag type's text, by name.
TEXTS: dict[str, FlagType] = {**OS_FILLED, **DRIVER_FILLED}


def is_reserved(name: str) -> bool:
    """Whether a bit field is a reserved range (explained from who fills its flag type)."""
    return name.startswith("Reserved") or name == "Unused"


def _own_bits(rec: Record, version: DdiVersion, arch: str = "x64") -> list[layout.MemberLayout]:
    return [ml for ml in layout.members(rec, arch, version) if ml.bit_width is not None and ml.depth == 0]


def has_bits(rec) -> bool:
    """Whether ``rec`` is a flag type: a record with bit fields of its own at the latest DDI version."""
    return isinstance(rec, Record) and bool(_own_bits(rec, LATEST))


def flag_types() -> tuple[str, ...]:
    """Every flag type the registry knows, by name."""
    return tuple(name for name in sorted(registry.RECORDS) if has_bits(registry.RECORDS[name]))


def flag_text(name: str) -> FlagType:
    """The text of flag type ``name`` (KeyError when it has none)."""
    return TEXTS[name]


def source_url(rec: Record) -> str:
    """The learn.microsoft.com address of the reference page ``rec`` cites (``""`` when none)."""
    src = rec.source
    if not (src.startswith("[D:") and src.endswith("]")):
        return ""
    return f"https://learn.microsoft.com/en-us/windows-hardware/drivers/ddi/{src[3:-1].split(']')[0]}"


def _since(rec: Record, ml: layout.MemberLayout) -> str:
    own = ml.member.since
    rec_since = registry.since(rec)
    if own is None or ddi_version(own).value < ddi_version(rec_since).value:
        return rec_since
    return own


def _reserved_text(ft: FlagType, doc: str) -> tuple[str, str, str]:
    means = doc or "Reserved: must be zero."
    if ft.by == "os":
        return (means, "Nobody: whoever fills the structure leaves it 0 at this DDI version.",
                "Ignore it; a later DDI version may give it a meaning.")
    return means, "Nobody: reserved at this DDI version.", "Leave it 0."


def explain(name: str, version: DdiVersion | str = LATEST, arch: str = "x64") -> list[BitExplained]:
    """Every bit field of flag type ``name`` at ``version``, in bit order, explained. A bit the text
    does not cover (a new bit of a declaration) is a KeyError naming it."""
    version = ddi_version(version)
    rec = registry.lookup(name)
    ft = flag_text(rec.name)
    out = []
    for ml in _own_bits(rec, version, arch):
        bit_name = ml.path
        text = ft.bits.get(bit_name)
        if text is not None:
            means = text.means or ml.member.doc
            sets, must, rules = text.sets or ft.sets, text.must, text.rules
        elif is_reserved(bit_name):
            (means, sets, must), rules = _reserved_text(ft, ml.member.doc), ft.reserved_rules
        else:
            raise KeyError(f"{rec.name}.{bit_name} has no explanation in wddmsim.ddi.flagbits")
        out.append(BitExplained(rec.name, bit_name, ml.bit_offset, ml.bit_width, ml.size, _since(rec, ml), means,
                                sets, must, tuple(rules)))
    return out


def later_bits(name: str, version: DdiVersion | str) -> list[str]:
    """The bits of flag type ``name`` that appear only after ``version`` (reserved ranges left out)."""
    rec = registry.lookup(name)
    have = {ml.path for ml in _own_bits(rec, ddi_version(version))}
    return [ml.path for ml in _own_bits(rec, LATEST) if ml.path not in have and not is_reserved(ml.path)]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(names: list[str] | None = None) -> str:
    """The "Flag bits" tables docs/ddi.md carries (generated: ``wddmsim layout --explain --markdown``),
    of every flag type or of those ``names``: per flag type, who fills it and its reference page,
    then one row per bit at the latest version. A bit whose setter is the flag type's shows ``as
    above`` in the ``set`` column."""
    parts = []
    for name in flag_types() if names is None else names:
        rec = registry.RECORDS[name]
        ft = flag_text(name)
        url = source_url(rec)
        ref = f" Reference: <{url}>." if url else ""
        lines = [f"### {name}", "", *textwrap.wrap(f"{ft.sets}{ref}", 100, break_long_words=False,
                                                   break_on_hyphens=False), "",
                 "| bit | name | since | means | set | what the driver does | rules |",
                 "|---:|---|---|---|---|---|---|"]
        for b in explain(name):
            sets = "as above" if b.sets == ft.sets else b.sets
            lines.append(f"| {b.bits} | {b.name} | {b.since} | {_cell(b.means)} | {_cell(sets)} | {_cell(b.must)} | "
                         f"{b.rules_text} |")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)
