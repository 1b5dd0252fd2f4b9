"""Rules on patching a DMA buffer: ``DXGKARG_PATCH``, ``DXGK_PATCHFLAGS`` and the patch-location
list it walks (rules 22 DmaBufferStartAligned, 25 PatchSucceeds, 26 PagingPatchHasNoLists, 27
PagingPatchKeepsSize, 29 PatchRangeInList, 30 SplitOffsetsIncreasing and 31 PatchFlagsReservedZero).
The numbers are the rule catalogue's: ``wddmsim rules N`` prints rule N, docs/rules.md lists them
all.

Spec: Microsoft's pages for DxgkDdiPatch, DXGKARG_PATCH and DXGK_PATCHFLAGS (members, flags,
paging patches), DxgkDdiRender, DxgkDdiCancelCommand and DxgkDdiSignalMonitoredFence (4 KB aligned
DMA buffer starts), D3DDDI_PATCHLOCATIONLIST and "Splitting a DMA buffer" (patch-location lists and
SplitOffset), and DxgkDdiBuildPagingBuffer (Patch must not resize a paging buffer).

Rule 28 (RepatchAllowed: Patch may run more than once on the same DMA buffer after a preemption,
so a model must allow re-patching) constrains the model's behaviour, not any one structure, and is
not a check here. Rules 4 (PrivateDataStartOffsetZero), 5 (DmaSubmissionRangeInBuffer), 6
(PrivateDataRangeInBuffer) and 16 (DmaSegmentMatchesSegmentSet), which hold for DXGKARG_PATCH as
well, live in :mod:`.submit`; rule 19 (EngineOrdinalZeroUnlinked) in :mod:`.caps`.

Decisions: rule 22 judges ``pDmaBuffer`` of DXGKARG_PATCH and DXGKARG_CANCELCOMMAND (the
structures here that carry a DMA buffer's CPU start). Rule 25's bug check keeps P2..P4 at 0: the
bug check page names them internal scheduler data. Rule 26 reports each non-empty list member
separately. Rule 30 only sees the list through ``facts.patch_locations``.
"""

from __future__ import annotations

from ..bugcheck import VidSchError
from ..ntstatus import NTSTATUS, status_name
from .core import Facts, reserved_bits, rule, u32, vidsch_bugcheck

PATCH = "DXGKARG_PATCH"
PATCHFLAGS = "DXGK_PATCHFLAGS"
CANCEL = "DXGKARG_CANCELCOMMAND"

_PAGE = 4096
_SUCCESS = int(NTSTATUS.STATUS_SUCCESS)
_PAGING_EMPTY = (
    "pAllocationList",
    "AllocationListSize",
    "pPatchLocationList",
    "PatchLocationListSize",
    "PatchLocationListSubmissionStart",
    "PatchLocationListSubmissionLength",
)


@rule(22, "DmaBufferStartAligned", structs=(PATCH, CANCEL))
def dma_buffer_aligned(obj, facts: Facts):
    """The DMA buffer start handed to the driver (pDmaBuffer) is 4 KB aligned."""
    p = obj.pDmaBuffer
    if p % _PAGE == 0:
        return None
    return [f"pDmaBuffer is 0x{p:X} but must be 4 KB aligned (a multiple of 0x1000)"]


@rule(25, "PatchSucceeds", structs=(PATCH,))
def patch_succeeds(obj, facts: Facts):
    """DxgkDdiPatch returns STATUS_SUCCESS; otherwise bug check 0x119 (0x3, internal data).

    Judged when ``facts.status`` is known."""
    status = facts.status
    if status is None or u32(status) == _SUCCESS:
        return None
    return [(
        f"DxgkDdiPatch returned 0x{u32(status):08X} ({status_name(status)}) but must return STATUS_SUCCESS",
        vidsch_bugcheck(VidSchError.DRIVER_FAILED_PATCH_COMMAND),
    )]


@rule(26, "PagingPatchHasNoLists", structs=(PATCH,))
def paging_patch_no_lists(obj, facts: Facts):
    """A paging patch has pAllocationList NULL, AllocationListSize 0, pPatchLocationList NULL,
    PatchLocationListSize 0, PatchLocationListSubmissionStart 0 and ...SubmissionLength 0."""
    if not obj.Flags.Paging:
        return None
    out = []
    for name in _PAGING_EMPTY:
        v = getattr(obj, name)
        if v:
            shown = f"0x{v:X}" if name.startswith("p") else str(v)
            want = "NULL" if name.startswith("p") else "0"
            out.append(f"{name} is {shown} but must be {want} when Flags.Paging is 1")
    return out


@rule(27, "PagingPatchKeepsSize", structs=(PATCH,))
def paging_patch_keeps_size(obj, facts: Facts):
    """DxgkDdiPatch does not change the size of a paging buffer.

    Judged on the structure after the call against ``facts.paging_buffer_size_before``."""
    before = facts.paging_buffer_size_before
    if before is None or not obj.Flags.Paging or obj.DmaBufferSize == before:
        return None
    return [f"DmaBufferSize is {obj.DmaBufferSize} after DxgkDdiPatch but must stay {before} for a paging buffer"]


@rule(29, "PatchRangeInList", structs=(PATCH,))
def patch_range_in_list(obj, facts: Facts):
    """PatchLocationListSubmissionStart + PatchLocationListSubmissionLength <= PatchLocationListSize (inferred)."""
    start = obj.PatchLocationListSubmissionStart
    length = obj.PatchLocationListSubmissionLength
    size = obj.PatchLocationListSize
    if start + length <= size:
        return None
    return [
        f"PatchLocationListSubmissionStart + PatchLocationListSubmissionLength is {start} + {length} = "
        f"{start + length} but must be <= PatchLocationListSize ({size})"
    ]


@rule(30, "SplitOffsetsIncreasing", structs=(PATCH,))
def split_offsets_increasing(obj, facts: Facts):
    """SplitOffset values in the processed part of a patch-location list increase along the list:
    allocations appear in the order the DMA stream uses them; the elements of one split point share
    its value.

    Judged over ``facts.patch_locations[PatchLocationListSubmissionStart:+Length]``. Microsoft's
    "Splitting a DMA buffer" calls the elements "strictly increasing (that is, allocations must
    appear in the order in which they are used in the stream)" and, two paragraphs on, speaks of
    "each patch-location list element that shares the same SplitOffset value with other elements"
    (the allocations a split point reprograms): a value may repeat, never go down."""
    locs = facts.patch_locations
    if not locs:
        return None
    start = obj.PatchLocationListSubmissionStart
    end = start + obj.PatchLocationListSubmissionLength
    prev = None
    for i in range(start, min(end, len(locs))):
        split = locs[i].SplitOffset
        if prev is not None and split < prev:
            return [
                f"pPatchLocationList[{i}].SplitOffset is {split} but must be >= pPatchLocationList[{i - 1}]"
                f".SplitOffset ({prev}): allocations appear in the order the DMA buffer uses them"
            ]
        prev = split
    return None


@rule(31, "PatchFlagsReservedZero", structs=(PATCH, PATCHFLAGS))
def patch_flags_reserved(obj, facts: Facts):
    """DXGK_PATCHFLAGS bits 4..31 are 0."""
    flags = obj if hasattr(obj, "Value") else obj.Flags
    bad = reserved_bits(flags, facts.version)
    if not bad:
        return None
    return [f"Flags.Value is 0x{flags.Value:08X}, reserved bits 0x{bad:08X} set, but bits 4..31 must be 0"]
