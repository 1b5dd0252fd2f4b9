"""Drivers the submission cases catch: statuses, the interrupt and DPC protocol, completion reports."""

from __future__ import annotations

from pathlib import Path

from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver
from wddmsim.dxgkrnl.loader import load_class

from . import C4, VIDSCH, EditsInterrupts, breaks

_COMPLETED = int(T.DXGK_INTERRUPT_DMA_COMPLETED)


@breaks(1, "submission", stop=(VIDSCH, 0x2))
class SubmitFailsWhenBusy(ReferenceDriver):
    """DxgkDdiSubmitCommand answers STATUS_NO_MEMORY on its tenth call (a driver that runs out of
    ring-tracking slots and fails instead of waiting): it must always succeed."""

    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        self.submits = getattr(self, "submits", 0) + 1
        if self.submits == 10:
            return int(NTSTATUS.STATUS_NO_MEMORY)
        return super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)


@breaks(32, "submission", stop=(VIDSCH, 0x1))
class CompletesOnePastTheLast(EditsInterrupts):
    """When its node goes idle it reports DMA_COMPLETED for the fence after the last one submitted
    (an off-by-one on the fence slot): a fence never handed to DxgkDdiSubmitCommand."""

    def edit(self, data):
        if data.InterruptType == _COMPLETED:
            node = self.nodes[data.DmaCompleted.NodeOrdinal]
            if data.DmaCompleted.SubmissionFenceId == node.last_submitted:
                data.DmaCompleted.SubmissionFenceId += 1


@breaks(19, "submission", stop=(C4, 19))
class EngineOrdinalOne(EditsInterrupts):
    """Reports DMA_COMPLETED with EngineOrdinal 1 (it counts engines from 1) on an adapter that is
    not linked: every EngineOrdinal is 0 there."""

    def edit(self, data):
        if data.InterruptType == _COMPLETED:
            data.DmaCompleted.EngineOrdinal = 1


@breaks(20, "submission", stop=(VIDSCH, 0x1))
class NodeOrdinalPastTheEnd(EditsInterrupts):
    """Reports DMA_COMPLETED with NodeOrdinal = the node count (it counts nodes from 1): no such
    node."""

    def edit(self, data):
        if data.InterruptType == _COMPLETED:
            data.DmaCompleted.NodeOrdinal = len(self.nodes)


class _QueueDpcMuted:
    """The OS's interface with DxgkCbQueueDpc doing nothing."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def DxgkCbQueueDpc(self, hAdapter):
        return True


@breaks(39, "submission", stop=(C4, 39))
class IsrWithoutDpc(ReferenceDriver):
    """Its ISR reports the completed fences with DxgkCbNotifyInterrupt and returns without queueing
    its DPC (DxgkCbQueueDpc forgotten)."""

    def DxgkDdiStartDevice(self, DxgkInterface):
        return super().DxgkDdiStartDevice(_QueueDpcMuted(DxgkInterface))


@breaks(39, "submission", stop=(C4, 39))
class DpcWithoutNotifyDpc(ReferenceDriver):
    """Its DPC returns without calling DxgkCbNotifyDpc: the scheduler never processes what the ISR
    reported."""

    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
        return None


@breaks(41, "submission", stop=(C4, 41))
class IsrCallsNotifyDpc(ReferenceDriver):
    """Its ISR calls DxgkCbNotifyDpc itself (to save the DPC): the ISR may call only DxgkCbQueueDpc
    and DxgkCbNotifyInterrupt."""

    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
        claimed = super().DxgkDdiInterruptRoutine(MiniportDeviceContext, MessageNumber)
        if claimed:
            self.dxgk.DxgkCbNotifyDpc(self.dxgk.DeviceHandle)
        return claimed


@breaks(38, "submission", stop=(C4, 38))
class ReportsFencesFromTheDpc(ReferenceDriver):
    """Its ISR only dismisses the interrupt and queues the DPC; the DPC reads the fence slots and
    reports completions with DxgkCbNotifyInterrupt at DISPATCH_LEVEL, where only device IRQL is
    allowed."""

    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
        status = self.hw.irq_status()
        if not status:
            return False
        self.hw.irq_ack(status)
        self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
        return True

    def DxgkDdiDpcRoutine(self, MiniportDeviceContext):
        for node in self.nodes:
            self._report_completed(node)
        self.dxgk.DxgkCbNotifyDpc(self.dxgk.DeviceHandle)


@breaks(43, "submission", stop=(C4, 43))
class IsrClaimsWithoutDismissing(ReferenceDriver):
    """Its ISR returns TRUE at once, without reading or acknowledging the GPU's interrupt status: the
    line stays asserted (ground truth: the GPU's status register)."""

    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext, MessageNumber):
        return True


@breaks(25, "submission", stop=(VIDSCH, 0x3))
class PatchFailsOnSecondBuffer(ReferenceDriver):
    """DxgkDdiPatch answers STATUS_INVALID_PARAMETER from its second call on (it validates the
    allocation list against a stale size): DxgkDdiPatch must succeed."""

    def DxgkDdiPatch(self, hAdapter, pPatch):
        self.patches = getattr(self, "patches", 0) + 1
        if self.patches >= 2:
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        return super().DxgkDdiPatch(hAdapter, pPatch)


#: The minimal example driver (examples/drivers/minimal.py), whose buffers carry no private data.
MinimalDriver = load_class(str(Path(__file__).resolve().parents[2] / "examples" / "drivers" / "minimal.py")
                           + ":MinimalDriver")


@breaks(21, "submission", stop=(C4, 21))
class ReadsEmptyPrivateData(MinimalDriver):
    """The minimal driver, checking a magic number in every submission's private data although its
    buffers have none (DmaBufferPrivateDataSize 0). Caught at the read by the special pool, as
    Windows' Driver Verifier would: not a ground-truth check."""

    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        self.mem.read_u32(pSubmitCommand.pDmaBufferPrivateData)
        return super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)
