"""Broken drivers that only the ground-truth checks catch (dxgkrnl/groundtruth.py).

Each keeps every documented status and every fence in range, so nothing Windows can see is wrong;
the GPU model knows which DMA buffers it really ran and what state a reset left its engines in.
Registered with :func:`zoo.breaks` like every zoo driver (the stop is the verifier's 0xC4 naming the
rule: Windows itself would not stop); ``RULE``, ``AREA`` and ``SETTINGS`` repeat it for
tests/test_groundtruth.py.
"""

from wddmsim.gpu import commands as C
from wddmsim.kmd import ReferenceDriver

from . import C4, breaks


@breaks(37, "submission", stop=(C4, 37))
class SubmitsWithoutRing(ReferenceDriver):
    """DxgkDdiSubmitCommand returns success and writes the fence but never calls the DMA buffer:
    the fence interrupt reports the packet complete although the GPU never ran it."""

    RULE, AREA = 37, "submission"

    def _buffer_call(self, node, fence, address, length, root=0, owner=0):
        return b""


@breaks(37, "submission", stop=(C4, 37))
class FenceBeforeBuffer(ReferenceDriver):
    """Writes the submission's fence (with interrupt) before the INDIRECT that runs its buffer: the
    report arrives while the buffer has not run."""

    RULE, AREA = 37, "submission"

    def _buffer_call(self, node, fence, address, length, root=0, owner=0):
        call = super()._buffer_call(node, fence, address, length, root, owner)
        early = C.fence(node.fence_addr, fence, interrupt=True) if not root else b""
        return early + call


@breaks(37, "processes", stop=(C4, 37))
class CompletesOnWrongNode(ReferenceDriver):
    """Reports each node's fence as the next node's (DmaCompleted.NodeOrdinal off by one): a fence
    that is in range on the other node completes work that node's engine has not run."""

    RULE, AREA = 37, "processes"

    def _report_completed(self, node):
        if len(self.nodes) < 2:
            return super()._report_completed(node)
        ordinal = node.ordinal
        node.ordinal = (ordinal + 1) % len(self.nodes)
        try:
            return super()._report_completed(node)
        finally:
            node.ordinal = ordinal


@breaks(36, "preemption", stop=(C4, 36))
class PreemptedClaimsDone(ReferenceDriver):
    """DMA_PREEMPTED names the last submitted fence as LastCompletedFenceId: the buffer the engine
    stopped in, and those behind it, are declared done and vanish."""

    RULE, AREA = 36, "preemption"
    _claim = False

    def _report_preempted(self, node):
        self._claim = True
        try:
            return super()._report_preempted(node)
        finally:
            self._claim = False

    def _completed(self, node):
        return node.last_submitted if self._claim else super()._completed(node)


@breaks(37, "preemption", stop=(C4, 37))
class LosesResubmission(ReferenceDriver):
    """Drops the rest of a buffer a preemption stopped in when the OS submits it again (returns
    success, rings only the fence): that work vanishes."""

    RULE, AREA = 37, "preemption"

    def _buffer_call(self, node, fence, address, length, root=0, owner=0):
        if self._resume and (owner, root, address) in self._resume:
            del self._resume[(owner, root, address)]
            return b""
        return super()._buffer_call(node, fence, address, length, root, owner)


@breaks(14, "null_rendering", stop=(C4, 14))
class IgnoresNullRendering(ReferenceDriver):
    """Runs a Flags.NullRendering submission's DMA buffer like any other."""

    RULE, AREA = 14, "null_rendering"

    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        pSubmitCommand.Flags.NullRendering = 0
        return super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)


@breaks(5, "paging", stop=(C4, 5))
class RunsFromBufferStart(ReferenceDriver):
    """Calls the DMA buffer from its start instead of DmaBufferSubmissionStartOffset: a paging
    buffer shared by several submissions has its earlier commands run again."""

    RULE, AREA = 5, "paging"

    def DxgkDdiSubmitCommand(self, hAdapter, pSubmitCommand):
        pSubmitCommand.DmaBufferSubmissionStartOffset = 0
        return super().DxgkDdiSubmitCommand(hAdapter, pSubmitCommand)


class _WithoutEngineReset:
    """The register interface with the engine-reset register ignored."""

    def __init__(self, hw):
        self._hw = hw

    def reset_engine(self, ordinal):
        pass

    def __getattr__(self, name):
        return getattr(self._hw, name)


@breaks(114, "tdr", stop=(C4, 114))
class ResetEngineLeavesItHung(ReferenceDriver):
    """DxgkDdiResetEngine reports the right LastAbortedFenceId and success but never resets the
    engine: it is still hung, its ring still full."""

    RULE, AREA = 114, "tdr"

    def DxgkDdiResetEngine(self, hAdapter, pResetEngine):
        hw, self.hw = self.hw, _WithoutEngineReset(self.hw)
        try:
            return super().DxgkDdiResetEngine(hAdapter, pResetEngine)
        finally:
            self.hw = hw


@breaks(110, "tdr", stop=(C4, 110), settings={"per_engine_reset": False})
class ResetFromTimeoutLeavesEnginesRunning(ReferenceDriver):
    """DxgkDdiResetFromTimeout returns success without stopping the engines."""

    RULE, AREA, SETTINGS = 110, "tdr", {"per_engine_reset": False}

    def DxgkDdiResetFromTimeout(self, hAdapter):
        hw, self.hw = self.hw, _WithoutEngineReset(self.hw)
        try:
            return super().DxgkDdiResetFromTimeout(hAdapter)
        finally:
            self.hw = hw


@breaks(96, "hardware_queues", stop=(C4, 96), settings={"ddi_version": "wddm2_7"})
class ProgressBeforeBuffer(ReferenceDriver):
    """DxgkDdiSubmitCommandToHwQueue writes the queue's progress fence before the INDIRECT to the
    buffer: the OS retires a submission the GPU has not run."""

    RULE, AREA, SETTINGS = 96, "hardware_queues", {"ddi_version": "wddm2_7"}

    def DxgkDdiSubmitCommandToHwQueue(self, hAdapter, pSubmitCommandToHwQueue):
        args = pSubmitCommandToHwQueue
        q = self.hwqueues.get(args.hHwQueue)
        if q is not None and args.DmaBufferSize:
            self._hwqueue_write(q, C.fence(q.fence_gpu_va, args.HwQueueProgressFenceId, interrupt=True))
        return super().DxgkDdiSubmitCommandToHwQueue(hAdapter, pSubmitCommandToHwQueue)


@breaks(65, "preemption", stop=(C4, 65))
class ClaimsFinerPreemption(ReferenceDriver):
    """Reports D3DKMDT_GRAPHICS_PREEMPTION_GRANULARITY_SHADER_BOUNDARY whatever its engines can do:
    the OS would plan on mid-shader preemption the hardware does not have."""

    RULE, AREA = 65, "preemption"

    def _caps(self):
        c = super()._caps()
        c.PreemptionCaps.GraphicsPreemptionGranularity = 500
        return c


DRIVERS = (SubmitsWithoutRing, FenceBeforeBuffer, CompletesOnWrongNode, PreemptedClaimsDone, LosesResubmission,
           IgnoresNullRendering, RunsFromBufferStart, ResetEngineLeavesItHung, ResetFromTimeoutLeavesEnginesRunning,
           ProgressBeforeBuffer, ClaimsFinerPreemption)
