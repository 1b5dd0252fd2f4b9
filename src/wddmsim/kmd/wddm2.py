"""The reference driver's WDDM 2.x entry points: GPU virtual addressing and hardware scheduling.

- ``DxgkDdiSetRootPageTable``: remembers each context's root page table (the address space its
  buffers run in).
- ``DxgkDdiBuildPagingBuffer`` with ``UPDATE_PAGE_TABLE`` turns the OS's ``DXGK_PTE`` array into the
  GPU's entry format (valid bit, read-only bit, page address) in one UPDATE_PAGE_TABLE command;
  ``FLUSH_TLB`` becomes a FLUSH_TLB command of the root.
- ``DxgkDdiSubmitCommandVirtual`` (software scheduling with GPU virtual addresses): a
  SET_ADDRESS_SPACE when the ring last ran another address space, an INDIRECT to the buffer's
  virtual address and the node's fence.
- Hardware scheduling: ``DxgkDdiCreateHwContext`` / ``DxgkDdiCreateHwQueue`` program the GPU's
  context-management processor (one per engine) through its mailbox registers (the ``sched_*``
  operations of :class:`wddmsim.gpu.mmio.Mmio`): a context per hardware context, a ring per
  hardware queue. ``DxgkDdiSetupPriorityBands`` and
  ``DxgkDdiSetContextSchedulingProperties`` become its band and context settings (100 ns units to
  ns); the latter comes at creation and again whenever the OS changes a context's priority, and the
  GPU's scheduler re-ranks the context at once (a raised context preempts after its grace). ``DxgkDdiSubmitCommandToHwQueue`` appends an INDIRECT to the queue's ring; when the node has
  ``RingBufferFenceRelease`` the driver writes the progress fence itself with a ring FENCE after the
  INDIRECT (the value lands once the engine has left the buffer), otherwise the buffer's own last
  instruction writes it. The private data is read during the call only.
- ``DxgkDdiSuspendContext`` / ``DxgkDdiResumeContext``, ``DxgkDdiResetHwEngine`` (with
  ``DxgkCbInvalidateHwContext`` for each context the reset hit) and ``DxgkDdiResumeHwEngine``.
- In the ISR of a hardware-scheduled node: a fence interrupt is ``MONITORED_FENCE_SIGNALED``, a
  finished suspend is ``SUSPEND_CONTEXT_COMPLETED``, an engine fault is ``HWQUEUE_PAGE_FAULTED``
  naming the queue that ran and its next progress fence id.

Spec: Microsoft's reference pages for DxgkDdiSubmitCommandVirtual, DXGK_BUILDPAGINGBUFFER_OPERATION,
DxgkDdiSetupPriorityBands, DxgkDdiSetContextSchedulingProperties, DxgkDdiSuspendContext,
DxgkDdiCreateHwQueue, DxgkDdiSubmitCommandToHwQueue, DxgkDdiResetHwEngine and DxgkDdiResumeHwEngine.
"""

from __future__ import annotations

import ctypes
import struct
from collections import deque

from ..ddi.enums import DXGK_INTERRUPT_TYPE as T
from ..ddi.ntstatus import NTSTATUS
from ..gpu import commands as C

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
PENDING = int(NTSTATUS.STATUS_PENDING)
INVALID = int(NTSTATUS.STATUS_INVALID_PARAMETER)
HWQUEUE_RING_SIZE = 16 * 1024
#: The most command buffers a hardware queue's ring is sure to hold: each takes at most an INDIRECT
#: and a FENCE (36 bytes), the ring keeps 4 bytes free to tell full from empty, and a packet that
#: would cross the end leaves up to 35 bytes of NOP padding behind. Reported as the node's
#: MaxInFlightHwQueueBuffers unless the settings say otherwise.
HWQUEUE_RING_BUFFERS = (HWQUEUE_RING_SIZE - 4 - 35) // 36
#: DXGK_PAGE_FAULT_FLAGS.DXGK_PAGE_FAULT_WRITE / FENCE_INVALID
PAGE_FAULT_WRITE = 0x1
PAGE_FAULT_FENCE_INVALID = 0x2
PAGE_FAULT_ENGINE_RESET_REQUIRED = 0x8


class _HwContext:
    __slots__ = ("handle", "os_handle", "device", "node", "root", "queues", "created")

    def __init__(self, handle: int, os_handle: int, device, node: int):
        self.handle = handle
        self.os_handle = os_handle
        self.device = device
        self.node = node
        self.root = 0
        self.queues: list = []
        self.created = False


class _HwQueue:
    __slots__ = ("handle", "os_handle", "context", "ring", "ring_size", "wptr", "fence_gpu_va", "fence_cpu_va",
                 "submitted")

    def __init__(self, handle: int, os_handle: int, context: _HwContext, ring: int, ring_size: int):
        self.handle = handle
        self.os_handle = os_handle
        self.context = context
        self.ring = ring
        self.ring_size = ring_size
        self.wptr = 0
        self.fence_gpu_va = 0
        self.fence_cpu_va = 0
        self.submitted: deque = deque()  # progress ids on the ring, oldest first


class KmdWddm2:
    """Mixin for :class:`~wddmsim.kmd.driver.ReferenceDriver` (see the module doc)."""

    # state set up by ReferenceDriver.__init__: hw (the GPU's register interface, gpu/mmio.py),
    # mem (system memory), hw_scheduling, fence_release (per node), max_in_flight (per node),
    # roots, hwcontexts, hwqueues, _ring_roots

    # -- GPU virtual addresses ------------------------------------------------------------------------
    def DxgkDdiSetRootPageTable(self, hAdapter: int, pSetPageTable) -> None:
        args = pSetPageTable
        root = args.Address.SegmentOffset  # segment 0: a system physical address
        self.roots[args.hContext] = root
        hc = self.hwcontexts.get(args.hContext)
        if hc is not None:
            hc.root = root
            if not hc.created:
                hc.created = True
                self.hw.sched_create_context(hc.node, hc.handle, hc.device, address_space=hc.root)

    def _read_ptes(self, raw: bytes, n: int) -> list[int]:
        """The ``n`` DXGK_PTEs in ``raw`` as this GPU's entries (page address | 1 valid | 2 read-only).
        When PageAddress is a whole 64-bit member and Valid and ReadOnly are bits outside it, the
        entries are read through masks of those bits (found by setting the members); otherwise
        through the structure, member by member. Both read the same bytes the same way."""
        size = self._pte_size
        fast = getattr(self, "_pte_masks", False)
        if fast is False:
            fast = self._pte_masks = self._pte_layout()
        if fast is None:
            entries = []
            for i in range(n):
                e = self._pte_cls.from_buffer_copy(raw, i * size)
                entries.append((e.PageAddress << 12) | (1 if e.Valid else 0) | (2 if e.ReadOnly else 0))
            return entries
        valid, read_only, offset = fast
        if size == 16 and offset == 8 and valid >> 64 == 0 and read_only >> 64 == 0:
            # The flag word then the page address: read as u64s at once.
            both = struct.unpack_from(f"<{2 * n}Q", raw)
            return [(p << 12) | (1 if w & valid else 0) | (2 if w & read_only else 0)
                    for w, p in zip(both[0::2], both[1::2])]
        page = struct.Struct("<Q").unpack_from
        entries = []
        for i in range(0, n * size, size):
            word = int.from_bytes(raw[i:i + size], "little")
            entries.append((page(raw, i + offset)[0] << 12) | (1 if word & valid else 0) | (2 if word & read_only else 0))
        return entries

    def _pte_layout(self):
        """(Valid mask, ReadOnly mask, PageAddress offset) over a whole DXGK_PTE read as a
        little-endian integer, or None when PageAddress is not a plain 64-bit member apart from them."""
        cls = self._pte_cls
        field = getattr(cls, "PageAddress", None)
        if field is None or field.size != 8:
            return None
        masks = []
        for name in ("Valid", "ReadOnly"):
            e = cls()
            setattr(e, name, (1 << 64) - 1)  # every bit of the member (ctypes keeps its width)
            raw = bytes(e)
            if raw[field.offset:field.offset + 8] != bytes(8):
                return None
            masks.append(int.from_bytes(raw, "little"))
        return masks[0], masks[1], field.offset

    def _build_page_table_ops(self, args) -> int | None:
        """UPDATE_PAGE_TABLE and FLUSH_TLB of DxgkDdiBuildPagingBuffer; None if not one of them."""
        op = int(args.Operation)
        if op == self._OP_UPDATE_PAGE_TABLE:
            u = args.UpdatePageTable
            if u.UpdateMode != self._GPU_PHYSICAL:
                return INVALID  # this GPU's tables are written by physical address only
            n = u.NumPageTableEntries
            raw = self.mem.read(u.pPageTableEntries, n * self._pte_size)
            entries = self._read_ptes(raw, n)
            packet = C.update_page_table(u.PageTableAddress.GpuPhysical.SegmentOffset, u.StartIndex, entries)
        elif op == self._OP_FLUSH_TLB:
            f = args.FlushTlb
            packet = C.flush_tlb(f.RootPageTableAddress.SegmentOffset, f.StartVirtualAddress, f.EndVirtualAddress)
        else:
            return None
        if len(packet) > args.DmaSize:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        self.mem.write(args.pDmaBuffer, packet)
        args.pDmaBuffer += len(packet)
        args.DmaSize -= len(packet)
        self.paging_operations += 1
        return SUCCESS

    def DxgkDdiCreateProcess(self, hAdapter: int, pCreateProcess) -> int:
        """A driver process object per Dxgkrnl process (its handle names the address space in the
        page-table operations)."""
        handle = self._handle()
        self.processes[handle] = pCreateProcess.hDxgkProcess
        pCreateProcess.hKmdProcess = handle
        return SUCCESS

    def DxgkDdiSubmitCommandVirtual(self, hAdapter: int, pSubmitCommandVirtual) -> int:
        """SET_ADDRESS_SPACE if the ring is in another space, INDIRECT to the buffer's GPU virtual
        address (or the rest of a buffer a preemption stopped), then the node's fence written with
        physical addressing. Malformed private data: STATUS_INVALID_PARAMETER (the OS puts the
        device in error)."""
        args = pSubmitCommandVirtual
        ordinal = self._node_of(args.hContext) if args.hContext else args.NodeOrdinal
        if not 0 <= ordinal < len(self.nodes):
            return INVALID
        node = self.nodes[ordinal]
        if args.DmaBufferPrivateDataSize:
            self.reads_of_private_data += 1
            if self.mem.read_u32(args.pDmaBufferPrivateData) != self.PRIVATE_MAGIC:
                # Refused. The OS counts the fence complete after the buffers before it, and so
                # does the driver's last completed fence (see _completed).
                node.refused.add(args.SubmissionFenceId)
                node.last_submitted = max(node.last_submitted, args.SubmissionFenceId)
                return INVALID
        packet = b""
        if args.DmaBufferSize and not args.Flags.NullRendering:
            root = self.roots.get(args.hContext, 0)
            packet += self._switch_root(node, root)
            packet += self._buffer_call(node, args.SubmissionFenceId, args.DmaBufferVirtualAddress, args.DmaBufferSize, root,
                                        owner=args.hContext)
        # The fence slot is kernel memory: written with physical addressing.
        packet += self._switch_root(node, 0) + C.fence(node.fence_addr, args.SubmissionFenceId, interrupt=True)
        if not self._ring_write(node, packet):
            return int(NTSTATUS.STATUS_UNSUCCESSFUL)
        if args.SubmissionFenceId > node.last_submitted:
            node.last_submitted = args.SubmissionFenceId
        self.hw.doorbell(node.ordinal, node.wptr)
        return SUCCESS

    def _report_monitored_fence(self, node) -> None:
        """MONITORED_FENCE_SIGNALED: a buffer wrote a monitored fence with interrupt (device IRQL)."""
        data = node.interrupt_data
        data.InterruptType = int(T.DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED)
        data.MonitoredFenceSignaled.NodeOrdinal = node.ordinal
        data.MonitoredFenceSignaled.EngineOrdinal = 0
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)

    # -- hardware contexts and queues ------------------------------------------------------------------
    def DxgkDdiCreateHwContext(self, hDevice: int, pCreateHwContext) -> int:
        args = pCreateHwContext
        dev = self.devices.get(hDevice)
        if dev is None or not 0 <= args.NodeOrdinal < self.hw.engine_count:
            return INVALID
        hc = _HwContext(self._handle(), args.hHwContext, dev.handle, args.NodeOrdinal)
        self.hwcontexts[hc.handle] = hc
        self.contexts_node[hc.handle] = args.NodeOrdinal
        args.hHwContext = hc.handle
        return SUCCESS

    def DxgkDdiSignalMonitoredFence(self, hContext: int, pSignalMonitoredFence) -> int:
        """Append the GPU's write of a monitored-fence value (with interrupt) to a kernel buffer."""
        args = pSignalMonitoredFence
        packet = C.fence(args.MonitoredFenceGpuVa, args.MonitoredFenceValue, interrupt=True)
        if len(packet) > args.DmaSize:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        self.mem.write(args.pDmaBuffer, packet)
        args.pDmaBuffer += len(packet)
        args.DmaSize -= len(packet)
        return SUCCESS

    def DxgkDdiDestroyHwContext(self, hHwContext: int) -> int:
        hc = self.hwcontexts.pop(hHwContext, None)
        if hc is None:
            return INVALID
        hw = self.hw
        for q in hc.queues:
            hw.sched_destroy_queue(hc.node, q.handle)
            self.hwqueues.pop(q.handle, None)
        if hc.created:
            hw.sched_destroy_context(hc.node, hc.handle)
        return SUCCESS

    def DxgkDdiCreateHwQueue(self, hHwContext: int, pCreateHwQueue) -> int:
        args = pCreateHwQueue
        hc = self.hwcontexts.get(hHwContext)
        if hc is None:
            return INVALID
        ring = self.dxgk.MmAllocateContiguousMemory(HWQUEUE_RING_SIZE)
        q = _HwQueue(self._handle(), args.hHwQueue, hc, ring, HWQUEUE_RING_SIZE)
        q.fence_gpu_va = args.HwQueueProgressFenceGPUVirtualAddress
        q.fence_cpu_va = args.HwQueueProgressFenceCPUVirtualAddress
        self.hwqueues[q.handle] = q
        hc.queues.append(q)
        self.hw.sched_create_queue(hc.node, hc.handle, q.handle, ring, HWQUEUE_RING_SIZE)
        args.hHwQueue = q.handle
        return SUCCESS

    def DxgkDdiDestroyHwQueue(self, hHwQueue: int) -> int:
        q = self.hwqueues.pop(hHwQueue, None)
        if q is None:
            return INVALID
        q.context.queues.remove(q)
        self.hw.sched_destroy_queue(q.context.node, q.handle)
        return SUCCESS

    def DxgkDdiSetupPriorityBands(self, hAdapter: int, pSetupPriorityBands) -> int:
        args = pSetupPriorityBands
        grace = [args.gracePeriodForBand[i] * 100 for i in range(4)]
        quantum = [args.processQuantumForBand[i] * 100 for i in range(4)]
        pgrace = [args.processGracePeriodForBand[i] * 100 for i in range(4)]
        self.bands = (grace, quantum, pgrace, args.targetNormalBandPercentage)
        # The OS runs this adapter with hardware scheduling: from now on the GPU's scheduler owns
        # the engines' rings (the ones DxgkDdiStartDevice programmed are never rung).
        self.hw_scheduling = True
        for i in range(self.hw.engine_count):
            self.hw.sched_bands(i, grace, quantum, pgrace, args.targetNormalBandPercentage)
        return SUCCESS

    def DxgkDdiSetContextSchedulingProperties(self, hAdapter: int, pProps) -> int:
        args = pProps
        hc = self.hwcontexts.get(args.hContext)
        if hc is None or not hc.created:
            return INVALID
        self.hw.sched_set_context(
            hc.node, hc.handle, int(args.priorityBand), realtime_level=args.realtimeBandPriorityLevel,
            in_process_priority=args.inProcessPriority, quantum=args.quantum * 100 or None,
            grace_same=args.gracePeriodSamePriority * 100, grace_lower=args.gracePeriodLowerPriority * 100)
        return SUCCESS

    def DxgkDdiSubmitCommandToHwQueue(self, hAdapter: int, pSubmitCommandToHwQueue) -> int:
        """An INDIRECT to the buffer on the queue's ring (plus the progress-fence write when the node
        releases fences after retirement), then the doorbell."""
        args = pSubmitCommandToHwQueue
        q = self.hwqueues.get(args.hHwQueue)
        if q is None:
            return INVALID
        if args.DmaBufferPrivateDataSize:
            self.reads_of_private_data += 1
            if self.mem.read_u32(args.pDmaBufferPrivateData) != self.PRIVATE_MAGIC:
                return INVALID
        node = q.context.node
        packet = C.indirect(args.DmaBufferVirtualAddress, args.DmaBufferSize)
        if self.fence_release[node]:
            packet += C.fence(q.fence_gpu_va, args.HwQueueProgressFenceId, interrupt=True)
        if not self._hwqueue_write(q, packet):
            return int(NTSTATUS.STATUS_UNSUCCESSFUL)
        self._trim_submitted(q)
        q.submitted.append(args.HwQueueProgressFenceId)
        self.hw.sched_doorbell(node, q.handle, q.wptr)
        return SUCCESS

    def _trim_submitted(self, q: _HwQueue) -> None:
        """Drop the ids the queue's progress fence has reached from the front of ``q.submitted``."""
        if q.submitted and q.fence_cpu_va:
            value = self.mem.read_u64(q.fence_cpu_va)
            while q.submitted and q.submitted[0] <= value:
                q.submitted.popleft()

    def _hwqueue_write(self, q: _HwQueue, packet: bytes) -> bool:
        """Append ``packet`` to a hardware queue's ring (False: the ring is full)."""
        rptr = self.hw.sched_rptr(q.context.node, q.handle)
        wptr = self._ring_put(q.ring, q.ring_size, q.wptr, rptr, packet)
        if wptr is None:
            return False
        q.wptr = wptr
        return True

    def DxgkDdiSuspendContext(self, hAdapter: int, pSuspendContext) -> int:
        args = pSuspendContext
        hc = self.hwcontexts.get(args.hContext)
        if hc is None:
            return INVALID
        already = self.hw.sched_suspend(hc.node, hc.handle, args.contextSuspendFence)
        return SUCCESS if already else PENDING

    def DxgkDdiResumeContext(self, hAdapter: int, pResumeContext) -> int:
        hc = self.hwcontexts.get(pResumeContext.hContext)
        if hc is None:
            return INVALID
        self.hw.sched_resume(hc.node, hc.handle)
        return SUCCESS

    def DxgkDdiResetHwEngine(self, hAdapter: int, pResetHwEngine) -> int:
        """Reset the engine's context-management processor: ``DxgkCbInvalidateHwContext`` for each
        context the reset hit (the one on the engine, and any with a buffer it had begun); their
        queues' work is gone. The others keep their queues and run again after the resume."""
        args = pResetHwEngine
        if not 0 <= args.NodeOrdinal < len(self.nodes):
            return INVALID
        hit = self.hw.sched_reset(args.NodeOrdinal)
        self._invalidate(hit)
        return SUCCESS

    def _invalidate(self, hit) -> None:
        cb = self._invalidate_args
        for cid in hit:
            hc = self.hwcontexts.get(cid)
            if hc is None:
                continue
            for q in hc.queues:
                q.submitted.clear()  # the GPU dropped what was on their rings
            cb.hAdapter = self.dxgk.DeviceHandle
            cb.hHwContext = hc.os_handle
            self.dxgk.DxgkCbInvalidateHwContext(cb)

    def DxgkDdiResumeHwEngine(self, hAdapter: int, pResumeHwEngine) -> int:
        if not 0 <= pResumeHwEngine.NodeOrdinal < len(self.nodes):
            return INVALID
        self.hw.sched_restart(pResumeHwEngine.NodeOrdinal)
        return SUCCESS

    def _hw_reset_all(self) -> None:
        """DxgkDdiResetFromTimeout under hardware scheduling: every engine stops and every queue's
        work is gone (the OS calls DxgkDdiRestartFromTimeout to let the GPU schedule again)."""
        for node in self.nodes:
            self.hw.sched_reset(node.ordinal, everything=True)
        for q in self.hwqueues.values():
            q.submitted.clear()

    def _hw_restart_all(self) -> None:
        for node in self.nodes:
            self.hw.sched_restart(node.ordinal)

    def DxgkDdiPresentToHwQueue(self, hHwQueue: int, pPresent) -> int:
        """A present blt for a hardware queue: one COPY from the source's GPU virtual address to the
        destination's (allocation list entries 1 and 2), and the driver's private-data record."""
        args = pPresent
        q = self.hwqueues.get(hHwQueue)
        if q is None:
            return int(NTSTATUS.STATUS_INVALID_HANDLE)
        if not args.Flags.Blt:
            return INVALID
        r = args.SrcRect
        size = max(0, r.right - r.left) * max(0, r.bottom - r.top) * 4
        asize = ctypes.sizeof(self._alist)
        src = self._alist.from_buffer_copy(self.mem.read(args.pAllocationList + asize, asize)).VirtualAddress
        dst = self._alist.from_buffer_copy(self.mem.read(args.pAllocationList + 2 * asize, asize)).VirtualAddress
        packet = C.copy(src, dst, size)
        if len(packet) > args.DmaSize:
            return int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER)
        self.mem.write(args.pDmaBuffer, packet)
        args.pDmaBuffer += len(packet)
        args.DmaSize -= len(packet)
        if args.DmaBufferPrivateDataSize >= 16:
            self.mem.write(args.pDmaBufferPrivateData, struct.pack("<IIII", self.PRIVATE_MAGIC, q.handle, len(packet), 1))
        return SUCCESS

    # -- interrupts of hardware-scheduled nodes ------------------------------------------------------------
    def _hw_isr(self, status: int, node) -> None:
        """The causes of one hardware-scheduled node (device IRQL)."""
        hw = self.hw
        ordinal = node.ordinal
        data = node.interrupt_data
        if status & (1 << ordinal):
            # Progress and monitored fences were written: the OS reads them in its DPC. The driver
            # trims its own list of ids on the ring only when it needs it (a submission, a fault),
            # so an interrupt costs the same whatever the number of queues.
            self._report_monitored_fence(node)
        if status & (1 << (self._suspend_shift + ordinal)):
            while True:
                done = hw.sched_pop_suspend(ordinal)
                if done is None:
                    break
                cid, fence = done
                data.InterruptType = int(T.DXGK_INTERRUPT_SUSPEND_CONTEXT_COMPLETED)
                data.SuspendContextCompleted.hContext = cid
                data.SuspendContextCompleted.ContextSuspendFence = fence
                self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
        if hw.fault(ordinal) is not None:
            # A fault record is latched: report it, then release the latch.
            self._report_hwqueue_fault(node)
            hw.fault_ack(ordinal)

    def _report_hwqueue_fault(self, node) -> None:
        """HWQUEUE_PAGE_FAULTED for the fault record the node's engine latched (device IRQL)."""
        fault = self.hw.fault(node.ordinal)
        data = node.interrupt_data
        data.InterruptType = int(T.DXGK_INTERRUPT_HWQUEUE_PAGE_FAULTED)
        pf = data.HwQueuePageFaulted
        qid = self.hw.sched_running_queue(node.ordinal)
        q = self.hwqueues.get(qid)
        # The engine stopped on the fault: it needs a reset before it runs anything again.
        flags = PAGE_FAULT_ENGINE_RESET_REQUIRED | (PAGE_FAULT_WRITE if fault.write else 0)
        if q is not None:
            self._trim_submitted(q)
        if q is not None and q.submitted:
            pf.FaultedFenceId = q.submitted[0]
            pf.FaultedHwQueue = q.os_handle
        else:
            flags |= PAGE_FAULT_FENCE_INVALID
            pf.FaultedFenceId = 0
            pf.FaultedHwQueue = 0
        pf.FaultedVirtualAddress = fault.address
        pf.FaultedPrimitiveAPISequenceNumber = 0
        pf.NodeOrdinal = node.ordinal
        pf.EngineOrdinal = 0
        pf.FaultedPipelineStage = 0
        pf.FaultedBindTableEntry = 0
        pf.PageFaultFlags = flags
        pf.PageTableLevel = fault.level or 0  # None: not a page-table fault (a fatal hardware error)
        pf.FaultErrorCode.IsDeviceSpecificCode = 0
        pf.FaultErrorCode.GeneralErrorCode = 0  # DXGK_GENERAL_ERROR_PAGE_FAULT
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
