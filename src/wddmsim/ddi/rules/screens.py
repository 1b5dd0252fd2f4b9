"""Screens: a quick test, per structure, that no rule can find anything, so the verifier can skip
the full :func:`~wddmsim.ddi.rules.check` on the common, well-formed case.

The verifier judges every DDI crossing. Running each registered rule costs a Python call and a
few member reads per rule, about 16 rules for a submission; on the submission path that was a
third of the model's time. A screen reads each member once and answers True only when every
rule registered for the structure would stay quiet. When it answers False (a flag the screen does
not know, a fact it does not model, an out-of-range member) the verifier runs the full check, which
names the broken rule or finds nothing. A screen may be conservative; it must never be wrong the
other way, and ``tests/test_screens.py`` checks that with generated structures and facts at every
DDI version.

Each screen lists the rules it stands for (``covers``). If the rules registered for its structure
are not exactly those, :func:`screen_for` gives no screen and every crossing gets the full check:
adding a rule can make the model slower, never blind.

Spec: rules 1, 4-6, 9-16, 18-20, 23, 32, 33, 35, 36, 44-46, 50, 51, 53, 88, 92-95, 100, 105 and 125 of
the rule catalogue (``wddmsim rules N`` prints rule N, docs/rules.md lists them all).
"""

from __future__ import annotations

from typing import Callable

from ..enums import DXGK_INTERRUPT_TYPE as T
from .core import Facts, reported_fence, rules_for

Screen = Callable[[object, Facts], bool]

#: DXGK_SUBMITCOMMANDFLAGS bits a screened submission may carry: Paging (bit 0) and Present
#: (bit 1), which no rule judges on their own. Any other bit sends the submission to the full check.
_PLAIN_FLAGS = 0x3
_PAGING = 0x1
_PRESENT = 0x2
_MAX_NODES = 64
_COMPLETED = int(T.DXGK_INTERRUPT_DMA_COMPLETED)


def _node_count(f: Facts):
    return 1 if f.multi_engine_aware is False else f.node_count


def _submit(cls) -> Screen:
    """DXGKARG_SUBMITCOMMAND with only Paging/Present flags, a non-NULL handle and nothing about
    the packet's history (resubmission, null rendering) left to judge."""
    has_va = hasattr(cls, "DmaBufferVirtualAddress")
    has_node = hasattr(cls, "NodeOrdinal")
    has_engine = hasattr(cls, "EngineOrdinal")

    def ok(a, f: Facts) -> bool:
        status = f.status
        if status is not None and status & 0xFFFFFFFF:  # rule 1
            return False
        flags = a.Flags.Value
        if flags & ~_PLAIN_FLAGS or f.previously_preempted:  # rules 9-14, 88
            return False
        if not a.hContext:  # rule 15
            return False
        if a.DmaBufferPrivateDataSubmissionStartOffset and not flags & _PAGING:  # rule 4
            return False
        if not a.DmaBufferSubmissionStartOffset <= a.DmaBufferSubmissionEndOffset <= a.DmaBufferSize:  # 5
            return False
        if not (a.DmaBufferPrivateDataSubmissionStartOffset <= a.DmaBufferPrivateDataSubmissionEndOffset
                <= a.DmaBufferPrivateDataSize):  # rule 6
            return False
        seg_set = f.dma_buffer_segment_set
        if seg_set is not None and (a.DmaBufferSegmentId == 0) != (seg_set == 0):  # rule 16
            return False
        if has_va and a.DmaBufferVirtualAddress:  # rule 18
            return False
        links = f.linked_adapter_count
        if links is not None and has_engine and a.EngineOrdinal >= links:  # rule 19
            return False
        count = 1 if f.multi_engine_aware is False else f.node_count
        if count is not None and (count > _MAX_NODES or (has_node and a.NodeOrdinal >= count)):  # rule 20
            return False
        return True

    return ok


def _virtual(cls) -> Screen:
    """DXGKARG_SUBMITCOMMANDVIRTUAL accepted (STATUS_SUCCESS), with only Paging/Present flags and
    not a resubmission."""

    def ok(a, f: Facts) -> bool:
        status = f.status
        if status is not None and status & 0xFFFFFFFF:  # rule 23
            return False
        if a.Flags.Value & ~_PLAIN_FLAGS or f.previously_preempted:  # rules 9, 10, 13, 14, 88
            return False
        links = f.linked_adapter_count
        if links is not None and a.EngineOrdinal >= links:  # rule 19
            return False
        count = _node_count(f)
        if count is not None and (count > _MAX_NODES or a.NodeOrdinal >= count):  # rule 20
            return False
        return True

    return ok


def _hwqueue(cls) -> Screen:
    """DXGKARG_SUBMITCOMMANDTOHWQUEUE with its flags matching the buffer's origin, a progress id
    above the queue's last, room under the in-flight cap, aligned fence addresses and nothing known
    of reentrancy or late private-data reads."""
    has_flags = hasattr(cls, "Flags")

    def ok(a, f: Facts) -> bool:
        if f.queue_busy or f.private_data_reads_after_return or f.scheduling_properties_set is False:  # 93, 95, 125
            return False
        last = f.last_progress_fence_id
        if last is not None and a.HwQueueProgressFenceId <= last:  # rule 92
            return False
        limit, busy = f.max_in_flight, f.in_flight
        if limit and busy is not None and busy >= limit:  # rule 105
            return False
        if has_flags:
            flags = a.Flags.Value
            origin = f.buffer_origin
            if flags & ~_PRESENT:  # rules 10, 94
                return False
            if origin is not None and (flags if origin == "umd" else not flags if origin == "present" else True):
                return False  # rule 94
            if a.HwQueueProgressFenceGpuVa % 8 or a.HwQueueProgressFenceCpuVa % 8:  # rule 100
                return False
        return True

    return ok


def _notify(cls) -> Screen:
    """DXGKARGCB_NOTIFY_INTERRUPT_DATA reporting DMA_COMPLETED with a fence inside
    [last completed, last submitted]. Every other interrupt type gets the full check."""

    def ok(d, f: Facts) -> bool:
        if d.InterruptType != _COMPLETED or f.submitted_fences is not None:
            return False
        dc = d.DmaCompleted
        fence = reported_fence(dc.SubmissionFenceId, f)
        sent = f.last_submitted_fence
        if sent is not None and fence > sent:  # rule 32
            return False
        done = f.last_completed_fence
        if done is not None and fence < done:  # rule 33
            return False
        links = f.linked_adapter_count
        if links is not None and dc.EngineOrdinal >= links:  # rule 19
            return False
        count = 1 if f.multi_engine_aware is False else f.node_count
        if count is not None and (count > _MAX_NODES or dc.NodeOrdinal >= count):  # rule 20
            return False
        return True  # rules 35, 36, 44, 45, 46, 50, 51, 53 judge other interrupt types only

    return ok


#: struct name -> (rule numbers the screen stands for, builder taking the ctypes class).
SCREENS: dict[str, tuple[frozenset[int], Callable[[type], Screen]]] = {
    "DXGKARG_SUBMITCOMMAND": (frozenset({1, 4, 5, 6, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 88}), _submit),
    "DXGKARGCB_NOTIFY_INTERRUPT_DATA": (frozenset({19, 20, 32, 33, 35, 36, 44, 45, 46, 50, 51, 53}), _notify),
    "DXGKARG_SUBMITCOMMANDVIRTUAL": (frozenset({9, 10, 13, 14, 19, 20, 23, 88}), _virtual),
    "DXGKARG_SUBMITCOMMANDTOHWQUEUE": (frozenset({10, 92, 93, 94, 95, 100, 105, 125}), _hwqueue),
}


def screen_for(struct_name: str, cls: type) -> Screen | None:
    """The screen for ``struct_name`` laid out as ctypes class ``cls``, or None when there is none
    or the rules registered for the structure are not exactly the ones it stands for."""
    entry = SCREENS.get(struct_name)
    if entry is None:
        return None
    covers, build = entry
    if frozenset(r.number for r in rules_for(struct_name)) != covers:
        return None
    return build(cls)
