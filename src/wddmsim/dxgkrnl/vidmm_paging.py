"""VidMm's paging worker: the paging buffers it has the driver build with
``DxgkDdiBuildPagingBuffer`` and queues as paging packets, and the judgement of the driver's answers.

What :mod:`.vidmm` decided to move (its residency planning) becomes paging operations here:
TRANSFER out to the backing store, or DISCARD_CONTENT for content never written; TRANSFER back in,
or FILL 0 for a first use; MAP_APERTURE_SEGMENT and UNMAP_APERTURE_SEGMENT for the aperture. VidMm
builds them into one paging buffer. Each operation is one submission of that buffer on the paging
node with ``Flags.Paging``, a NULL ``hContext`` and its own ranges of the buffer and of its private
data (so ``DmaBufferPrivateDataSubmissionStartOffset`` is not 0 after the first, as rule 4,
PrivateDataStartOffsetZero, allows for paging: Microsoft's DXGKARG_SUBMITCOMMAND page). Paging
submissions come from a system context per node whose priority is above every process, so they run
first. The null-context switches VidMm planned go first, as zero-length submissions with
``Flags.ContextSwitch`` (and ``Paging`` when the running packet is a paging one). Each eviction is
an ``EvictAllocation`` event (reason ``pressure`` or ``budget``); an offered allocation's content
is dropped (DISCARD_CONTENT).

The protocol of DxgkDdiBuildPagingBuffer (Microsoft's DxgkDdiBuildPagingBuffer and
DXGKARG_BUILDPAGINGBUFFER pages):

- ``AllocationIsIdle`` (a transfer's DXGK_TRANSFERFLAGS, a discard's flags) is set only when the
  GPU is done with the allocation: no submitted packet that references it and no paging packet
  that moves it is unretired (:meth:`VidMmPaging.idle`). An allocation evicted and wanted back
  before its transfer out ran is moved back in without it.
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

Spec: Microsoft's reference pages for DxgkDdiBuildPagingBuffer, DXGK_BUILDPAGINGBUFFER_OPERATION,
DXGKARG_BUILDPAGINGBUFFER and DXGK_SUBMITCOMMANDFLAGS (the null-context switch). The numbers are the
rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

from ..ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION as OP
from ..ddi.ntstatus import NTSTATUS, status_name
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


class VidMmPaging:
    """The paging worker of :class:`~wddmsim.dxgkrnl.vidmm.VidMm` (a base class of it: one
    object, so the hot path pays nothing for the split). It uses the attributes VidMm's
    ``__init__`` sets: ``adapter``, ``sim``, ``paging_node``, ``buffer_size``, ``private_size``,
    ``_args``, the system device and contexts, ``suspended``, ``waiting_for_memory``,
    ``_page_table_done`` and the paging counters."""

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

    # -- a paging packet retired: the worker and the packets that wait wake ---------------------------------
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

