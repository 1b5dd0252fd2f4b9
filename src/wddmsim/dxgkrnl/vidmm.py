"""VidMm, the video memory manager: where allocations live, and the paging that moves them.

- An allocation that prefers video memory is created in a memory segment if it fits, else evicted
  (its content lives in system memory, the "backing store").
- Before VidSch submits a packet, every allocation in the packet's list must be resident. VidMm
  finds room in the segment (first fit), evicting the least recently used allocations that no
  submitted packet uses and the packet itself does not need; then it builds the moves into one
  paging buffer with ``DxgkDdiBuildPagingBuffer`` (TRANSFER out to the backing store, or
  DISCARD_CONTENT for content never written; TRANSFER back in, or FILL 0 for a first use). Each
  operation is one submission of that buffer on the paging node with ``Flags.Paging``, a NULL
  ``hContext`` and its own ranges of the buffer and of its private data (so
  ``DmaBufferPrivateDataSubmissionStartOffset`` is not 0 after the first, as rule 4,
  PrivateDataStartOffsetZero, allows for paging: Microsoft's DXGKARG_SUBMITCOMMAND page). The packet
  waits until the last of them retires; its allocation list is then rewritten with the new segment
  addresses and ``DxgkDdiPatch`` patches it.
- The null-context switch: evicting an allocation whose device has a context running on a node
  first sends that node a zero-length submission with ``Flags.ContextSwitch`` (and ``Paging`` when
  the running packet is a paging one); the eviction waits for it. The flag exists from Windows 8:
  for an older driver the eviction waits for the running packet to retire instead.

Paging submissions come from a system context per node whose priority is above every process, so
they run first. Allocations that are not resident and cannot be made so (everything else in use)
make the packet wait until something retires. What was made resident for a packet is pinned until
the packet is submitted, so two packets cannot keep evicting each other's allocations.

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

The protocol of DxgkDdiBuildPagingBuffer (Microsoft's DxgkDdiBuildPagingBuffer and
DXGKARG_BUILDPAGINGBUFFER pages):

- ``AllocationIsIdle`` (a transfer's DXGK_TRANSFERFLAGS, a discard's flags) is set only when the
  GPU is done with the allocation: no submitted packet that references it and no paging packet
  that moves it is unretired (:meth:`VidMm.idle`). An allocation evicted and wanted back before its
  transfer out ran is moved back in without it.
- ``STATUS_GRAPHICS_ALLOCATION_BUSY`` to an operation sent without ``AllocationIsIdle``: the paging
  worker waits until the allocation is idle and asks again with the flag set; what it built before
  goes meanwhile, and paging for other packets waits behind it (one worker). The answer to an
  operation sent with the flag, or to a fill, cannot be acted on (below).
- Multipass: ``MultipassOffset`` is 0 on the first call of an operation and never touched by VidMm
  after. ``STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER`` submits what the driver wrote, if anything, as
  a paging packet of its own (rule 74, PartialPagingBufferSubmittedSeparately), and asks for the
  same operation again in a new buffer; no progress in an empty buffer (nothing written, the offset
  unchanged) cannot be acted on.
- A resident allocation a queued paging packet still moves in makes any packet that uses it wait
  for that packet (``Allocation.moving``), whichever context asked for the move.

What the driver answers is judged (DxgkDdiBuildPagingBuffer's page): on STATUS_SUCCESS
``pDmaBuffer`` has moved forward by exactly the bytes the driver wrote and stays inside the
``DmaSize`` it was given, and ``pDmaBufferPrivateData`` inside ``DmaBufferPrivateDataSize`` (rule 69
PagingBufferAdvanceExact, 0xC4: Windows has no stop for it), and so after a partial buffer
(INSUFFICIENT_DMA_BUFFER), which is submitted too. "Exactly" is ground truth, beyond what Windows
sees: before the call VidMm fills the first :data:`POISON_WINDOW` bytes of the free space with a
pattern; a byte of it changed past the new ``pDmaBuffer`` is a command the driver wrote and did not
count. A paging operation the driver will not build is a critical failure: bug check 0x119/0x5
(DRIVER_FAULTED_SYSTEM_COMMAND, the bug check page's "the driver failed a system or paging
command"), whose crash record names rule 68 (BuildPagingBufferStatus) for a status outside the three
the contract allows and rule 75 (FailedSystemCommandBugChecks) for one of them VidMm cannot act on.

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
from ..ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION as OP
from ..ddi.ntstatus import NTSTATUS, status_name
from ..ddi.registry import RECORDS
from ..ddi.versions import ddi_version
from ..sim import PASSIVE
from .objects import Context, Device, Packet, Process

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
INSUFFICIENT = int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
BUSY = int(NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY)
BUILD = "DXGKARG_BUILDPAGINGBUFFER"
#: Bytes past the write position VidMm fills before each DxgkDdiBuildPagingBuffer (rule 69), and
#: with what: longer than any one paging command of the model's GPU.
POISON_WINDOW = 512
_POISON = bytes.fromhex("DEC0ADDE") * (POISON_WINDOW // 4)
FLAG_PAGING = 0x1
FLAG_CONTEXT_SWITCH = 0x40
PAGE = 4096


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


class Suspended:
    """The rest of a paging batch whose building stopped at a STATUS_GRAPHICS_ALLOCATION_BUSY
    answer: ``ops`` from the busy one on, built when ``alloc`` is idle. The packet the batch is for
    waits on it: ``retired`` is that of the batch's last paging packet once there is one."""

    __slots__ = ("ops", "first_deps", "alloc", "multipass_offset", "last", "resuming")

    def __init__(self, ops, first_deps, alloc, multipass_offset: int):
        self.ops = ops
        self.first_deps = first_deps
        self.alloc = alloc
        self.multipass_offset = multipass_offset  # as the driver left it: kept for the next call
        self.last = None  # the last packet of the rest of the batch, once built
        self.resuming = False

    @property
    def retired(self) -> int:
        return self.last.retired if self.last is not None else -1


class VidMm:
    """The memory manager of one adapter."""

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

    # -- paging buffers -----------------------------------------------------------------------------------
    def _system_context(self, node: int) -> Context:
        ctx = self._system_contexts.get(node)
        if ctx is None:
            adapter = self.adapter
            if self._system_device is None:
                proc = Process("System", "realtime", pid=4)
                self._system_device = Device(proc)
                self._system_device.handle = adapter.handles.add(self._system_device)
            ctx = Context(f"VidMm{node}", self._system_device, node, 7)
            ctx.system = True
            ctx.handle = adapter.handles.add(ctx)
            ctx.hDdi = 0
            ctx.info = adapter.contexts[0].info if adapter.contexts else None
            self._system_contexts[node] = ctx
        return ctx

    def _submit_paging(self, ops, switches: dict, budget: int = 0) -> list:
        """Queue the context switches and one paging buffer for ``ops``; returns what the waiting
        packet must wait for."""
        vs = self.adapter.vidsch
        first_deps = []
        for node, paging in sorted(switches.items()):
            if not isinstance(paging, bool):
                first_deps.append(paging)  # a driver before Windows 8: wait for the running packet
                continue
            cs = self._packet(node, "context_switch", FLAG_CONTEXT_SWITCH | (FLAG_PAGING if paging else 0))
            self.context_switches += 1
            first_deps.append(cs)
            vs.enqueue(cs)
        if not ops:
            return first_deps
        trace = self.adapter.trace
        for i, (kind, alloc, heap, off, old) in enumerate(ops):
            if kind == "out" or kind == "unmap":
                if kind == "out" and alloc.offered:
                    alloc.valid = False  # offered: its content is dropped (DISCARD_CONTENT), not moved
                    alloc.discarded = True
                reason = "budget" if i < budget else "pressure"
                content = "moved" if alloc.valid or kind == "unmap" else "discarded"
                self.adapter.ledger.evict(self.sim.now, alloc.handle, alloc.device.handle, alloc.device.process.pid,
                                          alloc.size, heap.segment_id, reason, content)
                if trace is not None:
                    trace.emit(self.sim.now, "EvictAllocation", {
                        "allocation": alloc.handle, "device": alloc.device.handle, "process": alloc.device.process.pid,
                        "size": alloc.size, "segment": heap.segment_id, "reason": "budget" if i < budget else "pressure",
                        "content": "moved" if alloc.valid or kind == "unmap" else "discarded"})
        return self._build(ops, first_deps)

    def idle(self, alloc) -> bool:
        """Whether the GPU is done with ``alloc``: no submitted packet that references it and no
        paging packet that moves it is unretired (DXGK_TRANSFERFLAGS.AllocationIsIdle)."""
        return not alloc.in_use and alloc.moving is None

    def _build(self, ops, first_deps, multipass_offset: int = 0) -> list:
        """Build ``ops`` into paging buffers and queue one paging packet per piece; returns what the
        packet the batch is for waits on (its last paging packet, or the :class:`Suspended` rest).

        Per operation, ``MultipassOffset`` is 0 on the first call and left as the driver set it on
        every later one (Microsoft's DxgkDdiBuildPagingBuffer page). The driver's answers:

        - STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER: what it wrote (if anything) goes as a paging
          packet of its own, and the same operation is asked again in a new buffer. No progress in
          an empty buffer (nothing written, MultipassOffset unchanged) is an operation VidMm cannot
          get built: 0x119/0x5.
        - STATUS_GRAPHICS_ALLOCATION_BUSY to a transfer or discard VidMm sent with AllocationIsIdle
          clear: the packets built so far go, and the rest of the batch waits until the allocation
          is idle, then the operation is asked again with AllocationIsIdle set. To one sent with it
          set, or to another operation: 0x119/0x5.
        """
        args = self._args
        packets = []
        buf = None
        for i, (kind, alloc, heap, off, old) in enumerate(ops):
            idle = self.idle(alloc)
            self._fill_args(args, kind, alloc, heap, off, old, idle)
            if i == 0 and multipass_offset:
                args.MultipassOffset = multipass_offset  # the same operation, asked again after a wait
            while True:
                if buf is None:
                    buf = self._new_buffer()
                shared, cursor, pcursor = buf
                self._place(args, shared[0], cursor, pcursor)
                progress = args.MultipassOffset
                status = self.build(args)
                if status == SUCCESS:
                    packets.append(self._piece(shared, cursor, pcursor, args, kind, alloc, first_deps))
                    buf = (shared, args.pDmaBuffer, args.pDmaBufferPrivateData)
                    break
                if status == INSUFFICIENT:
                    if args.pDmaBuffer != cursor or args.pDmaBufferPrivateData != pcursor:
                        # A partial buffer: submitted as it is; the operation goes on in a new one.
                        packets.append(self._piece(shared, cursor, pcursor, args, kind, alloc, first_deps))
                        self.multipass += 1
                    elif cursor == shared[0] and args.MultipassOffset == progress:
                        self.failed(args, status, "the driver made no progress in an empty paging buffer (nothing "
                                               "written, MultipassOffset unchanged), so a new one cannot help")
                    buf = None
                    continue
                if status == BUSY and not idle and (kind == "out" or kind == "in" and alloc.valid):
                    # The driver needs the allocation idle (Microsoft's DxgkDdiBuildPagingBuffer
                    # page): the worker waits for it, then asks again with AllocationIsIdle set.
                    self._enqueue(packets)
                    rest = Suspended(ops[i:], first_deps, alloc, args.MultipassOffset)
                    self.suspended = rest
                    self.busy_waits += 1
                    self._wake()
                    return [rest]
                self.failed(args, status, "an allocation the driver calls busy although VidMm said it is idle "
                                       "(AllocationIsIdle), or an operation without that flag")
            if kind == "out":
                self.bytes_out += alloc.size if alloc.valid else 0
            elif kind == "in":
                self.bytes_in += alloc.size
                alloc.valid = True
            elif kind == "map":
                self.mapped += alloc.size
            else:
                self.unmapped += alloc.size
        self._enqueue(packets)
        return [packets[-1]]

    def _piece(self, shared, cursor: int, pcursor: int, args, kind, alloc, first_deps) -> Packet:
        """The paging packet of what the driver wrote from ``cursor`` (commands) and ``pcursor``
        (private data) up to its pointers in ``args``."""
        p = self._packet(self.paging_node, "paging", FLAG_PAGING)
        block = shared[0]
        p.dma = block
        p.dma_size = self.buffer_size
        p.start_off = cursor - block
        p.end_off = args.pDmaBuffer - block
        p.priv = block + self.buffer_size
        p.priv_size = self.private_size
        p.priv_start = pcursor - p.priv
        p.priv_end = args.pDmaBufferPrivateData - p.priv
        p.buffers = shared
        p.moves = alloc
        alloc.moving = p
        shared[2] += 1
        if kind in ("out", "unmap") and first_deps:
            p.deps = list(first_deps)
        return p

    def _enqueue(self, packets) -> None:
        vs = self.adapter.vidsch
        for p in packets:
            self.paging_submissions += 1
            vs.enqueue(p)

    def _resume(self, rest: Suspended) -> None:
        """The allocation the driver called busy is idle: build the rest of its batch."""
        self.suspended = None
        rest.last = self._build(rest.ops, rest.first_deps, rest.multipass_offset)[-1]
        self._wake()

    def page_table_buffer(self, dma: int, size: int, length: int, priv: int, done) -> None:
        """Queue a paging buffer that writes page tables (GPU virtual addressing, built by
        :mod:`.gpuva` through DxgkDdiBuildPagingBuffer): ``length`` bytes of commands at the start
        of the ``size``-byte buffer at ``dma``, with ``priv`` as its private data; ``done()`` runs
        when the packet retires. The buffer's memory belongs to the caller."""
        p = self._packet(self.paging_node, "paging", FLAG_PAGING)
        p.dma = dma
        p.dma_size = size
        p.start_off = 0
        p.end_off = length
        p.priv = priv
        p.priv_size = PAGE
        p.priv_start = 0
        p.priv_end = 0  # page-table operations write no private data
        self._page_table_done[p] = done
        self.paging_submissions += 1
        self.adapter.vidsch.enqueue(p)

    def _new_buffer(self):
        total = self.buffer_size + self.private_size
        block = self.adapter.pool.alloc(total)
        return ([block, total, 0], block, block + self.buffer_size)

    def build(self, args) -> int:
        """DxgkDdiBuildPagingBuffer on ``args`` (filled by the caller) and, on STATUS_SUCCESS or
        STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER (whose partial buffer is submitted too), the
        judgement of how far the driver moved its pointers (rule 69, see the module doc). Returns
        the status for the caller to act on."""
        adapter = self.adapter
        mem = adapter.memory
        cursor, size = args.pDmaBuffer, args.DmaSize
        pcursor, psize = args.pDmaBufferPrivateData, args.DmaBufferPrivateDataSize
        window = min(size, POISON_WINDOW)
        if window:
            mem.write(cursor, _POISON[:window])
        status = adapter.ddi.call("DxgkDdiBuildPagingBuffer", adapter.hAdapter, args)
        if status != SUCCESS and status != INSUFFICIENT or adapter.verifier.mode == "off":
            return status  # (a partial buffer, INSUFFICIENT_DMA_BUFFER, is submitted too: judged)
        adapter.verifier.judged_rules.add(69)
        end, pend = args.pDmaBuffer, args.pDmaBufferPrivateData
        found = []
        if not cursor <= end <= cursor + size:
            found.append(f"pDmaBuffer moved from 0x{cursor:X} to 0x{end:X} but must stay within the {size} bytes "
                         f"of DmaSize (0x{cursor:X}..0x{cursor + size:X})")
        elif end < cursor + window:
            rest = mem.read(end, cursor + window - end)
            if rest != _POISON[end - cursor:window]:
                written = next(i for i, (x, y) in enumerate(zip(rest, _POISON[end - cursor:window])) if x != y)
                found.append(f"pDmaBuffer was advanced to 0x{end:X} ({end - cursor} bytes) but the driver wrote the "
                             f"paging buffer at 0x{end + written:X}, past it: pDmaBuffer must move forward by exactly "
                             f"the bytes written (ground truth)")
        if not pcursor <= pend <= pcursor + psize:
            found.append(f"pDmaBufferPrivateData moved from 0x{pcursor:X} to 0x{pend:X} but must stay within the "
                         f"{psize} bytes of DmaBufferPrivateDataSize")
        if found:
            from ..ddi import rules as R
            from ..ddi.bugcheck import BugCheck, BugCheckCode
            from .crash import BugCheckStop, CrashRecord

            violations = [R.Violation(69, "PagingBufferAdvanceExact", m) for m in found]
            adapter.verifier.handle(violations, BUILD, args, adapter.interrupt_address)
            if not cursor <= end <= cursor + size or not pcursor <= pend <= pcursor + psize:
                # Modes report and off: a range past the buffer cannot be submitted; the model stops
                # as strict mode does rather than hand the GPU memory that is not the buffer's.
                raise BugCheckStop(CrashRecord(
                    time=self.sim.now, bugcheck=BugCheck(BugCheckCode.DRIVER_VERIFIER_DETECTED_VIOLATION, 69,
                                                         adapter.interrupt_address, 0, 0),
                    message=str(violations[0]), struct=BUILD, arch=adapter.arch, ddi_version=adapter.version.name,
                    address=adapter.interrupt_address, data=bytes(args), rule=69, rule_name="PagingBufferAdvanceExact",
                    ddi="DxgkDdiBuildPagingBuffer"))
        return status

    def failed(self, args, status: int, why: str) -> None:
        """A paging operation the driver would not build: a critical failure, bug check 0x119/0x5
        in every verifier mode (see the module doc). ``why``: why VidMm cannot act on an allowed
        status (rule 75)."""
        adapter = self.adapter
        from ..ddi import rules as R
        from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
        from .crash import BugCheckStop, CrashRecord

        bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.DRIVER_FAULTED_SYSTEM_COMMAND,
                      status & 0xFFFFFFFF, adapter.interrupt_address, int(args.Operation))
        found = [v for v in adapter.verifier.find(BUILD, args, R.Facts(version=adapter.version, status=status)) if v.rule == 68]
        stop = found[0] if found else R.Violation(
            75, "FailedSystemCommandBugChecks",
            f"DxgkDdiBuildPagingBuffer returned {status_name(status)} for operation {int(args.Operation)}, which VidMm "
            f"cannot act on: {why}", bc)
        if adapter.verifier.mode != "off":
            adapter.verifier.handle([stop], BUILD, args, adapter.interrupt_address, bugcheck=bc)
        raise BugCheckStop(CrashRecord(
            time=self.sim.now, bugcheck=bc, message=str(stop), struct=BUILD, arch=adapter.arch,
            ddi_version=adapter.version.name, address=adapter.interrupt_address, data=bytes(args), rule=stop.rule,
            rule_name=stop.name, ddi="DxgkDdiBuildPagingBuffer",
        ))

    def _place(self, args, block: int, cursor: int, pcursor: int) -> None:
        """Where the driver writes: from ``cursor`` (and ``pcursor``) to the end of the buffer."""
        args.pDmaBuffer = cursor
        args.DmaSize = self.buffer_size - (cursor - block)
        args.pDmaBufferPrivateData = pcursor
        args.DmaBufferPrivateDataSize = self.private_size - (pcursor - block - self.buffer_size)

    def _fill_args(self, args, kind, alloc, heap, off, old, idle: bool) -> None:
        """The operation, at its first call: MultipassOffset 0, AllocationIsIdle as ``idle``."""
        args.MultipassOffset = 0
        args.hSystemContext = 0
        if kind in ("map", "unmap"):
            pages = alloc.size // PAGE
            if kind == "map":
                args.Operation = int(OP.DXGK_OPERATION_MAP_APERTURE_SEGMENT)
                m = args.MapApertureSegment
                m.pMdl = alloc.backing
                m.Flags.Value = 0
                if hasattr(m, "MdlOffset"):
                    m.MdlOffset = 0
            else:
                args.Operation = int(OP.DXGK_OPERATION_UNMAP_APERTURE_SEGMENT)
                m = args.UnmapApertureSegment
                m.DummyPage.QuadPart = self.dummy_page
            m.hDevice = alloc.device.handle
            m.hAllocation = alloc.handle
            m.SegmentId = heap.segment_id
            m.OffsetInPages = off // PAGE
            m.NumberOfPages = pages
            return
        if kind == "out":
            if alloc.valid:
                args.Operation = int(OP.DXGK_OPERATION_TRANSFER)
                t = args.Transfer
                t.hAllocation = alloc.handle
                t.TransferOffset = 0
                t.TransferSize = alloc.size
                t.Source.SegmentId = heap.segment_id
                t.Source.SegmentAddress.QuadPart = old
                t.Destination.SegmentId = 0
                t.Destination.pMdl = alloc.backing
                # AllocationIsIdle only when true; TransferStart and TransferEnd: one whole transfer
                t.Flags.Value = (0x4 if idle else 0) | 0x8 | 0x10
            else:
                args.Operation = int(OP.DXGK_OPERATION_DISCARD_CONTENT)
                d = args.DiscardContent
                d.hAllocation = alloc.handle
                d.Flags.Value = 1 if idle else 0  # AllocationIsIdle
                d.SegmentId = heap.segment_id
                d.SegmentAddress.QuadPart = old
        elif alloc.valid:
            args.Operation = int(OP.DXGK_OPERATION_TRANSFER)
            t = args.Transfer
            t.hAllocation = alloc.handle
            t.TransferOffset = 0
            t.TransferSize = alloc.size
            t.Source.SegmentId = 0
            t.Source.pMdl = alloc.backing
            t.Destination.SegmentId = heap.segment_id
            t.Destination.SegmentAddress.QuadPart = alloc.address
            t.Flags.Value = (0x4 if idle else 0) | 0x8 | 0x10
        else:
            args.Operation = int(OP.DXGK_OPERATION_FILL)
            f = args.Fill
            f.hAllocation = alloc.handle
            f.FillSize = alloc.size
            f.FillPattern = 0
            f.Destination.SegmentId = heap.segment_id
            f.Destination.SegmentAddress.QuadPart = alloc.address

    def _packet(self, node: int, kind: str, flags: int) -> Packet:
        ctx = self._system_context(node)
        ctx.seq += 1
        ctx.submitted += 1
        p = Packet(ctx, ctx.seq, kind)
        p.flags = flags
        p.buffers = None
        return p

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

    def paging_retired(self, packet) -> None:
        moved = packet.moves
        if moved is not None and moved.moving is packet:
            moved.moving = None
        done = self._page_table_done.pop(packet, None) if self._page_table_done else None
        if done is not None:
            done()
        self._wake()

    def _wake(self) -> None:
        rest = self.suspended
        if rest is not None and not rest.resuming and self.idle(rest.alloc):
            rest.resuming = True
            self.sim.soon(self._resume, rest, PASSIVE)  # DxgkDdiBuildPagingBuffer is PASSIVE_LEVEL
        waiting, self.waiting_for_memory = self.waiting_for_memory, []
        for ctx in waiting:
            self.adapter.vidsch.unblock(ctx)

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
