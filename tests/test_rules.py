"""The DDI contract rules (wddmsim.ddi.rules): every rule fires on a broken structure and stays
quiet on a valid one (the rules are listed by ``wddmsim rules`` and in docs/rules.md)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wddmsim.ddi import codec, registry
from wddmsim.ddi.bugcheck import BugCheckCode, VidSchError
from wddmsim.ddi.enums import DXGK_INTERRUPT_TYPE as T
from wddmsim.ddi.enums import DXGK_PAGE_FAULT_FLAGS as PF
from wddmsim.ddi.ntstatus import NTSTATUS
from wddmsim.ddi.rules import RULES, Facts, Rule, Violation, check, rule, rules_for
from wddmsim.ddi.versions import ddi_version

SUBMIT = "DXGKARG_SUBMITCOMMAND"
VIRTUAL = "DXGKARG_SUBMITCOMMANDVIRTUAL"
PATCH = "DXGKARG_PATCH"
CANCEL = "DXGKARG_CANCELCOMMAND"
PREEMPT = "DXGKARG_PREEMPTCOMMAND"
RESET = "DXGKARG_RESETENGINE"
NOTIFY = "DXGKARGCB_NOTIFY_INTERRUPT_DATA"
HWQUEUE = "DXGKARG_SUBMITCOMMANDTOHWQUEUE"
VIDSCHCAPS = "DXGK_VIDSCHCAPS"
SETVIDPN = "DXGKARG_SETVIDPNSOURCEADDRESS"
SUBMITFLAGS = "DXGK_SUBMITCOMMANDFLAGS"
PATCHFLAGS = "DXGK_PATCHFLAGS"
CREATEHWQUEUE = "DXGKARG_CREATEHWQUEUE"
SIGNALFENCE = "DXGKARG_SIGNALMONITOREDFENCE"
SUSPEND = "DXGKARG_SUSPENDCONTEXT"
SCHEDPROPS = "DXGKARG_SETCONTEXTSCHEDULINGPROPERTIES"
BANDS = "DXGKARG_SETUPPRIORITYBANDS"
QUERYFENCE = "DXGKARG_QUERYCURRENTFENCE"
CREATECONTEXT = "DXGKARG_CREATECONTEXT"
DEPENDENT = "DXGKARG_QUERYDEPENDENTENGINEGROUP"

SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
ARCHES = ("x64", "x86")


def new(name, arch="x64", version="latest", *, sets=(), **fields):
    """A zeroed structure with top-level ``fields`` set, then dotted ``sets`` ((path, value) pairs)."""
    obj = codec.new(registry.RECORDS[name], arch, version, **fields)
    for path, value in sets:
        *parents, last = path.split(".")
        target = obj
        for p in parents:
            target = getattr(target, p)
        setattr(target, last, value)
    return obj


def fired(struct, obj, facts=None) -> list[int]:
    return [v.rule for v in check(struct, obj, facts)]


# -- valid structures ------------------------------------------------------------------------


def valid_submit(arch="x64", version="latest", **over):
    fields = dict(
        hContext=0x1000,
        DmaBufferSegmentId=1,
        DmaBufferPhysicalAddress=0x40000,
        DmaBufferSize=4096,
        DmaBufferSubmissionStartOffset=0,
        DmaBufferSubmissionEndOffset=1024,
        pDmaBufferPrivateData=0x9000,
        DmaBufferPrivateDataSize=64,
        DmaBufferPrivateDataSubmissionStartOffset=0,
        DmaBufferPrivateDataSubmissionEndOffset=64,
        SubmissionFenceId=7,
        EngineOrdinal=0,
    )
    if ddi_version(version).value >= ddi_version("win8").value:
        fields["NodeOrdinal"] = 1
    fields.update(over)
    return new(SUBMIT, arch, version, **fields)


def submit_facts(**over):
    base = dict(
        multi_engine_aware=True,
        node_count=4,
        linked_adapter_count=1,
        dma_buffer_segment_set=0b10,
        vidpn_source_count=2,
        flip_interval_supported=True,
        previously_preempted=False,
        running_context_paging=False,
        status=SUCCESS,
    )
    base.update(over)
    return Facts(**base)


def valid_virtual(**over):
    fields = dict(hContext=0x1000, DmaBufferVirtualAddress=0x10000000, DmaBufferSize=4096, SubmissionFenceId=3, NodeOrdinal=0)
    fields.update(over)
    return new(VIRTUAL, **fields)


def valid_patch(arch="x64", version="latest", **over):
    fields = dict(
        hContext=0x1000,
        DmaBufferSegmentId=1,
        pDmaBuffer=0x200000,
        DmaBufferSize=8192,
        DmaBufferSubmissionEndOffset=4096,
        DmaBufferPrivateDataSize=32,
        DmaBufferPrivateDataSubmissionEndOffset=32,
        pAllocationList=0x300000,
        AllocationListSize=8,
        pPatchLocationList=0x310000,
        PatchLocationListSize=10,
        PatchLocationListSubmissionStart=2,
        PatchLocationListSubmissionLength=3,
        SubmissionFenceId=9,
    )
    fields.update(over)
    return new(PATCH, arch, version, **fields)


def paging_patch(**over):
    fields = dict(hContext=0x1000, pDmaBuffer=0x200000, DmaBufferSize=4096, DmaBufferSubmissionEndOffset=256, Flags=1)
    fields.update(over)
    return new(PATCH, **fields)


def patch_locations(splits):
    rec = registry.RECORDS["D3DDDI_PATCHLOCATIONLIST"]
    return [codec.new(rec, SplitOffset=s, PatchOffset=s) for s in splits]


def interrupt(kind, arch="x64", version="latest", sets=(), **fields):
    return new(NOTIFY, arch, version, InterruptType=int(kind), sets=sets, **fields)


def valid_hwqueue(version="latest", **over):
    fields = dict(hHwQueue=0x2000, HwQueueProgressFenceId=11, DmaBufferVirtualAddress=0x1000000, DmaBufferSize=4096,
                  DmaBufferPrivateDataSize=16, pDmaBufferPrivateData=0x5000)
    fields.update(over)
    return new(HWQUEUE, "x64", version, **fields)


def sched_props(**over):
    fields = dict(hContext=0x3000, priorityBand=1, inProcessPriority=0, quantum=20000, gracePeriodSamePriority=10000)
    fields.update(over)
    return new(SCHEDPROPS, **fields)


def flip_vidpn(**over):
    fields = dict(VidPnSourceId=0, PrimarySegment=1, PrimaryAddress=0x100000, ContextCount=1, Flags=0x4)
    fields.update(over)
    return new(SETVIDPN, **fields)


def bc(p1, p2=0, p3=0):
    return (int(p1), p2, p3)


# -- the firing table: rule -> (struct, builder, facts, expected bug check (p1, p2, p3) or None) -

FIRING = {
    1: (SUBMIT, lambda: valid_submit(), Facts(status=int(NTSTATUS.STATUS_NO_MEMORY)),
        bc(VidSchError.DRIVER_FAILED_SUBMIT_COMMAND, int(NTSTATUS.STATUS_NO_MEMORY))),
    4: (SUBMIT, lambda: valid_submit(DmaBufferPrivateDataSubmissionStartOffset=16), Facts(), None),
    5: (SUBMIT, lambda: valid_submit(DmaBufferSubmissionEndOffset=5000), Facts(), None),
    6: (SUBMIT, lambda: valid_submit(DmaBufferPrivateDataSubmissionEndOffset=65), Facts(), None),
    9: (SUBMIT, lambda: valid_submit(Flags=0x10, FlipInterval=5), Facts(), None),
    10: (SUBMIT, lambda: valid_submit(Flags=1 << 9), Facts(), None),
    11: (SUBMIT, lambda: valid_submit(Flags=0x40), Facts(), None),
    12: (SUBMIT, lambda: valid_submit(Flags=0x40, DmaBufferSubmissionEndOffset=0), Facts(running_context_paging=True), None),
    13: (SUBMIT, lambda: valid_submit(Flags=0x80), Facts(previously_preempted=False), None),
    14: (SUBMIT, lambda: valid_submit(Flags=0x8), Facts(fence_signaled=False), None),
    15: (SUBMIT, lambda: valid_submit(hContext=0), Facts(), None),
    16: (SUBMIT, lambda: valid_submit(DmaBufferSegmentId=0), Facts(dma_buffer_segment_set=0b10), None),
    18: (SUBMIT, lambda: valid_submit(DmaBufferVirtualAddress=0x1000), Facts(), None),
    19: (SUBMIT, lambda: valid_submit(EngineOrdinal=1), Facts(), None),
    20: (SUBMIT, lambda: valid_submit(NodeOrdinal=4), Facts(node_count=4), None),
    22: (PATCH, lambda: valid_patch(pDmaBuffer=0x200010), Facts(), None),
    23: (VIRTUAL, lambda: valid_virtual(), Facts(status=int(NTSTATUS.STATUS_NO_MEMORY)),
         bc(VidSchError.DRIVER_FAILED_SUBMIT_COMMAND, int(NTSTATUS.STATUS_NO_MEMORY))),
    25: (PATCH, lambda: valid_patch(), Facts(status=int(NTSTATUS.STATUS_UNSUCCESSFUL)),
         bc(VidSchError.DRIVER_FAILED_PATCH_COMMAND)),
    26: (PATCH, lambda: paging_patch(PatchLocationListSize=4), Facts(), None),
    27: (PATCH, lambda: paging_patch(DmaBufferSize=8192), Facts(paging_buffer_size_before=4096), None),
    29: (PATCH, lambda: valid_patch(PatchLocationListSubmissionStart=8, PatchLocationListSubmissionLength=3), Facts(), None),
    30: (PATCH, lambda: valid_patch(), Facts(patch_locations=patch_locations([0, 0, 16, 12, 48, 0, 0, 0, 0, 0])), None),
    31: (PATCH, lambda: valid_patch(Flags=0x10), Facts(), None),
    32: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_COMPLETED, sets=[("DmaCompleted.SubmissionFenceId", 12)]),
         Facts(last_submitted_fence=10, last_completed_fence=5), bc(VidSchError.DRIVER_REPORTED_INVALID_FENCE_ID)),
    33: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_COMPLETED, sets=[("DmaCompleted.SubmissionFenceId", 4)]),
         Facts(last_submitted_fence=10, last_completed_fence=5), None),
    35: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_PREEMPTED, sets=[("DmaPreempted.PreemptionFenceId", 99),
                                                                           ("DmaPreempted.LastCompletedFenceId", 6)]),
         Facts(outstanding_preemption_fences={100}), None),
    36: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_PREEMPTED, sets=[("DmaPreempted.PreemptionFenceId", 100),
                                                                           ("DmaPreempted.LastCompletedFenceId", 3)]),
         Facts(last_completed_fence=5, last_submitted_fence=10), None),
    44: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_FAULTED), Facts(), None),
    45: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_CRTC_VSYNC), Facts(), None),
    46: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_CRTC_VSYNC, sets=[("CrtcVsync.PhysicalAddress.QuadPart", 0x80000)]),
         Facts(physical_adapter_count=2), bc(VidSchError.DRIVER_INVALID_ADAPTER_MASK)),
    50: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2),
         Facts(max_overlay_planes=2, mpo_layer_indexes=(0, 2)), bc(VidSchError.REPORT_VSYNC_PLANE_OUT_OF_RANGE)),
    51: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_PAGE_FAULTED, sets=[
            ("DmaPageFaulted.PageFaultFlags", int(PF.DXGK_PAGE_FAULT_FENCE_INVALID)),
        ]), Facts(), bc(VidSchError.INVALID_DMA_FAULT_PARAMETERS)),
    53: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_PAGE_FAULTED, sets=[
            ("DmaPageFaulted.FaultedFenceId", 4),
            ("DmaPageFaulted.PageFaultFlags", int(PF.DXGK_PAGE_FAULT_FATAL_HARDWARE_ERROR)),
        ]), Facts(), bc(VidSchError.FATAL_PAGE_FAULT)),
    55: (QUERYFENCE, lambda: new(QUERYFENCE, CurrentFence=8, NodeOrdinal=1), Facts(last_completed_fence=7), None),
    58: (PREEMPT, lambda: new(PREEMPT, PreemptionFenceId=50), Facts(status=int(NTSTATUS.STATUS_UNSUCCESSFUL)),
         bc(VidSchError.DRIVER_FAILED_SUBMIT_COMMAND, int(NTSTATUS.STATUS_UNSUCCESSFUL))),
    59: (PREEMPT, lambda: new(PREEMPT, PreemptionFenceId=50, Flags=2), Facts(), None),
    63: (VIDSCHCAPS, lambda: new(VIDSCHCAPS, Value=0x4), Facts(), None),
    68: ("DXGKARG_BUILDPAGINGBUFFER", lambda: new("DXGKARG_BUILDPAGINGBUFFER"),
         Facts(status=int(NTSTATUS.STATUS_UNSUCCESSFUL)), None),
    83: (SETVIDPN, lambda: new(SETVIDPN, ContextCount=1, Flags=0x1), Facts(), None),
    85: (SETVIDPN, lambda: flip_vidpn(Flags=0x4 | 0x8 | 0x10), Facts(), None),
    86: (SETVIDPN, lambda: flip_vidpn(Flags=0x4), Facts(status=int(NTSTATUS.STATUS_INVALID_PARAMETER)), None),
    88: (SUBMIT, lambda: valid_submit(Flags=0x10, FlipInterval=2), Facts(flip_interval_supported=False), None),
    92: (HWQUEUE, lambda: valid_hwqueue(HwQueueProgressFenceId=11), Facts(last_progress_fence_id=11), None),
    93: (HWQUEUE, lambda: valid_hwqueue(), Facts(queue_busy=True), None),
    94: (HWQUEUE, lambda: valid_hwqueue(Flags=0x2), Facts(buffer_origin="umd"), None),
    95: (HWQUEUE, lambda: valid_hwqueue(), Facts(private_data_reads_after_return=1), None),
    100: (HWQUEUE, lambda: valid_hwqueue(HwQueueProgressFenceGpuVa=0x10004), Facts(), None),
    104: (SUSPEND, lambda: new(SUSPEND, hContext=0x3000, contextSuspendFence=5), Facts(last_suspend_fence=5), None),
    105: (HWQUEUE, lambda: valid_hwqueue(), Facts(max_in_flight=4, in_flight=4), None),
    67: (CANCEL, lambda: new(CANCEL, hContext=0x1000), Facts(status=int(NTSTATUS.STATUS_INVALID_PARAMETER)),
         bc(VidSchError.FAILED_CANCEL_COMMAND, int(NTSTATUS.STATUS_INVALID_PARAMETER))),
    76: (CREATECONTEXT, lambda: new(CREATECONTEXT, NodeOrdinal=1), Facts(status=int(NTSTATUS.STATUS_UNSUCCESSFUL)), None),
    115: (RESET, lambda: new(RESET, NodeOrdinal=0, LastAbortedFenceId=3), Facts(last_completed_fence=5, last_submitted_fence=9),
          bc(VidSchError.REPORTED_INVALID_ABORTED_FENCE, 3, 5)),
    117: (DEPENDENT, lambda: new(DEPENDENT, NodeOrdinal=2, DependentNodeOrdinalMask=0x3), Facts(status=SUCCESS),
          bc(VidSchError.INVALID_NODE_MASK, 2, 3)),
    122: (SCHEDPROPS, lambda: sched_props(priorityBand=3, realtimeBandPriorityLevel=32), Facts(), None),
    123: (SCHEDPROPS, lambda: sched_props(inProcessPriority=8), Facts(), None),
    124: (BANDS, lambda: new(BANDS, targetNormalBandPercentage=51), Facts(), None),
    125: (HWQUEUE, lambda: valid_hwqueue(), Facts(scheduling_properties_set=False), None),
    126: (SCHEDPROPS, lambda: sched_props(priorityBand=2), Facts(has_inc_base_priority=False), None),
}


def test_every_rule_has_a_firing_case():
    assert set(FIRING) == set(RULES)


@pytest.mark.parametrize("number", sorted(RULES))
def test_rule_fires(number):
    struct, build, facts, expected = FIRING[number]
    r = RULES[number]
    assert struct in r.structs
    found = [v for v in check(struct, build(), facts) if v.rule == number]
    assert found, f"rule {number} did not fire"
    v = found[0]
    assert v.name == r.name
    assert str(v).startswith(f"rule {number} ({r.name}): ")
    if expected is None:
        assert v.bugcheck is None
    else:
        assert v.bugcheck is not None
        assert v.bugcheck.code == BugCheckCode.VIDEO_SCHEDULER_INTERNAL_ERROR == 0x119
        assert (v.bugcheck.p1, v.bugcheck.p2, v.bugcheck.p3) == expected
    # The rule's own check function finds the same thing.
    assert [x.rule for x in r.check(build(), facts)] and all(x.rule == number for x in r.check(build(), facts))


@pytest.mark.parametrize("number", sorted(RULES))
def test_rule_is_registered_with_documentation(number):
    r = RULES[number]
    assert isinstance(r, Rule) and r.number == number
    assert r.name and r.name[0].isupper() and " " not in r.name
    assert r.summary and r.structs
    for s in r.structs:
        assert s in registry.RECORDS
        assert r in rules_for(s)


# -- the valid cases: rule -> (struct, builder, facts); the rule must not fire ----------------

QUIET = {
    1: (SUBMIT, lambda: valid_submit(), Facts(status=SUCCESS)),
    4: (SUBMIT, lambda: valid_submit(Flags=1, DmaBufferPrivateDataSubmissionStartOffset=16), Facts()),
    5: (SUBMIT, lambda: valid_submit(DmaBufferSubmissionStartOffset=4096, DmaBufferSubmissionEndOffset=4096), Facts()),
    6: (SUBMIT, lambda: valid_submit(Flags=1, DmaBufferPrivateDataSubmissionStartOffset=32), Facts()),
    9: (SUBMIT, lambda: valid_submit(Flags=0x10, FlipInterval=4, VidPnSourceId=1), Facts(vidpn_source_count=2)),
    10: (SUBMIT, lambda: valid_submit(Flags=0x1FF & ~0x40, DmaBufferPrivateDataSubmissionStartOffset=0), Facts()),
    11: (SUBMIT, lambda: valid_submit(Flags=0x40, DmaBufferSubmissionStartOffset=0, DmaBufferSubmissionEndOffset=0), Facts()),
    12: (SUBMIT, lambda: valid_submit(Flags=0x41, DmaBufferSubmissionEndOffset=0), Facts(running_context_paging=True)),
    13: (SUBMIT, lambda: valid_submit(Flags=0x80), Facts(previously_preempted=True)),
    14: (SUBMIT, lambda: valid_submit(Flags=0x8), Facts(fence_signaled=True, work_executed=False)),
    15: (SUBMIT, lambda: valid_submit(hContext=0, Flags=1, NodeOrdinal=0), Facts(node_count=2)),
    16: (SUBMIT, lambda: valid_submit(DmaBufferSegmentId=0), Facts(dma_buffer_segment_set=0)),
    18: (SUBMIT, lambda: valid_submit(DmaBufferVirtualAddress=0), Facts()),
    19: (SUBMIT, lambda: valid_submit(EngineOrdinal=1), Facts(linked_adapter_count=2)),
    20: (SUBMIT, lambda: valid_submit(NodeOrdinal=3), Facts(node_count=4)),
    22: (PATCH, lambda: valid_patch(pDmaBuffer=0x7000), Facts()),
    23: (VIRTUAL, lambda: valid_virtual(), Facts(status=int(NTSTATUS.STATUS_INVALID_PARAMETER))),
    25: (PATCH, lambda: valid_patch(), Facts(status=SUCCESS)),
    26: (PATCH, lambda: paging_patch(), Facts()),
    27: (PATCH, lambda: paging_patch(DmaBufferSize=4096), Facts(paging_buffer_size_before=4096)),
    29: (PATCH, lambda: valid_patch(PatchLocationListSubmissionStart=7, PatchLocationListSubmissionLength=3), Facts()),
    30: (PATCH, lambda: valid_patch(), Facts(patch_locations=patch_locations([9, 9, 16, 16, 48, 0, 0, 0, 0, 0]))),
    31: (PATCH, lambda: valid_patch(Flags=0xF), Facts()),
    32: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_COMPLETED, sets=[("DmaCompleted.SubmissionFenceId", 10)]),
         Facts(last_submitted_fence=10, last_completed_fence=5, submitted_fences={6, 7, 8, 9, 10})),
    33: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_COMPLETED, sets=[("DmaCompleted.SubmissionFenceId", 5)]),
         Facts(last_submitted_fence=10, last_completed_fence=5)),
    35: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_PREEMPTED, sets=[("DmaPreempted.PreemptionFenceId", 100),
                                                                           ("DmaPreempted.LastCompletedFenceId", 6)]),
         Facts(outstanding_preemption_fences={100})),
    36: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_PREEMPTED, sets=[("DmaPreempted.PreemptionFenceId", 100),
                                                                           ("DmaPreempted.LastCompletedFenceId", 7)]),
         Facts(last_completed_fence=5, last_submitted_fence=10)),
    44: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_COMPLETED, sets=[("DmaCompleted.SubmissionFenceId", 1)]), Facts()),
    45: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_CRTC_VSYNC, sets=[("CrtcVsync.PhysicalAddress.QuadPart", 0x80000)]),
         Facts()),
    46: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_CRTC_VSYNC, sets=[("CrtcVsync.PhysicalAddress.QuadPart", 0x80000),
                                                                        ("CrtcVsync.PhysicalAdapterMask", 0x2),
                                                                        ("Flags.ValidPhysicalAdapterMask", 1)]),
         Facts(physical_adapter_count=2)),
    50: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2),
         Facts(max_overlay_planes=2, mpo_layer_indexes=(0, 1))),
    51: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_PAGE_FAULTED, sets=[
            ("DmaPageFaulted.PageFaultFlags", int(PF.DXGK_PAGE_FAULT_FENCE_INVALID | PF.DXGK_PAGE_FAULT_ENGINE_RESET_REQUIRED)),
        ]), Facts()),
    53: (NOTIFY, lambda: interrupt(T.DXGK_INTERRUPT_DMA_PAGE_FAULTED, sets=[
            ("DmaPageFaulted.FaultedFenceId", 4), ("DmaPageFaulted.PageFaultFlags", int(PF.DXGK_PAGE_FAULT_WRITE)),
        ]), Facts()),
    55: (QUERYFENCE, lambda: new(QUERYFENCE, CurrentFence=7, NodeOrdinal=1), Facts(last_completed_fence=7, status=SUCCESS)),
    58: (PREEMPT, lambda: new(PREEMPT, PreemptionFenceId=50), Facts(status=SUCCESS)),
    59: (PREEMPT, lambda: new(PREEMPT, PreemptionFenceId=50, Flags=0), Facts()),
    63: (VIDSCHCAPS, lambda: new(VIDSCHCAPS, Value=0x1 | 0x4 | 0x8 | 0x10), Facts()),
    68: ("DXGKARG_BUILDPAGINGBUFFER", lambda: new("DXGKARG_BUILDPAGINGBUFFER"),
         Facts(status=int(NTSTATUS.STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER))),
    83: (SETVIDPN, lambda: flip_vidpn(ContextCount=4), Facts(broadcast_context_count=3)),
    85: (SETVIDPN, lambda: flip_vidpn(Flags=0x4 | 0x8 | 0x20), Facts()),
    # SharedPrimaryTransition is bit 6 (0x40): the one case that may answer STATUS_INVALID_PARAMETER
    86: (SETVIDPN, lambda: flip_vidpn(Flags=0x4 | 0x40), Facts(status=int(NTSTATUS.STATUS_INVALID_PARAMETER))),
    88: (SUBMIT, lambda: valid_submit(Flags=0x10, FlipInterval=1), Facts(flip_interval_supported=False)),
    92: (HWQUEUE, lambda: valid_hwqueue(HwQueueProgressFenceId=12), Facts(last_progress_fence_id=11)),
    93: (HWQUEUE, lambda: valid_hwqueue(), Facts(queue_busy=False)),
    94: (HWQUEUE, lambda: valid_hwqueue(Flags=0x2), Facts(buffer_origin="present")),
    95: (HWQUEUE, lambda: valid_hwqueue(), Facts(private_data_reads_after_return=0)),
    100: (HWQUEUE, lambda: valid_hwqueue(HwQueueProgressFenceGpuVa=0x10008, HwQueueProgressFenceCpuVa=0x7000), Facts()),
    104: (SUSPEND, lambda: new(SUSPEND, hContext=0x3000, contextSuspendFence=6), Facts(last_suspend_fence=5)),
    105: (HWQUEUE, lambda: valid_hwqueue(), Facts(max_in_flight=4, in_flight=3)),
    67: (CANCEL, lambda: new(CANCEL, hContext=0x1000), Facts(status=SUCCESS)),
    76: (CREATECONTEXT, lambda: new(CREATECONTEXT, NodeOrdinal=1), Facts(status=int(NTSTATUS.STATUS_NO_MEMORY))),
    115: (RESET, lambda: new(RESET, NodeOrdinal=0, LastAbortedFenceId=5), Facts(last_completed_fence=5, last_submitted_fence=9)),
    117: (DEPENDENT, lambda: new(DEPENDENT, NodeOrdinal=2, DependentNodeOrdinalMask=0x16), Facts(status=SUCCESS)),
    122: (SCHEDPROPS, lambda: sched_props(priorityBand=3, realtimeBandPriorityLevel=31), Facts()),
    123: (SCHEDPROPS, lambda: sched_props(inProcessPriority=-7), Facts()),
    124: (BANDS, lambda: new(BANDS, targetNormalBandPercentage=50), Facts()),
    125: (HWQUEUE, lambda: valid_hwqueue(), Facts(scheduling_properties_set=True)),
    126: (SCHEDPROPS, lambda: sched_props(priorityBand=3), Facts(has_inc_base_priority=True)),
}


def test_every_rule_has_a_quiet_case():
    assert set(QUIET) == set(RULES)


@pytest.mark.parametrize("number", sorted(RULES))
def test_rule_quiet_on_valid_structure(number):
    struct, build, facts = QUIET[number]
    assert number not in fired(struct, build(), facts)


#: What a zeroed structure needs to be valid: a context handle for a non-paging submission, one
#: context for a flip.
_MINIMAL = {SUBMIT: {"hContext": 0x10}, SETVIDPN: {"ContextCount": 1}}


@pytest.mark.parametrize("number", sorted(RULES))
def test_rule_quiet_when_facts_unknown_or_structure_zeroed_at_vista_x86(number):
    """A zeroed structure with nothing known breaks no rule, at every architecture and at the
    structure's oldest version (rules whose members are missing there are not judged)."""
    for struct in RULES[number].structs:
        rec = registry.RECORDS[struct]
        version = rec.since or "vista"
        for arch in ARCHES:
            obj = new(struct, arch, version, **_MINIMAL.get(struct, {}))
            found = [v for v in check(struct, obj, Facts(version=version)) if v.rule == number]
            assert found == []


# -- whole structures ------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHES)
def test_fully_valid_submit_has_no_violation(arch):
    obj = valid_submit(arch)
    facts = submit_facts()
    assert check(SUBMIT, obj, facts) == []
    assert check("_dxgkarg_submitcommand", obj, facts) == []


@pytest.mark.parametrize("arch", ARCHES)
def test_fully_valid_flip_submit_and_paging_submit(arch):
    flip = valid_submit(arch, Flags=0x12, FlipInterval=1, VidPnSourceId=1)
    assert check(SUBMIT, flip, submit_facts()) == []
    paging = valid_submit(arch, hContext=0, Flags=0x1, DmaBufferPrivateDataSubmissionStartOffset=32, NodeOrdinal=0)
    assert check(SUBMIT, paging, submit_facts()) == []


def test_valid_structures_of_every_kind_are_clean():
    facts = Facts(node_count=2, last_submitted_fence=20, last_completed_fence=10,
                  outstanding_preemption_fences={100}, last_progress_fence_id=11, buffer_origin="umd",
                  queue_busy=False, private_data_reads_after_return=0, status=SUCCESS, physical_adapter_count=1)
    assert check(VIRTUAL, valid_virtual(), facts) == []
    assert check(PATCH, valid_patch(), facts) == []
    assert check(PATCH, paging_patch(), facts) == []
    assert check(PREEMPT, new(PREEMPT, PreemptionFenceId=100, NodeOrdinal=1), facts) == []
    assert check(RESET, new(RESET, NodeOrdinal=1, LastAbortedFenceId=15), facts) == []
    assert check(HWQUEUE, valid_hwqueue(HwQueueProgressFenceId=12), facts) == []
    assert check(VIDSCHCAPS, new(VIDSCHCAPS, Value=0x1F), facts) == []
    assert check(SETVIDPN, flip_vidpn(), facts) == []
    assert check(SETVIDPN, new(SETVIDPN, Flags=1), facts) == []
    done = interrupt(T.DXGK_INTERRUPT_DMA_COMPLETED, sets=[("DmaCompleted.SubmissionFenceId", 15), ("DmaCompleted.NodeOrdinal", 1)])
    assert check(NOTIFY, done, facts) == []


def test_check_without_rules_and_without_facts():
    assert check("DXGKARG_QUERYCURRENTFENCE", new("DXGKARG_QUERYCURRENTFENCE")) == []
    assert check("NOT_A_STRUCT", object()) == []
    assert rules_for("NOT_A_STRUCT") == []
    assert [r.number for r in rules_for(SUBMIT)] == sorted(r.number for r in rules_for(SUBMIT))


def test_violation_str_and_frozen():
    (v,) = check(SUBMIT, valid_submit(DmaBufferPrivateDataSubmissionStartOffset=16))
    assert str(v) == (
        "rule 4 (PrivateDataStartOffsetZero): DmaBufferPrivateDataSubmissionStartOffset is 16 but must be 0 "
        "when Flags.Paging is 0"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.rule = 5  # type: ignore[misc]
    assert isinstance(v, Violation) and v.bugcheck is None


def test_rule_numbers_cannot_be_registered_twice():
    with pytest.raises(ValueError):
        @rule(4, "Again", structs=(SUBMIT,))
        def again(obj, facts):
            return None


def test_facts_version_accepts_names():
    assert Facts(version="win8").version == ddi_version("win8")
    assert Facts().version == ddi_version("latest")


# -- versions and architectures --------------------------------------------------------------


@pytest.mark.parametrize("arch", ARCHES)
def test_vista_submit_missing_members_are_not_judged(arch):
    obj = valid_submit(arch, "vista")
    assert not hasattr(obj, "NodeOrdinal") and not hasattr(obj, "DmaBufferVirtualAddress")
    facts = submit_facts(version="vista", previously_preempted=True)
    assert check(SUBMIT, obj, facts) == []
    # The same rules still fire at vista where their members exist.
    bad = valid_submit(arch, "vista", DmaBufferPrivateDataSubmissionStartOffset=8, DmaBufferSubmissionEndOffset=9999)
    assert fired(SUBMIT, bad, facts) == [4, 5]
    # Bit 6 (ContextSwitch from Windows 8) is reserved at vista.
    assert fired(SUBMIT, valid_submit(arch, "vista", Flags=0x40), facts) == [10]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("version", ["vista", "win7", "win8", "wddm2_0", "wddm2_2", "latest"])
def test_reserved_flag_bits_follow_the_version(arch, version):
    v = ddi_version(version)
    defined = {"vista": 6, "win7": 6, "win8": 7, "wddm2_0": 8, "wddm2_2": 9, "latest": 9}[version]
    facts = Facts(version=v)
    top = valid_submit(arch, version, Flags=(1 << defined) - 1, DmaBufferPrivateDataSubmissionStartOffset=0)
    assert 10 not in fired(SUBMIT, top, facts)
    over = valid_submit(arch, version, Flags=1 << defined)
    assert 10 in fired(SUBMIT, over, facts)
    flags = codec.new(registry.RECORDS[SUBMITFLAGS], arch, version, Value=1 << defined)
    assert fired(SUBMITFLAGS, flags, facts) == [10]
    assert fired(SUBMITFLAGS, codec.new(registry.RECORDS[SUBMITFLAGS], arch, version, Value=1), facts) == []


def test_reserved_bits_for_an_older_driver_on_a_newer_layout():
    # A WDDM 1.2 driver (win8) must not see Resubmission (bit 7) set, even in a latest-layout structure.
    assert 10 in fired(SUBMIT, valid_submit(Flags=0x80), Facts(version="win8", previously_preempted=True))


def test_patch_flags_structure_alone():
    rec = registry.RECORDS[PATCHFLAGS]
    assert fired(PATCHFLAGS, codec.new(rec, Value=0xF)) == []
    assert fired(PATCHFLAGS, codec.new(rec, Value=0x80000000)) == [31]


@pytest.mark.parametrize("arch", ARCHES)
def test_interrupt_arms_missing_at_vista_are_not_judged(arch):
    # DMA_PAGE_FAULTED (WDDM 2.0) has no arm at vista: nothing to judge.
    obj = interrupt(T.DXGK_INTERRUPT_DMA_PAGE_FAULTED, arch, "vista")
    assert getattr(obj, "DmaPageFaulted", None) is None
    assert check(NOTIFY, obj, Facts(version="vista")) == []
    fault = interrupt(T.DXGK_INTERRUPT_DMA_FAULTED, arch, "vista")
    assert fired(NOTIFY, fault, Facts(version="vista")) == [44]


@pytest.mark.parametrize("arch", ARCHES)
def test_every_firing_case_also_fires_on_x86(arch):
    """The firing table built again for x86 where the builder takes an arch."""
    cases = {
        4: (SUBMIT, valid_submit(arch, DmaBufferPrivateDataSubmissionStartOffset=16), Facts()),
        22: (PATCH, valid_patch(arch, pDmaBuffer=0x1001), Facts()),
        45: (NOTIFY, interrupt(T.DXGK_INTERRUPT_CRTC_VSYNC, arch), Facts()),
        51: (NOTIFY, interrupt(T.DXGK_INTERRUPT_DMA_PAGE_FAULTED, arch, sets=[
            ("DmaPageFaulted.FaultedFenceId", 3),
            ("DmaPageFaulted.PageFaultFlags", int(PF.DXGK_PAGE_FAULT_FENCE_INVALID | PF.DXGK_PAGE_FAULT_ADAPTER_RESET_REQUIRED))]),
            Facts()),
        115: (RESET, new(RESET, arch, LastAbortedFenceId=20), Facts(last_completed_fence=5, last_submitted_fence=9)),
    }
    for number, (struct, obj, facts) in cases.items():
        assert number in fired(struct, obj, facts)


# -- details of individual rules -------------------------------------------------------------


def test_rule9_flip_members():
    f = Facts(vidpn_source_count=2)
    assert fired(SUBMIT, valid_submit(FlipInterval=5, VidPnSourceId=7), f) == []  # no flip: not judged
    assert fired(SUBMIT, valid_submit(Flags=0x20, FlipInterval=9, VidPnSourceId=1), f) == []  # interval only with Flip
    assert fired(SUBMIT, valid_submit(Flags=0x20, VidPnSourceId=2), f) == [9]
    assert fired(SUBMIT, valid_submit(Flags=0x10, FlipInterval=-1), f) == [9]
    assert fired(VIRTUAL, valid_virtual(Flags=0x10, FlipInterval=5)) == [9]


def test_rule13_resubmission_cases():
    assert fired(SUBMIT, valid_submit(), Facts(previously_preempted=True)) == [13]
    assert fired(SUBMIT, valid_submit(), Facts(previously_preempted=False)) == []
    assert fired(SUBMIT, valid_submit(Flags=0x80), Facts()) == []  # unknown history
    # A WDDM 1.x driver never sees Resubmission = 0 as a violation, and never may see 1.
    old = Facts(version="wddm1_3", previously_preempted=True)
    assert 13 not in fired(SUBMIT, valid_submit(), old)
    assert 13 in fired(SUBMIT, valid_submit(Flags=0x80), old)
    assert fired(VIRTUAL, valid_virtual(Flags=0x80), Facts(previously_preempted=False)) == [13]


def test_rule14_work_executed():
    assert fired(SUBMIT, valid_submit(Flags=0x8), Facts(work_executed=True)) == [14]
    assert fired(SUBMIT, valid_submit(), Facts(fence_signaled=False, work_executed=True)) == []


def test_rule15_context_switch_may_have_null_context_and_node_must_exist():
    cs = valid_submit(hContext=0, Flags=0x40, DmaBufferSubmissionEndOffset=0, NodeOrdinal=1)
    assert fired(SUBMIT, cs, Facts(node_count=2)) == []
    paging = valid_submit(hContext=0, Flags=0x1, NodeOrdinal=2)
    assert fired(SUBMIT, paging, Facts(node_count=2)) == [15, 20]


def test_rule16_segment_without_system_memory_set():
    assert fired(SUBMIT, valid_submit(DmaBufferSegmentId=2), Facts(dma_buffer_segment_set=0)) == [16]


def test_rule20_node_count_limits():
    assert 20 in fired(SUBMIT, valid_submit(NodeOrdinal=1), Facts(node_count=65))
    assert fired(SUBMIT, valid_submit(NodeOrdinal=1), Facts(multi_engine_aware=False)) == [20]
    assert fired(PREEMPT, new(PREEMPT, NodeOrdinal=3), Facts(node_count=3)) == [20]
    stuck = interrupt(T.DXGK_INTERRUPT_GPU_ENGINE_TIMEOUT, sets=[("GpuEngineTimeout.NodeOrdinal", 5)])
    (v,) = check(NOTIFY, stuck, Facts(node_count=2))
    assert v.rule == 20 and "GpuEngineTimeout.NodeOrdinal is 5" in v.message


def test_rule19_in_interrupts_and_links():
    done = interrupt(T.DXGK_INTERRUPT_DMA_COMPLETED, sets=[("DmaCompleted.EngineOrdinal", 1)])
    assert fired(NOTIFY, done) == [19]
    assert fired(NOTIFY, done, Facts(linked_adapter_count=2)) == []
    assert fired(RESET, new(RESET, EngineOrdinal=2), Facts(linked_adapter_count=2)) == [19]
    assert fired(NOTIFY, done, Facts(linked_adapter_count=None)) == []


def test_rule26_reports_each_member():
    obj = paging_patch(pAllocationList=0x1000, AllocationListSize=1, pPatchLocationList=0x2000,
                       PatchLocationListSize=1, PatchLocationListSubmissionStart=1, PatchLocationListSubmissionLength=0)
    msgs = [v.message for v in check(PATCH, obj) if v.rule == 26]
    assert len(msgs) == 5
    assert msgs[0] == "pAllocationList is 0x1000 but must be NULL when Flags.Paging is 1"


def test_rule27_only_for_paging():
    assert fired(PATCH, valid_patch(DmaBufferSize=8192), Facts(paging_buffer_size_before=4096)) == []


def test_rule30_only_judges_the_processed_range():
    # Index 1 goes backwards, but processing starts at index 2.
    assert fired(PATCH, valid_patch(), Facts(patch_locations=patch_locations([50, 10, 20, 30, 40, 0, 0, 0, 0, 0]))) == []
    (v,) = check(PATCH, valid_patch(), Facts(patch_locations=patch_locations([0, 0, 20, 30, 25])))
    assert v.rule == 30 and "pPatchLocationList[4].SplitOffset is 25" in v.message


def test_rule32_fence_not_in_submitted_set():
    obj = interrupt(T.DXGK_INTERRUPT_DMA_COMPLETED, sets=[("DmaCompleted.SubmissionFenceId", 8)])
    assert fired(NOTIFY, obj, Facts(submitted_fences={7, 9}, last_completed_fence=6)) == [32]
    assert fired(NOTIFY, obj, Facts(submitted_fences={7, 9}, last_completed_fence=8)) == []


def test_rule36_above_last_submitted():
    obj = interrupt(T.DXGK_INTERRUPT_DMA_PREEMPTED, sets=[("DmaPreempted.LastCompletedFenceId", 11)])
    assert fired(NOTIFY, obj, Facts(last_submitted_fence=10)) == [36]


def test_rule46_mask_without_flag_and_mpo_arms():
    obj = interrupt(T.DXGK_INTERRUPT_CRTC_VSYNC, sets=[("CrtcVsync.PhysicalAddress.QuadPart", 0x1000),
                                                         ("CrtcVsync.PhysicalAdapterMask", 1)])
    (v,) = check(NOTIFY, obj)
    assert v.rule == 46 and v.bugcheck is None
    mpo = interrupt(T.DXGK_INTERRUPT_CRTC_VSYNC_WITH_MULTIPLANE_OVERLAY2)
    (v,) = check(NOTIFY, mpo, Facts(linked_adapter_count=2))
    assert v.rule == 46 and v.bugcheck.p1 == VidSchError.DRIVER_INVALID_ADAPTER_MASK
    assert fired(NOTIFY, mpo, Facts()) == []


def test_rule51_reports_both_inconsistencies_and_bugchecks():
    obj = interrupt(T.DXGK_INTERRUPT_DMA_PAGE_FAULTED, sets=[
        ("DmaPageFaulted.FaultedFenceId", 3), ("DmaPageFaulted.PageFaultFlags", int(PF.DXGK_PAGE_FAULT_FENCE_INVALID))])
    vs = check(NOTIFY, obj)
    assert [v.rule for v in vs] == [51, 51]
    assert all(v.bugcheck.p1 == 0xD for v in vs)


def test_rule53_on_hw_queue_fault():
    obj = interrupt(T.DXGK_INTERRUPT_HWQUEUE_PAGE_FAULTED,
                    sets=[("HwQueuePageFaulted.PageFaultFlags", int(PF.DXGK_PAGE_FAULT_FATAL_HARDWARE_ERROR))])
    (v,) = check(NOTIFY, obj)
    assert v.rule == 53 and v.bugcheck.p1 == 0xC


def test_rule63_each_dependency():
    assert fired(VIDSCHCAPS, new(VIDSCHCAPS, Value=0x8 | 0x1)) == [63]  # NoDmaPatching without PreemptionAware
    assert [v.rule for v in check(VIDSCHCAPS, new(VIDSCHCAPS, Value=0x8))] == [63, 63]
    assert fired(VIDSCHCAPS, new(VIDSCHCAPS, Value=0x10)) == [63]
    # At vista the Windows 8 bits do not exist; bit 2 is reserved and not judged by rule 63.
    assert fired(VIDSCHCAPS, new(VIDSCHCAPS, "x64", "vista", Value=0x4)) == []


def test_rule83_flip_context_counts():
    assert fired(SETVIDPN, flip_vidpn(ContextCount=0)) == [83]
    assert fired(SETVIDPN, flip_vidpn(ContextCount=66)) == [83]
    assert fired(SETVIDPN, flip_vidpn(ContextCount=2), Facts(broadcast_context_count=3)) == [83]
    assert fired(SETVIDPN, new(SETVIDPN, Flags=1)) == []


def test_rule88_needs_flip_and_unsupported_caps():
    assert fired(SUBMIT, valid_submit(Flags=0x10, FlipInterval=3), Facts(flip_interval_supported=True)) == []
    assert fired(SUBMIT, valid_submit(Flags=0x10, FlipInterval=3), Facts()) == []
    assert fired(VIRTUAL, valid_virtual(Flags=0x10, FlipInterval=4), Facts(flip_interval_supported=False)) == [88]


def test_rule94_present_buffer_needs_present_flag_and_old_layout_is_not_judged():
    assert fired(HWQUEUE, valid_hwqueue(Flags=0), Facts(buffer_origin="present")) == [94]
    old = valid_hwqueue("wddm2_3")
    assert not hasattr(old, "Flags")
    assert check(HWQUEUE, old, Facts(version="wddm2_3", buffer_origin="umd", private_data_reads_after_return=2)) == []


def test_rule115_above_last_submitted_and_failed_reset():
    obj = new(RESET, LastAbortedFenceId=10)
    (v,) = check(RESET, obj, Facts(last_completed_fence=5, last_submitted_fence=9))
    assert (v.bugcheck.p1, v.bugcheck.p2, v.bugcheck.p3) == (0xA, 10, 5)
    assert check(RESET, obj, Facts(last_completed_fence=5, last_submitted_fence=9,
                                   status=int(NTSTATUS.STATUS_UNSUCCESSFUL))) == []


def test_status_bugchecks_take_signed_statuses():
    (v,) = check(SUBMIT, valid_submit(), Facts(status=-1073741823))  # 0xC0000001 read as a signed LONG
    assert v.bugcheck.p2 == 0xC0000001
    assert "STATUS_UNSUCCESSFUL" in v.message


# -- property: random in-range values never break rules 4, 5, 6 ------------------------------

_U32 = 0xFFFFFFFF


@st.composite
def in_range_submissions(draw):
    size = draw(st.integers(0, _U32))
    end = draw(st.integers(0, size))
    start = draw(st.integers(0, end))
    psize = draw(st.integers(0, _U32))
    pend = draw(st.integers(0, psize))
    paging = draw(st.booleans())
    pstart = draw(st.integers(0, pend)) if paging else 0
    other_flags = draw(st.integers(0, 0x1FF)) & ~0x1
    return dict(
        DmaBufferSize=size, DmaBufferSubmissionStartOffset=start, DmaBufferSubmissionEndOffset=end,
        DmaBufferPrivateDataSize=psize, DmaBufferPrivateDataSubmissionStartOffset=pstart,
        DmaBufferPrivateDataSubmissionEndOffset=pend, Flags=other_flags | int(paging),
        hContext=draw(st.integers(0, 2**32 - 1)), SubmissionFenceId=draw(st.integers(0, _U32)),
        FlipInterval=draw(st.integers(0, 5)), VidPnSourceId=draw(st.integers(0, _U32)),
        DmaBufferSegmentId=draw(st.integers(0, 31)),
    )


@settings(max_examples=200, deadline=None)
@given(fields=in_range_submissions(), arch=st.sampled_from(ARCHES),
       version=st.sampled_from(["vista", "win7", "win8", "wddm2_0", "wddm2_2", "latest"]),
       struct=st.sampled_from([SUBMIT, PATCH]))
def test_in_range_values_never_break_rules_4_5_6(fields, arch, version, struct):
    if struct == PATCH:
        for k in ("FlipInterval", "VidPnSourceId"):
            fields.pop(k)
        fields["Flags"] &= 0xF
    obj = new(struct, arch, version, **{k: v for k, v in fields.items()})
    found = {v.rule for v in check(struct, obj, Facts(version=version))}
    assert not found & {4, 5, 6}


@settings(max_examples=100, deadline=None)
@given(start=st.integers(0, _U32), end=st.integers(0, _U32), size=st.integers(0, _U32))
def test_rule5_agrees_with_its_definition(start, end, size):
    obj = valid_submit(DmaBufferSubmissionStartOffset=start, DmaBufferSubmissionEndOffset=end, DmaBufferSize=size)
    assert (5 in fired(SUBMIT, obj)) == (not start <= end <= size)
