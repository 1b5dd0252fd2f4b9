"""Timeout detection and recovery (TDR) for the packet scheduler.

Detection (ddi-facts.md 10.1): a packet that has run ``watchdog`` ns at the bottom of its node's
hardware queue makes the OS ask the driver first whether it missed a completion interrupt:
``DxgkDdiQueryCurrentFence`` (Microsoft's page: when interrupts have stopped and the OS waited too long
for a fence, it calls the driver to find the fences it may have missed; the driver reports a newer
completed fence with ``DxgkCbNotifyInterrupt`` before it returns, rule 55, and answers the node's last
completed fence). What it reports completes and is retired at once; the answer is judged (rule 55,
0xC4: no stop code of its own). If the packet is still running it gets a preemption request (reason ``watchdog``; the choice of ``watchdog``, default
TdrDelay, is the model's, open question 14). Every preemption request, whatever its reason, must be
answered with DMA_PREEMPTED within ``TdrDelay``: otherwise the node has timed out. A driver that is
not preemption aware (the Windows 7 model) times out when a packet runs ``watchdog`` ns.

``TdrLevel``: 0 detects nothing, 1 stops with bug check 0x117 at the first timeout, 3 (default)
recovers:

- Per-engine reset first when the driver reports ``SupportPerEngineTDR`` (section 10.3): interrupts
  from the node are ignored, ``DxgkDdiQueryEngineStatus`` for a timeout (its answer is logged; the
  node timed out whatever it says), ``DxgkDdiQueryDependentEngineGroup`` then ``DxgkDdiResetEngine``;
  ``LastAbortedFenceId`` outside [last completed, last submitted] is bug check 0x119/0xA. Packets
  before it are complete, the one with that fence is aborted and its device goes to error, the ones
  after it go back to their software queues and are submitted again with new fence ids. A failed
  DDI call promotes the timeout to an adapter reset. Each engine timeout is a 0x141 live dump; more
  than ``TdrLimitCount - 1`` of them within ``TdrLimitTime`` block the offending process from the GPU
  (0x142 live dump, its devices go to error).
- Adapter reset otherwise (section 10.2): a 0x117 live dump; the 6th adapter timeout within
  ``TdrLimitTime`` (more than ``TdrLimitCount``) is bug check 0x116. ``DxgkDdiResetFromTimeout``, every
  node's last completed fence := its last submitted fence, the hung device's packets are aborted and
  the device goes to error, every other packet on a hardware queue goes back to its software queue;
  ``DxgkDdiRestartFromTimeout``. Either call failing is bug check 0x116.

Page faults (section 4.4, 14.1 FAULTED): ``DXGK_INTERRUPT_DMA_PAGE_FAULTED`` with FaultedFenceId F
completes every packet before F; the reset the flags ask for follows at PASSIVE_LEVEL (engine reset,
or adapter reset for ``ADAPTER_RESET_REQUIRED`` or an unknown fence), and the device owning F goes to
error. With no reset flag only the device goes to error and the stopped engine is left to the
timeout. ``FENCE_INVALID`` with a fence id, or without a reset flag, is bug check 0x119/0xD and
``FATAL_HARDWARE_ERROR`` bug check 0x119/0xC (rules 51 and 53, in every verifier mode). A fault is
not a timeout: it makes no live dump and does not count toward the TDR limits.

A device in error cancels the packets still in its contexts' software queues, wakes their CPU
waiters, and fails every later API call with STATUS_DEVICE_REMOVED.

Not modelled: TdrDdiDelay (no driver thread blocks in this model), DxgkDdiCollectDbgInfo, and VidMm's
eviction during the adapter reset (with the paging work).

Spec: ddi-facts.md sections 10.1-10.3, 10.5, 11 (0x119/0xA), 14.1 (TIMED_OUT), 14.4.
"""

from __future__ import annotations

from dataclasses import dataclass

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
NOTIFY = "DXGKARGCB_NOTIFY_INTERRUPT_DATA"
_FENCE_INVALID = 0x2
_ADAPTER_RESET_REQUIRED = 0x4
_ENGINE_RESET_REQUIRED = 0x8


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

    __slots__ = ("watch", "timer", "resetting")

    def __init__(self):
        self.watch = None  # watchdog timer (one per node, re-armed lazily)
        self.timer = None  # TdrDelay timer of the outstanding preemption request
        self.resetting = False  # interrupts from the node are ignored


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
        for nq in vidsch.nodes:
            nq.tdr = NodeTdr()

    # -- detection --------------------------------------------------------------------------------------
    def packet_started(self, nq) -> None:
        """A packet reached the bottom of ``nq``: make sure the node's watchdog is armed."""
        if self.config.level == 0 or nq.tdr.watch is not None:
            return
        nq.tdr.watch = self.sim.after(self.config.watchdog, self._watchdog, nq, DISPATCH)

    def _watchdog(self, nq) -> None:
        nq.tdr.watch = None
        if not nq.hw or nq.tdr.resetting:
            return
        # The oldest packet the scheduler has not seen complete: one the ISR reported but no
        # DxgkCbNotifyDpc processed counts as still running.
        packet = nq.hw[0]
        due = packet.started + self.config.watchdog
        now = self.sim.now
        if now < due:
            nq.tdr.watch = self.sim.at(due, self._watchdog, nq, DISPATCH)
            return
        if self._missed_fences(nq):
            return  # the packet had completed; the next one's watchdog is armed when it starts
        pre = self.vs.preemptor
        if pre.enabled:
            if not nq.preemption.fence:
                pre.request(nq, packet.context, None, "watchdog")
        else:
            self.timeout(nq, "no_preemption")

    def _missed_fences(self, nq) -> bool:
        """``DxgkDdiQueryCurrentFence`` on ``nq`` (see the module doc): True when the driver reported
        completions it had missed, which are then retired here (the scheduler acts on what is
        reported inside this entry point itself, not in a DPC)."""
        ad = self.adapter
        q = self._fence_args
        q.CurrentFence = 0
        q.NodeOrdinal = nq.ordinal
        q.EngineOrdinal = 0
        before = nq.last_completed
        address = self.address + 0x100
        status = ad.ddi.call("DxgkDdiQueryCurrentFence", ad.hAdapter, q, address=address)
        if status == SUCCESS and ad.verifier.mode != "off":
            # Judged against what the OS saw reported, the reports made during the call included.
            facts = self._facts(nq)
            facts.status = status
            ad.verifier.check("DXGKARG_QUERYCURRENTFENCE", q, facts, address)
        if nq.last_completed == before:
            return False
        self.vs.retire()
        return True

    def preempt_requested(self, nq) -> None:
        """A preemption request went to the driver: it must be answered within TdrDelay."""
        if self.config.level == 0:
            return
        t = nq.tdr
        if t.timer is not None:
            t.timer.cancel()
        t.timer = self.sim.after(self.config.delay, self._expired, nq, DISPATCH)

    def preempt_answered(self, nq) -> None:
        t = nq.tdr
        if t.timer is not None:
            t.timer.cancel()
            t.timer = None

    def _expired(self, nq) -> None:
        nq.tdr.timer = None
        self.timeout(nq, "preemption_timeout")

    # -- the timeout ----------------------------------------------------------------------------------------
    def timeout(self, nq, reason: str) -> None:
        """``nq`` did not answer in time: recover as the TDR level and the driver's caps allow."""
        sim = self.sim
        now = sim.now
        # What the scheduler believes runs: the first packet not completed, else the oldest one no
        # DPC has retired.
        hw = nq.hw
        running = hw[nq.stopped] if len(hw) > nq.stopped else (hw[0] if hw else None)
        self._emit("TdrDetected", {
            "node": nq.ordinal, "reason": reason, "fence": running.fence if running else 0,
            "context": running.context.handle if running else 0,
        })
        if self.config.level == 1:
            bc = BugCheck(BugCheckCode.VIDEO_TDR_TIMEOUT_DETECTED, 0, 0, 0, nq.ordinal)
            raise BugCheckStop(CrashRecord(
                time=now, bugcheck=bc, message=f"node {nq.name} timed out ({reason}) and TdrLevel is 1 (bug check on timeout)",
                struct="", arch=self.adapter.arch, ddi_version=self.adapter.version.name, address=0, data=b"",
            ))
        if self.per_engine and self._engine_reset(nq, running):
            return
        self._adapter_reset(nq, running, promoted=self.per_engine)

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
        nq = vs.nodes[ordinal]
        if nq.tdr.resetting:
            return
        facts = nq.notify_facts
        facts.last_submitted_fence = nq.last_submitted
        facts.last_completed_fence = nq.last_completed
        found = vs.verifier.find(NOTIFY, data, facts)
        fence = pf.FaultedFenceId
        flags = pf.PageFaultFlags
        stop = next((v for v in found if v.bugcheck is not None), None)
        if stop is None and not flags & _FENCE_INVALID and not nq.last_completed < fence <= nq.last_submitted:
            stop = Violation(32, "CompletedFenceWasSubmitted",
                             f"DmaPageFaulted.FaultedFenceId {fence} is not a pending fence "
                             f"({nq.last_completed} < fence <= {nq.last_submitted})",
                             BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR,
                                      VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID, fence))
            found = found + [stop]
        if stop is not None:
            # These stop the system in every verifier mode (section 11).
            bc = BugCheck(stop.bugcheck.code, stop.bugcheck.p1, stop.bugcheck.p2 or fence, adapter.interrupt_address,
                          nq.ordinal)
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
        if not flags & _FENCE_INVALID and fence - 1 > nq.last_completed:
            vs.complete_through(nq, fence - 1)
        nq.tdr.resetting = True
        self.sim.soon(self._recover_fault, (nq, fence, flags), PASSIVE)

    def _recover_fault(self, arg) -> None:
        nq, fence, flags = arg
        nq.tdr.resetting = False
        running = nq.hw[nq.stopped] if len(nq.hw) > nq.stopped else None
        if flags & _ADAPTER_RESET_REQUIRED or (flags & _FENCE_INVALID and not self.per_engine):
            self._adapter_reset(nq, running, promoted=False, timeout=False)
        elif flags & (_ENGINE_RESET_REQUIRED | _FENCE_INVALID):
            if not (self.per_engine and self._engine_reset(nq, running, timeout=False)):
                self._adapter_reset(nq, running, promoted=True, timeout=False)
        elif running is not None and running.fence == fence:
            self.device_error(running.context.device, "page fault")

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

    def _facts(self, nq) -> R.Facts:
        """What the OS knows around a recovery call on ``nq``: its fences, the node count."""
        ad = self.adapter
        return R.Facts(version=ad.version, multi_engine_aware=ad.multi_engine_aware, node_count=len(self.vs.nodes),
                       last_completed_fence=nq.last_completed, last_submitted_fence=nq.last_submitted)

    def _engine_reset(self, nq, running, timeout: bool = True) -> bool:
        """Per-engine reset (10.3). False when it has to be promoted to an adapter reset.
        ``timeout``: a TDR (live dump, counted) rather than a page fault."""
        if timeout:
            self.live_dump(BugCheckCode.VIDEO_ENGINE_TIMEOUT_DETECTED, nq.ordinal)
        nq.tdr.resetting = True
        try:
            if running is None:
                return True  # it finished between the timeout and now
            if timeout:
                # Microsoft's "TDR changes in Windows 8": the scheduler asks the driver whether the
                # node makes progress; it timed out, so the reset goes ahead whatever the answer
                # (logged). A page fault needs no asking: the driver reported the engine stopped.
                status = self._status_cls()
                status.NodeOrdinal = nq.ordinal
                if self._call("DxgkDdiQueryEngineStatus", status) != SUCCESS:
                    return False
            group = self._group_cls()
            group.NodeOrdinal = nq.ordinal
            # The mask must include the node (rule 117, 0x119/0x8): judged after the call.
            if self._call("DxgkDdiQueryDependentEngineGroup", group, self._facts(nq)) != SUCCESS:
                return False
            if not group.DependentNodeOrdinalMask >> nq.ordinal & 1:  # verifier modes report and off
                bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.INVALID_NODE_MASK, nq.ordinal,
                              group.DependentNodeOrdinalMask, 0)
                raise BugCheckStop(CrashRecord(
                    time=self.sim.now, bugcheck=bc,
                    message=(f"DxgkDdiQueryDependentEngineGroup answered DependentNodeOrdinalMask "
                             f"0x{group.DependentNodeOrdinalMask:X} without node {nq.ordinal}, the node being reset"),
                    struct="DXGKARG_QUERYDEPENDENTENGINEGROUP", arch=self.adapter.arch,
                    ddi_version=self.adapter.version.name, address=self.address, data=bytes(group), rule=117,
                    rule_name="DependentEngineGroupIncludesNode", ddi="DxgkDdiQueryDependentEngineGroup",
                ))
            args = self._reset_cls()
            args.NodeOrdinal = nq.ordinal
            # LastAbortedFenceId in [last completed, last submitted] (rule 115, 0x119/0xA): the
            # registered rule judges it after the call; Windows stops in every verifier mode, so
            # where the verifier only records (modes report and off) the stop is made here.
            if self._call("DxgkDdiResetEngine", args, self._facts(nq)) != SUCCESS:
                return False
            if self.vs.truth is not None:
                self.vs.truth.engine_reset(nq)
            aborted = args.LastAbortedFenceId
            if not nq.last_completed <= aborted <= nq.last_submitted:
                bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.REPORTED_INVALID_ABORTED_FENCE,
                              aborted, nq.last_completed, (nq.ordinal << 32) | nq.last_submitted)
                raise BugCheckStop(CrashRecord(
                    time=self.sim.now, bugcheck=bc,
                    message=(f"DxgkDdiResetEngine reported LastAbortedFenceId {aborted} outside [last completed "
                             f"{nq.last_completed}, last submitted {nq.last_submitted}] on node {nq.ordinal}"),
                    struct="DXGKARG_RESETENGINE", arch=self.adapter.arch, ddi_version=self.adapter.version.name,
                    address=self.address, data=bytes(args), rule=115, rule_name="LastAbortedFenceInRange",
                    ddi="DxgkDdiResetEngine",
                ))
            self.paging_hit = False
            guilty = self._recover_node(nq, aborted, running)
            self.engine_resets += 1
            self._emit("EngineReset", {"node": nq.ordinal, "last_aborted_fence": aborted,
                                       "device": guilty.handle if guilty else 0})
            if self.paging_hit:
                # The reset hit a paging packet: an adapter-wide reset follows (10.3 step 9), and
                # the device whose allocation it was moving goes to error.
                nq.tdr.resetting = False
                self._adapter_reset(nq, None, promoted=True, timeout=timeout)
                if guilty is not None:
                    self.device_error(guilty, "paging packet hit by an engine reset")
                return True
            if guilty is not None:
                self.device_error(guilty, "engine reset" if timeout else "page fault")
                proc = guilty.process
                if timeout and self.count_timeout(self.engine_timeouts) > self.config.limit_count - 1:
                    self.live_dump(BugCheckCode.VIDEO_TDR_APPLICATION_BLOCKED, proc.pid)
                    for dev in proc.devices:
                        self.device_error(dev, "process blocked from the GPU")
            return True
        finally:
            nq.tdr.resetting = False
            self.vs.retire()

    def _recover_node(self, nq, aborted: int, running):
        """After an engine reset: complete before ``aborted``, abort it, take back the rest.
        Returns the device in error."""
        hw = nq.hw
        now = self.sim.now
        guilty = None
        i = nq.stopped
        while i < len(hw) and hw[i].fence < aborted:
            self._stop(hw[i], nq, "Completed")
            i += 1
        nq.stopped = i
        if i < len(hw) and hw[i].fence == aborted:
            p = hw[i]
            del hw[i]
            guilty = p.context.device
            if p.moves is not None:
                # A paging packet: the device in error is the one that owns what it moved.
                guilty = p.moves.device
                self.paging_hit = True
            self._stop(p, nq, "Aborted")
            self._abort(p, nq)
        elif running is not None:
            guilty = running.context.device  # finished just before the reset: in error anyway (10.3)
        self._take_back(nq)
        nq.last_completed = max(nq.last_completed, aborted)
        if nq.busy_since >= 0 and running is not None:
            self.vs.charge(nq, running, now)
        self._clear_preemption(nq)
        return guilty

    def _adapter_reset(self, nq, running, promoted: bool, timeout: bool = True) -> None:
        """Adapter-wide reset (10.2); ``timeout``: a TDR (live dump, counted) rather than a fault."""
        vs = self.vs
        now = self.sim.now
        if timeout:
            self.adapter_timeout(promoted)
        guilty = running.context.device if running is not None else None
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
                    if guilty is not None and p.context.device is guilty:
                        self._stop(p, q, "Aborted")
                        self._abort(p, q)
                    else:
                        keep.append(p)
                for p in reversed(keep):
                    hw.append(p)
                self._take_back(q)
                q.last_completed = q.last_submitted
                if busy and q.busy_since >= 0:
                    vs.charge(q, bottom, now)
                self._clear_preemption(q)
            self.must_succeed("DxgkDdiRestartFromTimeout")
            self.adapter_resets += 1
            self._emit("AdapterReset", {"node": nq.ordinal, "promoted": int(promoted),
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
    def _stop(self, p, nq, status: str) -> None:
        p.done = self.sim.now
        tr = self.vs.trace
        if tr is not None:
            tr.emit(self.sim.now, "DmaPacketStop", {
                "context": p.context.handle, "node": nq.ordinal, "fence": p.fence, "kind": p.kind,
                "seq": p.seq, "status": status,
            })

    def _abort(self, p, nq) -> None:
        """A packet that will never complete: its buffers go, waiters are woken by the device error."""
        ctx = p.context
        ctx.aborted += 1
        self.vs.off_hardware(p)
        if p.present_t >= 0:
            self.vs.presents.forget(p)
        self.vs.adapter.free_packet(p)
        self.vs.retired_from(ctx)
        tr = self.vs.trace
        if tr is not None:
            tr.emit(self.sim.now, "QueuePacketStop", {
                "context": ctx.handle, "node": nq.ordinal, "fence": p.fence, "kind": p.kind, "seq": p.seq,
                "status": "Aborted", "hwqueue": 0,
            })

    def _take_back(self, nq) -> None:
        """Packets still on ``nq``'s hardware queue (not completed) go back to their software queues."""
        hw = nq.hw
        taken = []
        while len(hw) > nq.stopped:
            taken.append(hw.pop())
        taken.reverse()
        for p in taken:
            self.vs.off_hardware(p)
            self._stop(p, nq, "Reset")
        st = nq.preemption
        st.preempted.extend(taken)
        st.answered = True

    def _clear_preemption(self, nq) -> None:
        st = nq.preemption
        st.fence = 0
        st.run_ctx = None
        if st.timer is not None:
            st.timer.cancel()
            st.timer = None
        self.preempt_answered(nq)

    def device_error(self, device, reason: str) -> None:
        """Put ``device`` in error: cancel its queued packets, wake its waiters."""
        if device.error:
            return
        device.error = True
        self.devices_in_error.append(device)
        vs = self.vs
        self._emit("DeviceError", {"device": device.handle, "process": device.process.pid, "reason": reason})
        for ctx in device.contexts:
            vs.adapter.drop_queue(ctx)

    def _emit(self, name: str, fields: dict) -> None:
        if self.vs.trace is not None:
            self.vs.trace.emit(self.sim.now, name, fields)
