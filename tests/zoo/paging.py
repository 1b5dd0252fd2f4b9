"""Drivers the paging case catches: paging buffers and the patch-location lists VidMm reads."""

from __future__ import annotations

import ctypes

from wddmsim.ddi.enums import DXGK_BUILDPAGINGBUFFER_OPERATION as OP
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver

from . import C4, VIDSCH, breaks

_TRANSFER = int(OP.DXGK_OPERATION_TRANSFER)


@breaks(68, "paging", stop=(VIDSCH, 0x5))
class TransferNotSupported(ReferenceDriver):
    """DxgkDdiBuildPagingBuffer answers STATUS_NOT_SUPPORTED for TRANSFER (it only implemented fills):
    it may answer only SUCCESS, ALLOCATION_BUSY or INSUFFICIENT_DMA_BUFFER (bug check 0x119/0x5)."""

    def DxgkDdiBuildPagingBuffer(self, hAdapter, pBuildPagingBuffer):
        if pBuildPagingBuffer.Operation == _TRANSFER:
            return int(NTSTATUS.STATUS_NOT_SUPPORTED)
        return super().DxgkDdiBuildPagingBuffer(hAdapter, pBuildPagingBuffer)


@breaks(75, "paging", stop=(VIDSCH, 0x5))
class BusyAlthoughIdle(ReferenceDriver):
    """DxgkDdiBuildPagingBuffer answers STATUS_GRAPHICS_ALLOCATION_BUSY for a TRANSFER whose
    allocation VidMm said is idle (Flags.AllocationIsIdle): VidMm cannot retry, a failed paging
    command (bug check 0x119/0x5)."""

    def DxgkDdiBuildPagingBuffer(self, hAdapter, pBuildPagingBuffer):
        if pBuildPagingBuffer.Operation == _TRANSFER:
            return int(NTSTATUS.STATUS_GRAPHICS_ALLOCATION_BUSY)
        return super().DxgkDdiBuildPagingBuffer(hAdapter, pBuildPagingBuffer)


@breaks(69, "paging", stop=(C4, 69))
class AdvancesByTheWholeBuffer(ReferenceDriver):
    """DxgkDdiBuildPagingBuffer adds DmaSize, not the bytes it wrote, to pDmaBuffer: the pointer leaves
    the paging buffer."""

    def DxgkDdiBuildPagingBuffer(self, hAdapter, pBuildPagingBuffer):
        size = pBuildPagingBuffer.DmaSize
        start = pBuildPagingBuffer.pDmaBuffer
        status = super().DxgkDdiBuildPagingBuffer(hAdapter, pBuildPagingBuffer)
        if status == int(NTSTATUS.STATUS_SUCCESS) and pBuildPagingBuffer.pDmaBuffer != start:
            pBuildPagingBuffer.pDmaBuffer += size  # past the bytes written, by the whole buffer
        return status


@breaks(30, "paging", stop=(C4, 30))
class PatchListInReverse(ReferenceDriver):
    """DxgkDdiRender writes its output patch-location list last command first: SplitOffset values go
    down along the list, so VidMm cannot page allocations in the order the buffer uses them."""

    def DxgkDdiRender(self, hContext, pRender):
        start = pRender.pPatchLocationListOut
        status = super().DxgkDdiRender(hContext, pRender)
        count = (pRender.pPatchLocationListOut - start) // ctypes.sizeof(self._plist)
        if status == int(NTSTATUS.STATUS_SUCCESS) and count > 1:
            size = ctypes.sizeof(self._plist)
            raw = self.mem.read(start, count * size)
            self.mem.write(start, b"".join(raw[i * size:(i + 1) * size] for i in reversed(range(count))))
        return status
