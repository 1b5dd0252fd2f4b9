"""The per-engine reset, :class:`TdrEngineReset` (one of the mixins :class:`~.tdr.Tdr` is made of),
for a driver that reports ``SupportPerEngineTDR`` ("TDR changes in Windows 8").

Interrupts from the node are ignored, ``DxgkDdiQueryEngineStatus`` for a timeout (its answer is
logged; the node timed out whatever it says), ``DxgkDdiQueryDependentEngineGroup`` (the mask must
hold the node, rule 117 DependentEngineGroupIncludesNode, 0x119/0x8) then ``DxgkDdiResetEngine``;
``LastAbortedFenceId`` outside [last completed, last submitted] is bug check 0x119/0xA (rule 115,
LastAbortedFenceInRange). Packets before it are complete, the one with that fence is aborted and its
device goes to error, the ones after it go back to their software queues and are submitted again
with new fence ids. Every other node of the driver's DependentNodeOrdinalMask that has work on its
hardware queue (Microsoft's DXGKARG_QUERYDEPENDENTENGINEGROUP page: the nodes "affected by a reset
operation") is first asked to preempt (reason ``dependent_reset``) and given no new work; the resets
wait until all have answered or 500 ms have passed ("TDR changes in Windows 8"), then the node and
each dependent node still holding work are reset, one by one in ordinal order, the same way. A
failed DDI call promotes the timeout to an adapter reset, as does a reset that hits a paging packet.
Each engine timeout is a 0x141 live dump; more than ``TdrLimitCount - 1`` of them within
``TdrLimitTime`` block the offending process from the GPU (0x142 live dump, its devices go to
error). Rule numbers are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md
lists them all.
"""

from __future__ import annotations

from ..ddi.fenceid import U32, from_ddi
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..sim import PASSIVE
from .crash import BugCheckStop, CrashRecord

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
#: how long the scheduler lets the driver finish preempting the dependent engines before it resets
#: those still busy ("TDR changes in Windows 8")
DEPENDENT_PREEMPT_WAIT = 500_000_000


class TdrEngineReset:
    """DxgkDdiResetEngine on a node and the busy nodes that depend on it, and their recovery."""

    def _engine_reset(self, node_queue, running, timeout: bool = True) -> bool:
        """Per-engine reset ("TDR changes in Windows 8"). False when it has to be promoted to an
        adapter reset. ``timeout``: a TDR (live dump, counted) rather than a page fault. When other
        busy nodes depend on ``node_queue`` (and the driver can preempt) the resets wait for them to be
        preempted first (:meth:`_preempt_dependents`); True then means the recovery is under way."""
        if timeout:
            self.live_dump(BugCheckCode.VIDEO_ENGINE_TIMEOUT_DETECTED, node_queue.ordinal)
        node_queue.tdr.resetting = True
        deferred = False
        try:
            if running is None:
                return True  # it finished between the timeout and now
            if timeout:
                # Microsoft's "TDR changes in Windows 8": the scheduler asks the driver whether the
                # node makes progress; it timed out, so the reset goes ahead whatever the answer
                # (logged). A page fault needs no asking: the driver reported the engine stopped.
                status = self._status_cls()
                status.NodeOrdinal = node_queue.ordinal
                if self._call("DxgkDdiQueryEngineStatus", status) != SUCCESS:
                    return False
            group = self._group_cls()
            group.NodeOrdinal = node_queue.ordinal
            # The mask must include the node (rule 117, 0x119/0x8): judged after the call.
            if self._call("DxgkDdiQueryDependentEngineGroup", group, self._facts(node_queue)) != SUCCESS:
                return False
            mask = group.DependentNodeOrdinalMask
            if not mask >> node_queue.ordinal & 1:  # verifier modes report and off
                bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.INVALID_NODE_MASK, node_queue.ordinal,
                              mask, 0)
                raise BugCheckStop(CrashRecord(
                    time=self.sim.now, bugcheck=bc,
                    message=(f"DxgkDdiQueryDependentEngineGroup answered DependentNodeOrdinalMask "
                             f"0x{mask:X} without node {node_queue.ordinal}, the node being reset"),
                    struct="DXGKARG_QUERYDEPENDENTENGINEGROUP", arch=self.adapter.arch,
                    ddi_version=self.adapter.version.name, address=self.address, data=bytes(group), rule=117,
                    rule_name="DependentEngineGroupIncludesNode", ddi="DxgkDdiQueryDependentEngineGroup",
                ))
            busy = self._busy_dependents(node_queue, mask)
            if busy and self.vs.preemptor.enabled:
                deferred = True
                self._preempt_dependents(node_queue, running, timeout, mask, busy)
                return True
        finally:
            if not deferred:
                node_queue.tdr.resetting = False
                self.vs.retire()
        return self._reset_group(node_queue, running, timeout, mask)

    def _busy_dependents(self, node_queue, mask: int) -> list:
        """The other nodes of ``mask`` (Microsoft's DXGKARG_QUERYDEPENDENTENGINEGROUP page: "all
        dependent nodes that will be affected by a reset operation") with work on their hardware
        queue, in ordinal order; one with nothing there loses nothing and is left alone."""
        return [q for q in self.vs.nodes if q is not node_queue and mask >> q.ordinal & 1 and not q.tdr.resetting
                and len(q.hw) > q.stopped]

    def _preempt_dependents(self, node_queue, running, timeout: bool, mask: int, busy: list) -> None:
        """"TDR changes in Windows 8": the scheduler gives the driver 500 ms to finish preempting the
        dependent engines; only those not preempted by then are reset. Each busy dependent node gets
        a preemption request (reason ``dependent_reset``) and takes no new work meanwhile; the
        resets follow when all have answered, or 500 ms from now."""
        pre = self.vs.preemptor
        for q in busy:
            q.tdr.held_for = node_queue
            if not q.preemption.fence:
                pre.request(q, q.hw[q.stopped].context, None, "dependent_reset")
        timer = self.sim.after(DEPENDENT_PREEMPT_WAIT, self._dependents_waited, node_queue, PASSIVE)
        node_queue.tdr.group = (running, timeout, mask, busy, timer)

    def dependent_answered(self, q) -> None:
        """The DPC saw ``q``'s answer to a preemption while the node it depends on waits to be reset:
        once every dependent has answered, the resets need not wait any longer."""
        node_queue = q.tdr.held_for
        state = node_queue.tdr.group
        if state is not None and all(d.preemption.fence == 0 for d in state[3]):
            state[4].cancel()
            self.sim.soon(self._dependents_waited, node_queue, PASSIVE)

    def _dependents_waited(self, node_queue) -> None:
        """The dependent engines were preempted (or the 500 ms ran out): reset ``node_queue`` and those of
        them that still hold work; the preempted ones get their packets back."""
        state = node_queue.tdr.group
        if state is None:
            return
        node_queue.tdr.group = None
        running, timeout, mask, busy, timer = state
        timer.cancel()
        for q in busy:
            q.tdr.held_for = None
        if running not in node_queue.hw:
            # Another recovery (an adapter reset) took the packet meanwhile: nothing left to do.
            node_queue.tdr.resetting = False
            self.vs.retire()
        elif not self._reset_group(node_queue, running, timeout, mask):
            self._adapter_reset(node_queue, running, promoted=True, timeout=timeout)
        for q in busy:
            self.vs._wake_worker(q)

    def _reset_group(self, node_queue, running, timeout: bool, mask: int) -> bool:
        """``DxgkDdiResetEngine`` on ``node_queue``, then on each busy dependent node of ``mask`` one by one
        in ordinal order, and the recovery of each. False when a call failed (promote)."""
        node_queue.tdr.resetting = True
        held = [node_queue]  # nodes whose interrupts are ignored until the recovery ends
        try:
            aborted = self._reset_one(node_queue)
            if aborted is None:
                return False
            dependents = []
            for q in self._busy_dependents(node_queue, mask):
                q.tdr.resetting = True
                held.append(q)
                q_running = q.hw[q.stopped]
                q_aborted = self._reset_one(q)
                if q_aborted is None:
                    return False
                dependents.append((q, q_aborted, q_running))
            self.paging_hit = False
            guilty = self._recover_node(node_queue, aborted, running)
            self.engine_resets += 1
            self._emit("EngineReset", {"node": node_queue.ordinal, "last_aborted_fence": aborted,
                                       "device": guilty.handle if guilty else 0, "group_of": node_queue.ordinal})
            hit = []  # devices whose packets a dependent reset aborted mid-execution
            for q, q_aborted, q_running in dependents:
                dev = self._recover_node(q, q_aborted, q_running, in_error_anyway=False)
                self._emit("EngineReset", {"node": q.ordinal, "last_aborted_fence": q_aborted,
                                           "device": dev.handle if dev else 0, "group_of": node_queue.ordinal})
                if dev is not None:
                    hit.append(dev)
            if self.paging_hit:
                # The reset hit a paging packet: an adapter-wide reset follows ("TDR changes in
                # Windows 8"), and the device whose allocation it was moving goes to error.
                for q in held:
                    q.tdr.resetting = False
                self._adapter_reset(node_queue, None, promoted=True, timeout=timeout)
                for dev in [guilty] + hit:
                    if dev is not None:
                        self.device_error(dev, "paging packet hit by an engine reset")
                return True
            for dev in hit:
                self.device_error(dev, "dependent engine reset")
            if guilty is not None:
                self.device_error(guilty, "engine reset" if timeout else "page fault")
                proc = guilty.process
                if timeout and self.count_timeout(self.engine_timeouts) > self.config.limit_count - 1:
                    self.live_dump(BugCheckCode.VIDEO_TDR_APPLICATION_BLOCKED, proc.pid)
                    for dev in proc.devices:
                        self.device_error(dev, "process blocked from the GPU")
            return True
        finally:
            for q in held:
                q.tdr.resetting = False
            self.vs.retire()

    def _reset_one(self, node_queue) -> int | None:
        """``DxgkDdiResetEngine`` on ``node_queue``: its LastAbortedFenceId, None when the call failed."""
        args = self._reset_cls()
        args.NodeOrdinal = node_queue.ordinal
        # LastAbortedFenceId in [last completed, last submitted] (rule 115, 0x119/0xA): the
        # registered rule judges it after the call; Windows stops in every verifier mode, so
        # where the verifier only records (modes report and off) the stop is made here.
        if self._call("DxgkDdiResetEngine", args, self._facts(node_queue)) != SUCCESS:
            return None
        if self.vs.truth is not None:
            self.vs.truth.engine_reset(node_queue)
        aborted = from_ddi(args.LastAbortedFenceId, node_queue.last_completed)  # a 32-bit id, past any wrap
        if not node_queue.last_completed <= aborted <= node_queue.last_submitted:
            bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.REPORTED_INVALID_ABORTED_FENCE,
                          args.LastAbortedFenceId, node_queue.last_completed & U32, (node_queue.ordinal << 32) | node_queue.last_submitted & U32)
            raise BugCheckStop(CrashRecord(
                time=self.sim.now, bugcheck=bc,
                message=(f"DxgkDdiResetEngine reported LastAbortedFenceId {aborted} outside [last completed "
                         f"{node_queue.last_completed}, last submitted {node_queue.last_submitted}] on node {node_queue.ordinal}"),
                struct="DXGKARG_RESETENGINE", arch=self.adapter.arch, ddi_version=self.adapter.version.name,
                address=self.address, data=bytes(args), rule=115, rule_name="LastAbortedFenceInRange",
                ddi="DxgkDdiResetEngine",
            ))
        return aborted

    def _recover_node(self, node_queue, aborted: int, running, in_error_anyway: bool = True):
        """After an engine reset: complete before ``aborted``, abort it, take back the rest.
        Returns the device to put in error. ``in_error_anyway``: the node timed out, so the device
        of the packet that ran goes to error even if it finished just before the reset ("TDR
        changes in Windows 8"); a dependent node reset along with it blames only a packet it
        aborted."""
        hw = node_queue.hw
        now = self.sim.now
        guilty = None
        first = i = node_queue.stopped
        while i < len(hw) and hw[i].fence < aborted:
            if i > first:
                self.vs.emit_start(node_queue, hw[i], now)  # it ran unseen behind the bottom packet
            self._stop(hw[i], node_queue, "Completed")
            i += 1
        node_queue.stopped = i
        if i < len(hw) and hw[i].fence == aborted:
            p = hw[i]
            if i > first:
                self.vs.emit_start(node_queue, p, now)  # the hung packet reached the bottom unseen
            del hw[i]
            guilty = self.owner(p)
            if p.moves is not None:
                self.paging_hit = True
            self._stop(p, node_queue, "Aborted")
            self._abort(p, node_queue)
        elif running is not None and in_error_anyway:
            guilty = self.owner(running)  # finished just before the reset: in error anyway
        self._take_back(node_queue)
        node_queue.last_completed = max(node_queue.last_completed, aborted)
        if node_queue.busy_since >= 0 and running is not None:
            self.vs.charge(node_queue, running, now)
        self._clear_preemption(node_queue)
        return guilty
