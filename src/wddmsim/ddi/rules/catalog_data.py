"""The data of the rule catalogue (:mod:`wddmsim.ddi.rules.catalog`): how the model accounts for
each of the 127 checkable rules of the WDDM DDI contract.

One :class:`Entry` per rule. For a rule registered in :data:`wddmsim.ddi.rules.RULES` the name and
words are the registry's (left ``None`` here, so they cannot drift); the other rules carry them
here. ``check`` names the code that enforces (runtime, ground_truth) or
guarantees (construction) the rule, as dotted references that the catalogue's tests import; the
registered rule function is added by the catalogue itself. ``reason`` says why a rule is a
construction of the OS model, or what is missing from the model for a not_modelled one.

The words are the project's own; the sources are Microsoft's pages.
"""

from __future__ import annotations

from dataclasses import dataclass

RUNTIME = "runtime"
CONSTRUCTION = "construction"
GROUND_TRUTH = "ground_truth"
NOT_MODELLED = "not_modelled"
#: The statuses, in the order the catalogue lists their counts.
STATUSES = (RUNTIME, GROUND_TRUTH, CONSTRUCTION, NOT_MODELLED)


@dataclass(frozen=True)
class Entry:
    """How the model accounts for one rule (see the module doc)."""

    status: str
    sources: tuple[str, ...]
    check: tuple[str, ...] = ()
    reason: str = ""
    name: str | None = None
    words: str | None = None


_MS = "https://learn.microsoft.com/windows-hardware/drivers/"


def _u(path: str) -> str:
    return _MS + path


def _k(page: str) -> str:
    """A d3dkmddi reference page."""
    return _MS + "ddi/d3dkmddi/" + page


R, G, C, N = RUNTIME, GROUND_TRUTH, CONSTRUCTION, NOT_MODELLED

_DX = "wddmsim.dxgkrnl."
GW_CALL = _DX + "gateway.DdiGateway.call"
STATUS = _DX + "gateway.STATUS_RULES"
CB = _DX + "callbacks.DxgkInterface."
VS = _DX + "vidsch.VidSch."
MM = _DX + "vidmm.VidMm."
TDR = _DX + "tdr.Tdr."
PRE = _DX + "preemption.Preemptor."
GT = _DX + "groundtruth.GroundTruth."
HW = _DX + "hwscheduling.OsHwScheduling."
FT = _DX + "fences.FenceTable."
AD = _DX + "adapter.Adapter."

_SUBMIT_CMD = _k("nc-d3dkmddi-dxgkddi_submitcommand")
_SUBMIT_ARGS = _k("ns-d3dkmddi-_dxgkarg_submitcommand")
_SUBMIT_FLAGS = _k("ns-d3dkmddi-_dxgk_submitcommandflags")
_THREADING = _u("display/threading-and-synchronization-first-level")
_PATCH = _k("nc-d3dkmddi-dxgkddi_patch")
_PATCH_ARGS = _k("ns-d3dkmddi-_dxgkarg_patch")
_FENCE_IDS = _u("display/supplying-fence-identifiers")
_NOTIFY = _k("ns-d3dkmddi-_dxgkargcb_notify_interrupt_data")
_INTERRUPT_TYPE = _k("ne-d3dkmddi-_dxgk_interrupt_type")
_ISR = _u("ddi/dispmprt/nc-dispmprt-dxgkddi_interrupt_routine")
_NOTIFY_CB = _k("nc-d3dkmddi-dxgkcb_notify_interrupt")
_QUEUE_DPC = _u("ddi/dispmprt/nc-dispmprt-dxgkcb_queue_dpc")
_FAULT_FLAGS = _u("ddi/d3dkmdt/ne-d3dkmdt-_dxgk_page_fault_flags")
_BUGCHECK_119 = _u("debugger/bug-check-0x119---video-scheduler-internal-error")
_PREEMPT = _k("nc-d3dkmddi-dxgkddi_preemptcommand")
_PREEMPT_ARGS = _k("ns-d3dkmddi-_dxgkarg_preemptcommand")
_GPU_PREEMPTION = _u("display/gpu-preemption")
_PAGING = _k("nc-d3dkmddi-dxgkddi_buildpagingbuffer")
_PAGING_ARGS = _k("ns-d3dkmddi-_dxgkarg_buildpagingbuffer")
_CONTEXT = _k("nc-d3dkmddi-dxgkddi_createcontext")
_CONTEXT_ARGS = _k("ns-d3dkmddi-_dxgkarg_createcontext")
_CONTEXTINFO = _k("ns-d3dkmddi-_dxgk_contextinfo")
_TOPOLOGY = _k("ns-d3dkmddi-_dxgk_gpuenginetopology")
_NODES = _u("display/enumerating-gpu-nodes")
_NODEMETA = _k("nc-d3dkmddi-dxgkddi_getnodemetadata")
_NODEMETA_FLAGS = _u("ddi/d3dkmdt/ns-d3dkmdt-_dxgk_nodemetadata_flags")
_VIDPN_ADDR = _k("nc-d3dkmddi-dxgkddi_setvidpnsourceaddress")
_VIDPN_ADDR_ARGS = _k("ns-d3dkmddi-_dxgkarg_setvidpnsourceaddress")
_PRESENT = _k("nc-d3dkmddi-dxgkddi_present")
_RENDER = _k("nc-d3dkmddi-dxgkddi_render")
_FLIPCAPS = _k("ns-d3dkmddi-_dxgk_flipcaps")
_HWQ_SUBMIT = _k("nc-d3dkmddi-dxgkddi_submitcommandtohwqueue")
_HWQ_SUBMIT_ARGS = _k("ns-d3dkmddi-_dxgkarg_submitcommandtohwqueue")
_HWQ_CREATE = _k("ns-d3dkmddi-dxgkarg_createhwqueue")
_HWQ_FLAGS = _u("ddi/d3dukmdt/ns-d3dukmdt-_d3dddi_createhwqueueflags")
_MONITORING = _u("display/context-monitoring")
_SYNCINFO2 = _u("ddi/d3dukmdt/ns-d3dukmdt-_d3dddi_synchronizationobjectinfo2")
_VIDSCHCAPS = _k("ns-d3dkmddi-_dxgk_vidschcaps")
_MCDM = _u("display/mcdm-implementation-guidelines")
_SUSPEND = _k("nc-d3dkmddi-dxgkddi_suspendcontext")
_TDR = _u("display/timeout-detection-and-recovery")
_TDR_KEYS = _u("display/tdr-registry-keys")
_TDR_SYNC = _u("display/thread-synchronization-and-tdr")
_RESET_TIMEOUT = _k("nc-d3dkmddi-dxgkddi_resetfromtimeout")
_TDR_WIN8 = _u("display/tdr-changes-in-windows-8")
_RESET_ENGINE = _k("nc-d3dkmddi-dxgkddi_resetengine")
_DEP_GROUP = _k("nc-d3dkmddi-dxgkddi_querydependentenginegroup")
_BANDS = _k("ne-d3dkmddi-_dxgk_scheduling_priority_band")
_SCHED_PROPS = _k("ns-d3dkmddi-_dxgkarg_setcontextschedulingproperties")
_PRIORITY_BANDS = _k("ns-d3dkmddi-_dxgkarg_setupprioritybands")

_SELF_CHECK = ("the OS model builds {what}; the registered rule re-judges every one it builds, so a "
               "model change that broke it would stop the run")


def _self(what: str) -> str:
    return _SELF_CHECK.format(what=what)


ENTRIES: dict[int, Entry] = {
    # -- submission ---------------------------------------------------------------------------------
    1: Entry(R, (_SUBMIT_CMD, _BUGCHECK_119), check=(STATUS,)),
    2: Entry(C, (_SUBMIT_CMD, _PREEMPT), check=(GW_CALL, "wddmsim.ddi.interface.CONTRACTS"),
             name="SubmitAndPreemptAtDispatch",
             words="The OS enters DxgkDdiSubmitCommand at DISPATCH_LEVEL, and DxgkDdiPreemptCommand there too "
                   "unless the driver asked for low-IRQL preemption calls (LowIrqlPreemptCommand).",
             reason="the gateway raises every entry point to the IRQL of its contract for the call; the model "
                    "never sets LowIrqlPreemptCommand, so DxgkDdiPreemptCommand is always at DISPATCH_LEVEL"),
    3: Entry(C, (_SUBMIT_CMD, _THREADING), check=(GW_CALL,),
             name="SchedulerLevelOneExclusive",
             words="The scheduler's level-one entry points (submit, patch, paging buffer, preempt, dependent "
                   "engine group, engine status, engine reset) never run on two threads at once.",
             reason="the simulation is single-threaded and the gateway enters one entry point at a time; "
                    "the OS's reactions to callbacks are scheduled events, never nested calls"),
    4: Entry(C, (_SUBMIT_ARGS,), check=(VS + "_submit",), reason=_self("DXGKARG_SUBMITCOMMAND and DXGKARG_PATCH")),
    5: Entry(G, (_SUBMIT_ARGS,), check=(VS + "_submit", GT + "fetched"),
             reason="the OS builds the offsets (and the registered rule re-checks them); what the driver can break "
                    "is judged from the GPU's bus: every fetch that touches a DMA buffer in flight must lie inside "
                    "the submitted range of some packet in flight"),
    6: Entry(C, (_SUBMIT_ARGS,), check=(VS + "_submit",),
             reason=_self("the private-data ranges of DXGKARG_SUBMITCOMMAND, DXGKARG_PATCH and "
                          "DXGKARG_CANCELCOMMAND")),
    7: Entry(C, (_SUBMIT_ARGS, _PATCH_ARGS), check=(VS + "_submit", VS + "_patch"),
             name="PatchSubmitOffsetsMatch",
             words="DxgkDdiPatch and DxgkDdiSubmitCommand for one packet are given the same DMA and "
                   "private-data submission offsets.",
             reason="VidSch fills both structures from the one packet it is about to submit"),
    8: Entry(C, (_FENCE_IDS, _PATCH_ARGS), check=(VS + "_submit", VS + "_patch"),
             name="PatchSubmitFenceMatch",
             words="DxgkDdiPatch and DxgkDdiSubmitCommand for one packet carry the same SubmissionFenceId.",
             reason="VidSch takes the node's next fence id once per submission and writes it into both "
                    "structures"),
    9: Entry(C, (_SUBMIT_ARGS,), check=(AD + "present",), reason=_self("the flip members of every submission")),
    10: Entry(C, (_SUBMIT_FLAGS,), check=(VS + "_submit",), reason=_self("every DXGK_SUBMITCOMMANDFLAGS")),
    11: Entry(C, (_SUBMIT_FLAGS,), check=(MM + "_submit_paging",),
              reason=_self("the null-context switch, an empty submission, itself")),
    12: Entry(C, (_SUBMIT_FLAGS,), check=(MM + "_evict", MM + "_submit_paging"),
              reason="VidMm._evict notes whether the packet running on the node is a paging one and "
                     "VidMm._submit_paging sets Paging on the switch from it; the registered rule is not judged "
                     "at run time (Facts.running_context_paging is never known)"),
    13: Entry(C, (_SUBMIT_FLAGS,), check=(PRE + "requeue",),
              reason=_self("Resubmission, set only on packets the preemption took back, and never for WDDM 1.x")),
    14: Entry(G, (_SUBMIT_FLAGS,), check=(GT + "fetched", GT + "null_rendering_done"),
              reason="whether the packet had side effects is read from what the GPU model fetched"),
    15: Entry(C, (_SUBMIT_ARGS,), check=(VS + "_submit",),
              reason=_self("the handles; NULL ones only on VidMm's paging and context-switch submissions")),
    16: Entry(C, (_SUBMIT_ARGS, _CONTEXTINFO), check=(AD + "create_context",),
              reason=_self("DmaBufferSegmentId; contexts with a DmaBufferSegmentSet are refused at creation, so "
                           "it is always 0 with a system-memory buffer")),
    17: Entry(C, (_CONTEXTINFO,), check=(AD + "create_context",),
              name="DmaBufferSegmentSetApertureOnly",
              words="A context's or device's DmaBufferSegmentSet may name aperture segments only; a memory "
                    "segment there makes the creation fail.",
              reason="Adapter.create_context fails every context whose driver reports a nonzero "
                     "DmaBufferSegmentSet (DMA buffers always come from system memory), which includes every "
                     "set naming a memory segment"),
    18: Entry(C, (_SUBMIT_ARGS,), check=(VS + "_submit",), reason=_self("DmaBufferVirtualAddress, always 0")),
    19: Entry(R, (_TDR_WIN8, _TOPOLOGY)),
    20: Entry(R, (_NODES, _TOPOLOGY), check=(_DX + "caps.refusals",)),
    21: Entry(R, (_SUBMIT_ARGS, _u("devtest/special-pool")),
              check=(VS + "_empty_private_read", _DX + "specialpool.SpecialPool"),
              name="NoPrivateDataValidationWhenEmpty",
              words="When a submission's DmaBufferPrivateDataSize is 0 the driver neither reads nor validates "
                    "the private data it was given."),
    22: Entry(C, (_RENDER, _PATCH_ARGS), check=(AD + "render",),
              reason=_self("every DMA buffer start (page-aligned pool blocks); judged on DXGKARG_PATCH and "
                           "DXGKARG_CANCELCOMMAND")),
    23: Entry(R, (_k("nc-d3dkmddi-dxgkddi_submitcommandvirtual"),), check=(STATUS,)),
    24: Entry(C, (_k("nc-d3dkmddi-dxgkddi_submitcommandvirtual"),),
              check=(VS + "_submit_virtual", VS + "_retire_rejected", TDR + "device_error"),
              name="InvalidParameterVirtualSubmission",
              words="A virtual submission refused with STATUS_INVALID_PARAMETER puts its device in error (later "
                    "calls on it fail) and its fence counts as done once every earlier packet on the node is.",
              reason="VidSch marks the refused packet, puts the device in error and retires the packet's fence "
                     "when it reaches the bottom of the hardware queue"),
    # -- patch ------------------------------------------------------------------------------------------
    25: Entry(R, (_PATCH, _BUGCHECK_119), check=(STATUS,)),
    26: Entry(C, (_PATCH_ARGS,), check=(VS + "_patch",),
              reason="the OS never patches a paging buffer (VidMm builds them with their final addresses), so "
                     "no paging DXGKARG_PATCH exists to break it"),
    27: Entry(C, (_PATCH_ARGS,), check=(VS + "_patch",),
              reason="the OS never patches a paging buffer, so no paging DXGKARG_PATCH exists to break it"),
    28: Entry(C, (_PATCH,), check=(VS + "_patch", PRE + "requeue"),
              name="RepatchAllowed",
              words="The OS may patch one DMA buffer again, for example when a preempted packet is submitted "
                    "once more.",
              reason="VidSch patches every packet with patch locations on each submission, resubmissions "
                     "included"),
    29: Entry(C, (_PATCH_ARGS,), check=(VS + "_patch",), reason=_self("the patch-location range")),
    30: Entry(R, (_u("display/splitting-a-dma-buffer"),
                  _u("ddi/d3dukmdt/ns-d3dukmdt-_d3dddi_patchlocationlist"))),
    31: Entry(C, (_k("ns-d3dkmddi-_dxgk_patchflags"),), check=(VS + "_patch",), reason=_self("DXGK_PATCHFLAGS")),
    # -- fences and interrupts ----------------------------------------------------------------------------
    32: Entry(R, (_NOTIFY, _BUGCHECK_119), check=(VS + "dma_completed", TDR + "page_fault")),
    33: Entry(R, (_FENCE_IDS, _k("nc-d3dkmddi-dxgkddi_querycurrentfence")), check=(VS + "dma_completed",)),
    34: Entry(C, (_FENCE_IDS, _NOTIFY), check=(VS + "complete_through",),
              name="CumulativeCompletion",
              words="A completed fence retires every packet submitted before it on the same node.",
              reason="VidSch retires the hardware queue from its bottom up to the reported fence"),
    35: Entry(R, (_PREEMPT_ARGS, _NOTIFY)),
    36: Entry(G, (_PREEMPT_ARGS, _NOTIFY), check=(PRE + "dma_preempted", GT + "completing"),
              reason="the range is checked at run time (0x119/0x1); that the fence really completed is judged "
                     "against the packets the GPU's engines ran to the end before the report"),
    37: Entry(G, (_PREEMPT, _RESET_ENGINE), name="LastCompletedAdvancesOnlyOnCompletion",
              words="The fence a driver reports as last completed moves forward only because work really "
                    "finished, an engine reset succeeded, or the whole adapter was reset.",
              check=(GT + "completing", GT + "finished"),
              reason="every packet a DMA_COMPLETED report completes must have been run to the end of its "
                     "submitted range by an engine at or before the report (the resets move it in the OS "
                     "model itself)"),
    38: Entry(R, (_NOTIFY_CB, _ISR), check=(CB + "DxgkCbNotifyInterrupt",),
              name="NotifyInterruptAtDirql",
              words="A driver calls DxgkCbNotifyInterrupt only at device IRQL, from its ISR or from a routine "
                    "run by DxgkCbSynchronizeExecution."),
    39: Entry(R, (_ISR, _QUEUE_DPC), check=(CB + "interrupt", CB + "_dpc", CB + "returned"),
              name="IsrQueuesDpc",
              words="An ISR that reported events queues a DPC before it returns, and that DPC calls "
                    "DxgkCbNotifyDpc so the scheduler can act on them."),
    40: Entry(C, (_QUEUE_DPC,), check=(CB + "DxgkCbQueueDpc",),
              name="OneDpcPending",
              words="An adapter has at most one DPC pending: queueing another while one waits returns FALSE "
                    "and does nothing.",
              reason="the OS's DxgkCbQueueDpc returns FALSE and schedules nothing while a DPC is pending"),
    41: Entry(R, (_ISR,), check=(CB + "_not_from_isr",),
              name="IsrCallbacks",
              words="From its ISR a driver may call only DxgkCbQueueDpc and DxgkCbNotifyInterrupt."),
    42: Entry(R, (_ISR, _NOTIFY_CB), check=(CB + "DxgkCbNotifyInterrupt",),
              name="DmaBeforeCrtc",
              words="Within one ISR pass, DMA events are reported before CRTC (vsync) events."),
    43: Entry(G, (_ISR,), check=(CB + "_judge_dismissal",),
              name="IsrDismissesInterrupt",
              words="A line-based ISR claims an interrupt (returns TRUE) only after dismissing it, and returns "
                    "FALSE, touching nothing, when its device did not interrupt.",
              reason="judged from the GPU model's interrupt status register before and after the ISR"),
    44: Entry(R, (_INTERRUPT_TYPE, _NOTIFY)),
    45: Entry(R, (_NOTIFY,)),
    46: Entry(R, (_NOTIFY, _BUGCHECK_119)),
    47: Entry(N, (_BUGCHECK_119,), name="NoVsyncOnRenderOnlyAdapter",
              words="A render-only adapter never reports a display vsync interrupt; Windows stops with "
                    "bug check 0x119 if it does.",
              reason="render-only adapters are not modelled: every simulated adapter has a display "
                     "(scenario adapter.displays); comes with a render-only adapter kind"),
    48: Entry(R, (_INTERRUPT_TYPE, _k("nc-d3dkmddi-dxgkddi_controlinterrupt")),
              check=(_DX + "vsync.VsyncControl._check",),
              name="VsyncReportedWhileEnabled",
              words="While the OS has the vsync interrupt enabled, the driver keeps reporting CRTC_VSYNC; it may "
                    "stop only while it is disabled."),
    49: Entry(R, (_k("nc-d3dkmddi-dxgkddi_controlinterrupt"), _INTERRUPT_TYPE,
                  _u("display/saving-energy-with-vsync-control")),
              check=(_DX + "controlinterrupt.judge", _DX + "controlinterrupt.ask_other_types"),
              name="ControlInterruptOnlyVsync",
              words="DxgkDdiControlInterrupt answers STATUS_NOT_IMPLEMENTED for every interrupt type other "
                    "than CRTC_VSYNC."),
    50: Entry(R, (_NOTIFY, _k("ns-d3dkmddi-_dxgk_multiplane_overlay_vsync_info2"),
                  _k("ns-d3dkmddi-dxgk_multiplane_overlay_vsync_info3"), _BUGCHECK_119),
              check=(_DX + "overlays.Overlays.vsync",)),
    51: Entry(R, (_NOTIFY, _FAULT_FLAGS)),
    52: Entry(C, (_NOTIFY, _FAULT_FLAGS), check=(TDR + "page_fault",),
              name="FaultCompletesEarlierFences",
              words="On a page fault whose fence is valid, the OS completes every packet before the faulting "
                    "one, and the driver's completed fence moves up to the faulting fence.",
              reason="Tdr.page_fault completes the node through FaultedFenceId - 1 and requires the faulting "
                     "fence to be pending (rule 32); a driver reporting an older fence later breaks rule 33"),
    53: Entry(R, (_NOTIFY, _FAULT_FLAGS)),
    54: Entry(C, (_NOTIFY, _FAULT_FLAGS), check=(_DX + "hwtdr.HwTdr.page_faulted",),
              name="HwQueueFaultHandleArm",
              words="Under hardware scheduling a page fault names the faulting hardware queue (and its progress "
                    "fence) rather than a node fence.",
              reason="the OS reads the FaultedHwQueue arm of DMA_PAGE_FAULTED under hardware scheduling and "
                     "the node arm otherwise"),
    55: Entry(R, (_k("nc-d3dkmddi-dxgkddi_querycurrentfence"), _MCDM), check=(TDR + "_missed_fences",)),
    56: Entry(R, (_SUSPEND, _BUGCHECK_119), check=(HW + "suspend_completed",),
              name="SuspendFenceIssued",
              words="A driver acknowledges only a context-suspend fence the OS actually handed to "
                    "DxgkDdiSuspendContext; any other is bug check 0x119."),
    57: Entry(R, (_k("nc-d3dkmddi-dxgkddi_resethwengine"), _k("nc-d3dkmddi-dxgkddi_resumehwengine")),
              check=(_DX + "hwtdr.HwTdr.check_interrupt",),
              name="NoInterruptBeforeResume",
              words="Between resetting a hardware-scheduled engine and resuming it, the driver reports no "
                    "interrupt for that engine; doing so is bug check 0x119."),
    58: Entry(R, (_PREEMPT, _BUGCHECK_119), check=(STATUS,)),
    59: Entry(C, (_k("ns-d3dkmddi-_dxgk_preemptcommandflags"),), check=(PRE + "request",),
              reason=_self("DXGK_PREEMPTCOMMANDFLAGS, always 0")),
    60: Entry(N, (_PREEMPT, _PREEMPT_ARGS), name="PreemptIdleReportsItself",
              words="When everything it was given has already completed and been reported, a driver answers "
                    "DxgkDdiPreemptCommand by reporting DMA_PREEMPTED itself instead of asking the hardware.",
              reason="The OS model never creates the situation: it asks for a preemption only while a packet "
                     "of the node is in flight (a completion is processed in the ISR's DxgkCbNotifyInterrupt, "
                     "before any later decision), so a check would be one that cannot fire. It comes with an "
                     "OS that can decide to preempt between a completion and its report. The reference driver "
                     "follows the rule."),
    61: Entry(C, (_GPU_PREEMPTION, _TDR_WIN8), check=(PRE + "requeue",),
              name="PagingResubmitFirstSameFence",
              words="Paging packets taken off the hardware by a preemption or reset go back first on their "
                    "engine, in their old order and with their old fence ids.",
              reason="the preemption requeue keeps a paging packet's fence and VidMm's system context runs "
                     "before every process"),
    62: Entry(C, (_GPU_PREEMPTION, _SUBMIT_FLAGS), check=(PRE + "requeue", VS + "_submit"),
              name="RenderResubmitNewFence",
              words="Other packets taken off the hardware are submitted again under new fence ids, flagged "
                    "Resubmission for WDDM 2.0 and later drivers.",
              reason="VidSch gives a requeued render packet a fresh fence id on its next submission"),
    63: Entry(R, (_VIDSCHCAPS, _MCDM), check=(_DX + "caps.refusals",)),
    64: Entry(R, (_GPU_PREEMPTION, _FLIPCAPS), check=(_DX + "caps.refusals",),
              name="PreemptionAwareNeedsMmioFlip",
              words="A driver that declares itself preemption-aware also declares vsync flips through MMIO "
                    "(FlipOnVSyncMmIo)."),
    65: Entry(G, (_u("ddi/d3dkmdt/ns-d3dkmdt-_d3dkmdt_preemption_caps"), _MCDM),
              check=(GT + "preemption_caps",),
              name="PreemptionGranularityCoarsest",
              words="The preemption granularity a driver reports for graphics and for compute is the coarsest "
                    "of the engines that run that kind of work.",
              reason="a PreemptionAware driver's D3DKMDT_PREEMPTION_CAPS is compared, when the system starts, "
                     "with the granularities the GPU model's engines really stop at (docs/gpu-programming.md)"),
    66: Entry(N, (_u("display/splitting-a-dma-buffer"), _GPU_PREEMPTION),
              name="SplitPortionsMayInterleave",
              words="Under the Windows 8 preemption model another context may run between two portions of a "
                    "split DMA buffer; only the Windows 7 policy keeps them back to back.",
              reason="DMA-buffer splitting is not modelled: VidMm pages in all of a packet's allocations at "
                     "once, so there are no split portions; comes with splitting at SplitOffset"),
    67: Entry(R, (_k("nc-d3dkmddi-dxgkddi_cancelcommand"),), check=(STATUS,)),
    68: Entry(R, (_PAGING, _TDR_SYNC), check=(STATUS, MM + "failed")),
    69: Entry(R, (_PAGING, _PAGING_ARGS), check=(MM + "build",), name="PagingBufferAdvanceExact",
              words="After DxgkDdiBuildPagingBuffer the driver's pDmaBuffer and pDmaBufferPrivateData have moved "
                    "exactly past what it wrote, within the space it was given."),
    70: Entry(C, (_PAGING, _PAGING_ARGS), check=(MM + "_build", MM + "_fill_args"),
              name="MultipassOffsetPreserved",
              words="MultipassOffset starts at 0 for a paging operation and the OS leaves the driver's value "
                    "alone between the calls that finish that operation.",
              reason="VidMm writes MultipassOffset = 0 only on the first call of an operation (_fill_args) and "
                     "asks again after STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER, or after waiting out "
                     "STATUS_GRAPHICS_ALLOCATION_BUSY, with the value the driver left"),
    71: Entry(C, (_PAGING, _PAGING_ARGS), check=(MM + "_fill_args",),
              name="TransferSequenceConsistent",
              words="A paging transfer ends (TransferEnd) before the next one starts (TransferStart), and a "
                    "retried piece of a transfer keeps its TransferOffset.",
              reason="VidMm issues every transfer whole (TransferStart and TransferEnd together), so no "
                     "transfer is pending when the next starts; the calls that finish a multipass transfer, "
                     "or retry it after STATUS_GRAPHICS_ALLOCATION_BUSY, repeat it unchanged, TransferOffset "
                     "included"),
    72: Entry(C, (_PAGING, _PAGING_ARGS), check=(MM + "_fill_args", MM + "idle", MM + "_build"),
              name="AllocationIsIdleOnlyAfterBusy",
              words="AllocationIsIdle is set on a transfer or discard only when the GPU is guaranteed not to be "
                    "using the allocation, as on the retry after STATUS_GRAPHICS_ALLOCATION_BUSY.",
              reason="VidMm sets AllocationIsIdle only when no unretired packet, render or paging, references "
                     "the allocation (VidMm.idle), and after STATUS_GRAPHICS_ALLOCATION_BUSY waits for that "
                     "before asking again with the flag set"),
    73: Entry(C, (_PAGING, _PAGING_ARGS), check=(MM + "_fill_args",),
              name="FillTargetsMemorySegment",
              words="A paging FILL operation never targets an aperture segment.",
              reason="VidMm maps aperture allocations with MAP_APERTURE_SEGMENT and fills only memory-segment "
                     "allocations"),
    74: Entry(C, (_PAGING, _SUBMIT_FLAGS), check=(MM + "_build", MM + "_piece"),
              name="PartialPagingBufferSubmittedSeparately",
              words="Every paging buffer, each partial one of a long operation too, is submitted on its own with "
                    "Flags.Paging set.",
              reason="VidMm turns what the driver wrote in each call, a partial buffer of a multipass operation "
                     "included, into its own paging packet"),
    75: Entry(R, (_BUGCHECK_119,), check=(MM + "failed",), name="FailedSystemCommandBugChecks",
              words="A driver that fails a system or paging command stops Windows with bug check 0x119, "
                    "parameter 1 = 0x5."),
    76: Entry(R, (_CONTEXT, _CONTEXT_ARGS), check=(STATUS,)),
    77: Entry(C, (_CONTEXT_ARGS, _NODES), check=(AD + "create_context", HW + "create_context"),
              name="EngineAffinitySingleBit",
              words="A new context's EngineAffinity has exactly one bit set, the one of its engine "
                    "(bit 0 on an adapter that is not linked).",
              reason="the model's adapters are never linked and the OS passes EngineAffinity = 1"),
    78: Entry(C, (_CONTEXT_ARGS, _k("ns-d3dkmddi-_dxgk_createcontextflags")), check=(MM + "_system_context",),
              name="SystemContextOnPagingNode",
              words="A context created as a system context lives only on the paging node.",
              reason="the OS never asks a driver for a SystemContext: VidMm's system contexts are its own, with "
                     "no driver handle"),
    79: Entry(N, (_CONTEXTINFO, _k("ns-d3dkmddi-_dxgk_createcontextflags")),
              name="GdiContextAllocationList256",
              words="A GDI context reports an allocation list of 256 entries.",
              reason="GDI hardware acceleration is not modelled: the OS never creates a context with GdiContext "
                     "set; comes with a GDI workload"),
    80: Entry(R, (_NODEMETA, _u("ddi/d3dkmdt/ns-d3dkmdt-_dxgk_nodemetadata")), check=(AD + "start",),
              name="ExactlyOne3DNode",
              words="Exactly one node declares itself a 3D engine, and only nodes of type OTHER give a "
                    "friendly name."),
    81: Entry(R, (_NODEMETA,), check=(AD + "start",), name="GetNodeMetadataStatus",
              words="DxgkDdiGetNodeMetadata succeeds for every node the adapter has and refuses an ordinal "
                    "beyond them with STATUS_INVALID_PARAMETER."),
    82: Entry(N, (_TDR_WIN8, _TOPOLOGY), name="LinkedEnginesSameNodeCount",
              words="Every physical engine of a linked adapter exposes the same number of nodes.",
              reason="linked (multi-GPU) adapters are not modelled: one GPU per adapter; comes with linked "
                     "adapters"),
    83: Entry(C, (_VIDPN_ADDR, _VIDPN_ADDR_ARGS), check=(AD + "set_vidpn_source_address",),
              reason=_self("ContextCount of every MMIO flip (1: the model broadcasts no flip; it changes no mode)")),
    84: Entry(R, (_PRESENT, _FLIPCAPS), check=(_DX + "present.Presents._flip_reported",), name="MmioFlipPath",
              words="With vsync flips through MMIO, a flip reaches DxgkDdiPresent without a DMA buffer, the "
                    "OS programs it with DxgkDdiSetVidPnSourceAddress at device IRQL and the driver reports it "
                    "with CRTC_VSYNC and DxgkCbNotifyDpc."),
    85: Entry(C, (_VIDPN_ADDR_ARGS, _k("ns-d3dkmddi-_dxgk_setvidpnsourceaddress_flags")),
              check=(AD + "set_vidpn_source_address",),
              reason=_self("the Flags of every MMIO flip (never a stereo flag: stereo is not modelled)")),
    86: Entry(R, (_VIDPN_ADDR, _VIDPN_ADDR_ARGS), check=(AD + "set_vidpn_source_address",)),
    87: Entry(C, (_PRESENT, _FLIPCAPS), check=(AD + "present",), name="FlipWithNoWaitNeedsCap",
              words="The OS asks for FlipWithNoWait only from a driver that declared FlipOnVSyncWithNoWait.",
              reason="the OS reads DXGK_FLIPCAPS at adapter start and turns a no-wait flip into a waiting one "
                     "for a driver that did not declare FlipOnVSyncWithNoWait"),
    88: Entry(R, (_u("ddi/d3dukmdt/ne-d3dukmdt-d3dddi_flipinterval_type"), _FLIPCAPS)),
    89: Entry(C, (_PRESENT, _k("ns-d3dkmddi-_dxgk_presentflags")), check=(AD + "present",),
              name="PresentColorFlagsExclusive",
              words="A present asks for at most one of ColorFill, SrcColorKey and DstColorKey.",
              reason="the OS's presents are blts and flips only; it never sets a color-fill or color-key flag"),
    90: Entry(C, (_FLIPCAPS, _k("ns-d3dkmddi-_dxgk_drivercaps")), check=(_DX + "present.Presents.can_submit",),
              name="FlipQueueDepth",
              words="A source never has more vsync flips pending than MaxQueuedFlipOnVSync allows.",
              reason="VidSch holds a flip while its source already has the maximum pending. The model takes "
                     "the depth from the scenario's display (at least 1); the bug check for an invalid "
                     "driver capability is not modelled"),
    91: Entry(R, (_u("display/hardware-flip-queue"), _k("nc-d3dkmddi-dxgkddi_cancelflips"),
                  _k("ns-d3dkmddi-dxgk_cancelflips_plane"), _k("ns-d3dkmddi-dxgk_flipqueue_log_entry"),
                  _k("ns-d3dkmddi-_dxgkarg_setvidpnsourceaddresswithmultiplaneoverlay3")),
              check=("wddmsim.ddi.rules.flipqueue.FlipQueueJudge", _DX + "hwflipqueue.HwFlips._judge"),
              name="HwFlipQueueOrdering",
              words="In the hardware flip queue, target flip times of one plane never go backwards, flips "
                    "cancelled together form one run ending at the last PresentId submitted, and the flip queue "
                    "log reports flips in order, never one the driver cancelled as shown."),
    # -- hardware queues and monitored fences -----------------------------------------------------------------
    92: Entry(C, (_HWQ_SUBMIT_ARGS, _HWQ_CREATE), check=(HW + "check_progress_id",),
              reason="the OS refuses a non-increasing progress fence id at the API (OsHwScheduling.check_progress_id) "
                     "before any DDI call; the registered rule re-judges what it passes"),
    93: Entry(C, (_HWQ_SUBMIT,), check=(GW_CALL,),
              reason="the simulation is single-threaded: the gateway enters one entry point at a time"),
    94: Entry(C, (_HWQ_SUBMIT_ARGS,), check=(HW + "_submit", HW + "present"),
              reason=_self("the flags: 0 for the UMD's buffers, Present for DdiPresentToHwQueue's")),
    95: Entry(R, (_HWQ_SUBMIT, _HWQ_SUBMIT_ARGS), check=(HW + "_freed_read",)),
    96: Entry(G, (_HWQ_SUBMIT, _HWQ_SUBMIT_ARGS), check=(GT + "queued", GT + "progress_reached"),
              name="ProgressFenceReleaseTiming",
              words="A queue's progress fence shows a value only once the buffers up to it have run their last "
                    "instruction (or, with RingBufferFenceRelease, have been retired).",
              reason="when the OS reads a queue's progress fence in its DPC, every submission the value "
                     "completes must have had its buffer run to the end by an engine (the GPU model's bus), "
                     "whichever way RingBufferFenceRelease says the value is written"),
    97: Entry(C, (_MONITORING, _SYNCINFO2), check=(FT + "signal_cpu",),
              name="CpuNeverWritesMonitoredFence",
              words="The CPU never stores into a monitored fence directly; CPU signals go through the kernel, "
                    "which writes the value.",
              reason="applications signal only through the API (FenceTable.signal_cpu); the fence page is "
                     "written by the kernel and the GPU only"),
    98: Entry(C, (_MONITORING, _SYNCINFO2), check=(FT + "signal_cpu", FT + "signal_queued"),
              name="MonitoredFenceMonotonic",
              words="A monitored fence's value never goes down, unless a signal explicitly allows rewinding it.",
              reason="the fence table refuses backward CPU signals and ignores backward GPU writes unless the "
                     "signal allows a rewind"),
    99: Entry(C, (_VIDSCHCAPS, _MONITORING), check=(FT + "check_value",),
              name="NarrowFenceHalfRange",
              words="With 32-bit fences (No64BitAtomics), every pending wait or signal value stays within half "
                    "the 32-bit range of the last signalled value.",
              reason="the fence table refuses wait and signal values outside the half range"),
    100: Entry(C, (_MONITORING, _SYNCINFO2), check=(_DX + "wddm2.OsWddm2.fence_address",),
               reason=_self("the monitored fence addresses (8-byte fence slots)")),
    101: Entry(C, (_MONITORING, _SYNCINFO2), check=(FT + "signal_max_on_tdr", HW + "device_error", TDR + "device_error"),
               name="MaxFenceOnTdr",
               words="When a reset takes down devices that could signal a monitored fence, the fence jumps to its "
                     "largest value unless it was created with NoSignalMaxValueOnTdr.",
               reason="OsHwScheduling.device_error (hardware scheduling) and Tdr.device_error (the software scheduler with "
                      "GPU virtual addresses) drive every fence the device could signal to its maximum"),
    102: Entry(C, (_SYNCINFO2, _u("ddi/d3dukmdt/ne-d3dukmdt-_d3dddi_synchronizationobject_type")),
               check=(FT + "create",),
               name="SyncObjectFlagCombinations",
               words="TopOfPipeline, NoSignal and NoWait are for monitored fences only, NoSignal excludes NoWait, "
                     "and NtSecuritySharing needs Shared.",
               reason="the fence table refuses invalid flag combinations when a fence is created"),
    103: Entry(C, (_MONITORING,), check=(FT + "wait_queue",),
               name="GpuWaitHoldsLaterWork",
               words="Work a context or hardware queue submits after a GPU wait on a fence does not start before "
                     "the wait is satisfied.",
               reason="the OS holds the waiting context's (or queue's) later submissions until the fence reaches "
                      "the value"),
    104: Entry(R, (_SUSPEND, _MCDM)),
    105: Entry(C, (_NODEMETA_FLAGS,), check=(HW + "_grant_slots",),
               reason="the OS hands the driver at most MaxInFlightHwQueueBuffers buffers per node before the "
                      "call; the registered rule re-judges every submission"),
    106: Entry(N, (_u("display/user-mode-work-submission"),), name="UmSubmissionPublishBeforeDoorbell",
               words="With user-mode submission the UMD publishes the queue's last progress value before the "
                     "buffer becomes visible to the GPU and before it rings the doorbell.",
               reason="user-mode work submission (doorbells) is not modelled: every buffer goes through "
                      "DxgkDdiSubmitCommandToHwQueue; comes with doorbells"),
    107: Entry(C, (_HWQ_CREATE, _HWQ_FLAGS), check=(_DX + "hwtdr.HwTdr.submitted",),
               name="DisableGpuTimeoutExempt",
               words="Hardware queues created with DisableGpuTimeout are exempt from the GPU timeout.",
               reason="the OS's hardware-scheduling watchdog skips a node whose busy queues include one with "
                      "DisableGpuTimeout"),
    # -- TDR -------------------------------------------------------------------------------------------------------
    108: Entry(R, (_TDR_SYNC, _RESET_TIMEOUT), check=(STATUS, TDR + "must_succeed"),
               name="ResetFromTimeoutSucceeds",
               words="DxgkDdiResetFromTimeout and DxgkDdiRestartFromTimeout succeed; a failure is bug check "
                     "0x116 VIDEO_TDR_FAILURE."),
    109: Entry(C, (_TDR_SYNC, _RESET_TIMEOUT), check=(GW_CALL, TDR + "_adapter_reset"),
               name="ResetFromTimeoutExclusive",
               words="While DxgkDdiResetFromTimeout runs, the only other driver code that runs is the ISR, the "
                     "DPC and the runtime power callbacks.",
               reason="the simulation is single-threaded: the gateway enters one entry point at a time, and "
                      "nodes are marked resetting so nothing is submitted during the reset"),
    110: Entry(G, (_TDR_SYNC, _RESET_TIMEOUT), name="NoGpuMemoryAccessAfterReset",
               words="Between the return of DxgkDdiResetFromTimeout and DxgkDdiRestartFromTimeout the GPU "
                     "neither reads nor writes memory.",
               check=(GT + "adapter_reset",),
               reason="the OS calls the two at one virtual instant, so the model judges the state the reset "
                      "left: when DxgkDdiResetFromTimeout returns success every engine must be idle with "
                      "nothing on its ring (an engine still running or with commands queued would touch "
                      "memory)"),
    111: Entry(N, (_TDR, _TDR_KEYS), name="ThreadsLeaveDriverInTime",
               words="Threads still inside the driver a few seconds (TdrDdiDelay) after recovery began make "
                     "Windows stop with bug check 0x116.",
               reason="driver threads are not modelled: an entry point runs to completion at one simulated "
                      "instant, so no thread is left inside the driver while recovery waits; a call that never "
                      "returns is stopped by the host-time DDI watchdog instead (docs/limits.md), with this "
                      "rule's bug check 0x116 at PASSIVE_LEVEL; the rule itself comes with entry points that "
                      "take simulated time"),
    112: Entry(C, (_TDR, _TDR_KEYS), check=(TDR + "adapter_timeout", TDR + "count_timeout"),
               name="TdrLimitBugCheck",
               words="One adapter timeout more than TdrLimitCount within TdrLimitTime stops Windows with bug "
                     "check 0x116.",
               reason="the OS counts adapter timeouts in the TdrLimitTime window and stops on the one past the "
                      "limit"),
    113: Entry(C, (_TDR, _TDR_KEYS), check=(TDR + "preempt_requested", TDR + "_expired"),
               name="UnansweredPreemptionIsTimeout",
               words="Work that neither finishes nor is preempted within TdrDelay of a preemption request is a "
                     "timeout, unless timeouts are disabled (TdrLevel 0, DisableGpuTimeout).",
               reason="the OS arms the TdrDelay watchdog at every preemption request and recovers when it "
                      "expires"),
    114: Entry(G, (_TDR_WIN8, _RESET_ENGINE), name="ResetEngineLeavesQueueEmpty",
               words="DxgkDdiResetEngine returns only once the engine is reset, its hardware queue empty and the "
                     "node ready for new work.",
               check=(GT + "engine_reset",),
               reason="when DxgkDdiResetEngine returns success the engine that ran the node's packets must be "
                      "idle with nothing on its ring, as the GPU model shows it"),
    115: Entry(R, (_TDR_WIN8, _RESET_ENGINE), check=(TDR + "_engine_reset",)),
    116: Entry(C, (_TDR_WIN8, _RESET_ENGINE), check=(TDR + "_engine_reset",),
               name="EngineResetEscalation",
               words="A failed engine reset becomes an adapter-wide reset, and so does an engine reset that "
                     "aborted a paging packet.",
               reason="Tdr._engine_reset promotes both cases to an adapter reset"),
    117: Entry(R, (_DEP_GROUP, _TDR_WIN8), check=(TDR + "_engine_reset",)),
    118: Entry(R, (_TDR_WIN8, _k("ns-d3dkmddi-_dxgk_drivercaps")), check=(_DX + "caps.missing_entry_points",),
               name="PerEngineTdrEntryPoints",
               words="A driver declaring SupportPerEngineTDR implements DxgkDdiQueryDependentEngineGroup, "
                     "DxgkDdiQueryEngineStatus and DxgkDdiResetEngine."),
    119: Entry(C, (_TDR_SYNC, _RESET_TIMEOUT), check=(TDR + "_adapter_reset",),
               name="AdapterResetCompletesAll",
               words="After an adapter-wide reset every node's last completed fence equals its last submitted one.",
               reason="Tdr._adapter_reset completes every node through its last submitted fence"),
    120: Entry(N, (_TDR_SYNC, _k("nc-d3dkmddi-dxgkddi_collectdbginfo")), name="CollectDbgInfoPassive",
               words="DxgkDdiCollectDbgInfo for an adapter or engine reset is called at PASSIVE_LEVEL.",
               reason="DxgkDdiCollectDbgInfo is not modelled (no live-dump data is collected from the driver); "
                      "comes with it"),
    121: Entry(C, (_TDR, _TDR_KEYS), check=(TDR + "count_timeout",),
               name="EngineTimeoutLimitOneLess",
               words="Engine timeouts tolerated within TdrLimitTime are one fewer than the adapter limit; past "
                     "that the offending process is blocked (0x142).",
               reason="the OS counts engine timeouts against TdrLimitCount - 1 and blocks the process past it"),
    # -- scheduling priorities ------------------------------------------------------------------------------------
    122: Entry(C, (_SCHED_PROPS, _BANDS), check=(HW + "set_properties",),
               reason="the scenario schema and the API bound realtime priority levels; " + _self("the properties")),
    123: Entry(C, (_SCHED_PROPS,), check=(HW + "set_properties",),
               reason="the API bounds inProcessPriority; " + _self("the properties")),
    124: Entry(C, (_PRIORITY_BANDS,), check=(HW + "start",),
               reason="the scenario schema bounds targetNormalBandPercentage; " + _self("DXGKARG_SETUPPRIORITYBANDS")),
    125: Entry(C, (_SCHED_PROPS,), check=(HW + "create_context",),
               reason="OsHwScheduling.create_context calls DxgkDdiSetContextSchedulingProperties before the context can "
                      "submit anything"),
    126: Entry(C, (_BANDS, _SCHED_PROPS), check=(HW + "set_properties",),
               reason="the band is the OS's input: the scenario schema refuses a FOCUS or REALTIME band for a "
                      "process without the privilege (classes high and realtime hold it), as Windows refuses the "
                      "request before any DDI, so every DxgkDdiSetContextSchedulingProperties keeps the rule, and "
                      "the registered rule re-checks it"),
    127: Entry(C, (_BANDS, _PRIORITY_BANDS), check=("wddmsim.gpu.scheduler.GpuScheduler",),
               name="IdleBandNeverPreempts",
               words="A context in the IDLE band never preempts a context of another band.",
               reason="the choice is made by the hardware scheduler of the GPU model (firmware in Windows), "
                      "which never lets an IDLE context preempt; the driver only passes the band"),
}
