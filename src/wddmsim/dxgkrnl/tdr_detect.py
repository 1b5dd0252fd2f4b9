"""TDR detection, :class:`TdrDetection` (one of the mixins :class:`~.tdr.Tdr` is made of): when a
node has timed out, and what follows.

Detection (Microsoft's "Timeout detection and recovery (TDR)" and "TDR registry keys" pages): a
packet that has run ``watchdog`` ns at the bottom of its node's hardware queue makes the OS ask the
driver first whether it missed a completion interrupt: ``DxgkDdiQueryCurrentFence`` (Microsoft's
page: when interrupts have stopped and the OS waited too long for a fence, it calls the driver to
find the fences it may have missed; the driver reports a newer completed fence with
``DxgkCbNotifyInterrupt`` before it returns, rule 55 QueryCurrentFenceReportsNewer, and answers the
node's last completed fence). What it reports completes and is retired at once; the answer is judged
(rule 55, 0xC4: no stop code of its own). If the packet is still running it gets a preemption
request (reason ``watchdog``; the choice of ``watchdog``, default TdrDelay, is the model's: Windows
does not document how long is "longer than allowed"). Every preemption request, whatever its reason,
must be answered with DMA_PREEMPTED within ``TdrDelay``: otherwise the node has timed out. A driver
that is not preemption aware (the Windows 7 model) times out when a packet runs ``watchdog`` ns.

``TdrLevel``: 0 detects nothing, 1 (TdrLevelBugcheck, "bug check on detected timeout, no recovery"
on Microsoft's "TDR registry keys" page) stops at the first timeout with bug check 0x116
VIDEO_TDR_FAILURE, 3 (default) recovers: by a per-engine reset (:mod:`.tdr_engine`) when the driver
reports ``SupportPerEngineTDR``, else, or when that fails, by an adapter reset
(:mod:`.tdr_adapterreset`). Not 0x117: Microsoft's page for bug check 0x117
VIDEO_TDR_TIMEOUT_DETECTED says that code is never used for a real bug check (it names the live dump
of a recovered timeout), and its page for 0x116 shows that stop raised from the timeout path when
the system bug-checks on a timeout instead of recovering. Rule numbers are the rule catalogue's:
``wddmsim rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

from ..ddi.bugcheck import BugCheck, BugCheckCode
from ..ddi.ntstatus import NTSTATUS
from ..sim import DISPATCH
from .crash import BugCheckStop, CrashRecord

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)


class TdrDetection:
    """The watchdog, missed fences, the preemption deadline and the timeout's recovery choice."""

    # -- detection --------------------------------------------------------------------------------------
    def packet_started(self, node_queue) -> None:
        """A packet reached the bottom of ``node_queue``: make sure the node's watchdog is armed."""
        if self.config.level == 0 or node_queue.tdr.watch is not None:
            return
        node_queue.tdr.watch = self.sim.after(self.config.watchdog, self._watchdog, node_queue, DISPATCH)

    def _watchdog(self, node_queue) -> None:
        node_queue.tdr.watch = None
        if not node_queue.hw or node_queue.tdr.resetting:
            return
        # The oldest packet the scheduler has not seen complete: one the ISR reported but no
        # DxgkCbNotifyDpc processed counts as still running.
        packet = node_queue.hw[0]
        due = packet.started + self.config.watchdog
        now = self.sim.now
        if now < due:
            node_queue.tdr.watch = self.sim.at(due, self._watchdog, node_queue, DISPATCH)
            return
        if self._missed_fences(node_queue):
            return  # the packet had completed; the next one's watchdog is armed when it starts
        pre = self.vs.preemptor
        if pre.enabled:
            if not node_queue.preemption.fence:
                pre.request(node_queue, packet.context, None, "watchdog")
        else:
            self.timeout(node_queue, "no_preemption")

    def _missed_fences(self, node_queue) -> bool:
        """``DxgkDdiQueryCurrentFence`` on ``node_queue`` (see the module doc): True when the driver reported
        completions it had missed, which are then retired here (the scheduler acts on what is
        reported inside this entry point itself, not in a DPC)."""
        adapter = self.adapter
        q = self._fence_args
        q.CurrentFence = 0
        q.NodeOrdinal = node_queue.ordinal
        q.EngineOrdinal = 0
        before = node_queue.last_completed
        address = self.address + 0x100
        status = adapter.ddi.call("DxgkDdiQueryCurrentFence", adapter.hAdapter, q, address=address)
        if status == SUCCESS and adapter.verifier.mode != "off":
            # Judged against what the OS saw reported, the reports made during the call included.
            facts = self._facts(node_queue)
            facts.status = status
            adapter.verifier.check("DXGKARG_QUERYCURRENTFENCE", q, facts, address)
        if node_queue.last_completed == before:
            return False
        self.vs.retire()
        return True

    def preempt_requested(self, node_queue) -> None:
        """A preemption request went to the driver: it must be answered within TdrDelay."""
        if self.config.level == 0:
            return
        t = node_queue.tdr
        if t.timer is not None:
            t.timer.cancel()
        t.timer = self.sim.after(self.config.delay, self._expired, node_queue, DISPATCH)

    def preempt_answered(self, node_queue) -> None:
        t = node_queue.tdr
        if t.timer is not None:
            t.timer.cancel()
            t.timer = None
        if t.held_for is not None:
            self.dependent_answered(node_queue)

    def _expired(self, node_queue) -> None:
        node_queue.tdr.timer = None
        self.timeout(node_queue, "preemption_timeout")

    # -- the timeout ----------------------------------------------------------------------------------------
    def timeout(self, node_queue, reason: str) -> None:
        """``node_queue`` did not answer in time: recover as the TDR level and the driver's caps allow."""
        # What the scheduler believes runs: the first packet not completed, else the oldest one no
        # DPC has retired.
        hw = node_queue.hw
        running = hw[node_queue.stopped] if len(hw) > node_queue.stopped else (hw[0] if hw else None)
        self._emit("TdrDetected", {
            "node": node_queue.ordinal, "reason": reason, "fence": running.fence if running else 0,
            "context": running.context.handle if running else 0,
        })
        if self.config.level == 1:
            self.bugcheck_on_timeout(node_queue.ordinal, node_queue.name, reason)
        if self.per_engine and self._engine_reset(node_queue, running):
            return
        self._adapter_reset(node_queue, running, promoted=self.per_engine)

    def bugcheck_on_timeout(self, ordinal: int, name: str, reason: str) -> None:
        """TdrLevel 1 (TdrLevelBugcheck): no recovery, the system stops with 0x116 VIDEO_TDR_FAILURE
        (P1 the recovery context, P3 no failed operation, P4 the node); see the module doc."""
        bc = BugCheck(BugCheckCode.VIDEO_TDR_FAILURE, self.address, 0, 0, ordinal)
        raise BugCheckStop(CrashRecord(
            time=self.sim.now, bugcheck=bc,
            message=f"node {name} timed out ({reason}) and TdrLevel is 1 (bug check on detected timeout, no recovery)",
            struct="", arch=self.adapter.arch, ddi_version=self.adapter.version.name, address=0, data=b"",
        ))
