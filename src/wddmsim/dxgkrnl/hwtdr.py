"""Timeout detection and recovery under hardware scheduling: the watchdog, unanswered suspends,
``DxgkDdiResetHwEngine`` / ``DxgkDdiResumeHwEngine``, the full GPU reset they escalate to, and
``DXGK_INTERRUPT_HWQUEUE_PAGE_FAULTED``.

Detection. Under hardware scheduling the OS does not know which buffer runs, only which progress
fences move, and the documentation says neither who detects a hang (the OS or the GPU's scheduler)
nor any preemption timeout apart from TdrDelay. Decisions (docs/scheduling.md):

- *no progress*: a node whose hardware queues have buffers with the driver and none of them
  completed for ``TdrDelay`` (counted from the last completion on the node, or from when it became
  busy) has timed out. A context starved by higher bands is not a timeout while the node makes
  progress for others. A queue created with ``DisableGpuTimeout`` may run one buffer for longer
  (rule 107, DisableGpuTimeoutExempt): while such a queue has buffers with the driver the node is
  not judged, since the others may be waiting for it.
- *unanswered suspend*: a ``DxgkDdiSuspendContext`` not acknowledged within ``TdrDelay`` is an
  engine timeout on the context's node (the DxgkDdiSuspendContext page).

``TdrLevel`` 0 detects nothing and 1 stops with bug check 0x116, as under the software scheduler
(:meth:`wddmsim.dxgkrnl.tdr.Tdr.bugcheck_on_timeout` says why that code).

Engine reset (the DxgkDdiResetHwEngine, DxgkDdiResumeHwEngine and DxgkCbInvalidateHwContext pages):
a 0x141 live dump for a timeout; ``DxgkDdiResetHwEngine``, during which the driver calls
``DxgkCbInvalidateHwContext`` for every context the reset hit; their devices go to error; the node's
interrupts are enabled again and ``DxgkDdiResumeHwEngine`` lets the GPU schedule the rest. An
interrupt from the node between the two calls is bug check 0x119/0x10 (rule 57,
NoInterruptBeforeResume). More than ``TdrLimitCount - 1`` engine timeouts within ``TdrLimitTime``
block the processes of the contexts hit (0x142 live dump, all their devices in error).

A failing ``DxgkDdiResetHwEngine`` or ``DxgkDdiResumeHwEngine`` escalates to a full GPU reset:
counted against ``TdrLimitCount`` (0x116 beyond it) with a 0x117 live dump, then
``DxgkDdiResetFromTimeout`` (the GPU loses every queue's work), every device that had buffers with
the driver goes to error, ``DxgkDdiRestartFromTimeout``. Either call failing is bug check 0x116.

Page faults (the DXGKARGCB_NOTIFY_INTERRUPT_DATA page, rule 54 HwQueueFaultHandleArm):
``HWQUEUE_PAGE_FAULTED`` names the queue by its handle when ``FENCE_INVALID`` is clear (a handle
that names no queue of the node, or an arm the flags select that holds no hardware context or
process, breaks rule 54: 0xC4, the verifier's report); that queue's device goes to error at
PASSIVE_LEVEL and the engine is reset as the flags ask (``ENGINE_RESET_REQUIRED``, or
``ADAPTER_RESET_REQUIRED`` for the full reset). Inconsistent flags (rule 51, FenceInvalidFaultFlags)
and ``FATAL_HARDWARE_ERROR`` (rule 53, FatalHardwareErrorBugChecks) stop the model in every verifier
mode, as under the software scheduler. A fault is not a timeout: no live dump, not counted.

Microsoft's pages: "Timeout detection and recovery (TDR)", DxgkDdiSuspendContext, DxgkDdiResetHwEngine,
DxgkDdiResumeHwEngine, DxgkCbInvalidateHwContext, DXGKARGCB_NOTIFY_INTERRUPT_DATA, bug checks 0x116,
0x117, 0x119 (P1 0x10), 0x141 and 0x142; rules 51, 53, 54, 57, 107, 113
(UnansweredPreemptionIsTimeout) and 121 (EngineTimeoutLimitOneLess) of the rule catalogue
(``wddmsim rules N`` prints rule N, docs/rules.md lists them all).
"""

from __future__ import annotations

from ..ddi import layout
from ..ddi import rules as R
from ..ddi.bugcheck import BugCheck, BugCheckCode, VidSchError
from ..ddi.ntstatus import NTSTATUS
from ..ddi.registry import RECORDS
from ..sim import DISPATCH, PASSIVE
from .crash import BugCheckStop, CrashRecord

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
NOTIFY = "DXGKARGCB_NOTIFY_INTERRUPT_DATA"
#: DXGK_PAGE_FAULT_FLAGS
FENCE_INVALID = 0x2
ADAPTER_RESET_REQUIRED = 0x4
ENGINE_RESET_REQUIRED = 0x8
FATAL_HARDWARE_ERROR = 0x10
HW_CONTEXT_VALID = 0x40
PROCESS_HANDLE_VALID = 0x80


class HwTdr:
    """Detection and recovery for one adapter's :class:`~wddmsim.dxgkrnl.hwscheduling.OsHwScheduling`."""

    def __init__(self, hw_scheduling):
        self.hw_scheduling = hw_scheduling
        self.adapter = hw_scheduling.adapter
        self.sim = hw_scheduling.sim
        self.engine_resets = 0
        self.adapter_resets = 0
        self.page_faults = 0
        self._suspends: dict[tuple[int, int], object] = {}  # (context handle, fence) -> timer
        self._invalidated: list | None = None  # contexts DxgkCbInvalidateHwContext named in a reset

    @property
    def config(self):
        return self.adapter.tdr_config

    @property
    def _sw(self):
        """The adapter's TDR bookkeeping (limits, live dumps) shared with the packet scheduler."""
        return self.adapter.vidsch.tdr

    def _emit(self, name: str, fields: dict) -> None:
        if self.hw_scheduling.trace is not None:
            self.hw_scheduling.trace.emit(self.sim.now, name, fields)

    # -- detection ------------------------------------------------------------------------------------
    def submitted(self, node) -> None:
        """A buffer went to the driver on ``node``: make sure its watchdog is armed."""
        if self.config.level and node.timer is None:
            node.timer = self.sim.at(node.progress_t + self.config.delay, self._watchdog, node, DISPATCH)

    def _watchdog(self, node) -> None:
        node.timer = None
        if not node.in_flight or node.resetting:
            return
        now = self.sim.now
        due = node.progress_t + self.config.delay
        if now < due:
            node.timer = self.sim.at(due, self._watchdog, node, DISPATCH)
            return
        busy = [q for q in node.queues if q.in_flight]
        if any("DisableGpuTimeout" in q.flags for q in busy):
            # A queue exempt from the GPU timeout has work (rule 107): look again later.
            node.timer = self.sim.at(now + self.config.delay, self._watchdog, node, DISPATCH)
            return
        q = min(busy, key=lambda q: q.in_flight[0].submitted)
        self.timeout(node, "no_progress", q.context, q.in_flight[0].progress_id)

    def suspend_pending(self, ctx, fence: int) -> None:
        """DxgkDdiSuspendContext returned STATUS_PENDING: the acknowledgment is due within TdrDelay."""
        if self.config.level:
            self._suspends[(ctx.handle, fence)] = self.sim.after(self.config.delay, self._suspend_expired,
                                                                 (ctx, fence), DISPATCH)

    def suspend_acknowledged(self, ctx, fence: int) -> None:
        timer = self._suspends.pop((ctx.handle, fence), None)
        if timer is not None:
            timer.cancel()

    def _suspend_expired(self, arg) -> None:
        ctx, fence = arg
        if self._suspends.pop((ctx.handle, fence), None) is None:
            return
        self.timeout(self.hw_scheduling.nodes[ctx.node], "suspend_timeout", ctx, 0)

    def timeout(self, node, reason: str, ctx, progress_id: int) -> None:
        """``node`` timed out: TdrLevel 1 stops, 3 resets the engine."""
        self._emit("TdrDetected", {"node": node.ordinal, "reason": reason, "fence": progress_id,
                                   "context": ctx.handle if ctx is not None else 0})
        if self.config.level == 1:
            self._sw.bugcheck_on_timeout(node.ordinal, str(node.ordinal), reason)
        self.reset_engine(node, reason, timeout=True)

    # -- engine reset ---------------------------------------------------------------------------------
    def invalidate(self, hHwContext: int) -> None:
        """DxgkCbInvalidateHwContext (``hHwContext``: Dxgkrnl's handle of the hardware context):
        inside DxgkDdiResetHwEngine the context is one the reset hit; outside a reset its device
        goes to error at once."""
        ctx = self.adapter.handles.get(hHwContext)
        if ctx is None or not getattr(ctx, "hw", False):
            return
        if self._invalidated is not None:
            self._invalidated.append(ctx)
        else:
            self.hw_scheduling.device_error(ctx.device, "context invalidated by the driver")

    def reset_engine(self, node, reason: str, timeout: bool) -> None:
        """DxgkDdiResetHwEngine, the contexts it hit in error, DxgkDdiResumeHwEngine (Microsoft's pages);
        ``timeout``: a TDR (live dump, counted) rather than a page fault."""
        adapter = self.adapter
        hw = self.hw_scheduling
        sw = self._sw
        if timeout:
            sw.live_dump(BugCheckCode.VIDEO_ENGINE_TIMEOUT_DETECTED, node.ordinal)
        node.resetting = True
        self._invalidated = []
        args = layout.ctype(RECORDS["DXGKARG_RESETHWENGINE"], adapter.arch, adapter.version)()
        args.NodeOrdinal = node.ordinal
        args.EngineOrdinal = 0
        try:
            status = adapter.ddi.call("DxgkDdiResetHwEngine", adapter.hAdapter, args)
            hit = self._invalidated
        finally:
            self._invalidated = None
        if status != SUCCESS:
            node.resetting = False
            self.adapter_reset(node, timeout)
            return
        devices = list(dict.fromkeys(ctx.device for ctx in hit))
        for dev in devices:
            hw.device_error(dev, "engine reset" if timeout else "page fault")
        node.resetting = False  # the OS enables the node's interrupts again and syncs its state
        r = layout.ctype(RECORDS["DXGKARG_RESUMEHWENGINE"], adapter.arch, adapter.version)()
        r.NodeOrdinal = node.ordinal
        r.EngineOrdinal = 0
        status = adapter.ddi.call("DxgkDdiResumeHwEngine", adapter.hAdapter, r)
        if status != SUCCESS:
            self.adapter_reset(node, timeout)
            return
        self.engine_resets += 1
        node.resets += 1
        self._emit("HwEngineReset", {"node": node.ordinal, "reason": reason, "contexts": [c.handle for c in hit]})
        if timeout and devices and sw.count_timeout(sw.engine_timeouts) > self.config.limit_count - 1:
            for proc in dict.fromkeys(dev.process for dev in devices):
                sw.live_dump(BugCheckCode.VIDEO_TDR_APPLICATION_BLOCKED, proc.pid)
                for dev in proc.devices:
                    hw.device_error(dev, "process blocked from the GPU")
        self._restart(node)

    def _restart(self, node) -> None:
        node.progress_t = self.sim.now
        for q in node.queues:
            self.hw_scheduling._feed(q)
        if node.in_flight and node.timer is None:
            self.submitted(node)

    def adapter_reset(self, node, timeout: bool) -> None:
        """The full GPU reset an engine reset escalates to (the adapter-wide reset applied to hardware queues)."""
        hw = self.hw_scheduling
        sw = self._sw
        if timeout:
            sw.adapter_timeout(promoted=True)
        for n in hw.nodes:
            n.resetting = True
        try:
            sw.must_succeed("DxgkDdiResetFromTimeout")
            # The GPU lost every queue's work: the devices that had buffers with the driver are lost.
            lost = list(dict.fromkeys(q.context.device for n in hw.nodes for q in n.queues if q.in_flight))
            for dev in lost:
                hw.device_error(dev, "adapter reset")
            sw.must_succeed("DxgkDdiRestartFromTimeout")
        finally:
            for n in hw.nodes:
                n.resetting = False
        self.adapter_resets += 1
        self._emit("AdapterReset", {"node": node.ordinal, "promoted": 1, "device": lost[0].handle if lost else 0})
        for n in hw.nodes:
            self._restart(n)

    def check_interrupt(self, data, ordinal: int) -> None:
        """Rule 57: nothing may interrupt from a node between its reset and its resume (0x119/0x10)."""
        nodes = self.hw_scheduling.nodes
        if not (0 <= ordinal < len(nodes) and nodes[ordinal].resetting):
            return
        adapter = self.adapter
        bc = BugCheck(BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR, VidSchError.UNEXPECTED_INTERRUPT_AFTER_RESET,
                      int(data.InterruptType), ordinal, 0)
        raise BugCheckStop(CrashRecord(
            time=self.sim.now, bugcheck=bc, rule=57, rule_name="NoInterruptBeforeResume",
            message=f"the driver reported an interrupt ({data.InterruptType}) from node {ordinal} between "
                    f"DxgkDdiResetHwEngine and DxgkDdiResumeHwEngine",
            struct=NOTIFY, arch=adapter.arch, ddi_version=adapter.version.name, address=adapter.interrupt_address,
            data=bytes(data)))

    # -- page faults ----------------------------------------------------------------------------------
    def page_faulted(self, data) -> None:
        """HWQUEUE_PAGE_FAULTED (device IRQL): rules 51, 53 and 54, then recovery at PASSIVE_LEVEL."""
        adapter = self.adapter
        hw = self.hw_scheduling
        pf = data.HwQueuePageFaulted
        flags = int(pf.PageFaultFlags)
        verifier = adapter.verifier
        found = verifier.find(NOTIFY, data, R.Facts(version=adapter.version))
        stop = next((v for v in found if v.bugcheck is not None), None)
        if stop is not None:
            bc = stop.bugcheck
            verifier.handle(found, NOTIFY, data, adapter.interrupt_address, bugcheck=bc)
            raise BugCheckStop(CrashRecord(
                time=self.sim.now, bugcheck=bc, message=str(stop), struct=NOTIFY, arch=adapter.arch,
                ddi_version=adapter.version.name, address=adapter.interrupt_address, data=bytes(data), rule=stop.rule,
                rule_name=stop.name))
        if found:
            verifier.handle(found, NOTIFY, data, adapter.interrupt_address)
        if not 0 <= pf.NodeOrdinal < len(hw.nodes):
            adapter.invalid_interrupt(data, f"HwQueuePageFaulted.NodeOrdinal {pf.NodeOrdinal} names no node")
        wrong = self._wrong_handle(pf, flags)
        verifier.judged_rules.add(54)
        if wrong is not None and verifier.mode != "off":
            verifier.handle([R.Violation(54, "HwQueueFaultHandleArm", wrong)], NOTIFY, data, adapter.interrupt_address)
        self.page_faults += 1
        q = None if flags & FENCE_INVALID else adapter.handles.get(pf.FaultedHwQueue)
        if q is not None and q not in hw.queues:
            q = None
        node = hw.nodes[pf.NodeOrdinal]
        self._emit("PageFault", {"node": pf.NodeOrdinal, "fence": pf.FaultedFenceId, "flags": flags,
                                 "address": pf.FaultedVirtualAddress, "hwqueue": q.handle if q is not None else 0})
        self.sim.soon(self._after_fault, (node, q, flags), PASSIVE)

    def _wrong_handle(self, pf, flags: int) -> str | None:
        """Rule 54: the handle union of HWQUEUE_PAGE_FAULTED is read per the flags (Microsoft's
        DXGKARGCB_NOTIFY_INTERRUPT_DATA page): FaultedHwQueue when FENCE_INVALID is clear,
        FaultedHwContext with FENCE_INVALID and HW_CONTEXT_VALID, FaultedProcessHandle with
        FENCE_INVALID and PROCESS_HANDLE_VALID. What the arm holds must be such an object the OS
        handed the driver (a queue on the node the interrupt names); None when it is."""
        from .objects import Process

        handles = self.adapter.handles
        if not flags & FENCE_INVALID:
            q = handles.get(pf.FaultedHwQueue)
            if q in self.hw_scheduling.queues and q.context.node == pf.NodeOrdinal:
                return None
            return (f"HwQueuePageFaulted.FaultedHwQueue is 0x{pf.FaultedHwQueue:X} but must be the handle of a "
                    f"hardware queue on node {pf.NodeOrdinal} (PageFaultFlags 0x{flags:X}: FENCE_INVALID is clear, so "
                    f"the union names the faulting queue and FaultedFenceId is its progress fence)")
        if flags & HW_CONTEXT_VALID:
            ctx = handles.get(pf.FaultedHwContext)
            if getattr(ctx, "hw", False):
                return None
            return (f"HwQueuePageFaulted.FaultedHwContext is 0x{pf.FaultedHwContext:X} but must be the handle of a "
                    f"hardware context (PageFaultFlags 0x{flags:X}: FENCE_INVALID with HW_CONTEXT_VALID)")
        if flags & PROCESS_HANDLE_VALID:
            if isinstance(handles.get(pf.FaultedProcessHandle), Process):
                return None
            return (f"HwQueuePageFaulted.FaultedProcessHandle is 0x{pf.FaultedProcessHandle:X} but must be the handle "
                    f"of a process (PageFaultFlags 0x{flags:X}: FENCE_INVALID with PROCESS_HANDLE_VALID)")
        return None

    def _after_fault(self, arg) -> None:
        node, q, flags = arg
        if q is not None:
            self.hw_scheduling.device_error(q.context.device, "page fault")
        if flags & ADAPTER_RESET_REQUIRED:
            self.adapter_reset(node, timeout=False)
        elif flags & ENGINE_RESET_REQUIRED:
            self.reset_engine(node, "page_fault", timeout=False)
