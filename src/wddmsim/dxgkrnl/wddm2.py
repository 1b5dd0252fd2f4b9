"""The WDDM 2.x half of an adapter: monitored fences, GPU virtual addresses and (under hardware
scheduling) hardware queues wired together, and the user-mode driver's part of a submission in
that world.

With GPU virtual addressing a command buffer is not rendered by the kernel: the user-mode driver
writes it into memory of its own process, mapped at a GPU virtual address, with allocation
addresses already in place (no patching), and submits the address. This module plays that part for
the workloads (:meth:`Wddm2.render`): it keeps a command area per context (4 MiB of the process's
virtual space, handed out as a ring of 64-byte slots), writes the commands, writes the addresses of
the allocations at the patch offsets, writes the driver's private-data record, puts a GPU WAIT at
the head of the buffer or a monitored-fence write at its end when asked, and, on a hardware queue
of a node whose progress fences are written by the buffer itself (``RingBufferFenceRelease`` = 0),
ends the buffer with the progress-fence write (a FENCE with interrupt to the fence's GPU virtual
address).

Two ways to run, chosen by the scenario (``adapter.gpu_va``, ``adapter.scheduling``):

- *software scheduling with GPU virtual addresses* (WDDM 2.0 GpuMmu): the packet enters VidSch like
  any other and reaches the driver through ``DxgkDdiSubmitCommandVirtual``; GPU waits hold the
  context's later packets in VidSch (rule 103); page-table updates are ``Flags.Paging`` packets on
  the paging node;
- *hardware scheduling* (WDDM 2.5 and later here): the buffer goes to a hardware queue through
  ``DxgkDdiSubmitCommandToHwQueue`` (:mod:`.hwqueue`); page-table updates go to a kernel hardware
  queue of VidMm's system context, each ended by the progress-fence write the driver appends in
  ``DxgkDdiSignalMonitoredFence``.

Allocations of a GPU-VA device are mapped into its process's space when they are created and stay
resident while they exist (the D3D12 runtime makes its resources resident at creation; VidMm's
eviction works on allocation lists, which GPU-VA submissions do not have). A device whose
allocations do not fit gets STATUS_NO_MEMORY at creation.

Spec: ddi-facts.md sections 2.4, 9.1-9.4, 14.2.
"""

from __future__ import annotations

import struct
from collections import deque

from ..ddi import layout
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from .errors import ApiError
from .fences import U32_MAX, FenceTable
from .gpuva import VA_START, GpuVa
from .objects import Context, Device, Process

PAGE = 4096
COMMAND_AREA = 4 << 20
SLOT = 64
#: The reference driver's private data record (magic "RWMD", context, bytes, count).
PRIVATE_MAGIC = 0x444D_5752
_PRIVATE = struct.Struct("<IIII")
#: FENCE packet with interrupt: header (opcode 4, flags 1, 5 dwords), u64 address, u64 value.
_FENCE = struct.Struct("<IQQ")
_FENCE_HEADER = 0x04 | 0x01 << 8 | 5 << 16
#: WAIT packet, "greater or equal" on a 64-bit value: header (opcode 5, flags 0, 5 dwords), address, value.
_WAIT = struct.Struct("<IQQ")
_WAIT_HEADER = 0x05 | 5 << 16
_WAIT_32BIT = 0x04  # WAIT flag: compare the u32 at the address
#: A GPU virtual address no space maps (everything below VA_START is unmapped): a buffer told to
#: fault writes here (fault injection: a real translation fault).
UNMAPPED_VA = 0x1000
assert UNMAPPED_VA < VA_START
#: DXGK_KERNEL_SUBMISSION_TYPE_BUILD_PAGING_BUFFER
KERNEL_SUBMISSION_PAGING = 0


class CommandArea:
    """A context's command buffers in its process's GPU virtual space: slots handed out in order,
    freed in any order; the oldest buffer still in use bounds how far the ring may wrap."""

    __slots__ = ("base", "va", "size", "head", "live", "_by_offset")

    def __init__(self, base: int, va: int, size: int):
        self.base = base  # physical
        self.va = va
        self.size = size
        self.head = 0  # where the next buffer goes
        self.live: deque = deque()  # [offset, bytes, in use], in the order they were handed out
        self._by_offset: dict[int, list] = {}

    def alloc(self, n: int) -> int | None:
        """The offset of ``n`` bytes (rounded up to slots), or None if the ring has no room."""
        size = -(-n // SLOT) * SLOT
        live = self.live
        while live and not live[0][2]:
            del self._by_offset[live.popleft()[0]]
        head = self.head
        if size > self.size:
            return None
        if not live:
            off = 0
        else:
            tail = live[0][0]
            if head > tail:  # free: [head, end) and [0, tail)
                off = head if head + size <= self.size else (0 if size <= tail else None)
            else:  # wrapped: free is [head, tail); head == tail means full
                off = head if head + size <= tail else None
        if off is None:
            return None
        entry = [off, size, True]
        live.append(entry)
        self._by_offset[off] = entry
        self.head = off + size
        return off

    def free(self, off: int) -> None:
        """The buffer at ``off`` is done with (an offset outside the area, or free, is ignored:
        kernel-built buffers of the context are not in its command area)."""
        entry = self._by_offset.get(off) if 0 <= off < self.size else None
        if entry is not None:
            entry[2] = False

    @property
    def in_use(self) -> int:
        return sum(e[1] for e in self.live if e[2])


class Wddm2:
    """Fences, address spaces and (``hardware``) hardware queues of one adapter."""

    def __init__(self, adapter, *, hardware: bool, bands: dict | None = None):
        self.adapter = ad = adapter
        self.hardware = hardware
        self.system_process = Process("System", "realtime", pid=4)
        self.fences = FenceTable(ad.sim, ad.memory, self._allocate, trace=ad.trace, map_gpu=self._map_fence,
                                 handles=ad.handles, no64bit_atomics=ad.caps.No64BitAtomics)
        self.gpuva = GpuVa(ad, self._submit_paging)
        self.hwsch = None
        if hardware:
            from .hwqueue import HwSch  # only a hardware-scheduled adapter has hardware queues
            self.hwsch = HwSch(ad, self.fences, self.gpuva, bands=bands)
            self.hwsch.release = self.release
        self._areas: dict[int, CommandArea] = {}
        self._paging_queue = None
        #: Fault injection (set by the assembly code): (context handle, packet number) -> True for
        #: a buffer whose first command writes to UNMAPPED_VA.
        self.faulty: dict[tuple[int, int], bool] = {}
        #: Instrumentation (assembly code): ``on_buffer(context, seq, va)`` after a buffer is written.
        self.on_buffer = None

    def _allocate(self, size: int, align: int = 8) -> int:
        return self.adapter.pool.alloc(size)

    def _map_fence(self, fence, process) -> int:
        if process is self.system_process:
            return fence.cpu_va  # the system context runs with physical addresses
        return self.gpuva.address_of(process, fence.cpu_va)

    # -- start ------------------------------------------------------------------------------------------
    def start(self, metadata: list) -> None:
        """Hardware scheduling: the nodes' caps and bands, and VidMm's kernel queue for paging."""
        if self.hwsch is None:
            return
        self.hwsch.start(metadata)
        ad = self.adapter
        dev = Device(self.system_process)
        dev.handle = ad.handles.add(dev)
        dev.hDriver = self._system_device_driver_handle(dev)
        node = ad.vidsch.vidmm.paging_node
        ctx = Context(f"VidMm{node}", dev, node, 0)
        ctx.system = True
        ctx.handle = ad.handles.add(ctx)
        dev.contexts.append(ctx)
        self.hwsch.create_context(ctx, band="realtime", realtime_level=31)
        self._paging_queue = self.hwsch.create_queue(ctx)

    def _system_device_driver_handle(self, dev) -> int:
        ad = self.adapter
        args = layout.ctype(RECORDS["DXGKARG_CREATEDEVICE"], ad.arch, ad.version)()
        args.hDevice = dev.handle
        status = ad.ddi.call("DxgkDdiCreateDevice", ad.hAdapter, args)
        if status != 0:
            raise ApiError(status, "DxgkDdiCreateDevice failed for the system device")
        return args.hDevice

    # -- paging -------------------------------------------------------------------------------------------
    def _submit_paging(self, dma: int, size: int, length: int, priv: int, done) -> None:
        """A paging buffer that writes page tables: ``length`` bytes of commands at ``dma`` (a
        buffer of ``size``); ``done()`` once the GPU has run it."""
        ad = self.adapter
        if self.hwsch is None:
            ad.vidsch.vidmm.page_table_buffer(dma, size, length, priv, done)
            return
        q = self._paging_queue
        node = self.hwsch.nodes[q.context.node]
        v = q.last_id + 1
        if not node.fence_release:
            # The buffer itself ends with the progress-fence write: DxgkDdiSignalMonitoredFence.
            length = self.hwsch.signal_monitored_fence(q, KERNEL_SUBMISSION_PAGING, dma, size, length, priv, v)
        self.hwsch.submit(q, dma, length)
        self.fences.wait_queue(q.progress, v, lambda _status: done())

    # -- contexts -----------------------------------------------------------------------------------------
    def context_created(self, ctx) -> None:
        """A context of a GPU-VA adapter: its root page table (hardware scheduling sets it while it
        creates the hardware context) and its command area."""
        ad = self.adapter
        if self.hwsch is None:
            self.gpuva.set_root(ctx)
        base = ad.pool.alloc(COMMAND_AREA)
        va = self.gpuva.map(ctx.device.process, base, COMMAND_AREA)
        self._areas[ctx.handle] = CommandArea(base, va, COMMAND_AREA)

    def release(self, ctx, va: int) -> None:
        """The buffer at ``va`` of ``ctx`` is done with (retired, aborted or cancelled)."""
        area = self._areas.get(ctx.handle)
        if area is not None:
            area.free(va - area.va)

    def allocation_created(self, alloc) -> None:
        """Map a new allocation into its process's space; it stays where it is while it exists (a
        memory-segment allocation resident, an aperture one in its system memory, which GpuMmu
        page tables map directly)."""
        alloc.pins += 1  # never a victim of VidMm's eviction
        where = alloc.address if alloc.resident else alloc.backing
        alloc.va = self.gpuva.map(alloc.device.process, where, alloc.size)

    def fence_address(self, fence, process) -> int:
        """The GPU virtual address of ``fence`` in ``process`` (mapped there on first use)."""
        va = fence.gpu_va.get(process)
        if va is None:
            self.fences.open(fence, process, None)
            va = fence.gpu_va[process]
        return va

    @staticmethod
    def _gpu_value(fence, value: int) -> int:
        """What the GPU writes for ``value``: a 32-bit fence (No64BitAtomics) gets its low 32 bits."""
        return value & U32_MAX if fence.bits == 32 else value

    # -- the user-mode driver's submission ---------------------------------------------------------------
    def render(self, ctx, command: bytes, allocations=(), patches=(), *, queue=None, signal=None, wait=None,
               null_rendering: bool = False, private: bytes | None = None, progress_id: int | None = None):
        """The user-mode driver's submission of ``command`` on ``ctx``: returns the hardware-queue
        entry (hardware scheduling; ``queue`` defaults to the context's first) or the packet.

        ``wait`` = (fence, value): the buffer starts with a GPU WAIT for the value (the engine
        stalls; only this queue or context is held). ``signal`` = (fence, value): the buffer ends
        with the GPU's write of the value. ``private``: the private data to submit instead of the
        driver's well-formed record (tests of malformed submissions). ``progress_id``: the
        HwQueueProgressFenceId (default: one above the queue's last)."""
        ad = self.adapter
        if ctx.device.error:
            raise ApiError(int(NTSTATUS.STATUS_DEVICE_REMOVED), "the device is in error")
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_HANDLE), "the context was destroyed")
        proc = ctx.device.process
        buf = bytearray()
        if self.faulty and self.faulty.pop((ctx.handle, ctx.seq + 1), False):
            buf += _FENCE.pack(_FENCE_HEADER & ~0xFF00, UNMAPPED_VA, 0)  # a write nothing maps
        if wait is not None:
            fence, value = wait
            self.fences.check_wait(fence, value)
            if fence.bits == 32:  # No64BitAtomics: the GPU compares the 32-bit value
                buf += _WAIT.pack(_WAIT_HEADER | _WAIT_32BIT << 8, self.fence_address(fence, proc), value & U32_MAX)
            else:
                buf += _WAIT.pack(_WAIT_HEADER, self.fence_address(fence, proc), value)
        start = len(buf)
        buf += command
        for index, offset, alloc_offset in patches:
            a = allocations[index]
            struct.pack_into("<Q", buf, start + offset, a.va + alloc_offset)
        if signal is not None:
            fence, value = signal
            self.fences.check_value(value, "signal value")  # a 64-bit fence never wraps
            if "NoSignal" in fence.flags:
                raise ApiError(int(NTSTATUS.STATUS_ACCESS_DENIED), f"monitored fence 0x{fence.handle:x} has NoSignal")
            self.fences.register_signaler(fence, ctx.device)
            buf += _FENCE.pack(_FENCE_HEADER, self.fence_address(fence, proc), self._gpu_value(fence, value))
        q = None
        if self.hwsch is not None:
            q = queue or ctx.hwqueues[0]
            v = q.last_id + 1 if progress_id is None else progress_id
            self.hwsch.check_progress_id(q, v)
            if not self.hwsch.nodes[ctx.node].fence_release:
                buf += _FENCE.pack(_FENCE_HEADER, q.progress.gpu_va[proc], self._gpu_value(q.progress, v))
        area = self._areas[ctx.handle]
        off = area.alloc(len(buf))
        if off is None:
            raise ApiError(int(NTSTATUS.STATUS_NO_MEMORY),
                           f"{ctx.full_name}: {len(buf)} more bytes of command buffers do not fit beside the "
                           f"{area.in_use} still in flight in its {COMMAND_AREA}-byte command area")
        va = area.va + off
        ad.memory.write(area.base + off, bytes(buf))
        if private is None:
            private = _PRIVATE.pack(PRIVATE_MAGIC, ctx.hDriver & 0xFFFFFFFF, len(buf), len(command))
        if self.on_buffer is not None:
            self.on_buffer(ctx, ctx.seq + 1, va)
        if q is not None:
            return self.hwsch.submit(q, va, len(buf), private, progress_id=v)
        return ad.render_virtual(ctx, va, len(buf), private, null_rendering=null_rendering)
