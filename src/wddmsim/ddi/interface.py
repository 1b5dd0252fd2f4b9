"""The two sides of the DDI: the entry points a display miniport driver implements (``DxgkDdi*``),
the callbacks the OS hands it at start (``DxgkCb*``), and the contract of each entry point.

A driver is any object with the entry points its DDI version and capabilities call for. The OS
calls only those entry points and never looks inside the driver; the driver reaches the OS only
through the :class:`DxgkrnlInterface` it is handed in ``DxgkDdiStartDevice`` and the GPU only
through the register interface in the :class:`DeviceInfo` it is constructed with.

Calls carry the real ``DXGKARG_*`` ctypes structures (:mod:`wddmsim.ddi.layout`, the MSVC layout
of ``d3dkmddi.h`` for the driver's interface version). Pointers inside them are addresses in the
simulated system memory; handles are numbers.

:data:`CONTRACTS` holds, per entry point, what the Windows documentation says a driver can rely on
and must keep: the IRQL it is called at, the argument structure and how long its memory lives, the
statuses it may return and what Windows does with any other, and when a driver has to implement
it. The protocol classes below take their docstrings' contract paragraph from that table, so the
documentation and the OS's checks (:mod:`wddmsim.dxgkrnl.gateway`) cannot disagree.
:func:`required_entry_points` says which entry points a driver must have for the DDI version and
capabilities it reports.

Microsoft's pages for each entry point: https://learn.microsoft.com/windows-hardware/drivers/ddi/
followed by the ``page`` of its contract (for example ``d3dkmddi/nc-d3dkmddi-dxgkddi_submitcommand``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, runtime_checkable

#: Where Microsoft's DDI reference lives; a contract's ``page`` is relative to it.
DDI_REFERENCE = "https://learn.microsoft.com/windows-hardware/drivers/ddi/"

PASSIVE_LEVEL = "PASSIVE_LEVEL"
DISPATCH_LEVEL = "DISPATCH_LEVEL"
DIRQL = "DIRQL"

#: Argument memory that lives only during the call (the common case).
DURING_CALL = ("The argument structure, and everything it points to that the OS owns, is valid only "
               "during the call; the driver keeps none of its pointers.")


@dataclass(frozen=True)
class DdiContract:
    """What the documentation promises and demands of one entry point.

    ``irql``: the IRQL the OS calls it at. ``struct``: its argument structure (None: none).
    ``returns``: the status names the contract allows (``("BOOLEAN",)`` or ``("VOID",)`` for the
    two entry points that return no NTSTATUS). ``otherwise``: what Windows does when the driver
    returns anything else. ``lifetime``: how long the argument memory lives. ``need``: when a driver
    must implement it (``"always"``, ``"version:<name>"`` from that DDI version on,
    ``"caps:<Name>"`` when it reports that capability). ``page``: Microsoft's reference page.
    ``summary``: what the entry point is for, in one sentence."""

    name: str
    irql: str
    struct: str | None
    returns: tuple[str, ...]
    otherwise: str
    need: str
    page: str
    summary: str
    lifetime: str = DURING_CALL
    first: str = "hAdapter"

    @property
    def url(self) -> str:
        return DDI_REFERENCE + self.page

    def paragraph(self) -> str:
        """The contract as a docstring paragraph."""
        if self.returns in (("BOOLEAN",), ("VOID",)):
            ret = f"Returns {self.returns[0]}."
        else:
            ret = "Returns " + " or ".join(self.returns) + "; " + self.otherwise
        need = {"always": "Every driver implements it."}.get(self.need)
        if need is None:
            kind, _, what = self.need.partition(":")
            need = (f"Required from DDI version {what} on." if kind == "version"
                    else f"Required when the driver reports {what}.")
        return (f"Contract: called at {self.irql}"
                + (f" with a {self.struct}" if self.struct else "") + f". {self.lifetime} {ret} {need} "
                f"Reference: {self.url}")


def _c(name: str, irql: str, struct: str | None, returns: tuple[str, ...], otherwise: str, need: str, page: str,
       summary: str, **kw) -> DdiContract:
    return DdiContract(name, irql, struct, returns, otherwise, need, page, summary, **kw)


_ANY_ERROR = ("any error status, which the OS hands to the caller (the operation fails; nothing stops).")
_TO_APP = "an error fails the application's call with that status."
_ALWAYS_SUCCEEDS = ("the driver should always succeed; the OS carries on as if it had (a cancel that failed "
                    "cancelled nothing, a log update that failed wrote nothing).")

#: Every entry point the OS model calls, by name.
CONTRACTS: dict[str, DdiContract] = {c.name: c for c in (
    # -- adapter ----------------------------------------------------------------------------------
    _c("DxgkDdiStartDevice", PASSIVE_LEVEL, None, ("STATUS_SUCCESS",),
       "any other status and the adapter does not start.", "always", "dispmprt/nc-dispmprt-dxgkddi_start_device",
       "Start the adapter: keep the OS's callback interface, set up rings, fence memory and interrupts.",
       lifetime="The DxgkrnlInterface stays valid for the life of the adapter.", first="DxgkInterface"),
    _c("DxgkDdiQueryAdapterInfo", PASSIVE_LEVEL, "DXGKARG_QUERYADAPTERINFO", ("STATUS_SUCCESS",),
       "any other status and the adapter does not start.", "always",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_queryadapterinfo",
       "Report the driver's capabilities (DXGK_DRIVERCAPS), its segments (DXGK_QUERYSEGMENTOUT) and the "
       "other adapter facts the OS asks for by type."),
    _c("DxgkDdiGetNodeMetadata", PASSIVE_LEVEL, "DXGK_NODEMETADATA", ("STATUS_SUCCESS", "STATUS_INVALID_PARAMETER"),
       "any other status and the adapter does not start. STATUS_INVALID_PARAMETER only for a node "
       "ordinal outside the adapter.", "version:wddm1_3",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_getnodemetadata",
       "Describe one node: its engine type, friendly name and (WDDM 2.2 and later) scheduling flags.",
       first="hAdapter"),
    # -- devices and contexts -------------------------------------------------------------------------
    _c("DxgkDdiCreateDevice", PASSIVE_LEVEL, "DXGKARG_CREATEDEVICE", ("STATUS_SUCCESS", "STATUS_NO_MEMORY"),
       _TO_APP, "always", "d3dkmddi/nc-d3dkmddi-dxgkddi_createdevice",
       "Create the driver's device object for an application's device; a driver that is not "
       "multiple-engine aware also answers its DMA buffer sizes in pInfo."),
    _c("DxgkDdiCreateContext", PASSIVE_LEVEL, "DXGKARG_CREATECONTEXT",
       ("STATUS_SUCCESS", "STATUS_NO_MEMORY", "STATUS_GRAPHICS_DRIVER_MISMATCH"),
       "any other status breaks the contract (the driver must support any number of contexts); the "
       "application's call fails.", "caps:MultiEngineAware", "d3dkmddi/nc-d3dkmddi-dxgkddi_createcontext",
       "Create a context on a node and say how large its DMA buffer, private data, allocation list and "
       "patch list are.", first="hDevice"),
    _c("DxgkDdiDestroyContext", PASSIVE_LEVEL, None, ("STATUS_SUCCESS",),
       "other statuses are logged and ignored.", "caps:MultiEngineAware",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_destroycontext",
       "Forget a context; the OS calls it once none of its packets is on the hardware.", first="hContext"),
    # -- building DMA buffers ----------------------------------------------------------------------------
    _c("DxgkDdiRender", PASSIVE_LEVEL, "DXGKARG_RENDER", ("STATUS_SUCCESS", "error statuses"),
       _TO_APP, "caps:PhysicalSubmission", "d3dkmddi/nc-d3dkmddi-dxgkddi_render",
       "Validate a user-mode command buffer and turn it into a DMA buffer with its patch list and "
       "private data.",
       lifetime=("The command buffer, lists and DMA buffer are valid only during the call; the driver "
                 "advances pDmaBuffer and pPatchLocationListOut past what it wrote."), first="hContext"),
    _c("DxgkDdiPresent", PASSIVE_LEVEL, "DXGKARG_PRESENT", ("STATUS_SUCCESS", "error statuses"),
       _TO_APP, "caps:PhysicalSubmission", "d3dkmddi/nc-d3dkmddi-dxgkddi_present",
       "Build the DMA buffer of a present: a blt, or a flip of the source allocation.",
       lifetime=("The lists and DMA buffer are valid only during the call; the driver advances pDmaBuffer "
                 "and pPatchLocationListOut past what it wrote."), first="hContext"),
    _c("DxgkDdiPatch", PASSIVE_LEVEL, "DXGKARG_PATCH", ("STATUS_SUCCESS",),
       "anything else is bug check 0x119 (parameter 1 = 0x3).", "caps:PhysicalSubmission",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_patch",
       "Write the final allocation addresses into the submitted range of a DMA buffer; may run again "
       "on the same buffer after a preemption."),
    # -- submission and completion ------------------------------------------------------------------------
    _c("DxgkDdiSubmitCommand", DISPATCH_LEVEL, "DXGKARG_SUBMITCOMMAND", ("STATUS_SUCCESS",),
       "anything else is bug check 0x119 (parameter 1 = 0x2, parameter 2 = the status).", "always",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_submitcommand",
       "Queue a DMA buffer (or a range of one) to the node's hardware with SubmissionFenceId, so that "
       "its completion can be reported with that fence.",
       lifetime=("The structure is valid only during the call; the DMA buffer and its private data stay "
                 "valid until the OS retires (or cancels) the packet.")),
    _c("DxgkDdiSubmitCommandVirtual", PASSIVE_LEVEL, "DXGKARG_SUBMITCOMMANDVIRTUAL",
       ("STATUS_SUCCESS", "STATUS_INVALID_PARAMETER"),
       "STATUS_INVALID_PARAMETER puts the device in error and its fence counts as completed after the "
       "packets before it; anything else is bug check 0x119 (parameter 1 = 0x2).", "version:wddm2_0",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_submitcommandvirtual",
       "Queue a DMA buffer at a GPU virtual address of the context's process (GPU virtual addressing).",
       lifetime=("The structure is valid only during the call; the buffer and its private data stay "
                 "valid until the OS retires the packet.")),
    _c("DxgkDdiInterruptRoutine", DIRQL, None, ("BOOLEAN",), "", "always",
       "dispmprt/nc-dispmprt-dxgkddi_interrupt_routine",
       "The ISR: FALSE at once if the adapter did not interrupt; else dismiss the interrupt, report "
       "events with DxgkCbNotifyInterrupt, queue the DPC with DxgkCbQueueDpc and return TRUE. It may "
       "call no other DxgkCb function.", lifetime="", first="MiniportDeviceContext"),
    _c("DxgkDdiDpcRoutine", DISPATCH_LEVEL, None, ("VOID",), "", "always",
       "dispmprt/nc-dispmprt-dxgkddi_dpc_routine",
       "The DPC the ISR queued: it calls DxgkCbNotifyDpc so that the scheduler processes what the ISR "
       "reported.", lifetime="", first="MiniportDeviceContext"),
    _c("DxgkDdiControlInterrupt", PASSIVE_LEVEL, None, ("STATUS_SUCCESS", "STATUS_NOT_IMPLEMENTED"),
       "STATUS_NOT_IMPLEMENTED is the answer for any InterruptType other than DXGK_INTERRUPT_CRTC_VSYNC, which "
       "the OS never asks in a run (wddmsim verify's interrupts/control_interrupt case does; any other answer "
       "breaks rule 49, judged on every call); other statuses are logged and the OS carries on with the state "
       "it asked for (the driver may keep the interrupt on for its own needs).", "always",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_controlinterrupt",
       "Enable (TRUE) or disable (FALSE) an interrupt type; the OS passes only DXGK_INTERRUPT_CRTC_VSYNC. "
       "Enabled, the driver reports CRTC_VSYNC at every vertical retrace, with the address now scanned out.",
       lifetime=""),
    _c("DxgkDdiSetVidPnSourceAddress", DIRQL, "DXGKARG_SETVIDPNSOURCEADDRESS",
       ("STATUS_SUCCESS", "STATUS_INVALID_PARAMETER"),
       "STATUS_INVALID_PARAMETER only with Flags.SharedPrimaryTransition (rule 86); any other failure and the "
       "flip is not shown (the OS reports it dropped).", "caps:FlipOnVSyncMmIo",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_setvidpnsourceaddress",
       "Program the VidPn source's scan-out address (an MMIO flip): with Flags.FlipOnNextVSync it takes effect "
       "at the next vsync, after which the driver reports CRTC_VSYNC with the new address and calls "
       "DxgkCbNotifyDpc; with Flags.FlipImmediate at once.", first="hAdapter"),
    _c("DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3", DIRQL,
       "DXGKARG_SETVIDPNSOURCEADDRESSWITHMULTIPLANEOVERLAY3", ("STATUS_SUCCESS", "STATUS_RETRY"),
       "STATUS_RETRY leaves the flip unmade: with OutputFlags.HwFlipQueueDrainNeeded (the hardware flip "
       "queue) the OS submits it again once the pending flips are done, and a second STATUS_RETRY with none "
       "pending is bug check 0x119 (parameter 1 = 0xB); otherwise (PrePresentNeeded: call again at "
       "PASSIVE_LEVEL) the model's OS does not call again and reports the planes dropped; anything else is bug "
       "check 0x119 (parameter 1 = 0xB, FAILED_SETVIDPNSOURCEMPO_COMMAND).",
       "caps:MultiPlaneOverlay3", "d3dkmddi/nc-d3dkmddi-dxgkddi_setvidpnsourceaddresswithmultiplaneoverlay3",
       "Program the overlay planes of one VidPn source: each plane's surface and enable bit, at once "
       "(FlipImmediate) or at the next vsync (FlipOnNextVSync); the driver reports each plane that latched "
       "at a vsync with CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2 naming its PresentId.",
       lifetime=("The structure, its planes and everything they point to are valid only during the call; the "
                 "driver writes OutputFlags and each plane's OutputFlags before it returns.")),
    _c("DxgkDdiCheckMultiPlaneOverlaySupport3", PASSIVE_LEVEL, "DXGKARG_CHECKMULTIPLANEOVERLAYSUPPORT3",
       ("STATUS_SUCCESS",), "the driver should always succeed; the OS takes any other status as not supported.",
       "caps:MultiPlaneOverlay3", "d3dkmddi/nc-d3dkmddi-dxgkddi_checkmultiplaneoverlaysupport3",
       "Say whether a multiplane-overlay configuration (planes with their attributes, post-composition "
       "transforms) can be shown: Supported, else ReturnInfo.FailingPlane and TryAgain.",
       lifetime=("The structure and the planes it points to are valid only during the call; the driver writes "
                 "Supported and ReturnInfo.")),
    # -- the hardware flip queue (WDDM 3.0; "Hardware flip queue") --------------------------------------
    _c("DxgkDdiSetFlipQueueLogBuffer", PASSIVE_LEVEL, "DXGKARG_SETFLIPQUEUELOGBUFFER", ("STATUS_SUCCESS",),
       _ALWAYS_SUCCEEDS, "caps:HwFlipQueue", "d3dkmddi/nc-d3dkmddi-dxgkddi_setflipqueuelogbuffer",
       "Take the flip queue log of one plane of a VidPn source: a circular array of NumberOfEntries "
       "DXGK_FLIPQUEUE_LOG_ENTRY where the driver writes each completed or cancelled flip.",
       lifetime=("The structure is valid only during the call; the log buffer it names stays valid, and the "
                 "driver's to write, until the OS gives the plane another.")),
    _c("DxgkDdiSetInterruptTargetPresentId", DIRQL, "DXGKARG_SETINTERRUPTTARGETPRESENTID", ("STATUS_SUCCESS",),
       _ALWAYS_SUCCEEDS, "caps:HwFlipQueue", "d3dkmddi/nc-d3dkmddi-dxgkddi_setinterrupttargetpresentid",
       "Say from which PresentId of a plane the vsync interrupt is needed: 0 every vsync, UINT64_MAX none "
       "(keeping the vsync phase), else once the PresentId scanned out reaches it. The driver keeps the latest "
       "value while DxgkDdiControlInterrupt has the vsync interrupt off."),
    _c("DxgkDdiCancelFlips", DIRQL, "DXGKARG_CANCELFLIPS", ("STATUS_SUCCESS",), _ALWAYS_SUCCEEDS,
       "caps:HwFlipQueue", "d3dkmddi/nc-d3dkmddi-dxgkddi_cancelflips",
       "Take back queued flips, per plane the run from PresentIdCancelRequested to the last PresentId "
       "submitted, answering in PresentIdCancelled the first it cancelled (0: none); the ones before it are "
       "still completed and logged as usual.",
       lifetime=("The structure and the planes it points to are valid only during the call; the driver writes "
                 "each plane's PresentIdCancelled.")),
    _c("DxgkDdiUpdateFlipQueueLog", DIRQL, "DXGKARG_UPDATEFLIPQUEUELOG", ("STATUS_SUCCESS",), _ALWAYS_SUCCEEDS,
       "caps:HwFlipQueue", "d3dkmddi/nc-d3dkmddi-dxgkddi_updateflipqueuelog",
       "Write the flips a plane completed or cancelled since the last report into its flip queue log now, "
       "and answer FirstFreeFlipQueueLogEntryIndex, as a vsync report would."),
    _c("DxgkDdiQueryCurrentFence", PASSIVE_LEVEL, "DXGKARG_QUERYCURRENTFENCE", ("STATUS_SUCCESS",),
       "anything else breaks the contract.", "always", "d3dkmddi/nc-d3dkmddi-dxgkddi_querycurrentfence",
       "Answer the node's last completed fence; a newer completed fence than the last reported is "
       "first reported through DxgkCbNotifyInterrupt (inside DxgkCbSynchronizeExecution)."),
    _c("DxgkDdiCancelCommand", PASSIVE_LEVEL, "DXGKARG_CANCELCOMMAND", ("STATUS_SUCCESS",),
       "anything else is bug check 0x119 (parameter 1 = 0x9).", "caps:CancelCommandAware",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_cancelcommand",
       "Free what the driver holds for a packet that will never reach the hardware."),
    # -- preemption -------------------------------------------------------------------------------------
    _c("DxgkDdiPreemptCommand", DISPATCH_LEVEL, "DXGKARG_PREEMPTCOMMAND", ("STATUS_SUCCESS",),
       "anything else is bug check 0x119 (parameter 1 = 0x2).", "caps:PreemptionAware",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_preemptcommand",
       "Ask the node's hardware to stop at its preemption granularity and answer with DMA_PREEMPTED "
       "carrying PreemptionFenceId; with nothing left to preempt, report it at once."),
    # -- paging -------------------------------------------------------------------------------------------
    _c("DxgkDdiBuildPagingBuffer", PASSIVE_LEVEL, "DXGKARG_BUILDPAGINGBUFFER",
       ("STATUS_SUCCESS", "STATUS_GRAPHICS_ALLOCATION_BUSY", "STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER"),
       "anything else is bug check 0x119 (parameter 1 = 0x5).", "always",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_buildpagingbuffer",
       "Write the commands of one paging operation (transfer, fill, discard, aperture mapping, page-table "
       "update, TLB flush) into a paging buffer.",
       lifetime=("The structure is valid only during the call; the driver advances pDmaBuffer past what it "
                 "wrote and keeps MultipassOffset for its next call on the same operation.")),
    # -- recovery -----------------------------------------------------------------------------------------
    _c("DxgkDdiQueryDependentEngineGroup", PASSIVE_LEVEL, "DXGKARG_QUERYDEPENDENTENGINEGROUP",
       ("STATUS_SUCCESS",), "anything else promotes the engine reset to an adapter reset.",
       "caps:SupportPerEngineTDR", "d3dkmddi/nc-d3dkmddi-dxgkddi_querydependentenginegroup",
       "Say which nodes an engine reset of this node would also reset (the mask includes the node)."),
    _c("DxgkDdiQueryEngineStatus", PASSIVE_LEVEL, "DXGKARG_QUERYENGINESTATUS", ("STATUS_SUCCESS",),
       "it should always succeed; anything else promotes the engine reset to an adapter reset.",
       "caps:SupportPerEngineTDR", "d3dkmddi/nc-d3dkmddi-dxgkddi_queryenginestatus",
       "Say whether a node is making progress (EngineStatus.Responsive)."),
    _c("DxgkDdiResetEngine", PASSIVE_LEVEL, "DXGKARG_RESETENGINE", ("STATUS_SUCCESS", "error statuses"),
       "an error promotes the engine reset to an adapter reset.", "caps:SupportPerEngineTDR",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_resetengine",
       "Reset one engine and answer the fence of the packet it abandoned (LastAbortedFenceId); the "
       "node's queue must be empty and ready when it returns."),
    _c("DxgkDdiResetFromTimeout", PASSIVE_LEVEL, None, ("STATUS_SUCCESS",),
       "anything else is bug check 0x116 VIDEO_TDR_FAILURE.", "always",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_resetfromtimeout",
       "Reset the whole GPU after a timeout; every node's completed fence becomes its last submitted one.",
       lifetime=""),
    _c("DxgkDdiRestartFromTimeout", PASSIVE_LEVEL, None, ("STATUS_SUCCESS",),
       "anything else is bug check 0x116 VIDEO_TDR_FAILURE.", "always",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_restartfromtimeout",
       "The OS finished cleaning up after the reset; the GPU may be used again.", lifetime=""),
    # -- GPU virtual addressing (WDDM 2.0) ---------------------------------------------------------------
    _c("DxgkDdiCreateProcess", PASSIVE_LEVEL, "DXGKARG_CREATEPROCESS", ("STATUS_SUCCESS", "STATUS_NO_MEMORY"),
       _TO_APP, "version:wddm2_0", "d3dkmddi/nc-d3dkmddi-dxgkddi_createprocess",
       "Create the driver's object for a process (its handle names the address space)."),
    _c("DxgkDdiSetRootPageTable", PASSIVE_LEVEL, "DXGKARG_SETROOTPAGETABLE", ("VOID",), "", "version:wddm2_0",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_setrootpagetable",
       "Tell the driver the root page table a context's buffers run in."),
    # -- hardware scheduling (WDDM 2.x) ---------------------------------------------------------------------
    _c("DxgkDdiSetupPriorityBands", PASSIVE_LEVEL, "DXGKARG_SETUPPRIORITYBANDS", ("STATUS_SUCCESS",),
       "anything else and the adapter does not start.", "caps:HardwareScheduling",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_setupprioritybands",
       "Give the GPU scheduler the priority bands' grace periods, quanta and the normal band's share."),
    _c("DxgkDdiCreateHwContext", PASSIVE_LEVEL, "DXGKARG_CREATEHWCONTEXT", ("STATUS_SUCCESS", "STATUS_NO_MEMORY"),
       _TO_APP, "caps:HardwareScheduling", "d3dkmddi/nc-d3dkmddi-dxgkddi_createhwcontext",
       "Create a hardware context on a node.", first="hDevice"),
    _c("DxgkDdiDestroyHwContext", PASSIVE_LEVEL, None, ("STATUS_SUCCESS",),
       "other statuses are logged and ignored.", "caps:HardwareScheduling",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_destroyhwcontext",
       "Destroy a hardware context whose queues are gone.", first="hHwContext"),
    _c("DxgkDdiSetContextSchedulingProperties", PASSIVE_LEVEL, "DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES",
       ("STATUS_SUCCESS",), _TO_APP, "caps:HardwareScheduling",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_setcontextschedulingproperties",
       "Give a hardware context its band, priority, quantum and grace periods (before its first "
       "submission, and on every change)."),
    _c("DxgkDdiCreateHwQueue", PASSIVE_LEVEL, "DXGKARG_CREATEHWQUEUE", ("STATUS_SUCCESS", "STATUS_NO_MEMORY"),
       _TO_APP, "caps:HardwareScheduling", "d3dkmddi/nc-d3dkmddi-dxgkddi_createhwqueue",
       "Create a hardware queue of a hardware context, with its progress fence.", first="hHwContext"),
    _c("DxgkDdiDestroyHwQueue", PASSIVE_LEVEL, None, ("STATUS_SUCCESS",),
       "other statuses are logged and ignored.", "caps:HardwareScheduling",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_destroyhwqueue", "Destroy a hardware queue.", first="hHwQueue"),
    _c("DxgkDdiSubmitCommandToHwQueue", DISPATCH_LEVEL, "DXGKARG_SUBMITCOMMANDTOHWQUEUE",
       ("STATUS_SUCCESS", "STATUS_INVALID_PARAMETER"),
       "STATUS_INVALID_PARAMETER puts the device in error; anything else is bug check 0x119 "
       "(parameter 1 = 0x2).", "caps:HardwareScheduling",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_submitcommandtohwqueue",
       "Queue a command buffer on a hardware queue; its progress fence reaches HwQueueProgressFenceId "
       "when it is done.",
       lifetime=("pDmaBufferPrivateData is freed when the call returns: the driver must not keep or read it "
                 "afterwards. The command buffer stays valid until its progress fence passes it.")),
    _c("DxgkDdiSignalMonitoredFence", PASSIVE_LEVEL, "DXGKARG_SIGNALMONITOREDFENCE", ("STATUS_SUCCESS",),
       _ANY_ERROR, "caps:HardwareScheduling", "d3dkmddi/nc-d3dkmddi-dxgkddi_signalmonitoredfence",
       "Append the GPU's write of a monitored-fence value to a kernel-built buffer.", first="hContext"),
    _c("DxgkDdiPresentToHwQueue", PASSIVE_LEVEL, "DXGKARG_PRESENT", ("STATUS_SUCCESS", "error statuses"),
       _TO_APP, "caps:HardwareScheduling", "d3dkmddi/nc-d3dkmddi-dxgkddi_presenttohwqueue",
       "Build the DMA buffer of a present for a hardware queue.", first="hHwQueue"),
    _c("DxgkDdiSuspendContext", PASSIVE_LEVEL, "DXGKARG_SUSPENDCONTEXT", ("STATUS_SUCCESS", "STATUS_PENDING"),
       _ANY_ERROR, "caps:HardwareScheduling", "d3dkmddi/nc-d3dkmddi-dxgkddi_suspendcontext",
       "Take a hardware context off the GPU: STATUS_SUCCESS if it was already suspended, else "
       "STATUS_PENDING and a SUSPEND_CONTEXT_COMPLETED interrupt with contextSuspendFence later."),
    _c("DxgkDdiResumeContext", PASSIVE_LEVEL, "DXGKARG_RESUMECONTEXT", ("STATUS_SUCCESS",), _ANY_ERROR,
       "caps:HardwareScheduling", "d3dkmddi/nc-d3dkmddi-dxgkddi_resumecontext",
       "Let the GPU schedule a suspended hardware context again."),
    _c("DxgkDdiResetHwEngine", PASSIVE_LEVEL, "DXGKARG_RESETHWENGINE", ("STATUS_SUCCESS",),
       "anything else promotes the reset to an adapter reset.", "caps:HardwareScheduling",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_resethwengine",
       "Reset an engine under hardware scheduling, calling DxgkCbInvalidateHwContext for each context "
       "the reset hit."),
    _c("DxgkDdiResumeHwEngine", PASSIVE_LEVEL, "DXGKARG_RESUMEHWENGINE", ("STATUS_SUCCESS",),
       "anything else promotes the reset to an adapter reset.", "caps:HardwareScheduling",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_resumehwengine",
       "Let a reset engine schedule its hardware queues again."),
    # -- native GPU fences (WDDM 3.2; "Native GPU fence objects") --------------------------------------
    _c("DxgkDdiCreateNativeFence", PASSIVE_LEVEL, "DXGKARG_CREATENATIVEFENCE", ("STATUS_SUCCESS", "error statuses"),
       _TO_APP, "caps:NativeGpuFence", "d3dkmddi/nc-d3dkmddi-dxgkddi_createnativefence",
       "Create the driver's tracking object of a native GPU fence; hGlobalNativeFence comes in as the OS's "
       "handle and goes out as the driver's."),
    _c("DxgkDdiDestroyNativeFence", PASSIVE_LEVEL, "DXGKARG_DESTROYNATIVEFENCE", ("STATUS_SUCCESS",),
       "other statuses are logged and ignored.", "caps:NativeGpuFence",
       "d3dkmddi/nc-d3dkmddi-dxgkddi_destroynativefence", "Forget a native GPU fence."),
    _c("DxgkDdiUpdateMonitoredValues", DIRQL, "DXGKARG_UPDATEMONITOREDVALUES", ("STATUS_SUCCESS",),
       "anything else is bug check 0x119 (parameter 1 = 0x12, FAILED_UPDATE_MONITORED_VALUE).",
       "caps:NativeGpuFence", "d3dkmddi/nc-d3dkmddi-dxgkddi_updatemonitoredvalues",
       "Write new MonitoredValues for a batch of native fences, synchronized with the ISR; a CurrentValue "
       "read after it returns was written by the GPU after it saw the new MonitoredValue.",
       lifetime=("The arrays, and the MonitoredValueKernelCpuVa pointers in particular, are valid only during "
                 "the call: the driver keeps none of them."), first="pUpdateMonitoredValues"),
    _c("DxgkDdiUpdateCurrentValuesFromCpu", DISPATCH_LEVEL, "DXGKARG_UPDATECURRENTVALUESFROMCPU", ("STATUS_SUCCESS",),
       "anything else is bug check 0x119 (parameter 1 = 0x13, FAILED_UPDATE_CURRENT_VALUE).",
       "caps:NativeGpuFence", "d3dkmddi/nc-d3dkmddi-dxgkddi_updatecurrentvaluesfromcpu",
       "Write new CurrentValues for a batch of native fences signalled from the CPU, then have the GPU "
       "release the hardware queues those values satisfy.",
       lifetime=("The arrays, and the CurrentValueKernelCpuVa pointers in particular, are valid only during the "
                 "call: the driver keeps none of them."), first="pUpdateCurrentValuesFromCpu"),
)}


def _contract(fn: Callable) -> Callable:
    """Append the entry point's contract paragraph (from :data:`CONTRACTS`) to its docstring."""
    c = CONTRACTS[fn.__name__]
    head = (fn.__doc__ or c.summary).strip()
    fn.__doc__ = f"{head}\n\n{c.paragraph()}"
    return fn


#: Capability names a contract's ``need`` may name, and how to read them from what the OS learnt
#: at adapter start (its DXGK_DRIVERCAPS plus the OS's own choices).
NEED_CAPS = ("MultiEngineAware", "PreemptionAware", "CancelCommandAware", "SupportPerEngineTDR",
             "PhysicalSubmission", "HardwareScheduling", "NativeGpuFence", "FlipOnVSyncMmIo",
             "MultiPlaneOverlay3", "HwFlipQueue")


#: The rule that names a capability's entry points, quoted in the reason. Rule 118:
#: Microsoft's "TDR changes in Windows 8" says a driver that sets SupportPerEngineTDR implements
#: DxgkDdiQueryDependentEngineGroup, DxgkDdiQueryEngineStatus and DxgkDdiResetEngine.
_CAP_RULES = {"SupportPerEngineTDR": " (rule 118)"}
#: How a ``need`` that is no single capability bit reads in a reason.
_NEED_WORDS = {
    "PhysicalSubmission": "the OS submits physical DMA buffers to this driver",
    "HardwareScheduling": "the OS runs this adapter with hardware scheduling",
    # DxgkDdiCheckMultiPlaneOverlaySupport3's page: WDDM 2.1 and later drivers that support
    # multiplane overlays implement it (and the flip DDI of the same form).
    "MultiPlaneOverlay3": ("the driver reports DXGK_DRIVERCAPS.SupportMultiPlaneOverlay with DDI version wddm2_1 "
                           "or later"),
    # "Hardware flip queue": a driver that supports it provides these in DRIVER_INITIALIZATION_DATA.
    "HwFlipQueue": ("the driver reports DXGK_DRIVERCAPS.MaxHwQueuedFlips above 1 and the OS enabled the hardware "
                    "flip queue (WDDM 3.0 or later, hardware scheduling)"),
}


def required_entry_points(version_value: int, caps: Mapping[str, bool] | None = None) -> list[tuple[str, str]]:
    """The entry points a driver of DDI version ``version_value`` (a ``DXGKDDI_INTERFACE_VERSION``)
    must implement, with the reason: ``[(name, why), ...]``. Without ``caps`` only the version's
    needs are listed; with them (a mapping of :data:`NEED_CAPS` names to bools), the capabilities'
    too."""
    from .versions import ddi_version

    out = []
    for c in CONTRACTS.values():
        kind, _, what = c.need.partition(":")
        if c.need == "always":
            out.append((c.name, "every driver implements it"))
        elif kind == "version":
            if version_value >= ddi_version(what).value:
                out.append((c.name, f"a DDI {what} or later driver implements it"))
        elif kind == "caps" and caps is not None and caps.get(what):
            out.append((c.name, f"the driver reports {what}{_CAP_RULES.get(what, '')}"
                        if what not in _NEED_WORDS else _NEED_WORDS[what]))
    return out


@dataclass(frozen=True)
class DeviceInfo:
    """What a driver is constructed with: the one object that stands for the device it drives.

    Windows hands a miniport its device's resources through ``DxgkCbGetDeviceInformation``
    (``DXGK_DEVICE_INFO``) and its settings through its registry key; the model hands both at once.

    ``gpu``: the GPU's register interface (:class:`wddmsim.gpu.mmio.Mmio`, documented in
    docs/gpu-programming.md): the only way to the hardware. ``memory``: the CPU's view of physical
    system memory, where the OS's buffers, the rings and the fence slots live. ``settings``: the
    driver's settings table from the scenario (``[driver]``, without its ``class`` key), empty when
    the scenario has none: the model's registry key."""

    gpu: Any
    memory: Any
    settings: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class DxgkrnlInterface(Protocol):
    """What the OS gives a driver at ``DxgkDdiStartDevice`` (``DXGKRNL_INTERFACE`` and the kernel
    services a miniport uses).

    ``DeviceHandle`` is the OS's handle for the adapter, passed back in every callback.
    """

    DeviceHandle: int

    def DxgkCbNotifyInterrupt(self, hAdapter: int, pNotifyInterruptData: Any) -> None:
        """Report an interrupt event (a ``DXGKARGCB_NOTIFY_INTERRUPT_DATA``). Only at DIRQL: from the
        ISR or a DxgkCbSynchronizeExecution routine, never re-entrantly. In one ISR pass, DMA events
        come before CRTC_VSYNC ones. The ISR that calls it must queue a DPC before it returns, and
        that DPC must call DxgkCbNotifyDpc. The structure is read during the call only."""

    def DxgkCbQueueDpc(self, hAdapter: int) -> bool:
        """Queue the driver's DPC (from the ISR); FALSE, and nothing changes, while one is pending:
        at most one DPC is pending per adapter."""

    def DxgkCbNotifyDpc(self, hAdapter: int) -> None:
        """From the DPC (DISPATCH_LEVEL): let the scheduler process what DxgkCbNotifyInterrupt reported
        since the last DPC. Never from the ISR."""

    def DxgkCbSynchronizeExecution(
        self, hAdapter: int, SynchronizeRoutine: Callable[[Any], bool], Context: Any, MessageNumber: int
    ) -> tuple[int, bool]:
        """Run ``SynchronizeRoutine(Context)`` synchronised with the ISR (at DIRQL); returns
        (STATUS_SUCCESS, the routine's BOOLEAN)."""

    def MmAllocateContiguousMemory(self, NumberOfBytes: int) -> int:
        """Page-aligned, physically contiguous, nonpaged system memory; returns its address."""

    def DxgkCbInvalidateHwContext(self, pInvalidateHwContext: Any) -> None:
        """From DxgkDdiResetHwEngine (hardware scheduling): a running hardware context the reset hit
        (``DXGKARGCB_INVALIDATEHWCONTEXT.hHwContext``, Dxgkrnl's handle); its device goes to error."""

    def DxgkCbIsFeatureEnabled(self, hAdapter: int, FeatureId: str) -> bool:
        """Whether the OS enabled an optional feature for this adapter (DxgkCbIsFeatureEnabled2 with
        the DXGK_FEATURE_ID named without its prefix, e.g. ``"NATIVE_FENCE"`` or ``"HWFLIPQUEUE"``; the
        argument structure is not modelled). A driver asks before it reports the feature's capability."""

    def KeQueryPerformanceCounter(self) -> tuple[int, int]:
        """The kernel's performance counter: ``(count, frequency)`` (ticks per second). The hardware flip
        queue's times (TargetFlipTime, a log entry's PresentTimestamp) are in its ticks. Any IRQL."""


class Miniport(Protocol):
    """The entry points of a display miniport driver on the packet-scheduling path."""

    @_contract
    def DxgkDdiStartDevice(self, DxgkInterface: DxgkrnlInterface) -> int: ...

    @_contract
    def DxgkDdiQueryAdapterInfo(self, hAdapter: int, pQueryAdapterInfo: Any) -> int: ...

    @_contract
    def DxgkDdiGetNodeMetadata(self, hAdapter: int, NodeOrdinalAndAdapterIndex: int, pGetNodeMetadata: Any) -> int: ...

    @_contract
    def DxgkDdiCreateDevice(self, hAdapter: int, pCreateDevice: Any) -> int: ...

    @_contract
    def DxgkDdiCreateContext(self, hDevice: int, pCreateContext: Any) -> int: ...

    @_contract
    def DxgkDdiRender(self, hContext: int, pRender: Any) -> int: ...

    @_contract
    def DxgkDdiPresent(self, hContext: int, pPresent: Any) -> int: ...

    @_contract
    def DxgkDdiPatch(self, hAdapter: int, pPatch: Any) -> int: ...

    @_contract
    def DxgkDdiSubmitCommand(self, hAdapter: int, pSubmitCommand: Any) -> int: ...

    @_contract
    def DxgkDdiInterruptRoutine(self, MiniportDeviceContext: int, MessageNumber: int) -> bool: ...

    @_contract
    def DxgkDdiDpcRoutine(self, MiniportDeviceContext: int) -> None: ...

    @_contract
    def DxgkDdiControlInterrupt(self, hAdapter: int, InterruptType: int, EnableInterrupt: bool) -> int: ...

    @_contract
    def DxgkDdiSetVidPnSourceAddress(self, hAdapter: int, pSetVidPnSourceAddress: Any) -> int: ...

    @_contract
    def DxgkDdiQueryCurrentFence(self, hAdapter: int, pCurrentFence: Any) -> int: ...

    @_contract
    def DxgkDdiPreemptCommand(self, hAdapter: int, pPreemptCommand: Any) -> int: ...

    @_contract
    def DxgkDdiCancelCommand(self, hAdapter: int, pCancelCommand: Any) -> int: ...

    @_contract
    def DxgkDdiDestroyContext(self, hContext: int) -> int: ...

    @_contract
    def DxgkDdiQueryDependentEngineGroup(self, hAdapter: int, pQueryDependentEngineGroup: Any) -> int: ...

    @_contract
    def DxgkDdiQueryEngineStatus(self, hAdapter: int, pQueryEngineStatus: Any) -> int: ...

    @_contract
    def DxgkDdiResetEngine(self, hAdapter: int, pResetEngine: Any) -> int: ...

    @_contract
    def DxgkDdiResetFromTimeout(self, hAdapter: int) -> int: ...

    @_contract
    def DxgkDdiRestartFromTimeout(self, hAdapter: int) -> int: ...


class PagingMiniport(Protocol):
    """VidMm's entry point: paging buffers (evictions, page-ins, aperture mappings, and with GPU
    virtual addressing the page-table updates)."""

    @_contract
    def DxgkDdiBuildPagingBuffer(self, hAdapter: int, pBuildPagingBuffer: Any) -> int: ...


class GpuVaMiniport(Protocol):
    """The entry points of GPU virtual addressing (WDDM 2.0 GpuMmu)."""

    @_contract
    def DxgkDdiCreateProcess(self, hAdapter: int, pCreateProcess: Any) -> int: ...

    @_contract
    def DxgkDdiSetRootPageTable(self, hAdapter: int, pSetPageTable: Any) -> None: ...

    @_contract
    def DxgkDdiSubmitCommandVirtual(self, hAdapter: int, pSubmitCommandVirtual: Any) -> int: ...


class HwSchMiniport(Protocol):
    """The entry points of hardware scheduling (WDDM 2.x)."""

    @_contract
    def DxgkDdiSetupPriorityBands(self, hAdapter: int, pSetupPriorityBands: Any) -> int: ...

    @_contract
    def DxgkDdiCreateHwContext(self, hDevice: int, pCreateHwContext: Any) -> int: ...

    @_contract
    def DxgkDdiDestroyHwContext(self, hHwContext: int) -> int: ...

    @_contract
    def DxgkDdiSetContextSchedulingProperties(self, hAdapter: int, pProps: Any) -> int: ...

    @_contract
    def DxgkDdiCreateHwQueue(self, hHwContext: int, pCreateHwQueue: Any) -> int: ...

    @_contract
    def DxgkDdiDestroyHwQueue(self, hHwQueue: int) -> int: ...

    @_contract
    def DxgkDdiSubmitCommandToHwQueue(self, hAdapter: int, pSubmitCommandToHwQueue: Any) -> int: ...

    @_contract
    def DxgkDdiSignalMonitoredFence(self, hContext: int, pSignalMonitoredFence: Any) -> int: ...

    @_contract
    def DxgkDdiPresentToHwQueue(self, hHwQueue: int, pPresent: Any) -> int: ...

    @_contract
    def DxgkDdiSuspendContext(self, hAdapter: int, pSuspendContext: Any) -> int: ...

    @_contract
    def DxgkDdiResumeContext(self, hAdapter: int, pResumeContext: Any) -> int: ...

    @_contract
    def DxgkDdiResetHwEngine(self, hAdapter: int, pResetHwEngine: Any) -> int: ...

    @_contract
    def DxgkDdiResumeHwEngine(self, hAdapter: int, pResumeHwEngine: Any) -> int: ...


class OverlayMiniport(Protocol):
    """The entry points of multiplane overlays, third form (WDDM 2.1 and later)."""

    @_contract
    def DxgkDdiSetVidPnSourceAddressWithMultiPlaneOverlay3(self, hAdapter: int,
                                                           pSetVidPnSourceAddressWithMultiPlaneOverlay: Any) -> int: ...

    @_contract
    def DxgkDdiCheckMultiPlaneOverlaySupport3(self, hAdapter: int, pCheckMultiPlaneOverlaySupport: Any) -> int: ...


class FlipQueueMiniport(Protocol):
    """The entry points of the hardware flip queue (WDDM 3.0, with DXGK_DRIVERCAPS.MaxHwQueuedFlips > 1)."""

    @_contract
    def DxgkDdiSetFlipQueueLogBuffer(self, hAdapter: int, pSetFlipQueueLogBuffer: Any) -> int: ...

    @_contract
    def DxgkDdiSetInterruptTargetPresentId(self, hAdapter: int, pSetInterruptTargetPresentId: Any) -> int: ...

    @_contract
    def DxgkDdiCancelFlips(self, hAdapter: int, pCancelFlips: Any) -> int: ...

    @_contract
    def DxgkDdiUpdateFlipQueueLog(self, hAdapter: int, pUpdateFlipQueueLog: Any) -> int: ...


class NativeFenceMiniport(Protocol):
    """The entry points of native GPU fences (WDDM 3.2, hardware scheduling)."""

    @_contract
    def DxgkDdiCreateNativeFence(self, hAdapter: int, pCreateNativeFence: Any) -> int: ...

    @_contract
    def DxgkDdiDestroyNativeFence(self, hAdapter: int, pDestroyNativeFence: Any) -> int: ...

    @_contract
    def DxgkDdiUpdateMonitoredValues(self, pUpdateMonitoredValues: Any) -> int: ...

    @_contract
    def DxgkDdiUpdateCurrentValuesFromCpu(self, pUpdateCurrentValuesFromCpu: Any) -> int: ...

