"""The adapter's objects, :class:`AdapterObjects` (one of the mixins :class:`~.adapter.Adapter` is
made of): what the D3DKMT-style API creates and destroys on it (processes, devices, contexts,
allocations) and the driver calls each one takes, as Windows makes them: ``DxgkDdiCreateProcess``
for a GPU virtual addressing adapter, ``DxgkDdiCreateDevice``, ``DxgkDdiCreateContext`` for a
MultiEngineAware driver (``DxgkDdiCreateHwContext`` and its queues under hardware scheduling, see
:mod:`.hwscheduling`), and on D3DKMTDestroyContext the cancelling of the queued packets, then
``DxgkDdiDestroyContext`` once the last packet on the hardware has left it.

A ``DxgkDdiCreateContext`` failure other than the two the contract allows breaks rule 76
(CreateContextStatus); a context whose driver asks for DMA buffers in an aperture segment is refused
(rules 16 and 17, DmaSegmentMatchesSegmentSet and DmaBufferSegmentSetApertureOnly: this model keeps
DMA buffers in system memory). Rule numbers are the rule catalogue's: ``wddmsim rules N`` prints
rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

import ctypes

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from .errors import ApiError
from .objects import Allocation, Context, Device, Process

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)


class AdapterObjects:
    """Processes, devices, contexts and allocations: created, destroyed, waited on."""

    def create_process(self, name: str, priority_class: str = "normal", pid: int | None = None) -> Process:
        """A process; ``pid``: the id to give it (a replayed capture's), default the next free one."""
        if pid is None:
            taken = {p.pid for p in self.processes}
            pid = 0x1000 + 4 * len(self.processes)
            while pid in taken:
                pid += 4
        elif any(p.pid == pid for p in self.processes):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"process id {pid} is taken")
        proc = Process(name, priority_class, pid=pid)
        proc.handle = self.handles.add(proc)
        self.processes.append(proc)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "ProcessCreate", {"process": proc.pid, "name": name, "priority_class": priority_class})
        return proc

    def _kmd_process(self, process: Process) -> int:
        """DxgkDdiCreateProcess (GPU-VA adapters), the first time ``process`` opens a device."""
        if not process.hKmdProcess:
            args = layout.ctype(RECORDS["DXGKARG_CREATEPROCESS"], self.arch, self.version)()
            args.hDxgkProcess = process.handle
            self.ddi.call("DxgkDdiCreateProcess", self.hAdapter, args, fail="DxgkDdiCreateProcess failed")
            process.hKmdProcess = args.hKmdProcess
            self.wddm2.gpuva.space(process).handle = args.hKmdProcess
        return process.hKmdProcess

    def create_device(self, process: Process) -> Device:
        """DxgkDdiCreateDevice (PASSIVE_LEVEL)."""
        dev = Device(process)
        dev.handle = self.handles.add(dev)
        args = layout.ctype(RECORDS["DXGKARG_CREATEDEVICE"], self.arch, self.version)()
        args.hDevice = dev.handle
        if self.wddm2 is not None:
            args.hKmdProcess = self._kmd_process(process)
        info_addr = 0
        if not self.multi_engine_aware:
            info_addr = self.pool.alloc(4096)
            args.pInfo = info_addr
        status = self.ddi.call("DxgkDdiCreateDevice", self.hAdapter, args)
        if status != SUCCESS:
            self.handles.remove(dev.handle)
            raise ApiError(status, "DxgkDdiCreateDevice failed")
        dev.hDriver = args.hDevice
        if info_addr:
            cls = layout.ctype(RECORDS["DXGK_DEVICEINFO"], self.arch, self.version)
            dev.info = cls.from_buffer_copy(self.memory.read(info_addr, ctypes.sizeof(cls)))
        process.devices.append(dev)
        self.devices.append(dev)
        return dev

    def create_context(self, device: Device, node: int, name: str = "", priority: int = 0,
                       hw: dict | None = None) -> Context:
        """DxgkDdiCreateContext; for a driver that is not MultiEngineAware the device is the context."""
        if not -7 <= priority <= 7:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"context priority {priority} outside -7..7")
        count = len(self.vidsch.nodes)
        if not 0 <= node < count:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER),
                           f"node {node} does not exist (the adapter schedules {count} node{'s' if count > 1 else ''})")
        ctx = Context(name or f"context{len(self.contexts)}", device, node, priority)
        ctx.handle = self.handles.add(ctx)
        if self.wddm2 is not None and self.wddm2.hw_scheduling is not None:
            hw = hw or {}
            self.wddm2.hw_scheduling.create_context(ctx, band=hw.get("band"), realtime_level=hw.get("realtime_level", 0),
                                            quantum=hw.get("quantum"), grace_same=hw.get("grace_same", 0),
                                            grace_lower=hw.get("grace_lower", 0))
            self.wddm2.context_created(ctx)
            for flags in hw.get("queues", [()]):
                self.wddm2.hw_scheduling.create_queue(ctx, flags)
        elif self.multi_engine_aware:
            args = layout.ctype(RECORDS["DXGKARG_CREATECONTEXT"], self.arch, self.version)()
            args.NodeOrdinal = node
            args.EngineAffinity = 1
            # Judged after the call: a failure other than the two the contract allows breaks rule 76.
            status = self.ddi.call("DxgkDdiCreateContext", device.hDriver, args, judge="after",
                                   facts=R.Facts(version=self.version))
            if status != SUCCESS:
                self.handles.remove(ctx.handle)
                raise ApiError(status, "DxgkDdiCreateContext failed")
            ctx.hDriver = args.hContext
            ctx.hDdi = args.hContext
            ctx.info = args.ContextInfo
        else:
            ctx.hDriver = device.hDriver
            ctx.hDdi = device.hDriver
            ctx.info = device.info
        if ctx.info is not None and ctx.info.DmaBufferSegmentSet:
            # Rule 16/17: this model keeps DMA buffers in contiguous system memory only.
            raise ApiError(int(NTSTATUS.STATUS_NOT_SUPPORTED),
                           "the driver asked for DMA buffers in an aperture segment; this model pages DMA buffers only into system memory")
        if self.wddm2 is not None and self.wddm2.hw_scheduling is None:
            self.wddm2.context_created(ctx)  # GPU virtual addressing under the software scheduler
        device.contexts.append(ctx)
        self.contexts.append(ctx)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "ContextCreate", {
                "context": ctx.handle, "process": device.process.pid, "device": device.handle,
                "node": node, "name": ctx.full_name, "priority": priority, "hContext": ctx.hDdi,
            })
        return ctx

    def create_allocation(self, device: Device, size: int, segment: str = "memory") -> Allocation:
        """Video memory of ``size`` bytes (page multiple) preferring a ``segment`` kind: a memory
        allocation is resident at once if a memory segment has room, else created evicted; an
        aperture one lives in system memory and is mapped when used. VidMm makes an allocation
        resident before a packet uses it."""
        if segment not in ("memory", "aperture"):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), f"segment preference {segment!r}")
        size = -(-size // 4096) * 4096
        alloc = Allocation(device, size)
        alloc.preference = segment
        self.vidsch.vidmm.create(alloc)
        if not alloc.resident and self.vidsch.vidmm._heap_for(alloc) is None:
            raise ApiError(int(NTSTATUS.STATUS_NO_MEMORY), f"no memory segment can hold {size} bytes")
        if self.wddm2 is not None:
            if not alloc.resident and alloc.preference == "memory":
                raise ApiError(int(NTSTATUS.STATUS_NO_MEMORY),
                               f"{size} bytes of video memory are not free: a GPU-VA device keeps its allocations "
                               f"resident from creation")
            self.wddm2.allocation_created(alloc)
        alloc.handle = self.handles.add(alloc)
        device.allocations.append(alloc)
        self.allocations.append(alloc)
        return alloc


    def destroy_context(self, ctx: Context) -> None:
        """D3DKMTDestroyContext: queued packets are cancelled at once; packets already on the
        hardware finish; then DxgkDdiDestroyContext (a MultiEngineAware driver's context)."""
        if ctx.destroyed:
            raise ApiError(int(NTSTATUS.STATUS_INVALID_HANDLE), "the context was destroyed already")
        ctx.destroyed = True
        hw = self.wddm2.hw_scheduling if ctx.hw else None
        if hw is not None:
            hw.cancel_queues(ctx)  # the hardware queues' buffers not yet with the driver
        self.drop_queue(ctx)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "ContextDestroy", {"context": ctx.handle, "in_flight": ctx.in_flight})
        if not ctx.in_flight:
            self.finish_destroy(ctx)

    def finish_destroy(self, ctx: Context) -> None:
        """The last packet of a destroyed context left the hardware: tell the driver
        (DxgkDdiDestroyContext; for a hardware context DxgkDdiDestroyHwQueue for each of its
        queues, then DxgkDdiDestroyHwContext)."""
        if ctx.hw:
            self.wddm2.hw_scheduling.destroy(ctx)
            ctx.hDriver = 0
            self.handles.remove(ctx.handle)
            return
        if ctx.hDriver == 0 or not self.multi_engine_aware:
            self.handles.remove(ctx.handle)
            return
        self.ddi.call("DxgkDdiDestroyContext", ctx.hDriver, log_args={"hContext": ctx.hDriver})
        ctx.hDriver = 0
        self.handles.remove(ctx.handle)

    def wait_event(self, ctx: Context, target: int):
        """An event that triggers when ``ctx`` has retired ``target`` packets."""
        ev = self.sim.event()
        if ctx.completed >= target:
            ev.succeed(ctx.completed)
        else:
            ctx.waiters.append((target, ev))
        return ev
