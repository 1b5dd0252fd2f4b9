"""The DMA packets of the adapter's submission path, :class:`AdapterRender` (one of the mixins
:class:`~.adapter.Adapter` is made of): the arguments the OS keeps for ``DxgkDdiRender`` and
``DxgkDdiCancelCommand``, the kernel block each packet's buffers live in (DMA buffer, private data,
allocation and patch lists), ``DxgkDdiRender`` on a command buffer (or, with GPU virtual
addressing, a command buffer the user-mode driver submitted by address, which no DxgkDdiRender
call sees), and the packet's end: freed when it retires, cancelled when it leaves its software
queue unrun.

Following Microsoft's DXGK_SUBMITCOMMANDFLAGS page, a packet carries ``NullRendering`` when asked
and ``VirtualMachineData`` (WDDM 2.2 on) for a process of a virtual machine. A cancelled packet that
never reached the hardware queue is announced to a CancelCommandAware driver with
``DxgkDdiCancelCommand`` (rule 67, CancelCommandSucceeds: a failure is bug check 0x119); one a
preemption or a reset took back from the hardware is not. Rule numbers are the rule catalogue's:
``wddmsim rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

import ctypes

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..ddi.versions import ddi_version
from .errors import ApiError
from .objects import Context, Packet
from .present import FLAG_REDIRECTED_PRESENT
from .vidsch import FLAG_NULL_RENDERING

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)

#: DXGKARG_RENDER's members in declaration order; the OS fills every one before each call.
_RENDER_MEMBERS = (
    "pCommand", "CommandLength", "pDmaBuffer", "DmaSize", "pDmaBufferPrivateData",
    "DmaBufferPrivateDataSize", "pAllocationList", "AllocationListSize", "pPatchLocationListIn",
    "PatchLocationListInSize", "pPatchLocationListOut", "PatchLocationListOutSize", "MultipassOffset",
    "DmaBufferSegmentId", "DmaBufferPhysicalAddress",
)


#: DXGKARG_CANCELCOMMAND members the OS fills (the packet's submission as it would have been).
_CANCEL_MEMBERS = (
    "hContext", "pDmaBuffer", "DmaBufferSize", "DmaBufferSubmissionStartOffset", "DmaBufferSubmissionEndOffset",
    "pDmaBufferPrivateData", "DmaBufferPrivateDataSize", "DmaBufferPrivateDataSubmissionStartOffset",
    "DmaBufferPrivateDataSubmissionEndOffset", "pAllocationList", "AllocationListSize", "pPatchLocationList",
    "PatchLocationListSize", "PatchLocationListSubmissionStart", "PatchLocationListSubmissionLength",
)


#: DXGK_SUBMITCOMMANDFLAGS.VirtualMachineData (bit 8, WDDM 2.2).
FLAG_VIRTUAL_MACHINE_DATA = 0x100


class AdapterRender:
    """DMA packets: their arguments, buffers, DxgkDdiRender, freeing and cancelling."""

    def _packet_arguments(self, caps) -> None:
        """At start: the argument structures the OS fills for every DxgkDdiRender, DxgkDdiPresent and
        (for a CancelCommandAware, MultiEngineAware driver) DxgkDdiCancelCommand, and the sizes of
        the allocation and patch list entries."""
        ddi = self.ddi
        render_cls = ddi.cls("DXGKARG_RENDER")
        self._render_args = render_cls()
        self._render_fill = layout.filler(render_cls, _RENDER_MEMBERS)
        self._present_args = ddi.new("DXGKARG_PRESENT")
        # Flags.VirtualMachineData exists from WDDM 2.2: an older driver's flags have no such bit.
        self._vm_flag = self.version.value >= ddi_version("wddm2_2").value
        self._cancel_args = None
        if caps.CancelCommandAware and caps.MultiEngineAware:
            cancel_cls = ddi.cls("DXGKARG_CANCELCOMMAND")
            self._cancel_args = cancel_cls()
            self._cancel_fill = layout.filler(cancel_cls, _CANCEL_MEMBERS)
        self._alist_cls = ddi.cls("DXGK_ALLOCATIONLIST")
        self._plist_cls = ddi.cls("D3DDDI_PATCHLOCATIONLIST")
        self._plist_size = ctypes.sizeof(self._plist_cls)
        self._alist_size = ctypes.sizeof(self._alist_cls)

    def _packet_buffers(self, ctx: Context, extra: int):
        info = ctx.info
        dma_size = info.DmaBufferSize
        lists = info.DmaBufferPrivateDataSize + info.AllocationListSize * self._alist_size + \
            info.PatchLocationListSize * self._plist_size + extra
        total = dma_size + lists
        block = self.pool.alloc(total)
        return block, total

    def _write_allocation_list(self, addr: int, allocations) -> None:
        if not allocations:
            return
        out = bytearray()
        for a in allocations:
            e = self._alist_cls()
            if a is not None:
                e.hDeviceSpecificAllocation = a.handle
                e.SegmentId = a.segment_id
                e.PhysicalAddress.QuadPart = a.address
            out += bytes(e)
        self.memory.write(addr, bytes(out))

    def render(self, ctx: Context, command: bytes, allocations=(), patches=(), kind: str = "render",
               null_rendering: bool = False, redirected_present: int | None = None,
               call_start: int | None = None) -> Packet:
        """DxgkDdiRender on a command buffer, then the packet enters the context's queue.

        ``patches`` are ``(allocation_index, offset_in_command, allocation_offset)`` triples.
        ``null_rendering`` (or the adapter-wide switch) submits it with Flags.NullRendering.
        ``redirected_present``: the VidPn source whose composition surface this render presents to
        (Flags.RedirectedPresent; the compositor shows it at the next vsync); ``call_start``: when
        the application's present call began (default: now).
        """
        if ctx.device.error:
            raise ApiError(int(NTSTATUS.STATUS_DEVICE_REMOVED), "the device is in error")
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_HANDLE), "the context was destroyed")
        info = ctx.info
        # Each member read once (a ctypes member read is a call).
        dma_size = info.DmaBufferSize
        alist_len = info.AllocationListSize
        plist_len = info.PatchLocationListSize
        n = len(command)
        if n > dma_size:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                           f"command buffer of {n} bytes exceeds the DMA buffer size {dma_size}")
        if len(allocations) > alist_len or len(patches) > plist_len:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), "allocation or patch list longer than the context allows")
        if allocations:
            need: dict[str, int] = {}
            for a in {id(a): a for a in allocations if a is not None}.values():
                need[a.preference] = need.get(a.preference, 0) + a.size
            heaps = self.vidsch.vidmm.heaps.values()
            for segment_kind, size in need.items():
                if size > max((h.size for h in heaps if h.kind == segment_kind), default=0):
                    raise ApiError(int(NTSTATUS.STATUS_NO_MEMORY),
                                   f"the packet's {segment_kind} allocations ({size} bytes) cannot be resident "
                                   f"at once in any {segment_kind} segment")
        mem = self.memory
        plist_size = self._plist_size
        priv_size = info.DmaBufferPrivateDataSize
        # One block: the DMA buffer, its private data, the allocation and patch lists, then the
        # staging copy of the command buffer and its input patch list (as _packet_buffers lays it).
        alist_bytes = alist_len * self._alist_size
        plist_bytes = plist_len * plist_size
        total = dma_size + priv_size + alist_bytes + plist_bytes + n + len(patches) * plist_size
        block = self.pool.alloc(total)
        dma = block
        priv = block + dma_size
        alist = priv + priv_size
        plist = alist + alist_bytes
        cmd_addr = plist + plist_bytes
        mem.write(cmd_addr, command)
        plist_in = cmd_addr + n
        if patches:
            out = bytearray()
            for index, offset, alloc_offset in patches:
                e = self._plist_cls()
                e.AllocationIndex = index
                e.PatchOffset = offset
                e.AllocationOffset = alloc_offset
                out += bytes(e)
            mem.write(plist_in, bytes(out))
        if allocations:
            self._write_allocation_list(alist, allocations)
        a = self._render_args
        self._render_fill(a, cmd_addr, n, dma, dma_size, priv, priv_size, alist,
                          len(allocations), plist_in, len(patches), plist, plist_len, 0, 0, dma)
        status = self._render_call(ctx.hDdi, a)
        if status != SUCCESS:
            self.pool.free(block, total)
            raise ApiError(status, "DxgkDdiRender rejected the command buffer")
        ctx.seq += 1
        p = Packet(ctx, ctx.seq, kind)
        p.allocations = tuple(allocations)
        if null_rendering or self.null_rendering:
            p.flags = FLAG_NULL_RENDERING
        if self._vm_flag and ctx.device.process.virtual_machine:
            p.flags |= FLAG_VIRTUAL_MACHINE_DATA
        if redirected_present is not None:
            p.flags |= FLAG_REDIRECTED_PRESENT
            p.vidpn_source = redirected_present
            p.present_t = self.sim.now if call_start is None else call_start
            p.kind = "present"
        p.dma = dma
        p.dma_size = dma_size
        p.end_off = a.pDmaBuffer - dma
        p.priv = priv
        p.priv_size = priv_size
        p.alist = alist
        p.alist_n = len(allocations)
        p.plist = plist
        p.plist_n = (a.pPatchLocationListOut - plist) // plist_size
        p.buffers = (block, total)
        ctx.submitted += 1
        if self.on_packet is not None:
            self.on_packet(p)
        if redirected_present is not None:
            self.ledger.present(self.sim.now, ctx.handle, ctx.device.process.pid, p.seq, "composed", 0, 0,
                                redirected_present, 0, 0, p.present_t)
            if self.trace is not None:
                self.trace.emit(self.sim.now, "Present", {
                    "context": ctx.handle, "process": ctx.device.process.pid, "seq": p.seq, "mode": "composed",
                    "flip": 0, "interval": 0, "source": redirected_present, "width": 0, "height": 0,
                    "cpu_start": p.present_t})
            self.vidsch.presents.presented(p)
        self.vidsch.enqueue(p)
        return p

    def render_virtual(self, ctx: Context, va: int, size: int, private: bytes = b"",
                       null_rendering: bool = False) -> Packet:
        """The user-mode driver submitted the command buffer at GPU virtual address ``va`` of its
        process (GPU virtual addressing, software scheduling): no DxgkDdiRender and no patching;
        the kernel copies the ``private`` data into a buffer of the context's
        DmaBufferPrivateDataSize and queues the packet for DxgkDdiSubmitCommandVirtual."""
        if ctx.device.error:
            raise ApiError(int(NTSTATUS.STATUS_DEVICE_REMOVED), "the device is in error")
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_HANDLE), "the context was destroyed")
        info = ctx.info
        priv_size = info.DmaBufferPrivateDataSize
        if len(private) > priv_size:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                           f"{len(private)} bytes of private data exceed the context's DmaBufferPrivateDataSize {priv_size}")
        ctx.seq += 1
        p = Packet(ctx, ctx.seq, "render")
        p.va = va
        p.dma_size = size
        p.end_off = size
        p.umd_priv = len(private)
        ctx.virtual_packets += 1
        if priv_size:
            p.priv = self.pool.alloc(priv_size)
            p.priv_size = priv_size
            p.buffers = (p.priv, priv_size)
            self.memory.write(p.priv, private + bytes(priv_size - len(private)))
        if null_rendering or self.null_rendering:
            p.flags = FLAG_NULL_RENDERING
        if self._vm_flag and ctx.device.process.virtual_machine:
            p.flags |= FLAG_VIRTUAL_MACHINE_DATA
        ctx.submitted += 1
        if self.on_packet is not None:
            self.on_packet(p)
        self.vidsch.enqueue(p)
        return p

    def free_packet(self, p: Packet) -> None:
        if p.va:
            self.wddm2.release(p.context, p.va)
        buffers = p.buffers
        if buffers is None:
            return
        if type(buffers) is list:
            # A paging buffer several submissions share: freed with the last of them.
            buffers[2] -= 1
            if buffers[2]:
                return
        block, total = buffers[0], buffers[1]
        self.pool.free(block, total)

    # -- cancelling ------------------------------------------------------------------------------------------
    def cancel_packet(self, p: Packet, reached_hardware: bool = False) -> None:
        """A packet leaves its software queue and will never run: one that never reached the
        hardware queue is announced to a CancelCommandAware driver through DxgkDdiCancelCommand
        (rule 67), one a preemption or a reset took back from it
        (``reached_hardware``) is not; then it goes."""
        ctx = p.context
        ctx.cancelled += 1
        if p.job is not None:
            ctx.jobs.dropped(p)  # its job never finishes: not judged (dxgkrnl/deadlines.py)
        if p.pinned:
            self.vidsch.vidmm.dropped(p)
        if p.present_t >= 0:
            self.vidsch.presents.forget(p)
        if self._cancel_args is not None and not reached_hardware:
            args = self._cancel_args
            self._cancel_fill(args, ctx.hDdi, p.dma, p.dma_size, p.start_off, p.end_off, p.priv, p.priv_size, 0,
                              p.priv_size, p.alist, p.alist_n, p.plist, p.plist_n, 0, p.plist_n)
            address = self.interrupt_address
            self.ddi.call("DxgkDdiCancelCommand", self.hAdapter, args, facts=R.Facts(version=self.version),
                          judge="after", address=address, bugcheck=lambda status: BugCheck(
                              BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.FAILED_CANCEL_COMMAND,
                              status & 0xFFFFFFFF, address, p.seq))
        self.free_packet(p)
        self.ledger.queue_stop(self.sim.now, ctx.handle, ctx.node, p.fence, p.kind, p.seq, "Cancelled", 0)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "QueuePacketStop", {
                "context": ctx.handle, "node": ctx.node, "fence": p.fence, "kind": p.kind, "seq": p.seq,
                "status": "Cancelled", "hwqueue": 0,
            })

    def drop_queue(self, ctx: Context) -> None:
        """Cancel every packet of ``ctx``'s software queue, withdraw its GPU waits and wake its
        CPU waiters."""
        while ctx.queue:
            self.cancel_packet(ctx.queue.popleft())
        if ctx.gates:
            for gate in ctx.gates:
                if gate[3] is not None:
                    gate[3].cancel()
            ctx.gates.clear()
        if ctx.ready:
            ctx.ready = False
            self.vidsch.policy.idle(ctx)
            self.vidsch.idle_check(self.vidsch.nodes[ctx.node])
        for _target, event in ctx.waiters:
            event.succeed(ctx.completed)
        ctx.waiters = []
