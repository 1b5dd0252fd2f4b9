"""Drivers the GPU virtual addressing cases catch."""

from __future__ import annotations

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver

from . import VIDSCH, breaks


@breaks(23, "gpu_va", stop=(VIDSCH, 0x2))
class VirtualSubmitFailsWhenFull(ReferenceDriver):
    """DxgkDdiSubmitCommandVirtual answers STATUS_UNSUCCESSFUL on its third call (its ring is "full"):
    it may answer only STATUS_SUCCESS or STATUS_INVALID_PARAMETER (bug check 0x119/0x2)."""

    def DxgkDdiSubmitCommandVirtual(self, hAdapter, pSubmitCommandVirtual):
        self.submits = getattr(self, "submits", 0) + 1
        if self.submits == 3:
            return int(NTSTATUS.STATUS_UNSUCCESSFUL)
        return super().DxgkDdiSubmitCommandVirtual(hAdapter, pSubmitCommandVirtual)
