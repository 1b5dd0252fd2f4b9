"""Drivers the fault cases catch: what a page-fault report says."""

from __future__ import annotations

import ctypes

from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T
from wddmsim.ddi.enums import DXGK_PAGE_FAULT_FLAGS as PF
from wddmsim.ddi.ntstatus import NTSTATUS

from . import C4, VIDSCH, EditsInterrupts, breaks

_PAGE_FAULTED = int(T.DXGK_INTERRUPT_DMA_PAGE_FAULTED)


@breaks(51, "faults", stop=(VIDSCH, 0xD))
class FenceInvalidWithAFence(EditsInterrupts):
    """Its page-fault report sets FENCE_INVALID only, yet keeps the faulting submission's fence id and
    asks for no reset: with FENCE_INVALID the fence is 0 and a reset is required (0x119/0xD)."""

    def edit(self, data):
        if data.InterruptType == _PAGE_FAULTED:
            data.DmaPageFaulted.PageFaultFlags = int(PF.DXGK_PAGE_FAULT_FENCE_INVALID)


@breaks(53, "faults", stop=(VIDSCH, 0xC))
class EveryFaultIsFatal(EditsInterrupts):
    """Sets FATAL_HARDWARE_ERROR in every page-fault report (a recoverable translation fault): the
    system cannot go on, bug check 0x119/0xC."""

    def edit(self, data):
        if data.InterruptType == _PAGE_FAULTED:
            data.DmaPageFaulted.PageFaultFlags |= int(PF.DXGK_PAGE_FAULT_FATAL_HARDWARE_ERROR)


@breaks(44, "faults", stop=(C4, 44))
class ReportsDmaFaulted(EditsInterrupts):
    """Reports its page faults as DXGK_INTERRUPT_DMA_FAULTED (its DmaFaulted arm filled in: fence,
    status, node), the type reserved for the system, instead of DMA_PAGE_FAULTED."""

    def edit(self, data):
        if data.InterruptType == _PAGE_FAULTED:
            fence, node = data.DmaPageFaulted.FaultedFenceId, data.DmaPageFaulted.NodeOrdinal
            ctypes.memset(ctypes.addressof(data), 0, ctypes.sizeof(data))
            data.InterruptType = int(T.DXGK_INTERRUPT_DMA_FAULTED)
            data.DmaFaulted.FaultedFenceId = fence
            data.DmaFaulted.Status = int(NTSTATUS.STATUS_GRAPHICS_GPU_EXCEPTION_ON_DEVICE)
            data.DmaFaulted.NodeOrdinal = node
            data.DmaFaulted.EngineOrdinal = 0
