"""VidMm, the video memory manager: where allocations live, and which of them move when.

This module holds VidMm's residency: its segments, the allocations placed in them, the plan of what
to evict and bring in before a packet runs, budgets, offer and reclaim. The paging those plans
become (the paging buffers built with ``DxgkDdiBuildPagingBuffer``, queued as paging packets, and
the judgement of the driver's answers) is :mod:`.vidmm_paging`'s, a base class of :class:`VidMm`.

- An allocation that prefers video memory is created in a memory segment if it fits, else evicted
  (its content lives in system memory, the "backing store").
- Before VidSch submits a packet, every allocation in the packet's list must be resident. VidMm
  finds room in the segment (first fit), evicting the least recently used allocations that no
  submitted packet uses and the packet itself does not need; then the paging worker moves them
  (out to the backing store, back in, or a first-use fill) in paging packets. The packet waits until
  the last of them retires; its allocation list is then rewritten with the new segment addresses
  and ``DxgkDdiPatch`` patches it.
- The null-context switch: evicting an allocation whose device has a context running on a node
  first sends that node a zero-length submission with ``Flags.ContextSwitch`` (and ``Paging`` when
  the running packet is a paging one); the eviction waits for it. The flag exists from Windows 8:
  for an older driver the eviction waits for the running packet to retire instead.

Allocations that are not resident and cannot be made so (everything else in use) make the packet
wait until something retires. What was made resident for a packet is pinned until the packet is
submitted, so two packets cannot keep evicting each other's allocations.

- Allocations that prefer the aperture live in system memory; making one resident maps its pages
  into an aperture segment (MAP_APERTURE_SEGMENT), evicting it unmaps them onto a dummy page
  (UNMAP_APERTURE_SEGMENT). Nothing is copied.
- A segment's ``budget`` caps what VidMm places in it.
- A process's video memory budget (the Budget of D3DKMTQueryVideoMemoryInfo, which the OS sets,
  :meth:`VidMm.set_budget`) caps what it keeps resident in memory segments: lowering it evicts the
  process's idle allocations at once, and paging for its packets evicts its own allocations to stay
  within it. Each eviction is an ``EvictAllocation`` event (reason ``pressure`` or ``budget``).
- Offer and reclaim (D3DKMTOfferAllocations, D3DKMTReclaimAllocations2): an offered allocation is
  evicted first and its content dropped (DISCARD_CONTENT); reclaiming it then answers DISCARDED,
  else OK.

Not modelled yet: purging video memory on an adapter reset, and the WDDM 2.x GPU virtual address
operations.

Spec: Microsoft's reference pages for DxgkDdiBuildPagingBuffer, DXGK_BUILDPAGINGBUFFER_OPERATION,
DXGKARG_BUILDPAGINGBUFFER and DXGK_SUBMITCOMMANDFLAGS (the null-context switch); the "Device paging
queues" page; rules 4, 11, 12, 15, 26 and 27. A queued packet waits for the residency of what it
uses. The numbers are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists
them all.
"""

from __future__ import annotations

from ..ddi import layout
from ..ddi.registry import RECORDS
from ..ddi.versions import ddi_version
from .objects import Context
# The paging worker's names, importable from here as before the split.
from .vidmm_paging import (  # noqa: F401
    _POISON,
    BUILD,
    BUSY,
    FLAG_CONTEXT_SWITCH,
    FLAG_PAGING,
    INSUFFICIENT,
    PAGE,
    POISON_WINDOW,
    SUCCESS,
    Suspended,
    VidMmPaging,
)


class SegmentHeap:
    """First-fit space of one segment: ``[base, base + size)``; ``kind`` "memory" or "aperture"."""

    __slots__ = ("segment_id", "base", "size", "free", "used", "kind")

    def __init__(self, segment_id: int, base: int, size: int, kind: str = "memory"):
        self.segment_id = segment_id
        self.base = base
        self.size = size
        self.kind = kind
        self.free: list[list[int]] = [[0, size]]  # [offset, length], sorted, coalesced
        self.used = 0

    def alloc(self, size: int) -> int | None:
        for i, (off, length) in enumerate(self.free):
            if length >= size:
                if length == size:
                    del self.free[i]
                else:
                    self.free[i] = [off + size, length - size]
                self.used += size
                return off
        return None

    def release(self, off: int, size: int) -> None:
        self.used -= size
        free = self.free
        i = 0
        while i < len(free) and free[i][0] < off:
            i += 1
        free.insert(i, [off, size])
        # Coalesce with the neighbours.
        if i + 1 < len(free) and free[i][0] + free[i][1] == free[i + 1][0]:
            free[i][1] += free[i + 1][1]
            del free[i + 1]
        if i > 0 and free[i - 1][0] + free[i - 1][1] == free[i][0]:
            free[i - 1][1] += free[i][1]
            del free[i]


class VidMm(VidMmPaging):
    """The memory manager of one adapter (its paging worker: :class:`~.vidmm_paging.VidMmPaging`)."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.sim = adapter.sim
        self.heaps: dict[int, SegmentHeap] = {}
        budgets = getattr(adapter, "budgets", {})
        for i, seg in enumerate(adapter.segments):
            kind = "aperture" if seg.Flags.Aperture else "memory"
            size = min(seg.Size, budgets.get(i + 1, seg.Size))
            self.heaps[i + 1] = SegmentHeap(i + 1, seg.BaseAddress.QuadPart, size, kind)
        self.dummy_page = adapter.pool.alloc(PAGE)  # where unmapped aperture pages point
        # Where paging buffers run: the node the driver names (DXGK_VIDMMCAPS.PagingNode), which
        # only a multiple-engine-aware driver has more than one of.
        paging = adapter.caps.PagingNode if adapter.multi_engine_aware else 0
        self.paging_node = paging if 0 <= paging < len(adapter.node_types) else 0
        #: the paging buffers' sizes the driver asked for (DXGK_QUERYSEGMENTOUT)
        self.buffer_size = adapter.paging_buffer_size
        self.private_size = adapter.paging_private_size
        cls = layout.ctype(RECORDS["DXGKARG_BUILDPAGINGBUFFER"], adapter.arch, adapter.version)
        self._args = cls()
        self._system_device = None
        self._system_contexts: dict[int, Context] = {}
        self.waiting: dict[int, list] = {}  # id(paging packet) -> contexts waiting for it
        self.waiting_for_memory: list = []
        self._page_table_done: dict = {}  # page-table paging packet -> its done() callback
        #: the batch VidMm's paging worker waits on (an allocation the driver called busy): all
        #: later paging waits behind it
        self.suspended: Suspended | None = None
        self.busy_waits = 0  # STATUS_GRAPHICS_ALLOCATION_BUSY answers VidMm waited out
        self.multipass = 0  # partial paging buffers (STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER after writing)
        self.evictions = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.paging_submissions = 0
        self.context_switches = 0
        self.mapped = 0  # bytes mapped into / unmapped from aperture segments
        self.unmapped = 0
        self._clock = 0

    # -- allocations ----------------------------------------------------------------------------------------
    def create(self, alloc) -> None:
        """Place a new allocation: a memory one resident if its segment has room, else evicted
        (content none); an aperture one in system memory, mapped at its first use."""
        heap = self._heap_for(alloc)
        if alloc.preference == "aperture":
            alloc.backing = self.adapter.pool.alloc(alloc.size)
            alloc.valid = True
            alloc.resident = False
            return
        off = heap.alloc(alloc.size) if heap is not None else None
        if off is not None:
            alloc.segment_id = heap.segment_id
            alloc.address = heap.base + off
            alloc.resident = True
            alloc.valid = False
        else:
            alloc.segment_id = 0
            alloc.address = 0
            alloc.resident = False

    def _heap_for(self, alloc) -> SegmentHeap | None:
        for heap in self.heaps.values():
            if heap.kind == alloc.preference and alloc.size <= heap.size:
                return heap
        return None

    # -- before a packet is submitted ----------------------------------------------------------------------
    def ready(self, packet) -> bool:
        """True when every allocation of ``packet`` is resident and its paging has retired. Else
        paging is queued (once) and the caller must hold the packet back."""
        deps = packet.deps
        if deps:
            if all(d.retired >= 0 for d in deps):
                packet.deps = None
            else:
                return False
        missing = []
        moving = None
        for a in packet.allocations:
            if a is not None:
                if not a.resident:
                    missing.append(a)
                elif a.moving is not None:
                    # Resident, but a paging packet queued for another packet still moves it in.
                    if moving is None:
                        moving = []
                    moving.append(a.moving)
        if not missing:
            if moving:
                packet.deps = moving
                return False
            return True
        if self.suspended is not None:
            return False  # the paging worker waits for an allocation to go idle: this waits behind it
        needed = {id(a) for a in packet.allocations if a is not None}
        ops = []
        switches = {}
        process = packet.context.device.process
        if process.budget is not None:
            self._over_budget(process, sum(a.size for a in missing if a.preference == "memory"), needed, ops, switches)
        budget = len(ops)  # the evictions so far are for the budget
        for alloc in missing:
            heap = self._heap_for(alloc)
            if heap is None:
                raise ValueError(f"allocation of {alloc.size} bytes fits no memory segment")
            off = heap.alloc(alloc.size)
            while off is None:
                victim = self._victim(heap, needed)
                if victim is None:
                    # Everything else is in use: wait for something to retire.
                    self._undo(ops)
                    return False
                ops.extend(self._evict(victim, switches))
                off = heap.alloc(alloc.size)
            ops.append(self._bring_in(alloc, heap, off))
        packet.deps = self._submit_paging(ops, switches, budget)
        # What was made resident for this packet stays until the packet is submitted.
        self._pin(packet, 1)
        return not packet.deps

    def _pin(self, packet, delta: int) -> None:
        if packet.pinned == (delta > 0):
            return
        packet.pinned = delta > 0
        for a in packet.allocations:
            if a is not None:
                a.pins += delta

    def _victim(self, heap: SegmentHeap, needed: set, process=None):
        """The allocation to evict from ``heap`` (of ``process`` only, when given): idle, not pinned,
        not ``needed``; offered ones first, then the least recently used."""
        best = None
        for a in self.adapter.allocations:
            if (a.resident and a.segment_id == heap.segment_id and not a.in_use and not a.pins
                    and id(a) not in needed and (process is None or a.device.process is process)):
                if best is None or (not a.offered, a.last_use) < (not best.offered, best.last_use):
                    best = a
        return best

    def resident_bytes(self, process) -> int:
        """Bytes of ``process``'s allocations resident in memory (not aperture) segments."""
        heaps = self.heaps
        return sum(a.size for a in self.adapter.allocations
                   if a.resident and a.device.process is process and heaps[a.segment_id].kind == "memory")

    def _over_budget(self, process, extra: int, needed: set, ops: list, switches: dict) -> None:
        """Plan evictions of ``process``'s own idle allocations until ``extra`` more bytes fit its
        budget (as far as it has allocations to evict)."""
        over = self.resident_bytes(process) + extra - process.budget
        for heap in self.heaps.values():
            if heap.kind != "memory":
                continue
            while over > 0:
                victim = self._victim(heap, needed, process)
                if victim is None:
                    break
                over -= victim.size
                ops.extend(self._evict(victim, switches))

    def set_budget(self, process, budget: int) -> None:
        """The OS sets ``process``'s video memory budget (the Budget of D3DKMTQueryVideoMemoryInfo):
        VidMm evicts the process's idle allocations, offered ones first, until what it has resident
        in local memory fits; what is in use then waits for its next paging. Later paging keeps it
        within the budget."""
        process.budget = budget
        if self.adapter.trace is not None:
            self.adapter.trace.emit(self.sim.now, "VideoMemoryBudget", {"process": process.pid, "budget": budget})
        if self.suspended is not None:
            return  # the paging worker waits on a busy allocation: the budget holds from its next paging
        ops, switches = [], {}
        self._over_budget(process, 0, set(), ops, switches)
        if ops:
            self._submit_paging(ops, switches, budget=len(ops))

    def offer(self, allocations) -> None:
        """D3DKMTOfferAllocations: VidMm may evict these without keeping their content."""
        for a in allocations:
            a.offered = True

    def reclaim(self, allocations) -> list[str]:
        """D3DKMTReclaimAllocations2: per allocation "OK" (its content is there) or "DISCARDED" (it
        was evicted while offered: the content is gone, D3DDDI_RECLAIM_RESULT_DISCARDED)."""
        out = []
        for a in allocations:
            out.append("DISCARDED" if a.discarded else "OK")
            a.offered = a.discarded = False
        return out

    def _undo(self, ops) -> None:
        """Nothing was submitted: put the moves planned so far back (evicted ones stay resident)."""
        for kind, alloc, heap, off, _ in reversed(ops):
            if kind in ("in", "map"):
                heap.release(off, alloc.size)
                alloc.resident = False
            else:
                self._reserve(heap, off, alloc.size)
                alloc.resident = True
                alloc.segment_id = heap.segment_id
                alloc.address = heap.base + off
                alloc.evictions -= 1
                self.evictions -= 1

    def _reserve(self, heap: SegmentHeap, off: int, size: int) -> None:
        for i, (start, length) in enumerate(heap.free):
            if start <= off and off + size <= start + length:
                pieces = []
                if off > start:
                    pieces.append([start, off - start])
                if off + size < start + length:
                    pieces.append([off + size, start + length - off - size])
                heap.free[i:i + 1] = pieces
                heap.used += size
                return

    @property
    def _null_switch(self) -> bool:
        """Whether the driver's interface has the null-context switch (Flags.ContextSwitch,
        Windows 8 and later: DXGK_SUBMITCOMMANDFLAGS,
        https://learn.microsoft.com/windows-hardware/drivers/ddi/d3dkmddi/ns-d3dkmddi-_dxgk_submitcommandflags)."""
        return self.adapter.version.value >= ddi_version("win8").value

    def _evict(self, victim, switches: dict) -> list:
        """Plan moving ``victim`` out: a null-context switch first where its device runs."""
        heap = self.heaps[victim.segment_id]
        off = victim.address - heap.base
        vs = self.adapter.vidsch
        for node_queue in vs.nodes:
            if len(node_queue.hw) > node_queue.stopped and node_queue.ordinal not in switches:
                running = node_queue.hw[node_queue.stopped]
                if running.context.device is victim.device:
                    # Flags.ContextSwitch exists from Windows 8; before it the eviction waits for
                    # the running packet itself to retire.
                    switches[node_queue.ordinal] = bool(running.flags & FLAG_PAGING) if self._null_switch else running
        if victim.backing == 0:
            victim.backing = self.adapter.pool.alloc(victim.size)
        heap.release(off, victim.size)
        kind = "unmap" if heap.kind == "aperture" else "out"
        victim.resident = False
        victim.evictions += 1
        self.evictions += 1
        old = victim.address
        victim.segment_id = 0
        victim.address = 0
        return [(kind, victim, heap, off, old)]

    def _bring_in(self, alloc, heap: SegmentHeap, off: int):
        alloc.segment_id = heap.segment_id
        alloc.address = heap.base + off
        alloc.resident = True
        return ("map" if heap.kind == "aperture" else "in", alloc, heap, off, alloc.address)

    # -- around submission and retirement --------------------------------------------------------------------
    def submitted(self, packet) -> None:
        """``packet`` goes to the driver: its allocation list gets today's addresses."""
        self._clock += 1
        self._pin(packet, -1)
        entries = []
        for a in packet.allocations:
            if a is not None:
                a.in_use += 1
                a.last_use = self._clock
                a.valid = True
            entries.append(a)
        self.adapter._write_allocation_list(packet.alist, entries)

    def retired(self, packet) -> None:
        """``packet`` left the hardware (completed, aborted or cancelled after submission)."""
        for a in packet.allocations:
            if a is not None:
                a.in_use -= 1
        self._wake()

    def dropped(self, packet) -> None:
        """``packet`` will never be submitted (cancelled): what was pinned for it is released."""
        self._pin(packet, -1)
        self._wake()

    def block(self, ctx) -> None:
        self.waiting_for_memory.append(ctx)

    def summary(self) -> dict:
        return {
            "segments": [{"id": h.segment_id, "kind": h.kind, "size": h.size, "used": h.used}
                         for h in self.heaps.values()],
            "evictions": self.evictions, "paging_submissions": self.paging_submissions,
            "bytes_paged_in": self.bytes_in, "bytes_paged_out": self.bytes_out,
            "context_switches": self.context_switches, "paging_node": self.paging_node,
            "bytes_mapped": self.mapped, "bytes_unmapped": self.unmapped,
        }
