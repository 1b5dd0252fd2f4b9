"""Drivers the preemption cases catch: the preemption request and its answer."""

from __future__ import annotations

from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver

from . import C4, VIDSCH, EditsInterrupts, breaks

_PREEMPTED = int(T.DXGK_INTERRUPT_DMA_PREEMPTED)


@breaks(35, "preemption", stop=(C4, 35))
class AnswersAnotherPreemption(EditsInterrupts):
    """Reports DMA_PREEMPTED with a PreemptionFenceId 7 above the one the OS asked with (a stale
    request slot): no such preemption request is outstanding."""

    def edit(self, data):
        if data.InterruptType == _PREEMPTED:
            data.DmaPreempted.PreemptionFenceId += 7


@breaks(36, "preemption", stop=(VIDSCH, 0x1))
class PreemptionClaimsItsOwnFence(EditsInterrupts):
    """Reports DMA_PREEMPTED with LastCompletedFenceId = the PreemptionFenceId (it confuses the two):
    a fence that was never a submission cannot have completed."""

    def edit(self, data):
        if data.InterruptType == _PREEMPTED:
            data.DmaPreempted.LastCompletedFenceId = data.DmaPreempted.PreemptionFenceId


@breaks(58, "preemption", stop=(VIDSCH, 0x2))
class PreemptFailsWhileBusy(ReferenceDriver):
    """DxgkDdiPreemptCommand answers STATUS_RETRY (it means "ask again later") instead of asking its
    engine to stop: the call must succeed and the answer come as DMA_PREEMPTED."""

    def DxgkDdiPreemptCommand(self, hAdapter, pPreemptCommand):
        return int(NTSTATUS.STATUS_RETRY)
