"""Drivers the flip cases catch: vsync reports, flip intervals, MMIO flips and the hardware flip queue."""

from __future__ import annotations

from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T
from wddmsim.gpu.mmio import VSYNC_SHIFT
from wddmsim.kmd import ReferenceDriver

from . import C4, EditsInterrupts, breaks

_CRTC_VSYNC = int(T.DXGK_INTERRUPT_CRTC_VSYNC)


@breaks(45, "flips", stop=(C4, 45))
class VsyncWithoutAddress(EditsInterrupts):
    """Reports CRTC_VSYNC with PhysicalAddress 0 (it leaves the address to the DPC): the address the
    source scans out is always given."""

    def edit(self, data):
        if data.InterruptType == _CRTC_VSYNC:
            data.CrtcVsync.PhysicalAddress.QuadPart = 0


@breaks(46, "flips", stop=(C4, 46))
class MaskWithoutItsFlag(EditsInterrupts):
    """Reports CRTC_VSYNC with PhysicalAdapterMask 1 but without Flags.ValidPhysicalAdapterMask: a
    mask it supplies comes with the flag."""

    def edit(self, data):
        if data.InterruptType == _CRTC_VSYNC:
            data.CrtcVsync.PhysicalAdapterMask = 1


@breaks(42, "flips", stop=(C4, 42))
class ReportsVsyncsLate(ReferenceDriver):
    """Its ISR dismisses a vsync cause at once but reports the CRTC_VSYNC first thing in its next pass,
    before that pass's completed fences: in one ISR pass DMA events come before CRTC_VSYNC ones."""

    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
        hw = self.hw
        status = hw.irq_status()
        if not status:
            return False
        vsyncs = (status >> VSYNC_SHIFT) & ((1 << hw.display_count) - 1)
        late = getattr(self, "late", 0)
        self.late = vsyncs  # held for the next pass
        if vsyncs:
            hw.irq_ack(vsyncs << VSYNC_SHIFT)
        for source in range(hw.display_count):
            if late >> source & 1:
                self._report_vsync(source)
        if status & ~(vsyncs << VSYNC_SHIFT):
            # The pass's other causes (completed fences) come after the late CRTC_VSYNC.
            if not super().DxgkDdiInterruptRoutine(MiniportDeviceContext, MessageNumber):
                self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
        elif late:
            self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
        return True


@breaks(48, "flips", stop=(C4, 48))
class IgnoresVsyncControl(ReferenceDriver):
    """Answers DxgkDdiControlInterrupt with STATUS_SUCCESS but never turns the display's vsync
    interrupt on: it reports a vsync only when a flip latches, so an idle display stays silent while
    the OS has the interrupt enabled."""

    def DxgkDdiControlInterrupt(self, hAdapter, InterruptType, EnableInterrupt):
        return 0


@breaks(88, "flips", stop=(C4, 88), settings={"mmio_flips": False, "preemption_aware": False})
class FlipsAtTheNextVsync(ReferenceDriver):
    """Declares DXGK_FLIPCAPS.FlipInterval but programs every flip for the next vsync: a flip asked
    with FlipInterval 2 takes effect one refresh after the previous one. (Its flips are DMA-buffer
    commands: it declares no FlipOnVSyncMmIo, so the FlipInterval it writes is the one that counts.)"""

    def DxgkDdiPresent(self, hContext, pPresent):
        asked = pPresent.FlipInterval
        if asked > 1:
            pPresent.FlipInterval = 1
        try:
            return super().DxgkDdiPresent(hContext, pPresent)
        finally:
            pPresent.FlipInterval = asked


@breaks(84, "flips", stop=(C4, 84))
class ForgetsMmioFlips(ReferenceDriver):
    """Declares FlipOnVSyncMmIo and answers DxgkDdiSetVidPnSourceAddress with STATUS_SUCCESS but never
    writes the scanout address: the vsync after the call still reports the old address, so the flip
    the OS programmed is never reported with CRTC_VSYNC."""

    def DxgkDdiSetVidPnSourceAddress(self, hAdapter, pSetVidPnSourceAddress):
        return 0


@breaks(86, "flips", stop=(C4, 86))
class RefusesImmediateMmioFlips(ReferenceDriver):
    """Declares FlipImmediateMmIo but refuses every Flags.FlipImmediate call with
    STATUS_INVALID_PARAMETER: that status is allowed only for a shared-primary transition."""

    def DxgkDdiSetVidPnSourceAddress(self, hAdapter, pSetVidPnSourceAddress):
        if pSetVidPnSourceAddress.Flags.FlipImmediate:
            return 0xC000000D  # STATUS_INVALID_PARAMETER
        return super().DxgkDdiSetVidPnSourceAddress(hAdapter, pSetVidPnSourceAddress)


@breaks(91, "flips", stop=(C4, 91), settings={"ddi_version": "wddm3_0", "overlay_planes": 2, "max_hw_queued_flips": 4})
class LogsCancelledFlipsShown(ReferenceDriver):
    """Declares the hardware flip queue and answers DxgkDdiCancelFlips truthfully, but writes the flips
    it cancelled into the flip queue log with the time it copies them instead of
    DXGK_HWFLIPQUEUE_TIMESTAMP_CANCELLED: a flip the driver said it cancelled is never logged as shown."""

    def _fq_stamp(self, present_id, vsync):
        if vsync == -1:  # the hardware logged it cancelled
            return self.dxgk.KeQueryPerformanceCounter()[0]
        return super()._fq_stamp(present_id, vsync)
