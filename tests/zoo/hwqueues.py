"""Drivers the hardware-queue cases catch (hardware scheduling: the reference driver built for
WDDM 2.7)."""

from __future__ import annotations

from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T
from wddmsim.ddi.enums import DXGK_PAGE_FAULT_FLAGS as PF
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver

from . import C4, VIDSCH, EditsInterrupts, breaks

HWS = {"ddi_version": "wddm2_7"}
_HWQUEUE_PAGE_FAULTED = int(T.DXGK_INTERRUPT_HWQUEUE_PAGE_FAULTED)


@breaks(95, "hardware_queues", stop=(C4, 95), settings=HWS)
class KeepsPrivateData(ReferenceDriver):
    """Keeps the pointer to a submission's private data and reads it in its next ISR: the OS freed it
    when DxgkDdiSubmitCommandToHwQueue returned."""

    def DxgkDdiSubmitCommandToHwQueue(self, hAdapter, pSubmitCommandToHwQueue):
        self.kept = getattr(self, "kept", [])
        if pSubmitCommandToHwQueue.DmaBufferPrivateDataSize:
            self.kept.append(pSubmitCommandToHwQueue.pDmaBufferPrivateData)
        return super().DxgkDdiSubmitCommandToHwQueue(hAdapter, pSubmitCommandToHwQueue)

    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
        claimed = super().DxgkDdiInterruptRoutine(MiniportDeviceContext, MessageNumber)
        if getattr(self, "kept", None):
            self.mem.read_u32(self.kept.pop())
        return claimed


@breaks(104, "hardware_queues", stop=(C4, 104), settings=HWS)
class SuspendsAtOnce(ReferenceDriver):
    """DxgkDdiSuspendContext answers STATUS_SUCCESS for a running context, as if it were already
    suspended: it answers STATUS_PENDING and reports SUSPEND_CONTEXT_COMPLETED later."""

    def DxgkDdiSuspendContext(self, hAdapter, pSuspendContext):
        super().DxgkDdiSuspendContext(hAdapter, pSuspendContext)
        return int(NTSTATUS.STATUS_SUCCESS)


@breaks(56, "hardware_queues", stop=(VIDSCH, 0x11), settings=HWS)
class AcknowledgesAnotherSuspend(ReferenceDriver):
    """Asks its scheduler to acknowledge a suspension with a fence 10 above the OS's
    contextSuspendFence: SUSPEND_CONTEXT_COMPLETED names a fence the OS never issued (0x119/0x11)."""

    def DxgkDdiSuspendContext(self, hAdapter, pSuspendContext):
        pSuspendContext.contextSuspendFence += 10
        try:
            return super().DxgkDdiSuspendContext(hAdapter, pSuspendContext)
        finally:
            pSuspendContext.contextSuspendFence -= 10


@breaks(57, "hardware_queues", stop=(VIDSCH, 0x10), settings=HWS)
class ReportsDuringItsReset(ReferenceDriver):
    """DxgkDdiResetHwEngine reports MONITORED_FENCE_SIGNALED for the node it is resetting (to flush
    what completed before the reset): no interrupt from an engine between its reset and the OS's
    DxgkDdiResumeHwEngine (0x119/0x10)."""

    def DxgkDdiResetHwEngine(self, hAdapter, pResetHwEngine):
        status = super().DxgkDdiResetHwEngine(hAdapter, pResetHwEngine)
        node = self.nodes[pResetHwEngine.NodeOrdinal]
        self.dxgk.DxgkCbSynchronizeExecution(self.dxgk.DeviceHandle, self._flush, node, 0)
        self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
        return status

    def _flush(self, node) -> bool:
        self._report_monitored_fence(node)
        return True


@breaks(54, "hardware_queues", stop=(C4, 54), settings=HWS)
class NamesItsOwnQueueHandle(EditsInterrupts):
    """Its HWQUEUE_PAGE_FAULTED names the faulting queue by the driver's own handle, not the one the
    OS gave in DxgkDdiCreateHwQueue: with FENCE_INVALID clear the union holds the OS's queue handle."""

    def edit(self, data):
        if data.InterruptType == _HWQUEUE_PAGE_FAULTED:
            pf = data.HwQueuePageFaulted
            if not pf.PageFaultFlags & int(PF.DXGK_PAGE_FAULT_FENCE_INVALID):
                mine = next(q.handle for q in self.hwqueues.values() if q.os_handle == pf.FaultedHwQueue)
                pf.FaultedHwQueue = mine
