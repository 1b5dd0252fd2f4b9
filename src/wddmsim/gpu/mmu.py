"""The GPU's memory management unit: per-address-space page tables and a TLB.

An engine whose ``address_space`` register holds a root table address treats every address its
commands carry as a GPU *virtual* address and asks this unit for the physical one. The format is
the model's own, shaped like the x86-64 and GPU MMUs WDDM 2.0's GpuMmu model describes:

- pages are 4 KiB; virtual addresses have 39 bits (``VA_BITS``); anything at or above ``2**39``
  faults;
- three levels of tables (``LEVELS``), 9 index bits each: level 2 (the root) is indexed by
  VA[38:30], level 1 by VA[29:21], level 0 (the leaf) by VA[20:12]; :func:`table_index` computes
  them;
- a table is one page-aligned 4 KiB page of 512 little-endian u64 entries at a GPU physical
  address, read through :meth:`GPU.translate <wddmsim.gpu.device.GPU.translate>` (so a table may
  sit in system memory, local memory or a mapped aperture page);
- an entry (:func:`pte` builds one): bit 0 ``PTE_VALID``; bit 1 ``PTE_READ_ONLY`` (leaf entries
  only: a write through it faults); bits 12..51 (``PTE_ADDRESS_MASK``) the physical address of the
  next table, or of the page for a leaf. Other bits are ignored.

The TLB is a real cache keyed by (root, virtual page): a walk fills it, and it keeps answering
with what it holds until :meth:`GpuMmu.flush` (the FLUSH_TLB command) drops the entries, so an
entry rewritten without a flush leaves the old translation in use. It holds ``tlb_entries``
translations and evicts the oldest when full.

A walk that meets an entry without ``PTE_VALID``, a write through a read-only page or an address
outside the 39 bits raises :class:`PageFault`, an :class:`~wddmsim.gpu.engine.EngineFault` that
carries the virtual address, the level where the walk stopped, whether it was a write and the root.

Like the rest of :mod:`wddmsim.gpu` it knows nothing of Windows: which tables exist and who writes
them is the operating system's business (docs/gpu.md, "Virtual addressing").

Spec: docs/gpu.md (a GPU MMU with per-address-space page tables for the WDDM 2.0 virtual path).
"""

from __future__ import annotations

import operator

from .engine import EngineFault
from .memory import PAGE_SIZE

__all__ = [
    "PAGE_SHIFT", "VA_BITS", "VA_LIMIT", "LEVELS", "INDEX_BITS", "ENTRIES_PER_TABLE",
    "PTE_VALID", "PTE_READ_ONLY", "PTE_ADDRESS_MASK",
    "pte", "table_index", "PageFault", "GpuMmu",
]

PAGE_SHIFT = 12
VA_BITS = 39
VA_LIMIT = 1 << VA_BITS
LEVELS = 3
INDEX_BITS = 9
ENTRIES_PER_TABLE = 1 << INDEX_BITS

PTE_VALID = 1 << 0
PTE_READ_ONLY = 1 << 1
PTE_ADDRESS_MASK = ((1 << 52) - 1) & ~(PAGE_SIZE - 1)  # bits 12..51

assert PAGE_SHIFT + LEVELS * INDEX_BITS == VA_BITS and 1 << PAGE_SHIFT == PAGE_SIZE

_OFFSET_MASK = PAGE_SIZE - 1
_INDEX_MASK = ENTRIES_PER_TABLE - 1
_VPN_BITS = VA_BITS - PAGE_SHIFT  # a TLB key is root << _VPN_BITS | virtual page number
_VPN_MASK = (1 << _VPN_BITS) - 1
_LEAF = PTE_ADDRESS_MASK | PTE_READ_ONLY  # what the TLB keeps of a leaf entry
_WALK = tuple((level, PAGE_SHIFT + INDEX_BITS * level) for level in reversed(range(LEVELS)))


def pte(address: int, read_only: bool = False) -> int:
    """A valid entry pointing at the page-aligned physical ``address`` (a table or a page)."""
    try:
        address = operator.index(address)
    except TypeError:
        raise TypeError(f"address must be an integer, not {type(address).__name__}") from None
    if address < 0 or address & ~PTE_ADDRESS_MASK:
        raise ValueError(f"address {address:#x} is not a page-aligned physical address below 2**52")
    return address | PTE_VALID | (PTE_READ_ONLY if read_only else 0)


def table_index(va: int, level: int) -> int:
    """The index into the level-``level`` table (2: the root, 0: the leaf) for virtual address ``va``."""
    if not 0 <= level < LEVELS:
        raise ValueError(f"level {level} is not 0..{LEVELS - 1}")
    return (va >> (PAGE_SHIFT + INDEX_BITS * level)) & _INDEX_MASK


class PageFault(EngineFault):
    """A translation failed. ``address``: the virtual address; ``level``: the table level where the
    walk stopped (0 for a write through a read-only page; the root level, 2, for an address beyond
    ``VA_BITS``); ``write``: the access was a write; ``root``: the address space's root table."""

    def __init__(self, address: int, level: int, write: bool, root: int, reason: str):
        access = "write" if write else "read"
        super().__init__(f"page fault at {address:#x} ({access}, level {level}, root {root:#x}): {reason}")
        self.address = address
        self.level = level
        self.write = write
        self.root = root
        self.reason = reason


class GpuMmu:
    """The GPU's MMU: page-table walks, a TLB shared by all engines and address spaces, and
    virtual reads and writes that follow the pages (a buffer may be physically discontiguous)."""

    __slots__ = ("gpu", "tlb_entries", "walks", "hits", "faults", "flushes", "_tlb")

    def __init__(self, gpu, tlb_entries: int = 4096):
        if tlb_entries < 1:
            raise ValueError("the TLB needs at least one entry")
        self.gpu = gpu
        self.tlb_entries = tlb_entries
        self.walks = 0  # TLB misses that walked the tables (faulting walks included)
        self.hits = 0  # translations answered by the TLB
        self.faults = 0  # PageFaults raised
        self.flushes = 0  # flush() calls
        self._tlb: dict[int, int] = {}  # root << 27 | virtual page -> leaf (page address | READ_ONLY)

    @property
    def stats(self) -> dict[str, int]:
        """The counters: ``walks``, ``hits``, ``faults``, ``flushes`` and ``tlb_entries`` (cached now)."""
        return {"walks": self.walks, "hits": self.hits, "faults": self.faults, "flushes": self.flushes,
                "tlb_entries": len(self._tlb)}

    def __repr__(self) -> str:
        return f"<GpuMmu {len(self._tlb)} TLB entries, {self.walks} walks, {self.hits} hits>"

    # -- translation ----------------------------------------------------------------------------
    def _fault(self, root: int, va: int, level: int, write: bool, reason: str) -> PageFault:
        self.faults += 1
        return PageFault(va, level, write, root, reason)

    def translate(self, root: int, va: int, write: bool = False) -> int:
        """The GPU physical address of virtual address ``va`` in the address space rooted at
        ``root``; walks the tables on a TLB miss and caches the leaf. Raises :class:`PageFault`."""
        if va >> VA_BITS:  # also true for a negative va
            raise self._fault(root, va, LEVELS - 1, write, f"beyond the {VA_BITS}-bit virtual address space")
        key = root << _VPN_BITS | va >> PAGE_SHIFT
        leaf = self._tlb.get(key)
        if leaf is None:
            leaf = self._walk(root, va, write)
            tlb = self._tlb
            if len(tlb) >= self.tlb_entries:
                del tlb[next(iter(tlb))]
            tlb[key] = leaf
        else:
            self.hits += 1
        if write and leaf & PTE_READ_ONLY:
            raise self._fault(root, va, 0, write, "write to a read-only page")
        return (leaf & PTE_ADDRESS_MASK) | (va & _OFFSET_MASK)

    def _walk(self, root: int, va: int, write: bool) -> int:
        self.walks += 1
        read_u64 = self.gpu.memory.read_u64
        physical = self.gpu.translate
        table = root & PTE_ADDRESS_MASK
        entry = 0
        for level, shift in _WALK:
            index = (va >> shift) & _INDEX_MASK
            entry = read_u64(physical(table + 8 * index))
            if not entry & PTE_VALID:
                raise self._fault(root, va, level, write, f"entry {index} of the level-{level} table at {table:#x} is not valid")
            table = entry & PTE_ADDRESS_MASK
        return entry & _LEAF

    def _spans(self, root: int, va: int, size: int, write: bool) -> list[list[int]]:
        """``[memory address, length]`` runs covering ``size`` bytes from ``va``, every page
        translated before any is used (a fault leaves memory untouched); neighbours merged."""
        spans: list[list[int]] = []
        physical = self.gpu.translate
        pos = 0
        while pos < size:
            take = PAGE_SIZE - ((va + pos) & _OFFSET_MASK)
            if take > size - pos:
                take = size - pos
            addr = physical(self.translate(root, va + pos, write))
            if spans and spans[-1][0] + spans[-1][1] == addr:
                spans[-1][1] += take
            else:
                spans.append([addr, take])
            pos += take
        return spans

    # -- virtual memory access ------------------------------------------------------------------
    def read(self, root: int, va: int, size: int) -> bytes:
        """The ``size`` bytes at virtual address ``va``, page by page."""
        mem = self.gpu.memory
        spans = self._spans(root, va, size, False)
        if len(spans) == 1:
            return mem.read(*spans[0])
        return b"".join(mem.read(addr, n) for addr, n in spans)

    def write(self, root: int, va: int, data: bytes | bytearray | memoryview) -> None:
        """Store ``data`` at virtual address ``va``, page by page (nothing is written on a fault)."""
        view = memoryview(data).cast("B")
        write = self.gpu.memory.write
        pos = 0
        for addr, n in self._spans(root, va, len(view), True):
            write(addr, view[pos : pos + n])
            pos += n

    def fill(self, root: int, va: int, size: int, pattern: bytes) -> None:
        """FILL through the address space: ``pattern`` repeated over ``size`` bytes from ``va``
        (the pattern keeps its phase across pages; nothing is written on a fault)."""
        fill = self.gpu.memory.fill
        plen = len(pattern)
        pos = 0
        for addr, n in self._spans(root, va, size, True):
            phase = pos % plen
            fill(addr, n, pattern[phase:] + pattern[:phase])
            pos += n

    def flush(self, root: int = 0, start: int = 0, end: int = VA_LIMIT) -> None:
        """Drop the cached translations of the pages overlapping ``[start, end)`` in the address
        space rooted at ``root`` (0: in every address space)."""
        self.flushes += 1
        tlb = self._tlb
        if not tlb:
            return
        first = start >> PAGE_SHIFT
        last = (end + _OFFSET_MASK) >> PAGE_SHIFT  # exclusive
        if first >= last:
            return
        if root == 0 and first == 0 and last > _VPN_MASK:
            tlb.clear()
            return
        for key in [k for k in tlb if (root == 0 or k >> _VPN_BITS == root) and first <= (k & _VPN_MASK) < last]:
            del tlb[key]
