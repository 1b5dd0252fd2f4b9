"""The reference driver's hardware flip queue (WDDM 3.0): queued flips with a target time, the flip
queue log, cancellation and the interrupt target PresentId.

Follows Microsoft's "Hardware flip queue" page and the d3dkmddi pages of DXGK_DRIVERCAPS
(MaxHwQueuedFlips), DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3 (TargetFlipTime,
OutputFlags.HwFlipQueueDrainNeeded), DxgkDdiSetFlipQueueLogBuffer, DXGK_FLIPQUEUE_LOG_ENTRY,
DxgkDdiUpdateFlipQueueLog, DxgkDdiCancelFlips, DXGK_CANCELFLIPS_PLANE,
DxgkDdiSetInterruptTargetPresentId and DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3:

- With the ``max_hw_queued_flips`` setting N > 1 (WDDM 3.0 or later, with overlay planes) the
  driver asks ``DxgkCbIsFeatureEnabled("HWFLIPQUEUE")`` when it reports its caps and, only if the OS
  says yes, declares ``MaxHwQueuedFlips`` = N and works in queue mode; otherwise it declares nothing
  and flips as before (kmd/overlay.py). The GPU's per-plane queues hold
  ``hw_flip_queue_depth`` flips (docs/gpu-programming.md).
- Queue mode, ``DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3`` (device IRQL): every plane must
  be enabled and not immediate (what the OS sends; anything else is STATUS_INVALID_PARAMETER).
  ``TargetFlipTime`` (QPC ticks, from ``KeQueryPerformanceCounter``'s frequency) becomes the
  hardware's target in ns, rounded down, and each plane's flip is written into its queue with its
  PresentId. When a plane's queue has no room the driver writes nothing and returns STATUS_RETRY
  with ``OutputFlags.HwFlipQueueDrainNeeded`` (the page: a flip that cannot be queued behind the
  pending ones).
- The log: ``DxgkDdiSetFlipQueueLogBuffer`` (PASSIVE_LEVEL) gives a plane's circular log; from then
  on every flip the hardware latched or cancelled on the plane is copied into it, in the hardware's
  order, as ``DXGK_FLIPQUEUE_LOG_ENTRY`` (``PresentTimestamp``: the latch's vsync in QPC ticks,
  rounded down, or ``DXGK_HWFLIPQUEUE_TIMESTAMP_CANCELLED``): in the ISR after a source's vsync
  cause, on ``DxgkDdiUpdateFlipQueueLog`` (which answers ``FirstFreeFlipQueueLogEntryIndex``) and on
  ``DxgkDdiSetInterruptTargetPresentId``. When an ISR finds a plane's first free index moved since
  its last report it reports ``DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3``, one
  ``DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3`` (LayerIndex, first free index) per such plane, after the
  source's CRTC_VSYNC.
- ``DxgkDdiCancelFlips`` (device IRQL): per plane, takes the waiting flips from
  ``PresentIdCancelRequested`` to the last written out of the hardware queue and answers the first
  it took in ``PresentIdCancelled`` (0: none still waited); the hardware logs them cancelled.
- ``DxgkDdiSetInterruptTargetPresentId`` (device IRQL): the driver keeps the target per plane and
  writes it into the plane's interrupt target register while the OS has the vsync interrupt on
  (``DxgkDdiControlInterrupt``), UINT64_MAX (none) while it is off, as the page asks ("KMD is
  required to store the latest interrupt target present ID"). The source's periodic vsync interrupt
  is on while the OS has the interrupt on and one of its planes asks for every vsync (target 0) or
  scans out a PresentId at or above its target; a source whose planes were never given a target
  keeps the periodic interrupt as before. UINT64_MAX clears it, and the grid keeps its phase
  (DXGK_VSYNC_DISABLE_KEEP_PHASE: the display's vsyncs are fixed from time 0).
"""

from __future__ import annotations

import ctypes
import struct

from ..ddi import layout
from ..ddi.enums import DXGK_INTERRUPT_TYPE as T
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from ..ddi.structs.flipqueue import DXGK_HWFLIPQUEUE_TIMESTAMP_CANCELLED

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
INVALID = int(NTSTATUS.STATUS_INVALID_PARAMETER)
RETRY = int(NTSTATUS.STATUS_RETRY)
_OVERLAY3 = int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3)
#: the interrupt target that asks for none; also the hardware register's "none"
NO_INTERRUPT = (1 << 64) - 1
_PTR = struct.Struct("<Q")
_ENTRY = struct.Struct("<QQ")  # DXGK_FLIPQUEUE_LOG_ENTRY: PresentId, PresentTimestamp
#: the hardware log's marker of a cancelled flip (gpu/display.py)
_HW_CANCELLED = -1
_MAX_REPORT = 16


class _Log:
    __slots__ = ("address", "entries", "next", "copied", "reported", "scanned")

    def __init__(self, address: int, entries: int):
        self.address = address
        self.entries = entries
        self.next = 0  # the first free entry of the OS's log
        self.copied = 0  # hardware log entries already copied
        self.reported = 0  # the first free index last reported
        self.scanned = 0  # the last PresentId the plane latched


class FlipQueueDdi:
    """Mixin of :class:`wddmsim.kmd.ReferenceDriver`: the hardware flip queue's entry points and the
    ISR's OVERLAY3 report (see the module doc)."""

    def _flipqueue_init(self, depth: int) -> None:
        #: MaxHwQueuedFlips asked for (the setting); declared only when the OS enables the feature
        self.max_hw_queued_flips = depth
        #: queue mode: the OS enabled the feature and the driver declared MaxHwQueuedFlips
        self.flip_queue_on = False
        self._fq_logs: dict[tuple[int, int], _Log] = {}
        self._fq_targets: dict[tuple[int, int], int] = {}
        self._fq_vsync_on = False
        self._qpc_frequency = 0
        self.flip_queue_reports = 0  # OVERLAY3 interrupts reported
        self._fq_report_array = 0

    def _flipqueue_caps(self, c) -> None:
        """DXGK_DRIVERCAPS.MaxHwQueuedFlips, once the OS says it enabled the hardware flip queue."""
        if self.max_hw_queued_flips > 1 and hasattr(c, "MaxHwQueuedFlips"):
            dxgk = self.dxgk
            if dxgk.DxgkCbIsFeatureEnabled(dxgk.DeviceHandle, "HWFLIPQUEUE"):
                self.flip_queue_on = True
                c.MaxHwQueuedFlips = self.max_hw_queued_flips
                self._qpc_frequency = dxgk.KeQueryPerformanceCounter()[1]
                arch, version = self.arch, self.version
                self._info3_cls = layout.ctype(RECORDS["DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO3"], arch, version)
                self._cancel_plane_cls = layout.ctype(RECORDS["DXGK_CANCELFLIPS_PLANE"], arch, version)
                self._fq_report_data = self._interrupt_cls()
                self._fq_report_array = dxgk.MmAllocateContiguousMemory(
                    _MAX_REPORT * ctypes.sizeof(self._info3_cls))

    # -- the queued flip (called by DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3, kmd/overlay.py) --
    def _fq_flip(self, args, source: int, work: list) -> int:
        """Write each plane's flip into its queue with the call's target, or nothing (see the module doc)."""
        hw = self.hw
        if any(not enabled or immediate for _ptr, _layer, _pid, _addr, enabled, immediate in work):
            return INVALID
        depth = hw.hw_flip_queue_depth(source)
        if any(hw.hw_flip_queue_pending(source, layer) >= depth for _ptr, layer, *_ in work):
            args.OutputFlags.Value = 0
            args.OutputFlags.HwFlipQueueDrainNeeded = 1
            return RETRY
        target_ns = int(args.TargetFlipTime) * 1_000_000_000 // self._qpc_frequency
        zero = bytes(4)
        for ptr, layer, present_id, address, _enabled, _immediate in work:
            hw.hw_flip_queue_submit(source, layer, present_id, address, target_ns)
            self.mem.write(ptr + self._output_flags_at, zero)
        args.OutputFlags.Value = 0
        return SUCCESS

    # -- the log ------------------------------------------------------------------------------------------
    def DxgkDdiSetFlipQueueLogBuffer(self, hAdapter: int, pSetFlipQueueLogBuffer) -> int:
        """Keep the plane's log; the flips the hardware logs from now on are copied into it."""
        a = pSetFlipQueueLogBuffer
        key = (int(a.VidPnSourceId), int(a.LayerIndex))
        if not a.LogBufferAddress or not a.NumberOfEntries:
            self._fq_logs.pop(key, None)
            return SUCCESS
        old = self._fq_logs.get(key)
        log = self._fq_logs[key] = _Log(int(a.LogBufferAddress), int(a.NumberOfEntries))
        if old is not None:
            log.copied, log.scanned = old.copied, old.scanned
        elif 0 <= key[0] < self.hw.display_count:
            log.copied = len(self.hw.hw_flip_queue_log(*key))  # what the hardware logged before: not the OS's
        return SUCCESS

    def _fq_sync(self, key: tuple[int, int]) -> _Log | None:
        """Copy the hardware's new log entries of plane ``key`` into the OS's log."""
        log = self._fq_logs.get(key)
        if log is None:
            return None
        fresh = self.hw.hw_flip_queue_log(key[0], key[1], log.copied)
        for present_id, vsync in fresh:
            stamp = self._fq_stamp(present_id, vsync)
            if vsync != _HW_CANCELLED:
                log.scanned = present_id
            self.mem.write(log.address + 16 * log.next, _ENTRY.pack(present_id, stamp))
            log.next = (log.next + 1) % log.entries
        log.copied += len(fresh)
        return log

    def _fq_stamp(self, present_id: int, vsync: int) -> int:
        """A log entry's PresentTimestamp: the latch's vsync in QPC ticks, rounded down (the cancelled
        marker for a flip the hardware cancelled)."""
        if vsync == _HW_CANCELLED:
            return DXGK_HWFLIPQUEUE_TIMESTAMP_CANCELLED
        return vsync * self._qpc_frequency // 1_000_000_000

    def DxgkDdiUpdateFlipQueueLog(self, hAdapter: int, pUpdateFlipQueueLog) -> int:
        """Bring the plane's log up to date now and answer its first free index."""
        a = pUpdateFlipQueueLog
        log = self._fq_sync((int(a.VidPnSourceId), int(a.LayerIndex)))
        a.FirstFreeFlipQueueLogEntryIndex = log.next if log is not None else 0
        if log is not None:
            log.reported = log.next  # the OS has it
        return SUCCESS

    def _fq_report(self, source: int) -> None:
        """After a vsync cause of ``source`` (device IRQL): the log, then OVERLAY3 for each plane whose
        first free index moved; then the periodic interrupt as the targets want it."""
        if not self._fq_logs:
            return
        entries = []
        for key in sorted(self._fq_logs):
            if key[0] != source:
                continue
            log = self._fq_sync(key)
            if log.next != log.reported:
                log.reported = log.next
                entries.append((key[1], log.next))
        if entries:
            info = self._info3_cls()
            blob = bytearray()
            for layer, first_free in entries[:_MAX_REPORT]:
                info.LayerIndex = layer
                info.FirstFreeFlipQueueLogEntryIndex = first_free
                blob += bytes(info)
            self.mem.write(self._fq_report_array, bytes(blob))
            data = self._fq_report_data
            data.InterruptType = _OVERLAY3
            arm = data.CrtcVsyncWithMultiPlaneOverlay3
            arm.VidPnTargetId = source
            arm.PhysicalAdapterMask = 0  # one physical adapter (rule 46)
            arm.MultiPlaneOverlayVsyncInfoCount = min(len(entries), _MAX_REPORT)
            arm.pMultiPlaneOverlayVsyncInfo = self._fq_report_array
            data.Flags.Value = 0
            self.flip_queue_reports += 1
            self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
        self._fq_periodic(source)

    # -- cancelling ------------------------------------------------------------------------------------------
    def DxgkDdiCancelFlips(self, hAdapter: int, pCancelFlips) -> int:
        """Take back each plane's waiting flips from PresentIdCancelRequested on (synchronously)."""
        a = pCancelFlips
        source = int(a.VidPnSourceId)
        count = int(a.PlaneCount)
        if not 0 <= source < self.hw.display_count or (count and not a.ppPlanes):
            return INVALID
        size = ctypes.sizeof(self._cancel_plane_cls)
        at = self._cancel_plane_cls.PresentIdCancelled.offset
        for i in range(count):
            ptr = _PTR.unpack(self.mem.read(a.ppPlanes + 8 * i, 8))[0]
            plane = self._cancel_plane_cls.from_buffer_copy(self.mem.read(ptr, size))
            first = self.hw.hw_flip_queue_cancel(source, int(plane.LayerIndex), int(plane.PresentIdCancelRequested))
            self.mem.write(ptr + at, struct.pack("<Q", first))
        return SUCCESS

    # -- the interrupt target ------------------------------------------------------------------------------
    def DxgkDdiSetInterruptTargetPresentId(self, hAdapter: int, pSetInterruptTargetPresentId) -> int:
        """Keep the plane's target; program it while the vsync interrupt is on (see the module doc)."""
        a = pSetInterruptTargetPresentId
        key = (int(a.VidPnSourceId), int(a.LayerIndex))
        if not 0 <= key[0] < self.hw.display_count:
            return INVALID
        self._fq_targets[key] = int(a.InterruptTargetPresentId)
        self._fq_sync(key)
        self._fq_program(key[0])
        return SUCCESS

    def _fq_program(self, source: int) -> None:
        """The source's target registers and periodic interrupt, from the targets and the OS's switch."""
        hw = self.hw
        for (s, layer), target in self._fq_targets.items():
            if s == source:
                hw.hw_flip_queue_interrupt_target(source, layer, target if self._fq_vsync_on else NO_INTERRUPT)
        self._fq_periodic(source)

    def _fq_periodic(self, source: int) -> None:
        self.hw.vsync_interrupt(source, self._periodic_wanted(source, self._fq_vsync_on))

    def _periodic_wanted(self, source: int, enabled: bool) -> bool:
        """The periodic vsync interrupt of ``source``: as the OS asked, unless targets say otherwise."""
        if not enabled:
            return False
        targets = [(layer, t) for (s, layer), t in self._fq_targets.items() if s == source]
        if not targets:
            return True
        for layer, t in targets:
            log = self._fq_logs.get((source, layer))
            if t == 0 or (t != NO_INTERRUPT and log is not None and log.scanned >= t):
                return True
        return False

    def _fq_control(self, enabled: bool) -> None:
        """DxgkDdiControlInterrupt(CRTC_VSYNC) changed: every source's registers follow."""
        self._fq_vsync_on = enabled
        for source in range(self.hw.display_count):
            self._fq_program(source)
