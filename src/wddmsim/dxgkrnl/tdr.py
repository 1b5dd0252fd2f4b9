"""Timeout detection and recovery (TDR) for the packet scheduler.

Detection (Microsoft's "Timeout detection and recovery (TDR)" and "TDR registry keys" pages): a packet that has run ``watchdog`` ns at the bottom of its node's
hardware queue makes the OS ask the driver first whether it missed a completion interrupt:
``DxgkDdiQueryCurrentFence`` (Microsoft's page: when interrupts have stopped and the OS waited too long
for a fence, it calls the driver to find the fences it may have missed; the driver reports a newer
completed fence with ``DxgkCbNotifyInterrupt`` before it returns, rule 55
QueryCurrentFenceReportsNewer, and answers the node's last
completed fence). What it reports completes and is retired at once; the answer is judged (rule 55,
0xC4: no stop code of its own). If the packet is still running it gets a preemption request (reason ``watchdog``; the choice of ``watchdog``, default
TdrDelay, is the model's: Windows does not document how long is "longer than allowed"). Every preemption request, whatever its reason, must be
answered with DMA_PREEMPTED within ``TdrDelay``: otherwise the node has timed out. A driver that is
not preemption aware (the Windows 7 model) times out when a packet runs ``watchdog`` ns.

``TdrLevel``: 0 detects nothing, 1 (TdrLevelBugcheck, "bug check on detected timeout, no recovery" on
Microsoft's "TDR registry keys" page) stops at the first timeout with bug check 0x116
VIDEO_TDR_FAILURE, 3 (default) recovers. Not 0x117: Microsoft's page for bug check 0x117
VIDEO_TDR_TIMEOUT_DETECTED says that code is never used for a real bug check (it names the live
dump of a recovered timeout), and its page for 0x116 shows that stop raised from the timeout path
when the system bug-checks on a timeout instead of recovering.

- Per-engine reset first when the driver reports ``SupportPerEngineTDR`` ("TDR changes in Windows 8"): interrupts
  from the node are ignored, ``DxgkDdiQueryEngineStatus`` for a timeout (its answer is logged; the
  node timed out whatever it says), ``DxgkDdiQueryDependentEngineGroup`` then ``DxgkDdiResetEngine``;
  ``LastAbortedFenceId`` outside [last completed, last submitted] is bug check 0x119/0xA. Packets
  before it are complete, the one with that fence is aborted and its device goes to error, the ones
  after it go back to their software queues and are submitted again with new fence ids. Every
  other node of the driver's DependentNodeOrdinalMask that has work on its hardware queue
  (Microsoft's DXGKARG_QUERYDEPENDENTENGINEGROUP page: the nodes "affected by a reset operation") is
  first asked to preempt (reason ``dependent_reset``) and given no new work; the resets wait until
  all have answered or 500 ms have passed ("TDR changes in Windows 8"), then the node and each
  dependent node still holding work are reset, one by one in ordinal order, the same way. A failed
  DDI call promotes the timeout to an adapter reset. Each engine timeout is a 0x141 live dump; more
  than ``TdrLimitCount - 1`` of them within ``TdrLimitTime`` block the offending process from the GPU
  (0x142 live dump, its devices go to error).
- Adapter reset otherwise ("Thread synchronization and TDR", the DxgkDdiResetFromTimeout and
  DxgkDdiRestartFromTimeout pages): a 0x117 live dump; the 6th adapter timeout within
  ``TdrLimitTime`` (more than ``TdrLimitCount``) is bug check 0x116. ``DxgkDdiResetFromTimeout``, every
  node's last completed fence := its last submitted fence, the hung device's packets are aborted and
  the device goes to error, every other packet on a hardware queue goes back to its software queue;
  ``DxgkDdiRestartFromTimeout``. Either call failing is bug check 0x116. Paging packets taken back
  get new fence ids (the old ones now count as complete). A hung paging transfer is abandoned and
  the device whose allocation it moved goes to error: VidMm's system device never does
  (:meth:`Tdr.owner`).

Page faults (the DXGKARGCB_NOTIFY_INTERRUPT_DATA and DXGK_PAGE_FAULT_FLAGS pages):
``DXGK_INTERRUPT_DMA_PAGE_FAULTED`` with FaultedFenceId F
completes every packet before F; the reset the flags ask for follows at PASSIVE_LEVEL (engine reset,
or adapter reset for ``ADAPTER_RESET_REQUIRED`` or an unknown fence), and the device owning F goes to
error. With no reset flag only the device goes to error and the stopped engine is left to the
timeout. ``FENCE_INVALID`` with a fence id, or without a reset flag, is bug check 0x119/0xD and
``FATAL_HARDWARE_ERROR`` bug check 0x119/0xC (rules 51 FenceInvalidFaultFlags and 53
FatalHardwareErrorBugChecks, in every verifier mode). A fault is
not a timeout: it makes no live dump and does not count toward the TDR limits.

A packet a reset takes back had reached the hardware: it is submitted again as a resubmission,
``Flags.Resubmission = 1`` from WDDM 2.0 (Microsoft's DXGK_SUBMITCOMMANDFLAGS page), with a new
fence id.

A device in error cancels the packets still in its contexts' software queues, wakes their CPU
waiters, drives the monitored fences it could signal to their maximum value unless they were
created with NoSignalMaxValueOnTdr (rule 101, MaxFenceOnTdr), and fails every later API call with
STATUS_DEVICE_REMOVED.

Not modelled: TdrDdiDelay (no driver thread blocks in this model; a driver call that never returns is
stopped by the host-time DDI watchdog, :mod:`.watchdog`), DxgkDdiCollectDbgInfo, and VidMm's
eviction during the adapter reset (with the paging work).

Microsoft's pages: "Timeout detection and recovery (TDR)", "TDR registry keys", "TDR changes in
Windows 8", "Thread synchronization and TDR", DxgkDdiResetEngine, DxgkDdiQueryDependentEngineGroup,
DxgkDdiQueryEngineStatus, bug checks 0x116, 0x117, 0x119 (P1 0xA), 0x141 and 0x142. Rule numbers
are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ddi.fenceid import U32, from_ddi
from ..ddi import layout
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..ddi import rules as R
from ..ddi.registry import RECORDS
from ..ddi.rules import Violation
from ..sim import DISPATCH, PASSIVE
from .crash import BugCheckStop, CrashRecord

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
S = 1_000_000_000
#: how long the scheduler lets the driver finish preempting the dependent engines before it resets
#: those still busy ("TDR changes in Windows 8")
DEPENDENT_PREEMPT_WAIT = 500_000_000
NOTIFY = "DXGKARGCB_NOTIFY_INTERRUPT_DATA"
_FENCE_INVALID = 0x2
_ADAPTER_RESET_REQUIRED = 0x4
_ENGINE_RESET_REQUIRED = 0x8
FLAG_PAGING = 0x1  # DXGK_SUBMITCOMMANDFLAGS.Paging


@dataclass
class TdrConfig:
    """The TDR registry values the model honours (GraphicsDrivers key), times in ns."""

    level: int = 3
    delay: int = 2 * S
    watchdog: int = 2 * S
    limit_count: int = 5
    limit_time: int = 60 * S


class NodeTdr:
    """One node's TDR timers and reset state."""

    __slots__ = ("watch", "timer", "resetting", "held_for", "group")

    def __init__(self):
        self.watch = None  # watchdog timer (one per node, re-armed lazily)
        self.timer = None  # TdrDelay timer of the outstanding preemption request
        self.resetting = False  # interrupts from the node are ignored
        self.held_for = None  # the node whose reset waits for this dependent one to be preempted
        self.group = None  # this node's reset waiting on its dependents: (running, timeout, mask, busy, timer)


class Tdr:
    """Detection and recovery for one adapter's :class:`~wddmsim.dxgkrnl.vidsch.VidSch`."""

    def __init__(self, vidsch, config: TdrConfig):
        self.vs = vidsch
        self.sim = vidsch.sim
        self.config = config
        adapter = vidsch.adapter
        self.adapter = adapter
        self.per_engine = bool(getattr(adapter.caps, "SupportPerEngineTDR", False))
        self.adapter_timeouts: list[int] = []
        self.engine_timeouts: list[int] = []
        self.engine_resets = 0
        self.adapter_resets = 0
        self.live_dumps: list[tuple[int, int, int]] = []  # (t, code, p4)
        self.devices_in_error: list = []
        self.paging_hit = False  # the engine reset in progress aborted a paging packet
        self._reset_cls = None
        self._group_cls = None
        self._status_cls = None
        if adapter.version.value >= 0x300E:  # the WIN8 structures exist
            self._reset_cls = layout.ctype(RECORDS["DXGKARG_RESETENGINE"], adapter.arch, adapter.version)
            self._group_cls = layout.ctype(RECORDS["DXGKARG_QUERYDEPENDENTENGINEGROUP"], adapter.arch, adapter.version)
            self._status_cls = layout.ctype(RECORDS["DXGKARG_QUERYENGINESTATUS"], adapter.arch, adapter.version)
        self._fence_args = layout.ctype(RECORDS["DXGKARG_QUERYCURRENTFENCE"], adapter.arch, adapter.version)()
        self.address = adapter.pool.alloc(4096)  # where the recovery arguments live (bug check P3)
        for node_queue in vidsch.nodes:
            node_queue.tdr = NodeTdr()

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

    # -- page faults ----------------------------------------------------------------------------------------
    def page_fault(self, data) -> None:
        """``DXGK_INTERRUPT_DMA_PAGE_FAULTED`` (device IRQL): complete what came before the faulted
        packet, ignore the node, and recover at PASSIVE_LEVEL."""
        vs = self.vs
        adapter = self.adapter
        pf = data.DmaPageFaulted
        ordinal = pf.NodeOrdinal
        if not 0 <= ordinal < len(vs.nodes):
            adapter.invalid_interrupt(data, f"DmaPageFaulted.NodeOrdinal {ordinal} names no node")
            return
        node_queue = vs.nodes[ordinal]
        if node_queue.tdr.resetting:
            return
        facts = node_queue.notify_facts
        facts.last_submitted_fence = node_queue.last_submitted
        facts.last_completed_fence = node_queue.last_completed
        found = vs.verifier.find(NOTIFY, data, facts)
        flags = pf.PageFaultFlags
        # A 32-bit id, read past any wrap (ddi/fenceid.py); 0 with FENCE_INVALID.
        fence = pf.FaultedFenceId if flags & _FENCE_INVALID else from_ddi(pf.FaultedFenceId, node_queue.last_completed)
        stop = next((v for v in found if v.bugcheck is not None), None)
        if stop is None and not flags & _FENCE_INVALID and not node_queue.last_completed < fence <= node_queue.last_submitted:
            stop = Violation(32, "CompletedFenceWasSubmitted",
                             f"DmaPageFaulted.FaultedFenceId {fence} is not a pending fence "
                             f"({node_queue.last_completed} < fence <= {node_queue.last_submitted})",
                             BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR,
                                      VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID, pf.FaultedFenceId))
            found = found + [stop]
        if stop is not None:
            # These stop the system in every verifier mode (bug check 0x119's page).
            bc = BugCheck(stop.bugcheck.code, stop.bugcheck.p1, stop.bugcheck.p2 or fence, adapter.interrupt_address,
                          node_queue.ordinal)
            vs.verifier.handle(found, NOTIFY, data, adapter.interrupt_address, bugcheck=bc)
            raise BugCheckStop(CrashRecord(
                time=self.sim.now, bugcheck=bc, message=str(stop), struct=NOTIFY, arch=adapter.arch,
                ddi_version=adapter.version.name, address=adapter.interrupt_address, data=bytes(data),
                rule=stop.rule, rule_name=stop.name,
            ))
        if found:
            vs.verifier.handle(found, NOTIFY, data, adapter.interrupt_address)
        self._emit("PageFault", {"node": ordinal, "fence": fence, "flags": flags,
                                 "address": pf.FaultedVirtualAddress, "hwqueue": 0})
        if not flags & _FENCE_INVALID and fence - 1 > node_queue.last_completed:
            vs.complete_through(node_queue, fence - 1)
        node_queue.tdr.resetting = True
        self.sim.soon(self._recover_fault, (node_queue, fence, flags), PASSIVE)

    def _recover_fault(self, arg) -> None:
        node_queue, fence, flags = arg
        node_queue.tdr.resetting = False
        running = node_queue.hw[node_queue.stopped] if len(node_queue.hw) > node_queue.stopped else None
        if flags & _ADAPTER_RESET_REQUIRED or (flags & _FENCE_INVALID and not self.per_engine):
            self._adapter_reset(node_queue, running, promoted=False, timeout=False)
        elif flags & (_ENGINE_RESET_REQUIRED | _FENCE_INVALID):
            if not (self.per_engine and self._engine_reset(node_queue, running, timeout=False)):
                self._adapter_reset(node_queue, running, promoted=True, timeout=False)
        elif running is not None and running.fence == fence and self.owner(running) is not None:
            self.device_error(self.owner(running), "page fault")

    def count_timeout(self, times: list[int]) -> int:
        """Record a timeout now in ``times`` (``engine_timeouts`` or ``adapter_timeouts``); how many
        fall within TdrLimitTime."""
        now = self.sim.now
        times.append(now)
        while times and times[0] <= now - self.config.limit_time:
            times.pop(0)
        return len(times)

    def live_dump(self, code: BugCheckCode, p4: int = 0) -> None:
        """A live kernel dump Windows would write (0x117, 0x141, 0x142): recorded and logged."""
        self.live_dumps.append((self.sim.now, int(code), p4))
        self._emit("LiveDump", {"code": int(code), "name": code.name, "p4": p4})

    def _call(self, name: str, args=None, facts=None) -> int:
        """A recovery entry point at PASSIVE_LEVEL, through the gateway: its status for the caller to
        act on (a failure promotes the reset). With ``facts`` the verifier judges what the driver
        answered in ``args`` after the call (rules 115 and 117)."""
        if args is None:
            return self.adapter.ddi.call(name, self.adapter.hAdapter)
        return self.adapter.ddi.call(name, self.adapter.hAdapter, args, facts=facts, judge="after",
                                     address=self.address)

    def _facts(self, node_queue) -> R.Facts:
        """What the OS knows around a recovery call on ``node_queue``: its fences, the node count."""
        adapter = self.adapter
        return R.Facts(version=adapter.version, multi_engine_aware=adapter.multi_engine_aware, node_count=len(self.vs.nodes),
                       last_completed_fence=node_queue.last_completed, last_submitted_fence=node_queue.last_submitted)

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

    def _adapter_reset(self, node_queue, running, promoted: bool, timeout: bool = True) -> None:
        """Adapter-wide reset (DxgkDdiResetFromTimeout); ``timeout``: a TDR (live dump, counted) rather than a fault."""
        vs = self.vs
        now = self.sim.now
        if timeout:
            self.adapter_timeout(promoted)
        guilty = self.owner(running) if running is not None else None
        # A hung paging transfer is abandoned like the packets of the device it worked for.
        hung = running if running is not None and running.moves is not None else None
        for q in vs.nodes:
            q.tdr.resetting = True
        try:
            self.must_succeed("DxgkDdiResetFromTimeout")
            if vs.truth is not None:
                vs.truth.adapter_reset()
            for q in vs.nodes:
                hw = q.hw
                busy = len(hw) > q.stopped
                bottom = hw[q.stopped] if busy else None
                keep = []
                while len(hw) > q.stopped:
                    p = hw.pop()
                    if p is hung or guilty is not None and p.context.device is guilty:
                        self._stop(p, q, "Aborted")
                        self._abort(p, q)
                    else:
                        keep.append(p)
                for p in reversed(keep):
                    hw.append(p)
                self._take_back(q)
                q.last_completed = q.last_submitted
                # Every fence id submitted so far now counts as complete: a paging packet that goes
                # back to the hardware cannot keep its id (as after a preemption or an engine reset,
                # rule 61) without reporting a fence below the last completed one (0x119/0x1).
                for p in q.preemption.preempted:
                    if p.flags & FLAG_PAGING:
                        p.fence = 0
                if busy and q.busy_since >= 0:
                    vs.charge(q, bottom, now)
                self._clear_preemption(q)
            self.must_succeed("DxgkDdiRestartFromTimeout")
            self.adapter_resets += 1
            self._emit("AdapterReset", {"node": node_queue.ordinal, "promoted": int(promoted),
                                        "device": guilty.handle if guilty else 0})
            if guilty is not None:
                self.device_error(guilty, "adapter reset" if timeout else "page fault")
        finally:
            for q in vs.nodes:
                q.tdr.resetting = False
            vs.retire()

    def adapter_timeout(self, promoted: bool) -> None:
        """An adapter-wide reset for a timeout: counted (more than TdrLimitCount within TdrLimitTime
        is bug check 0x116), then the 0x117 live dump (P4 9 when promoted from an engine timeout)."""
        count = self.count_timeout(self.adapter_timeouts)
        if count > self.config.limit_count:
            bc = BugCheck(BugCheckCode.VIDEO_TDR_FAILURE, 0, 0, 0, count)
            raise BugCheckStop(CrashRecord(
                time=self.sim.now, bugcheck=bc,
                message=(f"{count} GPU timeouts within {self.config.limit_time / S:g} s: more than TdrLimitCount "
                         f"({self.config.limit_count})"),
                struct="", arch=self.adapter.arch, ddi_version=self.adapter.version.name, address=0, data=b"",
            ))
        self.live_dump(BugCheckCode.VIDEO_TDR_TIMEOUT_DETECTED, 9 if promoted else 0)

    def must_succeed(self, name: str) -> None:
        """A recovery entry point that may not fail: any other status is bug check 0x116."""
        self.adapter.ddi.call(name, self.adapter.hAdapter, bugcheck=lambda status: BugCheck(
            BugCheckCode.VIDEO_TDR_FAILURE, 0, 0, status & 0xFFFFFFFF, 0))

    # -- packets --------------------------------------------------------------------------------------------
    def _stop(self, p, node_queue, status: str) -> None:
        p.done = self.sim.now
        self.vs.ledger.dma_stop(self.sim.now, p.context.handle, node_queue.ordinal, p.fence, p.kind, p.seq, status)
        tr = self.vs.trace
        if tr is not None:
            tr.emit(self.sim.now, "DmaPacketStop", {
                "context": p.context.handle, "node": node_queue.ordinal, "fence": p.fence, "kind": p.kind,
                "seq": p.seq, "status": status,
            })

    def _abort(self, p, node_queue) -> None:
        """A packet that will never complete: its buffers go, waiters are woken by the device error."""
        ctx = p.context
        ctx.aborted += 1
        if p.job is not None:
            ctx.jobs.dropped(p)  # its job never finishes: not judged (dxgkrnl/deadlines.py)
        self.vs.off_hardware(p)
        if p.present_t >= 0:
            self.vs.presents.forget(p)
        self.vs.adapter.free_packet(p)
        self.vs.retired_from(ctx)
        self.vs.ledger.queue_stop(self.sim.now, ctx.handle, node_queue.ordinal, p.fence, p.kind, p.seq, "Aborted", 0)
        tr = self.vs.trace
        if tr is not None:
            tr.emit(self.sim.now, "QueuePacketStop", {
                "context": ctx.handle, "node": node_queue.ordinal, "fence": p.fence, "kind": p.kind, "seq": p.seq,
                "status": "Aborted", "hwqueue": 0,
            })

    def _take_back(self, node_queue) -> None:
        """Packets still on ``node_queue``'s hardware queue (not completed) go back to their software queues.
        They had reached the hardware, so each is submitted again as a resubmission (with
        ``Flags.Resubmission = 1`` from WDDM 2.0, as after a preemption) and a new fence id."""
        hw = node_queue.hw
        taken = []
        while len(hw) > node_queue.stopped:
            taken.append(hw.pop())
        taken.reverse()
        for p in taken:
            self.vs.off_hardware(p)
            p.preempted = True
            self._stop(p, node_queue, "Reset")
        st = node_queue.preemption
        st.preempted.extend(taken)
        st.answered = True
        self.vs.idle_check(node_queue)

    def _clear_preemption(self, node_queue) -> None:
        st = node_queue.preemption
        st.fence = 0
        st.run_ctx = None
        if st.timer is not None:
            st.timer.cancel()
            st.timer = None
        self.preempt_answered(node_queue)

    @staticmethod
    def owner(p):
        """The device a reset or a fault of packet ``p`` puts in error: a process's packet, its own
        device; a paging transfer of VidMm, the device whose allocation it moves; VidMm's other
        system packets (a null-context switch, a page-table update), none. The system device is
        never put in error (Microsoft's "TDR changes in Windows 8": a reset that hits a paging
        packet puts in error the devices that own the allocations it references): VidMm's work
        goes on after the reset for every other device."""
        if not p.context.system:
            return p.context.device
        return p.moves.device if p.moves is not None else None

    def device_error(self, device, reason: str) -> None:
        """Put ``device`` in error: cancel its queued packets, wake its waiters, and drive the
        monitored fences it could signal to their maximum value (rule 101)."""
        if device.error:
            return
        device.error = True
        device.error_reason = reason
        self.devices_in_error.append(device)
        vs = self.vs
        self._emit("DeviceError", {"device": device.handle, "process": device.process.pid, "reason": reason})
        for ctx in device.contexts:
            vs.adapter.drop_queue(ctx)
        wddm2 = vs.adapter.wddm2
        if wddm2 is not None:
            # Microsoft's D3DDDI_SYNCHRONIZATIONOBJECT_FLAGS page: unless NoSignalMaxValueOnTdr, a
            # monitored fence is signalled to its maximum when a device that can signal it is
            # affected by the GPU reset, so nothing waits forever on a value that will not come.
            wddm2.fences.signal_max_on_tdr({device})

    def _emit(self, name: str, fields: dict) -> None:
        if self.vs.trace is not None:
            self.vs.trace.emit(self.sim.now, name, fields)
