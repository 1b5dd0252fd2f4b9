"""VidSch's completion and retirement: the driver's ``DMA_COMPLETED`` interrupts, and the DPC that
retires what completed.

Steps 4 and 5 of a packet's trip (:mod:`.vidsch`):

4. COMPLETED_ISR: the driver's ISR reports ``DMA_COMPLETED`` with fence F; every packet of the node
   with a fence up to F is complete (cumulative; ``DmaPacketStop``, preceded by a ``DmaPacketStart``
   at the same instant for a packet that ran unseen behind the bottom one), the next one starts.
5. RETIRED: in the DPC (``DxgkCbNotifyDpc``) completed packets leave the hardware queue, their
   buffers are freed, CPU waiters wake (``QueuePacketStop``), and the worker looks for more work.

A driver that reports a fence never submitted on that node, or a fence older than the last one
reported, stops the model with bug check 0x119/0x1 (rules 32 CompletedFenceWasSubmitted and 33
CompletedFenceMonotonic); completion is cumulative (rule 34, CumulativeCompletion). Packets taken
off the hardware without completing (preempted, reset, aborted) leave through
:meth:`VidSchCompletion.off_hardware`.

Spec: Microsoft's reference pages for DxgkDdiInterruptRoutine, DxgkCbNotifyInterrupt
(DXGKARGCB_NOTIFY_INTERRUPT_DATA) and DxgkCbNotifyDpc; "Bug Check 0x119:
VIDEO_SCHEDULER_INTERNAL_ERROR". The rule numbers are the rule catalogue's: ``wddmsim rules N``
prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

from itertools import islice

from ..ddi import rules as R
from ..ddi.fenceid import U32, from_ddi
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from .crash import BugCheckStop, CrashRecord
from .present import PRESENT_FLAGS
from .vidsch_node import NodeQueue
from .vidsch_submit import FLAG_NULL_RENDERING


class VidSchCompletion:
    """The completion and retirement of :class:`~wddmsim.dxgkrnl.vidsch.VidSch` (a base class of
    it: one object, so the per-packet path pays no extra call for the split). It uses the
    attributes VidSch's ``__init__`` sets and its submission's, worker's and figures' methods."""

    # -- 4. completion at device IRQL ----------------------------------------------------------
    def dma_completed(self, data) -> None:
        """``DXGK_INTERRUPT_DMA_COMPLETED``: every packet up to the fence is complete."""
        dc = data.DmaCompleted
        ordinal = dc.NodeOrdinal
        if not 0 <= ordinal < len(self.nodes):
            self.adapter.invalid_interrupt(data, f"DmaCompleted.NodeOrdinal {ordinal} names no node")
            return
        node_queue = self.nodes[ordinal]
        if node_queue.tdr.resetting:
            return  # interrupts from a node being reset are ignored (per-engine reset)
        fence = from_ddi(dc.SubmissionFenceId, node_queue.last_completed)  # a 32-bit id, read past any wrap
        facts = node_queue.notify_facts
        facts.last_submitted_fence = node_queue.last_submitted
        facts.last_completed_fence = node_queue.last_completed
        found = self.verifier.find("DXGKARGCB_NOTIFY_INTERRUPT_DATA", data, facts)
        if fence > node_queue.last_submitted or fence < node_queue.last_completed:
            # Rules 32 and 33: an invalid fence id stops the model (0x119/0x1) in every mode.
            if not found:
                found = [R.Violation(32 if fence > node_queue.last_submitted else 33, "CompletedFence",
                                     f"fence {fence} outside [{node_queue.last_completed}, {node_queue.last_submitted}]", None)]
            bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID,
                          dc.SubmissionFenceId, node_queue.last_submitted & U32, node_queue.last_completed & U32)
            # Strict mode stops inside handle(); the others record the violation, then stop here.
            self.verifier.handle(found, "DXGKARGCB_NOTIFY_INTERRUPT_DATA", data, self.adapter.interrupt_address,
                                 bugcheck=bc)
            raise BugCheckStop(CrashRecord(
                time=self.sim.now, bugcheck=bc, message=str(found[0]),
                struct="DXGKARGCB_NOTIFY_INTERRUPT_DATA", arch=self.adapter.arch,
                ddi_version=self.adapter.version.name, address=self.adapter.interrupt_address,
                data=bytes(data), rule=found[0].rule, rule_name=found[0].name,
            ))
        if found:
            self.verifier.handle(found, "DXGKARGCB_NOTIFY_INTERRUPT_DATA", data, self.adapter.interrupt_address)
        if self.truth is not None:
            self.truth.completing(node_queue, fence, preempted=False)
        self.complete_through(node_queue, fence)

    def complete_through(self, node_queue: NodeQueue, fence: int) -> None:
        """Every packet of ``node_queue`` with a fence up to ``fence`` is complete (cumulative); the next
        one, if any, starts. A packet behind the bottom one that the same interrupt completes
        reached the bottom and ran unseen: it gets its ``DmaPacketStart`` now, just before its
        ``DmaPacketStop``, so every packet that ran has both, in order."""
        node_queue.last_completed = fence
        hw = node_queue.hw
        first = i = node_queue.stopped
        n = len(hw)
        now = self.sim.now
        tr = self.trace
        led = self.ledger
        ordinal = node_queue.ordinal
        while i < n:
            p = hw[i]
            if p.fence > fence:
                break
            if i > first:
                p.started = now
                self.emit_start(node_queue, p, now)
                if self._observer is not None:
                    self._observer.packet_started(ordinal, p)
            p.done = now
            if p.flags & FLAG_NULL_RENDERING and self.truth is not None:
                self.truth.null_rendering_done(node_queue, p)
            if p.flags & PRESENT_FLAGS:
                self.presents.completed(p, now)
            led.dma_stop(now, p.context.handle, ordinal, p.fence, p.kind, p.seq, "Completed")
            if tr is not None:
                tr.emit(now, "DmaPacketStop", {
                    "context": p.context.handle, "node": ordinal, "fence": p.fence, "kind": p.kind,
                    "seq": p.seq, "status": "Completed",
                })
            if self._observer is not None:
                self._observer.packet_completed(ordinal, p, now - p.started if p.started >= 0 else 0)
            i += 1
        if i > node_queue.stopped:
            ran = hw[node_queue.stopped].context
            # charge() and stopped_running(), inline (once per interrupt).
            d = now - node_queue.busy_since
            node_queue.busy_ns += d
            proc = ran.device.process
            os_busy = self.os_busy
            os_busy[proc] = os_busy.get(proc, 0) + d
            ran.gpu_ns += d
            node_queue.last_stop = now
            node_queue.last_stop_ctx = ran
            node_queue.stopped = i
            if i < n and hw[i].context is ran:
                self._start(node_queue, hw[i])  # the same context goes on
                return
            if ran.wait_since < 0 and (ran.ready or any(p.context is ran for p in islice(hw, i, None))):
                ran.wait_since = now  # it has more work, and another context (or no one) runs
            if i < n:
                self._start(node_queue, hw[i])
            else:
                self.idle_check(node_queue)

    def off_hardware(self, p) -> None:
        """``p`` was taken off the hardware without completing (preempted, reset, aborted)."""
        if self.truth is not None:
            self.truth.left(p)
        if p.allocations:
            self.vidmm.retired(p)

    def retired_from(self, ctx) -> None:
        """A packet of ``ctx`` left the hardware for good: finish a pending destroy."""
        if ctx.destroyed and ctx.hDriver and not ctx.in_flight:
            self.adapter.finish_destroy(ctx)

    def dma_preempted(self, data) -> None:
        """``DXGK_INTERRUPT_DMA_PREEMPTED`` (see :mod:`wddmsim.dxgkrnl.preemption`)."""
        self.preemptor.dma_preempted(data)
        ordinal = data.DmaPreempted.NodeOrdinal
        if 0 <= ordinal < len(self.nodes):
            self.idle_check(self.nodes[ordinal])

    # -- 5. retirement in the DPC ----------------------------------------------------------------
    def retire(self) -> None:
        """``DxgkCbNotifyDpc``: retire completed packets on every node, wake waiters and workers."""
        now = self.sim.now
        tr = self.trace
        led = self.ledger
        wake_delay = self.costs.dpc
        truth = self.truth
        free_packet = self.adapter.free_packet
        has_ready = self.policy.has_ready
        for node_queue in self.nodes:
            requeued = node_queue.preemption.answered and self.preemptor.requeue(node_queue)
            if requeued:
                self.idle_check(node_queue)
            if not node_queue.stopped:
                if requeued and has_ready(node_queue.ordinal):
                    self._wake_worker(node_queue, wake_delay)
                continue
            hw = node_queue.hw
            for _ in range(node_queue.stopped):
                p = hw.popleft()
                p.retired = now
                if truth is not None:
                    truth.left(p)
                ctx = p.context
                ctx.completed += 1
                ctx.gpu_packets += 1
                ctx.latencies.add(now - p.queued)
                if p.job is not None:
                    ctx.jobs.completed(p)
                self.packets_retired += 1
                free_packet(p)
                if p.allocations:
                    self.vidmm.retired(p)
                elif ctx.system:
                    self.vidmm.paging_retired(p)
                led.queue_stop(now, ctx.handle, node_queue.ordinal, p.fence, p.kind, p.seq, "Completed", 0)
                if tr is not None:
                    tr.emit(now, "QueuePacketStop", {
                        "context": ctx.handle, "node": node_queue.ordinal, "fence": p.fence, "kind": p.kind,
                        "seq": p.seq, "status": "Completed", "hwqueue": 0,
                    })
                if ctx.waiters:
                    self._wake_waiters(ctx)
                if ctx.destroyed:
                    self.retired_from(ctx)
            node_queue.stopped = 0
            self.last_retired_ns = now
            if has_ready(node_queue.ordinal):
                self._wake_worker(node_queue, wake_delay)

    def _wake_waiters(self, ctx) -> None:
        done = ctx.completed
        keep = []
        for target, event in ctx.waiters:
            if done >= target:
                event.succeed(done)
            else:
                keep.append((target, event))
        ctx.waiters = keep
