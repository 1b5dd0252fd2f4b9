"""The reference driver's display side: the vsync interrupt's control and reports, and MMIO flips
(a mixin of :class:`~wddmsim.kmd.driver.ReferenceDriver`).

- When a flip latches at a vsync the ISR reports ``DXGK_INTERRUPT_CRTC_VSYNC`` with the source's
  target id and the address now scanned out; after it, the planes that latched an MPO3 flip
  (kmd/overlay.py) and the hardware flip queue's log (kmd/flipqueue.py).
- ``DxgkDdiControlInterrupt(DXGK_INTERRUPT_CRTC_VSYNC, Enable)`` writes every source's vsync
  interrupt enable register (the call names no source): enabled, each source raises its vsync cause
  at every vsync and the ISR reports each one (with the hardware flip queue on, each source's
  interrupt-target registers follow the call too, and its periodic interrupt may stay off while
  targets are set: kmd/flipqueue.py); any other interrupt type is ``STATUS_NOT_IMPLEMENTED``.
- MMIO flips (the ``mmio_flips`` setting, by default as preemption-aware, which needs it: rule 64,
  PreemptionAwareNeedsMmioFlip: ``wddmsim rules 64``, docs/rules.md; declared as
  ``FlipOnVSyncMmIo`` and ``FlipImmediateMmIo``): ``DxgkDdiSetVidPnSourceAddress`` (device IRQL)
  writes the source's scanout address register, at once for ``FlipImmediate`` (and
  ``ModeChange``), else into the pending-address register that latches at the next vsync, which
  the ISR reports with ``CRTC_VSYNC`` and the new address.

Spec: Microsoft's reference pages of DxgkDdiControlInterrupt, DxgkDdiSetVidPnSourceAddress,
DXGKARG_SETVIDPNSOURCEADDRESS and DXGKARGCB_NOTIFY_INTERRUPT_DATA (``CrtcVsync``); docs/driver.md.
"""

from __future__ import annotations

from ..ddi.enums import DXGK_INTERRUPT_TYPE
from ..ddi.ntstatus import NTSTATUS
from ..gpu.mmio import VSYNC_SHIFT

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_CRTC_VSYNC = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_CRTC_VSYNC)


class DisplayDdi:
    """Mixin of :class:`~wddmsim.kmd.driver.ReferenceDriver`: vsync control and reports, MMIO
    flips (see the module doc)."""

    # state set up by ReferenceDriver.__init__: hw (the GPU's register interface), dxgk (the OS's
    # callbacks), overlay_planes, flip_queue_on, _vsync_data

    def DxgkDdiControlInterrupt(self, hAdapter: int, InterruptType: int, EnableInterrupt: bool) -> int:
        """CRTC_VSYNC on or off on every source's vsync interrupt register; no other type."""
        if InterruptType != _CRTC_VSYNC:
            return int(NTSTATUS.STATUS_NOT_IMPLEMENTED)
        if self.flip_queue_on:
            self._fq_control(bool(EnableInterrupt))  # with the interrupt targets (kmd/flipqueue.py)
            return SUCCESS
        hw = self.hw
        for source in range(hw.display_count):
            hw.vsync_interrupt(source, bool(EnableInterrupt))
        return SUCCESS

    def _report_vsyncs(self, status: int) -> None:
        """CRTC_VSYNC for every source whose vsync cause is in ``status`` (after the DMA events)."""
        if status >> VSYNC_SHIFT:
            for source in range(self.hw.display_count):
                if status & (1 << (VSYNC_SHIFT + source)):
                    self._report_vsync(source)

    def _report_vsync(self, source: int) -> None:
        """CRTC_VSYNC: the address the source scans out since this vsync (device IRQL)."""
        data = self._vsync_data
        data.InterruptType = _CRTC_VSYNC
        data.CrtcVsync.VidPnTargetId = source
        data.CrtcVsync.PhysicalAddress.QuadPart = self.hw.scanout(source)
        data.CrtcVsync.PhysicalAdapterMask = 0  # one physical adapter: no mask (rule 46)
        data.Flags.Value = 0
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
        if self.overlay_planes:
            self._report_plane_vsyncs(source)  # the planes that latched an MPO3 flip (kmd/overlay.py)
        if self.flip_queue_on:
            self._fq_report(source)  # the flip queue log, CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3 (kmd/flipqueue.py)

    def DxgkDdiSetVidPnSourceAddress(self, hAdapter: int, pSetVidPnSourceAddress) -> int:
        """Write the source's scanout address register (device IRQL): at once for ModeChange and
        FlipImmediate, else into the pending-address register, which latches at the next vsync; the
        ISR then reports CRTC_VSYNC with the new address (and the DPC calls DxgkCbNotifyDpc)."""
        args = pSetVidPnSourceAddress
        source = args.VidPnSourceId
        if not 0 <= source < self.hw.display_count:
            return int(NTSTATUS.STATUS_UNSUCCESSFUL)  # the OS names only its sources
        flags = args.Flags
        self.hw.set_scanout_address(source, args.PrimaryAddress.QuadPart,
                                    immediate=bool(flags.ModeChange or flags.FlipImmediate))
        return SUCCESS
