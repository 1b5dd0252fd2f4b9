"""Rules on what a driver reports through DxgkCbNotifyInterrupt: ``DXGKARGCB_NOTIFY_INTERRUPT_DATA``
(rules 32 CompletedFenceWasSubmitted, 33 CompletedFenceMonotonic, 35 PreemptedFenceOutstanding, 36
PreemptLastCompletedValid, 44 NoDriverDmaFaulted, 45 VsyncAddressNonNull, 46
PhysicalAdapterMaskValid, 50 MpoPlaneInRange, 51 FenceInvalidFaultFlags and 53 FatalHardwareErrorBugChecks). The
numbers are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them all.

Spec: Microsoft's pages "Supplying fence identifiers" (fence ids, cumulative completion),
DXGK_INTERRUPT_TYPE and DXGKARGCB_NOTIFY_INTERRUPT_DATA (interrupt types and their union arms),
DXGKCB_NOTIFY_INTERRUPT_DATA_FLAGS (ValidPhysicalAdapterMask), DXGK_PAGE_FAULT_FLAGS (page-fault
flags), DxgkDdiQueryCurrentFence (reported fences only move forward), DxgkDdiPreemptCommand
(preemption fences), DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO2/3 (LayerIndex: the zero-based plane) and
"Bug Check 0x119: VIDEO_SCHEDULER_INTERNAL_ERROR" (parameters 0x1, 0x6, 0xC, 0xD, 0xE).

Only the union arm that ``InterruptType`` selects is read; an arm the structure's DDI version lacks
is not judged. Fence facts are the scheduler's view of the node the interrupt names.

Decisions:
- Rule 32: a DMA_COMPLETED fence above ``last_submitted_fence`` was never submitted; with
  ``submitted_fences`` known, a fence above ``last_completed_fence`` that is not in the set is
  also invalid. Bug check 0x119/0x1 with P2..P4 = 0 (the bug check page documents only P1).
- Rules 32/33/36 read a reported 32-bit fence id as the node's fence sequence number, past any
  wrap of the 32-bit id (:mod:`wddmsim.ddi.fenceid`), before comparing it with the scheduler's.
- Rule 46 applies to every vsync arm that carries PhysicalAdapterMask (CRTC_VSYNC and the three
  multi-plane-overlay vsyncs). A nonzero mask without Flags.ValidPhysicalAdapterMask is a violation
  without a bug check; a zero mask on a GPU with more than one physical adapter
  (``physical_adapter_count``, else ``linked_adapter_count``) is bug check 0x119/0x6.
- Rule 50 judges CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY (WDDM 1.3), ..._OVERLAY2 and ..._OVERLAY3 on
  the LayerIndex values the OS read from the report's array (``mpo_layer_indexes``,
  :mod:`wddmsim.dxgkrnl.overlays`, entries DXGK_MULTIPLANE_OVERLAY_VSYNC_INFO/2/3) against
  ``MaxOverlayPlanes``: a plane at or above it is bug check 0x119/0xE.
- Rule 51 judges DMA_PAGE_FAULTED only (0xD is about DMA page-fault interrupts); rule 53 judges
  both DMA_PAGE_FAULTED and HWQUEUE_PAGE_FAULTED.
"""

from __future__ import annotations

from ..bugcheck import VidSchError
from ..enums import DXGK_INTERRUPT_TYPE as T
from ..enums import DXGK_PAGE_FAULT_FLAGS as PF
from .core import Facts, reported_fence, rule, vidsch_bugcheck

NOTIFY = "DXGKARGCB_NOTIFY_INTERRUPT_DATA"

_COMPLETED = int(T.DXGK_INTERRUPT_DMA_COMPLETED)
_PREEMPTED = int(T.DXGK_INTERRUPT_DMA_PREEMPTED)
_CRTC_VSYNC = int(T.DXGK_INTERRUPT_CRTC_VSYNC)
_DMA_FAULTED = int(T.DXGK_INTERRUPT_DMA_FAULTED)
_DMA_PAGE_FAULTED = int(T.DXGK_INTERRUPT_DMA_PAGE_FAULTED)
_HWQUEUE_PAGE_FAULTED = int(T.DXGK_INTERRUPT_HWQUEUE_PAGE_FAULTED)

#: Vsync interrupt types whose arm carries PhysicalAdapterMask, and that arm.
_MASK_ARMS = {
    _CRTC_VSYNC: "CrtcVsync",
    int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY): "CrtcVsyncWithMultiPlaneOverlay",
    int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2): "CrtcVsyncWithMultiPlaneOverlay2",
    int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3): "CrtcVsyncWithMultiPlaneOverlay3",
}
_FAULT_ARMS = {_DMA_PAGE_FAULTED: "DmaPageFaulted", _HWQUEUE_PAGE_FAULTED: "HwQueuePageFaulted"}

_FENCE_INVALID = int(PF.DXGK_PAGE_FAULT_FENCE_INVALID)
_RESET_REQUIRED = int(PF.DXGK_PAGE_FAULT_ADAPTER_RESET_REQUIRED | PF.DXGK_PAGE_FAULT_ENGINE_RESET_REQUIRED)
_FATAL = int(PF.DXGK_PAGE_FAULT_FATAL_HARDWARE_ERROR)


@rule(32, "CompletedFenceWasSubmitted", structs=(NOTIFY,))
def completed_fence_submitted(obj, facts: Facts):
    """Every DMA_COMPLETED.SubmissionFenceId was handed to SubmitCommand on that node before; a fence
    never submitted is invalid: bug check 0x119/0x1 (inferred meaning of 0x1)."""
    if obj.InterruptType != _COMPLETED:
        return None
    raw = obj.DmaCompleted.SubmissionFenceId
    fence = reported_fence(raw, facts)
    sent = facts.last_submitted_fence
    if sent is not None and fence > sent:
        why = f"the last fence submitted on node {obj.DmaCompleted.NodeOrdinal} is {sent}"
    else:
        known = facts.submitted_fences
        done = facts.last_completed_fence
        if known is None or fence in known or raw in known or (done is not None and fence <= done):
            return None
        why = f"it was never submitted on node {obj.DmaCompleted.NodeOrdinal}"
    return [(
        f"DmaCompleted.SubmissionFenceId is {raw} but must be a fence handed to DxgkDdiSubmitCommand: {why}",
        vidsch_bugcheck(VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID),
    )]


@rule(33, "CompletedFenceMonotonic", structs=(NOTIFY,))
def completed_fence_monotonic(obj, facts: Facts):
    """Reported completed fences on a node never go backwards (inferred)."""
    done = facts.last_completed_fence
    if done is None or obj.InterruptType != _COMPLETED:
        return None
    raw = obj.DmaCompleted.SubmissionFenceId
    if reported_fence(raw, facts) >= done:
        return None
    return [
        f"DmaCompleted.SubmissionFenceId is {raw} but must be >= the last completed fence reported ({done})"
    ]


@rule(35, "PreemptedFenceOutstanding", structs=(NOTIFY,))
def preempted_fence_outstanding(obj, facts: Facts):
    """DMA_PREEMPTED.PreemptionFenceId is the PreemptionFenceId of an outstanding DxgkDdiPreemptCommand
    on that node (inferred).

    Judged when ``facts.outstanding_preemption_fences`` is known."""
    pending = facts.outstanding_preemption_fences
    if pending is None or obj.InterruptType != _PREEMPTED:
        return None
    fence = obj.DmaPreempted.PreemptionFenceId
    if fence in pending:
        return None
    shown = ", ".join(str(f) for f in sorted(pending)) or "none"
    return [
        f"DmaPreempted.PreemptionFenceId is {fence} but must be an outstanding preemption request's fence "
        f"(outstanding: {shown})"
    ]


@rule(36, "PreemptLastCompletedValid", structs=(NOTIFY,))
def preempt_last_completed(obj, facts: Facts):
    """DMA_PREEMPTED.LastCompletedFenceId is a fence that truly completed: no newer than the last
    submitted fence and no older than the previously reported completed fence (inferred)."""
    if obj.InterruptType != _PREEMPTED:
        return None
    raw = obj.DmaPreempted.LastCompletedFenceId
    fence = reported_fence(raw, facts)
    done = facts.last_completed_fence
    sent = facts.last_submitted_fence
    if done is not None and fence < done:
        return [
            f"DmaPreempted.LastCompletedFenceId is {raw} but must be >= the last completed fence reported ({done})"
        ]
    if sent is not None and fence > sent:
        return [
            f"DmaPreempted.LastCompletedFenceId is {raw} but must be <= the last submitted fence ({sent}): "
            f"a fence never submitted cannot have completed"
        ]
    return None


@rule(44, "NoDriverDmaFaulted", structs=(NOTIFY,))
def no_dma_faulted(obj, facts: Facts):
    """DXGK_INTERRUPT_DMA_FAULTED (4) is reserved for the system and never raised by a driver."""
    if obj.InterruptType != _DMA_FAULTED:
        return None
    return ["InterruptType is 4 (DXGK_INTERRUPT_DMA_FAULTED) but a driver must never report it (reserved for the system)"]


@rule(45, "VsyncAddressNonNull", structs=(NOTIFY,))
def vsync_address_non_null(obj, facts: Facts):
    """CrtcVsync.PhysicalAddress is non-NULL, even with visibility off."""
    if obj.InterruptType != _CRTC_VSYNC:
        return None
    if obj.CrtcVsync.PhysicalAddress.QuadPart:
        return None
    return [
        "CrtcVsync.PhysicalAddress is 0x0 but must be non-NULL: report the address the pipe would scan out "
        "even with visibility off"
    ]


@rule(46, "PhysicalAdapterMaskValid", structs=(NOTIFY,))
def physical_adapter_mask(obj, facts: Facts):
    """A nonzero PhysicalAdapterMask comes with Flags.ValidPhysicalAdapterMask = 1; a NULL mask on a
    multi-adapter GPU is bug check 0x119/0x6."""
    arm_name = _MASK_ARMS.get(obj.InterruptType)
    if arm_name is None:
        return None
    arm = getattr(obj, arm_name, None)
    if arm is None:
        return None
    mask = arm.PhysicalAdapterMask
    if mask:
        if obj.Flags.ValidPhysicalAdapterMask:
            return None
        return [
            f"Flags.ValidPhysicalAdapterMask is 0 but must be 1 when {arm_name}.PhysicalAdapterMask is supplied "
            f"(0x{mask:X})"
        ]
    adapters = facts.physical_adapter_count if facts.physical_adapter_count is not None else facts.linked_adapter_count
    if adapters is None or adapters <= 1:
        return None
    return [(
        f"{arm_name}.PhysicalAdapterMask is 0 (NULL) but must name the reporting adapter on a GPU with "
        f"{adapters} physical adapters",
        vidsch_bugcheck(VidSchError.DRIVER_INVALID_ADAPTER_MASK),
    )]


#: The multiplane-overlay vsync types whose per-plane array the OS reads (rule 50), and their arm.
MPO_VSYNC_ARMS = {
    int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY): "CrtcVsyncWithMultiPlaneOverlay",
    int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2): "CrtcVsyncWithMultiPlaneOverlay2",
    int(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY3): "CrtcVsyncWithMultiPlaneOverlay3",
}


@rule(50, "MpoPlaneInRange", structs=(NOTIFY,))
def mpo_plane_in_range(obj, facts: Facts):
    """A multiplane-overlay vsync report names only planes below MaxOverlayPlanes; any other
    LayerIndex is bug check 0x119/0xE."""
    arm_name = MPO_VSYNC_ARMS.get(obj.InterruptType)
    if arm_name is None or facts.max_overlay_planes is None or facts.mpo_layer_indexes is None:
        return None
    limit = facts.max_overlay_planes
    bad = [(i, layer) for i, layer in enumerate(facts.mpo_layer_indexes) if not 0 <= layer < limit]
    if not bad:
        return None
    i, layer = bad[0]
    return [(
        f"{arm_name}.pMultiPlaneOverlayVsyncInfo[{i}].LayerIndex is {layer} but the driver reports "
        f"MaxOverlayPlanes = {limit}: a plane vsync names a plane 0..{limit - 1}" if limit else
        f"{arm_name}.pMultiPlaneOverlayVsyncInfo[{i}].LayerIndex is {layer} but the driver reports no overlay "
        f"planes (MaxOverlayPlanes = 0)",
        vidsch_bugcheck(VidSchError.REPORT_VSYNC_PLANE_OUT_OF_RANGE),
    )]


@rule(51, "FenceInvalidFaultFlags", structs=(NOTIFY,))
def fence_invalid_fault(obj, facts: Facts):
    """DMA_PAGE_FAULTED with FENCE_INVALID set has FaultedFenceId == 0 and ADAPTER_RESET_REQUIRED or
    ENGINE_RESET_REQUIRED set; inconsistent flags are bug check 0x119/0xD."""
    if obj.InterruptType != _DMA_PAGE_FAULTED:
        return None
    arm = getattr(obj, "DmaPageFaulted", None)
    if arm is None:
        return None
    flags = arm.PageFaultFlags
    if not flags & _FENCE_INVALID:
        return None
    out = []
    if arm.FaultedFenceId:
        out.append(
            f"DmaPageFaulted.FaultedFenceId is {arm.FaultedFenceId} but must be 0 when PageFaultFlags "
            f"(0x{flags:X}) has FENCE_INVALID"
        )
    if not flags & _RESET_REQUIRED:
        out.append(
            f"DmaPageFaulted.PageFaultFlags is 0x{flags:X} but must have ADAPTER_RESET_REQUIRED or "
            f"ENGINE_RESET_REQUIRED with FENCE_INVALID"
        )
    bc = vidsch_bugcheck(VidSchError.INVALID_DMA_FAULT_PARAMETERS)
    return [(m, bc) for m in out]


@rule(53, "FatalHardwareErrorBugChecks", structs=(NOTIFY,))
def fatal_hardware_error(obj, facts: Facts):
    """FATAL_HARDWARE_ERROR in PageFaultFlags stops the system: bug check 0x119/0xC."""
    arm_name = _FAULT_ARMS.get(obj.InterruptType)
    if arm_name is None:
        return None
    arm = getattr(obj, arm_name, None)
    if arm is None or not arm.PageFaultFlags & _FATAL:
        return None
    return [(
        f"{arm_name}.PageFaultFlags is 0x{arm.PageFaultFlags:X} with FATAL_HARDWARE_ERROR: the system cannot "
        f"continue",
        vidsch_bugcheck(VidSchError.FATAL_PAGE_FAULT),
    )]
