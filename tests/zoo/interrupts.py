"""Drivers the interrupts cases catch: DxgkDdiControlInterrupt for the types the OS does not control."""

from __future__ import annotations

from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T
from wddmsim.kmd import ReferenceDriver

from . import C4, breaks

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
