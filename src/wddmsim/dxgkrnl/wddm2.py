"""The WDDM 2.x half of an adapter: monitored fences, GPU virtual addresses and (under hardware
scheduling) hardware queues wired together, and the kernel's side of a user-mode driver's
submission in that world.

With GPU virtual addressing a command buffer is not rendered by the kernel: the user-mode driver
(:mod:`wddmsim.umd`) builds it with allocation addresses already in place (no patching), and
the runtime submits it with its private data. The kernel's part here: the fences' GPU virtual
addresses and the checks on waits, signals and progress fence ids the runtime asks for before the
user-mode driver encodes them (:meth:`OsWddm2.wait_value`, :meth:`OsWddm2.signal_value`,
:meth:`OsWddm2.progress_value`), and the submission itself (:meth:`OsWddm2.submit_buffer`), which puts
the bytes in a command area per context (4 MiB of the process's virtual space, handed out as a ring
of 64-byte slots) and queues them. The kernel never encodes a GPU command or a driver's private
data.

Two ways to run, chosen by the scenario and the driver's capabilities:

- *software scheduling with GPU virtual addresses* (WDDM 2.0 GpuMmu): the packet enters VidSch like
  any other and reaches the driver through ``DxgkDdiSubmitCommandVirtual``; GPU waits hold the
  context's later packets in VidSch (rule 103, GpuWaitHoldsLaterWork: ``wddmsim rules 103``,
  docs/rules.md); page-table updates are ``Flags.Paging`` packets on
  the paging node;
- *hardware scheduling* (WDDM 2.5 and later here): the buffer goes to a hardware queue through
  ``DxgkDdiSubmitCommandToHwQueue`` (:mod:`.hwscheduling`); page-table updates go to a kernel hardware
  queue of VidMm's system context, each ended by the progress-fence write the driver appends in
  ``DxgkDdiSignalMonitoredFence``.

Allocations of a GPU-VA device are mapped into its process's space when they are created and stay
resident while they exist (the D3D12 runtime makes its resources resident at creation; VidMm's
eviction works on allocation lists, which GPU-VA submissions do not have). A device whose
allocations do not fit gets STATUS_NO_MEMORY at creation.

Microsoft's pages: d3dkmddi/nc-d3dkmddi-dxgkddi_submitcommandvirtual,
d3dkmddi/nc-d3dkmddi-dxgkddi_submitcommandtohwqueue, display/gpu-virtual-memory-in-wddm-2-0.
"""

from __future__ import annotations

from collections import deque

from ..ddi import layout
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from .errors import ApiError
from .fences import FenceTable
from .gpuva import VA_START, GpuVa
from .hwscheduling import OsHwScheduling
from .nativefence import NativeFences
from .objects import Context, Device, Process

PAGE = 4096
COMMAND_AREA = 4 << 20
SLOT = 64
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


class OsWddm2:
    """Fences, address spaces and (``hardware``) hardware queues of one adapter."""

    def __init__(self, adapter, *, hardware: bool, bands: dict | None = None):
        self.adapter = adapter
        self.hardware = hardware
        self.system_process = Process("System", "realtime", pid=4)
        self.fences = FenceTable(adapter.sim, adapter.memory, self._allocate, trace=adapter.trace, map_gpu=self._map_fence,
                                 handles=adapter.handles, no64bit_atomics=adapter.caps.No64BitAtomics)
        self.gpuva = GpuVa(adapter, self._submit_paging)
        self.hw_scheduling = None
        if hardware:  # only a hardware-scheduled adapter has hardware queues
            self.hw_scheduling = OsHwScheduling(adapter, self.fences, self.gpuva, bands=bands)
            self.hw_scheduling.release = self.release
        #: native GPU fences (:mod:`.nativefence`), when the driver reports NativeGpuFence (the
        #: adapter starts with it only for a WDDM 3.2 driver under hardware scheduling)
        self.native = None
        if hardware and adapter.caps.NativeGpuFence:
            self.native = NativeFences(self)
        self._areas: dict[int, CommandArea] = {}
        self._paging_queue = None
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
        if self.hw_scheduling is None:
            return
        self.hw_scheduling.start(metadata)
        adapter = self.adapter
        dev = Device(self.system_process)
        dev.handle = adapter.handles.add(dev)
        dev.hDriver = self._system_device_driver_handle(dev)
        node = adapter.vidsch.vidmm.paging_node
        ctx = Context(f"VidMm{node}", dev, node, 0)
        ctx.system = True
        ctx.handle = adapter.handles.add(ctx)
        dev.contexts.append(ctx)
        self.hw_scheduling.create_context(ctx, band="realtime", realtime_level=31)
        self._paging_queue = self.hw_scheduling.create_queue(ctx)

    def _system_device_driver_handle(self, dev) -> int:
        adapter = self.adapter
        args = layout.ctype(RECORDS["DXGKARG_CREATEDEVICE"], adapter.arch, adapter.version)()
        args.hDevice = dev.handle
        status = adapter.ddi.call("DxgkDdiCreateDevice", adapter.hAdapter, args)
        if status != 0:
            raise ApiError(status, "DxgkDdiCreateDevice failed for the system device")
        return args.hDevice

    # -- paging -------------------------------------------------------------------------------------------
    def _submit_paging(self, dma: int, size: int, length: int, priv: int, done) -> None:
        """A paging buffer that writes page tables: ``length`` bytes of commands at ``dma`` (a
        buffer of ``size``); ``done()`` once the GPU has run it."""
        adapter = self.adapter
        if self.hw_scheduling is None:
            adapter.vidsch.vidmm.page_table_buffer(dma, size, length, priv, done)
            return
        q = self._paging_queue
        node = self.hw_scheduling.nodes[q.context.node]
        v = q.last_id + 1
        if not node.fence_release:
            # The buffer itself ends with the progress-fence write: DxgkDdiSignalMonitoredFence.
            length = self.hw_scheduling.signal_monitored_fence(q, KERNEL_SUBMISSION_PAGING, dma, size, length, priv, v)
        self.hw_scheduling.submit(q, dma, length)
        self.fences.wait_queue(q.progress, v, lambda _status: done())

    # -- contexts -----------------------------------------------------------------------------------------
    def context_created(self, ctx) -> None:
        """A context of a GPU-VA adapter: its root page table (hardware scheduling sets it while it
        creates the hardware context) and its command area."""
        adapter = self.adapter
        if self.hw_scheduling is None:
            self.gpuva.set_root(ctx)
        base = adapter.pool.alloc(COMMAND_AREA)
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

    # -- the runtime's submission of a user-mode driver's buffer ----------------------------------------
    def _live(self, ctx) -> None:
        if ctx.device.error:
            raise ApiError(int(NTSTATUS.STATUS_DEVICE_REMOVED), "the device is in error")
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_HANDLE), "the context was destroyed")

    def wait_value(self, ctx, fence, value: int) -> tuple[int, int, int]:
        """A GPU wait of ``ctx`` on ``fence`` reaching ``value``, checked: (the fence's GPU virtual
        address in the context's process, the value, the width the GPU compares)."""
        self._live(ctx)
        self.fences.check_wait(fence, value)
        return self.fence_address(fence, ctx.device.process), value, fence.bits

    def signal_value(self, ctx, fence, value: int) -> tuple[int, int, int]:
        """A GPU write of ``value`` to ``fence`` by ``ctx``'s buffer, checked and recorded (a TDR of
        the device then moves the fence to its maximum, rule 101): (address, value, width)."""
        self._live(ctx)
        if fence.native:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"fence 0x{fence.handle:x} is a native fence: "
                                                                   f"the GPU signals it with a native fence write")
        self.fences.check_value(value, "signal value")  # a 64-bit fence never wraps
        if "NoSignal" in fence.flags:
            raise ApiError(int(NTSTATUS.STATUS_ACCESS_DENIED), f"monitored fence 0x{fence.handle:x} has NoSignal")
        self.fences.register_signaler(fence, ctx.device)
        return self.fence_address(fence, ctx.device.process), value, fence.bits

    def native_signal_value(self, ctx, fence, value: int) -> tuple[int, int, int]:
        """A GPU write of ``value`` to native fence ``fence`` by ``ctx``'s buffer, checked and
        recorded: (CurrentValue's GPU VA, value, MonitoredValue's GPU VA) in the context's process."""
        self._live(ctx)
        self.fences.check_value(value, "signal value")
        if "NoSignal" in fence.flags:
            raise ApiError(int(NTSTATUS.STATUS_ACCESS_DENIED), f"native fence 0x{fence.handle:x} has NoSignal")
        self.fences.register_signaler(fence, ctx.device)
        process = ctx.device.process
        return self.fence_address(fence, process), value, self.native.monitored_address(fence, process)

    def progress_value(self, ctx, queue=None, progress_id: int | None = None):
        """Hardware scheduling: the queue a buffer of ``ctx`` goes to (default its first), its
        HwQueueProgressFenceId (default one above the queue's last) and, when the node leaves the
        progress fence to the buffer (RingBufferFenceRelease = 0), the write the buffer ends with:
        ``(queue, id, (address, id, width) or None)``."""
        self._live(ctx)
        q = queue or ctx.hwqueues[0]
        v = q.last_id + 1 if progress_id is None else progress_id
        self.hw_scheduling.check_progress_id(q, v)
        write = None
        if not self.hw_scheduling.nodes[ctx.node].fence_release:
            write = (q.progress.gpu_va[ctx.device.process], v, q.progress.bits)
        return q, v, write

    def submit_buffer(self, ctx, data: bytes, private: bytes = b"", *, queue=None, progress_id: int | None = None,
                      null_rendering: bool = False):
        """D3DKMTSubmitCommand (software scheduler) or D3DKMTSubmitCommandToHwQueue (hardware
        scheduling) of a command buffer the user-mode driver built: the bytes go into the context's
        command area in its process's GPU virtual space and the buffer is queued. Returns the
        hardware-queue entry or the packet."""
        adapter = self.adapter
        self._live(ctx)
        area = self._areas[ctx.handle]
        off = area.alloc(len(data))
        if off is None:
            raise ApiError(int(NTSTATUS.STATUS_NO_MEMORY),
                           f"{ctx.full_name}: {len(data)} more bytes of command buffers do not fit beside the "
                           f"{area.in_use} still in flight in its {COMMAND_AREA}-byte command area")
        va = area.va + off
        adapter.memory.write(area.base + off, data)
        if self.on_buffer is not None:
            self.on_buffer(ctx, ctx.seq + 1, va)
        if self.hw_scheduling is not None:
            return self.hw_scheduling.submit(queue or ctx.hwqueues[0], va, len(data), private, progress_id=progress_id)
        return adapter.render_virtual(ctx, va, len(data), private, null_rendering=null_rendering)
