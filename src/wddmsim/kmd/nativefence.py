"""The reference driver's side of native GPU fences (WDDM 3.2, under hardware scheduling).

Follows Microsoft's "Native GPU fence objects" and the pages of DxgkDdiCreateNativeFence,
DxgkDdiDestroyNativeFence, DxgkDdiUpdateMonitoredValues, DxgkDdiUpdateCurrentValuesFromCpu,
DXGK_NATIVE_FENCE_CAPS and DXGKARGCB_NOTIFY_INTERRUPT_DATA (``NativeFenceSignaled``):

- ``DXGK_VIDSCHCAPS.NativeGpuFence`` is reported when the driver's ``native_fence`` setting is on
  and the OS answers ``DxgkCbIsFeatureEnabled("NATIVE_FENCE")`` with TRUE (it enables the feature
  only for WDDM 3.2 drivers under hardware scheduling, and refuses to start an adapter whose driver
  reports it otherwise). ``OptimizedNativeFenceSignaledInterrupt`` stays 0: the GPU tells which
  fences it signalled, so the driver names them.
- ``DXGKQAITYPE_NATIVE_FENCE_CAPS``: MonitoredValues 8 bytes apart, and ``MapToGpuSystemProcess``
  set: the GPU's scheduler works in the system process's space, where it finds both words.
- ``DxgkDdiCreateNativeFence`` keeps a tracking record: the OS's handle (what the interrupt names,
  ``hGlobalNativeFence`` on input) and the fence's CurrentValue address in the system process's
  GPU space (physical in this model), by which the GPU reports a signal.
- ``DxgkDdiUpdateMonitoredValues`` writes each new MonitoredValue through the kernel CPU address
  the OS passes for the call only (the driver keeps no pointer). The GPU's scheduler reads
  MonitoredValue at every NATIVE_FENCE it runs, after writing CurrentValue, so a CurrentValue the
  CPU reads after the call returns was written by a command that saw the new value (the ordering
  the page requires: nothing is in flight between the scheduler's compare and the write).
- ``DxgkDdiUpdateCurrentValuesFromCpu`` (a CPU signal) writes each new CurrentValue through the
  address the OS passes for the call (nothing with ``NotificationOnly``); the GPU's scheduler
  watches the CurrentValue a blocked queue waits on, so the write itself releases the queues it
  satisfies. ``AlwaysSignaled`` is refused: the OS model never sets it.
- In the ISR, the scheduler's native-fence cause becomes one ``DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED``
  per node, with the OS handles of the fences it signalled in ``pSignaledNativeFenceArray`` (a
  driver-owned array of HANDLEs) and ``hHWQueue`` NULL.
"""

from __future__ import annotations

import struct

from ..ddi.enums import DXGK_INTERRUPT_TYPE as T
from ..ddi.ntstatus import NTSTATUS

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
INVALID = int(NTSTATUS.STATUS_INVALID_PARAMETER)
NOT_SUPPORTED = int(NTSTATUS.STATUS_NOT_SUPPORTED)
#: HANDLEs the driver's signalled-fence array holds (one page of 8-byte handles).
SIGNALED_ARRAY_SLOTS = 512
_HANDLE = struct.Struct("<Q")
_PTR = struct.Struct("<Q")


class _NativeFence:
    __slots__ = ("handle", "os_handle", "current", "monitored")

    def __init__(self, handle: int, os_handle: int, current: int, monitored: int):
        self.handle = handle
        self.os_handle = os_handle
        self.current = current  # CurrentValue, system-process GPU address (physical here)
        self.monitored = monitored


class NativeFenceDdi:
    """Mixin of :class:`wddmsim.kmd.ReferenceDriver`: the native-fence entry points and ISR part."""

    def _native_init(self, enabled: bool) -> None:
        self.native_fence = enabled
        self.native_fences: dict[int, _NativeFence] = {}  # driver handle -> record
        self._native_by_address: dict[int, _NativeFence] = {}  # CurrentValue address -> record
        self._native_array = 0  # the signalled-fence array (allocated with the first fence)
        self._native_shift = 0
        self.native_interrupts = 0  # NATIVE_FENCE_SIGNALED events reported

    def _native_caps(self):
        """DXGK_NATIVE_FENCE_CAPS (DxgkDdiQueryAdapterInfo, DXGKQAITYPE_NATIVE_FENCE_CAPS)."""
        c = self._struct("DXGK_NATIVE_FENCE_CAPS")
        c.MonitoredValueStride = 8
        c.MapToGpuSystemProcess = 1
        return c

    def DxgkDdiCreateNativeFence(self, hAdapter: int, pCreateNativeFence) -> int:
        args = pCreateNativeFence
        if not self.native_fence:
            return NOT_SUPPORTED
        if int(args.Type) != 0 or not args.CurrentValueSystemProcessGpuVa:  # TYPE_DEFAULT, mapped for the GPU
            return INVALID
        if not self._native_array:
            from ..gpu import mmio

            self._native_shift = mmio.NATIVE_FENCE_SHIFT
            self._native_array = self.dxgk.MmAllocateContiguousMemory(SIGNALED_ARRAY_SLOTS * _HANDLE.size)
        f = _NativeFence(self._handle(), args.hGlobalNativeFence, args.CurrentValueSystemProcessGpuVa,
                         args.MonitoredValueSystemProcessGpuVa)
        self.native_fences[f.handle] = f
        self._native_by_address[f.current] = f
        args.hGlobalNativeFence = f.handle
        return SUCCESS

    def DxgkDdiDestroyNativeFence(self, hAdapter: int, pDestroyNativeFence) -> int:
        f = self.native_fences.pop(pDestroyNativeFence.hGlobalNativeFence, None)
        if f is None:
            return INVALID
        self._native_by_address.pop(f.current, None)
        return SUCCESS

    def DxgkDdiUpdateMonitoredValues(self, pUpdateMonitoredValues) -> int:
        """Write each fence's new MonitoredValue where the OS says it lives (device IRQL)."""
        args = pUpdateMonitoredValues
        mem = self.mem
        for i in range(args.NumFences):
            (handle,) = _HANDLE.unpack(mem.read(args.NativeFenceArray + i * _HANDLE.size, _HANDLE.size))
            if handle not in self.native_fences:
                return INVALID
            (where,) = _PTR.unpack(mem.read(args.MonitoredValueKernelCpuVa + i * _PTR.size, _PTR.size))
            mem.write_u64(where, mem.read_u64(args.UpdatedValueArray + i * 8))
        return SUCCESS

    def DxgkDdiUpdateCurrentValuesFromCpu(self, pUpdateCurrentValuesFromCpu) -> int:
        """Write each fence's new CurrentValue (a signal from the CPU, DISPATCH_LEVEL)."""
        args = pUpdateCurrentValuesFromCpu
        if args.Flags.AlwaysSignaled:
            return INVALID
        mem = self.mem
        for i in range(args.NumFences):
            (handle,) = _HANDLE.unpack(mem.read(args.NativeFenceArray + i * _HANDLE.size, _HANDLE.size))
            if handle not in self.native_fences:
                return INVALID
            if not args.Flags.NotificationOnly:
                (where,) = _PTR.unpack(mem.read(args.CurrentValueKernelCpuVa + i * _PTR.size, _PTR.size))
                mem.write_u64(where, mem.read_u64(args.UpdatedValueArray + i * 8))
        return SUCCESS

    def _native_isr(self, status: int, node) -> None:
        """NATIVE_FENCE_SIGNALED for the native fences the node's scheduler signalled (DIRQL)."""
        if not status & (1 << (self._native_shift + node.ordinal)):
            return
        hw = self.hw
        handles = []
        while True:
            done = hw.sched_pop_native_signal(node.ordinal)
            if done is None:
                break
            f = self._native_by_address.get(done[1])
            if f is not None and f.os_handle not in handles:
                handles.append(f.os_handle)
        if not handles:
            return
        data = node.interrupt_data
        for start in range(0, len(handles), SIGNALED_ARRAY_SLOTS):
            batch = handles[start:start + SIGNALED_ARRAY_SLOTS]
            self.mem.write(self._native_array, b"".join(_HANDLE.pack(h) for h in batch))
            data.InterruptType = int(T.DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED)
            ns = data.NativeFenceSignaled
            ns.NodeOrdinal = node.ordinal
            ns.EngineOrdinal = 0
            ns.SignaledNativeFenceCount = len(batch)
            ns.pSignaledNativeFenceArray = self._native_array
            ns.hHWQueue = 0
            self.native_interrupts += 1
            self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
