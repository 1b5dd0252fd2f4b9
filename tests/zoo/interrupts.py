"""Drivers the interrupts cases catch: DxgkDdiControlInterrupt for the types the OS does not control."""

from __future__ import annotations

from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T
from wddmsim.kmd import ReferenceDriver

from . import C4, VIDSCH, breaks

#: The vsync interrupt types a driver may take for CRTC_VSYNC.
_VSYNC_LIKE = {int(T.DXGK_INTERRUPT_CRTC_VSYNC), int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY),
               int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2),
               int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3)}


@breaks(49, "interrupts", stop=(C4, 49))
class ControlsEveryVsyncType(ReferenceDriver):
    """Takes the multiplane-overlay vsync types for CRTC_VSYNC in DxgkDdiControlInterrupt: it turns the
    vsync interrupt on or off for them and answers STATUS_SUCCESS, where every type other than
    CRTC_VSYNC is STATUS_NOT_IMPLEMENTED."""

    def DxgkDdiControlInterrupt(self, hAdapter, InterruptType, EnableInterrupt):
        if InterruptType in _VSYNC_LIKE:
            InterruptType = int(T.DXGK_INTERRUPT_CRTC_VSYNC)
        return super().DxgkDdiControlInterrupt(hAdapter, InterruptType, EnableInterrupt)


class _PlaneVsyncs(ReferenceDriver):
    """Declares multiplane overlays (SupportMultiPlaneOverlay, MaxOverlayPlanes = ``planes``) and,
    after each CRTC_VSYNC, reports CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2 with one entry per plane in
    ``layers`` (DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2: LayerIndex at 0, PresentId at 8, 24 bytes)."""

    planes = 2
    layers = (0, 1)

    def DxgkDdiStartDevice(self, DxgkInterface):
        status = super().DxgkDdiStartDevice(DxgkInterface)
        self._plane_array = DxgkInterface.MmAllocateContiguousMemory(24 * 8)
        self._plane_data = self._interrupt_cls()
        return status

    def _caps(self):
        c = super()._caps()
        c.SupportMultiPlaneOverlay = 1
        c.MaxOverlayPlanes = self.planes
        return c

    def _report_vsync(self, source):
        super()._report_vsync(source)
        import struct

        self.mem.write(self._plane_array, b"".join(struct.pack("<IIQII", layer, 0, 0, 0, 0) for layer in self.layers))
        data = self._plane_data
        data.InterruptType = int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2)
        arm = data.CrtcVsyncWithMultiPlaneOverlay2
        arm.VidPnTargetId = source
        arm.PhysicalAdapterMask = 0
        arm.MultiPlaneOverlayVsyncInfoCount = len(self.layers)
        arm.pMultiPlaneOverlayVsyncInfo = self._plane_array
        data.Flags.Value = 0
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)


@breaks(50, "interrupts", stop=(VIDSCH, 0xE), settings={"ddi_version": "wddm2_1"})
class ReportsPlaneBeyondMax(_PlaneVsyncs):
    """Declares MaxOverlayPlanes = 2 but reports a vsync for plane 2 as well (LayerIndex counts from
    the top plane, 0): Windows stops with bug check 0x119/0xE REPORT_VSYNC_PLANE_OUT_OF_RANGE."""

    layers = (0, 1, 2)
