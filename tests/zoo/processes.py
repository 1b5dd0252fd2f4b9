"""Drivers the process cases catch: contexts and cancellation."""

from __future__ import annotations

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver

from . import C4, VIDSCH, breaks


@breaks(76, "processes", stop=(C4, 76))
class AtMostThreeContexts(ReferenceDriver):
    """DxgkDdiCreateContext answers STATUS_UNSUCCESSFUL for a fourth context (a fixed-size context
    table): a driver supports any number of contexts and fails only with STATUS_NO_MEMORY or
    STATUS_GRAPHICS_DRIVER_MISMATCH."""

    def DxgkDdiCreateContext(self, hDevice, pCreateContext):
        if len(self.contexts) >= 3:
            return int(NTSTATUS.STATUS_UNSUCCESSFUL)
        return super().DxgkDdiCreateContext(hDevice, pCreateContext)


@breaks(67, "processes", stop=(VIDSCH, 0x9))
class CancelRejectsClearedRecords(ReferenceDriver):
    """DxgkDdiCancelCommand answers STATUS_INVALID_PARAMETER (it finds the packet's private data not
    yet submitted and calls it invalid): it must succeed (bug check 0x119/0x9)."""

    def DxgkDdiCancelCommand(self, hAdapter, pCancelCommand):
        return int(NTSTATUS.STATUS_INVALID_PARAMETER)
