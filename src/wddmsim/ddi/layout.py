"""Building the DDI structures as ctypes classes with the MSVC layout.

:func:`ctype` turns a :class:`~wddmsim.ddi.schema.Record` into a ``ctypes.Structure`` or
``ctypes.Union`` for one architecture (``x64`` or ``x86``) and one DDI version; :func:`members`
lists every member's byte offset and size (and bit position for bitfields) the way a debugger's
``dt`` would. Pointers and handles are plain integers of the architecture's width: addresses in the
model's memory and handles from the OS handle table, so the same bytes can go into a crash record.

Why ctypes gets the MSVC layout right here: every member is a naturally aligned scalar, array or
record; 8-byte members are 8-aligned on both targets (MSVC aligns ``__int64`` and ``LARGE_INTEGER``
to 8 on x86, as the host's ``c_uint64`` is); and bitfields share a storage unit only with
neighbours of the same size, where GCC's rule (which ctypes follows on Linux) and MSVC's agree. The
layout tests hold every structure to the compiler's own tables, so a declaration that leaves that
ground fails there.

Spec: the syntax blocks of Microsoft's d3dkmddi reference pages (for example
"DXGKARG_SUBMITCOMMAND structure") and the WDK header d3dkmddi.h.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from .schema import Array, EnumType, Group, Member, Prim, Record, Type, Typedef, active, bit_widths
from .versions import LATEST, DdiVersion, ddi_version

#: The architectures a layout can be built for.
ARCHES = ("x64", "x86")

_SCALARS = {
    (1, False): ctypes.c_uint8,
    (2, False): ctypes.c_uint16,
    (4, False): ctypes.c_uint32,
    (8, False): ctypes.c_uint64,
    (1, True): ctypes.c_int8,
    (2, True): ctypes.c_int16,
    (4, True): ctypes.c_int32,
    (8, True): ctypes.c_int64,
}

_cache: dict[tuple[str, str, str], type] = {}


def _check_arch(arch: str) -> str:
    if arch not in ARCHES:
        raise ValueError(f"unknown architecture {arch!r}; known: {', '.join(ARCHES)}")
    return arch


def _prim(t: Type) -> Prim | None:
    if isinstance(t, Prim):
        return t
    if isinstance(t, Typedef):
        return t.base
    return None


def scalar_ctype(t: Type, arch: str) -> type:
    """The ctypes scalar for a primitive, typedef or enumeration."""
    if isinstance(t, EnumType):
        return ctypes.c_int32
    p = _prim(t)
    if p is None:
        raise TypeError(f"{t!r} is not a scalar")
    return _SCALARS[(p.size(arch), p.signed)]


def ctype(t: Type, arch: str = "x64", version: DdiVersion | str = LATEST) -> type:
    """The ctypes type of ``t`` for ``arch`` and ``version`` (records are built once and cached)."""
    version = ddi_version(version)
    _check_arch(arch)
    if isinstance(t, Array):
        return ctype(t.elem, arch, version) * t.count
    if isinstance(t, Record):
        key = (t.name, arch, version.name)
        cls = _cache.get(key)
        if cls is None:
            cls = _build(t, arch, version, t.name)
            _cache[key] = cls
        return cls
    return scalar_ctype(t, arch)


def _build(rec: Record | Group, arch: str, version: DdiVersion, name: str) -> type:
    fields: list[tuple] = []
    anonymous: list[str] = []
    widths = bit_widths(rec, version) if isinstance(rec, Group) else {}
    for i, item in enumerate(rec.members):
        if not active(item, version):
            continue
        if isinstance(item, Group):
            fname = f"_anon{i}"
            fields.append((fname, _build(item, arch, version, f"{name}_anon{i}")))
            anonymous.append(fname)
        elif item.width is not None:
            width = widths[item.name]
            if width == 0:
                continue  # a reserved range that the version's bits used up entirely
            fields.append((item.name, scalar_ctype(item.type, arch), width))
        else:
            fields.append((item.name, ctype(item.type, arch, version)))
    base = ctypes.Structure if rec.kind == "struct" else ctypes.Union
    # No __dict__: writing a member the structure does not have is an AttributeError, as a
    # compiler would refuse it, not a silent new attribute.
    ns = {"_anonymous_": anonymous, "_fields_": fields, "__slots__": ()}
    cls = type(name, (base,), ns)
    if isinstance(rec, Record):
        cls.record = rec
        cls.arch = arch
        cls.ddi_version = version
    return cls


def exists(rec: Record, version: DdiVersion | str) -> bool:
    """Whether the structure exists at all in the header of ``version``."""
    return active(rec, ddi_version(version))


@dataclass(frozen=True)
class MemberLayout:
    """Where one member lives: ``path`` ("Flags.Paging"), byte ``offset`` from the start of the
    top-level structure, ``size`` in bytes (for a bitfield, its storage unit's), and for bitfields
    ``bit_offset``/``bit_width``. ``member`` is its declaration; ``type`` its declared type."""

    path: str
    offset: int
    size: int
    member: Member
    bit_offset: int | None = None
    bit_width: int | None = None

    @property
    def type(self) -> Type:
        return self.member.type

    @property
    def depth(self) -> int:
        return self.path.count(".")

    def as_json(self) -> dict:
        d = {"offset": self.offset, "size": self.size}
        if self.bit_width is not None:
            d["bit_offset"] = self.bit_offset
            d["bit_width"] = self.bit_width
        return d


def _bitfield(cfield) -> tuple[int, int]:
    """(bit offset, bit width) of a ctypes bitfield descriptor."""
    if hasattr(cfield, "bit_size"):  # Python 3.14+
        return cfield.bit_offset, cfield.bit_size
    return cfield.size & 0xFFFF, cfield.size >> 16  # Python 3.11-3.13 pack both into .size


def _walk(rec: Record | Group, cls: type, base: int, prefix: str, arch: str, version: DdiVersion, out: list) -> None:
    for i, item in enumerate(rec.members):
        if not active(item, version):
            continue
        if isinstance(item, Group):
            fname = f"_anon{i}"
            sub = getattr(cls, fname)
            _walk(item, dict(cls._fields_)[fname], base + sub.offset, prefix, arch, version, out)
            continue
        if item.name not in dict((f[0], f) for f in cls._fields_):
            continue  # a zero-width reserved range
        cf = getattr(cls, item.name)
        path = prefix + item.name
        ctyp = dict((f[0], f[1]) for f in cls._fields_)[item.name]
        if item.width is not None:
            bit_offset, bit_width = _bitfield(cf)
            out.append(MemberLayout(path, base + cf.offset, ctypes.sizeof(ctyp), item, bit_offset, bit_width))
            continue
        out.append(MemberLayout(path, base + cf.offset, ctypes.sizeof(ctyp), item))
        t = item.type
        if isinstance(t, Record) and not t.leaf:
            _walk(t, ctyp, base + cf.offset, path + ".", arch, version, out)


def members(rec: Record, arch: str = "x64", version: DdiVersion | str = LATEST) -> list[MemberLayout]:
    """Every member of ``rec`` at ``arch``/``version``, in declaration order, nested records
    flattened to dotted paths (anonymous unions and structs add no path segment; leaf records such
    as ``PHYSICAL_ADDRESS`` are one member when nested)."""
    version = ddi_version(version)
    key = (id(rec), arch, version)
    got = _MEMBERS.get(key)
    if got is None or got[0] is not rec:
        cls = ctype(rec, arch, version)
        out: list[MemberLayout] = []
        _walk(rec, cls, 0, "", arch, version, out)
        got = _MEMBERS[key] = (rec, tuple(out))  # the record is kept, so its id is not reused
    return list(got[1])


#: members() once per (record, arch, version): the walk reads every ctypes field descriptor, and
#: a logged run asks for the same table at every interrupt it decodes.
_MEMBERS: dict[tuple, tuple[Record, tuple[MemberLayout, ...]]] = {}


def layout_table(rec: Record, arch: str = "x64", version: DdiVersion | str = LATEST) -> dict:
    """``{"size", "align", "members": {path: {"offset", "size"[, "bit_offset", "bit_width"]}}}``:
    the form of the compiler reference tables in ``tests/data/msvc_layouts.json``."""
    cls = ctype(rec, arch, version)
    return {
        "size": ctypes.sizeof(cls),
        "align": ctypes.alignment(cls),
        "members": {ml.path: ml.as_json() for ml in members(rec, arch, version)},
    }


_FORMATS = {(1, False): "B", (2, False): "H", (4, False): "I", (8, False): "Q",
            (1, True): "b", (2, True): "h", (4, True): "i", (8, True): "q"}


def filler(cls: type, paths: list[str] | tuple[str, ...]):
    """``fill(obj, *values)``: store ``values`` into the members ``paths`` of an instance of the
    ctypes structure ``cls`` (built by :func:`ctype`), with one ``struct.pack_into`` per run of
    adjacent members instead of one ctypes assignment per member.

    Paths are those of :func:`members` for scalars and leaf records (``"DmaBufferPhysicalAddress"``
    is its 64-bit QuadPart); a flag union is filled through its ``"Flags.Value"``. Bytes between two
    members of a run are the structure's padding and are written as zero; bitfields cannot be
    filled this way. A value out of its member's range raises ``struct.error`` where a ctypes
    assignment would have cut it silently.
    """
    import struct

    rec, arch, version = cls.record, cls.arch, cls.ddi_version
    by_path = {ml.path: ml for ml in members(rec, arch, version)}
    covered = sorted((ml.offset, ml.offset + ml.size) for ml in by_path.values() if ml.bit_width is None)
    spots = []
    for i, path in enumerate(paths):
        ml = by_path.get(path)
        if ml is None:
            raise KeyError(f"{rec.name} has no member {path!r} at {arch}/{version.name}")
        if ml.bit_width is not None:
            raise ValueError(f"{rec.name}.{path} is a bitfield; fill its union's Value instead")
        t = ml.type
        if isinstance(t, Record):
            if not t.leaf or ml.size != 8:
                raise ValueError(f"{rec.name}.{path} is a record; fill its members")
            signed = True  # LARGE_INTEGER / PHYSICAL_ADDRESS: QuadPart is a LONGLONG
        elif isinstance(t, EnumType):
            signed = True
        else:
            p = _prim(t)
            if p is None:
                raise ValueError(f"{rec.name}.{path} is not a scalar")
            signed = p.signed
        spots.append((ml.offset, ml.size, _FORMATS[(ml.size, signed)], i))
    spots.sort()

    def padding_only(start: int, end: int) -> bool:
        return all(e <= start or s >= end for s, e in covered)

    runs = []  # (offset, Struct, value indices)
    for off, size, code, i in spots:
        if runs:
            start, fmt, idx, end = runs[-1]
            if off >= end and (off == end or padding_only(end, off)):
                runs[-1] = (start, fmt + "x" * (off - end) + code, idx + [i], off + size)
                continue
            if off < end:
                raise ValueError(f"{rec.name}: members {paths[idx[-1]]!r} and {paths[i]!r} overlap")
        runs.append((off, code, [i], off + size))
    packs = [(start, struct.Struct("<" + fmt).pack_into, tuple(idx)) for start, fmt, idx, _ in runs]
    if len(packs) == 1 and list(packs[0][2]) == list(range(len(paths))):
        start, pack, _ = packs[0]

        def fill_one(obj, *values) -> None:
            pack(obj, start, *values)

        return fill_one

    def fill(obj, *values) -> None:
        for start, pack, idx in packs:
            pack(obj, start, *[values[j] for j in idx])

    return fill
