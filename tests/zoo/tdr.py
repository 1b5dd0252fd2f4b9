"""Drivers the TDR cases catch: what the recovery entry points answer."""

from __future__ import annotations

from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.kmd import ReferenceDriver

from . import C4, TDR_FAILURE, VIDSCH, breaks


@breaks(55, "tdr", stop=(C4, 55))
class AnswersAnOlderFence(ReferenceDriver):
    """DxgkDdiQueryCurrentFence answers the fence before the last one it reported (it reads the slot
    of the previous submission): the answer is the node's last completed fence."""

    def DxgkDdiQueryCurrentFence(self, hAdapter, pCurrentFence):
        status = super().DxgkDdiQueryCurrentFence(hAdapter, pCurrentFence)
        if pCurrentFence.CurrentFence:
            pCurrentFence.CurrentFence -= 1
        return status


@breaks(108, "tdr", stop=(TDR_FAILURE, 0), settings={"per_engine_reset": False})
class ResetFromTimeoutFails(ReferenceDriver):
    """DxgkDdiResetFromTimeout answers STATUS_UNSUCCESSFUL when an engine does not come back at
    once: the adapter reset must succeed (else bug check 0x116)."""

    def DxgkDdiResetFromTimeout(self, hAdapter):
        super().DxgkDdiResetFromTimeout(hAdapter)
        return int(NTSTATUS.STATUS_UNSUCCESSFUL)


@breaks(115, "tdr", stop=(VIDSCH, 0xA))
class AbortsAFenceNeverSubmitted(ReferenceDriver):
    """DxgkDdiResetEngine answers a LastAbortedFenceId 100 above the one it abandoned: it must lie
    between the node's last completed and last submitted fences (bug check 0x119/0xA)."""

    def DxgkDdiResetEngine(self, hAdapter, pResetEngine):
        status = super().DxgkDdiResetEngine(hAdapter, pResetEngine)
        pResetEngine.LastAbortedFenceId += 100
        return status


@breaks(117, "tdr", stop=(VIDSCH, 0x8))
class EmptyDependentEngineGroup(ReferenceDriver):
    """DxgkDdiQueryDependentEngineGroup answers an empty DependentNodeOrdinalMask (no engine depends
    on this one, it means): the mask includes the node being reset (bug check 0x119/0x8)."""

    def DxgkDdiQueryDependentEngineGroup(self, hAdapter, pQueryDependentEngineGroup):
        status = super().DxgkDdiQueryDependentEngineGroup(hAdapter, pQueryDependentEngineGroup)
        pQueryDependentEngineGroup.DependentNodeOrdinalMask = 0
        return status
