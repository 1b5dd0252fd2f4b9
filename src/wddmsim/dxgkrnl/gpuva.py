"""VidMm's GPU virtual addresses (WDDM 2.0 GpuMmu): one address space per process, page tables the
OS owns, and the paging operations that write them.

- Each process gets an address space: a root page table in kernel memory and a bump allocator of
  virtual addresses (page granular, from ``VA_START`` = 256 GiB: nothing below it is ever mapped,
  and no virtual address equals a kernel-pool physical address, which all lie below 256 GiB). The page-table format is the one the driver reports (``DXGK_GPUMMUCAPS``: page-table
  levels, index bits per level, virtual-address bits); VidMm walks and creates the tables itself.
- :meth:`GpuVa.map` gives physical pages a virtual range; :meth:`GpuVa.unmap` takes it away. Both
  only record page-table writes. :meth:`GpuVa.flush` turns them into one paging buffer: one
  ``DXGK_OPERATION_UPDATE_PAGE_TABLE`` per run of entries of one table (new lower tables first),
  then one ``DXGK_OPERATION_FLUSH_TLB`` per address space whose existing entries changed, each built
  by ``DxgkDdiBuildPagingBuffer``; the buffer goes to the GPU on the paging node and the process's
  work waits until it retires (the paging fence of WDDM 2.0, as a dependency the OS holds).
- The OS hands the entries to the driver as ``DXGK_PTE`` arrays in kernel memory; the driver turns
  them into its hardware format. The paging engine runs in physical mode, so a page table's
  "GPU virtual address" in ``PageTableAddress`` is its physical address (the paging process's
  address space maps every page table at its own physical address: a decision of the model).

Spec: Microsoft's reference pages for DxgkDdiSubmitCommandVirtual (virtual submission needs the
right address space), DxgkDdiBuildPagingBuffer, DXGK_BUILDPAGINGBUFFER_OPERATION and
DXGKARG_BUILDPAGINGBUFFER (paging buffers); docs/gpu.md (a GPU MMU with per-address-space page
tables).
"""

from __future__ import annotations

import ctypes
import struct

from ..ddi import layout
from ..ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION as OP
from ..ddi.enums import DXGK_PAGETABLEUPDATEMODE
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from ..sim import PASSIVE

PAGE = 4096
#: The lowest virtual address handed out (every address below it is unmapped in every space).
VA_START = 0x40_0000_0000
SUCCESS = int(NTSTATUS.STATUS_SUCCESS)



def _paging_args(args, operation, dma: int, dma_size: int, private: int) -> None:
    """Clear ``args`` (a DXGKARG_BUILDPAGINGBUFFER) and set what every paging operation of the
    page-table writer has: the DMA buffer left, its page of private data, the operation."""
    ctypes.memset(ctypes.addressof(args), 0, ctypes.sizeof(args))
    args.pDmaBuffer = dma
    args.DmaSize = dma_size
    args.pDmaBufferPrivateData = private
    args.DmaBufferPrivateDataSize = PAGE
    args.Operation = int(operation)

class AddressSpace:
    """One process's GPU virtual address space."""

    __slots__ = ("process", "root", "tables", "next_va", "pages", "pending", "flush", "in_flight",
                 "waiters", "maps", "handle", "mapped_at", "flush_soon")

    def __init__(self, process, root: int):
        self.process = process
        self.root = root  # physical address of the root page table
        self.tables: dict[tuple[int, int], int] = {}  # (level, va >> shift of the level above) -> table
        self.next_va = VA_START
        self.pages: dict[int, int] = {}  # virtual page -> physical page address
        self.mapped_at: dict[int, int] = {}  # physical page address -> a virtual page mapping it
        self.flush_soon = None  # the paging worker's pending visit (a timer)
        self.pending: dict[tuple[int, int], dict[int, int]] = {}  # (level, table) -> {index: pte}
        self.flush: list[tuple[int, int]] = []  # changed virtual ranges that need a TLB flush
        self.in_flight = 0  # paging buffers of this space on the GPU
        self.waiters: list = []  # callbacks for when in_flight drops to 0
        self.maps = 0
        self.handle = 0


class GpuVa:
    """The address spaces of one adapter and the paging that writes their page tables."""

    def __init__(self, adapter, submit_paging, *, levels: int = 3, index_bits: int = 9, va_bits: int = 39):
        self.adapter = adapter
        #: ``submit_paging(dma, size, length, private_data, on_done)``: put a paging buffer of
        #: ``size`` bytes holding ``length`` bytes of commands on the paging node.
        self.submit_paging = submit_paging
        self.levels = levels
        self.index_bits = index_bits
        self.va_bits = va_bits
        self.spaces: dict[int, AddressSpace] = {}  # id(process) -> space
        self.page_tables = 0
        self.paging_buffers = 0
        self.updates = 0
        self.flushes = 0
        self._args = layout.ctype(RECORDS["DXGKARG_BUILDPAGINGBUFFER"], adapter.arch, adapter.version)()
        self._pte_cls = layout.ctype(RECORDS["DXGK_PTE"], adapter.arch, adapter.version)
        self._pte_size = ctypes.sizeof(self._pte_cls)
        self._pte_fast = self._pte_layout()

    # -- spaces ---------------------------------------------------------------------------------------
    def space(self, process) -> AddressSpace:
        """The address space of ``process`` (created with an empty root table on first use)."""
        sp = self.spaces.get(id(process))
        if sp is None:
            root = self.adapter.pool.alloc(PAGE)
            self.adapter.memory.write(root, bytes(PAGE))  # a fresh table has no valid entry
            self.page_tables += 1
            sp = AddressSpace(process, root)
            self.spaces[id(process)] = sp
        return sp

    def set_root(self, ctx) -> None:
        """DxgkDdiSetRootPageTable: the context runs in its process's address space (a system
        context of VidMm runs with physical addresses: root 0)."""
        adapter = self.adapter
        root = 0 if ctx.system else self.space(ctx.device.process).root
        args = layout.ctype(RECORDS["DXGKARG_SETROOTPAGETABLE"], adapter.arch, adapter.version)()
        args.hContext = ctx.hDriver
        args.Address.SegmentId = 0  # system memory: the offset is the physical address
        args.Address.SegmentOffset = root
        args.NumEntries = 1 << self.index_bits
        adapter.ddi.call("DxgkDdiSetRootPageTable", adapter.hAdapter, args)

    def _shift(self, level: int) -> int:
        return 12 + level * self.index_bits

    def _index(self, va: int, level: int) -> int:
        return (va >> self._shift(level)) & ((1 << self.index_bits) - 1)

    # -- mapping --------------------------------------------------------------------------------------
    def reserve(self, process, size: int) -> int:
        """A fresh virtual range of ``size`` bytes (page multiple) in ``process``'s space."""
        sp = self.space(process)
        size = -(-size // PAGE) * PAGE
        va = sp.next_va
        if va + size > 1 << self.va_bits:
            raise MemoryError(f"GPU virtual address space of {getattr(process, 'name', process)} exhausted")
        sp.next_va = va + size
        return va

    def map(self, process, physical: int, size: int, *, va: int | None = None, read_only: bool = False) -> int:
        """Map ``size`` bytes of contiguous physical memory at ``va`` (or a fresh range); returns the
        virtual address. The page tables change when the next :meth:`flush` runs on the GPU."""
        sp = self.space(process)
        size = -(-size // PAGE) * PAGE
        if va is None:
            va = self.reserve(process, size)
        sp.maps += 1
        pages, mapped_at = sp.pages, sp.mapped_at
        flags = 1 | (2 if read_only else 0)
        leaf_shift = self._shift(1)
        mask = (1 << self.index_bits) - 1
        if not va % PAGE and not physical % PAGE:
            vps = range(va // PAGE, (va + size) // PAGE)
            phys = range(physical, physical + size, PAGE)
            if pages.keys().isdisjoint(vps):
                # A fresh range (the usual case): the same entries, written a leaf table at a time.
                pages.update(zip(vps, phys))
                if mapped_at.keys().isdisjoint(phys):
                    mapped_at.update(zip(phys, vps))
                else:
                    for ph, vp in zip(phys, vps):
                        mapped_at.setdefault(ph, vp)
                v = va
                end = va + size
                while v < end:
                    stop = min(end, ((v >> leaf_shift) + 1) << leaf_shift)
                    leaf = sp.pending.setdefault((0, self._table(sp, v, 0)), {})
                    first = (v // PAGE) & mask
                    count = (stop - v) // PAGE
                    base = physical + (v - va)
                    leaf.update(zip(range(first, first + count), range(base | flags, (base | flags) + count * PAGE, PAGE)))
                    v = stop
                self._soon(sp)
                return va
        region = None  # the leaf table's span (va >> leaf_shift) that ``leaf`` holds the entries of
        leaf: dict[int, int] = {}
        for off in range(0, size, PAGE):
            v = va + off
            vp = v // PAGE
            old = pages.get(vp)
            if old is not None:
                sp.flush.append((v, v + PAGE))
                if mapped_at.get(old) == vp:
                    del mapped_at[old]
            pages[vp] = physical + off
            mapped_at.setdefault(physical + off, vp)
            if v >> leaf_shift != region:  # the next leaf table (walked, and created, as _set_leaf does)
                region = v >> leaf_shift
                leaf = sp.pending.setdefault((0, self._table(sp, v, 0)), {})
            leaf[vp & mask] = (physical + off) | flags
        self._soon(sp)
        return va

    def _soon(self, sp: AddressSpace) -> None:
        """VidMm's paging worker writes the new entries at this instant, after the call that made
        them (one paging buffer for everything mapped meanwhile)."""
        if sp.flush_soon is None:
            sp.flush_soon = self.adapter.sim.soon(self._flush_now, sp, PASSIVE)

    def _flush_now(self, sp: AddressSpace) -> None:
        sp.flush_soon = None
        if sp.pending:
            self.flush(sp)

    def address_of(self, process, physical: int) -> int:
        """A virtual address of ``physical`` in ``process``'s space (mapped there if not yet)."""
        sp = self.space(process)
        page = physical - physical % PAGE
        vpage = sp.mapped_at.get(page)
        if vpage is not None:
            return vpage * PAGE + physical % PAGE
        return self.map(process, page, PAGE) + physical % PAGE

    def unmap(self, process, va: int, size: int) -> None:
        """Remove the mapping of ``[va, va + size)``; the TLB is flushed for it."""
        sp = self.space(process)
        size = -(-size // PAGE) * PAGE
        for off in range(0, size, PAGE):
            v = va + off
            old = sp.pages.pop(v // PAGE, None)
            if old is not None:
                if sp.mapped_at.get(old) == v // PAGE:
                    del sp.mapped_at[old]
                table = self._table(sp, v, 0)
                sp.pending.setdefault((0, table), {})[self._index(v, 0)] = 0
        sp.flush.append((va, va + size))
        self._soon(sp)

    def _table(self, sp: AddressSpace, va: int, level: int) -> int:
        """The physical address of the level-``level`` table covering ``va`` (created if needed)."""
        table = sp.root
        for lvl in range(self.levels - 1, level, -1):
            key = (lvl - 1, va >> self._shift(lvl))
            child = sp.tables.get(key)
            if child is None:
                child = self.adapter.pool.alloc(PAGE)
                self.adapter.memory.write(child, bytes(PAGE))
                self.page_tables += 1
                sp.tables[key] = child
                sp.pending.setdefault((lvl, table), {})[self._index(va, lvl)] = child | 1
            table = child
        return table

    def _set_leaf(self, sp: AddressSpace, va: int, physical: int, read_only: bool) -> None:
        table = self._table(sp, va, 0)
        sp.pending.setdefault((0, table), {})[self._index(va, 0)] = physical | 1 | (2 if read_only else 0)

    def pending(self, process) -> bool:
        """True while ``process`` has page-table writes not yet flushed or not yet done on the GPU."""
        sp = self.spaces.get(id(process))
        return sp is not None and (bool(sp.pending) or sp.in_flight > 0)

    def when_ready(self, process, callback) -> bool:
        """Flush ``process``'s pending writes if any; True if its tables are current now, else
        ``callback()`` runs once they are."""
        sp = self.spaces.get(id(process))
        if sp is None or (not sp.pending and not sp.in_flight):
            return True
        if sp.pending:
            self.flush(sp)
        sp.waiters.append(callback)
        return False

    # -- paging buffers ---------------------------------------------------------------------------------
    def flush(self, sp: AddressSpace) -> None:
        """Build ``sp``'s pending page-table writes into one paging buffer and submit it."""
        adapter = self.adapter
        mem = adapter.memory
        ops = sorted(sp.pending.items(), key=lambda kv: (-kv[0][0], kv[0][1]))
        sp.pending = {}
        # Entries as DXGK_PTE arrays in kernel memory; one UPDATE_PAGE_TABLE per run of indices.
        runs = []
        for (level, table), entries in ops:
            idx = sorted(entries)
            start = prev = idx[0]
            for i in idx[1:] + [None]:
                if i is not None and i == prev + 1:
                    prev = i
                    continue
                runs.append((level, table, start, [entries[j] for j in range(start, prev + 1)]))
                if i is not None:
                    start = prev = i
        pte_bytes = sum(len(r[3]) for r in runs) * self._pte_size
        size = 64 * 1024
        block = adapter.pool.alloc(size + max(pte_bytes, 1) + PAGE)
        ptes = block + size
        priv = ptes + -(-max(pte_bytes, 1) // PAGE) * PAGE
        args = self._args
        cursor = block
        out = ptes
        for level, table, start, entries in runs:
            mem.write(out, self._pte_array(entries))
            _paging_args(args, OP.DXGK_OPERATION_UPDATE_PAGE_TABLE, cursor, block + size - cursor, priv)
            u = args.UpdatePageTable
            u.PageTableLevel = self.levels - 1 - level  # the DDI counts from the root (0)
            u.UpdateMode = int(DXGK_PAGETABLEUPDATEMODE.DXGK_PAGETABLEUPDATE_GPU_PHYSICAL)
            u.PageTableAddress.GpuPhysical.SegmentId = 0
            u.PageTableAddress.GpuPhysical.SegmentOffset = table
            u.hProcess = sp.handle
            u.FirstPteVirtualAddress = 0
            u.pPageTableEntries = out
            u.StartIndex = start
            u.NumPageTableEntries = len(entries)
            self._build(args)
            cursor = args.pDmaBuffer
            out += len(entries) * self._pte_size
            self.updates += 1
        if sp.flush:
            lo = min(r[0] for r in sp.flush)
            hi = max(r[1] for r in sp.flush)
            sp.flush = []
            _paging_args(args, OP.DXGK_OPERATION_FLUSH_TLB, cursor, block + size - cursor, priv)
            f = args.FlushTlb
            f.RootPageTableAddress.SegmentId = 0
            f.RootPageTableAddress.SegmentOffset = sp.root
            f.hProcess = sp.handle
            f.StartVirtualAddress = lo
            f.EndVirtualAddress = hi
            self._build(args)
            cursor = args.pDmaBuffer
            self.flushes += 1
        sp.in_flight += 1
        self.paging_buffers += 1
        total = size + max(pte_bytes, 1) + PAGE

        def done(_status=None, sp=sp, block=block, total=total):
            adapter.pool.free(block, total)
            sp.in_flight -= 1
            if not sp.in_flight and not sp.pending:
                waiters, sp.waiters = sp.waiters, []
                for cb in waiters:
                    cb()

        self.submit_paging(block, size, cursor - block, priv, done)

    def _pte_array(self, entries: list[int]) -> bytes:
        """The DXGK_PTE array of ``entries`` (physical page address | 1 valid | 2 read-only): each
        entry is its flag word's template (Valid, ReadOnly set through the structure) with
        PageAddress stored at its offset, the same bytes as filling each structure's members."""
        fast = self._pte_fast
        if fast is None:
            arr = (self._pte_cls * len(entries))()
            for e, value in zip(arr, entries):
                e.Valid = value & 1
                e.ReadOnly = (value >> 1) & 1
                e.PageAddress = (value & ~0xFFF) >> 12
            return bytes(arr)
        templates, offset, pack_into = fast
        size = self._pte_size
        if size == 16 and offset == 8:
            # The flag word then the page address: both as u64s, packed at once.
            words = [int.from_bytes(t[:8], "little") for t in templates]
            n = len(entries)
            both = [0] * (2 * n)
            both[0::2] = [words[v & 3] for v in entries]
            both[1::2] = [v >> 12 for v in entries]
            return struct.pack(f"<{2 * n}Q", *both)
        out = bytearray(size * len(entries))
        pos = 0
        for value in entries:
            out[pos:pos + size] = templates[value & 3]
            pack_into(out, pos + offset, value >> 12)
            pos += size
        return bytes(out)

    def _pte_layout(self):
        """(templates by flag bits, PageAddress offset, packer) when PageAddress is a whole 64-bit
        member and the flags live elsewhere; else None (each structure is filled member by member)."""
        cls = self._pte_cls
        field = getattr(cls, "PageAddress", None)
        if field is None or field.size != 8:
            return None
        templates = []
        for bits in range(4):
            e = cls()
            e.Valid = bits & 1
            e.ReadOnly = (bits >> 1) & 1
            raw = bytes(e)
            if raw[field.offset:field.offset + 8] != bytes(8) or (len(raw) == 16 and field.offset == 8 and
                                                                  raw[8:] != bytes(8)):
                return None
            templates.append(raw)
        e = cls()
        e.PageAddress = 0x0123_4567_89AB_CDEF >> 12
        if bytes(e)[field.offset:field.offset + 8] != (0x0123_4567_89AB_CDEF >> 12).to_bytes(8, "little"):
            return None
        return templates, field.offset, struct.Struct("<Q").pack_into

    def _build(self, args) -> None:
        vidmm = self.adapter.vidsch.vidmm
        status = vidmm.build(args)  # rule 69 on success
        if status != SUCCESS:
            # A page-table update the driver will not build is a critical failure (DxgkDdiBuildPagingBuffer):
            # 0x119/0x5, rule 68 or 75.
            vidmm.failed(args, status, "VidMm cannot keep the process's GPU virtual addresses current without it "
                                    "(a 64 KiB paging buffer holds every page-table operation it asks for)")

    def summary(self) -> dict:
        return {"address_spaces": len(self.spaces), "page_tables": self.page_tables,
                "paging_buffers": self.paging_buffers, "page_table_updates": self.updates,
                "tlb_flushes": self.flushes}
