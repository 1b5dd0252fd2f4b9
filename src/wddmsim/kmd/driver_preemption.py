"""The reference driver's preemption and recovery: the ways the OS takes work back from an engine,
by asking it to stop or by resetting it (a mixin of :class:`~wddmsim.kmd.driver.ReferenceDriver`).

- ``DxgkDdiPreemptCommand`` (a preemption-aware driver): if the node has finished and reported every
  submitted fence, it reports ``DMA_PREEMPTED`` itself inside ``DxgkCbSynchronizeExecution``;
  otherwise it asks the engine to stop. The ISR answers the engine's preemption cause with
  ``DMA_PREEMPTED`` (``PreemptionFenceId``, ``LastCompletedFenceId`` read from the fence slot), keeps
  the engine's saved progress for the interrupted DMA buffer and empties the ring. When the OS
  submits that buffer again the ring gets the WORK still owed, then an INDIRECT from the command the
  engine stopped before: the resubmitted packet does exactly the work that was left.
- Recovery: ``DxgkDdiQueryEngineStatus`` answers Responsive unless the engine left a
  preemption request unanswered or faulted; ``DxgkDdiQueryDependentEngineGroup`` answers the node
  alone (no engine depends on another here); ``DxgkDdiResetEngine`` resets the engine, empties the
  ring and returns the fence of the submission it aborted mid-execution (the last completed one
  when none was running) as ``LastAbortedFenceId``; ``DxgkDdiResetFromTimeout`` resets every engine
  and sets each node's fence slot to its last submitted fence; ``DxgkDdiRestartFromTimeout`` has
  nothing to do (under hardware scheduling both go through kmd/wddm2.py).

Spec: Microsoft's reference pages of DxgkDdiPreemptCommand, DXGKARGCB_NOTIFY_INTERRUPT_DATA
(``DmaPreempted``), DxgkDdiQueryEngineStatus, DxgkDdiQueryDependentEngineGroup, DxgkDdiResetEngine,
DxgkDdiResetFromTimeout and DxgkDdiRestartFromTimeout; docs/driver.md (section 9).
"""

from __future__ import annotations

from ..ddi.enums import DXGK_INTERRUPT_TYPE
from ..ddi.fenceid import after
from ..ddi.ntstatus import NTSTATUS
from ..gpu import mmio
from .driver_submission import _Node

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_DMA_PREEMPTED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PREEMPTED)


class PreemptionDdi:
    """Mixin of :class:`~wddmsim.kmd.driver.ReferenceDriver`: preemption with exact resumption,
    and the engine and adapter resets (see the module doc)."""

    # state set up by ReferenceDriver.__init__: hw (the GPU's register interface), mem (system
    # memory), dxgk (the OS's callbacks), nodes, preemption_aware, per_engine_reset, hw_scheduling,
    # _resume, _ring_roots

    def DxgkDdiPreemptCommand(self, hAdapter: int, pPreemptCommand) -> int:
        """Ask the node's engine to stop, or report the preemption at once if it has nothing left."""
        args = pPreemptCommand
        ordinal = args.NodeOrdinal
        if not self.preemption_aware or not 0 <= ordinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        node = self.nodes[ordinal]
        node.preempt_fence = args.PreemptionFenceId
        done = self._completed(node)
        st = self.hw.status(ordinal)
        if (st == mmio.IDLE or st == mmio.PREEMPTED) and done == node.last_submitted == node.last_reported:
            # Everything submitted finished and was reported: the hardware is not asked; the
            # preemption is reported from here, and the DPC lets the scheduler act on it.
            self.dxgk.DxgkCbSynchronizeExecution(self.dxgk.DeviceHandle, self._report_preempted, node, 0)
            self.dxgk.DxgkCbQueueDpc(self.dxgk.DeviceHandle)
        else:
            self.hw.preempt(ordinal)
        return SUCCESS

    def _report_preempted(self, node: _Node) -> bool:
        """DMA_PREEMPTED for the node's outstanding request (device IRQL); empties the ring."""
        hw = self.hw
        ordinal = node.ordinal
        value = self._completed(node)
        node.last_reported = value
        inflight = node.inflight
        while inflight and not after(inflight[0][0], value):
            inflight.popleft()
        self._keep_unfinished(node, hw.preempt_state(ordinal))
        st = hw.status(ordinal)
        if st == mmio.PREEMPTED or st == mmio.IDLE:
            hw.reset_ring(ordinal)
            node.wptr = 0
        data = node.interrupt_data
        data.InterruptType = _DMA_PREEMPTED
        data.DmaPreempted.PreemptionFenceId = node.preempt_fence
        data.DmaPreempted.LastCompletedFenceId = value
        data.DmaPreempted.NodeOrdinal = node.ordinal
        data.DmaPreempted.EngineOrdinal = 0
        node.preempt_fence = 0
        self.dxgk.DxgkCbNotifyInterrupt(self.dxgk.DeviceHandle, data)
        return True

    def _keep_unfinished(self, node: _Node, saved) -> None:
        """The ring is about to be emptied: remember what the unfinished submissions still owe, so
        that the OS's resubmissions of them do only that. ``saved``: the engine's stop point inside
        the first one, or None."""
        for i, (_fence, address, offset, owed, root, owner) in enumerate(node.inflight):
            if i == 0 and saved is not None:
                buf, pc, _end, left = saved
                self._resume[(owner, root, address)] = (offset if buf is None else buf - address + pc, left)
            elif offset or owed:
                self._resume[(owner, root, address)] = (offset, owed)
        node.inflight.clear()

    # -- recovery -----------------------------------------------------------------------------------------
    def DxgkDdiQueryDependentEngineGroup(self, hAdapter: int, pQueryDependentEngineGroup) -> int:
        """No engine of this GPU depends on another: the mask is the node itself."""
        args = pQueryDependentEngineGroup
        if not self.per_engine_reset or not 0 <= args.NodeOrdinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        args.DependentNodeOrdinalMask = 1 << args.NodeOrdinal
        return SUCCESS

    def DxgkDdiQueryEngineStatus(self, hAdapter: int, pQueryEngineStatus) -> int:
        """Responsive unless the node's engine has left a preemption request unanswered or stopped on
        a fault (the register interface shows no finer progress than that)."""
        args = pQueryEngineStatus
        if not self.per_engine_reset or not 0 <= args.NodeOrdinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        node = self.nodes[args.NodeOrdinal]
        st = self.hw.status(node.ordinal)
        args.EngineStatus.Value = 0
        args.EngineStatus.Responsive = 0 if st == mmio.FAULTED or (node.preempt_fence and st != mmio.PREEMPTED) else 1
        return SUCCESS

    def DxgkDdiResetEngine(self, hAdapter: int, pResetEngine) -> int:
        """Reset one engine; LastAbortedFenceId is the submission it abandoned mid-execution."""
        args = pResetEngine
        if not self.per_engine_reset or not 0 <= args.NodeOrdinal < len(self.nodes):
            return int(NTSTATUS.STATUS_INVALID_PARAMETER)
        node = self.nodes[args.NodeOrdinal]
        done = self._completed(node)
        inflight = node.inflight
        while inflight and not after(inflight[0][0], done):
            inflight.popleft()
        aborted = inflight[0][0] if inflight else done
        self.hw.reset_engine(node.ordinal)
        node.wptr = 0
        self._ring_roots[node.ordinal] = 0
        if inflight:
            inflight.popleft()  # the aborted one is gone for good
        self._keep_unfinished(node, None)
        # The aborted fence counts as done from now on.
        self.mem.write_u64(node.fence_addr, aborted)
        node.last_reported = aborted
        node.preempt_fence = 0
        args.LastAbortedFenceId = aborted
        return SUCCESS

    def DxgkDdiResetFromTimeout(self, hAdapter: int) -> int:
        """Reset the whole GPU: every engine stops, every ring empties, every fence slot reads the
        node's last submitted fence (under hardware scheduling: every queue's work is gone)."""
        if self.hw_scheduling:
            self._hw_reset_all()
            self.hw.irq_ack(self.hw.irq_status())
            return SUCCESS
        for node in self.nodes:
            self.hw.reset_engine(node.ordinal)
            node.wptr = 0
            self._ring_roots[node.ordinal] = 0
            node.inflight.clear()
            node.preempt_fence = 0
            self.mem.write_u64(node.fence_addr, node.last_submitted)
            node.last_reported = node.last_submitted
        self._resume.clear()
        self.hw.irq_ack(self.hw.irq_status())
        return SUCCESS

    def DxgkDdiRestartFromTimeout(self, hAdapter: int) -> int:
        """The OS is done cleaning up; the GPU may be used again (hardware scheduling: the engines'
        schedulers start again)."""
        if self.hw_scheduling:
            self._hw_restart_all()
        return SUCCESS
