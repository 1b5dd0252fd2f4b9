"""Reading DDI structures from bytes and writing them back.

:func:`decode` turns the bytes of a structure (from a crash record, a trace, or typed in) into one
:class:`Field` per member, with flags spelled out by bit name and enumerations by name, the way a
debugger's ``dt`` shows them. :func:`new`, :func:`from_bytes` and :func:`to_bytes` move between
ctypes instances and bytes. The reading works from the member table of :mod:`wddmsim.ddi.layout`, so
it shows exactly what the layout tests hold to the compiler. ``wddmsim decode`` and ``wddmsim
layout`` are built on it.
"""

from __future__ import annotations

import ctypes
import enum
from dataclasses import dataclass

from .enums import DXGK_INTERRUPT_TYPE
from .layout import MemberLayout, ctype, members
from .ntstatus import status_name
from .schema import Array, EnumType, Prim, Record, Typedef
from .structs.interrupt import INTERRUPT_ARM
from .versions import LATEST, DdiVersion, ddi_version


class WrongSize(ValueError):
    """Bytes whose length is not the structure's size."""

    def __init__(self, name: str, expected: int, got: int):
        super().__init__(f"{name} is {expected} bytes, got {got}")
        self.expected = expected
        self.got = got


@dataclass(frozen=True)
class Field:
    """One decoded member: where it is, its raw value and how it reads."""

    path: str
    offset: int
    size: int
    type_name: str
    value: int | tuple | None
    text: str
    bit_offset: int | None = None
    bit_width: int | None = None

    @property
    def depth(self) -> int:
        return self.path.count(".")

    def as_json(self) -> dict:
        d = {"offset": self.offset, "size": self.size, "type": self.type_name, "value": self.value, "text": self.text}
        if self.bit_width is not None:
            d["bit_offset"] = self.bit_offset
            d["bit_width"] = self.bit_width
        return d


def type_name(t) -> str:
    """The C name of a member type (``UINT``, ``HANDLE``, ``DXGK_SUBMITCOMMANDFLAGS``, ``UINT[16]``)."""
    if isinstance(t, Array):
        return f"{type_name(t.elem)}[{t.count}]"
    return t.name


def _scalar(t):
    """(signed, kind, display) of a scalar type."""
    if isinstance(t, EnumType):
        return True, "enum", t.values
    if isinstance(t, Typedef):
        return t.base.signed, t.display or t.base.kind, None
    if isinstance(t, Prim):
        return t.signed, t.kind, None
    if isinstance(t, Record) and t.leaf:
        return True, "address", None
    return False, "uint", None


def _read(buf: bytes, ml: MemberLayout, signed: bool) -> int:
    raw = int.from_bytes(buf[ml.offset : ml.offset + ml.size], "little")
    if ml.bit_width is not None:
        raw = (raw >> ml.bit_offset) & ((1 << ml.bit_width) - 1)
        if signed and raw >> (ml.bit_width - 1):
            raw -= 1 << ml.bit_width
        return raw
    if signed and raw >> (ml.size * 8 - 1):
        raw -= 1 << (ml.size * 8)
    return raw


def _enum_text(values: type[enum.IntEnum], v: int) -> str:
    if issubclass(values, enum.IntFlag):
        names = [f.name for f in values if f.value and v & f.value == f.value]
        rest = v & ~sum(f.value for f in values)
        if rest:
            names.append(f"0x{rest:X}")
        return f"0x{v:X} ({'|'.join(names) or 'none'})"
    try:
        return f"{v} ({values(v).name})"
    except ValueError:
        return f"{v} (not a {values.__name__} value)"


def _text(ml: MemberLayout, v: int, kind: str, display) -> str:
    if display is not None:
        return _enum_text(display, v)
    if ml.member.display is not None:
        return _enum_text(ml.member.display, v)
    if kind == "ntstatus":
        return f"0x{v & 0xFFFFFFFF:08X} ({status_name(v)})"
    if kind in ("handle", "pointer", "address"):
        return f"0x{v & ((1 << (ml.size * 8)) - 1):X}"
    if ml.bit_width is not None and ml.bit_width > 1:
        return f"{v} (0x{v:X})"
    return str(v)


def _flag_text(rec: Record, ms: list[MemberLayout], buf: bytes, value: int, prefix: str) -> str:
    names = [
        ml.path[len(prefix) :]
        for ml in ms
        if ml.path.startswith(prefix)
        and ml.bit_width is not None
        and not ml.path.endswith(".Reserved")
        and ml.path[len(prefix) :] != "Reserved"
        and _read(buf, ml, False)
    ]
    multi = [n for n in names if next(x for x in ms if x.path == prefix + n).bit_width > 1]
    shown = [n if n not in multi else f"{n}={_read(buf, next(x for x in ms if x.path == prefix + n), False)}" for n in names]
    return f"0x{value:08X} ({'|'.join(shown) or 'none'})"


def _hidden_arms(rec: Record, buf: bytes, ms: list[MemberLayout]) -> set[str]:
    """Union arms of a tagged union that the tag does not select (shown only with ``all_arms``)."""
    if rec.name != "DXGKARGCB_NOTIFY_INTERRUPT_DATA":
        return set()
    tag = int.from_bytes(buf[0:4], "little", signed=True)
    try:
        chosen = INTERRUPT_ARM[DXGK_INTERRUPT_TYPE(tag)]
    except ValueError:
        return set()
    arms = {ml.path for ml in ms if "." not in ml.path and ml.path not in ("InterruptType", "Flags")}
    return arms - {chosen}


def decode(
    rec: Record,
    data: bytes,
    arch: str = "x64",
    version: DdiVersion | str = LATEST,
    all_arms: bool = False,
) -> list[Field]:
    """Every member of ``rec`` read from ``data`` (exactly the structure's size)."""
    version = ddi_version(version)
    size = ctypes.sizeof(ctype(rec, arch, version))
    if len(data) != size:
        raise WrongSize(rec.name, size, len(data))
    ms = members(rec, arch, version)
    hidden = set() if all_arms else _hidden_arms(rec, data, ms)
    out: list[Field] = []
    for ml in ms:
        if ml.path.split(".")[0] in hidden:
            continue
        t = ml.type
        tn = type_name(t)
        if isinstance(t, Array):
            signed, kind, display = _scalar(t.elem)
            esize = ml.size // t.count
            vals = tuple(
                int.from_bytes(data[ml.offset + i * esize : ml.offset + (i + 1) * esize], "little", signed=signed)
                for i in range(t.count)
            )
            nonzero = [f"[{i}]=0x{v:X}" for i, v in enumerate(vals) if v]
            text = " ".join(nonzero) if nonzero else f"all {t.count} zero"
            out.append(Field(ml.path, ml.offset, ml.size, tn, vals, text))
            continue
        if isinstance(t, Record) and not t.leaf:
            if t.flags:
                value = int.from_bytes(data[ml.offset : ml.offset + ml.size], "little")
                out.append(Field(ml.path, ml.offset, ml.size, tn, value, _flag_text(t, ms, data, value, ml.path + ".")))
            else:
                out.append(Field(ml.path, ml.offset, ml.size, tn, None, ""))
            continue
        signed, kind, display = _scalar(t)
        v = _read(data, ml, signed)
        out.append(Field(ml.path, ml.offset, ml.size, tn, v, _text(ml, v, kind, display), ml.bit_offset, ml.bit_width))
    return out


def values(rec: Record, data: bytes, arch: str = "x64", version: DdiVersion | str = LATEST) -> dict[str, int]:
    """``{path: integer value}`` for every scalar member (flag unions by ``Value`` and by bit)."""
    return {f.path: f.value for f in decode(rec, data, arch, version, all_arms=True) if isinstance(f.value, int)}


def new(rec: Record, arch: str = "x64", version: DdiVersion | str = LATEST, **fields) -> ctypes.Structure:
    """A zeroed instance of ``rec`` with top-level scalar members set from ``fields``.

    Leaf records (``PHYSICAL_ADDRESS``) take an integer; flag unions take their ``Value``."""
    obj = ctype(rec, arch, version)()
    for name, value in fields.items():
        current = getattr(obj, name)
        if isinstance(current, ctypes.Union) and hasattr(current, "QuadPart"):
            current.QuadPart = value
        elif isinstance(current, (ctypes.Structure, ctypes.Union)) and hasattr(current, "Value"):
            current.Value = value
        else:
            setattr(obj, name, value)
    return obj


def to_bytes(obj: ctypes.Structure | ctypes.Union) -> bytes:
    """The bytes of a structure instance, as the DDI would pass them."""
    return bytes(obj)


def from_bytes(rec: Record, data: bytes, arch: str = "x64", version: DdiVersion | str = LATEST):
    """A ctypes instance of ``rec`` holding a copy of ``data``."""
    cls = ctype(rec, arch, version)
    if len(data) != ctypes.sizeof(cls):
        raise WrongSize(rec.name, ctypes.sizeof(cls), len(data))
    return cls.from_buffer_copy(data)
