"""The interface the OS hands a driver in ``DxgkDdiStartDevice`` (``DXGKRNL_INTERFACE`` and the
kernel services a miniport uses), and the OS's interrupt and DPC dispatch around the driver's ISR
and DPC.

:class:`DxgkInterface` implements the callbacks (``DxgkCbNotifyInterrupt``, ``DxgkCbQueueDpc``,
``DxgkCbNotifyDpc``, ``DxgkCbSynchronizeExecution``, ``DxgkCbInvalidateHwContext``,
``MmAllocateContiguousMemory``) and judges how the driver uses them:

- ``DxgkCbNotifyInterrupt`` only at DIRQL, from the ISR or a ``DxgkCbSynchronizeExecution`` routine
  (rule 38, NotifyInterruptAtDirql; the model has one interrupt line and runs one routine at a time,
  so it is never re-entered); in one ISR pass DMA events before CRTC_VSYNC ones (rule 42,
  DmaBeforeCrtc);
- the ISR calls no callback but ``DxgkCbQueueDpc`` and ``DxgkCbNotifyInterrupt`` (rule 41,
  IsrCallbacks);
- an ISR that reported events queues its DPC before it returns, and the DPC that follows events
  calls ``DxgkCbNotifyDpc`` (rule 39, IsrQueuesDpc). The scheduler acts on reported events only in
  ``DxgkCbNotifyDpc``: a driver that reports an event outside its ISR (from a
  ``DxgkCbSynchronizeExecution`` routine, for example a preemption it answers itself in
  ``DxgkDdiPreemptCommand``) queues its DPC too (``DxgkCbQueueDpc`` may be called at any IRQL),
  except inside ``DxgkDdiQueryCurrentFence``, whose caller acts on the answer itself;
- at most one DPC is pending per adapter: a second ``DxgkCbQueueDpc`` returns FALSE and changes
  nothing (rule 40, OneDpcPending, the OS's side).

Beyond Windows, where the model sees the hardware (ground truth, :attr:`DxgkInterface.interrupt_status`
is wired by the assembly code to the GPU's interrupt status register): an ISR that returns TRUE
must have dismissed the causes that were pending when it was called, and one that returns FALSE
must not have been called for a pending cause of its own adapter (rule 43, IsrDismissesInterrupt; a
line-based interrupt that no ISR dismisses stays asserted).

The numbers are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them
all.

Windows stops on an interrupt that never goes away and on a DPC that never lets the processor go:
an interrupt delivered :data:`STORM_LIMIT` times at one instant is bug check 0xF2
HARDWARE_INTERRUPT_STORM, and :data:`DPC_LIMIT` DPCs at one instant bug check 0x133
DPC_WATCHDOG_VIOLATION, so no driver makes the model run forever without virtual time advancing.

Microsoft's pages: dispmprt/nc-dispmprt-dxgkddi_interrupt_routine, dispmprt/nc-dispmprt-dxgkcb_queue_dpc,
dispmprt/nc-dispmprt-dxgkddi_dpc_routine, d3dkmddi/nc-d3dkmddi-dxgkcb_notify_interrupt,
d3dkmddi/nc-d3dkmddi-dxgkcb_notify_dpc, dispmprt/nc-dispmprt-dxgkcb_synchronize_execution; the bug
check reference for 0xF2 and 0x133.
"""

from __future__ import annotations

from ..sim.tracing import wants
from ..ddi import codec
from ..ddi import rules as R
from ..ddi.bugcheck import BugCheck, BugCheckCode
from ..ddi.enums import DXGK_INTERRUPT_TYPE
from ..ddi.ntstatus import NTSTATUS
from ..sim import DEVICE, DISPATCH
from .crash import BugCheckStop, CrashRecord

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_DMA_COMPLETED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_COMPLETED)
_DMA_PREEMPTED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PREEMPTED)
_DMA_PAGE_FAULTED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_DMA_PAGE_FAULTED)
_CRTC_VSYNC = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_CRTC_VSYNC)
_MONITORED_FENCE_SIGNALED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_MONITORED_FENCE_SIGNALED)
_SUSPEND_COMPLETED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_SUSPEND_CONTEXT_COMPLETED)
_HWQUEUE_PAGE_FAULTED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_HWQUEUE_PAGE_FAULTED)
_NATIVE_FENCE_SIGNALED = int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_NATIVE_FENCE_SIGNALED)
_INTERRUPT_NAMES = {int(v): v.name for v in DXGK_INTERRUPT_TYPE}
#: Multiplane-overlay vsyncs whose plane array the OS reads (rule 50, :mod:`.overlays`).
_MPO_VSYNCS = frozenset((int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY),
                         int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2),
                         int(DXGK_INTERRUPT_TYPE.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3)))
#: CRTC-type events: after every DMA-type event of the same ISR pass (rule 42).
_CRTC_TYPES = frozenset(int(v) for v in DXGK_INTERRUPT_TYPE if v.name.startswith("DXGK_INTERRUPT_CRTC_VSYNC"))

#: The performance counter's frequency (KeQueryPerformanceCounter): 10 MHz, a tick every 100 ns.
QPC_FREQUENCY = 10_000_000

#: Deliveries of the interrupt at one instant that make an interrupt storm (bug check 0xF2).
STORM_LIMIT = 1000
#: DPCs run at one instant that make a DPC watchdog violation (bug check 0x133).
DPC_LIMIT = 10000


class DxgkInterface:
    """The callbacks of one adapter, and its interrupt and DPC dispatch (see the module doc)."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.sim = adapter.sim
        #: the gateway's callers of the two entry points every interrupt crosses
        self._interrupt_routine = adapter.ddi.caller("DxgkDdiInterruptRoutine")
        self._dpc_routine = adapter.ddi.caller("DxgkDdiDpcRoutine")
        #: the OS's handle for the adapter, passed back in every callback
        self.DeviceHandle = 0xD0
        #: ground truth (wired by the assembly code): the GPU's interrupt status register, or None
        self.interrupt_status = None
        self.interrupts = 0
        #: when the latest interrupt reached the ISR (the instant the GPU raised it)
        self.isr_at = 0
        self.dpcs = 0
        self.callbacks = 0
        self.vsyncs = 0  # CRTC_VSYNC interrupts reported
        self.unhandled_interrupts = 0  # interrupt types this part of the model does not act on
        self.overlays = None  # multiplane-overlay vsync reports (made at the first)
        self.dpc_pending = False
        self.in_isr = False
        self._isr_events = 0  # DxgkCbNotifyInterrupt calls in this ISR pass
        self._isr_dpc = False  # DxgkCbQueueDpc called in this ISR pass
        self._isr_crtc = False  # a CRTC-type event was reported in this ISR pass
        self._unprocessed = 0  # events reported since the last DxgkCbNotifyDpc
        self._in_dpc = False
        self._dpc_notified = False
        self._outside = 0  # events reported outside the ISR during the current entry point
        self._storm_t = -1
        self._storm = 0
        self._dpc_t = -1
        self._dpc_burst = 0

    # -- judging ------------------------------------------------------------------------------------
    def rules_exercised(self) -> set[int]:
        """The rules the callbacks and the ISR/DPC dispatch judged in this run."""
        out = set()
        if self.interrupts:
            out |= {39, 41, 42} | ({43} if self.interrupt_status is not None else set())
        if self.callbacks:
            out |= {38, 40}
        return out

    def _violation(self, rule: int, name: str, message: str) -> None:
        self.adapter.verifier.handle([R.Violation(rule, name, message, None)], None, None, 0)

    def _not_from_isr(self, name: str) -> None:
        if self.in_isr:
            self._violation(41, "IsrCallbacks", f"{name} was called from the ISR, which may call only "
                                                f"DxgkCbQueueDpc and DxgkCbNotifyInterrupt")

    # -- kernel services the driver uses ------------------------------------------------------------
    def MmAllocateContiguousMemory(self, NumberOfBytes: int) -> int:
        """Page-aligned, physically contiguous, nonpaged system memory (PASSIVE_LEVEL)."""
        self._not_from_isr("MmAllocateContiguousMemory")
        return self.adapter.pool.alloc(NumberOfBytes)

    # -- callbacks ------------------------------------------------------------------------------------
    def DxgkCbNotifyInterrupt(self, hAdapter: int, pNotifyInterruptData) -> None:
        """An interrupt event (DIRQL only, never re-entrantly: rule 38; DMA before CRTC: rule 42)."""
        self.callbacks += 1
        adapter = self.adapter
        sim = self.sim
        if sim.irql != DEVICE:
            self._violation(38, "NotifyInterruptAtDirql",
                            "DxgkCbNotifyInterrupt was called outside the ISR and DxgkCbSynchronizeExecution")
        data = pNotifyInterruptData
        itype = data.InterruptType
        if self.in_isr:
            self._isr_events += 1
            if itype in _CRTC_TYPES:
                self._isr_crtc = True
            elif self._isr_crtc:
                self._violation(42, "DmaBeforeCrtc",
                                f"{_INTERRUPT_NAMES.get(itype, itype)} was reported after a CRTC_VSYNC event in "
                                f"the same ISR pass; DMA events come first")
        if adapter.ddi.active != "DxgkDdiQueryCurrentFence":
            self._unprocessed += 1
            if not self.in_isr:
                self._outside += 1
                adapter.ddi.returned = self.returned  # judged when the entry point returns (rule 39)
        if wants(adapter.trace, "Callback"):
            adapter.trace.emit(sim.now, "Callback", {"name": "DxgkCbNotifyInterrupt", "irql": "DIRQL",
                                                "args": self._interrupt_args(data)})
        self._dispatch(data, itype)

    def _dispatch(self, data, itype: int) -> None:
        adapter = self.adapter
        vidsch = adapter.vidsch
        wddm2 = adapter.wddm2
        hw = wddm2.hw_scheduling if wddm2 is not None else None
        if itype == _DMA_COMPLETED:
            vidsch.dma_completed(data)
        elif itype == _DMA_PREEMPTED:
            vidsch.dma_preempted(data)
        elif itype == _DMA_PAGE_FAULTED:
            vidsch.tdr.page_fault(data)
        elif itype == _MONITORED_FENCE_SIGNALED and wddm2 is not None:
            if hw is not None:
                hw.tdr.check_interrupt(data, data.MonitoredFenceSignaled.NodeOrdinal)
            # The DPC reads the fences (and, hardware-scheduled, the progress fences).
        elif itype == _SUSPEND_COMPLETED and hw is not None:
            ctx = hw.context(data.SuspendContextCompleted.hContext)
            if ctx is not None:
                hw.tdr.check_interrupt(data, ctx.node)
            hw.suspend_completed(data)
        elif itype == _HWQUEUE_PAGE_FAULTED and hw is not None:
            hw.tdr.check_interrupt(data, data.HwQueuePageFaulted.NodeOrdinal)
            hw.tdr.page_faulted(data)
        elif itype == _NATIVE_FENCE_SIGNALED and wddm2 is not None and wddm2.native is not None:
            if adapter.verifier.mode != "off":
                adapter.verifier.check("DXGKARGCB_NOTIFY_INTERRUPT_DATA", data, R.Facts(version=adapter.version),
                                  adapter.interrupt_address)
            wddm2.native.interrupt(data)  # the DPC reads the fences it names
        elif itype == _CRTC_VSYNC:
            if adapter.verifier.mode != "off":
                adapter.verifier.check("DXGKARGCB_NOTIFY_INTERRUPT_DATA", data,
                                  R.Facts(version=adapter.version, physical_adapter_count=1), adapter.interrupt_address)
            v = data.CrtcVsync
            self.vsyncs += 1
            if wants(adapter.trace, "VSync"):
                adapter.trace.emit(self.sim.now, "VSync", {"source": v.VidPnTargetId,
                                                     "address": v.PhysicalAddress.QuadPart})
            vidsch.presents.vsync(v.VidPnTargetId, v.PhysicalAddress.QuadPart, self.sim.now, data)
        elif itype in _MPO_VSYNCS:
            ov = self.overlays
            if ov is None:
                from .overlays import overlays_of

                ov = overlays_of(adapter)
            ov.vsync(data, itype)
        else:
            # Other interrupt types arrive with the later parts of the model; the verifier still
            # judges them, so a malformed one is not lost.
            if adapter.verifier.mode != "off":
                adapter.verifier.check("DXGKARGCB_NOTIFY_INTERRUPT_DATA", data, R.Facts(version=adapter.version),
                                  adapter.interrupt_address)
            self.unhandled_interrupts += 1

    def _interrupt_args(self, data) -> dict:
        """The logged members of an interrupt event: its type and its union arm."""
        adapter = self.adapter
        itype = int(data.InterruptType)
        args = {"InterruptType": _INTERRUPT_NAMES.get(itype, itype)}
        if itype == _DMA_COMPLETED:
            dc = data.DmaCompleted
            args["DmaCompleted"] = {"SubmissionFenceId": dc.SubmissionFenceId, "NodeOrdinal": dc.NodeOrdinal,
                                    "EngineOrdinal": dc.EngineOrdinal}
        elif itype == _CRTC_VSYNC:
            cv = data.CrtcVsync
            args["CrtcVsync"] = {"VidPnTargetId": cv.VidPnTargetId, "PhysicalAddress": cv.PhysicalAddress.QuadPart,
                                 "PhysicalAdapterMask": cv.PhysicalAdapterMask}
        elif itype == _DMA_PREEMPTED:
            dp = data.DmaPreempted
            args["DmaPreempted"] = {"PreemptionFenceId": dp.PreemptionFenceId,
                                    "LastCompletedFenceId": dp.LastCompletedFenceId,
                                    "NodeOrdinal": dp.NodeOrdinal, "EngineOrdinal": dp.EngineOrdinal}
        else:
            full = codec.decode(data.record, bytes(data), adapter.arch, adapter.version)
            for f in full:
                if f.depth == 1 and "." in f.path:
                    arm, member = f.path.split(".", 1)
                    args.setdefault(arm, {})[member] = f.value
        args["Flags"] = data.Flags.Value
        return args

    def DxgkCbQueueDpc(self, hAdapter: int) -> bool:
        """Queue the driver's DPC; FALSE (and nothing changes) while one is pending (rule 40)."""
        self.callbacks += 1
        if self.in_isr:
            self._isr_dpc = True
        if self.dpc_pending:
            return False
        self.dpc_pending = True
        self.sim.after(self.adapter.costs.isr, self._dpc, irql=DISPATCH)
        return True

    def DxgkCbNotifyDpc(self, hAdapter: int) -> None:
        """From the DPC: the scheduler processes what was reported since the last one."""
        self.callbacks += 1
        adapter = self.adapter
        self._not_from_isr("DxgkCbNotifyDpc")
        if self._in_dpc:
            self._dpc_notified = True
        self._unprocessed = 0
        if wants(adapter.trace, "Callback"):
            adapter.trace.emit(self.sim.now, "Callback", {"name": "DxgkCbNotifyDpc", "irql": "DISPATCH_LEVEL", "args": {}})
        wddm2 = adapter.wddm2
        if wddm2 is not None and wddm2.hw_scheduling is not None:
            wddm2.hw_scheduling.retire()  # progress fences, then every monitored fence with waiters
            if wddm2.native is not None:
                wddm2.native.dpc()  # native fences named by NATIVE_FENCE_SIGNALED
            return
        adapter.vidsch.retire()
        if wddm2 is not None:
            wddm2.fences.scan()  # fences the GPU may have written, with waiters on them

    def DxgkCbInvalidateHwContext(self, pInvalidateHwContext) -> None:
        """From DxgkDdiResetHwEngine: the reset hit this hardware context; its device goes to error."""
        self.callbacks += 1
        adapter = self.adapter
        self._not_from_isr("DxgkCbInvalidateHwContext")
        if wants(adapter.trace, "Callback"):
            adapter.trace.emit(self.sim.now, "Callback", {"name": "DxgkCbInvalidateHwContext", "irql": "PASSIVE_LEVEL",
                                                     "args": adapter.ddi.args_of(pInvalidateHwContext)})
        adapter.wddm2.hw_scheduling.tdr.invalidate(pInvalidateHwContext.hHwContext)

    def DxgkCbIsFeatureEnabled(self, hAdapter: int, FeatureId: str) -> bool:
        """DXGK_FEATURE_NATIVE_FENCE ("Native GPU fence objects") is enabled for a WDDM 3.2 driver on an
        adapter run with hardware scheduling, DXGK_FEATURE_HWFLIPQUEUE ("Hardware flip queue") for a
        WDDM 3.0 or later one run with hardware scheduling; the model knows no other optional feature."""
        self.callbacks += 1
        self._not_from_isr("DxgkCbIsFeatureEnabled")
        adapter = self.adapter
        if FeatureId == "NATIVE_FENCE":
            return adapter.native_fence_enabled
        if FeatureId == "HWFLIPQUEUE":
            return adapter.hw_flip_queue_enabled
        return False

    def KeQueryPerformanceCounter(self) -> tuple[int, int]:
        """``(count, frequency)``: the model's performance counter runs at :data:`QPC_FREQUENCY` (10 MHz,
        100 ns a tick, as on Windows 10 and 11) from virtual time 0; the count is the virtual time in
        ticks, rounded down. Any IRQL."""
        return self.sim.now // (1_000_000_000 // QPC_FREQUENCY), QPC_FREQUENCY

    def DxgkCbSynchronizeExecution(self, hAdapter, SynchronizeRoutine, Context, MessageNumber):
        """Run ``SynchronizeRoutine(Context)`` at DIRQL, synchronized with the ISR; returns
        (STATUS_SUCCESS, the routine's BOOLEAN)."""
        self._not_from_isr("DxgkCbSynchronizeExecution")
        sim = self.sim
        saved = sim.irql
        sim.irql = DEVICE
        try:
            ret = SynchronizeRoutine(Context)
        finally:
            sim.irql = saved
        return SUCCESS, ret

    def returned(self, name: str) -> None:
        """The gateway's hook after an entry point returns, armed while events reported from a
        DxgkCbSynchronizeExecution routine during ``name`` wait to be judged: they need a DPC
        (rule 39). Unarmed, the gateway calls nothing (nothing can be found)."""
        self.adapter.ddi.returned = None
        if self._outside:
            self._outside = 0
            if not self.dpc_pending and not self._in_dpc:
                self._violation(39, "ReportQueuesDpc",
                                f"{name} reported an event with DxgkCbNotifyInterrupt outside the ISR and returned "
                                f"without a DPC queued; the scheduler acts on events only in DxgkCbNotifyDpc")

    # -- the OS's interrupt and DPC dispatch ----------------------------------------------------------
    def interrupt(self, message_number: int) -> bool:
        """The GPU's line fired: call the driver's ISR at DIRQL and judge the pass."""
        sim = self.sim
        self.interrupts += 1
        self.isr_at = sim.now
        if sim.now != self._storm_t:
            self._storm_t = sim.now
            self._storm = 0
        self._storm += 1
        if self._storm > STORM_LIMIT:
            self._stop(BugCheck(BugCheckCode.HARDWARE_INTERRUPT_STORM, 0, self.adapter.hAdapter, 0, 1),
                       f"the interrupt line was still asserted after {STORM_LIMIT} ISR calls at one instant: the "
                       f"ISR does not dismiss its interrupt")
        pending = self.interrupt_status() if self.interrupt_status is not None else None
        self.in_isr = True
        self._isr_events = 0
        self._isr_dpc = False
        self._isr_crtc = False
        try:
            claimed = self._interrupt_routine(self.adapter.hAdapter, message_number, log=False)
        finally:
            self.in_isr = False
        if self._isr_events and not self._isr_dpc:
            self._violation(39, "IsrQueuesDpc",
                            f"the ISR reported {self._isr_events} event(s) with DxgkCbNotifyInterrupt and returned "
                            f"without calling DxgkCbQueueDpc")
        if pending is not None:
            self._judge_dismissal(bool(claimed), pending)
        return bool(claimed)

    def _judge_dismissal(self, claimed: bool, pending: int) -> None:
        """Rule 43, from the hardware's status register (ground truth)."""
        still = self.interrupt_status() & pending
        if claimed and still:
            self._violation(43, "IsrDismissesInterrupt",
                            f"the ISR returned TRUE without dismissing the interrupt: causes 0x{still:x} are still "
                            f"pending in the GPU's interrupt status (ground truth)")
        elif not claimed and pending:
            self._violation(43, "IsrDismissesInterrupt",
                            f"the ISR returned FALSE although its GPU had interrupt causes 0x{pending:x} pending "
                            f"(ground truth)")

    def _dpc(self) -> None:
        sim = self.sim
        self.dpc_pending = False
        self.dpcs += 1
        if sim.now != self._dpc_t:
            self._dpc_t = sim.now
            self._dpc_burst = 0
        self._dpc_burst += 1
        if self._dpc_burst > DPC_LIMIT:
            self._stop(BugCheck(BugCheckCode.DPC_WATCHDOG_VIOLATION, 1, DPC_LIMIT, 0, 0),
                       f"{DPC_LIMIT} DPCs ran at one instant: the processor never left DISPATCH_LEVEL")
        owed = self._unprocessed
        self._in_dpc = True
        self._dpc_notified = False
        try:
            self._dpc_routine(self.adapter.hAdapter, log=False)
        finally:
            self._in_dpc = False
        if owed and not self._dpc_notified:
            self._violation(39, "DpcNotifiesDpc",
                            f"the DPC returned without calling DxgkCbNotifyDpc although {owed} event(s) were "
                            f"reported with DxgkCbNotifyInterrupt since the last one")

    def _stop(self, bc: BugCheck, message: str) -> None:
        adapter = self.adapter
        storm = bc.code == BugCheckCode.HARDWARE_INTERRUPT_STORM
        # A storm is an ISR that leaves its interrupt asserted: rule 43 broken until Windows stops.
        raise BugCheckStop(CrashRecord(time=self.sim.now, bugcheck=bc, message=message, struct="", arch=adapter.arch,
                                       ddi_version=adapter.version.name if adapter.version is not None else "",
                                       ddi="DxgkDdiInterruptRoutine" if storm else "DxgkDdiDpcRoutine",
                                       rule=43 if storm else None, rule_name="IsrDismissesInterrupt" if storm else None))
