"""Preemption and resubmission in the packet scheduler (the Windows 8 model, WDDM 1.2 and later).

When it asks (Microsoft's "GPU preemption" page; the documentation leaves the policy open, so these
are the model's decisions):

- a context of higher effective priority than the one running on a node becomes ready, or
- under ``priority_quantum``, the running context has held the node for a whole quantum while
  another context of the same priority waits, or
- under ``priority_quantum``, a context of lower priority, ready or queued behind the running one,
  has starved (the starvation boost of :mod:`wddmsim.dxgkrnl.policy`): it runs now, not after the
  packets already on the hardware queue.

How: VidSch takes the node's next fence id as ``PreemptionFenceId`` and calls
``DxgkDdiPreemptCommand`` at DISPATCH_LEVEL (a failure is bug check 0x119/0x2 like a failed
submission). It submits nothing more to the node until the driver answers with
``DXGK_INTERRUPT_DMA_PREEMPTED`` (``PreemptionFenceId``, ``LastCompletedFenceId`` L): packets with a
fence up to L are complete, the rest of the hardware queue is preempted (``DmaPacketStop`` with
status ``Preempted``). In the DPC the preempted packets go back to the front of their contexts'
software queues, in order; each is submitted again with a new fence id, ``Flags.Resubmission = 1``
(WDDM 2.0 and later; always 0 for a WDDM 1.x driver) and, if it has patch locations, patched again.
Preempted paging packets keep their fence ids: they are VidMm's, whose system context runs before
every process, so they go first and in their order.

Measured: the latency from the request to the DMA_PREEMPTED interrupt, per node.

A request left unanswered for TdrDelay is a timeout (:mod:`wddmsim.dxgkrnl.tdr`).

Spec: Microsoft's "GPU preemption" page; the reference pages for DxgkDdiPreemptCommand,
DXGKARG_PREEMPTCOMMAND and the preemption granularity enumerations; "Bug Check 0x119:
VIDEO_SCHEDULER_INTERNAL_ERROR" (0x2); rules 13 (ResubmissionFlagConsistent), 35
(PreemptedFenceOutstanding) and 36 (PreemptLastCompletedValid) of the rule catalogue
(``wddmsim rules 13 35 36``, docs/rules.md).
"""

from __future__ import annotations

from itertools import islice

from ..ddi.fenceid import U32, from_ddi
from ..ddi import layout
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from ..ddi.rules import Violation
from ..ddi.versions import ddi_version
from ..sim import DISPATCH
from .crash import BugCheckStop, CrashRecord
from .stats import LatencyStats

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
FLAG_RESUBMISSION = 0x80
FLAG_PAGING = 0x1
NOTIFY = "DXGKARGCB_NOTIFY_INTERRUPT_DATA"


class NodePreemption:
    """One node's preemption state and statistics."""

    __slots__ = ("fence", "since", "reason", "args", "address", "latencies", "count", "preempted",
                 "answered", "timer", "run_ctx", "run_since", "cand")

    def __init__(self, args, address: int):
        self.fence = 0  # PreemptionFenceId outstanding, 0 when none
        self.since = 0
        self.reason = ""
        self.args = args  # DXGKARG_PREEMPTCOMMAND, reused
        self.address = address
        self.latencies = LatencyStats()
        self.count = 0
        self.preempted: list = []  # packets taken off the hardware queue, waiting for the DPC
        self.answered = False  # a DMA_PREEMPTED arrived since the last DPC
        self.timer = None  # quantum check
        self.run_ctx = None  # context at the bottom of the hardware queue, and since when
        self.run_since = 0
        self.cand = None  # the context the last request was for: it goes first again


class Preemptor:
    """The preemption side of :class:`~wddmsim.dxgkrnl.vidsch.VidSch`."""

    def __init__(self, vidsch):
        self.vs = vidsch
        self.sim = vidsch.sim
        adapter = vidsch.adapter
        self.enabled = adapter.preemption_aware
        self.resubmission_flag = FLAG_RESUBMISSION if adapter.version.value >= ddi_version("wddm2_0").value else 0
        cls = layout.ctype(RECORDS["DXGKARG_PREEMPTCOMMAND"], adapter.arch, adapter.version)
        for node_queue in vidsch.nodes:
            node_queue.preemption = NodePreemption(cls(), node_queue.submit_address + 0x800)
        #: the GPU's own account, which Windows cannot see (set by whoever builds the GPU,
        #: wddmsim.runner.system): ``gpu_account(node)`` is the engine time the node's engine has spent on
        #: preemption stops since the last call (:attr:`wddmsim.gpu.engine.Engine.preempt_cost_ns`)
        self.gpu_account = None

    # -- deciding -------------------------------------------------------------------------------------
    def started(self, node_queue, packet) -> None:
        """A packet reached the bottom of ``node_queue``'s hardware queue (any IRQL): track who runs and
        arm the quantum check if someone is waiting."""
        st = node_queue.preemption
        ctx = packet.context
        if ctx is not st.run_ctx:
            st.run_ctx = ctx
            st.run_since = self.sim.now
            self.vs.policy.started(node_queue.ordinal, ctx)
        tdr = node_queue.tdr
        if tdr.watch is None:
            self.vs.tdr.packet_started(node_queue)  # arms the node's watchdog (when TDR is on)
        if self.enabled and (self.vs.policy.has_ready(node_queue.ordinal) or len(node_queue.hw) - node_queue.stopped > 1):
            self._arm(node_queue)

    def consider(self, node_queue) -> None:
        """Ask for preemption on ``node_queue`` now if the policy wants it, else arm the quantum check.
        Called at PASSIVE or DISPATCH level, never from the ISR."""
        if not self.enabled:
            return
        st = node_queue.preemption
        if st.fence or len(node_queue.hw) == node_queue.stopped:
            return
        running = node_queue.hw[node_queue.stopped].context
        cand, when = self._candidate(node_queue, running, st.run_since)
        if cand is not None:
            self.request(node_queue, running, cand)
        elif when is not None:
            self._arm(node_queue, when)

    def _candidate(self, node_queue, running, run_since: int):
        """Who should preempt ``running``: a ready context the policy names, else a context whose
        packet already waits behind it on the hardware queue (higher priority, or equal once the
        quantum is used up). ``(context, None)``, or ``(None, when to look again or None)``."""
        policy = self.vs.policy
        now = self.sim.now
        shield = policy.shielded(node_queue.ordinal, running, run_since, now)
        if shield is not None:
            return None, shield  # a starvation boost bought ``running`` this much GPU time
        cand, when = policy.preempt_candidate(node_queue.ordinal, running, run_since, now)
        if cand is not None:
            return cand, None
        if not getattr(policy, "priority_preemption", True):
            return None, None  # a research policy: the OS preempts when the policy asks, not on its own
        mine = running.effective_priority
        quantum = policy.quantum
        starvation = policy.starvation
        for p in islice(node_queue.hw, node_queue.stopped + 1, None):
            c = p.context
            if c is running:
                continue
            prio = c.effective_priority
            if prio > mine:
                return c, None
            if prio == mine and quantum is not None:
                end = run_since + quantum
                if now >= end:
                    return c, None
                if when is None or end < when:
                    when = end
            elif prio < mine and starvation is not None and c.wait_since >= 0:
                # A lower context's packet (a boosted one, or one picked while ``running`` had
                # nothing ready) waits behind ``running``'s: once it has starved it runs now.
                end = c.wait_since + starvation
                if now >= end:
                    return c, None
                if when is None or end < when:
                    when = end
        return None, when

    def _arm(self, node_queue, when: int | None = None) -> None:
        st = node_queue.preemption
        if when is None:
            if st.run_ctx is None:
                return
            cand, when = self._candidate(node_queue, st.run_ctx, st.run_since)
            if cand is None and when is None:
                return
            if when is None:
                # A higher priority is already waiting: decide at DISPATCH level this instant.
                when = self.sim.now
        if st.timer is not None:
            if when >= st.timer.time:
                return
            # A check due earlier replaces the one armed (for a quantum's end, or a lower context's
            # starvation): the earlier one arms the later one again if it is still due.
            st.timer.cancel()
        st.timer = self.sim.at(max(when, self.sim.now), self._timer_fired, node_queue, DISPATCH)

    def _timer_fired(self, node_queue) -> None:
        node_queue.preemption.timer = None
        self.consider(node_queue)

    # -- asking ---------------------------------------------------------------------------------------
    def request(self, node_queue, running, cand, reason: str | None = None) -> None:
        """Call DxgkDdiPreemptCommand on ``node_queue`` (``cand``: the context it is for, None when the TDR
        watchdog asks); the answer must come within TdrDelay."""
        vs = self.vs
        sim = self.sim
        st = node_queue.preemption
        fence = node_queue.next_fence
        node_queue.next_fence = fence + 1
        st.fence = fence
        st.since = sim.now
        if reason is None:
            prio, mine = cand.effective_priority, running.effective_priority
            reason = "priority" if prio > mine else "quantum" if prio == mine else "starvation"
        st.reason = reason
        args = st.args
        args.PreemptionFenceId = fence & U32  # a UINT on the DDI (ddi/fenceid.py)
        args.NodeOrdinal = node_queue.ordinal
        args.EngineOrdinal = 0
        args.Flags.Value = 0
        tr = vs.trace
        if tr is not None:
            tr.emit(sim.now, "PreemptRequest", {
                "node": node_queue.ordinal, "fence": fence, "reason": st.reason, "running": running.handle,
                "for": cand.handle if cand is not None else 0, "queued": len(node_queue.hw) - node_queue.stopped,
            })
        vs.ddi.call("DxgkDdiPreemptCommand", vs.adapter.hAdapter, args, facts=node_queue.notify_facts, judge="after",
                    address=st.address,
                    bugcheck=(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.DRIVER_FAILED_SUBMIT_COMMAND,
                              st.address, (node_queue.ordinal << 32) | fence & U32))
        st.cand = cand
        vs.tdr.preempt_requested(node_queue)
        if cand is not None:
            vs.policy.preempting(running, cand)

    # -- the answer, at device IRQL ---------------------------------------------------------------------
    def dma_preempted(self, data) -> None:
        """``DXGK_INTERRUPT_DMA_PREEMPTED``: complete up to LastCompletedFenceId, take the rest back."""
        vs = self.vs
        adapter = vs.adapter
        dp = data.DmaPreempted
        ordinal = dp.NodeOrdinal
        if not 0 <= ordinal < len(vs.nodes):
            adapter.invalid_interrupt(data, f"DmaPreempted.NodeOrdinal {ordinal} names no node")
            return
        node_queue = vs.nodes[ordinal]
        if node_queue.tdr.resetting:
            return  # interrupts from a node being reset are ignored (per-engine reset)
        st = node_queue.preemption
        last = from_ddi(dp.LastCompletedFenceId, node_queue.last_completed)  # a 32-bit id, read past any wrap
        facts = node_queue.notify_facts
        facts.last_submitted_fence = node_queue.last_submitted
        facts.last_completed_fence = node_queue.last_completed
        facts.outstanding_preemption_fences = frozenset((st.fence & U32,)) if st.fence else frozenset()
        try:
            found = vs.verifier.find(NOTIFY, data, facts)
        finally:
            facts.outstanding_preemption_fences = None
        if last > node_queue.last_submitted or last < node_queue.last_completed:
            if not found:
                found = [Violation(36, "PreemptLastCompletedValid",
                                   f"LastCompletedFenceId {last} outside [{node_queue.last_completed}, {node_queue.last_submitted}]", None)]
            bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID,
                          dp.LastCompletedFenceId, node_queue.last_submitted & U32, node_queue.last_completed & U32)
            vs.verifier.handle(found, NOTIFY, data, adapter.interrupt_address, bugcheck=bc)
            raise BugCheckStop(CrashRecord(
                time=self.sim.now, bugcheck=bc, message=str(found[0]), struct=NOTIFY, arch=adapter.arch,
                ddi_version=adapter.version.name, address=adapter.interrupt_address, data=bytes(data),
                rule=found[0].rule, rule_name=found[0].name,
            ))
        if found:
            vs.verifier.handle(found, NOTIFY, data, adapter.interrupt_address)
        if not st.fence or dp.PreemptionFenceId != st.fence & U32:
            return  # an answer to no request (reported above): nothing to take back
        now = self.sim.now
        if vs.truth is not None:
            vs.truth.completing(node_queue, last, preempted=True)
        vs.complete_through(node_queue, last)
        hw = node_queue.hw
        taken = []
        while len(hw) > node_queue.stopped:
            taken.append(hw.pop())
        taken.reverse()
        cost = self.gpu_account(ordinal) if self.gpu_account is not None else 0
        if taken:
            vs.charge(node_queue, taken[0], now)
            vs.stopped_running(node_queue, taken[0].context, now)
            # The summary's per-context preemptions: the packet that was running was taken back;
            # the stop's cost on the engine is its context's.
            taken[0].context.preemptions += 1
            taken[0].context.preemption_cost += cost
        tr = vs.trace
        observer = vs._observer
        for p in taken:
            if observer is not None:
                observer.packet_preempted(ordinal, p, now - p.started if p.started >= 0 and p is taken[0] else 0)
            vs.off_hardware(p)
            p.preempted = True
            c = p.context
            c.preempted += 1
            if c.wait_since < 0:
                c.wait_since = now  # it has work again and does not run
            vs.ledger.dma_stop(now, c.handle, ordinal, p.fence, p.kind, p.seq, "Preempted")
            if tr is not None:
                tr.emit(now, "DmaPacketStop", {
                    "context": p.context.handle, "node": ordinal, "fence": p.fence, "kind": p.kind,
                    "seq": p.seq, "status": "Preempted",
                })
        st.preempted.extend(taken)
        st.latencies.add(now - st.since)
        st.count += 1
        st.fence = 0
        st.answered = True
        st.run_ctx = None

    # -- back to the software queues, in the DPC -----------------------------------------------------
    def requeue(self, node_queue) -> bool:
        """Put ``node_queue``'s preempted packets back at the front of their queues. True when the node's
        worker should look for work again."""
        st = node_queue.preemption
        if not st.answered:
            return False
        st.answered = False
        # The scheduler learns of the answer here, in DxgkCbNotifyDpc: only now is the request's
        # TdrDelay timer stopped (a driver whose DPC never notifies times out).
        self.vs.tdr.preempt_answered(node_queue)
        policy = self.vs.policy
        now = self.sim.now
        for p in reversed(st.preempted):
            ctx = p.context
            if ctx.device.error or ctx.destroyed:
                # Its device went to error (or it was destroyed) meanwhile: never submitted again.
                # It reached the hardware queue once, so the driver is not told through
                # DxgkDdiCancelCommand, which is for packets that never did (rule 67; Microsoft's
                # DxgkDdiCancelCommand page: "a DMA packet that was in the GPU scheduler's software
                # queue but never reached the hardware queue because the device went into an error
                # state" - the DXGKARG_CANCELCOMMAND page's "after a command is removed from the
                # hardware queue" is read as that same removal from the OS's queues).
                self.vs.adapter.cancel_packet(p, reached_hardware=True)
                self.vs.retired_from(ctx)
                continue
            ctx.queue.appendleft(p)
            ctx.last_dispatch = -1  # what was dispatched did not finish: the wait goes on
            if not p.flags & FLAG_PAGING:
                p.fence = 0  # render packets get a new fence; paging ones keep theirs ("GPU preemption")
            if p.preempted:
                p.flags |= self.resubmission_flag
        # The context the preemption was for is ready first, then the others in queue order.
        order = [st.cand] + [p.context for p in st.preempted if not p.context.device.error and not p.context.destroyed]
        for ctx in order:
            if ctx is not None and ctx.queue and not ctx.ready:
                ctx.ready = True
                policy.ready(ctx, now)
        if st.cand is not None and st.cand.ready:
            policy.preempting(None, st.cand)
        st.preempted.clear()
        st.cand = None
        return True
