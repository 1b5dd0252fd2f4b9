"""Rules on submitting a DMA buffer: ``DXGKARG_SUBMITCOMMAND``, ``DXGKARG_SUBMITCOMMANDVIRTUAL``
and ``DXGK_SUBMITCOMMANDFLAGS``: rules 1 (SubmitCommandSucceeds), 4 (PrivateDataStartOffsetZero), 5
(DmaSubmissionRangeInBuffer), 6 (PrivateDataRangeInBuffer), 9 (FlipMembersValid), 10
(SubmitFlagsReservedZero), 11 (ContextSwitchEmptyRange), 12 (ContextSwitchPagingMatchesRunning), 13
(ResubmissionFlagConsistent), 14 (NullRenderingFenceOnly), 15 (NullHandleOnlyForSystemSubmission),
16 (DmaSegmentMatchesSegmentSet), 18 (DmaBufferVirtualAddressZero) and 23
(SubmitCommandVirtualStatus). The numbers are the rule catalogue's: ``wddmsim rules N`` prints rule
N, docs/rules.md lists them all.

Spec: Microsoft's pages for DxgkDdiSubmitCommand (it must succeed), DXGKARG_SUBMITCOMMAND (the
members and their ranges), DXGK_SUBMITCOMMANDFLAGS (the flags, and the null-context switch),
DxgkDdiSubmitCommandVirtual (its two allowed statuses), D3DDDI_FLIPINTERVAL_TYPE (flip intervals)
and DXGK_CONTEXTINFO (DmaBufferSegmentSet); the WDK header's version guards for the flags.

Rules 5 and 6 also hold for ``DXGKARG_PATCH`` and ``DXGKARG_CANCELCOMMAND`` (same members, same
values as at submit time, as the DXGKARG_PATCH page says), and rule 4 for ``DXGKARG_PATCH`` (the
private-data start is 0 for non-paging). Decisions taken here:

- Rule 9 judges FlipInterval only with ``Flags.Flip`` and VidPnSourceId only with ``Flip`` or
  ``FlipWithNoWait``; otherwise the members are undefined and not judged. The interval must be
  IMMEDIATE..FOUR (0..4): IMMEDIATE_ALLOW_TEARING (5) belongs to the D3D9 runtime's PresentCb path
  and is rejected at the DDI.
- Rule 10's reserved bits are those of the ``Reserved`` bitfield in the flag union's layout at the
  driver's DDI version (``facts.version``), never a hand-written mask.
- Rule 11 requires the submitted range to be empty (start == end); DmaBufferSize is not judged.
- Rule 15 allows a NULL hDevice/hContext with ``Paging`` and also with ``ContextSwitch``: the
  null-context switch is a scheduler-generated system submission for a node, and NodeOrdinal
  names the node. With a NULL handle NodeOrdinal must then be < ``node_count`` when known (rule 20,
  NodeOrdinalInRange, judges NodeOrdinal for every submission as well).
- Rule 16 checks only the zero/non-zero agreement of DmaBufferSegmentId with the context's
  DmaBufferSegmentSet; the documentation does not fix which bit names which segment, so membership is not
  judged.
- Rule 23: a status other than SUCCESS or INVALID_PARAMETER from DxgkDdiSubmitCommandVirtual is
  reported with bug check 0x119/0x2 (DRIVER_FAILED_SUBMIT_COMMAND, P2 = the status), the code of a
  failed submission; the bug check page names no separate code for it.
"""

from __future__ import annotations

from ..bugcheck import VidSchError
from ..enums import D3DDDI_FLIPINTERVAL_TYPE
from ..ntstatus import NTSTATUS, status_name
from .core import WDDM2_0, Facts, layout_version, reserved_bits, rule, u32, vidsch_bugcheck

SUBMIT = "DXGKARG_SUBMITCOMMAND"
VIRTUAL = "DXGKARG_SUBMITCOMMANDVIRTUAL"
FLAGS = "DXGK_SUBMITCOMMANDFLAGS"
PATCH = "DXGKARG_PATCH"
CANCEL = "DXGKARG_CANCELCOMMAND"

_SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_INVALID_PARAMETER = int(NTSTATUS.STATUS_INVALID_PARAMETER)
_MAX_INTERVAL = int(D3DDDI_FLIPINTERVAL_TYPE.D3DDDI_FLIPINTERVAL_FOUR)


def _status_text(status: int) -> str:
    return f"0x{u32(status):08X} ({status_name(status)})"


@rule(1, "SubmitCommandSucceeds", structs=(SUBMIT,))
def submit_succeeds(obj, facts: Facts):
    """DxgkDdiSubmitCommand returns STATUS_SUCCESS; any other status is bug check 0x119 (0x2, status).

    Judged when ``facts.status`` is known."""
    status = facts.status
    if status is None or u32(status) == _SUCCESS:
        return None
    return [(
        f"DxgkDdiSubmitCommand returned {_status_text(status)} but must return STATUS_SUCCESS",
        vidsch_bugcheck(VidSchError.DRIVER_FAILED_SUBMIT_COMMAND, u32(status)),
    )]


@rule(4, "PrivateDataStartOffsetZero", structs=(SUBMIT, PATCH))
def private_data_start_zero(obj, facts: Facts):
    """DmaBufferPrivateDataSubmissionStartOffset is 0 whenever Flags.Paging is 0."""
    start = obj.DmaBufferPrivateDataSubmissionStartOffset
    if start == 0 or obj.Flags.Paging:
        return None
    return [f"DmaBufferPrivateDataSubmissionStartOffset is {start} but must be 0 when Flags.Paging is 0"]


@rule(5, "DmaSubmissionRangeInBuffer", structs=(SUBMIT, PATCH, CANCEL))
def dma_range_in_buffer(obj, facts: Facts):
    """DmaBufferSubmissionStartOffset <= DmaBufferSubmissionEndOffset <= DmaBufferSize (inferred)."""
    start = obj.DmaBufferSubmissionStartOffset
    end = obj.DmaBufferSubmissionEndOffset
    size = obj.DmaBufferSize
    if start <= end <= size:
        return None
    if start > end:
        return [f"DmaBufferSubmissionStartOffset is {start} but must be <= DmaBufferSubmissionEndOffset ({end})"]
    return [f"DmaBufferSubmissionEndOffset is {end} but must be <= DmaBufferSize ({size})"]


@rule(6, "PrivateDataRangeInBuffer", structs=(SUBMIT, PATCH, CANCEL))
def private_range_in_buffer(obj, facts: Facts):
    """DmaBufferPrivateDataSubmissionStartOffset <= ...EndOffset <= DmaBufferPrivateDataSize (inferred)."""
    start = obj.DmaBufferPrivateDataSubmissionStartOffset
    end = obj.DmaBufferPrivateDataSubmissionEndOffset
    size = obj.DmaBufferPrivateDataSize
    if start <= end <= size:
        return None
    if start > end:
        return [
            f"DmaBufferPrivateDataSubmissionStartOffset is {start} but must be <= "
            f"DmaBufferPrivateDataSubmissionEndOffset ({end})"
        ]
    return [f"DmaBufferPrivateDataSubmissionEndOffset is {end} but must be <= DmaBufferPrivateDataSize ({size})"]


@rule(9, "FlipMembersValid", structs=(SUBMIT, VIRTUAL))
def flip_members_valid(obj, facts: Facts):
    """With Flags.Flip, FlipInterval is a D3DDDI_FLIPINTERVAL_TYPE the DDI accepts (0..4); with Flip
    or FlipWithNoWait, VidPnSourceId names an existing source. Neither is judged without those flags.

    IMMEDIATE_ALLOW_TEARING (5) is only meaningful on the D3D9 runtime path and is rejected here."""
    flags = obj.Flags
    flip = flags.Flip
    if not flip and not flags.FlipWithNoWait:
        return None
    out = []
    if flip:
        interval = obj.FlipInterval
        if not 0 <= interval <= _MAX_INTERVAL:
            what = (
                "D3DDDI_FLIPINTERVAL_IMMEDIATE_ALLOW_TEARING, which only the D3D9 runtime path uses"
                if interval == D3DDDI_FLIPINTERVAL_TYPE.D3DDDI_FLIPINTERVAL_IMMEDIATE_ALLOW_TEARING
                else "not a D3DDDI_FLIPINTERVAL_TYPE value"
            )
            out.append(f"FlipInterval is {interval} ({what}) but must be IMMEDIATE..FOUR (0..4) when Flags.Flip is 1")
    count = facts.vidpn_source_count
    if count is not None and obj.VidPnSourceId >= count:
        out.append(
            f"VidPnSourceId is {obj.VidPnSourceId} but must be < the {count} VidPn sources "
            f"when Flags.Flip or Flags.FlipWithNoWait is 1"
        )
    return out


@rule(10, "SubmitFlagsReservedZero", structs=(SUBMIT, VIRTUAL, FLAGS, "DXGKARG_SUBMITCOMMANDTOHWQUEUE"))
def submit_flags_reserved(obj, facts: Facts):
    """DXGK_SUBMITCOMMANDFLAGS bits above the version's last defined flag are 0 (bits 9..31 for WDDM >= 2.2).

    The reserved range is read from the flag union's layout at ``facts.version``."""
    flags = getattr(obj, "Flags", None) if not hasattr(obj, "Value") else obj
    if flags is None:  # DXGKARG_SUBMITCOMMANDTOHWQUEUE before WDDM 2.4 has no Flags
        return None
    bad = reserved_bits(flags, facts.version)
    if not bad:
        return None
    return [
        f"Flags.Value is 0x{flags.Value:08X}, reserved bits 0x{bad:08X} set, but bits above the last flag "
        f"defined at DDI version {layout_version(flags, facts.version).name} must be 0"
    ]


@rule(11, "ContextSwitchEmptyRange", structs=(SUBMIT,))
def context_switch_empty(obj, facts: Facts):
    """A ContextSwitch submission has an empty DMA range (a zero-length buffer)."""
    if not getattr(obj.Flags, "ContextSwitch", 0):
        return None
    start = obj.DmaBufferSubmissionStartOffset
    end = obj.DmaBufferSubmissionEndOffset
    if start == end:
        return None
    return [
        f"DmaBufferSubmissionEndOffset - DmaBufferSubmissionStartOffset is {end - start} ({start}..{end}) "
        f"but must be 0 when Flags.ContextSwitch is 1"
    ]


@rule(12, "ContextSwitchPagingMatchesRunning", structs=(SUBMIT,))
def context_switch_paging(obj, facts: Facts):
    """A ContextSwitch submission has Paging = 1 exactly when the running context was executing a
    paging operation.

    Judged when ``facts.running_context_paging`` is known."""
    running = facts.running_context_paging
    flags = obj.Flags
    if running is None or not getattr(flags, "ContextSwitch", 0):
        return None
    paging = flags.Paging
    if bool(paging) == bool(running):
        return None
    state = "was" if running else "was not"
    return [
        f"Flags.Paging is {paging} but must be {int(bool(running))} on a ContextSwitch submission: "
        f"the running context {state} executing a paging operation"
    ]


@rule(13, "ResubmissionFlagConsistent", structs=(SUBMIT, VIRTUAL))
def resubmission_consistent(obj, facts: Facts):
    """Resubmission is 0 on a packet's first submission, 1 only for a packet previously preempted,
    and always 0 for WDDM 1.x drivers.

    Not judged where the layout has no Resubmission bit (before WDDM 2.0)."""
    resub = getattr(obj.Flags, "Resubmission", None)
    if resub is None:
        return None
    if resub and facts.version.value < WDDM2_0.value:
        return [
            f"Flags.Resubmission is 1 but must be 0 for a WDDM 1.x driver (DDI version {facts.version.name})"
        ]
    before = facts.previously_preempted
    if before is None:
        return None
    if resub and not before:
        return ["Flags.Resubmission is 1 but must be 0: the packet was not preempted before"]
    if not resub and before and facts.version.value >= WDDM2_0.value:
        return ["Flags.Resubmission is 0 but must be 1: the packet is resubmitted after a preemption (WDDM >= 2.0)"]
    return None


@rule(14, "NullRenderingFenceOnly", structs=(SUBMIT, VIRTUAL))
def null_rendering(obj, facts: Facts):
    """With NullRendering = 1 the packet still produces its completion fence but performs no
    rendering side effects.

    Judged on the observed outcome in ``facts.fence_signaled`` and ``facts.work_executed``."""
    if not obj.Flags.NullRendering:
        return None
    out = []
    if facts.fence_signaled is False:
        out.append(
            f"SubmissionFenceId {obj.SubmissionFenceId} was not signaled but a Flags.NullRendering packet "
            f"must still complete its fence"
        )
    if facts.work_executed:
        out.append("the DMA buffer was executed but a Flags.NullRendering packet must have no rendering side effects")
    return out


@rule(15, "NullHandleOnlyForSystemSubmission", structs=(SUBMIT,))
def null_handle(obj, facts: Facts):
    """hDevice/hContext may be NULL only for paging submissions (and the OS's ContextSwitch
    submission); NodeOrdinal then names the node and must be < the node count when it is known."""
    if obj.hContext:
        return None
    flags = obj.Flags
    if not flags.Paging and not getattr(flags, "ContextSwitch", 0):
        return ["hContext/hDevice is NULL but must be non-NULL unless Flags.Paging or Flags.ContextSwitch is 1"]
    node = getattr(obj, "NodeOrdinal", None)
    count = facts.node_count
    if node is not None and count is not None and node >= count:
        return [f"NodeOrdinal is {node} but must name one of the {count} nodes when hContext is NULL"]
    return None


@rule(16, "DmaSegmentMatchesSegmentSet", structs=(SUBMIT, PATCH))
def dma_segment(obj, facts: Facts):
    """DmaBufferSegmentId is 0 exactly when the context's DmaBufferSegmentSet was 0 (contiguous
    system memory).

    Judged when ``facts.dma_buffer_segment_set`` is known."""
    seg_set = facts.dma_buffer_segment_set
    if seg_set is None:
        return None
    seg = obj.DmaBufferSegmentId
    if (seg == 0) == (seg_set == 0):
        return None
    if seg_set == 0:
        return [f"DmaBufferSegmentId is {seg} but must be 0: the context's DmaBufferSegmentSet is 0"]
    return [f"DmaBufferSegmentId is 0 but must name a segment: the context's DmaBufferSegmentSet is 0x{seg_set:X}"]


@rule(18, "DmaBufferVirtualAddressZero", structs=(SUBMIT,))
def dma_va_zero(obj, facts: Facts):
    """DXGKARG_SUBMITCOMMAND.DmaBufferVirtualAddress is reserved and 0 (not judged before Windows 7)."""
    va = getattr(obj, "DmaBufferVirtualAddress", 0)
    if not va:
        return None
    return [f"DmaBufferVirtualAddress is 0x{va:X} but must be 0 (reserved in DXGKARG_SUBMITCOMMAND)"]


@rule(23, "SubmitCommandVirtualStatus", structs=(VIRTUAL,))
def submit_virtual_status(obj, facts: Facts):
    """DxgkDdiSubmitCommandVirtual returns only STATUS_SUCCESS or STATUS_INVALID_PARAMETER; any other
    status bug-checks (0x119/0x2 with the status, the failed-submission code: a decision)."""
    status = facts.status
    if status is None:
        return None
    s = u32(status)
    if s == _SUCCESS or s == _INVALID_PARAMETER:
        return None
    return [(
        f"DxgkDdiSubmitCommandVirtual returned {_status_text(status)} but must return STATUS_SUCCESS "
        f"or STATUS_INVALID_PARAMETER",
        vidsch_bugcheck(VidSchError.DRIVER_FAILED_SUBMIT_COMMAND, s),
    )]
