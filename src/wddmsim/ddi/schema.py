"""The notation the DDI structures are declared in.

Each structure of ``d3dkmddi.h`` that wddmsim models is written once, as a :class:`Record` built
from the pieces below, in the member order and with the types of Microsoft's documented syntax
blocks. A member that a later DDI version added carries ``since=`` (and ``until=`` when a later
version removed it), so one declaration describes every layout the header has produced.
:mod:`wddmsim.ddi.layout` turns a record into a ctypes class for one architecture and one DDI
version; the layout tests compare those classes with tables printed by a real MSVC-mode compiler.

Structures cross the DDI as real ctypes structures with the MSVC layout.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Union

from .versions import DdiVersion, ddi_version


@dataclass(frozen=True)
class Prim:
    """A C scalar. ``size`` is per architecture (``x64``, ``x86``); ``kind`` says how to show it:
    ``uint``, ``int``, ``handle`` (an OS or driver handle), ``pointer`` (an address in the model's
    memory) or ``bool``."""

    name: str
    size_x64: int
    size_x86: int
    signed: bool = False
    kind: str = "uint"

    def size(self, arch: str) -> int:
        return self.size_x64 if arch == "x64" else self.size_x86


@dataclass(frozen=True)
class Typedef:
    """A named alias of a scalar that keeps its own display (``NTSTATUS`` shows the status name)."""

    name: str
    base: Prim
    display: str = ""
    doc: str = ""


@dataclass(frozen=True)
class EnumType:
    """A C enumeration (4 bytes, signed, as MSVC stores enums) with its Python enumeration."""

    name: str
    values: type[enum.IntEnum]
    doc: str = ""


@dataclass(frozen=True)
class Array:
    """A fixed-length array member, shown as one member of ``count`` elements."""

    elem: "Type"
    count: int


@dataclass(frozen=True)
class Member:
    """A named member of a record.

    ``width`` makes it a bitfield of ``type`` (the storage type). ``since``/``until`` name the DDI
    version that added/removed it. ``display`` names an enumeration or flag set that gives the
    member's values names when it is declared as a plain integer (e.g. ``PageFaultFlags``)."""

    name: str
    type: "Type"
    width: int | None = None
    since: str | None = None
    until: str | None = None
    display: type[enum.IntEnum] | None = None
    doc: str = ""


@dataclass(frozen=True)
class Group:
    """An anonymous struct or union inside a record; its members read as the parent's own."""

    kind: str  # "struct" | "union"
    members: tuple["Item", ...]
    since: str | None = None
    until: str | None = None


@dataclass(frozen=True)
class Record:
    """A struct or union of the DDI.

    ``flags=True`` marks a flag union (bit members plus ``Value``); ``leaf=True`` a record that is
    shown as a single value when it is nested (``PHYSICAL_ADDRESS``). ``since`` is the DDI version
    the whole structure appeared in; ``source`` cites the reference page it follows: ``[D:folder/page]``
    is https://learn.microsoft.com/windows-hardware/drivers/ddi/folder/page."""

    name: str
    kind: str  # "struct" | "union"
    members: tuple["Item", ...]
    since: str | None = None
    doc: str = ""
    source: str = ""
    flags: bool = False
    leaf: bool = False
    tag: str = field(default="")


Type = Union[Prim, Typedef, EnumType, Array, Record]
Item = Union[Member, Group]


def active(item: Member | Group | Record, version: DdiVersion) -> bool:
    """Whether ``item`` exists in the header compiled for ``version``."""
    since = getattr(item, "since", None)
    until = getattr(item, "until", None)
    if since is not None and version.value < ddi_version(since).value:
        return False
    if until is not None and version.value >= ddi_version(until).value:
        return False
    return True


# -- The scalars of the MSVC data model (LLP64 on x64, ILP32 on x86) ---------------------------
UCHAR = Prim("UCHAR", 1, 1)
BYTE = Prim("BYTE", 1, 1)
BOOLEAN = Prim("BOOLEAN", 1, 1, kind="bool")
WORD = Prim("WORD", 2, 2)
DWORD = Prim("DWORD", 4, 4)
BOOL = Prim("BOOL", 4, 4, signed=True, kind="int")
WCHAR = Prim("WCHAR", 2, 2)
UINT = Prim("UINT", 4, 4)
UINT32 = Prim("UINT32", 4, 4)
INT = Prim("INT", 4, 4, signed=True, kind="int")
ULONG = Prim("ULONG", 4, 4)
LONG = Prim("LONG", 4, 4, signed=True, kind="int")
UINT64 = Prim("UINT64", 8, 8)
ULONGLONG = Prim("ULONGLONG", 8, 8)
LONGLONG = Prim("LONGLONG", 8, 8, signed=True, kind="int")
HANDLE = Prim("HANDLE", 8, 4, kind="handle")
PVOID = Prim("PVOID", 8, 4, kind="pointer")
SIZE_T = Prim("SIZE_T", 8, 4)

NTSTATUS = Typedef("NTSTATUS", LONG, display="ntstatus", doc="A kernel status code; negative is an error.")
D3DGPU_VIRTUAL_ADDRESS = Typedef(
    "D3DGPU_VIRTUAL_ADDRESS", ULONGLONG, display="address", doc="A GPU virtual address (64-bit on every architecture)."
)
D3DDDI_VIDEO_PRESENT_SOURCE_ID = Typedef(
    "D3DDDI_VIDEO_PRESENT_SOURCE_ID", UINT, doc="Zero-based id of a video present source in the VidPN topology."
)
D3DDDI_VIDEO_PRESENT_TARGET_ID = Typedef(
    "D3DDDI_VIDEO_PRESENT_TARGET_ID", UINT, doc="Zero-based id of a video present target in the VidPN topology."
)
D3DKMT_HANDLE = Typedef(
    "D3DKMT_HANDLE", UINT, display="handle",
    doc="A 32-bit kernel handle of a D3DKMT object (allocation, sync object, queue) as the runtime sees it.",
)


def struct(name: str, *members: Item, **kw) -> Record:
    """Declare a struct."""
    return Record(name, "struct", tuple(members), **kw)


def union_record(name: str, *members: Item, **kw) -> Record:
    """Declare a named union (a record of its own, like ``LARGE_INTEGER``)."""
    return Record(name, "union", tuple(members), **kw)


def union(*members: Item, since: str | None = None, until: str | None = None) -> Group:
    """An anonymous union inside a record."""
    return Group("union", tuple(members), since=since, until=until)


def anon_struct(*members: Item, since: str | None = None, until: str | None = None) -> Group:
    """An anonymous struct inside a record."""
    return Group("struct", tuple(members), since=since, until=until)


def m(name: str, type_: Type, **kw) -> Member:
    """Declare a member."""
    return Member(name, type_, **kw)


@dataclass(frozen=True)
class Bit:
    """One named bit range of a flag union (``width`` bits, present from ``since``)."""

    name: str
    width: int = 1
    since: str | None = None
    until: str | None = None
    display: type[enum.IntEnum] | None = None
    doc: str = ""


def flags(name: str, *bits: Bit | tuple, storage: Prim = UINT, reserved: str = "Reserved", tail: tuple = (), **kw) -> Record:
    """Declare a flag union: ``union { struct { <bits>; <reserved>; <tail>; }; <storage> Value; }``.

    The reserved bitfield is sized for each DDI version so that the bits add up to the storage
    width, the way the header's ``#if`` ladders size it. ``tail`` holds bit ranges that sit above
    the reserved range at fixed positions (``DXGK_NODEMETADATA_FLAGS.MaxInFlightHwQueueBuffers``).
    """
    total = storage.size_x64 * 8
    head = tuple(Member(b.name, storage, width=b.width, since=b.since, until=b.until, display=b.display, doc=b.doc) for b in bits)
    rest = tuple(Member(b.name, storage, width=b.width, since=b.since, until=b.until, display=b.display, doc=b.doc) for b in tail)
    reserved_member = Member(reserved, storage, width=-total, doc="Must be zero.")
    return Record(
        name,
        "union",
        (Group("struct", head + (reserved_member,) + rest), Member("Value", storage)),
        flags=True,
        **kw,
    )


def bit_widths(group: Group, version: DdiVersion) -> dict[str, int]:
    """Widths of the bitfields of a flag group at ``version``, in declaration order. The reserved
    member is declared with a negative width, ``-total``: it takes whatever the active bits before
    and after it leave of ``total`` bits, the way the header's ``#if`` ladders size it."""
    named = [it for it in group.members if isinstance(it, Member) and it.width is not None]
    total = next((-it.width for it in named if it.width < 0), 0)
    used = sum(it.width for it in named if it.width > 0 and active(it, version))
    return {
        it.name: (total - used if it.width < 0 else it.width)
        for it in named
        if it.width < 0 or active(it, version)
    }
