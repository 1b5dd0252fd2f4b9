"""Presents under hardware scheduling, :class:`HwPresents` (one of the mixins
:class:`~.hwscheduling.OsHwScheduling` is made of): a blt present is a kernel-built buffer on a
hardware queue. ``DxgkDdiPresentToHwQueue`` builds it in a kernel DMA buffer mapped into the
process's space, with its private data; on a node whose buffers write their own progress fence (no
``RingBufferFenceRelease``) ``DxgkDdiSignalMonitoredFence`` appends the write of the progress value;
then the buffer goes to the queue with ``Flags.Present`` (rule 94, HwQueueFlagsMatchOrigin). A
driver with the hardware flip queue also gets flips, which wait for the queue's progress fence in
:mod:`.hwflipqueue`.

Spec: Microsoft's reference pages for DxgkDdiPresentToHwQueue and DxgkDdiSignalMonitoredFence
(DXGK_KERNEL_SUBMISSION_TYPE_PRESENTBLT). Rule numbers are the rule catalogue's: ``wddmsim rules N``
prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from .errors import ApiError
from .hws_state import PAGE, Entry, HwQueue
from .objects import Packet
from .present import FLAG_PRESENT

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
DEVICE_REMOVED = int(NTSTATUS.STATUS_DEVICE_REMOVED)
#: DXGK_KERNEL_SUBMISSION_TYPE_PRESENTBLT
KERNEL_SUBMISSION_PRESENTBLT = 2
#: The kernel DMA buffer of one present blt, and its private data.
PRESENT_DMA_SIZE = PAGE
PRESENT_PRIVATE_SIZE = 64


class HwPresents:
    """Blt presents on hardware queues, and the progress fence write the OS asks for."""

    # -- presents -------------------------------------------------------------------------------------
    def signal_monitored_fence(self, q: HwQueue, kind: int, dma: int, size: int, length: int, priv: int,
                               value: int) -> int:
        """DxgkDdiSignalMonitoredFence: the driver appends the write of ``value`` to the queue's
        progress fence after the ``length`` bytes of the kernel-built buffer at ``dma`` (a node
        without RingBufferFenceRelease); returns the buffer's new length."""
        adapter = self.adapter
        proc = q.context.device.process
        args = layout.ctype(RECORDS["DXGKARG_SIGNALMONITOREDFENCE"], adapter.arch, adapter.version)()
        args.KernelSubmissionType = kind
        args.pDmaBuffer = dma + length
        args.DmaBufferGpuVirtualAddress = (dma if q.context.system else self.gpuva.address_of(proc, dma)) + length
        args.DmaSize = size - length
        args.pDmaBufferPrivateData = priv
        args.DmaBufferPrivateDataSize = 0
        args.MultipassOffset = 0
        args.MonitoredFenceGpuVa = q.progress.gpu_va[proc]
        args.MonitoredFenceValue = value
        args.MonitoredFenceCpuVa = q.progress.cpu_va
        args.hHwQueue = q.hDriver
        status = adapter.ddi.call("DxgkDdiSignalMonitoredFence", q.context.hDriver, args, facts=R.Facts(version=adapter.version),
                             address=self._submit_address)
        if status != SUCCESS:
            raise ApiError(status, "DxgkDdiSignalMonitoredFence failed")
        return args.pDmaBuffer - dma

    def present(self, ctx, source, destination, width: int, height: int, vidpn_source: int = 0,
                call_start: int | None = None, queue: HwQueue | None = None) -> Entry:
        """A blt present on a hardware queue: DxgkDdiPresentToHwQueue builds it in a kernel DMA
        buffer (mapped into the process's space) with its private data; on a node whose buffers
        write their own progress fence DxgkDdiSignalMonitoredFence appends the write; then the
        buffer goes to the queue with Flags.Present (rule 94)."""
        adapter = self.adapter
        if ctx.device.error:
            raise ApiError(DEVICE_REMOVED, "the device is in error")
        q = queue or ctx.hwqueues[0]
        v = q.last_id + 1
        self.check_progress_id(q, v)
        proc = ctx.device.process
        block = adapter.pool.alloc(PRESENT_DMA_SIZE + PAGE)
        dma, priv, alist = block, block + PRESENT_DMA_SIZE, block + PRESENT_DMA_SIZE + 2 * PRESENT_PRIVATE_SIZE
        entries = []
        for alloc in (None, source, destination):  # DXGK_PRESENT_SOURCE_INDEX 1, DESTINATION 2
            e = adapter._alist_cls()
            if alloc is not None:
                e.hDeviceSpecificAllocation = alloc.handle
                e.VirtualAddress = alloc.va
            entries.append(bytes(e))
        adapter.memory.write(alist, b"".join(entries))
        args = layout.ctype(RECORDS["DXGKARG_PRESENT"], adapter.arch, adapter.version)()
        args.pDmaBuffer = dma
        args.DmaSize = PRESENT_DMA_SIZE
        args.pDmaBufferPrivateData = priv
        args.DmaBufferPrivateDataSize = PRESENT_PRIVATE_SIZE
        args.pAllocationList = alist
        args.SrcRect.right = args.DstRect.right = width
        args.SrcRect.bottom = args.DstRect.bottom = height
        args.Flags.Blt = 1
        args.DmaBufferGpuVirtualAddress = self.gpuva.address_of(proc, dma)
        args.NumSrcAllocations = 1
        args.NumDstAllocations = 1
        status = adapter.ddi.call("DxgkDdiPresentToHwQueue", q.hDriver, args)
        if status != SUCCESS:
            adapter.pool.free(block, PRESENT_DMA_SIZE + PAGE)
            raise ApiError(status, "DxgkDdiPresentToHwQueue failed")
        length = args.pDmaBuffer - dma
        private = adapter.memory.read(priv, PRESENT_PRIVATE_SIZE)
        if not self.nodes[ctx.node].fence_release:
            length = self.signal_monitored_fence(q, KERNEL_SUBMISSION_PRESENTBLT, dma, PRESENT_DMA_SIZE, length,
                                                 priv + PRESENT_PRIVATE_SIZE, v)
        p = Packet(ctx, ctx.seq + 1, "present")
        p.flags = FLAG_PRESENT
        p.vidpn_source = vidpn_source
        p.present_t = self.sim.now if call_start is None else call_start
        p.buffers = (block, PRESENT_DMA_SIZE + PAGE)
        try:
            e = self.submit(q, args.DmaBufferGpuVirtualAddress, length, private, progress_id=v, present=p)
        except ApiError:
            # Feeding the queue failed after the buffer was queued (its QueuePacketStart is out):
            # VidMm's page-table write for it went to a system device in error. The present did
            # enter the scheduler, and its buffer leaves it later (cancelled, so dropped), so it is
            # counted and logged as presented before the error reaches the application; the
            # packet ledger found it counted dropped and never presented.
            e = next((x for x in (*q.pending, *q.in_flight) if x.present is p), None)
            if e is not None:
                self._presented(ctx, e, p, vidpn_source, width, height)
            raise
        self._presented(ctx, e, p, vidpn_source, width, height)
        return e

    def _presented(self, ctx, e: Entry, p: Packet, vidpn_source: int, width: int, height: int) -> None:
        """A blt present's buffer ``e`` entered its queue: counted, logged (``Present``), and told to
        the display's statistics."""
        p.fence = e.progress_id
        self.presents += 1
        self.ledger.present(self.sim.now, ctx.handle, ctx.device.process.pid, e.seq, "blt", 0, 0, vidpn_source, width,
                            height, p.present_t)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "Present", {"context": ctx.handle, "process": ctx.device.process.pid,
                                                     "seq": e.seq, "mode": "blt", "flip": 0, "interval": 0,
                                                     "source": vidpn_source, "width": width, "height": height,
                                                     "cpu_start": p.present_t})
        self.adapter.vidsch.presents.presented(p)
