"""Native GPU fences (WDDM 3.2, hardware scheduling): the OS's side.

Follows Microsoft's "Native GPU fence objects" and the pages of DxgkDdiCreateNativeFence,
DxgkDdiDestroyNativeFence, DxgkDdiUpdateMonitoredValues, DxgkDdiUpdateCurrentValuesFromCpu,
DXGK_NATIVE_FENCE_CAPS and DXGKARGCB_NOTIFY_INTERRUPT_DATA.

A native fence is a monitored fence (:mod:`.fences` keeps its value and its waiters) with two
64-bit words the CPU and the GPU both see:

- *CurrentValue*, the fence's value: the GPU writes it (a NATIVE_FENCE command at the end of a
  buffer) and reads it (an ordinary WAIT, which the GPU's scheduler releases by itself when the
  value is reached: no CPU, no interrupt);
- *MonitoredValue*, which only the OS writes, through ``DxgkDdiUpdateMonitoredValues``: the
  smallest value a waiter the OS keeps on the CPU waits for, minus one, and UINT64_MAX when there
  is none. The GPU's scheduler raises the CPU interrupt after a NATIVE_FENCE only when the value
  written is above it, so a signal nobody waits for on the CPU costs no interrupt.

What the OS does here:

1. ``create``: only when the driver reported ``DXGK_VIDSCHCAPS.NativeGpuFence`` (the adapter refused
   to start otherwise unless it is a WDDM 3.2 driver under hardware scheduling; at start the OS
   read its ``DXGK_NATIVE_FENCE_CAPS``). The OS allocates both words in system memory
   (D3DDDI_NATIVEFENCE_TYPE_DEFAULT; MonitoredValues packed ``MonitoredValueStride`` bytes apart in
   shared pages), sets MonitoredValue to UINT64_MAX and calls ``DxgkDdiCreateNativeFence`` with its
   own handle in ``hGlobalNativeFence`` and, when the driver set ``MapToGpuSystemProcess``, both
   words' addresses in the system process's GPU space (physical in this model, where the system
   context runs untranslated; 0 otherwise); it keeps the handle the driver returns.
   ``MinimumAddress`` / ``MaximumAddress`` are not applied (the model's GPU address spaces are
   allocated elsewhere).
2. CPU waits (``wait_cpu``, D3DKMTWaitForSynchronizationObjectFromCpu): the wait is registered,
   then MonitoredValue is brought to the new lowest waited value minus one; when a wait ends
   (satisfied, timed out, fence destroyed) it is raised again.
3. Every MonitoredValue change is one ``DxgkDdiUpdateMonitoredValues`` call, after which the OS
   reads CurrentValue again and releases whoever it satisfies: a signal that raced the update (the
   GPU compared with the old MonitoredValue and raised nothing) is not lost. If that moved the
   fence, MonitoredValue is computed again.
4. ``DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED`` (``interrupt``, at DIRQL): the fences named in
   ``pSignaledNativeFenceArray`` (all native fences with waiters when the array is NULL or empty)
   are read in the next DPC (``dpc``): satisfied waiters are released, then MonitoredValue moves on.
   A handle the OS does not know is counted in ``unknown_handles`` and skipped (the page says the
   OS bug-checks without naming the code).
5. CPU signals (``signal_cpu``, D3DKMTSignalSynchronizationObjectFromCpu): the OS checks them as
   for a monitored fence (forward only; ``AllowFenceRewind`` is refused on a native fence), then
   asks the driver to write CurrentValue (``DxgkDdiUpdateCurrentValuesFromCpu``, which also has the
   GPU release the queues waiting on it), releases its CPU waiters and moves MonitoredValue on.
6. ``destroy``: pending waiters complete with STATUS_INVALID_HANDLE (:mod:`.fences`), then
   ``DxgkDdiDestroyNativeFence``.

Not modelled: the ``AlwaysSignaled`` and ``NotificationOnly`` updates (a device in error still
drives its native fences to the maximum by the kernel's own write, which the DEFAULT type's kernel
mapping allows), OS-held GPU waits on a native fence (the GPU waits by itself), shared and
cross-adapter native fences (``DxgkDdiOpenNativeFence``), the native progress fence of a hardware
queue, and storage in local memory.
"""

from __future__ import annotations

import struct

from ..sim.tracing import wants
from ..ddi import layout
from ..ddi.bugcheck import BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from .errors import ApiError
from .fences import U64_MAX, MonitoredFence

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
NOT_SUPPORTED = int(NTSTATUS.STATUS_NOT_SUPPORTED)
PAGE = 4096
#: Fences one update call may carry: its three arrays share one page.
BATCH = 128
_BUGCHECK = (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, int(VidSchError.FAILED_UPDATE_MONITORED_VALUE), 0, 0)
_BUGCHECK_CURRENT = (BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, int(VidSchError.FAILED_UPDATE_CURRENT_VALUE), 0, 0)


class NativeFence(MonitoredFence):
    """A native GPU fence: a monitored fence (``cpu_va`` is CurrentValue) with its MonitoredValue."""

    __slots__ = ("monitored", "monitored_va", "monitored_gpu_va", "hDriver", "interrupts", "updates")

    native = True

    def __init__(self, process, device, flags: frozenset, cpu_va: int, bits: int, initial: int):
        super().__init__(process, device, flags, cpu_va, bits, initial)
        self.monitored = U64_MAX  # the OS's last MonitoredValue
        self.monitored_va = 0  # kernel CPU address of MonitoredValue
        self.monitored_gpu_va: dict = {}  # process -> GPU VA of MonitoredValue
        self.hDriver = 0  # the driver's handle (DxgkDdiCreateNativeFence's answer)
        self.interrupts = 0  # NATIVE_FENCE_SIGNALED events that named it (or a NULL array while waited on)
        self.updates = 0  # DxgkDdiUpdateMonitoredValues calls that changed it

    def __repr__(self) -> str:
        state = " destroyed" if self.destroyed else ""
        return f"<NativeFence 0x{self.handle:x} value={self.value} monitored={self.monitored}{state}>"


class NativeFences:
    """The native GPU fences of one adapter (see the module doc)."""

    def __init__(self, wddm2):
        self.wddm2 = wddm2
        self.adapter = adapter = wddm2.adapter
        self.sim = adapter.sim
        self.fences = wddm2.fences
        #: the sink of NativeFence* events: None when no sink wants them
        self.trace = adapter.trace if wants(adapter.trace, "NativeFenceSignaled") else None
        self.by_handle: dict[int, NativeFence] = {}  # the OS's handle -> fence (what interrupts name)
        self.interrupts = 0  # NATIVE_FENCE_SIGNALED events
        self.updates = 0  # DxgkDdiUpdateMonitoredValues calls
        self.unknown_handles = 0
        self._pending: dict[NativeFence, None] = {}  # named by an interrupt, read in the next DPC
        self._scan_all = False
        self._handle = struct.Struct("<Q" if adapter.arch == "x64" else "<I")
        self._arrays = adapter.pool.alloc(PAGE)
        self._create = layout.ctype(RECORDS["DXGKARG_CREATENATIVEFENCE"], adapter.arch, adapter.version)
        self._destroy = layout.ctype(RECORDS["DXGKARG_DESTROYNATIVEFENCE"], adapter.arch, adapter.version)
        self._update = layout.ctype(RECORDS["DXGKARG_UPDATEMONITOREDVALUES"], adapter.arch, adapter.version)()
        self._current = layout.ctype(RECORDS["DXGKARG_UPDATECURRENTVALUESFROMCPU"], adapter.arch, adapter.version)()
        self.cpu_signals = 0  # DxgkDdiUpdateCurrentValuesFromCpu calls
        caps = adapter.native_fence_caps
        self.stride = int(caps.MonitoredValueStride)
        self.map_system = bool(caps.MapToGpuSystemProcess)
        self._mv_page = 0
        self._mv_next = PAGE
        self._mv_free: list[int] = []

    # -- objects ----------------------------------------------------------------------------------------
    def create(self, process, device, initial: int = 0, flags=()) -> NativeFence:
        """D3DKMTCreateNativeFence (D3DDDI_NATIVEFENCE_TYPE_DEFAULT) on ``device``."""
        adapter = self.adapter
        if self.fences.no64bit_atomics:
            raise ApiError(NOT_SUPPORTED, "native fences need 64-bit atomic writes of CurrentValue; the driver "
                                          "reports DXGK_VIDSCHCAPS.No64BitAtomics")
        fence = self.fences.create(process, device, initial, tuple(flags), kind=NativeFence)
        fence.monitored_va = mva = self._monitored_slot()
        adapter.memory.write_u64(mva, U64_MAX)  # no CPU waiter yet
        fence.monitored_gpu_va[process] = self.wddm2.gpuva.address_of(process, mva)
        args = self._create()
        args.hGlobalNativeFence = fence.handle
        args.Type = 0  # D3DDDI_NATIVEFENCE_TYPE_DEFAULT
        if self.map_system:
            args.CurrentValueSystemProcessGpuVa = fence.cpu_va
            args.MonitoredValueSystemProcessGpuVa = mva
        try:
            adapter.ddi.call("DxgkDdiCreateNativeFence", adapter.hAdapter, args, fail="DxgkDdiCreateNativeFence failed")
        except ApiError:
            self.fences.destroy(fence)
            self._mv_free.append(mva)
            raise
        fence.hDriver = args.hGlobalNativeFence
        self.by_handle[fence.handle] = fence
        return fence

    def _monitored_slot(self) -> int:
        """Room for one MonitoredValue: ``MonitoredValueStride`` bytes in a page shared by fences."""
        if self._mv_free:
            return self._mv_free.pop()
        if self._mv_next + self.stride > PAGE:
            self._mv_page = self.wddm2._allocate(PAGE, PAGE)
            self._mv_next = 0
        addr = self._mv_page + self._mv_next
        self._mv_next += self.stride
        return addr

    def destroy(self, fence: NativeFence) -> None:
        """D3DKMTDestroySynchronizationObject on a native fence."""
        adapter = self.adapter
        self.fences.destroy(fence)
        self._mv_free.append(fence.monitored_va)
        self.by_handle.pop(fence.handle, None)
        self._pending.pop(fence, None)
        args = self._destroy()
        args.hGlobalNativeFence = fence.hDriver
        adapter.ddi.call("DxgkDdiDestroyNativeFence", adapter.hAdapter, args)

    def monitored_address(self, fence: NativeFence, process) -> int:
        """MonitoredValue's GPU virtual address in ``process`` (mapped there on first use)."""
        va = fence.monitored_gpu_va.get(process)
        if va is None:
            va = fence.monitored_gpu_va[process] = self.wddm2.gpuva.address_of(process, fence.monitored_va)
        return va

    # -- CPU waits -------------------------------------------------------------------------------------
    def wait_cpu(self, fences: list, values: list, *, timeout: int | None = None, wait_any: bool = False):
        """WaitForSynchronizationObjectFromCpu naming at least one native fence: the wait as for any
        monitored fence, then each native fence's MonitoredValue follows its waiters."""
        event = self.fences.wait_cpu(fences, values, timeout=timeout, wait_any=wait_any)
        natives = list(dict.fromkeys(f for f in fences if f.native))
        for fence in natives:
            self.update(fence)
        if not event.triggered:
            event.add_callback(lambda _status: self._waits_changed(natives))
        return event

    def _waits_changed(self, natives: list) -> None:
        for fence in natives:
            self.update(fence)

    @staticmethod
    def lowest_waited(fence: NativeFence) -> int | None:
        """The smallest value a live waiter of ``fence`` waits for, or None."""
        return min((target for target, _, entry in fence._heap if entry.live), default=None)

    def update(self, fence: NativeFence) -> None:
        """Bring ``fence``'s MonitoredValue to its lowest waited value minus one (UINT64_MAX with no
        waiter), then read CurrentValue again; repeat while that releases waiters."""
        while not fence.destroyed:
            low = self.lowest_waited(fence)
            want = U64_MAX if low is None else low - 1
            if want == fence.monitored:
                return
            self._update_monitored([(fence, want)])
            if not self.fences.scan([fence]):
                return

    def _update_monitored(self, batch: list) -> None:
        """One DxgkDdiUpdateMonitoredValues call for ``[(fence, value), ...]`` (at most BATCH)."""
        assert len(batch) <= BATCH
        adapter = self.adapter
        mem = adapter.memory
        base = self._arrays
        h = self._handle
        args = self._update
        values, where = base + PAGE // 4, base + PAGE // 2
        for i, (fence, value) in enumerate(batch):
            mem.write(base + i * h.size, h.pack(fence.hDriver))
            mem.write_u64(values + i * 8, value)
            mem.write(where + i * h.size, h.pack(fence.monitored_va))
        args.NativeFenceArray = base
        args.UpdatedValueArray = values
        args.MonitoredValueKernelCpuVa = where
        args.NumFences = len(batch)
        adapter.ddi.call("DxgkDdiUpdateMonitoredValues", args, address=base, bugcheck=_BUGCHECK)
        now = self.sim.now
        self.updates += 1
        for fence, value in batch:
            fence.monitored = value
            fence.updates += 1
            if self.trace is not None:
                self.trace.emit(now, "NativeFenceMonitoredValue", {
                    "fence": fence.handle, "monitored": value, "current": mem.read_u64(fence.cpu_va)})

    # -- CPU signals -------------------------------------------------------------------------------------
    def signal_cpu(self, fences: list, values: list) -> None:
        """SignalSynchronizationObjectFromCpu of native fences (each at most once), without
        AllowFenceRewind."""
        if len(set(fences)) != len(fences):
            raise ApiError(int(NTSTATUS.STATUS_INVALID_PARAMETER), "a native fence is named twice in one signal")
        self.fences.check_cpu_signal(fences, values)
        adapter = self.adapter
        mem = adapter.memory
        base = self._arrays
        h = self._handle
        args = self._current
        vals, where = base + PAGE // 4, base + PAGE // 2
        for i, (fence, value) in enumerate(zip(fences, values)):
            mem.write(base + i * h.size, h.pack(fence.hDriver))
            mem.write_u64(vals + i * 8, value)
            mem.write(where + i * h.size, h.pack(fence.cpu_va))
        args.NativeFenceArray = base
        args.UpdatedValueArray = vals
        args.CurrentValueKernelCpuVa = where
        args.NumFences = len(fences)
        args.Flags.Value = 0
        adapter.ddi.call("DxgkDdiUpdateCurrentValuesFromCpu", args, address=base, bugcheck=_BUGCHECK_CURRENT)
        self.cpu_signals += 1
        for fence, value in zip(fences, values):
            if not fence.destroyed:
                self.fences.signalled_by_driver(fence, value)
                self.update(fence)

    # -- the interrupt and the DPC ----------------------------------------------------------------------
    def interrupt(self, data) -> None:
        """DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED reported by the driver's ISR (DIRQL): note which
        fences the DPC reads (the driver's array lives only until its next report)."""
        ns = data.NativeFenceSignaled
        count = int(ns.SignaledNativeFenceCount)
        array = int(ns.pSignaledNativeFenceArray or 0)
        self.interrupts += 1
        named = []
        if not count or not array:
            self._scan_all = True
            for fence in self.by_handle.values():
                if fence._pending:
                    fence.interrupts += 1
        else:
            mem = self.adapter.memory
            h = self._handle
            for i in range(count):
                (handle,) = h.unpack(mem.read(array + i * h.size, h.size))
                fence = self.by_handle.get(handle)
                if fence is None:
                    self.unknown_handles += 1
                    continue
                fence.interrupts += 1
                self._pending[fence] = None
                named.append(handle)
        if self.trace is not None:
            self.trace.emit(self.sim.now, "NativeFenceSignaled", {
                "node": int(ns.NodeOrdinal), "fences": named, "all": 1 if not count or not array else 0})

    def dpc(self) -> None:
        """From DxgkCbNotifyDpc: read the fences the interrupts named, release their satisfied
        waiters, then move their MonitoredValue on."""
        if self._scan_all:
            targets = [f for f in self.by_handle.values() if f._pending]
            self._scan_all = False
            self._pending.clear()
        elif self._pending:
            targets = list(self._pending)
            self._pending.clear()
        else:
            return
        for fence in targets:
            if not fence.destroyed:
                self.fences.scan([fence])
                self.update(fence)

    def summary(self) -> dict:
        return {"fences": len(self.by_handle), "interrupts": self.interrupts, "updates": self.updates,
                "cpu_signals": self.cpu_signals, "unknown_handles": self.unknown_handles}
